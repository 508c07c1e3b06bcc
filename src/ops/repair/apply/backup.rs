//! The backup directory: every file a plan changes, and the plan itself, copied before the
//! first change; the steps counted for the pause hook.

use super::*;

pub(super) struct Steps {
    pub(super) done: usize,
    pub(super) fail_before: Option<usize>,
    pub(super) before: Option<fn(usize)>,
    /// The files this run changed already: what they are now is this run's doing.
    pub(super) changed: std::collections::BTreeSet<PathBuf>,
}

impl Steps {
    /// Records that this run changed `files` (written, cut, renamed or deleted): the plan's
    /// view of them is this run's to keep, and a later plan reads them anew.
    pub(super) fn did(&mut self, files: &[&Path]) {
        for f in files {
            crate::storage::files::forget_read(f);
            self.changed.insert(f.to_path_buf());
        }
    }

    /// Counts a step; the injected fault (before step n) is a crash: nothing runs after it.
    pub(super) fn next(&mut self, what: &Path) -> Result<()> {
        self.next_write(what)
            .map_err(|_| Error::invalid(what, format!("injected crash before step {}", self.done)))
    }

    /// Counts a step inside a file write; the injected fault is the write failing as on a
    /// full disk (`ENOSPC`), which the write's error path handles.
    pub(super) fn next_write(&mut self, _what: &Path) -> std::io::Result<()> {
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

/// The files whose inode the executor leaves out of the directory for good (replaced by a
/// write, deleted, or renamed to a name the plan then deletes), as the first change of each
/// file says: a hard link keeps them for the backup at no cost. Any other file (cut in place,
/// or renamed to a name the broker goes on writing) is copied. One pass over the plan: a plan
/// over many segments has hundreds of thousands of changes.
pub(super) fn leaving_for_good(changes: &[Change]) -> std::collections::HashSet<&Path> {
    use std::collections::HashSet;
    let deleted: HashSet<&Path> = changes
        .iter()
        .filter_map(|c| match c {
            Change::Delete { file, .. } => Some(file.as_path()),
            _ => None,
        })
        .collect();
    let mut seen = HashSet::new();
    let mut out = HashSet::new();
    for c in changes {
        if !seen.insert(c.file()) {
            continue;
        }
        let gone = match c {
            Change::Write { .. } | Change::Delete { .. } => true,
            Change::Rename { to, .. } => deleted.contains(to.as_path()),
            Change::Truncate { .. } => false,
        };
        if gone {
            out.insert(c.file());
        }
    }
    out
}

/// The existing files `changes` touch, each once, in plan order.
pub(super) fn backed_up_files(changes: &[Change]) -> Result<Vec<(PathBuf, std::fs::Metadata)>> {
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

/// A new file at `to` for a backup: never through a link, never over an existing file.
pub(super) fn create_backup_file(to: &Path) -> Result<File> {
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
pub(super) fn copy_sparse(from: &Path, to: &Path) -> Result<()> {
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
pub(super) fn make_backup(
    b: &Path,
    changes: &[Change],
    plan_json: &str,
    steps: &mut Steps,
) -> Result<()> {
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
    let linkable = leaving_for_good(changes);
    for (f, _) in backed_up_files(changes)? {
        steps.next(&f)?;
        let to = b.join(f.file_name().unwrap_or_default());
        let linked = linkable.contains(f.as_path()) && std::fs::hard_link(&f, &to).is_ok();
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
