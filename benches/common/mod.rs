//! Data generation and reporting shared by the benchmarks.
#![allow(dead_code)] // each bench uses a subset

use std::path::{Path, PathBuf};
use std::time::Instant;

use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
use kseg::format::Compression;
use kseg::storage::{CloseMode, Log, LogConfig};

pub const RECORDS_PER_BATCH: i64 = 100;
pub const VALUE_BYTES: usize = 150;

/// Deterministic text-ish values so that codecs have realistic work.
pub fn value(i: u64, len: usize) -> Vec<u8> {
    xorshift_bytes(i.wrapping_mul(0x9E37_79B9_7F4A_7C15), len, |x| {
        b"abcdefghijklmnopqrstuvwxyz      "[(x >> 59) as usize]
    })
}

/// `len` bytes, each `pick` of the next state of a xorshift64 stream from `seed`.
pub fn xorshift_bytes(seed: u64, len: usize, pick: impl Fn(u64) -> u8) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            pick(x)
        })
        .collect()
}

/// One batch of `RECORDS_PER_BATCH` records starting at `offset`.
pub fn batch(offset: i64, codec: Compression) -> Vec<u8> {
    batch_with(BatchSpec {
        base_offset: offset,
        compression: codec,
        ..Default::default()
    })
}

/// One batch of `RECORDS_PER_BATCH` records starting at `spec.base_offset`, with the header
/// fields of `spec`.
pub fn batch_with(spec: BatchSpec) -> Vec<u8> {
    let records: Vec<RecordSpec> = (0..RECORDS_PER_BATCH)
        .map(|i| {
            let o = spec.base_offset + i;
            RecordSpec {
                offset: o,
                timestamp: 1_700_000_000_000 + o,
                key: Some(format!("key-{}", o % 1000).into_bytes()),
                value: Some(value(o as u64, VALUE_BYTES)),
                headers: vec![],
            }
        })
        .collect();
    build_batch(&spec, &records).unwrap()
}

/// Uncompressed bytes of one batch's records (what a codec's throughput is counted over).
pub fn batch_payload_bytes() -> u64 {
    RECORDS_PER_BATCH as u64 * (VALUE_BYTES as u64 + 20) + 61
}

pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let r = f();
    (r, t.elapsed().as_secs_f64())
}

/// The fastest of `runs` runs of `f`, in seconds: the figure least disturbed by whatever
/// else the machine does, for passes that are compared with each other.
pub fn best_of(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| timed(&mut f).1)
        .fold(f64::INFINITY, f64::min)
}

/// Prints one figure and returns the rate; `baseline` adds the ratio to it.
pub fn report(label: &str, bytes: u64, secs: f64, baseline: Option<(f64, &str)>) -> f64 {
    let rate = bytes as f64 / secs;
    let ratio = baseline
        .map(|(b, name)| format!("  ({:.2}x {name})", rate / b))
        .unwrap_or_default();
    println!(
        "{label:<52} {:>9.1} MiB/s  {:>8.3} s{ratio}",
        rate / (1 << 20) as f64,
        secs
    );
    rate
}

/// A partition of `target_bytes` of record payload: batches of an idempotent producer, in
/// 128 MiB segments, closed cleanly.
pub fn write_partition(dir: &Path, codec: Compression, target_bytes: u64) {
    let config = LogConfig {
        segment_bytes: 128 << 20,
        ..LogConfig::default()
    };
    let mut log = Log::create(dir, config, 0, *b"kseg-bench-topic", 1_700_000_000_000).unwrap();
    let (mut offset, mut written) = (0i64, 0u64);
    while written < target_bytes {
        // An idempotent producer, as Kafka clients are by default: every batch goes through
        // the producer-state replay.
        let spec = BatchSpec {
            base_offset: offset,
            compression: codec,
            producer_id: 4242,
            producer_epoch: 0,
            base_sequence: offset as i32,
            ..Default::default()
        };
        log.append_as_follower(&batch_with(spec)).unwrap();
        written += batch_payload_bytes();
        offset += RECORDS_PER_BATCH;
    }
    log.close(CloseMode::Clean).unwrap();
}

/// Every file below `dir`.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `verify` (with `deep`) of `dir` on `threads` cores (all when None); it must find nothing.
pub fn verify(dir: &Path, deep: bool, threads: Option<usize>) {
    let run = || {
        let r = kseg::ops::check::verify::verify_paths(
            &[dir.to_path_buf()],
            &kseg::ops::check::verify::VerifyOptions {
                deep,
                ..Default::default()
            },
            &|_| {},
        )
        .unwrap();
        assert_eq!(r.findings().count(), 0);
    };
    match threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
            .install(run),
        None => run(),
    }
}

/// The median of `v` (the upper one of an even count).
/// The number in the environment variable `name`, or `default`.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// CPU seconds (user + system) of this process (`RUSAGE_SELF`) or of its waited-for children.
pub fn cpu_seconds(who: libc::c_int) -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    s(u.ru_utime) + s(u.ru_stime)
}

/// The 1-minute load average, for reading a figure's noise.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

/// The binaries a bench compares: the baseline (`KSEG_BASE_BIN`, default
/// `/tmp/kseg-base/kseg`), when it is there, then this build's `kseg`.
pub fn binaries(this_build: PathBuf) -> Vec<(&'static str, PathBuf)> {
    let base_bin = PathBuf::from(
        std::env::var("KSEG_BASE_BIN").unwrap_or_else(|_| "/tmp/kseg-base/kseg".into()),
    );
    let mut bins = vec![("this build", this_build)];
    if base_bin.is_file() {
        bins.insert(0, ("baseline", base_bin));
    } else {
        println!("(no baseline binary at {}: skipped)", base_bin.display());
    }
    bins
}
