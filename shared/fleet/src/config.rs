//! Worker configuration from `ELIGIBILITY_*` environment variables (docs/configuration.md).
//!
//! A missing required variable or a bad value is an error naming the variable; an unknown
//! `ELIGIBILITY_*` variable is reported so that a typo does not pass silently.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use thiserror::Error;

pub use kernels::engine_select::EngineChoice;
use kernels::engine_select::SelectError;

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

/// The prefix of the Kafka client pass-through variables.
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

#[derive(Debug, Clone)]
pub struct LlmConfig {
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
}

/// Everything a long-running worker reads from its environment.
#[derive(Debug, Clone)]
pub struct Config {
    pub kafka: KafkaConfig,
    pub database_url: String,
    pub redis_url: String,
    pub schema_registry_url: String,
    pub llm: Option<LlmConfig>,
    pub http_addr: SocketAddr,
    /// `ELIGIBILITY_ENGINE`: which engine evaluates batches.
    pub engine: EngineChoice,
    /// `ELIGIBILITY_GPU_MIN_PAIRS`: from how many (citizen, rule) pairs `auto` takes the GPU.
    pub gpu_min_pairs: usize,
    pub rules_dir: Option<PathBuf>,
    pub log: String,
    pub consumer_group: Option<String>,
    pub input_topics: Option<Vec<String>>,
    /// `ELIGIBILITY_DATABASE_CA_FILE`: a PEM CA that PostgreSQL's TLS certificate is checked against.
    pub database_ca_file: Option<PathBuf>,
    /// `ELIGIBILITY_REDIS_CA_FILE`: a PEM CA for `rediss://`.
    pub redis_ca_file: Option<PathBuf>,
    /// `ELIGIBILITY_SCHEMA_AUTO_REGISTER`: register the Avro schemas at start (true), or only
    /// look up the versions already registered (false: read-only registry credentials).
    pub schema_auto_register: bool,
}

const KNOWN: &[&str] = &[
    "ELIGIBILITY_KAFKA_BROKERS",
    "ELIGIBILITY_KAFKA_SECURITY_PROTOCOL",
    "ELIGIBILITY_KAFKA_SASL_MECHANISM",
    "ELIGIBILITY_KAFKA_SASL_USERNAME",
    "ELIGIBILITY_KAFKA_SASL_PASSWORD",
    "ELIGIBILITY_KAFKA_SSL_CA_LOCATION",
    "ELIGIBILITY_DATABASE_URL",
    "ELIGIBILITY_REDIS_URL",
    "ELIGIBILITY_SCHEMA_REGISTRY_URL",
    "ELIGIBILITY_LLM_BASE_URL",
    "ELIGIBILITY_LLM_MODEL",
    "ELIGIBILITY_LLM_API_KEY",
    "ELIGIBILITY_HTTP_ADDR",
    "ELIGIBILITY_ENGINE",
    "ELIGIBILITY_GPU_MIN_PAIRS",
    "ELIGIBILITY_RULES_DIR",
    "ELIGIBILITY_LOG",
    "ELIGIBILITY_CONSUMER_GROUP",
    "ELIGIBILITY_INPUT_TOPICS",
    "ELIGIBILITY_DATABASE_CA_FILE",
    "ELIGIBILITY_REDIS_CA_FILE",
    "ELIGIBILITY_SCHEMA_AUTO_REGISTER",
];

/// `ELIGIBILITY_DATABASE_CA_FILE` for the commands that read only the database variables
/// (`migrate`, `audit verify`, `schema-registry`).
pub fn database_ca_file_from_env() -> Option<PathBuf> {
    std::env::var_os("ELIGIBILITY_DATABASE_CA_FILE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The variables a worker was given, so that tests can pass a map instead of the process
/// environment.
pub struct Vars(BTreeMap<String, String>);

impl Vars {
    pub fn from_env() -> Vars {
        Vars(
            std::env::vars()
                .filter(|(k, _)| k.starts_with("ELIGIBILITY_"))
                .collect(),
        )
    }

    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vars {
        Vars(
            pairs
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    /// `ELIGIBILITY_*` names that no worker reads.
    pub fn unknown(&self) -> Vec<&str> {
        self.0
            .keys()
            .map(String::as_str)
            .filter(|k| {
                !KNOWN.contains(k)
                    && !k.starts_with("ELIGIBILITY_STACK_")
                    && !k.starts_with(KAFKA_PROP_PREFIX)
            })
            .collect()
    }

    fn get(&self, name: &'static str) -> Option<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    fn required(&self, name: &'static str) -> Result<String, ConfigError> {
        self.get(name)
            .map(str::to_string)
            .ok_or(ConfigError::Missing(name))
    }
}

fn invalid(name: &'static str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        name,
        value: value.to_string(),
        reason: reason.into(),
    }
}

impl KafkaConfig {
    pub fn from_vars(vars: &Vars) -> Result<KafkaConfig, ConfigError> {
        let brokers = vars.required("ELIGIBILITY_KAFKA_BROKERS")?;
        let protocol = match vars
            .get("ELIGIBILITY_KAFKA_SECURITY_PROTOCOL")
            .unwrap_or("plaintext")
        {
            "plaintext" => "plaintext",
            "ssl" => "ssl",
            "sasl_plaintext" => "sasl_plaintext",
            "sasl_ssl" => "sasl_ssl",
            other => {
                return Err(invalid(
                    "ELIGIBILITY_KAFKA_SECURITY_PROTOCOL",
                    other,
                    "expected plaintext, ssl, sasl_plaintext or sasl_ssl",
                ));
            }
        };
        let mut security = KafkaSecurity {
            protocol,
            sasl_mechanism: None,
            sasl_username: None,
            sasl_password: None,
            ssl_ca_location: vars
                .get("ELIGIBILITY_KAFKA_SSL_CA_LOCATION")
                .map(str::to_string),
        };
        if protocol.starts_with("sasl") {
            let mechanism = vars.required("ELIGIBILITY_KAFKA_SASL_MECHANISM")?;
            if !["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"].contains(&mechanism.as_str()) {
                return Err(invalid(
                    "ELIGIBILITY_KAFKA_SASL_MECHANISM",
                    &mechanism,
                    "expected PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512",
                ));
            }
            security.sasl_mechanism = Some(mechanism);
            security.sasl_username = Some(vars.required("ELIGIBILITY_KAFKA_SASL_USERNAME")?);
            security.sasl_password = Some(vars.required("ELIGIBILITY_KAFKA_SASL_PASSWORD")?);
        }
        let properties = vars
            .0
            .iter()
            .filter_map(|(name, value)| {
                let suffix = name.strip_prefix(KAFKA_PROP_PREFIX)?;
                Some((kafka_property_name(suffix), value.clone()))
            })
            .collect();
        Ok(KafkaConfig {
            brokers,
            security,
            properties,
        })
    }
}

impl Config {
    pub fn from_vars(vars: &Vars) -> Result<Config, ConfigError> {
        let http_text = vars.get("ELIGIBILITY_HTTP_ADDR").unwrap_or("0.0.0.0:9464");
        let http_addr = http_text
            .parse()
            .map_err(|e| invalid("ELIGIBILITY_HTTP_ADDR", http_text, format!("{e}")))?;
        let engine_text = vars.get("ELIGIBILITY_ENGINE").unwrap_or("auto");
        let engine = engine_text
            .parse()
            .map_err(|e: SelectError| invalid("ELIGIBILITY_ENGINE", engine_text, e.to_string()))?;
        let gpu_min_pairs_text = vars.get("ELIGIBILITY_GPU_MIN_PAIRS").unwrap_or("1000000");
        let gpu_min_pairs = gpu_min_pairs_text.parse().map_err(|e| {
            invalid(
                "ELIGIBILITY_GPU_MIN_PAIRS",
                gpu_min_pairs_text,
                format!("expected a count of (citizen, rule) pairs: {e}"),
            )
        })?;
        let llm = match vars.get("ELIGIBILITY_LLM_BASE_URL") {
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
                    model: vars.required("ELIGIBILITY_LLM_MODEL")?,
                    api_key: vars.get("ELIGIBILITY_LLM_API_KEY").map(str::to_string),
                })
            }
        };
        let input_topics = vars.get("ELIGIBILITY_INPUT_TOPICS").map(|t| {
            t.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        });
        let auto_register_text = vars
            .get("ELIGIBILITY_SCHEMA_AUTO_REGISTER")
            .unwrap_or("true");
        let schema_auto_register = match auto_register_text {
            "true" => true,
            "false" => false,
            other => {
                return Err(invalid(
                    "ELIGIBILITY_SCHEMA_AUTO_REGISTER",
                    other,
                    "expected true or false",
                ));
            }
        };
        Ok(Config {
            kafka: KafkaConfig::from_vars(vars)?,
            database_url: vars.required("ELIGIBILITY_DATABASE_URL")?,
            redis_url: vars.required("ELIGIBILITY_REDIS_URL")?,
            schema_registry_url: vars.required("ELIGIBILITY_SCHEMA_REGISTRY_URL")?,
            llm,
            http_addr,
            engine,
            gpu_min_pairs,
            rules_dir: vars.get("ELIGIBILITY_RULES_DIR").map(PathBuf::from),
            log: vars.get("ELIGIBILITY_LOG").unwrap_or("info").to_string(),
            consumer_group: vars.get("ELIGIBILITY_CONSUMER_GROUP").map(str::to_string),
            input_topics,
            database_ca_file: vars.get("ELIGIBILITY_DATABASE_CA_FILE").map(PathBuf::from),
            redis_ca_file: vars.get("ELIGIBILITY_REDIS_CA_FILE").map(PathBuf::from),
            schema_auto_register,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Vec<(&'static str, &'static str)> {
        vec![
            ("ELIGIBILITY_KAFKA_BROKERS", "127.0.0.1:9092"),
            ("ELIGIBILITY_DATABASE_URL", "postgres://x@127.0.0.1/db"),
            ("ELIGIBILITY_REDIS_URL", "redis://127.0.0.1:6379"),
            ("ELIGIBILITY_SCHEMA_REGISTRY_URL", "http://127.0.0.1:8081"),
        ]
    }

    #[test]
    fn a_missing_required_variable_is_named() {
        let mut pairs = base();
        pairs.retain(|(k, _)| *k != "ELIGIBILITY_REDIS_URL");
        let err = Config::from_vars(&Vars::from_pairs(pairs)).unwrap_err();
        assert_eq!(err, ConfigError::Missing("ELIGIBILITY_REDIS_URL"));
        assert_eq!(
            err.to_string(),
            "ELIGIBILITY_REDIS_URL is required but not set"
        );
    }

    #[test]
    fn a_bad_value_names_the_variable_and_the_value() {
        let mut pairs = base();
        pairs.push(("ELIGIBILITY_ENGINE", "tpu"));
        let err = Config::from_vars(&Vars::from_pairs(pairs)).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("ELIGIBILITY_ENGINE=\"tpu\" is invalid"),
            "{err}"
        );
    }

    #[test]
    fn sasl_needs_its_mechanism_and_credentials() {
        let mut pairs = base();
        pairs.push(("ELIGIBILITY_KAFKA_SECURITY_PROTOCOL", "sasl_ssl"));
        pairs.push(("ELIGIBILITY_KAFKA_SASL_MECHANISM", "SCRAM-SHA-512"));
        let err = Config::from_vars(&Vars::from_pairs(pairs)).unwrap_err();
        assert_eq!(err, ConfigError::Missing("ELIGIBILITY_KAFKA_SASL_USERNAME"));
    }

    #[test]
    fn defaults_and_unknown_variables() {
        let mut pairs = base();
        pairs.push(("ELIGIBILITY_KAFKA_BROKER", "typo"));
        pairs.push(("ELIGIBILITY_INPUT_TOPICS", "policy.rules.updated, "));
        let vars = Vars::from_pairs(pairs);
        let config = Config::from_vars(&vars).unwrap();
        assert_eq!(config.http_addr.to_string(), "0.0.0.0:9464");
        assert_eq!(config.engine, EngineChoice::Auto);
        assert!(config.llm.is_none());
        assert_eq!(
            config.input_topics,
            Some(vec!["policy.rules.updated".to_string()])
        );
        assert_eq!(vars.unknown(), vec!["ELIGIBILITY_KAFKA_BROKER"]);
    }

    #[test]
    fn kafka_properties_pass_through_by_name() {
        assert_eq!(kafka_property_name("CLIENT_ID"), "client.id");
        assert_eq!(
            kafka_property_name("SASL_OAUTHBEARER_TOKEN__ENDPOINT__URL"),
            "sasl.oauthbearer.token_endpoint_url"
        );
        assert_eq!(kafka_property_name("A___B_C"), "a-b.c");
        let mut pairs = base();
        pairs.push((
            "ELIGIBILITY_KAFKA_PROP_SSL_CERTIFICATE_LOCATION",
            "/tls/client.pem",
        ));
        pairs.push(("ELIGIBILITY_SCHEMA_AUTO_REGISTER", "false"));
        let vars = Vars::from_pairs(pairs);
        let config = Config::from_vars(&vars).unwrap();
        assert_eq!(
            config.kafka.properties,
            vec![(
                "ssl.certificate.location".to_string(),
                "/tls/client.pem".to_string()
            )]
        );
        assert!(!config.schema_auto_register);
        assert!(vars.unknown().is_empty(), "{:?}", vars.unknown());
        let mut pairs = base();
        pairs.push(("ELIGIBILITY_SCHEMA_AUTO_REGISTER", "no"));
        let err = Config::from_vars(&Vars::from_pairs(pairs)).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("ELIGIBILITY_SCHEMA_AUTO_REGISTER=\"no\""),
            "{err}"
        );
    }
}
