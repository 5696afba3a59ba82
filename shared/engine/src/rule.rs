//! The rule model: what a validated YAML rule becomes.

use serde_json::Value as Json;

pub use crate::benefit::{Benefit, BenefitKind, BenefitTier, Frequency};
use crate::benefit::{BenefitEstimate, BenefitEstimates};
use crate::catalogue::FieldId;
use crate::date::{Date, MonthDay};
use crate::profile::Profile;
pub use crate::tree::{Group, GroupOp, Leaf, Node, Op, Operand};

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
    pub benefit_estimate: Option<BenefitEstimates>,
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
    /// The benefit estimate for `profile` (docs/semantics.md, "Benefit tiers"): the first tier
    /// whose condition holds sets the amount ([`BenefitEstimates::for_profile`]).
    pub fn benefit_for(&self, profile: &Profile) -> Option<&BenefitEstimate> {
        let (benefit, estimates) = (self.benefit.as_ref()?, self.benefit_estimate.as_ref()?);
        Some(estimates.for_profile(benefit, profile))
    }

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
