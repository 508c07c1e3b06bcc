//! `compact` throughput (run: `cargo bench --bench compact`).
//!
//! Writes, through the engine, one partition of `KSEG_BENCH_COMPACT_MIB` MiB (default 1024) of
//! uncompressed batches over 128 MiB segments, with a realistic key space (100,000 keys, hashed
//! order, 1% tombstones, a few keyless records), then prints, on the same warm page cache: a
//! plain read + write copy of the partition's files, and one cleaning round (`compact --out`) —
//! MiB/s of source bytes, with the ratio to the copy.

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
use kseg::ops::simulate::compact::{compact_to, CompactOptions};
use kseg::storage::{CloseMode, Log, LogConfig};

mod common;
use common::{report, timed, value, RECORDS_PER_BATCH, VALUE_BYTES};

const KEYS: u64 = 100_000;
const NOW_MS: i64 = 1_700_000_000_000;

fn key_of(offset: i64) -> Option<Vec<u8>> {
    let h = (offset as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h % 997 != 0).then(|| format!("customer-{:08}", (h >> 20) % KEYS).into_bytes())
}

fn write_partition(dir: &Path, target_bytes: u64) {
    let config = LogConfig {
        segment_bytes: 128 << 20,
        ..LogConfig::default()
    };
    let mut log = Log::create(dir, config, 0, *b"kseg-bench-topic", NOW_MS).unwrap();
    let (mut offset, mut written) = (0i64, 0u64);
    while written < target_bytes {
        let records: Vec<RecordSpec> = (0..RECORDS_PER_BATCH)
            .map(|i| {
                let o = offset + i;
                let tombstone = (o as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9) % 100 == 0;
                RecordSpec {
                    offset: o,
                    timestamp: NOW_MS - 3_600_000 + o / 1000,
                    key: key_of(o),
                    value: (!tombstone).then(|| value(o as u64, VALUE_BYTES)),
                    headers: vec![],
                }
            })
            .collect();
        let spec = BatchSpec {
            base_offset: offset,
            ..Default::default()
        };
        let batch = build_batch(&spec, &records).unwrap();
        written += batch.len() as u64;
        log.append_as_follower(&batch).unwrap();
        offset += RECORDS_PER_BATCH;
    }
    log.close(CloseMode::Clean).unwrap();
}

/// Reads every file of `from` and writes it into `to` through a 1 MiB buffer.
fn copy_dir(from: &Path, to: &Path) -> u64 {
    std::fs::create_dir_all(to).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0;
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let mut src = File::open(&p).unwrap();
        let mut dst = File::create(to.join(p.file_name().unwrap())).unwrap();
        loop {
            let n = src.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            dst.write_all(&buf[..n]).unwrap();
            total += n as u64;
        }
        dst.sync_all().unwrap();
    }
    total
}

fn main() {
    let mib: u64 = std::env::var("KSEG_BENCH_COMPACT_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("in").join("bench-0");
    let ((), secs) = timed(|| write_partition(&src, mib << 20));
    let bytes: u64 = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    println!(
        "partition: {} MiB in {:.1} s; {KEYS} keys, 1% tombstones",
        bytes >> 20,
        secs
    );
    // Warm the page cache, then measure the copy.
    copy_dir(&src, &tmp.path().join("warm"));
    std::fs::remove_dir_all(tmp.path().join("warm")).unwrap();
    let (copied, secs) = timed(|| copy_dir(&src, &tmp.path().join("copy")));
    let copy_rate = report("plain read + write copy", copied, secs, None);
    let opts = CompactOptions {
        min_cleanable_dirty_ratio: 0.0,
        ..CompactOptions::new(NOW_MS)
    };
    let (r, secs) = timed(|| compact_to(&src, &tmp.path().join("out"), &opts).unwrap());
    report(
        "compact --out (one cleaning round)",
        bytes,
        secs,
        Some((copy_rate, "copy")),
    );
    println!(
        "  cleaned {} -> {} bytes in {} segment(s); {} keys; {} tombstones kept",
        r.total.bytes_before,
        r.total.bytes_after,
        r.segments.len(),
        r.keys_in_map,
        r.total.tombstones_kept
    );
}
