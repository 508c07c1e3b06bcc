//! `stats` against the reference corpus: on every scenario the counts (batches, records and
//! bytes per codec, formats, control/transactional/idempotent batches, uncompressed bytes,
//! null keys, tombstones, timestamps) equal those computed here from Kafka's own reading of the
//! files (`expected-dump.json`), and the distinct-key estimate is within three standard errors
//! of the exact count. Plus grouping, merging across segments, and the CLI's JSON.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use kseg::ops::inspect::stats::{hll, stats, GroupBy, Report, Stats, StatsOptions};
use serde_json::Value;

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn run(paths: &[PathBuf], deep: bool, by: GroupBy) -> Report {
    stats(
        paths,
        &StatsOptions {
            deep,
            by,
            now_ms: 1_730_000_000_000,
            ..Default::default()
        },
    )
    .expect("stats runs")
}

/// What the test derives from expected-dump.json for one scenario.
#[derive(Debug, Default, PartialEq)]
struct Expected {
    batches: u64,
    bytes: u64,
    /// codec → (batches, records, bytes, uncompressed bytes)
    codecs: BTreeMap<String, (u64, u64, u64, u64)>,
    formats: BTreeMap<String, u64>,
    control: u64,
    transactional: u64,
    idempotent: u64,
    invalid: u64,
    trailing: u64,
    null_keys: u64,
    tombstones: u64,
    keys: HashSet<String>,
    keyed: u64,
    min_ts: Option<i64>,
    max_ts: Option<i64>,
}

/// Kafka's `LOG_OVERHEAD` (offset + size fields) and the v2 batch header size.
const LOG_OVERHEAD: u64 = 12;
const V2_HEADER: u64 = 61;

fn expected(dump: &Value) -> Expected {
    let mut e = Expected::default();
    let files = dump["files"].as_object().unwrap();
    let mut names: Vec<&String> = files.keys().collect();
    names.sort();
    for name in names {
        let f = &files[name];
        if f["type"] != "log" {
            continue;
        }
        e.trailing += f["trailingBytes"].as_u64().unwrap_or(0);
        for b in f["batches"].as_array().unwrap() {
            if b["isValid"] != true {
                e.invalid += 1;
                continue;
            }
            let size = b["sizeInBytes"].as_u64().unwrap();
            let magic = b["magic"].as_u64().unwrap();
            let records = b["records"].as_array().unwrap();
            let control = b["isControl"] == true;
            e.batches += 1;
            e.bytes += size;
            *e.formats.entry(format!("v{magic}")).or_default() += 1;
            e.control += u64::from(control);
            e.transactional += u64::from(b["isTransactional"] == true);
            e.idempotent += u64::from(b["producerId"].as_i64().unwrap_or(-1) >= 0);
            let record_bytes: u64 = records
                .iter()
                .map(|r| r["sizeInBytes"].as_u64().unwrap())
                .sum();
            // A v2 batch uncompressed: its header and its records; a v0/v1 wrapper: its
            // inner messages, each with its log overhead (Kafka's sizeInBytes leaves it out).
            let uncompressed = if magic == 2 {
                V2_HEADER + record_bytes
            } else if b["compression"] == "none" {
                size
            } else {
                record_bytes + LOG_OVERHEAD * records.len() as u64
            };
            let c = e
                .codecs
                .entry(b["compression"].as_str().unwrap().to_owned())
                .or_default();
            c.0 += 1;
            c.1 += records.len() as u64;
            c.2 += size;
            c.3 += uncompressed;
            for r in records {
                let ts = r["timestamp"].as_i64().unwrap();
                if ts >= 0 {
                    e.min_ts = Some(e.min_ts.map_or(ts, |m| m.min(ts)));
                    e.max_ts = Some(e.max_ts.map_or(ts, |m| m.max(ts)));
                }
                if control {
                    continue;
                }
                match r["key"].as_str() {
                    Some(k) => {
                        e.keyed += 1;
                        e.keys.insert(k.to_owned());
                    }
                    None => e.null_keys += 1,
                }
                e.tombstones += u64::from(r["value"].is_null());
            }
        }
    }
    e
}

fn assert_counts(name: &str, s: &Stats, e: &Expected, deep: bool) {
    assert_eq!(s.batches, e.batches, "{name}: batches");
    assert_eq!(s.bytes, e.bytes, "{name}: bytes");
    assert_eq!(s.formats, e.formats, "{name}: formats");
    assert_eq!(s.control_batches, e.control, "{name}: control batches");
    assert_eq!(s.transactional_batches, e.transactional, "{name}");
    assert_eq!(s.idempotent_batches, e.idempotent, "{name}");
    assert_eq!(s.invalid_batches, e.invalid, "{name}: invalid batches");
    assert_eq!(s.damaged_bytes, e.trailing, "{name}: torn tail bytes");
    let codecs: BTreeMap<String, (u64, u64, u64, u64)> = s
        .codecs
        .iter()
        .map(|c| {
            (
                c.codec.clone(),
                (
                    c.batches,
                    c.records,
                    c.bytes,
                    c.uncompressed_bytes.unwrap_or(0),
                ),
            )
        })
        .collect();
    if deep {
        assert_eq!(codecs, e.codecs, "{name}: per codec");
        assert_eq!(s.records, e.codecs.values().map(|c| c.1).sum::<u64>());
        assert_eq!(s.unopened_wrappers, 0);
        let k = s.keys.as_ref().expect("deep: keys");
        assert_eq!(k.null_keys, e.null_keys, "{name}: null keys");
        assert_eq!(k.tombstones, e.tombstones, "{name}: tombstones");
        assert_eq!(k.keyed_records, e.keyed, "{name}: keyed records");
        let exact = e.keys.len() as f64;
        let bound = (3.0 * hll::STANDARD_ERROR * exact).max(1.0);
        let est = k.distinct_keys_estimate as f64;
        assert!(
            (est - exact).abs() <= bound,
            "{name}: distinct keys estimated {est}, exact {exact}, bound {bound}"
        );
        assert_eq!(s.time.min_timestamp, e.min_ts, "{name}: min timestamp");
        assert_eq!(s.time.max_timestamp, e.max_ts, "{name}: max timestamp");
    } else {
        // Without --deep a v0/v1 wrapper's records are not counted; batches and bytes are.
        for (codec, c) in &e.codecs {
            let got = codecs[codec];
            assert_eq!((got.0, got.2), (c.0, c.2), "{name}: {codec}");
        }
        assert!(s.keys.is_none());
    }
}

#[test]
fn counts_equal_kafkas_reading_of_every_scenario() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    for scenario in common::scenarios(&root) {
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        let e = expected(&json(&scenario.join("expected-dump.json")));
        let dir = scenario.join("input").join("orders-0");
        for deep in [false, true] {
            let r = run(std::slice::from_ref(&dir), deep, GroupBy::Partition);
            assert_eq!(r.groups.len(), 1);
            assert_counts(&name, &r.groups[0].stats, &e, deep);
            assert_eq!(r.total, r.groups[0].stats, "{name}: one group is the total");
        }
        // Per segment, the groups add up to the partition's counts.
        let by_segment = run(std::slice::from_ref(&dir), true, GroupBy::Segment);
        let segments = common::listing(&dir)
            .iter()
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .count();
        assert_eq!(by_segment.groups.len(), segments, "{name}");
        assert_counts(&name, &by_segment.total, &e, true);
        let batches: u64 = by_segment.groups.iter().map(|g| g.stats.batches).sum();
        assert_eq!(batches, e.batches);
        // Per producer: every batch in exactly one group.
        let by_producer = run(&[dir], false, GroupBy::Producer);
        let batches: u64 = by_producer.groups.iter().map(|g| g.stats.batches).sum();
        assert_eq!(batches, e.batches, "{name}: per producer");
    }
}

#[test]
fn producers_sequence_gaps_and_epochs_across_segments() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    // a-plain-v2: idempotent producers with one epoch bump, written with consecutive
    // sequences; read per segment in parallel and merged, no gap may appear at a boundary.
    let dump = json(&root.join("a-plain-v2/expected-dump.json"));
    let mut epochs: BTreeMap<i64, HashSet<i64>> = BTreeMap::new();
    let mut bytes: BTreeMap<i64, u64> = BTreeMap::new();
    for f in dump["files"].as_object().unwrap().values() {
        for b in f["batches"].as_array().into_iter().flatten() {
            let pid = b["producerId"].as_i64().unwrap_or(-1);
            if pid >= 0 {
                epochs
                    .entry(pid)
                    .or_default()
                    .insert(b["producerEpoch"].as_i64().unwrap());
                *bytes.entry(pid).or_default() += b["sizeInBytes"].as_u64().unwrap();
            }
        }
    }
    let r = run(
        &[root.join("a-plain-v2/input/orders-0")],
        false,
        GroupBy::Partition,
    );
    let p = &r.total.producers;
    assert_eq!(p.count, epochs.len() as u64);
    assert_eq!(
        p.epochs_seen,
        epochs.values().map(|e| e.len() as u64).sum::<u64>()
    );
    assert_eq!(p.sequence_gaps, 0);
    let top = &p.top_by_bytes[0];
    assert_eq!(Some(&top.bytes), bytes.values().max());
}

#[test]
fn sequence_gaps_and_time_going_back_are_seen() {
    use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
    use kseg::storage::{CloseMode, Log, LogConfig};
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("t-0");
    let mut log = Log::create(&part, LogConfig::default(), 0, *b"kseg-stats-test!", 0).unwrap();
    // Sequences 0..3, then 10.. (a gap of 7), each batch 2 records; timestamps go back 500 ms
    // at the third batch.
    let specs = [(0, 0, 1000), (2, 2, 2000), (4, 10, 1500), (6, 12, 3000)];
    for (i, &(offset, seq, ts)) in specs.iter().enumerate() {
        if i == 2 {
            log.roll().unwrap();
        }
        let recs: Vec<RecordSpec> = (0..2)
            .map(|j| RecordSpec {
                offset: offset + j,
                timestamp: ts + j,
                key: Some(format!("k{}", (offset + j) % 3).into_bytes()),
                value: (j == 0).then(|| b"v".to_vec()),
                headers: vec![],
            })
            .collect();
        let spec = BatchSpec {
            base_offset: offset,
            producer_id: 7,
            producer_epoch: 0,
            base_sequence: seq,
            ..Default::default()
        };
        log.append_as_follower(&build_batch(&spec, &recs).unwrap())
            .unwrap();
    }
    log.close(CloseMode::Clean).unwrap();
    let r = run(&[part], true, GroupBy::Partition);
    let s = &r.total;
    assert_eq!((s.batches, s.records), (4, 8));
    assert_eq!(s.producers.sequence_gaps, 1, "10 does not follow 3");
    assert_eq!(
        s.time.out_of_order, 1,
        "1500 comes after 2001, across the roll"
    );
    assert_eq!(s.time.worst_step_back_ms, 2001 - 1500);
    assert_eq!(s.time.segments.len(), 2);
    let k = s.keys.as_ref().unwrap();
    assert_eq!((k.keyed_records, k.tombstones), (8, 4));
    assert_eq!(k.distinct_keys_estimate, 3);
    assert_eq!(k.superseded_estimate, 5);
}

#[test]
fn json_starts_with_the_format_and_has_no_duplicate_keys() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["stats", "--deep", "--json", "--by", "segment"])
        .arg(root.join("d-legacy/input/orders-0"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    common::assert_json_without_duplicate_keys(&text);
    // In a pipe: one compact document on one line, the vocabulary first.
    assert!(text.starts_with("{\"format\":\"kseg/3\","), "{text}");
    assert_eq!(text.lines().count(), 1);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v["groups"][0]["groupKey"]["baseOffset"].is_i64());
    // A text run draws the histograms.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["stats"])
        .arg(root.join("d-legacy/input/orders-0"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("batch size (bytes)") && text.contains('█'),
        "{text}"
    );
}

#[test]
fn a_named_file_that_is_not_a_segment_is_skipped_with_exit_2() {
    let (code, err) = common::kseg_status(
        &["stats", "testdata/orders/orders-0"],
        Path::new("testdata/orders/SPEC.json"),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("SPEC.json"), "{err}");
    let index = Path::new("testdata/orders/orders-0/00000000000000000000.index");
    let (code, err) = common::kseg_status(&["stats"], index);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a segment"), "{err}");
    let (code, err) = common::kseg_status(&["stats"], Path::new("testdata/nonexistent"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no such file"), "{err}");
}
