//! Hindi wording of facts (Devanagari). Numbers keep ASCII digits in Indian grouping, so a
//! Hindi explanation quotes exactly the amounts of the English one.
//!
//! Field labels and benefit words are translated from tables; a field or code missing from a
//! table is shown as the catalogue or rule gives it. Enumerated values (`sc`, `karnataka`) and
//! scheme names stay as the rules spell them.

use engine::gaps::GapKind;
use engine::{Date, Verdict};

use crate::phrasing::{Amounts, Condition, Exclusion, Field, Gap, Phrasing, Shown};

pub(crate) struct Hindi;

const MONTHS: [&str; 12] = [
    "जनवरी",
    "फ़रवरी",
    "मार्च",
    "अप्रैल",
    "मई",
    "जून",
    "जुलाई",
    "अगस्त",
    "सितंबर",
    "अक्टूबर",
    "नवंबर",
    "दिसंबर",
];

/// Grammatical gender and number of a label: picks "आपकी आयु" / "आपका धर्म" / "आपके दस्तावेज़".
#[derive(Clone, Copy)]
enum Agreement {
    Feminine,
    Masculine,
    MasculinePlural,
    FemininePlural,
}

use Agreement::{Feminine, FemininePlural, Masculine, MasculinePlural};

/// Hindi labels of the catalogue fields (`schemas/field_catalogue.json`).
const FIELDS: [(&str, &str, Agreement); 61] = [
    ("identity.age", "आयु", Feminine),
    ("identity.date_of_birth", "जन्म तिथि", Feminine),
    ("identity.gender", "लिंग", Masculine),
    ("identity.marital_status", "वैवाहिक स्थिति", Feminine),
    ("identity.social_category", "सामाजिक वर्ग", Masculine),
    ("identity.religion", "धर्म", Masculine),
    (
        "identity.disability_percentage",
        "प्रमाणित दिव्यांगता",
        Feminine,
    ),
    (
        "identity.verified_documents",
        "सत्यापित दस्तावेज़",
        MasculinePlural,
    ),
    ("demographics.state", "निवास राज्य", Masculine),
    ("demographics.district", "ज़िला", Masculine),
    (
        "demographics.urban_rural",
        "क्षेत्र (शहरी या ग्रामीण)",
        Masculine,
    ),
    ("economic.annual_income", "वार्षिक पारिवारिक आय", Feminine),
    (
        "economic.bpl_status",
        "गरीबी रेखा से नीचे (BPL) की स्थिति",
        Feminine,
    ),
    ("economic.land_holding", "भूमि जोत", Feminine),
    ("economic.employer_type", "रोज़गार का प्रकार", Masculine),
    ("economic.occupation", "व्यवसाय", Masculine),
    ("economic.ration_card_type", "राशन कार्ड", Masculine),
    (
        "economic.is_income_tax_payer",
        "आयकरदाता परिवार की स्थिति",
        Feminine,
    ),
    (
        "economic.has_pucca_house",
        "पक्का मकान होने की स्थिति",
        Feminine,
    ),
    ("economic.has_bank_account", "बैंक खाता", Masculine),
    (
        "economic.is_epfo_esic_nps_member",
        "EPFO/ESIC/NPS सदस्यता",
        Feminine,
    ),
    (
        "economic.is_government_employee",
        "सरकारी कर्मचारी वाले परिवार की स्थिति",
        Feminine,
    ),
    ("family.dependents_count", "आश्रितों की संख्या", Feminine),
    ("family.children_count", "बच्चों की संख्या", Feminine),
    ("family.family_size", "परिवार के सदस्यों की संख्या", Feminine),
    (
        "family.youngest_daughter_age",
        "सबसे छोटी बेटी की आयु",
        Feminine,
    ),
    (
        "family.breadwinner_age_at_death",
        "मृत्यु के समय कमाने वाले सदस्य की आयु",
        Feminine,
    ),
    ("family.has_lpg_connection", "घर में LPG कनेक्शन", Masculine),
    (
        "family.is_pregnant_or_lactating",
        "गर्भावस्था या स्तनपान की स्थिति",
        Feminine,
    ),
    ("education.course_level", "पाठ्यक्रम का स्तर", Masculine),
    (
        "education.last_exam_percentage",
        "पिछली परीक्षा के अंक",
        MasculinePlural,
    ),
    (
        "eligibility.active_schemes",
        "पहले से मिल रही योजनाएँ",
        FemininePlural,
    ),
    ("economic.monthly_income", "स्वयं की मासिक आय", Feminine),
    (
        "economic.pays_income_tax",
        "पिछले वर्ष आयकर भुगतान की स्थिति",
        Feminine,
    ),
    (
        "economic.has_ever_paid_income_tax",
        "कभी आयकर भुगतान करने की स्थिति",
        Feminine,
    ),
    (
        "economic.files_gst",
        "GST रिटर्न दाखिल करने की स्थिति",
        Feminine,
    ),
    (
        "economic.in_government_service",
        "सरकारी नौकरी की स्थिति",
        Feminine,
    ),
    (
        "economic.receives_government_pension",
        "सरकारी सेवा पेंशन",
        Feminine,
    ),
    ("economic.irrigated_land_acres", "सिंचित भूमि", Feminine),
    ("economic.unirrigated_land_acres", "असिंचित भूमि", Feminine),
    (
        "spouse.pays_income_tax",
        "पति या पत्नी के आयकर भुगतान की स्थिति",
        Feminine,
    ),
    (
        "spouse.files_gst",
        "पति या पत्नी के GST रिटर्न दाखिल करने की स्थिति",
        Feminine,
    ),
    (
        "spouse.in_government_service",
        "पति या पत्नी की सरकारी नौकरी की स्थिति",
        Feminine,
    ),
    (
        "spouse.receives_government_pension",
        "पति या पत्नी की सरकारी सेवा पेंशन",
        Feminine,
    ),
    (
        "household.highest_member_monthly_income",
        "परिवार के किसी भी सदस्य की सबसे अधिक मासिक आय",
        Feminine,
    ),
    (
        "household.owns_two_wheeler",
        "परिवार के पास दोपहिया वाहन",
        Masculine,
    ),
    (
        "household.owns_three_or_four_wheeler",
        "परिवार के पास तिपहिया या चारपहिया वाहन",
        Masculine,
    ),
    (
        "household.owns_motorised_fishing_boat",
        "परिवार के पास मोटर वाली मछली पकड़ने की नाव",
        Feminine,
    ),
    (
        "household.owns_mechanised_farm_equipment",
        "परिवार के पास ट्रैक्टर या अन्य कृषि मशीन",
        Feminine,
    ),
    (
        "household.owns_irrigation_equipment",
        "परिवार के पास सिंचाई उपकरण",
        Masculine,
    ),
    (
        "household.kisan_credit_card_limit",
        "किसान क्रेडिट कार्ड की सीमा",
        Feminine,
    ),
    (
        "household.runs_registered_enterprise",
        "परिवार का पंजीकृत उद्यम",
        Masculine,
    ),
    (
        "household.pays_professional_tax",
        "परिवार में व्यवसाय कर भुगतान की स्थिति",
        Feminine,
    ),
    (
        "household.owns_refrigerator",
        "परिवार के पास फ्रिज",
        Masculine,
    ),
    (
        "household.annual_electricity_units",
        "परिवार की वार्षिक बिजली खपत",
        Feminine,
    ),
    ("household.is_migrant", "प्रवासी परिवार की स्थिति", Feminine),
    (
        "household.in_awaas_plus_list",
        "PMAY-G प्रतीक्षा सूची में परिवार की स्थिति",
        Feminine,
    ),
    (
        "household.secc_deprivations",
        "SECC 2011 में दर्ज अभाव",
        MasculinePlural,
    ),
    (
        "household.secc_automatic_inclusion",
        "SECC 2011 में स्वतः शामिल होने की स्थिति",
        Feminine,
    ),
    ("maternity.child_birth_order", "बच्चे का जन्म क्रम", Masculine),
    ("maternity.child_gender", "शिशु का लिंग", Masculine),
];

/// Benefit types and disbursement modes of the bundled schemes.
const CODES: [(&str, &str); 35] = [
    ("accident_insurance", "दुर्घटना बीमा"),
    ("bank_loan", "बैंक ऋण"),
    ("cash_transfer", "नकद हस्तांतरण"),
    ("collateral_free_loan", "बिना जमानत का ऋण"),
    ("conditional_cash_transfer", "सशर्त नकद हस्तांतरण"),
    ("contributory_pension", "अंशदायी पेंशन"),
    ("education_incentive", "शिक्षा प्रोत्साहन"),
    ("food_grain", "खाद्यान्न"),
    ("health_insurance", "स्वास्थ्य बीमा"),
    ("housing_assistance", "आवास सहायता"),
    ("in_kind_lpg_connection", "LPG कनेक्शन (वस्तु के रूप में)"),
    ("income_support", "आय सहायता"),
    ("investment_support", "निवेश सहायता"),
    ("life_insurance", "जीवन बीमा"),
    ("lump_sum_assistance", "एकमुश्त सहायता"),
    ("maternity_benefit", "मातृत्व लाभ"),
    ("monthly_cash_transfer", "मासिक नकद हस्तांतरण"),
    ("monthly_pension", "मासिक पेंशन"),
    ("one_time_grant", "एकमुश्त अनुदान"),
    ("scholarship", "छात्रवृत्ति"),
    ("skilling_toolkit_and_credit", "कौशल प्रशिक्षण, टूलकिट और ऋण"),
    ("small_savings_account", "लघु बचत खाता"),
    ("bank_or_post_office_account", "बैंक या डाकघर खाते में"),
    ("cashless_hospitalisation", "कैशलेस अस्पताल उपचार से"),
    (
        "claim_to_insured_or_nominee",
        "बीमित व्यक्ति या नामित व्यक्ति को दावे पर",
    ),
    ("claim_to_nominee", "नामित व्यक्ति को दावे पर"),
    ("direct_bank_transfer", "सीधे बैंक खाते में (DBT)"),
    (
        "direct_bank_transfer_in_instalments",
        "किस्तों में सीधे बैंक खाते में (DBT)",
    ),
    (
        "direct_bank_transfer_or_home_delivery",
        "सीधे बैंक खाते में (DBT) या घर पर",
    ),
    (
        "direct_bank_transfer_or_post_office",
        "सीधे बैंक खाते में (DBT) या डाकघर से",
    ),
    ("direct_bank_transfer_pfms", "PFMS से सीधे बैंक खाते में (DBT)"),
    (
        "door_delivery_by_village_ward_secretariat",
        "ग्राम/वार्ड सचिवालय द्वारा घर पर",
    ),
    ("e_voucher_and_bank_loan", "ई-वाउचर और बैंक ऋण से"),
    ("fair_price_shop", "उचित मूल्य की दुकान से"),
    ("oil_marketing_company", "तेल विपणन कंपनी से"),
];

struct Label<'a> {
    text: &'a str,
    agreement: Agreement,
}

impl Label<'_> {
    fn of<'a>(field: &Field<'a>) -> Label<'a> {
        FIELDS
            .iter()
            .find(|(name, _, _)| *name == field.name)
            .map_or(
                Label {
                    text: field.label,
                    agreement: if field.plural {
                        MasculinePlural
                    } else {
                        Masculine
                    },
                },
                |&(_, text, agreement)| Label { text, agreement },
            )
    }

    /// "आपकी आयु".
    fn yours(&self) -> String {
        let possessive = match self.agreement {
            Feminine | FemininePlural => "आपकी",
            Masculine => "आपका",
            MasculinePlural => "आपके",
        };
        format!("{possessive} {}", self.text)
    }

    /// "है" or "हैं".
    fn is(&self) -> &'static str {
        match self.agreement {
            Feminine | Masculine => "है",
            FemininePlural | MasculinePlural => "हैं",
        }
    }

    /// "आपकी आयु 68 वर्ष है", or "आयु: जानकारी नहीं दी गई है" (which needs no oblique case).
    fn stated(&self, actual: Option<&str>) -> String {
        match actual {
            Some(actual) => format!("{} {actual} {}", self.yours(), self.is()),
            None => format!("{}: जानकारी नहीं दी गई है", self.text),
        }
    }
}

fn code(code: &str) -> String {
    CODES
        .iter()
        .find(|(c, _)| *c == code)
        .map_or_else(|| code.replace('_', " "), |(_, hi)| (*hi).to_string())
}

impl Phrasing for Hindi {
    fn full_stop(&self) -> &'static str {
        "।"
    }

    fn verdict(&self, scheme: &str, verdict: Verdict, as_of: &str) -> String {
        let phrase = self.verdict_phrase(verdict);
        match verdict {
            Verdict::Eligible | Verdict::NotEligible => format!("आप {scheme} {phrase}"),
            Verdict::PartialMatch => {
                format!("आप {scheme} {phrase}, लेकिन इसकी कुछ शर्तें पूरी करते हैं")
            }
            Verdict::NotApplicable => format!("{scheme} {as_of} {phrase}"),
        }
    }

    fn verdict_phrase(&self, verdict: Verdict) -> &'static str {
        match verdict {
            Verdict::Eligible => "के लिए पात्र हैं",
            Verdict::PartialMatch => "के लिए अभी पात्र नहीं हैं",
            Verdict::NotEligible => "के लिए पात्र नहीं हैं",
            Verdict::NotApplicable => "को लागू नहीं है",
        }
    }

    fn promises(&self) -> &'static [&'static str] {
        &["गारंटी", "निश्चित रूप से", "पक्का मिलेगा"]
    }

    fn score(&self, score: u8, matched: usize, total: usize) -> String {
        format!("आपका मिलान स्कोर 100 में से {score} है; आप {total} में से {matched} मुख्य शर्तें पूरी करते हैं")
    }

    fn condition(&self, c: &Condition<'_>) -> String {
        let met = if c.met {
            "यह शर्त पूरी होती है"
        } else {
            "यह शर्त पूरी नहीं होती"
        };
        format!(
            "{}; आवश्यक: {}; {met}",
            Label::of(&c.field).stated(c.actual.as_deref()),
            c.required
        )
    }

    fn exclusion(&self, e: &Exclusion<'_>) -> String {
        format!(
            "आप इस योजना से बाहर हैं, क्योंकि {}; आवश्यक: {}",
            Label::of(&e.field).stated(Some(&e.actual)),
            e.required
        )
    }

    fn gap(&self, g: &Gap<'_>) -> String {
        let label = Label::of(&g.field);
        let required = if g.negated {
            format!("यह न हो: {}", g.required)
        } else {
            g.required.clone()
        };
        let what = match g.kind {
            GapKind::Exclusion => "कमी (बहिष्करण की शर्त)",
            GapKind::Document => "कमी (सत्यापित दस्तावेज़)",
            GapKind::MissingData => "कमी (जानकारी चाहिए)",
            GapKind::Threshold | GapKind::Category => "कमी",
        };
        let mut sentence = format!(
            "{what}: {}; आवश्यक: {required}",
            label.stated(g.actual.as_deref())
        );
        if let Some(distance) = &g.distance {
            sentence.push_str(&format!("; अंतर: {distance}"));
        }
        if let Some(date) = &g.estimated_eligibility_date {
            sentence.push_str(&format!("; अनुमानित पात्रता तिथि: {date}"));
        }
        sentence
    }

    fn benefit_kind(&self, kind: Option<&str>, disbursement: Option<&str>) -> Option<String> {
        match (kind, disbursement) {
            (Some(k), Some(d)) => Some(format!("लाभ: {}; भुगतान: {}", code(k), code(d))),
            (Some(k), None) => Some(format!("लाभ: {}", code(k))),
            (None, Some(d)) => Some(format!("लाभ का भुगतान: {}", code(d))),
            (None, None) => None,
        }
    }

    fn benefit_amounts(&self, a: &Amounts) -> Option<String> {
        let parts: Vec<String> = [
            a.monthly.as_ref().map(|m| format!("{m} प्रति माह")),
            a.annual.as_ref().map(|y| format!("{y} प्रति वर्ष")),
            a.one_time.as_ref().map(|o| format!("{o} एक बार")),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| format!("लाभ राशि: {}", parts.join(", ")))
    }

    fn benefit_description(&self, _description: &str) -> Option<String> {
        // The rule's description is English prose: quoting it would not be Hindi, and
        // translating it would say what the rule does not.
        None
    }

    fn requirement(&self, operator: &str, required: &Shown) -> String {
        match required {
            Shown::One(v) => match operator {
                "neq" => format!("{v} के अलावा"),
                "gt" => format!("{v} से अधिक"),
                "gte" => format!("कम से कम {v}"),
                "lt" => format!("{v} से कम"),
                "lte" => format!("अधिकतम {v}"),
                "contains" => format!("{v} शामिल हो"),
                "not_contains" => format!("{v} शामिल न हो"),
                _ => v.clone(),
            },
            Shown::Many(items) if operator == "not_in" => {
                format!("इनमें से कोई नहीं: {}", items.join(", "))
            }
            Shown::Many(items) => format!("इनमें से कोई एक: {}", items.join(", ")),
            Shown::Range(lo, hi) => format!("{lo} से {hi} के बीच"),
        }
    }

    fn boolean(&self, value: bool) -> &'static str {
        if value { "हाँ" } else { "नहीं" }
    }

    fn nothing(&self) -> &'static str {
        "कोई नहीं"
    }

    fn quantity(&self, number: &str, unit: &str) -> String {
        let unit = match unit {
            "years" => "वर्ष",
            "percent" => "प्रतिशत",
            "hectares" => "हेक्टेयर",
            other => other,
        };
        format!("{number} {unit}")
    }

    fn date(&self, date: Date) -> String {
        format!(
            "{} {} {}",
            date.day(),
            MONTHS[usize::from(date.month()) - 1],
            date.year()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::{Catalogue, RuleSet};

    #[test]
    fn every_catalogue_field_has_a_hindi_label() {
        for field in Catalogue::bundled().fields() {
            assert!(
                FIELDS.iter().any(|(name, _, _)| *name == field.name),
                "{} has no Hindi label",
                field.name
            );
        }
    }

    #[test]
    fn every_bundled_benefit_word_is_translated() {
        let catalogue = Catalogue::bundled();
        let rules = RuleSet::bundled(&catalogue).expect("the bundled corpus loads");
        for benefit in rules.rules.iter().filter_map(|r| r.benefit.as_ref()) {
            for word in [&benefit.kind, &benefit.disbursement].into_iter().flatten() {
                assert!(
                    CODES.iter().any(|(c, _)| c == word),
                    "{word} has no Hindi wording"
                );
            }
        }
    }
}
