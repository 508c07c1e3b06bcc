//! Paths named on the command line (issue 12, items 3 and 4): nothing to do is an error with
//! exit status 2 naming the path and what was expected, never an empty success; in-place work
//! is refused, writing nothing, outside directories the broker would do it in.

mod common;

use std::path::Path;
use std::process::Command;

fn kseg(args: &[&str], path: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

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
            let want = format!("{}: {problem} (expected {expected})", path.display());
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
