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

/// Differences between two directories' files (name, size, first differing byte).
fn compare_dirs(want: &Path, got: &Path) -> Vec<String> {
    let want = common::dir_contents(want);
    let got = common::dir_contents(got);
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
                for k in ["logEndOffset", "segments", "topicPartition", "close"] {
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
        for p in compare_dirs(&scenario.join("input").join(&dir_name), &out) {
            failures.push(format!("{name}: {p}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
