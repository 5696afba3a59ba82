//! The scheme explorer (docs/web.md, "The explorer"): the schemes in effect today by state,
//! people served and kind of benefit; a scheme's page with its conditions, benefit, documents,
//! where to apply, sources with dates and its versions with what changed, all in words.

use std::collections::HashMap;

use axum::extract::{Path, Query};
use axum::response::Response;
use engine::{Catalogue, Rule};
use explain::{Language, Line};
use maud::{Markup, html};
use serde_json::Value as Json;

use super::html;
use super::lang::Visit;
use super::layout::{page, with_lang};
use crate::rules::book::RuleBook;

/// The catalogue field naming states.
const STATE: &str = "demographics.state";

/// `GET /`: what the pages do, and where to start.
pub async fn home(Visit { lang, .. }: Visit) -> Response {
    let w = |key| lang.page(key);
    html(page(
        lang,
        w("site_title"),
        "/",
        html! {
            p { (w("home_intro")) }
            p.actions {
                a.button href=(with_lang("/check", lang)) { (w("nav_check")) }
                a.button.secondary href=(with_lang("/schemes", lang)) { (w("nav_explore")) }
            }
        },
    ))
}

/// `GET /schemes?state=&category=&kind=`: the schemes in effect today, filtered.
pub async fn list(
    Visit { service, lang }: Visit,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let book = service.book();
    let today = crate::clock::today();
    let chosen = |key: &str| query.get(key).filter(|v| !v.is_empty()).map(String::as_str);
    let (state, category, kind) = (chosen("state"), chosen("category"), chosen("kind"));
    let mut schemes: Vec<(&Rule, explain::RuleText)> = book
        .rules
        .in_effect(today)
        .into_iter()
        .filter(|r| state.is_none_or(|s| r.state == s || (s != "central" && r.is_central())))
        .filter(|r| category.is_none_or(|c| engine::corpus::served(r).contains(c)))
        .filter(|r| kind.is_none_or(|k| r.benefit.as_ref().is_some_and(|b| b.kind.name() == k)))
        .map(|r| (r, explain::describe(r, &book.catalogue, lang)))
        .collect();
    schemes.sort_by(|(a, ta), (b, tb)| {
        (!a.is_central(), &a.state, &ta.name).cmp(&(!b.is_central(), &b.state, &tb.name))
    });
    let w = |key| lang.page(key);
    let here = super::with_query(
        "/schemes",
        &[
            ("state", state.unwrap_or_default()),
            ("category", category.unwrap_or_default()),
            ("kind", kind.unwrap_or_default()),
        ],
    );
    let categories: Vec<(String, String)> = engine::corpus::category_names()
        .into_iter()
        .map(|name| (name.to_string(), lang.page(&category_key(name)).to_string()))
        .collect();
    let kinds: Vec<(String, String)> = engine::benefit::BenefitKind::ALL
        .into_iter()
        .map(|k| {
            (
                k.name().to_string(),
                lang.page(&format!("kind_{}", k.name())).to_string(),
            )
        })
        .collect();
    let body = html! {
        form.filters method="get" action="/schemes" {
            input type="hidden" name="lang" value=(lang.code());
            (filter(lang, "state", "filter_state", &states(&book.catalogue, lang), state))
            (filter(lang, "category", "filter_category", &categories, category))
            (filter(lang, "kind", "filter_kind", &kinds, kind))
            div { button type="submit" { (w("filter_submit")) } }
        }
        p role="status" { (explain::fill(w("schemes_found"), &[("count", &schemes.len().to_string())])) }
        @if schemes.is_empty() {
            p { (w("none_found")) }
        }
        ul.schemes {
            @for (rule, text) in &schemes {
                li {
                    a href=(with_lang(&format!("/schemes/{}", rule.scheme_id), lang)) { (text.name) }
                    div.meta { (explain::fill(w("scheme_where"), &[("state", &state_name(&book.catalogue, lang, &rule.state))])) }
                    @if let Some(amount) = &text.amount {
                        div { (amount) }
                    }
                }
            }
        }
    };
    html(page(lang, w("explore_title"), &here, body))
}

/// `GET /schemes/{scheme_id}`: one scheme, in words.
pub async fn scheme(Visit { service, lang }: Visit, Path(scheme_id): Path<String>) -> Response {
    let book = service.book();
    let today = crate::clock::today();
    let mut versions: Vec<&Rule> = book
        .rules
        .rules
        .iter()
        .filter(|r| r.scheme_id == scheme_id)
        .collect();
    versions.sort_by_key(|r| r.version);
    let rule = book.rules.in_effect_or_newest(&scheme_id, today);
    let Some(rule) = rule else {
        return super::message(
            lang,
            axum::http::StatusCode::NOT_FOUND,
            "explore_title",
            "not_found_page",
        );
    };
    let body = scheme_body(&book, lang, rule, &versions);
    let name = explain::describe(rule, &book.catalogue, lang).name;
    html(page(lang, &name, &format!("/schemes/{scheme_id}"), body))
}

fn scheme_body(book: &RuleBook, lang: Language, rule: &Rule, versions: &[&Rule]) -> Markup {
    let catalogue = &book.catalogue;
    let text = explain::describe(rule, catalogue, lang);
    let w = |key| lang.page(key);
    let date = |d: engine::Date| lang.date(d);
    let references: Vec<&Json> = rule.document["source"]["references"]
        .as_array()
        .map(|r| r.iter().collect())
        .unwrap_or_default();
    html! {
        p.meta {
            (explain::fill(w("scheme_where"), &[("state", &state_name(catalogue, lang, &rule.state))]))
            br;
            (in_effect(lang, rule))
        }
        p { a.button href=(with_lang(&format!("/check?scheme={}", rule.scheme_id), lang)) { (w("check_this")) } }
        h2 { (w("scheme_who")) }
        div.tree { (tree(lang, &text.conditions)) }
        @if !text.also.is_empty() {
            h2 { (w("scheme_also")) }
            ul { @for line in &text.also { li { (line) } } }
        }
        h2 { (w("scheme_benefit")) }
        ul {
            @for line in &text.benefit { li { (line) } }
            @for line in &text.tiers { li { (line) } }
        }
        @if !text.documents.is_empty() {
            h2 { (w("scheme_documents")) }
            ul { @for d in &text.documents { li { (d) } } }
        }
        h2 { (w("scheme_apply")) }
        p {
            @match rule.application.portal_url.as_deref().filter(|u| web_link(u)) {
                Some(url) => a href=(url) rel="noopener noreferrer" { (url) },
                None => (w("apply_office")),
            }
        }
        h2 { (w("scheme_sources")) }
        ul {
            @for reference in &references {
                li {
                    @let title = reference["title"].as_str().unwrap_or_default();
                    @match reference["url"].as_str().filter(|u| web_link(u)) {
                        Some(url) => a href=(url) rel="noopener noreferrer" lang="en" { (title) },
                        None => span lang="en" { (title) },
                    }
                    @if let Some(d) = reference["date"].as_str().and_then(engine::Date::parse) {
                        " (" (explain::fill(w("source_dated"), &[("date", &date(d))])) ")"
                    } @else if let Some(d) = reference["accessed"].as_str().and_then(engine::Date::parse) {
                        " (" (explain::fill(w("source_read"), &[("date", &date(d))])) ")"
                    }
                }
            }
        }
        h2 { (w("scheme_versions")) }
        ol reversed {
            @for (k, version) in versions.iter().enumerate().rev() {
                li {
                    (version_line(lang, version))
                    @if k > 0 {
                        @let said = explain::changes(versions[k - 1], version, catalogue, lang);
                        h3 { (explain::fill(w("changes_title"), &[("version", &version.version.to_string()), ("date", &date(version.effective_from))])) }
                        ul {
                            @if said.is_empty() { li { (w("change_none")) } }
                            @for line in &said { li { (line) } }
                        }
                    }
                }
            }
        }
    }
}

/// One of the list's filters: a menu named `name` of (value, words) `options`, "any" first,
/// `chosen` selected.
fn filter(
    lang: Language,
    name: &str,
    label: &str,
    options: &[(String, String)],
    chosen: Option<&str>,
) -> Markup {
    html! {
        div {
            label for=(name) { (lang.page(label)) }
            select id=(name) name=(name) {
                option value="" { (lang.page("filter_any")) }
                @for (value, words) in options {
                    option value=(value) selected[chosen == Some(value.as_str())] { (words) }
                }
            }
        }
    }
}

/// Whether a rule file's URL may be a link: `http` or `https` only (a rule file is data, and a
/// `javascript:` link is not a source).
fn web_link(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

/// The eligibility tree as nested lists.
fn tree(lang: Language, line: &Line) -> Markup {
    let group = |heading: &str, children: &[Line]| {
        html! {
            p { (heading) }
            ul { @for child in children { li { (tree(lang, child)) } } }
        }
    };
    match line {
        Line::Text(text) => html! { (text) },
        Line::AllOf(children) => group(lang.page("all_of"), children),
        Line::AnyOf(children) => group(lang.page("any_of"), children),
        Line::NoneOf(children) => group(lang.page("none_of"), children),
    }
}

/// "In effect from …", to its end where it has one.
fn in_effect(lang: Language, rule: &Rule) -> String {
    period(lang, rule, "in_effect", &[])
}

/// "Version N: from …", to its end where it has one.
fn version_line(lang: Language, rule: &Rule) -> String {
    period(
        lang,
        rule,
        "version_line",
        &[("version", &rule.version.to_string())],
    )
}

/// The page word `key` (or `key_until` where the rule has an end date) filled with the rule's
/// dates and `more`.
fn period(lang: Language, rule: &Rule, key: &str, more: &[(&str, &str)]) -> String {
    let from = lang.date(rule.effective_from);
    let until = rule.effective_until.map(|d| lang.date(d));
    let mut values = vec![("from", from.as_str())];
    values.extend_from_slice(more);
    let template = match &until {
        Some(until) => {
            values.push(("until", until));
            lang.page(&format!("{key}_until")).to_string()
        }
        None => lang.page(key).to_string(),
    };
    explain::fill(&template, &values)
}

/// The `page` key of a category of people served ("older people" → `category_older_people`).
pub fn category_key(name: &str) -> String {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("category_{slug}")
}

/// Every state of the catalogue and the central government, in the language, by name.
pub fn states(catalogue: &Catalogue, lang: Language) -> Vec<(String, String)> {
    let mut states: Vec<(String, String)> = catalogue
        .id(STATE)
        .and_then(|id| catalogue.field(id).values.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|code| {
            let name = state_name(catalogue, lang, &code);
            (code, name)
        })
        .collect();
    states.sort_by(|a, b| a.1.cmp(&b.1));
    states.insert(0, ("central".into(), lang.page("central").to_string()));
    states
}

/// A state's name in the language (`central`: the central government).
pub fn state_name(catalogue: &Catalogue, lang: Language, code: &str) -> String {
    match catalogue.id(STATE) {
        Some(_) if code == "central" => lang.page("central").to_string(),
        Some(id) => lang.value(catalogue.field(id), code),
        None => code.to_string(),
    }
}
