//! Many segments (issue 15 item 2: every command in seconds on 10,000 segments, its cost linear
//! in the number of segments; run: `cargo bench --bench segments`).
//!
//! For each layout and each count of `KSEG_BENCH_SEGMENTS` (default `1000,10000,100000`),
//! generates under `KSEG_BENCH_DIR` (default the temporary directory; deleted at the end) a log
//! dir holding one partition of that many segments and a recovery-point checkpoint at the last
//! segment's base (a broker's clean state: the start-up recovers the last segment only), then
//! runs each command with the `kseg` binary of this build and, as the baseline, the one at
//! `KSEG_BASE_BIN` (default `/tmp/kseg-base/kseg`, skipped when missing) up to
//! `KSEG_BENCH_SEGMENTS_BASE_MAX` segments (default 10,000). Prints the median wall and CPU
//! seconds (user + system of the child, the figure to read on a loaded machine) of
//! `KSEG_BENCH_SEGMENTS_RUNS` runs (default 1), each killed after `KSEG_BENCH_SEGMENTS_LIMIT`
//! seconds (default 300), then, per command, the ratio of each count's time to the count
//! before it, wall and CPU: 10.0 at ten times the segments is linear. The generation's time
//! is printed too (fixture set-up: one create and at most one write per file).
//!
//! Layouts (`KSEG_BENCH_SEGMENTS_LAYOUTS`, default all): `empty` (empty `.log`s, no index
//! files: the loader recovers every segment, `LogSegment.sanityCheck` failing on the missing
//! `.index`), `empty+indexes` (with the empty index files), `batch` (one batch of 100 records
//! per segment, no index files) and `batch+indexes` (with the index files the broker leaves:
//! an empty `.index`, as no batch starts `index.interval.bytes` past another, and one
//! `.timeindex` entry). Commands (`KSEG_BENCH_SEGMENTS_COMMANDS`, default all): `verify`,
//! `dump`, `recover` (dry run), `recover-apply` (`--apply --no-backup` on a fresh copy, the
//! copy not timed), `rebuild-index` (`--all`, dry run), `rebuild-index-apply` (`--all --apply
//! --no-backup` on a fresh copy), `retention` and `compact` (dry runs), `ls` of the log dir,
//! `stats` and `offsets`.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[path = "../tests/common/big_segment.rs"]
mod big_segment;
use big_segment::{empty_segments, run_measured_within};
mod common;
use common::{batch, cpu_seconds, env_u64, load_average, median};

/// The comma-separated list in `name`, or `default`.
fn env_list(name: &str, default: &[&str]) -> Vec<String> {
    match std::env::var(name) {
        Ok(s) if !s.trim().is_empty() => s.split(',').map(|x| x.trim().to_string()).collect(),
        _ => default.iter().map(|s| s.to_string()).collect(),
    }
}

const LAYOUTS: [&str; 4] = ["empty", "empty+indexes", "batch", "batch+indexes"];
const COMMANDS: [&str; 12] = [
    "verify",
    "dump",
    "recover",
    "recover-apply",
    "rebuild-index",
    "rebuild-index-apply",
    "retention",
    "retention-apply",
    "compact",
    "ls",
    "stats",
    "offsets",
];

/// Writes `<log_dir>/bench-0` with `count` segments of one 100-record batch each (bases 0, 100,
/// …), with the broker's index files when `with_indexes`.
fn batch_segments(log_dir: &Path, count: u64, with_indexes: bool) -> PathBuf {
    use kseg::format::names::{index_file_name, log_file_name, time_index_file_name};
    let dir = log_dir.join("bench-0");
    std::fs::create_dir_all(&dir).unwrap();
    // One prepared buffer per file kind, patched in place for each segment: generation is
    // one create and at most one write per file (the fixture, not what is measured).
    let mut bytes = batch(0, kseg::format::Compression::None);
    let last = common::RECORDS_PER_BATCH - 1;
    let mut entry = [0u8; 12];
    entry[8..].copy_from_slice(&(last as i32).to_be_bytes());
    for i in 0..count as i64 {
        let base = i * common::RECORDS_PER_BATCH;
        // The base offset lies before the CRC's coverage: every moved copy is valid.
        bytes[..8].copy_from_slice(&base.to_be_bytes());
        std::fs::write(dir.join(log_file_name(base)), &bytes).unwrap();
        if with_indexes {
            std::fs::File::create(dir.join(index_file_name(base))).unwrap();
            // The batch's max timestamp at its last offset (`LogSegment.recover`).
            entry[..8].copy_from_slice(&(1_700_000_000_000 + base + last).to_be_bytes());
            std::fs::write(dir.join(time_index_file_name(base)), entry).unwrap();
        }
    }
    dir
}

/// A log dir under `root` holding the partition of `layout` with `count` segments, its
/// recovery point at the last base. Returns the partition directory.
fn generate(root: &Path, layout: &str, count: u64) -> PathBuf {
    let log_dir = root.join("logs");
    let with_indexes = layout.ends_with("+indexes");
    let (dir, last) = if layout.starts_with("batch") {
        let dir = batch_segments(&log_dir, count, with_indexes);
        (dir, (count as i64 - 1) * common::RECORDS_PER_BATCH)
    } else {
        (
            empty_segments(&log_dir, count, with_indexes),
            count as i64 - 1,
        )
    };
    std::fs::write(
        log_dir.join("recovery-point-offset-checkpoint"),
        format!("0\n1\nbench 0 {last}\n"),
    )
    .unwrap();
    dir
}

/// Median wall and CPU seconds and peak RSS (MiB) of `runs` runs (`prepare` before each), and
/// whether a run was killed at `limit`.
fn measure(
    bin: &Path,
    args: &[&OsStr],
    runs: u64,
    limit: Duration,
    mut prepare: impl FnMut(),
) -> (f64, f64, f64, bool) {
    let (mut wall, mut cpu, mut rss) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        prepare();
        let before = cpu_seconds(libc::RUSAGE_CHILDREN);
        let (code, peak, secs) = run_measured_within(bin, args, Some(limit));
        cpu.push(cpu_seconds(libc::RUSAGE_CHILDREN) - before);
        wall.push(secs);
        rss.push(peak as f64 / f64::from(1 << 20));
        if code < 0 {
            return (median(wall), median(cpu), median(rss), true);
        }
        assert!(code <= 1, "{} {args:?} exited with {code}", bin.display());
    }
    (median(wall), median(cpu), median(rss), false)
}

/// (layout, command, binary) of a row of figures.
type Series = (String, String, &'static str);
/// A series' figures: (count, wall and CPU seconds, or None when killed).
type Figures = Vec<(u64, Option<(f64, f64)>)>;

/// `cp -a from to` (a fresh copy of the log dir for each `--apply`). A copy already at `to`
/// is moved aside into `trash`, removed with the count's directory: ext4's inode allocator
/// skips the inodes freed in the last half minute or so (`recently_deleted`, most of a
/// profile's kernel time here), so removing 100,000 files just before creating as many made
/// each create scan past them.
fn copy_tree(from: &Path, to: &Path, trash: &Path) {
    if to.exists() {
        std::fs::create_dir_all(trash).unwrap();
        let n = std::fs::read_dir(trash).unwrap().count();
        std::fs::rename(to, trash.join(n.to_string())).unwrap();
    }
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap()
        .success();
    assert!(ok, "cp -a {} {}", from.display(), to.display());
}

fn main() {
    let counts: Vec<u64> = env_list("KSEG_BENCH_SEGMENTS", &["1000", "10000", "100000"])
        .iter()
        .map(|s| s.parse().expect("KSEG_BENCH_SEGMENTS: numbers"))
        .collect();
    let layouts = env_list("KSEG_BENCH_SEGMENTS_LAYOUTS", &LAYOUTS);
    let commands = env_list("KSEG_BENCH_SEGMENTS_COMMANDS", &COMMANDS);
    let runs = env_u64("KSEG_BENCH_SEGMENTS_RUNS", 1);
    let limit = Duration::from_secs(env_u64("KSEG_BENCH_SEGMENTS_LIMIT", 300));
    let base_max = env_u64("KSEG_BENCH_SEGMENTS_BASE_MAX", 10_000);
    let root = std::env::var("KSEG_BENCH_DIR").map_or_else(|_| std::env::temp_dir(), PathBuf::from);
    std::fs::create_dir_all(&root).unwrap();
    let bins = common::binaries(PathBuf::from(env!("CARGO_BIN_EXE_kseg")));
    println!(
        "medians of {runs} run(s), killed after {} s; load average {}",
        limit.as_secs(),
        load_average()
    );
    let mut walls: BTreeMap<Series, Figures> = BTreeMap::new();
    for layout in &layouts {
        for &count in &counts {
            let tmp = tempfile::tempdir_in(&root).unwrap();
            let (dir, generated) = common::timed(|| generate(tmp.path(), layout, count));
            let log_dir = dir.parent().unwrap().to_path_buf();
            let copy_root = tmp.path().join("copy");
            let trash = tmp.path().join("trash");
            let copied_dir = copy_root.join("bench-0");
            println!(
                "-- {layout}, {count} segments (generated in {generated:.1} s; load average {})",
                load_average()
            );
            for command in &commands {
                for (name, bin) in &bins {
                    if *name == "baseline" && count > base_max {
                        continue;
                    }
                    let d = dir.as_os_str();
                    let o = OsStr::new;
                    // The arguments, and whether the command runs on a fresh copy (it changes
                    // the directory).
                    let (args, on_copy): (Vec<&OsStr>, bool) = match command.as_str() {
                        "recover-apply" => (
                            vec![
                                o("recover"),
                                o("--apply"),
                                o("--no-backup"),
                                copied_dir.as_os_str(),
                            ],
                            true,
                        ),
                        "rebuild-index-apply" => (
                            vec![
                                o("rebuild-index"),
                                o("--all"),
                                o("--apply"),
                                o("--no-backup"),
                                copied_dir.as_os_str(),
                            ],
                            true,
                        ),
                        "retention-apply" => (
                            vec![
                                o("retention"),
                                o("--apply"),
                                o("--no-backup"),
                                copied_dir.as_os_str(),
                            ],
                            true,
                        ),
                        "rebuild-index" => (vec![o("rebuild-index"), o("--all"), d], false),
                        "ls" => (vec![o("ls"), log_dir.as_os_str()], false),
                        c @ ("verify" | "dump" | "recover" | "retention" | "compact" | "stats"
                        | "offsets") => (vec![o(c), d], false),
                        other => panic!("unknown command {other}"),
                    };
                    let (wall, cpu, rss, killed) = measure(bin, &args, runs, limit, || {
                        if on_copy {
                            copy_tree(&log_dir, &copy_root, &trash);
                        }
                    });
                    let time = if killed {
                        format!(">{wall:.2} s (killed)")
                    } else {
                        format!("{wall:.2} s")
                    };
                    println!(
                        "{command:<20} {name:<12} {time:>20}  CPU {cpu:>8.2} s  RSS {rss:>7.1} MiB"
                    );
                    walls
                        .entry((layout.clone(), command.clone(), *name))
                        .or_default()
                        .push((count, (!killed).then_some((wall, cpu))));
                }
            }
        }
    }
    println!("-- growth of the wall (CPU) time from each count to the next (10x the segments)");
    for ((layout, command, name), figures) in &walls {
        let steps: Vec<String> = figures
            .windows(2)
            .map(|w| match (w[0].1, w[1].1) {
                (Some((a, ca)), Some((b, cb))) => format!(
                    "{}->{}: {:.1}x ({:.1}x)",
                    w[0].0,
                    w[1].0,
                    b / a.max(1e-3),
                    cb / ca.max(1e-3)
                ),
                _ => format!("{}->{}: killed", w[0].0, w[1].0),
            })
            .collect();
        if !steps.is_empty() {
            println!("{layout:<14} {command:<20} {name:<12} {}", steps.join("  "));
        }
    }
}
