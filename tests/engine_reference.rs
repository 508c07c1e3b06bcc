//! The engine against Kafka's own output, scenario by scenario of `../shared/reference/`:
//! (a) `write_spec(SPEC.json)` and (b) a replay of Kafka's batch bytes through the engine with
//! the spec's append grouping must leave every file byte-identical to `input/orders-0/`, and
//! the same rolls, aborted-transaction entries and log end offset as `write-summary.json`.
//! Where (a) compresses, our codec bytes may differ from Java's: then every batch and record
//! must decode identically, and the epoch checkpoint, metadata and final snapshot must match.
//! Files that a damage scenario changed after writing (DAMAGE.json) are left out.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use kseg::format::entry::Entry;
use kseg::ops::write::spec::{write_spec, write_spec_with, PlannedBatch, Spec};
use kseg::storage::log_reader::{LogReader, Step};
use serde_json::Value;

fn scenarios() -> Vec<PathBuf> {
    let Some(root) = common::reference_dir() else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("SPEC.json").is_file())
        .collect();
    out.sort();
    out
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// DAMAGE.json entries: one object or a list of them.
fn damage(scenario: &Path) -> Vec<Value> {
    let path = scenario.join("DAMAGE.json");
    if !path.exists() {
        return Vec::new();
    }
    match json(&path) {
        Value::Array(list) => list,
        one => vec![one],
    }
}

fn damaged_files(scenario: &Path) -> BTreeSet<String> {
    damage(scenario)
        .iter()
        .map(|d| d["file"].as_str().unwrap().to_string())
        .collect()
}

fn file_names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Every file of `expected` (but the skipped ones) has the same bytes in `actual`, and
/// `actual` has no extra files. Returns the mismatches.
fn compare_dirs(expected: &Path, actual: &Path, skip: &BTreeSet<String>) -> Vec<String> {
    let mut problems = Vec::new();
    let want = file_names(expected);
    let got = file_names(actual);
    for name in want.union(&got) {
        if skip.contains(name) {
            continue;
        }
        match (want.contains(name), got.contains(name)) {
            (true, false) => problems.push(format!("{name}: missing")),
            (false, true) => problems.push(format!("{name}: not expected")),
            _ => {
                let a = std::fs::read(expected.join(name)).unwrap();
                let b = std::fs::read(actual.join(name)).unwrap();
                if a != b {
                    let at = a
                        .iter()
                        .zip(&b)
                        .position(|(x, y)| x != y)
                        .unwrap_or(a.len().min(b.len()));
                    problems.push(format!(
                        "{name}: differs at byte {at} (expected {} bytes, got {})",
                        a.len(),
                        b.len()
                    ));
                }
            }
        }
    }
    problems
}

fn compare_summary(scenario: &Path, got: &Value) -> Vec<String> {
    let path = scenario.join("write-summary.json");
    if !path.exists() {
        return Vec::new();
    }
    let want = json(&path);
    [
        "events",
        "logEndOffset",
        "segments",
        "topicPartition",
        "close",
    ]
    .iter()
    .filter(|k| want[**k] != got[**k])
    .map(|k| format!("write-summary {k}: expected {}, got {}", want[*k], got[*k]))
    .collect()
}

/// Kafka's entries from every `.log` of the input, in offset order, with damage undone.
fn input_entries(scenario: &Path) -> Vec<Vec<u8>> {
    let input = scenario.join("input/orders-0");
    let fixes = damage(scenario);
    let mut logs: Vec<String> = file_names(&input)
        .into_iter()
        .filter(|n| n.ends_with(".log"))
        .collect();
    logs.sort();
    let tmp = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    for name in logs {
        let mut bytes = std::fs::read(input.join(&name)).unwrap();
        for d in fixes.iter().filter(|d| d["file"] == name.as_str()) {
            if d["kind"] == "flip_byte" {
                bytes[d["position"].as_u64().unwrap() as usize] = d["old"].as_u64().unwrap() as u8;
            }
        }
        let path = tmp.path().join(&name);
        std::fs::write(&path, bytes).unwrap();
        let mut reader = LogReader::open(&path, None).unwrap();
        while let Step::Entry { entry, .. } = reader.next_step().unwrap() {
            out.push(entry.bytes().to_vec());
        }
    }
    out
}

fn uses_compression(spec_text: &str) -> bool {
    ["gzip", "snappy", "lz4", "zstd"]
        .iter()
        .any(|c| spec_text.contains(&format!("\"compression\": \"{c}\"")))
}

/// Every batch and record of the directory's `.log` files, as text lines, for comparing logs
/// whose compressed bytes differ: what a reader sees must not.
fn decoded(dir: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    let mut logs: Vec<String> = file_names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".log"))
        .collect();
    logs.sort();
    let mut scratch = Vec::new();
    for name in logs {
        let mut reader = LogReader::open(&dir.join(name), None).unwrap();
        while let Step::Entry { entry, .. } = reader.next_step().unwrap() {
            let header = match &entry {
                Entry::V2(b) => {
                    let mut h = b.header;
                    h.crc = 0;
                    h.length = 0;
                    format!("{h:?}")
                }
                Entry::Legacy(m) => {
                    format!("v{} attrs {} ts {}", m.magic, m.attributes, m.timestamp)
                }
            };
            lines.push(format!("batch {header} last {}", entry.last_offset()));
            for r in entry.records(&mut scratch, 1 << 30).unwrap() {
                let r = r.unwrap();
                lines.push(format!(
                    "  {} {} {:?} {:?} {:?} {:?}",
                    r.offset,
                    r.timestamp,
                    r.key,
                    r.value,
                    r.headers,
                    r.legacy.map(|l| (l.magic, l.attributes))
                ));
            }
        }
    }
    lines
}

/// For specs with compressed batches: the records decode as Kafka's do, and the files that do
/// not depend on compressed sizes are byte-identical.
fn check_decoded(scenario: &Path, out: &Path, summary: &Value) -> Vec<String> {
    let input = scenario.join("input/orders-0");
    let mut problems = Vec::new();
    let (want, got) = (decoded(&input), decoded(out));
    assert!(
        want.len() > 100,
        "{}: too few records decoded",
        scenario.display()
    );
    if let Some(i) = (0..want.len().max(got.len())).find(|&i| want.get(i) != got.get(i)) {
        problems.push(format!(
            "decoded logs differ at line {i}: expected {:?}, got {:?}",
            want.get(i),
            got.get(i)
        ));
    }
    let leo = summary["logEndOffset"].as_i64().unwrap();
    let last_snapshot = format!("{leo:020}.snapshot");
    for name in [
        "leader-epoch-checkpoint",
        "partition.metadata",
        last_snapshot.as_str(),
    ] {
        let (a, b) = (
            std::fs::read(input.join(name)).ok(),
            std::fs::read(out.join(name)).ok(),
        );
        if a != b {
            problems.push(format!("{name}: differs"));
        }
    }
    let want_summary = json(&scenario.join("write-summary.json"));
    if want_summary["logEndOffset"] != summary["logEndOffset"] {
        problems.push("log end offset differs".into());
    }
    problems
}

fn check(scenario: &Path, out: &Path, summary: &Value) -> Vec<String> {
    let mut problems = compare_dirs(
        &scenario.join("input/orders-0"),
        out,
        &damaged_files(scenario),
    );
    problems.extend(compare_summary(scenario, summary));
    problems
}

#[test]
fn write_spec_matches_kafka() {
    let mut failures = Vec::new();
    for scenario in scenarios() {
        let text = std::fs::read_to_string(scenario.join("SPEC.json")).unwrap();
        let spec = Spec::from_json(&text).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("orders-0");
        let summary = write_spec(&spec, &out).unwrap().to_json();
        // Compressor output legitimately differs from Java's (and with it sizes, index
        // positions and roll points); the replay test pins those rules on Kafka's bytes.
        let problems = if uses_compression(&text) {
            check_decoded(&scenario, &out, &summary)
        } else {
            check(&scenario, &out, &summary)
        };
        for p in problems {
            failures.push(format!(
                "{}: {p}",
                scenario.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn replaying_kafka_batches_matches_kafka_for_every_scenario() {
    let mut failures = Vec::new();
    for scenario in scenarios() {
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        let spec =
            Spec::from_json(&std::fs::read_to_string(scenario.join("SPEC.json")).unwrap()).unwrap();
        let entries = input_entries(&scenario);
        let mut next = entries.into_iter();
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("orders-0");
        let mut source = |b: &PlannedBatch| {
            let mut bytes = Vec::new();
            for _ in 0..b.entry_count() {
                bytes.extend(
                    next.next()
                        .expect("the input has as many entries as the spec"),
                );
            }
            Ok(bytes)
        };
        match write_spec_with(&spec, &out, &mut source) {
            Ok(summary) => {
                for p in check(&scenario, &out, &summary.to_json()) {
                    failures.push(format!("{name}: {p}"));
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
        assert!(next.next().is_none(), "{name}: input entries left over");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
