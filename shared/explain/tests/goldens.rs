//! Golden sentences, in English and Hindi, written out by hand and checked word for word:
//! every kind of next step (keep-ready included), every benefit kind and every exclusion
//! operator of the corpus (docs/languages.md, "Checks"). The citizens are real corpus
//! evaluations; a change to a language file or the engine that changes a sentence here must
//! change this test too.

mod support;

use explain::{FactKind, Language, facts, next_steps};
use serde_json::{Value as Json, json};
use support::{catalogue, evaluation, profile, rule};

const AS_OF: &str = "2025-01-15";

/// The facts of `kind` and the next steps of `rule_id` for `citizen`, in English and Hindi.
fn said(
    rule_id: &str,
    citizen: Json,
    kind: fn(&FactKind) -> bool,
) -> [(Vec<String>, Vec<String>); 2] {
    let profile = profile(citizen);
    let e = evaluation(rule(rule_id), &profile, AS_OF);
    [Language::En, Language::Hi].map(|language| {
        let texts = facts(&e, catalogue(), language)
            .facts()
            .iter()
            .filter(|f| kind(&f.kind))
            .map(|f| f.text.clone())
            .collect();
        (texts, next_steps(&e, catalogue(), language))
    })
}

fn karnataka(age: i64, documents: Json, active: Json) -> Json {
    json!({"identity": {"age": age, "verified_documents": documents},
           "demographics": {"state": "karnataka"},
           "economic": {"bpl_status": true, "is_government_employee": false},
           "eligibility": {"active_schemes": active}})
}

fn no_fact(_: &FactKind) -> bool {
    false
}

fn exclusion(kind: &FactKind) -> bool {
    *kind == FactKind::Exclusion
}

fn benefit(kind: &FactKind) -> bool {
    *kind == FactKind::Benefit
}

/// `said` of one case as expected: (English facts, English steps), (Hindi facts, Hindi steps).
fn check(rule_id: &str, citizen: Json, kind: fn(&FactKind) -> bool, expected: [[&[&str]; 2]; 2]) {
    let got = said(rule_id, citizen, kind);
    for ((facts, steps), [want_facts, want_steps]) in got.iter().zip(expected) {
        assert_eq!(facts, want_facts, "{rule_id}");
        assert_eq!(steps, want_steps, "{rule_id}");
    }
}

/// Every kind of next step: apply, keep ready (every document, joined with "and"), a limit
/// not yet reached, any one of several documents, one document, questions, apply once met,
/// why not (a limit; an exclusion says it itself).
#[test]
fn next_steps_of_every_kind() {
    check(
        "rule_ka_oap_001",
        karnataka(68, json!(["aadhaar"]), json!([])),
        no_fact,
        [
            [
                &[],
                &[
                    "Apply at sevasindhu.karnataka.gov.in",
                    "Keep ready: Aadhaar card, proof of age, BPL card, income certificate and bank passbook",
                ],
            ],
            [
                &[],
                &[
                    "sevasindhu.karnataka.gov.in पर आवेदन करें",
                    "ये तैयार रखें: आधार कार्ड, आयु का प्रमाण, BPL कार्ड, आय प्रमाण पत्र और बैंक पासबुक",
                ],
            ],
        ],
    );
    check(
        "rule_ka_oap_001",
        karnataka(58, json!(["aadhaar"]), json!([])),
        no_fact,
        [
            [
                &[],
                &[
                    "You are 2 years below the minimum age of 60",
                    "When you meet these conditions, apply at sevasindhu.karnataka.gov.in",
                ],
            ],
            [
                &[],
                &[
                    "आपकी आयु: 58 वर्ष; यह न्यूनतम सीमा 60 वर्ष से 2 वर्ष कम है",
                    "ये शर्तें पूरी होने पर sevasindhu.karnataka.gov.in पर आवेदन करें",
                ],
            ],
        ],
    );
    check(
        "rule_ka_oap_001",
        karnataka(68, json!(["pan"]), json!([])),
        no_fact,
        [
            [
                &[],
                &[
                    "Get your Aadhaar card verified, or instead your voter ID",
                    "When you meet these conditions, apply at sevasindhu.karnataka.gov.in",
                ],
            ],
            [
                &[],
                &[
                    "इनमें से कोई एक सत्यापित करवाएँ: आधार कार्ड या मतदाता पहचान पत्र",
                    "ये शर्तें पूरी होने पर sevasindhu.karnataka.gov.in पर आवेदन करें",
                ],
            ],
        ],
    );
    check(
        "rule_ka_oap_001",
        json!({"identity": {"age": 65}, "demographics": {"state": "karnataka"}}),
        no_fact,
        [
            [
                &[],
                &[
                    "Tell us whether your household is on the Below Poverty Line (BPL) list",
                    "Tell us whether your Aadhaar card is verified, or else your voter ID",
                    "Tell us which government schemes you already receive",
                    "Tell us whether anyone in your household has a government job or has retired from one",
                    "When you meet these conditions, apply at sevasindhu.karnataka.gov.in",
                ],
            ],
            [
                &[],
                &[
                    "बताएँ कि क्या आपका परिवार गरीबी रेखा से नीचे (BPL) की सूची में है",
                    "हमें बताएँ कि क्या इनमें से कोई एक आपके पास सत्यापित है: आधार कार्ड या मतदाता पहचान पत्र",
                    "बताएँ कि आपको पहले से कौन-सी सरकारी योजनाएँ मिल रही हैं",
                    "बताएँ कि क्या आपके परिवार में कोई सरकारी नौकरी में है या सरकारी नौकरी से सेवानिवृत्त हुआ है",
                    "ये शर्तें पूरी होने पर sevasindhu.karnataka.gov.in पर आवेदन करें",
                ],
            ],
        ],
    );
    check(
        "rule_central_ignwps_001",
        json!({"identity": {"age": 65, "gender": "female", "marital_status": "widowed",
                            "verified_documents": []},
               "economic": {"bpl_status": true}, "eligibility": {"active_schemes": []}}),
        no_fact,
        [
            [
                &[],
                &[
                    "Get your death certificate of your husband or wife verified",
                    "When you meet these conditions, apply at nsap.nic.in",
                ],
            ],
            [
                &[],
                &[
                    "यह दस्तावेज़ सत्यापित करवाएँ: पति या पत्नी का मृत्यु प्रमाण पत्र",
                    "ये शर्तें पूरी होने पर nsap.nic.in पर आवेदन करें",
                ],
            ],
        ],
    );
    check(
        "rule_pb_oap_002",
        json!({"identity": {"age": 62, "gender": "female"}, "demographics": {"state": "punjab"},
               "economic": {"monthly_income": 8000, "irrigated_land_acres": 1,
                            "unirrigated_land_acres": 1, "receives_government_pension": false}}),
        no_fact,
        [
            [
                &[],
                &[
                    "This scheme is not for you: Your own monthly income (₹8,000) is ₹3,000 above the limit of ₹5,000",
                ],
            ],
            [
                &[],
                &[
                    "यह योजना आपके लिए नहीं है: आपकी अपनी मासिक आय: ₹8,000; यह अधिकतम सीमा ₹5,000 से ₹3,000 अधिक है",
                ],
            ],
        ],
    );
}

/// Every exclusion operator of the corpus, said as the fact that bars the citizen (the
/// exclusion's own sentence is also the why-not step).
#[test]
fn exclusions_of_every_operator() {
    // not_contains: a scheme the citizen already receives, by name.
    let sandhya = [
        "You already receive Sandhya Suraksha Yojana, so this scheme is not for you",
        "आपको पहले से संध्या सुरक्षा योजना का लाभ मिल रहा है, इसलिए यह योजना आपके लिए नहीं है",
    ];
    check(
        "rule_ka_oap_001",
        karnataka(68, json!(["aadhaar"]), json!(["sch_ka_sandhya_suraksha"])),
        exclusion,
        [
            [&[sandhya[0]], &[sandhya[0]]],
            [&[sandhya[1]], &[sandhya[1]]],
        ],
    );
    // eq false on a yes/no fact: the fact's own clause.
    let spouse = [
        "Your husband or wife paid income tax last year, so this scheme is not for you",
        "आपके पति या पत्नी ने पिछले वर्ष आयकर भरा था, इसलिए यह योजना आपके लिए नहीं है",
    ];
    check(
        "rule_central_pm_kisan_002",
        json!({"identity": {"verified_documents": ["land_record", "aadhaar"]},
               "economic": {"land_holding": 1.5, "has_bank_account": true, "pays_income_tax": false,
                            "in_government_service": false, "receives_government_pension": false},
               "spouse": {"pays_income_tax": true, "in_government_service": false,
                          "receives_government_pension": false}}),
        exclusion,
        [[&[spouse[0]], &[spouse[0]]], [&[spouse[1]], &[spouse[1]]]],
    );
    // lte and lt on money, lt on acres: the value beside what the scheme needs.
    let en = [
        "Your highest monthly income of any household member is ₹20,000, but the scheme needs at most ₹15,000, so this scheme is not for you",
        "Your Kisan Credit Card limit is ₹60,000, but the scheme needs less than ₹50,000, so this scheme is not for you",
        "Your irrigated (wet) land is 3 acres, but the scheme needs less than 2.50 acres, so this scheme is not for you",
    ];
    let hi = [
        "आपके परिवार के किसी भी सदस्य की सबसे अधिक मासिक आय: ₹20,000, लेकिन इस योजना के लिए आवश्यक है: अधिकतम ₹15,000, इसलिए यह योजना आपके लिए नहीं है",
        "आपके परिवार के किसान क्रेडिट कार्ड की सीमा: ₹60,000, लेकिन इस योजना के लिए आवश्यक है: ₹50,000 से कम, इसलिए यह योजना आपके लिए नहीं है",
        "आपकी सिंचित भूमि: 3 एकड़, लेकिन इस योजना के लिए आवश्यक है: 2.50 एकड़ से कम, इसलिए यह योजना आपके लिए नहीं है",
    ];
    check(
        "rule_central_pmay_g_002",
        json!({"household": {"highest_member_monthly_income": 20000, "kisan_credit_card_limit": 60000},
               "economic": {"irrigated_land_acres": 3}}),
        exclusion,
        [[&en, &en[..1]], [&hi, &hi[..1]]],
    );
    // lte on a count.
    let order = [
        "Your child's birth order is 3, but the scheme needs at most 2, so this scheme is not for you",
        "आपके बच्चे का जन्म क्रम: 3, लेकिन इस योजना के लिए आवश्यक है: अधिकतम 2, इसलिए यह योजना आपके लिए नहीं है",
    ];
    check(
        "rule_central_pmmvy_003",
        json!({"maternity": {"child_birth_order": 3}}),
        exclusion,
        [[&[order[0]], &[order[0]]], [&[order[1]], &[order[1]]]],
    );
}

/// Every benefit kind: money paid per month, per year or once, a scholarship, an insurance
/// cover and a loan limit (never as money paid), a contributory pension's slabs, and benefits
/// in kind or a savings account (no amount).
#[test]
fn benefits_of_every_kind() {
    let benefits = |rule_id: &str, citizen: Json| said(rule_id, citizen, benefit).map(|(f, _)| f);
    let cases: [(&str, Json, [&[&str]; 2]); 9] = [
        (
            "rule_ka_oap_001",
            karnataka(68, json!(["aadhaar"]), json!([])),
            [
                &[
                    "The benefit is a monthly pension, paid into your bank account (DBT)",
                    "The benefit amount is ₹1,200 a month, ₹14,400 a year",
                    "About the benefit: ₹1,200 a month at age 65+, ₹600 a month at ages 60-64 (includes the IGNOAPS central share)",
                ],
                &[
                    "लाभ: मासिक पेंशन; कैसे मिलेगा: सीधे बैंक खाते में (DBT)",
                    "लाभ राशि: ₹1,200 प्रति माह, ₹14,400 प्रति वर्ष",
                ],
            ],
        ),
        (
            "rule_central_pm_kisan_002",
            json!({}),
            [
                &[
                    "The benefit is income support, paid into your bank account (DBT)",
                    "The benefit amount is ₹6,000 a year",
                    "About the benefit: ₹6,000 a year per farmer family in three instalments of ₹2,000 every four months",
                ],
                &[
                    "लाभ: आय सहायता; कैसे मिलेगा: सीधे बैंक खाते में (DBT)",
                    "लाभ राशि: ₹6,000 प्रति वर्ष",
                ],
            ],
        ),
        (
            "rule_central_nfbs_002",
            json!({}),
            [
                &[
                    "The benefit is a one-time payment, paid into your bank account (DBT)",
                    "The benefit amount is ₹20,000 once",
                    "About the benefit: One-time ₹20,000 to the bereaved household (for a death on or after 18 October 2012)",
                ],
                &[
                    "लाभ: एकमुश्त सहायता; कैसे मिलेगा: सीधे बैंक खाते में (DBT)",
                    "लाभ राशि: ₹20,000 एक बार",
                ],
            ],
        ),
        (
            "rule_wb_kanyashree_k1_001",
            json!({}),
            [
                &[
                    "The benefit is a scholarship, paid into your bank account (DBT)",
                    "The benefit amount is ₹1,000 a year",
                    "About the benefit: ₹1,000 a year while she stays unmarried and in education",
                ],
                &[
                    "लाभ: छात्रवृत्ति; कैसे मिलेगा: सीधे बैंक खाते में (DBT)",
                    "लाभ राशि: ₹1,000 प्रति वर्ष",
                ],
            ],
        ),
        (
            "rule_central_pmjjby_003",
            json!({}),
            [
                &[
                    "The benefit is life insurance, paid to your nominee on a claim",
                    "Insurance cover of up to ₹2,00,000",
                    "About the benefit: ₹2 lakh life cover for death from any cause, for a premium of ₹436 a year auto-debited from the account; cover renewable up to age 55",
                ],
                &[
                    "लाभ: जीवन बीमा; कैसे मिलेगा: नामित व्यक्ति को दावे पर",
                    "₹2,00,000 तक का बीमा कवर",
                ],
            ],
        ),
        (
            "rule_central_stand_up_india_001",
            json!({}),
            [
                &[
                    "The benefit is a bank loan",
                    "A loan of up to ₹1,00,00,000",
                    "About the benefit: Composite bank loan between ₹10 lakh and ₹1 crore for a greenfield enterprise in manufacturing, services, trading or agri-allied activity; borrower margin up to 15%",
                ],
                &["लाभ: बैंक ऋण", "₹1,00,00,000 तक का ऋण"],
            ],
        ),
        (
            "rule_central_apy_003",
            json!({}),
            [
                &[
                    "The benefit is a contributory pension, paid into your bank account (DBT)",
                    "A pension of ₹1,000 to ₹5,000 a month, depending on your contribution",
                    "About the benefit: Guaranteed pension of ₹1,000, 2,000, 3,000, 4,000 or ₹5,000 a month from age 60, depending on the chosen contribution; same pension to the spouse, then the corpus to the nominee",
                ],
                &[
                    "लाभ: अंशदायी पेंशन; कैसे मिलेगा: सीधे बैंक खाते में (DBT)",
                    "आपके अंशदान (जमा राशि) के अनुसार ₹1,000 से ₹5,000 प्रति माह की पेंशन",
                ],
            ],
        ),
        (
            "rule_central_nfsa_pmgkay_001",
            json!({}),
            [
                &[
                    "The benefit is free food grain, given at the ration (fair price) shop",
                    "About the benefit: Free food grain: 5 kg per person a month for Priority Households; 35 kg per household a month for Antyodaya households",
                ],
                &["लाभ: मुफ़्त खाद्यान्न; कैसे मिलेगा: उचित मूल्य की दुकान से"],
            ],
        ),
        (
            "rule_central_ssy_001",
            json!({}),
            [
                &[
                    "The benefit is a small savings account, held in a bank or post office account",
                    "About the benefit: Tax-free savings account for the girl: deposits ₹250 to ₹1.5 lakh a year for 15 years, government-notified interest (8.2% a year in recent quarters), matures at 21 years; partial withdrawal at 18 for education",
                ],
                &["लाभ: लघु बचत खाता; कैसे मिलेगा: बैंक या डाकघर खाते में"],
            ],
        ),
    ];
    for (rule_id, citizen, [en, hi]) in cases {
        let [got_en, got_hi] = benefits(rule_id, citizen);
        assert_eq!(got_en, en, "{rule_id}");
        assert_eq!(got_hi, hi, "{rule_id}");
    }
}
