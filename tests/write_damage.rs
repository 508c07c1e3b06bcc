//! `damage` in a spec: every kind changes exactly the bytes it names, and the reference
//! corpus' DAMAGE.json applied to its SPEC.json reproduces the damaged scenarios byte for byte.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use kseg::ops::write::spec::{write_spec, Spec};
use serde_json::{json, Value};

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// Writes `spec` (a JSON value) into a fresh directory and returns its files.
fn write(spec: &Value) -> kseg::Result<(BTreeMap<String, Vec<u8>>, Value)> {
    let spec = Spec::from_json(&spec.to_string())?;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("t-0");
    let summary = write_spec(&spec, &out)?;
    Ok((files(&out), summary.to_json()))
}

/// Two segments (base offsets 0 and 4) of three appends each of uncompressed v2 batches, closed cleanly.
fn base_spec(damage: Value) -> Value {
    json!({
        "topic": "t", "partition": 0, "start_ts": 1000,
        "config": {"index.interval.bytes": 1, "segment.index.bytes": 1000},
        "ops": [
            {"op": "append", "batches": [{"records": [{"key": "a", "value": "one"}, {"value": "two"}]}]},
            {"op": "append", "batches": [{"records": [{"value": "three"}]}]},
            {"op": "append", "batches": [{"records": [{"value": "four"}]}]},
            {"op": "roll"},
            {"op": "append", "batches": [{"gen": {"count": 4, "value_len": 20, "seed": 3}}]},
            {"op": "append", "batches": [{"gen": {"count": 2, "value_len": 20, "seed": 4}}]},
            {"op": "append", "batches": [{"gen": {"count": 1, "value_len": 20, "seed": 5}}]}
        ],
        "damage": damage
    })
}

/// The names and positions at which `after` differs from `before`, plus added/removed names.
fn diff(
    before: &BTreeMap<String, Vec<u8>>,
    after: &BTreeMap<String, Vec<u8>>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for name in before.keys().chain(after.keys()) {
        let change = match (before.get(name), after.get(name)) {
            (Some(_), None) => "deleted".to_string(),
            (None, Some(b)) => format!("added {} bytes", b.len()),
            (Some(a), Some(b)) if a.len() != b.len() => format!("{} -> {} bytes", a.len(), b.len()),
            (Some(a), Some(b)) => {
                let at: Vec<usize> = (0..a.len()).filter(|i| a[*i] != b[*i]).collect();
                if at.is_empty() {
                    continue;
                }
                format!("bytes {at:?}")
            }
            (None, None) => unreachable!(),
        };
        if !out.iter().any(|(n, _)| n == name) {
            out.push((name.clone(), change));
        }
    }
    out.sort();
    out
}

/// Where each batch of a `.log` starts.
fn batch_starts(log: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut at = 0;
    while at < log.len() {
        starts.push(at);
        at += 12 + u32::from_be_bytes(log[at + 8..at + 12].try_into().unwrap()) as usize;
    }
    starts
}

const LOG0: &str = "00000000000000000000.log";
const LOG3: &str = "00000000000000000004.log";

#[test]
fn flip_byte_by_position_batch_record_and_at() {
    let (clean, _) = write(&base_spec(json!([]))).unwrap();
    let log0 = &clean[LOG0];
    let first_batch_len = 12 + u32::from_be_bytes(log0[8..12].try_into().unwrap()) as usize;

    // Absolute position, explicit new value, old value checked.
    let (got, summary) = write(&base_spec(
        json!({"kind": "flip_byte", "file": LOG0, "position": 70, "old": log0[70], "new": 0x41}),
    ))
    .unwrap();
    assert_eq!(diff(&clean, &got), vec![(LOG0.into(), "bytes [70]".into())]);
    assert_eq!(got[LOG0][70], 0x41);
    assert_eq!(summary["damage"][0]["old"], json!(log0[70]));

    // Batch 1 of segment 0: by default its last byte, every bit flipped.
    let (got, summary) = write(&base_spec(
        json!({"kind": "flip_byte", "segment": 0, "batch": 1}),
    ))
    .unwrap();
    let second_batch_len = 12
        + u32::from_be_bytes(
            log0[first_batch_len + 8..first_batch_len + 12]
                .try_into()
                .unwrap(),
        ) as usize;
    let last = first_batch_len + second_batch_len - 1;
    assert_eq!(
        diff(&clean, &got),
        vec![(LOG0.into(), format!("bytes [{last}]"))]
    );
    assert_eq!(got[LOG0][last], !log0[last]);
    assert_eq!(
        summary["damage"][0]["batchPosition"],
        json!(first_batch_len)
    );

    // Record 1 of batch 0 of the last segment, byte 2 of that record.
    let log3 = &clean[LOG3];
    let (got, _) = write(&base_spec(
        json!([{"kind": "flip_byte", "segment_index": -1, "batch": 0, "record": 1, "at": 2}]),
    ))
    .unwrap();
    // Records area starts at 61; record 0 is its length varint plus that many bytes.
    let r0 = 1 + log3[61] as usize / 2;
    assert_eq!(
        diff(&clean, &got),
        vec![(LOG3.into(), format!("bytes [{}]", 61 + r0 + 2))]
    );

    // Negative batch index: the last batch of the last segment.
    let (got, _) = write(&base_spec(
        json!({"kind": "flip_byte", "segment": 4, "batch": -1, "at": 0}),
    ))
    .unwrap();
    let last_batch = *batch_starts(log3).last().unwrap();
    assert_eq!(
        diff(&clean, &got),
        vec![(LOG3.into(), format!("bytes [{last_batch}]"))]
    );
}

#[test]
fn index_damage_and_leftovers() {
    let (clean, _) = write(&base_spec(json!([]))).unwrap();
    let idx0 = "00000000000000000000.index";
    let tix3 = "00000000000000000004.timeindex";
    assert_eq!(clean[idx0].len(), 16, "two entries (one per append)");

    let (got, _) = write(&base_spec(json!({"kind": "delete", "file": idx0}))).unwrap();
    assert_eq!(diff(&clean, &got), vec![(idx0.into(), "deleted".into())]);

    let (got, _) = write(&base_spec(
        json!({"kind": "truncate", "segment": 4, "ext": "timeindex", "from": 24, "to": 19}),
    ))
    .unwrap();
    assert_eq!(
        diff(&clean, &got),
        vec![(tix3.into(), "24 -> 19 bytes".into())]
    );
    assert_eq!(got[tix3][..], clean[tix3][..19]);

    let (got, _) = write(&base_spec(
        json!({"kind": "swap_entries", "file": idx0, "entries": [0, 1]}),
    ))
    .unwrap();
    assert_eq!(got[idx0][..8], clean[idx0][8..]);
    assert_eq!(got[idx0][8..], clean[idx0][..8]);
    let (got, _) = write(&base_spec(
        json!({"kind": "swap_entries", "file": tix3, "entries": [1, 0]}),
    ))
    .unwrap();
    assert_eq!(got[tix3][..12], clean[tix3][12..]);

    // Preallocated again to segment.index.bytes, rounded down to whole entries.
    let (got, _) = write(&base_spec(json!([
        {"kind": "preallocate", "segment": 0, "ext": "index"},
        {"kind": "preallocate", "file": tix3}
    ])))
    .unwrap();
    assert_eq!(got[idx0].len(), 1000);
    assert_eq!(got[idx0][..16], clean[idx0][..]);
    assert!(got[idx0][16..].iter().all(|b| *b == 0));
    assert_eq!(got[tix3].len(), 996);
    assert_eq!(got[tix3][..24], clean[tix3][..]);

    // Leftovers: copies of a whole segment, or one renamed file.
    let (got, summary) = write(&base_spec(json!([
        {"kind": "leftover", "segment": 0, "suffix": "swap"},
        {"kind": "leftover", "segment": 4, "ext": "log", "suffix": "deleted", "rename": true}
    ])))
    .unwrap();
    let d = diff(&clean, &got);
    assert_eq!(
        d,
        vec![
            (
                "00000000000000000000.index.swap".into(),
                "added 16 bytes".into()
            ),
            (
                format!("{LOG0}.swap"),
                format!("added {} bytes", clean[LOG0].len())
            ),
            (
                "00000000000000000000.timeindex.swap".into(),
                "added 24 bytes".into()
            ),
            (LOG3.into(), "deleted".into()),
            (
                format!("{LOG3}.deleted"),
                format!("added {} bytes", clean[LOG3].len())
            ),
        ]
    );
    assert_eq!(got[&format!("{LOG3}.deleted")], clean[LOG3]);
    assert_eq!(summary["damage"][0]["files"].as_array().unwrap().len(), 3);
}

#[test]
fn bad_damage_is_an_error_naming_the_file() {
    let cases = [
        (
            json!({"kind": "flip_byte", "file": LOG0, "position": 99999}),
            "past the end",
        ),
        (
            json!({"kind": "flip_byte", "file": LOG0, "position": 0, "old": 7}),
            "expected old value",
        ),
        (
            json!({"kind": "flip_byte", "segment": 0, "batch": 5}),
            "whole batch",
        ),
        (
            json!({"kind": "flip_byte", "segment": 0, "batch": 0, "record": 9}),
            "no record 9",
        ),
        (
            json!({"kind": "flip_byte", "segment": 0, "batch": 0, "at": 5000}),
            "outside",
        ),
        (
            json!({"kind": "flip_byte", "segment": 0}),
            "needs `position` or `batch`",
        ),
        (json!({"kind": "flip_byte", "segment": 7}), "No such file"),
        (
            json!({"kind": "delete", "file": "../x"}),
            "expected a file name",
        ),
        (json!({"kind": "delete", "segment": 0}), "needs `ext`"),
        (
            json!({"kind": "delete", "segment": 0, "file": LOG0}),
            "exactly one of",
        ),
        (
            json!({"kind": "truncate", "file": LOG0, "to": 1_000_000}),
            "at most",
        ),
        (
            json!({"kind": "swap_entries", "file": LOG0, "entries": [0, 1]}),
            ".index or .timeindex",
        ),
        (
            json!({"kind": "swap_entries", "file": "00000000000000000000.index", "entries": [0, 2]}),
            "below 2",
        ),
        (
            json!({"kind": "preallocate", "file": "00000000000000000000.index", "bytes": 8}),
            "more than",
        ),
        (
            json!({"kind": "leftover", "segment_index": 5, "suffix": "swap"}),
            "segment(s)",
        ),
    ];
    for (damage, want) in cases {
        let err = write(&base_spec(damage.clone())).unwrap_err().to_string();
        assert!(err.contains(want), "{damage}: {err}");
        assert!(
            err.contains("damage[0]") || err.contains("t-0"),
            "{damage}: {err}"
        );
    }
    for bad_shape in [
        json!({"kind": "flip_byte", "file": LOG0, "position": 1, "typo": 1}),
        json!({"kind": "melt", "file": LOG0}),
        json!({"kind": "leftover", "segment": 0, "suffix": "tmp"}),
        json!({"kind": "delete", "segment": 0, "ext": "snapshot"}),
    ] {
        let err = write(&base_spec(bad_shape.clone()))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("SPEC.json: invalid spec"),
            "{bad_shape}: {err}"
        );
    }
}

/// SPEC.json + DAMAGE.json of the corpus' damaged scenarios, written by kseg, equal `input/`.
#[test]
fn corpus_damage_reproduces_damaged_scenarios() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    for name in ["g-corrupt-middle", "h-index-damage"] {
        let dir = root.join(name);
        let read = |f: &str| -> Value {
            serde_json::from_str(&std::fs::read_to_string(dir.join(f)).unwrap()).unwrap()
        };
        let mut spec = read("SPEC.json");
        spec["damage"] = read("DAMAGE.json");
        let (got, summary) = write(&spec).unwrap();
        let want = files(&dir.join("input/orders-0"));
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "{name}"
        );
        for (f, bytes) in &want {
            assert!(got[f] == *bytes, "{name}/{f} differs");
        }
        // The summary reports each damage in the corpus' shape.
        let corpus = match read("DAMAGE.json") {
            Value::Array(list) => list,
            one => vec![one],
        };
        for (done, asked) in summary["damage"].as_array().unwrap().iter().zip(&corpus) {
            for (k, v) in asked.as_object().unwrap() {
                if done.get(k).is_some() {
                    assert_eq!(&done[k], v, "{name}: {k}");
                }
            }
        }
    }
}
