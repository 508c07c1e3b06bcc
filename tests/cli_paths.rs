//! Paths named on the command line (issue 12, items 3 and 4): nothing to do is an error with
//! exit status 2 naming the path and what was expected, never an empty success; in-place work
//! is refused, writing nothing, outside directories the broker would do it in.

mod common;

use std::path::Path;
use std::process::Command;

use common::kseg_status as kseg;

/// Every subcommand that reads a path, with what its error says it expected.
const PATH_COMMANDS: &[(&[&str], &str)] = &[
    (
        &["dump"],
        "a segment file, a partition directory or a log dir",
    ),
    (
        &["dump", "--files"],
        "a segment file, a partition directory or a log dir",
    ),
    (
        &["verify"],
        "a segment file, a partition directory or a log dir",
    ),
    (
        &["rebuild-index"],
        "a segment file or a partition directory",
    ),
    (
        &["rebuild-index", "--apply"],
        "a segment file or a partition directory",
    ),
    (&["recover"], "a partition directory `<topic>-<partition>`"),
    (
        &["recover", "--apply"],
        "a partition directory `<topic>-<partition>`",
    ),
    (
        &["retention"],
        "a partition directory `<topic>-<partition>`",
    ),
    (
        &["retention", "--apply"],
        "a partition directory `<topic>-<partition>`",
    ),
    (&["compact"], "a partition directory `<topic>-<partition>`"),
    (
        &["compact", "--apply"],
        "a partition directory `<topic>-<partition>`",
    ),
];

#[test]
fn nothing_to_work_on_is_exit_2_naming_the_path_and_what_was_expected() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nonexistent");
    let empty = tmp.path().join("emptydir");
    std::fs::create_dir(&empty).unwrap();
    // Neither a Kafka file nor a partition directory: a user's folder.
    let no_partitions = tmp.path().join("home");
    std::fs::create_dir_all(no_partitions.join("Documents")).unwrap();
    std::fs::write(no_partitions.join("notes.txt"), "x").unwrap();
    let cases = [
        (&missing, "no such file or directory"),
        (&empty, "empty directory"),
        (
            &no_partitions,
            "no Kafka files or partition directories here",
        ),
    ];
    for (args, expected) in PATH_COMMANDS {
        for (path, problem) in &cases {
            let (code, stderr) = kseg(args, path);
            assert_eq!(code, 2, "{args:?} {}: {stderr}", path.display());
            let want = format!(
                "kseg {}: error: {}: {problem} (expected {expected})",
                args[0],
                path.display()
            );
            assert!(stderr.contains(&want), "{args:?}: {stderr}");
        }
    }
    let out = tmp.path().join("out");
    let (code, stderr) = kseg(&["compact", "--out", out.to_str().unwrap()], &empty);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("empty directory"), "{stderr}");
    assert!(!out.exists());
}

/// One bad path among good ones fails the run before anything is printed.
#[test]
fn a_missing_path_among_good_ones_fails_before_any_output() {
    let tmp = tempfile::tempdir().unwrap();
    let good = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/orders-0");
    for cmd in ["dump", "verify"] {
        let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
            .arg(cmd)
            .arg(&good)
            .arg(tmp.path().join("gone.log"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        assert!(out.stdout.is_empty(), "{cmd}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("gone.log: no such file or directory"),
            "{stderr}"
        );
    }
}

/// A log dir holding only checkpoint files is something to verify: not refused.
#[test]
fn a_log_dir_with_only_its_checkpoints_is_examined() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("recovery-point-offset-checkpoint"),
        "0\n0\n",
    )
    .unwrap();
    let (code, stderr) = kseg(&["verify"], tmp.path());
    assert_eq!(code, 0, "{stderr}");
}

/// Every file and directory below `root` with its bytes, hashed: equal hashes, same tree.
fn tree_hash(root: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    fn walk(dir: &Path, root: &Path, h: &mut std::collections::hash_map::DefaultHasher) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            p.strip_prefix(root).unwrap().hash(h);
            if p.is_dir() {
                walk(&p, root, h);
            } else {
                std::fs::read(&p).unwrap().hash(h);
            }
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    walk(root, root, &mut h);
    h.finish()
}

const NOW: &str = "1767312000000";

/// Each in-place command with flags that make it change the `crashed` fixture.
const APPLY_COMMANDS: &[&[&str]] = &[
    &["recover", "--apply"],
    &["rebuild-index", "--apply", "--all"],
    &["retention", "--apply", "--retention-ms", "1", "--now", NOW],
    &[
        "compact",
        "--apply",
        "--min-cleanable-dirty-ratio",
        "0",
        "--now",
        NOW,
    ],
];

/// The `crashed` fixture copied to `<root>/logs/<name>`.
fn fixture(root: &Path, name: &str) -> std::path::PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/crashed/crashed-0");
    let dir = root.join("logs").join(name);
    common::copy_dir(&src, &dir);
    dir
}

#[test]
fn repairs_change_only_partition_directories_the_broker_would_change() {
    // (directory name, commands refused by position in APPLY_COMMANDS, key words)
    let cases: &[(&str, &[usize], &str)] = &[
        (
            "copy",
            &[0, 1, 2, 3],
            "`copy` is not a partition directory name",
        ),
        (
            "orders-0.0123abcd-delete",
            &[0, 1, 2, 3],
            "scheduled for deletion",
        ),
        (
            "orders-0.0123abcd-stray",
            &[2],
            "stray replica (`-stray`): the broker loads it but never runs retention",
        ),
        (
            "orders-0.0123abcd-stray",
            &[3],
            "stray replica (`-stray`): the broker loads it but never runs the log cleaner",
        ),
        (
            "orders-0.0123abcd-future",
            &[3],
            "future replica (`-future`",
        ),
    ];
    for (name, refused, words) in cases {
        for &i in *refused {
            let tmp = tempfile::tempdir().unwrap();
            let dir = fixture(tmp.path(), name);
            let before = tree_hash(tmp.path());
            let (code, stderr) = kseg(APPLY_COMMANDS[i], &dir);
            assert_eq!(code, 2, "{name} {:?}: {stderr}", APPLY_COMMANDS[i]);
            assert!(stderr.contains(words), "{name}: {stderr}");
            assert!(stderr.contains("refused") || *name == "copy", "{stderr}");
            assert_eq!(
                tree_hash(tmp.path()),
                before,
                "{name} {:?}",
                APPLY_COMMANDS[i]
            );
        }
    }
    // A segment file names its directory.
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path(), "copy");
    let before = tree_hash(tmp.path());
    let (code, stderr) = kseg(
        &["rebuild-index", "--apply", "--all"],
        &dir.join("00000000000000000000.log"),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("`copy` is not a partition directory name"),
        "{stderr}"
    );
    assert_eq!(tree_hash(tmp.path()), before);
    // What the broker does do: recovery of a stray or future replica, retention of a future
    // one, and all of it in a live partition directory.
    let allowed: &[(&str, &[usize])] = &[
        ("orders-0", &[0, 1, 2, 3]),
        ("orders-0.0123abcd-stray", &[0, 1]),
        ("orders-0.0123abcd-future", &[0, 1, 2]),
    ];
    for (name, commands) in allowed {
        for &i in *commands {
            let tmp = tempfile::tempdir().unwrap();
            let dir = fixture(tmp.path(), name);
            // The partition directory alone: the backup beside the log dir is new anyway.
            let before = tree_hash(&dir);
            let (code, stderr) = kseg(APPLY_COMMANDS[i], &dir);
            assert_eq!(code, 0, "{name} {:?}: {stderr}", APPLY_COMMANDS[i]);
            assert_ne!(tree_hash(&dir), before, "{name} {:?}", APPLY_COMMANDS[i]);
        }
    }
}

/// The case: `mkdir -p x/Documents; kseg recover --apply x` wrote segment files.
#[test]
fn recover_and_compact_apply_on_a_folder_change_no_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let x = tmp.path().join("x");
    std::fs::create_dir_all(x.join("Documents")).unwrap();
    let before = tree_hash(tmp.path());
    for args in [&["recover", "--apply"][..], &["compact", "--apply"]] {
        let (code, stderr) = kseg(args, &x);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains("no Kafka files"), "{stderr}");
        assert_eq!(tree_hash(tmp.path()), before, "{args:?}");
    }
    // A partition-named directory holding no Kafka file has nothing to repair either.
    let empty_partition = tmp.path().join("orders-0");
    std::fs::create_dir_all(empty_partition.join("Documents")).unwrap();
    let before = tree_hash(tmp.path());
    let (code, stderr) = kseg(&["recover", "--apply"], &empty_partition);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(tree_hash(tmp.path()), before);
}

#[test]
fn a_backup_dir_inside_the_log_dir_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path(), "orders-0");
    let log_dir = dir.parent().unwrap();
    for backup in [log_dir.join("backup"), dir.join("backup")] {
        let before = tree_hash(tmp.path());
        let mut args = vec!["--backup-dir", backup.to_str().unwrap()];
        for cmd in APPLY_COMMANDS {
            args.splice(0..0, cmd.iter().copied());
            let (code, stderr) = kseg(&args, &dir);
            assert_eq!(code, 2, "{args:?}: {stderr}");
            assert!(
                stderr.contains("the backup directory is inside the log dir"),
                "{stderr}"
            );
            assert_eq!(tree_hash(tmp.path()), before, "{args:?}");
            args.drain(..cmd.len());
        }
    }
    // Beside the log dir, as the default is, it is taken.
    let backup = tmp.path().join("backup");
    let (code, stderr) = kseg(
        &[
            "recover",
            "--apply",
            "--backup-dir",
            backup.to_str().unwrap(),
        ],
        &dir,
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(backup.join("plan.json").is_file());
}
