//! Loading rules: YAML → JSON document → JSON Schema → catalogue checks → [`Rule`].
//!
//! Every problem in a document is collected (with the JSON pointer of the offending part and the
//! reason), so an author sees all of them in one report. No rule text is ever executed.

use serde_json::Value as Json;
use std::sync::OnceLock;

use crate::benefit::BenefitEstimates;
use crate::catalogue::{Catalogue, DOCUMENTS, FieldType};
use crate::date::{Date, MonthDay};
use crate::error::Problem;
use crate::eval::evaluation_id_seed;
use crate::gaps::Requirement;
use crate::hash::jcs_sha256;
use crate::profile::json_kind;
use crate::rule::*;
use crate::value::Scalar;

/// The JSON Schema for rules, bundled.
pub const RULE_SCHEMA: &str = include_str!("../../../schemas/rule.schema.json");

/// Limits of docs/semantics.md, "Rules".
pub const MAX_LEAVES: usize = 50;
pub const MAX_DEPTH: usize = 5;
pub const MAX_STRING_CHARS: usize = 256;
pub const MAX_ABS_NUMBER: f64 = 1e9;
pub const MAX_LIST_ITEMS: usize = 100;
/// The largest rule document read, in bytes (a real rule is a few kilobytes). YAML aliases that
/// would expand a small document into a huge one are refused by the parser itself.
pub const MAX_RULE_BYTES: usize = 64 * 1024;
/// Scores are exact fractions; a tree whose common denominator passes this is refused.
const MAX_DENOMINATOR: u64 = 1 << 50;

fn rule_schema() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Json =
            serde_json::from_str(RULE_SCHEMA).expect("the bundled rule schema is JSON");
        jsonschema::validator_for(&schema).expect("the bundled rule schema compiles")
    })
}

/// Parses one YAML rule document. `source` names it in problems.
pub fn parse_rule_yaml(
    catalogue: &Catalogue,
    text: &str,
    source: &str,
) -> Result<Rule, Vec<Problem>> {
    if text.len() > MAX_RULE_BYTES {
        return Err(vec![Problem {
            source: source.into(),
            id: None,
            path: String::new(),
            reason: format!(
                "the document is {} bytes; at most {MAX_RULE_BYTES}",
                text.len()
            ),
        }]);
    }
    let document: Json = crate::yaml::read_bounded(text).map_err(|e| {
        vec![Problem {
            source: source.into(),
            id: None,
            path: String::new(),
            reason: format!("not valid YAML: {e}"),
        }]
    })?;
    parse_rule_json(catalogue, document, source)
}

/// Validates and builds a rule from its JSON document.
pub fn parse_rule_json(
    catalogue: &Catalogue,
    document: Json,
    source: &str,
) -> Result<Rule, Vec<Problem>> {
    let id = document
        .get("rule_id")
        .and_then(Json::as_str)
        .map(str::to_string);
    let mut builder = Builder {
        catalogue,
        source,
        id: id.clone(),
        problems: Vec::new(),
    };
    check_limits(&document, "", &mut builder);
    for error in rule_schema().iter_errors(&document) {
        builder.problem(error.instance_path().to_string(), schema_reason(&error));
    }
    let rule = builder.rule(&document);
    match rule {
        Some(rule) if builder.problems.is_empty() => Ok(rule),
        _ if builder.problems.is_empty() => {
            // The schema and the builder disagree: never let a malformed rule through silently.
            builder.problem(String::new(), "malformed rule".into());
            Err(builder.problems)
        }
        _ => Err(builder.problems),
    }
}

fn schema_reason(error: &jsonschema::ValidationError<'_>) -> String {
    error.to_string()
}

/// The limits of docs/semantics.md, "Rules", that apply to every part of the document: strings, numbers, lists. The
/// provenance under `/source` is prose for auditors, not rule data; the schema bounds it.
fn check_limits(value: &Json, path: &str, builder: &mut Builder<'_>) {
    if path == "/source" {
        return;
    }
    match value {
        Json::String(s) if s.chars().count() > MAX_STRING_CHARS => builder.problem(
            path.into(),
            format!(
                "string of {} characters; at most {MAX_STRING_CHARS}",
                s.chars().count()
            ),
        ),
        Json::Number(n) if n.as_f64().is_some_and(|x| x.abs() > MAX_ABS_NUMBER) => {
            builder.problem(path.into(), format!("number {n} is outside ±1e9"))
        }
        Json::Array(items) => {
            if items.len() > MAX_LIST_ITEMS {
                builder.problem(
                    path.into(),
                    format!("list of {} items; at most {MAX_LIST_ITEMS}", items.len()),
                );
            }
            for (i, item) in items.iter().enumerate() {
                check_limits(item, &format!("{path}/{i}"), builder);
            }
        }
        Json::Object(map) => {
            for (key, item) in map {
                check_limits(item, &format!("{path}/{}", escape_pointer(key)), builder);
            }
        }
        _ => {}
    }
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

struct Builder<'a> {
    catalogue: &'a Catalogue,
    source: &'a str,
    id: Option<String>,
    problems: Vec<Problem>,
}

impl Builder<'_> {
    fn problem(&mut self, path: String, reason: String) {
        let problem = Problem {
            source: self.source.into(),
            id: self.id.clone(),
            path,
            reason,
        };
        if !self.problems.contains(&problem) {
            self.problems.push(problem);
        }
    }

    fn date(&mut self, doc: &Json, key: &str) -> Option<Date> {
        let text = doc.get(key)?.as_str()?;
        let date = Date::parse(text);
        if date.is_none() {
            self.problem(
                format!("/{key}"),
                format!("{text:?} is not a calendar date YYYY-MM-DD"),
            );
        }
        date
    }

    /// Builds the rule; structural problems are the schema's to report, so this stays quiet on them.
    fn rule(&mut self, doc: &Json) -> Option<Rule> {
        let text = |key: &str| doc.get(key).and_then(Json::as_str).map(str::to_string);
        let state = text("state");
        if let Some(state) = &state {
            let states = self
                .catalogue
                .id("demographics.state")
                .map(|id| self.catalogue.field(id));
            if state != "central" && !states.is_some_and(|s| s.allows_value(state)) {
                self.problem(
                    "/state".into(),
                    format!("{state:?} is neither `central` nor a state of the catalogue"),
                );
            }
        }
        let effective_from = self.date(doc, "effective_from");
        let effective_until = self.date(doc, "effective_until");
        if let (Some(from), Some(until)) = (effective_from, effective_until)
            && until < from
        {
            self.problem(
                "/effective_until".into(),
                format!("ends ({until}) before it starts ({from})"),
            );
        }
        let eligibility = doc
            .get("eligibility")
            .and_then(|e| self.node(e, "/eligibility", 1));
        let leaves = doc.get("eligibility").map_or(0, count_leaves);
        if leaves > MAX_LEAVES {
            self.problem(
                "/eligibility".into(),
                format!("{leaves} leaf conditions; at most {MAX_LEAVES}"),
            );
        }
        let exclusions: Vec<Leaf> = match doc.get("exclusions").and_then(Json::as_array) {
            Some(items) => items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| self.leaf(item, &format!("/exclusions/{i}")))
                .collect(),
            None => Vec::new(),
        };
        let application = doc
            .get("application")
            .map(|a| self.application(a))
            .unwrap_or_default();
        let window = doc.get("application_window").and_then(|w| self.window(w));
        let eligibility = eligibility?;
        if eligibility.denominator() > MAX_DENOMINATOR {
            self.problem(
                "/eligibility".into(),
                "the tree's groups are too unevenly sized to score exactly".into(),
            );
        }
        let strings = |key: &str, inner: &str| -> Vec<String> {
            doc.get(key)
                .and_then(|v| {
                    if inner.is_empty() {
                        Some(v)
                    } else {
                        v.get(inner)
                    }
                })
                .and_then(Json::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Json::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        let documents_required = strings("documents_required", "");
        let documents = self
            .catalogue
            .id(DOCUMENTS)
            .map(|id| self.catalogue.field(id));
        for (i, code) in documents_required.iter().enumerate() {
            if !documents.is_some_and(|d| d.allows_value(code)) {
                self.problem(
                    format!("/documents_required/{i}"),
                    format!("{code:?} is not a value of {DOCUMENTS} in the field catalogue"),
                );
            }
        }
        let terms = doc.get("benefit").map(|b| self.benefit(b));
        let rule_hash = jcs_sha256(doc);
        let evaluation_id_seed = evaluation_id_seed(&rule_hash);
        Some(Rule {
            rule_id: text("rule_id")?,
            scheme_id: text("scheme_id")?,
            scheme_name: text("scheme_name")?,
            state: state?,
            department: text("department"),
            version: u32::try_from(doc.get("version")?.as_u64()?).ok()?,
            effective_from: effective_from?,
            effective_until,
            eligibility,
            exclusions,
            benefit_estimate: terms.as_ref().map(BenefitEstimates::of),
            benefit: terms,
            documents_required,
            application,
            window,
            relations: Relations {
                combinable_with: strings("relations", "combinable_with"),
                must_differ_from: strings("relations", "must_differ_from"),
            },
            source_url: doc
                .get("source")
                .and_then(|s| s.get("url"))
                .and_then(Json::as_str)
                .map(str::to_string),
            rule_hash,
            evaluation_id_seed,
            document: doc.clone(),
            source: self.source.to_string(),
        })
    }

    fn benefit(&mut self, doc: &Json) -> Benefit {
        let text = |key: &str| doc.get(key).and_then(Json::as_str).map(str::to_string);
        let tiers = doc
            .get("tiers")
            .and_then(Json::as_array)
            .map(|tiers| {
                tiers
                    .iter()
                    .enumerate()
                    .filter_map(|(i, tier)| {
                        let path = format!("/benefit/tiers/{i}/when");
                        let when = tier.get("when")?;
                        let leaves = count_leaves(when);
                        if leaves > MAX_LEAVES {
                            self.problem(
                                path.clone(),
                                format!("{leaves} leaf conditions; at most {MAX_LEAVES}"),
                            );
                        }
                        Some(BenefitTier {
                            when: self.node(when, &path, 1)?,
                            amount_inr: tier.get("amount_inr").and_then(Json::as_f64),
                            label: tier.get("label").and_then(Json::as_str).map(str::to_string),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        // The schema names the kinds (a wrong one is a problem); a document without one was
        // written before kinds existed, and reads as its `type` implies (docs/rule-format.md,
        // "Benefit kinds").
        let type_code = text("type");
        let kind = text("kind")
            .and_then(|k| BenefitKind::parse(&k))
            .unwrap_or_else(|| BenefitKind::implied_by(type_code.as_deref()));
        Benefit {
            kind,
            type_code,
            amount_inr: doc.get("amount_inr").and_then(Json::as_f64),
            amount_min_inr: doc.get("amount_min_inr").and_then(Json::as_f64),
            frequency: doc
                .get("frequency")
                .and_then(Json::as_str)
                .and_then(Frequency::parse),
            disbursement: text("disbursement"),
            description: text("description"),
            tiers,
        }
    }

    fn application(&mut self, doc: &Json) -> Application {
        Application {
            portal_url: doc
                .get("portal_url")
                .and_then(Json::as_str)
                .map(str::to_string),
            deadline: self.date(doc, "deadline"),
            renewal_period_months: doc
                .get("renewal_period_months")
                .and_then(Json::as_u64)
                .and_then(|m| m.try_into().ok()),
        }
    }

    fn window(&mut self, doc: &Json) -> Option<ApplicationWindow> {
        let mut month_day = |key: &str| {
            let text = doc.get(key)?.as_str()?;
            let parsed = MonthDay::parse(text);
            if parsed.is_none() {
                self.problem(
                    format!("/application_window/{key}"),
                    format!("{text:?} is not a month-day MM-DD"),
                );
            }
            parsed
        };
        Some(ApplicationWindow {
            opens: month_day("opens")?,
            closes: month_day("closes")?,
        })
    }

    fn node(&mut self, doc: &Json, path: &str, depth: usize) -> Option<Node> {
        let Some(conditions) = doc.get("conditions") else {
            return self.leaf(doc, path).map(Node::Leaf);
        };
        if depth > MAX_DEPTH {
            self.problem(
                path.into(),
                format!("groups nest {depth} deep; at most {MAX_DEPTH}"),
            );
        }
        let op = match doc.get("operator").and_then(Json::as_str)? {
            "AND" => GroupOp::And,
            "OR" => GroupOp::Or,
            "NOT" => GroupOp::Not,
            _ => return None,
        };
        let children: Vec<Node> = conditions
            .as_array()?
            .iter()
            .enumerate()
            .map(|(i, c)| self.node(c, &format!("{path}/conditions/{i}"), depth + 1))
            .collect::<Vec<_>>()
            .into_iter()
            .collect::<Option<_>>()?;
        if children.is_empty() || (op == GroupOp::Not && children.len() != 1) {
            return None;
        }
        let children_lcm = children.iter().map(Node::denominator).fold(1, lcm);
        let denominator = match op {
            GroupOp::And => children_lcm.saturating_mul(children.len() as u64),
            GroupOp::Or => children_lcm,
            GroupOp::Not => 1,
        };
        let scales = children
            .iter()
            .map(|c| {
                if op == GroupOp::Not {
                    1
                } else {
                    children_lcm / c.denominator()
                }
            })
            .collect();
        Some(Node::Group(Group {
            op,
            children,
            label: doc.get("label").and_then(Json::as_str).map(str::to_string),
            path: path.to_string(),
            denominator,
            scales,
        }))
    }

    fn leaf(&mut self, doc: &Json, path: &str) -> Option<Leaf> {
        let field_name = doc.get("field")?.as_str()?;
        let op = Op::parse(doc.get("operator")?.as_str()?)?;
        let expected = doc.get("value")?;
        let Some(field) = self.catalogue.id(field_name) else {
            self.problem(
                format!("{path}/field"),
                format!("unknown field `{field_name}`: not in the field catalogue"),
            );
            return None;
        };
        let spec = self.catalogue.field(field);
        let ty = spec.field_type;
        let value_path = format!("{path}/value");
        let allowed = match op {
            Op::Eq | Op::Neq | Op::In | Op::NotIn => ty != FieldType::List,
            Op::Gt | Op::Gte | Op::Lt | Op::Lte | Op::Between => ty.is_ordered(),
            Op::Contains | Op::NotContains => ty == FieldType::List,
        };
        if !allowed {
            self.problem(
                format!("{path}/operator"),
                format!(
                    "operator `{}` does not apply to `{field_name}` ({})",
                    op.name(),
                    ty.name()
                ),
            );
            return None;
        }
        let operand = match op {
            Op::In | Op::NotIn => {
                let Some(items) = expected.as_array().filter(|a| !a.is_empty()) else {
                    self.problem(
                        value_path,
                        format!(
                            "`{}` takes a non-empty list, found {}",
                            op.name(),
                            json_kind(expected)
                        ),
                    );
                    return None;
                };
                let scalars: Vec<Scalar> = items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, item)| self.scalar(field, item, &format!("{value_path}/{i}")))
                    .collect();
                if scalars.len() != items.len() {
                    return None;
                }
                Operand::Many(scalars)
            }
            Op::Between => {
                let Some([lo, hi]) = expected
                    .as_array()
                    .map(Vec::as_slice)
                    .and_then(|a| <&[Json; 2]>::try_from(a).ok())
                else {
                    self.problem(
                        value_path,
                        format!("`between` takes [low, high], found {}", json_kind(expected)),
                    );
                    return None;
                };
                let lo = self.scalar(field, lo, &format!("{value_path}/0"));
                let hi = self.scalar(field, hi, &format!("{value_path}/1"));
                let (lo, hi) = (lo?, hi?);
                if lo.compare(&hi) == Some(std::cmp::Ordering::Greater) {
                    self.problem(value_path, "`between` needs low <= high".into());
                    return None;
                }
                Operand::Range(lo, hi)
            }
            _ => Operand::One(self.scalar(field, expected, &value_path)?),
        };
        let mut leaf = Leaf {
            field,
            field_name: field_name.to_string(),
            op,
            operand,
            expected: expected.clone(),
            label: doc.get("label").and_then(Json::as_str).map(str::to_string),
            path: path.to_string(),
            requirement: String::new(),
        };
        leaf.requirement = Requirement {
            spec: self.catalogue.field(field),
            leaf: &leaf,
        }
        .to_string();
        Some(leaf)
    }

    /// A single value of the field's type (a list field's items are strings).
    fn scalar(&mut self, field: usize, value: &Json, path: &str) -> Option<Scalar> {
        let spec = self.catalogue.field(field);
        let Some(scalar) = Scalar::from_json(spec.field_type, value) else {
            let expected = match spec.field_type {
                FieldType::List => "a string (one list item)",
                FieldType::Date => "a date YYYY-MM-DD",
                other => other.name(),
            };
            self.problem(
                path.into(),
                format!(
                    "`{}` takes {expected}, found {}",
                    spec.name,
                    json_kind(value)
                ),
            );
            return None;
        };
        if let Scalar::Str(s) = &scalar
            && !spec.allows_value(s)
        {
            let allowed = spec.values.as_deref().unwrap_or_default().join(", ");
            self.problem(
                path.into(),
                format!(
                    "{s:?} is not a value of `{}` (allowed: {allowed})",
                    spec.name
                ),
            );
            return None;
        }
        Some(scalar)
    }
}

fn count_leaves(node: &Json) -> usize {
    match node.get("conditions").and_then(Json::as_array) {
        Some(children) => children.iter().map(count_leaves).sum(),
        None => 1,
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn lcm(a: u64, b: u64) -> u64 {
    (a / gcd(a, b)).saturating_mul(b)
}
