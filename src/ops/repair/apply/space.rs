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

/// What applies need on one file system they touch: the backups' bytes on disk (copies as
/// allocated, holes kept; hard links nothing) and the new files' bytes, against its free space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Space {
    /// The deepest directory holding every changed partition directory on it (or, where it
    /// holds backups only, every backup directory).
    pub dir: PathBuf,
    pub free: u64,
    pub backup_bytes: u64,
    pub new_bytes: u64,
}

impl Space {
    pub fn needed(&self) -> u64 {
        self.backup_bytes + self.new_bytes
    }
}

/// Headroom kept free on every file system: 1 MiB plus 5% of what is written.
pub(super) fn margin(need: u64) -> u64 {
    (1 << 20) + need / 20
}

/// The deepest directory holding all of `paths` ("." when relative ones share nothing).
fn common_ancestor(paths: &[PathBuf]) -> PathBuf {
    let mut common = paths.first().cloned().unwrap_or_default();
    for p in paths.iter().skip(1) {
        while !p.starts_with(&common) && common.pop() {}
    }
    if common.as_os_str().is_empty() {
        common.push(".");
    }
    common
}

/// One file system's directories and bytes while [`space`] sums them.
struct Share {
    dev: u64,
    partitions: Vec<PathBuf>,
    backups: Vec<PathBuf>,
    space: Space,
}

/// The share of the file system holding `path` in `shares`, added when new.
fn share_of<'s>(shares: &'s mut Vec<Share>, path: &Path) -> Result<&'s mut Share> {
    let (dev, free) = free_bytes(path)?;
    let i = match shares.iter().position(|s| s.dev == dev) {
        Some(i) => i,
        None => {
            shares.push(Share {
                dev,
                partitions: Vec::new(),
                backups: Vec::new(),
                space: Space {
                    dir: PathBuf::new(),
                    free,
                    backup_bytes: 0,
                    new_bytes: 0,
                },
            });
            shares.len() - 1
        }
    };
    Ok(&mut shares[i])
}

/// The disk space the applies of `applies` (a partition directory, its changes, its backup)
/// take, summed per file system: one partition, or every partition of a log-dir-wide run.
pub fn space<'a>(
    applies: impl IntoIterator<Item = (&'a Path, &'a [Change], &'a Backup)>,
) -> Result<Vec<Space>> {
    use std::os::unix::fs::MetadataExt;
    let mut shares = Vec::new();
    for (dir, changes, backup) in applies {
        let s = share_of(&mut shares, dir)?;
        s.partitions.push(dir.to_path_buf());
        s.space.new_bytes += changes
            .iter()
            .map(|c| match c {
                Change::Write { size_after, .. } => *size_after,
                _ => 0,
            })
            .sum::<u64>();
        if let Backup::Dir(b) = backup {
            let mut backup_bytes = 0;
            let linked = leaving_for_good(changes);
            for (f, m) in backed_up_files(changes)? {
                if !linked.contains(f.as_path()) {
                    backup_bytes += m.blocks() * 512;
                }
            }
            let s = share_of(&mut shares, b)?;
            s.backups.push(b.clone());
            s.space.backup_bytes += backup_bytes;
        }
    }
    Ok(shares
        .into_iter()
        .map(|s| Space {
            dir: common_ancestor(if s.partitions.is_empty() {
                &s.backups
            } else {
                &s.partitions
            }),
            ..s.space
        })
        .collect())
}

/// Refuses, before anything changes, an apply whose new files and backup would not fit.
pub(super) fn check_space(dir: &Path, changes: &[Change], backup: &Backup) -> Result<()> {
    use crate::ops::human::size;
    for fs in space([(dir, changes, backup)])? {
        let need = fs.needed();
        if need + margin(need) > fs.free {
            return Err(Error::invalid(
                &fs.dir,
                format!(
                    "not enough free space: {} needed (backup {} on disk, new files {}) plus \
                     a margin of {}, {} free; free space or choose --backup-dir on another \
                     disk; nothing was changed",
                    size(need),
                    size(fs.backup_bytes),
                    size(fs.new_bytes),
                    size(margin(need)),
                    size(fs.free)
                ),
            ));
        }
    }
    Ok(())
}
