//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::PathBuf;

/// The reference corpus written by Apache Kafka's own code (`../shared/reference`).
/// Missing corpus: a failure when `KSEG_REFERENCE` is set (CI sets it), else `None`.
pub fn reference_dir() -> Option<PathBuf> {
    corpus("reference")
}

/// Kafka's internal topics and KRaft files (`../shared/reference-internal`), same rule.
pub fn reference_internal_dir() -> Option<PathBuf> {
    corpus("reference-internal")
}

fn corpus(name: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("shared")
        .join(name);
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var_os("KSEG_REFERENCE").is_some() {
        panic!(
            "KSEG_REFERENCE is set but the corpus {} is missing",
            dir.display()
        );
    }
    eprintln!(
        "skipping: {} not found (set KSEG_REFERENCE to make this an error)",
        dir.display()
    );
    None
}

/// The scenario directories of the reference corpus, sorted by name.
pub fn scenarios(root: &std::path::Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root)
        .expect("read corpus")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.join("expected-dump.json").is_file() || p.join("SPEC.json").is_file())
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no scenarios in {}", root.display());
    out
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Bytes from hex text; whitespace is ignored.
pub fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
