//! `dump --offset N` in the middle of a large partition next to reading that partition once
//! (run: `cargo bench --bench seek`).
//!
//! Writes, through the engine, a partition of `KSEG_BENCH_SEEK_MIB` MiB of record payload
//! (default 4096: 4 GiB) of uncompressed 100-record batches in 128 MiB segments, closed cleanly,
//! into a temporary directory (deleted at the end), or into `KSEG_BENCH_SEEK_DIR` (kept, and
//! reused when it already holds a partition). Prints, on the same warm page cache, medians of
//! 101 seeks (`dump --offset N`, deep, for offsets spread over the middle half) in the library
//! with the `.log` bytes each read (counted by the reader), of the same seek by the `kseg`
//! binary next to `kseg --version` (the process start-up floor every command pays), and of
//! three shallow dumps of the whole partition with their bytes read, and the ratios.

use std::path::Path;

use kseg::format::Compression;
use kseg::ops::inspect::dump::{dump_paths, DumpOptions, Event, OffsetRange, Outcome, Sink};

mod common;
use common::{timed, write_partition, RECORDS_PER_BATCH};

/// Counts what a dump shows, so the work is not optimised away.
#[derive(Default)]
struct Count {
    batches: u64,
    records: u64,
}

impl Sink for Count {
    fn event(&mut self, e: &Event<'_>) -> std::io::Result<()> {
        match e {
            Event::Batch { .. } => self.batches += 1,
            Event::Record(_) => self.records += 1,
            _ => {}
        }
        Ok(())
    }
}

fn dump(dir: &Path, opts: &DumpOptions) -> (Count, Outcome) {
    let mut count = Count::default();
    let outcome = dump_paths(&[dir.to_path_buf()], opts, &mut count).unwrap();
    (count, outcome)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mib: u64 = std::env::var("KSEG_BENCH_SEEK_MIB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4096);
    let tmp = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let dir = match std::env::var_os("KSEG_BENCH_SEEK_DIR") {
        Some(d) => Path::new(&d).join("bench-0"),
        None => tmp.path().join("bench-0"),
    };
    let secs = if dir.exists() {
        0.0
    } else {
        timed(|| write_partition(&dir, Compression::None, mib << 20)).1
    };
    let log_bytes: u64 = common::files(&dir)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    let end = {
        let answer = kseg::ops::inspect::seek::list_offsets(
            &dir,
            kseg::ops::inspect::seek::OffsetQuery::Latest,
        )
        .unwrap();
        answer.offset.unwrap()
    };
    println!(
        "partition: {:.2} GiB of .log, offsets 0..{end}, written in {secs:.1} s",
        log_bytes as f64 / (1u64 << 30) as f64
    );

    // Full read first: it also warms the page cache for both passes.
    let shallow = DumpOptions::default();
    let mut full_times = Vec::new();
    let mut full_bytes = 0;
    for _ in 0..3 {
        let ((count, outcome), t) = timed(|| dump(&dir, &shallow));
        assert_eq!(count.batches as i64, end / RECORDS_PER_BATCH);
        assert_eq!(outcome.damage, 0);
        full_bytes = outcome.log_bytes_read;
        full_times.push(t);
    }
    let full = median(full_times);

    let mut seek_times = Vec::new();
    let mut seek_bytes = Vec::new();
    let mut seek_pages = Vec::new();
    let runs = 101;
    // Offsets spread over the middle half, off batch boundaries.
    let offset = |i: i64| end / 4 + (end / 2) * i / runs + 37;
    for i in 0..runs {
        let n = offset(i);
        let opts = DumpOptions {
            deep: true,
            range: Some(OffsetRange {
                from: n,
                to: Some(n),
                ..OffsetRange::default()
            }),
            ..DumpOptions::default()
        };
        let ((count, outcome), t) = timed(|| dump(&dir, &opts));
        assert_eq!((count.batches, count.records), (1, 1), "--offset {n}");
        seek_times.push(t);
        seek_bytes.push(outcome.log_bytes_read as f64);
        seek_pages.push(outcome.index_pages_read as f64);
    }
    let seek = median(seek_times);
    let bytes = median(seek_bytes.clone());
    let most = seek_bytes.iter().copied().fold(0.0, f64::max);

    // The same seeks by the binary, next to the least any kseg command costs: starting.
    let kseg = env!("CARGO_BIN_EXE_kseg");
    let run = |args: &[String]| {
        timed(|| {
            let status = std::process::Command::new(kseg)
                .args(args)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .unwrap();
            assert!(status.success(), "kseg {args:?}");
        })
        .1
    };
    let floor = median((0..runs).map(|_| run(&["--version".to_owned()])).collect());
    let cli = median(
        (0..runs)
            .map(|i| {
                run(&[
                    "dump".to_owned(),
                    "--offset".to_owned(),
                    offset(i).to_string(),
                    "--deep-iteration".to_owned(),
                    dir.display().to_string(),
                ])
            })
            .collect(),
    );

    println!(
        "dump --offset N (deep, library), median of {runs}:  {:>9.3} ms  {:>8.1} KiB of .log read (at most {:.1} KiB), {:.0} index pages",
        seek * 1e3,
        bytes / 1024.0,
        most / 1024.0,
        median(seek_pages)
    );
    println!(
        "kseg dump --offset N --deep-iteration, median of {runs}:  {:>9.3} ms  (kseg --version: {:.3} ms; the seek {:.3} ms above it)",
        cli * 1e3,
        floor * 1e3,
        (cli - floor) * 1e3
    );
    println!(
        "dump of the whole partition, median of 3:  {:>9.3} ms  {:>8.1} MiB of .log read",
        full * 1e3,
        full_bytes as f64 / (1 << 20) as f64
    );
    println!(
        "ratios: {:.0}x less time, {:.0}x fewer bytes (targets: under 1 ms and 64 KiB a seek)",
        full / seek,
        full_bytes as f64 / bytes
    );
}
