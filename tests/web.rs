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
    let (api, port) = development_api(&f);
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

/// Over the client address's `public` budget a page answers 429 as a page in the reader's
/// language saying when to try again, with `Retry-After` (not the API's JSON problem).
#[tokio::test(flavor = "multi_thread")]
async fn a_page_over_the_budget_says_when_to_try_again_in_the_readers_language() {
    let stack = Stack::get();
    let database_url = stack.fresh_database("e2e_web_busy").await;
    let port = free_port();
    let api = Worker::start_api(
        &stack,
        &database_url,
        port,
        "a-development-secret-of-32-bytes-or-more",
        &[(
            "ELIGIBILITY_API_RATE_LIMITS",
            "read=100/100,check=10/10,evaluate=5/5,admin=10/10,public=2/2",
        )],
    );
    api.wait_ready(Duration::from_secs(60));
    let client = reqwest::Client::new();
    let mut statuses = Vec::new();
    let mut last = None;
    for _ in 0..3 {
        let response = client
            .get(format!("http://127.0.0.1:{port}/?lang=hi"))
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
        last = Some(response);
    }
    let response = last.unwrap();
    assert_eq!(statuses[2], 429, "{statuses:?}");
    let seconds: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"),
        "a page, not the API's problem"
    );
    let page = response.text().await.unwrap();
    let hindi = explain::Language::Hi;
    let said = explain::fill(hindi.page("busy"), &[("seconds", &seconds.to_string())]);
    assert!(page.contains(&said), "{page}");
    assert!(page.contains("lang=\"hi\""), "{page}");
    drop(api);
}

/// `eligibility api serve` over the fleet's database, its tokens checked with the development
/// secret and its development sign-in forms on, ready; and its port.
fn development_api(f: &Fleet) -> (Worker, u16) {
    let port = free_port();
    let api = Worker::start_api(
        &f.stack,
        &f.database_url,
        port,
        "a-development-secret-of-32-bytes-or-more",
        &[("ELIGIBILITY_WEB_DESK_DEVELOPMENT", "true")],
    );
    api.wait_ready(Duration::from_secs(60));
    (api, port)
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
    /// Starts the provider on `port` for the redirect URLs `redirect` (comma-separated: the
    /// desk's and the console's); its public keys go to `jwks`.
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
    let console_redirect = format!("http://127.0.0.1:{api_port}/console/callback");
    let _provider = Provider::start(
        issuer_port,
        &format!("{redirect},{console_redirect}"),
        &jwks,
    );
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
            (
                "ELIGIBILITY_WEB_OIDC_CONSOLE_REDIRECT_URL",
                console_redirect.as_str(),
            ),
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
    // The rules console signs admins in through the same provider, at its own redirect URL;
    // a caseworker's account is refused it.
    let console = &report["console"];
    assert!(
        console["landed"]
            .as_str()
            .unwrap()
            .starts_with(&format!("http://127.0.0.1:{api_port}/console")),
        "{console}"
    );
    assert!(
        console["signedInAs"]
            .as_str()
            .unwrap_or_default()
            .contains("admin-policy (administrator)"),
        "{console}"
    );
    assert_eq!(report["consoleCaseworker"]["status"], 403);
    assert_eq!(
        report["consoleCaseworker"]["alert"],
        "This account is not an administrator's."
    );
    no_serious_violations(report["axe"].as_object().unwrap());
    drop(api);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_rules_console_drafts_reviews_and_releases_a_change() {
    // Review required: a version goes live only as an approved proposal.
    let f = Fleet::start(
        "e2e_console",
        &fleet::topics::EVALUATOR_INPUTS,
        &[("ELIGIBILITY_RULE_REVIEW", "required")],
    )
    .await;
    // Twelve Karnataka citizens of 62 on the BPL list: the state's old-age pension's.
    let users: Vec<String> = (0..12).map(|i| unique(&format!("console-{i}"))).collect();
    let citizens: Vec<(&str, i64, &str)> = users
        .iter()
        .map(|u| (u.as_str(), 62, "karnataka"))
        .collect();
    f.send_citizens(&citizens, "2025-01-15").await;
    f.verdicts_stored(&users.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    let (api, port) = development_api(&f);
    let out = repo().join("target/web-test");
    std::fs::create_dir_all(&out).unwrap();
    let scheme = "sch_ka_old_age_pension";
    let status = Command::new("node")
        .arg(repo().join("tools/browser/console.mjs"))
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(&out)
        .arg(scheme)
        .status()
        .expect("node runs");
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("console.json")).unwrap_or_else(|_| "{}".into()),
    )
    .unwrap();
    assert!(
        status.success(),
        "the browser run failed: {status}; {report:#}"
    );

    // Signed in through the console's own sign-in; its session cookie scripts cannot read.
    assert_eq!(report["signIn"]["at"], "/console/sign-in", "{report:#}");
    assert!(
        report["signIn"]["signedInAs"]
            .as_str()
            .unwrap_or_default()
            .contains("console-a (administrator)"),
        "{}",
        report["signIn"]
    );
    let session = report["cookies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "eligibility_console")
        .expect("the session cookie");
    assert_eq!(session["httpOnly"], true);
    assert_eq!(session["path"], "/console");

    // Checked as it is typed, under the pages' own policy: the problem at its place without a
    // post, gone when undone.
    let live = &report["live"];
    assert!(
        live["shown"]
            .as_str()
            .unwrap_or_default()
            .contains("does not apply to `identity.age`"),
        "{live}"
    );
    assert!(
        live["status"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Problems found: 1."),
        "{live}"
    );
    assert_eq!(live["cleared"], true, "{live}");
    assert_eq!(
        live["statusAfter"], "No problems found: this draft can be proposed.",
        "{live}"
    );
    assert_eq!(live["violations"], serde_json::json!([]), "{live}");
    assert_eq!(live["url"], "/console/draft", "no post: {live}");
    // A condition's field changed so its value no longer fits: refused, shown at its place.
    let age = report["agePointer"].as_str().expect("the age condition");
    let broken = &report["broken"];
    assert_eq!(broken["status"], 422, "{broken}");
    // The problem names its place in the changed condition (its operator, which no longer
    // applies to the field), is listed, and is shown there, the input marked invalid.
    let place = broken["atPlace"][0]["id"]
        .as_str()
        .and_then(|id| id.strip_prefix("e:"))
        .unwrap_or_else(|| panic!("a problem shown at its place: {broken}"))
        .to_string();
    assert!(place.starts_with(&format!("{age}/")), "{broken}");
    assert!(
        broken["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p.as_str().unwrap().starts_with(&format!("{place} "))),
        "{broken}"
    );
    assert!(
        broken["invalid"]
            .as_array()
            .unwrap()
            .contains(&Value::from(format!("f:{place}"))),
        "{broken}"
    );
    // Fixed, and proposed.
    assert_eq!(report["fixed"]["status"], 200, "{}", report["fixed"]);
    assert_eq!(report["fixed"]["problems"], "0");
    assert_eq!(report["fixed"]["yamlHas65"], true);
    assert!(
        report["proposed"]["at"]
            .as_str()
            .unwrap()
            .starts_with("/console/proposals/"),
        "{}",
        report["proposed"]
    );

    // The impact: the change in words, and twelve citizens who lose the pension for now (a
    // partial match: their age closes the gap in time), and its money.
    let impact = &report["impact"];
    assert_eq!(impact["ready"], true, "{impact}");
    assert!(
        impact["changes"]
            .to_string()
            .contains("Age: at least 60 years → at least 65 years"),
        "{impact}"
    );
    assert!(
        impact["transitions"].as_array().unwrap().iter().any(|row| {
            row[0]
                .as_str()
                .unwrap()
                .ends_with("Eligible → Partial match")
                && row[1] == "12"
        }),
        "{impact}"
    );
    assert!(impact["svgBars"].as_u64().unwrap() >= 1, "{impact}");
    assert_eq!(
        impact["outlay"],
        serde_json::json!([["Karnataka: before", "₹7,200"], ["Karnataka: after", "₹0"]]),
        "twelve pensions of ₹600 a month (the tier for 60 to 64) before, none after"
    );

    // Four eyes: the author's approval refused, the proposal still open.
    let own = &report["ownApproval"];
    assert_eq!(own["status"], 409, "{own}");
    assert!(
        own["alert"]
            .as_str()
            .unwrap_or_default()
            .contains("four eyes"),
        "{own}"
    );
    assert_eq!(own["state"], "proposed", "{own}");
    // A second admin approved it with the keyboard alone.
    let keyboard = &report["keyboard"];
    assert_eq!(keyboard["focused"], "approve", "{keyboard}");
    assert_eq!(keyboard["state"], "approved", "{keyboard}");

    // Released by the fleet, and the re-evaluation it caused.
    assert_eq!(report["releases"]["listed"], true, "{}", report["releases"]);
    let release = &report["release"];
    assert_eq!(release["ready"], true, "{release}");
    assert!(
        release["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|row| { row[0] == "Eligible → Partial match" && row[1] == "12" }),
        "{release}"
    );
    let client = f.pool.get().await.unwrap();
    let decided = client
        .query_one(
            "SELECT author, decided_by, status FROM rule_proposals WHERE scheme_id = $1",
            &[&scheme],
        )
        .await
        .unwrap();
    assert_eq!(
        (
            decided.get::<_, String>(0),
            decided.get::<_, String>(1),
            decided.get::<_, String>(2)
        ),
        ("console-a".into(), "console-b".into(), "approved".into())
    );
    let lost = count(
        &f.pool,
        &format!(
            "SELECT count(*) FROM evaluation_audit_log WHERE scheme_id = '{scheme}' \
             AND rule_id = 'rule_ka_oap_002' AND verdict = 'PARTIAL_MATCH'"
        ),
    )
    .await;
    assert!(
        lost >= 12,
        "the new version re-evaluated the twelve: {lost}"
    );
    no_serious_violations(report["axe"].as_object().unwrap());
    assert!(report["axe"].as_object().unwrap().len() >= 5);
    drop(api);
}
