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
    let _lock = common::lock(dir);
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
    let _lock = common::lock(&dir);
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

/// `kseg verify` (`--deep`, `--json`) of `dir`: exit status, the document, stderr.
fn verify(dir: &Path) -> (i32, serde_json::Value, String) {
    let out = common::kseg(&["verify", "--deep", "--json", dir.to_str().unwrap()]);
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (
        out.status.code().unwrap(),
        doc,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 33: a partition directory holding only leftovers is verified as the broker's loader
/// takes it (`LogLoader`): a `.log.swap` is the segment it becomes (its records examined, its
/// damage found), `.deleted` files are deleted at start-up and so not read, each said with
/// why; with nothing read, no "0 errors": exit status 2.
#[test]
fn verify_reads_a_swap_as_its_segment_and_never_passes_over_deleted_files() {
    let tmp = tempfile::tempdir().unwrap();
    let values: Vec<Vec<u8>> = (0..50).map(|i| format!("value-{i}").into_bytes()).collect();
    let written = common::write_values(tmp.path(), "t", &values);
    let log = written.join("00000000000000000000.log");

    let swap_dir = tmp.path().join("swap").join("t-0");
    std::fs::create_dir_all(&swap_dir).unwrap();
    let swap = swap_dir.join("00000000000000000000.log.swap");
    std::fs::copy(&log, &swap).unwrap();
    let (code, doc, err) = verify(&swap_dir);
    assert_eq!(code, 0, "{err}");
    common::assert_matches_schema("verify", std::slice::from_ref(&doc));
    let p = &doc["partitions"][0];
    assert_eq!(p["segments"][0]["recordCount"], 50, "{doc}");
    assert_eq!(p["logEndOffset"], 50, "{doc}");
    assert!(
        p["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["check"] == "leftover.file"
                && f["message"]
                    .as_str()
                    .unwrap()
                    .contains("completes the swap")),
        "{doc}"
    );
    // Examined indeed: a flipped byte in its last batch is found.
    let mut bytes = std::fs::read(&swap).unwrap();
    let last = bytes.len() - 3;
    bytes[last] ^= 0xff;
    std::fs::write(&swap, &bytes).unwrap();
    let (code, doc, err) = verify(&swap_dir);
    assert_eq!(code, 1, "{err}");
    assert!(doc["partitions"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["severity"] == "error"));

    let deleted_dir = tmp.path().join("deleted").join("t-0");
    std::fs::create_dir_all(&deleted_dir).unwrap();
    for name in ["00000000000000000000.log", "00000000000000000000.index"] {
        let mut to = name.to_string();
        to.push_str(".deleted");
        std::fs::copy(written.join(name), deleted_dir.join(to)).unwrap();
    }
    let (code, doc, err) = verify(&deleted_dir);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no file read"), "{err}");
    let findings = doc["partitions"][0]["findings"].as_array().unwrap().clone();
    assert_eq!(findings.len(), 2, "{doc}");
    for f in &findings {
        let m = f["message"].as_str().unwrap();
        assert!(
            m.contains("not read") && m.contains("deletes it at start-up"),
            "{m}"
        );
    }
    assert_eq!(doc["checkedFileCount"], 0, "{doc}");
}

/// Issue 33: `dump` of a partition directory reads what the broker's loader keeps of its
/// leftovers: a `.log.swap` is dumped as the segment it becomes; `.deleted` files are not, and
/// a directory of nothing else is no success (exit status 2, "no file read").
#[test]
fn dump_of_a_directory_reads_a_swap_and_never_passes_over_deleted_files() {
    let tmp = tempfile::tempdir().unwrap();
    let values: Vec<Vec<u8>> = (0..50).map(|i| format!("value-{i}").into_bytes()).collect();
    let written = common::write_values(tmp.path(), "t", &values);
    let log = written.join("00000000000000000000.log");
    let (swap_dir, deleted_dir) = (
        tmp.path().join("swap").join("t-0"),
        tmp.path().join("deleted").join("t-0"),
    );
    for (dir, suffix) in [(&swap_dir, ".swap"), (&deleted_dir, ".deleted")] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::copy(&log, dir.join(format!("00000000000000000000.log{suffix}"))).unwrap();
    }
    let out = common::kseg(&["dump", swap_dir.to_str().unwrap()]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("baseOffset: 0 lastOffset: 49 count: 50"),
        "{stdout}"
    );
    assert!(stderr.contains("completes the swap"), "{stderr}");
    let out = common::kseg(&["dump", deleted_dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no file read"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("baseOffset"));
}

/// Issue 33: a `.log.swap` beside the `.log` of its base (a crash after the cleaner renamed
/// its output to `.swap` and before it renamed the old segment to `.deleted`): the loader
/// deletes every file of the offsets the swap covers and serves the swap. verify and dump read
/// the swap, not the old segment, and say why the others are not read; recover leaves exactly
/// the log verify described.
#[test]
fn a_swap_beside_the_log_it_replaces_is_what_verify_dump_and_recover_read() {
    let tmp = tempfile::tempdir().unwrap();
    let values = |tag: &str, n: usize| -> Vec<Vec<u8>> {
        (0..n).map(|i| format!("{tag}-{i}").into_bytes()).collect()
    };
    let old = common::write_values(&tmp.path().join("old"), "t", &values("old", 50));
    let new = common::write_values(&tmp.path().join("new"), "t", &values("new", 30));
    let dir = tmp.path().join("both").join("t-0");
    common::copy_dir(&old, &dir);
    std::fs::copy(
        new.join("00000000000000000000.log"),
        dir.join("00000000000000000000.log.swap"),
    )
    .unwrap();

    let (code, doc, err) = verify(&dir);
    assert_eq!(code, 0, "{err}");
    common::assert_matches_schema("verify", std::slice::from_ref(&doc));
    let p = &doc["partitions"][0];
    assert_eq!(p["logEndOffset"], 30, "{doc}");
    assert_eq!(p["segments"].as_array().unwrap().len(), 1, "{doc}");
    assert_eq!(p["segments"][0]["recordCount"], 30, "{doc}");
    let replaced: Vec<&str> = p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            f["message"]
                .as_str()
                .unwrap()
                .starts_with("replaced by a .log.swap")
        })
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert!(
        replaced
            .iter()
            .any(|f| f.ends_with("00000000000000000000.log")),
        "{doc}"
    );

    let out = common::kseg(&["dump", "--print-data-log", dir.to_str().unwrap()]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("payload: new-29"), "{stdout}");
    assert!(!stdout.contains("payload: old-"), "{stdout}");
    assert!(stderr.contains("replaced by a .log.swap"), "{stderr}");

    recover(&dir);
    let (code, doc, err) = verify(&dir);
    assert_eq!(code, 0, "{err}");
    assert_eq!(doc["partitions"][0]["logEndOffset"], 30, "{doc}");
    assert!(!dir.join("00000000000000000000.log.swap").exists());
}
