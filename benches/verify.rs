//! `verify` speed on a generated log dir (run: `cargo bench --bench verify`).
//!
//! Writes, through the engine, a log dir of `KSEG_BENCH_VERIFY_MIB` MiB (default 2048) spread
//! over 8 partitions of uncompressed batches of an idempotent producer, plus one small partition per codec. Prints, in one
//! run on the same warm page cache: plain read bandwidth, a bare read + CRC32C pass (one core and
//! all cores), `verify` and `verify --deep` on 1 core and on all cores, and `verify --deep` per
//! codec — each with its ratio to the bare read + CRC32C pass on all cores. The bare passes and
//! shallow `verify` (the pair the 1.5x target compares) are the best of three runs each.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use kseg::format::Compression;
use kseg::ops::check::verify::{verify_paths, VerifyOptions};
use kseg::storage::{CloseMode, Log, LogConfig};
use rayon::prelude::*;

mod common;
use common::{best_of, files, report, timed, verify, write_partition, RECORDS_PER_BATCH};

const PARTITIONS: u64 = 8;
const RUNS: usize = 3;

fn read_crc(path: &Path) -> u32 {
    let mut f = File::open(path).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut crc = 0;
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            return crc;
        }
        crc = crc32c::crc32c_append(crc, &buf[..n]);
    }
}

/// CPU seconds (user + system) this process has used so far.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// A running broker's log dir: `partitions` partitions whose active segment holds a few
/// batches beside the 10 MiB sparse indexes the broker preallocates (real log dirs hold them by
/// the hundred). `verify` reads what the checks need, not the holes: its CPU time is printed
/// next to reading every file whole, the cost it would have if it read the zeros.
fn preallocated_log_dir(root: &Path, partitions: u64) {
    let dir = root.join("running");
    (0..partitions).into_par_iter().for_each(|p| {
        let mut log = Log::create(
            &dir.join(format!("t-{p}")),
            LogConfig::default(),
            0,
            *b"kseg-bench-topic",
            1_700_000_000_000,
        )
        .unwrap();
        for i in 0..4 {
            log.append_as_follower(&common::batch(i * RECORDS_PER_BATCH, Compression::None))
                .unwrap();
        }
        log.close(CloseMode::Crash).unwrap();
    });
    let all = files(&dir);
    let apparent: u64 = all.iter().map(|f| f.metadata().unwrap().len()).sum();
    println!(
        "running broker's log dir: {partitions} partitions, {} files, {} MiB apparent size",
        all.len(),
        apparent >> 20
    );
    let (_, whole) = timed(|| {
        let mut buf = vec![0u8; 1 << 20];
        for f in &all {
            let mut file = File::open(f).unwrap();
            while file.read(&mut buf).unwrap() > 0 {}
        }
    });
    let mut cpu = Vec::new();
    let mut wall = Vec::new();
    for _ in 0..RUNS {
        let before = cpu_seconds();
        let (r, secs) = timed(|| {
            verify_paths(
                std::slice::from_ref(&dir),
                &VerifyOptions {
                    deep: true,
                    ..Default::default()
                },
                &|_| {},
            )
            .unwrap()
        });
        cpu.push(cpu_seconds() - before);
        wall.push(secs);
        assert_eq!(r.count(kseg::ops::Severity::Error), 0);
    }
    cpu.sort_by(f64::total_cmp);
    wall.sort_by(f64::total_cmp);
    println!(
        "{:<52} {:>9.3} s wall, {:.3} s CPU (median of {RUNS}); reading every file whole: {whole:.3} s ({:.1}x)",
        "verify --deep of it",
        wall[RUNS / 2],
        cpu[RUNS / 2],
        whole / wall[RUNS / 2]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn main() {
    let mib: u64 = std::env::var("KSEG_BENCH_VERIFY_MIB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2048);
    let tmp = tempfile::tempdir().unwrap();
    preallocated_log_dir(tmp.path(), 300);
    let log_dir = tmp.path().join("data");
    let (_, secs) = timed(|| {
        (0..PARTITIONS).into_par_iter().for_each(|p| {
            write_partition(
                &log_dir.join(format!("bench-{p}")),
                Compression::None,
                (mib << 20) / PARTITIONS,
            )
        })
    });
    let all = files(&log_dir);
    let size: u64 = all.iter().map(|f| f.metadata().unwrap().len()).sum();
    let cores = rayon::current_num_threads();
    println!("log dir: {} MiB in {} files, {PARTITIONS} partitions, written in {secs:.1} s; {cores} core(s)", size >> 20, all.len());
    all.par_iter().for_each(|f| {
        read_crc(f);
    }); // warm the page cache

    let (_, secs) = timed(|| {
        let mut buf = vec![0u8; 1 << 20];
        for f in &all {
            let mut file = File::open(f).unwrap();
            while file.read(&mut buf).unwrap() > 0 {}
        }
    });
    report("plain read, 1 core", size, secs, None);
    // The passes compared with the 1.5x target: best of RUNS each.
    let secs = best_of(RUNS, || {
        all.iter().map(|f| read_crc(f)).fold(0, u32::wrapping_add);
    });
    report("bare read + CRC32C, 1 core", size, secs, None);
    let secs = best_of(RUNS, || {
        all.par_iter()
            .map(|f| read_crc(f))
            .reduce(|| 0, u32::wrapping_add);
    });
    let base = report("bare read + CRC32C, all cores", size, secs, None);
    let against = Some((base, "bare read+CRC, all cores"));

    let secs = best_of(RUNS, || verify(&log_dir, false, Some(1)));
    let one = report("verify, 1 core", size, secs, against);
    let secs = best_of(RUNS, || verify(&log_dir, false, None));
    let many = report("verify, all cores", size, secs, against);
    println!(
        "{:<52} {:>9.2}x",
        "verify speed-up, 1 core -> all cores",
        many / one
    );
    let (_, secs) = timed(|| verify(&log_dir, true, Some(1)));
    let one = report("verify --deep, none, 1 core", size, secs, against);
    let (_, secs) = timed(|| verify(&log_dir, true, None));
    let many = report("verify --deep, none, all cores", size, secs, against);
    println!(
        "{:<52} {:>9.2}x",
        "verify --deep speed-up, 1 core -> all cores",
        many / one
    );
    std::fs::remove_dir_all(&log_dir).unwrap();

    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let dir = tmp.path().join(codec.name()).join("bench-0");
        let payload = (mib << 20) / 8;
        write_partition(&dir, codec, payload);
        let on_disk: u64 = files(&dir)
            .iter()
            .map(|f| f.metadata().unwrap().len())
            .sum();
        let (_, secs) = timed(|| verify(&dir, true, None));
        let label = format!(
            "verify --deep, {} ({} MiB on disk), all cores",
            codec.name(),
            on_disk >> 20
        );
        report(&label, payload, secs, against);
    }
}
