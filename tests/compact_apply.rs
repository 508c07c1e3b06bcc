//! `compact --apply`: the in-place cleaning through the broker's `.cleaned` -> `.swap` -> swap
//! file dance gives exactly the files `--out` gives; a dry run changes nothing; a failure at
//! any step, then a rerun (the leftovers resolved as the broker's loader would, then cleaned),
//! ends with the same records. Also the executor's `Rename` change under fault injection.

mod common;

use std::path::Path;

use kseg::ops::repair::apply::{apply, ApplyOptions, Backup, Change};
use kseg::ops::simulate::compact::plan::{plan_apply, plan_resolve_leftovers};
use kseg::ops::simulate::compact::{compact_to, CompactOptions};

const NOW: i64 = 1_767_225_600_000;

fn options(segment_bytes: u64) -> CompactOptions {
    CompactOptions {
        min_cleanable_dirty_ratio: 0.0,
        segment_bytes,
        ..CompactOptions::new(NOW)
    }
}

fn no_backup(step: Option<usize>) -> ApplyOptions {
    ApplyOptions {
        backup: Backup::None,
        fail_before_step: step,
        before_step: None,
    }
}

/// The input of i-compaction in `<tmp>/logs/orders-0`.
/// `kseg compact` at `NOW`, everything cleanable.
fn kseg_compact() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"));
    c.args([
        "compact",
        "--now",
        &NOW.to_string(),
        "--min-cleanable-dirty-ratio",
        "0",
    ]);
    c
}

/// The compaction scenario's partition in a log dir (`meta.properties` beside it), where the
/// cleaner checkpoint lives.
fn fixture(root: &Path, tmp: &Path) -> std::path::PathBuf {
    let dir = tmp.join("logs").join("orders-0");
    common::copy_dir(&root.join("i-compaction/input/orders-0"), &dir);
    std::fs::write(
        tmp.join("logs/meta.properties"),
        "#\nversion=0\nbroker.id=0\n",
    )
    .unwrap();
    dir
}

/// Outside a log dir there is no cleaner-offset-checkpoint to write (the broker keeps one per
/// log dir, `LogCleanerManager`): nothing is written beside the partition directory, the run
/// says that nothing records where the cleaning ended, and a rerun given that offset plans
/// nothing. A relative path works the same.
#[test]
fn apply_outside_a_log_dir_writes_no_checkpoint_and_says_so() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&root.join("i-compaction/input/orders-0"), &dir);
    let run = |extra: &[&str]| {
        kseg_compact()
            .current_dir(tmp.path())
            .args(extra)
            .arg("orders-0")
            .output()
            .unwrap()
    };
    let out = run(&["--apply", "--no-backup"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let names: Vec<_> = common::listing(tmp.path());
    assert_eq!(names, std::slice::from_ref(&dir));
    let opts = options(1 << 30);
    let expected = compact_to(
        &root.join("i-compaction/input/orders-0"),
        &tmp.path().join("o/out"),
        &opts,
    )
    .unwrap();
    let end = expected.end_offset;
    assert!(
        stderr.contains("is not in a log dir")
            && stderr.contains(&format!("--first-dirty-offset {end}")),
        "{stderr}"
    );
    let out = run(&["--first-dirty-offset", &end.to_string()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn apply_gives_the_files_out_gives() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    for segment_bytes in [1 << 30, 40_000] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fixture(&root, tmp.path());
        let opts = options(segment_bytes);
        let out = compact_to(&dir, &tmp.path().join("out"), &opts).unwrap();
        assert!(out.cleaned);
        let lock = common::lock(&dir);
        let p = plan_apply(&dir, &opts).unwrap();
        assert_eq!(p.report.segments, out.segments);
        // The protocol's order: .cleaned written, renamed to .swap, old files to .deleted.
        let names: Vec<String> = p
            .changes
            .iter()
            .map(|c| c.file().file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(names[0].ends_with(".log.cleaned"), "{names:?}");
        assert!(names.iter().any(|n| n.ends_with(".swap")));
        let backup = tmp.path().join("backup");
        p.apply(&ApplyOptions {
            backup: Backup::Dir(backup.clone()),
            fail_before_step: None,
            before_step: None,
        })
        .unwrap();
        drop(lock);
        assert_eq!(
            common::dir_contents(&dir),
            common::dir_contents(out.out.as_ref().unwrap()),
            "segment.bytes {segment_bytes}"
        );
        assert_eq!(
            std::fs::read(tmp.path().join("logs/cleaner-offset-checkpoint")).unwrap(),
            std::fs::read(tmp.path().join("out/cleaner-offset-checkpoint")).unwrap()
        );
        common::assert_verifies_clean(&dir);
        // The backup holds the replaced segments' original bytes.
        for (n, bytes) in common::dir_contents(&root.join("i-compaction/input/orders-0")) {
            if let Ok(b) = std::fs::read(backup.join(&n)) {
                assert_eq!(b, bytes, "{n}");
            }
        }
        // With the checkpoint there is nothing left to clean.
        assert!(plan_apply(&dir, &opts).unwrap().changes.is_empty());
    }
}

#[test]
fn dry_run_prints_the_plan_and_changes_nothing() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(&root, tmp.path());
    let before = common::dir_contents(&dir);
    let out = kseg_compact().arg(&dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(".log.cleaned"), "{stdout}");
    assert!(stdout.contains("rename"), "{stdout}");
    assert_eq!(common::dir_contents(&dir), before);
    assert!(!tmp.path().join("logs/cleaner-offset-checkpoint").exists());
    // --out and --apply exclude each other.
    let both = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["compact", "--apply", "--out"])
        .arg(tmp.path().join("o"))
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2));
    // --apply through the CLI.
    let applied = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args([
            "compact",
            "--apply",
            "--no-backup",
            "--now",
            &NOW.to_string(),
        ])
        .args(["--min-cleanable-dirty-ratio", "0"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(applied.status.code(), Some(0));
    common::assert_verifies_clean(&dir);
}

/// A failure before every step in turn, then a rerun of `compact --apply` (which first
/// resolves `.cleaned`, `.swap` and `.deleted` as the broker's loader does), ends with the
/// records of an uninterrupted run, in a directory that verifies clean.
#[test]
fn interrupted_apply_recovers_to_the_same_records() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let opts = options(40_000);
    let want = {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fixture(&root, tmp.path());
        let _lock = common::lock(&dir);
        plan_apply(&dir, &opts)
            .unwrap()
            .apply(&no_backup(None))
            .unwrap();
        common::records(&dir)
    };
    let mut step = 0;
    loop {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fixture(&root, tmp.path());
        let lock = common::lock(&dir);
        let failed = plan_apply(&dir, &opts)
            .unwrap()
            .apply(&ApplyOptions {
                backup: Backup::Dir(tmp.path().join("backup")),
                fail_before_step: Some(step),
                before_step: None,
            })
            .is_err();
        drop(lock);
        // The rerun of `compact --apply`, under its own lock: leftovers resolved as the
        // loader does, then cleaned.
        let _lock = common::lock(&dir);
        if let Some(recovery) = plan_resolve_leftovers(&dir, &opts).unwrap() {
            recovery.apply(&no_backup(None)).unwrap();
        }
        plan_apply(&dir, &opts)
            .unwrap()
            .apply(&no_backup(None))
            .unwrap();
        common::assert_verifies_clean(&dir);
        assert_eq!(common::records(&dir), want, "step {step}");
        if !failed {
            break;
        }
        step += 1;
    }
    assert!(step > 20, "the swap has steps to interrupt ({step})");
}

/// The executor's `Rename`: a plan writing, renaming and deleting, interrupted before each
/// step and rerun, always ends in the same directory; renames already done are skipped.
#[test]
fn interrupted_renames_rerun_to_the_same_result() {
    let mut step = 0;
    let mut want = None;
    loop {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("logs").join("t-0");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a"), b"old a").unwrap();
        std::fs::write(dir.join("c"), b"old c").unwrap();
        let src = tmp.path().join("new-b");
        std::fs::write(&src, b"new b").unwrap();
        let changes = vec![
            Change::Write {
                file: dir.join("b.cleaned"),
                source: src.clone(),
                size_before: None,
                size_after: 5,
            },
            Change::Rename {
                from: dir.join("b.cleaned"),
                to: dir.join("b.swap"),
                size: 5,
            },
            Change::Rename {
                from: dir.join("a"),
                to: dir.join("a.deleted"),
                size: 5,
            },
            Change::Delete {
                file: dir.join("a.deleted"),
                size_before: 5,
            },
            Change::Rename {
                from: dir.join("b.swap"),
                to: dir.join("b"),
                size: 5,
            },
            Change::Rename {
                from: dir.join("c"),
                to: dir.join("d"),
                size: 5,
            },
        ];
        // Each run plans under its lock: it reads the files it changes (as a journal's rerun
        // does), so the executor checks each against what it read.
        let planned = || {
            let lock = common::lock(&dir);
            for c in &changes {
                kseg::storage::files::metadata_if_exists(c.file()).unwrap();
            }
            lock
        };
        let backup = tmp.path().join("backup");
        let lock = planned();
        let failed = apply(
            &dir,
            &changes,
            "{}",
            &ApplyOptions {
                backup: Backup::Dir(backup.clone()),
                fail_before_step: Some(step),
                before_step: None,
            },
        )
        .is_err();
        drop(lock);
        if let Ok(b) = std::fs::read(backup.join("a")) {
            assert_eq!(b, b"old a");
        }
        let lock = planned();
        apply(&dir, &changes, "{}", &no_backup(None)).unwrap();
        drop(lock);
        let got = common::dir_contents(&dir);
        let want = want.get_or_insert_with(|| {
            vec![
                ("b".to_string(), b"new b".to_vec()),
                ("d".to_string(), b"old c".to_vec()),
            ]
        });
        assert_eq!(&got, want, "step {step}");
        if !failed {
            break;
        }
        step += 1;
    }
    assert!(step >= 8, "backups and changes are steps ({step})");
}
