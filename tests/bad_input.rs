//! Hostile bytes: a small valid segment truncated at every byte and with every byte flipped.
//! The dump never panics, always finishes, and reports damage wherever Kafka's checks would.

use std::path::Path;

mod common;

use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
use kseg::format::Compression;
use kseg::ops::inspect::dump::{dump_paths, DumpOptions, Event, Outcome, Sink};

struct Positions(Vec<String>);

impl Sink for Positions {
    fn event(&mut self, e: &Event<'_>) -> std::io::Result<()> {
        if let Event::Finding(f) = e {
            // Every finding in a log names the byte position.
            assert!(f.position.is_some(), "{f:?}");
            self.0
                .push(format!("{} at {:?}: {}", f.check, f.position, f.message));
        }
        Ok(())
    }
}

fn records(base: i64, n: i64) -> Vec<RecordSpec> {
    (0..n)
        .map(|i| RecordSpec {
            offset: base + i,
            timestamp: 1_700_000_000_000 + i,
            key: Some(format!("key-{i}").into_bytes()),
            value: Some(format!("value {i} value {i} value").into_bytes()),
            headers: vec![(b"h".to_vec(), Some(b"x".to_vec()))],
        })
        .collect()
}

/// Legacy v0, legacy v1 snappy wrapper, v2 none, v2 gzip, v2 lz4: (bytes, entry boundaries,
/// ranges of each stored CRC and the bytes it covers).
fn segment() -> (Vec<u8>, Vec<usize>, Vec<(usize, usize)>) {
    let mut out = Vec::new();
    let mut bounds = vec![0];
    let mut covered = Vec::new();
    let legacy = |magic, compression, base| {
        let mut recs = records(base, 2);
        for r in &mut recs {
            r.headers.clear();
        }
        common::legacy_set(magic, compression, &recs)
    };
    let parts = vec![
        (legacy(0, Compression::None, 0), 12),
        (legacy(1, Compression::Snappy, 2), 12),
        (
            build_batch(
                &BatchSpec {
                    base_offset: 4,
                    ..Default::default()
                },
                &records(4, 3),
            )
            .unwrap(),
            17,
        ),
        (
            build_batch(
                &BatchSpec {
                    base_offset: 7,
                    compression: Compression::Gzip,
                    ..Default::default()
                },
                &records(7, 3),
            )
            .unwrap(),
            17,
        ),
        (
            build_batch(
                &BatchSpec {
                    base_offset: 10,
                    compression: Compression::Lz4,
                    ..Default::default()
                },
                &records(10, 3),
            )
            .unwrap(),
            17,
        ),
    ];
    for (bytes, crc_start) in parts {
        // The legacy v0 set holds two messages; cover each message's own CRC range.
        let mut p = 0;
        while p < bytes.len() {
            let size = i32::from_be_bytes(bytes[p + 8..p + 12].try_into().unwrap()) as usize;
            let start = out.len() + p;
            covered.push((start + crc_start, start + 12 + size));
            p += 12 + size;
            bounds.push(out.len() + p);
        }
        out.extend_from_slice(&bytes);
    }
    (out, bounds, covered)
}

fn run(path: &Path) -> (Outcome, Positions) {
    let mut sink = Positions(Vec::new());
    let opts = DumpOptions {
        deep: true,
        print_data: true,
        ..Default::default()
    };
    let outcome = dump_paths(&[path.to_path_buf()], &opts, &mut sink).expect("dump finishes");
    (outcome, sink)
}

#[test]
fn clean_segment_has_no_damage() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("00000000000000000000.log");
    std::fs::write(&f, segment().0).unwrap();
    let (o, s) = run(&f);
    assert_eq!(o.damage, 0, "{:?}", s.0);
}

#[test]
fn truncated_at_every_byte() {
    let (bytes, bounds, _) = segment();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("00000000000000000000.log");
    for n in 0..bytes.len() {
        std::fs::write(&f, &bytes[..n]).unwrap();
        let (o, s) = run(&f);
        let last_bound = *bounds.iter().filter(|&&b| b <= n).max().unwrap();
        // Anything left over after the last whole entry is a torn write, even fewer bytes
        // than an entry header (Kafka's iterator skips those silently; recovery cuts them).
        if n > last_bound {
            assert!(o.damage > 0, "cut at {n}: torn write not reported");
        } else {
            assert_eq!(o.damage, 0, "cut at {n}: {:?}", s.0);
        }
    }
}

#[test]
fn every_byte_flipped() {
    let (bytes, _, covered) = segment();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("00000000000000000000.log");
    for i in 0..bytes.len() {
        for mask in [0x01u8, 0xff] {
            let mut b = bytes.clone();
            b[i] ^= mask;
            std::fs::write(&f, &b).unwrap();
            let (o, s) = run(&f);
            if covered.iter().any(|&(a, z)| (a..z).contains(&i)) {
                assert!(o.damage > 0, "byte {i} ^ {mask:#x} not reported: {:?}", s.0);
            }
        }
    }
}

/// A batch that decompresses past the caller's limit is not damaged, only not checked beyond
/// it: a warning naming the batch, never an error; the uncompressed batches are still checked.
#[test]
fn a_batch_past_the_decompression_limit_is_unchecked_not_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("00000000000000000000.log");
    std::fs::write(&f, segment().0).unwrap();
    let mut sink = Positions(Vec::new());
    let opts = DumpOptions {
        deep: true,
        max_batch_bytes: 64,
        ..Default::default()
    };
    let o = dump_paths(&[f], &opts, &mut sink).unwrap();
    assert_eq!(o.damage, 0, "{:?}", sink.0);
    let unchecked: Vec<&String> = sink
        .0
        .iter()
        .filter(|l| l.starts_with("batch.unchecked"))
        .collect();
    // The snappy wrapper, the gzip and the lz4 batch decompress to more than 64 bytes.
    assert_eq!(unchecked.len(), 3, "{:?}", sink.0);
    assert_eq!(sink.0.len(), 3, "{:?}", sink.0);
}
