//! The adaptive screener's pages (docs/web.md, "The screener"). Nothing is stored: every
//! answer so far travels in the form itself (hidden fields), each step is a POST of the form,
//! and the server evaluates the answers with the engine ([`crate::screening`]) as
//! `POST /api/v1/eligibility/check` does.
//!
//! A step's form: `a.<field>` answers (repeated for a list), `skipped` fields, `asked` (the
//! field the page asked) and `action` (`next`, `skip` or `results`).

use axum::Form;
use axum::extract::Query;
use axum::response::Response;
use engine::catalogue::{FieldSpec, FieldType};
use engine::next_steps::NextStep;
use engine::{Catalogue, Date, Evaluation};
use explain::{FactKind, Language};
use maud::{Markup, html};

use super::explorer::{fill, state_name, states};
use super::html;
use super::lang::Visit;
use super::layout::{page, with_lang};
use crate::api::problem::Problem;
use crate::citizen::Output;
use crate::screening::{self, Answers, FIRST_QUESTIONS, Group, NONE_OF_THESE};

/// The most form fields one step may send: every catalogue field with a list's items is far
/// fewer; a request does bounded work.
pub const MAX_FORM_FIELDS: usize = 1_000;

/// A choice list this long or shorter is shown as radio buttons, a longer one as a menu.
const RADIO_MAX: usize = 8;

/// `GET /check[?scheme=]`: the first questions (state, age, gender); from a scheme's page, its
/// state is chosen already.
pub async fn start(
    Visit { service, lang }: Visit,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    let book = service.book();
    let mut answers = Answers::default();
    if let Some((_, scheme)) = query.iter().find(|(k, _)| k == "scheme")
        && let Some(rule) = book
            .rules
            .rules
            .iter()
            .find(|r| &r.scheme_id == scheme && !r.is_central())
    {
        answers
            .given
            .insert(FIRST_QUESTIONS[0].into(), vec![rule.state.clone()]);
    }
    html(first_page(&book.catalogue, lang, &answers, None))
}

/// `POST /check`: one step: the answers so far, then the next question or the results.
pub async fn step(
    Visit {
        service,
        lang: query_lang,
    }: Visit,
    Form(form): Form<Vec<(String, String)>>,
) -> Result<Response, Problem> {
    if form.len() > MAX_FORM_FIELDS {
        return Err(Problem::invalid_body(vec![crate::api::body::field(
            "",
            "too many form fields",
        )]));
    }
    let lang = form
        .iter()
        .find(|(k, _)| k == "lang")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(query_lang);
    let value = |key: &str| form.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    let mut answers = Answers::default();
    for (key, v) in &form {
        if let Some(field) = key.strip_prefix("a.") {
            answers
                .given
                .entry(field.to_string())
                .or_default()
                .push(v.clone());
        } else if key == "skipped" {
            answers.skipped.insert(v.clone());
        }
    }
    let asked = value("asked").unwrap_or_default().to_string();
    let action = value("action").unwrap_or("next");
    if action == "skip" && !asked.is_empty() {
        answers.given.remove(&asked);
        answers.skipped.insert(asked.clone());
    }
    let book = service.book();
    let catalogue = &book.catalogue;
    let today = crate::clock::today();
    let profile = match answers.profile(catalogue, today) {
        Ok(profile) => profile,
        Err(bad) => {
            answers.given.remove(&bad.field);
            let error = Some(lang.page("answer_invalid"));
            return Ok(html(if FIRST_QUESTIONS.contains(&bad.field.as_str()) {
                first_page(catalogue, lang, &answers, error)
            } else {
                question_page(&book, lang, &answers, &bad.field, today, error)
            }));
        }
    };
    // The first page's facts are asked before anything else.
    if action != "results" && FIRST_QUESTIONS.iter().any(|f| !answers.settled(f)) {
        return Ok(html(first_page(catalogue, lang, &answers, None)));
    }
    let output = screening::evaluate(catalogue, &book.rules, &profile, today);
    let next = screening::next_question(catalogue, &output, &answers);
    Ok(html(match next {
        Some(field) if action != "results" => {
            question_page(&book, lang, &answers, &field, today, None)
        }
        _ => results_page(catalogue, lang, &answers, &output, next.is_some(), today),
    }))
}

/// The first page: state, age and gender together.
fn first_page(
    catalogue: &Catalogue,
    lang: Language,
    answers: &Answers,
    error: Option<&str>,
) -> Markup {
    let w = |key| lang.page(key);
    let body = html! {
        p { (w("check_intro")) }
        @if let Some(error) = error { p.error role="alert" { (error) } }
        form method="post" action="/check" {
            (carried(lang, answers, &FIRST_QUESTIONS))
            @for field in FIRST_QUESTIONS {
                @if let Some(spec) = catalogue.id(field).map(|id| catalogue.field(id)) {
                    (question(lang, spec, answers, &choices_of(catalogue, lang, spec, None), false))
                }
            }
            div.actions {
                button type="submit" name="action" value="next" { (w("next")) }
            }
        }
    };
    page(lang, w("check_title"), "/check", body)
}

/// A page asking one question, with Skip and Show results.
fn question_page(
    book: &crate::rules::book::RuleBook,
    lang: Language,
    answers: &Answers,
    field: &str,
    today: Date,
    error: Option<&str>,
) -> Markup {
    let catalogue = &book.catalogue;
    let w = |key| lang.page(key);
    let Some(spec) = catalogue.id(field).map(|id| catalogue.field(id)) else {
        return first_page(catalogue, lang, answers, error);
    };
    let state = answers
        .given
        .get(FIRST_QUESTIONS[0])
        .and_then(|v| v.first())
        .map(String::as_str);
    let codes = screening::choices(catalogue, &book.rules, state, today, field);
    let number = answers.given.len() + answers.skipped.len() + 1;
    let body = html! {
        p.meta { (fill(w("question_number"), &[("number", &number.to_string())])) }
        @if let Some(error) = error { p.error role="alert" { (error) } }
        form method="post" action="/check" {
            (carried(lang, answers, &[field]))
            input type="hidden" name="asked" value=(field);
            (question(lang, spec, answers, &choices_of(catalogue, lang, spec, Some(&codes)), true))
            div.actions {
                button type="submit" name="action" value="next" { (w("next")) }
                button.secondary type="submit" name="action" value="skip" { (w("skip")) }
                button.secondary type="submit" name="action" value="results" { (w("show_results")) }
            }
        }
    };
    page(lang, w("check_title"), "/check", body)
}

/// Every answer so far but `except`'s, as hidden fields, and the language.
fn carried(lang: Language, answers: &Answers, except: &[&str]) -> Markup {
    html! {
        input type="hidden" name="lang" value=(lang.code());
        @for (field, values) in &answers.given {
            @if !except.contains(&field.as_str()) {
                @for v in values { input type="hidden" name=(format!("a.{field}")) value=(v); }
            }
        }
        @for field in &answers.skipped {
            @if !except.contains(&field.as_str()) {
                input type="hidden" name="skipped" value=(field);
            }
        }
    }
}

/// A field's allowed values with their words: the catalogue's, or `codes` where given.
fn choices_of(
    catalogue: &Catalogue,
    lang: Language,
    spec: &FieldSpec,
    codes: Option<&[String]>,
) -> Vec<(String, String)> {
    if spec.name == FIRST_QUESTIONS[0] {
        // States by name, without "central".
        return states(catalogue, lang).into_iter().skip(1).collect();
    }
    let codes: Vec<String> = match codes {
        Some(codes) => codes.to_vec(),
        None => spec.values.clone().unwrap_or_default(),
    };
    codes
        .into_iter()
        .map(|code| {
            let words = lang.value(spec, &code);
            (code, words)
        })
        .collect()
}

/// One question as form controls, named `a.<field>`, with its current answer.
fn question(
    lang: Language,
    spec: &FieldSpec,
    answers: &Answers,
    choices: &[(String, String)],
    alone: bool,
) -> Markup {
    let name = format!("a.{}", spec.name);
    let id = spec.name.replace('.', "-");
    let asked = lang
        .question(spec)
        .unwrap_or_else(|| lang.label(spec).to_string());
    let current: Vec<&str> = answers
        .given
        .get(&spec.name)
        .map(|v| v.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let heading = |m: Markup| {
        if alone {
            html! { legend { h2 { (m) } } }
        } else {
            html! { legend { (m) } }
        }
    };
    match spec.field_type {
        FieldType::Boolean => html! {
            fieldset {
                (heading(html! { (asked) }))
                @for (value, words) in [("true", lang.boolean(true)), ("false", lang.boolean(false))] {
                    label.choice {
                        input type="radio" name=(name) value=(value) checked[current.contains(&value)];
                        span { (words) }
                    }
                }
            }
        },
        FieldType::List => html! {
            fieldset {
                (heading(html! { (asked) " " span.meta { "(" (lang.page("choose_any")) ")" } }))
                input type="hidden" name=(name) value=(NONE_OF_THESE);
                @for (code, words) in choices {
                    label.choice {
                        input type="checkbox" name=(name) value=(code) checked[current.contains(&code.as_str())];
                        span { (words) }
                    }
                }
            }
        },
        _ if !choices.is_empty() && choices.len() <= RADIO_MAX => html! {
            fieldset {
                (heading(html! { (asked) }))
                @for (code, words) in choices {
                    label.choice {
                        input type="radio" name=(name) value=(code) checked[current.contains(&code.as_str())];
                        span { (words) }
                    }
                }
            }
        },
        _ if !choices.is_empty() => html! {
            fieldset {
                (heading(html! { label for=(id) { (asked) } }))
                select id=(id) name=(name) {
                    option value="" { (lang.page("choose")) }
                    @for (code, words) in choices {
                        option value=(code) selected[current.contains(&code.as_str())] { (words) }
                    }
                }
            }
        },
        kind => {
            let (input_type, mode) = match kind {
                FieldType::Integer | FieldType::Number if spec.is_money() => ("text", "numeric"),
                FieldType::Integer => ("number", "numeric"),
                FieldType::Number => ("text", "decimal"),
                FieldType::Date => ("date", "text"),
                _ => ("text", "text"),
            };
            html! {
                fieldset {
                    (heading(html! { label for=(id) { (asked) } }))
                    input id=(id) type=(input_type) inputmode=(mode) name=(name)
                        value=(current.first().copied().unwrap_or_default())
                        min=[spec.min.filter(|_| input_type == "number")]
                        max=[spec.max.filter(|_| input_type == "number")];
                }
            }
        }
    }
}

/// The results: grouped, each scheme with what the citizen needs to act on it.
fn results_page(
    catalogue: &Catalogue,
    lang: Language,
    answers: &Answers,
    output: &Output<'_>,
    more: bool,
    today: Date,
) -> Markup {
    let w = |key| lang.page(key);
    let open: usize = {
        let mut fields: Vec<&str> = output
            .results
            .iter()
            .flat_map(|e| e.needed_fields.iter().copied())
            .filter(|f| !answers.settled(f))
            .collect();
        fields.sort_unstable();
        fields.dedup();
        fields.len()
    };
    let groups = [
        (Group::Eligible, "eligible", "group_eligible"),
        (Group::Could, "could", "group_could"),
        (Group::Almost, "almost", "group_almost"),
        (Group::Not, "not", "group_not"),
    ];
    let body = html! {
        p { (fill(w("results_date"), &[("date", &date_in(lang, today))])) }
        @if more {
            p { (fill(w("results_open"), &[("count", &open.to_string())])) }
        }
        div.actions {
            button type="button" data-print hidden { (w("print")) }
            @if more {
                form method="post" action="/check" {
                    (carried(lang, answers, &[]))
                    button.secondary type="submit" name="action" value="next" { (w("answer_more")) }
                }
            }
            a.button.secondary href=(with_lang("/check", lang)) { (w("start_again")) }
        }
        @for (group, class, heading) in groups {
            @let members: Vec<&Evaluation> = output.results.iter().filter(|e| Group::of(e) == group).collect();
            @let list = html! {
                @if members.is_empty() { p { (w("group_empty")) } }
                ul.schemes {
                    @for e in &members { li { (result(catalogue, lang, e, group, answers)) } }
                }
            };
            section class=(format!("group {class}")) {
                // What is not for the citizen is there to read, folded away.
                @if group == Group::Not {
                    details {
                        summary { h2 { (w(heading)) " (" (members.len()) ")" } }
                        (list)
                    }
                } @else {
                    h2 { (w(heading)) " (" (members.len()) ")" }
                    (list)
                }
            }
        }
        h2 { (w("your_answers")) }
        dl.answers {
            @for (field, values) in &answers.given {
                @if let Some(spec) = catalogue.id(field).map(|id| catalogue.field(id)) {
                    dt { (lang.label(spec)) }
                    dd { (answer_words(catalogue, lang, spec, values)) }
                }
            }
            @for field in &answers.skipped {
                @if let Some(spec) = catalogue.id(field).map(|id| catalogue.field(id)) {
                    dt { (lang.label(spec)) }
                    dd { (w("skipped")) }
                }
            }
        }
        p.meta { (fill(w("printed_note"), &[("date", &date_in(lang, today))])) }
    };
    page(lang, w("results_title"), "/check", body)
}

/// One scheme in the results.
fn result(
    catalogue: &Catalogue,
    lang: Language,
    e: &Evaluation<'_>,
    group: Group,
    answers: &Answers,
) -> Markup {
    let w = |key| lang.page(key);
    let facts = explain::facts(e, catalogue, lang);
    let of = |kind: fn(&FactKind) -> bool| -> Vec<String> {
        facts
            .facts()
            .iter()
            .filter(|f| kind(&f.kind))
            .map(|f| f.text.clone())
            .collect()
    };
    let benefit = of(|k| *k == FactKind::Benefit);
    let name = facts.facts().first().map(|_| {
        catalogue
            .id("eligibility.active_schemes")
            .map(|id| lang.value(catalogue.field(id), e.scheme_id))
            .unwrap_or_else(|| e.scheme_name.to_string())
    });
    let documents: Vec<String> = e
        .next_steps
        .iter()
        .flat_map(|step| match step {
            NextStep::KeepReady { documents, .. } => documents.to_vec(),
            _ => Vec::new(),
        })
        .collect();
    let portal = e.next_steps.iter().find_map(|step| match step {
        NextStep::Apply { portal } => Some(*portal),
        _ => None,
    });
    html! {
        a href=(with_lang(&format!("/schemes/{}", e.scheme_id), lang)) {
            (name.unwrap_or_else(|| e.scheme_name.to_string()))
        }
        @for line in benefit.iter().skip(1).take(1) { div { (line) } }
        @match group {
            Group::Eligible => {
                @let docs = explain::documents(catalogue, lang, &documents);
                @if !docs.is_empty() {
                    div { (fill(w("keep_ready"), &[("documents", &lang.and_list(&docs))])) }
                }
                @if let Some(portal) = portal {
                    div { (fill(w("apply_at"), &[("place", portal)])) }
                }
            }
            Group::Could => {
                @let questions: Vec<String> = e.needed_fields.iter()
                    .filter(|f| !answers.settled(f))
                    .filter_map(|f| catalogue.id(f).map(|id| lang.label(catalogue.field(id)).to_string()))
                    .collect();
                @if !questions.is_empty() {
                    div { (fill(w("to_answer"), &[("questions", &questions.join(", "))])) }
                }
            }
            Group::Almost => {
                ul { @for gap in distinct(of(|k| matches!(k, FactKind::Gap { .. }))) { li { (gap) } } }
            }
            Group::Not => {
                @let bars = of(|k| *k == FactKind::Exclusion);
                @let reasons = if bars.is_empty() { known_failures(&facts, e) } else { bars };
                @for reason in reasons.iter().take(2) {
                    div { (fill(w("why"), &[("reason", reason)])) }
                }
            }
        }
    }
}

/// `lines` without repeats, in order (the gaps of several alternatives may say one step twice).
fn distinct(lines: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    lines
        .into_iter()
        .filter(|line| seen.insert(line.clone()))
        .collect()
}

/// The facts of the conditions the citizen's known values fail: the true reason a scheme is
/// not for them (a condition on a value not given is not a reason). Facts list the verdict,
/// the score, then one fact per evaluated condition in the evaluation's order.
fn known_failures(facts: &explain::Facts, e: &Evaluation<'_>) -> Vec<String> {
    e.conditions_evaluated
        .iter()
        .zip(facts.facts().iter().skip(2))
        .filter(|(trace, fact)| {
            !trace.result
                && trace.actual.is_some()
                && fact.kind == FactKind::Condition { met: false }
        })
        .map(|(_, fact)| fact.text.clone())
        .collect()
}

/// An answer in the language's words.
fn answer_words(
    catalogue: &Catalogue,
    lang: Language,
    spec: &FieldSpec,
    values: &[String],
) -> String {
    let words: Vec<String> = values
        .iter()
        .filter(|v| v.as_str() != NONE_OF_THESE && !v.trim().is_empty())
        .map(|v| match spec.field_type {
            FieldType::Boolean => lang.boolean(v == "true").to_string(),
            _ if spec.name == FIRST_QUESTIONS[0] => state_name(catalogue, lang, v),
            _ if spec.values.is_some() || spec.field_type == FieldType::List => lang.value(spec, v),
            _ => v.clone(),
        })
        .collect();
    words.join(", ")
}

/// A date in the language's words.
pub fn date_in(lang: Language, date: Date) -> String {
    lang.date(date)
}
