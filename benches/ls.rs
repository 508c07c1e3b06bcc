//! `ls` next to `verify` of the same log dir (run: `cargo bench --bench ls`).
//!
//! Writes, through the engine, a log dir of `KSEG_BENCH_LS_PARTITIONS` partitions (default
//! 2000), each of `KSEG_BENCH_LS_SEGMENTS` segments (default 3) of 64 KiB of uncompressed
//! batches, closed cleanly, with the log dir's checkpoint files a broker writes. Prints, on the
//! same warm page cache, the median of five runs of `ls` (metadata and index tails only) and
//! of three runs of shallow `verify` (every batch and its CRC), and their ratio.
//!
//! Then the log-dir-wide `recover` dry run (#22: it scales with the bytes past each recovery
//! point, in parallel): a log dir of `KSEG_BENCH_LS_RECOVER_PARTITIONS` partitions (default 8)
//! of four 32 MiB segments, planned as `kseg recover LOGDIR` plans it, with the recovery point
//! checkpointed at the start of each last segment and then at the start of each log (the same
//! files), each with `--jobs 1` and `--jobs 2`: the median of three runs and the bytes the engine
//! read (`storage::progress`).

use std::path::Path;

use kseg::format::Compression;
use kseg::ops::check::verify::{verify_paths, VerifyOptions};
use kseg::ops::inspect::ls::{list_log_dir, LsOptions};
use kseg::ops::repair::many::in_parallel;
use kseg::ops::repair::recover::{plan, RecoverOptions};
use kseg::storage::{CloseMode, Log, LogConfig};
use rayon::prelude::*;

mod common;
use common::{batch, timed, RECORDS_PER_BATCH};
#[path = "../tests/common/big_segment.rs"]
mod big_segment;

const SEGMENT_BYTES: u64 = 64 << 10;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn write_partition(dir: &Path, segments: u64) -> i64 {
    let config = LogConfig {
        segment_bytes: SEGMENT_BYTES,
        ..LogConfig::default()
    };
    let mut log = Log::create(dir, config, 0, *b"kseg-bench-topic", 1_700_000_000_000).unwrap();
    let mut offset = 0i64;
    while log.segments().count() < segments as usize {
        log.append_as_follower(&batch(offset, Compression::None))
            .unwrap();
        offset += RECORDS_PER_BATCH;
    }
    log.close(CloseMode::Clean).unwrap();
    offset
}

fn median(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..runs).map(|_| timed(&mut f).1).collect();
    t.sort_by(f64::total_cmp);
    t[runs / 2]
}

fn main() {
    let partitions = env("KSEG_BENCH_LS_PARTITIONS", 2000);
    let segments = env("KSEG_BENCH_LS_SEGMENTS", 3);
    let tmp = tempfile::tempdir().unwrap();
    let log_dir = tmp.path().join("data");
    let (ends, secs) = timed(|| {
        (0..partitions)
            .into_par_iter()
            .map(|p| write_partition(&log_dir.join(format!("bench-{p}")), segments))
            .collect::<Vec<i64>>()
    });
    let mut checkpoint = format!("0\n{partitions}\n");
    for (p, end) in ends.iter().enumerate() {
        checkpoint += &format!("bench {p} {end}\n");
    }
    for name in [
        "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
    ] {
        std::fs::write(log_dir.join(name), &checkpoint).unwrap();
    }
    std::fs::write(log_dir.join(".kafka_cleanshutdown"), "").unwrap();
    let cores = rayon::current_num_threads();
    println!(
        "log dir: {partitions} partitions of {segments} segment(s), written in {secs:.1} s; {cores} core(s)"
    );
    let listing = list_log_dir(&log_dir, &LsOptions::default()).unwrap();
    let bytes = listing.totals.size_in_bytes;
    let read: u64 = listing.partitions.iter().map(|p| p.log_bytes_read).sum();
    assert_eq!(listing.partitions.len() as u64, partitions);
    for p in &listing.partitions {
        let n = p.partition.unwrap() as usize;
        assert_eq!(p.log_end_offset, Some(ends[n]), "{}", p.dir.display());
        assert_eq!(p.recovery_point, Some(ends[n]));
    }
    let verify = || {
        let r = verify_paths(
            std::slice::from_ref(&log_dir),
            &VerifyOptions::default(),
            &|_| {},
        )
        .unwrap();
        assert_eq!(r.partitions.len() as u64, partitions);
    };
    verify(); // warm the page cache
    let ls = median(5, || {
        list_log_dir(&log_dir, &LsOptions::default()).unwrap();
    });
    let v = median(3, verify);
    println!(
        "ls:     {ls:>8.3} s  ({} MiB of segments, {} KiB of .log read)",
        bytes >> 20,
        read >> 10
    );
    println!("verify: {v:>8.3} s  (every batch read and checked)");
    println!(
        "ls takes {:.3}x the time of verify ({:.1}x faster)",
        ls / v,
        v / ls
    );
    drop(tmp);
    recover_dry_runs();
}

/// Counts the bytes the engine reads.
#[derive(Default)]
struct ReadBytes(std::sync::atomic::AtomicU64);

impl kseg::storage::progress::Progress for ReadBytes {
    fn read(&self, bytes: u64) {
        self.0
            .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
    }
    fn wrote(&self, _: u64) {}
}

/// The log-dir-wide recover dry run, from the last segments and from the starts of the logs.
fn recover_dry_runs() {
    let partitions = env("KSEG_BENCH_LS_RECOVER_PARTITIONS", 8);
    let tmp = tempfile::tempdir().unwrap();
    let log_dir = tmp.path().join("data");
    let lasts: Vec<i64> = (0..partitions)
        .map(|p| big_segment::closed_partition(&log_dir, &format!("bench-{p}"), 4, 32 << 20))
        .collect();
    let dirs: Vec<_> = (0..partitions)
        .map(|p| log_dir.join(format!("bench-{p}")))
        .collect();
    let size: u64 = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap())
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    println!(
        "-- recover (dry run) of a log dir of {partitions} partitions x 4 segments of 32 MiB ({} MiB)",
        size >> 20
    );
    let opts = RecoverOptions {
        config: LogConfig::default(),
        now_ms: 1_700_000_000_000,
        recovery_point: None,
        producer_id_expiration_ms: 86_400_000,
    };
    let mut figures = Vec::new();
    for (label, at_start) in [("last segment", false), ("start of log", true)] {
        let mut checkpoint = format!("0\n{partitions}\n");
        for (p, last) in lasts.iter().enumerate() {
            checkpoint += &format!("bench {p} {}\n", if at_start { 0 } else { *last });
        }
        std::fs::write(log_dir.join("recovery-point-offset-checkpoint"), checkpoint).unwrap();
        for jobs in [1, 2] {
            let counted = std::sync::Arc::new(ReadBytes::default());
            let mut read = 0;
            let secs = median(3, || {
                counted.0.store(0, std::sync::atomic::Ordering::Relaxed);
                let plans = kseg::storage::progress::watching(counted.clone(), || {
                    in_parallel(&dirs, jobs, |d| plan(d, &opts).unwrap())
                });
                let recovered = plans[0].report.recovery_point;
                assert_eq!(recovered, if at_start { 0 } else { lasts[0] });
                read = counted.0.load(std::sync::atomic::Ordering::Relaxed);
            });
            println!(
                "recovery point at the {label}, --jobs {jobs}: {secs:>8.3} s  ({} KiB read)",
                read >> 10
            );
            figures.push(secs);
        }
    }
    println!(
        "from the last segments: {:.2}x the time from the starts of the logs (--jobs 2); --jobs 2 takes {:.2}x the time of --jobs 1 (from the starts)",
        figures[1] / figures[3],
        figures[3] / figures[2]
    );
}
