//! The refusals before anything changes: links, a directory that is not a partition, files
//! that cannot be written, files that changed since the plan read them.

use super::*;

/// The one policy for links (docs/repair.md, "Links"): commands read a symbolic or hard link inside a
/// partition directory as the file it names, but a repair changes only files that are the
/// partition directory's (or its log dir's checkpoints) alone. Refused, before anything
/// changes: a partition directory that is itself a symbolic link, a change to a symbolic link
/// (writing, cutting, renaming or deleting through it would change a file elsewhere, or leave
/// the link's target as it was while the directory says otherwise), a file outside the
/// partition directory and its log dir, and cutting a file with other hard links (it would cut
/// them all; a write replaces the name only, leaving the other names their bytes).
pub(super) fn check_links(dir: &Path, changes: &[Change]) -> Result<()> {
    let refuse = |p: &Path, why: &str| {
        Err(Error::invalid(
            p,
            format!("{why}; kseg does not change files through links; nothing was changed"),
        ))
    };
    if is_symlink(dir)? {
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
            if is_symlink(f)? {
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
            let links = crate::storage::files::metadata_if_exists(file)?.map_or(1, |m| m.nlink());
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

/// A plan replaces an existing `.log`'s records only through the broker's `.cleaned` ->
/// `.swap` protocol, never by writing over it: the renames of a run of writes may reach the
/// disk in any order ([`replace_files`]), and a rewritten `.log` beside its old indexes (or
/// the reverse) would be served by the wrong positions. Cutting a `.log` and creating a new
/// (empty) one are changes of their own.
pub(super) fn refuse_log_rewrites(changes: &[Change]) -> Result<()> {
    for c in changes {
        if let Change::Write {
            file,
            size_before: Some(_),
            ..
        } = c
        {
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            if matches!(
                crate::format::names::classify(&name),
                crate::format::names::FileKind::Log { .. }
            ) {
                return Err(Error::invalid(
                    file,
                    "the plan writes over an existing segment, which kseg replaces only \
                     through the broker's .cleaned/.swap renames; nothing was changed",
                ));
            }
        }
    }
    Ok(())
}

/// Whether `p` is a symbolic link; absent is not one, any other error is an error.
pub(super) fn is_symlink(p: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(p) {
        Ok(m) => Ok(m.is_symlink()),
        Err(e) if crate::storage::files::is_absent(&e) => Ok(false),
        Err(e) => Err(Error::io(p, e)),
    }
}

/// A repair changes a partition directory only: a plan over a file beside non-Kafka files
/// (`rebuild-index docs/server.log` would write `docs/server.index`) is a reading, not a
/// repair.
pub(super) fn refuse_non_partition(dir: &Path) -> Result<()> {
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
pub(super) fn check_writable(changes: &[Change]) -> Result<()> {
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
        if let Some(m) = crate::storage::files::metadata_if_exists(f)? {
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

/// Refuses a change to a file that is not what the plan read: another size than the plan's,
/// another inode, size or modification time than when the plan read it, one the plan did not
/// read under the lock ([`apply`] runs under the lock its caller took before planning), or it
/// went away since; and a file where the plan expects
/// none (a new file's name, a rename's destination) that came since: another process changed
/// the partition. Files this run changed already (`ours`) are what this run made them.
pub(super) fn check_unchanged(
    c: &Change,
    ours: &std::collections::BTreeSet<PathBuf>,
) -> Result<()> {
    let verdict = check_as_planned(c, ours);
    // A write done already by an interrupted run of this same plan (a journal's rerun): the
    // file holds the very bytes it is to get, and writing them again loses nothing.
    if let (Err(_), Change::Write { file, source, .. }) = (&verdict, c) {
        if same_bytes(file, source)? {
            return Ok(());
        }
    }
    verdict
}

/// Whether the file `a` exists and holds the bytes of `b`.
fn same_bytes(a: &Path, b: &Path) -> Result<bool> {
    Ok(match crate::storage::files::metadata_if_exists(a)? {
        Some(m) => m.is_file() && m.len() == file_len(b)? && same_prefix(a, b, m.len())?,
        None => false,
    })
}

/// [`check_unchanged`] by identity, size and presence alone.
fn check_as_planned(c: &Change, ours: &std::collections::BTreeSet<PathBuf>) -> Result<()> {
    use crate::storage::files::FileId;
    let stale = |file: &Path, what: String| {
        Err(Error::invalid(
            file,
            format!(
                "changed since the plan was made ({what}): stopped, changing nothing more; \
                 rerun to plan again"
            ),
        ))
    };
    let now = |file: &Path| match std::fs::symlink_metadata(file) {
        Ok(m) => Ok(Some(m)),
        Err(e) if crate::storage::files::is_absent(&e) => Ok(None),
        Err(e) => Err(Error::io(file, e)),
    };
    let (file, planned): (&Path, Option<u64>) = match c {
        Change::Write {
            file,
            size_before: Some(n),
            ..
        } => (file, Some(*n)),
        // A new file: absent when planned.
        Change::Write { file, .. } => {
            return match now(file)? {
                Some(m) if !ours.contains(file) => stale(
                    file,
                    format!("absent when planned, {} bytes there now", m.len()),
                ),
                _ => Ok(()),
            };
        }
        Change::Truncate {
            file, size_before, ..
        }
        | Change::Delete {
            file, size_before, ..
        } => (file, Some(*size_before)),
        // Its presence is checked by its own done-already test; what it is, here. Not done
        // yet, its destination is as the plan saw it: absent, or the very file the plan read;
        // else it would be replaced, lost. Unless it holds the same bytes: an interrupted run
        // of this same plan renamed them there.
        Change::Rename { from, to, .. } => {
            if !ours.contains(to) && now(from)?.is_some() {
                if let Some(m) = now(to)? {
                    let other = crate::storage::files::read_as(to) != Some(FileId::of(&m));
                    if other && !same_bytes(to, from)? {
                        return stale(
                            to,
                            "the rename's destination is there, not as the plan saw it".into(),
                        );
                    }
                }
            }
            (from, None)
        }
    };
    if ours.contains(file) {
        return Ok(());
    }
    let now = now(file)?;
    let size_now = now.as_ref().map(|m| m.len());
    // A deletion done by an interrupted earlier attempt is done.
    let done = matches!(c, Change::Delete { .. }) && now.is_none();
    if planned.is_some() && size_now != planned && !done {
        return stale(
            file,
            format!(
                "{} bytes planned, {} now",
                planned.map_or("absent".into(), |n| n.to_string()),
                size_now.map_or("absent".into(), |n| n.to_string())
            ),
        );
    }
    let Some(m) = &now else { return Ok(()) };
    // Every file a change finds is one the plan read under the lock (its identity was
    // remembered): one it did not read is a plan made before the lock was taken.
    let Some(then) = crate::storage::files::read_as(file) else {
        return stale(file, "not read under the partition's lock".into());
    };
    let is = FileId::of(m);
    if is == then {
        return Ok(());
    }
    let what = if (is.dev, is.ino) != (then.dev, then.ino) {
        "another file under its name"
    } else if is.len != then.len {
        "another size"
    } else {
        "rewritten: another modification time"
    };
    stale(file, format!("{what} than when the plan read it"))
}
