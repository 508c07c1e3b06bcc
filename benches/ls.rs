//! `ls` next to `verify` of the same log dir (run: `cargo bench --bench ls`).
//!
//! Writes, through the engine, a log dir of `KSEG_BENCH_LS_PARTITIONS` partitions (default
//! 2000), each of `KSEG_BENCH_LS_SEGMENTS` segments (default 3) of 64 KiB of uncompressed
//! batches, closed cleanly, with the log dir's checkpoint files a broker writes. Prints, on the
//! same warm page cache, the median of five runs of `ls` (metadata and index tails only) and
//! of three runs of shallow `verify` (every batch and its CRC), and their ratio.

use std::path::Path;

use kseg::format::Compression;
use kseg::ops::check::verify::{verify_paths, VerifyOptions};
use kseg::ops::inspect::ls::{list_log_dir, LsOptions};
use kseg::storage::{CloseMode, Log, LogConfig};
use rayon::prelude::*;

mod common;
use common::{batch, timed, RECORDS_PER_BATCH};

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
}
