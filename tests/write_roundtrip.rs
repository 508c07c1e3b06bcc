//! Round trips: random specs (null and binary keys and values, headers, every codec, legacy
//! magic 0/1 message sets before v2 batches, idempotent producers, several batches per append,
//! rolls by op and by size) written by the engine decode back to exactly the records and
//! batch metadata that went in.

use std::path::Path;

use kseg::format::entry::Entry;
use kseg::ops::write::spec::{write_spec, Spec};
use kseg::storage::log_reader::{LogReader, Step};
use proptest::prelude::*;
use serde_json::{json, Value};

const CODECS: [&str; 5] = ["none", "gzip", "snappy", "lz4", "zstd"];
const TS0: i64 = 1_700_000_000_000;

type Bytes = Option<Vec<u8>>;

#[derive(Debug, Clone)]
struct Rec {
    key: Bytes,
    value: Bytes,
    headers: Vec<(String, Bytes)>,
    ts_delta: i64,
    base64: bool,
}

#[derive(Debug, Clone)]
struct Batch {
    magic: i8,
    codec: usize,
    producer: Option<i64>,
    leader_epoch: i32,
    records: Vec<Rec>,
}

/// One record as written and as read back: offset, timestamp, key, value, headers, then the
/// batch's magic, codec, producer id and epoch, the record's sequence and the leader epoch.
type Flat = (
    i64,
    i64,
    Bytes,
    Bytes,
    Vec<(String, Bytes)>,
    i8,
    String,
    i64,
    i16,
    i32,
    i32,
);

fn bytes(max: usize) -> impl Strategy<Value = Bytes> {
    prop::option::weighted(0.8, prop::collection::vec(any::<u8>(), 0..max))
}

fn record(headers: bool) -> impl Strategy<Value = Rec> {
    let hs = if headers { 0..3usize } else { 0..1usize };
    (
        bytes(12),
        bytes(120),
        prop::collection::vec(("[a-z]{0,4}", bytes(8)), hs),
        -50i64..1000,
        any::<bool>(),
    )
        .prop_map(|(key, value, headers, ts_delta, base64)| Rec {
            key,
            value,
            headers,
            ts_delta,
            base64,
        })
}

fn batch(magic: i8) -> impl Strategy<Value = Batch> {
    // zstd needs v2.
    let codecs = if magic == 2 {
        CODECS.len()
    } else {
        CODECS.len() - 1
    };
    (
        0..codecs,
        prop::option::of(1i64..4),
        0i32..3,
        prop::collection::vec(record(magic == 2), 1..6),
    )
        .prop_map(move |(codec, producer, leader_epoch, records)| Batch {
            magic,
            codec,
            producer: producer.filter(|_| magic == 2),
            leader_epoch,
            records,
        })
}

/// Appends (each one or more batches) and whether a roll follows each.
fn appends() -> impl Strategy<Value = Vec<(Vec<Batch>, bool)>> {
    let legacy = prop::collection::vec(
        (
            (0i8..2).prop_flat_map(|m| prop::collection::vec(batch(m), 1..3)),
            prop::bool::weighted(0.2),
        ),
        0..3,
    );
    let v2 = prop::collection::vec(
        (
            prop::collection::vec(batch(2), 1..4),
            prop::bool::weighted(0.2),
        ),
        1..8,
    );
    (legacy, v2).prop_map(|(mut a, b)| {
        // Leader epochs only grow, as a log's do.
        a.extend(b);
        let mut epoch = 0;
        for (batches, _) in &mut a {
            for b in batches {
                epoch = epoch.max(b.leader_epoch);
                b.leader_epoch = epoch;
            }
        }
        a
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn bytes_json(field: &str, b: &Bytes, base64: bool) -> (String, Value) {
    use base64::Engine as _;
    match b {
        None => (field.to_string(), Value::Null),
        Some(b) if base64 => (
            format!("{field}_base64"),
            json!(base64::engine::general_purpose::STANDARD.encode(b)),
        ),
        Some(b) => (format!("{field}_hex"), json!(hex(b))),
    }
}

/// The spec and the records it must read back as.
fn spec_of(appends: &[(Vec<Batch>, bool)], segment_bytes: u64) -> (Value, Vec<Flat>) {
    let mut ops = Vec::new();
    let mut want = Vec::new();
    let mut offset = 0i64;
    let mut sequences = std::collections::HashMap::new();
    for (batches, roll) in appends {
        let mut out = Vec::new();
        for b in batches {
            let mut records = Vec::new();
            let seq0: i32 = b.producer.map_or(-1, |p| *sequences.get(&p).unwrap_or(&0));
            for (i, r) in b.records.iter().enumerate() {
                let mut o = serde_json::Map::new();
                let ts = TS0 + r.ts_delta;
                if b.magic > 0 {
                    o.insert("timestamp".into(), json!(ts));
                }
                let (k, v) = bytes_json("key", &r.key, r.base64);
                o.insert(k, v);
                let (k, v) = bytes_json("value", &r.value, !r.base64);
                o.insert(k, v);
                let headers: Vec<Value> = r
                    .headers
                    .iter()
                    .map(|(k, v)| {
                        let (f, v) = bytes_json("value", v, r.base64);
                        json!({"key": k, f: v})
                    })
                    .collect();
                o.insert("headers".into(), json!(headers));
                records.push(Value::Object(o));
                want.push((
                    offset,
                    if b.magic == 0 { -1 } else { ts },
                    r.key.clone(),
                    r.value.clone(),
                    r.headers.clone(),
                    b.magic,
                    CODECS[b.codec].to_string(),
                    b.producer.unwrap_or(-1),
                    if b.producer.is_some() { 0 } else { -1 },
                    if b.producer.is_some() {
                        seq0 + i as i32
                    } else {
                        -1
                    },
                    if b.magic == 2 { b.leader_epoch } else { -1 },
                ));
                offset += 1;
            }
            if let Some(p) = b.producer {
                sequences.insert(p, seq0 + b.records.len() as i32);
            }
            let mut batch =
                json!({"magic": b.magic, "compression": CODECS[b.codec], "records": records});
            if b.magic == 2 {
                batch["leader_epoch"] = json!(b.leader_epoch);
            }
            if let Some(p) = b.producer {
                batch["producer_id"] = json!(p);
            }
            out.push(batch);
        }
        ops.push(json!({"op": "append", "batches": out}));
        if *roll {
            ops.push(json!({"op": "roll"}));
        }
    }
    let spec = json!({"topic": "rt", "partition": 0, "config": {"segment.bytes": segment_bytes}, "ops": ops});
    (spec, want)
}

/// Every record of the partition's `.log` files, in offset order, with its batch's metadata;
/// and each segment's base offset with the first offset it holds.
fn read_back(dir: &Path) -> (Vec<Flat>, Vec<(i64, i64)>) {
    let mut logs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    let mut out = Vec::new();
    let mut firsts = Vec::new();
    for log in logs {
        let base: i64 = log.file_stem().unwrap().to_str().unwrap().parse().unwrap();
        let mut reader = LogReader::open(&log, None).unwrap();
        let mut first = None;
        loop {
            let (entry, meta) = match reader.next_step().unwrap() {
                Step::Entry { entry, .. } => {
                    let meta = match entry {
                        Entry::V2(b) => (
                            b.header.producer_id,
                            b.header.producer_epoch,
                            b.header.partition_leader_epoch,
                        ),
                        Entry::Legacy(_) => (-1, -1, -1),
                    };
                    (entry, meta)
                }
                Step::End { trailing: 0, .. } => break,
                other => panic!("{}: {other:?}", log.display()),
            };
            assert!(entry.crc_is_valid());
            let codec = entry.compression().unwrap().name().to_string();
            let mut scratch = Vec::new();
            for r in entry.records(&mut scratch, usize::MAX).unwrap() {
                let r = r.unwrap();
                first.get_or_insert(r.offset);
                out.push((
                    r.offset,
                    r.timestamp,
                    r.key.map(<[u8]>::to_vec),
                    r.value.map(<[u8]>::to_vec),
                    r.headers
                        .iter()
                        .map(|h| {
                            (
                                String::from_utf8(h.key.to_vec()).unwrap(),
                                h.value.map(<[u8]>::to_vec),
                            )
                        })
                        .collect(),
                    entry.magic(),
                    codec.clone(),
                    meta.0,
                    meta.1,
                    r.sequence,
                    meta.2,
                ));
            }
        }
        if let Some(f) = first {
            firsts.push((base, f));
        }
    }
    (out, firsts)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn written_specs_read_back_exactly(appends in appends(), segment_bytes in 4000u64..9000) {
        let (spec_json, want) = spec_of(&appends, segment_bytes);
        let spec = Spec::from_json(&spec_json.to_string()).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("rt-0");
        let summary = write_spec(&spec, &dir).unwrap();
        let (got, firsts) = read_back(&dir);
        prop_assert_eq!(summary.log_end_offset, want.len() as i64);
        prop_assert_eq!(got, want);
        // Every non-empty segment starts with its base offset (no gaps in these specs).
        for (base, first) in firsts {
            prop_assert_eq!(base, first);
        }
        let rolls = appends.iter().filter(|(_, r)| *r).count();
        prop_assert!(summary.segments.len() > rolls);
    }
}
