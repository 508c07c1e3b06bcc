//! The engine against Kafka's own output, scenario by scenario of `../shared/reference/`:
//! (a) `write_spec(SPEC.json)` (and `kseg write SPEC.json`) and (b) a replay of Kafka's batch bytes through the engine with
//! the spec's append grouping must leave every file byte-identical to `input/orders-0/`, and
//! the same rolls, aborted-transaction entries and log end offset as `write-summary.json`.
//! Compressed batches included: (c) every compressed batch of the corpus, decompressed and
//! compressed again at its spec's codec, level and magic, gives Kafka's bytes.
//! Files that a damage scenario changed after writing (DAMAGE.json) are left out.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use kseg::format::codec::{self, Compression};
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
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        let spec_path = scenario.join("SPEC.json");
        let spec = Spec::from_json(&std::fs::read_to_string(&spec_path).unwrap()).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("lib/orders-0");
        let summary = write_spec(&spec, &out).unwrap().to_json();
        for p in check(&scenario, &out, &summary) {
            failures.push(format!("{name}: {p}"));
        }
        // The command line as a user runs it writes the same files.
        let cli_out = tmp.path().join("cli/orders-0");
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
            .arg("write")
            .arg(&spec_path)
            .arg(&cli_out)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let skip = damaged_files(&scenario);
        for p in compare_dirs(&scenario.join("input/orders-0"), &cli_out, &skip) {
            failures.push(format!("{name}: kseg write: {p}"));
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

/// Codec, level and magic of a planned batch, or None when it is not compressed.
fn codec_of(batch: &PlannedBatch) -> Option<(Compression, Option<i32>, i8)> {
    let (codec, level, magic) = match batch {
        PlannedBatch::V2 { spec, .. } | PlannedBatch::Generated { spec, .. } => {
            (spec.compression, spec.compression_level, 2)
        }
        PlannedBatch::Legacy { spec, .. } => (spec.compression, spec.compression_level, spec.magic),
    };
    (codec != Compression::None).then_some((codec, level, magic))
}

/// The compressed region of one of Kafka's entries: a v2 records area or a wrapper's value.
fn compressed_region<'a>(entry: &Entry<'a>) -> &'a [u8] {
    match entry {
        Entry::V2(b) => b.records_area(),
        Entry::Legacy(m) => m.value.expect("a compressed wrapper has a value"),
    }
}

#[test]
fn every_compressed_batch_of_kafka_recompresses_to_its_bytes() {
    let mut seen = BTreeSet::new();
    let mut failures = Vec::new();
    let (mut raw, mut again) = (Vec::new(), Vec::new());
    for scenario in scenarios() {
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        let spec =
            Spec::from_json(&std::fs::read_to_string(scenario.join("SPEC.json")).unwrap()).unwrap();
        let mut next = input_entries(&scenario).into_iter();
        let tmp = tempfile::tempdir().unwrap();
        let mut source = |b: &PlannedBatch| {
            let bytes: Vec<Vec<u8>> = next.by_ref().take(b.entry_count()).collect();
            if let (Some((codec, level, magic)), [one]) = (codec_of(b), bytes.as_slice()) {
                let entry = Entry::decode(one).unwrap();
                let region = compressed_region(&entry);
                codec::decompress(codec, magic, region, 1 << 30, &mut raw).unwrap();
                codec::compress(codec, level, magic, &raw, &mut again).unwrap();
                let label = format!("{} v{magic} level {level:?}", codec.name());
                if again != region {
                    failures.push(format!(
                        "{name}: {label} batch at offset {}: {} bytes, Kafka's {}",
                        entry.last_offset(),
                        again.len(),
                        region.len()
                    ));
                }
                seen.insert(label);
            }
            Ok(bytes.concat())
        };
        write_spec_with(&spec, &tmp.path().join("orders-0"), &mut source).unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if common::reference_dir().is_some() {
        // Every codec and level the corpus uses, for every magic it uses them with.
        for label in [
            "gzip v2 level None",
            "gzip v2 level Some(9)",
            "gzip v1 level None",
            "gzip v0 level None",
            "lz4 v2 level None",
            "lz4 v2 level Some(17)",
            "lz4 v1 level None",
            "lz4 v0 level None",
            "snappy v2 level None",
            "snappy v1 level None",
            "snappy v0 level None",
            "zstd v2 level None",
            "zstd v2 level Some(10)",
        ] {
            assert!(seen.contains(label), "{label} not in the corpus: {seen:?}");
        }
    }
}
