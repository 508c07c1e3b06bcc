//! Issue 13: after `retention --apply` (and `compact --apply`, `recover --apply`) the partition
//! directory and its log dir hold exactly what the broker leaves after the same operation and
//! a clean shutdown. Expected directories are derived here from the broker's rules (cited),
//! not from kseg's plan.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
use kseg::ops::repair::apply::{ApplyOptions, Backup};
use kseg::ops::simulate::retention::{plan_retention, RetentionOptions};
use kseg::storage::{CloseMode, Log, LogConfig};

const NO_BACKUP: ApplyOptions = ApplyOptions {
    backup: Backup::None,
    fail_before_step: None,
    before_step: None,
};

/// Every file of `dir` by name with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    common::dir_contents(dir).into_iter().collect()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// The case: every segment of `a-plain-v2` goes by time and 1443 is rolled.
#[test]
fn a_plain_v2_all_segments_by_time_file_by_file() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&root.join("a-plain-v2/input/orders-0"), &dir);
    let before = files(&dir);
    let opts = RetentionOptions {
        retention_ms: 86_400_000,
        ..common::retention_options(1_730_100_000_000)
    };
    let _lock = common::lock(&dir);
    let r = plan_retention(&dir, &opts).unwrap();
    assert_eq!(r.rolled_at, Some(1443));
    r.apply(&NO_BACKUP).unwrap();
    let after = files(&dir);
    let names: Vec<&str> = after.keys().map(String::as_str).collect();
    // `LocalLog.roll` opens segment 1443 with lazy indexes; the shutdown's `log.flush(true)`
    // (`LogManager.shutdown`) reaches it (`LocalLog.flush` from the recovery point, which
    // `updateLogStartOffset` raised to 1443), `LogSegment.flush` loads both indexes
    // (`LazyIndex.get` creates the files) and `LogSegment.close` trims them
    // (`AbstractIndex.trimToValidSize`): both exist with 0 bytes.
    assert_eq!(
        names,
        [
            "00000000000000001443.index",
            "00000000000000001443.log",
            "00000000000000001443.snapshot",
            "00000000000000001443.timeindex",
            "leader-epoch-checkpoint",
            "partition.metadata",
        ]
    );
    for n in ["index", "log", "timeindex"] {
        assert!(
            after[&format!("00000000000000001443.{n}")].is_empty(),
            "{n}"
        );
    }
    // The roll's `takeSnapshot` finds the map already at 1443 (the shutdown snapshot there):
    // the file stays as it was; the snapshots of the deleted segments went with them
    // (`UnifiedLog.deleteProducerSnapshots`).
    assert_eq!(
        after["00000000000000001443.snapshot"],
        before["00000000000000001443.snapshot"]
    );
    assert_eq!(after["partition.metadata"], before["partition.metadata"]);
    // `maybeIncrementLogStartOffset(1443)` -> `truncateFromStart(1443)`: every entry starts at
    // or before 1443, the last one (epoch 5) is kept re-based at 1443.
    assert_eq!(
        String::from_utf8(after["leader-epoch-checkpoint"].clone()).unwrap(),
        "0\n1\n5 1443\n"
    );
    // Not a log dir: nothing is written beside the partition.
    let beside: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(beside.len(), 1);
    common::assert_verifies_strict(&dir, &dir.display().to_string());
    assert!(plan_retention(&dir, &opts).unwrap().deleted.is_empty());
}

/// The same case in a log dir: the recovery point is already the log end offset, the high
/// watermark stays, the log start offset equals the new first segment's base so
/// `checkpointLogStartOffsetsInDir` writes no entry for it, but writes the file.
#[test]
fn a_plain_v2_in_a_log_dir_gets_the_shutdown_checkpoints() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&root.join("a-plain-v2/input/orders-0"), &dir);
    let rp = tmp.path().join("recovery-point-offset-checkpoint");
    let hw = tmp.path().join("replication-offset-checkpoint");
    std::fs::write(&rp, "0\n2\nother 3 77\norders 0 1443\n").unwrap();
    std::fs::write(&hw, "0\n2\norders 0 1443\nother 3 70\n").unwrap();
    let _lock = common::lock(&dir);
    let r = plan_retention(
        &dir,
        &RetentionOptions {
            retention_ms: 86_400_000,
            ..common::retention_options(1_730_100_000_000)
        },
    )
    .unwrap();
    r.apply(&NO_BACKUP).unwrap();
    assert_eq!(read(&rp), "0\n2\nother 3 77\norders 0 1443\n");
    assert_eq!(read(&hw), "0\n2\norders 0 1443\nother 3 70\n");
    assert_eq!(
        read(&tmp.path().join("log-start-offset-checkpoint")),
        "0\n0\n"
    );
    assert!(!tmp.path().join("cleaner-offset-checkpoint").exists());
    assert_eq!(read(&dir.join("leader-epoch-checkpoint")), "0\n1\n5 1443\n");
}

/// Three segments of two batches each: offsets 0..15, segment bases 0, 5, 10, the batches at
/// 0, 3 | 5, 8 | 10, 13 with leader epochs 0, 0 | 1, 2 | 2, 3 and timestamps 1000 | 2000 |
/// 3000. Closed cleanly in the log dir `root` whose recovery point and high watermark are 15.
fn three_segments(root: &Path) -> PathBuf {
    let dir = root.join("t-0");
    let mut log = Log::create(&dir, LogConfig::default(), 0, [9; 16], 1_000).unwrap();
    let batches = [
        (0, 3, 0),
        (3, 2, 0),
        (5, 3, 1),
        (8, 2, 2),
        (10, 3, 2),
        (13, 2, 3),
    ];
    for (i, &(base, n, epoch)) in batches.iter().enumerate() {
        if i > 0 && i % 2 == 0 {
            log.roll().unwrap();
        }
        let ts = 1000 * (1 + i as i64 / 2);
        let records: Vec<RecordSpec> = (0..n)
            .map(|k| RecordSpec {
                offset: base + k,
                timestamp: ts,
                key: Some(format!("k{}", base + k).into_bytes()),
                value: Some(vec![b'v'; 100]),
                headers: vec![],
            })
            .collect();
        let spec = BatchSpec {
            base_offset: base,
            partition_leader_epoch: epoch,
            producer_id: 7,
            producer_epoch: 0,
            base_sequence: base as i32,
            ..Default::default()
        };
        log.append_as_follower(&build_batch(&spec, &records).unwrap())
            .unwrap();
    }
    log.close(CloseMode::Clean).unwrap();
    std::fs::write(
        root.join("recovery-point-offset-checkpoint"),
        "0\n1\nt 0 15\n",
    )
    .unwrap();
    std::fs::write(root.join("replication-offset-checkpoint"), "0\n1\nt 0 15\n").unwrap();
    dir
}

/// What the broker leaves when the segments `deleted` (bases, oldest first, not all of them)
/// go: their `.log`, `.index`, `.timeindex`, `.txnindex` (`LocalLog.deleteSegmentFiles`) and
/// the producer snapshots at their bases (`UnifiedLog.deleteProducerSnapshots`); every other
/// file as it was, except the leader epoch checkpoint, given here.
fn expected_after(
    before: &BTreeMap<String, Vec<u8>>,
    deleted: &[i64],
    epochs: &str,
) -> BTreeMap<String, Vec<u8>> {
    let mut want = before.clone();
    want.retain(|name, _| {
        !deleted
            .iter()
            .any(|&b| name.starts_with(&format!("{b:020}.")))
    });
    want.insert("leader-epoch-checkpoint".into(), epochs.as_bytes().to_vec());
    want
}

/// The whole partition directory and the log dir's checkpoints after one retention run.
fn check_retention(
    opts: &RetentionOptions,
    deleted: &[i64],
    also_gone: &[&str],
    epochs: &str,
    log_start_checkpoint: &str,
    recovery_point: &str,
) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = three_segments(tmp.path());
    let before = files(&dir);
    assert_eq!(
        read(&dir.join("leader-epoch-checkpoint")),
        "0\n4\n0 0\n1 5\n2 8\n3 13\n"
    );
    let _lock = common::lock(&dir);
    let r = plan_retention(&dir, opts).unwrap();
    let bases: Vec<i64> = r.deleted.iter().map(|d| d.base_offset).collect();
    assert_eq!(bases, deleted);
    r.apply(&NO_BACKUP).unwrap();
    let mut want = expected_after(&before, deleted, epochs);
    for n in also_gone {
        assert!(want.remove(*n).is_some(), "{n}");
    }
    assert_eq!(files(&dir), want);
    assert_eq!(
        read(&tmp.path().join("log-start-offset-checkpoint")),
        log_start_checkpoint
    );
    assert_eq!(
        read(&tmp.path().join("recovery-point-offset-checkpoint")),
        recovery_point
    );
    // The high watermark (15) lies above the new log start: unchanged.
    assert_eq!(
        read(&tmp.path().join("replication-offset-checkpoint")),
        "0\n1\nt 0 15\n"
    );
    common::assert_verifies_strict(&dir, &dir.display().to_string());
    assert!(plan_retention(&dir, opts).unwrap().deleted.is_empty());
}

#[test]
fn retention_ms_leaves_the_brokers_files() {
    // Ages 4000 and 3000 exceed 2500 (`deleteRetentionMsBreachedSegments`); the new log start
    // 10: `truncateFromStart(10)` folds 0 0, 1 5, 2 8 into 2 10. Log start = first base: no
    // entry in `log-start-offset-checkpoint`, whose file the shutdown still writes.
    check_retention(
        &RetentionOptions {
            retention_ms: 2500,
            ..common::retention_options(5000)
        },
        &[0, 5],
        &[],
        "0\n2\n2 10\n3 13\n",
        "0\n0\n",
        "0\n1\nt 0 15\n",
    );
}

#[test]
fn retention_bytes_leaves_the_brokers_files() {
    let size = std::fs::metadata(
        three_segments(tempfile::tempdir().unwrap().path()).join("00000000000000000000.log"),
    )
    .unwrap()
    .len() as i64;
    // The log is 3 segments of `size` bytes; over the limit by `size`: exactly one segment
    // goes (`deleteRetentionSizeBreachedSegments`), log start 5, `truncateFromStart(5)`
    // keeps 1 5.
    check_retention(
        &RetentionOptions {
            retention_bytes: 2 * size,
            ..common::retention_options(5000)
        },
        &[0],
        &[],
        "0\n3\n1 5\n2 8\n3 13\n",
        "0\n0\n",
        "0\n1\nt 0 15\n",
    );
}

#[test]
fn log_start_offset_leaves_the_brokers_files() {
    // Log start 7 (as after DeleteRecords): the loader's `truncateFromStart(7)` re-bases epoch
    // 1 at 7; segment 0 ends at 5 <= 7 and goes (`deleteLogStartOffsetBreachedSegments`); the
    // log start stays 7, above the first base 5, so `checkpointLogStartOffsetsInDir` writes it.
    // The start-up that loads the log at log start 7 deletes the snapshots at or below it
    // (`ProducerStateManager.truncateAndReload`): the one at 5 goes too.
    check_retention(
        &RetentionOptions {
            log_start_offset: Some(7),
            ..common::retention_options(5000)
        },
        &[0],
        &["00000000000000000005.snapshot"],
        "0\n3\n1 7\n2 8\n3 13\n",
        "0\n1\nt 0 7\n",
        "0\n1\nt 0 15\n",
    );
}

/// One batch of records stamped `ts`, one key each, no producer.
fn keyed_batch(base: i64, keys: &[&str], ts: i64) -> Vec<u8> {
    let records: Vec<RecordSpec> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| RecordSpec {
            offset: base + i as i64,
            timestamp: ts,
            key: Some(k.as_bytes().to_vec()),
            value: Some(vec![b'v'; 50]),
            headers: vec![],
        })
        .collect();
    let spec = BatchSpec {
        base_offset: base,
        partition_leader_epoch: (base / 5) as i32,
        ..Default::default()
    };
    build_batch(&spec, &records).unwrap()
}

/// One cleaning round in place: segments 0 and 5 are cleaned into one (the active segment 10
/// bounds the round), and the whole log dir is what the broker's cleaner and a clean shutdown
/// leave, derived here from its rules.
#[test]
fn compaction_leaves_the_brokers_files() {
    use kseg::ops::simulate::compact::plan::plan_apply;
    use kseg::ops::simulate::compact::CompactOptions;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t-0");
    let mut log = Log::create(&dir, LogConfig::default(), 0, [9; 16], 1_000).unwrap();
    // Segment 0: A (a b c), B (d e); segment 5: C (a b c), D (f g); segment 10: E, F.
    let a = keyed_batch(0, &["a", "b", "c"], 1000);
    let b = keyed_batch(3, &["d", "e"], 1000);
    let c = keyed_batch(5, &["a", "b", "c"], 2000);
    let d = keyed_batch(8, &["f", "g"], 2000);
    let e = keyed_batch(10, &["h", "i", "j"], 3000);
    let f = keyed_batch(13, &["k", "l"], 3000);
    for (i, batch) in [&a, &b, &c, &d, &e, &f].into_iter().enumerate() {
        if i > 0 && i % 2 == 0 {
            log.roll().unwrap();
        }
        log.append_as_follower(batch).unwrap();
    }
    log.close(CloseMode::Clean).unwrap();
    let rp = tmp.path().join("recovery-point-offset-checkpoint");
    std::fs::write(&rp, "0\n1\nt 0 15\n").unwrap();
    let before = files(&dir);
    let opts = CompactOptions {
        min_cleanable_dirty_ratio: 0.0,
        ..CompactOptions::new(10_000)
    };
    let lock = common::lock(&dir);
    plan_apply(&dir, &opts).unwrap().apply(&NO_BACKUP).unwrap();
    drop(lock);

    let mut want = before.clone();
    // `Cleaner.cleanSegments` writes the group [0, 5] into one segment at base 0, then
    // `UnifiedLog.replaceSegments` swaps it in: segment 5's files go, with its producer
    // snapshot (`deleteProducerSnapshots` of the replaced segments not among the new ones).
    want.retain(|n, _| !n.starts_with("00000000000000000005."));
    // The map holds a b c at 5..8: A goes whole; B, C, D keep every record and are copied
    // unchanged (`MemoryRecords.filterTo` retains a batch as it is when nothing goes).
    want.insert(
        "00000000000000000000.log".into(),
        [b.as_slice(), &c, &d].concat(),
    );
    // No entry under `index.interval.bytes`; `onBecomeInactiveSegment` trims the offset index
    // and gives the time index one entry: the largest timestamp 2000, first reached by C,
    // whose last offset is 7.
    want.insert("00000000000000000000.index".into(), Vec::new());
    want.insert(
        "00000000000000000000.timeindex".into(),
        [2000i64.to_be_bytes().as_slice(), &7i32.to_be_bytes()].concat(),
    );
    // The cleaner leaves the log start offset, the leader epoch cache, segment 10 and the
    // snapshots at 10 and 15 alone: everything else in `want` is the original bytes.
    assert_eq!(files(&dir), want);
    // `LogCleanerManager.doneCleaning` checkpoints the map's end (latest offset 9, plus one);
    // the recovery point was already the log end offset.
    assert_eq!(
        read(&tmp.path().join("cleaner-offset-checkpoint")),
        "0\n1\nt 0 10\n"
    );
    assert_eq!(read(&rp), "0\n1\nt 0 15\n");
    // The clean shutdown after the cleaning (`LogManager.shutdown`) writes the log dir's
    // log-start-offset-checkpoint whole (`checkpointLogStartOffsetsInDir`): created, and
    // without an entry, the log start being the first segment's base.
    assert_eq!(
        read(&tmp.path().join("log-start-offset-checkpoint")),
        "0\n0\n"
    );
    common::assert_verifies_strict(&dir, &dir.display().to_string());
    assert!(plan_apply(&dir, &opts).unwrap().changes.is_empty());
}

/// `recover --apply` on a log that ends (15) before its checkpointed start (20): the loader
/// deletes every segment and starts over at the log start offset.
#[test]
fn recovery_past_the_log_end_leaves_the_brokers_files() {
    use kseg::ops::repair::recover::plan;
    let tmp = tempfile::tempdir().unwrap();
    let dir = three_segments(tmp.path());
    let lso = tmp.path().join("log-start-offset-checkpoint");
    std::fs::write(&lso, "0\n1\nt 0 20\n").unwrap();
    let before = files(&dir);
    let _lock = common::lock(&dir);
    plan(&dir, &common::recover_options(5000))
        .unwrap()
        .apply(&NO_BACKUP)
        .unwrap();
    let after = files(&dir);
    let names: Vec<&str> = after.keys().map(String::as_str).collect();
    // `LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd`: every segment and snapshot goes,
    // the epoch cache is cleared (`clearAndFlush`), the producer state starts at 20
    // (`truncateFullyAndStartAt`); `recoverLog` opens a segment at 20 whose indexes `load`
    // resizes (creating them) and the shutdown trims. No snapshot: `rebuildProducerState`'s
    // `truncateAndReload(20, 20)` finds the map at 20 and `onLogStartOffsetIncremented` takes
    // the last snapshot offset to 20, so neither its `takeSnapshot` nor the close's writes one.
    assert_eq!(
        names,
        [
            "00000000000000000020.index",
            "00000000000000000020.log",
            "00000000000000000020.timeindex",
            "leader-epoch-checkpoint",
            "partition.metadata",
        ]
    );
    for n in ["index", "log", "timeindex"] {
        assert!(
            after[&format!("00000000000000000020.{n}")].is_empty(),
            "{n}"
        );
    }
    assert_eq!(after["leader-epoch-checkpoint"], b"0\n0\n");
    assert_eq!(after["partition.metadata"], before["partition.metadata"]);
    // Shutdown: the recovery point is the log end 20; the log start equals the first base, so
    // `checkpointLogStartOffsetsInDir` drops the entry; the high watermark (15) is raised to
    // the log start (`UnifiedLog.updateHighWatermark` keeps it within the log).
    assert_eq!(
        read(&tmp.path().join("recovery-point-offset-checkpoint")),
        "0\n1\nt 0 20\n"
    );
    assert_eq!(read(&lso), "0\n0\n");
    assert_eq!(
        read(&tmp.path().join("replication-offset-checkpoint")),
        "0\n1\nt 0 20\n"
    );
    common::assert_verifies_strict(&dir, &dir.display().to_string());
    assert!(plan(&dir, &common::recover_options(5000))
        .unwrap()
        .is_empty());
}

/// A log start inside a segment is kept only in the log dir's `log-start-offset-checkpoint`
/// (`LogManager.checkpointLogStartOffsetsInDir`); outside a log dir nothing can record it, and
/// retention says so instead of leaving it silently forgotten. In a log dir it is recorded.
#[test]
fn a_log_start_inside_a_segment_outside_a_log_dir_is_reported() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&root.join("a-plain-v2/input/orders-0"), &dir);
    let run = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
            .args([
                "retention",
                "--now",
                "1730100000000",
                "--log-start-offset",
                "400",
            ])
            .arg(&dir)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = run();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("is not in a log dir")
            && stderr.contains("nothing records the log start offset 400 inside segment 317"),
        "{stderr}"
    );
    std::fs::write(
        tmp.path().join("meta.properties"),
        "#\nversion=0\nbroker.id=0\n",
    )
    .unwrap();
    let (code, stderr) = run();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!stderr.contains("nothing records"), "{stderr}");
}

/// #13: `recover` outside a log dir cannot move the log start inside a segment, so the note of
/// an unrecordable log start it shares with retention (`unrecorded_log_start`) is never due:
/// the loader's log start is the larger of the log-start-offset-checkpoint's (none outside a
/// log dir) and the first segment's base (`LogLoader.load`:
/// `max(logStartOffsetCheckpoint, firstSegment.baseOffset)`). Checked on every reference
/// scenario's input, recovered outside a log dir.
#[test]
fn recover_outside_a_log_dir_keeps_the_log_start_at_a_segment_base() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let mut checked = 0;
    for scenario in common::scenarios(&root) {
        let input = scenario.join("input/orders-0");
        if !input.is_dir() {
            continue;
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("orders-0");
        common::copy_dir(&input, &dir);
        let _lock = common::lock(&dir);
        let p = kseg::ops::repair::recover::plan(&dir, &common::recover_options(1_767_225_600_000))
            .unwrap();
        p.apply(&NO_BACKUP).unwrap();
        let first_base = common::logs(&dir)
            .iter()
            .filter_map(|l| {
                kseg::format::names::parse_offset_prefix(&l.file_name()?.to_string_lossy())
            })
            .min()
            .unwrap();
        assert_eq!(
            p.report.log_start_offset,
            first_base,
            "{}",
            scenario.display()
        );
        assert_eq!(p.offsets.first_segment_base, first_base);
        assert_eq!(p.unrecorded_log_start(), None, "{}", scenario.display());
        checked += 1;
    }
    assert!(checked >= 8, "{checked}");
}
