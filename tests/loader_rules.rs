//! `verify --deep` reads every record of an internal topic as the broker's loader of that topic
//! does (Kafka's `CoordinatorLoaderImpl`: a record whose key is missing or whose key or value
//! does not deserialize fails the partition's load; an unknown record type is logged and
//! skipped): an error for the first, a warning for the second, nothing without `--deep`.

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

/// `__consumer_offsets-0` under `dir` holding `records` (spec records) after one valid one.
fn offsets_partition(dir: &Path, record: Value) -> std::path::PathBuf {
    // OffsetCommitKey (type 1): group "g", topic "t", partition 0; a tombstone.
    let valid = json!({"key_hex": "0001000167000174 00000000".replace(' ', "")});
    let spec = json!({"topic": "__consumer_offsets", "partition": 0,
        "ops": [{"op": "append", "batches": [{"records": [valid, record]}]}]});
    let part = dir.join("__consumer_offsets-0");
    common::kseg_write(&spec.to_string(), &part);
    part
}

/// `kseg verify --json ARGS DIR`: exit status and (check, severity, offset) of each finding.
fn verify(args: &[&str], dir: &Path) -> (i32, Vec<(String, String, i64)>) {
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["verify", "--json"])
        .args(args)
        .arg(dir)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut found = Vec::new();
    for p in doc["partitions"].as_array().unwrap() {
        let segment_findings = p["segments"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|s| s["findings"].as_array().into_iter().flatten());
        for f in p["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(segment_findings)
        {
            found.push((
                f["check"].as_str().unwrap().to_owned(),
                f["severity"].as_str().unwrap().to_owned(),
                f["offset"].as_i64().unwrap_or(-1),
            ));
        }
    }
    (out.status.code().unwrap(), found)
}

#[test]
fn the_coordinators_loader_rejects_or_skips_what_it_cannot_read() {
    let cases = [
        // No key: the deserializer throws, the load fails.
        (
            json!({"value_hex": "0003"}),
            1,
            "record.loader-rejects",
            "error",
        ),
        // A valid key, a value cut after its version: the value does not read.
        (
            json!({"key_hex": "000100016700017400000000", "value_hex": "000300"}),
            1,
            "record.loader-rejects",
            "error",
        ),
        // A record type no Kafka release has: skipped with a warning.
        (
            json!({"key_hex": "00630001670001740000"}),
            0,
            "record.loader-skips",
            "warning",
        ),
    ];
    for (record, status, check, severity) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = offsets_partition(tmp.path(), record.clone());
        let (code, found) = verify(&["--deep"], &dir);
        assert_eq!(code, status, "{record}: {found:?}");
        assert_eq!(
            found,
            [(check.to_owned(), severity.to_owned(), 1)],
            "{record}"
        );
        // Shallow: records are not read.
        let (code, found) = verify(&[], &dir);
        assert_eq!((code, found), (0, vec![]), "{record}");
    }
}
