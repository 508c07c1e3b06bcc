//! Read-side throughput, printed as figures (run: `cargo bench --bench throughput`).
//!
//! Generates a segment of `KSEG_BENCH_MIB` MiB (default 1024) with kseg's own encoders, then
//! measures, in one run and on the same warm page cache: a plain read with a reused 1 MiB
//! buffer, a CRC32C pass over a memory map and over plain reads, `dump` shallow iteration (which checks
//! every CRC), `dump --deep-iteration` per codec, and `kseg dump --json --deep-iteration` to
//! /dev/null. Ratios are against the plain read of the same run.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::Path;

use kseg::format::Compression;
use kseg::ops::inspect::dump::{dump_paths, DumpOptions, Event, Sink};

mod common;
use common::{batch, batch_payload_bytes, report, timed, RECORDS_PER_BATCH};

struct Null(u64);

impl Sink for Null {
    fn event(&mut self, _: &Event<'_>) -> std::io::Result<()> {
        self.0 += 1;
        Ok(())
    }
}

fn generate(path: &Path, codec: Compression, target_bytes: u64) -> u64 {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path).unwrap());
    let (mut offset, mut written, mut uncompressed) = (0i64, 0u64, 0u64);
    while uncompressed < target_bytes {
        let b = batch(offset, codec);
        out.write_all(&b).unwrap();
        written += b.len() as u64;
        uncompressed += batch_payload_bytes();
        offset += RECORDS_PER_BATCH;
    }
    out.flush().unwrap();
    written
}

fn dump(path: &Path, deep: bool) -> u64 {
    let opts = DumpOptions {
        deep,
        ..Default::default()
    };
    let mut sink = Null(0);
    let outcome = dump_paths(&[path.to_path_buf()], &opts, &mut sink).unwrap();
    assert_eq!(outcome.damage, 0);
    sink.0
}

fn main() {
    let mib: u64 = std::env::var("KSEG_BENCH_MIB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1024);
    let dir = tempfile::tempdir().unwrap();
    let seg = dir.path().join("00000000000000000000.log");
    let (size, gen_secs) = timed(|| generate(&seg, Compression::None, mib << 20));
    println!("segment: {} MiB of uncompressed v2 batches ({RECORDS_PER_BATCH} records x 170 B), generated in {gen_secs:.1} s", size >> 20);

    // Warm the page cache so every figure below reads from memory.
    let _ = std::fs::read(&seg).map(|v| v.len());

    let (_, secs) = timed(|| {
        let mut f = File::open(&seg).unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let mut sum = 0u64;
        loop {
            let n = f.read(&mut buf).unwrap();
            if n == 0 {
                break sum;
            }
            sum = sum.wrapping_add(buf[n - 1] as u64);
        }
    });
    let plain = report("plain read, reused 1 MiB buffer", size, secs, None);

    let (_, secs) = timed(|| {
        let f = File::open(&seg).unwrap();
        let map = unsafe { memmap2::Mmap::map(&f).unwrap() };
        map.chunks(1 << 20).fold(0u32, crc32c::crc32c_append)
    });
    report(
        "mmap + CRC32C (the alternative to reads)",
        size,
        secs,
        Some((plain, "plain read")),
    );

    let (_, secs) = timed(|| {
        let mut f = File::open(&seg).unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let mut crc = 0u32;
        loop {
            let n = f.read(&mut buf).unwrap();
            if n == 0 {
                break crc;
            }
            crc = crc32c::crc32c_append(crc, &buf[..n]);
        }
    });
    report(
        "bare CRC32C pass (read + crc32c)",
        size,
        secs,
        Some((plain, "plain read")),
    );

    let (_, secs) = timed(|| dump(&seg, false));
    report(
        "dump, shallow, every CRC checked",
        size,
        secs,
        Some((plain, "plain read")),
    );

    let (_, secs) = timed(|| dump(&seg, true));
    report(
        "dump --deep-iteration, none",
        size,
        secs,
        Some((plain, "plain read")),
    );

    let exe = env!("CARGO_BIN_EXE_kseg");
    let (status, secs) = timed(|| {
        std::process::Command::new(exe)
            .args(["dump", "--json", "--deep-iteration"])
            .arg(&seg)
            .stdout(File::create("/dev/null").unwrap())
            .status()
            .unwrap()
    });
    assert!(status.success());
    report(
        "kseg dump --json --deep-iteration > /dev/null",
        size,
        secs,
        Some((plain, "plain read")),
    );
    std::fs::remove_file(&seg).unwrap();

    // Compressed segments: a quarter of the size each (in uncompressed bytes), rates counted
    // over the bytes on disk and over the records' uncompressed bytes.
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        // A segment needs its base offset as name, or dump ignores it.
        let codec_dir = dir.path().join(codec.name());
        std::fs::create_dir(&codec_dir).unwrap();
        let p = codec_dir.join("00000000000000000000.log");
        let target = (mib << 20) / 4;
        let on_disk = generate(&p, codec, target);
        let _ = std::fs::read(&p).map(|v| v.len());
        let (_, secs) = timed(|| dump(&p, true));
        let label = format!(
            "dump --deep-iteration, {} ({} MiB on disk)",
            codec.name(),
            on_disk >> 20
        );
        report(&label, target, secs, Some((plain, "plain read")));
        std::fs::remove_file(&p).unwrap();
    }
}
