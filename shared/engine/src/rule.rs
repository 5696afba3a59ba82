//! The rule model: what a validated YAML rule becomes.

use serde::Serialize;
use serde_json::Value as Json;

use crate::catalogue::FieldId;
use crate::date::{Date, MonthDay};
use crate::value::Scalar;

/// Leaf operators (docs/semantics.md, "Rules").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Eq,
    Neq,
    Gt,
    Gte,
    Lt,
    Lte,
    In,
    NotIn,
    Contains,
    NotContains,
    Between,
}

impl Op {
    pub const ALL: [Op; 11] = [
        Op::Eq,
        Op::Neq,
        Op::Gt,
        Op::Gte,
        Op::Lt,
        Op::Lte,
        Op::In,
        Op::NotIn,
        Op::Contains,
        Op::NotContains,
        Op::Between,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Op::Eq => "eq",
            Op::Neq => "neq",
            Op::Gt => "gt",
            Op::Gte => "gte",
            Op::Lt => "lt",
            Op::Lte => "lte",
            Op::In => "in",
            Op::NotIn => "not_in",
            Op::Contains => "contains",
            Op::NotContains => "not_contains",
            Op::Between => "between",
        }
    }

    pub fn parse(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Threshold operators: numeric distance to the threshold is meaningful.
    pub fn is_threshold(self) -> bool {
        matches!(self, Op::Gt | Op::Gte | Op::Lt | Op::Lte | Op::Between)
    }
}

/// The value a leaf compares with, typed by the leaf's field.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    One(Scalar),
    Many(Vec<Scalar>),
    /// `between`: inclusive at both ends.
    Range(Scalar, Scalar),
}

/// A leaf condition.
#[derive(Debug, Clone)]
pub struct Leaf {
    pub field: FieldId,
    pub field_name: String,
    pub op: Op,
    pub operand: Operand,
    /// The value exactly as authored, for traces.
    pub expected: Json,
    pub label: Option<String>,
    /// JSON pointer of the leaf inside the rule document.
    pub path: String,
    /// The requirement in words for gap texts ("at least 65", "one of sc, st"), rendered once
    /// at load: gap descriptions are written on every evaluation.
    pub requirement: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum GroupOp {
    #[serde(rename = "AND")]
    And,
    #[serde(rename = "OR")]
    Or,
    #[serde(rename = "NOT")]
    Not,
}

/// A node of the eligibility tree.
#[derive(Debug, Clone)]
pub enum Node {
    Leaf(Leaf),
    Group(Group),
}

#[derive(Debug, Clone)]
pub struct Group {
    pub op: GroupOp,
    pub children: Vec<Node>,
    pub label: Option<String>,
    pub path: String,
    /// The fixed denominator of this node's score (see `score`): scores are exact fractions.
    pub denominator: u64,
    /// For AND/OR: each child's numerator times its scale is in the group's common unit (the lcm
    /// of the children's denominators); for NOT: 1.
    pub scales: Vec<u64>,
}

impl Node {
    pub fn denominator(&self) -> u64 {
        match self {
            Node::Leaf(_) => 1,
            Node::Group(g) => g.denominator,
        }
    }

    /// Visits every leaf, depth first, in document order.
    pub fn for_each_leaf<'a>(&'a self, visit: &mut impl FnMut(&'a Leaf)) {
        match self {
            Node::Leaf(leaf) => visit(leaf),
            Node::Group(g) => g.children.iter().for_each(|c| c.for_each_leaf(visit)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Frequency {
    Monthly,
    Quarterly,
    Yearly,
    OneTime,
    InKind,
}

impl Frequency {
    pub fn parse(text: &str) -> Option<Frequency> {
        Some(match text {
            "monthly" => Frequency::Monthly,
            "quarterly" => Frequency::Quarterly,
            "yearly" | "annual" => Frequency::Yearly,
            "one_time" => Frequency::OneTime,
            "in_kind" => Frequency::InKind,
            _ => return None,
        })
    }
}

/// What a benefit's amount is (docs/rule-format.md, "Benefit kinds"): money paid out, or a
/// cover, a loan limit or a pension the citizen's own contributions buy, which are not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BenefitKind {
    /// Money paid to the citizen, per `frequency` (a transfer, a grant, an incentive).
    Cash,
    /// A pension paid by the scheme.
    Pension,
    /// A pension the citizen's own contributions buy, paid from a later age: `amount_inr` is the
    /// monthly pension (the highest slab where `amount_min_inr` gives the lowest).
    ContributoryPension,
    /// A scholarship paid to the student.
    Scholarship,
    /// Insurance: `amount_inr` is the cover, paid only on a claim.
    InsuranceCover,
    /// A loan: `amount_inr` is the most that can be borrowed.
    LoanUpTo,
    /// Goods or services (food grain, a gas connection), no money.
    InKind,
    /// A savings account the citizen pays into.
    Savings,
}

impl BenefitKind {
    pub const ALL: [BenefitKind; 8] = [
        BenefitKind::Cash,
        BenefitKind::Pension,
        BenefitKind::ContributoryPension,
        BenefitKind::Scholarship,
        BenefitKind::InsuranceCover,
        BenefitKind::LoanUpTo,
        BenefitKind::InKind,
        BenefitKind::Savings,
    ];

    /// The name as written in rules and outputs (`insurance_cover`).
    pub fn name(self) -> &'static str {
        match self {
            BenefitKind::Cash => "cash",
            BenefitKind::Pension => "pension",
            BenefitKind::ContributoryPension => "contributory_pension",
            BenefitKind::Scholarship => "scholarship",
            BenefitKind::InsuranceCover => "insurance_cover",
            BenefitKind::LoanUpTo => "loan_up_to",
            BenefitKind::InKind => "in_kind",
            BenefitKind::Savings => "savings",
        }
    }

    pub fn parse(text: &str) -> Option<BenefitKind> {
        BenefitKind::ALL.into_iter().find(|k| k.name() == text)
    }

    /// Whether the amount is money the scheme pays the citizen now: what a population's
    /// outlay adds up (a cover, a loan limit or a future contributory pension is not).
    pub fn is_paid_out(self) -> bool {
        matches!(
            self,
            BenefitKind::Cash | BenefitKind::Pension | BenefitKind::Scholarship
        )
    }
}

#[derive(Debug, Clone)]
pub struct Benefit {
    pub kind: BenefitKind,
    /// The rule's own finer code (`life_insurance`, `monthly_pension`), worded by each
    /// language's `codes`.
    pub type_code: Option<String>,
    pub amount_inr: Option<f64>,
    /// The lowest amount where the citizen's choice sets it (a contributory pension's slabs).
    pub amount_min_inr: Option<f64>,
    pub frequency: Option<Frequency>,
    pub disbursement: Option<String>,
    pub description: Option<String>,
    /// Amounts that depend on the profile (docs/semantics.md, "Benefit tiers").
    pub tiers: Vec<BenefitTier>,
}

/// One tier of a benefit: where `when` holds (and no earlier tier did), `amount_inr` is paid
/// instead of the base amount.
#[derive(Debug, Clone)]
pub struct BenefitTier {
    pub when: Node,
    pub amount_inr: Option<f64>,
    pub label: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Application {
    pub portal_url: Option<String>,
    /// After this date the scheme takes no applications: it is not applicable.
    pub deadline: Option<Date>,
    pub renewal_period_months: Option<u32>,
}

/// A yearly application window, inclusive at both ends; it may wrap the year end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApplicationWindow {
    pub opens: MonthDay,
    pub closes: MonthDay,
}

#[derive(Debug, Clone, Default)]
pub struct Relations {
    pub combinable_with: Vec<String>,
    pub must_differ_from: Vec<String>,
}

/// One version of one scheme's rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub rule_id: String,
    pub scheme_id: String,
    pub scheme_name: String,
    /// A state of the catalogue, or `central`.
    pub state: String,
    pub department: Option<String>,
    pub version: u32,
    pub effective_from: Date,
    pub effective_until: Option<Date>,
    pub eligibility: Node,
    pub exclusions: Vec<Leaf>,
    pub benefit: Option<Benefit>,
    /// `benefit` as evaluations show it, for the base amount and for each tier.
    pub benefit_estimate: Option<crate::benefit::BenefitEstimates>,
    pub documents_required: Vec<String>,
    pub application: Application,
    pub window: Option<ApplicationWindow>,
    pub relations: Relations,
    pub source_url: Option<String>,
    /// The whole rule document as loaded from YAML.
    pub document: Json,
    /// Lower-case hex SHA-256 of the JCS of `document`.
    pub rule_hash: String,
    /// The SHA-256 state after the rule hash: each evaluation id continues from it.
    pub(crate) evaluation_id_seed: sha2::Sha256,
    /// Where the rule was loaded from.
    pub source: String,
}

impl Rule {
    pub fn is_central(&self) -> bool {
        self.state == "central"
    }

    /// Every field the verdict reads (eligibility and exclusions; not benefit tiers, which set
    /// only the amount), sorted, without repeats.
    pub fn fields_read(&self) -> Vec<FieldId> {
        let mut fields = Vec::new();
        self.eligibility
            .for_each_leaf(&mut |leaf| fields.push(leaf.field));
        fields.extend(self.exclusions.iter().map(|l| l.field));
        fields.sort_unstable();
        fields.dedup();
        fields
    }

    /// The root group's direct children: what `matched/total_conditions` count.
    pub fn root_children(&self) -> &[Node] {
        match &self.eligibility {
            Node::Group(g) => &g.children,
            Node::Leaf(_) => std::slice::from_ref(&self.eligibility),
        }
    }
}
