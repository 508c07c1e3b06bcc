//! Partitions of many segments (issue 15 item 2): the work of a repair's plan grows linearly
//! with the segments (counted by the engine, not timed), and a partition of more segments than
//! the process may hold open descriptors works with every command.

use std::path::{Path, PathBuf};
use std::process::Command;

use kseg::ops::repair::rebuild_index::{self, RebuildOptions};
use kseg::ops::repair::recover::{self, RecoverOptions};
use kseg::storage::files::{fs_counts, FsCounts};
use kseg::storage::LogConfig;

mod common;
use common::big_segment::empty_segments;

fn recover_options() -> RecoverOptions {
    RecoverOptions {
        config: LogConfig::default(),
        now_ms: 1_700_000_000_000,
        recovery_point: None,
        producer_id_expiration_ms: 86_400_000,
    }
}

fn rebuild_options() -> RebuildOptions {
    RebuildOptions {
        config: LogConfig::default(),
        all: false,
        now_ms: 1_700_000_000_000,
        producer_id_expiration_ms: 86_400_000,
    }
}

/// The counts `work` adds.
fn counted(work: impl FnOnce()) -> FsCounts {
    let before = fs_counts();
    work();
    let after = fs_counts();
    FsCounts {
        listings: after.listings - before.listings,
        staged: after.staged - before.staged,
    }
}

/// The plans' counts on `n` empty segments without index files: the loader recovers every one
/// of them (no `.index`: `LogSegment.sanityCheck` fails), and rebuild-index rebuilds each. The
/// rebuilt indexes are new files of the engine's; nothing of the segments is staged (their
/// `.log`s are read where they are, none is cut).
fn plan_counts(n: u64) -> (FsCounts, FsCounts) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = empty_segments(tmp.path(), n, false);
    let recover = counted(|| {
        let plan = recover::plan(&dir, &recover_options()).unwrap();
        // Every segment recovered; the snapshot at the end written.
        assert_eq!(plan.report.log_end_offset, n as i64 - 1);
        // Its rebuilt `.index` and `.timeindex` written for each.
        assert!(plan.changes.len() as u64 >= 2 * n, "{}", plan.changes.len());
    });
    let rebuild = counted(|| {
        let plans = rebuild_index::plan(std::slice::from_ref(&dir), &rebuild_options()).unwrap();
        assert_eq!(plans[0].segments.len() as u64, n);
    });
    (recover, rebuild)
}

/// The recovery's counts on `n` empty segments with their index files, in a log dir whose
/// recovery point is the last segment's base: only that segment is recovered. With `torn`, the
/// last `.log` ends in a few bytes of a torn write, which recovery cuts. Returns the counts and
/// the plan's changes.
fn clean_counts(n: u64, torn: bool) -> (FsCounts, usize) {
    let tmp = tempfile::tempdir().unwrap();
    let log_dir = tmp.path().join("logs");
    let dir = empty_segments(&log_dir, n, true);
    recovery_point(&log_dir, n - 1);
    if torn {
        let last = dir.join(kseg::format::names::log_file_name(n as i64 - 1));
        std::fs::write(last, [0u8; 5]).unwrap();
    }
    let mut changes = 0;
    let counts = counted(|| {
        let plan = recover::plan(&dir, &recover_options()).unwrap();
        changes = plan.changes.len();
    });
    (counts, changes)
}

/// One test, so that no other test of this binary moves the process-wide counters meanwhile.
#[test]
fn planning_work_is_linear_in_segments() {
    let (small, large) = (100, 1_000);
    let ((rec_s, reb_s), (rec_l, reb_l)) = (plan_counts(small), plan_counts(large));
    for (what, s, l) in [("recover", rec_s, rec_l), ("rebuild-index", reb_s, reb_l)] {
        // A listing per pass over the directory, never one per segment (the producer-state
        // loader once listed the directory for each recovered segment: quadratic).
        assert_eq!(
            s.listings, l.listings,
            "{what}: listings grow with the segments"
        );
        // Staging is lazy: a file is made in the staging directory only when the plan changes
        // it, so what is staged is the same fixed part at both sizes (a copy of what the
        // close rewrites), never a file per segment.
        assert_eq!(s.staged, l.staged, "{what}: files staged per segment");
        assert!(l.staged <= 4, "{what}: {} files staged", l.staged);
    }
    // Clean segments below the recovery point: the plan stages nothing of them, and changes
    // nothing of them.
    let ((clean_s, changes_s), (clean_l, changes_l)) =
        (clean_counts(small, false), clean_counts(large, false));
    assert_eq!(clean_s.listings, clean_l.listings);
    assert_eq!(clean_s.staged, clean_l.staged, "clean segments staged");
    assert_eq!(changes_s, changes_l, "clean segments changed");
    // One torn `.log`: that one file more is staged (a placeholder, to be cut), whatever the
    // number of segments around it.
    let ((torn_s, _), (torn_l, _)) = (clean_counts(small, true), clean_counts(large, true));
    assert_eq!(
        torn_s.staged, torn_l.staged,
        "torn: files staged per segment"
    );
    assert_eq!(
        torn_l.staged,
        clean_l.staged + 1,
        "torn: the cut .log staged"
    );
}

/// Runs the binary under `ulimit -n limit` (the shell sets it, then becomes kseg); returns
/// the exit code and stderr.
fn run_limited(limit: u32, args: &[&std::ffi::OsStr]) -> (i32, String) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_kseg"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Writes the log dir's recovery point for `bench-0` at `offset`.
fn recovery_point(log_dir: &Path, offset: u64) {
    std::fs::write(
        log_dir.join("recovery-point-offset-checkpoint"),
        format!("0\n1\nbench 0 {offset}\n"),
    )
    .unwrap();
}

/// Every command on a partition of more segments than open descriptors allowed: no command
/// keeps a segment's files open beyond its use. Read-only commands on 30,000 segments under a
/// limit of 1,024; the repairs' plans (which stage every segment in a scratch directory, a few
/// milliseconds each) on 3,000 under a limit of 256.
#[test]
fn more_segments_than_the_descriptor_limit() {
    let os = |s: &str| std::ffi::OsString::from(s);
    let tmp = tempfile::tempdir().unwrap();
    let log_dir = tmp.path().join("logs");
    let dir: PathBuf = empty_segments(&log_dir, 30_000, true);
    let d = dir.as_os_str().to_owned();
    for args in [
        vec![os("verify"), d.clone()],
        vec![os("dump"), d.clone()],
        vec![os("offsets"), d.clone()],
        vec![os("stats"), d.clone()],
        vec![os("ls"), log_dir.as_os_str().to_owned()],
    ] {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let (code, err) = run_limited(1024, &args);
        assert!(
            code <= 1,
            "{args:?} under ulimit -n 1024: exit {code}: {err}"
        );
    }
    std::fs::remove_dir_all(&log_dir).unwrap();

    let dir = empty_segments(&log_dir, 3_000, true);
    recovery_point(&log_dir, 2_999);
    let d = dir.as_os_str().to_owned();
    for args in [
        vec![os("recover"), d.clone()],
        // One segment named: every segment is still staged and opened by the engine.
        vec![
            os("rebuild-index"),
            dir.join("00000000000000000000.index").into_os_string(),
        ],
        vec![os("retention"), d.clone()],
        vec![os("compact"), d.clone()],
        vec![os("recover"), os("--apply"), os("--no-backup"), d.clone()],
    ] {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let (code, err) = run_limited(256, &args);
        assert!(
            code <= 1,
            "{args:?} under ulimit -n 256: exit {code}: {err}"
        );
    }
    // The apply finished: the recovered directory plans nothing more.
    let (code, err) = run_limited(256, &[os("recover").as_os_str(), d.as_os_str()]);
    assert_eq!(code, 0, "recover after --apply: {err}");
}
