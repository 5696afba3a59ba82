//! The explainer against the stack's real local chat model (docs/explainer-model.md), alone in
//! its test binary: no other test's workers run beside it, so everything the explainer serves
//! while it runs is this test's, and the model answers this test's requests only.

mod support;

use std::time::Duration;

use eligibility::explainer::explain::{Subject, derive_facts};
use engine::Verdict;
use explain::Language;
use fleet::events::*;
use fleet::topics::*;
use support::*;

const AS_OF: &str = "2025-01-15";
const OAP: &str = "sch_ka_old_age_pension";

/// The local chat model `scripts/stack.sh up` serves, and its name.
fn local_model() -> (String, String) {
    let base_url = std::env::var("ELIGIBILITY_STACK_LLM_BASE_URL")
        .unwrap_or_else(|_| "http://127.0.0.1:8088/v1".into());
    let model = std::env::var("ELIGIBILITY_STACK_LLM_MODEL")
        .unwrap_or_else(|_| "SmolLM2-135M-Instruct".into());
    let host = base_url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(
        std::net::TcpStream::connect(&host).is_ok(),
        "no chat model at {base_url}: start the local stack with `scripts/stack.sh up`"
    );
    (base_url, model)
}

/// One published explanation with what the test re-derives for it.
struct Checked {
    explained: EligibilityExplained,
    facts: explain::Facts,
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_a_real_model_is_served_only_where_the_oracle_holds() {
    let stack = Stack::get();
    let (base_url, model) = local_model();
    let kafka = Kafka::new(&stack);
    let database_url = stack.fresh_database("e2e_real_model").await;
    let pool = fleet::postgres::pool(&database_url, 2).unwrap();
    let topics = fleet_topics();
    let topic_refs: Vec<&str> = topics.iter().map(String::as_str).collect();
    let marks = kafka.marks(&topic_refs);
    let evaluator_group = unique("e2e-evaluator-for-model");
    let explainer_group = unique("e2e-explainer-model");
    for group in [&evaluator_group, &explainer_group] {
        kafka.start_group_at(&database_url, group, &marks).await;
    }
    let evaluator = Worker::start(&stack, &database_url, &evaluator_group, &[]);
    // A CPU model answers one request at a time, in 2–30 s: one in flight, 30 s at most. Small
    // batches (8 events, 16 explanations: about 160 s here) within a 240 s budget, so every
    // explanation is asked of the model (this test is about its answers; tests/explainer.rs
    // holds the budget) and no batch outlasts the consumer's 300 s poll interval.
    let explainer = Worker::start_explainer(
        &stack,
        &database_url,
        &explainer_group,
        &[
            ("ELIGIBILITY_LLM_BASE_URL", base_url.as_str()),
            ("ELIGIBILITY_LLM_MODEL", model.as_str()),
        ],
        &[
            "--llm-timeout-ms",
            "30000",
            "--llm-concurrency",
            "1",
            "--llm-batch-budget-ms",
            "240000",
            "--max-batch",
            "8",
        ],
    );
    evaluator.wait_ready(Duration::from_secs(60));
    explainer.wait_ready(Duration::from_secs(60));

    // One Karnataka woman of 66: eligible for the old-age pension and a new or partial match of
    // 31 schemes in all (2026-11 corpus), every one explained in English and Hindi: 62 answers
    // of the model, one at a time (about 13 minutes here). A second citizen would double that
    // and test nothing the first does not.
    let user = unique("citizen");
    let json = profile_json(&user, 66, true, "karnataka");
    kafka.send_profile(&json, AS_OF).await;
    let citizen = profile(&json);
    let ours = |id: &str| id == user;
    // What the evaluator asked to explain: every new and partial match of this citizen,
    // published together with the old-age pension's (one pass).
    kafka
        .read_until(
            &marks,
            ELIGIBILITY_NEW_MATCH,
            Duration::from_secs(90),
            |items: &[EligibilityNewMatch]| {
                items.iter().any(|e| ours(&e.user_id) && e.scheme_id == OAP)
            },
        )
        .await;
    let all = Duration::from_secs(3);
    let new: Vec<EligibilityNewMatch> = kafka
        .read_until(
            &marks,
            ELIGIBILITY_NEW_MATCH,
            all,
            |_: &[EligibilityNewMatch]| false,
        )
        .await;
    let partial: Vec<EligibilityPartialMatch> = kafka
        .read_until(
            &marks,
            ELIGIBILITY_PARTIAL_MATCH,
            all,
            |_: &[EligibilityPartialMatch]| false,
        )
        .await;
    let mut subjects: Vec<Subject> = new
        .iter()
        .filter(|e| ours(&e.user_id))
        .map(Subject::from_new_match)
        .chain(
            partial
                .iter()
                .filter(|e| ours(&e.user_id))
                .map(Subject::from_partial_match),
        )
        .collect();
    subjects.sort_by(|a, b| (&a.user_id, &a.scheme_id).cmp(&(&b.user_id, &b.scheme_id)));
    subjects.dedup_by(|a, b| a.evaluation_id == b.evaluation_id);
    assert!(
        subjects.len() >= 30,
        "{} evaluations to explain; the test needs 30",
        subjects.len()
    );
    for verdict in [Verdict::Eligible, Verdict::PartialMatch] {
        assert!(
            subjects.iter().any(|s| s.verdict == verdict),
            "no {verdict:?} among {subjects:?}"
        );
    }

    // Every one explained in both languages, one at a time, 30 s each at most. Other tests'
    // explainers (their own groups and databases) may publish for this citizen too: this
    // explainer's record is its database, and each row must have been published as stored.
    let wanted = subjects.len() * 2;
    let within = Duration::from_secs(wanted as u64 * 30 + 120);
    let ids: Vec<String> = subjects.iter().map(|s| s.evaluation_id.clone()).collect();
    let client = pool.get().await.unwrap();
    let rows = eventually(
        within,
        "every evaluation explained in en and hi",
        || async {
            let rows = client
                .query(
                    "SELECT evaluation_id::text, language, user_id, scheme_id, explanation,
                        generated_by, oracle_verdict, fallback_reason
                 FROM explanations WHERE evaluation_id::text = ANY($1)",
                    &[&ids],
                )
                .await
                .unwrap();
            (rows.len() >= wanted).then_some(rows)
        },
    )
    .await;
    assert_eq!(
        rows.len(),
        wanted,
        "every evaluation explained once in en and hi"
    );
    let published: Vec<EligibilityExplained> = kafka
        .read_until(
            &marks,
            ELIGIBILITY_EXPLAINED,
            Duration::from_secs(5),
            |_: &[EligibilityExplained]| false,
        )
        .await;
    let mut checked = Vec::new();
    for row in &rows {
        let (evaluation_id, language): (String, String) = (row.get(0), row.get(1));
        let e = published
            .iter()
            .find(|e| {
                e.evaluation_id == evaluation_id
                    && e.language == language
                    && e.explanation == row.get::<_, String>(4)
                    && e.generated_by == row.get::<_, String>(5)
                    && e.oracle_verdict == row.get::<_, String>(6)
                    && e.fallback_reason == row.get::<_, Option<String>>(7)
            })
            .unwrap_or_else(|| {
                panic!("no event published as stored for {evaluation_id}:{language}")
            })
            .clone();
        let subject = subjects
            .iter()
            .find(|s| s.evaluation_id == e.evaluation_id)
            .expect("an explanation of an evaluation asked for");
        assert!(ours(&e.user_id), "{e:?}");
        let language: Language = e.language.parse().unwrap();
        let facts = derive_facts(
            catalogue(),
            rule(&subject.rule_id),
            &citizen,
            subject,
            &[language],
        )
        .expect("the facts re-derive")
        .remove(0);
        checked.push(Checked {
            explained: e,
            facts,
        });
    }
    let mut served = std::collections::BTreeMap::<(String, &str, &str), usize>::new();
    for Checked {
        explained: e,
        facts,
    } in &checked
    {
        let report = oracle::check(&explain::oracle_case(
            &e.idempotency_key,
            facts,
            &e.explanation,
        ));
        match e.generated_by.as_str() {
            "llm" => {
                assert_eq!(report.verdict, oracle::Verdict::Pass, "{e:?}: {report:?}");
                assert!(
                    explain::unsourced_numbers(facts, &e.explanation).is_empty(),
                    "{e:?}"
                );
                assert_eq!(
                    (e.oracle_verdict.as_str(), e.fallback_reason.as_deref()),
                    ("PASS", None)
                );
            }
            "template" => {
                assert_eq!(e.explanation, explain::template(facts), "{e:?}");
                assert!(
                    matches!(
                        e.fallback_reason.as_deref(),
                        Some("oracle_failed" | "timeout" | "http_error" | "cut" | "budget")
                    ),
                    "{e:?}"
                );
            }
            other => panic!("generated_by {other}"),
        }
        let verdict = subjects
            .iter()
            .find(|s| s.evaluation_id == e.evaluation_id)
            .unwrap()
            .verdict;
        *served
            .entry((
                e.language.clone(),
                verdict.name(),
                e.fallback_reason.as_deref().unwrap_or("accepted"),
            ))
            .or_default() += 1;
    }
    // The metrics count what was served: accepted, refused (and by which rules), timed out.
    let (_, scrape) = explainer.http_get("/metrics");
    let count = |reason: &str| {
        checked
            .iter()
            .filter(|c| c.explained.fallback_reason.as_deref() == Some(reason))
            .count() as f64
    };
    let accepted = checked
        .iter()
        .filter(|c| c.explained.generated_by == "llm")
        .count() as f64;
    assert_eq!(
        value(
            &scrape,
            "eligibility_explanations_total{generated_by=\"llm\"}"
        ),
        accepted,
        "{scrape}"
    );
    assert_eq!(
        value(
            &scrape,
            "eligibility_explanations_total{generated_by=\"template\"}"
        ),
        wanted as f64 - accepted
    );
    for reason in ["oracle_failed", "timeout", "http_error", "cut", "budget"] {
        assert_eq!(
            value(
                &scrape,
                &format!("eligibility_explanation_fallbacks_total{{reason=\"{reason}\"}}")
            ),
            count(reason),
            "{reason}"
        );
    }
    let refusals: f64 = oracle::RuleId::ALL
        .iter()
        .map(|r| {
            value(
                &scrape,
                &format!(
                    "eligibility_oracle_checks_total{{rule=\"{}\",verdict=\"fail\"}}",
                    r.as_str()
                ),
            )
        })
        .sum();
    assert!(
        refusals >= count("oracle_failed"),
        "every refused answer failed a rule: {scrape}"
    );
    eprintln!(
        "real model {model}: {} evaluations, {wanted} explanations; served by (language, verdict, reason): {served:?}",
        subjects.len()
    );
    assert_eq!(explainer.terminate(), Some(0));
    assert_eq!(evaluator.terminate(), Some(0));
}
