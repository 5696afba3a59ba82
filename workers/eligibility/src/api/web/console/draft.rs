//! The draft editor (docs/web.md, "The rules console"): a scheme's current version, as the
//! next version, edited either as a form generated from the document and the field catalogue
//! (a field picker, an operator menu and a typed value for each condition; the benefit, its
//! tiers, the documents and the dates) or as YAML beside it. Every post is checked by the
//! rule validator; each problem is shown at its place (the JSON pointer it names) and listed
//! above, before anything is stored. "Propose" stores it as a proposal through the admin API's
//! own code path, which queues its population diff.
//!
//! The form's inputs are named by the JSON pointer of what they edit (`f:/eligibility/...`);
//! the page carries the YAML it was drawn from (`base`). Where the YAML box differs from
//! `base`, the YAML was edited and wins; else the form's values are written into `base` at
//! their pointers, typed as the catalogue says (a number for an age, a list for `in`).

use axum::Form;
use axum::extract::Query;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use engine::catalogue::{FieldSpec, FieldType};
use engine::error::Problem as RuleProblem;
use engine::tree::Op;
use engine::{Catalogue, Rule};
use explain::Language;
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Console;
use crate::api::proposals::submit;
use crate::api::web::form_value;
use crate::api::web::layout::with_lang;
use crate::rules::book::RuleBook;
use crate::rules::proposals::check_new_version;

/// The prefix of a form input that edits the document at the JSON pointer after it.
const FIELD: &str = "f:";

#[derive(Debug, Deserialize)]
pub struct Start {
    #[serde(default)]
    scheme: Option<String>,
}

/// `GET /console/draft[?scheme=]`: the scheme picker, or the scheme's current version as the
/// next version's draft.
pub async fn start(console: Console, Query(start): Query<Start>) -> Response {
    let lang = console.lang;
    let w = |key| lang.page(key);
    let book = console.service.book();
    let catalogue = &book.catalogue;
    let Some(rule) = start
        .scheme
        .as_deref()
        .and_then(|s| book.rules.in_effect_or_newest(s, crate::clock::today()))
    else {
        let mut schemes: Vec<(String, &str)> = book
            .rules
            .rules
            .iter()
            .map(|r| {
                (
                    explain::scheme_name_in(catalogue, lang, &r.scheme_id, &r.scheme_name),
                    r.scheme_id.as_str(),
                )
            })
            .collect();
        schemes.sort();
        schemes.dedup_by(|a, b| a.1 == b.1);
        let body = html! {
            form method="get" action="/console/draft" {
                input type="hidden" name="lang" value=(lang.code());
                label for="scheme" { (w("console_pick_scheme")) }
                select id="scheme" name="scheme" {
                    @for (name, id) in &schemes { option value=(id) { (name) } }
                }
                div.actions { button type="submit" { (w("console_start_draft")) } }
            }
        };
        return console.page(w("console_new_draft"), "/console/draft", body);
    };
    let document = next_version(&book.rules, rule, &console.caller.subject);
    let text = yaml(&document);
    let draft = Draft {
        scheme: &rule.scheme_id,
        base: &text,
        document: Some(&document),
        problems: Vec::new(),
        notice: None,
        reason: "",
    };
    editor(&console, catalogue, &draft, StatusCode::OK)
}

/// `rule`'s document as the scheme's next version: the version one above its newest, the
/// rule id's number likewise (`rule_x_002` → `rule_x_003`), written by `author` now.
fn next_version(rules: &engine::RuleSet, rule: &Rule, author: &str) -> Value {
    let newest = rules
        .rules
        .iter()
        .filter(|r| r.scheme_id == rule.scheme_id)
        .map(|r| r.version)
        .max()
        .unwrap_or(rule.version);
    let version = newest + 1;
    let stem = rule.rule_id.trim_end_matches(|c: char| c.is_ascii_digit());
    let rule_id = if stem.len() < rule.rule_id.len() {
        format!("{stem}{version:03}")
    } else {
        format!("{}_{version:03}", rule.rule_id)
    };
    let mut document = rule.document.clone();
    if let Some(object) = document.as_object_mut() {
        object.insert("rule_id".into(), json!(rule_id));
        object.insert("version".into(), json!(version));
        object.insert("last_modified_by".into(), json!(author));
        object.insert(
            "last_modified_at".into(),
            json!(format!("{}T00:00:00Z", crate::clock::today())),
        );
    }
    document
}

/// A document as YAML text.
fn yaml(document: &Value) -> String {
    serde_yaml_ng::to_string(document).unwrap_or_default()
}

/// What the editor shows.
struct Draft<'a> {
    scheme: &'a str,
    /// The YAML text (the form's source).
    base: &'a str,
    /// The document the form is drawn from; None where the YAML does not parse.
    document: Option<&'a Value>,
    problems: Vec<RuleProblem>,
    /// A notice above the editor (the form's edits set aside for the YAML's).
    notice: Option<&'a str>,
    reason: &'a str,
}

/// A posted draft, checked: the text it proposes, the document the form is drawn from (None
/// where the YAML does not read), the validator's problems, the notice, the rule where valid.
struct Checked {
    text: String,
    document: Option<Value>,
    problems: Vec<RuleProblem>,
    notice: Option<&'static str>,
    rule: Option<Rule>,
}

/// The draft of a posted form: the YAML box where it was edited (it wins, and the form's edits
/// of the same post are set aside, said in the notice), else the form's values written into
/// the YAML the page was drawn from; then the form's change of shape (`action`), the rule
/// validator and the version check. Pure: stores nothing.
fn check(book: &RuleBook, lang: Language, form: &[(String, String)]) -> Checked {
    let catalogue = &book.catalogue;
    // Browsers post every line break as CRLF.
    let base = form_value(form, "base")
        .unwrap_or_default()
        .replace("\r\n", "\n");
    let typed = form_value(form, "yaml")
        .unwrap_or_default()
        .replace("\r\n", "\n");
    let action = form_value(form, "action").unwrap_or("check");
    let yaml_edited = typed.trim_end() != base.trim_end();
    let source = if yaml_edited { typed } else { base.clone() };
    let mut document = match engine::yaml::read_bounded(&source) {
        Ok(document) => document,
        Err(reason) => {
            return Checked {
                text: source,
                document: None,
                problems: vec![problem("", &reason)],
                notice: None,
                rule: None,
            };
        }
    };
    let mut notice = None;
    if yaml_edited {
        let mut drawn = engine::yaml::read_bounded(&base).unwrap_or(Value::Null);
        let before = drawn.clone();
        apply_form(catalogue, &mut drawn, form);
        if drawn != before {
            notice = Some(lang.page("console_form_set_aside"));
        }
    } else {
        apply_form(catalogue, &mut document, form);
    }
    let reshaped = reshape(&mut document, action);
    // The text proposed is the YAML as typed where it was typed and nothing was reshaped.
    let text = if yaml_edited && !reshaped {
        source
    } else {
        yaml(&document)
    };
    let parsed = engine::load::parse_rule_yaml(catalogue, &text, "draft").and_then(|rule| {
        check_new_version(&book.rules, &rule)
            .map(|()| rule)
            .map_err(|message| {
                let (path, reason) = match message.split_once(": ") {
                    Some(("rule_id", reason)) => ("/rule_id", reason),
                    Some(("version", reason)) => ("/version", reason),
                    _ => ("", message.as_str()),
                };
                vec![problem(path, reason)]
            })
    });
    let (rule, problems) = match parsed {
        Ok(rule) => (Some(rule), Vec::new()),
        Err(problems) => (None, problems),
    };
    Checked {
        text,
        document: Some(document),
        problems,
        notice,
        rule,
    }
}

/// `POST /console/draft`: check the draft (from the form or the YAML), change its shape (a
/// condition added or removed), or propose it.
pub async fn step(
    console: Console,
    headers: HeaderMap,
    Form(form): Form<Vec<(String, String)>>,
) -> Response {
    if let Some(refused) = console.refusal(&headers, &form) {
        return refused;
    }
    let lang = console.lang;
    let book = console.service.book();
    let scheme = form_value(&form, "scheme").unwrap_or_default();
    let reason = form_value(&form, "reason").unwrap_or_default().trim();
    let Checked {
        text,
        document,
        mut problems,
        notice,
        rule,
    } = check(&book, lang, &form);
    let mut status = if problems.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    if form_value(&form, "action") == Some("propose")
        && let Some(rule) = &rule
    {
        if let Err(refused) = console.admit_change().await {
            return refused;
        }
        let given = (!reason.is_empty()).then_some(reason);
        let as_of = crate::clock::today();
        match submit(&console.service, &console.caller, rule, &text, given, as_of).await {
            Ok((proposal, _job)) => {
                let at = format!("/console/proposals/{}", proposal.proposal_id);
                return Redirect::to(&with_lang(&at, lang)).into_response();
            }
            // Refused (the version is not new, or the caller's previous diff still runs): said
            // above the draft, which is kept.
            Err(refused) => {
                problems.push(problem("", &super::problem_text(&refused)));
                status = StatusCode::from_u16(refused.status).unwrap_or(StatusCode::CONFLICT);
            }
        }
    }
    let draft = Draft {
        scheme,
        base: &text,
        document: document.as_ref(),
        problems,
        notice,
        reason,
    };
    editor(&console, &book.catalogue, &draft, status)
}

/// `POST /console/draft/check`: the draft of a posted form checked as the page's script posts
/// it while the officer types (docs/web.md, "The rules console"): its problems as JSON
/// (`[{"path", "reason"}]`), nothing stored. The page works without it: the same check runs on
/// every post of the form.
pub async fn live_check(
    console: Console,
    headers: HeaderMap,
    Form(form): Form<Vec<(String, String)>>,
) -> Response {
    if let Some(refused) = console.refusal(&headers, &form) {
        return refused;
    }
    let checked = check(&console.service.book(), console.lang, &form);
    let problems: Vec<Value> = checked
        .problems
        .iter()
        .map(|p| json!({"path": p.path, "reason": p.reason}))
        .collect();
    axum::Json(json!({ "problems": problems })).into_response()
}

fn problem(path: &str, reason: &str) -> RuleProblem {
    RuleProblem {
        source: "draft".into(),
        id: None,
        path: path.into(),
        reason: reason.into(),
    }
}

/// Writes the form's values (`f:<pointer>`) into `document`, typed: a condition's value as its
/// field's type says (a list for `in`, `not_in` and `between`), anything else as the value it
/// replaces is (a number stays a number, a list is written comma-separated, an empty optional
/// date is null).
fn apply_form(catalogue: &Catalogue, document: &mut Value, form: &[(String, String)]) {
    for (key, text) in form {
        let Some(pointer) = key.strip_prefix(FIELD) else {
            continue;
        };
        let Some((parent, last)) = pointer.rsplit_once('/') else {
            continue;
        };
        let value = if last == "value" {
            // The condition's field and operator as posted, else as they were.
            let sibling = |name: &str| {
                form_value(form, &format!("{FIELD}{parent}/{name}"))
                    .map(str::to_string)
                    .or_else(|| {
                        document
                            .pointer(&format!("{parent}/{name}"))
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    })
            };
            let (field, op) = (sibling("field"), sibling("operator"));
            let spec = field
                .as_deref()
                .and_then(|f| catalogue.id(f))
                .map(|id| catalogue.field(id));
            condition_value(spec, op.as_deref().and_then(Op::parse), text)
        } else {
            like(document.pointer(pointer), text)
        };
        match document.pointer_mut(pointer) {
            Some(slot) => *slot = value,
            None => {
                if let Some(Value::Object(object)) = document.pointer_mut(parent) {
                    object.insert(unescape(last), value);
                }
            }
        }
    }
}

/// A JSON pointer's reference token, unescaped (RFC 6901).
fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// `text` typed as `old` is.
fn like(old: Option<&Value>, text: &str) -> Value {
    let text = text.trim();
    match old {
        Some(Value::Number(_)) => number(text),
        Some(Value::Bool(_)) => match text {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::String(text.into()),
        },
        Some(Value::Array(_)) => {
            Value::Array(items(text).map(|item| Value::String(item.into())).collect())
        }
        Some(Value::Null) | None if text.is_empty() => Value::Null,
        _ => Value::String(text.into()),
    }
}

/// A number where `text` is one (an integer as an integer), else the text (the validator names
/// it).
fn number(text: &str) -> Value {
    if let Ok(n) = text.parse::<i64>() {
        json!(n)
    } else if let Some(n) = text
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
    {
        Value::Number(n)
    } else {
        Value::String(text.into())
    }
}

fn items(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty())
}

/// A condition's value typed by its field and operator.
fn condition_value(spec: Option<&FieldSpec>, op: Option<Op>, text: &str) -> Value {
    let scalar = |text: &str| match spec.map(|s| s.field_type) {
        Some(FieldType::Integer | FieldType::Number) => number(text),
        Some(FieldType::Boolean) => like(Some(&Value::Bool(true)), text),
        _ => Value::String(text.trim().into()),
    };
    match op {
        Some(Op::In | Op::NotIn | Op::Between) => Value::Array(items(text).map(scalar).collect()),
        _ => scalar(text.trim()),
    }
}

/// Adds a condition to the list at the pointer of `add:<pointer>`, or removes the one at
/// `remove:<pointer>`; whether it did.
fn reshape(document: &mut Value, action: &str) -> bool {
    if let Some(list) = action.strip_prefix("add:") {
        if let Some(Value::Array(items)) = document.pointer_mut(list) {
            items.push(json!({"field": "identity.age", "operator": "gte", "value": 0}));
            return true;
        }
    } else if let Some(item) = action.strip_prefix("remove:")
        && let Some((list, index)) = item.rsplit_once('/')
        && let Ok(index) = index.parse::<usize>()
        && let Some(Value::Array(items)) = document.pointer_mut(list)
        && index < items.len()
    {
        items.remove(index);
        return true;
    }
    false
}

/// The editor page: the problems listed (each a link to its place), the form and the YAML side
/// by side, the reason, and the buttons.
fn editor(console: &Console, catalogue: &Catalogue, draft: &Draft, status: StatusCode) -> Response {
    let lang = console.lang;
    let w = |key| lang.page(key);
    let form = Editor {
        console,
        catalogue,
        problems: &draft.problems,
    };
    let body = html! {
        @if let Some(notice) = draft.notice { p role="status" { (notice) } }
        @if draft.problems.is_empty() {
            p role="status" data-problems="0" { (w("console_draft_valid")) }
        } @else {
            div.problems role="alert" data-problems=(draft.problems.len()) {
                h2 { (explain::fill(w("console_problems"), &[("count", &draft.problems.len().to_string())])) }
                ul { @for p in &draft.problems {
                    li { a href=(format!("#{FIELD}{}", p.path)) { code { (if p.path.is_empty() { "/" } else { &p.path }) } } " " (p.reason) }
                } }
            }
        }
        form method="post" action="/console/draft" data-live-check="/console/draft/check"
            data-none=(w("console_draft_valid")) data-some=(w("console_problems")) {
            (console.csrf_field())
            p.meta data-live-status role="status" aria-live="polite" {}
            input type="hidden" name="lang" value=(lang.code());
            input type="hidden" name="scheme" value=(draft.scheme);
            input type="hidden" name="base" value=(draft.base);
            div.panes {
                section.pane aria-labelledby="as-form" {
                    h2 id="as-form" { (w("console_as_form")) }
                    @match draft.document {
                        Some(document) => (form.document(document)),
                        None => p { (w("console_form_unavailable")) },
                    }
                }
                section.pane aria-labelledby="as-yaml" {
                    h2 id="as-yaml" { (w("console_as_yaml")) }
                    label for=(FIELD) { (w("console_yaml_label")) }
                    textarea id=(format!("{FIELD}")) name="yaml" rows="40" spellcheck="false" { (draft.base) }
                    (form.problems_at(""))
                }
            }
            label for="reason" { (w("console_reason")) }
            input id="reason" name="reason" type="text" value=(draft.reason) maxlength="500";
            div.actions {
                button type="submit" name="action" value="check" formnovalidate { (w("console_check")) }
                button type="submit" name="action" value="propose" { (w("console_propose")) }
            }
        }
    };
    let mut response = console.page(w("console_draft_title"), "/console/draft", body);
    *response.status_mut() = status;
    response
}

/// The form drawn from a document.
struct Editor<'a> {
    console: &'a Console,
    catalogue: &'a Catalogue,
    problems: &'a [RuleProblem],
}

impl Editor<'_> {
    fn w(&self, key: &'static str) -> &'static str {
        self.console.lang.page(key)
    }

    /// The problems at exactly `pointer`, shown there.
    fn problems_at(&self, pointer: &str) -> Markup {
        html! {
            @for p in self.problems.iter().filter(|p| p.path == pointer) {
                p.error id=(format!("e:{pointer}")) { (p.reason) }
            }
        }
    }

    fn has_problem(&self, pointer: &str) -> bool {
        self.problems.iter().any(|p| p.path == pointer)
    }

    fn document(&self, document: &Value) -> Markup {
        let w = |key| self.w(key);
        let text = |pointer: &str, key: &'static str, kind: &str| {
            let value = document.pointer(pointer).unwrap_or(&Value::Null);
            self.input(pointer, w(key), kind, &shown(value), None)
        };
        html! {
            fieldset {
                legend { (w("console_version_and_dates")) }
                (text("/rule_id", "console_rule_id", "text"))
                (text("/version", "desk_rule_version", "number"))
                (text("/effective_from", "console_effective_from", "date"))
                (text("/effective_until", "console_effective_until", "date"))
            }
            fieldset {
                legend { (w("console_conditions")) }
                @if let Some(node) = document.get("eligibility") { (self.node("/eligibility", node)) }
            }
            fieldset {
                legend { (w("console_exclusions")) }
                @for (i, node) in document.get("exclusions").and_then(Value::as_array).into_iter().flatten().enumerate() {
                    (self.node(&format!("/exclusions/{i}"), node))
                }
                button.secondary type="submit" name="action" value="add:/exclusions" formnovalidate { (w("console_add_exclusion")) }
            }
            fieldset {
                legend { (w("console_benefit")) }
                (text("/benefit/amount_inr", "console_amount", "number"))
                (text("/benefit/frequency", "console_frequency", "text"))
                (text("/benefit/description", "console_description", "text"))
                @for (i, _) in document.pointer("/benefit/tiers").and_then(Value::as_array).into_iter().flatten().enumerate() {
                    div.tier {
                        p.meta { (explain::fill(w("console_tier"), &[("n", &(i + 1).to_string())])) }
                        @if let Some(when) = document.pointer(&format!("/benefit/tiers/{i}/when")) {
                            (self.node(&format!("/benefit/tiers/{i}/when"), when))
                        }
                        (text(&format!("/benefit/tiers/{i}/amount_inr"), "console_amount", "number"))
                    }
                }
            }
            fieldset {
                legend { (w("console_documents")) }
                (text("/documents_required", "console_documents_list", "text"))
            }
        }
    }

    /// A labelled input editing `pointer`, its problems beside it.
    fn input(
        &self,
        pointer: &str,
        label: &str,
        kind: &str,
        value: &str,
        extra: Option<Markup>,
    ) -> Markup {
        let id = format!("{FIELD}{pointer}");
        let invalid = self.has_problem(pointer);
        html! {
            div.field {
                label for=(id) { (label) }
                input id=(id) name=(id) type=(kind) value=(value)
                    step=[(kind == "number").then_some("any")]
                    aria-invalid=[invalid.then_some("true")]
                    aria-describedby=[invalid.then(|| format!("e:{pointer}"))];
                @if let Some(extra) = extra { (extra) }
                (self.problems_at(pointer))
            }
        }
    }

    /// A condition (a leaf) or a group of them, at `pointer`.
    fn node(&self, pointer: &str, node: &Value) -> Markup {
        let w = |key| self.w(key);
        if let Some(children) = node.get("conditions").and_then(Value::as_array) {
            let op = node
                .get("operator")
                .and_then(Value::as_str)
                .unwrap_or("AND");
            let id = format!("{FIELD}{pointer}/operator");
            return html! {
                fieldset.group {
                    legend {
                        label for=(id) { (w("console_group")) }
                        select id=(id) name=(id) {
                            option value="AND" selected[op == "AND"] { (w("console_all_of")) }
                            option value="OR" selected[op == "OR"] { (w("console_any_of")) }
                        }
                    }
                    (self.problems_at(pointer))
                    @for (i, child) in children.iter().enumerate() {
                        (self.node(&format!("{pointer}/conditions/{i}"), child))
                    }
                    button.secondary type="submit" name="action" value=(format!("add:{pointer}/conditions")) formnovalidate { (w("console_add_condition")) }
                }
            };
        }
        let field_name = node
            .get("field")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let spec = self
            .catalogue
            .id(field_name)
            .map(|id| self.catalogue.field(id));
        let op = node
            .get("operator")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let value = node.get("value").unwrap_or(&Value::Null);
        let lang = self.console.lang;
        let (field_id, op_id) = (
            format!("{FIELD}{pointer}/field"),
            format!("{FIELD}{pointer}/operator"),
        );
        let value_pointer = format!("{pointer}/value");
        let many = matches!(Op::parse(op), Some(Op::In | Op::NotIn | Op::Between));
        // The value's input checks as it is typed where the browser can: a number in the
        // field's range, a date, one of the field's values.
        let (kind, allowed) = match spec.map(|s| s.field_type) {
            Some(FieldType::Integer | FieldType::Number) if !many => ("number", None),
            Some(FieldType::Date) if !many => ("date", None),
            _ => (
                "text",
                spec.and_then(|s| s.values.clone()).filter(|_| !many),
            ),
        };
        let list_id = format!("values:{pointer}");
        let value_id = format!("{FIELD}{value_pointer}");
        let invalid = self.has_problem(&value_pointer);
        html! {
            div.condition {
                (self.problems_at(pointer))
                div.field {
                    label for=(field_id) { (w("console_field")) }
                    select id=(field_id) name=(field_id)
                        aria-invalid=[self.has_problem(&format!("{pointer}/field")).then_some("true")]
                        aria-describedby=[self.has_problem(&format!("{pointer}/field")).then(|| format!("e:{pointer}/field"))] {
                        @if spec.is_none() { option value=(field_name) selected { (field_name) } }
                        @for f in self.catalogue.fields() {
                            option value=(f.name) selected[f.name == field_name] { (lang.label(f)) " (" (f.name) ")" }
                        }
                    }
                    (self.problems_at(&format!("{pointer}/field")))
                }
                div.field {
                    label for=(op_id) { (w("console_operator")) }
                    select id=(op_id) name=(op_id)
                        aria-invalid=[self.has_problem(&format!("{pointer}/operator")).then_some("true")]
                        aria-describedby=[self.has_problem(&format!("{pointer}/operator")).then(|| format!("e:{pointer}/operator"))] {
                        @if Op::parse(op).is_none() { option value=(op) selected { (op) } }
                        @for o in Op::ALL {
                            option value=(o.name()) selected[o.name() == op] { (o.name()) }
                        }
                    }
                    (self.problems_at(&format!("{pointer}/operator")))
                }
                div.field {
                    label for=(value_id) { (w("console_value")) }
                    input id=(value_id) name=(value_id) type=(kind) value=(shown(value))
                        step=[(kind == "number").then_some("any")]
                        min=[spec.and_then(|s| s.min).filter(|_| kind == "number")]
                        max=[spec.and_then(|s| s.max).filter(|_| kind == "number")]
                        list=[allowed.as_ref().map(|_| list_id.clone())]
                        pattern=[allowed.as_ref().map(|values| values.join("|"))]
                        aria-invalid=[invalid.then_some("true")]
                        aria-describedby=[invalid.then(|| format!("e:{value_pointer}"))];
                    @if let Some(values) = &allowed {
                        datalist id=(list_id) { @for v in values { option value=(v) {} } }
                    }
                    (self.problems_at(&value_pointer))
                }
                @if node.get("label").is_some() {
                    (self.input(&format!("{pointer}/label"), w("console_label"), "text", &shown(node.get("label").unwrap_or(&Value::Null)), None))
                }
                button.secondary type="submit" name="action" value=(format!("remove:{pointer}")) formnovalidate { (w("console_remove")) }
            }
        }
    }
}

/// A value as a form input shows it: a list comma-separated, null empty.
fn shown(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(shown).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// docs/web.md, "The rules console": a form value is written at its pointer, typed as the
    /// catalogue says for a condition's value, else as the value it replaces.
    #[test]
    fn the_forms_values_are_written_at_their_pointers_typed() {
        let catalogue = Catalogue::bundled();
        let mut document = json!({
            "version": 1,
            "effective_until": null,
            "documents_required": ["aadhaar"],
            "eligibility": {"operator": "AND", "conditions": [
                {"field": "identity.age", "operator": "gte", "value": 60},
                {"field": "economic.bpl_status", "operator": "eq", "value": true},
                {"field": "demographics.state", "operator": "in", "value": ["goa"]},
            ]},
        });
        apply_form(
            &catalogue,
            &mut document,
            &form(&[
                ("f:/version", "2"),
                ("f:/effective_until", ""),
                ("f:/documents_required", "aadhaar, bpl_card"),
                ("f:/eligibility/operator", "OR"),
                ("f:/eligibility/conditions/0/value", "65"),
                ("f:/eligibility/conditions/1/value", "false"),
                ("f:/eligibility/conditions/2/value", "goa, kerala"),
                ("csrf", "not a pointer"),
            ]),
        );
        assert_eq!(
            document,
            json!({
                "version": 2,
                "effective_until": null,
                "documents_required": ["aadhaar", "bpl_card"],
                "eligibility": {"operator": "OR", "conditions": [
                    {"field": "identity.age", "operator": "gte", "value": 65},
                    {"field": "economic.bpl_status", "operator": "eq", "value": false},
                    {"field": "demographics.state", "operator": "in", "value": ["goa", "kerala"]},
                ]},
            })
        );
        // A field changed in the same post types its value: an age becomes a number, what is
        // not one is kept as typed for the validator to name.
        apply_form(
            &catalogue,
            &mut document,
            &form(&[
                ("f:/eligibility/conditions/1/field", "identity.age"),
                ("f:/eligibility/conditions/1/operator", "lt"),
                ("f:/eligibility/conditions/1/value", "80"),
                ("f:/eligibility/conditions/0/value", "sixty"),
            ]),
        );
        assert_eq!(
            document["eligibility"]["conditions"][1],
            json!({"field": "identity.age", "operator": "lt", "value": 80})
        );
        assert_eq!(document["eligibility"]["conditions"][0]["value"], "sixty");
    }

    #[test]
    fn conditions_are_added_and_removed_where_asked() {
        let mut document = json!({"exclusions": [{"field": "a"}, {"field": "b"}]});
        assert!(reshape(&mut document, "remove:/exclusions/0"));
        assert_eq!(document["exclusions"], json!([{"field": "b"}]));
        assert!(reshape(&mut document, "add:/exclusions"));
        assert_eq!(document["exclusions"].as_array().unwrap().len(), 2);
        assert!(
            !reshape(&mut document, "remove:/exclusions/9"),
            "no such item"
        );
        assert!(!reshape(&mut document, "check"));
    }

    #[test]
    fn the_next_version_of_a_rule_is_one_above_the_schemes_newest() {
        let catalogue = Catalogue::bundled();
        let rules = engine::RuleSet::bundled(&catalogue).unwrap();
        let rule = rules
            .in_effect_or_newest("sch_ka_old_age_pension", crate::clock::today())
            .unwrap();
        let next = next_version(&rules, rule, "admin-a");
        assert_eq!(next["rule_id"], "rule_ka_oap_002");
        assert_eq!(next["version"], 2);
        assert_eq!(next["last_modified_by"], "admin-a");
        // As YAML and back, the same document: the editor's two panes say one thing.
        assert_eq!(engine::yaml::read_bounded(&yaml(&next)).unwrap(), next);
    }
}
