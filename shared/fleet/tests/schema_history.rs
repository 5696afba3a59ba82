//! Every Avro schema in `schemas/avro/` stays backward compatible with its previous committed
//! version: a consumer on the new schema reads every record written with the old one
//! (`apache_avro`'s resolution rules; the registry's BACKWARD mode). "Previous" is the
//! committed file when the working tree changes it, else the version before the last commit
//! that changed it. Needs the repository's history (not a shallow clone).

use std::path::{Path, PathBuf};
use std::process::Command;

use apache_avro::Schema;
use apache_avro::schema_compatibility::SchemaCompatibility;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(root())
        .args(args)
        .output()
        .expect("git runs");
    output
        .status
        .success()
        .then(|| String::from_utf8(output.stdout).expect("UTF-8"))
}

/// The previous committed text of `path` (relative to the root), if it has one.
fn previous_version(path: &str, current: &str) -> Option<String> {
    let committed = git(&["show", &format!("HEAD:{path}")])?;
    if committed != current {
        return Some(committed);
    }
    let last = git(&["log", "-n", "1", "--format=%H", "--", path])?;
    git(&["show", &format!("{}^:{path}", last.trim())])
}

/// Why `new` cannot read what `old` wrote, if it cannot.
fn backward_problem(old: &str, new: &str) -> Option<String> {
    let writer = Schema::parse_str(old).expect("the old schema parses");
    let reader = Schema::parse_str(new).expect("the new schema parses");
    SchemaCompatibility::can_read(&writer, &reader)
        .err()
        .map(|e| e.to_string())
}

#[test]
fn every_avro_schema_reads_what_its_previous_version_wrote() {
    assert_eq!(
        git(&["rev-parse", "--is-inside-work-tree"])
            .as_deref()
            .map(str::trim),
        Some("true"),
        "the schema history check needs the git repository"
    );
    assert_eq!(
        git(&["rev-parse", "--is-shallow-repository"])
            .as_deref()
            .map(str::trim),
        Some("false"),
        "a shallow clone lacks the previous schema versions: git fetch --unshallow"
    );
    let mut checked = 0;
    let mut problems = Vec::new();
    let dir = root().join("schemas/avro");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "avsc") {
            continue;
        }
        let relative = format!(
            "schemas/avro/{}",
            path.file_name().unwrap().to_str().unwrap()
        );
        let current = std::fs::read_to_string(&path).unwrap();
        Schema::parse_str(&current).unwrap_or_else(|e| panic!("{relative}: {e}"));
        if let Some(old) = previous_version(&relative, &current) {
            checked += 1;
            if let Some(problem) = backward_problem(&old, &current) {
                problems.push(format!("{relative}: {problem}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "not backward compatible:\n{}",
        problems.join("\n")
    );
    eprintln!("{checked} schema(s) checked against their previous version");
}

#[test]
fn the_check_refuses_a_field_added_without_a_default() {
    let old = r#"{"type": "record", "name": "R", "fields": [{"name": "a", "type": "string"}]}"#;
    let with_default = r#"{"type": "record", "name": "R", "fields": [{"name": "a", "type": "string"},
        {"name": "b", "type": ["null", "string"], "default": null}]}"#;
    let without_default = r#"{"type": "record", "name": "R", "fields": [{"name": "a", "type": "string"},
        {"name": "b", "type": "string"}]}"#;
    assert_eq!(backward_problem(old, with_default), None);
    assert!(backward_problem(old, without_default).is_some());
}
