//! End-to-end tests of the evaluator against the real local stack (`scripts/stack.sh up`):
//! PostgreSQL, Redis, the Kafka-protocol broker and the schema registry, over the network.
//! Each test has its own database and consumer group, starts at the topics' current ends, and
//! uses user ids of its own; the tests take turns (one worker at a time).

mod support;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Duration;

use engine::deps::{ProfileChange, outcome_unchanged};
use engine::{Date, RuleSet};
use fleet::events::*;
use fleet::topics::*;
use support::*;

static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const AS_OF: &str = "2025-01-15";
const OAP: &str = "sch_ka_old_age_pension";

/// How many evaluations a pass over `profile` audits: every scheme in effect for a new citizen;
/// after `previous`, the schemes that read a changed field and whose conditions on it moved
/// (docs/fleet.md, "One micro-batch").
fn expected_evaluations(
    profile: &serde_json::Value,
    previous: Option<&serde_json::Value>,
) -> usize {
    let catalogue = catalogue();
    let as_of = Date::parse(AS_OF).unwrap();
    let parsed = support::profile(profile);
    let before = previous.map(|p| {
        let before = support::profile(p);
        let change = ProfileChange::new(catalogue, before.changed_fields(&parsed));
        (before, change)
    });
    let state = profile["demographics"]["state"].as_str();
    RuleSet::for_state(bundled_rules().in_effect(as_of), state)
        .into_iter()
        .filter(|r| match &before {
            None => true,
            Some((before, change)) => {
                r.fields_read().iter().any(|f| change.fields.contains(f))
                    && !outcome_unchanged(catalogue, r, before, &parsed, change, as_of)
            }
        })
        .filter(|r| engine::evaluate(catalogue, r, &parsed, as_of).is_ok())
        .count()
}

/// The Karnataka old-age pension rule as bundled (version 1), and a version 2 that lowers the
/// pension age from 60 to 55.
fn oap_version_2() -> (String, String) {
    let v1 =
        std::fs::read_to_string(repo().join("schemes/karnataka/old_age_pension.yaml")).unwrap();
    let v2 = v1
        .replace(
            "rule_id: \"rule_ka_oap_001\"",
            "rule_id: \"rule_ka_oap_002\"",
        )
        .replace("version: 1", "version: 2")
        .replace(
            "operator: \"gte\", value: 60",
            "operator: \"gte\", value: 55",
        );
    (v1, v2)
}

async fn audit_rows(pool: &deadpool_postgres::Pool, user: &str) -> i64 {
    let client = pool.get().await.unwrap();
    client
        .query_one(
            "SELECT count(*) FROM evaluation_audit_log WHERE user_id = $1",
            &[&user],
        )
        .await
        .unwrap()
        .get(0)
}

struct Setup {
    stack: Stack,
    kafka: Kafka,
    pool: deadpool_postgres::Pool,
    database_url: String,
    group: String,
    marks: rdkafka::TopicPartitionList,
}

async fn setup(name: &str) -> Setup {
    let stack = Stack::get();
    let kafka = Kafka::new(&stack);
    let database_url = stack.fresh_database(name).await;
    let group = unique(name);
    let mut topics: Vec<&str> = EVALUATOR_INPUTS.to_vec();
    let dlq: Vec<String> = EVALUATOR_INPUTS
        .iter()
        .map(|t| dead_letter_topic(t))
        .collect();
    topics.extend(dlq.iter().map(String::as_str));
    topics.extend([
        ELIGIBILITY_COMPUTED,
        ELIGIBILITY_BATCH_COMPUTED,
        ELIGIBILITY_NEW_MATCH,
        ELIGIBILITY_LOST,
        ELIGIBILITY_PARTIAL_MATCH,
        RULE_CONFLICT_DETECTED,
    ]);
    let marks = kafka.marks(&topics);
    kafka.start_group_at(&database_url, &group, &marks).await;
    let pool = fleet::postgres::pool(&database_url, 2).unwrap();
    Setup {
        stack,
        kafka,
        pool,
        database_url,
        group,
        marks,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_profile_update_yields_audit_rows_cached_verdicts_and_transition_events() {
    let _turn = TURN.lock().await;
    let s = setup("e2e_profile").await;
    let worker = Worker::start(&s.stack, &s.database_url, &s.group, &[]);
    worker.wait_ready(Duration::from_secs(60));
    let user = unique("citizen");

    // 58: PARTIAL_MATCH for the Karnataka old-age pension (age is the gap); 60: ELIGIBLE;
    // then no longer BPL: the pension is lost.
    let steps = [
        profile_json(&user, 58, true, "karnataka"),
        profile_json(&user, 60, true, "karnataka"),
        profile_json(&user, 60, false, "karnataka"),
    ];
    for profile in &steps {
        s.kafka.send_profile(profile, AS_OF).await;
    }
    let lost: Vec<EligibilityLost> = s
        .kafka
        .read_until(
            &s.marks,
            ELIGIBILITY_LOST,
            Duration::from_secs(60),
            |items: &[EligibilityLost]| items.iter().any(|e| e.user_id == user),
        )
        .await;
    let lost: Vec<_> = lost.into_iter().filter(|e| e.user_id == user).collect();
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert_eq!(lost[0].scheme_id, OAP);
    assert_eq!(lost[0].reason, "profile_changed");
    assert_eq!(lost[0].new_verdict, "PARTIAL_MATCH");

    let partial: Vec<EligibilityPartialMatch> = s
        .kafka
        .read_until(
            &s.marks,
            ELIGIBILITY_PARTIAL_MATCH,
            Duration::from_secs(10),
            |items: &[EligibilityPartialMatch]| {
                items
                    .iter()
                    .filter(|e| e.user_id == user && e.scheme_id == OAP)
                    .count()
                    >= 2
            },
        )
        .await;
    let oap_partial: Vec<_> = partial
        .iter()
        .filter(|e| e.user_id == user && e.scheme_id == OAP)
        .collect();
    assert_eq!(oap_partial.len(), 2, "first at 58, again after losing BPL");
    assert_eq!(oap_partial[0].match_score, 75);
    assert_eq!(oap_partial[0].gaps.len(), 1);
    assert_eq!(oap_partial[0].gaps[0].field, "identity.age");
    assert_eq!(oap_partial[1].gaps[0].field, "economic.bpl_status");

    let new_match: Vec<EligibilityNewMatch> = s
        .kafka
        .read_until(
            &s.marks,
            ELIGIBILITY_NEW_MATCH,
            Duration::from_secs(10),
            |items: &[EligibilityNewMatch]| {
                items
                    .iter()
                    .any(|e| e.user_id == user && e.scheme_id == OAP)
            },
        )
        .await;
    let oap_match: Vec<_> = new_match
        .iter()
        .filter(|e| e.user_id == user && e.scheme_id == OAP)
        .collect();
    assert_eq!(oap_match.len(), 1);
    // At 60 the pension's 60-64 tier applies: ₹600 a month.
    let benefit: serde_json::Value =
        serde_json::from_str(oap_match[0].benefit.as_deref().expect("a benefit")).unwrap();
    assert_eq!(benefit["monthly_inr"], 600, "{benefit}");
    assert!(benefit["tier"].is_string(), "{benefit}");
    assert_eq!(
        oap_match[0].idempotency_key,
        format!("{user}:{OAP}:v1:{}", oap_match[0].input_hash)
    );

    // The audit log has every evaluation: all schemes first, then only those reading the
    // changed field whose conditions on it moved.
    let expected = expected_evaluations(&steps[0], None)
        + expected_evaluations(&steps[1], Some(&steps[0]))
        + expected_evaluations(&steps[2], Some(&steps[1]));
    let rows = eventually(Duration::from_secs(10), "audit rows", || async {
        let n = audit_rows(&s.pool, &user).await;
        (n as usize == expected).then_some(n)
    })
    .await;
    assert!(
        rows > 20,
        "the corpus has more than 20 schemes for Karnataka"
    );

    let client = s.pool.get().await.unwrap();
    let row = client
        .query_one(
            "SELECT verdict, match_score, rule_id FROM current_verdicts WHERE user_id = $1 AND scheme_id = $2",
            &[&user, &OAP],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "PARTIAL_MATCH");
    assert_eq!(row.get::<_, i16>(1), 75);
    let snapshots: i64 = client
        .query_one(
            "SELECT count(*) FROM profile_snapshots WHERE profile->>'user_id' = $1",
            &[&user],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        snapshots, 3,
        "one content-addressed snapshot per distinct profile"
    );

    let cache = fleet::cache::Cache::connect(&s.stack.redis_url, None)
        .await
        .unwrap();
    let cached = cache
        .get(&fleet::cache::verdict_key(&user, OAP))
        .await
        .unwrap()
        .expect("the verdict is cached");
    let cached: serde_json::Value = serde_json::from_str(&cached).unwrap();
    assert_eq!(cached["verdict"], "PARTIAL_MATCH");
    assert!(
        cache
            .get(&fleet::cache::summary_key(&user))
            .await
            .unwrap()
            .is_some()
    );

    // Observability: the endpoints answer and the metrics carry the contract's names.
    assert_eq!(worker.http_get("/healthz").0, 200);
    let expected: Vec<String> = [
        "eligibility_events_consumed_total{topic=\"user.metadata.updated\"} 3",
        "eligibility_micro_batch_size_bucket",
        "eligibility_evaluation_duration_seconds_bucket{engine=\"scalar\"",
        "eligibility_store_duration_seconds_bucket{store=\"postgres\",op=\"commit_batch\"",
        "eligibility_transition_events_total{kind=\"new_match\"}",
        "eligibility_verdicts_total{verdict=\"partial_match\"}",
        "eligibility_last_progress_timestamp_seconds",
        "eligibility_consumer_lag{topic=\"user.metadata.updated\",partition=\"8\",state=\"karnataka\"}",
        "eligibility_dlq_messages_total{topic=\"user.metadata.updated\",reason=\"schema_unknown\"} 0",
        "eligibility_errors_total{kind=\"postgres\"}",
    ]
    .map(str::to_string)
    .to_vec();
    scrape_with(&worker, &expected).await;
    assert_eq!(
        worker.terminate(),
        Some(0),
        "SIGTERM stops the worker cleanly"
    );
}

/// README command 1: `eligibility demo` against a running evaluator. Each step shows what it
/// announces (the demo itself fails when a step publishes nothing of the kind), checked here
/// from its output too.
#[tokio::test(flavor = "multi_thread")]
async fn the_demo_steps_each_show_what_they_announce() {
    let _turn = TURN.lock().await;
    let s = setup("e2e_demo").await;
    let worker = Worker::start(&s.stack, &s.database_url, &s.group, &[]);
    worker.wait_ready(Duration::from_secs(60));
    let output = s
        .stack
        .command(&s.database_url, &s.group)
        .arg("demo")
        .env("ELIGIBILITY_LOG", "warn")
        .output()
        .expect("the eligibility binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let step = |title: &str| -> String {
        let start = stdout
            .find(&format!("== {title}"))
            .unwrap_or_else(|| panic!("no step {title:?}: {stdout}"));
        let rest = &stdout[start + 3..];
        rest[..rest.find("\n== ").unwrap_or(rest.len())].to_string()
    };
    let arrive = step("three citizens arrive");
    for user in ["usr_ka_0001", "usr_ka_0002", "usr_tn_0001"] {
        assert!(
            arrive.contains(&format!("batch.computed {user}")),
            "{user}: {arrive}"
        );
    }
    let birthday = step("the 58-year-old worker turns 60");
    for scheme in ["sch_ignoaps", "sch_ka_old_age_pension"] {
        assert!(
            birthday.contains(&format!("new_match      usr_ka_0002  {scheme}")),
            "{scheme}: {birthday}"
        );
    }
    let bpl = step("the senior's household leaves the BPL list");
    assert!(bpl.contains("lost           usr_ka_0001"), "{bpl}");
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_events_go_to_the_dead_letter_topic_and_the_next_one_is_processed() {
    let _turn = TURN.lock().await;
    let s = setup("e2e_dlq").await;
    let _worker = Worker::start(&s.stack, &s.database_url, &s.group, &[]);
    let user = unique("citizen");
    let garbage = b"\x07not avro at all".to_vec();
    s.kafka
        .send_raw(USER_METADATA_UPDATED, Some(8), &user, garbage.clone())
        .await;
    let mut bad = profile_json(&user, 70, true, "karnataka");
    bad["identity"]["favourite_colour"] = "blue".into();
    s.kafka
        .send(
            USER_METADATA_UPDATED,
            Some(8),
            &user,
            &profile_update(&user, &bad, AS_OF),
        )
        .await;
    // Over the size limit: dead-lettered unread, not decoded into memory.
    let oversized = vec![0u8; fleet::input::MAX_RECORD_BYTES + 1];
    s.kafka
        .send_raw(USER_METADATA_UPDATED, Some(8), &user, oversized.clone())
        .await;
    let good = profile_json(&user, 70, true, "karnataka");
    s.kafka
        .send(
            USER_METADATA_UPDATED,
            Some(8),
            &user,
            &profile_update(&user, &good, AS_OF),
        )
        .await;
    let bad_rule = RulesUpdate {
        event_id: unique("rule"),
        rule_yaml: "rule_id: r\nscheme_id: s\nversion: 1\neligibility: {field: identity.shoe_size, operator: gte, value: 9}\n".into(),
        author: "e2e".into(),
        reason: None,
        as_of: None,
    };
    s.kafka
        .send(POLICY_RULES_UPDATED, None, "s", &bad_rule)
        .await;

    let dead: Vec<DeadLetter> = s
        .kafka
        .read_until(
            &s.marks,
            &dead_letter_topic(USER_METADATA_UPDATED),
            Duration::from_secs(60),
            |items: &[DeadLetter]| items.len() >= 3,
        )
        .await;
    assert_eq!(dead.len(), 3, "{:?}", &dead[..2]);
    assert_eq!(dead[0].reason_code, "decode_failed");
    assert_eq!(dead[0].original_value.as_deref(), Some(&garbage[..]));
    assert_eq!(dead[1].reason_code, "validation_failed");
    assert!(
        dead[1].reason.contains("favourite_colour"),
        "{}",
        dead[1].reason
    );
    assert_eq!(dead[1].source_partition, 8);
    assert_eq!(dead[2].reason_code, "validation_failed");
    assert!(
        dead[2].reason.contains("bytes; at most 262144 are read"),
        "{}",
        dead[2].reason
    );
    assert_eq!(dead[2].original_value.as_deref(), Some(&oversized[..]));

    let rules_dead: Vec<DeadLetter> = s
        .kafka
        .read_until(
            &s.marks,
            &dead_letter_topic(POLICY_RULES_UPDATED),
            Duration::from_secs(30),
            |items: &[DeadLetter]| !items.is_empty(),
        )
        .await;
    assert_eq!(rules_dead.len(), 1);
    assert_eq!(rules_dead[0].reason_code, "validation_failed");
    assert!(
        rules_dead[0].reason.contains("identity.shoe_size"),
        "{}",
        rules_dead[0].reason
    );

    let expected = expected_evaluations(&good, None);
    eventually(
        Duration::from_secs(30),
        "the good record's audit rows",
        || async { (audit_rows(&s.pool, &user).await as usize == expected).then_some(()) },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_update_re_evaluates_the_users_it_covers() {
    let _turn = TURN.lock().await;
    let s = setup("e2e_rules").await;
    let worker = Worker::start(&s.stack, &s.database_url, &s.group, &[]);
    let near = unique("near");
    let far = unique("far");
    let elsewhere = unique("tn");
    let profiles = [
        profile_json(&near, 57, true, "karnataka"),
        profile_json(&far, 40, true, "karnataka"),
        profile_json(&elsewhere, 57, true, "tamil_nadu"),
    ];
    for p in &profiles {
        s.kafka.send_profile(p, AS_OF).await;
    }
    for user in [&near, &far, &elsewhere] {
        eventually(Duration::from_secs(60), "first evaluation", || async {
            (audit_rows(&s.pool, user).await > 0).then_some(())
        })
        .await;
    }

    // Version 2 lowers the pension age to 55.
    let (v1, v2) = oap_version_2();
    assert_ne!(v1, v2);
    let update = RulesUpdate {
        event_id: unique("rule"),
        rule_yaml: v2,
        author: "e2e".into(),
        reason: Some("pension age lowered".into()),
        as_of: Some(AS_OF.into()),
    };
    s.kafka.send(POLICY_RULES_UPDATED, None, OAP, &update).await;

    let matches: Vec<EligibilityNewMatch> = s
        .kafka
        .read_until(
            &s.marks,
            ELIGIBILITY_NEW_MATCH,
            Duration::from_secs(60),
            |items: &[EligibilityNewMatch]| {
                items
                    .iter()
                    .any(|e| e.user_id == near && e.scheme_id == OAP)
            },
        )
        .await;
    let m: Vec<_> = matches
        .iter()
        .filter(|e| e.user_id == near && e.scheme_id == OAP)
        .collect();
    assert_eq!(m.len(), 1);
    assert_eq!(
        (m[0].rule_id.as_str(), m[0].rule_version),
        ("rule_ka_oap_002", 2)
    );
    assert!(
        !matches
            .iter()
            .any(|e| e.scheme_id == OAP && (e.user_id == far || e.user_id == elsewhere))
    );

    // Versions 1 and 2 are both open-ended: the overlap is reported.
    let conflicts: Vec<RuleConflictDetected> = s
        .kafka
        .read_until(
            &s.marks,
            RULE_CONFLICT_DETECTED,
            Duration::from_secs(10),
            |items: &[RuleConflictDetected]| !items.is_empty(),
        )
        .await;
    assert!(
        conflicts
            .iter()
            .any(|c| c.conflict_type == "overlapping_versions"
                && c.rule_ids.contains(&"rule_ka_oap_001".to_string())
                && c.rule_ids.contains(&"rule_ka_oap_002".to_string())),
        "{conflicts:?}"
    );

    let client = s.pool.get().await.unwrap();
    let versions: i64 = client
        .query_one(
            "SELECT count(*) FROM eligibility_rules WHERE scheme_id = $1",
            &[&OAP],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(versions, 2);
    // Events are published before their page commits: wait for the commit.
    let by_user: HashSet<(String, String)> = eventually(
        Duration::from_secs(30),
        "the re-evaluated page committed",
        || async {
            let rows = s
                .pool
                .get()
                .await
                .unwrap()
                .query(
                    "SELECT user_id, verdict FROM current_verdicts WHERE scheme_id = $1 AND rule_id = 'rule_ka_oap_002'",
                    &[&OAP],
                )
                .await
                .unwrap();
            let by_user: HashSet<(String, String)> =
                rows.iter().map(|r| (r.get(0), r.get(1))).collect();
            by_user
                .iter()
                .any(|(user, _)| *user == near)
                .then_some(by_user)
        },
    )
    .await;
    assert!(by_user.contains(&(near.clone(), "ELIGIBLE".into())));
    assert!(by_user.contains(&(far.clone(), "PARTIAL_MATCH".into())));
    let tn: i64 = client
        .query_one(
            "SELECT count(*) FROM evaluation_audit_log WHERE user_id = $1 AND rule_id = 'rule_ka_oap_002'",
            &[&elsewhere],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        tn, 0,
        "a Tamil Nadu citizen is not re-evaluated for a Karnataka scheme"
    );

    // After profile updates and a rule change (re-evaluated, and cross-checked by the CPU batch
    // evaluator), every metric docs/metrics.md says the evaluator exports ("By" has E) is in the
    // scrape. The scrape is kept for scripts/check-deploy.sh (dashboards and alerts).
    let metrics = scrape_with(&worker, &contract_metrics("E")).await;
    assert!(metrics.contains("eligibility_batch_engine_evaluations_total{engine=\"cpu\"}"));
    let target = repo().join("target");
    std::fs::write(target.join("e2e-evaluator-metrics.txt"), &metrics).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_mid_stream_leaves_no_audit_row_missing_and_no_transition_unpublished() {
    killed_mid_stream("e2e_kill", 1).await;
}

/// Three evaluators share the partitions; one is killed with SIGKILL mid-stream and not
/// restarted: after the rebalance the other two finish its partitions from the offsets in
/// PostgreSQL, and nothing is lost.
#[tokio::test(flavor = "multi_thread")]
async fn one_of_three_workers_killed_mid_stream_loses_nothing_after_the_rebalance() {
    killed_mid_stream("e2e_kill3", 3).await;
}

/// Sends 600 citizens to `workers` evaluators, kills the first mid-stream (restarting it when it
/// was the only one), and checks: every evaluation audited exactly once, every ELIGIBLE pair
/// announced, and every announcement published twice carrying the same idempotency key.
async fn killed_mid_stream(name: &str, workers: usize) {
    let _turn = TURN.lock().await;
    let s = setup(name).await;
    let states = [
        "karnataka",
        "tamil_nadu",
        "bihar",
        "uttar_pradesh",
        "kerala",
        "delhi",
    ];
    let users: Vec<serde_json::Value> = (0..600)
        .map(|i| {
            let user = unique(&format!("k{i}"));
            profile_json(
                &user,
                50 + (i % 25) as i64,
                i % 3 != 0,
                states[i % states.len()],
            )
        })
        .collect();
    for p in &users {
        s.kafka.send_profile(p, AS_OF).await;
    }

    let mut running: Vec<Worker> = (0..workers)
        .map(|_| Worker::start(&s.stack, &s.database_url, &s.group, &["--max-batch", "10"]))
        .collect();
    let done_at_kill = eventually(
        Duration::from_secs(60),
        "a first committed batch",
        || async {
            let n = count(&s.pool, "SELECT count(*) FROM profile_current").await;
            (n > 0).then_some(n)
        },
    )
    .await;
    // The one that has committed a batch, so that it dies with work in hand.
    let busy = running
        .iter()
        .position(|w| {
            w.http_get("/metrics").1.lines().any(|l| {
                l.strip_prefix("eligibility_micro_batch_size_count ")
                    .is_some_and(|n| n.trim() != "0")
            })
        })
        .unwrap_or(0);
    running.remove(busy).kill();
    assert!(
        (done_at_kill as usize) < users.len(),
        "the worker was killed mid-stream ({done_at_kill} of {} users done)",
        users.len()
    );
    if running.is_empty() {
        running.push(Worker::start(
            &s.stack,
            &s.database_url,
            &s.group,
            &["--max-batch", "50"],
        ));
    }
    eventually(Duration::from_secs(120), "every user processed", || async {
        let n = count(&s.pool, "SELECT count(*) FROM profile_current").await;
        (n as usize == users.len()).then_some(())
    })
    .await;

    // Every evaluation is in the audit log exactly once.
    let expected: usize = users.iter().map(|p| expected_evaluations(p, None)).sum();
    assert_eq!(
        count(&s.pool, "SELECT count(*) FROM evaluation_audit_log").await as usize,
        expected
    );
    // Every (user, scheme) that became ELIGIBLE was announced (possibly twice, never zero).
    let wanted: BTreeSet<(String, String)> = {
        let client = s.pool.get().await.unwrap();
        client
            .query(
                "SELECT user_id, scheme_id FROM current_verdicts WHERE verdict = 'ELIGIBLE'",
                &[],
            )
            .await
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect()
    };
    assert!(!wanted.is_empty());
    let ours: HashSet<String> = users
        .iter()
        .map(|p| p["user_id"].as_str().unwrap().to_string())
        .collect();
    let announced: Vec<EligibilityNewMatch> = s
        .kafka
        .read_until(
            &s.marks,
            ELIGIBILITY_NEW_MATCH,
            Duration::from_secs(60),
            |items: &[EligibilityNewMatch]| {
                let seen: BTreeSet<(String, String)> = items
                    .iter()
                    .map(|e| (e.user_id.clone(), e.scheme_id.clone()))
                    .collect();
                wanted.is_subset(&seen)
            },
        )
        .await;
    let seen: BTreeSet<(String, String)> = announced
        .iter()
        .filter(|e| ours.contains(&e.user_id))
        .map(|e| (e.user_id.clone(), e.scheme_id.clone()))
        .collect();
    let missing: Vec<_> = wanted.difference(&seen).collect();
    assert!(missing.is_empty(), "unpublished new_match: {missing:?}");
    assert_eq!(seen, wanted, "no new_match for a pair that is not ELIGIBLE");
    // A batch repeated after the kill publishes its events again: consumers drop the repeat
    // by its idempotency key, so a pair's announcements must all carry the same one.
    let mut keys: HashMap<(String, String), BTreeSet<String>> = HashMap::new();
    for e in announced.iter().filter(|e| ours.contains(&e.user_id)) {
        keys.entry((e.user_id.clone(), e.scheme_id.clone()))
            .or_default()
            .insert(e.idempotency_key.clone());
    }
    let split: Vec<_> = keys.iter().filter(|(_, k)| k.len() > 1).collect();
    assert!(
        split.is_empty(),
        "a pair announced under two keys: {split:?}"
    );
    drop(running);
}

/// `eligibility replay` over a range of one partition; its progress and summary (stderr).
fn replay(s: &Setup, partition: i32, from: i64, to: i64) -> String {
    let output = s
        .stack
        .command(&s.database_url, &s.group)
        .args(["replay", "--topic", USER_METADATA_UPDATED])
        .args(["--partitions", &partition.to_string()])
        .args(["--from-offset", &from.to_string()])
        .args(["--to-offset", &to.to_string()])
        .env("ELIGIBILITY_LOG", "warn")
        .output()
        .expect("the eligibility binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "replay failed: {stderr}");
    stderr
}

fn end_of(kafka: &Kafka, topic: &str, partition: i32) -> i64 {
    kafka
        .marks(&[topic])
        .elements()
        .iter()
        .find(|e| e.partition() == partition)
        .and_then(|e| match e.offset() {
            rdkafka::Offset::Offset(o) => Some(o),
            _ => None,
        })
        .expect("the partition has an end")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replayed_range_is_evaluated_once_and_a_second_replay_changes_nothing() {
    let _turn = TURN.lock().await;
    // No worker runs: only the replay reads the records.
    let s = setup("e2e_replay").await;
    let user = unique("replayed");
    let steps = [
        profile_json(&user, 58, true, "karnataka"),
        profile_json(&user, 60, true, "karnataka"),
        profile_json(&user, 60, false, "karnataka"),
    ];
    let partition = partition_of(&steps[0]);
    let from = end_of(&s.kafka, USER_METADATA_UPDATED, partition);
    for profile in &steps {
        s.kafka
            .send(
                USER_METADATA_UPDATED,
                Some(partition),
                &user,
                &profile_update(&user, profile, AS_OF),
            )
            .await;
    }
    let to = end_of(&s.kafka, USER_METADATA_UPDATED, partition);
    assert_eq!(to - from, 3, "the three records were appended");
    let offsets_before = count(
        &s.pool,
        "SELECT sum(next_offset)::bigint FROM consumer_offsets",
    )
    .await;

    let first = replay(&s, partition, from, to);
    assert!(
        first.contains("3 records, 0 dead-lettered"),
        "summary: {first}"
    );
    let expected = expected_evaluations(&steps[0], None)
        + expected_evaluations(&steps[1], Some(&steps[0]))
        + expected_evaluations(&steps[2], Some(&steps[1]));
    assert_eq!(audit_rows(&s.pool, &user).await as usize, expected);
    let client = s.pool.get().await.unwrap();
    let verdict = |client: deadpool_postgres::Object| {
        let user = user.clone();
        async move {
            let row = client
                .query_one(
                    "SELECT verdict, match_score FROM current_verdicts WHERE user_id = $1 AND scheme_id = $2",
                    &[&user, &OAP],
                )
                .await
                .unwrap();
            (row.get::<_, String>(0), row.get::<_, i16>(1))
        }
    };
    assert_eq!(verdict(client).await, ("PARTIAL_MATCH".to_string(), 75));
    // ELIGIBLE at 60 with BPL, then not: the pension's `lost`, published once.
    let lost_of_user = |items: &[EligibilityLost]| {
        items
            .iter()
            .filter(|e| e.user_id == user && e.scheme_id == OAP)
            .count()
    };
    let lost: Vec<EligibilityLost> = s
        .kafka
        .read_until(
            &s.marks,
            ELIGIBILITY_LOST,
            Duration::from_secs(30),
            |items| lost_of_user(items) >= 1,
        )
        .await;
    assert_eq!(
        lost_of_user(&lost),
        1,
        "the replay published the transition"
    );

    // Again: every record is at or below the user's stored position, so nothing changes and
    // nothing is published.
    let second = replay(&s, partition, from, to);
    assert!(
        second.contains("3 records, 0 dead-lettered, 0 evaluations written, 0 events published"),
        "summary: {second}"
    );
    assert_eq!(audit_rows(&s.pool, &user).await as usize, expected);
    assert_eq!(
        verdict(s.pool.get().await.unwrap()).await,
        ("PARTIAL_MATCH".to_string(), 75)
    );
    // Events of one user share a partition, in order: a second `lost` would follow the first.
    let lost: Vec<EligibilityLost> = s
        .kafka
        .read_until(
            &s.marks,
            ELIGIBILITY_LOST,
            Duration::from_secs(10),
            |items| lost_of_user(items) >= 2,
        )
        .await;
    assert_eq!(lost_of_user(&lost), 1, "no event published twice");
    // The consumer group's offsets are neither used nor moved.
    assert_eq!(
        count(
            &s.pool,
            "SELECT sum(next_offset)::bigint FROM consumer_offsets"
        )
        .await,
        offsets_before
    );

    // Every recorded evaluation of the pension re-derives from its snapshot and rule version.
    let verified = audit_verify(&s, &user, OAP);
    assert!(verified.status.success(), "{}", verified.stderr);
    assert_eq!(
        verified.stdout.matches("VERIFIED").count(),
        3,
        "{}",
        verified.stdout
    );
    assert!(!verified.stdout.contains("MISMATCH"));
    // By evaluation id, as events carry it: the full trace comes out.
    let id = verified
        .stdout
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let by_id = s
        .stack
        .command(&s.database_url, &s.group)
        .args([
            "audit",
            "verify",
            "--evaluation-id",
            &id,
            "--format",
            "json",
        ])
        .output()
        .expect("the eligibility binary runs");
    assert!(by_id.status.success());
    let json: serde_json::Value = serde_json::from_slice(&by_id.stdout).unwrap();
    assert_eq!(json[0]["recorded"]["evaluation_id"], id.as_str());
    assert!(
        json[0]["evaluation"]["conditions_evaluated"]
            .as_array()
            .is_some_and(|c| c.len() >= 4)
    );

    // A tampered outcome: the pension's score byte in the user's last pass.
    let client = s.pool.get().await.unwrap();
    let tampered = client
        .execute(
            "UPDATE evaluation_passes p SET outcomes = set_byte(p.outcomes, t.i + 4, get_byte(p.outcomes, t.i + 4) + 1)
             FROM (SELECT p2.pass_id, i FROM evaluation_passes p2
                   CROSS JOIN generate_series(0, length(p2.outcomes) - 5, 5) AS i
                   JOIN eligibility_rules r ON r.scheme_id = $2
                        AND r.rule_key = int4_at(p2.outcomes, i)
                   WHERE p2.user_id = $1 ORDER BY p2.created_at DESC, p2.pass_id LIMIT 1) t
             WHERE p.pass_id = t.pass_id",
            &[&user, &OAP],
        )
        .await
        .unwrap();
    assert_eq!(tampered, 1);
    let after = audit_verify(&s, &user, OAP);
    assert!(
        !after.status.success(),
        "a tampered score must fail verification"
    );
    assert_eq!(
        after.stdout.matches("MISMATCH").count(),
        1,
        "{}",
        after.stdout
    );
    assert!(
        after.stdout.contains("match_score    FAIL"),
        "{}",
        after.stdout
    );

    // A tampered snapshot: its hash no longer matches.
    client
        .execute(
            "UPDATE profile_snapshots SET profile = jsonb_set(profile, '{identity,age}', '59')
             WHERE input_hash = (SELECT input_hash FROM evaluation_passes WHERE user_id = $1
                                 ORDER BY created_at LIMIT 1)",
            &[&user],
        )
        .await
        .unwrap();
    let after = audit_verify(&s, &user, OAP);
    assert!(!after.status.success());
    assert!(
        after.stdout.contains("input_hash     FAIL"),
        "{}",
        after.stdout
    );
}

struct Verified {
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
}

fn audit_verify(s: &Setup, user: &str, scheme: &str) -> Verified {
    let output = s
        .stack
        .command(&s.database_url, &s.group)
        .args(["audit", "verify", "--user", user, "--scheme", scheme])
        .output()
        .expect("the eligibility binary runs");
    Verified {
        status: output.status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The sum over `workers` of one series of their `/metrics`.
fn metric_sum(workers: &[Worker], series: &str) -> f64 {
    workers
        .iter()
        .flat_map(|w| {
            let body = w.http_get("/metrics").1;
            body.lines()
                .filter_map(|l| l.strip_prefix(series)?.trim().parse::<f64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

/// The active rules PostgreSQL holds now, parsed once for the many profiles
/// [`full_reevaluation`] is asked about.
async fn active_rules(pool: &deadpool_postgres::Pool) -> RuleSet {
    let client = pool.get().await.unwrap();
    let documents: Vec<(String, String)> = client
        .query(
            "SELECT rule_id, rule_yaml FROM eligibility_rules WHERE is_active",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    RuleSet::from_documents(catalogue(), &documents).unwrap()
}

/// What a full re-evaluation gives for `profile` with `rules` (the [`active_rules`]):
/// scheme → (rule id, verdict, score) of each scheme in effect for the profile's state.
fn full_reevaluation(
    rules: &RuleSet,
    profile: &serde_json::Value,
) -> BTreeMap<String, (String, String, i16)> {
    let catalogue = catalogue();
    let as_of = Date::parse(AS_OF).unwrap();
    let parsed = support::profile(profile);
    let state = profile["demographics"]["state"].as_str();
    RuleSet::for_state(rules.in_effect(as_of), state)
        .into_iter()
        .filter_map(|r| {
            let e = engine::evaluate(catalogue, r, &parsed, as_of).ok()?;
            let verdict = e.verdict.name().to_string();
            Some((
                r.scheme_id.clone(),
                (r.rule_id.clone(), verdict, i16::from(e.match_score)),
            ))
        })
        .collect()
}

/// The verdicts stored for `user`: scheme → (rule id, verdict, score).
async fn stored_verdicts(
    pool: &deadpool_postgres::Pool,
    user: &str,
) -> BTreeMap<String, (String, String, i16)> {
    let client = pool.get().await.unwrap();
    client
        .query(
            "SELECT scheme_id, rule_id, verdict, match_score FROM current_verdicts WHERE user_id = $1",
            &[&user],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), (r.get(1), r.get(2), r.get(3))))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_record_a_stock_producer_put_on_any_partition_is_evaluated_once_by_its_owner() {
    let _turn = TURN.lock().await;
    let s = setup("e2e_stock_producer").await;
    let workers: Vec<Worker> = (0..2)
        .map(|_| Worker::start(&s.stack, &s.database_url, &s.group, &[]))
        .collect();
    for w in &workers {
        w.wait_ready(Duration::from_secs(60));
    }
    let states = ["karnataka", "tamil_nadu", "bihar", "uttar_pradesh", "delhi"];
    let users: Vec<serde_json::Value> = (0..40)
        .map(|i| {
            let user = unique(&format!("stock{i}"));
            profile_json(
                &user,
                40 + (i % 30) as i64,
                i % 2 == 0,
                states[i % states.len()],
            )
        })
        .collect();
    // A stock producer: no partition given, so the client's default partitioner hashes the key
    // (the user id), ignoring the partition map.
    let mut misplaced = 0;
    for p in &users {
        let user = p["user_id"].as_str().unwrap();
        let landed = s
            .kafka
            .send(
                USER_METADATA_UPDATED,
                None,
                user,
                &profile_update(user, p, AS_OF),
            )
            .await;
        if landed != partition_of(p) {
            misplaced += 1;
        }
    }
    assert!(
        misplaced > 0,
        "the default partitioner agreed with the map for every user"
    );
    eventually(Duration::from_secs(90), "every user evaluated", || async {
        let n = count(&s.pool, "SELECT count(*) FROM profile_current").await;
        (n as usize == users.len()).then_some(())
    })
    .await;
    let forwarded = eventually(Duration::from_secs(15), "forwards counted", || async {
        let n = metric_sum(
            &workers,
            "eligibility_records_routed_total{kind=\"forwarded\"}",
        );
        (n as usize >= misplaced).then_some(n as usize)
    })
    .await;
    assert_eq!(forwarded, misplaced, "each misplaced record forwarded once");

    let client = s.pool.get().await.unwrap();
    for p in &users {
        let user = p["user_id"].as_str().unwrap();
        // Evaluated from its owner's partition, by one pass with every scheme in effect.
        let row = client
            .query_one(
                "SELECT source_partition, owner_partition FROM profile_current WHERE user_id = $1",
                &[&user],
            )
            .await
            .unwrap();
        let (source, owner): (i32, i32) = (row.get(0), row.get(1));
        assert_eq!(owner, partition_of(p), "{user}: the map's partition");
        assert_eq!(source, owner, "{user} evaluated from partition {source}");
        let passes: i64 = client
            .query_one(
                "SELECT count(*) FROM evaluation_passes WHERE user_id = $1",
                &[&user],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(passes, 1, "{user}: evaluated once");
        assert_eq!(
            audit_rows(&s.pool, user).await as usize,
            expected_evaluations(p, None)
        );
    }
    // One pass summary per user: no record was evaluated twice (or on two workers).
    let summaries: Vec<EligibilityBatchComputed> = s
        .kafka
        .read_until(
            &s.marks,
            ELIGIBILITY_BATCH_COMPUTED,
            Duration::from_secs(30),
            |items: &[EligibilityBatchComputed]| items.len() >= users.len(),
        )
        .await;
    let ours: HashSet<&str> = users
        .iter()
        .map(|p| p["user_id"].as_str().unwrap())
        .collect();
    let mut per_user: HashMap<&str, usize> = HashMap::new();
    for e in summaries
        .iter()
        .filter(|e| ours.contains(e.user_id.as_str()))
    {
        *per_user.entry(e.user_id.as_str()).or_default() += 1;
    }
    assert_eq!(per_user.len(), users.len(), "a summary for every user");
    assert!(per_user.values().all(|&n| n == 1), "{per_user:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_change_interleaved_with_profile_updates_never_writes_an_older_profile_or_verdict_back()
 {
    let _turn = TURN.lock().await;
    let s = setup("e2e_interleave").await;
    let workers: Vec<Worker> = (0..2)
        .map(|_| Worker::start(&s.stack, &s.database_url, &s.group, &["--max-batch", "5"]))
        .collect();
    for w in &workers {
        w.wait_ready(Duration::from_secs(60));
    }
    // Karnataka citizens around the pension age, which the rule change moves from 60 to 55.
    // Version 1 of each profile also moves income across other schemes' thresholds: a stale
    // write of the user's verdicts would leave those wrong, and nothing later corrects them.
    let users: Vec<String> = (0..300).map(|i| unique(&format!("mix{i}"))).collect();
    let version = |user: &str, step: i64| {
        let i = users.iter().position(|u| u == user).unwrap() as i64;
        let mut p = profile_json(user, 52 + (i + step) % 10, (i + step) % 2 == 0, "karnataka");
        p["economic"]["annual_income"] = (96_000 + step * (150_000 + i * 500)).into();
        p
    };
    const LAST: i64 = 1;
    for user in &users {
        let p = version(user, 0);
        s.kafka.send_profile(&p, AS_OF).await;
    }
    eventually(Duration::from_secs(60), "first evaluations", || async {
        let n = count(&s.pool, "SELECT count(*) FROM profile_current").await;
        (n as usize == users.len()).then_some(())
    })
    .await;

    // Watch profile_current while the rule change and new profiles race: a user's stored
    // position (offset on its owner partition) must never go back.
    let watching = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let watcher = {
        let pool = s.pool.clone();
        let watching = watching.clone();
        tokio::spawn(async move {
            let mut seen: HashMap<String, i64> = HashMap::new();
            let mut regressions = Vec::new();
            let mut polls = 0;
            while watching.load(std::sync::atomic::Ordering::Relaxed) {
                let client = pool.get().await.unwrap();
                for row in client
                    .query("SELECT user_id, source_offset FROM profile_current", &[])
                    .await
                    .unwrap()
                {
                    let (user, offset): (String, i64) = (row.get(0), row.get(1));
                    let last = seen.entry(user.clone()).or_insert(offset);
                    if offset < *last {
                        regressions.push((user, *last, offset));
                    }
                    *last = offset.max(*last);
                }
                polls += 1;
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            (polls, regressions)
        })
    };

    let (_, v2) = oap_version_2();
    let update = RulesUpdate {
        event_id: unique("rule"),
        rule_yaml: v2,
        author: "e2e".into(),
        reason: Some("pension age lowered".into()),
        as_of: Some(AS_OF.into()),
    };
    // The rule change first, then the next version of every profile right behind it.
    s.kafka.send(POLICY_RULES_UPDATED, None, OAP, &update).await;
    for step in 1..=LAST {
        for user in &users {
            let p = version(user, step);
            s.kafka.send_profile(&p, AS_OF).await;
        }
    }
    // Done when every user holds its last profile and the rule change's copies are committed.
    let finals: HashMap<&str, String> = users
        .iter()
        .map(|u| (u.as_str(), profile(&version(u, LAST)).input_snapshot_hash))
        .collect();
    let copies = partition_map().partitions_of_scheme("karnataka").len() as i64;
    let rule_marks: i64 = s
        .marks
        .elements()
        .iter()
        .filter(|e| e.topic() == POLICY_RULES_UPDATED)
        .filter_map(|e| match e.offset() {
            rdkafka::Offset::Offset(o) => Some(o),
            _ => None,
        })
        .sum();
    eventually(
        Duration::from_secs(90),
        "last profiles and the rule change done",
        || async {
            let client = s.pool.get().await.unwrap();
            let current: HashMap<String, String> = client
                .query("SELECT user_id, input_hash FROM profile_current", &[])
                .await
                .unwrap()
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            let rules_done: i64 = client
                .query_one(
                    "SELECT coalesce(sum(next_offset), 0)::int8 FROM consumer_offsets
                 WHERE consumer_group = $1 AND topic = $2",
                    &[&s.group, &POLICY_RULES_UPDATED],
                )
                .await
                .unwrap()
                .get(0);
            let profiles_done = finals
                .iter()
                .all(|(u, h)| current.get(*u).is_some_and(|c| c == h));
            (profiles_done && rules_done == rule_marks + 1 + copies).then_some(())
        },
    )
    .await;
    watching.store(false, std::sync::atomic::Ordering::Relaxed);
    let (polls, regressions) = watcher.await.unwrap();
    assert!(polls > 10, "profile_current was watched ({polls} polls)");
    assert!(
        regressions.is_empty(),
        "profiles written back: {regressions:?}"
    );

    // Every user's verdicts are those of its last profile under the new rule.
    let rules = active_rules(&s.pool).await;
    for user in &users {
        let expected = full_reevaluation(&rules, &version(user, LAST));
        assert_eq!(expected[OAP].0, "rule_ka_oap_002");
        assert_eq!(stored_verdicts(&s.pool, user).await, expected, "{user}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_that_lost_its_partition_cannot_commit_after_the_new_owner_took_it() {
    use fleet::leases::Leases;
    let stack = Stack::get();
    let database_url = stack.fresh_database("e2e_leases").await;
    let pool = fleet::postgres::pool(&database_url, 4).unwrap();
    fleet::postgres::migrate(&pool).await.unwrap();
    let group = unique("leases");

    // The old owner checks its lease inside a batch transaction that is still open.
    let old = Leases::take(&pool, &group, &[3, 4], "old/1").await.unwrap();
    let mut client = pool.get().await.unwrap();
    let tx = client.transaction().await.unwrap();
    old.check(&tx, &[3]).await.unwrap();

    // A rebalance gives partition 3 to a new owner: its take waits for that commit.
    let taking = tokio::spawn({
        let pool = pool.clone();
        let group = group.clone();
        async move { Leases::take(&pool, &group, &[3], "new/2").await.unwrap() }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !taking.is_finished(),
        "the take waited for the commit in flight"
    );
    tx.commit().await.unwrap();
    let new = taking.await.unwrap();

    // From now on the old owner's batches on partition 3 are refused; partition 4 is still its.
    let tx = client.transaction().await.unwrap();
    let fenced = old.check(&tx, &[3, 4]).await.unwrap_err().to_string();
    assert!(fenced.starts_with("fenced"), "{fenced}");
    assert!(fenced.contains("3 (now epoch 2, new/2)"), "{fenced}");
    assert!(!fenced.contains("4 ("), "{fenced}");
    tx.rollback().await.unwrap();
    let tx = client.transaction().await.unwrap();
    old.check(&tx, &[4]).await.unwrap();
    new.check(&tx, &[3]).await.unwrap();
    let not_held = new.check(&tx, &[5]).await.unwrap_err().to_string();
    assert!(not_held.contains("5 (no lease)"), "{not_held}");
}

#[tokio::test(flavor = "multi_thread")]
async fn workers_starting_together_on_a_new_database_seed_the_corpus_once() {
    use eligibility::rules::store::seed;
    let stack = Stack::get();
    let corpus = bundled_rules();
    // Four evaluators of a new deployment seed the same corpus at the same moment; the race
    // is a matter of timing, so it is run on several new databases.
    for round in 0..5 {
        let database_url = stack
            .fresh_database(&format!("e2e_seed_race_{round}"))
            .await;
        let pool = fleet::postgres::pool(&database_url, 8).unwrap();
        fleet::postgres::migrate(&pool).await.unwrap();
        let (a, b, c, d) = tokio::join!(
            seed(&pool, corpus),
            seed(&pool, corpus),
            seed(&pool, corpus),
            seed(&pool, corpus)
        );
        let inserted: usize = [a, b, c, d]
            .into_iter()
            .map(|r| r.expect("every seed succeeds"))
            .sum();
        assert_eq!(
            inserted,
            corpus.rules.len(),
            "every version inserted exactly once"
        );
        let stored = count(&pool, "SELECT count(*) FROM eligibility_rules").await;
        assert_eq!(stored as usize, corpus.rules.len());
    }
}

/// PostgreSQL goes away mid-stream (docs/reliability.md, "Faults"): the evaluator waits for it
/// instead of exiting — alive, reporting not ready with the reason and counting the failures —
/// and once it is back finishes the waiting record by itself, nothing lost.
/// Whether `user`'s profile is stored (`Some`), for `eventually`.
async fn stored_profile(pool: &deadpool_postgres::Pool, user: String) -> Option<()> {
    let client = pool.get().await.unwrap();
    client
        .query_opt("SELECT 1 FROM profile_current WHERE user_id = $1", &[&user])
        .await
        .unwrap()
        .map(|_| ())
}

/// During an outage of the dependency `named` (as `/readyz` names it): the worker turns not
/// ready with the reason, and over `lasting` stays alive (`/healthz` 200), not ready, and
/// counts its failures under one of `kinds` of `eligibility_errors_total`.
async fn waits_out(worker: &mut Worker, named: &str, kinds: &[&str], lasting: Duration) {
    let reason = eventually(Duration::from_secs(60), "/readyz not ready", || async {
        let (status, body) = worker.http_get("/readyz");
        (status == 503 && body.contains("waiting")).then_some(body)
    })
    .await;
    assert!(reason.contains(named), "the reason names {named}: {reason}");
    tokio::time::sleep(lasting).await;
    assert!(
        worker.child.try_wait().unwrap().is_none(),
        "the evaluator exited during the outage of {named}"
    );
    assert_eq!(worker.http_get("/healthz").0, 200, "alive while waiting");
    assert_eq!(worker.http_get("/readyz").0, 503);
    let metrics = worker.http_get("/metrics").1;
    let failures: f64 = metrics
        .lines()
        .filter(|l| {
            kinds
                .iter()
                .any(|k| l.starts_with(&format!("eligibility_errors_total{{kind=\"{k}\"}}")))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(failures > 0.0, "the failures are counted:\n{metrics}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_evaluator_waits_out_a_postgresql_outage_not_ready_and_resumes_by_itself() {
    let _turn = TURN.lock().await;
    let s = setup("e2e_outage").await;
    // The stack's PostgreSQL port, as the database URL names it (`...@127.0.0.1:PORT/db`).
    let address = s
        .database_url
        .split('@')
        .nth(1)
        .unwrap()
        .split('/')
        .next()
        .unwrap();
    let port: u16 = address.rsplit(':').next().unwrap().parse().unwrap();
    let proxy = Proxy::start(port).await;
    let through_proxy = s
        .database_url
        .replace(address, &format!("127.0.0.1:{}", proxy.port));
    assert_ne!(
        through_proxy, s.database_url,
        "the database URL goes through the proxy"
    );
    let mut worker = Worker::start(&s.stack, &through_proxy, &s.group, &[]);
    worker.wait_ready(Duration::from_secs(60));
    let stored = |user: String| stored_profile(&s.pool, user);
    let before = unique("before-outage");
    s.kafka
        .send_profile(&profile_json(&before, 62, true, "karnataka"), AS_OF)
        .await;
    eventually(Duration::from_secs(60), "the first citizen stored", || {
        stored(before.clone())
    })
    .await;

    proxy.cut();
    let during = unique("during-outage");
    s.kafka
        .send_profile(&profile_json(&during, 62, true, "karnataka"), AS_OF)
        .await;
    // Longer than the retry policy's eight tries: the worker used to give up and exit here.
    waits_out(
        &mut worker,
        "postgres",
        &["postgres", "upkeep"],
        Duration::from_secs(25),
    )
    .await;
    assert!(stored(during.clone()).await.is_none());

    proxy.restore();
    eventually(
        Duration::from_secs(60),
        "the waiting citizen stored",
        || stored(during.clone()),
    )
    .await;
    eventually(Duration::from_secs(30), "/readyz ready again", || async {
        (worker.http_get("/readyz").0 == 200).then_some(())
    })
    .await;
    assert_eq!(
        worker.terminate(),
        Some(0),
        "SIGTERM stops the worker cleanly"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_evaluator_waits_out_a_broker_outage_not_ready_and_resumes_by_itself() {
    let _turn = TURN.lock().await;
    // A broker of the test's own, every connection to it through a proxy: the stack's broker,
    // which the other tests use, stays up.
    let broker = Broker::start().await;
    let stack = Stack {
        brokers: broker.address(),
        ..Stack::get()
    };
    let kafka = Kafka::new(&stack);
    let database_url = stack.fresh_database("e2e_broker_outage").await;
    let pool = fleet::postgres::pool(&database_url, 2).unwrap();
    let stored = |user: String| stored_profile(&pool, user);
    let mut worker = Worker::start(&stack, &database_url, &unique("e2e_broker_outage"), &[]);
    worker.wait_ready(Duration::from_secs(60));
    let before = unique("before-broker-outage");
    kafka
        .send_profile(&profile_json(&before, 62, true, "karnataka"), AS_OF)
        .await;
    eventually(Duration::from_secs(60), "the first citizen stored", || {
        stored(before.clone())
    })
    .await;

    broker.proxy.cut();
    // Long enough for many failed polls: the worker used to stop at the first one.
    waits_out(
        &mut worker,
        "Kafka",
        &["kafka_consume"],
        Duration::from_secs(20),
    )
    .await;

    broker.proxy.restore();
    eventually(Duration::from_secs(90), "/readyz ready again", || async {
        (worker.http_get("/readyz").0 == 200).then_some(())
    })
    .await;
    let after = unique("after-broker-outage");
    kafka
        .send_profile(&profile_json(&after, 62, true, "karnataka"), AS_OF)
        .await;
    eventually(
        Duration::from_secs(60),
        "a citizen sent after the outage stored",
        || stored(after.clone()),
    )
    .await;
    assert_eq!(
        worker.terminate(),
        Some(0),
        "SIGTERM stops the worker cleanly"
    );
}
