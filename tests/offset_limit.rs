//! Offsets at the limit (issue #15 item 6). Kafka computes the offset after a batch as
//! `lastOffset + 1` unchecked (`RecordBatch.nextOffset`, `LogSegment.readNextOffset`): for a
//! last offset of `Long.MAX_VALUE` it wraps to `Long.MIN_VALUE`, `LogLoader`'s
//! `deleteSegmentsIfLogStartGreaterThanLogEnd` then finds the log end below the log start and
//! deletes every segment, the valid ones before it included. A v2 batch whose base offset plus
//! last offset delta overflows has a negative last offset that `LogSegment.recover`'s
//! `ensureOffsetInRange` rejects for every base. kseg judges such an entry invalid data where it
//! stands (`log.bad-entry`): recovery truncates there, everything before it is kept, and no
//! command panics on it (these tests run the debug binary, where an overflow panics).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
use kseg::format::codec::Compression;

const MAX: i64 = i64::MAX;

fn record(offset: i64) -> RecordSpec {
    RecordSpec {
        offset,
        timestamp: 1_000 + (offset & 0xff),
        key: Some(format!("k{}", offset & 3).into_bytes()),
        value: Some(b"value".to_vec()),
        headers: Vec::new(),
    }
}

fn v2(base: i64, offsets: &[i64]) -> Vec<u8> {
    let records: Vec<_> = offsets.iter().map(|&o| record(o)).collect();
    build_batch(
        &BatchSpec {
            base_offset: base,
            ..Default::default()
        },
        &records,
    )
    .unwrap()
}

fn legacy(offset: i64) -> Vec<u8> {
    common::legacy_set(1, Compression::None, &[record(offset)])
}

/// A v2 batch of records `base..base + 2` whose last offset delta says 5: the sum overflows
/// for a base above `MAX - 5`. The CRC (CRC-32C of the bytes from the attributes on, byte 21)
/// is recomputed, so only the offsets are wrong.
fn v2_overflowing(base: i64) -> Vec<u8> {
    let mut b = v2(base, &[base, base + 1]);
    b[23..27].copy_from_slice(&5i32.to_be_bytes());
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

struct Case {
    name: &'static str,
    /// Segments: base offset and `.log` bytes.
    segments: Vec<(i64, Vec<u8>)>,
    /// The segment and byte position of the entry without a successor offset (None: all valid).
    bad: Option<(i64, u64)>,
    /// The log end offset after recovery.
    log_end: i64,
}

fn cases() -> Vec<Case> {
    let first = v2(0, &[0, 1]);
    let first_len = first.len() as u64;
    let cat = |a: &[u8], b: &[u8]| [a, b].concat();
    let zero = legacy(0);
    vec![
        Case {
            name: "legacy-at-max",
            segments: vec![(0, cat(&zero, &legacy(MAX)))],
            bad: Some((0, zero.len() as u64)),
            log_end: 1,
        },
        Case {
            name: "legacy-at-max-own-segment",
            segments: vec![(0, zero.clone()), (MAX, legacy(MAX))],
            bad: Some((MAX, 0)),
            log_end: MAX,
        },
        Case {
            name: "legacy-gzip-wrapper-at-max",
            segments: vec![(
                0,
                cat(
                    &zero,
                    &common::legacy_set(1, Compression::Gzip, &[record(MAX - 1), record(MAX)]),
                ),
            )],
            bad: Some((0, zero.len() as u64)),
            log_end: 1,
        },
        Case {
            name: "v2-ending-at-max",
            segments: vec![(0, cat(&first, &v2(MAX - 2, &[MAX - 2, MAX - 1, MAX])))],
            bad: Some((0, first_len)),
            log_end: 2,
        },
        Case {
            name: "v2-overflowing",
            segments: vec![(0, cat(&first, &v2_overflowing(MAX - 2)))],
            bad: Some((0, first_len)),
            log_end: 2,
        },
        Case {
            // Valid: the last offset is MAX - 1, the log end offset MAX.
            name: "v2-ending-below-max",
            segments: vec![
                (0, first.clone()),
                (MAX - 3, v2(MAX - 3, &[MAX - 3, MAX - 1])),
            ],
            bad: None,
            log_end: MAX,
        },
        Case {
            // Valid: an empty active segment based at MAX is the log end.
            name: "empty-segment-at-max",
            segments: vec![(0, first.clone()), (MAX, Vec::new())],
            bad: None,
            log_end: MAX,
        },
    ]
}

fn build(root: &Path, case: &Case) -> PathBuf {
    let dir = root.join(format!("{}-0", case.name));
    std::fs::create_dir_all(&dir).unwrap();
    for (base, bytes) in &case.segments {
        std::fs::write(dir.join(format!("{base:020}.log")), bytes).unwrap();
    }
    dir
}

fn log_of(dir: &Path, base: i64) -> PathBuf {
    dir.join(format!("{base:020}.log"))
}

/// Runs kseg; fails on a panic (exit 101 or a panic message), whatever the exit status.
fn run(args: &[&str], path: &Path, what: &str) -> Output {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code().is_some()
            && out.status.code() != Some(101)
            && !stderr.contains("panicked"),
        "{what}: kseg {args:?}: {:?}\n{stderr}",
        out.status
    );
    out
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The bytes of the case's segments up to the bad entry (all of them when there is none).
fn kept_bytes(case: &Case) -> Vec<(i64, Vec<u8>)> {
    case.segments
        .iter()
        .map(|(base, bytes)| match case.bad {
            Some((b, pos)) if b == *base => (*base, bytes[..pos as usize].to_vec()),
            _ => (*base, bytes.clone()),
        })
        .collect()
}

#[test]
fn verify_and_dump_report_the_entry_without_a_successor_offset() {
    let root = tempfile::tempdir().unwrap();
    for case in cases() {
        let dir = build(root.path(), &case);
        let out = run(&["verify", "--deep", "--json"], &dir, case.name);
        let doc = json(&out);
        let errors: Vec<&serde_json::Value> = doc["partitions"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "error")
            .collect();
        match case.bad {
            Some((base, pos)) => {
                assert_eq!(out.status.code(), Some(1), "{}", case.name);
                assert_eq!(errors.len(), 1, "{}: {errors:#?}", case.name);
                assert_eq!(errors[0]["check"], "log.bad-entry", "{}", case.name);
                assert_eq!(errors[0]["position"], pos, "{}", case.name);
                assert_eq!(
                    Path::new(errors[0]["file"].as_str().unwrap()),
                    log_of(&dir, base),
                    "{}",
                    case.name
                );
                assert!(
                    errors[0]["message"]
                        .as_str()
                        .unwrap()
                        .contains("no offset follows the last one"),
                    "{}: {errors:#?}",
                    case.name
                );
            }
            None => assert!(errors.is_empty(), "{}: {errors:#?}", case.name),
        }
        let out = run(
            &["dump", "--deep-iteration", "--print-data-log"],
            &dir,
            case.name,
        );
        assert_eq!(
            out.status.code(),
            Some(if case.bad.is_some() { 1 } else { 0 }),
            "{}",
            case.name
        );
        // Every record before the bad entry is printed.
        let text = String::from_utf8(out.stdout).unwrap();
        let shown = text.lines().filter(|l| l.contains("offset: ")).count();
        assert!(shown > 0, "{}: {text}", case.name);
    }
}

#[test]
fn recover_keeps_everything_before_the_limit_dry_run_and_apply() {
    let root = tempfile::tempdir().unwrap();
    for case in cases() {
        let dir = build(root.path(), &case);
        let out = run(&["recover", "--json"], &dir, case.name);
        // Damage only where an entry is invalid; a valid log's plan is housekeeping (exit 0).
        let damaged = i32::from(case.bad.is_some());
        assert_eq!(out.status.code(), Some(damaged), "{}", case.name);
        let plan = json(&out);
        assert_eq!(plan["logEndOffset"], case.log_end, "{}", case.name);
        // The dry run changed nothing.
        for (base, bytes) in &case.segments {
            assert_eq!(&std::fs::read(log_of(&dir, *base)).unwrap(), bytes);
        }
        let out = run(&["recover", "--apply", "--no-backup"], &dir, case.name);
        assert_eq!(out.status.code(), Some(0), "{}", case.name);
        for (base, bytes) in kept_bytes(&case) {
            assert_eq!(
                std::fs::read(log_of(&dir, base)).unwrap(),
                bytes,
                "{}: segment {base} keeps every byte before the limit",
                case.name
            );
        }
        common::assert_verifies_strict(&dir, case.name);
        let out = run(&["offsets", "--json"], &dir, case.name);
        assert_eq!(out.status.code(), Some(0), "{}", case.name);
        let doc = json(&out);
        assert_eq!(
            doc["partitions"][0]["offset"], case.log_end,
            "{}: {doc}",
            case.name
        );
    }
}

#[test]
fn every_other_command_runs_at_the_limit_without_a_panic() {
    let root = tempfile::tempdir().unwrap();
    for case in cases() {
        let dir = build(root.path(), &case);
        for args in [
            &["stats", "--deep", "--json"][..],
            &["txns", "--json"],
            &["ls", "--json"],
            &["digest"],
            &["locate", "0"],
            &["offsets", "--time", "earliest"],
            &["offsets", "--time", "max-timestamp"],
            &["retention", "--retention-ms", "1", "--json"],
            &["compact", "--min-cleanable-dirty-ratio", "0", "--json"],
            &[
                "salvage",
                "--out",
                root.path()
                    .join(format!("{}-salvage", case.name))
                    .to_str()
                    .unwrap(),
            ],
            &["rebuild-index", "--json"],
        ] {
            let out = run(args, &dir, case.name);
            assert!(out.status.code().unwrap() <= 2, "{}: {args:?}", case.name);
        }
        // rebuild-index indexes every entry before the limit; applied, the segments verify.
        let out = run(
            &["rebuild-index", "--apply", "--no-backup"],
            &dir,
            case.name,
        );
        assert_eq!(out.status.code(), Some(0), "{}", case.name);
        for (base, bytes) in &case.segments {
            assert_eq!(
                &std::fs::read(log_of(&dir, *base)).unwrap(),
                bytes,
                "{}",
                case.name
            );
        }
        let out = run(
            &[
                "retention",
                "--retention-ms",
                "-1",
                "--apply",
                "--no-backup",
            ],
            &dir,
            case.name,
        );
        assert!(out.status.code().unwrap() <= 1, "{}", case.name);
    }
}

/// Offsets that go back where recovery appends an offset-index entry: `OffsetIndex.append`
/// raises InvalidOffsetException ("Attempt to append an offset … no larger than the last offset
/// appended"). `LogLoader.recoverLog` catches it (`catch (InvalidOffsetException |
/// IOException)`) by truncating the segment to its base offset, then deletes the segments after
/// it as after any truncation; `loadSegmentFiles`, recovering a segment whose index is missing
/// or corrupt, catches nothing around it, and the load fails. With `index.interval.bytes` 0
/// every batch after the first is indexed: batches at offsets 0, 10, then 5 (CRCs valid) hit it
/// at the third.
#[test]
fn an_offset_index_append_going_back_is_caught_where_the_loader_catches_it() {
    use kseg::ops::repair::recover::{plan, RecoverOptions};
    use kseg::storage::{LoadEvent, LogConfig};
    let root = tempfile::tempdir().unwrap();
    let case = Case {
        name: "offsets-back",
        segments: vec![
            (0, [v2(0, &[0]), v2(10, &[10]), v2(5, &[5])].concat()),
            (11, v2(11, &[11])),
        ],
        bad: None,
        log_end: 0,
    };
    let dir = build(root.path(), &case);
    let opts = RecoverOptions {
        config: LogConfig {
            index_interval_bytes: 0,
            ..Default::default()
        },
        ..common::recover_options(1_800_000_000_000)
    };
    // No index files: the sanity check fails, and recovering the segment there raises.
    let e = plan(&dir, &opts).unwrap_err().to_string();
    assert!(
        e.contains("00000000000000000000.log")
            && e.contains("offset 5 is not above the last indexed offset 10")
            && e.contains("fails to load the partition"),
        "{e}"
    );
    // Empty indexes pass the sanity check: recovery from the recovery point (0) catches it.
    for base in [0, 11] {
        for suffix in ["index", "timeindex"] {
            std::fs::write(dir.join(format!("{base:020}.{suffix}")), b"").unwrap();
        }
    }
    let _lock = common::lock(&dir);
    let p = plan(&dir, &opts).unwrap();
    let emptied = p.report.events.iter().any(|e| {
        matches!(
            e,
            LoadEvent::SegmentRecovered {
                base_offset: 0,
                emptied: true,
                ..
            }
        )
    });
    assert!(emptied, "{:?}", p.report.events);
    assert_eq!(p.report.log_end_offset, 0, "{:#?}", p.report.events);
    p.apply(&kseg::ops::repair::apply::ApplyOptions {
        backup: kseg::ops::repair::apply::Backup::None,
        fail_before_step: None,
        before_step: None,
    })
    .unwrap();
    assert_eq!(std::fs::metadata(log_of(&dir, 0)).unwrap().len(), 0);
    assert!(!log_of(&dir, 11).exists());
    common::assert_verifies_strict(&dir, case.name);
}
