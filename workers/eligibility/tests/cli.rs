//! The real `eligibility` binary, run on files in temporary directories. Expected values are
//! computed by hand from docs/semantics.md and the rule files involved.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ka_senior() -> String {
    repo()
        .join("examples/profiles/ka_senior_62.json")
        .display()
        .to_string()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_eligibility"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8 stderr")
}

/// Runs and expects exit 0 with JSON on stdout.
fn run_json(args: &[&str]) -> Value {
    let o = run(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e})"))
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a temp file");
    path.display().to_string()
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn rule_yaml(rule_id: &str, scheme_id: &str, eligibility: &str, extra: &str) -> String {
    format!(
        "schema_version: \"1.0\"\nrule_id: \"{rule_id}\"\nscheme_id: \"{scheme_id}\"\nscheme_name: \"Test {scheme_id}\"\nstate: \"central\"\neffective_from: \"2024-01-01\"\nversion: 1\neligibility: {eligibility}\n{extra}"
    )
}

fn result<'a>(output: &'a Value, scheme_id: &str) -> &'a Value {
    output["results"]
        .as_array()
        .expect("results is a list")
        .iter()
        .find(|r| r["scheme_id"] == scheme_id)
        .unwrap_or_else(|| panic!("no result for {scheme_id}"))
}

// ---------------------------------------------------------------------------------------------
// evaluate
// ---------------------------------------------------------------------------------------------

#[test]
fn evaluate_json_on_the_bundled_corpus() {
    let profile = ka_senior();
    let out = run_json(&[
        "evaluate",
        "--profile",
        &profile,
        "--as-of",
        "2025-01-15",
        "--format",
        "json",
    ]);
    let keys: Vec<&str> = out
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, vec!["as_of", "results", "not_applicable"]);
    assert_eq!(out["as_of"], "2025-01-15");
    assert!(out["not_applicable"].is_array());
    let results = out["results"].as_array().unwrap();
    let mut ids: Vec<&str> = results
        .iter()
        .map(|r| r["scheme_id"].as_str().unwrap())
        .collect();
    // What the citizen can act on first: ELIGIBLE, partial matches whose gaps the citizen can
    // all close, other partial matches (each by score, then scheme id), then the rest.
    let rank = |r: &Value| {
        let class = match (
            r["verdict"].as_str().unwrap(),
            r["all_gaps_closable"].as_bool().unwrap(),
        ) {
            ("ELIGIBLE", _) => 0,
            ("PARTIAL_MATCH", true) => 1,
            ("PARTIAL_MATCH", false) => 2,
            _ => 3,
        };
        (
            class,
            std::cmp::Reverse(r["match_score"].as_u64().unwrap()),
            r["scheme_id"].as_str().unwrap().to_string(),
        )
    };
    let ranks: Vec<_> = results.iter().map(rank).collect();
    assert!(
        ranks.is_sorted(),
        "results in order of what the citizen can act on: {ranks:?}"
    );
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), results.len(), "one result per scheme");
    assert!(ids.len() > 1);

    // schemes/karnataka/old_age_pension.yaml: state eq karnataka, age gte 60 (62), bpl true,
    // OR(aadhaar, voter_id) with aadhaar; exclusions hold (no active schemes, not a government
    // employee): ELIGIBLE, 4 of 4 root children.
    let oap = result(&out, "sch_ka_old_age_pension");
    assert_eq!(oap["verdict"], "ELIGIBLE");
    assert_eq!(oap["match_score"], 100);
    assert_eq!(oap["matched_conditions"], 4);
    assert_eq!(oap["total_conditions"], 4);
    assert_eq!(oap["rule_id"], "rule_ka_oap_001");
    assert_eq!(oap["user_id"], "usr_ka_0001");
    assert_eq!(oap["gaps"], json!([]));
    assert_eq!(oap["excluded_by"], json!([]));
    assert_eq!(oap["as_of"], "2025-01-15");
    assert_eq!(
        oap["conditions_evaluated"][1],
        json!({"path": "/eligibility/conditions/1", "field": "identity.age", "operator": "gte",
               "expected": 60, "actual": 62, "result": true, "headroom": 2,
               "label": "Must be 60 years or older"})
    );
    let hash = oap["audit"]["rule_hash"].as_str().unwrap();
    assert_eq!(hash.len(), 64);

    // Every partial match says what is missing.
    let partial: Vec<&Value> = results
        .iter()
        .filter(|r| r["verdict"] == "PARTIAL_MATCH")
        .collect();
    assert!(
        !partial.is_empty(),
        "the corpus has partial matches for this profile"
    );
    for r in partial {
        let score = r["match_score"].as_u64().unwrap();
        assert!((50..=100).contains(&score), "{}", r["scheme_id"]);
        assert!(
            !r["gaps"].as_array().unwrap().is_empty(),
            "{} is a partial match without gaps",
            r["scheme_id"]
        );
    }
    // No verdict without a score band that matches it.
    for r in results {
        let score = r["match_score"].as_u64().unwrap();
        match r["verdict"].as_str().unwrap() {
            "ELIGIBLE" => assert_eq!(score, 100),
            "PARTIAL_MATCH" => assert!(score >= 50),
            "NOT_ELIGIBLE" => {
                assert!(score < 50 || !r["excluded_by"].as_array().unwrap().is_empty())
            }
            other => panic!("unexpected verdict {other}"),
        }
    }
}

#[test]
fn evaluate_is_deterministic() {
    let profile = ka_senior();
    let args = [
        "evaluate",
        "--profile",
        &profile,
        "--as-of",
        "2025-01-15",
        "--format",
        "json",
    ];
    let (a, b) = (run(&args), run(&args));
    assert_eq!(a.status.code(), Some(0));
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn evaluate_table() {
    let profile = ka_senior();
    let json = run_json(&["evaluate", "--profile", &profile, "--as-of", "2025-01-15"]);
    let n = json["results"].as_array().unwrap().len();
    let o = run(&[
        "evaluate",
        "--profile",
        &profile,
        "--as-of",
        "2025-01-15",
        "--format",
        "table",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!("as of 2025-01-15: {n} scheme(s) evaluated")
    );
    let oap: Vec<&str> = text
        .lines()
        .find(|l| l.starts_with("sch_ka_old_age_pension "))
        .expect("a row for the old age pension")
        .split_whitespace()
        .collect();
    assert_eq!(
        &oap[..4],
        &["sch_ka_old_age_pension", "ELIGIBLE", "100", "4/4"]
    );
    // One row per result (and per not-applicable scheme).
    let na = json["not_applicable"].as_array().unwrap().len();
    let rows = text.lines().filter(|l| l.starts_with("sch_")).count();
    assert_eq!(rows, n + na);
}

/// The README's example in Kannada (and Hindi): the JSON carries each result's words in the
/// language, the table's "what next" is in it; an unknown language is refused with the known
/// ones. (The sentences themselves are held word for word by the explain crate's tests.)
#[test]
fn evaluate_in_another_language() {
    let worker = repo()
        .join("examples/profiles/ka_worker_58.json")
        .display()
        .to_string();
    let base = ["evaluate", "--profile", &worker, "--as-of", "2025-01-15"];
    let kannada = |text: &str| text.chars().any(|c| ('\u{0C80}'..='\u{0CFF}').contains(&c));

    let english = run_json(&base);
    let args = [&base[..], &["--language", "kn"]].concat();
    let out = run_json(&args);
    let oap = result(&out, "sch_ka_old_age_pension");
    assert_eq!(
        oap["verdict"],
        result(&english, "sch_ka_old_age_pension")["verdict"],
        "a language changes words only"
    );
    let words = &oap["words"];
    assert_eq!(words["language"], "kn");
    for text in [
        &words["summary"],
        &words["explanation"],
        &words["next_steps"][0],
    ] {
        let text = text.as_str().expect("a string");
        assert!(kannada(text), "not Kannada: {text}");
    }
    // The scheme by its name in the language, never in English letters.
    let explanation = words["explanation"].as_str().unwrap();
    assert!(
        explanation.contains("ಕರ್ನಾಟಕ ವೃದ್ಧಾಪ್ಯ ವೇತನ")
            && !explanation.contains("Karnataka Old Age Pension"),
        "{explanation}"
    );
    assert_eq!(
        words["next_steps"].as_array().unwrap().len(),
        oap["next_steps"].as_array().unwrap().len(),
        "one step per step of the engine"
    );
    assert!(
        english["results"][0].get("words").is_none(),
        "no words unless asked"
    );

    let native = run_json(&[&args[..], &["--native-digits"]].concat());
    let explanation = result(&native, "sch_ka_old_age_pension")["words"]["explanation"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(explanation.contains("₹೬೦೦"), "{explanation}");

    for (code, script) in [
        ("kn", '\u{0C80}'..='\u{0CFF}'),
        ("hi", '\u{0900}'..='\u{097F}'),
    ] {
        let o = run(&[&base[..], &["--language", code, "--format", "table"]].concat());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let text = stdout(&o);
        let row = text
            .lines()
            .find(|l| l.starts_with("sch_ka_old_age_pension "))
            .expect("a row for the old age pension");
        assert!(row.contains("PARTIAL_MATCH"), "{row}");
        assert!(row.chars().any(|c| script.contains(&c)), "{code}: {row}");
    }

    let o = run(&[&base[..], &["--language", "fr"]].concat());
    assert_eq!(o.status.code(), Some(2), "a usage error");
    assert!(
        stderr(&o).contains("\"fr\"") && stderr(&o).contains("kn"),
        "{}",
        stderr(&o)
    );
    let o = run(&[&base[..], &["--native-digits"]].concat());
    assert_eq!(o.status.code(), Some(2), "--native-digits needs --language");
}

#[test]
fn evaluate_one_scheme() {
    let profile = ka_senior();
    let out = run_json(&[
        "evaluate",
        "--profile",
        &profile,
        "--as-of",
        "2025-01-15",
        "--scheme",
        "sch_ka_old_age_pension",
    ]);
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["scheme_id"], "sch_ka_old_age_pension");
    assert_eq!(results[0]["verdict"], "ELIGIBLE");
    assert_eq!(out["not_applicable"], json!([]));

    let o = run(&[
        "evaluate",
        "--profile",
        &profile,
        "--as-of",
        "2025-01-15",
        "--scheme",
        "sch_no_such_scheme",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("sch_no_such_scheme"), "{}", stderr(&o));
}

#[test]
fn evaluate_with_a_rules_dir() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules");
    std::fs::create_dir(&rules).unwrap();
    write(
        &rules,
        "senior.yaml",
        &rule_yaml(
            "rule_cli_senior",
            "sch_cli_senior",
            "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 65}, {field: economic.bpl_status, operator: eq, value: true}]}",
            "",
        ),
    );
    write(
        &rules,
        "seasonal.yaml",
        &rule_yaml(
            "rule_cli_seasonal",
            "sch_cli_seasonal",
            "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 18}]}",
            "application_window: {opens: \"06-01\", closes: \"08-31\"}\n",
        ),
    );
    let profile = write(
        dir.path(),
        "p.json",
        r#"{"user_id": "usr_cli", "identity": {"age": 62}, "economic": {"bpl_status": true}}"#,
    );
    let out = run_json(&[
        "evaluate",
        "--profile",
        &profile,
        "--as-of",
        "2025-01-15",
        "--rules",
        &rules.display().to_string(),
    ]);
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{out:#}");
    let r = &results[0];
    assert_eq!(r["scheme_id"], "sch_cli_senior");
    assert_eq!(r["verdict"], "PARTIAL_MATCH");
    assert_eq!(r["match_score"], 50);
    assert_eq!(r["matched_conditions"], 1);
    assert_eq!(r["total_conditions"], 2);
    assert_eq!(r["gaps"].as_array().unwrap().len(), 1);
    assert_eq!(r["gaps"][0]["field"], "identity.age");
    assert_eq!(r["gaps"][0]["gap"], 3);
    assert_eq!(r["gaps"][0]["gap_kind"], "threshold");
    assert_eq!(r["gaps"][0]["estimated_eligibility_date"], "2028-01-15");
    assert_eq!(
        out["not_applicable"],
        json!([{"scheme_id": "sch_cli_seasonal", "rule_id": "rule_cli_seasonal",
                "reason": "window_closed", "opens": "2025-06-01"}])
    );
    // Inside the window, both are evaluated, in scheme order.
    let out = run_json(&[
        "evaluate",
        "--profile",
        &profile,
        "--as-of",
        "2025-06-01",
        "--rules",
        &rules.display().to_string(),
    ]);
    let ids: Vec<&str> = out["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["scheme_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["sch_cli_seasonal", "sch_cli_senior"]);
    assert_eq!(out["results"][0]["verdict"], "ELIGIBLE");
    assert_eq!(out["not_applicable"], json!([]));
}

#[test]
fn evaluate_refuses_a_profile_with_an_unknown_field() {
    let dir = tempfile::tempdir().unwrap();
    let profile = write(
        dir.path(),
        "p.json",
        r#"{"identity": {"age": 62, "shoe_size": 42}}"#,
    );
    let o = run(&["evaluate", "--profile", &profile, "--as-of", "2025-01-15"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("identity.shoe_size"), "{}", stderr(&o));
    assert!(
        stdout(&o).is_empty(),
        "nothing is evaluated: {}",
        stdout(&o)
    );

    let wrong_type = write(dir.path(), "q.json", r#"{"identity": {"age": "sixty"}}"#);
    let o = run(&[
        "evaluate",
        "--profile",
        &wrong_type,
        "--as-of",
        "2025-01-15",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("identity.age"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
}

// ---------------------------------------------------------------------------------------------
// rules validate | conflicts | hash
// ---------------------------------------------------------------------------------------------

#[test]
fn rules_validate_good_dirs() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.yaml",
        &rule_yaml(
            "rule_cli_a",
            "sch_cli_a",
            "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 65}]}",
            "",
        ),
    );
    let o = run(&["rules", "validate", &dir.path().display().to_string()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("1 rule(s) valid"), "{}", stdout(&o));
    // The bundled corpus is valid.
    let o = run(&[
        "rules",
        "validate",
        &repo().join("schemes").display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn rules_validate_bad_dir_reports_every_problem() {
    let dir = tempfile::tempdir().unwrap();
    let bad_field = write(
        dir.path(),
        "bad_field.yaml",
        &rule_yaml(
            "rule_cli_bad_field",
            "sch_cli_bad_field",
            "{operator: AND, conditions: [{field: identity.shoe_size, operator: eq, value: 42}]}",
            "",
        ),
    );
    let bad_value = write(
        dir.path(),
        "bad_value.yaml",
        &rule_yaml(
            "rule_cli_bad_value",
            "sch_cli_bad_value",
            "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 60}, {field: identity.age, operator: lte, value: old}]}",
            "",
        ),
    );
    let o = run(&["rules", "validate", &dir.path().display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let line_with = |needle: &str| {
        err.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{err}"))
    };
    let l = line_with(&bad_field);
    assert!(l.contains("rule_cli_bad_field"), "{l}");
    assert!(l.contains("/eligibility/conditions/0/field"), "{l}");
    assert!(l.contains("identity.shoe_size"), "{l}");
    let l = line_with(&bad_value);
    assert!(l.contains("rule_cli_bad_value"), "{l}");
    assert!(l.contains("/eligibility/conditions/1/value"), "{l}");
    assert!(l.contains("identity.age"), "{l}");
}

#[test]
fn rules_conflicts_finds_a_planted_unsatisfiable_rule() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "ok.yaml",
        &rule_yaml(
            "rule_cli_ok",
            "sch_cli_ok",
            "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 65}]}",
            "",
        ),
    );
    write(
        dir.path(),
        "unsat.yaml",
        &rule_yaml(
            "rule_cli_unsat",
            "sch_cli_unsat",
            "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 65}, {field: identity.age, operator: lte, value: 60}]}",
            "",
        ),
    );
    let d = dir.path().display().to_string();
    let report = run_json(&["rules", "conflicts", &d, "--format", "json"]);
    let conflicts = report["conflicts"].as_array().unwrap();
    let unsat: Vec<&Value> = conflicts
        .iter()
        .filter(|c| c["conflict_type"] == "unsatisfiable")
        .collect();
    assert_eq!(unsat.len(), 1, "{report:#}");
    assert_eq!(unsat[0]["rule_ids"], json!(["rule_cli_unsat"]));
    assert_eq!(unsat[0]["scheme_ids"], json!(["sch_cli_unsat"]));
    assert!(
        unsat[0]["fields"]
            .as_array()
            .unwrap()
            .contains(&json!("identity.age")),
        "{report:#}"
    );
    // The satisfiable rule is in no conflict.
    for c in conflicts {
        assert!(
            !c["rule_ids"]
                .as_array()
                .unwrap()
                .contains(&json!("rule_cli_ok")),
            "{c:#}"
        );
    }
    // --deny turns a conflict into a failed check.
    let o = run(&["rules", "conflicts", &d, "--deny"]);
    assert_eq!(o.status.code(), Some(1));
}

const HASH_RULE: &str = r#"version: 2
scheme_name: "Pension ₹ test"
schema_version: "1.0"
rule_id: "rule_hash_test"
scheme_id: "sch_hash_test"
state: "central"
effective_from: "2024-01-01"
effective_until: null
eligibility:
  operator: "AND"
  conditions:
    - {value: 150000.0, field: "economic.annual_income", operator: "lte", label: "Income ≤ ₹1.5 lakh"}
    - {field: "identity.age", operator: "between", value: [60, 79]}
"#;

/// RFC 8785 by hand: sorted keys, no whitespace, 150000.0 → 150000, UTF-8 as is.
const HASH_RULE_JCS: &str = r#"{"effective_from":"2024-01-01","effective_until":null,"eligibility":{"conditions":[{"field":"economic.annual_income","label":"Income ≤ ₹1.5 lakh","operator":"lte","value":150000},{"field":"identity.age","operator":"between","value":[60,79]}],"operator":"AND"},"rule_id":"rule_hash_test","schema_version":"1.0","scheme_id":"sch_hash_test","scheme_name":"Pension ₹ test","state":"central","version":2}"#;

#[test]
fn rules_hash_prints_the_jcs_sha256() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "rule.yaml", HASH_RULE);
    let first = run(&["rules", "hash", &file]);
    let second = run(&["rules", "hash", &file]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert_eq!(first.stdout, second.stdout);
    let text = stdout(&first);
    let hash = text.split_whitespace().next().unwrap();
    assert_eq!(hash.len(), 64);
    assert!(
        hash.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    );
    assert_eq!(hash, sha256_hex(HASH_RULE_JCS.as_bytes()));
    // Same document, other key order and number spelling: same hash.
    let other = write(
        dir.path(),
        "other.yaml",
        &(HASH_RULE
            .replace("version: 2\n", "")
            .replace("150000.0", "150000")
            + "version: 2\n"),
    );
    let o = run(&["rules", "hash", &other]);
    assert_eq!(stdout(&o).split_whitespace().next().unwrap(), hash);
    // An invalid rule has no hash.
    let bad = write(
        dir.path(),
        "bad.yaml",
        &HASH_RULE.replace("identity.age", "identity.shoe_size"),
    );
    let o = run(&["rules", "hash", &bad]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("identity.shoe_size"));
}

// ---------------------------------------------------------------------------------------------
// oracle, schema
// ---------------------------------------------------------------------------------------------

fn testset() -> PathBuf {
    repo().join("shared/oracle/testdata/PHASE_Q_TESTSET.ndjson")
}

#[test]
fn oracle_testset_passes() {
    let o = run(&["oracle", "--testset", &testset().display().to_string()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn oracle_testset_with_a_wrong_expectation_fails() {
    let text = std::fs::read_to_string(testset()).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let first: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(first["expected_verdict"], "PASS");
    let mut flipped = first.clone();
    flipped["expected_verdict"] = json!("FAIL");
    lines[0] = serde_json::to_string(&flipped).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "set.ndjson", &(lines.join("\n") + "\n"));
    let o = run(&["oracle", "--testset", &file]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}

#[test]
fn schema_profile_matches_the_committed_schema() {
    let printed = run_json(&["schema", "profile"]);
    let committed: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schemas/profile.schema.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(printed, committed);
    assert_eq!(printed["title"], "Citizen profile");
}

/// `ELIGIBILITY_ENGINE=gpu` (or `--engine gpu`) where no GPU can be used (here: a build without
/// the `gpu` feature) stops the evaluator and the replay with an error naming the setting and the
/// reason, before they connect to anything (every service address below refuses connections).
#[test]
fn engine_gpu_without_a_gpu_is_a_clear_error_before_any_connection() {
    let unreachable = [
        ("ELIGIBILITY_KAFKA_BROKERS", "127.0.0.1:1"),
        (
            "ELIGIBILITY_DATABASE_URL",
            "postgres://nobody@127.0.0.1:1/none",
        ),
        ("ELIGIBILITY_REDIS_URL", "redis://127.0.0.1:1"),
        ("ELIGIBILITY_SCHEMA_REGISTRY_URL", "http://127.0.0.1:1"),
        ("ELIGIBILITY_HTTP_ADDR", "127.0.0.1:0"),
    ];
    let replay = [
        "replay",
        "--topic",
        "profile.assembled",
        "--from-offset",
        "0",
    ];
    for args in [
        &["evaluator"][..],
        &["evaluator", "--engine", "gpu"][..],
        &replay[..],
        &[&replay[..], &["--engine", "gpu"]].concat()[..],
    ] {
        // The flag form starts from `cpu` in the environment: the flag wins.
        let from_flag = args.contains(&"--engine");
        let o = Command::new(env!("CARGO_BIN_EXE_eligibility"))
            .args(args)
            .envs(unreachable)
            .env("ELIGIBILITY_ENGINE", if from_flag { "cpu" } else { "gpu" })
            .output()
            .expect("the binary runs");
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("batch engine gpu (--engine or ELIGIBILITY_ENGINE)")
                && err.contains("built without the gpu feature"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// docs/configuration.md's table of variables is exactly what the subcommands' `--help` shows
/// as `[env: …]` (the open-ended `ELIGIBILITY_KAFKA_PROP_*` aside): the page cannot drift from
/// the code.
#[test]
fn the_configuration_page_lists_exactly_the_variables_the_help_shows() {
    let mut from_help = std::collections::BTreeSet::new();
    for command in [
        &["evaluator", "--help"][..],
        &["explainer", "--help"],
        &["replay", "--help"],
        &["migrate", "--help"],
        &["topics", "create", "--help"],
        &["audit", "verify", "--help"],
        &["schema-registry", "--help"],
        &["api", "serve", "--help"],
    ] {
        let out = run(command);
        assert!(out.status.success(), "{command:?}: {}", stderr(&out));
        for piece in stdout(&out).split("[env: ").skip(1) {
            let name: String = piece
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            from_help.insert(name);
        }
    }
    assert!(from_help.len() >= 20, "{from_help:?}");
    let page = std::fs::read_to_string(repo().join("docs/configuration.md")).unwrap();
    let documented: std::collections::BTreeSet<String> = page
        .lines()
        .filter_map(|l| l.strip_prefix("| `ELIGIBILITY_"))
        .filter_map(|rest| rest.split('`').next())
        .filter(|name| !name.ends_with('*'))
        .map(|name| format!("ELIGIBILITY_{name}"))
        .collect();
    let undocumented: Vec<_> = from_help.difference(&documented).collect();
    let stale: Vec<_> = documented.difference(&from_help).collect();
    assert!(
        undocumented.is_empty() && stale.is_empty(),
        "in --help but not in docs/configuration.md: {undocumented:?}; documented but read by no \
         argument: {stale:?}"
    );
}

/// An empty `ELIGIBILITY_*` variable is "not set", as before the variables became arguments:
/// the worker reports the first variable it really lacks, not a bad empty value.
#[test]
fn an_empty_variable_counts_as_unset() {
    let out = Command::new(env!("CARGO_BIN_EXE_eligibility"))
        .arg("evaluator")
        .env_clear()
        .env("ELIGIBILITY_HTTP_ADDR", "")
        .env("ELIGIBILITY_SCHEMA_AUTO_REGISTER", "")
        .env("ELIGIBILITY_KAFKA_BROKERS", "127.0.0.1:1")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("ELIGIBILITY_DATABASE_URL is required but not set"),
        "{err}"
    );
}

/// README "Architecture" names every subcommand the binary has and every crate of the
/// workspace, so the front door's map cannot fall behind the house.
/// The subcommands `eligibility --help` lists.
fn subcommands() -> Vec<String> {
    stdout(&run(&["--help"]))
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn the_readme_architecture_map_names_every_subcommand_and_crate() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md is {lines} lines: the front door stays at most 300"
    );
    let start = readme
        .find("## Architecture")
        .expect("an Architecture section");
    let map = &readme[start..];
    let map = &map[..map[3..].find("\n## ").map_or(map.len(), |end| end + 3)];
    let commands = subcommands();
    assert!(commands.len() >= 14, "{commands:?}");
    for command in commands {
        assert!(
            map.lines()
                .any(|l| l.trim_start().starts_with(&format!("{command} "))),
            "README's architecture map does not name the subcommand `{command}`"
        );
    }
    let workspace = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let members = workspace
        .lines()
        .find(|l| l.starts_with("members"))
        .expect("workspace members");
    for member in members.split('"').skip(1).step_by(2) {
        let manifest = std::fs::read_to_string(repo().join(member).join("Cargo.toml")).unwrap();
        let name = manifest
            .lines()
            .find_map(|l| l.strip_prefix("name = "))
            .map(|n| n.trim_matches('"'))
            .expect("a package name");
        assert!(
            map.contains(&format!("crate `{name}`")) && map.contains(member),
            "README's architecture map does not name the crate `{name}` ({member})"
        );
    }
}

#[test]
fn every_subcommand_has_its_own_file_under_cli() {
    let commands = subcommands();
    assert!(commands.len() >= 15, "{commands:?}");
    let cli = repo().join("workers/eligibility/src/cli");
    for command in commands {
        let name = command.replace('-', "_");
        assert!(
            cli.join(format!("{name}.rs")).is_file() || cli.join(&name).join("mod.rs").is_file(),
            "the subcommand `{command}` has no file src/cli/{name}.rs (or folder src/cli/{name}/)"
        );
    }
}
