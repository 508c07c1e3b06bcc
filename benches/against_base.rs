//! Issue 16's speed figures, each with its baseline from the same run (run:
//! `cargo bench --bench against_base`).
//!
//! Baselines are of two kinds: the release binary of an earlier kseg (`KSEG_BASE_BIN`, default
//! `/tmp/kseg-base/kseg`, built from main before this work) running the same command on the
//! same files — for `dump --deep-iteration --print-data-log`, `compact --out` and `write` —
//! and bare passes over the same bytes for `verify --deep`: read + CRC32C of the `.log` files
//! (uncompressed), and decompressing the same batches alone (lz4, zstd). Each figure is the
//! median of `KSEG_BENCH_RUNS` (default 3) runs, base and new interleaved, warm page cache,
//! with wall and CPU time (`getrusage`: what to read on a loaded machine) and the load average
//! before each figure. `KSEG_BENCH_ONLY` (comma-separated: `dump`, `verify`, `compact`,
//! `write`, `deep`) runs only some of the figures; `KSEG_BENCH_DEEP_MIB` (default 64) sizes
//! each partition of the `verify --deep` against bare-pass figures; with `KSEG_BENCH_KEEP` set
//! the generated partitions are kept (for a profiler) in the directory it prints.
//!
//! The perf partition (`KSEG_BENCH_PERF_MIB`, default 257 MiB of record payload, 64 MiB
//! segments) alternates uncompressed and lz4 v2 batches of 100 records; a quarter of the values
//! are random bytes (no `ED` byte, so that the old decoder's and Java's replacements agree and
//! both dumps must be byte-identical, which the bench checks), the rest generated text.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kseg::format::batch::{build_batch, BatchSpec, RecordSpec, RECORD_BATCH_OVERHEAD_BYTES};
use kseg::format::codec::{decompress, DEFAULT_MAX_DECOMPRESSED_BYTES};
use kseg::format::Compression;
use kseg::storage::{CloseMode, Log, LogConfig};

mod common;
use common::{
    cpu_seconds, files, load_average, median, timed, value, verify, write_partition,
    xorshift_bytes, RECORDS_PER_BATCH, VALUE_BYTES,
};

/// Random bytes without `ED` (the lead of a surrogate, which Java and Rust replace differently).
fn binary_value(i: u64, len: usize) -> Vec<u8> {
    xorshift_bytes(i.wrapping_mul(0xBF58_476D_1CE4_E5B9), len, |x| {
        match (x >> 56) as u8 {
            0xed => 0xee,
            b => b,
        }
    })
}

fn write_perf_partition(dir: &Path, target_bytes: u64) {
    let config = LogConfig {
        segment_bytes: 64 << 20,
        ..LogConfig::default()
    };
    let mut log = Log::create(dir, config, 0, *b"kseg-bench-topic", 1_700_000_000_000).unwrap();
    let (mut offset, mut written, mut n) = (0i64, 0u64, 0u64);
    while written < target_bytes {
        let records: Vec<RecordSpec> = (0..RECORDS_PER_BATCH)
            .map(|i| {
                let o = offset + i;
                let v = if o % 4 == 0 {
                    binary_value(o as u64, VALUE_BYTES)
                } else {
                    value(o as u64, VALUE_BYTES)
                };
                RecordSpec {
                    offset: o,
                    timestamp: 1_700_000_000_000 + o,
                    key: Some(format!("key-{}", o % 1000).into_bytes()),
                    value: Some(v),
                    headers: vec![],
                }
            })
            .collect();
        let spec = BatchSpec {
            base_offset: offset,
            compression: [Compression::None, Compression::Lz4][(n % 2) as usize],
            ..Default::default()
        };
        log.append_as_follower(&build_batch(&spec, &records).unwrap())
            .unwrap();
        written += common::batch_payload_bytes();
        offset += RECORDS_PER_BATCH;
        n += 1;
    }
    log.close(CloseMode::Clean).unwrap();
}

fn runs() -> usize {
    std::env::var("KSEG_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
}

/// Whether the figure `name` is to run (`KSEG_BENCH_ONLY`, all when unset).
fn wanted(name: &str) -> bool {
    std::env::var("KSEG_BENCH_ONLY")
        .ok()
        .is_none_or(|only| only.split(',').any(|o| o.trim() == name))
}

/// Wall and CPU seconds of `f`, CPU counted for `who`.
fn timed_cpu(who: libc::c_int, f: impl FnOnce()) -> (f64, f64) {
    let cpu = cpu_seconds(who);
    let ((), wall) = timed(f);
    (wall, cpu_seconds(who) - cpu)
}

/// Runs `exe args` with stdout to /dev/null (it must exit with 0): wall and CPU seconds.
fn run(exe: &Path, args: &[&str]) -> (f64, f64) {
    timed_cpu(libc::RUSAGE_CHILDREN, || {
        let status = Command::new(exe)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "{} {args:?}: {status}", exe.display());
    })
}

/// A digest of what `exe args` prints.
fn output_digest(exe: &Path, args: &[&str]) -> (u128, u64) {
    let mut child = Command::new(exe)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let (mut buf, mut total) = (vec![0u8; 1 << 20], 0u64);
    loop {
        let n = out.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        total += n as u64;
    }
    assert!(child.wait().unwrap().success());
    (h.digest128(), total)
}

/// Median wall and CPU seconds of runs.
fn medians(runs: &[(f64, f64)]) -> (f64, f64) {
    (
        median(runs.iter().map(|r| r.0).collect()),
        median(runs.iter().map(|r| r.1).collect()),
    )
}

/// Medians of `base` and `new` runs, interleaved; `prepare` runs before each (untimed).
fn versus(
    label: &str,
    base: Option<&Path>,
    new: &Path,
    args: &dyn Fn() -> Vec<String>,
    prepare: &dyn Fn(),
) {
    let (mut b, mut n) = (Vec::new(), Vec::new());
    for _ in 0..runs() {
        let a = args();
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        if let Some(base) = base {
            prepare();
            b.push(run(base, &a));
        }
        prepare();
        n.push(run(new, &a));
    }
    let (nw, nc) = medians(&n);
    println!("{label} (load average {})", load_average());
    match base {
        Some(_) => {
            let (bw, bc) = medians(&b);
            println!(
                "    wall {nw:.3} s (base {bw:.3} s): {:.2}x faster; CPU {nc:.3} s (base {bc:.3} s): {:.2}x faster",
                bw / nw,
                bc / nc
            )
        }
        None => println!("    wall {nw:.3} s, CPU {nc:.3} s (no base binary: no ratio)"),
    }
}

/// Reads every `.log` file below `dir` and decompresses each v2 batch's records alone.
fn decompress_only(dir: &Path) {
    let mut scratch = Vec::new();
    for p in files(dir)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
    {
        let bytes = std::fs::read(p).unwrap();
        let mut at = 0;
        while at + RECORD_BATCH_OVERHEAD_BYTES <= bytes.len() {
            let len = i32::from_be_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
            let batch = &bytes[at..at + 12 + len];
            let codec = Compression::from_id((batch[22] & 7) as u8).unwrap();
            decompress(
                codec,
                2,
                &batch[RECORD_BATCH_OVERHEAD_BYTES..],
                DEFAULT_MAX_DECOMPRESSED_BYTES,
                &mut scratch,
            )
            .unwrap();
            at += 12 + len;
        }
    }
}

/// Reads every `.log` file below `dir` through a 1 MiB buffer with CRC32C over it.
fn read_crc(dir: &Path) {
    let mut buf = vec![0u8; 1 << 20];
    for p in files(dir)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
    {
        let mut f = File::open(p).unwrap();
        let mut crc = 0;
        loop {
            let n = f.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            crc = crc32c::crc32c_append(crc, &buf[..n]);
        }
        std::hint::black_box(crc);
    }
}

/// `verify --deep` (one core) against a bare pass (one core), medians of runs.
fn verify_vs(label: &str, dir: &Path, bare: &dyn Fn(&Path), bare_name: &str) {
    let (mut b, mut v) = (Vec::new(), Vec::new());
    for _ in 0..runs() {
        b.push(timed_cpu(libc::RUSAGE_SELF, || bare(dir)));
        v.push(timed_cpu(libc::RUSAGE_SELF, || verify(dir, true, Some(1))));
    }
    let ((bw, bc), (vw, vc)) = (medians(&b), medians(&v));
    println!("{label} (load average {})", load_average());
    println!(
        "    wall {vw:.3} s ({bare_name} {bw:.3} s): {:.2}x its time; CPU {vc:.3} s ({bc:.3} s): {:.2}x",
        vw / bw,
        vc / bc
    );
}

fn main() {
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let mib = env("KSEG_BENCH_PERF_MIB", 257);
    let deep_mib = env("KSEG_BENCH_DEEP_MIB", 64);
    let base = PathBuf::from(
        std::env::var("KSEG_BASE_BIN").unwrap_or_else(|_| "/tmp/kseg-base/kseg".to_owned()),
    );
    let base = base.exists().then_some(base.as_path());
    if base.is_none() {
        println!("no base binary (KSEG_BASE_BIN): the figures against it are left out");
    }
    let new = Path::new(env!("CARGO_BIN_EXE_kseg"));
    let tmp = tempfile::tempdir().unwrap();
    // `KSEG_BENCH_KEEP`: the partitions stay (under the printed directory), for profiling.
    let keep = std::env::var_os("KSEG_BENCH_KEEP").is_some();
    let root = &if keep {
        tmp.keep()
    } else {
        tmp.path().to_path_buf()
    };
    if keep {
        println!("partitions kept in {}", root.display());
    }

    if ["dump", "verify", "compact"].iter().any(|f| wanted(f)) {
        let perf = root.join("perf").join("bench-0");
        let secs = timed(|| write_perf_partition(&perf, mib << 20)).1;
        let size: u64 = files(&perf)
            .iter()
            .map(|p| p.metadata().unwrap().len())
            .sum();
        println!(
            "perf partition: {} MiB on disk (none and lz4 batches alternating), written in {secs:.1} s; medians of {} runs",
            size >> 20,
            runs()
        );
        let _ = files(&perf).iter().map(std::fs::read).count();
        perf_figures(base, new, root, &perf);
        if !keep {
            std::fs::remove_dir_all(root.join("perf")).unwrap();
        }
    }
    if wanted("write") {
        write_figure(base, new, root, mib);
    }
    if wanted("deep") {
        // verify --deep against the bare passes, one codec per partition.
        for codec in [Compression::None, Compression::Lz4, Compression::Zstd] {
            let dir = root.join(codec.name()).join("bench-0");
            write_partition(&dir, codec, deep_mib << 20);
            let _ = files(&dir).iter().map(std::fs::read).count();
            let label = format!(
                "verify --deep, {}, 1 core, {deep_mib} MiB of records",
                codec.name()
            );
            if codec == Compression::None {
                verify_vs(&label, &dir, &read_crc, "read + CRC32C");
            } else {
                verify_vs(&label, &dir, &decompress_only, "decompress alone");
            }
            if !keep {
                std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
            }
        }
    }
}

/// `dump`, `verify --deep` and `compact --out` of the perf partition, against the base binary.
fn perf_figures(base: Option<&Path>, new: &Path, root: &Path, perf: &Path) {
    let dump = || {
        vec![
            "dump".into(),
            "--deep-iteration".into(),
            "--print-data-log".into(),
            perf.display().to_string(),
        ]
    };
    if wanted("dump") {
        if let Some(base) = base {
            let a = dump();
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let (db, nb) = output_digest(base, &a);
            let (dn, nn) = output_digest(new, &a);
            assert_eq!(
                (db, nb),
                (dn, nn),
                "dump text differs from the base binary's"
            );
            println!(
                "dump text: {} MiB, byte-identical to the base binary's",
                nn >> 20
            );
        }
        versus(
            "dump --deep-iteration --print-data-log > /dev/null",
            base,
            new,
            &dump,
            &|| {},
        );
    }
    if wanted("verify") {
        versus(
            "verify --deep (CLI, perf partition)",
            base,
            new,
            &|| vec!["verify".into(), "--deep".into(), perf.display().to_string()],
            &|| {},
        );
    }
    if wanted("compact") {
        let out = root.join("compacted");
        versus(
            "compact --out (one cleaning round, perf partition)",
            base,
            new,
            &|| {
                vec![
                    "compact".into(),
                    "--now".into(),
                    "1800000000000".into(),
                    "--out".into(),
                    out.display().to_string(),
                    perf.display().to_string(),
                ]
            },
            &|| {
                let _ = std::fs::remove_dir_all(&out);
            },
        );
    }
}

/// `write` of a spec of generated lz4 batches, against the base binary.
fn write_figure(base: Option<&Path>, new: &Path, root: &Path, mib: u64) {
    let spec = root.join("SPEC.json");
    let batches = (mib << 20) / common::batch_payload_bytes();
    std::fs::write(
        &spec,
        serde_json::json!({
            "topic": "bench", "partition": 0,
            "ops": [{"op": "repeat", "times": batches, "ops": [{"op": "append", "batches": [{
                "compression": "lz4",
                "gen": {"count": RECORDS_PER_BATCH, "key_len": 12, "value_len": VALUE_BYTES, "seed": 7}
            }]}]}]
        })
        .to_string(),
    )
    .unwrap();
    let written = root.join("written").join("bench-0");
    versus(
        &format!("write SPEC.json ({batches} generated lz4 batches)"),
        base,
        new,
        &|| {
            vec![
                "write".into(),
                spec.display().to_string(),
                written.display().to_string(),
            ]
        },
        &|| {
            let _ = std::fs::remove_dir_all(written.parent().unwrap());
        },
    );
    let _ = std::fs::remove_dir_all(written.parent().unwrap());
}
