//! `kseg write` against Kafka's own internal-topic fixtures: every `SPEC.json` of
//! `../shared/reference-internal/` must write a partition directory byte-identical to the
//! scenario's `input/<topic>-0/` (and, for the cluster metadata, `input/bootstrap.checkpoint`),
//! with the rolls and log end offset of `write-summary.json`. The specs give their records in
//! the decoders' JSON form, so this also checks the encoder against Kafka's serializers.

mod common;

use std::path::Path;

use kseg::ops::write::spec::{write_spec, Spec};
use serde_json::Value;

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The files of `dir` and of its subdirectories (one level: `input/` holds the partition
/// directory and, for the cluster metadata, `bootstrap.checkpoint`), named by relative path.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().unwrap().is_dir() {
            for (f, bytes) in common::dir_contents(&e.path()) {
                out.push((format!("{name}/{f}"), bytes));
            }
        } else {
            out.push((name, std::fs::read(e.path()).unwrap()));
        }
    }
    out.sort();
    out
}

/// Differences between two directories' files (name, size, first differing byte).
fn compare_dirs(want: &Path, got: &Path) -> Vec<String> {
    let want = files(want);
    let got = files(got);
    let mut problems = Vec::new();
    for (name, a) in &want {
        match got.iter().find(|(n, _)| n == name) {
            None => problems.push(format!("{name}: not written")),
            Some((_, b)) if a != b => {
                let at = a.iter().zip(b).position(|(x, y)| x != y);
                problems.push(format!(
                    "{name}: differs at byte {} (expected {} bytes, got {})",
                    at.unwrap_or(a.len().min(b.len())),
                    a.len(),
                    b.len()
                ));
            }
            Some(_) => {}
        }
    }
    for (name, _) in &got {
        if !want.iter().any(|(n, _)| n == name) {
            problems.push(format!("{name}: written, not in Kafka's directory"));
        }
    }
    problems
}

#[test]
fn every_internal_spec_writes_kafkas_bytes() {
    let Some(root) = common::reference_internal_dir() else {
        return;
    };
    let scenarios = common::scenarios(&root);
    assert_eq!(scenarios.len(), 6, "the corpus' six scenarios");
    let mut failures = Vec::new();
    for scenario in scenarios {
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        let spec_path = scenario.join("SPEC.json");
        let spec =
            match Spec::from_json_at(&std::fs::read_to_string(&spec_path).unwrap(), &spec_path) {
                Ok(s) => s,
                Err(e) => {
                    failures.push(format!("{name}: {e}"));
                    continue;
                }
            };
        let dir_name = format!("{}-{}", spec.topic, spec.partition);
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("input").join(&dir_name);
        match write_spec(&spec, &out) {
            Ok(summary) => {
                let got = summary.to_json();
                let want = json(&scenario.join("write-summary.json"));
                for k in [
                    "events",
                    "logEndOffset",
                    "segments",
                    "topicPartition",
                    "close",
                ] {
                    if want[k] != got[k] {
                        failures.push(format!(
                            "{name}: write-summary {k}: expected {}, got {}",
                            want[k], got[k]
                        ));
                    }
                }
            }
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        }
        for p in compare_dirs(&scenario.join("input"), &tmp.path().join("input")) {
            failures.push(format!("{name}: {p}"));
        }
        // The command line as a user runs it writes the same files.
        let cli = tmp.path().join("cli");
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
            .arg("write")
            .arg(&spec_path)
            .arg(cli.join(&dir_name))
            .output()
            .unwrap();
        if !run.status.success() {
            failures.push(format!(
                "{name}: kseg write: {}",
                String::from_utf8_lossy(&run.stderr)
            ));
        }
        for p in compare_dirs(&scenario.join("input"), &cli) {
            failures.push(format!("{name}: kseg write: {p}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
