//! Write-side throughput, printed as figures (run: `cargo bench --bench write`).
//!
//! For uncompressed and lz4 data of `KSEG_BENCH_WRITE_MIB` MiB of record payload each (default
//! 256; keys 12 bytes, values 150 bytes of generated text, 100 records per batch, one batch per
//! append, Kafka's default topic config), measures in one run on the same file system
//! (`KSEG_BENCH_DIR`, default the temp dir):
//! - a plain file write of the uncompressed log's size in 1 MiB chunks, before and after the
//!   other runs (the faster of the two is the baseline);
//! - `kseg write SPEC.json` end to end: generating the records, encoding the batches,
//!   appending through the engine (indexes, producer state, epochs), closing cleanly;
//! - the engine alone: one prebuilt batch appended again and again (its base offset patched,
//!   which the CRC does not cover).
//!
//! Rates are MiB/s of record payload (keys and values before compression), records/s and
//! MiB/s of `.log` bytes; ratios are payload rates against the plain write of the same run.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
use kseg::format::Compression;
use kseg::ops::write::spec::{generate, write_spec, GenKind, Spec};
use kseg::storage::{CloseMode, Log, LogConfig};

mod common;
use common::{report, timed};

const RECORDS_PER_BATCH: u64 = common::RECORDS_PER_BATCH as u64;
const KEY_LEN: u64 = 12;
const VALUE_LEN: u64 = common::VALUE_BYTES as u64;

fn log_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| p.metadata().unwrap().len())
        .sum()
}

fn plain_write(path: &Path, bytes: u64) -> f64 {
    let chunk = vec![b'x'; 1 << 20];
    timed(|| {
        let mut f = File::create(path).unwrap();
        let mut left = bytes;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            f.write_all(&chunk[..n]).unwrap();
            left -= n as u64;
        }
    })
    .1
}

struct Run {
    label: String,
    log_bytes: u64,
    payload: u64,
    records: u64,
    secs: f64,
}

fn spec_run(root: &Path, codec: &str, batches: u64) -> Run {
    let spec = Spec::from_json(
        &serde_json::json!({
            "topic": "bench", "partition": 0,
            "ops": [{"op": "repeat", "times": batches, "ops": [{"op": "append", "batches": [{
                "compression": codec,
                "gen": {"count": RECORDS_PER_BATCH, "key_len": KEY_LEN, "value_len": VALUE_LEN, "seed": 7}
            }]}]}]
        })
        .to_string(),
    )
    .unwrap();
    let dir = root.join(format!("spec-{codec}/bench-0"));
    let secs = timed(|| write_spec(&spec, &dir).unwrap()).1;
    let run = Run {
        label: format!("kseg write, {codec}:"),
        log_bytes: log_bytes(&dir),
        payload: batches * RECORDS_PER_BATCH * (KEY_LEN + VALUE_LEN),
        records: batches * RECORDS_PER_BATCH,
        secs,
    };
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    run
}

/// A batch of the shape every run writes: keys and values of generated text, offset and
/// timestamp deltas 0..100.
fn sample_batch(codec: Compression) -> Vec<u8> {
    let records: Vec<RecordSpec> = (0..RECORDS_PER_BATCH as i64)
        .map(|i| RecordSpec {
            offset: i,
            timestamp: 1_700_000_000_000 + i,
            key: Some(generate(2 * i, KEY_LEN as usize, GenKind::Text)),
            value: Some(generate(2 * i + 1, VALUE_LEN as usize, GenKind::Text)),
            headers: Vec::new(),
        })
        .collect();
    let spec = BatchSpec {
        compression: codec,
        ..BatchSpec::default()
    };
    build_batch(&spec, &records).unwrap()
}

fn engine_run(root: &Path, codec: Compression, batches: u64) -> Run {
    let mut batch = sample_batch(codec);
    let dir = root.join(format!("engine-{}/bench-0", codec.name()));
    let secs = timed(|| {
        let mut log =
            Log::create(&dir, LogConfig::default(), 0, [1; 16], 1_730_000_000_000).unwrap();
        for b in 0..batches {
            batch[..8].copy_from_slice(&((b * RECORDS_PER_BATCH) as i64).to_be_bytes());
            log.append_as_follower(&batch).unwrap();
        }
        log.close(CloseMode::Clean).unwrap();
    })
    .1;
    let run = Run {
        label: format!("engine only, {}:", codec.name()),
        log_bytes: log_bytes(&dir),
        payload: batches * RECORDS_PER_BATCH * (KEY_LEN + VALUE_LEN),
        records: batches * RECORDS_PER_BATCH,
        secs,
    };
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    run
}

fn main() {
    let mib: u64 = std::env::var("KSEG_BENCH_WRITE_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let root = std::env::var_os("KSEG_BENCH_DIR").map_or_else(std::env::temp_dir, Into::into);
    let tmp = tempfile::tempdir_in(root).unwrap();
    let batches = (mib << 20).div_ceil(RECORDS_PER_BATCH * (KEY_LEN + VALUE_LEN));
    println!(
        "write throughput: {mib} MiB of record payload per run ({} records of {KEY_LEN}+{VALUE_LEN} bytes, {RECORDS_PER_BATCH} per batch), in {}",
        batches * RECORDS_PER_BATCH,
        tmp.path().display()
    );

    // Every uncompressed batch of these runs has the same size, so the baseline can write
    // exactly as many bytes as the uncompressed log will hold, before the runs and after them
    // (the page cache and disk writeback make either order favour one side; the faster of the
    // two is the baseline).
    let plain_bytes = batches * sample_batch(Compression::None).len() as u64;
    let plain = tmp.path().join("plain");
    let before = plain_write(&plain, plain_bytes);
    std::fs::remove_file(&plain).unwrap();
    let runs = [
        spec_run(tmp.path(), "none", batches),
        spec_run(tmp.path(), "lz4", batches),
        engine_run(tmp.path(), Compression::None, batches),
        engine_run(tmp.path(), Compression::Lz4, batches),
    ];
    assert_eq!(runs[0].log_bytes, plain_bytes);
    let after = plain_write(&plain, plain_bytes);
    let plain_rate = plain_bytes as f64 / before.min(after);
    println!("(MiB/s of record payload: keys and values before compression)");
    for (when, secs) in [("before", before), ("after", after)] {
        report(
            &format!("plain file write, {when} the runs"),
            plain_bytes,
            secs,
            None,
        );
    }
    for r in &runs {
        report(
            &format!(
                "{} {:.2} M rec/s, .log {:.0} MiB/s",
                r.label,
                r.records as f64 / r.secs / 1e6,
                r.log_bytes as f64 / r.secs / (1 << 20) as f64
            ),
            r.payload,
            r.secs,
            Some((plain_rate, "plain write")),
        );
    }
}
