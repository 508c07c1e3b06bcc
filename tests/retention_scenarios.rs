//! `kseg retention` against hand-worked expectations (behavior.md §5 and the `UnifiedLogTest`
//! cases it cites).

mod common;

use std::path::{Path, PathBuf};

use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
use kseg::ops::simulate::retention::{
    plan_retention, DeletionReason, RetentionOptions, RetentionReport,
};
use kseg::storage::{CloseMode, Log, LogConfig};

/// One segment: how many records, all stamped `timestamp`.
struct Seg {
    records: i64,
    timestamp: i64,
}

/// Writes `t-0` with one segment per `Seg` (each closed segment rolled) and returns its path.
/// The last `Seg` is the active segment.
fn write_log(root: &Path, segs: &[Seg]) -> PathBuf {
    let dir = root.join("t-0");
    let mut log = Log::create(&dir, LogConfig::default(), 0, [9; 16], 1_000).unwrap();
    let mut offset = 0;
    for (i, s) in segs.iter().enumerate() {
        if i > 0 {
            log.roll().unwrap();
        }
        let records: Vec<RecordSpec> = (0..s.records)
            .map(|k| RecordSpec {
                offset: offset + k,
                timestamp: s.timestamp,
                key: Some(format!("k{k}").into_bytes()),
                value: Some(vec![b'v'; 100]),
                headers: vec![],
            })
            .collect();
        if !records.is_empty() {
            let batch = build_batch(
                &BatchSpec {
                    base_offset: offset,
                    ..Default::default()
                },
                &records,
            )
            .unwrap();
            log.append_as_follower(&batch).unwrap();
        }
        offset += s.records;
    }
    log.close(CloseMode::Clean).unwrap();
    dir
}

fn opts(now_ms: i64) -> RetentionOptions {
    common::retention_options(now_ms)
}

fn deleted(r: &RetentionReport) -> Vec<(i64, DeletionReason)> {
    r.deleted
        .iter()
        .map(|d| (d.base_offset, d.reason))
        .collect()
}

fn remaining(r: &RetentionReport) -> Vec<i64> {
    r.remaining.iter().map(|s| s.base_offset).collect()
}

fn five_each(timestamps: [i64; 3]) -> Vec<Seg> {
    timestamps
        .iter()
        .map(|&timestamp| Seg {
            records: 5,
            timestamp,
        })
        .collect()
}

#[test]
fn time_retention_deletes_the_old_prefix_by_largest_timestamp() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_log(tmp.path(), &five_each([1000, 2000, 3000]));
    let r = plan_retention(
        &dir,
        &RetentionOptions {
            retention_ms: 2500,
            ..opts(5000)
        },
    )
    .unwrap();
    // Ages 4000 and 3000 exceed 2500; 2000 does not.
    use DeletionReason::RetentionMsBreach as T;
    assert_eq!(deleted(&r), vec![(0, T), (5, T)]);
    assert_eq!(r.new_log_start_offset, 10);
    assert_eq!(remaining(&r), vec![10]);
    // 3000 + 2500 + 1: strictly older than retention.ms.
    assert_eq!(r.remaining[0].eligible_at_ms, Some(5501));
    assert!(r.remaining[0].active);
    assert_eq!(r.rolled_at, None);
    let d = &r.deleted[0];
    assert_eq!((d.largest_timestamp, d.timestamp_source), (1000, "records"));
    assert!(d.files.contains(&"00000000000000000000.log".to_string()));
    assert!(r.deleted[1]
        .files
        .contains(&"00000000000000000005.snapshot".to_string()));
    assert_eq!(r.bytes_freed, r.deleted.iter().map(|d| d.size).sum::<u64>());
}

#[test]
fn size_retention_deletes_while_the_excess_covers_a_whole_segment() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_log(tmp.path(), &five_each([1000, 2000, 3000]));
    let r0 = plan_retention(&dir, &opts(5000)).unwrap();
    let seg = r0.remaining[0].size as i64;
    assert!(r0.remaining.iter().all(|s| s.size as i64 == seg));
    // Total 3 seg; limit 2 seg - 1: the excess (seg + 1) covers one segment, not two.
    let r = plan_retention(
        &dir,
        &RetentionOptions {
            retention_bytes: 2 * seg - 1,
            ..opts(5000)
        },
    )
    .unwrap();
    assert_eq!(deleted(&r), vec![(0, DeletionReason::RetentionSizeBreach)]);
    // Exactly at the limit: nothing.
    let r = plan_retention(
        &dir,
        &RetentionOptions {
            retention_bytes: 3 * seg,
            ..opts(5000)
        },
    )
    .unwrap();
    assert!(r.deleted.is_empty());
    // retention.bytes = 0: everything, the active segment too, after a roll at the log end.
    let r = plan_retention(
        &dir,
        &RetentionOptions {
            retention_bytes: 0,
            ..opts(5000)
        },
    )
    .unwrap();
    assert_eq!(r.deleted.len(), 3);
    assert_eq!(r.rolled_at, Some(15));
    assert_eq!(r.new_log_start_offset, 15);
    assert_eq!(remaining(&r), vec![15]);
    assert_eq!(r.bytes_freed, 3 * seg as u64);
}

#[test]
fn log_start_offset_pass_matches_test_log_deletion_after_delete_records() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_log(tmp.path(), &five_each([1000, 2000, 3000]));
    for (start, left) in [(1, vec![0, 5, 10]), (6, vec![5, 10]), (15, vec![10])] {
        let r = plan_retention(
            &dir,
            &RetentionOptions {
                log_start_offset: Some(start),
                ..opts(5000)
            },
        )
        .unwrap();
        assert_eq!(remaining(&r), left, "log start offset {start}");
        assert!(r
            .deleted
            .iter()
            .all(|d| d.reason == DeletionReason::LogStartOffsetBreach));
        assert_eq!(r.rolled_at, None);
    }
}

#[test]
fn passes_run_in_order_start_offset_then_size_then_time() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_log(tmp.path(), &five_each([1000, 2000, 3000]));
    let seg = plan_retention(&dir, &opts(0)).unwrap().remaining[0].size as i64;
    let r = plan_retention(
        &dir,
        &RetentionOptions {
            log_start_offset: Some(5),
            // Measured after the start-offset pass: 2 segments left, 1 over.
            retention_bytes: seg,
            retention_ms: 0,
            high_watermark: Some(10),
            ..opts(5000)
        },
    )
    .unwrap();
    use DeletionReason::*;
    assert_eq!(
        deleted(&r),
        vec![(0, LogStartOffsetBreach), (5, RetentionSizeBreach)]
    );
    // The time pass would take segment 10, but it holds offsets at or above HW 10.
    assert_eq!(remaining(&r), vec![10]);
    assert_eq!(r.remaining[0].eligible_at_ms, None);
    assert!(r.remaining[0].note.contains("high watermark"));
}

#[test]
fn nothing_at_or_above_the_high_watermark_goes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_log(tmp.path(), &five_each([1000, 2000, 3000]));
    for (hw, left) in [
        (0, vec![0, 5, 10]),
        (7, vec![5, 10]),
        (10, vec![10]),
        (14, vec![10]),
    ] {
        let r = plan_retention(
            &dir,
            &RetentionOptions {
                retention_ms: 0,
                high_watermark: Some(hw),
                ..opts(5000)
            },
        )
        .unwrap();
        assert_eq!(remaining(&r), left, "hw {hw}");
        assert_eq!(r.high_watermark.source, "--high-watermark");
    }
    // HW = LEO (the default without a checkpoint): the active segment goes after a roll.
    let r = plan_retention(
        &dir,
        &RetentionOptions {
            retention_ms: 0,
            ..opts(5000)
        },
    )
    .unwrap();
    assert_eq!(r.high_watermark.value, 15);
    assert_eq!(r.high_watermark.source, "log end offset");
    assert_eq!(r.rolled_at, Some(15));
    assert_eq!(remaining(&r), vec![15]);
    // testCannotDeleteSegmentsAtOrAboveHighWatermark: one empty segment is left, start = LEO.
    assert_eq!(r.new_log_start_offset, 15);
    assert_eq!(r.remaining[0].size, 0);
}

#[test]
fn a_future_timestamp_blocks_every_later_segment() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_log(tmp.path(), &five_each([1000, 9000, 2000]));
    let r = plan_retention(
        &dir,
        &RetentionOptions {
            retention_ms: 100,
            ..opts(5000)
        },
    )
    .unwrap();
    assert_eq!(deleted(&r), vec![(0, DeletionReason::RetentionMsBreach)]);
    assert_eq!(remaining(&r), vec![5, 10]);
    assert_eq!(r.remaining[0].eligible_at_ms, Some(9101));
    // Segment 10 is old enough on its own, but waits for segment 5.
    assert_eq!(r.remaining[1].eligible_at_ms, Some(9101));
    assert!(r.remaining[0].note.contains("future"));
    // testRetentionIdempotency: the start-offset pass removes it first; then the time pass
    // reaches the (old) active segment, which goes after a roll.
    let r = plan_retention(
        &dir,
        &RetentionOptions {
            retention_ms: 100,
            log_start_offset: Some(10),
            ..opts(5000)
        },
    )
    .unwrap();
    use DeletionReason::*;
    assert_eq!(
        deleted(&r),
        vec![
            (0, LogStartOffsetBreach),
            (5, LogStartOffsetBreach),
            (10, RetentionMsBreach)
        ]
    );
    assert_eq!(r.rolled_at, Some(15));
}

#[test]
fn segments_without_timestamps_age_by_mtime_and_an_empty_active_segment_stays() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_log(
        tmp.path(),
        &[
            Seg {
                records: 3,
                timestamp: -1,
            },
            Seg {
                records: 0,
                timestamp: 0,
            },
        ],
    );
    let log = dir.join("00000000000000000000.log");
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_millis(4_000_000);
    std::fs::File::options()
        .write(true)
        .open(&log)
        .unwrap()
        .set_modified(when)
        .unwrap();
    let r = plan_retention(
        &dir,
        &RetentionOptions {
            retention_ms: 1000,
            ..opts(4_001_001)
        },
    )
    .unwrap();
    assert_eq!(r.deleted.len(), 1);
    assert_eq!(r.deleted[0].timestamp_source, "mtime");
    assert_eq!(r.deleted[0].largest_timestamp, 4_000_000);
    assert_eq!(remaining(&r), vec![3]);
    assert!(r.remaining[0].note.contains("empty active segment"));
    // One millisecond earlier the age is exactly retention.ms: kept.
    let r = plan_retention(
        &dir,
        &RetentionOptions {
            retention_ms: 1000,
            ..opts(4_001_000)
        },
    )
    .unwrap();
    assert!(r.deleted.is_empty());
    assert_eq!(r.remaining[0].eligible_at_ms, Some(4_001_001));
}

#[test]
fn checkpoints_in_the_log_dir_give_the_defaults_and_are_updated() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_log(tmp.path(), &five_each([1000, 2000, 3000]));
    let cp = |entries: &str| format!("0\n1\n{entries}\n");
    std::fs::write(
        tmp.path().join("replication-offset-checkpoint"),
        cp("t 0 12"),
    )
    .unwrap();
    std::fs::write(tmp.path().join("log-start-offset-checkpoint"), cp("t 0 6")).unwrap();
    std::fs::write(
        tmp.path().join("recovery-point-offset-checkpoint"),
        cp("t 0 3"),
    )
    .unwrap();
    let r = plan_retention(&dir, &opts(5000)).unwrap();
    assert_eq!(r.high_watermark.value, 12);
    assert!(r
        .high_watermark
        .source
        .ends_with("replication-offset-checkpoint"));
    assert_eq!(r.log_start_offset.value, 6);
    assert_eq!(deleted(&r), vec![(0, DeletionReason::LogStartOffsetBreach)]);
    let updates: Vec<_> = r
        .checkpoint_updates
        .iter()
        .map(|u| {
            (
                u.file.file_name().unwrap().to_string_lossy().into_owned(),
                u.before,
                u.after,
            )
        })
        .collect();
    assert_eq!(
        updates,
        // The log start offset (6) stays above the new first segment (5): its entry stays
        // (`LogManager.checkpointLogStartOffsetsInDir`). The shutdown's `log.flush(true)`
        // takes the recovery point to the log end offset (`LogManager.shutdown`).
        vec![("recovery-point-offset-checkpoint".into(), Some(3), Some(15))]
    );
    assert!(tmp.path().join("t-0/00000000000000000000.log").exists());
}

#[test]
fn bad_input_is_an_error_naming_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let e = plan_retention(tmp.path(), &opts(0))
        .unwrap_err()
        .to_string();
    assert!(e.contains(&tmp.path().display().to_string()), "{e}");
    let dir = write_log(tmp.path(), &five_each([1000, 2000, 3000]));
    let e = plan_retention(
        &dir,
        &RetentionOptions {
            log_start_offset: Some(14),
            high_watermark: Some(10),
            ..opts(0)
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("above the high watermark"), "{e}");
    let e = plan_retention(
        &dir,
        &RetentionOptions {
            log_start_offset: Some(16),
            ..opts(0)
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("log start offset 16 (--log-start-offset) is past the log end offset 15"),
        "{e}"
    );
}

/// A high watermark past the log end (a checkpoint written before recovery cut the log) is
/// the log end, as the broker bounds it; the report says so.
#[test]
fn a_high_watermark_past_the_log_end_is_the_log_end() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_log(tmp.path(), &five_each([1000, 2000, 3000]));
    std::fs::write(
        tmp.path().join("replication-offset-checkpoint"),
        "0\n1\nt 0 99\n",
    )
    .unwrap();
    for high_watermark in [None, Some(99)] {
        let r = plan_retention(
            &dir,
            &RetentionOptions {
                retention_ms: 0,
                high_watermark,
                ..opts(5000)
            },
        )
        .unwrap();
        assert_eq!(r.high_watermark.value, 15);
        assert!(
            r.high_watermark.source.contains("99 from")
                && r.high_watermark.source.contains("is past it"),
            "{}",
            r.high_watermark.source
        );
        // The same deletion as with the log end: every segment goes after a roll.
        assert_eq!(r.rolled_at, Some(15));
    }
}

#[test]
fn apply_deletes_the_prefix_rolls_and_updates_checkpoints_with_a_backup() {
    use kseg::ops::repair::apply::{ApplyOptions, Backup};
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_log(tmp.path(), &five_each([1000, 2000, 3000]));
    std::fs::write(
        tmp.path().join("recovery-point-offset-checkpoint"),
        "0\n1\nt 0 15\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("log-start-offset-checkpoint"),
        "0\n1\nt 0 2\n",
    )
    .unwrap();
    let _lock = common::lock(&dir);
    let r = plan_retention(
        &dir,
        &RetentionOptions {
            retention_ms: 0,
            ..opts(5000)
        },
    )
    .unwrap();
    assert_eq!(r.rolled_at, Some(15));
    // The broker rolls first, so the log always has a segment; then two-step deletion:
    // every file renamed to `.deleted` first, then unlinked.
    {
        use kseg::ops::repair::apply::Change;
        let scratch = tempfile::tempdir().unwrap();
        let changes = r.changes(scratch.path()).unwrap();
        match &changes[0] {
            Change::Write { file, .. } => {
                assert_eq!(file, &dir.join(kseg::format::names::log_file_name(15)))
            }
            other => panic!("the roll comes first: {other:?}"),
        }
        // The rest of the roll: its indexes, as the shutdown's flush creates them.
        let rolled = changes
            .iter()
            .take_while(|c| {
                matches!(c, Change::Write { file, .. }
                    if file.file_name().unwrap().to_string_lossy().starts_with("00000000000000000015."))
            })
            .count();
        assert_eq!(rolled, 3, "{changes:?}");
        // Then the epoch checkpoint's and the log dir's writes come before the deletions (a
        // rerun after a crash plans the deletions again from the segments still there).
        let changes = &changes[rolled..];
        let first_rename = changes
            .iter()
            .position(|c| matches!(c, Change::Rename { .. }))
            .unwrap();
        assert!(changes[..first_rename]
            .iter()
            .all(|c| matches!(c, Change::Write { .. })));
        let changes = &changes[first_rename..];
        let renames = changes
            .iter()
            .take_while(|c| matches!(c, Change::Rename { .. }))
            .count();
        assert!(renames > 0);
        for (c, u) in changes[..renames].iter().zip(&changes[renames..]) {
            match (c, u) {
                (Change::Rename { to, .. }, Change::Delete { file, .. }) => {
                    assert_eq!(to, file);
                    assert!(to.to_string_lossy().ends_with(".deleted"));
                }
                other => panic!("{other:?}"),
            }
        }
    }
    // Outside the log dir `tmp`: the broker would take a directory in it for a partition.
    let backup_root = tempfile::tempdir().unwrap();
    let backup = backup_root.path().join("backup");
    r.apply(&ApplyOptions {
        backup: Backup::Dir(backup.clone()),
        fail_before_step: None,
        before_step: None,
    })
    .unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('0'))
        .collect();
    names.sort();
    // The rolled segment's indexes exist, trimmed: the shutdown's flush created them.
    assert_eq!(
        names,
        [
            "00000000000000000015.index",
            "00000000000000000015.log",
            "00000000000000000015.snapshot",
            "00000000000000000015.timeindex"
        ]
    );
    // Back at the first segment's base: no log start offset entry any more.
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("log-start-offset-checkpoint")).unwrap(),
        "0\n0\n"
    );
    assert!(backup.join("00000000000000000000.log").exists());
    assert!(backup.join("plan.json").exists());
    // The log loads and a repeat deletes nothing.
    let again = plan_retention(
        &dir,
        &RetentionOptions {
            retention_ms: 0,
            ..opts(5000)
        },
    )
    .unwrap();
    assert!(again.deleted.is_empty());
    assert_eq!(again.log_start_offset.value, 15);
}

/// `--apply` interrupted before each step: the next load (`recover --apply`) removes the
/// `.deleted` files as the broker's loader does, and retention planned again ends with the
/// segments and records of an uninterrupted run.
#[test]
fn interrupted_apply_recovers_to_the_same_segments() {
    use kseg::ops::repair::apply::{ApplyOptions, Backup};
    use kseg::ops::repair::recover::{plan as recover_plan, RecoverOptions};
    let segments = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".log") || n.contains(".deleted"))
            .collect();
        v.sort();
        v
    };
    let options = RetentionOptions {
        retention_ms: 3500,
        ..opts(5000)
    };
    let run = |step: Option<usize>| {
        let tmp = tempfile::tempdir().unwrap();
        // The log dir `logs`, its backup beside it.
        let dir = write_log(
            &tmp.path().join("logs"),
            &[1000, 1000, 3000, 4000].map(|timestamp| Seg {
                records: 5,
                timestamp,
            }),
        );
        let lock = common::lock(&dir);
        let r = plan_retention(&dir, &options).unwrap();
        assert_eq!(r.deleted.len(), 2);
        let failed = r
            .apply(&ApplyOptions {
                backup: Backup::Dir(tmp.path().join("backup")),
                fail_before_step: step,
                before_step: None,
            })
            .is_err();
        drop(lock);
        let lock = common::lock(&dir);
        recover_plan(
            &dir,
            &RecoverOptions {
                config: LogConfig::default(),
                now_ms: 5000,
                recovery_point: None,
                producer_id_expiration_ms: 86_400_000,
            },
        )
        .unwrap()
        .apply(&ApplyOptions {
            backup: Backup::None,
            fail_before_step: None,
            before_step: None,
        })
        .unwrap();
        drop(lock);
        let _lock = common::lock(&dir);
        let again = plan_retention(&dir, &options).unwrap();
        again
            .apply(&ApplyOptions {
                backup: Backup::None,
                fail_before_step: None,
                before_step: None,
            })
            .unwrap();
        (failed, segments(&dir), tmp)
    };
    let (_, want, _tmp) = run(None);
    assert_eq!(
        want,
        ["00000000000000000010.log", "00000000000000000015.log"]
    );
    let mut step = 0;
    loop {
        let (failed, got, _tmp) = run(Some(step));
        assert_eq!(got, want, "step {step}");
        if !failed {
            break;
        }
        step += 1;
    }
    assert!(step > 4, "{step}");
}
