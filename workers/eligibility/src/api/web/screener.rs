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

use super::explorer::{state_name, states};
use super::html;
use super::lang::Visit;
use super::layout::{page, posted_page, with_lang};
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
    let value = |key: &str| super::form_value(&form, key);
    // The header's switcher posts the answers with the language chosen (`switch_lang`): the
    // same page again, in that language, nothing lost.
    let switched: Option<Language> = value("switch_lang").and_then(|v| v.parse().ok());
    let lang = switched
        .or_else(|| value("lang").and_then(|v| v.parse().ok()))
        .unwrap_or(query_lang);
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
    // A list question sent with nothing ticked (not even "none of these") is not answered:
    // asked again, not taken as "none".
    let unanswered = (action == "next" && !asked.is_empty())
        .then(|| catalogue.id(&asked).map(|id| catalogue.field(id)))
        .flatten()
        .filter(|spec| !answers.settled(&spec.name));
    if let Some(spec) = unanswered {
        let name = spec.name.clone();
        // A change of language is no answer, and no error either.
        let bad = switched.is_none().then_some(name.as_str());
        return Ok(html(question_page(
            &book, lang, &answers, &name, today, bad,
        )));
    }
    let profile = match answers.profile(catalogue, today) {
        Ok(profile) => profile,
        Err(bad) => {
            answers.given.remove(&bad.field);
            let field = Some(bad.field.as_str());
            return Ok(html(if FIRST_QUESTIONS.contains(&bad.field.as_str()) {
                first_page(catalogue, lang, &answers, field)
            } else {
                question_page(&book, lang, &answers, &bad.field, today, field)
            }));
        }
    };
    // The first page's facts are asked before anything else, and the state always: every
    // step evaluates one state's schemes and the central ones.
    let state_given = answers.given.contains_key(FIRST_QUESTIONS[0]);
    if !state_given || (action != "results" && FIRST_QUESTIONS.iter().any(|f| !answers.settled(f)))
    {
        answers.skipped.remove(FIRST_QUESTIONS[0]);
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
    bad: Option<&str>,
) -> Markup {
    let w = |key| lang.page(key);
    let body = html! {
        p { (w("check_intro")) }
        @if let Some(field) = bad { (error(catalogue, lang, field)) }
        form method="post" action="/check" {
            (carried(lang, answers, &FIRST_QUESTIONS))
            @for field in FIRST_QUESTIONS {
                @if let Some(spec) = catalogue.id(field).map(|id| catalogue.field(id)) {
                    (question(lang, spec, answers, &choices_of(catalogue, lang, spec, None), false, bad == Some(field)))
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
    bad: Option<&str>,
) -> Markup {
    let catalogue = &book.catalogue;
    let w = |key| lang.page(key);
    let Some(spec) = catalogue.id(field).map(|id| catalogue.field(id)) else {
        return first_page(catalogue, lang, answers, None);
    };
    let state = answers
        .given
        .get(FIRST_QUESTIONS[0])
        .and_then(|v| v.first())
        .map(String::as_str);
    let codes = screening::choices(catalogue, &book.rules, state, today, field);
    let number = answers.given.len() + answers.skipped.len() + 1;
    let body = html! {
        p.meta { (explain::fill(w("question_number"), &[("number", &number.to_string())])) }
        @if let Some(field) = bad { (error(catalogue, lang, field)) }
        form method="post" action="/check" {
            (carried(lang, answers, &[field]))
            input type="hidden" name="asked" value=(field);
            (question(lang, spec, answers, &choices_of(catalogue, lang, spec, Some(&codes)), true, bad.is_some()))
            div.actions {
                button type="submit" name="action" value="next" { (w("next")) }
                button.secondary type="submit" name="action" value="skip" formnovalidate { (w("skip")) }
                button.secondary type="submit" name="action" value="results" formnovalidate { (w("show_results")) }
            }
        }
    };
    let hidden = html! {
        (carried(lang, answers, &[field]))
        input type="hidden" name="asked" value=(field);
        input type="hidden" name="action" value="next";
    };
    posted_page(lang, w("check_title"), "/check", hidden, body)
}

/// The message that a field's answer was not understood, naming the question.
fn error(catalogue: &Catalogue, lang: Language, field: &str) -> Markup {
    let question = catalogue
        .id(field)
        .map(|id| catalogue.field(id))
        .map(|spec| {
            lang.question(spec)
                .unwrap_or_else(|| lang.label(spec).to_string())
        })
        .unwrap_or_default();
    html! {
        p.error role="alert" id="answer-error" {
            (explain::fill(lang.page("answer_invalid"), &[("question", &question)]))
        }
    }
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

/// One question as form controls, named `a.<field>`, with its current answer: a group of
/// choices in a fieldset (its legend the question), a single control with its label (a heading
/// when it is the page's only question). `invalid`: its last answer was not understood.
fn question(
    lang: Language,
    spec: &FieldSpec,
    answers: &Answers,
    choices: &[(String, String)],
    alone: bool,
    invalid: bool,
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
    let legend = |extra: Option<&str>| {
        let words =
            html! { (asked) @if let Some(extra) = extra { " " span.meta { "(" (extra) ")" } } };
        if alone {
            html! { legend { h2 { (words) } } }
        } else {
            html! { legend { (words) } }
        }
    };
    let described = invalid.then_some("answer-error");
    let choice_group = |kind: &'static str, options: &[(&str, &str)]| {
        html! {
            fieldset aria-describedby=[described] {
                (legend((kind == "checkbox").then(|| lang.page("choose_any"))))
                @for (k, (value, words)) in options.iter().enumerate() {
                    label.choice {
                        // One choice of a radio group is required: Next without one is
                        // stopped by the browser (Skip and Show results are not).
                        input type=(kind) name=(name) value=(value)
                            checked[current.contains(value)]
                            required[kind == "radio" && k == 0]
                            aria-invalid=[invalid.then_some("true")];
                        span { (words) }
                    }
                }
            }
        }
    };
    match spec.field_type {
        FieldType::Boolean => choice_group(
            "radio",
            &[("true", lang.boolean(true)), ("false", lang.boolean(false))],
        ),
        FieldType::List => {
            let mut options: Vec<(&str, &str)> = choices
                .iter()
                .map(|(code, words)| (code.as_str(), words.as_str()))
                .collect();
            options.push((NONE_OF_THESE, lang.page("none_of_these")));
            choice_group("checkbox", &options)
        }
        _ if !choices.is_empty() && choices.len() <= RADIO_MAX => {
            let options: Vec<(&str, &str)> = choices
                .iter()
                .map(|(code, words)| (code.as_str(), words.as_str()))
                .collect();
            choice_group("radio", &options)
        }
        kind => {
            let label = html! { label for=(id) { (asked) } };
            let control = if choices.is_empty() {
                let (input_type, mode) = match kind {
                    FieldType::Integer | FieldType::Number if spec.is_money() => {
                        ("text", Some("numeric"))
                    }
                    FieldType::Integer => ("number", Some("numeric")),
                    FieldType::Number => ("text", Some("decimal")),
                    FieldType::Date => ("date", None),
                    _ => ("text", None),
                };
                html! {
                    input id=(id) type=(input_type) inputmode=[mode] name=(name)
                        value=(current.first().copied().unwrap_or_default())
                        min=[spec.min.filter(|_| input_type == "number")]
                        max=[spec.max.filter(|_| input_type == "number")]
                        aria-invalid=[invalid.then_some("true")]
                        aria-describedby=[described];
                }
            } else {
                html! {
                    select id=(id) name=(name) aria-invalid=[invalid.then_some("true")] aria-describedby=[described] {
                        option value="" { (lang.page("choose")) }
                        @for (code, words) in choices {
                            option value=(code) selected[current.contains(&code.as_str())] { (words) }
                        }
                    }
                }
            };
            html! {
                div.question {
                    @if alone { h2 { (label) } } @else { (label) }
                    (control)
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
    // The questions that could still make a scheme ELIGIBLE (those the screener would ask).
    let open: usize = {
        let mut fields: Vec<&str> = output
            .results
            .iter()
            .filter(|e| e.could_become_eligible)
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
        p { (explain::fill(w("results_date"), &[("date", &lang.date(today))])) }
        @if more {
            p { (explain::fill(w("results_open"), &[("count", &open.to_string())])) }
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
            @let title = format!("{} ({})", w(heading), members.len());
            // What is not for the citizen is there to read, folded away (its heading stays a
            // heading: inside a summary it would not be one to a screen reader).
            section class=(format!("group {class}")) aria-labelledby=(format!("group-{class}")) {
                h2 id=(format!("group-{class}")) { (title) }
                @if group == Group::Not {
                    details { summary { (w("group_not")) } (list) }
                } @else {
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
        p.meta { (explain::fill(w("printed_note"), &[("date", &lang.date(today))])) }
    };
    let hidden = html! {
        (carried(lang, answers, &[]))
        input type="hidden" name="action" value="results";
    };
    posted_page(lang, w("results_title"), "/check", hidden, body)
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
    let name = explain::scheme_name_in(catalogue, lang, e.scheme_id, e.scheme_name);
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
        a href=(with_lang(&format!("/schemes/{}", e.scheme_id), lang)) { (name) }
        @if let Some(amount) = explain::amount(e, lang) { div { (amount) } }
        @match group {
            Group::Eligible => {
                @let docs = explain::documents(catalogue, lang, &documents);
                @if !docs.is_empty() {
                    div { (explain::fill(w("keep_ready"), &[("documents", &lang.and_list(&docs))])) }
                }
                @if let Some(portal) = portal {
                    div { (explain::fill(w("apply_at"), &[("place", portal)])) }
                }
            }
            Group::Could => {
                @let label = |f: &&str| catalogue.id(f).map(|id| lang.label(catalogue.field(id)).to_string());
                @let open: Vec<String> = e.needed_fields.iter().filter(|f| !answers.settled(f)).filter_map(label).collect();
                @let skipped: Vec<String> = e.needed_fields.iter().filter(|f| answers.skipped.contains(**f)).filter_map(label).collect();
                @if !open.is_empty() {
                    div { (explain::fill(w("to_answer"), &[("questions", &open.join(", "))])) }
                }
                @if !skipped.is_empty() {
                    div { (explain::fill(w("you_skipped"), &[("questions", &skipped.join(", "))])) }
                }
            }
            Group::Almost => {
                @let gaps = explain::facts(e, catalogue, lang);
                ul {
                    @for gap in distinct(gaps.facts().iter().filter(|f| matches!(f.kind, FactKind::Gap { .. })).map(|f| f.text.clone()).collect()) {
                        li { (gap) }
                    }
                }
            }
            Group::Not => {
                @for reason in explain::reasons(e, catalogue, lang).iter().take(2) {
                    div { (explain::fill(w("why"), &[("reason", reason)])) }
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

/// An answer in the language's words.
fn answer_words(
    catalogue: &Catalogue,
    lang: Language,
    spec: &FieldSpec,
    values: &[String],
) -> String {
    if spec.field_type == FieldType::List && values.iter().all(|v| v == NONE_OF_THESE) {
        return lang.none().to_string();
    }
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
