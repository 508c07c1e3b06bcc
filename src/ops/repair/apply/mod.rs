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

mod backup;
mod checks;
mod lock;
mod owner;
mod plan;
mod space;
mod write;

use backup::*;
use checks::*;
pub use lock::*;
use owner::*;
pub use plan::*;
pub use space::*;
pub use write::*;

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
        #[serde(serialize_with = "crate::format::os_path::serialize")]
        file: PathBuf,
        #[serde(skip)]
        source: PathBuf,
        size_before: Option<u64>,
        size_after: u64,
    },
    /// The file is cut to `size_after` bytes (a `.log` losing its invalid tail).
    Truncate {
        #[serde(serialize_with = "crate::format::os_path::serialize")]
        file: PathBuf,
        size_before: u64,
        size_after: u64,
    },
    Delete {
        #[serde(serialize_with = "crate::format::os_path::serialize")]
        file: PathBuf,
        size_before: u64,
    },
    /// The file `from` gets the name `to` (the broker's `.cleaned` -> `.swap` -> final and
    /// `.deleted` dance). Done already when `from` is gone and `to` exists, so a rerun of the
    /// same plan after a failure skips it.
    Rename {
        #[serde(serialize_with = "crate::format::os_path::serialize")]
        from: PathBuf,
        #[serde(serialize_with = "crate::format::os_path::serialize")]
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
        let orphan = match kind.offset() {
            Some(base) if kind.is_segment_file() => {
                !crate::storage::files::exists(&dir.join(log_file_name(base)))?
            }
            _ => false,
        };
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

/// Test hook: at each pause point (`locked`: the lock taken, nothing read; `step-N`: before
/// step N; `applied`: the last rename and fsync done, the lock still held) the process waits
/// ([`crate::storage::files::pause`]).
pub use crate::storage::files::{pause, PAUSE_DIR_VAR};

/// Every refusal of [`apply`] that comes before any change: where the backup goes, what `dir`
/// is, links, permissions, owners and free space. A caller that keeps state of its own for
/// the apply (compact's journal) runs it first, so that a refusal leaves nothing behind.
pub fn preflight(dir: &Path, changes: &[Change], opts: &ApplyOptions) -> Result<()> {
    let _sealed = crate::storage::files::seal_reads();
    checked_owners(dir, changes, opts).map(drop)
}

/// [`preflight`], with the owners and modes the changed files are to keep.
fn checked_owners(dir: &Path, changes: &[Change], opts: &ApplyOptions) -> Result<Owners> {
    if let Backup::Dir(b) = &opts.backup {
        // A planted link (`<log dir>.kseg-backup` pointing elsewhere) is not followed.
        for p in [b.as_path(), parent(b)] {
            if is_symlink(p)? {
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
    refuse_log_rewrites(changes)?;
    check_links(dir, changes)?;
    check_writable(changes)?;
    let mut owners = Owners::default();
    owners.check(changes)?;
    check_space(dir, changes, &opts.backup)?;
    Ok(owners)
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
    // The caller's lock, taken before it read what the plan depends on, so that each file is
    // checked against the very file the plan read. A lock taken only here would come after
    // the plan: what it read, and whether a file changed since, could not be known.
    if let Some(late) = lock_partition(dir, false)? {
        drop(late);
        return Err(Error::invalid(
            dir,
            "the plan was made without the partition's lock: take it (lock_partition) before \
             planning, and apply under it; nothing was changed",
        ));
    }
    // From here to the end, what the plan read is all that is remembered.
    let _sealed = crate::storage::files::seal_reads();
    let mut owners = checked_owners(dir, changes, opts)?;
    // Every file as the plan read it before anything is written, the backup included: a plan
    // gone stale since it was made changes nothing. Each change is checked again just before
    // it is made.
    let none = Default::default();
    changes.iter().try_for_each(|c| check_unchanged(c, &none))?;
    let mut steps = Steps {
        done: 0,
        fail_before: opts.fail_before_step,
        before: opts.before_step,
        changed: Default::default(),
    };
    let backup = match &opts.backup {
        Backup::None => None,
        Backup::Dir(b) => {
            make_backup(b, changes, plan_json, &mut steps)?;
            Some(b.clone())
        }
    };
    let mut i = 0;
    let carried = carry_out(changes, &mut i, &mut owners, &mut steps);
    if let Err(Error::Io { path, source }) = carried {
        // Every change is crash-safe alone: what is done stays done, the rest is as before.
        return Err(Error::invalid(
            &path,
            format!(
                "{source}: stopped while applying, the first {i} of {} changes done; the \
                 directory is one a rerun of this command finishes",
                changes.len()
            ),
        ));
    }
    carried?;
    pause("applied");
    Ok(backup)
}

/// Carries out `changes` from the `i`-th on, `i` counting those begun.
fn carry_out(
    changes: &[Change],
    i: &mut usize,
    owners: &mut Owners,
    steps: &mut Steps,
) -> Result<()> {
    // Where the plan last deletes each file: a rename whose destination a later change
    // deletes is done once its source is gone, whether or not the destination still is.
    let mut last_deleted: std::collections::HashMap<&Path, usize> = Default::default();
    for (n, c) in changes.iter().enumerate() {
        if let Change::Delete { file, .. } = c {
            last_deleted.insert(file, n);
        }
    }
    let mut syncs = DirSyncs::default();
    while *i < changes.len() {
        // A run of writes into one directory is carried out together ([`replace_files`]).
        let run: Vec<(&Path, &Path)> = changes[*i..]
            .iter()
            .map_while(|c| match c {
                Change::Write { file, source, .. }
                    if parent(file) == parent(changes[*i].file()) =>
                {
                    Some((source.as_path(), file.as_path()))
                }
                _ => None,
            })
            .collect();
        if !run.is_empty() {
            replace_files(&run, &changes[*i..*i + run.len()], owners, steps)?;
            *i += run.len();
            continue;
        }
        let c = &changes[*i];
        *i += 1;
        steps.next(c.file())?;
        check_unchanged(c, &steps.changed)?;
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
                .map_err(|e| Error::io(file, e))
                .map(|()| steps.did(&[file]))?,
            Change::Rename { from, to, .. } => {
                // Done by an earlier, interrupted run: `to` is there, or a later change of
                // this plan (two-step deletion) already unlinked it.
                let unlinked_later = || last_deleted.get(to.as_path()).is_some_and(|&n| n >= *i);
                use crate::storage::files::exists;
                if exists(from)? || !(exists(to)? || unlinked_later()) {
                    std::fs::rename(from, to).map_err(|e| Error::io(from, e))?;
                    steps.did(&[from, to]);
                }
            }
            Change::Delete { file, .. } => {
                match std::fs::remove_file(file) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(Error::io(file, e))
                    }
                    _ => {}
                }
                steps.did(&[file]);
            }
        }
        if !matches!(c, Change::Truncate { .. }) {
            syncs.after(c, changes.get(*i))?;
        }
    }
    Ok(())
}

/// How a deletion or rename stands to the ones after it, for sharing one directory fsync
/// (with 60,000 segments, an fsync per change was most of `retention --apply`'s time): a
/// crash may leave any subset of the changes since the last fsync done, which must be safe.
#[derive(Clone, Copy, PartialEq)]
enum Durability {
    /// Deleting a `.deleted` file or the executor's temporary file: nothing reads them (the
    /// loader deletes every `.deleted` file at start-up, a rerun the temporary ones), so any
    /// subset of a run of them is safe.
    Garbage,
    /// Taking one of the segment at `base`'s files (`.log`, its indexes, its producer
    /// snapshot) away from its live name in one directory. Once its `.log` or its `.index` is
    /// durably gone, any subset of the rest is safe: beside no `.log` they are orphans the
    /// loader deletes (a snapshot below the last segment at no segment's base is stray);
    /// beside its `.log` without an `.index` the segment is recovered whole at start-up,
    /// every index rebuilt. Until then each change has its own fsync: a `.log` served with
    /// its `.txnindex` gone would lose its aborted transactions.
    Segment { anchor: bool, base: i64 },
}

fn durability(c: &Change) -> Option<Durability> {
    use crate::format::names::{classify, FileKind};
    let name = c.file().file_name()?.to_string_lossy();
    match c {
        Change::Delete { .. }
            if name.ends_with(crate::format::names::DELETED_FILE_SUFFIX)
                || name.ends_with(TMP_SUFFIX) =>
        {
            Some(Durability::Garbage)
        }
        Change::Rename { from, to, .. } if parent(from) != parent(to) => None,
        Change::Delete { .. } | Change::Rename { .. } => {
            let kind = classify(&name);
            let anchor = matches!(kind, FileKind::Log { .. } | FileKind::OffsetIndex { .. });
            let part = kind.is_segment_file() || matches!(kind, FileKind::ProducerSnapshot { .. });
            part.then(|| kind.offset())
                .flatten()
                .map(|base| Durability::Segment { anchor, base })
        }
        Change::Write { .. } | Change::Truncate { .. } => None,
    }
}

/// The fsyncs of a run of deletions and renames: after each change unless it may share the
/// next one's ([`Durability`]); every other change keeps its own, in the plan's order, which
/// the broker's protocols depend on (a `.swap` above a `.cleaned` is discarded, one below it
/// completed; whole segments deleted from the highest offset down, or renamed `.deleted`
/// from the oldest up, leave no gap in the log wherever they stop).
#[derive(Default)]
struct DirSyncs<'a> {
    /// The segment (directory, base) whose `.log` or `.index` is durably gone.
    loose: Option<(&'a Path, i64)>,
}

impl<'a> DirSyncs<'a> {
    /// After the deletion or rename `c`, `next` the change after it.
    fn after(&mut self, c: &'a Change, next: Option<&Change>) -> Result<()> {
        let dir = match c {
            Change::Rename { to, .. } => parent(to),
            _ => parent(c.file()),
        };
        let (this, following) = (durability(c), next.and_then(durability));
        let same_dir = next.is_some_and(|n| parent(n.file()) == dir);
        let shared = same_dir
            && match (this, following) {
                (Some(Durability::Garbage), Some(Durability::Garbage)) => true,
                (
                    Some(Durability::Segment { base, .. }),
                    Some(Durability::Segment {
                        base: next_base, ..
                    }),
                ) => base == next_base && self.loose == Some((dir, base)),
                _ => false,
            };
        if shared {
            return Ok(());
        }
        sync_dir(dir)?;
        if let Some(Durability::Segment { anchor: true, base }) = this {
            self.loose = Some((dir, base));
        }
        Ok(())
    }
}
