//! The production connections against real local services (`scripts/stack.sh up`): PostgreSQL
//! TLS verified against a configured CA file, Redis over TLS and its reconnection after a drop,
//! readiness that follows Redis, Kafka client properties passed through, and a registry that
//! is only looked up. The TLS servers use the stack's test CA (`~/.cache/eligibility-stack/tls`).

mod support;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fleet::avro::{Codec, Registration};
use fleet::cache::Cache;
use support::*;

/// The stack's test CA (scripts/stack.sh `up_tls_certs`).
fn test_ca() -> PathBuf {
    let path = match std::env::var_os("ELIGIBILITY_STACK_TLS_CA_FILE") {
        Some(path) => PathBuf::from(path),
        None => {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache"));
            cache.join("eligibility-stack/tls/ca.pem")
        }
    };
    assert!(
        path.exists(),
        "no test CA at {}: start the stack with `scripts/stack.sh up`",
        path.display()
    );
    path
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

/// The error and its causes, on one line.
fn chain(e: &anyhow::Error) -> String {
    e.chain()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(": ")
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_tls_is_verified_against_the_configured_ca_file() {
    let url = env_or(
        "ELIGIBILITY_STACK_DATABASE_TLS_URL",
        "postgres://eligibility:eligibility@127.0.0.1:5432/eligibility?sslmode=verify-full",
    );
    let ca = test_ca();
    let pool = fleet::postgres::pool_with_ca(&url, Some(&ca), 1).unwrap();
    let client = pool
        .get()
        .await
        .expect("a TLS connection verified against the test CA");
    let encrypted: bool = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(encrypted, "the session is not encrypted");
    drop(client);

    // Without the CA file the server's certificate is not trusted: refused, not downgraded.
    let untrusted = fleet::postgres::pool_with_ca(&url, None, 1).unwrap();
    let error = untrusted
        .get()
        .await
        .expect_err("an untrusted certificate is refused");
    let text = format!("{error:?}");
    assert!(text.contains("certificate"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn redis_over_tls_with_the_configured_ca_file() {
    let url = env_or("ELIGIBILITY_STACK_REDIS_TLS_URL", "rediss://127.0.0.1:6380");
    let ca = test_ca();
    let cache = Cache::connect(&url, Some(&ca))
        .await
        .expect("TLS Redis, verified");
    let key = format!("e2e-tls-{}", std::process::id());
    cache
        .put(&[(key.clone(), "\"over TLS\"".into())])
        .await
        .unwrap();
    assert_eq!(
        cache.get(&key).await.unwrap().as_deref(),
        Some("\"over TLS\"")
    );
    cache.invalidate(std::slice::from_ref(&key)).await.unwrap();

    let untrusted = Cache::connect(&url, None)
        .await
        .err()
        .expect("an untrusted certificate is refused");
    assert!(
        chain(&untrusted).contains("ELIGIBILITY_REDIS_URL"),
        "{untrusted:#}"
    );
}

/// A Redis of the test's own on a free port, so that it can be stopped and started again.
struct OwnRedis {
    port: u16,
    child: Child,
}

impl OwnRedis {
    fn start(port: u16) -> OwnRedis {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server (installed by scripts/stack.sh)");
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "redis-server did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        OwnRedis { port, child }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `/readyz` until its status is `want`; returns the body.
fn readyz_becomes(worker: &Worker, want: u16, within: Duration) -> String {
    let start = Instant::now();
    loop {
        let (status, body) = worker.http_get("/readyz");
        if status == want {
            return body;
        }
        assert!(
            start.elapsed() < within,
            "/readyz stayed {status} ({body}), wanted {want}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cache_reconnects_after_redis_restarts_and_readiness_follows_it() {
    let port = free_port();
    let redis = OwnRedis::start(port);
    let cache = Cache::connect(&redis.url(), None).await.unwrap();
    cache.ping().await.unwrap();

    let stack = Stack::get();
    let database_url = stack.fresh_database("e2e_redis_restart").await;
    let worker = Worker::start_with_env(
        &stack,
        &database_url,
        &format!("e2e-redis-restart-{}", std::process::id()),
        &[],
        &[("ELIGIBILITY_REDIS_URL", redis.url().as_str())],
    );
    worker.wait_ready(Duration::from_secs(60));

    redis.stop();
    assert!(cache.ping().await.is_err(), "Redis is down");
    let body = readyz_becomes(&worker, 503, Duration::from_secs(15));
    assert!(body.contains("Redis"), "{body}");

    // The same port again: both the test's cache and the worker's connect again by themselves.
    let _redis = OwnRedis::start(port);
    let start = Instant::now();
    while cache.ping().await.is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "the cache never reconnected"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    readyz_becomes(&worker, 200, Duration::from_secs(15));
}

#[tokio::test(flavor = "multi_thread")]
async fn kafka_client_properties_are_passed_through() {
    let stack = Stack::get();
    let database_url = stack.fresh_database("e2e_kafka_props").await;
    let group = format!("e2e-kafka-props-{}", std::process::id());
    let worker = Worker::start_with_env(
        &stack,
        &database_url,
        &group,
        &[],
        &[("ELIGIBILITY_KAFKA_PROP_CLIENT_ID", "eligibility-e2e")],
    );
    worker.wait_ready(Duration::from_secs(60));
    drop(worker);

    // librdkafka itself judges the property, so an unknown one stops the worker, named.
    let output = stack
        .command(&database_url, &group)
        .arg("evaluator")
        .env(
            "ELIGIBILITY_HTTP_ADDR",
            format!("127.0.0.1:{}", free_port()),
        )
        .env("ELIGIBILITY_KAFKA_PROP_NO_SUCH_PROPERTY", "1")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no.such.property"), "{stderr}");
}

/// A registry whose own store is away answers 5xx for a while (as ours does while PostgreSQL
/// restarts under it): that is an outage to wait out, and once the registry answers again the
/// schemas register — the failed answer is not remembered (the converter keeps failed lookups
/// as answers unless told to forget them; a worker once waited on one for good).
#[tokio::test(flavor = "multi_thread")]
async fn a_registry_answering_500_for_a_while_is_asked_again() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let stack = Stack::get();
    let upstream = stack
        .registry_url
        .strip_prefix("http://")
        .expect("a plain HTTP registry on loopback")
        .trim_end_matches('/')
        .to_string();
    // In front of the registry: the first two connections get a 500, the rest pass through.
    let failing = Arc::new(AtomicUsize::new(2));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let front = listener.local_addr().unwrap();
    let refusals = failing.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut client, _)) = listener.accept().await else {
                return;
            };
            let upstream = upstream.clone();
            let refuse = refusals
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            tokio::spawn(async move {
                if refuse {
                    let mut head = vec![0u8; 65536];
                    let _ = client.read(&mut head).await;
                    let body = r#"{"error_code":50001,"message":"store away"}"#;
                    let reply = format!(
                        "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = client.write_all(reply.as_bytes()).await;
                    return;
                }
                let mut server = tokio::net::TcpStream::connect(&upstream).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            });
        }
    });

    let topics = vec![format!(
        "e2e-500-{}-{}.dlq",
        std::process::id(),
        free_port()
    )];
    let codec = Codec::new(&format!("http://{front}"), &topics);
    for attempt in 1..=2 {
        let away = codec
            .register_all()
            .await
            .expect_err("the registry answers 500");
        assert!(
            fleet::retry::is_transient(&away),
            "attempt {attempt}: a 5xx is an outage to wait out, not a setting to fix: {away:#}"
        );
    }
    assert_eq!(
        failing.load(Ordering::SeqCst),
        0,
        "both refusals were asked for"
    );
    codec
        .register_all()
        .await
        .expect("the registry answers again, and is asked again");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_auto_registration_schemas_are_looked_up_and_a_missing_one_is_named() {
    let stack = Stack::get();
    // A subject no one has registered yet (any `*.dlq` topic has the dead-letter schema).
    let topic = format!("e2e-lookup-{}-{}.dlq", std::process::id(), free_port());
    let topics = vec![topic.clone()];
    let lookup = Codec::with_registration(&stack.registry_url, &topics, Registration::LookUpLatest);
    let missing = lookup.register_all().await.expect_err("nothing registered");
    assert!(
        chain(&missing).contains(&format!("subject {topic}-value has no registered schema")),
        "{missing:#}"
    );

    // Once a release pipeline (here: an auto-registering codec) has registered it, a
    // look-up-only codec writes and reads with it.
    Codec::new(&stack.registry_url, &topics)
        .register_all()
        .await
        .unwrap();
    let lookup = Codec::with_registration(&stack.registry_url, &topics, Registration::LookUpLatest);
    lookup.register_all().await.unwrap();
    let letter = fleet::events::DeadLetter {
        source_topic: "user.metadata.updated".into(),
        source_partition: 3,
        source_offset: 41,
        reason_code: "decode_failed".into(),
        reason: "e2e".into(),
        original_key: Some(b"u-1".to_vec()),
        original_value: None,
    };
    let bytes = lookup.encode(&topic, &letter).await.unwrap();
    let back: fleet::events::DeadLetter = lookup.decode(&bytes).await.unwrap();
    assert_eq!(back.source_offset, 41);
    assert_eq!(back.reason, "e2e");
}

/// The codec writes a record with a writer it keeps per topic (docs/performance.md "CPU per
/// update"), not through the stock converter's `encode_struct`: the bytes must stay the
/// converter's, for every kind of event the fleet publishes (an optional field set and
/// unset, arrays, bytes), and read back equal.
#[tokio::test(flavor = "multi_thread")]
async fn the_codec_writes_the_bytes_the_stock_converter_writes() {
    use fleet::events::*;
    use fleet::topics::*;
    use schema_registry_converter::async_impl::avro::AvroEncoder;
    use schema_registry_converter::async_impl::schema_registry::SrSettings;
    use schema_registry_converter::schema_registry_common::{
        SchemaType, SubjectNameStrategy, SuppliedSchema,
    };
    let stack = Stack::get();
    let converter = AvroEncoder::new(SrSettings::new(stack.registry_url.clone()));
    async fn same_bytes<T>(stack: &Stack, converter: &AvroEncoder, topic: &str, item: T)
    where
        T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let codec = Codec::new(&stack.registry_url, &[topic.to_string()]);
        let ours = codec.encode(topic, &item).await.unwrap();
        let strategy = SubjectNameStrategy::TopicNameStrategyWithSchema(
            topic.to_string(),
            false,
            SuppliedSchema::new(
                None,
                SchemaType::Avro,
                fleet::avro::schema_for(topic).unwrap().to_string(),
            ),
        );
        let theirs = converter.encode_struct(&item, &strategy).await.unwrap();
        assert_eq!(ours, theirs, "{topic}: {item:?}");
        // The second record goes by the kept id and a buffer sized by the first.
        assert_eq!(codec.encode(topic, &item).await.unwrap(), theirs, "{topic}");
        let back: T = codec.decode(&ours).await.unwrap();
        assert_eq!(back, item, "{topic}");
    }
    let computed = |previous: Option<&str>, benefit: Option<&str>| EligibilityComputed {
        idempotency_key: "k:1".into(),
        user_id: "usr_1".into(),
        scheme_id: "sch_a".into(),
        scheme_name: "Scheme A — ಯೋಜನೆ".into(),
        rule_id: "rule_a_001".into(),
        rule_version: 3,
        verdict: "ELIGIBLE".into(),
        match_score: 100,
        previous_verdict: previous.map(str::to_string),
        benefit_estimate: benefit.map(str::to_string),
        evaluation_id: "ev".into(),
        input_hash: "h".repeat(64),
        as_of: "2026-11-27".into(),
    };
    same_bytes(
        &stack,
        &converter,
        ELIGIBILITY_COMPUTED,
        computed(None, None),
    )
    .await;
    same_bytes(
        &stack,
        &converter,
        ELIGIBILITY_COMPUTED,
        computed(Some("PARTIAL_MATCH"), Some("₹6,000 a year")),
    )
    .await;
    let summary = EligibilityBatchComputed {
        idempotency_key: "k:2".into(),
        user_id: "usr_1".into(),
        input_hash: "h".repeat(64),
        as_of: "2026-11-27".into(),
        rules_evaluated: 300,
        total_eligible: 1,
        total_partial: 1,
        results: (0..300)
            .map(|i| SchemeResult {
                scheme_id: format!("sch_{i}").into(),
                verdict: if i % 2 == 0 {
                    "NOT_ELIGIBLE"
                } else {
                    "PARTIAL_MATCH"
                }
                .into(),
                match_score: i % 101,
            })
            .collect(),
    };
    same_bytes(&stack, &converter, ELIGIBILITY_BATCH_COMPUTED, summary).await;
    same_bytes(
        &stack,
        &converter,
        ELIGIBILITY_NEW_MATCH,
        EligibilityNewMatch {
            idempotency_key: "k:3".into(),
            user_id: "usr_1".into(),
            scheme_id: "sch_a".into(),
            scheme_name: "A".into(),
            rule_id: "rule_a_001".into(),
            rule_version: 1,
            match_score: 100,
            benefit: None,
            evaluation_id: "ev".into(),
            input_hash: "h".into(),
            as_of: "2026-11-27".into(),
        },
    )
    .await;
    same_bytes(
        &stack,
        &converter,
        ELIGIBILITY_LOST,
        EligibilityLost {
            idempotency_key: "k:4".into(),
            user_id: "usr_1".into(),
            scheme_id: "sch_a".into(),
            rule_id: "rule_a_001".into(),
            rule_version: 1,
            reason: "income above the limit".into(),
            new_verdict: "NOT_ELIGIBLE".into(),
            match_score: -1,
            input_hash: "h".into(),
            as_of: "2026-11-27".into(),
        },
    )
    .await;
    same_bytes(
        &stack,
        &converter,
        ELIGIBILITY_PARTIAL_MATCH,
        EligibilityPartialMatch {
            idempotency_key: "k:5".into(),
            user_id: "usr_1".into(),
            scheme_id: "sch_a".into(),
            scheme_name: "A".into(),
            rule_id: "rule_a_001".into(),
            rule_version: 1,
            match_score: 66,
            gaps: vec![GapSummary {
                field: "identity.age".into(),
                gap_kind: "threshold".into(),
                description: "d".into(),
                estimated_eligibility_date: Some("2028-01-15".into()),
                closable_by: "waiting".into(),
            }],
            evaluation_id: "ev".into(),
            input_hash: "h".into(),
            as_of: "2026-11-27".into(),
        },
    )
    .await;
    same_bytes(
        &stack,
        &converter,
        "user.metadata.updated.dlq",
        DeadLetter {
            source_topic: USER_METADATA_UPDATED.into(),
            source_partition: 3,
            source_offset: 42,
            reason_code: "decode_failed".into(),
            reason: "r".into(),
            original_key: None,
            original_value: Some(vec![0, 1, 255]),
        },
    )
    .await;
}
