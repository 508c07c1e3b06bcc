//! Flags are validated in Kafka's own terms (issue 12, item 5): a value Kafka's config
//! definition refuses is exit status 2 with Kafka's message, before any file is read; decoders
//! that exclude each other are refused; a recovery point past the log end is taken as the
//! broker takes a checkpointed one, and said so.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::kseg_status as kseg;

/// The `crashed` fixture in `<tmp>/logs/crashed-0`.
fn fixture(tmp: &Path) -> PathBuf {
    let dir = tmp.join("logs/crashed-0");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/crashed/crashed-0");
    common::copy_dir(&src, &dir);
    dir
}

#[test]
fn values_kafka_refuses_are_refused_in_its_words() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path());
    let before = common::dir_contents(&dir);
    let cases: &[(&[&str], &str)] = &[
        (&["retention", "--retention-ms", "-5"], "Invalid value -5 for configuration retention.ms: Value must be at least -1"),
        (&["compact", "--min-cleanable-dirty-ratio", "7"], "Invalid value 7 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"),
        (&["compact", "--min-cleanable-dirty-ratio", "-0.5"], "Invalid value -0.5 for configuration min.cleanable.dirty.ratio: Value must be at least 0"),
        (&["compact", "--min-cleanable-dirty-ratio", "NaN"], "min.cleanable.dirty.ratio: not a number"),
        (&["compact", "--segment-bytes", "0"], "Invalid value 0 for configuration segment.bytes: Value must be at least 14"),
        (&["compact", "--segment-bytes", "3000000000"], "segment.bytes: Value must be no more than 2147483647"),
        (&["compact", "--delete-retention-ms", "-5"], "delete.retention.ms: Value must be at least 0"),
        (&["compact", "--min-compaction-lag-ms", "-1"], "min.compaction.lag.ms: Value must be at least 0"),
        (&["compact", "--max-compaction-lag-ms", "0"], "max.compaction.lag.ms: Value must be at least 1"),
        (&["compact", "--first-dirty-offset", "-1"], "-1 is not an offset"),
        (&["recover", "--segment-index-bytes", "0"], "segment.index.bytes: Value must be at least 4"),
        (&["recover", "--index-interval-bytes", "-1"], "index.interval.bytes: Value must be at least 0"),
        (&["recover", "--producer-id-expiration-ms", "0"], "producer.id.expiration.ms: Value must be at least 1"),
        (&["recover", "--recovery-point", "-1"], "-1 is not an offset"),
        (&["retention", "--high-watermark", "-3"], "-3 is not an offset"),
        (&["retention", "--log-start-offset", "-3"], "-3 is not an offset"),
        (&["rebuild-index", "--segment-index-bytes", "3"], "segment.index.bytes: Value must be at least 4"),
        (&["dump", "--offsets-decoder", "--transaction-log-decoder"], "cannot be used with"),
        (&["dump", "--cluster-metadata-decoder", "--share-group-state-decoder"], "cannot be used with"),
    ];
    for (args, message) in cases {
        let (code, stderr) = kseg(args, &dir);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    assert_eq!(common::dir_contents(&dir), before);
    // The edges Kafka accepts.
    let accepted: &[&[&str]] = &[
        &["retention", "--retention-ms", "-1"],
        &["retention", "--retention-ms", "0"],
        &["compact", "--min-cleanable-dirty-ratio", "1"],
        &[
            "compact",
            "--min-cleanable-dirty-ratio",
            "0",
            "--segment-bytes",
            "14",
        ],
        &["recover", "--index-interval-bytes", "0"],
        &["dump", "--offsets-decoder"],
    ];
    for args in accepted {
        let (code, stderr) = kseg(args, &dir);
        assert!(code == 0 || code == 1, "{args:?}: {code} {stderr}");
    }
}

#[test]
fn a_recovery_point_past_the_log_end_is_the_log_end_as_for_the_broker() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path());
    let (code, at_end) = kseg(&["recover", "--json"], &dir);
    assert_eq!(code, 1, "{at_end}");
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["recover", "--json", "--recovery-point", "99999"])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let log_end = plan["logEndOffset"].as_i64().unwrap();
    assert!(
        stderr.contains(&format!(
            "the recovery point 99999 (--recovery-point) is past the log end offset {log_end}"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("the log end is taken"), "{stderr}");
    // Within the log: no note.
    let (code, stderr) = kseg(&["recover", "--recovery-point", "0"], &dir);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("past the log end"), "{stderr}");
}

/// A high watermark past the log end is the log end, as the broker bounds it, and the report
/// says so; a log start offset past the log end is refused; a dedupe buffer without room for
/// two slots is refused as the cleaner refuses it.
#[test]
fn offsets_past_the_log_end() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path());
    let (code, stderr) = kseg(&["compact", "--dedupe-buffer-bytes", "47"], &dir);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("log.cleaner.dedupe.buffer.size 47: the offset map is too small"),
        "{stderr}"
    );
    let (code, stderr) = kseg(&["compact", "--dedupe-buffer-bytes", "48"], &dir);
    assert_eq!(code, 1, "{stderr}");
    // Refused before the copy is begun.
    let out = tmp.path().join("out");
    let (code, stderr) = kseg(
        &[
            "compact",
            "--dedupe-buffer-bytes",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
        &dir,
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(!out.exists());
    for cmd in ["retention", "compact"] {
        let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
            .args([cmd, "--high-watermark", "99999"])
            .arg(&dir)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {stdout}");
        assert!(
            stdout.contains("99999 from --high-watermark is past it, and the broker bounds"),
            "{cmd}: {stdout}"
        );
        let (code, stderr) = kseg(&[cmd, "--log-start-offset", "99999"], &dir);
        assert_eq!(code, 2, "{cmd}: {stderr}");
        assert!(
            stderr
                .contains("log start offset 99999 (--log-start-offset) is past the log end offset"),
            "{cmd}: {stderr}"
        );
    }
}
