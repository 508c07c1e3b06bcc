//! Free space: what a repair and its backup need against what the file systems have, refused
//! before anything is written when short.

use super::*;

/// Test hook: the free bytes every file system reports (a too-small disk without filling one).
pub const FREE_BYTES_VAR: &str = "KSEG_TEST_FREE_BYTES";

/// Bytes free to this user on the file system of `p` (or of its nearest existing ancestor).
pub(super) fn free_bytes(p: &Path) -> Result<(u64, u64)> {
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
pub(super) fn margin(need: u64) -> u64 {
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
pub(super) fn check_space(dir: &Path, changes: &[Change], backup: &Backup) -> Result<()> {
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
