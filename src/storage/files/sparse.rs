//! Sparse files: where a file's data extents end (the holes past them read as zeros), and
//! copies that keep the holes ([`copy_sparse`]).

use super::*;

/// `p` opened for reading at its start, with its length and where its last data extent ends.
/// A placeholder's bytes are its original's ([`open_data`]).
pub(super) fn open_sparse(p: &Path) -> Result<(std::fs::File, u64, u64)> {
    use std::io::Seek;
    let (mut f, len) = open_data(p)?;
    let end = data_end(&f, len).min(len);
    // Finding the holes moved the file offset.
    f.rewind().map_err(|e| Error::io(p, e))?;
    Ok((f, len, end))
}

/// Where the last data extent of `f` ends (`len` where the file system cannot say): past it,
/// the file is a hole, which reads as zeros. Moves the file offset.
pub fn data_end(f: &std::fs::File, len: u64) -> u64 {
    data_extents(f, len).last().map_or(0, |&(_, stop)| stop)
}

/// Copies `from` to `to` (created or replaced) without reading or writing the holes of a
/// sparse file: the data extents are copied, the length is set. Returns the copy, open for
/// writing.
pub fn copy_sparse(from: &Path, to: &Path) -> Result<std::fs::File> {
    use std::os::unix::fs::FileExt;
    let (src, len, end) = open_sparse(from)?;
    unstaged().remove(to);
    held().remove(to);
    let dst = std::fs::File::create(to).map_err(|e| Error::io(to, e))?;
    let mut buf = Vec::new();
    for (start, stop) in data_extents(&src, end) {
        let mut at = start;
        while at < stop {
            let n = (stop - at).min(1 << 16) as usize;
            buf.resize(n, 0);
            src.read_exact_at(&mut buf, at)
                .map_err(|e| Error::io(from, e))?;
            dst.write_all_at(&buf, at).map_err(|e| Error::io(to, e))?;
            at += n as u64;
        }
    }
    if len > 0 {
        dst.set_len(len).map_err(|e| Error::io(to, e))?;
    }
    Ok(dst)
}

/// The data extents `(start, end)` of `f` below `end` (one extent, the whole range, where the
/// file system cannot say). Moves the file offset.
pub(super) fn data_extents(f: &std::fs::File, end: u64) -> Vec<(u64, u64)> {
    use std::os::fd::AsRawFd;
    let fd = f.as_raw_fd();
    let mut out = Vec::new();
    let mut at = 0u64;
    while at < end {
        let Ok(from) = libc::off_t::try_from(at) else {
            break;
        };
        // SAFETY: lseek on a descriptor we own; it only moves the file offset.
        let data = unsafe { libc::lseek(fd, from, libc::SEEK_DATA) };
        if data < 0 {
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::ENXIO) {
                return vec![(0, end)];
            }
            break;
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(fd, data, libc::SEEK_HOLE) };
        if hole < 0 {
            return vec![(0, end)];
        }
        let (start, stop) = (data as u64, (hole as u64).min(end));
        if start >= end {
            break;
        }
        out.push((start, stop));
        at = stop;
    }
    out
}
