//! The web pages in a real headless browser (docs/web.md, "Tests"): an evaluator seeds a fresh
//! database with the bundled corpus, `eligibility api serve` serves the pages, and
//! `tools/browser/pages.mjs` drives Debian's Chromium through them (scripts/stack.sh installs
//! both): the screener end to end in English, Hindi and Urdu, the explorer, the first screener
//! page by keyboard alone, an axe-core audit of every kind of page, the pages' own security
//! policy, and a screener page's weight and first paint on a throttled network. This test
//! judges the browser's report; the screenshots stay in `target/web-test/`.

mod support;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use support::*;

/// The most bytes a screener page may take on the wire (issue budget), and the latest first
/// paint on the slow 3G profile.
const PAGE_BYTES_MAX: u64 = 100 * 1024;
const FIRST_PAINT_MS_MAX: f64 = 1000.0;

#[tokio::test(flavor = "multi_thread")]
async fn the_pages_work_in_a_real_browser_in_three_languages() {
    // The evaluator seeds the fresh database with the bundled corpus; no profile is sent.
    let f = Fleet::start("e2e_web", &[], &[]).await;
    let port = free_port();
    let api = Worker::start_api(
        &f.stack,
        &f.database_url,
        port,
        "a-development-secret-of-32-bytes-or-more",
        &[],
    );
    api.wait_ready(Duration::from_secs(60));
    let out = repo().join("target/web-test");
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new("node")
        .arg(repo().join("tools/browser/pages.mjs"))
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(&out)
        .status()
        .expect("node runs (scripts/stack.sh installs the browser tools)");
    assert!(status.success(), "the browser run failed: {status}");
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("report.json")).expect("the browser wrote its report"),
    )
    .expect("a JSON report");

    // The screener: each language's pages in that language (Urdu right to left), asked until
    // no question is left, and the same answers give the same verdicts in every language.
    let screenings = &report["screenings"];
    let mut outcomes = BTreeMap::new();
    for (lang, dir) in [("en", "ltr"), ("hi", "ltr"), ("ur", "rtl")] {
        let s = &screenings[lang];
        for page in ["first", "last"] {
            assert_eq!(s[page]["lang"], lang, "{lang}: {page} page's language");
            assert_eq!(s[page]["dir"], dir, "{lang}: {page} page's direction");
        }
        assert_eq!(
            s["last"]["h1"],
            explain::Language::ALL
                .into_iter()
                .find(|l| l.code() == lang)
                .unwrap()
                .page("results_title"),
            "{lang}: the screening ends on the results"
        );
        let asked = s["asked"].as_array().unwrap().len();
        assert!(
            (4..40).contains(&asked),
            "{lang}: {asked} questions asked, of {} in the catalogue",
            catalogue().fields().len()
        );
        let groups: BTreeMap<String, Vec<String>> = s["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                let schemes = g["schemes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_string())
                    .collect();
                (g["group"].as_str().unwrap().to_string(), schemes)
            })
            .collect();
        assert_eq!(
            groups.keys().collect::<Vec<_>>(),
            ["almost", "could", "eligible", "not"],
            "{lang}: the four groups"
        );
        assert!(
            groups["eligible"].contains(&"/schemes/sch_br_vridhjan_pension".to_string()),
            "{lang}: a 67-year-old in Bihar gets the state's old-age pension: {groups:?}"
        );
        assert!(
            groups["could"].is_empty(),
            "{lang}: nothing is left to ask at the end"
        );
        assert!(
            s["last"]["bytes"].as_u64().unwrap() <= PAGE_BYTES_MAX,
            "{lang}: the results page weighs {} bytes",
            s["last"]["bytes"]
        );
        outcomes.insert(lang, (s["asked"].clone(), groups));
    }
    assert_eq!(outcomes["en"], outcomes["hi"], "English and Hindi alike");
    assert_eq!(outcomes["en"], outcomes["ur"], "English and Urdu alike");

    // The explorer: Karnataka's pensions (its own and the central ones), a scheme in words.
    let explorer = &report["explorer"];
    let listed: Vec<&str> = explorer["listed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        listed.contains(&"/schemes/sch_ka_old_age_pension"),
        "{listed:?}"
    );
    assert!(listed.contains(&"/schemes/sch_ignoaps"), "{listed:?}");
    assert!(
        !listed.iter().any(|s| s.starts_with("/schemes/sch_tn_")),
        "{listed:?}"
    );
    let headings = explorer["scheme"]["headings"].to_string();
    for heading in [
        "Who can get it",
        "What you get",
        "Documents to keep ready",
        "Sources",
        "Versions",
    ] {
        assert!(headings.contains(heading), "{heading}: {headings}");
    }
    assert!(
        explorer["scheme"]["conditions"]
            .to_string()
            .contains("Age: at least 60 years"),
        "{}",
        explorer["scheme"]["conditions"]
    );
    assert!(
        explorer["hindi"]["conditions"]
            .to_string()
            .contains("आयु: कम से कम 60 वर्ष"),
        "{}",
        explorer["hindi"]["conditions"]
    );
    assert_eq!(explorer["urdu"]["dir"], "rtl");

    // Keyboard only: the skip link first, then the form by Tab, arrows and typing.
    let keyboard = &report["keyboard"];
    assert_eq!(keyboard["first"], "skip", "{keyboard}");
    assert_eq!(keyboard["afterSkip"], "#main", "{keyboard}");
    assert_eq!(keyboard["gender"], "female", "{keyboard}");
    assert_eq!(keyboard["onNext"], "next", "{keyboard}");
    assert_eq!(keyboard["next"]["state"], "bihar", "{keyboard}");
    assert_eq!(keyboard["next"]["age"], "67", "{keyboard}");
    assert!(keyboard["next"]["asked"].is_string(), "{keyboard}");

    // Accessibility: no serious or critical violation on any kind of page.
    let audits = report["axe"].as_object().unwrap();
    assert!(audits.len() >= 7, "every kind of page audited: {audits:?}");
    for (page, violations) in audits {
        let serious: Vec<&Value> = violations
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
            .collect();
        assert!(serious.is_empty(), "{page}: {serious:?}");
    }

    // The pages load under their own policy, styled.
    assert_eq!(report["csp"]["violations"], serde_json::json!([]));
    assert_eq!(report["csp"]["headerDisplay"], "flex");

    // Budgets on the slow 3G profile.
    let budget = &report["budgets"]["slow3g"];
    let bytes = budget["bytes"].as_u64().unwrap();
    let paint = budget["firstPaintMs"].as_f64().expect("a first paint");
    assert!(bytes <= PAGE_BYTES_MAX, "{bytes} bytes");
    assert!(paint <= FIRST_PAINT_MS_MAX, "first paint at {paint} ms");
    println!(
        "screener page: {bytes} bytes, first paint {paint:.0} ms (slow 3G: 400 ms, 400 kbit/s); \
         DevTools' 2 s preset: {} ms",
        report["budgets"]["devtools_slow3g"]["firstPaintMs"]
    );
    drop(api);
}
