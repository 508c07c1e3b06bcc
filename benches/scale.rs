//! Memory flat in partition size (issue 16's RSS target; run: `cargo bench --bench scale`).
//! The cost in the number of segments is `benches/segments.rs`'s.
//!
//! Cost linear in what is there (issue 35): a partition directory holding N stray files
//! (`KSEG_BENCH_STRAY`, default `1000,10000,100000,200000`) under `recover` (a dry run) and
//! `verify --deep`, and a log dir of N one-segment partitions (`KSEG_BENCH_PARTITIONS`, default
//! `1500,3000,10000,30000`) under `recover`, `verify` and `ls`: the median time and peak RSS
//! of `KSEG_BENCH_SCALE_RUNS` runs (default 3: the machine is shared) at each N, with the
//! growth from the step before beside the growth of N (goal: 10 k to 100 k at most 12x in
//! both). `KSEG_BENCH_SCALE_MIB=0` runs these alone. Then the price of the engine's one way to
//! open a file to read (`open_regular`: a stat, the open, an fstat and two fcntl, so that a
//! FIFO or a device is never read) against a bare open, as a ratio.
//!
//! Partitions of `KSEG_BENCH_SCALE_MIB` MiB (default `256,4096`) in 1 GiB segments, written
//! through the engine and closed cleanly under `KSEG_BENCH_DIR` (default: the temporary
//! directory); prints the peak RSS of `verify --deep`, `dump --deep-iteration`, `recover`,
//! `rebuild-index --all` and `compact` on each, with this build (and `KSEG_BASE_BIN` when set,
//! in the same run), and the ratio of each size's RSS to the smallest's (flat: within ±10%).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[path = "../tests/common/big_segment.rs"]
mod big_segment;
use big_segment::{closed_partition, run_measured_within};

fn list(name: &str, default: &str) -> Vec<u64> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

/// Seconds of one run (None: killed at the limit) and its peak RSS.
fn measure(bin: &Path, args: &[OsString], limit: Duration) -> (Option<f64>, u64) {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let (code, rss, secs) = run_measured_within(bin, &args, Some(limit));
    if code < 0 {
        return (None, rss);
    }
    assert!(code <= 1, "{} {args:?} exited with {code}", bin.display());
    (Some(secs), rss)
}

/// The medians of the seconds and peak RSS of `runs` runs (None: a run was killed).
fn measure_median(bin: &Path, args: &[OsString], limit: Duration, runs: u64) -> (Option<f64>, u64) {
    let (mut secs, mut rss) = (Vec::new(), Vec::new());
    for _ in 0..runs.max(1) {
        let (s, r) = measure(bin, args, limit);
        rss.push(r);
        match s {
            Some(s) => secs.push(s),
            None => return (None, r),
        }
    }
    secs.sort_by(f64::total_cmp);
    rss.sort_unstable();
    (Some(secs[secs.len() / 2]), rss[rss.len() / 2])
}

fn mib(rss: u64) -> f64 {
    rss as f64 / f64::from(1 << 20)
}

fn main() {
    let sizes = list("KSEG_BENCH_SCALE_MIB", "256,4096");
    let mut bins = vec![("this build", PathBuf::from(env!("CARGO_BIN_EXE_kseg")))];
    if let Ok(base) = std::env::var("KSEG_BASE_BIN") {
        bins.insert(0, ("baseline", PathBuf::from(base)));
    }
    let root = match std::env::var_os("KSEG_BENCH_DIR") {
        Some(d) => {
            std::fs::create_dir_all(&d).unwrap();
            tempfile::tempdir_in(d).unwrap()
        }
        None => tempfile::tempdir().unwrap(),
    };

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
                let (secs, rss) = measure(bin, args, Duration::from_secs(600));
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
    counts(&bins, root.path());
    open_cost(root.path());
}

/// `open_regular` against `File::open` of the same file, medians of rounds of many opens.
fn open_cost(root: &Path) {
    use std::time::Instant;
    let file = root.join("open-cost");
    std::fs::write(&file, b"x").unwrap();
    const OPENS: u32 = 20_000;
    let round = |f: &dyn Fn()| {
        let started = Instant::now();
        for _ in 0..OPENS {
            f();
        }
        started.elapsed().as_secs_f64() * 1e9 / f64::from(OPENS)
    };
    let (mut bare, mut fstat, mut checked) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..7 {
        bare.push(round(&|| drop(std::fs::File::open(&file).unwrap())));
        // The re-check on the descriptor alone.
        fstat.push(round(&|| {
            std::fs::File::open(&file).unwrap().metadata().unwrap();
        }));
        checked.push(round(&|| {
            drop(kseg::storage::files::open_regular(&file).unwrap())
        }));
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (bare, fstat, checked) = (median(bare), median(fstat), median(checked));
    println!(
        "== open to read: File::open {bare:.0} ns, with an fstat {fstat:.0} ns ({:.2}x), \
         open_regular {checked:.0} ns ({:.2}x)",
        fstat / bare,
        checked / bare
    );
}

/// A partition with one small segment (closed cleanly) in `root/source`, copied as needed.
fn source_partition(root: &Path) -> PathBuf {
    let log_dir = root.join("source");
    closed_partition(&log_dir, "bench-0", 1, 1 << 20);
    log_dir.join("bench-0")
}

fn copy_partition(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// The stray-file and partition-count steps (see the module's comment).
fn counts(bins: &[(&str, PathBuf)], root: &Path) {
    let source = source_partition(root);
    let a = |s: &str| OsString::from(s);
    let runs = list("KSEG_BENCH_SCALE_RUNS", "3")
        .first()
        .copied()
        .unwrap_or(3);
    println!("medians of {runs} run(s)");
    let step = |label: &str, n: u64, prev: &mut Option<(u64, f64, u64)>, args: &[OsString]| {
        for (name, bin) in bins {
            let (secs, rss) = measure_median(bin, args, Duration::from_secs(900), runs);
            let secs = secs.unwrap_or(f64::NAN);
            let growth = match prev.filter(|_| *name == "this build") {
                Some((n0, s0, r0)) => format!(
                    "  x{:.1} N: x{:.1} time, x{:.2} RSS",
                    n as f64 / n0 as f64,
                    secs / s0,
                    rss as f64 / r0 as f64
                ),
                None => String::new(),
            };
            println!(
                "{name:<11} {label:<28} N={n:<7} {secs:>9.3} s  peak RSS {:>7.1} MiB{growth}",
                mib(rss)
            );
            if *name == "this build" {
                *prev = Some((n, secs, rss));
            }
        }
    };
    let strays = list("KSEG_BENCH_STRAY", "1000,10000,100000,200000");
    let (mut recover, mut verify) = (None, None);
    println!("== a partition directory with N stray files");
    for &n in &strays {
        let dir = root.join(format!("stray-{n}/bench-0"));
        copy_partition(&source, &dir);
        for i in 0..n {
            std::fs::File::create(dir.join(format!("stray-{i}"))).unwrap();
        }
        let d = dir.as_os_str().to_owned();
        step("recover", n, &mut recover, &[a("recover"), d.clone()]);
        step(
            "verify --deep",
            n,
            &mut verify,
            &[a("verify"), a("--deep"), d],
        );
        std::fs::remove_dir_all(root.join(format!("stray-{n}"))).unwrap();
    }
    let partitions = list("KSEG_BENCH_PARTITIONS", "1500,3000,10000,30000");
    let (mut recover, mut verify, mut ls) = (None, None, None);
    println!("== a log dir of N partitions");
    for &n in &partitions {
        let log_dir = root.join(format!("partitions-{n}"));
        for i in 0..n {
            copy_partition(&source, &log_dir.join(format!("bench-{i}")));
        }
        let l = log_dir.as_os_str().to_owned();
        step(
            "recover (log dir)",
            n,
            &mut recover,
            &[a("recover"), l.clone()],
        );
        step(
            "verify (log dir)",
            n,
            &mut verify,
            &[a("verify"), l.clone()],
        );
        step("ls (log dir)", n, &mut ls, &[a("ls"), l]);
        std::fs::remove_dir_all(&log_dir).unwrap();
    }
}
