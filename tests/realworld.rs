//! The field: log dirs that real brokers (Kafka 0.10 to 3.7, ZooKeeper and KRaft, several copied
//! while running) wrote and read back, and client libraries' test vectors
//! (`../shared/realworld/`, see its README). Nobody here wrote them, so on a broker log dir
//! every error would be a false alarm: `verify` finds none, its warnings are only those of what
//! the broker repairs or tolerates at start-up, and the repairs plan only what the broker's own
//! start-up does and leave what `verify` accepts.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn kseg(args: &[&str], paths: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(args)
        .args(paths)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

/// `kseg verify --json` of `paths`: the report, which must have been produced.
fn verify(deep: bool, paths: &[PathBuf]) -> (Value, i32) {
    let mut args = vec!["verify", "--json"];
    if deep {
        args.push("--deep");
    }
    let o = kseg(&args, paths);
    let report: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("verify {paths:?}: {e}; stderr: {}", stderr(&o)));
    (report, o.status.code().unwrap_or(-1))
}

/// Every finding of a verify report, with the partition it belongs to (None: the log dir's).
fn findings(report: &Value) -> Vec<(Option<&Value>, &Value)> {
    let mut out = Vec::new();
    for p in report["partitions"].as_array().unwrap() {
        for f in p["findings"].as_array().unwrap() {
            out.push((Some(p), f));
        }
    }
    for f in report["logDirFindings"].as_array().unwrap() {
        out.push((None, f));
    }
    out
}

/// The base offset in a segment file's name.
fn base_of(file: &str) -> Option<i64> {
    let name = Path::new(file).file_name()?.to_str()?;
    name.split('.').next()?.parse().ok()
}

/// What a running or crashed broker's log dir may show that the broker itself repairs or
/// tolerates at start-up: an untrimmed index on the active segment only (closed segments are
/// trimmed at roll), index files not created yet (created lazily by Kafka 3.x, rebuilt by
/// the loader), partitions created since the last checkpoint.
fn assert_allowed_warning(partition: Option<&Value>, f: &Value, where_: &str) {
    let check = f["check"].as_str().unwrap();
    match check {
        "index.untrimmed" => {
            let p = partition.expect("an index belongs to a partition");
            let active = p["segments"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["baseOffset"].as_i64().unwrap())
                .max();
            let base = base_of(f["file"].as_str().unwrap());
            assert_eq!(base, active, "{where_}: untrimmed closed segment: {f}");
        }
        "index.missing" | "timeindex.missing" | "checkpoint.missing-entry" => {}
        _ => panic!("{where_}: warning the rule does not allow: {f}"),
    }
}

#[test]
fn broker_log_dirs_verify_without_errors() {
    let Some(root) = common::realworld_dir() else {
        return;
    };
    let (tmp, _) = common::unpack_realworld(&root);
    let dirs = common::broker_log_dirs(tmp.path());
    assert!(dirs.len() >= 7, "broker log dirs found: {dirs:?}");
    for dir in &dirs {
        for deep in [false, true] {
            let where_ = format!("{} (deep: {deep})", dir.display());
            let (report, code) = verify(deep, std::slice::from_ref(dir));
            for (p, f) in findings(&report) {
                assert_eq!(f["severity"], "warning", "{where_}: {f}");
                assert_allowed_warning(p, f, &where_);
            }
            assert_eq!(code, 0, "{where_}");
            // Every partition of the log dir was checked.
            let listed = subdirs(dir).len();
            let checked = report["partitions"].as_array().unwrap().len();
            assert_eq!(checked, listed, "{where_}");
        }
    }
}

#[test]
fn broker_log_dirs_dump_whole_and_file_by_file() {
    let Some(root) = common::realworld_dir() else {
        return;
    };
    let (tmp, _) = common::unpack_realworld(&root);
    for dir in common::broker_log_dirs(tmp.path()) {
        let partitions = subdirs(&dir);
        let o = kseg(&["dump"], &partitions);
        assert!(o.status.success(), "{}: {}", dir.display(), stderr(&o));
        let all: Vec<PathBuf> = partitions
            .iter()
            .flat_map(|p| files(p))
            .chain(files(&dir))
            .collect();
        for chunk in all.chunks(200) {
            let o = kseg(&["dump", "--deep-iteration", "--print-data-log"], chunk);
            assert!(o.status.success(), "{}: {}", dir.display(), stderr(&o));
        }
    }
}

/// A finding expected on a client vector: check, severity, position, offset.
type Expected = (&'static str, &'static str, i64, Option<i64>);

/// The client-library vectors: what is odd about each, precisely (README of the corpus).
#[test]
fn client_vectors_give_their_exact_findings() {
    let Some(root) = common::realworld_dir() else {
        return;
    };
    let (tmp, names) = common::unpack_realworld(&root);
    // (partition, [(check, severity, position, offset)]) besides the warnings every one of them
    // gets: a lone `.log`, so no index files (`index.missing`, `timeindex.missing`), and for v2
    // batches no leader-epoch-checkpoint.
    let expected: &[(&str, &[Expected])] = &[
        // A hand-made control batch whose CRC really is wrong.
        (
            "control_batch_data_v2-0",
            &[("batch.crc", "error", 0, Some(0))],
        ),
        ("record_batch_data_v0-0", &[]),
        ("record_batch_data_v1-0", &[]),
        // Batches of separate tests laid end to end, each starting at offset 0.
        (
            "record_batch_data_v2-0",
            &[("log.offset-order", "error", 218, Some(0))],
        ),
        ("message-emptyBulkGzipMessage-0", &[]),
        ("message-emptyBulkLZ4Message-0", &[]),
        ("message-emptyBulkSnappyMessage-0", &[]),
        // zstd inside a v0/v1 wrapper: invalid by the format.
        (
            "message-emptyBulkZSTDMessage-0",
            &[("batch.records", "error", 0, Some(1))],
        ),
        (
            "message-emptyZSTDMessage-0",
            &[("batch.records", "error", 0, Some(0))],
        ),
        // Compressed wrappers with nothing inside: Java's reader refuses them.
        (
            "message-emptyGzipMessage-0",
            &[("batch.records", "error", 0, Some(0))],
        ),
        (
            "message-emptyLZ4Message-0",
            &[("batch.records", "error", 0, Some(0))],
        ),
        ("message-emptyMessage-0", &[]),
        ("message-emptyV1Message-0", &[]),
        // A magic-2 value in the legacy layout: 26 bytes cannot hold a v2 header.
        (
            "message-emptyV2Message-0",
            &[("log.bad-entry", "error", 0, None)],
        ),
        ("record-batch-control-batch-0", &[]),
        ("record-batch-empty-record-0", &[]),
        // The encoder's batches leave the max timestamp 0 below their records' timestamps
        // (a broker rewrites it on append).
        (
            "record-batch-gzipped-record-0",
            &[("record.timestamp", "error", 0, Some(0))],
        ),
        (
            "record-batch-lz4-compressed-record-0",
            &[("record.timestamp", "error", 0, Some(0))],
        ),
        (
            "record-batch-snappy-compressed-record-0",
            &[("record.timestamp", "error", 0, Some(0))],
        ),
        (
            "record-batch-uncompressed-record-0",
            &[("record.timestamp", "error", 0, Some(0))],
        ),
    ];
    let mut seen = 0;
    for archive in names.iter().filter(|n| n.ends_with("-fixtures")) {
        let top = tmp.path().join(archive).join(archive);
        for part in subdirs(&top) {
            let name = part.file_name().unwrap().to_str().unwrap().to_string();
            let want = expected
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("no expectation for {name}"))
                .1;
            let (report, code) = verify(true, std::slice::from_ref(&part));
            let got: Vec<(String, String, i64, Option<i64>)> = findings(&report)
                .into_iter()
                .map(|(_, f)| f)
                .filter(|f| {
                    !matches!(
                        f["check"].as_str(),
                        Some("index.missing" | "timeindex.missing" | "leader-epoch.missing")
                    ) || f["severity"] != "warning"
                })
                .map(|f| {
                    (
                        f["check"].as_str().unwrap().to_string(),
                        f["severity"].as_str().unwrap().to_string(),
                        f["position"].as_i64().unwrap_or(-1),
                        f["offset"].as_i64(),
                    )
                })
                .collect();
            let want: Vec<(String, String, i64, Option<i64>)> = want
                .iter()
                .map(|(c, s, p, o)| (c.to_string(), s.to_string(), *p, *o))
                .collect();
            assert_eq!(got, want, "{name}");
            assert_eq!(code, if want.is_empty() { 0 } else { 1 }, "{name}");
            // Nothing in them makes dump fail to run (exit 2) or panic.
            let o = kseg(&["dump", "--deep-iteration", "--print-data-log"], &[part]);
            assert!(
                o.status.code().is_some_and(|c| c < 2),
                "{name}: {}",
                stderr(&o)
            );
            seen += 1;
        }
    }
    assert_eq!(seen, expected.len());
}

/// Whether a change a recovery plans is one the broker's own start-up makes on a healthy log:
/// indexes rebuilt or trimmed, the producer snapshot written at close, the epoch checkpoint
/// file created (Kafka's checkpoint files create themselves empty), the recovery point
/// moved to the log end, the log dir's `log-start-offset-checkpoint` created when a broker
/// older than it left none (the shutdown's `checkpointLogStartOffsetsInDir` writes it); in a
/// directory without segments (a KRaft metadata log collected without them), the empty
/// segment the loader creates. Never a `.log` byte changed, never a segment deleted.
fn broker_start_up_change(change: &Value, had_segments: bool) -> bool {
    let file = change["file"].as_str().unwrap();
    let name = Path::new(file).file_name().unwrap().to_str().unwrap();
    let kind = name.rsplit('.').next().unwrap();
    let new_empty = change["sizeBefore"].is_null() && change["sizeAfter"] == 0;
    matches!(kind, "index" | "timeindex" | "txnindex" | "snapshot")
        || (kind == "log" && new_empty && !had_segments)
        || matches!(
            name,
            "leader-epoch-checkpoint" | "recovery-point-offset-checkpoint"
        )
        || (name == "log-start-offset-checkpoint" && change["sizeBefore"].is_null())
}

#[test]
fn repairs_plan_only_the_broker_start_up_and_verify_after() {
    let Some(root) = common::realworld_dir() else {
        return;
    };
    let (tmp, _) = common::unpack_realworld(&root);
    let (mut kraft_log_dirs, mut clean_shutdown_log_dirs, mut partitions) = (0, 0, 0);
    for dir in common::broker_log_dirs(tmp.path()) {
        if dir.join(".kafka_cleanshutdown").is_file() {
            clean_shutdown_log_dirs += 1;
        }
        for part in subdirs(&dir) {
            let where_ = part.display().to_string();
            let o = kseg(
                &["recover", "--json", "--now", "1730000000000"],
                std::slice::from_ref(&part),
            );
            let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
            let had_segments = files(&part)
                .iter()
                .any(|f| f.extension().is_some_and(|x| x == "log"));
            for c in plan["changes"].as_array().unwrap() {
                assert!(broker_start_up_change(c, had_segments), "{where_}: {c}");
                // What the start-up does on a healthy log is not damage (issue 34, item 5).
                assert_eq!(c["class"], "housekeeping", "{where_}: {c}");
            }
            // Every log dir here verifies without an error (`broker_log_dirs_verify_without_
            // errors`), clean shutdown or not: nothing is damaged, the dry run exits 0.
            assert_eq!(o.status.code(), Some(0), "{where_}: {}", stderr(&o));
            partitions += 1;
            for e in plan["events"].as_array().unwrap() {
                assert_eq!(
                    e["truncatedBytes"].as_i64().unwrap_or(0),
                    0,
                    "{where_}: {e}"
                );
            }
            let o = kseg(
                &[
                    "recover",
                    "--apply",
                    "--no-backup",
                    "--now",
                    "1730000000000",
                ],
                std::slice::from_ref(&part),
            );
            assert!(
                o.status.code().is_some_and(|c| c < 2),
                "{where_}: {}",
                stderr(&o)
            );
            // Recovered and closed: every index present and trimmed, nothing left to say.
            let (report, code) = verify(true, std::slice::from_ref(&part));
            let left: Vec<_> = findings(&report).into_iter().map(|(_, f)| f).collect();
            assert!(left.is_empty(), "{where_} after recover: {left:?}");
            assert_eq!(code, 0);
        }
        // The broker's log manager never checkpoints the KRaft metadata log (issue 34, item 6):
        // recovered, a KRaft log dir's checkpoints still do not name it.
        if dir.join("__cluster_metadata-0").is_dir() {
            kraft_log_dirs += 1;
            for f in files(&dir) {
                if f.to_string_lossy().ends_with("-checkpoint") {
                    let text = std::fs::read_to_string(&f).unwrap();
                    assert!(
                        !text.lines().any(|l| l.starts_with("__cluster_metadata ")),
                        "{}: {text}",
                        f.display()
                    );
                }
            }
        }
        // What the recovery left, indexes rebuilt from scratch, is what verify accepts too.
        let o = kseg(
            &["rebuild-index", "--all", "--apply", "--no-backup"],
            &subdirs(&dir),
        );
        assert!(
            o.status.code().is_some_and(|c| c < 2),
            "{}: {}",
            dir.display(),
            stderr(&o)
        );
        let (report, code) = verify(true, std::slice::from_ref(&dir));
        let errors: Vec<_> = findings(&report)
            .into_iter()
            .filter(|(_, f)| f["severity"] == "error")
            .collect();
        assert!(
            errors.is_empty(),
            "{} after rebuild-index: {errors:?}",
            dir.display()
        );
        assert_eq!(code, 0, "{}", dir.display());
    }
    assert!(kraft_log_dirs > 0, "no KRaft log dir in the corpus");
    assert!(
        clean_shutdown_log_dirs >= 2,
        "cleanly shut down log dirs: {clean_shutdown_log_dirs}"
    );
    assert!(partitions >= 266, "partitions recovered: {partitions}");
}

/// A Windows broker writes its checkpoint and properties files with CRLF line ends (Java's
/// `BufferedWriter.newLine`); Kafka reads them back with `BufferedReader.readLine`, which takes
/// either. Built from the bundled fixture, as no such dir is in the corpus.
#[test]
fn crlf_checkpoints_of_a_windows_broker() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/orders-0");
    let part = tmp.path().join("orders-0");
    common::copy_dir(&fixture, &part);
    let crlf = |p: PathBuf, lines: &[&str]| {
        std::fs::write(
            p,
            lines.iter().map(|l| format!("{l}\r\n")).collect::<String>(),
        )
        .unwrap()
    };
    crlf(
        part.join("leader-epoch-checkpoint"),
        &["0", "2", "0 0", "3 180"],
    );
    for name in [
        "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
    ] {
        crlf(tmp.path().join(name), &["0", "1", "orders 0 247"]);
    }
    crlf(
        tmp.path().join("log-start-offset-checkpoint"),
        &["0", "1", "orders 0 0"],
    );
    crlf(
        tmp.path().join("meta.properties"),
        &["#", "version=0", "broker.id=0"],
    );
    std::fs::write(tmp.path().join(".kafka_cleanshutdown"), b"").unwrap();
    let (report, code) = verify(true, &[tmp.path().to_path_buf()]);
    let all: Vec<_> = findings(&report).into_iter().map(|(_, f)| f).collect();
    assert!(all.is_empty(), "{all:?}");
    assert_eq!(code, 0);
    // The partition's 9 files and the log dir's 5, each read; the clean-shutdown marker is
    // known by its name only (there is nothing in it to read).
    assert_eq!(report["checkedFileCount"], 14);
    let marker = tmp.path().join(".kafka_cleanshutdown");
    assert_eq!(report["classifiedFiles"], serde_json::json!([marker]));
}
