//! Cost linear in segments, memory flat in partition size (issue 15 item 2, issue 16's RSS
//! target; run: `cargo bench --bench scale`).
//!
//! Part 1: partitions of `KSEG_BENCH_SCALE_SEGMENTS` empty segments (default `1000,10000`;
//! add 100000 for the largest, at about a minute per command), without and with (empty) index
//! files, generated under the temporary directory. Every command runs as a child `kseg` of
//! this build (and of `KSEG_BASE_BIN` when set, in the same run): `verify`, `dump` of the
//! directory, `recover` and `rebuild-index` dry runs and `--apply`, `retention`, `compact`
//! (dry run), `ls`, `stats`, `offsets`. Prints the median wall time of `KSEG_BENCH_SCALE_RUNS`
//! runs (default 3; one for `--apply`, which changes the directory, and at 100,000 segments or
//! more), the cost per segment and the ratio of each count's time to the first count's (linear:
//! the ratio of the counts). A child is killed after `KSEG_BENCH_SCALE_LIMIT` seconds (default
//! 120). `KSEG_BENCH_SCALE_COMMANDS` (labels, comma-separated) runs only those commands;
//! `KSEG_BENCH_DIR` is where the partitions are generated (default: the temporary directory).
//!
//! Part 2: partitions of `KSEG_BENCH_SCALE_MIB` MiB (default `256,4096`; 0 skips) in 1 GiB
//! segments, written through the engine and closed cleanly; prints the peak RSS of `verify
//! --deep`, `dump --deep-iteration`, `recover`, `rebuild-index --all` and `compact` on each,
//! and the ratio of each size's RSS to the smallest's (flat: within ±10%).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[path = "../tests/common/big_segment.rs"]
mod big_segment;
use big_segment::{closed_partition, empty_segments, run_measured_within};

fn list(name: &str, default: &str) -> Vec<u64> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

fn env(name: &str, default: u64) -> u64 {
    list(name, &default.to_string())
        .first()
        .copied()
        .unwrap_or(default)
}

/// The commands of part 1 on the partition `dir` (in the log dir `log_dir`): label, arguments,
/// whether it changes the directory.
fn commands(dir: &Path, log_dir: &Path) -> Vec<(&'static str, Vec<OsString>, bool)> {
    let d = || dir.as_os_str().to_owned();
    let a = |s: &str| OsString::from(s);
    vec![
        ("verify", vec![a("verify"), d()], false),
        ("dump", vec![a("dump"), d()], false),
        ("recover", vec![a("recover"), d()], false),
        ("rebuild-index", vec![a("rebuild-index"), d()], false),
        ("retention", vec![a("retention"), d()], false),
        ("compact", vec![a("compact"), d()], false),
        ("ls", vec![a("ls"), log_dir.as_os_str().to_owned()], false),
        ("stats", vec![a("stats"), d()], false),
        ("offsets", vec![a("offsets"), d()], false),
        (
            "rebuild-index --apply",
            vec![a("rebuild-index"), a("--apply"), a("--no-backup"), d()],
            true,
        ),
        (
            "recover --apply",
            vec![a("recover"), a("--apply"), a("--no-backup"), d()],
            true,
        ),
    ]
}

/// Median seconds of `runs` runs (None: killed at the limit) and the largest peak RSS.
fn measure(bin: &Path, args: &[OsString], runs: u64, limit: Duration) -> (Option<f64>, u64) {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let (mut secs, mut rss) = (Vec::new(), 0);
    for _ in 0..runs {
        let (code, r, s) = run_measured_within(bin, &args, Some(limit));
        rss = rss.max(r);
        if code < 0 {
            return (None, rss);
        }
        assert!(code <= 1, "{} {args:?} exited with {code}", bin.display());
        secs.push(s);
    }
    secs.sort_by(f64::total_cmp);
    (Some(secs[secs.len() / 2]), rss)
}

fn mib(rss: u64) -> f64 {
    rss as f64 / f64::from(1 << 20)
}

fn main() {
    let counts = list("KSEG_BENCH_SCALE_SEGMENTS", "1000,10000");
    let sizes = list("KSEG_BENCH_SCALE_MIB", "256,4096");
    let runs = env("KSEG_BENCH_SCALE_RUNS", 3);
    let limit = Duration::from_secs(env("KSEG_BENCH_SCALE_LIMIT", 120));
    let mut bins = vec![("this build", PathBuf::from(env!("CARGO_BIN_EXE_kseg")))];
    if let Ok(base) = std::env::var("KSEG_BASE_BIN") {
        bins.insert(0, ("baseline", PathBuf::from(base)));
    }
    let only: Option<Vec<String>> = std::env::var("KSEG_BENCH_SCALE_COMMANDS")
        .ok()
        .map(|s| s.split(',').map(|c| c.trim().to_string()).collect());
    let root = match std::env::var_os("KSEG_BENCH_DIR") {
        Some(d) => {
            std::fs::create_dir_all(&d).unwrap();
            tempfile::tempdir_in(d).unwrap()
        }
        None => tempfile::tempdir().unwrap(),
    };

    for (name, bin) in &bins {
        for with_indexes in [false, true] {
            println!(
                "== {name}: empty segments {} index files",
                if with_indexes { "with" } else { "without" }
            );
            // Each command's time at the first count.
            let mut first: std::collections::HashMap<&str, Option<f64>> = Default::default();
            for &count in &counts {
                let log_dir = root.path().join(format!("empty-{count}"));
                let dir = empty_segments(&log_dir, count, with_indexes);
                for (label, args, changes) in commands(&dir, &log_dir) {
                    if only.as_ref().is_some_and(|o| !o.iter().any(|c| c == label)) {
                        continue;
                    }
                    let once = changes || count >= 100_000;
                    let (secs, rss) = measure(bin, &args, if once { 1 } else { runs }, limit);
                    let at_first = *first.entry(label).or_insert(secs);
                    let time = secs.map_or(format!(">{} s (killed)", limit.as_secs()), |s| {
                        format!("{s:.3} s")
                    });
                    let ratio = match (secs, at_first) {
                        (Some(s), Some(f)) if count != counts[0] => {
                            format!("  {:.1}x of {}", s / f, counts[0])
                        }
                        _ => String::new(),
                    };
                    println!(
                        "{count:>7} segs  {label:<22} {time:>18}  {:>8.3} ms/segment  RSS {:>6.1} MiB{ratio}",
                        secs.map_or(f64::NAN, |s| s / count as f64 * 1000.0),
                        mib(rss)
                    );
                }
                std::fs::remove_dir_all(&log_dir).unwrap();
            }
        }
    }

    let mut smallest: Vec<u64> = Vec::new();
    for &size in sizes.iter().filter(|&&s| s > 0) {
        let log_dir = root.path().join(format!("sized-{size}"));
        let segment_bytes: u64 = 1 << 30;
        let segments = (size << 20).div_ceil(segment_bytes) as usize + 1;
        closed_partition(&log_dir, "bench-0", segments, segment_bytes.min(size << 20));
        let dir = log_dir.join("bench-0");
        let d = || dir.as_os_str().to_owned();
        let a = |s: &str| OsString::from(s);
        let cmds: Vec<(&str, Vec<OsString>)> = vec![
            ("verify --deep", vec![a("verify"), a("--deep"), d()]),
            (
                "dump --deep-iteration",
                vec![a("dump"), a("--deep-iteration"), d()],
            ),
            ("recover", vec![a("recover"), d()]),
            (
                "rebuild-index --all",
                vec![a("rebuild-index"), a("--all"), d()],
            ),
            ("compact", vec![a("compact"), d()]),
        ];
        println!("== {size} MiB partition ({segments} segments of at most 1 GiB)");
        for (i, (label, args)) in cmds.iter().enumerate() {
            for (name, bin) in &bins {
                let (secs, rss) = measure(bin, args, 1, Duration::from_secs(600));
                if *name == "this build" && smallest.len() <= i {
                    smallest.push(rss);
                }
                let flat = smallest
                    .get(i)
                    .filter(|_| *name == "this build")
                    .map(|&s| format!("  {:.2}x of the smallest", rss as f64 / s as f64))
                    .unwrap_or_default();
                println!(
                    "{name:<11} {label:<24} {:>9.3} s  peak RSS {:>7.1} MiB{flat}",
                    secs.unwrap_or(f64::NAN),
                    mib(rss)
                );
            }
        }
        std::fs::remove_dir_all(&log_dir).unwrap();
    }
}
