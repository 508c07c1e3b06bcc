//! `kseg recover LOGDIR`: a log dir of several damaged partitions (the reference corpus' torn
//! tail, corrupt middle and index damage, with a recovery-point checkpoint) recovered in one
//! run equals each partition recovered alone, and a run stopped at any step of one partition's
//! apply, then rerun over the whole log dir, ends the same. The dry run's estimate counts the
//! bytes of every segment from the one holding the recovery point on (`LogLoader.recoverLog`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use kseg::ops::repair::apply::{ApplyOptions, Backup};
use kseg::ops::repair::recover::plan;

const DAMAGED: [&str; 4] = [
    "f-crash-torn-tail",
    "g-corrupt-middle",
    "h-index-damage",
    "a-plain-v2",
];
/// The broker clock of every run (producer expiration depends on it).
const NOW_MS: i64 = 1_730_000_000_000;
const UNIQUE_ID: &str = "5f1e0c6a8b9d4e2f8a7b6c5d4e3f2a1b";

fn build(root: &Path, log_dir: &Path) {
    for (i, s) in DAMAGED.iter().enumerate() {
        common::copy_dir(
            &root.join(s).join("input/orders-0"),
            &log_dir.join(format!("orders-{i}")),
        );
    }
    // A directory scheduled for deletion is not recovered.
    common::copy_dir(
        &root.join("f-crash-torn-tail/input/orders-0"),
        &log_dir.join(format!("orders-7.{UNIQUE_ID}-delete")),
    );
    std::fs::write(
        log_dir.join("recovery-point-offset-checkpoint"),
        "0\n2\norders 0 962\norders 1 0\n",
    )
    .unwrap();
}

fn kseg(args: &[&str], paths: &[&Path]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(args)
        .args(["--now", &NOW_MS.to_string()])
        .args(paths)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

/// Every partition's files and the log dir's own files, by name and bytes.
fn state(log_dir: &Path) -> State {
    let files = common::listing(log_dir)
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    let mut out = vec![(".".to_string(), files)];
    for p in common::listing(log_dir).into_iter().filter(|p| p.is_dir()) {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        out.push((name, common::dir_contents(&p)));
    }
    out
}

type State = Vec<(String, Vec<(String, Vec<u8>)>)>;

/// The files that differ between two states, by directory and name (bytes are not printed).
fn differing(a: &State, b: &State) -> Vec<String> {
    let flat = |s: &State| -> std::collections::BTreeMap<String, Vec<u8>> {
        s.iter()
            .flat_map(|(d, fs)| fs.iter().map(move |(n, b)| (format!("{d}/{n}"), b.clone())))
            .collect()
    };
    let (a, b) = (flat(a), flat(b));
    let mut names: Vec<String> = a.keys().chain(b.keys()).cloned().collect();
    names.sort();
    names.dedup();
    names.retain(|n| a.get(n) != b.get(n));
    names
}

/// Two copies of the damaged log dir, in a temporary directory.
fn two_copies(root: &Path) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole/logs");
    let alone = tmp.path().join("alone/logs");
    build(root, &whole);
    build(root, &alone);
    (tmp, whole, alone)
}

/// `command --apply` over the log dir `whole` and over each partition of `alone` (the same
/// log dir) one at a time: the two end with the same files, and changed something.
fn assert_one_run_equals_each_alone(command: &str, whole: &Path, alone: &Path, before: &State) {
    let (code, _) = kseg(
        &[command, "--apply", "--no-backup", "--jobs", "3"],
        &[whole],
    );
    assert_eq!(code, 0);
    for i in 0..DAMAGED.len() {
        let dir = alone.join(format!("orders-{i}"));
        let (code, _) = kseg(&[command, "--apply", "--no-backup"], &[&dir]);
        assert_eq!(code, 0, "orders-{i}");
    }
    let after = state(whole);
    assert!(!differing(&after, before).is_empty());
    assert_eq!(differing(&after, &state(alone)), Vec::<String>::new());
}

#[test]
fn log_dir_recovery_equals_each_partition_alone() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let (_tmp, whole, alone) = two_copies(&root);
    let before = state(&whole);

    // The dry run: an estimate first, one plan per partition, nothing written.
    let (code, text) = kseg(&["recover", "--jobs", "2"], &[&whole]);
    assert_eq!(code, 1);
    assert!(text.starts_with("estimate: "), "{text}");
    // Each partition's bytes from its recovery point, and whose speed the time is at.
    for i in 0..DAMAGED.len() {
        let line = format!("  {}: ", whole.join(format!("orders-{i}")).display());
        assert!(text.contains(&line), "{line} in {text}");
    }
    assert!(
        text.contains("the speed of kseg's own recovery walks"),
        "{text}"
    );
    assert_eq!(text.matches("\nrecover ").count(), DAMAGED.len());
    assert!(!text.contains("-delete"));
    assert_eq!(differing(&state(&whole), &before), Vec::<String>::new());
    let (code, json) = kseg(&["recover", "--json"], &[&whole]);
    assert_eq!(code, 1);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["format"], "kseg/3");
    // Bytes to recover: orders-0 from the segment holding offset 962 (its checkpoint), the
    // others from their first segment (checkpointed 0, or no entry).
    for e in doc["estimate"]["partitions"].as_array().unwrap() {
        let dir = Path::new(e["dir"].as_str().unwrap());
        let point = e["recoveryPoint"].as_i64().unwrap();
        let mut logs: Vec<(i64, u64)> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|f| {
                let f = f.unwrap();
                let name = f.file_name().to_string_lossy().into_owned();
                let base = name.strip_suffix(".log")?.parse().ok()?;
                Some((base, f.metadata().unwrap().len()))
            })
            .collect();
        logs.sort();
        let expected_point = if dir.ends_with("orders-0") { 962 } else { 0 };
        assert_eq!(point, expected_point, "{}", dir.display());
        if dir.ends_with("orders-0") {
            assert_eq!(e["recoveryPointSource"], "recovery-point-offset-checkpoint");
        }
        let from = logs.iter().rposition(|(b, _)| *b <= point).unwrap_or(0);
        let bytes: u64 = logs[from..].iter().map(|(_, n)| n).sum();
        assert_eq!(
            e["bytesToRecover"].as_u64(),
            Some(bytes),
            "{}",
            dir.display()
        );
    }

    assert_one_run_equals_each_alone("recover", &whole, &alone, &before);
    // Nothing left to do.
    let (code, _) = kseg(&["recover"], &[&whole]);
    assert_eq!(code, 0);
}

#[test]
fn a_stop_at_any_step_then_a_rerun_ends_the_same() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let expected = tmp.path().join("expected/logs");
    build(&root, &expected);
    let (code, _) = kseg(&["recover", "--apply", "--no-backup"], &[&expected]);
    assert_eq!(code, 0);
    let want = state(&expected);
    let opts = common::recover_options(NOW_MS);
    let mut step = 0;
    loop {
        let log_dir = tmp.path().join(format!("stop-{step}/logs"));
        build(&root, &log_dir);
        // The run got through orders-0 and stopped in orders-1 before `step`.
        for (i, fail) in [(0, None), (1, Some(step))] {
            let dir = log_dir.join(format!("orders-{i}"));
            let _lock = common::lock(&dir);
            let p = plan(&dir, &opts).unwrap();
            let done = p.apply(&ApplyOptions {
                backup: Backup::None,
                fail_before_step: fail,
                before_step: None,
            });
            if fail.is_none() {
                done.unwrap();
            } else if done.is_ok() {
                // Past the last step: the whole run is covered.
                assert!(step > 3, "{step}");
                return;
            }
        }
        let (code, _) = kseg(&["recover", "--apply", "--no-backup"], &[&log_dir]);
        assert_eq!(code, 0, "step {step}");
        assert_eq!(
            differing(&state(&log_dir), &want),
            Vec::<String>::new(),
            "stopped before step {step}"
        );
        step += 1;
    }
}

#[test]
fn log_dir_index_rebuild_equals_each_partition_alone() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let (_tmp, whole, alone) = two_copies(&root);
    let before = state(&whole);
    let (code, text) = kseg(&["rebuild-index", "--jobs", "2"], &[&whole]);
    assert_eq!(code, 1);
    assert_eq!(text.matches("rebuild-index ").count(), DAMAGED.len());
    assert!(text.contains("\ntotal: 4 partition(s)"), "{text}");
    assert_eq!(differing(&state(&whole), &before), Vec::<String>::new());
    assert_one_run_equals_each_alone("rebuild-index", &whole, &alone, &before);
}
