//! The files of a partition directory: listed in the order tools show them, named with the
//! replace protocol's suffixes, measured, copied and stamped with modification times.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};

/// What the engine did to directories and staging, counted over the process: the work of a
/// plan grows with its segments as the broker's does (a listing per directory and pass, a few
/// files per segment), and tests hold it to that.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FsCounts {
    /// Directory listings ([`read_dir`]).
    pub listings: u64,
    /// Files a [`Staging`] made (placeholders, copies and emptied files, these held in memory):
    /// only those the engine writes, renames away from or reads as files of their own (see
    /// [`resolve`]).
    pub staged: u64,
}

static LISTINGS: AtomicU64 = AtomicU64::new(0);
static STAGED: AtomicU64 = AtomicU64::new(0);

/// The counts so far (see [`FsCounts`]).
pub fn fs_counts() -> FsCounts {
    FsCounts {
        listings: LISTINGS.load(Ordering::Relaxed),
        staged: STAGED.load(Ordering::Relaxed),
    }
}

/// Lists the directory `dir`, counted ([`FsCounts::listings`]): the engine's listings go
/// through here.
pub fn read_dir(dir: &Path) -> Result<std::fs::ReadDir> {
    LISTINGS.fetch_add(1, Ordering::Relaxed);
    std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))
}

/// The regular files of `dir` (a staged directory's files not yet made included, [`resolve`]),
/// unsorted: one counted listing.
pub fn regular_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in read_dir(dir)? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        if is_regular_file(&e)? {
            out.push(e.path());
        }
    }
    out.extend(unstaged_in(dir));
    out.extend(held_in(dir));
    Ok(out)
}

/// The regular files of `dir`, in base-offset order (per-segment files grouped), followed by
/// sub-directories (partition directories of a log dir).
pub fn list_dir(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for e in read_dir(dir)? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let p = e.path();
        // A non-file named like a segment file is an error naming it ([`is_regular_file`]).
        if !is_regular_file(&e)? && p.is_dir() {
            dirs.push(p);
        } else {
            files.push(p);
        }
    }
    files.extend(unstaged_in(dir));
    files.extend(held_in(dir));
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

/// The `.log` segments of a partition directory with their base offsets, oldest first. One
/// listing, by name: no file is opened or stat'ed (what a seek's cost starts with), but a
/// symbolic link, which is followed ([`is_regular_file`]).
pub fn segment_logs(dir: &Path) -> Result<Vec<(i64, PathBuf)>> {
    let mut logs = Vec::new();
    for e in read_dir(dir)? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let name = e.file_name();
        if let crate::format::names::FileKind::Log { base_offset } =
            crate::format::names::classify(&name.to_string_lossy())
        {
            // Anything but a file (or a link to one) named like a `.log` is an error naming it.
            if is_regular_file(&e)? {
                logs.push((base_offset, e.path()));
            }
        }
    }
    for p in unstaged_in(dir).into_iter().chain(held_in(dir)) {
        if let crate::format::names::FileKind::Log { base_offset } =
            crate::format::names::classify(&p.file_name().unwrap_or_default().to_string_lossy())
        {
            logs.push((base_offset, p));
        }
    }
    logs.sort();
    Ok(logs)
}

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
    .filter(|p| is_file(p))
    .collect()
}

/// Sets the modification time of the file `p`: the engine reads mtimes (retention falls back
/// on them), so a rewritten or split segment keeps the one of the segment it comes from.
pub fn set_mtime(p: &Path, mtime: SystemTime) -> Result<()> {
    prepare_write(p, true)?;
    if let Some(h) = held().get_mut(p) {
        h.mtime = mtime;
        return Ok(());
    }
    std::fs::File::options()
        .write(true)
        .open(p)
        .and_then(|f| f.set_modified(mtime))
        .map_err(|e| Error::io(p, e))
}

/// Copies the file `from` to `to` (a sparse tail stays a hole), writable even when `from` is
/// read-only (an archived copy), with the modification time `mtime`.
pub fn copy_writable(from: &Path, to: &Path, mtime: SystemTime) -> Result<()> {
    let dst = copy_sparse(from, to)?;
    // A new file is created with the process's default mode, not `from`'s: only a umask
    // that takes the owner's write bit away leaves it read-only.
    let mut perm = dst.metadata().map_err(|e| Error::io(to, e))?.permissions();
    if perm.readonly() {
        #[allow(clippy::permissions_set_readonly_false)] // the copy is ours to change
        perm.set_readonly(false);
        dst.set_permissions(perm).map_err(|e| Error::io(to, e))?;
    }
    dst.set_modified(mtime).map_err(|e| Error::io(to, e))
}

pub fn file_len(p: &Path) -> Result<u64> {
    Ok(len_and_mtime(p)?.0)
}

/// The length and modification time of the file `p` (links followed), a held file's from its
/// record ([`held`]).
pub fn len_and_mtime(p: &Path) -> Result<(u64, SystemTime)> {
    if let Some(h) = held().get(p) {
        return Ok((h.len, h.mtime));
    }
    let m = metadata(p)?;
    Ok((m.len(), m.modified().map_err(|e| Error::io(p, e))?))
}

/// The metadata of the file `p` (links followed), a staged file not yet made answered by its
/// original ([`resolve`]; a held file is made for it).
pub fn metadata(p: &Path) -> Result<std::fs::Metadata> {
    std::fs::metadata(resolve(p)).map_err(|e| Error::io(p, e))
}

/// Whether `p` exists (links followed), a staged file not yet made or held included.
pub fn exists(p: &Path) -> bool {
    is_held(p) || unresolved(p).exists()
}

/// Whether `p` is a regular file (links followed), a staged file not yet made or held included.
pub fn is_file(p: &Path) -> bool {
    is_held(p) || unresolved(p).is_file()
}

/// The leading bytes of an index file that can hold entries, and the file's length: a running
/// broker preallocates its indexes (10 MiB by default) as sparse zero-filled files, so what
/// lies past the last data extent is known to be zero without reading it.
#[derive(Debug)]
pub struct IndexBytes {
    /// The file from its start to past its last data extent, plus at least one zero slot when
    /// the file goes on (so a zero tail is seen); whole slots of 8 and of 12 bytes.
    pub data: IndexData,
    /// The file's length; bytes `data.len()..len` are zero.
    pub len: u64,
}

/// The bytes of [`IndexBytes`]: the file mapped read-only, never read whole into memory, so
/// only the pages a check visits become resident (a 2 GiB index whose data lies at both ends
/// costs the pages at its ends; Kafka maps its indexes too), and a pass over it keeps only a
/// window of them ([`IndexData::passed`]). A file a broker shrinks while mapped reads as zeros
/// past its new end and is reported as changed ([`super::live`]), never a SIGBUS.
#[derive(Debug)]
pub struct IndexData {
    // Dropped before the mapping it guards.
    _guard: Option<super::live::MapGuard>,
    map: Option<memmap2::Mmap>,
    released: std::cell::Cell<usize>,
}

/// Bytes of an index a pass keeps resident behind where it reads (a multiple of the page).
const INDEX_PASS_WINDOW: usize = 64 << 10;

impl IndexData {
    /// A reader of the bytes in order has reached byte `at`: the pages a window or more behind
    /// it leave this process's memory (they stay in the page cache and a read brings them back),
    /// so a pass over an index costs a window, not the index. A smaller `at` than before starts
    /// a new pass.
    pub fn passed(&self, at: usize) {
        let from = self.released.get();
        if at < from {
            self.released.set(at - at % INDEX_PASS_WINDOW);
        } else if at - from >= 2 * INDEX_PASS_WINDOW {
            self.release(at - at % INDEX_PASS_WINDOW - INDEX_PASS_WINDOW);
        }
    }

    /// Lets the pages of the bytes from the last release to `upto` go.
    fn release(&self, upto: usize) {
        let Some(map) = &self.map else { return };
        let (from, upto) = (self.released.get(), upto.min(map.len()));
        if upto > from {
            // SAFETY: a read-only shared file mapping: MADV_DONTNEED drops page-table entries
            // only, and the next access reads the same file bytes again. Failing, it is a hint
            // not taken.
            let _ = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, upto - from)
            };
            self.released.set(upto);
        }
    }

    /// `rule` (a zero-tail rule of `slot`-byte entries: the first slot past slot 0 of its bytes
    /// that matches, else None; slot 0 only when the bytes' first slots say so) over the bytes a
    /// window at a time, each let go once searched ([`IndexData::passed`]), so the search costs
    /// a window of memory. Each window after the first starts one slot early: a match past its
    /// slot 0 is a match past the previous window's last slot, and its slot 0 (a slot the
    /// previous window searched) cannot match.
    pub fn find_slot(&self, slot: usize, rule: impl Fn(&[u8]) -> Option<usize>) -> Option<usize> {
        let window = INDEX_PASS_WINDOW / slot * slot;
        let mut first: usize = 0;
        loop {
            let lo = first.saturating_sub(1) * slot;
            let hi = (lo + window).min(self.len());
            let found = rule(&self[lo..hi]).map(|i| lo / slot + i);
            self.passed(hi);
            if found.is_some() || hi == self.len() {
                // The pass that follows starts at the front.
                self.release(hi);
                return found;
            }
            first = hi / slot;
        }
    }
}

impl std::ops::Deref for IndexData {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.map.as_deref().unwrap_or_default()
    }
}

/// The LCM of the offset (8) and time (12) index entry sizes: a prefix of whole slots of both.
const SLOT_MULTIPLE: u64 = 24;

/// Reads an index file as [`IndexBytes`], skipping the holes of a sparse file.
pub fn read_index(p: &Path) -> Result<IndexBytes> {
    let (f, len, end) = open_sparse(p)?;
    let data = map_prefix(&f, p, index_prefix_len(end, len))?;
    Ok(IndexBytes { data, len })
}

/// The whole file `p` (a `.txnindex`: every byte counts) mapped read-only, as [`IndexData`].
pub fn map_whole(p: &Path) -> Result<IndexData> {
    let f = open_regular(p)?;
    let len = f.metadata().map_err(|e| Error::io(p, e))?.len();
    map_prefix(&f, p, len)
}

/// The first `n` bytes (all there) of the file `f` at `p`, mapped read-only.
fn map_prefix(f: &std::fs::File, p: &Path, n: u64) -> Result<IndexData> {
    if n == 0 {
        return Ok(IndexData {
            _guard: None,
            map: None,
            released: Default::default(),
        });
    }
    let n_usize =
        usize::try_from(n).map_err(|_| Error::invalid(p, format!("{n} bytes cannot be mapped")))?;
    // SAFETY: a read-only map of a file of at least `n` bytes (measured just now); a file cut
    // short under it faults into the guard made next, not into a SIGBUS (see `IndexData`).
    let map =
        unsafe { memmap2::MmapOptions::new().len(n_usize).map(f) }.map_err(|e| Error::io(p, e))?;
    super::progress::read(n);
    Ok(IndexData {
        _guard: Some(super::live::MapGuard::new(map.as_ptr(), n_usize, p)),
        map: Some(map),
        released: Default::default(),
    })
}

/// How many leading bytes of the index file `f` (of `len` bytes) [`read_index`] reads.
pub fn index_read_len(f: &std::fs::File, len: u64) -> u64 {
    index_prefix_len(data_end(f, len), len)
}

/// The prefix of an index of `len` bytes whose data ends at `end`: whole slots of both
/// entry sizes, with at least one zero slot after the data when the file goes on.
fn index_prefix_len(end: u64, len: u64) -> u64 {
    if end >= len {
        len
    } else {
        (end.div_ceil(SLOT_MULTIPLE) * SLOT_MULTIPLE + SLOT_MULTIPLE).min(len)
    }
}

/// Bytes read per step backwards by [`read_index_last_slot`]: a page, which holds the last
/// entry unless the zero-filled tail of a preallocated file reaches into the page before.
const INDEX_TAIL_READ_BYTES: u64 = 4096;

/// The last whole `slot`-byte slot of the index file `p` that is not all zeros (the broker never
/// writes an all-zero entry past slot 0: offsets and positions ascend), read backwards from the
/// end of the file's data a page at a time, so neither the entries before it nor the holes of a
/// preallocated sparse file are read. `None` when the file is missing or holds only zeros.
pub fn read_index_last_slot(p: &Path, slot: usize) -> Result<Option<Vec<u8>>> {
    use std::io::{Read, Seek, SeekFrom};
    let (mut f, len, end) = match open_sparse(p) {
        Ok(x) => x,
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    let slot_bytes = slot as u64;
    // Whole slots only: a partial entry at the end is not one.
    let mut hi = end.min(len) / slot_bytes * slot_bytes;
    let mut window = Vec::new();
    while hi > 0 {
        let lo = hi.saturating_sub(INDEX_TAIL_READ_BYTES) / slot_bytes * slot_bytes;
        window.resize((hi - lo) as usize, 0);
        f.seek(SeekFrom::Start(lo)).map_err(|e| Error::io(p, e))?;
        f.read_exact(&mut window).map_err(|e| Error::io(p, e))?;
        if let Some(last) = window
            .chunks_exact(slot)
            .rev()
            .find(|c| c.iter().any(|&b| b != 0))
        {
            return Ok(Some(last.to_vec()));
        }
        hi = lo;
    }
    Ok(None)
}

/// `p` opened for reading at its start, with its length and where its last data extent ends.
/// A placeholder's bytes are its original's ([`open_data`]).
fn open_sparse(p: &Path) -> Result<(std::fs::File, u64, u64)> {
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
fn data_extents(f: &std::fs::File, end: u64) -> Vec<(u64, u64)> {
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

/// Whether the first `n` bytes of `a` and `b` are equal (both must be that long), read in
/// chunks; what lies past both files' data extents is zero in both and is not read. Two names
/// of the same bytes are not read at all: a placeholder's bytes are a prefix of its
/// original's, and a staged file not yet made is its original ([`resolve`]).
pub fn same_prefix(a: &Path, b: &Path, n: u64) -> Result<bool> {
    use std::io::Read;
    const CHUNK: usize = 1 << 16;
    if n == 0 {
        return Ok(true);
    }
    let bytes_of = |p: &Path| placeholder_origin(p).unwrap_or_else(|| unresolved(p));
    if !is_held(a) && !is_held(b) && bytes_of(a) == bytes_of(b) {
        return Ok(true);
    }
    let ((mut fa, end_a), (mut fb, end_b)) = (open_sparse_reader(a)?, open_sparse_reader(b)?);
    let mut left = n.min(end_a.max(end_b));
    let (mut ba, mut bb) = (vec![0u8; CHUNK], vec![0u8; CHUNK]);
    while left > 0 {
        let k = left.min(CHUNK as u64) as usize;
        fa.read_exact(&mut ba[..k]).map_err(|e| Error::io(a, e))?;
        fb.read_exact(&mut bb[..k]).map_err(|e| Error::io(b, e))?;
        if ba[..k] != bb[..k] {
            return Ok(false);
        }
        left -= k as u64;
    }
    Ok(true)
}

/// Milliseconds since the epoch of a file's mtime.
pub fn mtime_ms(path: &Path) -> Result<i64> {
    let (_, modified) = len_and_mtime(path)?;
    Ok(match modified.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    })
}

/// The planning overlay: while a repair is planned, the engine runs on a staging directory
/// whose segment data files (`.log`, and their `.swap`/`.cleaned`/`.deleted` forms) are
/// *placeholders*: sparse files of the original's length and mtime, no data. Their bytes are
/// read from the original file ([`open_data`]), so unchanged data is never copied; what the
/// engine does to a placeholder is the record of what it would do to the original: a cut
/// shortens it (a recorded length), a rename moves it, a deletion unlinks it. Every other file
/// the engine writes is a real file in the staging directory, or a held one ([`Held`]). The map from placeholder to
/// original lives here, in the one place through which the engine opens, renames and deletes
/// segment data ([`open_data`], [`rename`], [`remove_file`], [`create_truncated`]).
static PLACEHOLDERS: Locked<PathBuf> = Locked::new(PathMap::new());

/// A process-wide map of staged paths (to the original files they stand for, or held files).
type Locked<V> = std::sync::Mutex<PathMap<V>>;

/// Staged paths by directory, then by name: a lookup compares a few directories and then
/// names as bytes (a map keyed by whole paths compared them component by component, most of
/// a plan's CPU time over many segments), and a directory's entries are listed without a
/// pass over every staged path.
#[derive(Debug)]
struct PathMap<V> {
    dirs: std::collections::BTreeMap<PathBuf, std::collections::BTreeMap<std::ffi::OsString, V>>,
}

/// The directory and name of `p` (a path without a name is keyed as itself, unnamed).
fn split(p: &Path) -> (&Path, &std::ffi::OsStr) {
    match (p.parent(), p.file_name()) {
        (Some(d), Some(n)) => (d, n),
        _ => (p, std::ffi::OsStr::new("")),
    }
}

impl<V> PathMap<V> {
    const fn new() -> Self {
        PathMap {
            dirs: std::collections::BTreeMap::new(),
        }
    }

    fn get(&self, p: &Path) -> Option<&V> {
        let (d, n) = split(p);
        self.dirs.get(d)?.get(n)
    }

    fn get_mut(&mut self, p: &Path) -> Option<&mut V> {
        let (d, n) = split(p);
        self.dirs.get_mut(d)?.get_mut(n)
    }

    fn contains_key(&self, p: &Path) -> bool {
        self.get(p).is_some()
    }

    fn insert(&mut self, p: PathBuf, v: V) -> Option<V> {
        let (d, n) = split(&p);
        let n = n.to_os_string();
        match self.dirs.get_mut(d) {
            Some(names) => names.insert(n, v),
            None => {
                let names = std::collections::BTreeMap::from([(n, v)]);
                self.dirs.insert(d.to_path_buf(), names);
                None
            }
        }
    }

    fn remove(&mut self, p: &Path) -> Option<V> {
        let (d, n) = split(p);
        let names = self.dirs.get_mut(d)?;
        let v = names.remove(n);
        if names.is_empty() {
            self.dirs.remove(d);
        }
        v
    }

    fn extend(&mut self, entries: impl IntoIterator<Item = (PathBuf, V)>) {
        for (p, v) in entries {
            self.insert(p, v);
        }
    }

    #[cfg(test)]
    fn keys(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.dirs
            .iter()
            .flat_map(|(d, names)| names.keys().map(move |n| d.join(n)))
    }

    /// The paths in the directory `dir`.
    fn in_dir(&self, dir: &Path) -> Vec<PathBuf> {
        self.dirs
            .get(dir)
            .map(|names| names.keys().map(|n| dir.join(n)).collect())
            .unwrap_or_default()
    }

    /// The paths under `root`.
    fn under(&self, root: &Path) -> Vec<PathBuf> {
        self.dirs
            .iter()
            .filter(|(d, _)| d.starts_with(root))
            .flat_map(|(d, names)| names.keys().map(move |n| d.join(n)))
            .collect()
    }

    /// Forgets the paths under `root`.
    fn remove_under(&mut self, root: &Path) {
        self.dirs.retain(|d, _| !d.starts_with(root));
    }
}

fn locked<V>(map: &'static Locked<V>) -> std::sync::MutexGuard<'static, PathMap<V>> {
    // A panic elsewhere cannot leave a map half-changed: every change is one call.
    map.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn placeholders() -> std::sync::MutexGuard<'static, PathMap<PathBuf>> {
    locked(&PLACEHOLDERS)
}

/// The original file whose bytes the placeholder `p` stands for, if `p` is one.
pub fn placeholder_origin(p: &Path) -> Option<PathBuf> {
    placeholders().get(p).cloned()
}

/// What a file of type `t` is, in words, when it is not a regular file.
pub fn not_regular(t: std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    Some(if t.is_file() {
        return None;
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_dir() {
        "a directory"
    } else {
        "something else"
    })
}

fn not_regular_error(p: &Path, what: &str) -> Error {
    Error::invalid(
        p,
        format!("{what}, not a regular file: only regular files (or links to them) are read as Kafka files"),
    )
}

/// Opens the file `p` for reading (links followed; a staged file not yet made is its original,
/// [`resolve`]) if it is a regular file, else an error naming what it is: the one way the
/// engine opens a file to read it. A FIFO would block the open and the reads forever, a device
/// never ends: the type is checked before the open, the open does not block (`O_NONBLOCK`),
/// and the type is checked again on the descriptor (the name may have been replaced between).
pub fn open_regular(p: &Path) -> Result<std::fs::File> {
    open_regular_at(p, &resolve(p))
}

/// [`open_regular`] of the file at `at`, errors naming `p`.
fn open_regular_at(p: &Path, at: &Path) -> Result<std::fs::File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let before = std::fs::metadata(at).map_err(|e| Error::io(p, e))?;
    if let Some(what) = not_regular(before.file_type()) {
        return Err(not_regular_error(p, what));
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(at)
        .map_err(|e| Error::io(p, e))?;
    let after = f.metadata().map_err(|e| Error::io(p, e))?;
    if let Some(what) = not_regular(after.file_type()) {
        return Err(not_regular_error(p, what));
    }
    // Regular-file reads ignore the flag; cleared so the descriptor is an ordinary one.
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(f)
}

/// The whole regular file `p` ([`open_regular`]; a held one's from its record), refused
/// unread when longer than `cap` bytes, the most a `what` can hold: a state file linked to
/// `/dev/zero` or grown without bound is an error, not an allocation. A file whose length
/// changes while read is recorded as changed ([`super::live`]) and is an error.
pub fn read_capped(p: &Path, cap: u64, what: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    if let Some(h) = held().get(p) {
        let mut out = h.data.clone();
        out.resize(h.len as usize, 0);
        return Ok(out);
    }
    let f = open_regular(p)?;
    let len = f.metadata().map_err(|e| Error::io(p, e))?.len();
    if len > cap {
        return Err(Error::invalid(
            p,
            format!("{len} bytes, more than a {what} can hold ({cap} bytes at most): not read"),
        ));
    }
    let mut out = Vec::with_capacity(len as usize);
    (&f).take(cap.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| Error::io(p, e))?;
    if out.len() as u64 != len {
        super::live::note_changed(p);
        return Err(Error::invalid(
            p,
            format!(
                "{}: {len} bytes when opened, {} read",
                super::live::CHANGED_MESSAGE,
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// The small state files read whole, each with the most its format lets it hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateFile {
    /// `leader-epoch-checkpoint` and the log dir's offset checkpoints: a line per epoch or
    /// partition (a partition's at most ~290 bytes: a 249-character topic and two numbers), so
    /// 64 MiB is over 200 k partitions.
    Checkpoint,
    /// `partition.metadata`, `meta.properties`, `quorum-state`: a few short lines.
    Properties,
    /// A producer `.snapshot`: as many entries as its count says ([`snapshot::max_len`]).
    ///
    /// [`snapshot::max_len`]: crate::format::snapshot::max_len
    ProducerSnapshot,
}

/// The whole state file `p` of kind `kind`, read with its format's cap ([`read_capped`]).
pub fn read_state(p: &Path, kind: StateFile) -> Result<Vec<u8>> {
    use crate::format::snapshot;
    let (cap, what) = match kind {
        StateFile::Checkpoint => (64 << 20, "checkpoint file"),
        StateFile::Properties => (1 << 20, "properties file"),
        StateFile::ProducerSnapshot => {
            let mut head = [0u8; snapshot::PRODUCER_SNAPSHOT_HEADER_BYTES];
            let n = open_bytes(p)?
                .read_at(&mut head, 0)
                .map_err(|e| Error::io(p, e))?;
            (snapshot::max_len(&head[..n]), "producer snapshot")
        }
    };
    read_capped(p, cap, what)
}

/// Opens the bytes of the data file `p` for reading, with their length: the file itself, or,
/// for a placeholder, the original it stands for, cut to the placeholder's length.
pub fn open_data(p: &Path) -> Result<(std::fs::File, u64)> {
    let origin = placeholder_origin(p);
    let len = file_len(p)?;
    let Some(origin) = origin else {
        return Ok((open_regular(p)?, len));
    };
    let f = open_regular_at(&origin, &origin)?;
    let origin_len = f.metadata().map_err(|e| Error::io(&origin, e))?.len();
    if len > origin_len {
        // Planning never appends to an existing segment; a longer placeholder would read
        // bytes nobody wrote.
        return Err(Error::invalid(
            p,
            format!(
                "a planned file grew past its original {} ({len} > {origin_len} bytes)",
                origin.display()
            ),
        ));
    }
    Ok((f, len))
}

/// Renames `from` to `to` (the engine's renames: swaps, `.deleted`, split segments moved in),
/// a placeholder keeping what it stands for.
pub fn rename(from: &Path, to: &Path) -> Result<()> {
    let unmade = unstaged().get(from).cloned();
    if let Some(original) = unmade {
        // Nothing on disk to move: the name the original is staged under moves.
        remove_file(to)?;
        let mut map = unstaged();
        map.remove(from);
        map.insert(to.to_path_buf(), original);
        return Ok(());
    }
    if is_held(from) {
        // Nothing on disk either: the record moves.
        remove_file(to)?;
        let mut map = held();
        if let Some(h) = map.remove(from) {
            map.insert(to.to_path_buf(), h);
        }
        return Ok(());
    }
    std::fs::rename(from, to).map_err(|e| Error::io(from, e))?;
    unstaged().remove(to);
    held().remove(to);
    let mut map = placeholders();
    map.remove(to);
    if let Some(origin) = map.remove(from) {
        map.insert(to.to_path_buf(), origin);
    }
    Ok(())
}

/// Unlinks `p` if it exists (a missing file is no error), a placeholder included.
pub fn remove_file(p: &Path) -> Result<()> {
    if unstaged().remove(p).is_some() || held().remove(p).is_some() {
        return Ok(());
    }
    match std::fs::remove_file(p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(p, e)),
        _ => {}
    }
    placeholders().remove(p);
    Ok(())
}

/// Creates `p` empty for reading and writing (replacing what held the name: a placeholder
/// becomes an ordinary new file).
pub fn create_truncated(p: &Path) -> Result<std::fs::File> {
    unstaged().remove(p);
    held().remove(p);
    placeholders().remove(p);
    std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .write(true)
        .truncate(true)
        .open(p)
        .map_err(|e| Error::io(p, e))
}

/// Makes the placeholder `p` (if it is one) an ordinary file holding its bytes: a file the
/// executor copies from must hold them.
pub fn materialize(p: &Path) -> Result<()> {
    use std::io::Read;
    prepare_write(p, true)?;
    let Some(origin) = placeholder_origin(p) else {
        return Ok(());
    };
    let mtime = std::fs::metadata(p)
        .and_then(|m| m.modified())
        .map_err(|e| Error::io(p, e))?;
    let (src, len) = open_data(p)?;
    let mut dst = std::fs::File::create(p).map_err(|e| Error::io(p, e))?;
    std::io::copy(&mut src.take(len), &mut dst).map_err(|e| Error::io(p, e))?;
    drop(dst);
    set_mtime(p, mtime)?;
    let mut map = placeholders();
    if map.get(p) == Some(&origin) {
        map.remove(p);
    }
    Ok(())
}

/// Whether the directory entry `e` of a partition directory is a file the commands read: a
/// regular file or a symbolic link to one. Every command reads a link as the file it names, as
/// the broker's `File.isFile` does (repairs refuse to change one: `ops::repair::apply`).
///
/// A directory, a link to one, a link leading nowhere or any other entry is not a file; one
/// named like a segment file (`.log`, `.index`, `.timeindex`, `.txnindex`) is an error naming
/// it and what it is, never skipped: the broker's load skips it as not a file (`LogLoader`'s
/// `File.isFile` filters), and deletes an index whose `.log` does not exist (`exists()`, which
/// a dangling link fails) as an orphan, so what the entry stands for is the operator's to
/// decide before anything reads or repairs it.
pub fn is_regular_file(e: &std::fs::DirEntry) -> Result<bool> {
    let p = e.path();
    let t = e.file_type().map_err(|err| Error::io(&p, err))?;
    if t.is_file() {
        return Ok(true);
    }
    let what = if t.is_symlink() {
        let to = std::fs::read_link(&p).map_err(|err| Error::io(&p, err))?;
        match std::fs::metadata(&p) {
            Ok(m) if m.is_file() => return Ok(true),
            Ok(m) if m.is_dir() => format!("a symbolic link to a directory ({})", to.display()),
            Ok(_) => format!(
                "a symbolic link to something not a regular file ({})",
                to.display()
            ),
            Err(err) => format!(
                "a symbolic link that leads to no file ({}: {err})",
                to.display()
            ),
        }
    } else if t.is_dir() {
        "a directory".to_string()
    } else {
        "not a regular file".to_string()
    };
    if crate::format::names::classify(&e.file_name().to_string_lossy()).is_segment_file() {
        return Err(Error::invalid(
            &p,
            format!(
                "named like a segment file but {what}: the broker's load would skip it as not a \
                 file (and, for a .log leading nowhere, delete its segment's indexes as \
                 orphans); restore the file it stands for or move it out of the partition \
                 directory"
            ),
        ));
    }
    Ok(false)
}

/// The files of the [`Staging`]s alive that are staged but not yet made: staged path ->
/// original. Every function here that reads, stats or lists a staged path answers from the
/// original; the first that changes one makes it ([`prepare_write`]); a rename moves the
/// entry and a deletion drops it, no file made.
static UNSTAGED: Locked<PathBuf> = Locked::new(PathMap::new());

fn unstaged() -> std::sync::MutexGuard<'static, PathMap<PathBuf>> {
    locked(&UNSTAGED)
}

/// The path whose bytes and metadata `p` has: for a staged file not yet made, its original;
/// else `p` itself. What the engine opens for reading goes through here.
/// A held file is made first ([`make_held_real`]): the caller opens the path. (A failure to
/// make it leaves it missing, and the caller's open reports that, naming the path.)
pub fn resolve(p: &Path) -> PathBuf {
    if is_held(p) {
        let _ = make_held_real(p);
    }
    unresolved(p)
}

/// [`resolve`] without making a held file: for questions the record answers.
fn unresolved(p: &Path) -> PathBuf {
    unstaged()
        .get(p)
        .cloned()
        .unwrap_or_else(|| p.to_path_buf())
}

/// The staged files not yet made in the directory `dir` (none outside a [`Staging`]).
fn unstaged_in(dir: &Path) -> Vec<PathBuf> {
    unstaged().in_dir(dir)
}

/// A file the engine made in a staging directory that is held in memory instead of on disk:
/// its length, its leading bytes (the rest zeros) and its mtime. Over many segments most new
/// files of a plan are indexes created, sized, trimmed and never written, and 10-byte producer
/// snapshots: on disk, each cost a create, resizes, reopens and an unlink of the staging
/// directory at the end, most of a dry run's time.
#[derive(Debug, Clone)]
struct Held {
    data: Vec<u8>,
    len: u64,
    mtime: SystemTime,
}

/// Bytes of data a held file may have; a write past them makes it a real file.
const HELD_MAX_BYTES: u64 = 4096;

/// The held files of the [`Staging`]s alive, by path. Every function here that stats, lists,
/// reads, renames or deletes a path answers a held one from its record; one that needs a real
/// file (an open by path, [`resolve`]) makes it first ([`make_held_real`]).
static HELD: Locked<Held> = Locked::new(PathMap::new());

fn held() -> std::sync::MutexGuard<'static, PathMap<Held>> {
    locked(&HELD)
}

fn is_held(p: &Path) -> bool {
    held().contains_key(p)
}

/// The held files in the directory `dir`.
fn held_in(dir: &Path) -> Vec<PathBuf> {
    held().in_dir(dir)
}

/// Whether `p` lies in the work directory of a [`Staging`] alive (a file there may be held).
fn in_staging(p: &Path) -> bool {
    staged_dirs().iter().any(|d| p.starts_with(d))
}

/// Makes the held file `p` a real one with its bytes, length and mtime.
fn make_held_real(p: &Path) -> Result<()> {
    let Some(h) = held().remove(p) else {
        return Ok(());
    };
    std::fs::File::create(p)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(&h.data)?;
            if h.len > h.data.len() as u64 {
                f.set_len(h.len)?;
            }
            f.set_modified(h.mtime)
        })
        .map_err(|e| Error::io(p, e))
}

/// Creates the file `p`, which does not exist, as `len` zero bytes: held when in a staging
/// directory.
pub fn create_zeroed(p: &Path, len: u64) -> Result<()> {
    unstaged().remove(p);
    placeholders().remove(p);
    if in_staging(p) {
        let h = Held {
            data: Vec::new(),
            len,
            mtime: SystemTime::now(),
        };
        held().insert(p.to_path_buf(), h);
        return Ok(());
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(p)
        .and_then(|f| f.set_len(len))
        .map_err(|e| Error::io(p, e))
}

/// Sets the length of the existing file `p` (`ftruncate`: the mtime changes too).
pub fn set_len(p: &Path, len: u64) -> Result<()> {
    if let Some(h) = held().get_mut(p) {
        h.data.truncate(len as usize);
        h.len = len;
        h.mtime = SystemTime::now();
        return Ok(());
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(resolve(p))
        .and_then(|f| f.set_len(len))
        .map_err(|e| Error::io(p, e))
}

/// Writes `bytes` at `pos` of the file `p` (created when missing and `create`, never
/// truncated): in memory for a held file (and a new one in a staging directory) while its data
/// stays within [`HELD_MAX_BYTES`]. Returns the real file written, for its sync.
pub fn write_at(p: &Path, bytes: &[u8], pos: u64, create: bool) -> Result<Option<std::fs::File>> {
    use std::os::unix::fs::FileExt;
    let end = pos + bytes.len() as u64;
    if end <= HELD_MAX_BYTES {
        let mut map = held();
        let fresh = create && !map.contains_key(p) && in_staging(p) && !exists_unheld(p);
        if fresh {
            let h = Held {
                data: Vec::new(),
                len: 0,
                mtime: SystemTime::now(),
            };
            map.insert(p.to_path_buf(), h);
        }
        if let Some(h) = map.get_mut(p) {
            if h.data.len() < end as usize {
                h.data.resize(end as usize, 0);
            }
            h.data[pos as usize..end as usize].copy_from_slice(bytes);
            h.len = h.len.max(end);
            h.mtime = SystemTime::now();
            return Ok(None);
        }
    }
    make_held_real(p)?;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(create)
        .truncate(false)
        .open(p)
        .map_err(|e| Error::io(p, e))?;
    f.write_all_at(bytes, pos).map_err(|e| Error::io(p, e))?;
    Ok(Some(f))
}

/// Whether `p` exists on disk or staged not yet made (not held).
fn exists_unheld(p: &Path) -> bool {
    unresolved(p).exists()
}

/// `fsync` of the file `p` ([`sync_all`]): nothing for a file in a staging directory.
pub fn sync_path(p: &Path) -> Result<()> {
    if in_staging(p) {
        return Ok(());
    }
    let f = std::fs::File::open(p).map_err(|e| Error::io(p, e))?;
    sync_all(&f, p)
}

/// The bytes of a file opened for reading: the file, or a held file's record.
#[derive(Debug)]
pub enum Reader {
    File(std::fs::File),
    Held { data: Vec<u8>, len: u64, pos: u64 },
}

impl Reader {
    /// Reads from byte `at` into `buf`, as `FileExt::read_at`.
    pub fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt;
        match self {
            Reader::File(f) => f.read_at(buf, at),
            Reader::Held { data, len, .. } => {
                let n = len.saturating_sub(at).min(buf.len() as u64) as usize;
                for (i, b) in buf[..n].iter_mut().enumerate() {
                    *b = data.get(at as usize + i).copied().unwrap_or(0);
                }
                Ok(n)
            }
        }
    }

    /// The length of the bytes.
    pub fn byte_len(&self) -> std::io::Result<u64> {
        match self {
            Reader::File(f) => Ok(f.metadata()?.len()),
            Reader::Held { len, .. } => Ok(*len),
        }
    }

    /// Where the last data extent ends ([`data_end`]); past it, zeros.
    pub fn data_end(&self, len: u64) -> u64 {
        match self {
            Reader::File(f) => data_end(f, len),
            Reader::Held { data, .. } => (data.len() as u64).min(len),
        }
    }
}

impl std::io::Read for Reader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Reader::File(f) => f.read(buf),
            Reader::Held { pos, .. } => {
                let at = *pos;
                let n = self.read_at(buf, at)?;
                if let Reader::Held { pos, .. } = self {
                    *pos += n as u64;
                }
                Ok(n)
            }
        }
    }
}

/// Opens the file `p` for reading (never a placeholder's original: see [`open_data`]), a held
/// one from its record.
pub fn open_bytes(p: &Path) -> Result<Reader> {
    if let Some(h) = held().get(p) {
        return Ok(Reader::Held {
            data: h.data.clone(),
            len: h.len,
            pos: 0,
        });
    }
    open_regular(p).map(Reader::File)
}

/// [`open_sparse`] as a [`Reader`] (a held file's data ends with its bytes), without the
/// length.
fn open_sparse_reader(p: &Path) -> Result<(Reader, u64)> {
    if let Some(h) = held().get(p) {
        let end = h.data.len() as u64;
        let r = Reader::Held {
            data: h.data.clone(),
            len: h.len,
            pos: 0,
        };
        return Ok((r, end));
    }
    let (f, _, end) = open_sparse(p)?;
    Ok((Reader::File(f), end))
}

/// Makes the staged file `p` (if it is one not yet made) before the engine changes it: segment
/// data as a placeholder of its original, any other file as a writable copy (`keep`), or, when
/// the change drops the bytes anyway (a reset), an empty file; each with the original's mtime.
/// Nothing for any other path.
pub fn prepare_write(p: &Path, keep: bool) -> Result<()> {
    prepare(p, keep, false)
}

/// [`prepare_write`] for a writer that changes the file through this module only
/// ([`set_len`], [`write_at`]): the empty file of a reset is held ([`held`]), not made.
pub fn prepare_held_write(p: &Path, keep: bool) -> Result<()> {
    prepare(p, keep, true)
}

fn prepare(p: &Path, keep: bool, hold: bool) -> Result<()> {
    let Some(original) = unstaged().get(p).cloned() else {
        return Ok(());
    };
    let meta = std::fs::metadata(&original).map_err(|e| Error::io(&original, e))?;
    let mtime = meta.modified().map_err(|e| Error::io(&original, e))?;
    let name = p.file_name().unwrap_or_default().to_string_lossy();
    if keep && is_segment_data(&name) {
        stage_placeholder(&original, p, meta.len(), mtime)?;
    } else {
        if keep {
            copy_writable(&original, p, mtime)?;
        } else if !hold {
            std::fs::File::create(p)
                .and_then(|f| f.set_modified(mtime))
                .map_err(|e| Error::io(p, e))?;
        } else {
            held().insert(
                p.to_path_buf(),
                Held {
                    data: Vec::new(),
                    len: 0,
                    mtime,
                },
            );
        }
        STAGED.fetch_add(1, Ordering::Relaxed);
    }
    unstaged().remove(p);
    Ok(())
}

/// Whether a file of this name holds segment data (staged as a placeholder for planning).
fn is_segment_data(name: &str) -> bool {
    use crate::format::names::{CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, SWAP_FILE_SUFFIX};
    let base = [CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, SWAP_FILE_SUFFIX]
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(name);
    matches!(
        crate::format::names::classify(base),
        crate::format::names::FileKind::Log { .. }
    )
}

/// A staging directory for planning a repair of one partition directory: what the engine
/// changes there is the plan. Dropping it forgets its placeholders (and removes the scratch
/// directory it made itself).
#[derive(Debug)]
pub struct Staging {
    _scratch: Option<tempfile::TempDir>,
    scratch: PathBuf,
    work: PathBuf,
}

impl Staging {
    /// Stages the partition directory `from` in a new scratch directory, under its own name.
    pub fn new(from: &Path, skip_suffix: &str) -> Result<Self> {
        let tmp = tempfile::tempdir().map_err(|e| Error::io(&std::env::temp_dir(), e))?;
        let scratch = tmp.path().to_path_buf();
        let mut staging = Staging::within(&scratch, ".", from, skip_suffix)?;
        staging._scratch = Some(tmp);
        Ok(staging)
    }

    /// Stages the partition directory `from` as `<scratch>/<sub>/<name of from>`, lazily: its
    /// regular files (leaving out those whose names end in `skip_suffix`, the executor's
    /// temporary files) are staged under their names but made there only when the engine
    /// changes them ([`prepare_write`]: segment data as a placeholder, any other file as a
    /// writable copy with its mtime); until then every read, stat and listing of the staged
    /// name is answered from the original ([`resolve`]). So a plan costs what it changes, not
    /// what the directory holds.
    pub fn within(scratch: &Path, sub: &str, from: &Path, skip_suffix: &str) -> Result<Self> {
        // `.` or `..` has no name of its own: the directory's real one.
        let name = match from.file_name() {
            Some(name) => name.to_os_string(),
            None => std::fs::canonicalize(from)
                .map_err(|e| Error::io(from, e))?
                .file_name()
                .map_or_else(|| "partition".into(), |n| n.to_os_string()),
        };
        let work = scratch.join(sub).join(name);
        std::fs::create_dir_all(&work).map_err(|e| Error::io(&work, e))?;
        let staging = Staging {
            _scratch: None,
            scratch: scratch.to_path_buf(),
            work,
        };
        staged_dirs().push(staging.work.clone());
        let mut names = Vec::new();
        for e in read_dir(from)? {
            let e = e.map_err(|e| Error::io(from, e))?;
            if !is_regular_file(&e)? || e.file_name().to_string_lossy().ends_with(skip_suffix) {
                continue;
            }
            names.push((staging.work.join(e.file_name()), e.path()));
        }
        unstaged().extend(names);
        Ok(staging)
    }

    /// Makes every staged file not yet made (for readers that open the staged directory's
    /// files themselves, `verify`).
    pub fn materialize_all(&self) -> Result<()> {
        let unmade = unstaged().under(&self.work);
        unmade.iter().try_for_each(|p| prepare_write(p, true))?;
        self.make_held_real()
    }

    /// Makes every held file of the staged directory a real one ([`make_held_real`]).
    fn make_held_real(&self) -> Result<()> {
        let held_here = held().under(&self.work);
        held_here.iter().try_for_each(|p| make_held_real(p))
    }

    /// An empty staging directory, for data files staged one by one ([`Staging::stage_data`]).
    pub fn empty() -> Result<Self> {
        let tmp = tempfile::tempdir().map_err(|e| Error::io(&std::env::temp_dir(), e))?;
        let scratch = tmp.path().to_path_buf();
        staged_dirs().push(scratch.clone());
        Ok(Staging {
            _scratch: Some(tmp),
            work: scratch.clone(),
            scratch,
        })
    }

    /// Stages the segment data file `original` as the placeholder `name` in the staged
    /// directory (a renamed segment, staged under the name the engine expects).
    pub fn stage_data(&self, original: &Path, name: &str) -> Result<PathBuf> {
        let to = self.work.join(name);
        unstaged().insert(to.clone(), original.to_path_buf());
        Ok(to)
    }

    /// The staged partition directory.
    pub fn work(&self) -> &Path {
        &self.work
    }

    /// The scratch directory holding it (for other staged files, e.g. checkpoints).
    pub fn scratch(&self) -> &Path {
        &self.scratch
    }
}

/// Makes `to` a placeholder of `original`: a file of its length holding no data, with its mtime.
fn stage_placeholder(
    original: &Path,
    to: &Path,
    len: u64,
    mtime: std::time::SystemTime,
) -> Result<()> {
    std::fs::File::create(to)
        .and_then(|f| {
            if len > 0 {
                f.set_len(len)?;
            }
            f.set_modified(mtime)
        })
        .map_err(|err| Error::io(to, err))?;
    STAGED.fetch_add(1, Ordering::Relaxed);
    placeholders().insert(to.to_path_buf(), original.to_path_buf());
    Ok(())
}

impl Drop for Staging {
    fn drop(&mut self) {
        placeholders().remove_under(&self.work);
        unstaged().remove_under(&self.work);
        if self._scratch.is_none() {
            // The scratch directory is the caller's and outlives the staging (a plan's
            // sources in it): the held files are made there. A failure leaves the file
            // missing, which the executor's read of it reports.
            let _ = self.make_held_real();
        }
        held().remove_under(&self.work);
        let mut staged = staged_dirs();
        if let Some(i) = staged.iter().position(|d| *d == self.work) {
            staged.swap_remove(i);
        }
    }
}

/// The work directories of the [`Staging`]s alive: what the engine writes there is a plan,
/// which no crash can leave half-written on the partition, so it is not fsynced.
static STAGED_DIRS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn staged_dirs() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    STAGED_DIRS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `fsync` of the engine's file `f` at `path`, as the broker syncs what it writes; skipped
/// for a staged file (planning): durability of a plan's scratch files means nothing, and
/// under a busy disk each fsync costs milliseconds (per segment, most of a dry run's time).
pub fn sync_all(f: &std::fs::File, path: &Path) -> Result<()> {
    if staged_dirs().iter().any(|d| path.starts_with(d)) {
        return Ok(());
    }
    f.sync_all().map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;

    fn read_data(p: &Path) -> Vec<u8> {
        let (f, len) = open_data(p).unwrap();
        let mut out = Vec::new();
        f.take(len).read_to_end(&mut out).unwrap();
        out
    }

    /// The windowed search finds what the rule finds on the whole file: matches on both sides
    /// of window boundaries, at slots 0 and 1, all-zero slots, none.
    #[test]
    fn find_slot_is_the_rule_on_the_whole_file() {
        use crate::format::index::{offset_index_zero_tail_start, time_index_zero_tail_start};
        let dir = tempfile::tempdir().unwrap();
        type Rule = fn(&[u8]) -> Option<usize>;
        let rules: [(usize, Rule); 2] = [
            (8, |b| offset_index_zero_tail_start(b, 0)),
            (12, |b| time_index_zero_tail_start(b, 0)),
        ];
        for (slot, rule) in rules {
            let window = INDEX_PASS_WINDOW / slot;
            let n = 3 * window + 7;
            let mut plants = vec![None, Some((0, true)), Some((1, true)), Some((1, false))];
            for w in 1..=3 {
                for d in [-2isize, -1, 0, 1] {
                    let at = (w * window) as isize + d;
                    plants.push(Some((at as usize, false)));
                    plants.push(Some((at as usize, true)));
                }
            }
            plants.push(Some((n - 1, true)));
            for plant in plants {
                // Slot i holds relative offset i + 1 (and more non-zero bytes); the planted slot
                // relative offset 0, the rest of it zero or not.
                let mut bytes = vec![0u8; n * slot + 3];
                for (i, c) in bytes.chunks_exact_mut(slot).enumerate() {
                    c.fill(1);
                    c[slot - 4..].copy_from_slice(&(i as u32 + 1).to_be_bytes());
                    if slot == 8 {
                        c[..4].copy_from_slice(&(i as u32 + 1).to_be_bytes());
                    }
                }
                if let Some((at, zero)) = plant {
                    let c = &mut bytes[at * slot..(at + 1) * slot];
                    c.fill(if zero { 0 } else { 1 });
                    let rel = if slot == 8 { 0..4 } else { 8..12 };
                    c[rel].fill(0);
                    if plant == Some((0, true)) {
                        bytes[slot..2 * slot].fill(0);
                    }
                }
                let p = dir.path().join("index");
                std::fs::write(&p, &bytes).unwrap();
                let data = read_index(&p).unwrap().data;
                assert_eq!(data.len(), bytes.len());
                let whole = rule(&bytes);
                assert_eq!(data.find_slot(slot, rule), whole, "slot {slot}, {plant:?}");
                // And again: a second search of the same map starts at its front.
                assert_eq!(data.find_slot(slot, rule), whole, "slot {slot}, {plant:?}");
            }
        }
    }

    #[test]
    fn staged_logs_are_placeholders_whose_cuts_renames_and_deletions_are_the_record() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t-0");
        std::fs::create_dir_all(&dir).unwrap();
        let data: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
        let log = dir.join("00000000000000000000.log");
        std::fs::write(&log, &data).unwrap();
        std::fs::write(dir.join("00000000000000000000.index"), [7u8; 8]).unwrap();
        std::fs::write(dir.join("x.kseg-tmp"), b"left over").unwrap();
        let staging = Staging::new(&dir, ".kseg-tmp").unwrap();
        let work = staging.work().to_path_buf();
        let staged = work.join("00000000000000000000.log");
        let index = work.join("00000000000000000000.index");
        // Staged lazily: nothing made yet, every read answered from the original.
        let before = fs_counts().staged;
        assert!(!staged.exists() && !index.exists());
        assert!(exists(&staged) && is_file(&index));
        assert_eq!(resolve(&staged), log);
        assert_eq!(file_len(&staged).unwrap(), data.len() as u64);
        assert_eq!(read_data(&staged), data);
        assert!(same_prefix(&log, &staged, data.len() as u64).unwrap());
        let mut listed = regular_files(&work).unwrap();
        listed.sort();
        assert_eq!(listed, [index.clone(), staged.clone()]);
        // The executor's leftovers are not staged.
        assert!(!exists(&work.join("x.kseg-tmp")));
        // Changed, the index is made: a writable copy.
        prepare_write(&index, true).unwrap();
        assert_eq!(std::fs::read(&index).unwrap(), [7u8; 8]);
        assert_eq!(resolve(&index), index);
        // Changed, the log is made a placeholder: the length and no data blocks; its bytes
        // are the original's.
        prepare_write(&staged, true).unwrap();
        assert_eq!(fs_counts().staged - before, 2);
        let meta = std::fs::metadata(&staged).unwrap();
        assert_eq!(meta.len(), data.len() as u64);
        assert_eq!(meta.blocks(), 0);
        assert_eq!(placeholder_origin(&staged).as_deref(), Some(log.as_path()));
        assert_eq!(read_data(&staged), data);
        assert!(same_prefix(&log, &staged, data.len() as u64).unwrap());
        // A cut is the placeholder's length.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&staged)
            .unwrap()
            .set_len(1000)
            .unwrap();
        assert_eq!(read_data(&staged), &data[..1000]);
        // A rename carries what it stands for; a deletion forgets it.
        let swapped = work.join("00000000000000000000.log.deleted");
        rename(&staged, &swapped).unwrap();
        assert_eq!(placeholder_origin(&staged), None);
        assert_eq!(read_data(&swapped), &data[..1000]);
        // Materialised, it holds its bytes itself.
        materialize(&swapped).unwrap();
        assert_eq!(placeholder_origin(&swapped), None);
        assert_eq!(std::fs::read(&swapped).unwrap(), &data[..1000]);
        // A placeholder never grows: planning must not read bytes nobody wrote.
        let other = work.join("00000000000000000005.log");
        std::fs::write(dir.join("00000000000000000005.log"), b"abc").unwrap();
        std::fs::write(&other, b"").unwrap();
        placeholders().insert(other.clone(), dir.join("00000000000000000005.log"));
        std::fs::write(&other, b"abcd").unwrap();
        assert!(open_data(&other).is_err());
        remove_file(&other).unwrap();
        assert_eq!(placeholder_origin(&other), None);
        // The original never changed.
        assert_eq!(std::fs::read(&log).unwrap(), data);
        drop(staging);
        assert!(placeholders().keys().all(|k| !k.starts_with(&work)));
        assert!(unstaged().keys().all(|k| !k.starts_with(&work)));
    }

    #[test]
    fn unmade_files_are_renamed_and_deleted_without_being_made() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t-0");
        std::fs::create_dir_all(&dir).unwrap();
        for n in [
            "00000000000000000000.log",
            "00000000000000000000.index",
            "a.swap",
        ] {
            std::fs::write(dir.join(n), n).unwrap();
        }
        let staging = Staging::new(&dir, ".kseg-tmp").unwrap();
        let work = staging.work().to_path_buf();
        let (log, index, swap) = (
            work.join("00000000000000000000.log"),
            work.join("00000000000000000000.index"),
            work.join("a.swap"),
        );
        let before = fs_counts().staged;
        rename(&swap, &work.join("a")).unwrap();
        remove_file(&index).unwrap();
        assert_eq!(fs_counts().staged, before);
        assert!(!exists(&swap) && !exists(&index));
        assert_eq!(resolve(&work.join("a")), dir.join("a.swap"));
        // A rename onto an unmade name replaces it; a real file renamed there too.
        std::fs::write(work.join("b"), "new").unwrap();
        rename(&work.join("b"), &log).unwrap();
        assert_eq!(resolve(&log), log);
        assert_eq!(std::fs::read(&log).unwrap(), b"new");
        let mut listed = regular_files(&work).unwrap();
        listed.sort();
        assert_eq!(listed, [log.clone(), work.join("a")]);
        // Made for the executor, it holds the original's bytes.
        materialize(&work.join("a")).unwrap();
        assert_eq!(std::fs::read(work.join("a")).unwrap(), b"a.swap");
        staging.materialize_all().unwrap();
        assert_eq!(std::fs::read(dir.join("a.swap")).unwrap(), b"a.swap");
    }

    /// A file held in memory answers every question, read and change as the same file made
    /// on disk does: listed, statted, read, resized, written, compared, renamed and deleted;
    /// made for real on a write past what is held, on an open by path and when a staging
    /// whose scratch directory outlives it ends.
    #[test]
    fn held_files_behave_as_real_ones_until_made() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t-0");
        let real_dir = tmp.path().join("real");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&real_dir).unwrap();
        std::fs::write(dir.join("00000000000000000000.log"), b"").unwrap();
        std::fs::write(dir.join("00000000000000000000.index"), [9u8; 16]).unwrap();
        let old = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        std::fs::File::options()
            .write(true)
            .open(dir.join("00000000000000000000.index"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        let staging = Staging::new(&dir, ".kseg-tmp").unwrap();
        let work = staging.work().to_path_buf();
        let name = "00000000000000000005.index";
        let (held_p, real_p) = (work.join(name), real_dir.join(name));
        let names = |d: &Path| {
            let mut v: Vec<_> = regular_files(d)
                .unwrap()
                .iter()
                .map(|p| p.file_name().unwrap().to_owned())
                .collect();
            v.sort();
            v
        };
        for p in [&held_p, &real_p] {
            create_zeroed(p, 80).unwrap();
        }
        // Held: nothing on disk, every answer the real file's.
        assert!(!held_p.exists() && real_p.exists());
        let both = |f: &dyn Fn(&Path) -> String| {
            let (h, r) = (f(&held_p), f(&real_p));
            assert_eq!(h, r);
            h
        };
        let check = |len: u64| {
            assert_eq!(
                both(&|p| format!("{}", file_len(p).unwrap())),
                len.to_string()
            );
            both(&|p| format!("{} {}", exists(p), is_file(p)));
            both(&|p| format!("{:?}", read_state(p, StateFile::Properties).unwrap()));
            both(&|p| {
                let mut out = Vec::new();
                std::io::Read::read_to_end(&mut open_bytes(p).unwrap(), &mut out).unwrap();
                let mut at = vec![0u8; 7];
                let n = open_bytes(p).unwrap().read_at(&mut at, 5).unwrap();
                format!("{out:?} {:?}", &at[..n])
            });
            assert!(same_prefix(&held_p, &real_p, len).unwrap());
        };
        check(80);
        assert!(names(&work).contains(&name.into()));
        assert!(list_dir(&work).unwrap().contains(&held_p));
        // Resized and written as a file is: the bytes past the data are zeros, a cut drops
        // them.
        for p in [&held_p, &real_p] {
            set_len(p, 40).unwrap();
            assert!(write_at(p, &[1, 2, 3], 8, false).unwrap().is_none() == (p == &held_p));
            write_at(p, &[4; 4], 60, false).unwrap();
        }
        check(64);
        for p in [&held_p, &real_p] {
            set_len(p, 10).unwrap();
        }
        check(10);
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(2_000_000);
        for p in [&held_p, &real_p] {
            set_mtime(p, t).unwrap();
        }
        both(&|p| format!("{}", mtime_ms(p).unwrap()));
        // Renamed: the record moves; deleted: it is gone.
        let (held_q, real_q) = (
            with_suffix(&held_p, ".deleted"),
            with_suffix(&real_p, ".deleted"),
        );
        rename(&held_p, &held_q).unwrap();
        rename(&real_p, &real_q).unwrap();
        assert!(!exists(&held_p) && exists(&held_q) && !held_q.exists());
        assert_eq!(
            read_state(&held_q, StateFile::Properties).unwrap(),
            read_state(&real_q, StateFile::Properties).unwrap()
        );
        assert!(!names(&work).contains(&name.into()));
        remove_file(&held_q).unwrap();
        remove_file(&real_q).unwrap();
        assert!(!exists(&held_q) && !names(&work).contains(&format!("{name}.deleted").into()));
        // A new small file in a plan (a snapshot) is held; one in no staging is written.
        let snap = work.join("00000000000000000005.snapshot");
        assert!(write_at(&snap, b"0123456789", 0, true).unwrap().is_none());
        assert!(!snap.exists() && file_len(&snap).unwrap() == 10);
        assert!(write_at(&real_dir.join("s"), b"0123456789", 0, true)
            .unwrap()
            .is_some());
        // Opened by path (`resolve`), it is made with its bytes and mtime.
        set_mtime(&snap, t).unwrap();
        assert_eq!(resolve(&snap), snap);
        assert_eq!(std::fs::read(&snap).unwrap(), b"0123456789");
        assert_eq!(mtime_ms(&snap).unwrap(), 2_000_000_000);
        // A write past what is held makes it real, holding every byte.
        create_zeroed(&held_p, 8).unwrap();
        write_at(&held_p, &[5], 2, false).unwrap();
        let far = HELD_MAX_BYTES + 1;
        assert!(write_at(&held_p, &[6], far, false).unwrap().is_some());
        let mut want = vec![0u8; far as usize + 1];
        (want[2], want[far as usize]) = (5, 6);
        assert_eq!(std::fs::read(&held_p).unwrap(), want);
        // A reset of a staged original: held empty with its mtime, the original untouched.
        let index = work.join("00000000000000000000.index");
        prepare_held_write(&index, false).unwrap();
        assert!(!index.exists() && file_len(&index).unwrap() == 0);
        assert_eq!(mtime_ms(&index).unwrap(), 1_000_000_000);
        assert_eq!(
            std::fs::read(dir.join("00000000000000000000.index")).unwrap(),
            [9u8; 16]
        );
        // Made for a reader of the whole staged directory.
        staging.materialize_all().unwrap();
        assert_eq!(std::fs::read(&index).unwrap(), b"");
        // A staging that owns its scratch directory forgets what it holds; one in a scratch
        // directory that outlives it makes its held files there.
        create_zeroed(&work.join("x.index"), 3).unwrap();
        drop(staging);
        assert!(!is_held(&work.join("x.index")));
        let scratch = tempfile::tempdir().unwrap();
        let staging = Staging::within(scratch.path(), "log", &dir, ".kseg-tmp").unwrap();
        let kept = staging.work().join("y.index");
        create_zeroed(&kept, 3).unwrap();
        drop(staging);
        assert_eq!(std::fs::read(&kept).unwrap(), [0u8; 3]);
    }
}
