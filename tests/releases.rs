//! End-to-end tests of rule review on the real stack (docs/releases.md): with
//! `ELIGIBILITY_RULE_REVIEW=required`, a rule version on `policy.rules.updated` is stored as a
//! proposal and changes nothing; its author cannot approve it; a second person's approval takes
//! it live, and the transitions the fleet then publishes are the ones its population diff
//! counted; a rejected proposal changes nothing and stays on record.

mod support;

use std::process::Output;
use std::time::Duration;

use fleet::events::*;
use fleet::topics::*;
use serde_json::Value;
use support::*;

const AS_OF: &str = "2025-01-15";

/// One evaluator at a time: every group reads every record, so two tests' workers would each
/// store the other's citizens.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
const OAP: &str = "sch_ka_old_age_pension";

/// The Karnataka pension's next version with the age raised to `age`.
fn oap_version(version: u32, age: u32) -> String {
    std::fs::read_to_string(repo().join("schemes/karnataka/old_age_pension.yaml"))
        .unwrap()
        .replace("rule_ka_oap_001", &format!("rule_ka_oap_00{version}"))
        .replace("version: 1", &format!("version: {version}"))
        .replace(
            "operator: \"gte\", value: 60",
            &format!("operator: \"gte\", value: {age}"),
        )
}

fn cli(stack: &Stack, database_url: &str, args: &[&str]) -> Output {
    stack
        .command(database_url, "unused")
        .args(args)
        .output()
        .expect("the eligibility binary runs")
}

/// What the command printed; it must succeed.
fn cli_ok(stack: &Stack, database_url: &str, args: &[&str]) -> String {
    let out = cli(stack, database_url, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

async fn proposal_of(pool: &deadpool_postgres::Pool, rule_id: &str) -> Option<(i64, String)> {
    let client = pool.get().await.unwrap();
    client
        .query_opt(
            "SELECT proposal_id, status FROM rule_proposals WHERE rule_id = $1",
            &[&rule_id],
        )
        .await
        .unwrap()
        .map(|r| (r.get(0), r.get(1)))
}

async fn versions_stored(pool: &deadpool_postgres::Pool, rule_id: &str) -> i64 {
    let client = pool.get().await.unwrap();
    client
        .query_one(
            "SELECT count(*) FROM eligibility_rules WHERE rule_id = $1",
            &[&rule_id],
        )
        .await
        .unwrap()
        .get(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_proposal_changes_nothing_until_a_second_person_approves_it() {
    let _turn = TURN.lock().await;
    // Every input (the group starts at their ends) and the outputs read.
    let mut topics = EVALUATOR_INPUTS.to_vec();
    topics.extend([
        ELIGIBILITY_LOST,
        ELIGIBILITY_NEW_MATCH,
        RULE_SIMULATION_COMPLETED,
    ]);
    let f = Fleet::start(
        "e2e_releases",
        &topics,
        &[("ELIGIBILITY_RULE_REVIEW", "required")],
    )
    .await;
    let (stack, kafka, database_url, pool, marks) =
        (&f.stack, &f.kafka, &f.database_url, &f.pool, &f.marks);

    // A is 62 (the pension's ELIGIBLE), B is 58 (PARTIAL_MATCH).
    let (a, b) = (unique("ka-62"), unique("ka-58"));
    f.send_citizens(&[(&a, 62, "karnataka"), (&b, 58, "karnataka")], AS_OF)
        .await;
    eventually(Duration::from_secs(60), "both users stored", || async {
        let n = count(pool, "SELECT count(*) FROM user_verdicts").await;
        (n == 2).then_some(())
    })
    .await;

    // Version 2 raises the age to 65: it arrives on the topic and becomes a proposal.
    let update = RulesUpdate {
        event_id: unique("rule"),
        rule_yaml: oap_version(2, 65),
        author: "policy-desk".into(),
        reason: Some("pension age raised".into()),
        as_of: Some(AS_OF.into()),
    };
    kafka.send(POLICY_RULES_UPDATED, None, OAP, &update).await;
    let (id, status) = eventually(Duration::from_secs(60), "the proposal stored", || {
        proposal_of(pool, "rule_ka_oap_002")
    })
    .await;
    assert_eq!(status, "proposed");
    assert_eq!(
        versions_stored(pool, "rule_ka_oap_002").await,
        0,
        "a proposal is not a live version"
    );
    // The fleet simulated it at once and published the diff: A (62) would lose the pension.
    let simulations: Vec<RuleSimulationCompleted> = kafka
        .read_until(
            marks,
            RULE_SIMULATION_COMPLETED,
            Duration::from_secs(60),
            |items: &[RuleSimulationCompleted]| items.iter().any(|e| e.proposal_id == id),
        )
        .await;
    let simulated = simulations.iter().find(|e| e.proposal_id == id).unwrap();
    assert_eq!(
        (
            simulated.rule_id.as_str(),
            simulated.citizens,
            simulated.gained,
            simulated.lost
        ),
        ("rule_ka_oap_002", 2, 0, 1),
        "{simulated:?}"
    );

    // Its author cannot approve it.
    let own = cli(
        stack,
        database_url,
        &[
            "rules",
            "approve",
            &id.to_string(),
            "--by",
            "policy-desk",
            "--reason",
            "looks fine",
        ],
    );
    assert_eq!(own.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&own.stderr).contains("four eyes"),
        "{}",
        String::from_utf8_lossy(&own.stderr)
    );
    assert_eq!(
        proposal_of(pool, "rule_ka_oap_002").await.unwrap().1,
        "proposed"
    );

    // A second person approves: the diff is attached, the version goes live, and the fleet
    // publishes exactly the losses the diff counted.
    let approved = cli(
        stack,
        database_url,
        &[
            "rules",
            "approve",
            &id.to_string(),
            "--by",
            "checker",
            "--reason",
            "budget approved",
        ],
    );
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    let decided: Value = serde_json::from_slice(&approved.stdout).unwrap();
    assert_eq!(
        (decided["status"].as_str(), decided["decided_by"].as_str()),
        (Some("approved"), Some("checker"))
    );
    let transitions = &decided["simulation"]["schemes"][OAP]["karnataka"]["transitions"];
    let simulated_losses: u64 = transitions
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with("ELIGIBLE->") && *k != "ELIGIBLE->ELIGIBLE")
        .map(|(_, n)| n.as_u64().unwrap())
        .sum();
    assert_eq!(simulated_losses, 1, "{transitions}");
    let lost: Vec<EligibilityLost> = kafka
        .read_until(
            marks,
            ELIGIBILITY_LOST,
            Duration::from_secs(60),
            |items: &[EligibilityLost]| items.iter().any(|e| e.user_id == a),
        )
        .await;
    let ours: Vec<_> = lost
        .iter()
        .filter(|e| (e.user_id == a || e.user_id == b) && e.scheme_id == OAP)
        .collect();
    assert_eq!(ours.len() as u64, simulated_losses, "{ours:?}");
    assert_eq!(ours[0].user_id, a);
    assert_eq!(versions_stored(pool, "rule_ka_oap_002").await, 1);

    // A proposal through the CLI, rejected by a second person: nothing changes.
    let file = std::env::temp_dir().join(format!("{}.yaml", unique("oap-v3")));
    std::fs::write(&file, oap_version(3, 70)).unwrap();
    let proposed = cli(
        stack,
        database_url,
        &[
            "rules",
            "propose",
            file.to_str().unwrap(),
            "--by",
            "alice",
            "--as-of",
            AS_OF,
        ],
    );
    assert!(
        proposed.status.success(),
        "{}",
        String::from_utf8_lossy(&proposed.stderr)
    );
    let (v3, status) = proposal_of(pool, "rule_ka_oap_003").await.expect("stored");
    assert_eq!(status, "proposed");
    let rejected = cli(
        stack,
        database_url,
        &[
            "rules",
            "reject",
            &v3.to_string(),
            "--by",
            "bob",
            "--reason",
            "not budgeted",
        ],
    );
    assert!(
        rejected.status.success(),
        "{}",
        String::from_utf8_lossy(&rejected.stderr)
    );
    assert_eq!(
        proposal_of(pool, "rule_ka_oap_003").await.unwrap().1,
        "rejected"
    );
    assert_eq!(versions_stored(pool, "rule_ka_oap_003").await, 0);
    let again = cli(
        stack,
        database_url,
        &[
            "rules",
            "approve",
            &v3.to_string(),
            "--by",
            "carol",
            "--reason",
            "changed my mind",
        ],
    );
    assert_eq!(
        again.status.code(),
        Some(1),
        "a rejected proposal stays rejected"
    );
    std::fs::remove_file(file).ok();
}

/// Audit retention: a month of the audit log exported to a file, its partition detached and
/// dropped, and every evaluation in the file re-derived afterwards; a tampered file fails.
#[tokio::test(flavor = "multi_thread")]
async fn an_exported_audit_month_verifies_from_its_file_after_its_partition_is_dropped() {
    let _turn = TURN.lock().await;
    let f = Fleet::start("e2e_retention", &EVALUATOR_INPUTS, &[]).await;
    let (stack, database_url, pool) = (&f.stack, &f.database_url, &f.pool);
    let users = [unique("ret-a"), unique("ret-b")];
    f.send_citizens(
        &[(&users[0], 62, "karnataka"), (&users[1], 58, "karnataka")],
        AS_OF,
    )
    .await;
    eventually(Duration::from_secs(60), "both passes audited", || async {
        (count(pool, "SELECT count(*) FROM evaluation_passes").await == 2).then_some(())
    })
    .await;
    let evaluations = count(
        pool,
        "SELECT count(*) FROM evaluation_audit_log WHERE as_of = '2025-01-15'",
    )
    .await;
    assert!(evaluations > 20, "{evaluations}");

    let out = std::env::temp_dir().join(unique("audit-export"));
    let exported = cli(
        stack,
        database_url,
        &[
            "audit",
            "export",
            "--before",
            "2025-02-01",
            "--out",
            out.to_str().unwrap(),
            "--detach",
        ],
    );
    assert!(
        exported.status.success(),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    let file = out.join("evaluation_passes_2025_01.jsonl");
    assert!(file.exists() && out.join("evaluation_passes_2025_01.jsonl.sha256").exists());
    assert_eq!(
        count(
            pool,
            "SELECT count(*) FROM pg_class WHERE relname = 'evaluation_passes_2025_01'"
        )
        .await,
        0,
        "the partition is dropped"
    );
    assert_eq!(
        count(
            pool,
            "SELECT count(*) FROM evaluation_audit_log WHERE as_of = '2025-01-15'"
        )
        .await,
        0
    );

    let verified = cli(
        stack,
        database_url,
        &["audit", "verify", "--export", file.to_str().unwrap()],
    );
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stderr)
    );
    let stdout = String::from_utf8_lossy(&verified.stdout);
    assert_eq!(
        stdout.matches("VERIFIED").count() as i64,
        evaluations,
        "{stdout}"
    );

    // One recorded verdict changed in the file: verification fails on it.
    let text = std::fs::read_to_string(&file).unwrap();
    let tampered = text.replacen(
        "\"verdict\":\"PARTIAL_MATCH\"",
        "\"verdict\":\"ELIGIBLE\"",
        1,
    );
    assert_ne!(tampered, text);
    std::fs::write(&file, tampered).unwrap();
    let failed = cli(
        stack,
        database_url,
        &["audit", "verify", "--export", file.to_str().unwrap()],
    );
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&failed.stdout)
            .matches("MISMATCH")
            .count(),
        1
    );
    std::fs::remove_dir_all(out).ok();
}

/// The calendar sweep: a pension version whose yearly window closes on 15 January; a citizen
/// ELIGIBLE on the 15th loses it on the 16th through `eligibility sweep` alone, with the reason
/// `window_closed`, and `--dry-run` names the scheme without publishing anything.
#[tokio::test(flavor = "multi_thread")]
async fn the_calendar_sweep_takes_a_closed_window_away_with_its_reason() {
    let _turn = TURN.lock().await;
    let mut topics = EVALUATOR_INPUTS.to_vec();
    topics.push(ELIGIBILITY_LOST);
    let f = Fleet::start("e2e_sweep", &topics, &[]).await;
    let (stack, kafka, database_url, pool, marks) =
        (&f.stack, &f.kafka, &f.database_url, &f.pool, &f.marks);
    let windowed = oap_version(2, 60).replace(
        "application:\n",
        "application_window: {opens: \"01-01\", closes: \"01-15\"}\n\napplication:\n",
    );
    let update = RulesUpdate {
        event_id: unique("windowed"),
        rule_yaml: windowed,
        author: "policy-desk".into(),
        reason: Some("applications in the first half of January".into()),
        as_of: Some(AS_OF.into()),
    };
    kafka.send(POLICY_RULES_UPDATED, None, OAP, &update).await;
    eventually(
        Duration::from_secs(60),
        "the windowed version live",
        || async { (versions_stored(pool, "rule_ka_oap_002").await == 1).then_some(()) },
    )
    .await;
    let user = unique("ka-62-window");
    f.send_citizens(&[(&user, 62, "karnataka")], AS_OF).await;
    eventually(Duration::from_secs(60), "ELIGIBLE on the 15th", || async {
        let client = pool.get().await.unwrap();
        let verdict: Option<String> = client
            .query_opt(
                "SELECT verdict FROM current_verdicts WHERE user_id = $1 AND scheme_id = $2",
                &[&user, &OAP],
            )
            .await
            .unwrap()
            .map(|r| r.get(0));
        (verdict.as_deref() == Some("ELIGIBLE")).then_some(())
    })
    .await;

    let deadline_ends = || -> Vec<i64> {
        kafka
            .marks(&[SCHEME_DEADLINE_APPROACHING])
            .elements()
            .iter()
            .map(|e| match e.offset() {
                rdkafka::Offset::Offset(o) => o,
                other => panic!("a watermark, not {other:?}"),
            })
            .collect()
    };
    let before_dry_run = deadline_ends();
    let printed = cli_ok(
        stack,
        database_url,
        &["sweep", "--as-of", "2025-01-16", "--dry-run"],
    );
    let line = printed
        .lines()
        .find(|l| l.starts_with(OAP))
        .unwrap_or_else(|| panic!("the pension is due on the 16th:\n{printed}"));
    // The window reopens on 1 January next year: the scheme's next change.
    assert!(
        line.contains("window_closed") && line.contains("2026-01-01"),
        "{line}"
    );
    assert!(
        printed.contains("nothing published (--dry-run)"),
        "{printed}"
    );
    assert_eq!(
        deadline_ends(),
        before_dry_run,
        "a dry run publishes nothing"
    );

    cli_ok(stack, database_url, &["sweep", "--as-of", "2025-01-16"]);
    let lost: Vec<EligibilityLost> = kafka
        .read_until(
            marks,
            ELIGIBILITY_LOST,
            Duration::from_secs(60),
            |items: &[EligibilityLost]| items.iter().any(|e| e.user_id == user),
        )
        .await;
    let ours: Vec<_> = lost.iter().filter(|e| e.user_id == user).collect();
    assert_eq!(ours.len(), 1, "{ours:?}");
    assert_eq!(
        (
            ours[0].scheme_id.as_str(),
            ours[0].reason.as_str(),
            ours[0].as_of.as_str()
        ),
        (OAP, "window_closed", "2025-01-16")
    );
}

/// The nightly full re-evaluation (`sweep --every-scheme`): every citizen is evaluated again
/// against every scheme in effect, on the rule-change path (the batch engine), and audited; the
/// outcomes came out the same, so nothing is written or published.
#[tokio::test(flavor = "multi_thread")]
async fn the_full_re_evaluation_audits_every_citizen_against_every_scheme_and_changes_nothing() {
    let _turn = TURN.lock().await;
    let mut topics = EVALUATOR_INPUTS.to_vec();
    topics.push(ELIGIBILITY_COMPUTED);
    let f = Fleet::start("e2e_full_sweep", &topics, &[]).await;
    let (stack, kafka, database_url, pool) = (&f.stack, &f.kafka, &f.database_url, &f.pool);
    let citizens = [
        unique("ka-62-full"),
        unique("ka-44-full"),
        unique("mh-70-full"),
    ];
    f.send_citizens(
        &[
            (&citizens[0], 62, "karnataka"),
            (&citizens[1], 44, "karnataka"),
            (&citizens[2], 70, "maharashtra"),
        ],
        AS_OF,
    )
    .await;
    let schemes_of = |user: String, table: &'static str| async move {
        let client = pool.get().await.unwrap();
        let sql = match table {
            "current" => {
                "SELECT scheme_id || ':' || verdict FROM current_verdicts WHERE user_id = $1 ORDER BY 1"
            }
            _ => {
                "SELECT DISTINCT scheme_id || ':' || verdict FROM evaluation_audit_log \
                 WHERE user_id = $1 AND as_of = '2025-01-16' ORDER BY 1"
            }
        };
        client
            .query(sql, &[&user])
            .await
            .unwrap()
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect::<Vec<String>>()
    };
    let mut before = Vec::new();
    for user in &citizens {
        let verdicts = eventually(
            Duration::from_secs(60),
            "the citizens evaluated",
            || async {
                let v = schemes_of(user.clone(), "current").await;
                (!v.is_empty()).then_some(v)
            },
        )
        .await;
        before.push(verdicts);
    }
    let computed_before = kafka.marks(&[ELIGIBILITY_COMPUTED]);

    let printed = cli_ok(
        stack,
        database_url,
        &["sweep", "--as-of", "2025-01-16", "--every-scheme"],
    );
    assert!(
        printed.contains("full re-evaluation for 2025-01-16"),
        "{printed}"
    );
    for (user, verdicts) in citizens.iter().zip(&before) {
        // Every scheme the citizen holds a verdict for, evaluated again on the 16th, with the
        // same verdict.
        eventually(
            Duration::from_secs(90),
            "every scheme audited on the 16th",
            || async { (schemes_of(user.clone(), "audit").await == *verdicts).then_some(()) },
        )
        .await;
        assert_eq!(&schemes_of(user.clone(), "current").await, verdicts);
    }
    let computed_after = kafka.marks(&[ELIGIBILITY_COMPUTED]);
    assert_eq!(
        computed_after
            .elements()
            .iter()
            .map(|e| e.offset())
            .collect::<Vec<_>>(),
        computed_before
            .elements()
            .iter()
            .map(|e| e.offset())
            .collect::<Vec<_>>(),
        "no outcome changed: no computed event"
    );
}

/// Birthdays follow the calendar: a citizen whose date of birth puts their 60th birthday on the
/// 20th gets the age-60 pension's `new_match` from that day's sweep, with no new data; citizens
/// with no birthday reaching an age a rule tests that day are not even re-evaluated.
#[tokio::test(flavor = "multi_thread")]
async fn the_sweep_on_a_60th_birthday_brings_the_pension_and_nothing_for_others() {
    let _turn = TURN.lock().await;
    let mut topics = EVALUATOR_INPUTS.to_vec();
    topics.push(ELIGIBILITY_NEW_MATCH);
    let f = Fleet::start("e2e_birthday", &topics, &[]).await;
    let (stack, kafka, database_url, pool) = (&f.stack, &f.kafka, &f.database_url, &f.pool);
    let turning = unique("ka-turning-60");
    let younger = unique("ka-44");
    let older = unique("ka-62");
    // Ages as given on the 15th; the dates of birth decide from then on.
    for (user, age, born) in [
        (&turning, 59, "1965-01-20"),
        (&younger, 44, "1980-03-01"),
        (&older, 62, "1962-06-01"),
    ] {
        let mut profile = profile_json(user, age, true, "karnataka");
        profile["identity"]["date_of_birth"] = born.into();
        kafka.send_profile(&profile, AS_OF).await;
    }
    let stored = |user: String| async move {
        let client = pool.get().await.unwrap();
        client
            .query_opt(
                "SELECT as_of::text, next_age_change::text FROM profile_current WHERE user_id = $1",
                &[&user],
            )
            .await
            .unwrap()
            .map(|r| (r.get::<_, String>(0), r.get::<_, Option<String>>(1)))
    };
    for user in [&turning, &younger, &older] {
        eventually(Duration::from_secs(60), "the citizens stored", || {
            stored(user.clone())
        })
        .await;
    }
    assert_eq!(
        stored(turning.clone()).await,
        Some((AS_OF.to_string(), Some("2025-01-20".to_string()))),
        "the 60th birthday is the next day an age limit is reached"
    );
    let verdict = |user: String| async move {
        let client = pool.get().await.unwrap();
        client
            .query_opt(
                "SELECT verdict FROM current_verdicts WHERE user_id = $1 AND scheme_id = $2",
                &[&user, &OAP],
            )
            .await
            .unwrap()
            .map(|r| r.get::<_, String>(0))
    };
    assert_eq!(
        verdict(turning.clone()).await.as_deref(),
        Some("PARTIAL_MATCH"),
        "59 on the 15th"
    );

    // The creation's events are published before its commit, so all are before these marks.
    let before_sweep = kafka.marks(&[ELIGIBILITY_NEW_MATCH]);
    let printed = cli_ok(stack, database_url, &["sweep", "--as-of", "2025-01-20"]);
    assert!(
        printed.contains("birthdays: 1 citizen(s)"),
        "only the one turning 60 is due:\n{printed}"
    );
    let matches: Vec<EligibilityNewMatch> = kafka
        .read_until(
            &before_sweep,
            ELIGIBILITY_NEW_MATCH,
            Duration::from_secs(60),
            |items: &[EligibilityNewMatch]| {
                items
                    .iter()
                    .any(|e| e.user_id == turning && e.scheme_id == OAP && e.as_of == "2025-01-20")
            },
        )
        .await;
    assert!(
        matches
            .iter()
            .all(|e| e.user_id != younger && e.user_id != older),
        "nothing for the others: {matches:?}"
    );
    eventually(Duration::from_secs(30), "ELIGIBLE on the 20th", || async {
        (verdict(turning.clone()).await.as_deref() == Some("ELIGIBLE")).then_some(())
    })
    .await;
    // Re-evaluated on the 20th and given its next age change; the others untouched.
    let (as_of, next) = stored(turning.clone()).await.unwrap();
    assert_eq!(as_of, "2025-01-20");
    assert_ne!(next.as_deref(), Some("2025-01-20"));
    for user in [&younger, &older] {
        assert_eq!(
            stored(user.clone())
                .await
                .map(|(as_of, _)| as_of)
                .as_deref(),
            Some(AS_OF),
            "{user} has no birthday reaching an age limit on the 20th"
        );
    }
}
