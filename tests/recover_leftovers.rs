//! Leftover files of the log cleaner and of asynchronous deletion are resolved as the broker's
//! loader resolves them: a partition directory with `.cleaned`, `.deleted` and `.swap` leftovers
//! recovers to exactly what the same directory without them recovers to.

mod common;

use std::path::{Path, PathBuf};

use kseg::ops::repair::apply::{ApplyOptions, Backup};
use kseg::ops::repair::recover::{plan, RecoverOptions};
use kseg::storage::LogConfig;

fn fixture(to: &Path) {
    let from = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/orders-0");
    common::copy_dir(&from, to);
}

/// The fixture's topic settings (testdata/orders/SPEC.json) and clock.
fn options() -> RecoverOptions {
    RecoverOptions {
        config: LogConfig {
            segment_bytes: 16384,
            index_interval_bytes: 2048,
            segment_index_bytes: 4096,
            ..LogConfig::default()
        },
        now_ms: 1_767_225_600_000,
        recovery_point: None,
        producer_id_expiration_ms: 86_400_000,
    }
}

fn recover(dir: &Path) {
    let p = plan(dir, &options()).unwrap();
    p.apply(&ApplyOptions {
        backup: Backup::None,
        fail_before_step: None,
        before_step: None,
    })
    .unwrap();
}

#[test]
fn leftovers_resolve_like_the_loader() {
    let tmp = tempfile::tempdir().unwrap();
    let (clean, dirty) = (tmp.path().join("a/orders-0"), tmp.path().join("b/orders-0"));
    fixture(&clean);
    fixture(&dirty);
    // A cleaner crashed before the swap: `.cleaned` output is discarded. (Kafka also discards
    // every `.swap` at or above the smallest `.cleaned` offset, so this one lies above the swap.)
    std::fs::copy(
        dirty.join("00000000000000000000.log"),
        dirty.join("00000000000000000300.log.cleaned"),
    )
    .unwrap();
    // Asynchronous deletion did not finish: `.deleted` files go.
    std::fs::copy(
        dirty.join("00000000000000000175.index"),
        dirty.join("00000000000000000175.index.deleted"),
    )
    .unwrap();
    // A cleaner crashed after renaming its output to `.swap`: the swap replaces the segment.
    std::fs::rename(
        dirty.join("00000000000000000175.log"),
        dirty.join("00000000000000000175.log.swap"),
    )
    .unwrap();

    recover(&clean);
    recover(&dirty);
    let (want, got) = (common::dir_contents(&clean), common::dir_contents(&dirty));
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&got), names(&want));
    assert!(got == want, "recovered files differ");
    assert!(!names(&got)
        .iter()
        .any(|n| n.ends_with(".swap") || n.ends_with(".cleaned") || n.ends_with(".deleted")));

    // A second run finds nothing to do.
    assert!(plan(&dirty, &options()).unwrap().is_empty());
}

#[test]
fn swaps_at_or_above_a_cleaned_file_are_discarded() {
    let tmp = tempfile::tempdir().unwrap();
    let (clean, dirty) = (tmp.path().join("a/orders-0"), tmp.path().join("b/orders-0"));
    fixture(&clean);
    fixture(&dirty);
    // An unfinished split: its `.swap` lies at the `.cleaned` offset, the originals are intact.
    let log = dirty.join("00000000000000000175.log");
    std::fs::copy(&log, dirty.join("00000000000000000175.log.cleaned")).unwrap();
    std::fs::write(
        dirty.join("00000000000000000175.log.swap"),
        b"not a segment",
    )
    .unwrap();
    recover(&clean);
    recover(&dirty);
    assert!(
        common::dir_contents(&dirty) == common::dir_contents(&clean),
        "the originals must survive"
    );
}

#[test]
fn the_log_dirs_recovery_point_follows_the_recovered_log() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("crashed-0");
    let from = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/crashed/crashed-0");
    common::copy_dir(&from, &dir);
    let checkpoint = tmp.path().join("recovery-point-offset-checkpoint");
    std::fs::write(&checkpoint, "0\n2\ncrashed 0 0\nother 3 5\n").unwrap();
    let opts = RecoverOptions {
        config: LogConfig {
            segment_bytes: 8192,
            index_interval_bytes: 1024,
            segment_index_bytes: 2048,
            ..LogConfig::default()
        },
        ..options()
    };
    let p = plan(&dir, &opts).unwrap();
    p.apply(&ApplyOptions {
        backup: Backup::None,
        fail_before_step: None,
        before_step: None,
    })
    .unwrap();
    // The torn tail went; the partition's entry now says everything up to the log end is safe,
    // the other partition's entry is untouched.
    assert_eq!(
        std::fs::read_to_string(&checkpoint).unwrap(),
        "0\n2\ncrashed 0 90\nother 3 5\n"
    );
}
