//! Listing the files of a partition directory in the order tools show them.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The regular files of `dir`, in base-offset order (per-segment files grouped), followed by
/// sub-directories (partition directories of a log dir).
pub fn list_dir(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let p = e.path();
        if p.is_dir() {
            dirs.push(p);
        } else {
            files.push(p);
        }
    }
    files.sort_by_cached_key(|p| {
        crate::format::names::sort_key(
            &p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        )
    });
    dirs.sort();
    files.extend(dirs);
    Ok(files)
}
