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
    // The evaluator seeds the fresh database with the bundled corpus; no profile is sent, and
    // its group starts at the inputs' ends (rule versions other tests publish are not read).
    let f = Fleet::start("e2e_web", &fleet::topics::EVALUATOR_INPUTS, &[]).await;
    let port = free_port();
    let api = Worker::start_api(
        &f.stack,
        &f.database_url,
        port,
        "a-development-secret-of-32-bytes-or-more",
        &[("ELIGIBILITY_WEB_DESK_DEVELOPMENT", "true")],
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
    // Switching language mid-screening keeps the answers and the question.
    let switched = &report["switched"];
    for (way, lang) in [("to", "hi"), ("back", "en")] {
        assert_eq!(switched[way]["lang"], lang, "{switched}");
        assert_eq!(switched[way]["asked"], switched["asked"], "{switched}");
        assert_eq!(switched[way]["age"], "67", "{switched}");
        assert_eq!(switched[way]["error"], Value::Null, "{switched}");
    }
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
    assert!(audits.len() >= 8, "every kind of page audited: {audits:?}");
    no_serious_violations(audits);

    // Script off: the screener still asks, skips and answers (the print button, which needs
    // script, stays hidden).
    let no_script = &report["noScript"];
    assert!(no_script["asked"].is_string(), "{no_script}");
    assert_ne!(
        no_script["next"], no_script["asked"],
        "a skipped question is not asked again"
    );
    assert_eq!(
        no_script["groups"],
        serde_json::json!(["eligible", "could", "almost", "not"]),
        "{no_script}"
    );
    assert_eq!(no_script["printHidden"], true);

    // The desk's development sign-in (this API checks tokens with the development secret).
    let dev = &report["devDesk"];
    assert_eq!(dev["at"], "/desk/sign-in", "{dev}");
    assert!(
        dev["signedInAs"]
            .as_str()
            .unwrap()
            .contains("desk-dev (states: karnataka, tamil_nadu)"),
        "{dev}"
    );
    assert_eq!(dev["nobody"]["status"], 404, "{dev}");
    assert_eq!(
        dev["nobody"]["alert"], "No citizen with this id in your states.",
        "{dev}"
    );

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

/// Fails on any serious or critical axe-core violation of any page.
fn no_serious_violations(audits: &serde_json::Map<String, Value>) {
    for (page, violations) in audits {
        let serious: Vec<&Value> = violations
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
            .collect();
        assert!(serious.is_empty(), "{page}: {serious:?}");
    }
}

/// A real OpenID Connect provider (tools/browser/oidc.mjs) until dropped.
struct Provider(std::process::Child);

impl Provider {
    /// Starts the provider on `port` for the desk at `redirect`; its public keys go to `jwks`.
    fn start(port: u16, redirect: &str, jwks: &std::path::Path) -> Provider {
        use std::io::BufRead;
        let mut child = Command::new("node")
            .arg(repo().join("tools/browser/oidc.mjs"))
            .arg(port.to_string())
            .arg(redirect)
            .arg(jwks)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("node runs the OIDC provider");
        // Its output is read to the end on a thread of its own: a pipe closed early would
        // end the provider at its next line.
        let stdout = child.stdout.take().expect("piped");
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if line == "ready" {
                    let _ = ready_tx.send(());
                }
            }
        });
        let ready = ready_rx.recv_timeout(Duration::from_secs(30)).is_ok();
        assert!(ready, "the OIDC provider did not start");
        Provider(child)
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_caseworker_desk_signs_in_with_openid_connect_and_sees_only_its_states() {
    let f = Fleet::start("e2e_desk", &fleet::topics::EVALUATOR_INPUTS, &[]).await;
    let (ka, tn) = (unique("desk-ka-62"), unique("desk-tn-70"));
    f.send_citizens(
        &[(&ka, 62, "karnataka"), (&tn, 70, "tamil_nadu")],
        "2025-01-15",
    )
    .await;
    f.verdicts_stored(&[&ka, &tn]).await;
    let (api_port, issuer_port) = (free_port(), free_port());
    let out = repo().join("target/web-test");
    std::fs::create_dir_all(&out).unwrap();
    let jwks = out.join("oidc-jwks.json");
    let redirect = format!("http://127.0.0.1:{api_port}/desk/callback");
    let _provider = Provider::start(issuer_port, &redirect, &jwks);
    let issuer = format!("http://127.0.0.1:{issuer_port}");
    let jwks_file = jwks.display().to_string();
    let api = Worker::start_api(
        &f.stack,
        &f.database_url,
        api_port,
        "unused-when-a-jwks-file-is-set-xxxxxxxx",
        &[
            ("ELIGIBILITY_API_JWKS_FILE", jwks_file.as_str()),
            ("ELIGIBILITY_API_JWT_ISSUER", issuer.as_str()),
            ("ELIGIBILITY_WEB_OIDC_ISSUER", issuer.as_str()),
            ("ELIGIBILITY_WEB_OIDC_REDIRECT_URL", redirect.as_str()),
            ("ELIGIBILITY_WEB_OIDC_SCOPE", "openid desk"),
        ],
    );
    api.wait_ready(Duration::from_secs(60));
    let status = Command::new("node")
        .arg(repo().join("tools/browser/desk.mjs"))
        .arg(format!("http://127.0.0.1:{api_port}"))
        .arg(&out)
        .arg(&ka)
        .arg(&tn)
        .status()
        .expect("node runs");
    assert!(status.success(), "the browser run failed: {status}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("desk.json")).unwrap()).unwrap();

    // Signed in at the provider, back at the desk, the session in a cookie scripts cannot read.
    let sign_in = &report["signIn"];
    assert!(
        sign_in["atProvider"].as_str().unwrap().starts_with(&issuer),
        "{sign_in}"
    );
    assert!(
        sign_in["landed"]
            .as_str()
            .unwrap()
            .starts_with(&format!("http://127.0.0.1:{api_port}/desk")),
        "{sign_in}"
    );
    assert!(
        sign_in["signedInAs"]
            .as_str()
            .unwrap()
            .contains("desk-karnataka (states: karnataka)"),
        "{sign_in}"
    );
    let session = report["cookies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "eligibility_desk")
        .expect("the session cookie");
    assert_eq!(session["httpOnly"], true);
    assert_eq!(session["secure"], true);
    assert_eq!(session["sameSite"], "Lax");
    assert_eq!(session["path"], "/desk");

    // The Karnataka citizen's stored verdicts and history; a re-evaluation on record.
    let citizen = &report["karnataka"];
    assert_eq!(citizen["status"], 200, "{citizen}");
    let row = citizen["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["scheme"] == "/schemes/sch_ka_old_age_pension")
        .unwrap_or_else(|| panic!("the pension's row: {citizen}"));
    assert_eq!(row["cells"][1], "Eligible", "{row}");
    assert!(citizen["history"].as_u64().unwrap() >= 1, "{citizen}");
    assert!(
        report["reevaluate"]["notice"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Re-evaluation requested"),
        "{}",
        report["reevaluate"]
    );
    let requests = count(
        &f.pool,
        &format!(
            "SELECT count(*) FROM evaluation_requests WHERE user_id = '{ka}' \
             AND requested_by = 'desk-karnataka' AND role = 'caseworker'"
        ),
    )
    .await;
    assert_eq!(
        requests, 1,
        "one re-evaluation, by the caseworker: the refused posts queued none"
    );

    // Refusals: no CSRF token, a wrong one, another origin; another state's citizen and no
    // citizen alike; a citizen's account.
    assert_eq!(report["noCsrf"], 403);
    assert_eq!(report["wrongCsrf"], 403);
    assert_eq!(report["otherOrigin"], 403);
    for case in ["tamilNadu", "nobody"] {
        assert_eq!(report[case]["status"], 404, "{case}");
        assert_eq!(
            report[case]["alert"], "No citizen with this id in your states.",
            "{case}"
        );
    }
    assert_eq!(
        report["citizenAccount"]["status"], 403,
        "{}",
        report["citizenAccount"]
    );
    assert_eq!(
        report["citizenAccount"]["alert"],
        "This account is not a caseworker's."
    );
    assert_eq!(report["hindi"]["lang"], "hi");
    assert_eq!(
        report["signedOut"]["cookie"], false,
        "{}",
        report["signedOut"]
    );
    no_serious_violations(report["axe"].as_object().unwrap());
    drop(api);
}
