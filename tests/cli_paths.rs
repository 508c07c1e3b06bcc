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

/// The issue's case: `mkdir -p x/Documents; kseg recover --apply x` wrote segment files.
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

/// Runs `kseg ARGS`: exit status, stdout and stderr (stdout is a pipe: redirected).
fn run(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    common::outcome(Command::new(env!("CARGO_BIN_EXE_kseg")).args(args))
}

fn os<'a>(args: &'a [&'a str]) -> impl Iterator<Item = &'a std::ffi::OsStr> {
    args.iter().map(std::ffi::OsStr::new)
}

/// The issue's case: a copy of a damaged segment under a name without an offset is decoded,
/// its bad CRC reported (exit 1, and why on stderr though stdout is redirected), with a
/// warning that a broker would not load it under that name.
#[test]
fn a_renamed_segment_is_examined() {
    let Some(reference) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("corrupt-copy.log");
    std::fs::copy(
        reference.join("g-corrupt-middle/input/orders-0/00000000000000001294.log"),
        &copy,
    )
    .unwrap();
    for cmd in ["verify", "dump"] {
        let (code, stdout, stderr) = run(&[cmd.as_ref(), copy.as_os_str()]);
        assert_eq!(code, 1, "{cmd}: {stdout}{stderr}");
        assert!(stderr.contains("1 × batch.crc"), "{cmd}: {stderr}");
        assert!(!stderr.contains("Ignoring unknown file"), "{cmd}: {stderr}");
        assert!(
            stdout.contains("a broker would not load this file under this name")
                && stdout.contains("read with offset 1294 from its first batch"),
            "{cmd}: {stdout}"
        );
    }
    let (_, stdout, _) = run(&["verify".as_ref(), "--bytes".as_ref(), copy.as_os_str()]);
    assert!(stdout.contains("warning[segment.name] "), "{stdout}");
    assert!(stdout.contains("error[batch.crc] "), "{stdout}");
    assert!(
        stdout.contains("1 file(s), 29023 checked, 0 skipped"),
        "{stdout}"
    );
}

/// A renamed index takes its offset from the log of its stem, or from --base-offset; without
/// either it cannot be read, so it is skipped: listed, counted, exit 2 as it was named.
#[test]
fn a_renamed_index_is_read_against_its_log_or_with_base_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/orders-0");
    let index = tmp.path().join("copy.index");
    std::fs::copy(src.join("00000000000000000175.index"), &index).unwrap();
    for cmd in ["verify", "dump"] {
        let (code, _, stderr) = run(&[cmd.as_ref(), index.as_os_str()]);
        assert_eq!(code, 2, "{cmd}: {stderr}");
        assert!(stderr.contains("1 file(s) skipped"), "{cmd}: {stderr}");
        assert!(
            stderr.contains(
                "copy.index: named on the command line but not a Kafka file kseg can read"
            ),
            "{cmd}: {stderr}"
        );
    }
    let (code, stdout, _) = run(&["verify".as_ref(), "--json".as_ref(), index.as_os_str()]);
    assert_eq!(code, 2);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["skippedFiles"], serde_json::json!([index]));
    assert_eq!(report["checkedFileCount"], 0);
    // With the offset, it is read: against a log that is not there.
    let (code, stdout, stderr) = run(&[
        "verify".as_ref(),
        "--base-offset".as_ref(),
        "175".as_ref(),
        index.as_os_str(),
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("error[index.log-missing] "), "{stdout}");
    assert!(stderr.contains("1 × index.log-missing"), "{stderr}");
    // With its log beside it under the same stem, it is checked against it.
    std::fs::copy(
        src.join("00000000000000000175.log"),
        tmp.path().join("copy.log"),
    )
    .unwrap();
    std::fs::copy(
        src.join("00000000000000000175.timeindex"),
        tmp.path().join("copy.timeindex"),
    )
    .unwrap();
    for cmd in ["verify", "dump"] {
        let (code, stdout, stderr) = run(&[cmd.as_ref(), index.as_os_str()]);
        assert_eq!(code, 0, "{cmd}: {stdout}{stderr}");
        assert!(
            stdout.contains("read with offset 175 from the first batch of"),
            "{stdout}"
        );
    }
}

/// A file kseg cannot classify is skipped and listed; named, it makes the exit status 2.
#[test]
fn an_unknown_file_is_skipped_and_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let notes = tmp.path().join("notes.txt");
    std::fs::write(&notes, "x").unwrap();
    let log = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/orders/orders-0/00000000000000000175.log");
    let (code, stdout, stderr) = run(&["verify".as_ref(), notes.as_os_str(), log.as_os_str()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.contains("skipped "), "{stdout}");
    assert!(stdout.contains(", 1 skipped: 0 error(s)"), "{stdout}");
    assert!(
        stderr.contains("notes.txt: named on the command line"),
        "{stderr}"
    );
    let (code, stdout, _) = run(&["dump".as_ref(), "--json".as_ref(), notes.as_os_str()]);
    assert_eq!(code, 2);
    assert!(stdout.contains(r#"{"type":"skipped","file":"#), "{stdout}");
    // Marker files are Kafka's: read (there is nothing in them), not skipped.
    let lock = tmp.path().join(".lock");
    std::fs::write(&lock, "").unwrap();
    let (code, _, stderr) = run(&["dump".as_ref(), lock.as_os_str()]);
    assert_eq!(code, 0, "{stderr}");
    // In a directory, it is listed but the run is judged by the rest.
    let dir = tmp.path().join("orders-0");
    common::copy_dir(log.parent().unwrap(), &dir);
    std::fs::write(dir.join("README"), "x").unwrap();
    let (code, stdout, stderr) = run(&["verify".as_ref(), dir.as_os_str()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(", 1 skipped: 0 error(s)"), "{stdout}");
    assert!(stderr.contains("1 file(s) skipped"), "{stderr}");
}

/// Leftover and marker files are classified by their name, not read: they are counted apart
/// from the files checked, and their bytes are not counted as checked.
#[test]
fn leftovers_and_markers_are_not_counted_as_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/orders-0");
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&src, &dir);
    let json = |dir: &Path| {
        let (_, stdout, stderr) = run(&["verify".as_ref(), "--json".as_ref(), dir.as_os_str()]);
        let v: serde_json::Value =
            serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stderr}"));
        v
    };
    let before = json(&dir);
    let leftover = dir.join("00000000000000000000.log.deleted");
    std::fs::write(&leftover, vec![7u8; 1000]).unwrap();
    let lock = dir.join(".lock");
    std::fs::write(&lock, "").unwrap();
    let after = json(&dir);
    assert_eq!(after["checkedFileCount"], before["checkedFileCount"]);
    assert_eq!(after["bytesChecked"], before["bytesChecked"]);
    let mut classified: Vec<String> = after["classifiedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_owned())
        .collect();
    classified.sort();
    let mut expected = vec![lock.display().to_string(), leftover.display().to_string()];
    expected.sort();
    assert_eq!(classified, expected);
    let (_, stdout, _) = run(&["verify".as_ref(), dir.as_os_str()]);
    assert!(
        stdout.contains("0 skipped, 2 known by name only (not read): 0 error(s), 1 warning(s)"),
        "{stdout}"
    );
}

/// A segment file is judged with its siblings: its indexes beside it are not missing, and
/// a shell glob of a partition gives the findings of the partition directory.
#[test]
fn files_are_judged_with_their_segment() {
    let Some(reference) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let healthy = tmp.path().join("orders-0");
    common::copy_dir(&reference.join("a-plain-v2/input/orders-0"), &healthy);
    let log = healthy.join("00000000000000000317.log");
    let (code, stdout, stderr) = run(&["verify".as_ref(), log.as_os_str()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("missing"), "{stdout}");
    let findings = |args: Vec<&std::ffi::OsStr>| {
        let (code, stdout, _) = run(&args);
        let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        (code, report["partitions"][0]["findings"].clone())
    };
    for dir in [healthy, tmp.path().join("damaged/orders-0")] {
        if !dir.exists() {
            common::copy_dir(&reference.join("g-corrupt-middle/input/orders-0"), &dir);
        }
        let whole = findings(os(&["verify", "--json"]).chain([dir.as_os_str()]).collect());
        let damaged = dir.parent() != Some(tmp.path());
        assert_eq!(whole.1.as_array().unwrap().is_empty(), !damaged);
        assert_eq!(whole.0, if damaged { 1 } else { 0 });
        let files = common::listing(&dir);
        let glob = findings(
            os(&["verify", "--json"])
                .chain(files.iter().map(|f| f.as_os_str()))
                .collect(),
        );
        assert_eq!(glob, whole, "{}", dir.display());
    }
}

/// An exit status and words its output has.
type Outcome = (i32, &'static str);

/// Every subcommand given a renamed segment or a file glob: read, or refused with exit 2 and
/// what was expected, never a silent success.
#[test]
fn every_subcommand_on_a_renamed_segment_and_a_file_glob() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/orders-0");
    // (command, renamed segment: exit and words; file glob: exit and words)
    let not_dir = "not a directory (expected a partition directory `<topic>-<partition>`)";
    let cases: &[(&[&str], Outcome, Outcome)] = &[
        (&["dump"], (0, "read with offset 0"), (0, "")),
        (&["dump", "--files"], (0, "read with offset 0"), (0, "")),
        (&["verify"], (0, "segment.name"), (0, "")),
        // A renamed segment's indexes are rebuilt beside it under its stem.
        (
            &["rebuild-index"],
            (1, "a broker would not load this file under this name"),
            (2, "not a segment file"),
        ),
        // Applied only inside a partition directory (issue 34).
        (
            &["rebuild-index", "--apply"],
            (2, "not a partition directory"),
            (2, "not a segment file"),
        ),
        // recover takes several paths (issue 22): each file is refused.
        (&["recover"], (2, not_dir), (2, not_dir)),
        (&["recover", "--apply"], (2, not_dir), (2, not_dir)),
        (&["retention"], (2, not_dir), (2, "unexpected argument")),
        (
            &["retention", "--apply"],
            (2, not_dir),
            (2, "unexpected argument"),
        ),
        (&["compact"], (2, not_dir), (2, "unexpected argument")),
        (
            &["compact", "--apply"],
            (2, not_dir),
            (2, "unexpected argument"),
        ),
    ];
    assert_eq!(cases.len(), PATH_COMMANDS.len());
    for (args, (renamed_code, renamed_words), (glob_code, glob_words)) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("orders-0");
        common::copy_dir(&src, &dir);
        let renamed = tmp.path().join("renamed.log");
        std::fs::copy(dir.join("00000000000000000000.log"), &renamed).unwrap();
        let before = tree_hash(tmp.path());
        let (code, stdout, stderr) =
            run(&os(args).chain([renamed.as_os_str()]).collect::<Vec<_>>());
        assert_eq!(code, *renamed_code, "{args:?}: {stderr}");
        assert!(
            stdout.contains(renamed_words) || stderr.contains(renamed_words),
            "{args:?}: {stdout}{stderr}"
        );
        let files = common::listing(&dir);
        let (code, _, stderr) = run(&os(args)
            .chain(files.iter().map(|f| f.as_os_str()))
            .collect::<Vec<_>>());
        assert_eq!(code, *glob_code, "{args:?}: {stderr}");
        assert!(stderr.contains(glob_words), "{args:?}: {stderr}");
        assert_eq!(tree_hash(tmp.path()), before, "{args:?}");
    }
}

/// Issue 12, item 7: exit status 1 always says why on stderr, stdout redirected or not.
#[test]
fn exit_1_says_why_on_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path(), "crashed-0");
    let cases: &[(&[&str], &str)] = &[
        (&["verify"], "kseg verify: 1 error(s): 1 × log.torn-tail\n"),
        (
            &["dump"],
            "kseg dump: 1 damaged place(s) found: 1 × log.torn-tail\n",
        ),
        (&["recover"], "kseg recover: 6 file(s) would change; dry run: nothing was written; rerun with --apply to make these changes\n"),
        (&["rebuild-index", "--all"], "kseg rebuild-index: 4 file(s) would change; dry run: nothing was written"),
        (&["retention", "--retention-ms", "1", "--now", NOW], "kseg retention: 7 file(s) would change; dry run: nothing was written"),
        // Not in a log dir: no cleaner-offset-checkpoint among them.
        (&["compact", "--min-cleanable-dirty-ratio", "0", "--now", NOW], "kseg compact: 12 file(s) would change; dry run: nothing was written; rerun with --apply to clean in place, or --out DIR to write a copy"),
    ];
    let before = tree_hash(tmp.path());
    for (args, why) in cases {
        let (code, stdout, stderr) = run(&os(args).chain([dir.as_os_str()]).collect::<Vec<_>>());
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(!stdout.is_empty(), "{args:?}");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    }
    assert_eq!(tree_hash(tmp.path()), before);
}

/// A renamed producer snapshot: the format holds no offset (Kafka's `ProducerStateManager`
/// takes it from the file name only), so it is read with `--base-offset`, or else with the
/// lowest offset its entries allow (one past their highest lastDataOffset), never with the
/// offset of a log that happens to share its stem.
#[test]
fn a_renamed_snapshot_takes_its_offset_from_its_own_entries() {
    let Some(reference) = common::reference_dir() else {
        return;
    };
    let scenario = reference.join("c-transactions");
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(scenario.join("expected-dump.json")).unwrap())
            .unwrap();
    let name = "00000000000000000100.snapshot";
    let bound = expected["files"][name]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["lastDataOffset"].as_i64().unwrap() + 1)
        .max()
        .unwrap();
    assert!(bound <= 100, "{bound}");
    let tmp = tempfile::tempdir().unwrap();
    let input = scenario.join("input/orders-0");
    let copy = tmp.path().join("copy.snapshot");
    std::fs::copy(input.join(name), &copy).unwrap();
    std::fs::copy(
        input.join("00000000000000000201.log"),
        tmp.path().join("copy.log"),
    )
    .unwrap();
    let (code, stdout, stderr) = run(&["dump".as_ref(), copy.as_os_str()]);
    assert_eq!(code, 0, "{stderr}");
    let all = stdout + &stderr;
    assert!(
        all.contains(&format!("read with offset {bound} from its entries")),
        "{all}"
    );
    let (code, stdout, stderr) = run(&[
        "verify".as_ref(),
        "--base-offset".as_ref(),
        "100".as_ref(),
        copy.as_os_str(),
    ]);
    let all = stdout + &stderr;
    assert!(
        all.contains("read with offset 100 from --base-offset"),
        "{all}"
    );
    assert!(!all.contains("offset 201"), "{all}");
    assert!(code <= 1, "{all}");
}

/// `rebuild-index` of a renamed segment reads it as verify and dump do (base offset from its
/// first batch) and plans its indexes beside it under its stem; outside a partition
/// directory `--apply` is refused, nothing written.
#[test]
fn rebuild_index_plans_a_renamed_segment_and_applies_only_in_a_partition() {
    let Some(reference) = common::reference_dir() else {
        return;
    };
    let scenario = reference.join("a-plain-v2");
    let input = scenario.join("input/orders-0");
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("copy.log");
    std::fs::copy(input.join("00000000000000000317.log"), &copy).unwrap();
    // The broker's own (not rebuilt) index, under the renamed stem: rewritten.
    std::fs::copy(
        input.join("00000000000000000317.index"),
        tmp.path().join("copy.index"),
    )
    .unwrap();
    // Copies of the corpus keep its read-only mode.
    for f in common::listing(tmp.path()) {
        let mut perm = std::fs::metadata(&f).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perm.set_readonly(false);
        std::fs::set_permissions(&f, perm).unwrap();
    }
    let (code, stdout, stderr) = run(&["rebuild-index".as_ref(), copy.as_os_str()]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("read with offset 317 from its first batch"),
        "{stdout}"
    );
    // Outside a partition directory the plan is a reading only: --apply is refused, nothing
    // changed (issue 34).
    let (code, stdout, stderr) = run(&[
        "rebuild-index".as_ref(),
        "--apply".as_ref(),
        "--no-backup".as_ref(),
        copy.as_os_str(),
    ]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("not a partition directory"), "{stderr}");
    let names: Vec<String> = common::listing(tmp.path())
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["copy.index", "copy.log"]);
    assert_eq!(
        std::fs::read(tmp.path().join("copy.index")).unwrap(),
        std::fs::read(input.join("00000000000000000317.index")).unwrap()
    );
}

/// Output into a pipe whose reader is gone (`kseg … | head` after head exits) ends quietly:
/// no panic, and the exit code the command gives with its output read, for the commands that
/// judge before they print; `dump` stops at the closed pipe, with 0 (the reader took what it
/// wanted, nothing after was read). The reader is closed before the child starts, so every
/// write meets EPIPE.
#[test]
fn a_closed_pipe_on_stdout_is_no_panic() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let dir = root.join("g-corrupt-middle/input/orders-0");
    for args in [
        &["recover"][..],
        &["recover", "--json"],
        &["verify"],
        &["dump"],
    ] {
        let read = Command::new(env!("CARGO_BIN_EXE_kseg"))
            .args(args)
            .arg(&dir)
            .output()
            .unwrap();
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
            .args(args)
            .arg(&dir)
            .stdout(writer)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        let want = if args[0] == "dump" {
            Some(0)
        } else {
            read.status.code()
        };
        assert_eq!(out.status.code(), want, "{args:?}: {stderr}");
    }
}

/// A partition directory named with a trailing `/`, or as `.` from inside it, reads in
/// recover's words as it was named: `orders-0/<file>` and `./<file>`, not `orders-0//<file>`
/// or `.<file>` (the plan is made on a staged copy, whose paths are rewritten).
#[test]
fn recover_names_files_under_the_directory_as_it_was_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/orders-0"),
        &dir,
    );
    // The sanity check fails on the missing index: its path is in the event's words.
    std::fs::remove_file(dir.join("00000000000000000175.index")).unwrap();
    let index = "00000000000000000175.index does not exist";
    for (cwd, named, expected) in [
        (tmp.path(), "orders-0/", format!("orders-0/{index}")),
        (tmp.path(), "orders-0", format!("orders-0/{index}")),
        (dir.as_path(), ".", format!("./{index}")),
        (dir.as_path(), "./", format!("./{index}")),
    ] {
        for json in [false, true] {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_kseg"));
            cmd.current_dir(cwd).arg("recover");
            if json {
                cmd.arg("--json");
            }
            let out = cmd.arg(named).output().unwrap();
            let stdout = String::from_utf8(out.stdout).unwrap();
            assert!(
                stdout.contains(&format!("offset index {expected}")),
                "recover {named} (json {json}) in {}: {stdout}",
                cwd.display()
            );
        }
    }
}

/// A partition named twice (again, inside its named log dir, through a link, or by one of its
/// files) is read once, with a notice, where it was reported twice and judged a partition in
/// two log dirs (an error); the same partition in two log dirs is still that error.
#[test]
fn a_place_named_twice_is_read_once() {
    let tmp = tempfile::tempdir().unwrap();
    let log_dir = tmp.path().join("logs");
    let fixture = Path::new("testdata/orders/orders-0");
    common::copy_dir(fixture, &log_dir.join("orders-0"));
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&log_dir, &link).unwrap();
    let part = log_dir.join("orders-0");
    let log = part.join("00000000000000000000.log");
    let arg = |p: &Path| p.to_str().unwrap().to_owned();
    let verify_in = |cwd: &Path, paths: &[String]| {
        let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
            .args(["verify", "--json"])
            .args(paths)
            .current_dir(cwd)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        (out.status.code().unwrap(), v, stderr)
    };
    let verify = |paths: &[String]| verify_in(Path::new("."), paths);
    let (code, once, _) = verify(&[arg(&log_dir)]);
    assert_eq!(code, 0);
    // A log dir whose partition is a link to the one above.
    let linked = tmp.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::fs::write(linked.join("recovery-point-offset-checkpoint"), "0\n0\n").unwrap();
    std::os::unix::fs::symlink(&part, linked.join("orders-0")).unwrap();
    for named in [
        vec![arg(&part), arg(&part)],
        vec![arg(&log_dir), arg(&part)],
        vec![arg(&part), arg(&log_dir)],
        vec![arg(&log_dir), arg(&link.join("orders-0"))],
        vec![arg(&log_dir), arg(&log)],
        vec![arg(&log_dir), format!("{}/.", arg(&log_dir))],
        vec![arg(&linked), arg(&linked.join("orders-0"))],
        vec![
            arg(&linked),
            arg(&linked.join("orders-0/00000000000000000000.log")),
        ],
        vec![arg(&linked), arg(&part)],
    ] {
        let (code, v, stderr) = verify(&named);
        assert_eq!(code, 0, "{named:?}: {v}{stderr}");
        let partitions = v["partitions"].as_array().unwrap();
        assert_eq!(partitions.len(), 1, "{named:?}: {v}");
        assert_eq!(v["files_checked"], once["files_checked"], "{named:?}: {v}");
        assert!(stderr.contains("read once, with "), "{named:?}: {stderr}");
    }
    // Named relatively from inside the log dir.
    let (_, v, _) = verify_in(&linked, &[".".into(), "orders-0".into()]);
    assert_eq!(v["partitions"].as_array().unwrap().len(), 1, "{v}");
    // A directory of log dirs: what is left out is said as named.
    let root = tmp.path().join("root");
    common::copy_dir(fixture, &root.join("l1/orders-0"));
    let l1 = root.join("l1");
    for (named, said) in [
        (
            vec![arg(&root), arg(&l1)],
            format!(
                "{}: read once, with {} (in {})",
                arg(&l1),
                arg(&l1),
                arg(&root)
            ),
        ),
        (
            vec![arg(&l1), arg(&root)],
            format!(
                "{} (in {}): read once, with {} (",
                arg(&l1),
                arg(&root),
                arg(&l1)
            ),
        ),
        (
            vec![arg(&root), arg(&root)],
            format!("{}: read once, with {} (", arg(&root), arg(&root)),
        ),
    ] {
        let (_, _, stderr) = verify(&named);
        assert!(stderr.contains(&said), "{named:?}: {stderr}");
        assert_eq!(stderr.matches("read once").count(), 1, "{stderr}");
    }
    // A leftover a walk of its directory does not read, named: read as the file it was by
    // dump; verify judges its partition once (it reads no leftover).
    let gone = part.join("00000000000000000175.log.deleted");
    std::fs::copy(part.join("00000000000000000175.log"), &gone).unwrap();
    let (_, v, stderr) = verify(&[arg(&part), arg(&gone)]);
    assert!(!stderr.contains("read once"), "{stderr}");
    assert!(v.to_string().contains("log.deleted"), "{v}");
    assert_eq!(v["partitions"].as_array().unwrap().len(), 1, "{v}");
    let batches = |args: &[&str]| {
        let (_, out, _) = run(&os(args).collect::<Vec<_>>());
        out.lines().filter(|l| l.starts_with("baseOffset")).count()
    };
    assert_eq!(
        batches(&["dump", &arg(&part), &arg(&gone)]),
        batches(&["dump", &arg(&part)]) + batches(&["dump", &arg(&gone)])
    );
    std::fs::remove_file(&gone).unwrap();
    let (_, stdout, _) = run(&os(&["dump", &arg(&log), &arg(&log)]).collect::<Vec<_>>());
    let (_, single, _) = run(&os(&["dump", &arg(&log)]).collect::<Vec<_>>());
    assert_eq!(stdout, single);
    // Two log dirs that each hold the partition: the broker refuses to start.
    let other = tmp.path().join("other");
    common::copy_dir(fixture, &other.join("orders-0"));
    let (code, v, _) = verify(&[arg(&log_dir), arg(&other)]);
    assert_eq!(code, 1, "{v}");
    assert!(v.to_string().contains("ls.duplicate"), "{v}");
}
