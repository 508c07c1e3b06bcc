//! Memory bounded by design on hostile lengths (issue 15 item 1): index files of 2 GiB, sparse
//! but with data at both ends (so no "zero tail" shortcut applies: every slot counts, as Kafka
//! counts them), planted in a copy of the reference corpus' `a-plain-v2`. Each command runs as
//! a child `kseg` whose own peak RSS (`wait4` rusage) must stay under 64 MB: the batches are
//! small, so the bound is the constant part of "64 MB plus the largest decompressed batch".
//! Before this change `dump` of such an index peaked at 4.2 GB and `verify --deep` and
//! `rebuild-index` at 2.1 GB (the file read whole, its entries collected).

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use common::big_segment::run_measured;

const RSS_BOUND: u64 = 64 << 20;
const HOSTILE_BYTES: u64 = 2 << 30;

/// A writable copy of a-plain-v2's partition in `tmp`, with `file` made a sparse file of
/// 2 GiB whose last `tail.len()` bytes are `tail`: the original entries at the start, a hole,
/// and data at the end.
fn hostile_partition(tmp: &Path, file: &str, tail: &[u8]) -> Option<PathBuf> {
    let reference = common::reference_dir()?;
    let dir = tmp.join("orders-0");
    common::copy_dir(&reference.join("a-plain-v2/input/orders-0"), &dir);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join(file))
        .unwrap();
    f.set_len(HOSTILE_BYTES).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, tail, HOSTILE_BYTES - tail.len() as u64).unwrap();
    Some(dir)
}

fn kseg() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_kseg"))
}

/// Runs `kseg args…` and asserts its exit code and its peak RSS.
fn bounded(args: &[&OsStr], code: i32) {
    let (got, rss) = run_measured(kseg(), args);
    assert_eq!(got, code, "kseg {args:?} exited with {got}");
    assert!(rss < RSS_BOUND, "kseg {args:?} peaked at {} MiB", rss >> 20);
}

/// One more offset-index entry at the end (relative offset 16, position 32): the file's last
/// slot is not zero, so Kafka's sanity check (last offset above the base) passes.
const OFFSET_TAIL: [u8; 8] = [0, 0, 0, 0x10, 0, 0, 0, 0x20];
/// A time-index entry at the end (timestamp 16, relative offset 32).
const TIME_TAIL: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0x20];

#[test]
fn a_sparse_2_gib_offset_index_costs_no_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let index = "00000000000000000000.index";
    let Some(dir) = hostile_partition(tmp.path(), index, &OFFSET_TAIL) else {
        return;
    };
    let index_path = dir.join(index);
    let log_path = dir.join("00000000000000000000.log");
    bounded(&[OsStr::new("dump"), index_path.as_os_str()], 0);
    bounded(
        &[
            OsStr::new("dump"),
            OsStr::new("--json"),
            index_path.as_os_str(),
        ],
        0,
    );
    bounded(
        &[
            OsStr::new("dump"),
            OsStr::new("--index-sanity-check"),
            log_path.as_os_str(),
        ],
        0,
    );
    // The zero slots after the real entries are an untrimmed index: a warning for an offset
    // index (lookups scan from the segment's start), which --strict makes exit 1.
    bounded(
        &[OsStr::new("verify"), OsStr::new("--deep"), dir.as_os_str()],
        0,
    );
    bounded(
        &[
            OsStr::new("verify"),
            OsStr::new("--deep"),
            OsStr::new("--strict"),
            dir.as_os_str(),
        ],
        1,
    );
    // A plan with changes (the index is rebuilt), nothing written.
    bounded(&[OsStr::new("rebuild-index"), dir.as_os_str()], 1);
    bounded(&[OsStr::new("recover"), dir.as_os_str()], 1);
    assert_eq!(std::fs::metadata(&index_path).unwrap().len(), HOSTILE_BYTES);
    bounded(
        &[
            OsStr::new("rebuild-index"),
            OsStr::new("--apply"),
            OsStr::new("--no-backup"),
            dir.as_os_str(),
        ],
        0,
    );
    // The rebuilt index holds the segment's real entries only.
    let rebuilt = std::fs::metadata(&index_path).unwrap().len();
    assert!(rebuilt > 0 && rebuilt < 4096, "{rebuilt} bytes");
}

#[test]
fn a_sparse_2_gib_time_index_costs_no_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let index = "00000000000000000000.timeindex";
    let Some(dir) = hostile_partition(tmp.path(), index, &TIME_TAIL) else {
        return;
    };
    let index_path = dir.join(index);
    bounded(&[OsStr::new("dump"), index_path.as_os_str()], 0);
    // An untrimmed time index is an error: the broker takes timestamp 0 for the segment's
    // largest.
    bounded(
        &[OsStr::new("verify"), OsStr::new("--deep"), dir.as_os_str()],
        1,
    );
    bounded(&[OsStr::new("rebuild-index"), dir.as_os_str()], 1);
    bounded(&[OsStr::new("recover"), dir.as_os_str()], 1);
}
