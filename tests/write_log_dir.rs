//! The log-dir form of a spec: partitions plus the log dir's checkpoints, `meta.properties`
//! and clean-shutdown marker, deterministic and readable by the checkpoint decoders.

use std::path::Path;
use std::process::Command;

use kseg::format::checkpoint::{MetaProperties, OffsetCheckpoint};
use kseg::ops::write::log_dir::{write_log_dir, LogDirSpec};
use kseg::ops::write::spec::{write_spec, AnySpec, Spec};
use serde_json::{json, Value};

fn partition(topic: &str, partition: i32, close: &str) -> Value {
    json!({
        "topic": topic, "partition": partition, "close": close,
        "config": {"segment.bytes": 300},
        "ops": [{"op": "repeat", "times": 6, "ops": [
            {"op": "append", "batches": [{"gen": {"count": 3, "value_len": 40, "seed": partition}}]}
        ]}]
    })
}

fn parse(spec: &Value) -> kseg::Result<LogDirSpec> {
    match AnySpec::from_json_at(&spec.to_string(), Path::new("logdir.json"))? {
        AnySpec::LogDir(s) => Ok(s),
        AnySpec::Partition(_) => panic!("not detected as a log-dir spec"),
    }
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

#[test]
fn log_dir_files_as_the_broker_leaves_them() {
    let spec = parse(&json!({
        "partitions": [partition("orders", 1, "clean"), partition("orders", 0, "crash"), partition("audit", 0, "clean")],
        "now_ms": 1730000000000i64,
        "checkpoints": {"log_start_offset": {"orders-1": 7}, "cleaner": {"audit-0": 5}}
    }))
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("logs");
    let summary = write_log_dir(&spec, &out).unwrap();
    let leo = summary.partitions[0].log_end_offset;
    assert_eq!(leo, 18);
    let crash_active = *summary.partitions[1].segments.last().unwrap();
    assert!(crash_active > 0);

    assert_eq!(
        read(&out, "recovery-point-offset-checkpoint"),
        format!("0\n3\naudit 0 18\norders 0 {crash_active}\norders 1 18\n")
    );
    assert_eq!(
        read(&out, "replication-offset-checkpoint"),
        "0\n3\naudit 0 18\norders 0 18\norders 1 18\n"
    );
    assert_eq!(
        read(&out, "log-start-offset-checkpoint"),
        "0\n1\norders 1 7\n"
    );
    assert_eq!(read(&out, "cleaner-offset-checkpoint"), "0\n1\naudit 0 5\n");
    assert_eq!(
        read(&out, "meta.properties"),
        "#\n#Sun Oct 27 03:33:20 UTC 2024\ncluster.id=a3NlZy1maXh0dXJlcy0xAA\ndirectory.id=a3NlZy1sb2ctZGlyLTAwMQ\nnode.id=1\nversion=1\n"
    );
    // One partition crashed: no clean-shutdown marker.
    assert!(!out.join(".kafka_cleanshutdown").exists());
    for f in [
        "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
        "log-start-offset-checkpoint",
        "cleaner-offset-checkpoint",
    ] {
        OffsetCheckpoint::decode(&std::fs::read(out.join(f)).unwrap(), f).unwrap();
    }
    let meta =
        MetaProperties::decode(&std::fs::read(out.join("meta.properties")).unwrap()).unwrap();
    assert_eq!(meta.node_id, Some(1));

    // Each partition directory is exactly what the partition spec alone writes.
    for p in &spec.partitions {
        let alone = tmp
            .path()
            .join("alone")
            .join(format!("{}-{}", p.topic, p.partition));
        write_spec(p, &alone).unwrap();
        let here = out.join(format!("{}-{}", p.topic, p.partition));
        let mut names: Vec<_> = std::fs::read_dir(&alone)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert!(names.len() > 4);
        for n in names {
            assert_eq!(
                std::fs::read(alone.join(&n)).unwrap(),
                std::fs::read(here.join(&n)).unwrap()
            );
        }
    }

    // Deterministic: a second write is identical.
    let again = tmp.path().join("again");
    write_log_dir(&spec, &again).unwrap();
    for f in &summary.files {
        assert_eq!(read(&out, f), read(&again, f));
    }
}

#[test]
fn clean_shutdown_marker_and_meta_version_0() {
    let spec = parse(&json!({
        "partitions": [partition("t", 0, "clean")],
        "broker_epoch": 42,
        "meta_properties": {"version": 0, "node_id": 3, "cluster_id": "c1"}
    }))
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let summary = write_log_dir(&spec, tmp.path()).unwrap();
    assert_eq!(
        read(tmp.path(), ".kafka_cleanshutdown"),
        r#"{"version":0,"brokerEpoch":42}"#
    );
    assert!(
        read(tmp.path(), "meta.properties").ends_with("broker.id=3\ncluster.id=c1\nversion=0\n")
    );
    assert_eq!(read(tmp.path(), "log-start-offset-checkpoint"), "0\n0\n");
    assert!(!tmp.path().join("cleaner-offset-checkpoint").exists());
    let report = summary.report(tmp.path());
    assert_eq!(report["partitions"][0]["topic"], "t");
    assert_eq!(report["partitions"][0]["partition"], 0);
}

#[test]
fn bad_log_dir_specs_are_errors_naming_the_file() {
    let cases = [
        (
            json!({"partitions": [partition("t", 0, "clean"), partition("t", 0, "crash")]}),
            "appears twice",
        ),
        (
            json!({"partitions": [partition("t", 0, "clean")], "checkpoints": {"high_watermark": {"t-9": 1}}}),
            "not one of the partitions",
        ),
        (
            json!({"partitions": [partition("t", 0, "clean")], "checkpoints": {"recovery_point": {"t-0": 99}}}),
            "expected an offset from 0",
        ),
        (
            json!({"partitions": [partition("t", 0, "clean")], "meta_properties": {"version": 2}}),
            "Unknown meta.properties version",
        ),
        (
            json!({"partitions": [partition("t", 0, "clean")], "meta_properties": {"directory_id": "x"}}),
            "directory_id",
        ),
    ];
    for (spec, want) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let err = parse(&spec)
            .and_then(|s| write_log_dir(&s, tmp.path()))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("logdir.json: "), "{err}");
        assert!(err.contains(want), "{spec}: {err}");
    }
    let err = parse(&json!({"partitions": [], "typo": 1}))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("invalid log-dir spec") && err.contains("typo"),
        "{err}"
    );
    // Without `partitions` the spec is a partition spec.
    let text = partition("t", 0, "clean").to_string();
    assert!(matches!(
        AnySpec::from_json_at(&text, Path::new("p.json")).unwrap(),
        AnySpec::Partition(Spec { partition: 0, .. })
    ));
}

#[test]
fn cli_writes_either_form() {
    let tmp = tempfile::tempdir().unwrap();
    let spec_path = tmp.path().join("logdir.json");
    std::fs::write(
        &spec_path,
        json!({"partitions": [partition("t", 0, "clean"), partition("u", 2, "clean")]}).to_string(),
    )
    .unwrap();
    let out = tmp.path().join("logs");
    let run = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .arg("write")
        .arg(&spec_path)
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for f in [
        "t-0",
        "u-2",
        "meta.properties",
        ".kafka_cleanshutdown",
        "replication-offset-checkpoint",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    let part_path = tmp.path().join("p.json");
    std::fs::write(&part_path, partition("v", 1, "crash").to_string()).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["write", "--json"])
        .arg(&part_path)
        .arg(tmp.path().join("parts"))
        .output()
        .unwrap();
    assert!(run.status.success());
    let summary: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(summary["close"], "crash");
    assert!(tmp
        .path()
        .join("parts/v-1/00000000000000000000.log")
        .exists());
}
