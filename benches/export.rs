//! `export` against what a user does today (run: `cargo bench --bench export`).
//!
//! Writes, through the engine, the perf partition of the other benches
//! (`KSEG_BENCH_EXPORT_MIB` MiB of an idempotent producer's uncompressed batches, default 256)
//! and times, in the same run and on the same warm page cache, the median of
//! `KSEG_BENCH_RUNS` (default 3) runs of each way to a Parquet file of its records:
//! `kseg dump --jsonl --deep-iteration --print-data-log` piped into DuckDB's `read_json`, whose
//! `COPY … TO` writes it as Parquet (Python's `duckdb` package), as the issue names the user's
//! way; the same through a file, which DuckDB reads on all cores (its faster way); and
//! `kseg export --format parquet`; prints both ratios (the goal: 5x or more). Then the peak
//! resident memory of `kseg export` on partitions of each size in `KSEG_BENCH_EXPORT_MEM_MIB`
//! (default `256,4096`): flat is the target.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

use kseg::format::Compression;

mod common;
use common::{files, timed, write_partition};
#[path = "../tests/common/big_segment.rs"]
mod big_segment;
use big_segment::run_measured;

const KSEG: &str = env!("CARGO_BIN_EXE_kseg");

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

fn median(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..runs).map(|_| timed(&mut f).1).collect();
    t.sort_by(f64::total_cmp);
    t[runs / 2]
}

fn run(cmd: &mut Command) {
    let status = cmd.status().unwrap();
    assert!(status.success(), "{cmd:?}: {status}");
}

/// DuckDB turning dump's JSON Lines on `input` (a file, or `/dev/stdin`) into Parquet.
fn duckdb(input: &str, out: &Path) -> Command {
    let script = format!(
        "import duckdb\ncon = duckdb.connect()\ncon.execute('SET enable_progress_bar = false')\n\
         con.execute(\"COPY (SELECT * FROM read_json('{input}', format = 'newline_delimited') \
         WHERE type = 'record') TO '{}' (FORMAT parquet)\")",
        out.display()
    );
    let mut cmd = Command::new("python3");
    cmd.args(["-c", &script]);
    cmd
}

fn dump(dir: &Path) -> Command {
    let mut cmd = Command::new(KSEG);
    cmd.args(["dump", "--jsonl", "--deep-iteration", "--print-data-log"])
        .arg(dir);
    cmd
}

/// The user's way today: dump's JSON Lines piped into DuckDB.
fn piped_into_duckdb(dir: &Path, tmp: &Path) {
    let mut dumping = dump(dir).stdout(Stdio::piped()).spawn().unwrap();
    let lines = dumping.stdout.take().unwrap();
    run(duckdb("/dev/stdin", &tmp.join("duckdb.parquet")).stdin(lines));
    let status = dumping.wait().unwrap();
    assert!(status.success(), "kseg dump: {status}");
}

/// The same through a file, which DuckDB reads on every core.
fn through_duckdb(dir: &Path, tmp: &Path) {
    let lines = tmp.join("dump.jsonl");
    run(dump(dir).stdout(std::fs::File::create(&lines).unwrap()));
    run(&mut duckdb(
        &lines.display().to_string(),
        &tmp.join("duckdb.parquet"),
    ));
}

fn export(dir: &Path, out: &Path) {
    run(Command::new(KSEG)
        .args(["export", "-q", "--out"])
        .arg(out)
        .arg(dir)
        .stdout(Stdio::null()));
}

fn main() {
    let mib: u64 = env_or("KSEG_BENCH_EXPORT_MIB", "256").parse().unwrap();
    let runs: usize = env_or("KSEG_BENCH_RUNS", "3").parse().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bench-0");
    let ((), secs) = timed(|| write_partition(&dir, Compression::None, mib << 20));
    let bytes: u64 = files(&dir)
        .iter()
        .map(|f| f.metadata().unwrap().len())
        .sum();
    println!(
        "perf partition: {} MiB on disk, written in {secs:.1} s; medians of {runs} runs",
        bytes >> 20
    );
    let piped = median(runs, || piped_into_duckdb(&dir, tmp.path()));
    let duck = median(runs, || through_duckdb(&dir, tmp.path()));
    let out = tmp.path().join("kseg.parquet");
    let ours = median(runs, || export(&dir, &out));
    let size = |p: &Path| p.metadata().unwrap().len() >> 20;
    println!(
        "dump --jsonl | DuckDB read_json + COPY TO parquet  {piped:>8.2} s  ({} MiB parquet)",
        size(&tmp.path().join("duckdb.parquet"))
    );
    println!("dump --jsonl > file; DuckDB reads the file        {duck:>8.2} s");
    println!(
        "kseg export --format parquet                      {ours:>8.2} s  ({} MiB parquet)",
        size(&out)
    );
    println!(
        "ratio: {:.1}x piped, {:.1}x through a file (goal: 5x or more)",
        piped / ours,
        duck / ours
    );
    for mem_mib in env_or("KSEG_BENCH_EXPORT_MEM_MIB", "256,4096").split(',') {
        let mem_mib: u64 = mem_mib.trim().parse().unwrap();
        let d = tmp.path().join(format!("mem-{mem_mib}"));
        write_partition(&d, Compression::None, mem_mib << 20);
        let out = tmp.path().join(format!("mem-{mem_mib}.parquet"));
        let args: Vec<&OsStr> = vec![
            OsStr::new("export"),
            OsStr::new("--out"),
            out.as_os_str(),
            d.as_os_str(),
        ];
        let (code, rss) = run_measured(Path::new(KSEG), &args);
        assert_eq!(code, 0, "kseg export exited with {code}");
        println!("kseg export of {mem_mib} MiB: peak RSS {} MiB", rss >> 20);
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::remove_file(&out).unwrap();
    }
}
