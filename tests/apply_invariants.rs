//! Issue 13's invariant: on every reference scenario and on writer-generated logs (alone and in
//! a log dir), after each `--apply` — recover, retention by time, by bytes and by log start
//! offset, compact at several dirty ratios — `verify --deep --strict` reports nothing and the
//! same command run again plans nothing. Each command starts from the input as the broker's
//! start-up leaves it (`recover --apply`): damage the broker repairs is not the command's.

mod common;

use std::path::{Path, PathBuf};

use kseg::ops::repair::apply::{ApplyOptions, Backup};
use kseg::ops::repair::recover::plan as recover_plan;
use kseg::ops::simulate::compact::plan::{plan_apply, plan_resolve_leftovers};
use kseg::ops::simulate::compact::CompactOptions;
use kseg::ops::simulate::retention::{plan_retention, RetentionOptions};
use kseg::ops::write::log_dir::{write_log_dir, LogDirSpec};
use kseg::ops::write::spec::AnySpec;

const NOW: i64 = 1_767_225_600_000;
const NO_BACKUP: ApplyOptions = ApplyOptions {
    backup: Backup::None,
    fail_before_step: None,
    before_step: None,
};

/// Copies the tree `from` into `to`, writable.
fn copy_tree(from: &Path, to: &Path) {
    common::copy_dir(from, to);
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            copy_tree(&p, &to.join(p.file_name().unwrap()));
        }
    }
}

/// `verify --deep --strict` on the partition and, when there is one, its log dir.
fn verify(dir: &Path, log_dir: bool, what: &str) {
    let target = if log_dir { dir.parent().unwrap() } else { dir };
    common::assert_verifies_strict(target, what);
}

/// The retention runs for the log in `dir`: by time (the older half, then everything), by
/// bytes (half the log) and by log start offset: inside the middle segment in a log dir (whose
/// `log-start-offset-checkpoint` records it), else at its base (nothing would record a start
/// inside a segment).
fn retention_cases(dir: &Path, log_dir: bool) -> Vec<(String, RetentionOptions)> {
    let r = plan_retention(dir, &common::retention_options(NOW)).unwrap();
    let segs = &r.remaining;
    let mid = &segs[segs.len() / 2];
    let total: u64 = segs.iter().map(|s| s.size).sum();
    let mut out = vec![
        (
            "retention.ms, older half".to_string(),
            RetentionOptions {
                retention_ms: 0,
                ..common::retention_options(mid.largest_timestamp)
            },
        ),
        (
            "retention.ms, everything".to_string(),
            RetentionOptions {
                retention_ms: 0,
                ..common::retention_options(i64::MAX / 2)
            },
        ),
        (
            "retention.bytes, half".to_string(),
            RetentionOptions {
                retention_bytes: (total / 2) as i64,
                ..common::retention_options(NOW)
            },
        ),
    ];
    let start = (mid.base_offset + i64::from(log_dir)).min(r.high_watermark.value);
    if start > r.log_start_offset.value {
        out.push((
            format!("log start offset {start}"),
            RetentionOptions {
                log_start_offset: Some(start),
                ..common::retention_options(NOW)
            },
        ));
    }
    out
}

/// Runs every command on copies of `root` (a tree holding the partition `rel`).
fn check_input(root: &Path, rel: &Path, log_dir: bool, name: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("recovered");
    copy_tree(root, &base);
    let dir = base.join(rel);
    // The broker's start-up recovers every log of the log dir.
    let partitions: Vec<PathBuf> = if log_dir {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        v.sort();
        v
    } else {
        vec![dir.clone()]
    };
    for p in &partitions {
        let _lock = common::lock(p);
        recover_plan(p, &common::recover_options(NOW))
            .unwrap()
            .apply(&NO_BACKUP)
            .unwrap();
    }
    verify(&dir, log_dir, &format!("{name}: recover"));
    assert!(
        recover_plan(&dir, &common::recover_options(NOW))
            .unwrap()
            .is_empty(),
        "{name}: recover twice"
    );

    let fresh = |label: &str| {
        let t = tmp
            .path()
            .join(label.replace(|c: char| !c.is_alphanumeric(), "_"));
        copy_tree(&base, &t);
        t.join(rel)
    };
    for (label, opts) in retention_cases(&dir, log_dir) {
        let what = format!("{name}: {label}");
        let d = fresh(&label);
        let _lock = common::lock(&d);
        plan_retention(&d, &opts)
            .unwrap()
            .apply(&NO_BACKUP)
            .unwrap();
        verify(&d, log_dir, &what);
        let again = plan_retention(&d, &opts).unwrap();
        assert!(again.deleted.is_empty(), "{what}: {:?}", again.deleted);
    }
    for ratio in [0.0, 0.5, 0.9] {
        let what = format!("{name}: compact at {ratio}");
        let d = fresh(&format!("compact{ratio}"));
        let _lock = common::lock(&d);
        let opts = CompactOptions {
            min_cleanable_dirty_ratio: ratio,
            ..CompactOptions::new(NOW)
        };
        let applied = plan_apply(&d, &opts).unwrap();
        applied.apply(&NO_BACKUP).unwrap();
        verify(&d, log_dir, &what);
        assert!(
            plan_resolve_leftovers(&d, &opts).unwrap().is_none(),
            "{what}"
        );
        // Outside a log dir no cleaner-offset-checkpoint records where the cleaning ended (the
        // plan says so, and names the offset): the rerun is given it.
        assert_eq!(
            applied.unrecorded_clean_offset().is_some(),
            !log_dir
                && applied
                    .changes
                    .iter()
                    .any(|c| c.file().to_string_lossy().ends_with(".cleaned")),
            "{what}"
        );
        let opts = match applied.unrecorded_clean_offset() {
            Some(_) => CompactOptions {
                first_dirty_offset: Some(applied.report.end_offset),
                ..opts
            },
            None => opts,
        };
        let again = plan_apply(&d, &opts).unwrap();
        assert!(again.changes.is_empty(), "{what}: {:?}", again.changes);
    }
}

#[test]
fn reference_scenarios() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    for s in common::scenarios(&root) {
        let input = s.join("input");
        if input.join("orders-0").is_dir() {
            let name = s.file_name().unwrap().to_string_lossy().into_owned();
            check_input(&input, Path::new("orders-0"), false, &name);
        }
    }
}

#[test]
fn writer_partitions() {
    let testdata = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata");
    for (name, partition) in [
        ("orders", "orders-0"),
        ("payments", "payments-0"),
        ("legacy", "legacy-0"),
        ("crashed", "crashed-0"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        common::copy_dir(
            &testdata.join(name).join(partition),
            &tmp.path().join(partition),
        );
        check_input(tmp.path(), Path::new(partition), false, name);
    }
}

#[test]
fn writer_log_dir() {
    let partition = |topic: &str, partition: i32, close: &str| {
        serde_json::json!({
            "topic": topic, "partition": partition, "close": close,
            "config": {"segment.bytes": 300},
            "ops": [{"op": "repeat", "times": 6, "ops": [
                {"op": "append", "batches": [{"leader_epoch": partition + 1, "gen": {"count": 3, "value_len": 40, "seed": partition}}]}
            ]}]
        })
    };
    let spec = serde_json::json!({
        "partitions": [partition("orders", 1, "clean"), partition("orders", 0, "crash"), partition("audit", 0, "clean")],
        "now_ms": NOW,
        "checkpoints": {"log_start_offset": {"orders-1": 7}, "cleaner": {"audit-0": 5}}
    });
    let AnySpec::LogDir(spec): AnySpec =
        AnySpec::from_json_at(&spec.to_string(), Path::new("logdir.json")).unwrap()
    else {
        panic!("not a log-dir spec")
    };
    let spec: LogDirSpec = spec;
    let tmp = tempfile::tempdir().unwrap();
    let logs = tmp.path().join("logs");
    write_log_dir(&spec, &logs).unwrap();
    for p in ["orders-1", "orders-0", "audit-0"] {
        check_input(tmp.path(), &Path::new("logs").join(p), true, p);
    }
}
