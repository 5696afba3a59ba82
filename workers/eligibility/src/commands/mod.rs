//! One module per subcommand.

pub mod audit;
pub mod audit_export;
pub mod evaluate;
pub mod languages;
pub mod oracle;
pub mod releases;
pub mod rules;
pub mod schema;
pub mod services;
pub mod sweep;
