//! `recover` in memory bounded by a constant plus the largest batch (issue 16): on a generated
//! 256 MiB segment with a torn tail, the dry run and `--apply` of a spawned `kseg` peak under
//! 64 MB of resident memory (its own, see `run_measured`), and the apply does what the plan
//! said: the tail goes, the whole batches stay, the indexes are rebuilt.

mod common;

use std::ffi::OsStr;

use common::big_segment::{run_measured, torn_segment};

const SEGMENT_BYTES: u64 = 256 << 20;
const RSS_BOUND: u64 = 64 << 20;

#[test]
fn recover_of_a_256_mib_segment_stays_under_64_mb() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, whole) = torn_segment(&tmp.path().join("data"), SEGMENT_BYTES);
    let log = dir.join("00000000000000000000.log");
    let torn_len = std::fs::metadata(&log).unwrap().len();
    assert!(torn_len > whole);
    let kseg = std::path::Path::new(env!("CARGO_BIN_EXE_kseg"));
    let (code, dry_rss) = run_measured(kseg, &[OsStr::new("recover"), dir.as_os_str()]);
    // A plan with changes: exit 1 (differences found), nothing changed.
    assert_eq!(code, 1);
    assert_eq!(std::fs::metadata(&log).unwrap().len(), torn_len);
    assert!(
        dry_rss < RSS_BOUND,
        "recover dry run peaked at {dry_rss} bytes"
    );
    let (code, apply_rss) = run_measured(
        kseg,
        &[
            OsStr::new("recover"),
            OsStr::new("--apply"),
            OsStr::new("--no-backup"),
            dir.as_os_str(),
        ],
    );
    assert_eq!(code, 0);
    assert!(
        apply_rss < RSS_BOUND,
        "recover --apply peaked at {apply_rss} bytes"
    );
    // The torn half batch went, every whole batch stayed, the indexes were rebuilt.
    assert_eq!(std::fs::metadata(&log).unwrap().len(), whole);
    let index = dir.join("00000000000000000000.index");
    assert!(std::fs::metadata(&index).unwrap().len() > 0);
}
