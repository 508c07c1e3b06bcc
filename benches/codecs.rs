//! Codec throughput, printed as figures (run: `cargo bench --bench codecs`).
//!
//! Compresses and decompresses `KSEG_BENCH_CODEC_MIB` MiB (default 64) of v2 record sets
//! (the bytes a batch compresses, 100 records of about 170 bytes) with kseg's codec layer, per
//! codec and level. For gzip, snappy and LZ4 the encoders kseg used before it wrote Kafka's
//! exact bytes (flate2 on zlib-rs, snap, lz4_flex) run in the same pass over the same inputs. Each figure is the
//! median of `KSEG_BENCH_RUNS` runs (default 5), in MiB/s of uncompressed bytes;
//! `KSEG_BENCH_CODECS` (names, comma-separated) limits the run to some codecs.

use kseg::format::codec::{self, Compression, DEFAULT_MAX_DECOMPRESSED_BYTES, LZ4_BLOCK_BYTES};

mod common;
use common::{batch, timed, RECORDS_PER_BATCH};

/// Distinct record sets: enough that a codec's state cannot learn one input by heart.
const DISTINCT_INPUTS: usize = 256;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Median rate in MiB/s of `runs` runs of `f` over `bytes` bytes.
fn median_rate(runs: usize, bytes: usize, mut f: impl FnMut()) -> f64 {
    let mut rates: Vec<f64> = (0..runs)
        .map(|_| bytes as f64 / timed(&mut f).1 / (1 << 20) as f64)
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

fn row(label: &str, rate: f64, baseline: Option<f64>) {
    let ratio = baseline
        .map(|b| format!("  ({:.2}x the old encoder)", rate / b))
        .unwrap_or_default();
    println!("{label:<44} {rate:>9.1} MiB/s{ratio}");
}

/// The gzip encoder before: flate2's raw deflate on its zlib-rs backend (framing left out).
fn old_gzip(level: u32, input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(input.len() / 2 + 1024);
    let mut deflater = flate2::Compress::new(flate2::Compression::new(level), false);
    loop {
        let consumed = deflater.total_in() as usize;
        if out.len() == out.capacity() {
            out.reserve(64 * 1024);
        }
        let status = deflater
            .compress_vec(&input[consumed..], out, flate2::FlushCompress::Finish)
            .unwrap();
        if status == flate2::Status::StreamEnd {
            return;
        }
    }
}

/// The snappy block encoder before: `snap` per 32 KiB chunk (framing left out).
fn old_snappy(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut encoder = snap::raw::Encoder::new();
    for chunk in input.chunks(codec::SNAPPY_BLOCK_BYTES) {
        let at = out.len();
        out.resize(at + snap::raw::max_compress_len(chunk.len()), 0);
        let n = encoder.compress(chunk, &mut out[at..]).unwrap();
        out.truncate(at + n);
    }
}

/// The LZ4 encoder before: lz4_flex's block compressor per 64 KiB block (framing left out).
fn old_lz4(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    for block in input.chunks(LZ4_BLOCK_BYTES) {
        let at = out.len();
        out.resize(
            at + lz4_flex::block::get_maximum_output_size(block.len()),
            0,
        );
        let n = lz4_flex::block::compress_into(block, &mut out[at..]).unwrap();
        out.truncate(at + n);
    }
}

fn main() {
    let mib = env_or("KSEG_BENCH_CODEC_MIB", 64);
    let runs = env_or("KSEG_BENCH_RUNS", 5).max(1);
    let inputs: Vec<Vec<u8>> = (0..DISTINCT_INPUTS)
        .map(|i| batch(i as i64 * RECORDS_PER_BATCH, Compression::None)[61..].to_vec())
        .collect();
    let set_bytes: usize = inputs.iter().map(Vec::len).sum();
    let rounds = ((mib << 20) / set_bytes).max(1);
    let total = set_bytes * rounds;
    println!(
        "{} MiB: {DISTINCT_INPUTS} record sets of {} bytes, {rounds} rounds; median of {runs} runs",
        total >> 20,
        inputs[0].len()
    );
    let each = |f: &mut dyn FnMut(&[u8])| {
        for _ in 0..rounds {
            for input in &inputs {
                f(input);
            }
        }
    };
    let mut out = Vec::new();
    let mut back = Vec::new();
    let cases: [(Compression, Option<i32>); 7] = [
        (Compression::Gzip, None),
        (Compression::Gzip, Some(9)),
        (Compression::Snappy, None),
        (Compression::Lz4, None),
        (Compression::Lz4, Some(17)),
        (Compression::Zstd, None),
        (Compression::Zstd, Some(10)),
    ];
    // KSEG_BENCH_CODECS=gzip,lz4 measures only those codecs.
    let only = std::env::var("KSEG_BENCH_CODECS").unwrap_or_default();
    let wanted = |c: Compression| only.is_empty() || only.split(',').any(|n| n == c.name());
    for (codec, level) in cases.into_iter().filter(|(c, _)| wanted(*c)) {
        let name = match level {
            Some(l) => format!("{} level {l}", codec.name()),
            None => format!("{} default level", codec.name()),
        };
        let old = match (codec, level) {
            (Compression::Gzip, _) => {
                let zlib_level = level.map_or(6, |l| l as u32);
                Some(median_rate(runs, total, || {
                    each(&mut |input| old_gzip(zlib_level, input, &mut out))
                }))
            }
            (Compression::Snappy, _) => Some(median_rate(runs, total, || {
                each(&mut |input| old_snappy(input, &mut out))
            })),
            (Compression::Lz4, _) => Some(median_rate(runs, total, || {
                each(&mut |input| old_lz4(input, &mut out))
            })),
            _ => None,
        };
        if let Some(rate) = old {
            row(&format!("{name}: compress, old encoder"), rate, None);
        }
        let rate = median_rate(runs, total, || {
            each(&mut |input| codec::compress(codec, level, 2, input, &mut out).unwrap())
        });
        row(&format!("{name}: compress"), rate, old);
        let compressed: Vec<Vec<u8>> = inputs
            .iter()
            .map(|input| {
                codec::compress(codec, level, 2, input, &mut out).unwrap();
                out.clone()
            })
            .collect();
        let rate = median_rate(runs, total, || {
            for _ in 0..rounds {
                for c in &compressed {
                    codec::decompress(codec, 2, c, DEFAULT_MAX_DECOMPRESSED_BYTES, &mut back)
                        .unwrap();
                }
            }
        });
        let ratio = set_bytes as f64 / compressed.iter().map(Vec::len).sum::<usize>() as f64;
        row(&format!("{name}: decompress ({ratio:.2}:1)"), rate, None);
    }
}
