//! The files of a partition directory: listed in the order tools show them, named with the
//! replace protocol's suffixes, measured, copied and stamped with modification times.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

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

/// `p` with `suffix` appended to its name (`.cleaned`, `.swap`, `.deleted`).
pub fn with_suffix(p: &Path, suffix: &str) -> PathBuf {
    let mut s = p.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// The segment files (`.log`, `.index`, `.timeindex`, `.txnindex`, in that order) of `base`
/// present in `dir`.
pub fn segment_files(dir: &Path, base: i64) -> Vec<PathBuf> {
    use crate::format::names::{
        index_file_name, log_file_name, time_index_file_name, txn_index_file_name,
    };
    [
        log_file_name(base),
        index_file_name(base),
        time_index_file_name(base),
        txn_index_file_name(base),
    ]
    .into_iter()
    .map(|n| dir.join(n))
    .filter(|p| p.is_file())
    .collect()
}

/// Sets the modification time of the file `p`: the engine reads mtimes (retention falls back
/// on them), so a rewritten or split segment keeps the one of the segment it comes from.
pub fn set_mtime(p: &Path, mtime: SystemTime) -> Result<()> {
    std::fs::File::options()
        .write(true)
        .open(p)
        .and_then(|f| f.set_modified(mtime))
        .map_err(|e| Error::io(p, e))
}

/// Copies the file `from` to `to`, writable even when `from` is read-only (an archived copy),
/// with the modification time `mtime`.
pub fn copy_writable(from: &Path, to: &Path, mtime: SystemTime) -> Result<()> {
    std::fs::copy(from, to).map_err(|e| Error::io(from, e))?;
    let mut perm = std::fs::metadata(to)
        .map_err(|e| Error::io(to, e))?
        .permissions();
    #[allow(clippy::permissions_set_readonly_false)] // the copy is ours to change
    perm.set_readonly(false);
    std::fs::set_permissions(to, perm).map_err(|e| Error::io(to, e))?;
    set_mtime(to, mtime)
}

pub fn file_len(p: &Path) -> Result<u64> {
    Ok(std::fs::metadata(p).map_err(|e| Error::io(p, e))?.len())
}
