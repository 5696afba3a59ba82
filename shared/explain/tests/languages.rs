//! The README's Karnataka example (a 58-year-old BPL agricultural labourer, two years short of
//! the old-age pension) in English, Hindi and Kannada, word for word: the template explanation,
//! the summary and the next steps. These are the sentences a citizen reads; a change to a
//! language file that changes them must change this test too.

mod support;

use explain::{Digits, Language, facts, facts_in, next_steps, summary, template};
use support::{catalogue, evaluation, profile, rule};

fn worker_58() -> engine::Profile {
    let json = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/profiles/ka_worker_58.json"
    ))
    .expect("the README's example profile");
    profile(serde_json::from_str(&json).expect("JSON"))
}

const AS_OF: &str = "2025-01-15";

#[test]
fn the_karnataka_pension_example_in_english_hindi_and_kannada() {
    let profile = worker_58();
    let e = evaluation(rule("rule_ka_oap_001"), &profile, AS_OF);
    let said = |language| {
        (
            template(&facts(&e, catalogue(), language)),
            summary(&e, language),
            next_steps(&e, catalogue(), language),
        )
    };
    let (text, sum, steps) = said(Language::En);
    assert_eq!(text, EN_TEMPLATE);
    assert_eq!(sum, "You meet some of the conditions");
    assert_eq!(steps, EN_STEPS);

    let (text, sum, steps) = said(Language::Hi);
    assert_eq!(text, HI_TEMPLATE);
    assert_eq!(sum, HI_SUMMARY);
    assert_eq!(steps, HI_STEPS);

    let (text, sum, steps) = said(Language::Kn);
    assert_eq!(text, KN_TEMPLATE);
    assert_eq!(sum, KN_SUMMARY);
    assert_eq!(steps, KN_STEPS);

    // With Kannada digits, the same sentences.
    let native = template(&facts_in(&e, catalogue(), Language::Kn, Digits::Native));
    assert_eq!(
        native,
        Language::Kn.write_digits(KN_TEMPLATE, Digits::Native)
    );
    assert!(
        native.contains('೬') && !native.chars().any(|c| c.is_ascii_digit()),
        "{native}"
    );
}

const EN_TEMPLATE: &str = "You are not yet eligible for Karnataka Old Age Pension, but you meet some of its conditions. Your match score is 75 out of 100; you meet 3 of 4 main conditions. You are 2 years below the minimum age of 60; estimated eligibility date: 10 September 2026. The benefit is a monthly pension, paid into your bank account (DBT). The benefit amount is ₹600 a month, ₹7,200 a year. About the benefit: ₹1,200 a month at age 65+, ₹600 a month at ages 60-64 (includes the IGNOAPS central share).";
const EN_STEPS: [&str; 2] = [
    "You are 2 years below the minimum age of 60",
    "When you meet these conditions, apply at sevasindhu.karnataka.gov.in",
];
const HI_TEMPLATE: &str = "आप कर्नाटक वृद्धावस्था पेंशन के लिए अभी पात्र नहीं हैं, लेकिन इसकी कुछ शर्तें पूरी करते हैं। इस योजना से आपका मेल: 100 में से 75 अंक; आप 4 मुख्य शर्तों में से 3 पूरी करते हैं। पूरी न हुई शर्त: आपकी आयु: 58 वर्ष; आवश्यक: कम से कम 60 वर्ष; अंतर: 2 वर्ष; अनुमानित पात्रता तिथि: 10 सितंबर 2026। लाभ: मासिक पेंशन; कैसे मिलेगा: सीधे बैंक खाते में (DBT)। लाभ राशि: ₹600 प्रति माह, ₹7,200 प्रति वर्ष।";
const HI_SUMMARY: &str = "आप कुछ शर्तें पूरी करते हैं";
const HI_STEPS: [&str; 2] = [
    "आपकी आयु: 58 वर्ष; यह न्यूनतम सीमा 60 वर्ष से 2 वर्ष कम है",
    "ये शर्तें पूरी होने पर sevasindhu.karnataka.gov.in पर आवेदन करें",
];
const KN_TEMPLATE: &str = "ಕರ್ನಾಟಕ ವೃದ್ಧಾಪ್ಯ ವೇತನ: ನೀವು ಈ ಯೋಜನೆಗೆ ಇನ್ನೂ ಅರ್ಹರಾಗಿಲ್ಲ, ಆದರೆ ಅದರ ಕೆಲವು ಷರತ್ತುಗಳನ್ನು ಪೂರೈಸುತ್ತೀರಿ. ನಿಮ್ಮ ಹೊಂದಾಣಿಕೆ ಅಂಕ 100ರಲ್ಲಿ 75; ನೀವು ಪೂರೈಸುವ ಮುಖ್ಯ ಷರತ್ತುಗಳು: 4ರಲ್ಲಿ 3. ಪೂರೈಸದ ಷರತ್ತು: ನಿಮ್ಮ ವಯಸ್ಸು: 58 ವರ್ಷ; ಅಗತ್ಯ: ಕನಿಷ್ಠ 60 ವರ್ಷ; ಅಂತರ: 2 ವರ್ಷ; ಅರ್ಹತೆ ದೊರೆಯುವ ಅಂದಾಜು ದಿನಾಂಕ: 10 ಸೆಪ್ಟೆಂಬರ್ 2026. ಸೌಲಭ್ಯ: ಮಾಸಿಕ ಪಿಂಚಣಿ; ಇದನ್ನು ನೇರವಾಗಿ ಬ್ಯಾಂಕ್ ಖಾತೆಗೆ (DBT) ನೀಡಲಾಗುತ್ತದೆ. ಸೌಲಭ್ಯದ ಮೊತ್ತ: ತಿಂಗಳಿಗೆ ₹600, ವರ್ಷಕ್ಕೆ ₹7,200.";
const KN_SUMMARY: &str = "ನೀವು ಕೆಲವು ಷರತ್ತುಗಳನ್ನು ಪೂರೈಸುತ್ತೀರಿ";
const KN_STEPS: [&str; 2] = [
    "ನಿಮ್ಮ ವಯಸ್ಸು: 58 ವರ್ಷ; ಇದು 60 ವರ್ಷ ಎಂಬ ಕನಿಷ್ಠ ಮಿತಿಗಿಂತ 2 ವರ್ಷ ಕಡಿಮೆ",
    "ಈ ಷರತ್ತುಗಳನ್ನು ಪೂರೈಸಿದ ನಂತರ sevasindhu.karnataka.gov.in ಜಾಲತಾಣದಲ್ಲಿ ಅರ್ಜಿ ಸಲ್ಲಿಸಿ",
];
