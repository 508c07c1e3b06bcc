//! The one crash-safe executor for repairs: a plan of file changes is carried out only when no
//! broker holds the log directory, after every affected file and the plan itself are copied to
//! a backup directory; each write goes to a temporary file in the same directory, is fsynced,
//! renamed into place, and the directory fsynced.
//!
//! Order matters for a rerun after a crash: later segments go first (highest offset first),
//! then logs are cut, then indexes, snapshots and checkpoints are written. At every point the
//! directory is one that recovery turns into the same result.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::storage::files::{file_len, materialize, same_prefix, Reader, Staging};

/// Suffix of the executor's temporary files (removed by the next run if left behind).
pub const TMP_SUFFIX: &str = ".kseg-tmp";
/// Suffix of the default backup root, `<log dir>.kseg-backup`, beside the log dir.
pub const BACKUP_ROOT_SUFFIX: &str = ".kseg-backup";
/// The plan the executor records in every backup directory, beside the files' copies.
pub const BACKUP_PLAN_FILE_NAME: &str = "plan.json";
/// Kafka's lock file in every log directory.
pub const LOCK_FILE_NAME: &str = ".lock";

/// One file change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Change {
    /// The file gets the bytes of `source` (created if it does not exist).
    Write {
        file: PathBuf,
        #[serde(skip)]
        source: PathBuf,
        size_before: Option<u64>,
        size_after: u64,
    },
    /// The file is cut to `size_after` bytes (a `.log` losing its invalid tail).
    Truncate {
        file: PathBuf,
        size_before: u64,
        size_after: u64,
    },
    Delete {
        file: PathBuf,
        size_before: u64,
    },
    /// The file `from` gets the name `to` (the broker's `.cleaned` -> `.swap` -> final and
    /// `.deleted` dance). Done already when `from` is gone and `to` exists, so a rerun of the
    /// same plan after a failure skips it.
    Rename {
        from: PathBuf,
        to: PathBuf,
        size: u64,
    },
}

/// How many files `changes` touch.
pub fn files_changed(changes: &[Change]) -> usize {
    changes
        .iter()
        .map(Change::file)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

impl Change {
    /// The change's `action`, as its JSON names it.
    pub fn action(&self) -> &'static str {
        match self {
            Change::Write { .. } => "write",
            Change::Truncate { .. } => "truncate",
            Change::Delete { .. } => "delete",
            Change::Rename { .. } => "rename",
        }
    }

    pub fn file(&self) -> &Path {
        match self {
            Change::Write { file, .. }
            | Change::Truncate { file, .. }
            | Change::Delete { file, .. } => file,
            Change::Rename { from, .. } => from,
        }
    }

    /// Execution order: deletions of segment data by descending offset, then the renames of
    /// `.swap` files, then cuts, then
    /// writes and renames (in the order given: a rename may take a file written just before),
    /// then other deletions. Plans whose order is the protocol itself (compaction's swap) are
    /// not sorted.
    fn rank(&self) -> (u8, std::cmp::Reverse<i64>) {
        let offset = self
            .file()
            .file_name()
            .and_then(|n| crate::format::names::parse_offset_prefix(&n.to_string_lossy()))
            .unwrap_or(i64::MIN);
        let segment_file = self.file().file_name().is_some_and(|n| {
            crate::format::names::classify(&n.to_string_lossy()).is_segment_file()
        });
        match self {
            Change::Delete { .. } if segment_file => (0, std::cmp::Reverse(offset)),
            // An interrupted swap completed as the loader completes it: once the files it
            // replaces are gone, before anything else changes.
            Change::Rename { from, .. }
                if from
                    .to_string_lossy()
                    .ends_with(crate::format::names::SWAP_FILE_SUFFIX) =>
            {
                (0, std::cmp::Reverse(i64::MIN))
            }
            Change::Truncate { .. } => (1, std::cmp::Reverse(offset)),
            Change::Write { .. } | Change::Rename { .. } => (2, std::cmp::Reverse(0)),
            Change::Delete { .. } => (3, std::cmp::Reverse(0)),
        }
    }
}

/// Where the backup goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backup {
    None,
    Dir(PathBuf),
}

#[derive(Debug, Clone)]
pub struct ApplyOptions {
    pub backup: Backup,
    /// Fault injection for tests: fail before step `n` (backup copies and file changes count).
    pub fail_before_step: Option<usize>,
    /// For tests: called before each step with its number, while the log dir's lock is held.
    pub before_step: Option<fn(usize)>,
}

/// The executor's temporary files left in `dir` by an interrupted run, finished or not, as
/// deletions: their renames never happened, so the files they were to replace still hold what
/// a rerun plans from, and the rerun writes them again.
pub fn leftover_tmp_files(dir: &Path) -> Result<Vec<Change>> {
    let mut out = Vec::new();
    for e in crate::storage::files::read_dir(dir)? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        if e.file_name().to_string_lossy().ends_with(TMP_SUFFIX) {
            let file = e.path();
            out.push(Change::Delete {
                size_before: file_len(&file)?,
                file,
            });
        }
    }
    out.sort_by(|a, b| a.file().cmp(b.file()));
    Ok(out)
}

/// The leftovers of an interrupted run in `dir` (kseg's or the broker's): the executor's
/// temporary files, the cleaner's `.cleaned` and `.swap` files, `.deleted` files, and index
/// files whose `.log` is gone (a deletion interrupted between a segment's renames). The
/// broker's loader removes or completes each at start-up (`LogLoader`:
/// `removeTempFilesAndCollectSwapFiles`, and an orphaned index file is deleted), and so does a
/// rerun of the kseg command that left them.
pub fn interrupted_leftovers(dir: &Path) -> Result<Vec<PathBuf>> {
    use crate::format::names::{
        classify, log_file_name, FileKind, CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX,
        SWAP_FILE_SUFFIX,
    };
    let mut names = Vec::new();
    for e in crate::storage::files::read_dir(dir)? {
        names.push(e.map_err(|e| Error::io(dir, e))?.file_name());
    }
    let bases: std::collections::BTreeSet<i64> = names
        .iter()
        .filter_map(|n| match classify(&n.to_string_lossy()) {
            FileKind::Log { base_offset } => Some(base_offset),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for n in &names {
        let n = n.to_string_lossy();
        let kind = classify(&n);
        let orphan = kind.is_segment_file()
            && kind
                .offset()
                .is_some_and(|base| !dir.join(log_file_name(base)).exists());
        // `ProducerStateManager.removeStraySnapshots`: a snapshot at no segment's base and
        // below the last one (a deleted or replaced segment's, whose deletion was cut short).
        let stray = matches!(kind, FileKind::ProducerSnapshot { offset }
            if !bases.contains(&offset) && bases.last().is_some_and(|&last| offset < last));
        if orphan
            || stray
            || [
                CLEANED_FILE_SUFFIX,
                SWAP_FILE_SUFFIX,
                DELETED_FILE_SUFFIX,
                TMP_SUFFIX,
            ]
            .iter()
            .any(|s| n.ends_with(s))
        {
            out.push(dir.join(&*n));
        }
    }
    out.sort();
    Ok(out)
}

/// Whether the directory `d` is a kseg backup: a backup root (named `…` + [`BACKUP_ROOT_SUFFIX`])
/// or one backup (a directory holding the executor's [`BACKUP_PLAN_FILE_NAME`]). Moved into a
/// log dir or a partition directory it is a stray: `verify` reports it.
pub fn is_backup_dir(d: &Path) -> bool {
    d.file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(BACKUP_ROOT_SUFFIX))
        || d.join(BACKUP_PLAN_FILE_NAME).is_file()
}

/// Sorts changes into the executor's order.
pub fn order_changes(changes: &mut [Change]) {
    changes.sort_by_key(Change::rank);
}

/// A whole-file write lock request on `file` for `fcntl`.
fn write_lock_request() -> libc::flock {
    // SAFETY: a zeroed flock is a valid value: whole file, from the start.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock
}

/// The process holding a POSIX (fcntl) lock on `log_dir/.lock`, as a running broker does.
/// `flock` locks are not seen by the broker and are not reported.
pub fn lock_holder(log_dir: &Path) -> Result<Option<i32>> {
    let path = log_dir.join(LOCK_FILE_NAME);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let mut lock = write_lock_request();
    // SAFETY: the descriptor is open for the duration of the call; `lock` is a valid flock.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut lock) };
    if rc != 0 {
        return Err(Error::io(&path, std::io::Error::last_os_error()));
    }
    Ok((lock.l_type != libc::F_UNLCK as libc::c_short).then_some(lock.l_pid))
}

/// What a process holding a lock is, for the refusal: another kseg, a broker, or (an OFD
/// lock, which reports no pid) some process.
fn holder_name(pid: i32) -> String {
    if pid <= 0 {
        return "a process (OFD lock)".to_string();
    }
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if comm.trim() == "kseg" {
        format!("another kseg, pid {pid}")
    } else {
        format!("a broker, pid {pid}")
    }
}

/// The pid holding a `flock` on the inode of `f`, from `/proc/locks`.
fn flock_holder(f: &File) -> Option<i32> {
    use std::os::unix::fs::MetadataExt;
    let m = f.metadata().ok()?;
    let (major, minor) = (libc::major(m.dev()), libc::minor(m.dev()));
    let id = format!("{major:02x}:{minor:02x}:{}", m.ino());
    std::fs::read_to_string("/proc/locks")
        .ok()?
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.len() > 5 && w[1] == "FLOCK" && w[5] == id)
        .and_then(|w| w[4].parse().ok())
}

/// The locks this process holds, by what is locked: a POSIX lock is the process's, and closing
/// any descriptor of its file drops it, so a lock held is never taken (nor probed) again.
static HELD: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// A partition's lock for an `--apply`, held from before its plan is read to after the last
/// rename and directory fsync (until dropped).
#[derive(Debug)]
pub struct PartitionLock {
    key: PathBuf,
    _file: File,
}

impl Drop for PartitionLock {
    fn drop(&mut self) {
        if let Ok(mut held) = HELD.lock() {
            held.retain(|k| *k != self.key);
        }
    }
}

/// Takes the lock an `--apply` on the partition directory `dir` holds: its log dir's `.lock`
/// as the broker takes it (a POSIX write lock, `FileChannel.tryLock`), so a broker starting
/// meanwhile fails as against another broker; where there is no `.lock` (a copy, or no log
/// dir), a `flock` on the partition directory itself, which the broker ignores and which
/// leaves no file behind. Taken again in this process, it is the lock held already. Another
/// holder: refused naming it, or waited for (`wait`).
pub fn lock_partition(dir: &Path, wait: bool) -> Result<Option<PartitionLock>> {
    let dir_real = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, e))?;
    let lock_path = parent(&dir_real).join(LOCK_FILE_NAME);
    // The registry first: opening and closing the held `.lock` again would drop its lock.
    let mut held = HELD
        .lock()
        .map_err(|_| Error::invalid(dir, "lock registry poisoned"))?;
    if held.contains(&lock_path) || held.contains(&dir_real) {
        return Ok(None);
    }
    let file = match OpenOptions::new().read(true).write(true).open(&lock_path) {
        Ok(f) => Some(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(&lock_path, e)),
    };
    let key = if file.is_some() {
        lock_path.clone()
    } else {
        dir_real.clone()
    };
    let (file, refused) = match file {
        Some(f) => {
            let lock = write_lock_request();
            let cmd = if wait { libc::F_SETLKW } else { libc::F_SETLK };
            // SAFETY: the descriptor is open; `lock` is a valid flock.
            if unsafe { libc::fcntl(f.as_raw_fd(), cmd, &lock) } == 0 {
                (f, None)
            } else {
                let who = lock_holder(parent(&dir_real))?;
                (
                    f,
                    Some(who.map_or_else(|| "another process".into(), holder_name)),
                )
            }
        }
        None => {
            let d = File::open(&dir_real).map_err(|e| Error::io(dir, e))?;
            let op = libc::LOCK_EX | if wait { 0 } else { libc::LOCK_NB };
            // SAFETY: flock on a descriptor we own.
            if unsafe { libc::flock(d.as_raw_fd(), op) } == 0 {
                (d, None)
            } else {
                let who = flock_holder(&d).map_or_else(|| "another process".into(), holder_name);
                (d, Some(who))
            }
        }
    };
    if let Some(who) = refused {
        return Err(Error::invalid(
            &key,
            format!(
                "locked by {who}; stop it or rerun with --wait; kseg works on a partition \
                 only while nothing else does; nothing was changed"
            ),
        ));
    }
    held.push(key.clone());
    Ok(Some(PartitionLock { key, _file: file }))
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// The broker takes every directory of a log dir for a partition directory (and refuses to
/// start on one not named like it): a directory kseg writes (`what`: a backup, a salvage)
/// must not be there, nor inside the partition directory `dir`.
pub fn refuse_inside_log_dir(target: &Path, dir: &Path, what: &str) -> Result<()> {
    let partition_dir = resolved(dir)?;
    let log_dir = parent(&partition_dir);
    if resolved(target)?.starts_with(log_dir) {
        return Err(Error::invalid(
            target,
            format!(
                "the {what} is inside the log dir {}: the broker would take it for a \
                 partition directory; choose one outside the log dir; nothing was changed",
                log_dir.display()
            ),
        ));
    }
    Ok(())
}

/// `p` absolute, with symlinks resolved as far as it exists (a backup directory may not yet).
fn resolved(p: &Path) -> Result<PathBuf> {
    let abs = std::path::absolute(p).map_err(|e| Error::io(p, e))?;
    let mut missing = Vec::new();
    let mut existing = abs.as_path();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return Ok(missing.iter().rev().fold(real, |acc, n| acc.join(n)));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(up), Some(name)) => {
                missing.push(name.to_os_string());
                existing = up;
            }
            _ => return Ok(abs),
        }
    }
}

fn parent(p: &Path) -> &Path {
    p.parent().unwrap_or(Path::new("."))
}

/// The executor's temporary file for `to`, beside it.
fn tmp_path(to: &Path) -> PathBuf {
    let mut tmp_name = to.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(TMP_SUFFIX);
    to.with_file_name(tmp_name)
}

/// `from`'s bytes and mtime in the temporary file beside `to`, not yet synced; returns the
/// temporary file. The copy keeps the source's modification time: a rewritten segment keeps
/// the one the engine gave it (a split segment has the original's, which retention falls back
/// on). A failed write (the disk full) removes its temporary file; a crash leaves it, for the
/// rerun's plan to remove. Two of the executor's steps lie inside: half the bytes written (a
/// crash there leaves a partial temporary file) and the rest written (where an injected fault
/// is the disk running full).
fn write_tmp(from: &Path, to: &Path, owner: Owner, steps: &mut Steps) -> Result<PathBuf> {
    let tmp = tmp_path(to);
    // A source held in memory (most new files of a plan over many segments) is answered and
    // copied from its record, no file opened.
    let (len, mtime) = crate::storage::files::len_and_mtime(from)?;
    // An empty file (a rebuilt index with no entries, most of a plan over many empty
    // segments) is a create: no source to open, no bytes to copy.
    let mut source = if len > 0 {
        Some(crate::storage::files::open_bytes(from)?)
    } else {
        None
    };
    let mut out = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    if let Err(e) = set_owner(&out, &tmp, owner) {
        drop(out);
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    let mut copy = |n: Option<u64>, out: &mut File| match source.as_mut() {
        // A file's copy stays the kernel's (`copy_file_range`).
        Some(Reader::File(s)) => match n {
            Some(n) => std::io::copy(&mut s.take(n), out),
            None => std::io::copy(s, out),
        },
        Some(held) => match n {
            Some(n) => std::io::copy(&mut held.take(n), out),
            None => std::io::copy(held, out),
        },
        None => Ok(0),
    };
    let written = copy(Some(len / 2), &mut out)
        .map_err(|e| Error::io(&tmp, e))
        .and_then(|_| steps.next(&tmp))
        .and_then(|()| {
            steps
                .next_write(&tmp)
                .and_then(|()| copy(None, &mut out))
                .and_then(|_| out.set_modified(mtime))
                .map_err(|e| Error::io(&tmp, e))
        });
    match written {
        Err(e @ Error::Io { .. }) => {
            drop(out);
            // Best effort: the error that stopped the write is the one to report.
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
        other => other.map(|()| tmp),
    }
}

/// Copies each `from` to its `to`, a run of writes into one directory (one file, or a plan
/// rewriting the indexes of many segments): every temporary file written ([`write_tmp`]),
/// then all made durable ([`sync_files`]), then each renamed in the plan's order (the step
/// before each rename: the temporary file complete but not renamed) and the directory fsynced
/// once. Crash safety is that of one write at a time: no rename happens before every
/// temporary file is on disk, a crash before a rename leaves a temporary file for the rerun's
/// plan to remove, and the renames of one directory reach the file system's journal in the
/// order they were made (ext4's and XFS's journals commit in order), so a crash among them
/// leaves a prefix of the plan done, as one fsync of the directory per rename would. The disk
/// running full removes the temporary files of the run.
fn replace_files(
    writes: &[(&Path, &Path)],
    planned: &[Change],
    owners: &mut Owners,
    steps: &mut Steps,
) -> Result<()> {
    let mut tmps = Vec::with_capacity(writes.len());
    for (&(from, to), c) in writes.iter().zip(planned) {
        steps.next(to)?;
        if let Err(e) = check_unchanged(c) {
            // The temporary files written so far are this run's alone.
            for t in &tmps {
                let _ = std::fs::remove_file(t);
            }
            return Err(e);
        }
        let written = owners
            .for_file(to)
            .and_then(|owner| write_tmp(from, to, owner, steps))
            .map(|tmp| tmps.push(tmp));
        remove_on_io_error(written, &tmps)?;
    }
    let dir = parent(writes[0].1);
    remove_on_io_error(sync_files(dir, &tmps), &tmps)?;
    for (tmp, &(_, to)) in tmps.iter().zip(writes) {
        steps.next(tmp)?;
        std::fs::rename(tmp, to).map_err(|e| Error::io(to, e))?;
    }
    sync_dir(dir)
}

/// Files above which one `syncfs` beats an fsync of each (about a millisecond apiece here);
/// below it, the fsyncs, since `syncfs` also writes out whatever else is dirty on the disk.
const SYNCFS_FROM_FILES: usize = 32;

/// `r`, the temporary files `tmps` removed first when it is an I/O error (the disk full: best
/// effort, the error that stopped the run is the one to report). An injected crash leaves them.
fn remove_on_io_error(r: Result<()>, tmps: &[PathBuf]) -> Result<()> {
    if let Err(Error::Io { .. }) = r {
        for t in tmps {
            let _ = std::fs::remove_file(t);
        }
    }
    r
}

/// Makes the files `files` (on the file system of `dir`) durable: an fsync of each, or for
/// many, one `syncfs` (the fsyncs where it fails).
fn sync_files(dir: &Path, files: &[PathBuf]) -> Result<()> {
    if files.len() >= SYNCFS_FROM_FILES {
        let d = File::open(dir).map_err(|e| Error::io(dir, e))?;
        // SAFETY: syncfs on a descriptor we own.
        if unsafe { libc::syncfs(d.as_raw_fd()) } == 0 {
            return Ok(());
        }
    }
    files.iter().try_for_each(|f| {
        File::open(f)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io(f, e))
    })
}

/// The one policy for links (docs/repair.md, "Links"): commands read a symbolic or hard link inside a
/// partition directory as the file it names, but a repair changes only files that are the
/// partition directory's (or its log dir's checkpoints) alone. Refused, before anything
/// changes: a partition directory that is itself a symbolic link, a change to a symbolic link
/// (writing, cutting, renaming or deleting through it would change a file elsewhere, or leave
/// the link's target as it was while the directory says otherwise), a file outside the
/// partition directory and its log dir, and cutting a file with other hard links (it would cut
/// them all; a write replaces the name only, leaving the other names their bytes).
fn check_links(dir: &Path, changes: &[Change]) -> Result<()> {
    let is_link = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_symlink());
    let refuse = |p: &Path, why: &str| {
        Err(Error::invalid(
            p,
            format!("{why}; kseg does not change files through links; nothing was changed"),
        ))
    };
    if is_link(dir) {
        return refuse(dir, "the partition directory is a symbolic link");
    }
    // "" (a relative name's parent) is ".".
    let dir_of = |p: &Path| match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (dir, log_dir) = (
        std::path::absolute(dir).map_err(|e| Error::io(dir, e))?,
        std::path::absolute(dir_of(dir)).map_err(|e| Error::io(dir, e))?,
    );
    // The directories met last, as given and absolute: a plan's files lie in one or two
    // directories, so each is made absolute once, not once per file.
    let mut last_dir: Option<(PathBuf, PathBuf)> = None;
    for c in changes {
        let files = match c {
            Change::Rename { from, to, .. } => vec![from, to],
            Change::Write { file, .. }
            | Change::Truncate { file, .. }
            | Change::Delete { file, .. } => vec![file],
        };
        for f in files {
            if is_link(f) {
                return refuse(f, "a symbolic link");
            }
            let given = dir_of(f);
            let p = match &last_dir {
                Some((g, abs)) if *g == given => abs.clone(),
                _ => {
                    let abs = std::path::absolute(&given).map_err(|e| Error::io(f, e))?;
                    last_dir = Some((given, abs.clone()));
                    abs
                }
            };
            if p != dir && p != log_dir {
                return refuse(f, "outside the partition directory and its log dir");
            }
        }
        if let Change::Truncate { file, .. } = c {
            use std::os::unix::fs::MetadataExt;
            let links = std::fs::metadata(file).map_or(1, |m| m.nlink());
            if links > 1 {
                return refuse(
                    file,
                    &format!(
                        "a hard link ({links} names): cutting it would cut the other names too"
                    ),
                );
            }
        }
    }
    Ok(())
}

/// A repair changes a partition directory only: a plan over a file beside non-Kafka files
/// (`rebuild-index docs/server.log` would write `docs/server.index`) is a reading, not a
/// repair.
fn refuse_non_partition(dir: &Path) -> Result<()> {
    let real = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, e))?;
    let name = real.file_name().unwrap_or_default().to_string_lossy();
    if crate::format::names::parse_partition_dir(&name).is_none() {
        return Err(Error::invalid(
            dir,
            "not a partition directory (<topic>-<partition>): --apply changes Kafka files in \
             a partition directory only; nothing was changed",
        ));
    }
    Ok(())
}

/// Refuses files and directories the executor could not change, before anything changes.
fn check_writable(changes: &[Change]) -> Result<()> {
    // The directory of the change before: a plan's files lie in one or two directories.
    let mut checked_dir: Option<&Path> = None;
    for c in changes {
        let f = c.file();
        let dir = parent(f);
        if checked_dir != Some(dir) {
            let dir_meta = std::fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
            if dir_meta.permissions().readonly() {
                return Err(Error::invalid(
                    dir,
                    "the directory is read-only; nothing was changed",
                ));
            }
            checked_dir = Some(dir);
        }
        if let Ok(m) = std::fs::metadata(f) {
            if m.permissions().readonly()
                && !matches!(c, Change::Delete { .. } | Change::Rename { .. })
            {
                return Err(Error::invalid(
                    f,
                    "the file is read-only; nothing was changed",
                ));
            }
        }
    }
    Ok(())
}

/// The owner, group and permission bits a file the executor writes must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Owner {
    uid: u32,
    gid: u32,
    mode: u32,
}

impl Owner {
    fn of(m: &std::fs::Metadata) -> Owner {
        use std::os::unix::fs::MetadataExt;
        Owner {
            uid: m.uid(),
            gid: m.gid(),
            mode: m.mode() & 0o7777,
        }
    }
}

/// What each written file must be owned by: a rewritten file keeps its own owner, group and
/// mode (a broker running as `kafka` opens its indexes read-write, so a repair run with sudo
/// must not leave them root's); a new file takes those of its directory's Kafka files, or the
/// directory's owner with its permission bits minus execute. One answer per directory,
/// looked up once.
#[derive(Default)]
struct Owners {
    by_dir: std::collections::HashMap<PathBuf, Owner>,
}

impl Owners {
    fn for_file(&mut self, file: &Path) -> Result<Owner> {
        match std::fs::symlink_metadata(file) {
            Ok(m) => return Ok(Owner::of(&m)),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(file, e)),
            Err(_) => {}
        }
        let dir = parent(file);
        if let Some(o) = self.by_dir.get(dir) {
            return Ok(*o);
        }
        let mut found = None;
        for e in crate::storage::files::read_dir(dir)? {
            let e = e.map_err(|e| Error::io(dir, e))?;
            let kafka = crate::format::names::classify(&e.file_name().to_string_lossy())
                != crate::format::names::FileKind::Unknown;
            if kafka
                && e.file_type()
                    .map_err(|err| Error::io(&e.path(), err))?
                    .is_file()
            {
                found = Some(Owner::of(
                    &e.metadata().map_err(|err| Error::io(&e.path(), err))?,
                ));
                break;
            }
        }
        let owner = match found {
            Some(o) => o,
            None => {
                let m = std::fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
                let o = Owner::of(&m);
                Owner {
                    mode: o.mode & 0o666,
                    ..o
                }
            }
        };
        self.by_dir.insert(dir.to_path_buf(), owner);
        Ok(owner)
    }

    /// Refuses, before anything changes, a plan whose written files this process could not
    /// give their owner: only root can give a file to another user, or to a group it is not in.
    fn check(&mut self, changes: &[Change]) -> Result<()> {
        // SAFETY: plain system calls without arguments.
        let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        if euid == 0 {
            return Ok(());
        }
        let groups = own_groups();
        for c in changes {
            if let Change::Write { file, .. } = c {
                let o = self.for_file(file)?;
                if o.uid != euid || (o.gid != egid && !groups.contains(&o.gid)) {
                    return Err(Error::invalid(
                        file,
                        format!(
                            "the file must stay owned by {} (group {}), which this user (uid \
                             {euid}) cannot give it; run as that user or as root; nothing was \
                             changed",
                            user_name(o.uid),
                            o.gid
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// This process's supplementary groups.
fn own_groups() -> Vec<u32> {
    // SAFETY: a size query, then a buffer of that size.
    let n = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
    let mut g = vec![0; n.max(0) as usize];
    let n = unsafe { libc::getgroups(n, g.as_mut_ptr()) };
    g.truncate(n.max(0) as usize);
    g
}

/// `uid`'s user name from the password database, else the number.
fn user_name(uid: u32) -> String {
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut out = std::ptr::null_mut();
    // SAFETY: getpwuid_r writes into `pwd` and `buf`, both ours and of the sizes given.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc == 0 && !out.is_null() {
        // SAFETY: on success `pw_name` points at a NUL-terminated name inside `buf`.
        let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) };
        return format!("{} (uid {uid})", name.to_string_lossy());
    }
    format!("uid {uid}")
}

/// Gives the open file `f` (at `path`) the owner, group and mode `o`.
fn set_owner(f: &File, path: &Path, o: Owner) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let cur = Owner::of(&f.metadata().map_err(|e| Error::io(path, e))?);
    if (cur.uid, cur.gid) != (o.uid, o.gid) {
        std::os::unix::fs::fchown(f, Some(o.uid), Some(o.gid)).map_err(|e| Error::io(path, e))?;
    }
    // After the chown, which clears set-id bits.
    f.set_permissions(std::fs::Permissions::from_mode(o.mode))
        .map_err(|e| Error::io(path, e))
}

/// Test hook: a directory where the process, at each pause point (`locked`: the lock taken,
/// nothing read; `step-N`: before step N; `applied`: the last rename and fsync done, the lock
/// still held), creates a file of that name and waits until the test removes it.
pub const PAUSE_DIR_VAR: &str = "KSEG_TEST_PAUSE_DIR";

/// Pauses at `point` when [`PAUSE_DIR_VAR`] is set.
pub fn pause(point: &str) {
    let Some(d) = std::env::var_os(PAUSE_DIR_VAR) else {
        return;
    };
    let f = Path::new(&d).join(point);
    if std::fs::write(&f, b"").is_ok() {
        while f.exists() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Refuses a change to a file that is not what the plan read: its size differs from the
/// plan's, or it appeared or went away since (another process changed the partition).
fn check_unchanged(c: &Change) -> Result<()> {
    let (file, planned): (&Path, Option<u64>) = match c {
        Change::Write {
            file,
            size_before: Some(n),
            ..
        } => (file, Some(*n)),
        // A new file: the rename puts it in place whatever is there.
        Change::Write { .. } => return Ok(()),
        Change::Truncate {
            file, size_before, ..
        }
        | Change::Delete {
            file, size_before, ..
        } => (file, Some(*size_before)),
        // A rename is checked by its own done-already test.
        Change::Rename { .. } => return Ok(()),
    };
    let now = match std::fs::symlink_metadata(file) {
        Ok(m) => Some(m.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(file, e)),
    };
    // A deletion done by an interrupted earlier attempt is done.
    if now != planned && !(matches!(c, Change::Delete { .. }) && now.is_none()) {
        return Err(Error::invalid(
            file,
            format!(
                "changed since the plan was made ({} bytes planned, {} now): stopped, \
                 changing nothing more; rerun to plan again",
                planned.map_or("absent".into(), |n| n.to_string()),
                now.map_or("absent".into(), |n| n.to_string())
            ),
        ));
    }
    Ok(())
}

struct Steps {
    done: usize,
    fail_before: Option<usize>,
    before: Option<fn(usize)>,
}

impl Steps {
    /// Counts a step; the injected fault (before step n) is a crash: nothing runs after it.
    fn next(&mut self, what: &Path) -> Result<()> {
        self.next_write(what)
            .map_err(|_| Error::invalid(what, format!("injected crash before step {}", self.done)))
    }

    /// Counts a step inside a file write; the injected fault is the write failing as on a
    /// full disk (`ENOSPC`), which the write's error path handles.
    fn next_write(&mut self, _what: &Path) -> std::io::Result<()> {
        if let Some(hook) = self.before {
            hook(self.done);
        }
        pause(&format!("step-{}", self.done));
        if self.fail_before == Some(self.done) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                format!("injected: no space left on device at step {}", self.done),
            ));
        }
        self.done += 1;
        Ok(())
    }
}

/// Whether the executor leaves `file`'s inode out of the directory for good (replaced by a
/// write, deleted, or renamed to a name the plan then deletes): a hard link keeps it for the
/// backup at no cost. Any other file (cut in place, or renamed to a name the broker goes on
/// writing) is copied.
fn leaves_for_good(file: &Path, changes: &[Change]) -> bool {
    match changes.iter().find(|c| c.file() == file) {
        Some(Change::Write { .. } | Change::Delete { .. }) => true,
        Some(Change::Rename { to, .. }) => changes
            .iter()
            .any(|c| matches!(c, Change::Delete { file, .. } if file == to)),
        _ => false,
    }
}

/// The existing files `changes` touch, each once, in plan order.
fn backed_up_files(changes: &[Change]) -> Result<Vec<(PathBuf, std::fs::Metadata)>> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for c in changes {
        let f = c.file();
        if !seen.insert(f.to_path_buf()) {
            continue;
        }
        match std::fs::symlink_metadata(f) {
            Ok(m) => out.push((f.to_path_buf(), m)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(f, e)),
        }
    }
    Ok(out)
}

/// Test hook: the free bytes every file system reports (a too-small disk without filling one).
pub const FREE_BYTES_VAR: &str = "KSEG_TEST_FREE_BYTES";

/// Bytes free to this user on the file system of `p` (or of its nearest existing ancestor).
fn free_bytes(p: &Path) -> Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let mut at = resolved(p)?;
    while !at.exists() {
        match at.parent() {
            Some(up) => at = up.to_path_buf(),
            None => break,
        }
    }
    let dev = std::fs::metadata(&at).map_err(|e| Error::io(&at, e))?.dev();
    if let Some(v) = std::env::var(FREE_BYTES_VAR)
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return Ok((dev, v));
    }
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(at.as_os_str()))
        .map_err(|_| Error::invalid(&at, "a path with a NUL byte"))?;
    // SAFETY: a zeroed statvfs filled by the call; `c` is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(Error::io(&at, std::io::Error::last_os_error()));
    }
    Ok((dev, st.f_bavail as u64 * st.f_frsize as u64))
}

/// What an apply needs on disk: the backup's bytes on disk (copies as allocated, holes kept;
/// hard links nothing) and the new files' bytes, against the free space of each file system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Space {
    pub backup_bytes: u64,
    pub new_bytes: u64,
    /// (directory, free bytes, bytes needed there) per file system touched.
    pub filesystems: Vec<(PathBuf, u64, u64)>,
}

/// Headroom kept free on every file system: 1 MiB plus 5% of what is written.
fn margin(need: u64) -> u64 {
    (1 << 20) + need / 20
}

/// The disk space the apply of `changes` in `dir` with `backup` takes.
pub fn space(dir: &Path, changes: &[Change], backup: &Backup) -> Result<Space> {
    use std::os::unix::fs::MetadataExt;
    let new_bytes: u64 = changes
        .iter()
        .map(|c| match c {
            Change::Write { size_after, .. } => *size_after,
            _ => 0,
        })
        .sum();
    let mut backup_bytes = 0;
    if let Backup::Dir(_) = backup {
        for (f, m) in backed_up_files(changes)? {
            if !leaves_for_good(&f, changes) {
                backup_bytes += m.blocks() * 512;
            }
        }
    }
    let (dev, free) = free_bytes(dir)?;
    let mut filesystems = vec![(dir.to_path_buf(), free, new_bytes)];
    if let Backup::Dir(b) = backup {
        let (bdev, bfree) = free_bytes(b)?;
        if bdev == dev {
            filesystems[0].2 += backup_bytes;
        } else {
            filesystems.push((b.clone(), bfree, backup_bytes));
        }
    }
    Ok(Space {
        backup_bytes,
        new_bytes,
        filesystems,
    })
}

impl std::fmt::Display for Space {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "backup: {} bytes on disk; new files: {} bytes",
            self.backup_bytes, self.new_bytes
        )?;
        for (d, free, need) in &self.filesystems {
            write!(f, "; {}: {need} bytes needed, {free} free", d.display())?;
        }
        Ok(())
    }
}

/// Refuses, before anything changes, an apply whose new files and backup would not fit.
fn check_space(dir: &Path, changes: &[Change], backup: &Backup) -> Result<()> {
    let s = space(dir, changes, backup)?;
    for (d, free, need) in &s.filesystems {
        if need + margin(*need) > *free {
            return Err(Error::invalid(
                d,
                format!(
                    "not enough free space: {need} bytes needed (backup {} bytes on disk, new \
                     files {} bytes) plus a margin of {}, {free} free; free space or choose \
                     --backup-dir on another disk; nothing was changed",
                    s.backup_bytes,
                    s.new_bytes,
                    margin(*need)
                ),
            ));
        }
    }
    Ok(())
}

/// A new file at `to` for a backup: never through a link, never over an existing file.
fn create_backup_file(to: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(to)
        .map_err(|e| Error::io(to, e))
}

/// `from` copied to the new file `to` with its holes kept (`SEEK_DATA`/`SEEK_HOLE`): a
/// preallocated 10 MiB index costs its entries, not 10 MiB.
fn copy_sparse(from: &Path, to: &Path) -> Result<()> {
    use std::io::{Seek, SeekFrom};
    let mut src = File::open(from).map_err(|e| Error::io(from, e))?;
    let len = src.metadata().map_err(|e| Error::io(from, e))?.len();
    let mut out = create_backup_file(to)?;
    let fd = src.as_raw_fd();
    let mut pos = 0u64;
    while pos < len {
        // SAFETY: lseek on a descriptor we own.
        let data = unsafe { libc::lseek(fd, pos as libc::off_t, libc::SEEK_DATA) };
        let (data, hole) = if data < 0 {
            match std::io::Error::last_os_error().raw_os_error() {
                // No data past `pos`: the rest is a hole.
                Some(libc::ENXIO) => break,
                // A file system without hole reporting: all data.
                _ => (pos, len),
            }
        } else {
            // SAFETY: as above.
            let hole = unsafe { libc::lseek(fd, data, libc::SEEK_HOLE) };
            (data as u64, if hole < 0 { len } else { hole as u64 })
        };
        src.seek(SeekFrom::Start(data))
            .and_then(|_| out.seek(SeekFrom::Start(data)))
            .and_then(|_| std::io::copy(&mut (&mut src).take(hole - data), &mut out))
            .map_err(|e| Error::io(to, e))?;
        pos = hole;
    }
    out.set_len(len).map_err(|e| Error::io(to, e))
}

/// Writes the backup of `changes` into `b`, a directory created for it: each existing file
/// kept by a hard link where the apply takes its inode out of the directory for good, else by
/// a sparse copy; then the plan, last, so a backup holding `plan.json` is complete. A
/// directory that already holds this very plan is this plan's backup from an earlier attempt,
/// which the originals are in already: it is kept as it is. Any other existing directory is
/// refused (never reused).
fn make_backup(b: &Path, changes: &[Change], plan_json: &str, steps: &mut Steps) -> Result<()> {
    let plan = b.join(BACKUP_PLAN_FILE_NAME);
    if let Some(root) = b.parent().filter(|r| !r.as_os_str().is_empty()) {
        std::fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
    }
    match std::fs::create_dir(b) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let same_plan = std::fs::symlink_metadata(b).is_ok_and(|m| m.is_dir())
                && std::fs::symlink_metadata(&plan).is_ok_and(|m| m.is_file())
                && std::fs::read_to_string(&plan).is_ok_and(|p| p == plan_json);
            if same_plan {
                return Ok(());
            }
            return Err(Error::invalid(
                b,
                "the backup directory exists; kseg writes a backup into a new directory \
                 only; choose another --backup-dir; nothing was changed",
            ));
        }
        Err(e) => return Err(Error::io(b, e)),
    }
    let mut copies = Vec::new();
    for (f, _) in backed_up_files(changes)? {
        steps.next(&f)?;
        let to = b.join(f.file_name().unwrap_or_default());
        let linked = leaves_for_good(&f, changes) && std::fs::hard_link(&f, &to).is_ok();
        if !linked {
            copy_sparse(&f, &to)?;
            copies.push(to);
        }
    }
    steps.next(&plan)?;
    let mut pf = create_backup_file(&plan)?;
    pf.write_all(plan_json.as_bytes())
        .map_err(|e| Error::io(&plan, e))?;
    drop(pf);
    copies.push(plan);
    // Every copy durable before anything changes: one sync of the file system (each file's
    // fsync where that fails), then the directory's.
    sync_files(b, &copies)?;
    sync_dir(b)
}

/// Carries out `changes` (already in executor order) in `dir` (the partition directory),
/// after the lock check and the backup; `plan_json` is recorded in the backup. Returns the
/// backup directory used.
pub fn apply(
    dir: &Path,
    changes: &[Change],
    plan_json: &str,
    opts: &ApplyOptions,
) -> Result<Option<PathBuf>> {
    if let Backup::Dir(b) = &opts.backup {
        // A planted link (`<log dir>.kseg-backup` pointing elsewhere) is not followed.
        for p in [b.as_path(), parent(b)] {
            if std::fs::symlink_metadata(p).is_ok_and(|m| m.is_symlink()) {
                return Err(Error::invalid(
                    p,
                    "the backup directory is reached through a symbolic link, which kseg does \
                     not follow; remove it or choose --backup-dir; nothing was changed",
                ));
            }
        }
        refuse_inside_log_dir(b, dir, "backup directory")?;
    }
    refuse_non_partition(dir)?;
    // Held until the end of the function, so for every change (the caller's, when it took
    // it before reading what the plan depends on).
    let _lock = lock_partition(dir, false)?;
    check_links(dir, changes)?;
    check_writable(changes)?;
    let mut owners = Owners::default();
    owners.check(changes)?;
    let mut steps = Steps {
        done: 0,
        fail_before: opts.fail_before_step,
        before: opts.before_step,
    };
    check_space(dir, changes, &opts.backup)?;
    let backup = match &opts.backup {
        Backup::None => None,
        Backup::Dir(b) => {
            make_backup(b, changes, plan_json, &mut steps)?;
            Some(b.clone())
        }
    };
    let mut i = 0;
    while i < changes.len() {
        // A run of writes into one directory is carried out together ([`replace_files`]).
        let run: Vec<(&Path, &Path)> = changes[i..]
            .iter()
            .map_while(|c| match c {
                Change::Write { file, source, .. } if parent(file) == parent(changes[i].file()) => {
                    Some((source.as_path(), file.as_path()))
                }
                _ => None,
            })
            .collect();
        if !run.is_empty() {
            replace_files(&run, &changes[i..i + run.len()], &mut owners, &mut steps)?;
            i += run.len();
            continue;
        }
        let c = &changes[i];
        i += 1;
        steps.next(c.file())?;
        check_unchanged(c)?;
        match c {
            Change::Write { .. } => unreachable!("a write is carried out in its run, above"),
            Change::Truncate {
                file, size_after, ..
            } => OpenOptions::new()
                .write(true)
                .open(file)
                .and_then(|f| {
                    f.set_len(*size_after)?;
                    f.sync_all()
                })
                .map_err(|e| Error::io(file, e))?,
            Change::Rename { from, to, .. } => {
                // Done by an earlier, interrupted run: `to` is there, or a later change of
                // this plan (two-step deletion) already unlinked it.
                let unlinked_later = || {
                    changes[i..]
                        .iter()
                        .any(|l| matches!(l, Change::Delete { file, .. } if file == to))
                };
                if !from.exists() && (to.exists() || unlinked_later()) {
                    continue;
                }
                std::fs::rename(from, to).map_err(|e| Error::io(from, e))?;
                sync_dir(parent(to))?;
            }
            Change::Delete { file, .. } => {
                match std::fs::remove_file(file) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(Error::io(file, e))
                    }
                    _ => {}
                }
                sync_dir(parent(file))?;
            }
        }
    }
    pause("applied");
    Ok(backup)
}

/// The changes of the broker's segment replace, in the engine's order
/// ([`crate::storage::replace::replace_steps`]): the staged files of each new segment written
/// as `.cleaned` (through the executor's temporary file), renamed `.swap` from the highest base
/// down, the `old` files renamed `.deleted` and then deleted, the `.swap` files renamed to
/// their names. Every point in between is one the loader resolves at start-up.
pub fn replace_segments(new: &[Vec<(PathBuf, PathBuf)>], old: &[PathBuf]) -> Result<Vec<Change>> {
    use crate::storage::replace::{replace_steps, ReplaceStep};
    replace_steps(new, old)
        .into_iter()
        .map(|step| {
            Ok(match step {
                ReplaceStep::Stage { bytes, to } => Change::Write {
                    file: to,
                    source: bytes.to_path_buf(),
                    size_before: None,
                    size_after: file_len(bytes)?,
                },
                ReplaceStep::Rename { from, to, bytes } => Change::Rename {
                    from,
                    to,
                    size: file_len(bytes)?,
                },
                ReplaceStep::Delete { file, bytes } => Change::Delete {
                    file,
                    size_before: file_len(bytes)?,
                },
            })
        })
        .collect()
}

/// Compares the directory `original` with `updated` (regular files, by name) and lists what
/// turns the first into the second: deletions, cuts (when the new file is a prefix of the old
/// one), and writes. `keep` says which names take part.
pub fn diff_dirs(
    original: &Path,
    updated: &Path,
    keep: &dyn Fn(&str) -> bool,
) -> Result<Vec<Change>> {
    // A staged directory's files not yet made are listed too: unchanged, they compare equal
    // to their originals without a read (`same_prefix`).
    let names = |d: &Path| -> Result<std::collections::BTreeSet<String>> {
        Ok(crate::storage::files::regular_files(d)?
            .iter()
            .map(|p| {
                p.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|n| keep(n))
            .collect())
    };
    let (before, after) = (names(original)?, names(updated)?);
    let mut changes = Vec::new();
    for n in before.union(&after) {
        let (o, u) = (original.join(n), updated.join(n));
        match (before.contains(n), after.contains(n)) {
            (true, false) => changes.push(Change::Delete {
                size_before: file_len(&o)?,
                file: o,
            }),
            (false, true) => changes.push(Change::Write {
                size_after: file_len(&u)?,
                file: o,
                source: u,
                size_before: None,
            }),
            _ => {
                let (a, b) = (file_len(&o)?, file_len(&u)?);
                let prefix = b <= a && same_prefix(&o, &u, b)?;
                if prefix && a == b {
                    continue;
                }
                if prefix {
                    changes.push(Change::Truncate {
                        file: o,
                        size_before: a,
                        size_after: b,
                    });
                } else {
                    changes.push(Change::Write {
                        file: o,
                        source: u,
                        size_before: Some(a),
                        size_after: b,
                    });
                }
            }
        }
    }
    order_changes(&mut changes);
    Ok(changes)
}

/// Stages the partition directory `dir` for planning in a new scratch directory
/// ([`Staging`]): the engine's run on it is the plan, its segment data read from `dir`.
pub fn stage_for_planning(dir: &Path) -> Result<Staging> {
    Staging::new(dir, TMP_SUFFIX)
}

/// Gives every write's source its bytes (a staged placeholder becomes a file): the executor
/// copies them.
pub fn materialize_sources(changes: &[Change]) -> Result<()> {
    for c in changes {
        if let Change::Write { source, .. } = c {
            materialize(source)?;
        }
    }
    Ok(())
}
