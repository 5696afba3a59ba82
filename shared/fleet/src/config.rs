//! Worker configuration: every `ELIGIBILITY_*` variable is a command-line argument with an
//! `env` fallback, so each subcommand's `--help` lists its flags and variables
//! (docs/configuration.md is checked against them by `workers/eligibility/tests/cli.rs`).
//!
//! - [`KafkaArgs`], [`DatabaseArgs`]: the connection settings commands share;
//!   [`WorkerArgs`]: everything a long-running worker reads, flattened into `evaluator`,
//!   `explainer` and `replay`.
//! - `…Args::config()` checks what clap cannot (a required variable, SASL's companions, an LLM
//!   URL) and gives the typed [`Config`] / [`KafkaConfig`]; a missing or bad value is an error
//!   naming the variable.
//! - [`unknown_variables`]: `ELIGIBILITY_*` names no argument reads, so that a typo does not
//!   pass silently.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{ArgAction, Args, CommandFactory, Parser};
use thiserror::Error;

pub use engine::batch::EngineChoice;

#[derive(Debug, Error, PartialEq)]
pub enum ConfigError {
    #[error("{0} is required but not set")]
    Missing(&'static str),
    #[error("{name}={value:?} is invalid: {reason}")]
    Invalid {
        name: &'static str,
        value: String,
        reason: String,
    },
}

fn invalid(name: &'static str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        name,
        value: value.to_string(),
        reason: reason.into(),
    }
}

fn required(value: &Option<String>, name: &'static str) -> Result<String, ConfigError> {
    value
        .clone()
        .filter(|v| !v.is_empty())
        .ok_or(ConfigError::Missing(name))
}

/// Kafka security (`ELIGIBILITY_KAFKA_SECURITY_PROTOCOL` and friends).
#[derive(Debug, Clone, PartialEq)]
pub struct KafkaSecurity {
    pub protocol: &'static str,
    pub sasl_mechanism: Option<String>,
    pub sasl_username: Option<String>,
    pub sasl_password: Option<String>,
    pub ssl_ca_location: Option<String>,
}

#[derive(Debug, Clone)]
pub struct KafkaConfig {
    pub brokers: String,
    pub security: KafkaSecurity,
    /// Client properties passed to librdkafka as given, after every other setting
    /// (`ELIGIBILITY_KAFKA_PROP_*`): OAUTHBEARER, mTLS, timeouts, anything the variables above
    /// do not name.
    pub properties: Vec<(String, String)>,
}

impl KafkaConfig {
    /// Plaintext brokers and no extra properties (tests and tools on the local stack).
    pub fn plaintext(brokers: &str) -> KafkaConfig {
        KafkaConfig {
            brokers: brokers.to_string(),
            security: KafkaSecurity {
                protocol: "plaintext",
                sasl_mechanism: None,
                sasl_username: None,
                sasl_password: None,
                ssl_ca_location: None,
            },
            properties: Vec::new(),
        }
    }
}

/// The prefix of the Kafka client pass-through variables (read from the environment: their
/// names are open-ended, so they are not arguments).
pub const KAFKA_PROP_PREFIX: &str = "ELIGIBILITY_KAFKA_PROP_";

/// The librdkafka property a pass-through variable names: the part after the prefix,
/// lower-cased, `_` read as `.`, `__` as `_` and `___` as `-` (the convention of the Kafka
/// container images): `SASL_OAUTHBEARER_TOKEN__ENDPOINT__URL` is
/// `sasl.oauthbearer.token_endpoint_url`.
pub fn kafka_property_name(variable_suffix: &str) -> String {
    variable_suffix
        .to_lowercase()
        .replace("___", "\u{0}")
        .replace("__", "\u{1}")
        .replace('_', ".")
        .replace('\u{1}', "_")
        .replace('\u{0}', "-")
}

/// The `ELIGIBILITY_KAFKA_PROP_*` variables of `environment`, as librdkafka properties.
pub fn kafka_properties(
    environment: impl IntoIterator<Item = (String, String)>,
) -> Vec<(String, String)> {
    let mut properties: Vec<(String, String)> = environment
        .into_iter()
        .filter_map(|(name, value)| {
            let suffix = name.strip_prefix(KAFKA_PROP_PREFIX)?;
            Some((kafka_property_name(suffix), value))
        })
        .collect();
    properties.sort();
    properties
}

/// Brokers and security.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Kafka (any other librdkafka property: ELIGIBILITY_KAFKA_PROP_*)")]
pub struct KafkaArgs {
    /// Bootstrap servers, host:port,… (librdkafka bootstrap.servers).
    #[arg(long, env = "ELIGIBILITY_KAFKA_BROKERS", value_name = "HOST:PORT,…")]
    pub kafka_brokers: Option<String>,
    /// Security protocol (librdkafka security.protocol).
    #[arg(long, env = "ELIGIBILITY_KAFKA_SECURITY_PROTOCOL", default_value = "plaintext",
          value_parser = ["plaintext", "ssl", "sasl_plaintext", "sasl_ssl"])]
    pub kafka_security_protocol: String,
    /// SASL mechanism, with a sasl_* protocol.
    #[arg(long, env = "ELIGIBILITY_KAFKA_SASL_MECHANISM",
          value_parser = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])]
    pub kafka_sasl_mechanism: Option<String>,
    /// SASL user name, with a sasl_* protocol.
    #[arg(long, env = "ELIGIBILITY_KAFKA_SASL_USERNAME")]
    pub kafka_sasl_username: Option<String>,
    /// SASL password, with a sasl_* protocol (secret).
    #[arg(long, env = "ELIGIBILITY_KAFKA_SASL_PASSWORD", hide_env_values = true)]
    pub kafka_sasl_password: Option<String>,
    /// PEM CA bundle for the brokers' certificates (default: the system's).
    #[arg(long, env = "ELIGIBILITY_KAFKA_SSL_CA_LOCATION", value_name = "FILE")]
    pub kafka_ssl_ca_location: Option<String>,
}

impl KafkaArgs {
    /// The Kafka settings, with the `ELIGIBILITY_KAFKA_PROP_*` variables of this process.
    pub fn config(&self) -> Result<KafkaConfig, ConfigError> {
        let brokers = required(&self.kafka_brokers, "ELIGIBILITY_KAFKA_BROKERS")?;
        let protocol = match self.kafka_security_protocol.as_str() {
            "ssl" => "ssl",
            "sasl_plaintext" => "sasl_plaintext",
            "sasl_ssl" => "sasl_ssl",
            _ => "plaintext",
        };
        let mut security = KafkaSecurity {
            protocol,
            sasl_mechanism: None,
            sasl_username: None,
            sasl_password: None,
            ssl_ca_location: self.kafka_ssl_ca_location.clone(),
        };
        if protocol.starts_with("sasl") {
            security.sasl_mechanism = Some(required(
                &self.kafka_sasl_mechanism,
                "ELIGIBILITY_KAFKA_SASL_MECHANISM",
            )?);
            security.sasl_username = Some(required(
                &self.kafka_sasl_username,
                "ELIGIBILITY_KAFKA_SASL_USERNAME",
            )?);
            security.sasl_password = Some(required(
                &self.kafka_sasl_password,
                "ELIGIBILITY_KAFKA_SASL_PASSWORD",
            )?);
        }
        Ok(KafkaConfig {
            brokers,
            security,
            properties: kafka_properties(std::env::vars()),
        })
    }
}

/// PostgreSQL.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "PostgreSQL")]
pub struct DatabaseArgs {
    /// PostgreSQL 14+ URL, postgres://user:password@host:5432/db?sslmode=verify-full (secret).
    #[arg(
        long,
        env = "ELIGIBILITY_DATABASE_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub database_url: Option<String>,
    /// PEM CA certificate PostgreSQL's TLS certificate is verified against (default: the
    /// system's trust store).
    #[arg(long, env = "ELIGIBILITY_DATABASE_CA_FILE", value_name = "FILE")]
    pub database_ca_file: Option<PathBuf>,
}

impl DatabaseArgs {
    pub fn url(&self) -> Result<String, ConfigError> {
        required(&self.database_url, "ELIGIBILITY_DATABASE_URL")
    }
}

#[derive(Debug, Clone)]
pub struct LlmConfig {
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
}

/// Whether rule versions need an approved proposal to go live (docs/releases.md, "Review").
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RuleReview {
    /// Every valid version on `policy.rules.updated` goes live on arrival (a development stack).
    Off,
    /// A version goes live only when an approved proposal has its exact document; any other is
    /// stored as a proposal and changes nothing.
    Required,
}

/// Everything a long-running worker reads.
#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    /// Listen address of /metrics, /healthz and /readyz.
    #[arg(long, env = "ELIGIBILITY_HTTP_ADDR", default_value = "0.0.0.0:9464")]
    pub http_addr: SocketAddr,
    /// The batch engine of rule changes: auto | cpu | gpu.
    #[arg(long, env = "ELIGIBILITY_ENGINE", default_value = "auto")]
    pub engine: EngineChoice,
    /// Under auto, the (citizen, rule) pairs from which a batch goes to the GPU (the measured
    /// crossover: kernels/README.md, "Figures").
    #[arg(long, env = "ELIGIBILITY_GPU_MIN_PAIRS", default_value_t = 48_000_000)]
    pub gpu_min_pairs: usize,
    /// With a GPU in use, profile micro-batches of at least this many records are evaluated
    /// on it before their passes (the crossover over the bundled corpus' 48 rules: micro-batches
    /// stay on the CPU unless set lower; kernels/README.md, "Figures").
    #[arg(
        long,
        env = "ELIGIBILITY_GPU_MIN_PROFILES",
        default_value_t = 1_000_000
    )]
    pub gpu_min_profiles: usize,
    /// Rule corpus seeding a new database (default: the bundled one).
    #[arg(long, env = "ELIGIBILITY_RULES_DIR", value_name = "DIR")]
    pub rules_dir: Option<PathBuf>,
    /// Rule versions from policy.rules.updated: off (live on arrival) | required (only approved
    /// proposals go live; the others are stored as proposals).
    #[arg(
        long,
        env = "ELIGIBILITY_RULE_REVIEW",
        value_enum,
        default_value = "off"
    )]
    pub rule_review: RuleReview,
    /// Log filter (tracing EnvFilter), e.g. info,eligibility=debug.
    #[arg(long, env = "ELIGIBILITY_LOG", default_value = "info")]
    pub log: String,
    /// Kafka consumer group (default: eligibility-evaluator / eligibility-explainer).
    #[arg(long, env = "ELIGIBILITY_CONSUMER_GROUP")]
    pub consumer_group: Option<String>,
    /// Topics to subscribe to, a subset of the subcommand's inputs (comma-separated; the same
    /// on every member of a group).
    #[arg(long, env = "ELIGIBILITY_INPUT_TOPICS", value_delimiter = ',')]
    pub input_topics: Option<Vec<String>>,
    #[command(flatten)]
    pub kafka: KafkaArgs,
    #[command(flatten)]
    pub database: DatabaseArgs,
    /// Redis 6+ URL, redis:// or rediss:// (secret).
    #[arg(
        long,
        env = "ELIGIBILITY_REDIS_URL",
        hide_env_values = true,
        value_name = "URL",
        help_heading = "Redis"
    )]
    pub redis_url: Option<String>,
    /// PEM CA certificate for rediss:// (replaces the system's trust store for Redis).
    #[arg(
        long,
        env = "ELIGIBILITY_REDIS_CA_FILE",
        value_name = "FILE",
        help_heading = "Redis"
    )]
    pub redis_ca_file: Option<PathBuf>,
    /// Confluent-compatible schema registry base URL (may embed credentials: secret).
    #[arg(
        long,
        env = "ELIGIBILITY_SCHEMA_REGISTRY_URL",
        hide_env_values = true,
        value_name = "URL",
        help_heading = "Schema registry"
    )]
    pub schema_registry_url: Option<String>,
    /// Register the Avro schemas at start (true), or only look up the latest registered
    /// versions, which must be this build's (false: read-only registry credentials).
    #[arg(long, env = "ELIGIBILITY_SCHEMA_AUTO_REGISTER", default_value_t = true,
          action = ArgAction::Set, value_name = "true|false", help_heading = "Schema registry")]
    pub schema_auto_register: bool,
    /// OpenAI-compatible base URL ending in /v1 (explainer; unset: template explanations).
    #[arg(
        long,
        env = "ELIGIBILITY_LLM_BASE_URL",
        value_name = "URL",
        help_heading = "LLM"
    )]
    pub llm_base_url: Option<String>,
    /// Model name sent in each request, with the base URL.
    #[arg(long, env = "ELIGIBILITY_LLM_MODEL", help_heading = "LLM")]
    pub llm_model: Option<String>,
    /// Bearer token for the LLM endpoint (secret).
    #[arg(
        long,
        env = "ELIGIBILITY_LLM_API_KEY",
        hide_env_values = true,
        help_heading = "LLM"
    )]
    pub llm_api_key: Option<String>,
}

/// Everything a long-running worker runs with, checked.
#[derive(Debug, Clone)]
pub struct Config {
    pub kafka: KafkaConfig,
    pub database_url: String,
    /// `ELIGIBILITY_DATABASE_CA_FILE`: a PEM CA that PostgreSQL's TLS certificate is checked against.
    pub database_ca_file: Option<PathBuf>,
    pub redis_url: String,
    /// `ELIGIBILITY_REDIS_CA_FILE`: a PEM CA for `rediss://`.
    pub redis_ca_file: Option<PathBuf>,
    pub schema_registry_url: String,
    /// `ELIGIBILITY_SCHEMA_AUTO_REGISTER`: register the Avro schemas at start (true), or only
    /// look up the versions already registered (false: read-only registry credentials).
    pub schema_auto_register: bool,
    pub llm: Option<LlmConfig>,
    pub http_addr: SocketAddr,
    /// `ELIGIBILITY_ENGINE`: which engine evaluates batches.
    pub engine: EngineChoice,
    /// `ELIGIBILITY_GPU_MIN_PAIRS`: from how many (citizen, rule) pairs `auto` takes the GPU.
    pub gpu_min_pairs: usize,
    /// `ELIGIBILITY_GPU_MIN_PROFILES`: from how many records a profile micro-batch goes to the
    /// GPU (when the engine has one).
    pub gpu_min_profiles: usize,
    pub rules_dir: Option<PathBuf>,
    /// `ELIGIBILITY_RULE_REVIEW`.
    pub rule_review: RuleReview,
    pub log: String,
    pub consumer_group: Option<String>,
    pub input_topics: Option<Vec<String>>,
}

impl WorkerArgs {
    pub fn config(&self) -> Result<Config, ConfigError> {
        let llm = match self.llm_base_url.as_deref().filter(|u| !u.is_empty()) {
            None => None,
            Some(base_url) => {
                if !base_url.starts_with("http://") && !base_url.starts_with("https://") {
                    return Err(invalid(
                        "ELIGIBILITY_LLM_BASE_URL",
                        base_url,
                        "expected an http:// or https:// URL ending in /v1",
                    ));
                }
                Some(LlmConfig {
                    base_url: base_url.trim_end_matches('/').to_string(),
                    model: required(&self.llm_model, "ELIGIBILITY_LLM_MODEL")?,
                    api_key: self.llm_api_key.clone().filter(|k| !k.is_empty()),
                })
            }
        };
        let input_topics = self.input_topics.as_ref().map(|topics| {
            topics
                .iter()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .collect()
        });
        Ok(Config {
            kafka: self.kafka.config()?,
            database_url: self.database.url()?,
            database_ca_file: self.database.database_ca_file.clone(),
            redis_url: required(&self.redis_url, "ELIGIBILITY_REDIS_URL")?,
            redis_ca_file: self.redis_ca_file.clone(),
            schema_registry_url: required(
                &self.schema_registry_url,
                "ELIGIBILITY_SCHEMA_REGISTRY_URL",
            )?,
            schema_auto_register: self.schema_auto_register,
            llm,
            http_addr: self.http_addr,
            engine: self.engine,
            gpu_min_pairs: self.gpu_min_pairs,
            gpu_min_profiles: self.gpu_min_profiles,
            rules_dir: self.rules_dir.clone(),
            rule_review: self.rule_review,
            log: self.log.clone(),
            consumer_group: self.consumer_group.clone().filter(|g| !g.is_empty()),
            input_topics,
        })
    }
}

/// Every `ELIGIBILITY_*` variable an argument reads.
pub fn known_variables() -> Vec<String> {
    #[derive(Parser)]
    struct All {
        #[command(flatten)]
        worker: WorkerArgs,
    }
    All::command()
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|v| v.to_string_lossy().into_owned())
        .collect()
}

/// The `ELIGIBILITY_*` names of `environment` that neither a worker argument nor one of
/// `also_known` (a subcommand's own) reads (the local stack's `ELIGIBILITY_STACK_*` and the
/// Kafka pass-through excepted): a typo, reported at start.
pub fn unknown_variables(
    environment: impl IntoIterator<Item = (String, String)>,
    also_known: &[String],
) -> Vec<String> {
    let mut known = known_variables();
    known.extend_from_slice(also_known);
    environment
        .into_iter()
        .map(|(name, _)| name)
        .filter(|k| {
            k.starts_with("ELIGIBILITY_")
                && !known.contains(k)
                && !k.starts_with("ELIGIBILITY_STACK_")
                && !k.starts_with(KAFKA_PROP_PREFIX)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Parser)]
    struct Worker {
        #[command(flatten)]
        worker: WorkerArgs,
    }

    /// Parses flags only: none of the variables' values come from this process's environment.
    fn parse(flags: &[&str]) -> WorkerArgs {
        let mut command = Worker::command();
        let arguments: Vec<clap::Id> = command
            .get_arguments()
            .map(|a| a.get_id().clone())
            .collect();
        for id in arguments {
            command = command.mut_arg(id, |a| a.env(None::<&str>));
        }
        let matches = command
            .try_get_matches_from(std::iter::once("worker").chain(flags.iter().copied()))
            .unwrap();
        use clap::FromArgMatches;
        Worker::from_arg_matches(&matches).unwrap().worker
    }

    const BASE: [&str; 8] = [
        "--kafka-brokers",
        "127.0.0.1:9092",
        "--database-url",
        "postgres://x@127.0.0.1/db",
        "--redis-url",
        "redis://127.0.0.1:6379",
        "--schema-registry-url",
        "http://127.0.0.1:8081",
    ];

    #[test]
    fn a_missing_required_variable_is_named() {
        let args = parse(&BASE[..4]);
        let err = args.config().unwrap_err();
        assert_eq!(err, ConfigError::Missing("ELIGIBILITY_REDIS_URL"));
        assert_eq!(
            err.to_string(),
            "ELIGIBILITY_REDIS_URL is required but not set"
        );
    }

    #[test]
    fn sasl_needs_its_mechanism_and_credentials() {
        let mut flags = BASE.to_vec();
        flags.extend([
            "--kafka-security-protocol",
            "sasl_ssl",
            "--kafka-sasl-mechanism",
            "SCRAM-SHA-512",
        ]);
        let err = parse(&flags).config().unwrap_err();
        assert_eq!(err, ConfigError::Missing("ELIGIBILITY_KAFKA_SASL_USERNAME"));
    }

    #[test]
    fn defaults_and_an_llm_url_that_is_not_http() {
        let config = parse(&BASE).config().unwrap();
        assert_eq!(config.http_addr.to_string(), "0.0.0.0:9464");
        assert_eq!(config.engine, EngineChoice::Auto);
        assert!(config.schema_auto_register);
        assert!(config.llm.is_none());
        let mut flags = BASE.to_vec();
        flags.extend([
            "--llm-base-url",
            "ftp://x",
            "--input-topics",
            "policy.rules.updated,",
        ]);
        let args = parse(&flags);
        assert_eq!(
            args.config().unwrap_err().to_string(),
            "ELIGIBILITY_LLM_BASE_URL=\"ftp://x\" is invalid: expected an http:// or https:// URL ending in /v1"
        );
        let mut flags = BASE.to_vec();
        flags.extend([
            "--input-topics",
            "policy.rules.updated,",
            "--schema-auto-register",
            "false",
        ]);
        let config = parse(&flags).config().unwrap();
        assert_eq!(
            config.input_topics,
            Some(vec!["policy.rules.updated".to_string()])
        );
        assert!(!config.schema_auto_register);
    }

    #[test]
    fn unknown_variables_are_reported_and_known_ones_come_from_the_arguments() {
        let known = known_variables();
        for name in [
            "ELIGIBILITY_KAFKA_BROKERS",
            "ELIGIBILITY_DATABASE_CA_FILE",
            "ELIGIBILITY_LLM_API_KEY",
        ] {
            assert!(known.iter().any(|k| k == name), "{name} in {known:?}");
        }
        let environment = [
            ("ELIGIBILITY_KAFKA_BROKER", "typo"),
            ("ELIGIBILITY_KAFKA_BROKERS", "b:9092"),
            ("ELIGIBILITY_KAFKA_PROP_CLIENT_ID", "x"),
            ("ELIGIBILITY_STACK_DIR", "/tmp"),
            ("ELIGIBILITY_OWN", "a subcommand's"),
            ("HOME", "/root"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        assert_eq!(
            unknown_variables(environment, &["ELIGIBILITY_OWN".to_string()]),
            vec!["ELIGIBILITY_KAFKA_BROKER"]
        );
    }

    #[test]
    fn kafka_properties_pass_through_by_name() {
        assert_eq!(kafka_property_name("CLIENT_ID"), "client.id");
        assert_eq!(
            kafka_property_name("SASL_OAUTHBEARER_TOKEN__ENDPOINT__URL"),
            "sasl.oauthbearer.token_endpoint_url"
        );
        assert_eq!(kafka_property_name("A___B_C"), "a-b.c");
        let environment = [
            (
                "ELIGIBILITY_KAFKA_PROP_SSL_CERTIFICATE_LOCATION",
                "/tls/client.pem",
            ),
            ("ELIGIBILITY_KAFKA_BROKERS", "b:9092"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        assert_eq!(
            kafka_properties(environment),
            vec![(
                "ssl.certificate.location".to_string(),
                "/tls/client.pem".to_string()
            )]
        );
    }
}
