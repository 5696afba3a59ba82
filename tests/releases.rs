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
const OAP: &str = "sch_ka_old_age_pension";

fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{}-{nanos}", std::process::id())
}

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
    let stack = Stack::get();
    let kafka = Kafka::new(&stack);
    let database_url = stack.fresh_database("e2e_releases").await;
    let group = unique("e2e-releases");
    // Every input (the group starts at their ends) and the outputs read.
    let mut topics = EVALUATOR_INPUTS.to_vec();
    topics.extend([ELIGIBILITY_LOST, ELIGIBILITY_NEW_MATCH]);
    let marks = kafka.marks(&topics);
    kafka.start_group_at(&database_url, &group, &marks).await;
    let pool = fleet::postgres::pool(&database_url, 2).unwrap();
    let evaluator = Worker::start_with_env(
        &stack,
        &database_url,
        &group,
        &[],
        &[("ELIGIBILITY_RULE_REVIEW", "required")],
    );
    evaluator.wait_ready(Duration::from_secs(60));

    // A is 62 (the pension's ELIGIBLE), B is 58 (PARTIAL_MATCH).
    let (a, b) = (unique("ka-62"), unique("ka-58"));
    for (user, age) in [(&a, 62), (&b, 58)] {
        let profile = profile_json(user, age, true, "karnataka");
        kafka
            .send(
                USER_METADATA_UPDATED,
                Some(partition_of(&profile)),
                user,
                &profile_update(user, &profile, AS_OF),
            )
            .await;
    }
    eventually(Duration::from_secs(60), "both users stored", || async {
        let n = count(&pool, "SELECT count(*) FROM user_verdicts").await;
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
        proposal_of(&pool, "rule_ka_oap_002")
    })
    .await;
    assert_eq!(status, "proposed");
    assert_eq!(
        versions_stored(&pool, "rule_ka_oap_002").await,
        0,
        "a proposal is not a live version"
    );

    // Its author cannot approve it.
    let own = cli(
        &stack,
        &database_url,
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
        proposal_of(&pool, "rule_ka_oap_002").await.unwrap().1,
        "proposed"
    );

    // A second person approves: the diff is attached, the version goes live, and the fleet
    // publishes exactly the losses the diff counted.
    let approved = cli(
        &stack,
        &database_url,
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
            &marks,
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
    assert_eq!(versions_stored(&pool, "rule_ka_oap_002").await, 1);

    // A proposal through the CLI, rejected by a second person: nothing changes.
    let file = std::env::temp_dir().join(format!("{}.yaml", unique("oap-v3")));
    std::fs::write(&file, oap_version(3, 70)).unwrap();
    let proposed = cli(
        &stack,
        &database_url,
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
    let (v3, status) = proposal_of(&pool, "rule_ka_oap_003").await.expect("stored");
    assert_eq!(status, "proposed");
    let rejected = cli(
        &stack,
        &database_url,
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
        proposal_of(&pool, "rule_ka_oap_003").await.unwrap().1,
        "rejected"
    );
    assert_eq!(versions_stored(&pool, "rule_ka_oap_003").await, 0);
    let again = cli(
        &stack,
        &database_url,
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
