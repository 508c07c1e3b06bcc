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

/// Refuses a change to a file that is not what the plan read: its size differs from the
/// plan's, or it appeared or went away since (another process changed the partition).
pub(super) fn check_unchanged(c: &Change) -> Result<()> {
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
