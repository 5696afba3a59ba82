//! What the end-to-end tests share: the local stack's addresses (`scripts/stack.sh`), a fresh
//! database per test, a worker process, and a producer/reader of real Avro records.

#![allow(dead_code)] // each test file uses its own subset

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fleet::avro::Codec;
use fleet::config::KafkaConfig;
use fleet::topics::*;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::{Message, Offset, TopicPartitionList};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The stack's addresses: the environment's `ELIGIBILITY_*`, else `scripts/stack.sh`'s defaults.
pub struct Stack {
    pub brokers: String,
    pub database_url: String,
    pub redis_url: String,
    pub registry_url: String,
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

impl Stack {
    pub fn get() -> Stack {
        let stack = Stack {
            brokers: env_or("ELIGIBILITY_KAFKA_BROKERS", "127.0.0.1:9092"),
            database_url: env_or(
                "ELIGIBILITY_DATABASE_URL",
                "postgres://eligibility:eligibility@127.0.0.1:5432/eligibility?sslmode=disable",
            ),
            redis_url: env_or("ELIGIBILITY_REDIS_URL", "redis://127.0.0.1:6379"),
            registry_url: env_or("ELIGIBILITY_SCHEMA_REGISTRY_URL", "http://127.0.0.1:8081"),
        };
        let port = stack.brokers.rsplit(':').next().unwrap_or("9092");
        assert!(
            std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_ok(),
            "no broker at {}: start the local stack with `scripts/stack.sh up`",
            stack.brokers
        );
        stack
    }

    pub fn kafka(&self) -> KafkaConfig {
        KafkaConfig::plaintext(&self.brokers)
    }

    /// The `eligibility` binary, pointed at this stack, `database_url` and consumer `group`.
    pub fn command(&self, database_url: &str, group: &str) -> Command {
        let mut command = Command::new(eligibility_binary());
        command
            .env("ELIGIBILITY_KAFKA_BROKERS", &self.brokers)
            .env("ELIGIBILITY_DATABASE_URL", database_url)
            .env("ELIGIBILITY_REDIS_URL", &self.redis_url)
            .env("ELIGIBILITY_SCHEMA_REGISTRY_URL", &self.registry_url)
            .env("ELIGIBILITY_CONSUMER_GROUP", group);
        command
    }

    /// A new empty database for one test; its URL.
    pub async fn fresh_database(&self, name: &str) -> String {
        let pool = fleet::postgres::pool(&self.database_url, 1).expect("pool");
        let client = pool.get().await.expect("PostgreSQL answers");
        static SWEPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if !SWEPT.swap(true, std::sync::atomic::Ordering::SeqCst) {
            drop_stale_databases(&client).await;
        }
        let db = format!("{name}_{}", std::process::id());
        for statement in [
            format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
            format!("CREATE DATABASE {db}"),
        ] {
            client
                .batch_execute(&statement)
                .await
                .expect("the stack's role may create databases");
        }
        let (base, query) = self
            .database_url
            .rsplit_once('/')
            .map(|(b, rest)| (b, rest.split_once('?').map(|(_, q)| q)))
            .expect("a URL with a database");
        match query {
            Some(q) => format!("{base}/{db}?{q}"),
            None => format!("{base}/{db}"),
        }
    }
}

/// Drops the databases of test processes that have ended (`e2e_…_<pid>`, see
/// [`Stack::fresh_database`]). A test leaves its database for inspection, but nothing removed
/// them afterwards, and hundreds had piled up on the development machine. Only where `/proc`
/// tells which processes are alive.
async fn drop_stale_databases(client: &deadpool_postgres::Client) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let rows = client
        .query(
            "SELECT datname FROM pg_database WHERE datname LIKE 'e2e\\_%'",
            &[],
        )
        .await
        .expect("PostgreSQL lists its databases");
    for row in rows {
        let name: String = row.get(0);
        let Some(pid) = name.rsplit('_').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let drop = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
        if let Err(e) = client.batch_execute(&drop).await {
            eprintln!("(left database {name} of an ended test run: {e})");
        }
    }
}

/// A name no other run or test uses: `prefix`, the process id and the time in nanoseconds.
pub fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{}-{nanos}", std::process::id())
}

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `eligibility` binary of this build: `target/<profile>/eligibility`, beside the `deps/`
/// directory this test runs from. `cargo test --workspace` builds it (its package has tests of
/// its own); one older than the sources it is built from is refused rather than tested.
pub fn eligibility_binary() -> PathBuf {
    static CHECKED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CHECKED
        .get_or_init(|| {
            let exe = std::env::current_exe().expect("the test's own path");
            let profile_dir = exe
                .parent()
                .and_then(Path::parent)
                .expect("target/<profile>/deps/<test>");
            let binary = profile_dir.join("eligibility");
            let built = modified(&binary).unwrap_or_else(|| {
                panic!(
                    "no {}: build it with `cargo build -p eligibility` (or run `cargo test --workspace`)",
                    binary.display()
                )
            });
            let sources = [
                "workers/eligibility/src",
                "shared/engine/src",
                "shared/oracle/src",
                "shared/explain/src",
                "shared/fleet/src",
                "kernels/src",
            ];
            let newest = sources
                .iter()
                .filter_map(|dir| newest_source(&repo().join(dir)))
                .max();
            assert!(
                newest.is_none_or(|newest| built >= newest),
                "{} is older than its sources: rebuild it with `cargo build -p eligibility`",
                binary.display()
            );
            binary
        })
        .clone()
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The newest modification time of a `.rs` file under `dir`.
fn newest_source(dir: &Path) -> Option<std::time::SystemTime> {
    let mut newest = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let time = if path.is_dir() {
            newest_source(&path)
        } else if path.extension().is_some_and(|e| e == "rs") {
            modified(&path)
        } else {
            None
        };
        newest = newest.max(time);
    }
    newest
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// An `eligibility evaluator` process.
pub struct Worker {
    pub child: Child,
    pub http_port: u16,
}

impl Worker {
    pub fn start(stack: &Stack, database_url: &str, group: &str, args: &[&str]) -> Worker {
        Worker::start_with_env(stack, database_url, group, args, &[])
    }

    /// An evaluator with extra (or overriding) environment variables.
    pub fn start_with_env(
        stack: &Stack,
        database_url: &str,
        group: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Worker {
        let http_port = free_port();
        let child = stack
            .command(database_url, group)
            .arg("evaluator")
            .args(args)
            .envs(env.iter().copied())
            .env("ELIGIBILITY_HTTP_ADDR", format!("127.0.0.1:{http_port}"))
            .env("ELIGIBILITY_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the eligibility binary starts");
        Worker { child, http_port }
    }

    /// An `eligibility explainer` process. The LLM variables of the test's own environment are
    /// not passed on; `env` sets the ones this worker gets, `args` its flags.
    pub fn start_explainer(
        stack: &Stack,
        database_url: &str,
        group: &str,
        env: &[(&str, &str)],
        args: &[&str],
    ) -> Worker {
        let http_port = free_port();
        let mut command = stack.command(database_url, group);
        command
            .arg("explainer")
            .args(args)
            .env_remove("ELIGIBILITY_LLM_BASE_URL")
            .env_remove("ELIGIBILITY_LLM_MODEL")
            .env_remove("ELIGIBILITY_LLM_API_KEY")
            .env("ELIGIBILITY_HTTP_ADDR", format!("127.0.0.1:{http_port}"))
            .env("ELIGIBILITY_LOG", "info");
        for (name, value) in env {
            command.env(name, value);
        }
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the eligibility binary starts");
        Worker { child, http_port }
    }

    /// An `eligibility api serve` process on `api_port`, its tokens checked with the HS256
    /// `secret`; `env` adds or overrides settings.
    pub fn start_api(
        stack: &Stack,
        database_url: &str,
        api_port: u16,
        secret: &str,
        env: &[(&str, &str)],
    ) -> Worker {
        let http_port = free_port();
        let child = stack
            .command(database_url, "unused-by-the-api")
            .args(["api", "serve"])
            .env("ELIGIBILITY_API_ADDR", format!("127.0.0.1:{api_port}"))
            .env("ELIGIBILITY_API_JWT_SECRET", secret)
            // The admin routes answer no one unless allowed: the tests' clients are local.
            .env("ELIGIBILITY_API_ADMIN_CIDRS", "127.0.0.1/32")
            .env("ELIGIBILITY_HTTP_ADDR", format!("127.0.0.1:{http_port}"))
            .env("ELIGIBILITY_LOG", "info")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the eligibility binary starts");
        Worker { child, http_port }
    }

    pub fn http_get(&self, path: &str) -> (u16, String) {
        use std::io::{Read, Write};
        let mut stream =
            std::net::TcpStream::connect(("127.0.0.1", self.http_port)).expect("worker HTTP");
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status = response[9..12].parse().unwrap_or(0);
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        (status, body)
    }

    /// Waits until `/readyz` answers 200.
    pub fn wait_ready(&self, within: Duration) {
        let start = Instant::now();
        while start.elapsed() < within {
            if std::net::TcpStream::connect(("127.0.0.1", self.http_port)).is_ok()
                && self.http_get("/readyz").0 == 200
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("the worker was not ready within {within:?}");
    }

    /// SIGKILL: no graceful shutdown, the batch in flight is abandoned.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM and wait; returns the exit status code.
    pub fn terminate(mut self) -> Option<i32> {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        self.child.wait().ok().and_then(|s| s.code())
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Kafka {
    pub kafka: KafkaConfig,
    pub codec: Codec,
    producer: rdkafka::producer::FutureProducer,
}

pub fn all_topics() -> Vec<String> {
    partition_map()
        .all_topics()
        .into_iter()
        .map(|(t, _)| t)
        .filter(|t| fleet::avro::schema_for(t).is_some())
        .collect()
}

impl Kafka {
    pub fn new(stack: &Stack) -> Kafka {
        let kafka = stack.kafka();
        Kafka {
            codec: Codec::new(&stack.registry_url, &all_topics()),
            producer: fleet::kafka::producer(&kafka).expect("producer"),
            kafka,
        }
    }

    /// Sends `item` to `partition`, or where the client's default partitioner puts `key` (a
    /// stock producer); returns the partition it landed on.
    pub async fn send(
        &self,
        topic: &str,
        partition: Option<i32>,
        key: &str,
        item: &impl Serialize,
    ) -> i32 {
        let payload = self.codec.encode(topic, item).await.expect("encodes");
        self.send_raw(topic, partition, key, payload).await
    }

    /// Sends a profile (with its `user_id`) on `user.metadata.updated`, on the partition the
    /// partition map gives its user, as of `as_of`.
    pub async fn send_profile(&self, profile: &serde_json::Value, as_of: &str) -> i32 {
        let user = profile["user_id"]
            .as_str()
            .expect("the profile has a user_id");
        self.send(
            USER_METADATA_UPDATED,
            Some(partition_of(profile)),
            user,
            &profile_update(user, profile, as_of),
        )
        .await
    }

    pub async fn send_raw(
        &self,
        topic: &str,
        partition: Option<i32>,
        key: &str,
        payload: Vec<u8>,
    ) -> i32 {
        use rdkafka::producer::FutureRecord;
        let mut record = FutureRecord::to(topic).key(key).payload(&payload);
        if let Some(p) = partition {
            record = record.partition(p);
        }
        self.producer
            .send(record, Duration::from_secs(10))
            .await
            .map_err(|(e, _)| e)
            .expect("the broker acknowledges")
            .partition
    }

    /// The end offsets of every partition of `topics` now: a reader from here sees only what
    /// this test causes.
    pub fn marks(&self, topics: &[&str]) -> TopicPartitionList {
        let consumer: StreamConsumer = fleet::kafka::client_config(&self.kafka)
            .set("group.id", "e2e-marks")
            .create()
            .unwrap();
        let mut list = TopicPartitionList::new();
        for topic in topics {
            let partitions = partition_map()
                .all_topics()
                .into_iter()
                .find(|(t, _)| t == topic)
                .map(|(_, p)| p)
                .expect("a topic of the map");
            for p in 0..partitions {
                let (_, high) = consumer
                    .fetch_watermarks(topic, p, Duration::from_secs(10))
                    .expect("watermarks");
                list.add_partition_offset(topic, p, Offset::Offset(high))
                    .unwrap();
            }
        }
        list
    }

    /// Pre-commits `marks` as `group`'s offsets in the test's database, so a new worker skips
    /// every record older than the test (the worker resumes from PostgreSQL).
    pub async fn start_group_at(
        &self,
        database_url: &str,
        group: &str,
        marks: &TopicPartitionList,
    ) {
        let pool = fleet::postgres::pool(database_url, 1).unwrap();
        fleet::postgres::migrate(&pool).await.unwrap();
        let offsets: fleet::offsets::Offsets = marks
            .elements()
            .iter()
            .filter_map(|e| match e.offset() {
                Offset::Offset(o) => Some(((e.topic().to_string(), e.partition()), o)),
                _ => None,
            })
            .collect();
        fleet::offsets::start_at(&pool, group, &offsets)
            .await
            .unwrap();
    }

    /// Reads records from `marks` on, decoding them, until `done` says so or `within` passes.
    pub async fn read_until<T: DeserializeOwned>(
        &self,
        marks: &TopicPartitionList,
        topic: &str,
        within: Duration,
        mut done: impl FnMut(&[T]) -> bool,
    ) -> Vec<T> {
        let mut list = TopicPartitionList::new();
        for e in marks.elements().iter().filter(|e| e.topic() == topic) {
            list.add_partition_offset(topic, e.partition(), e.offset())
                .unwrap();
        }
        let consumer = fleet::kafka::assigned_consumer(&self.kafka, &list).unwrap();
        let mut items = Vec::new();
        let deadline = Instant::now() + within;
        while !done(&items) && Instant::now() < deadline {
            match tokio::time::timeout(Duration::from_millis(500), consumer.recv()).await {
                Ok(Ok(message)) => {
                    let payload = message.payload().unwrap_or_default();
                    items.push(self.codec.decode::<T>(payload).await.expect("decodes"));
                }
                Ok(Err(e)) => panic!("reading {topic}: {e}"),
                Err(_) => {}
            }
        }
        items
    }
}

/// Polls `check` until it returns Some or `within` passes.
pub async fn eventually<T, F, Fut>(within: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Counts rows of a query with no parameters.
pub async fn count(pool: &deadpool_postgres::Pool, sql: &str) -> i64 {
    let client = pool.get().await.unwrap();
    client.query_one(sql, &[]).await.unwrap().get(0)
}

pub fn profile_json(user_id: &str, age: i64, bpl: bool, state: &str) -> serde_json::Value {
    serde_json::json!({
        "user_id": user_id,
        "identity": {
            "age": age, "gender": "female", "social_category": "obc",
            "verified_documents": ["aadhaar", "ration_card", "bpl_card", "bank_passbook"]
        },
        "demographics": {"state": state, "district": "mysuru", "urban_rural": "rural"},
        "economic": {
            "annual_income": 96000, "bpl_status": bpl, "land_holding": 0.8,
            "occupation": "agricultural_labourer", "is_income_tax_payer": false,
            "has_bank_account": true, "is_government_employee": false
        },
        "eligibility": {"active_schemes": []}
    })
}

pub fn profile_update(
    user_id: &str,
    profile: &serde_json::Value,
    as_of: &str,
) -> fleet::events::ProfileUpdate {
    fleet::events::ProfileUpdate {
        event_id: format!("{user_id}-{}", engine::hash::jcs_sha256(profile)),
        user_id: user_id.to_string(),
        profile: profile.to_string(),
        as_of: Some(as_of.to_string()),
    }
}

/// Where a producer following the partition map sends a user's profile.
pub fn partition_of(profile: &serde_json::Value) -> i32 {
    let state = profile["demographics"]["state"].as_str();
    partition_map().partition_for(state, profile["user_id"].as_str().unwrap())
}

pub type Counts = HashMap<String, usize>;

/// A fresh database and consumer group starting at the ends of `topics`, and one evaluator on
/// them (with `env` added): what a test of the fleet around one worker needs.
pub struct Fleet {
    pub stack: Stack,
    pub kafka: Kafka,
    pub database_url: String,
    pub group: String,
    pub marks: TopicPartitionList,
    pub pool: deadpool_postgres::Pool,
    pub evaluator: Worker,
}

impl Fleet {
    pub async fn start(name: &str, topics: &[&str], env: &[(&str, &str)]) -> Fleet {
        let stack = Stack::get();
        let kafka = Kafka::new(&stack);
        let database_url = stack.fresh_database(name).await;
        let group = unique(name);
        let marks = kafka.marks(topics);
        kafka.start_group_at(&database_url, &group, &marks).await;
        let pool = fleet::postgres::pool(&database_url, 2).unwrap();
        let evaluator = Worker::start_with_env(&stack, &database_url, &group, &[], env);
        evaluator.wait_ready(Duration::from_secs(60));
        Fleet {
            stack,
            kafka,
            database_url,
            group,
            marks,
            pool,
            evaluator,
        }
    }

    /// Waits until the evaluator has stored verdicts for each of `users`.
    pub async fn verdicts_stored(&self, users: &[&str]) {
        for user in users {
            eventually(Duration::from_secs(60), "the verdicts stored", || async {
                let client = self.pool.get().await.unwrap();
                let rows = client
                    .query("SELECT 1 FROM user_verdicts WHERE user_id = $1", &[user])
                    .await
                    .unwrap();
                (!rows.is_empty()).then_some(())
            })
            .await;
        }
    }

    /// Sends each (user, age, state) as a BPL citizen's profile on `as_of`, on its partition.
    pub async fn send_citizens(&self, citizens: &[(&str, i64, &str)], as_of: &str) {
        for &(user, age, state) in citizens {
            self.kafka
                .send_profile(&profile_json(user, age, true, state), as_of)
                .await;
        }
    }
}

/// A scrape of the worker's `/metrics` that has every one of `names`. A gauge appears at its
/// first refresh (the lag gauge within a second or so of the assignment), so the scrape is
/// retried for a few seconds before a missing name fails the test.
pub async fn scrape_with(worker: &Worker, names: &[String]) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let (status, metrics) = worker.http_get("/metrics");
        assert_eq!(status, 200);
        let missing: Vec<&String> = names
            .iter()
            .filter(|n| !metrics.contains(n.as_str()))
            .collect();
        if missing.is_empty() {
            return metrics;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "/metrics lacks {missing:?}:\n{metrics}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The series names docs/metrics.md promises for a component (`E` evaluator, `X` explainer,
/// `A` the API):
/// a histogram as its `_bucket` series.
pub fn contract_metrics(component: &str) -> Vec<String> {
    let page = std::fs::read_to_string(repo().join("docs/metrics.md")).unwrap();
    let rows: Vec<&str> = page
        .lines()
        .filter(|l| l.starts_with("| `eligibility_"))
        .collect();
    assert!(
        rows.len() >= 20,
        "the contract table was not read: {} rows",
        rows.len()
    );
    let mut names = Vec::new();
    for line in rows {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (name, kind, by) = (cells[1].trim_matches('`'), cells[2], cells[4]);
        if by.split_whitespace().any(|c| c == component) {
            names.push(match kind {
                "histogram" => format!("{name}_bucket"),
                _ => name.to_string(),
            });
        }
    }
    assert!(!names.is_empty(), "no metric is exported by {component}");
    names
}

/// A TCP proxy to a service on loopback that a test can cut (every connection dropped, new
/// ones refused) and restore: one worker's dependency goes away while the shared service, which
/// other tests use, keeps running.
pub struct Proxy {
    pub port: u16,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    kill: std::sync::Arc<tokio::sync::Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    pub async fn start(target: u16) -> Proxy {
        use std::sync::atomic::Ordering::SeqCst;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let kill = std::sync::Arc::new(tokio::sync::Notify::new());
        let (is_cut, killed) = (cut.clone(), kill.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut inbound, _)) = listener.accept().await else {
                    continue;
                };
                if is_cut.load(SeqCst) {
                    continue;
                }
                let killed = killed.clone();
                tokio::spawn(async move {
                    let Ok(mut outbound) =
                        tokio::net::TcpStream::connect(("127.0.0.1", target)).await
                    else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = killed.notified() => {}
                    }
                });
            }
        });
        Proxy {
            port,
            cut,
            kill,
            task,
        }
    }

    /// Drops every open connection and refuses new ones until [`Proxy::restore`].
    pub fn cut(&self) {
        self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
        self.kill.notify_waiters();
    }

    pub fn restore(&self) {
        self.cut.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A Kafka-protocol broker of a test's own (the stack's nisshi, in memory, on a free port),
/// reached only through a [`Proxy`] that it advertises to clients: cutting the proxy cuts every
/// connection a client has to it, as a broker outage would, while the stack's broker that other
/// tests use keeps running. Its topics are created as the stack's are.
pub struct Broker {
    pub proxy: Proxy,
    child: Child,
}

impl Broker {
    pub async fn start() -> Broker {
        let nisshi = std::env::var("ELIGIBILITY_STACK_NISSHI").expect(
            "ELIGIBILITY_STACK_NISSHI names the stack's broker: eval \"$(scripts/stack.sh env)\"",
        );
        let port = free_port();
        let proxy = Proxy::start(port).await;
        let child = Command::new(nisshi)
            .arg("broker")
            .arg("--listener-url")
            .arg(format!("tcp://127.0.0.1:{port}"))
            .arg("--advertised-listener-url")
            .arg(format!("tcp://127.0.0.1:{}", proxy.port))
            .arg("--storage-engine")
            .arg("memory://nisshi/")
            .env_remove("SCHEMA_REGISTRY")
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the stack's nisshi starts");
        let broker = Broker { proxy, child };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the test's broker did not listen on {port}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let created = Command::new(eligibility_binary())
            .args(["topics", "create", "--replication-factor", "1"])
            .env("ELIGIBILITY_KAFKA_BROKERS", broker.address())
            .stdout(Stdio::null())
            .status()
            .expect("eligibility topics create runs");
        assert!(
            created.success(),
            "creating the topics on the test's broker"
        );
        broker
    }

    /// The address clients use: the proxy's.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.proxy.port)
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every topic the two workers read or write.
pub fn fleet_topics() -> Vec<String> {
    let mut topics: Vec<String> = EVALUATOR_INPUTS
        .iter()
        .chain(&EXPLAINER_INPUTS)
        .flat_map(|t| [t.to_string(), dead_letter_topic(t)])
        .collect();
    topics.extend(
        [
            ELIGIBILITY_COMPUTED,
            ELIGIBILITY_BATCH_COMPUTED,
            ELIGIBILITY_LOST,
            ELIGIBILITY_EXPLAINED,
            RULE_CONFLICT_DETECTED,
        ]
        .map(str::to_string),
    );
    topics
}

/// The value of one exact series (`name{labels}`) in `text`, 0 when absent.
pub fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0.0)
}

static BUNDLED: std::sync::LazyLock<(engine::Catalogue, engine::RuleSet)> =
    std::sync::LazyLock::new(|| {
        let catalogue = engine::Catalogue::bundled();
        let rules = engine::RuleSet::bundled(&catalogue).expect("the bundled corpus loads");
        (catalogue, rules)
    });

/// The bundled field catalogue.
pub fn catalogue() -> &'static engine::Catalogue {
    &BUNDLED.0
}

/// The bundled corpus, parsed once per test binary (in a debug build parsing it takes most of a
/// second: a test that needs it per citizen spent minutes on it).
pub fn bundled_rules() -> &'static engine::RuleSet {
    &BUNDLED.1
}

/// A bundled rule by id.
pub fn rule(rule_id: &str) -> &'static engine::Rule {
    BUNDLED.1.get(rule_id).expect("a bundled rule")
}

/// A profile of the bundled catalogue from its JSON.
pub fn profile(json: &serde_json::Value) -> engine::Profile {
    engine::Profile::from_json(catalogue(), json, "test").expect("a valid profile")
}
