//! Writing a file into place: a temporary file in the same directory, fsynced, renamed over the
//! file and the directory fsynced; the paths a repair may write.

use super::*;

pub(super) fn sync_dir(dir: &Path) -> Result<()> {
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
pub(super) fn resolved(p: &Path) -> Result<PathBuf> {
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

pub(super) fn parent(p: &Path) -> &Path {
    p.parent().unwrap_or(Path::new("."))
}

/// The executor's temporary file for `to`, beside it.
pub(super) fn tmp_path(to: &Path) -> PathBuf {
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
pub(super) fn write_tmp(
    from: &Path,
    to: &Path,
    owner: Owner,
    steps: &mut Steps,
) -> Result<PathBuf> {
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
/// once. No order among the renames is assumed to reach the disk (ext4 without a journal, or
/// any file system, may write the directory's blocks as it likes until the fsync): a crash
/// among them leaves any subset done, and every subset is safe. Each name then holds a
/// complete file, its bytes before the run (what the plan read) or after it (synced before
/// the first rename), and the files of a run do not depend on one another: what a run writes
/// is indexes, producer snapshots, leader-epoch and log-dir checkpoints, `partition.metadata`,
/// a new empty `.log` with its indexes, and a replace's `.cleaned` files. Each depends on the
/// segments' `.log` files, which a run never rewrites ([`refuse_log_rewrites`]; a cut is its
/// own change, synced before the run), and the broker reads any mix: an old or missing index
/// as it did before (or, missing, rebuilt from its `.log`), an index whose `.log` is not
/// there yet as an orphan it deletes, a `.cleaned` file as one it deletes, a snapshot, epoch
/// checkpoint or log-dir checkpoint old or new against the same log (their entries past the
/// log's end trimmed at start-up). A rerun plans from the mix to the same result: it finds
/// the new files done and writes the old ones again. The disk running full removes the
/// temporary files of the run.
pub(super) fn replace_files(
    writes: &[(&Path, &Path)],
    planned: &[Change],
    owners: &mut Owners,
    steps: &mut Steps,
) -> Result<()> {
    let mut tmps = Vec::with_capacity(writes.len());
    for (&(from, to), c) in writes.iter().zip(planned) {
        steps.next(to)?;
        if let Err(e) = check_unchanged(c, &steps.changed) {
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
        steps.did(&[to]);
    }
    sync_dir(dir)
}

/// Files above which one `syncfs` beats an fsync of each (about a millisecond apiece here);
/// below it, the fsyncs, since `syncfs` also writes out whatever else is dirty on the disk.
pub(super) const SYNCFS_FROM_FILES: usize = 32;

/// `r`, the temporary files `tmps` removed first when it is an I/O error (the disk full: best
/// effort, the error that stopped the run is the one to report). An injected crash leaves them.
pub(super) fn remove_on_io_error(r: Result<()>, tmps: &[PathBuf]) -> Result<()> {
    if let Err(Error::Io { .. }) = r {
        for t in tmps {
            let _ = std::fs::remove_file(t);
        }
    }
    r
}

/// Makes the files `files` (on the file system of `dir`) durable: an fsync of each, or for
/// many, one `syncfs` (the fsyncs where it fails).
pub(super) fn sync_files(dir: &Path, files: &[PathBuf]) -> Result<()> {
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
