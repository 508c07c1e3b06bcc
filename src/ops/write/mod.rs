//! Building partition directories through the engine: from a spec ([`spec`]), a stream of
//! JSON Lines records ([`jsonl`]) or a log-dir spec ([`log_dir`]), with damage applied on
//! purpose afterwards ([`damage`]). Every write is all or nothing ([`all_or_nothing`]).

pub mod damage;
pub mod jsonl;
mod kraft;
pub mod log_dir;
pub mod spec;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Builds the directory `out_dir` (absent or empty) all or nothing: `build` writes into a
/// temporary directory beside it, renamed into place only when `build` succeeded and removed
/// when it failed. Errors name paths below `out_dir`, as if it had been written in place.
pub(crate) fn all_or_nothing<T>(
    out_dir: &Path,
    build: impl FnOnce(&Path) -> Result<T>,
) -> Result<T> {
    if std::fs::read_dir(out_dir).is_ok_and(|mut d| d.next().is_some()) {
        return Err(Error::invalid(out_dir, "output directory is not empty"));
    }
    let parent = match out_dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // The directories this creates, removed again with the build when it fails.
    let created = parent
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .last()
        .map(Path::to_path_buf);
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    // A leading dot and kseg's suffix: no broker takes it for a partition directory.
    let mut name = std::ffi::OsString::from(".");
    name.push(out_dir.file_name().unwrap_or_default());
    name.push(format!(".{}", std::process::id()));
    name.push(crate::ops::repair::apply::TMP_SUFFIX);
    let tmp: PathBuf = parent.join(name);
    let built = std::fs::create_dir(&tmp)
        .map_err(|e| Error::io(&tmp, e))
        .and_then(|()| build(&tmp))
        .and_then(|t| {
            std::fs::rename(&tmp, out_dir).map_err(|e| Error::io(out_dir, e))?;
            Ok(t)
        });
    if built.is_err() {
        // Best effort: the error that stopped the build is the one to report.
        let _ = std::fs::remove_dir_all(created.as_deref().unwrap_or(&tmp));
    }
    built.map_err(|e| e.rebased(&tmp, out_dir))
}
