//! Every JSON document kseg prints, over the bundled testdata, the whole reference corpus, the
//! internal-topic corpus and the real-world log dirs (the runs of `common::json_runs`), is
//! valid against `schemas/kseg-3.schema.json`, says `"format": "kseg/3"` and has no key twice.

mod common;

use common::json_runs::{self, JsonRun};
use common::{schema_errors, schema_root, validator};

use serde_json::Value;

/// Checks every document of every run against its definition; the number of documents.
fn check(runs: &[JsonRun]) -> usize {
    let root = schema_root();
    let mut documents = 0;
    for run in runs {
        let docs = run.documents();
        let first = &docs[0];
        let format = first.get("format").unwrap_or(&Value::Null);
        assert_eq!(format, "kseg/3", "{}: first document", run.shown());
        let v = validator(&root, run.def);
        for (i, doc) in docs.iter().enumerate() {
            let errors = schema_errors(&v, doc);
            assert!(
                errors.is_empty(),
                "{}, document {i}: {errors:#?}",
                run.shown()
            );
        }
        documents += docs.len();
    }
    documents
}

#[test]
fn every_command_matches_the_schema_on_the_reference_corpus() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let n = check(&json_runs::reference(&root, tmp.path()));
    assert!(n > 10_000, "only {n} documents");
}

#[test]
fn internal_topic_dumps_match_the_schema() {
    let Some(root) = common::reference_internal_dir() else {
        return;
    };
    let n = check(&json_runs::reference_internal(&root));
    assert!(n > 1_000, "only {n} documents");
}

#[test]
fn verify_and_dump_of_real_brokers_log_dirs_match_the_schema() {
    let Some(root) = common::realworld_dir() else {
        return;
    };
    let (tmp, _) = common::unpack_realworld(&root);
    let dirs = common::broker_log_dirs(tmp.path());
    assert!(dirs.len() >= 5, "only {} broker log dirs", dirs.len());
    let n = check(&json_runs::realworld(&dirs));
    assert!(n > 100, "only {n} documents");
}

#[test]
fn every_command_matches_the_schema_on_the_bundled_testdata() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = json_runs::bundled(tmp.path());
    let n = check(&runs);
    assert!(n > runs.len(), "only {n} documents");
}

#[test]
fn dump_json_is_one_document_whose_items_are_the_jsonl_lines() {
    let log = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/orders/orders-0");
    let out = common::kseg(&["dump", "--json", "--deep-iteration", log]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let out = common::kseg(&["dump", "--jsonl", "--deep-iteration", log]);
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0],
        serde_json::json!({"format": "kseg/3", "type": "stream"})
    );
    assert_eq!(doc["format"], "kseg/3");
    assert_eq!(doc["items"].as_array().unwrap()[..], lines[1..]);
    assert!(lines.len() > 100);
}

/// The schema is strict: an old field name, a missing format or a string where an object is
/// due (an encoded key) is rejected (so the tests above can fail).
#[test]
fn the_schema_rejects_renamed_and_retyped_fields() {
    let root = schema_root();
    let verify = validator(&root, "verify");
    let good = serde_json::json!({
        "format": "kseg/3", "partitions": [{"dir": "t-0", "topic": "t", "partition": 0,
        "segments": [], "logStartOffset": null, "logStartOffsetSource": null, "logEndOffset": null,
        "findings": []}],
        "logDirFindings": [], "checkedFileCount": 0, "bytesChecked": 0, "skippedFiles": [], "classifiedFiles": []
    });
    assert!(verify.is_valid(&good));
    let mut renamed = good.clone();
    let p = renamed["partitions"][0].as_object_mut().unwrap();
    let dir = p.remove("dir").unwrap();
    p.insert("path".into(), dir);
    assert!(!verify.is_valid(&renamed));
    let mut unversioned = good.clone();
    unversioned.as_object_mut().unwrap().remove("format");
    assert!(!verify.is_valid(&unversioned));
    let line = validator(&root, "dumpLine");
    let record = serde_json::json!({"type": "record", "file": "x.log", "offset": 0,
        "timestamp": 0, "timestampType": "CreateTime", "sequence": -1, "sizeInBytes": 7,
        "keySize": -1, "valueSize": -1, "headers": [], "decodedKey": {"text": "Error"}});
    assert!(line.is_valid(&record));
    let mut as_string = record.clone();
    as_string["key"] = Value::from("k");
    assert!(!line.is_valid(&as_string));
}
