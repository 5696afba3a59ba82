//! What a scheme pays, as evaluations show it: the base amount, or the amount of the first
//! benefit tier whose condition holds for the profile (docs/semantics.md, "Benefit tiers"). The
//! benefit's kind says what the amount is: money paid per period, or an insurance cover or a
//! loan limit, which are shown apart and never as money paid (docs/rule-format.md, "Benefit
//! kinds").
//!
//! Every estimate a rule can show is worked out once when the rule is loaded; choosing one for a
//! profile walks the tiers' conditions and allocates nothing.

use serde::Serialize;
use serde_json::Value as Json;

use crate::outcome::Truth;
use crate::profile::Profile;
use crate::tree::Node;
use crate::truth::{from_profile, tree_outcome};
use crate::value::number_json;

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

    /// The kind a rule document written before kinds existed implies by its `type` code (the
    /// codes of the corpus then); any other is cash.
    pub fn implied_by(type_code: Option<&str>) -> BenefitKind {
        match type_code.unwrap_or_default() {
            "monthly_pension" => BenefitKind::Pension,
            "contributory_pension" => BenefitKind::ContributoryPension,
            "scholarship" => BenefitKind::Scholarship,
            "life_insurance" | "health_insurance" | "accident_insurance" => {
                BenefitKind::InsuranceCover
            }
            "bank_loan" | "collateral_free_loan" => BenefitKind::LoanUpTo,
            "food_grain" | "in_kind_lpg_connection" => BenefitKind::InKind,
            "small_savings_account" => BenefitKind::Savings,
            _ => BenefitKind::Cash,
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

/// The benefit as the output shows it (monthly, annual or one-time amounts).
#[derive(Debug, Clone, Serialize)]
pub struct BenefitEstimate {
    pub kind: BenefitKind,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_code: Option<String>,
    /// Paid per month (a contributory pension: the highest slab).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub monthly_inr: Option<Json>,
    /// A contributory pension's lowest monthly slab (the citizen's contribution chooses).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub monthly_from_inr: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annual_inr: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_time_inr: Option<Json>,
    /// An insurance benefit's cover, paid only on a claim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cover_inr: Option<Json>,
    /// A loan benefit's limit: the most that can be borrowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loan_up_to_inr: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disbursement: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The label of the tier that set the amount; absent for the base amount.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    /// When a tier's condition is unknown for the profile, the amount is not shown: these are
    /// the fields that would settle it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub amount_depends_on: Vec<String>,
    /// The amount per `frequency`, as authored (not shown: the amounts above are).
    #[serde(skip)]
    pub amount_inr: Option<f64>,
}

impl BenefitEstimate {
    /// The money paid a month (annual amounts / 12, one-time amounts not counted): `None` for
    /// a kind whose amount is not paid out (a cover, a loan limit, a contributory pension).
    pub fn monthly_paid_out(&self) -> Option<f64> {
        if !self.kind.is_paid_out() {
            return None;
        }
        let number = |json: &Option<Json>| json.as_ref().and_then(Json::as_f64);
        number(&self.monthly_inr).or_else(|| number(&self.annual_inr).map(|a| a / 12.0))
    }
}

/// Every estimate of one rule's benefit.
#[derive(Debug, Clone)]
pub struct BenefitEstimates {
    pub base: BenefitEstimate,
    /// Per tier, in order: the estimate where its condition holds, and the one where it is
    /// unknown (no amount, the fields it reads).
    pub tiers: Vec<(BenefitEstimate, BenefitEstimate)>,
}

impl BenefitEstimates {
    pub(crate) fn of(benefit: &Benefit) -> BenefitEstimates {
        let base = estimate(benefit, benefit.amount_inr, None);
        let tiers = benefit
            .tiers
            .iter()
            .map(|tier| {
                let applied = estimate(benefit, tier.amount_inr, tier.label.clone());
                let mut fields = Vec::new();
                tier.when
                    .for_each_leaf(&mut |leaf| fields.push(leaf.field_name.clone()));
                fields.sort();
                fields.dedup();
                let undetermined = BenefitEstimate {
                    amount_depends_on: fields,
                    ..estimate(benefit, None, None)
                };
                (applied, undetermined)
            })
            .collect();
        BenefitEstimates { base, tiers }
    }
}

fn estimate(benefit: &Benefit, amount: Option<f64>, tier: Option<String>) -> BenefitEstimate {
    let whole = amount.map(number_json);
    // A cover or a loan limit is one sum, whatever the premium's or repayment's period.
    let (cover, loan) = match benefit.kind {
        BenefitKind::InsuranceCover => (whole, None),
        BenefitKind::LoanUpTo => (None, whole),
        _ => (None, None),
    };
    let per = |times: f64| {
        amount
            .filter(|_| {
                !matches!(
                    benefit.kind,
                    BenefitKind::InsuranceCover | BenefitKind::LoanUpTo
                )
            })
            .map(|a| number_json(a * times))
    };
    let (monthly, annual, one_time) = match benefit.frequency {
        Some(Frequency::Monthly) => (per(1.0), per(12.0), None),
        Some(Frequency::Quarterly) => (None, per(4.0), None),
        Some(Frequency::Yearly) => (None, per(1.0), None),
        Some(Frequency::OneTime) => (None, None, per(1.0)),
        Some(Frequency::InKind) | None => (None, None, None),
    };
    let monthly_from = benefit
        .amount_min_inr
        .filter(|_| benefit.kind == BenefitKind::ContributoryPension && monthly.is_some())
        .map(number_json);
    // A range of slabs has no single yearly figure.
    let annual = if monthly_from.is_some() { None } else { annual };
    BenefitEstimate {
        kind: benefit.kind,
        type_code: benefit.type_code.clone(),
        monthly_inr: monthly,
        monthly_from_inr: monthly_from,
        annual_inr: annual,
        one_time_inr: one_time,
        cover_inr: cover,
        loan_up_to_inr: loan,
        disbursement: benefit.disbursement.clone(),
        description: benefit.description.clone(),
        tier,
        amount_depends_on: Vec::new(),
        amount_inr: amount,
    }
}

impl BenefitEstimates {
    /// The estimate for `profile` of `benefit` (whose estimates these are): the first tier
    /// whose condition holds sets the amount; a tier whose condition is unknown before any
    /// holds leaves the amount open (the estimate names the fields that would settle it); with
    /// no tier holding, the base amount.
    pub fn for_profile(&self, benefit: &Benefit, profile: &Profile) -> &BenefitEstimate {
        let truth = from_profile(profile);
        for (tier, (applied, undetermined)) in benefit.tiers.iter().zip(&self.tiers) {
            match tree_outcome(&tier.when, &mut |leaf| truth(leaf)).0 {
                Truth::True => return applied,
                Truth::Unknown => return undetermined,
                Truth::False => {}
            }
        }
        &self.base
    }
}
