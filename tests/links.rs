//! One policy for links (#15 item 7, docs/repair.md, "Links"): a symbolic or hard link inside a
//! partition directory is read as the file it names by every command (as the broker's
//! `File.isFile` follows links); repairs refuse, with exit 2 naming the link, to change a file
//! through one, and never write outside the partition directory; a planted backup-directory
//! link is refused, not followed.

mod common;

use std::path::{Path, PathBuf};

const NOW: &str = "1730100000000";

fn kseg(args: &[&str], paths: &[&Path]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(args)
        .args(paths)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `scenario`'s partition copied to `<tmp>/logs/orders-0`, with its file `linked` moved to
/// `<tmp>/elsewhere/` and a symbolic link to it in its place.
fn with_symlink(tmp: &Path, root: &Path, scenario: &str, linked: &str) -> (PathBuf, PathBuf) {
    let dir = tmp.join("logs/orders-0");
    common::copy_dir(&root.join(scenario).join("input/orders-0"), &dir);
    let target = tmp.join("elsewhere").join(linked);
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::rename(dir.join(linked), &target).unwrap();
    std::os::unix::fs::symlink(&target, dir.join(linked)).unwrap();
    (dir, target)
}

/// verify, dump and a recovery dry run read a linked active `.log` as the file itself: the
/// same findings and batches as the directory without the link, and recovery plans what it
/// plans without the link (it used to take the link's indexes for orphans and delete them).
#[test]
fn a_symlinked_log_reads_as_its_file() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("plain/orders-0");
    common::copy_dir(&root.join("a-plain-v2/input/orders-0"), &plain);
    let (dir, _) = with_symlink(tmp.path(), &root, "a-plain-v2", "00000000000000001294.log");
    for args in [
        &["verify", "--deep", "--json"][..],
        &["dump", "--json"][..],
        &["recover", "--now", NOW, "--json"][..],
    ] {
        let (code_plain, out_plain, _) = kseg(args, &[&plain]);
        let (code, out, err) = kseg(args, &[&dir]);
        assert_eq!(code, code_plain, "{args:?}: {err}");
        let strip = |s: &str, d: &Path| s.replace(&d.display().to_string(), "DIR");
        assert_eq!(strip(&out, &dir), strip(&out_plain, &plain), "{args:?}");
    }
}

/// A repair that would cut a linked `.log` (a torn tail) refuses, naming the link, and the
/// file it points to keeps its bytes.
#[test]
fn recover_refuses_to_cut_through_a_symlink() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let log = "00000000000000001294.log";
    let (dir, target) = with_symlink(tmp.path(), &root, "f-crash-torn-tail", log);
    let before = std::fs::read(&target).unwrap();
    let listing = common::dir_contents(&tmp.path().join("elsewhere"));
    let (code, _, err) = kseg(&["recover", "--now", NOW], &[&dir]);
    assert_eq!(code, 1, "the dry run plans the cut: {err}");
    let (code, _, err) = kseg(
        &["recover", "--apply", "--no-backup", "--now", NOW],
        &[&dir],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&dir.join(log).display().to_string()) && err.contains("symbolic link"),
        "{err}"
    );
    assert_eq!(std::fs::read(&target).unwrap(), before);
    assert_eq!(common::dir_contents(&tmp.path().join("elsewhere")), listing);
}

/// A hard-linked `.log` is read as a file, but cutting it would cut the other name too: the
/// repair refuses, naming it.
#[test]
fn recover_refuses_to_cut_a_hard_linked_log() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("logs/orders-0");
    common::copy_dir(&root.join("f-crash-torn-tail/input/orders-0"), &dir);
    let log = dir.join("00000000000000001294.log");
    let other = tmp.path().join("other-name.log");
    std::fs::hard_link(&log, &other).unwrap();
    let before = std::fs::read(&other).unwrap();
    let (code, _, err) = kseg(
        &["recover", "--apply", "--no-backup", "--now", NOW],
        &[&dir],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&log.display().to_string()) && err.contains("hard link"),
        "{err}"
    );
    assert_eq!(std::fs::read(&other).unwrap(), before);
    // Without the other name the same repair goes ahead.
    std::fs::remove_file(&other).unwrap();
    let (code, _, err) = kseg(
        &["recover", "--apply", "--no-backup", "--now", NOW],
        &[&dir],
    );
    assert_eq!(code, 0, "{err}");
}

/// Deleting an index reached through a link is refused too (rebuild-index would replace a
/// linked `.index`; retention would delete a linked segment file).
#[test]
fn retention_refuses_to_delete_through_a_symlink() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (dir, target) = with_symlink(
        tmp.path(),
        &root,
        "a-plain-v2",
        "00000000000000000000.index",
    );
    let (code, _, err) = kseg(
        &[
            "retention",
            "--apply",
            "--no-backup",
            "--now",
            NOW,
            "--retention-ms",
            "86400000",
        ],
        &[&dir],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("00000000000000000000.index"), "{err}");
    assert!(target.is_file());
    assert!(
        dir.join("00000000000000000000.log").is_file(),
        "nothing changed"
    );
}

/// A partition directory that is itself a link is read through it, and not repaired.
#[test]
fn a_symlinked_partition_directory_is_not_repaired() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("elsewhere/orders-0");
    common::copy_dir(&root.join("f-crash-torn-tail/input/orders-0"), &real);
    let dir = tmp.path().join("logs/orders-0");
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real, &dir).unwrap();
    let before = common::dir_contents(&real);
    let (code, _, err) = kseg(&["verify"], &[&dir]);
    assert_eq!(code, 1, "verify reads it and finds the torn tail: {err}");
    let (code, _, err) = kseg(
        &["recover", "--apply", "--no-backup", "--now", NOW],
        &[&dir],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(common::dir_contents(&real), before);
}

/// The default backup root `<log dir>.kseg-backup`, planted as a link to somewhere else, is
/// refused: no backup lands outside, nothing changes.
#[test]
fn a_planted_backup_link_is_refused() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("logs/orders-0");
    common::copy_dir(&root.join("f-crash-torn-tail/input/orders-0"), &dir);
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, tmp.path().join("logs.kseg-backup")).unwrap();
    let before = common::dir_contents(&dir);
    let (code, _, err) = kseg(&["recover", "--apply", "--now", NOW], &[&dir]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("logs.kseg-backup") && err.contains("symbolic link"),
        "{err}"
    );
    assert!(std::fs::read_dir(&elsewhere).unwrap().next().is_none());
    assert_eq!(common::dir_contents(&dir), before);
}

/// An entry named like a segment file that does not lead to a file — a link to nowhere, a link
/// to a directory, a directory — is never read: verify and dump report it as a
/// `file.not-regular` finding and go on; a recovery dry run and rebuild-index stop with exit 2
/// naming it and saying what it is; nothing changes. The broker's load skips such an entry
/// (`LogLoader` filters the listing with `File.isFile`) and deletes the indexes of a `.log`
/// that does not `exists()` as orphans
/// (storage/src/main/java/org/apache/kafka/storage/internals/log/LogLoader.java), which for
/// the active segment (case 1) loses it: an error for a link to nowhere, a warning otherwise.
#[test]
fn an_entry_named_like_a_segment_that_is_no_file_is_reported() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let active = "00000000000000001294.log";
    let beyond = "00000000000000005000.log";
    type Plant = fn(&Path, &Path);
    let cases: [(&str, &str, Plant); 4] = [
        // The active segment's link whose file is gone (an unmounted disk).
        (
            active,
            "a symbolic link that leads to no file",
            |dir, tmp| {
                std::fs::remove_file(dir.join("00000000000000001294.log")).unwrap();
                std::os::unix::fs::symlink(
                    tmp.join("gone/00000000000000001294.log"),
                    dir.join("00000000000000001294.log"),
                )
                .unwrap();
            },
        ),
        (
            beyond,
            "a symbolic link that leads to no file",
            |dir, tmp| {
                std::os::unix::fs::symlink(
                    tmp.join("gone/00000000000000005000.log"),
                    dir.join("00000000000000005000.log"),
                )
                .unwrap();
            },
        ),
        (beyond, "a symbolic link to a directory", |dir, tmp| {
            std::fs::create_dir_all(tmp.join("a-dir")).unwrap();
            std::os::unix::fs::symlink(tmp.join("a-dir"), dir.join("00000000000000005000.log"))
                .unwrap();
        }),
        (beyond, "a directory", |dir, _| {
            std::fs::create_dir(dir.join("00000000000000005000.log")).unwrap();
        }),
    ];
    // Names and, for files, bytes: what a run must leave as it was.
    let state = |dir: &Path| -> Vec<(PathBuf, Option<Vec<u8>>)> {
        common::listing(dir)
            .into_iter()
            .map(|p| {
                let file = std::fs::symlink_metadata(&p).unwrap().is_file();
                let bytes = file.then(|| std::fs::read(&p).unwrap());
                (p, bytes)
            })
            .collect()
    };
    for (named, what, plant) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("logs/orders-0");
        common::copy_dir(&root.join("a-plain-v2/input/orders-0"), &dir);
        plant(&dir, tmp.path());
        let before = state(&dir);
        let error = what.ends_with("no file");
        let severity = if error { "error" } else { "warning" };
        for args in [
            &["verify", "--deep"][..],
            &["verify", "--json"][..],
            &["dump"][..],
            &["recover", "--now", NOW][..],
            &["rebuild-index"][..],
        ] {
            let (code, out, err) = kseg(args, &[&dir]);
            let path = dir.join(named).display().to_string();
            let repair = matches!(args[0], "recover" | "rebuild-index");
            let expected = if repair { 2 } else { i32::from(error) };
            assert_eq!(code, expected, "{named} {what}, {args:?}: {out}{err}");
            let said = if repair {
                err.contains("named like a Kafka file")
            } else if args.contains(&"--json") {
                out.contains("\"file.not-regular\"") && out.contains(&format!("\"{severity}\""))
            } else {
                format!("{out}{err}").contains(&format!("{severity}[file.not-regular] {path}"))
            };
            assert!(
                said && format!("{out}{err}").contains(&path)
                    && format!("{out}{err}").contains(what),
                "{named} {what}, {args:?}: {out}{err}"
            );
            assert!(
                state(&dir) == before,
                "{named} {what}, {args:?} changed nothing"
            );
        }
    }
}
