//! End-to-end tests of `eligibility api serve` against the real local stack, with an evaluator
//! that has stored real verdicts, and real signed tokens: what each role may and may not read,
//! BOLA attempts across users and states (404), responses equal to the stored verdicts, the
//! forced re-evaluation through the fleet, the anonymous check, the rules routes, and the
//! refusals: expired, forged and `alg: none` tokens, over-limit bursts (429 + Retry-After),
//! oversized and unknown-field bodies, admin routes outside the allowed networks; and each hole
//! of the API security review closed (docs/api.md, "The security review, item by item").

mod support;

use std::collections::BTreeSet;
use std::time::Duration;

use eligibility::api::auth::{Claims, Role, mint_hs256};
use fleet::topics::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::*;

const SECRET: &str = "a-development-secret-of-32-bytes-or-more";
const AS_OF: &str = "2025-01-15";
const OAP: &str = "sch_ka_old_age_pension";

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn claims(role: Role, sub: &str, states: &[&str]) -> Claims {
    Claims {
        sub: sub.into(),
        role,
        states: states.iter().map(|s| s.to_string()).collect(),
        iss: "eligibility-dev".into(),
        aud: "eligibility-api".into(),
        exp: now() + 600,
        nbf: Some(now()),
    }
}

fn token(role: Role, sub: &str, states: &[&str]) -> String {
    mint_hs256(SECRET.as_bytes(), &claims(role, sub, states)).unwrap()
}

struct Api {
    base: String,
    client: reqwest::Client,
    process: Worker,
}

impl Api {
    async fn start(stack: &Stack, database_url: &str, env: &[(&str, &str)]) -> Api {
        let port = free_port();
        let process = Worker::start_api(stack, database_url, port, SECRET, env);
        process.wait_ready(Duration::from_secs(60));
        Api {
            base: format!("http://127.0.0.1:{port}"),
            client: reqwest::Client::new(),
            process,
        }
    }

    async fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<String>,
    ) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body);
        }
        let response = request.send().await.expect("the API answers");
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap();
        let json = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, headers, json)
    }

    async fn get(&self, path: &str, token: Option<&str>) -> (StatusCode, Value) {
        let (status, _, body) = self.call("GET", path, token, None).await;
        (status, body)
    }

    async fn post(&self, path: &str, token: Option<&str>, body: &Value) -> (StatusCode, Value) {
        let (status, _, body) = self.call("POST", path, token, Some(body.to_string())).await;
        (status, body)
    }
}

/// (rule_id, verdict, score) of a user's stored verdicts, read from PostgreSQL directly.
async fn stored(pool: &deadpool_postgres::Pool, user: &str) -> BTreeSet<(String, String, u8)> {
    let client = pool.get().await.unwrap();
    let row = client
        .query_one(
            "SELECT verdicts FROM user_verdicts WHERE user_id = $1",
            &[&user],
        )
        .await
        .unwrap();
    let packed: &[u8] = row.get(0);
    let mut out = BTreeSet::new();
    for chunk in packed.chunks_exact(17) {
        let key = i32::from_be_bytes(chunk[0..4].try_into().unwrap());
        let rule_id: String = client
            .query_one(
                "SELECT rule_id FROM eligibility_rules WHERE rule_key = $1",
                &[&key],
            )
            .await
            .unwrap()
            .get(0);
        let outcome = engine::Outcome::from_code(chunk[4]);
        out.insert((rule_id, outcome.verdict.name().to_string(), outcome.score));
    }
    out
}

fn as_set(results: &Value) -> BTreeSet<(String, String, u8)> {
    results["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["rule_id"].as_str().unwrap().to_string(),
                r["verdict"].as_str().unwrap().to_string(),
                r["match_score"].as_u64().unwrap() as u8,
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_role_reads_only_what_it_may_and_the_answers_are_the_stored_verdicts() {
    // Every input: the group starts at their ends.
    let f = Fleet::start("e2e_api", &EVALUATOR_INPUTS, &[]).await;
    let (stack, kafka, database_url, pool) = (&f.stack, &f.kafka, &f.database_url, &f.pool);

    // A: 62, BPL, Karnataka (old-age pension ELIGIBLE); B: 58 in Karnataka (PARTIAL_MATCH,
    // the age gap); C: in Tamil Nadu.
    let (a, b, c) = (unique("ka-62"), unique("ka-58"), unique("tn-70"));
    f.send_citizens(
        &[
            (&a, 62, "karnataka"),
            (&b, 58, "karnataka"),
            (&c, 70, "tamil_nadu"),
        ],
        AS_OF,
    )
    .await;
    f.verdicts_stored(&[&a, &b, &c]).await;

    // Every request here comes from one address: budgets above the defaults.
    let limits = "read=6000/6000,check=60/60,evaluate=30/30,admin=60/60,public=600/600";
    let api = Api::start(
        stack,
        database_url,
        &[("ELIGIBILITY_API_RATE_LIMITS", limits)],
    )
    .await;
    let citizen_a = token(Role::Citizen, &a, &[]);
    let citizen_b = token(Role::Citizen, &b, &[]);
    let caseworker_ka = token(Role::Caseworker, "desk-ka", &["karnataka"]);
    let caseworker_tn = token(Role::Caseworker, "desk-tn", &["tamil_nadu"]);
    let auditor = token(Role::Auditor, "audit-1", &[]);
    // Budgets are shared through Redis by every API process: this test's admins are its own.
    let (author, second) = (unique("rules"), unique("rules"));
    let admin = token(Role::Admin, &author, &[]);

    // The citizen's own results are exactly the stored verdicts, then served from the cache.
    let (status, mine) = api
        .get(&format!("/api/v1/eligibility/{a}"), Some(&citizen_a))
        .await;
    assert_eq!(status, StatusCode::OK, "{mine}");
    assert_eq!(as_set(&mine), stored(pool, &a).await);
    assert!(
        mine["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["scheme_id"] == OAP && r["verdict"] == "ELIGIBLE")
    );
    let oap = mine["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["scheme_id"] == OAP)
        .unwrap();
    assert_eq!(
        oap["benefit"]["monthly_inr"], 600,
        "62 is in the Karnataka pension's 60-64 tier: {oap}"
    );
    let redis = redis::Client::open(stack.redis_url.as_str()).unwrap();
    let mut connection = redis.get_multiplexed_async_connection().await.unwrap();
    let cached: Option<String> =
        redis::AsyncCommands::get(&mut connection, format!("eligibility_results:{a}"))
            .await
            .unwrap();
    let cached = cached.expect("cached after the first read");
    let mut lines = cached.splitn(3, '\n');
    let (version, state, body) = (
        lines.next().unwrap(),
        lines.next().unwrap(),
        lines.next().unwrap(),
    );
    let current: Option<String> =
        redis::AsyncCommands::get(&mut connection, format!("eligibility_results_version:{a}"))
            .await
            .unwrap();
    assert_eq!(
        version,
        current.as_deref().unwrap_or("0"),
        "tagged with the version read before"
    );
    assert_eq!(
        (state, serde_json::from_str::<Value>(body).unwrap()),
        ("karnataka", mine.clone())
    );
    assert_eq!(
        api.get(&format!("/api/v1/eligibility/{a}"), Some(&citizen_a))
            .await
            .1,
        mine
    );

    // BOLA: another citizen, another state's caseworker and the admin get the same 404 as an
    // unknown user; the state's caseworker and the auditor read.
    let not_found = api
        .get(
            &format!("/api/v1/eligibility/{}", unique("nobody")),
            Some(&auditor),
        )
        .await;
    assert_eq!(not_found.0, StatusCode::NOT_FOUND);
    for (who, tok) in [
        ("citizen B", &citizen_b),
        ("Tamil Nadu caseworker", &caseworker_tn),
        ("admin", &admin),
    ] {
        let (status, body) = api
            .get(&format!("/api/v1/eligibility/{a}"), Some(tok))
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{who}: {body}");
        assert_eq!(
            body, not_found.1,
            "{who}: a refusal must look like an unknown user"
        );
        let (status, _) = api
            .get(&format!("/api/v1/eligibility/{a}/{OAP}"), Some(tok))
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{who}");
    }
    for (who, tok) in [
        ("Karnataka caseworker", &caseworker_ka),
        ("auditor", &auditor),
    ] {
        let (status, body) = api
            .get(&format!("/api/v1/eligibility/{a}"), Some(tok))
            .await;
        assert_eq!(
            (status, as_set(&body)),
            (StatusCode::OK, as_set(&mine)),
            "{who}"
        );
    }
    assert_eq!(
        api.get(&format!("/api/v1/eligibility/{c}"), Some(&caseworker_tn))
            .await
            .0,
        StatusCode::OK
    );
    assert_eq!(
        api.get(&format!("/api/v1/eligibility/{c}"), Some(&caseworker_ka))
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        api.get(&format!("/api/v1/eligibility/{a}"), None).await.0,
        StatusCode::UNAUTHORIZED
    );

    // One scheme in full, re-derived: conditions, and the stored verdict.
    let (status, one) = api
        .get(&format!("/api/v1/eligibility/{a}/{OAP}"), Some(&citizen_a))
        .await;
    assert_eq!(status, StatusCode::OK, "{one}");
    assert_eq!(one["verdict"], "ELIGIBLE");
    assert!(
        one["conditions_evaluated"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
    );
    assert!(one["explanations"].is_array());

    // B: the pension is a partial match with an age gap and its estimated date.
    let (status, partial) = api
        .get(
            &format!("/api/v1/eligibility/{b}/partial-matches"),
            Some(&citizen_b),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let scores: Vec<u64> = partial
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["match_score"].as_u64().unwrap())
        .collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "highest first: {scores:?}"
    );
    assert!(
        partial
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["scheme_id"] == OAP)
    );
    let (status, gaps) = api
        .get(
            &format!("/api/v1/eligibility/{b}/gaps"),
            Some(&caseworker_ka),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let age_gap = gaps
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["scheme_id"] == OAP)
        .expect("the pension's gap");
    assert_eq!(age_gap["field"], "identity.age");
    assert_eq!(age_gap["estimated_eligibility_date"], "2027-01-15");
    assert!(!age_gap["remediation"].as_array().unwrap().is_empty());

    // A re-evaluation goes through the fleet, with its requester on record; an auditor may not.
    assert_eq!(
        api.post(
            &format!("/api/v1/eligibility/{a}/evaluate"),
            Some(&auditor),
            &json!({})
        )
        .await
        .0,
        StatusCode::NOT_FOUND
    );
    let (status, queued) = api
        .post(
            &format!("/api/v1/eligibility/{a}/evaluate"),
            Some(&citizen_a),
            &json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    let requester: String = pool
        .get()
        .await
        .unwrap()
        .query_one(
            "SELECT requested_by FROM evaluation_requests WHERE event_id = $1",
            &[&queued["event_id"].as_str().unwrap()],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(requester, a);
    let today = eligibility::clock::today().to_string();
    eventually(Duration::from_secs(60), "the forced pass audited", || async {
        let client = pool.get().await.unwrap();
        let n: i64 = client
            .query_one("SELECT count(*) FROM evaluation_passes WHERE user_id = $1 AND as_of = $2::text::date", &[&a, &today])
            .await
            .unwrap()
            .get(0);
        (n > 0).then_some(())
    })
    .await;

    // The anonymous check: evaluated, nothing stored; bad bodies name the field only.
    let profile = profile_json("anonymous", 66, true, "karnataka");
    let (status, checked) = api
        .post(
            "/api/v1/eligibility/check",
            Some(&auditor),
            &json!({"profile": profile, "as_of": AS_OF}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{checked}");
    assert!(
        checked["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["scheme_id"] == OAP && r["verdict"] == "ELIGIBLE")
    );
    assert_eq!(
        count(
            pool,
            "SELECT count(*) FROM profile_current WHERE user_id = 'anonymous'"
        )
        .await,
        0
    );
    let (status, refused) = api
        .post(
            "/api/v1/eligibility/check",
            Some(&auditor),
            &json!({"profile": profile, "extra": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused["errors"][0]["pointer"], "/extra");
    let (status, refused) = api
        .post(
            "/api/v1/eligibility/check",
            Some(&auditor),
            &json!({"profile": {"identity": {"age": "Ramesh Kumar sixty"}}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused["errors"][0]["pointer"], "/profile/identity/age");
    assert!(
        !refused.to_string().contains("Ramesh"),
        "a problem never echoes user data: {refused}"
    );

    // Rules: public and redacted; versions and conflicts need a token; validate and simulate
    // are the admin's.
    let (status, rule) = api.get(&format!("/api/v1/rules/{OAP}"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rule["rule"]["scheme_id"], OAP);
    assert!(
        rule["rule"].get("last_modified_by").is_none()
            && rule["rule"]["source"].get("notes").is_none(),
        "{rule}"
    );
    assert_eq!(
        api.get(&format!("/api/v1/rules/{OAP}/versions"), None)
            .await
            .0,
        StatusCode::UNAUTHORIZED
    );
    let (status, versions) = api
        .get(&format!("/api/v1/rules/{OAP}/versions"), Some(&auditor))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(versions[0]["rule_id"], "rule_ka_oap_001");
    let (status, conflicts) = api
        .get("/api/v1/rules/conflicts", Some(&caseworker_ka))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(conflicts["conflicts"].is_array());
    let bad_rule = "rule_id: rule_x_001\nscheme_id: sch_x\n";
    let (status, _, _) = api
        .call(
            "POST",
            "/api/v1/rules/validate",
            Some(&caseworker_ka),
            Some(bad_rule.into()),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "the admin's route does not exist for others"
    );
    let (status, _, validation) = api
        .call(
            "POST",
            "/api/v1/rules/validate",
            Some(&admin),
            Some(bad_rule.into()),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(validation["valid"], false);
    assert!(
        validation["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["reason"].as_str().unwrap().contains("eligibility")),
        "{validation}"
    );
    let stricter = std::fs::read_to_string(repo().join("schemes/karnataka/old_age_pension.yaml"))
        .unwrap()
        .replace("rule_ka_oap_001", "rule_ka_oap_009")
        .replace("version: 1", "version: 9")
        .replace(
            "operator: \"gte\", value: 60",
            "operator: \"gte\", value: 65",
        );
    // A simulation is a job: queued at once (202), fetched when done.
    let (status, queued) = api
        .post(
            "/api/v1/rules/simulate",
            Some(&admin),
            &json!({"rule_yaml": stricter, "as_of": AS_OF}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    let href = queued["href"]
        .as_str()
        .expect("where to fetch it")
        .to_string();
    let simulation = eventually(Duration::from_secs(60), "the simulation done", || async {
        let (status, job) = api.get(&href, Some(&admin)).await;
        assert_eq!(status, StatusCode::OK, "{job}");
        assert_ne!(job["status"], "failed", "{job}");
        (job["status"] == "done").then(|| job["result"].clone())
    })
    .await;
    assert_eq!(simulation["changes"][0]["from_rule"], "rule_ka_oap_001");
    // Admins see counts, never ids, and no cell small enough to single a citizen out: the one
    // citizen who moves is "<10", and the money of a cell of fewer than 10 is withheld.
    let karnataka = &simulation["schemes"][OAP]["karnataka"];
    assert_eq!(
        karnataka["transitions"]["ELIGIBLE->PARTIAL_MATCH"], "<10",
        "{simulation}"
    );
    assert!(karnataka.get("affected_sample").is_none(), "{simulation}");
    assert!(!simulation.to_string().contains(&a), "{simulation}");
    assert_eq!(
        karnataka["newly_blocking_gaps"]["identity.age"], "<10",
        "{simulation}"
    );
    assert!(
        karnataka["monthly_outlay_before_inr"].is_null(),
        "{simulation}"
    );
    // The operator's command line, which reads the database itself, shows the whole diff: A
    // moves, and A's ₹600 a month (the 60-64 tier) leaves the outlay; B (58) was never eligible.
    let proposal_file = std::env::temp_dir().join(format!("{}.yaml", unique("stricter")));
    std::fs::write(&proposal_file, &stricter).unwrap();
    let output = stack
        .command(database_url, "unused-by-simulate")
        .args([
            "rules",
            "simulate",
            "--population",
            "postgres",
            "--format",
            "json",
        ])
        .args(["--as-of", AS_OF, "--rules"])
        .arg(&proposal_file)
        .output()
        .expect("the eligibility binary runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let full: Value = serde_json::from_slice(&output.stdout).unwrap();
    let karnataka = &full["schemes"][OAP]["karnataka"];
    assert_eq!(
        karnataka["transitions"]["ELIGIBLE->PARTIAL_MATCH"], 1,
        "{full}"
    );
    assert_eq!(karnataka["affected_sample"], json!([a]));
    assert_eq!(
        karnataka["newly_blocking_gaps"]["identity.age"], 1,
        "{full}"
    );
    assert_eq!(karnataka["monthly_outlay_before_inr"], 600.0);
    assert_eq!(karnataka["monthly_outlay_after_inr"], 0.0);

    // The same version as a proposal through the API: stored at once, its diff computed by a
    // job and attached, refused to its author (four eyes), approved by a second admin, then
    // closed to further decisions.
    let (status, proposed) = api
        .post(
            "/api/v1/rules/proposals",
            Some(&admin),
            &json!({"rule_yaml": stricter, "reason": "pension age 65", "as_of": AS_OF}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{proposed}");
    assert_eq!(
        (proposed["status"].as_str(), proposed["author"].as_str()),
        (Some("proposed"), Some(author.as_str()))
    );
    assert!(proposed["simulation_job"].is_i64(), "{proposed}");
    let id = proposed["proposal_id"].as_i64().unwrap();
    let proposed = eventually(Duration::from_secs(60), "the proposal's diff", || async {
        let (_, shown) = api
            .get(&format!("/api/v1/rules/proposals/{id}"), Some(&admin))
            .await;
        shown["simulation"].is_object().then_some(shown)
    })
    .await;
    assert_eq!(
        proposed["simulation"]["schemes"][OAP]["karnataka"]["transitions"]["ELIGIBLE->PARTIAL_MATCH"],
        "<10",
        "{proposed}"
    );
    let decision = format!("/api/v1/rules/proposals/{id}/decision");
    let (status, refused) = api
        .post(
            &decision,
            Some(&admin),
            &json!({"decision": "approve", "reason": "mine"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert!(
        refused["detail"].as_str().unwrap().contains("four eyes"),
        "{refused}"
    );
    let checker = token(Role::Admin, &second, &[]);
    let (status, approved) = api
        .post(
            &decision,
            Some(&checker),
            &json!({"decision": "approve", "reason": "budget approved"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{approved}");
    assert_eq!(
        (approved["status"].as_str(), approved["decided_by"].as_str()),
        (Some("approved"), Some(second.as_str()))
    );
    let (status, again) = api
        .post(
            &decision,
            Some(&checker),
            &json!({"decision": "reject", "reason": "changed my mind"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    let (status, shown) = api
        .get(&format!("/api/v1/rules/proposals/{id}"), Some(&admin))
        .await;
    assert_eq!(
        (status, shown["status"].as_str()),
        (StatusCode::OK, Some("approved"))
    );
    let (status, _) = api
        .get("/api/v1/rules/proposals/999999", Some(&admin))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A new verdict is served at once, though the old list is cached: the evaluator moves the
    // user's results version when it writes.
    let profile_a = profile_json(&a, 62, false, "karnataka");
    kafka.send_profile(&profile_a, AS_OF).await;
    eventually(
        Duration::from_secs(60),
        "the new verdict served",
        || async {
            let (_, now) = api
                .get(&format!("/api/v1/eligibility/{a}"), Some(&citizen_a))
                .await;
            let oap = now["results"]
                .as_array()?
                .iter()
                .find(|r| r["scheme_id"] == OAP)?
                .clone();
            (oap["verdict"] != "ELIGIBLE").then_some(())
        },
    )
    .await;

    // M4: a caseworker loses a user the moment the user's stored state changes, though no
    // verdict changes (neither Mizoram nor Lakshadweep has a scheme in effect on AS_OF: their
    // files start later; the same central verdicts) and the old state's caseworker's read is
    // cached.
    let d = unique("mz-62");
    kafka
        .send_profile(&profile_json(&d, 62, true, "mizoram"), AS_OF)
        .await;
    let caseworker_mz = token(Role::Caseworker, "desk-mz", &["mizoram"]);
    let caseworker_ld = token(Role::Caseworker, "desk-ld", &["lakshadweep"]);
    let read_d = |tok: &str| {
        let path = format!("/api/v1/eligibility/{d}");
        let tok = tok.to_string();
        let api = &api;
        async move { api.get(&path, Some(&tok)).await.0 }
    };
    eventually(Duration::from_secs(60), "D stored", || async {
        (read_d(&caseworker_mz).await == StatusCode::OK).then_some(())
    })
    .await;
    assert_eq!(read_d(&caseworker_mz).await, StatusCode::OK, "cached now");
    let before = stored(pool, &d).await;
    kafka
        .send_profile(&profile_json(&d, 62, true, "lakshadweep"), AS_OF)
        .await;
    eventually(Duration::from_secs(60), "D's move stored", || async {
        let client = pool.get().await.unwrap();
        let row = client
            .query_one(
                "SELECT state FROM profile_current WHERE user_id = $1",
                &[&d],
            )
            .await
            .unwrap();
        (row.get::<_, Option<String>>(0).as_deref() == Some("lakshadweep")).then_some(())
    })
    .await;
    assert_eq!(
        stored(pool, &d).await,
        before,
        "the move changes no verdict"
    );
    // The results version moves right after the commit (the cache is written after it).
    eventually(
        Duration::from_secs(30),
        "Mizoram's caseworker refused",
        || async { (read_d(&caseworker_mz).await == StatusCode::NOT_FOUND).then_some(()) },
    )
    .await;
    assert_eq!(read_d(&caseworker_ld).await, StatusCode::OK);

    let (status, document) = api.get("/api/v1/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(document["paths"]["/api/v1/eligibility/{user_id}"]["get"].is_object());

    // Every metric docs/metrics.md says the API exports ("By" has A) is in its scrape, kept for
    // scripts/check-deploy.sh (the API dashboard and alerts).
    let metrics = scrape_with(&api.process, &contract_metrics("A")).await;
    std::fs::write(repo().join("target").join("e2e-api-metrics.txt"), &metrics).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_tokens_floods_big_bodies_and_outside_admins_are_refused() {
    let stack = Stack::get();
    let database_url = stack.fresh_database("e2e_api_refusals").await;
    let api = Api::start(
        &stack,
        &database_url,
        &[
            (
                "ELIGIBILITY_API_RATE_LIMITS",
                "read=600/600,check=6/100,evaluate=5/3,admin=10/10,public=600/600",
            ),
            ("ELIGIBILITY_API_ADMIN_CIDRS", "10.0.0.0/8"),
        ],
    )
    .await;
    let path = "/api/v1/rules/conflicts";
    // Budgets are shared through Redis by every API process: this test's callers are its own.
    let good = token(Role::Auditor, &unique("audit"), &[]);
    assert_eq!(api.get(path, Some(&good)).await.0, StatusCode::OK);

    let expired = Claims {
        exp: now() - 3600,
        nbf: Some(now() - 7200),
        ..claims(Role::Auditor, "audit-1", &[])
    };
    let early = Claims {
        nbf: Some(now() + 3600),
        ..claims(Role::Auditor, "audit-1", &[])
    };
    let other_audience = Claims {
        aud: "another-api".into(),
        ..claims(Role::Auditor, "audit-1", &[])
    };
    let other_issuer = Claims {
        iss: "someone-else".into(),
        ..claims(Role::Auditor, "audit-1", &[])
    };
    let forged = mint_hs256(
        b"not-the-secret-but-also-32-bytes-long",
        &claims(Role::Auditor, "audit-1", &[]),
    )
    .unwrap();
    let payload = good.split('.').nth(1).unwrap();
    // {"alg":"none","typ":"JWT"}, the payload of a good token, no signature.
    let unsigned = format!("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{payload}.");
    let caseworker_without_states = token(Role::Caseworker, "desk", &[]);
    for (what, bad) in [
        ("expired", mint_hs256(SECRET.as_bytes(), &expired).unwrap()),
        (
            "not yet valid",
            mint_hs256(SECRET.as_bytes(), &early).unwrap(),
        ),
        (
            "another audience",
            mint_hs256(SECRET.as_bytes(), &other_audience).unwrap(),
        ),
        (
            "another issuer",
            mint_hs256(SECRET.as_bytes(), &other_issuer).unwrap(),
        ),
        ("forged", forged),
        ("alg none", unsigned),
        ("caseworker of no state", caseworker_without_states),
        ("garbage", "not.a.token".to_string()),
    ] {
        let (status, headers, body) = api.call("GET", path, Some(&bad), None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}: {body}");
        assert_eq!(
            headers["content-type"], "application/problem+json",
            "{what}"
        );
    }

    // A burst over the check budget (6 a minute: a burst of 2) is refused with Retry-After and
    // the design's body; the budget is per caller.
    let profile = json!({"profile": {"identity": {"age": 70}}});
    let mut statuses = Vec::new();
    let mut refusal = None;
    for _ in 0..5 {
        let (status, headers, body) = api
            .call(
                "POST",
                "/api/v1/eligibility/check",
                Some(&good),
                Some(profile.to_string()),
            )
            .await;
        statuses.push(status);
        if status == StatusCode::TOO_MANY_REQUESTS {
            refusal = Some((headers, body));
        }
    }
    assert_eq!(statuses[0], StatusCode::OK);
    let (headers, body) = refusal.unwrap_or_else(|| panic!("no 429 in {statuses:?}"));
    assert!(
        headers["retry-after"]
            .to_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            >= 1
    );
    assert_eq!(body["error"], "rate_limit_exceeded");
    assert_eq!(body["status"], 429);
    let other = token(Role::Auditor, &unique("audit"), &[]);
    assert_eq!(
        api.call(
            "POST",
            "/api/v1/eligibility/check",
            Some(&other),
            Some(profile.to_string())
        )
        .await
        .0,
        StatusCode::OK
    );

    // Bodies: over 64 KiB is 413; unknown routes are problems too.
    let big = json!({"profile": {"identity": {"age": 70}}, "as_of": "x".repeat(70 * 1024)});
    let (status, headers, _) = api
        .call(
            "POST",
            "/api/v1/eligibility/check",
            Some(&other),
            Some(big.to_string()),
        )
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(headers["content-type"], "application/problem+json");
    assert_eq!(
        api.get("/api/v1/nothing-here", Some(&good)).await.0,
        StatusCode::NOT_FOUND
    );

    // Admin routes from outside the allowed networks do not exist, even for an admin.
    assert_eq!(
        admin_validates(&api, &api.base).await,
        StatusCode::NOT_FOUND
    );
}

/// What `POST /rules/validate` on `base` answers an admin.
async fn admin_validates(api: &Api, base: &str) -> StatusCode {
    let admin = token(Role::Admin, &unique("rules"), &[]);
    api.client
        .post(format!("{base}/api/v1/rules/validate"))
        .bearer_auth(admin)
        .body("rule_id: x")
        .send()
        .await
        .expect("the API answers")
        .status()
}

/// Waits, if needed, until the current rate-limit window has at least 8 s left, so that a
/// budget spent now is still spent a few requests later.
async fn early_in_a_window() {
    let window = eligibility::api::limits::WINDOW_MS;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let left = window - now % window;
    if left < 8_000 {
        tokio::time::sleep(Duration::from_millis(left + 50)).await;
    }
}

/// Sends `request` until it is refused with 429 (at most 20 times); the statuses seen.
async fn until_refused<F, Fut>(mut request: F) -> Vec<StatusCode>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = StatusCode>,
{
    let mut statuses = Vec::new();
    for _ in 0..20 {
        let status = request().await;
        statuses.push(status);
        if status == StatusCode::TOO_MANY_REQUESTS {
            break;
        }
    }
    statuses
}

/// The security review's holes (docs/api.md, "The security review, item by item"), one check
/// each: an anonymous flood spends only its own address's budget, never a caller's; the
/// address comes from trusted proxies only; budgets are shared by replicas in counters that
/// expire; no admin route answers without an allowed network; the public OpenAPI document lists
/// no admin route; every response carries the security headers; data after a JSON body is
/// refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_review_s_holes_are_closed_end_to_end() {
    let stack = Stack::get();
    let database_url = stack.fresh_database("e2e_api_holes").await;
    let limits = "read=600/6,check=6/600,evaluate=5/3,admin=10/10,public=600/600";
    let env = [
        ("ELIGIBILITY_API_RATE_LIMITS", limits),
        ("ELIGIBILITY_API_TRUSTED_PROXIES", "127.0.0.1/32"),
        // No admin network: the admin routes answer no one.
        ("ELIGIBILITY_API_ADMIN_CIDRS", ""),
    ];
    let api = Api::start(&stack, &database_url, &env).await;
    let replica = Api::start(&stack, &database_url, &env).await;
    let citizen = token(Role::Citizen, &unique("usr_hole"), &[]);
    let read = |api: &Api, path: &str, token: Option<&str>, client: &str| {
        let mut request = api
            .client
            .get(format!("{}{path}", api.base))
            .header("x-forwarded-for", client);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move { request.send().await.expect("the API answers").status() }
    };

    // H1: an anonymous flood (no token) from one client spends that client's budget only.
    early_in_a_window().await;
    let attacker = format!("203.0.113.{}", 1 + std::process::id() % 200);
    let flood = until_refused(|| read(&api, "/api/v1/eligibility/anyone", None, &attacker)).await;
    assert_eq!(
        flood.last(),
        Some(&StatusCode::TOO_MANY_REQUESTS),
        "{flood:?}"
    );
    assert!(
        flood[..flood.len() - 1]
            .iter()
            .all(|s| *s == StatusCode::UNAUTHORIZED),
        "{flood:?}"
    );
    // A caller with a token behind the same proxy, even from the flooding address, is served.
    let mine = "/api/v1/eligibility/nobody-stored";
    assert_eq!(
        read(&api, mine, Some(&citizen), &attacker).await,
        StatusCode::NOT_FOUND
    );
    // Another client behind the proxy has its own budget.
    assert_eq!(
        read(&api, "/api/v1/eligibility/anyone", None, "198.51.100.7").await,
        StatusCode::UNAUTHORIZED
    );
    // A client cannot pick its address: from an untrusted peer the header is not read, so the
    // peer's own budget is what a flood spends (the replica trusts no proxy).
    let untrusting = Api::start(
        &stack,
        &database_url,
        &[("ELIGIBILITY_API_RATE_LIMITS", limits)],
    )
    .await;
    let spoofs = until_refused(|| {
        let address = format!("192.0.2.{}", rand_octet());
        let base = untrusting.base.clone();
        let client = untrusting.client.clone();
        async move {
            client
                .get(format!("{base}/api/v1/eligibility/anyone"))
                .header("x-forwarded-for", address)
                .send()
                .await
                .unwrap()
                .status()
        }
    })
    .await;
    assert_eq!(
        spoofs.last(),
        Some(&StatusCode::TOO_MANY_REQUESTS),
        "{spoofs:?}"
    );

    // L1/L2: a caller's budget is one across replicas, counted in Redis with an expiry.
    early_in_a_window().await;
    let busy = token(Role::Auditor, &unique("audit"), &[]);
    let profile = json!({"profile": {"identity": {"age": 70}}}).to_string();
    let check = |api: &Api| {
        let request = api
            .client
            .post(format!("{}/api/v1/eligibility/check", api.base))
            .bearer_auth(&busy)
            .header("content-type", "application/json")
            .body(profile.clone());
        async move { request.send().await.unwrap().status() }
    };
    let spent = until_refused(|| check(&api)).await;
    assert_eq!(
        spent.last(),
        Some(&StatusCode::TOO_MANY_REQUESTS),
        "{spent:?}"
    );
    assert_eq!(check(&replica).await, StatusCode::TOO_MANY_REQUESTS);
    let redis = redis::Client::open(stack.redis_url.as_str()).unwrap();
    let mut connection = redis.get_multiplexed_async_connection().await.unwrap();
    // SCAN, not KEYS: one KEYS over a development stack still holding a benchmark's cache
    // entries (hundreds of thousands) outlasts the client's response timeout.
    let keys: Vec<String> = {
        use redis::AsyncCommands;
        let options = redis::ScanOptions::default()
            .with_pattern("eligibility_limit:check:c:*")
            .with_count(10_000);
        let mut scan = connection.scan_options::<String>(options).await.unwrap();
        let mut keys = Vec::new();
        while let Some(key) = scan.next_item().await {
            keys.push(key.unwrap());
        }
        keys
    };
    assert!(!keys.is_empty());
    let within_two_windows = 1..=2 * eligibility::api::limits::WINDOW_MS as i64;
    let mut live = 0;
    for key in keys {
        let ttl: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut connection)
            .await
            .unwrap();
        // -2: the key expired between the scan and this read (an earlier run's window), as a
        // key with an expiry does; a key that never expires reads -1.
        assert!(
            ttl == -2 || within_two_windows.contains(&ttl),
            "{key}: {ttl}"
        );
        live += usize::from(within_two_windows.contains(&ttl));
    }
    // The window that just refused this run's requests is among them, and it expires.
    assert!(live > 0, "no limiter key of this window reads a TTL");

    // M5: no admin network configured: an admin's token reaches no admin route.
    assert_eq!(
        admin_validates(&api, &api.base).await,
        StatusCode::NOT_FOUND
    );

    // L6: a proposal whose population diff is missing (it failed) cannot be approved.
    let pool = fleet::postgres::pool(&database_url, 1).unwrap();
    let id: i64 = pool
        .get()
        .await
        .unwrap()
        .query_one(
            "INSERT INTO rule_proposals (rule_id, scheme_id, rule_version, rule_hash, rule_yaml, author)
             VALUES ('rule_x_009', 'sch_x', 9, $1, 'rule_id: rule_x_009', 'rules-1')
             RETURNING proposal_id",
            &[&unique("hash")],
        )
        .await
        .unwrap()
        .get(0);
    let checker = token(Role::Admin, "rules-2", &[]);
    let (status, refused) = untrusting
        .post(
            &format!("/api/v1/rules/proposals/{id}/decision"),
            Some(&checker),
            &json!({"decision": "approve", "reason": "looks fine"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert!(
        refused["detail"]
            .as_str()
            .unwrap()
            .contains("no population diff"),
        "{refused}"
    );

    // M3: one simulation job at a time per caller: a caller whose job is still running gets 409
    // naming it (the job is written as a runner would leave it).
    let running: i64 = pool
        .get()
        .await
        .unwrap()
        .query_one(
            "INSERT INTO simulation_jobs (requested_by, kind, request, status, started_at)
             VALUES ('rules-busy', 'simulate', '{}', 'running', now()) RETURNING job_id",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let busy = token(Role::Admin, "rules-busy", &[]);
    let yaml =
        std::fs::read_to_string(repo().join("schemes/karnataka/old_age_pension.yaml")).unwrap();
    let (status, refused) = untrusting
        .post(
            "/api/v1/rules/simulate",
            Some(&busy),
            &json!({"rule_yaml": yaml, "sample": 10}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert!(
        refused["detail"]
            .as_str()
            .unwrap()
            .contains(&format!("job {running}")),
        "{refused}"
    );

    // L7: the public OpenAPI document lists no admin route.
    let (status, document) = api.get("/api/v1/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK);
    let paths = document["paths"].as_object().expect("paths");
    assert!(paths.contains_key("/api/v1/eligibility/check"));
    for admin_path in [
        "/api/v1/rules/validate",
        "/api/v1/rules/simulate",
        "/api/v1/rules/proposals",
    ] {
        assert!(!paths.contains_key(admin_path), "{admin_path}");
    }

    // L8: personal data is neither stored nor sniffed; problems carry the same headers.
    for (path, token) in [(mine, Some(citizen.as_str())), ("/api/v1/nothing", None)] {
        let (_, headers, _) = api.call("GET", path, token, None).await;
        assert_eq!(headers["cache-control"], "no-store", "{path}");
        assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
    }

    // L5: data after the JSON body is refused, naming no value.
    let other = token(Role::Auditor, &unique("audit"), &[]);
    let (status, _, body) = api
        .call(
            "POST",
            "/api/v1/eligibility/check",
            Some(&other),
            Some(format!("{profile} {{\"evil\": true}}")),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(!body.to_string().contains("evil"), "{body}");
}

/// The chart's layout: the admin routes on their own listener (`ELIGIBILITY_API_ADMIN_ADDR`),
/// both listeners serving at once; and no connection held by a client that sends its headers
/// slowly or goes silent (`HEADER_TIMEOUT`).
#[tokio::test(flavor = "multi_thread")]
async fn the_admin_listener_serves_beside_the_api_and_slow_clients_are_cut_off() {
    use std::io::{Read, Write};
    let stack = Stack::get();
    let database_url = stack.fresh_database("e2e_api_listeners").await;
    let admin_port = free_port();
    let admin_addr = format!("127.0.0.1:{admin_port}");
    let api = Api::start(
        &stack,
        &database_url,
        &[("ELIGIBILITY_API_ADMIN_ADDR", admin_addr.as_str())],
    )
    .await;
    let admin_base = format!("http://{admin_addr}");
    assert_eq!(
        admin_validates(&api, &api.base).await,
        StatusCode::NOT_FOUND
    );
    assert_eq!(admin_validates(&api, &admin_base).await, StatusCode::OK);
    let document: Value = api
        .client
        .get(format!("{admin_base}/api/v1/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(document["paths"]["/api/v1/rules/validate"]["post"].is_object());
    // The rules console goes with the admin routes: its pages on the admin listener only (the
    // API's listener answers its paths with the JSON 404 of a route that does not exist).
    for (base, served) in [(&api.base, false), (&admin_base, true)] {
        let response = api
            .client
            .get(format!("{base}/console/sign-in"))
            .send()
            .await
            .unwrap();
        let content_type = response.headers()[reqwest::header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .to_string();
        assert_eq!(
            content_type.starts_with("text/html"),
            served,
            "{base}/console/sign-in: {} {content_type}",
            response.status()
        );
    }

    let address = api.base.trim_start_matches("http://").to_string();
    let timeout = eligibility::api::HEADER_TIMEOUT;
    let cut_off = |partial: &'static str| {
        let address = address.clone();
        tokio::task::spawn_blocking(move || {
            let mut stream = std::net::TcpStream::connect(&address).unwrap();
            stream.write_all(partial.as_bytes()).unwrap();
            stream
                .set_read_timeout(Some(timeout + Duration::from_secs(10)))
                .unwrap();
            let started = std::time::Instant::now();
            let mut buffer = Vec::new();
            // The server closes the connection (end of stream, or reset); a read timeout would
            // mean it held the connection.
            let closed = match stream.read_to_end(&mut buffer) {
                Ok(_) => true,
                Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
            };
            (closed, started.elapsed())
        })
    };
    let (slow, silent) = tokio::join!(
        cut_off("GET /api/v1/rules/conflicts HTTP/1.1\r\nHost: x\r\n"),
        cut_off(""),
    );
    for (what, (closed, after)) in [("slow headers", slow.unwrap()), ("silent", silent.unwrap())] {
        assert!(closed, "{what}: the connection was held");
        assert!(
            after < timeout + Duration::from_secs(5),
            "{what}: closed after {after:?}"
        );
    }
}

/// A different last octet each call (the spoofed addresses of one flood).
fn rand_octet() -> u8 {
    use std::sync::atomic::{AtomicU8, Ordering};
    static NEXT: AtomicU8 = AtomicU8::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
