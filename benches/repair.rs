//! Repairs that plan without copying (issue 16 items 1–2, issue 15 item 2; run:
//! `cargo bench --bench repair`).
//!
//! Generates under the temporary directory (deleted at the end) a partition of one segment of
//! `KSEG_BENCH_REPAIR_MIB` MiB (default 1024, Kafka's `segment.bytes`) of whole batches and a
//! torn tail, no index files and no checkpoint (so the recovery point is 0, the start of the
//! last segment), then runs the `kseg` binary of this build and, as the baseline, the one at
//! `KSEG_BASE_BIN` (default `/tmp/kseg-base/kseg`, skipped when missing) in the same run.
//! Prints for each the median wall time of `KSEG_BENCH_REPAIR_RUNS` runs (default 3), the
//! median CPU time (user + system, the children's `getrusage`: the figure to read on a loaded
//! machine, where wall time is mostly waiting for a core) and the largest peak RSS (the child's
//! own `VmHWM` at its exit) of:
//! - `recover` (dry run) and `recover --apply --no-backup` (the torn tail restored between
//!   runs), next to one sequential read of the segment, first without index files (the broker
//!   then recovers the segment twice: once to rebuild the missing indexes, once from the
//!   recovery point), then with the index files a crash leaves (one recovery);
//! - `rebuild-index --all` (dry run) on the recovered segment, next to shallow `verify`;
//! - `recover` (dry run) of a log dir of `KSEG_BENCH_REPAIR_PARTITIONS` partitions (default
//!   8) of four 32 MiB segments, the recovery point checkpointed at the start of each last
//!   segment (#22: what the broker's start-up reads is the last segments only);
//! - `recover` (dry run) of `KSEG_BENCH_REPAIR_EMPTY` empty segments (default 10,000), without
//!   and with (empty) index files; the baseline is killed after 125 s.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[path = "../tests/common/big_segment.rs"]
mod big_segment;
use big_segment::{closed_partition, empty_segments, run_measured_within, torn_segment};
mod common;
use common::{cpu_seconds, env_u64 as env, load_average, median};

/// Median seconds and largest peak RSS of `runs` runs, `prepare` called before each.
struct Figure {
    secs: f64,
    /// Median CPU seconds (user + system).
    cpu: f64,
    rss: u64,
    /// Killed at the time limit in some run.
    timed_out: bool,
}

fn measure(
    bin: &Path,
    args: &[&OsStr],
    runs: u64,
    limit: Option<Duration>,
    mut prepare: impl FnMut(),
) -> Figure {
    let (mut secs, mut cpu) = (Vec::new(), Vec::new());
    let (mut rss, mut timed_out) = (0, false);
    for _ in 0..runs {
        prepare();
        let before = cpu_seconds(libc::RUSAGE_CHILDREN);
        let (code, r, s) = run_measured_within(bin, args, limit);
        cpu.push(cpu_seconds(libc::RUSAGE_CHILDREN) - before);
        timed_out |= code < 0;
        // 0: nothing to do or applied; 1: a plan with changes.
        assert!(
            code < 0 || code <= 1,
            "{} {args:?} exited with {code}",
            bin.display()
        );
        secs.push(s);
        rss = rss.max(r);
        if code < 0 {
            break;
        }
    }
    Figure {
        secs: median(secs),
        cpu: median(cpu),
        rss,
        timed_out,
    }
}

/// `reference` is (wall seconds, CPU seconds, name) of what the figure is compared with.
fn print(label: &str, f: &Figure, reference: Option<(f64, f64, &str)>) {
    let time = if f.timed_out {
        format!(">{:.1} s (killed)", f.secs)
    } else {
        format!("{:.3} s", f.secs)
    };
    let ratio = reference
        .map(|(r, c, name)| {
            format!(
                "  {:.2}x {name} (CPU {:.2}x)",
                f.secs / r,
                f.cpu / c.max(1e-6)
            )
        })
        .unwrap_or_default();
    println!(
        "{label:<46} {time:>18} CPU {:>7.3} s  peak RSS {:>7.1} MiB{ratio}",
        f.cpu,
        f.rss as f64 / (1 << 20) as f64
    );
}

/// Wall and CPU seconds of one sequential read of `p` in 1 MiB chunks (medians of `runs`).
fn read_once(p: &Path, runs: u64) -> (f64, f64) {
    let (wall, cpu): (Vec<f64>, Vec<f64>) = (0..runs)
        .map(|_| {
            let (started, cpu) = (std::time::Instant::now(), cpu_seconds(libc::RUSAGE_SELF));
            let mut f = std::fs::File::open(p).unwrap();
            let mut buf = vec![0u8; 1 << 20];
            while f.read(&mut buf).unwrap() > 0 {}
            (
                started.elapsed().as_secs_f64(),
                cpu_seconds(libc::RUSAGE_SELF) - cpu,
            )
        })
        .unzip();
    (median(wall), median(cpu))
}

/// Puts the partition back as generated: the whole batches and the torn tail, no other file
/// in it or in its log dir, but its index files when `keep_indexes` (as a crash leaves them).
fn restore(dir: &Path, log: &Path, whole: u64, tail: &[u8], keep_indexes: bool) {
    for d in [dir, dir.parent().unwrap()] {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            let index = matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("index" | "timeindex")
            );
            if p.is_file() && p != log && !(keep_indexes && index) {
                std::fs::remove_file(&p).unwrap();
            }
        }
    }
    let mut f = std::fs::OpenOptions::new().write(true).open(log).unwrap();
    f.set_len(whole).unwrap();
    std::io::Seek::seek(&mut f, std::io::SeekFrom::End(0)).unwrap();
    f.write_all(tail).unwrap();
}

fn main() {
    let mib = env("KSEG_BENCH_REPAIR_MIB", 1024);
    let runs = env("KSEG_BENCH_REPAIR_RUNS", 3);
    let empty = env("KSEG_BENCH_REPAIR_EMPTY", 10_000);
    let bins = common::binaries(PathBuf::from(env!("CARGO_BIN_EXE_kseg")));

    let tmp = tempfile::tempdir().unwrap();
    let (dir, whole) = torn_segment(&tmp.path().join("data"), mib << 20);
    let log = dir.join("00000000000000000000.log");
    let mut tail = Vec::new();
    {
        let mut f = std::fs::File::open(&log).unwrap();
        std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(whole)).unwrap();
        f.read_to_end(&mut tail).unwrap();
    }
    println!(
        "partition: one segment of {whole} bytes of batches + a torn tail of {} bytes; medians of {runs}",
        tail.len()
    );
    let read = read_once(&log, runs);
    println!(
        "{:<46} {:>18} CPU {:>7.3} s  (load average {})",
        "read the segment once (1 MiB reads)",
        format!("{:.3} s", read.0),
        read.1,
        load_average()
    );
    let d = dir.as_os_str();
    let mut baseline: [Option<(f64, f64)>; 6] = [None; 6];
    let limit = Some(Duration::from_secs(125));
    for (name, bin) in &bins {
        // The recovery first without index files, then with the ones a crash leaves. Without
        // them the broker recovers the segment twice (`loadSegmentFiles` rebuilds the missing
        // indexes, then `recoverLog` recovers from the recovery point), with them once: the
        // case the "2x of one read" target is about.
        let recover = |keep_indexes: bool| {
            let prepare = || restore(&dir, &log, whole, &tail, keep_indexes);
            let apply = [
                OsStr::new("recover"),
                OsStr::new("--apply"),
                OsStr::new("--no-backup"),
                d,
            ];
            [
                measure(bin, &[OsStr::new("recover"), d], runs, None, prepare),
                measure(bin, &apply, runs, None, prepare),
            ]
        };
        let [dry, applied] = recover(false);
        let [dry_kept, applied_kept] = recover(true);
        // The last apply left the segment recovered, with its indexes.
        let figures = [
            ("recover (dry run)", dry),
            ("recover --apply", applied),
            ("recover (dry run), indexes present", dry_kept),
            ("recover --apply, indexes present", applied_kept),
            (
                "rebuild-index --all (dry run)",
                measure(
                    bin,
                    &[OsStr::new("rebuild-index"), OsStr::new("--all"), d],
                    runs,
                    None,
                    || {},
                ),
            ),
            (
                "verify",
                measure(bin, &[OsStr::new("verify"), d], runs, None, || {}),
            ),
        ];
        println!("-- {name}: {}", bin.display());
        for (i, (label, f)) in figures.iter().enumerate() {
            let mut reference = match i {
                0..=3 => Some((read.0, read.1, "read once")),
                4 => Some((figures[5].1.secs, figures[5].1.cpu, "verify")),
                _ => None,
            };
            print(label, f, reference.take());
            if *name == "baseline" {
                baseline[i] = Some((f.secs, f.cpu));
            } else if let Some((b, c)) = baseline[i] {
                println!(
                    "{:<46} {:>18.2}x the baseline's time (CPU {:.2}x)",
                    "",
                    f.secs / b,
                    f.cpu / c.max(1e-6)
                );
            }
        }
    }
    drop(tmp);

    let partitions = env("KSEG_BENCH_REPAIR_PARTITIONS", 8);
    let tmp = tempfile::tempdir().unwrap();
    let log_dir = tmp.path().join("data");
    let mut checkpoint = format!("0\n{partitions}\n");
    for p in 0..partitions {
        let last = closed_partition(&log_dir, &format!("bench-{p}"), 4, 32 << 20);
        checkpoint.push_str(&format!("bench {p} {last}\n"));
    }
    std::fs::write(log_dir.join("recovery-point-offset-checkpoint"), checkpoint).unwrap();
    println!(
        "-- log dir of {partitions} partitions x 4 segments of 32 MiB, recover (dry run) from each last segment"
    );
    let mut base_secs = None;
    for (name, bin) in &bins {
        let f = measure(
            bin,
            &[OsStr::new("recover"), log_dir.as_os_str()],
            runs,
            None,
            || {},
        );
        print(name, &f, base_secs.map(|(b, c)| (b, c, "baseline")));
        base_secs.get_or_insert((f.secs, f.cpu));
    }
    drop(tmp);

    println!("-- {empty} empty segments, recover (dry run)");
    for with_indexes in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = empty_segments(&tmp.path().join("data"), empty, with_indexes);
        let mut base_secs = None;
        for (name, bin) in &bins {
            let f = measure(
                bin,
                &[OsStr::new("recover"), dir.as_os_str()],
                1,
                limit,
                || {},
            );
            let label = format!(
                "{name}, {} index files",
                if with_indexes { "with" } else { "without" }
            );
            let reference = base_secs.map(|(b, c)| (b, c, "baseline"));
            print(&label, &f, reference);
            base_secs.get_or_insert((f.secs, f.cpu));
        }
    }
}
