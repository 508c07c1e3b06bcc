//! `stats` speed and memory next to `verify` on the same data (run: `cargo bench --bench stats`).
//!
//! Writes, through the engine, the perf partition of `benches/verify.rs`: a log dir of
//! `KSEG_BENCH_STATS_MIB` MiB (default 2048) over 8 partitions of an idempotent producer's
//! uncompressed batches, plus one lz4 partition of an eighth of that. Prints, on the same warm
//! page cache, the median of `KSEG_BENCH_RUNS` (default 5) runs each of `verify` and `stats`,
//! shallow and `--deep`, and the ratio stats/verify (the targets: 1.2x shallow, 1.3x deep).
//! Then the peak resident memory of the `kseg stats --deep` process on log dirs of each size in
//! `KSEG_BENCH_STATS_MEM_MIB` (default `256,4096`): flat is the target.

use std::ffi::OsStr;
use std::path::Path;

use kseg::format::Compression;
use kseg::ops::inspect::stats::{stats, StatsOptions};
use rayon::prelude::*;

mod common;
use common::{files, timed, verify, write_partition};
#[path = "../tests/common/big_segment.rs"]
mod big_segment;
use big_segment::run_measured;

const PARTITIONS: u64 = 8;

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

fn write_log_dir(dir: &Path, mib: u64, codec: Compression) -> u64 {
    (0..PARTITIONS).into_par_iter().for_each(|p| {
        write_partition(
            &dir.join(format!("bench-{p}")),
            codec,
            (mib << 20) / PARTITIONS,
        )
    });
    files(dir).iter().map(|f| f.metadata().unwrap().len()).sum()
}

fn median(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..runs).map(|_| timed(&mut f).1).collect();
    t.sort_by(f64::total_cmp);
    t[runs / 2]
}

fn run_stats(dir: &Path, deep: bool) {
    let r = stats(
        &[dir.to_path_buf()],
        &StatsOptions {
            deep,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(r.total.batches > 0 && r.total.invalid_batches == 0);
}

/// Peak resident set (KiB) of `kseg ARGS`, the child's own.
fn peak_rss_kib(args: &[&str], path: &Path) -> u64 {
    let mut args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    args.push(path.as_os_str());
    let (code, rss) = run_measured(Path::new(env!("CARGO_BIN_EXE_kseg")), &args);
    assert_eq!(code, 0, "kseg {args:?} exited with {code}");
    rss >> 10
}

fn main() {
    let mib: u64 = env_or("KSEG_BENCH_STATS_MIB", "2048").parse().unwrap();
    let runs: usize = env_or("KSEG_BENCH_RUNS", "5").parse().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let cores = rayon::current_num_threads();
    for (codec, size) in [(Compression::None, mib), (Compression::Lz4, mib / 8)] {
        let dir = tmp.path().join(codec.name());
        let (bytes, secs) = timed(|| write_log_dir(&dir, size, codec));
        println!(
            "{}: {} MiB on disk in {PARTITIONS} partitions, written in {secs:.1} s; {cores} core(s); medians of {runs} runs",
            codec.name(),
            bytes >> 20
        );
        run_stats(&dir, false); // warm the page cache
        for deep in [false, true] {
            let v = median(runs, || verify(&dir, deep, None));
            let s = median(runs, || run_stats(&dir, deep));
            let flag = if deep { " --deep" } else { "" };
            let rate = |t: f64| bytes as f64 / t / (1 << 20) as f64;
            println!(
                "  verify{flag:<7} {v:>7.3} s ({:>7.1} MiB/s)   stats{flag:<7} {s:>7.3} s ({:>7.1} MiB/s)   stats/verify {:.2}x",
                rate(v),
                rate(s),
                s / v
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    let sizes = env_or("KSEG_BENCH_STATS_MEM_MIB", "256,4096");
    for size in sizes.split(',').map(|s| s.trim().parse::<u64>().unwrap()) {
        let dir = tmp.path().join(format!("mem-{size}"));
        let bytes = write_log_dir(&dir, size, Compression::None);
        let shallow = peak_rss_kib(&["stats", "--json"], &dir);
        let deep = peak_rss_kib(&["stats", "--deep", "--json"], &dir);
        println!(
            "peak memory, {:>5} MiB log dir: kseg stats {:>6} KiB, kseg stats --deep {:>6} KiB",
            bytes >> 20,
            shallow,
            deep
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
