//! Embeds the bundled rule corpus (`schemes/**/*.yaml`) so the engine's default needs no files.

use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemes");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &mut files);
    // An engine without its corpus would evaluate nothing and say nothing: refuse to build it.
    assert!(
        !files.is_empty(),
        "no rule files (*.yaml) under {}: the bundled corpus is missing",
        root.display()
    );
    files.sort();
    let mut out = String::from(
        "/// The bundled corpus: (path under `schemes/`, YAML text), sorted by path.\npub const BUNDLED_RULES: &[(&str, &str)] = &[\n",
    );
    for file in files {
        let relative = file.strip_prefix(&root).expect("below the corpus root");
        let absolute = file.canonicalize().expect("the file exists");
        out.push_str(&format!(
            "    ({:?}, include_str!({:?})),\n",
            format!("schemes/{}", relative.display()),
            absolute
        ));
    }
    out.push_str("];\n");
    let target = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("bundled_rules.rs");
    std::fs::write(target, out).expect("OUT_DIR is writable");
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read the corpus directory {}: {e}", dir.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            files.push(path);
        }
    }
}
