//! A legacy segment whose offsets run more than 2^31 past its base (old brokers could write
//! one) is split by `recover` as the broker's loader does (behavior.md §2.6): new segments named
//! by the first offset of their first batch, each taking whole batches while their last offset
//! fits 32 bits relative to that base, swapped in with the replace protocol.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, UNIX_EPOCH};

use kseg::format::batch::RecordSpec;
use kseg::format::codec::Compression;
use kseg::ops::repair::apply::{ApplyOptions, Backup};
use kseg::ops::repair::rebuild_index::{self, RebuildOptions};
use kseg::ops::repair::recover::{plan, RecoverOptions};
use kseg::storage::{LoadEvent, LogConfig};

const TWO_31: i64 = 1 << 31;
/// The original segment's mtime: the split segments keep it.
const MTIME_S: u64 = 1_600_000_000;

fn record(offset: i64, timestamp: i64) -> RecordSpec {
    RecordSpec {
        offset,
        timestamp,
        key: Some(format!("k{offset}").into_bytes()),
        value: Some(vec![b'v'; 30]),
        headers: Vec::new(),
    }
}

/// The batches of the crafted segment, in file order, and the first offset of each (the
/// segment a batch opens is named by it).
fn batches() -> Vec<(i64, Vec<u8>)> {
    vec![
        (
            0,
            common::legacy_set(0, Compression::None, &[record(0, -1)]),
        ),
        (
            1,
            common::legacy_set(0, Compression::None, &[record(1, -1)]),
        ),
        (
            2,
            common::legacy_set(1, Compression::None, &[record(2, 1_000)]),
        ),
        // A gzip wrapper from 2^31 - 1 to 2^31 + 1: its last offset overflows base 0, and the
        // segment it opens is named by its first inner offset.
        (
            TWO_31 - 1,
            common::legacy_set(
                1,
                Compression::Gzip,
                &[
                    record(TWO_31 - 1, 2_000),
                    record(TWO_31, 2_001),
                    record(TWO_31 + 1, 2_002),
                ],
            ),
        ),
        (
            TWO_31 + 5,
            common::legacy_set(1, Compression::None, &[record(TWO_31 + 5, 3_000)]),
        ),
        // 2^31 + 3 past 2^31 - 1: a third segment.
        (
            2 * TWO_31 + 2,
            common::legacy_set(0, Compression::None, &[record(2 * TWO_31 + 2, -1)]),
        ),
        (
            2 * TWO_31 + 3,
            common::legacy_set(1, Compression::None, &[record(2 * TWO_31 + 3, 4_000)]),
        ),
    ]
}

/// What the split must give, derived by hand from the rule: segment base → its batches.
fn expected() -> Vec<(i64, Vec<u8>)> {
    let b = batches();
    vec![
        (0, [&b[0].1[..], &b[1].1, &b[2].1].concat()),
        (TWO_31 - 1, [&b[3].1[..], &b[4].1].concat()),
        (2 * TWO_31 + 2, [&b[5].1[..], &b[6].1].concat()),
    ]
}

fn log_name(base: i64) -> String {
    format!("{base:020}.log")
}

/// The partition directory `t-0` under `root` with the one overflowed segment at base 0;
/// `with_indexes`: empty `.index` and `.timeindex` beside it (the loader then meets the
/// overflow recovering the log, else while loading, as the `.index` is missing).
fn fixture(root: &Path, with_indexes: bool) -> PathBuf {
    let dir = root.join("logs").join("t-0");
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join(log_name(0));
    let bytes: Vec<u8> = batches().into_iter().flat_map(|(_, b)| b).collect();
    std::fs::write(&log, bytes).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&log)
        .unwrap()
        .set_modified(UNIX_EPOCH + Duration::from_secs(MTIME_S))
        .unwrap();
    if with_indexes {
        std::fs::write(dir.join("00000000000000000000.index"), b"").unwrap();
        std::fs::write(dir.join("00000000000000000000.timeindex"), b"").unwrap();
    }
    dir
}

fn options() -> RecoverOptions {
    RecoverOptions {
        config: LogConfig {
            index_interval_bytes: 40,
            ..LogConfig::default()
        },
        now_ms: 1_767_225_600_000,
        recovery_point: None,
        producer_id_expiration_ms: 86_400_000,
    }
}

fn no_backup(step: Option<usize>) -> ApplyOptions {
    ApplyOptions {
        backup: Backup::None,
        fail_before_step: step,
        before_step: None,
    }
}

fn recover(dir: &Path) {
    let _lock = common::lock(dir);
    plan(dir, &options())
        .unwrap()
        .apply(&no_backup(None))
        .unwrap();
}

fn logs(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect();
    v.sort();
    v
}

fn assert_split(dir: &Path) {
    let want = expected();
    let names: Vec<String> = want.iter().map(|(b, _)| log_name(*b)).collect();
    assert_eq!(logs(dir), names);
    let total: usize = want.iter().map(|(_, b)| b.len()).sum();
    let original: usize = batches().iter().map(|(_, b)| b.len()).sum();
    assert_eq!(total, original);
    for (base, bytes) in &want {
        let log = dir.join(log_name(*base));
        assert!(std::fs::read(&log).unwrap() == *bytes, "{}", log.display());
        let mtime = std::fs::metadata(&log).unwrap().modified().unwrap();
        assert_eq!(mtime, UNIX_EPOCH + Duration::from_secs(MTIME_S), "{base}");
    }
    assert!(!std::fs::read_dir(dir).unwrap().any(|e| {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        n.ends_with(".cleaned") || n.ends_with(".swap") || n.ends_with(".deleted")
    }));
    // The indexes are the ones `rebuild-index --all` builds.
    let rebuild = rebuild_index::plan(
        &[dir.to_path_buf()],
        &RebuildOptions {
            config: options().config,
            all: true,
            now_ms: options().now_ms,
            producer_id_expiration_ms: options().producer_id_expiration_ms,
        },
    )
    .unwrap();
    assert_eq!(rebuild.len(), 1);
    assert_eq!(rebuild[0].segments.len(), 3);
    assert!(
        rebuild[0].changes.is_empty(),
        "rebuild-index would change {:#?}",
        rebuild[0].changes
    );
    common::assert_verifies_clean(dir);
    assert!(
        plan(dir, &options()).unwrap().is_empty(),
        "a second recover"
    );
}

#[test]
fn the_dry_run_plans_the_split_in_replace_order() {
    for with_indexes in [true, false] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fixture(tmp.path(), with_indexes);
        let before = common::dir_contents(&dir);
        let p = plan(&dir, &options()).unwrap();
        assert_eq!(
            common::dir_contents(&dir),
            before,
            "a dry run changes nothing"
        );
        let splits: Vec<&LoadEvent> = p
            .report
            .events
            .iter()
            .filter(|e| matches!(e, LoadEvent::SegmentSplit { .. }))
            .collect();
        assert_eq!(
            splits,
            [&LoadEvent::SegmentSplit {
                base_offset: 0,
                position: batches()[..3].iter().map(|(_, b)| b.len() as u64).sum(),
                offset: TWO_31 + 1,
                new_bases: vec![0, TWO_31 - 1, 2 * TWO_31 + 2],
            }]
        );
        let text = p.render_text(true);
        assert!(
            text.contains("segment 0: split into segments 0, 2147483647, 4294967298"),
            "{text}"
        );
        // The new files appear as `.cleaned`, become `.swap` highest base first, the original
        // goes through `.deleted`, then the `.swap` files take their names.
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        let at = |needle: &str| {
            lines
                .iter()
                .position(|l| l.contains(needle))
                .unwrap_or_else(|| panic!("no {needle} in {text}"))
        };
        let cleaned = at("(new, ");
        assert!(lines[cleaned].ends_with(&format!(
            "{}.cleaned (new, {})",
            log_name(0),
            kseg::ops::human::size(expected()[0].1.len() as u64)
        )));
        let swap_high = at(&format!(
            "{}.cleaned -> {}.swap",
            log_name(2 * TWO_31 + 2),
            log_name(2 * TWO_31 + 2)
        ));
        let swap_low = at(&format!("{}.cleaned -> {}.swap", log_name(0), log_name(0)));
        let deleted = at(&format!("{} -> {}.deleted", log_name(0), log_name(0)));
        let done = at(&format!("{}.swap -> {}", log_name(0), log_name(0)));
        assert!(
            cleaned < swap_high && swap_high < swap_low && swap_low < deleted && deleted < done,
            "{text}"
        );
    }
}

#[test]
fn apply_splits_the_segment_by_the_rule() {
    for with_indexes in [true, false] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fixture(tmp.path(), with_indexes);
        recover(&dir);
        assert_split(&dir);
    }
}

/// A failure before each executor step (backup copies included), then `recover --apply`
/// again: always the directory of an uninterrupted run.
#[test]
fn an_interrupted_split_reruns_to_the_same_directory() {
    for with_indexes in [true, false] {
        let want = {
            let tmp = tempfile::tempdir().unwrap();
            let dir = fixture(tmp.path(), with_indexes);
            recover(&dir);
            common::dir_contents(&dir)
        };
        let mut step = 0;
        loop {
            let tmp = tempfile::tempdir().unwrap();
            let dir = fixture(tmp.path(), with_indexes);
            let lock = common::lock(&dir);
            let failed = plan(&dir, &options())
                .unwrap()
                .apply(&ApplyOptions {
                    backup: Backup::Dir(tmp.path().join("backup")),
                    fail_before_step: Some(step),
                    before_step: None,
                })
                .is_err();
            drop(lock);
            recover(&dir);
            assert!(
                common::dir_contents(&dir) == want,
                "step {step} ({with_indexes})"
            );
            assert_split(&dir);
            if !failed {
                break;
            }
            step += 1;
        }
        assert!(step > 15, "the split has steps to interrupt ({step})");
    }
}

#[test]
fn dump_and_verify_report_the_overflowed_segment_without_panicking() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path(), true);
    for args in [
        vec!["dump"],
        vec!["dump", "--deep-iteration"],
        vec!["verify"],
        vec!["verify", "--deep"],
        vec!["rebuild-index", "--all"],
    ] {
        for target in [dir.clone(), dir.join(log_name(0))] {
            let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
                .args(&args)
                .arg(&target)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
            assert!(
                matches!(out.status.code(), Some(0..=2)),
                "{args:?}: {stderr}"
            );
        }
    }
}

/// `rebuild-index` does not split: its error names the user's segment (not the scratch copy
/// it works on) and the byte of the overflowing batch.
#[test]
fn rebuild_index_names_the_overflowing_batch() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path(), true);
    let err = rebuild_index::plan(
        std::slice::from_ref(&dir),
        &RebuildOptions {
            config: options().config,
            all: true,
            now_ms: options().now_ms,
            producer_id_expiration_ms: options().producer_id_expiration_ms,
        },
    )
    .unwrap_err()
    .to_string();
    let at: usize = batches()[..3].iter().map(|(_, b)| b.len()).sum();
    assert_eq!(
        err,
        format!(
            "{}: at byte {at}: offset {} does not fit a segment based at 0; `kseg recover` splits such a legacy segment",
            dir.join(log_name(0)).display(),
            TWO_31 + 1
        )
    );
}

/// Bytes after the overflow that are not a whole batch: the split would not hold the whole
/// segment, so nothing is planned and the error says where.
#[test]
fn a_torn_tail_after_the_overflow_is_refused_with_its_position() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path(), true);
    let log = dir.join(log_name(0));
    let mut bytes = std::fs::read(&log).unwrap();
    let whole = bytes.len();
    bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 9, 0, 0]);
    std::fs::write(&log, &bytes).unwrap();
    let err = plan(&dir, &options()).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("{}: at byte {whole}: ", log.display())),
        "{err}"
    );
    assert!(err.contains("not a whole batch"), "{err}");
}
