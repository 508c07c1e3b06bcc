//! `dump` against Kafka's own readers: every batch, record and entry of every file of every
//! scenario in the reference corpus must decode to what Kafka decoded.

mod common;

use std::path::{Path, PathBuf};

use kseg::ops::inspect::dump::{dump_paths, DumpOptions, Event, Sink};
use serde_json::{json, Value};

/// Collects events as JSON values shaped like the corpus' expected-dump.json.
#[derive(Default)]
struct Collect {
    batches: Vec<Value>,
    damage: Vec<Value>,
    trailing: Option<u64>,
    /// Entries of index, snapshot and checkpoint files, shaped like expected-dump.json.
    entries: Vec<Value>,
    /// Slots of a zero-filled index tail.
    zero_slots: usize,
    partition_metadata: Option<Value>,
}

impl Sink for Collect {
    fn event(&mut self, e: &Event<'_>) -> std::io::Result<()> {
        match e {
            Event::Batch { info: b, .. } => {
                let mut v = serde_json::to_value(b).unwrap();
                v["records"] = json!([]);
                self.batches.push(v);
            }
            Event::Record(r) => {
                let v = &r.view;
                let mut rec = json!({
                    "offset": v.offset,
                    "sequence": v.sequence,
                    "timestamp": v.timestamp,
                    "sizeInBytes": v.size_in_bytes,
                    "key": v.key.map(common::hex),
                    "value": v.value.map(common::hex),
                    "headers": v.headers.iter().map(|h| json!({
                        "key": String::from_utf8_lossy(h.key),
                        "value": h.value.map(common::hex),
                    })).collect::<Vec<_>>(),
                });
                if let Some(l) = v.legacy {
                    rec["crc"] = json!(l.crc);
                    rec["isValid"] = json!(l.is_valid);
                    rec["attributes"] = json!(l.attributes);
                }
                if let Some(c) = r.control {
                    rec["control"] =
                        json!({"type": c.kind, "coordinatorEpoch": c.coordinator_epoch});
                }
                let last = self.batches.last_mut().expect("record before batch");
                last["records"].as_array_mut().unwrap().push(rec);
            }
            Event::Finding(f) => self.damage.push(serde_json::to_value(f).unwrap()),
            Event::TrailingBytes { bytes, .. } => self.trailing = Some(*bytes),
            Event::OffsetIndexEntry { entry, .. } => {
                self.entries.push(serde_json::to_value(entry).unwrap())
            }
            Event::TimeIndexEntry { entry, .. } => {
                self.entries.push(serde_json::to_value(entry).unwrap())
            }
            Event::ZeroTail { slots, .. } => self.zero_slots = *slots,
            Event::TxnEntry(t) => self.entries.push(serde_json::to_value(t).unwrap()),
            Event::LeaderEpochEntry(e) => self.entries.push(serde_json::to_value(e).unwrap()),
            Event::SnapshotEntry(e) => self.entries.push(json!({
                "producerId": e.producer_id,
                "producerEpoch": e.producer_epoch,
                "coordinatorEpoch": e.coordinator_epoch,
                "lastTimestamp": e.timestamp,
                "currentTxnFirstOffset": e.current_txn_first_offset(),
                "firstSequence": e.first_sequence(),
                "lastSequence": e.last_sequence,
                "firstDataOffset": e.first_offset(),
                "lastDataOffset": e.last_offset,
                "lastOffsetDelta": e.offset_delta,
            })),
            Event::PartitionMetadata { version, topic_id } => {
                self.partition_metadata = Some(json!({"version": version, "topicId": topic_id}))
            }
            _ => {}
        }
        Ok(())
    }
}

fn dump(path: &Path) -> Collect {
    let mut c = Collect::default();
    let opts = DumpOptions {
        deep: true,
        print_data: true,
        ..Default::default()
    };
    dump_paths(&[path.to_path_buf()], &opts, &mut c).expect("dump");
    c
}

const BATCH_FIELDS: &[&str] = &[
    "position",
    "sizeInBytes",
    "magic",
    "crc",
    "isValid",
    "lastOffset",
    "count",
    "compression",
    "timestampType",
    "maxTimestamp",
    "producerId",
    "producerEpoch",
    "baseSequence",
    "lastSequence",
    "partitionLeaderEpoch",
    "isTransactional",
    "isControl",
    "deleteHorizonMs",
    "baseOffset",
];
const RECORD_FIELDS: &[&str] = &[
    "offset",
    "sequence",
    "timestamp",
    "sizeInBytes",
    "key",
    "value",
    "headers",
    "crc",
    "isValid",
    "attributes",
];

fn check_log(name: &str, path: &Path, want: &Value) -> usize {
    let got = dump(path);
    let want_batches = want["batches"].as_array().unwrap();
    assert_eq!(got.batches.len(), want_batches.len(), "{name}: batch count");
    let mut records = 0;
    for (g, w) in got.batches.iter().zip(want_batches) {
        let at = format!("{name} batch at {}", w["position"]);
        for f in BATCH_FIELDS {
            assert_eq!(g[f], w[f], "{at}: field {f}");
        }
        if w["magic"] == 2 {
            assert_eq!(
                g["baseTimestamp"], w["baseTimestamp"],
                "{at}: baseTimestamp"
            );
        }
        let (gr, wr) = (
            g["records"].as_array().unwrap(),
            w["records"].as_array().unwrap(),
        );
        assert_eq!(gr.len(), wr.len(), "{at}: record count");
        for (g, w) in gr.iter().zip(wr) {
            for f in RECORD_FIELDS {
                if w.get(*f).is_some() {
                    assert_eq!(g[f], w[f], "{at} record {}: field {f}", w["offset"]);
                }
            }
            if let Some(c) = w.get("control") {
                assert_eq!(g["control"]["type"], c["type"], "{at}: control type");
                assert_eq!(
                    g["control"]["coordinatorEpoch"], c["coordinatorEpoch"],
                    "{at}: coordinator epoch"
                );
            }
            records += 1;
        }
    }
    let trailing = want["trailingBytes"].as_u64().unwrap();
    assert_eq!(
        got.trailing.unwrap_or(0),
        trailing,
        "{name}: trailing bytes"
    );
    // Kafka's iterator fails on a size field < 14; kseg reports it as damage and resyncs.
    let invalid = want_batches
        .iter()
        .filter(|b| b["isValid"] == false)
        .count();
    if want["iterationError"].is_null() && trailing == 0 && invalid == 0 {
        assert!(
            got.damage.is_empty(),
            "{name}: unexpected damage {:?}",
            got.damage
        );
    }
    records
}

/// Index, snapshot and checkpoint files: every entry as Kafka's readers saw it.
fn check_state_file(name: &str, path: &Path, want: &Value) -> usize {
    let got = dump(path);
    let kind = want["type"].as_str().unwrap();
    let empty = vec![];
    let want_entries = want["entries"].as_array().unwrap_or(&empty);
    match kind {
        "offset_index" | "time_index" => {
            // Kafka lists every slot; kseg shows entries up to the zero-filled tail and
            // reports the tail. Together they must cover every slot.
            let shown = got.entries.len();
            assert_eq!(
                shown + got.zero_slots,
                want["entryCount"].as_u64().unwrap() as usize,
                "{name}: slots"
            );
            assert_eq!(&got.entries[..], &want_entries[..shown], "{name}: entries");
            let base = want["baseOffset"].as_i64().unwrap();
            for tail in &want_entries[shown..] {
                assert_eq!(tail["offset"], base, "{name}: zero tail slot {tail}");
            }
        }
        "txn_index" | "leader_epoch_checkpoint" => {
            assert_eq!(&got.entries[..], &want_entries[..], "{name}: entries");
        }
        "producer_snapshot" => {
            assert!(
                want["error"].is_null(),
                "{name}: corpus snapshot has an error"
            );
            assert_eq!(&got.entries[..], &want_entries[..], "{name}: entries");
        }
        "partition_metadata" => {
            let pm = got.partition_metadata.expect("partition metadata");
            assert_eq!(pm["topicId"], want["topicId"], "{name}: topic id");
            assert_eq!(pm["version"], want["version"], "{name}: version");
        }
        other => panic!("{name}: unexpected file type {other}"),
    }
    got.entries.len()
}

/// Calls `check` for every file of every scenario whose expected type is (`log`) or is not
/// (`!log`) a log, with its name, path and Kafka's reading; returns the sum of what it counts.
fn each_file(logs: bool, check: fn(&str, &Path, &Value) -> usize) -> Option<usize> {
    let root = common::reference_dir()?;
    let mut checked = 0;
    for scenario in common::scenarios(&root) {
        let expected: Value =
            serde_json::from_slice(&std::fs::read(scenario.join("expected-dump.json")).unwrap())
                .unwrap();
        let dir: PathBuf = scenario
            .join("input")
            .join(expected["directory"].as_str().unwrap());
        for (file, want) in expected["files"].as_object().unwrap() {
            if (want["type"] == "log") == logs {
                let name = format!("{}/{file}", scenario.file_name().unwrap().to_string_lossy());
                checked += check(&name, &dir.join(file), want);
            }
        }
    }
    Some(checked)
}

#[test]
fn state_files_decode_as_kafka_decodes_them() {
    let Some(checked) = each_file(false, check_state_file) else {
        return;
    };
    assert!(checked > 500, "only {checked} entries checked");
}

#[test]
fn logs_decode_as_kafka_decodes_them() {
    let Some(checked) = each_file(true, check_log) else {
        return;
    };
    assert!(checked > 10_000, "only {checked} records checked");
}

/// `--value-format hex` (or base64) applies to the text output too: binary payloads no longer
/// break lines, so every record is one line, `Dumping`, `Log starting offset` and one line per
/// batch besides (counts from Kafka's own reader, expected-dump.json).
#[test]
fn encoded_payloads_keep_one_line_per_record() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let s = root.join("b-codecs");
    let expected: Value =
        serde_json::from_slice(&std::fs::read(s.join("expected-dump.json")).unwrap()).unwrap();
    let mut checked = 0;
    for (name, file) in expected["files"].as_object().unwrap() {
        if file["type"] != "log" {
            continue;
        }
        let batches = file["batches"].as_array().unwrap();
        let records: usize = batches
            .iter()
            .map(|b| b["records"].as_array().unwrap().len())
            .sum();
        for format in ["hex", "base64"] {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
                .args([
                    "dump",
                    "--print-data-log",
                    "--value-format",
                    format,
                    "--key-format",
                    format,
                ])
                .arg(s.join("input/orders-0").join(name))
                .output()
                .unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            assert_eq!(
                text.lines().count(),
                2 + batches.len() + records,
                "{name} {format}"
            );
            let payloads = text.lines().filter(|l| l.contains(" payload: ")).count();
            assert_eq!(payloads, records, "{name} {format}");
        }
        checked += 1;
    }
    assert!(checked > 1);
}
