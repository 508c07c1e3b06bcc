//! Repairs a broker host can live with (issue 34): owners and modes kept, sparse backups with
//! room checked, one lock from plan to last write, stale plans stopped, backups into new
//! directories only, refusals outside a partition.

use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

const KSEG: &str = env!("CARGO_BIN_EXE_kseg");

/// A partition `t-0` under `root` as a crashed broker leaves it: a preallocated (sparse)
/// 10 MiB `.index`, a damaged `.timeindex`, no producer snapshot.
fn crashed_partition(root: &Path) -> PathBuf {
    let values: Vec<Vec<u8>> = (0..50).map(|i| format!("value-{i}").into_bytes()).collect();
    let dir = common::write_values(root, "t", &values);
    let index = dir.join("00000000000000000000.index");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&index)
        .unwrap()
        .set_len(10 << 20)
        .unwrap();
    std::fs::write(dir.join("00000000000000000000.timeindex"), [0xffu8; 12]).unwrap();
    for p in common::listing(&dir) {
        if p.extension().is_some_and(|x| x == "snapshot") {
            std::fs::remove_file(p).unwrap();
        }
    }
    dir
}

fn run(args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let out = Command::new(KSEG)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// (owner, group, mode) of every file in `dir`.
fn owners(dir: &Path) -> Vec<(String, u32, u32, u32)> {
    common::listing(dir)
        .iter()
        .map(|p| {
            let m = std::fs::metadata(p).unwrap();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                m.uid(),
                m.gid(),
                m.mode() & 0o7777,
            )
        })
        .collect()
}

fn chown_all(dir: &Path, id: u32, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::os::unix::fs::chown(dir, Some(id), Some(id)).unwrap();
    for p in common::listing(dir) {
        std::os::unix::fs::chown(&p, Some(id), Some(id)).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

fn is_root() -> bool {
    // SAFETY: no arguments.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn every_apply_keeps_owners_and_modes() {
    // CI runs as root; elsewhere the files cannot be given to another user to begin with.
    if !is_root() {
        assert!(std::env::var_os("CI").is_none(), "CI must run as root");
        return;
    }
    for cmd in [
        vec!["recover", "--apply", "--no-backup"],
        vec!["rebuild-index", "--apply", "--no-backup"],
        vec!["compact", "--apply", "--no-backup", "--now", "0"],
    ] {
        let root = tempfile::tempdir().unwrap();
        let dir = crashed_partition(root.path());
        chown_all(&dir, 4242, 0o640);
        let before = owners(&dir);
        let mut args = cmd.clone();
        args.push(s(&dir));
        let (code, err) = run(&args, &[]);
        assert!(code == 0, "{cmd:?}: {code} {err}");
        for (name, uid, gid, mode) in owners(&dir) {
            assert_eq!((uid, gid, mode), (4242, 4242, 0o640), "{cmd:?}: {name}");
        }
        assert!(!before.is_empty());
    }
}

#[test]
fn backups_keep_holes_and_the_dry_run_states_their_size() {
    let root = tempfile::tempdir().unwrap();
    let dir = crashed_partition(root.path());
    let log_bytes: u64 = common::logs(&dir)
        .iter()
        .map(|l| std::fs::metadata(l).unwrap().len())
        .sum();
    let elsewhere = tempfile::tempdir().unwrap();
    let backup = elsewhere.path().join("backup");
    let (code, err) = run(&["recover", "--backup-dir", s(&backup), s(&dir)], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("(backup ") && err.contains("free"), "{err}");
    assert!(!backup.exists(), "a dry run writes no backup");
    let (code, err) = run(
        &["recover", "--apply", "--backup-dir", s(&backup), s(&dir)],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let on_disk: u64 = common::files_under(&backup)
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().blocks() * 512)
        .sum();
    assert!(
        on_disk <= log_bytes + (1 << 20),
        "backup takes {on_disk} bytes on disk"
    );
    // The preallocated index is in the backup at its length, as a hole.
    let index = backup.join("00000000000000000000.index");
    assert_eq!(std::fs::metadata(&index).unwrap().len(), 10 << 20);
}

#[test]
fn a_disk_too_small_refuses_with_nothing_changed() {
    let root = tempfile::tempdir().unwrap();
    let dir = crashed_partition(root.path());
    let before = common::dir_contents(&dir);
    let (code, err) = run(
        &["recover", "--apply", s(&dir)],
        &[("KSEG_TEST_FREE_BYTES", "1000")],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not enough free space"), "{err}");
    assert_eq!(common::dir_contents(&dir), before);
}

/// Whether a `flock` on `dir` is held by another process.
fn flocked(dir: &Path) -> bool {
    let d = std::fs::File::open(dir).unwrap();
    // SAFETY: flock on a descriptor we own; released when `d` closes.
    unsafe { libc::flock(d.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) != 0 }
}

/// Waits for the pause file `name` in `pauses`, then runs `probe` and releases the pause.
fn at_pause(pauses: &Path, name: &str, probe: impl FnOnce()) {
    let f = pauses.join(name);
    let start = Instant::now();
    while !f.exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "no pause {name}");
        std::thread::sleep(Duration::from_millis(5));
    }
    probe();
    std::fs::remove_file(f).unwrap();
}

/// `recover --apply` of a crashed partition under `root`, pausing at every point of the
/// test hook: the partition, the pause directory and the child.
fn paused_recover(root: &Path) -> (PathBuf, PathBuf, std::process::Child) {
    let dir = crashed_partition(root);
    let (pauses, child) = paused(root, &["recover", "--apply", "--no-backup", s(&dir)]);
    (dir, pauses, child)
}

/// kseg with `args`, pausing at every point of the test hook in a new directory under `root`:
/// the pause directory and the child.
fn paused(root: &Path, args: &[&str]) -> (PathBuf, std::process::Child) {
    let pauses = root.join("pauses");
    std::fs::create_dir(&pauses).unwrap();
    let child = Command::new(KSEG)
        .args(args)
        .env("KSEG_TEST_PAUSE_DIR", &pauses)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (pauses, child)
}

#[test]
fn the_lock_spans_plan_to_last_rename_and_excludes_a_second_apply() {
    let root = tempfile::tempdir().unwrap();
    let (dir, pauses, child) = paused_recover(root.path());
    at_pause(&pauses, "locked", || {
        assert!(flocked(&dir), "locked before the plan reads the .log");
        let (code, err) = run(&["recover", "--apply", "--no-backup", s(&dir)], &[]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains(&format!("another kseg, pid {}", child.id())),
            "{err}"
        );
    });
    // Every step, then the end, each released in turn.
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < Duration::from_secs(60));
        let applied = pauses.join("applied");
        if applied.exists() {
            assert!(flocked(&dir), "still locked after the last rename");
            std::fs::remove_file(applied).unwrap();
            break;
        }
        // `applied` may appear after the check above: it is released only there.
        for p in common::listing(&pauses) {
            if p.file_name() != Some("applied".as_ref()) {
                let _ = std::fs::remove_file(p);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!flocked(&dir));
    common::assert_verifies_clean(&dir);
}

#[test]
fn a_file_changed_after_the_plan_stops_the_apply() {
    let root = tempfile::tempdir().unwrap();
    let (dir, pauses, child) = paused_recover(root.path());
    at_pause(&pauses, "locked", || {});
    at_pause(&pauses, "step-0", || {
        // Another writer (not kseg's lock-holding self) grows every index.
        for p in common::listing(&dir) {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            if n.ends_with("index") {
                let f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
                let len = f.metadata().unwrap().len();
                f.set_len(len + 12).unwrap();
            }
        }
    });
    let out = release_all(&pauses, child);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("changed since the plan"), "{err}");
    // Nothing of the other writer's lost: every index still has the bytes it was grown to.
    assert!(common::listing(&dir)
        .iter()
        .all(|p| !p.to_string_lossy().ends_with(".kseg-tmp")));
}

/// Releases every pause of `child` until it ends; its output.
fn release_all(pauses: &Path, mut child: std::process::Child) -> std::process::Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < Duration::from_secs(60));
        for p in common::listing(pauses) {
            let _ = std::fs::remove_file(p);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_planted_link_in_the_backup_dir_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let dir = crashed_partition(root.path());
    let victim = root.path().join("victim.txt");
    std::fs::write(&victim, b"keep me").unwrap();
    let backup = root.path().join("backup");
    std::fs::create_dir(&backup).unwrap();
    std::os::unix::fs::symlink(&victim, backup.join("00000000000000000000.index")).unwrap();
    let before = common::dir_contents(&dir);
    let (code, err) = run(
        &["recover", "--apply", "--backup-dir", s(&backup), s(&dir)],
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    assert_eq!(common::dir_contents(&dir), before);
}

#[test]
fn rebuild_index_apply_refuses_a_file_outside_a_partition() {
    let root = tempfile::tempdir().unwrap();
    let part = crashed_partition(root.path());
    let docs = root.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::copy(
        part.join("00000000000000000000.log"),
        docs.join("server.log"),
    )
    .unwrap();
    std::fs::write(docs.join("server.index"), b"notes").unwrap();
    let (code, err) = run(
        &["rebuild-index", "--apply", s(&docs.join("server.log"))],
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert_eq!(std::fs::read(docs.join("server.index")).unwrap(), b"notes");
    assert!(!docs.join("server.timeindex").exists());
}

/// A log dir under `root` as a broker leaves it (`.lock`, `meta.properties`, checkpoints)
/// holding `t-0`: three segments of keys `k0`..`k4` stamped in 1970 (retention and the
/// cleaner have work), and, `damaged`, a torn write after the last batch and a corrupt
/// `.timeindex` (recovery and rebuild-index have work). The partition directory.
fn log_dir_fixture(root: &Path, damaged: bool) -> PathBuf {
    use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
    use kseg::storage::{CloseMode, Log, LogConfig};
    let log_dir = root.join("data");
    let dir = log_dir.join("t-0");
    let mut log = Log::create(&dir, LogConfig::default(), 0, [9; 16], 1_000).unwrap();
    for s in 0..3i64 {
        if s > 0 {
            log.roll().unwrap();
        }
        let records: Vec<RecordSpec> = (0..5)
            .map(|k| RecordSpec {
                offset: s * 5 + k,
                timestamp: 1000 + s,
                key: Some(format!("k{k}").into_bytes()),
                value: Some(vec![b'v'; 100]),
                headers: vec![],
            })
            .collect();
        let spec = BatchSpec {
            base_offset: s * 5,
            ..Default::default()
        };
        log.append_as_follower(&build_batch(&spec, &records).unwrap())
            .unwrap();
    }
    log.close(CloseMode::Clean).unwrap();
    let cp = |entries: &str| format!("0\n1\n{entries}\n");
    for (name, text) in [
        (".lock", String::new()),
        (
            "meta.properties",
            "version=1\nbroker.id=0\ncluster.id=x\n".to_string(),
        ),
        ("recovery-point-offset-checkpoint", cp("t 0 10")),
        ("replication-offset-checkpoint", cp("t 0 15")),
        ("log-start-offset-checkpoint", cp("t 0 0")),
        ("cleaner-offset-checkpoint", cp("t 0 0")),
    ] {
        std::fs::write(log_dir.join(name), text).unwrap();
    }
    if damaged {
        let last = common::logs(&dir).pop().unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&last)
            .unwrap();
        std::io::Write::write_all(&mut f, &[0x11; 40]).unwrap();
        std::fs::write(dir.join("00000000000000000000.timeindex"), [0xffu8; 12]).unwrap();
    }
    dir
}

/// Every file under `root` (relative name, bytes), sorted.
fn tree(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = common::files_under(root)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p.strip_prefix(root).unwrap().to_path_buf(), bytes)
        })
        .collect();
    v.sort();
    v
}

/// Issue 34, item 7: an I/O error on anything a plan reads fails the command before any
/// change (exit 2, naming the file and the error); it is never taken for a missing file. Each
/// stat, open and read of every file of the log dir, and each listing of its directories,
/// fails in turn (EIO, the test hook), every time or one time alone: the run either
/// never asked for it (and ends as the uninterrupted run does) or fails with nothing changed.
#[test]
fn an_io_error_on_a_plan_input_fails_with_nothing_changed() {
    let commands: [(&[&str], bool); 4] = [
        (&["recover", "--apply", "--no-backup"], true),
        (&["rebuild-index", "--apply", "--no-backup"], true),
        (&["retention", "--apply", "--no-backup"], false),
        (&["compact", "--apply", "--no-backup", "--now", "0"], false),
    ];
    for (cmd, damaged) in commands {
        let fresh = || {
            let root = tempfile::tempdir().unwrap();
            let dir = log_dir_fixture(root.path(), damaged);
            (root, dir)
        };
        let args = |dir: &Path| {
            let mut a: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
            a.push(s(dir).to_string());
            a
        };
        let run_with = |dir: &Path, env: &[(&str, &str)]| {
            let a = args(dir);
            run(&a.iter().map(String::as_str).collect::<Vec<_>>(), env)
        };
        let (root, dir) = fresh();
        let (code, err) = run_with(&dir, &[]);
        assert!(code <= 1, "{cmd:?}: {code} {err}");
        let want = tree(root.path());
        let untouched = tree(fresh().0.path());
        assert_ne!(
            want, untouched,
            "{cmd:?}: the uninterrupted run changes something"
        );
        let (mut hits, mut targets) = (0, Vec::new());
        let log_dir = dir.parent().unwrap().to_path_buf();
        // Each fault always, and the first few times alone (a transient error).
        let ops = [
            "stat", "open", "read", "stat:1", "stat:2", "stat:3", "stat:4", "open:1", "read:1",
        ];
        for p in common::files_under(&log_dir) {
            for op in ops {
                targets.push((p.strip_prefix(&log_dir).unwrap().to_path_buf(), op));
            }
        }
        for op in ["list", "stat", "list:1", "stat:1", "stat:2"] {
            targets.push((PathBuf::from("t-0"), op));
        }
        for (rel, op) in targets {
            let (root, dir) = fresh();
            let target = dir.parent().unwrap().join(&rel);
            let hook = format!("{}:{op}", s(&target));
            let (c, e) = run_with(&dir, &[("KSEG_TEST_FAIL_PATH", &hook)]);
            let what = format!("{cmd:?} with {op} of {} failing", rel.display());
            if c == 2 {
                hits += 1;
                assert!(e.contains("Input/output error"), "{what}: {e}");
                assert!(e.contains(s(&rel)), "{what}: the file is named: {e}");
                assert!(tree(root.path()) == untouched, "{what}: changed");
            } else {
                assert_eq!(c, code, "{what}: {e}");
                assert!(tree(root.path()) == want, "{what}: another result");
            }
        }
        // The segments' data at least is read by every command.
        assert!(hits >= 3, "{cmd:?}: {hits} faults met");
    }
}

/// Issue 34, item 3: the executor checks each file against the one its plan read by inode,
/// size and modification time. Between plan and apply (the pause hook) another writer
/// rewrites every index with other bytes of the same size, or replaces each by a new file
/// with the same bytes and modification time: the apply stops, and what the other writer left
/// is all there.
#[test]
fn a_same_size_rewrite_or_a_replaced_inode_after_the_plan_stops_the_apply() {
    type Change = fn(&Path);
    let rewrite: Change = |p| {
        let mut bytes = std::fs::read(p).unwrap();
        for b in bytes.iter_mut().take(64) {
            *b ^= 0x5a;
        }
        std::fs::write(p, &bytes).unwrap();
    };
    let replace: Change = |p| {
        let m = std::fs::metadata(p).unwrap();
        let new = p.with_extension("new");
        std::fs::copy(p, &new).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&new)
            .unwrap()
            .set_modified(m.modified().unwrap())
            .unwrap();
        std::fs::rename(&new, p).unwrap();
    };
    for (what, change) in [("rewritten", rewrite), ("replaced", replace)] {
        let root = tempfile::tempdir().unwrap();
        let (dir, pauses, child) = paused_recover(root.path());
        let mut left = Vec::new();
        at_pause(&pauses, "locked", || {});
        at_pause(&pauses, "step-0", || {
            for p in common::listing(&dir) {
                if p.to_string_lossy().ends_with("index") {
                    let before = std::fs::metadata(&p).unwrap();
                    change(&p);
                    let after = std::fs::metadata(&p).unwrap();
                    assert_eq!(before.len(), after.len());
                    if what == "replaced" {
                        assert_ne!(before.ino(), after.ino());
                        assert_eq!(before.mtime_nsec(), after.mtime_nsec());
                    }
                }
            }
            left = common::dir_contents(&dir);
        });
        let out = release_all(&pauses, child);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains("changed since the plan"), "{what}: {err}");
        assert_eq!(common::dir_contents(&dir), left, "{what}: nothing lost");
    }
}

/// Issue 34, item 3, for library callers: a plan is carried out only under the lock taken
/// before it was made. Between plan and apply another writer gives the `.timeindex` other
/// bytes of the same size and an older modification time (only its identity tells). A caller
/// that never locks is refused up front; one that locks only after planning is stopped at the
/// first file, which its plan did not read under the lock; one that locked first is stopped by
/// the file's identity. In each case nothing changes.
#[test]
fn a_library_plan_applied_after_a_change_changes_nothing() {
    use kseg::ops::repair::apply::{ApplyOptions, Backup};
    let opts = ApplyOptions {
        backup: Backup::None,
        fail_before_step: None,
        before_step: None,
    };
    for when in ["no lock", "a lock after the plan", "a lock before the plan"] {
        let root = tempfile::tempdir().unwrap();
        let dir = crashed_partition(root.path());
        let timeindex = dir.join("00000000000000000000.timeindex");
        let early = (when == "a lock before the plan").then(|| common::lock(&dir));
        let p = kseg::ops::repair::recover::plan(&dir, &common::recover_options(1_767_225_600_000))
            .unwrap();
        assert!(
            p.changes.iter().any(|c| c.file() == timeindex),
            "{when}: {:?}",
            p.changes
        );
        let then = std::fs::metadata(&timeindex).unwrap();
        std::fs::write(&timeindex, [0xfeu8; 12]).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&timeindex)
            .unwrap()
            .set_modified(then.modified().unwrap() - Duration::from_secs(3600))
            .unwrap();
        assert_eq!(std::fs::metadata(&timeindex).unwrap().len(), then.len());
        let left = common::dir_contents(&dir);
        let late = (when == "a lock after the plan").then(|| common::lock(&dir));
        let err = p.apply(&opts).unwrap_err().to_string();
        let want = match when {
            "no lock" => "made without the partition's lock",
            "a lock after the plan" => "not read under the partition's lock",
            _ => "rewritten: another modification time",
        };
        assert!(err.contains(want), "{when}: {err}");
        assert_eq!(common::dir_contents(&dir), left, "{when}: nothing changed");
        assert!(
            !common::listing(&dir)
                .iter()
                .any(|f| f.to_string_lossy().ends_with(".kseg-tmp")),
            "{when}"
        );
        drop((early, late));
    }
}

/// The lines of `err` stating the space `--apply` would take, one per file system.
fn space_lines(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| l.contains("--apply would take"))
        .collect()
}

/// Issue 34, item 2: the space a repair takes is summed over the partitions of a run, per
/// file system: two partitions with a backup each on the log dir's file system are one share
/// holding both; a backup directory on another file system is a share of its own.
#[test]
fn the_space_of_many_partitions_is_summed_per_file_system() {
    use kseg::ops::repair::apply::{space, Backup, Change};
    let root = tempfile::tempdir().unwrap();
    let t0 = log_dir_fixture(root.path(), true);
    let log_dir = t0.parent().unwrap().to_path_buf();
    let t1 = log_dir.join("t-1");
    common::copy_dir(&t0, &t1);
    // Each partition's last `.log` cut (copied to the backup) and a new 1000-byte file.
    let source = root.path().join("source");
    std::fs::write(&source, vec![7u8; 1000]).unwrap();
    let changes = |dir: &Path| {
        let log = common::logs(dir).pop().unwrap();
        let size_before = std::fs::metadata(&log).unwrap().len();
        vec![
            Change::Truncate {
                file: log,
                size_before,
                size_after: size_before - 40,
            },
            Change::Write {
                file: dir.join("new"),
                source: source.clone(),
                size_before: None,
                size_after: 1000,
            },
        ]
    };
    let (c0, c1) = (changes(&t0), changes(&t1));
    let backups = root.path().join("data.kseg-backup");
    let (b0, b1) = (
        Backup::Dir(backups.join("t-0")),
        Backup::Dir(backups.join("t-1")),
    );
    let one = space([(t0.as_path(), c0.as_slice(), &b0)]).unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].dir, t0);
    assert_eq!(one[0].new_bytes, 1000);
    assert!(one[0].backup_bytes > 0);
    let both = space([
        (t0.as_path(), c0.as_slice(), &b0),
        (t1.as_path(), c1.as_slice(), &b1),
    ])
    .unwrap();
    assert_eq!(both.len(), 1, "{both:?}");
    assert_eq!(both[0].dir, log_dir);
    assert_eq!(both[0].new_bytes, 2000);
    assert_eq!(both[0].backup_bytes, 2 * one[0].backup_bytes);
    // A backup on /dev/shm: its own share where that is another file system.
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let elsewhere = Backup::Dir(shm.path().join("backup"));
    let split = space([(t0.as_path(), c0.as_slice(), &elsewhere)]).unwrap();
    let other_fs =
        std::fs::metadata(shm.path()).unwrap().dev() != std::fs::metadata(&t0).unwrap().dev();
    if other_fs {
        assert_eq!(split.len(), 2, "{split:?}");
        assert_eq!((split[0].new_bytes, split[0].backup_bytes), (1000, 0));
        assert_eq!(split[1].dir, shm.path().join("backup"));
        assert_eq!(split[1].backup_bytes, one[0].backup_bytes);
    } else {
        assert_eq!(split.len(), 1, "{split:?}");
        assert_eq!(split[0].needed(), one[0].needed());
    }
}

/// Issue 34, item 2: the dry runs of `recover` and `rebuild-index` over a log dir, and of
/// `retention`, state the space their `--apply` would take: one line per file system touched
/// (here one: the log dir's, naming it), the backup's bytes on disk and the free space.
#[test]
fn log_dir_and_retention_dry_runs_state_the_space() {
    let root = tempfile::tempdir().unwrap();
    let t0 = log_dir_fixture(root.path(), true);
    let log_dir = t0.parent().unwrap().to_path_buf();
    common::copy_dir(&t0, &log_dir.join("t-1"));
    for cmd in ["recover", "rebuild-index"] {
        let (code, err) = run(&[cmd, s(&log_dir)], &[]);
        assert_eq!(code, 1, "{cmd}: {err}");
        let lines = space_lines(&err);
        assert_eq!(lines.len(), 1, "{cmd}: {err}");
        assert!(
            lines[0].starts_with(&format!("{}: ", log_dir.display())),
            "{cmd}: {err}"
        );
        assert!(
            lines[0].contains("on disk") && lines[0].contains("free"),
            "{cmd}: {err}"
        );
        let (code, err) = run(&[cmd, "--no-backup", s(&log_dir)], &[]);
        assert_eq!(code, 1, "{cmd}: {err}");
        assert!(
            space_lines(&err)[0].contains("(backup 0 B on disk"),
            "{cmd}: {err}"
        );
    }
    let clean = tempfile::tempdir().unwrap();
    let dir = log_dir_fixture(clean.path(), false);
    let (code, err) = run(&["retention", "--retention-ms", "1000", s(&dir)], &[]);
    assert_eq!(code, 1, "{err}");
    let lines = space_lines(&err);
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with(&format!("{}: ", dir.display())),
        "{err}"
    );
    assert!(
        lines[0].contains("on disk") && lines[0].contains("free"),
        "{err}"
    );
}

/// Issue 34, item 3: where the plan expects no file (a new file's name, a rename's
/// destination), a file another writer created after the plan stops the apply (exit 2)
/// before it is replaced: the other writer's bytes are all there, nothing more changed.
#[test]
fn a_file_created_where_the_plan_writes_or_renames_stops_the_apply() {
    let planted = b"another writer's file".to_vec();
    // `recover` creates the producer snapshot the crashed partition lacks.
    let root = tempfile::tempdir().unwrap();
    let dir = crashed_partition(root.path());
    let out = Command::new(KSEG)
        .args(["recover", "--json", s(&dir)])
        .output()
        .unwrap();
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let new_files: Vec<PathBuf> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["action"] == "write" && c["sizeBefore"].is_null())
        .map(|c| PathBuf::from(c["file"].as_str().unwrap()))
        .collect();
    assert!(!new_files.is_empty(), "{plan}");
    let (pauses, child) = paused(root.path(), &["recover", "--apply", "--no-backup", s(&dir)]);
    at_pause(&pauses, "locked", || {});
    at_pause(&pauses, "step-0", || {
        for f in &new_files {
            std::fs::write(f, &planted).unwrap();
        }
    });
    let out = release_all(&pauses, child);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("absent when planned"), "{err}");
    for f in &new_files {
        assert!(std::fs::read(f).unwrap() == planted, "{}", f.display());
    }
    assert!(common::listing(&dir)
        .iter()
        .all(|p| !p.to_string_lossy().ends_with(".kseg-tmp")));

    // `retention` renames each segment's files to `.deleted` before it deletes them.
    let root = tempfile::tempdir().unwrap();
    let dir = log_dir_fixture(root.path(), false);
    let log = dir.join("00000000000000000000.log");
    let deleted = dir.join("00000000000000000000.log.deleted");
    let (pauses, child) = paused(
        root.path(),
        &[
            "retention",
            "--apply",
            "--no-backup",
            "--retention-ms",
            "1000",
            s(&dir),
        ],
    );
    at_pause(&pauses, "locked", || {});
    at_pause(&pauses, "step-0", || {
        std::fs::write(&deleted, &planted).unwrap()
    });
    let out = release_all(&pauses, child);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the rename's destination is there"), "{err}");
    assert_eq!(std::fs::read(&deleted).unwrap(), planted);
    assert!(log.exists(), "the segment is not renamed over it");
}

/// Issue 34, item 3: two applies started at the same moment on a partition without a log dir
/// (no `.lock`: the partition directory's own lock is all that excludes them), round after
/// round: one works, the other refuses naming the holder (or finds nothing left to do), and
/// the partition ends as one apply alone leaves it, every record there.
#[test]
fn two_applies_at_once_without_a_log_dir_lose_nothing() {
    let root = tempfile::tempdir().unwrap();
    let source = |damaged: bool| {
        let at = root.path().join(format!("source-{damaged}"));
        let dir = log_dir_fixture(&at, damaged);
        let plain = at.join("plain").join("t-0");
        common::copy_dir(&dir, &plain);
        assert!(!plain.parent().unwrap().join(".lock").exists());
        plain
    };
    let cases: [(&[&str], bool); 2] = [
        (&["recover", "--apply", "--no-backup"], true),
        (&["compact", "--apply", "--no-backup", "--now", "0"], false),
    ];
    for (cmd, damaged) in cases {
        let from = source(damaged);
        let apply = |dir: &Path| {
            Command::new(KSEG)
                .args(cmd)
                .arg(dir)
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let want = {
            let dir = root.path().join(format!("alone-{damaged}")).join("t-0");
            common::copy_dir(&from, &dir);
            let out = apply(&dir).wait_with_output().unwrap();
            assert!(out.status.success(), "{cmd:?}");
            common::records(&dir)
        };
        assert!(!want.is_empty());
        for round in 0..20 {
            let dir = root
                .path()
                .join(format!("round-{damaged}-{round}"))
                .join("t-0");
            common::copy_dir(&from, &dir);
            let (a, b) = (apply(&dir), apply(&dir));
            let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
            for out in &outs {
                let err = String::from_utf8_lossy(&out.stderr);
                match out.status.code() {
                    Some(0) => {}
                    Some(2) => assert!(err.contains("locked by another kseg"), "{cmd:?}: {err}"),
                    other => panic!("{cmd:?} round {round}: exit {other:?}: {err}"),
                }
            }
            assert!(
                outs.iter().any(|o| o.status.success()),
                "{cmd:?} round {round}"
            );
            assert!(
                common::records(&dir) == want,
                "{cmd:?} round {round}: records lost"
            );
            common::assert_verifies_clean(&dir);
        }
    }
}
