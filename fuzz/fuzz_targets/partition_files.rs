//! Arbitrary bytes cut into the other files of a partition directory (indexes, transaction
//! index, producer snapshot, leader-epoch checkpoint, partition.metadata) beside a small valid
//! segment, so that the cross-file checks run too.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

/// One v2 batch, offsets 0..=1, uncompressed, made by kseg's own writer.
fn valid_log() -> Vec<u8> {
    use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
    let record = |offset: i64, k: &[u8]| RecordSpec {
        offset,
        key: Some(k.to_vec()),
        value: Some(b"v".to_vec()),
        ..RecordSpec::default()
    };
    build_batch(&BatchSpec::default(), &[record(0, b"a"), record(1, b"b")]).unwrap()
}

const NAMES: [&str; 6] = [
    "00000000000000000000.index",
    "00000000000000000000.timeindex",
    "00000000000000000000.txnindex",
    "00000000000000000002.snapshot",
    "leader-epoch-checkpoint",
    "partition.metadata",
];

fuzz_target!(|data: &[u8]| {
    // The first six bytes say how long each part is (mod what is left).
    let (lens, mut rest) = data.split_at(data.len().min(NAMES.len()));
    let log = valid_log();
    let mut files: Vec<(&str, &[u8])> = vec![("00000000000000000000.log", &log)];
    for (i, name) in NAMES.iter().enumerate() {
        let want = lens.get(i).map_or(rest.len(), |&l| usize::from(l) * 4);
        let (part, tail) = rest.split_at(want.min(rest.len()));
        files.push((name, part));
        rest = tail;
    }
    let (_tmp, dir) = common::partition(&files);
    common::read_everything(&dir);
});
