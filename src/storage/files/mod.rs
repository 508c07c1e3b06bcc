//! The files of a partition directory: listed in the order tools show them, named with the
//! replace protocol's suffixes, measured, copied and stamped with modification times.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::storage::tiered::{shown_as, shown_in};

mod build;
mod index;
mod regular;
mod sparse;
mod staging;

pub use build::*;
pub use index::*;
pub use regular::*;
pub use sparse::*;
pub use staging::*;

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
    injected(dir, FsOp::List)
        .and_then(|()| std::fs::read_dir(dir))
        .map_err(|e| Error::io(dir, e))
}

/// [`read_dir`] of a directory the engine lists files from; a directory that is not on disk
/// but holds remote segments shown in it ([`shown_in`]: `--remote-segment`) lists nothing
/// from disk.
fn read_dir_or_shown(
    dir: &Path,
) -> Result<impl Iterator<Item = std::io::Result<std::fs::DirEntry>>> {
    match read_dir(dir) {
        Ok(d) => Ok(Some(d).into_iter().flatten()),
        Err(Error::Io { source, .. }) if is_absent(&source) && is_shown_dir(dir) => {
            Ok(None.into_iter().flatten())
        }
        Err(e) => Err(e),
    }
}

/// Whether `p` is a directory: on disk (links followed), or one remote segments are shown in
/// ([`shown_in`]), which need not be.
pub fn is_dir(p: &Path) -> bool {
    p.is_dir() || is_shown_dir(p)
}

fn is_shown_dir(p: &Path) -> bool {
    !shown_in(p).is_empty()
}

/// Whether the partition directory `dir` can hold the partition's state files (checkpoints,
/// snapshots): not when it is only where remote segments named alone are shown
/// (`--remote-segment`), not on disk.
pub fn holds_state(dir: &Path) -> bool {
    dir.is_dir() || !is_shown_dir(dir)
}

/// Test hook: `<path>:<op>` (op `stat`, `open`, `read` or `list`) makes that operation on that
/// file or directory fail with EIO, as a failing disk does; `<path>:<op>:<n>`, the `n`-th such
/// operation only (a transient error: what a run does after it must not depend on it).
/// Consulted in one place ([`injected`]), by the engine's stats, opens, reads and listings.
pub const FAIL_PATH_VAR: &str = "KSEG_TEST_FAIL_PATH";

/// The file system operations [`FAIL_PATH_VAR`] can make fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsOp {
    Stat,
    Open,
    Read,
    List,
}

/// EIO when [`FAIL_PATH_VAR`] names `p` (as given, or made absolute) and `op`.
pub fn injected(p: &Path, op: FsOp) -> std::io::Result<()> {
    struct Hook {
        path: PathBuf,
        op: String,
        nth: Option<u64>,
    }
    static HOOK: std::sync::OnceLock<Option<Hook>> = std::sync::OnceLock::new();
    static SEEN: AtomicU64 = AtomicU64::new(0);
    let hook = HOOK.get_or_init(|| {
        let v = std::env::var_os(FAIL_PATH_VAR)?;
        let v = v.to_string_lossy();
        let (mut path, mut op) = v.rsplit_once(':')?;
        let nth = op.parse().ok();
        if nth.is_some() {
            (path, op) = path.rsplit_once(':')?;
        }
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| PathBuf::from(path));
        Some(Hook {
            path,
            op: op.to_owned(),
            nth,
        })
    });
    let Some(hook) = hook else {
        return Ok(());
    };
    let op_name = match op {
        FsOp::Stat => "stat",
        FsOp::Open => "open",
        FsOp::Read => "read",
        FsOp::List => "list",
    };
    if hook.op == op_name
        && (p == hook.path || std::path::absolute(p).is_ok_and(|a| a == hook.path))
        && hook
            .nth
            .is_none_or(|n| SEEN.fetch_add(1, Ordering::Relaxed) + 1 == n)
    {
        return Err(std::io::Error::from_raw_os_error(libc::EIO));
    }
    Ok(())
}

/// The descriptor [`open_regular`] gives for a read [`injected`] makes fail: one whose reads
/// fail with EIO (the process's memory at unmapped addresses), as a failing disk's do.
pub(super) const FAILING_READS: &str = "/proc/self/mem";

/// Whether `f` is a [`FAILING_READS`] descriptor: a map of it fails as its reads do.
pub(super) fn has_failing_reads(f: &std::fs::File) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::env::var_os(FAIL_PATH_VAR).is_some()
        && match (f.metadata(), std::fs::metadata(FAILING_READS)) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
            _ => false,
        }
}

/// The regular files of `dir` (a staged directory's files not yet made included, [`resolve`]),
/// unsorted: one counted listing.
pub fn regular_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in read_dir_or_shown(dir)? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        if is_regular_file(&e)? {
            out.push(e.path());
        }
    }
    out.extend(unstaged_in(dir));
    out.extend(held_in(dir));
    out.extend(shown_in(dir));
    Ok(out)
}

/// The regular files of `dir`, in base-offset order (per-segment files grouped), followed by
/// sub-directories (partition directories of a log dir).
pub fn list_dir(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for e in read_dir_or_shown(dir)? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let p = e.path();
        let regular = is_regular_file(&e)?;
        // A non-file named like a Kafka file is recorded ([`is_regular_file`]), not listed.
        if !regular && regular::kafka_named(&e) {
            continue;
        } else if !regular && p.is_dir() {
            dirs.push(p);
        } else {
            files.push(p);
        }
    }
    files.extend(unstaged_in(dir));
    files.extend(held_in(dir));
    files.extend(shown_in(dir));
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
    for e in read_dir_or_shown(dir)? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let name = e.file_name();
        if let crate::format::names::FileKind::Log { base_offset } =
            crate::format::names::classify(&name.to_string_lossy())
        {
            // Anything but a file (or a link to one) named like a `.log` is recorded, not read.
            if is_regular_file(&e)? {
                logs.push((base_offset, e.path()));
            }
        }
    }
    for p in unstaged_in(dir)
        .into_iter()
        .chain(held_in(dir))
        .chain(shown_in(dir))
    {
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
pub fn segment_files(dir: &Path, base: i64) -> Result<Vec<PathBuf>> {
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
    .filter_map(|p| match is_file(&p) {
        Ok(true) => Some(Ok(p)),
        Ok(false) => None,
        Err(e) => Some(Err(e)),
    })
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
    if let Some(remote) = shown_as(p) {
        // An object's listing carries no time the broker would use.
        return Ok((remote.len(), UNIX_EPOCH));
    }
    let m = metadata(p)?;
    Ok((m.len(), m.modified().map_err(|e| Error::io(p, e))?))
}

/// The metadata of the file `p` (links followed), a staged file not yet made answered by its
/// original ([`resolve`]; a held file is made for it).
pub fn metadata(p: &Path) -> Result<std::fs::Metadata> {
    stat(&resolve(p)).map_err(|e| Error::io(p, e))
}

/// `stat` of `p` (links followed), through the fault hook ([`injected`]), remembered
/// ([`remember_reads`]).
pub(super) fn stat(p: &Path) -> std::io::Result<std::fs::Metadata> {
    injected(p, FsOp::Stat)?;
    let m = std::fs::metadata(p)?;
    note_read(p, &m);
    Ok(m)
}

/// A file as a plan saw it: which inode, how long, last modified when. The same path with
/// another identity is another file, or the same one rewritten, even at the same size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
    pub len: u64,
    pub mtime_ns: i128,
}

impl FileId {
    pub fn of(m: &std::fs::Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt;
        FileId {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        }
    }
}

/// The identity of each regular file the engine stat'ed or opened since [`remember_reads`],
/// the first seen, by absolute path; `None` before.
static READS: std::sync::Mutex<Option<std::collections::HashMap<PathBuf, FileId>>> =
    std::sync::Mutex::new(None);

/// From now on, the identity of every file the engine stats or opens is remembered
/// ([`read_as`]), what was remembered before forgotten: an `--apply` calls it when it takes
/// its lock, before it plans, so the executor can tell a file from the one its plan read.
pub fn remember_reads() {
    if let Ok(mut r) = READS.lock() {
        *r = Some(Default::default());
    }
}

thread_local! {
    /// Whether this thread's reads go unremembered for now ([`seal_reads`]).
    static SEALED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// While the returned guard lives, files this thread's engine stats or opens are not
/// remembered: the executor's own looks (its refusals before any change, its checks) would
/// otherwise stand in for a plan's reading of a file it never read. Other threads (another
/// partition's plan) remember theirs.
pub fn seal_reads() -> SealedReads {
    SEALED.with(|s| s.set(true));
    SealedReads
}

/// See [`seal_reads`].
pub struct SealedReads;

impl Drop for SealedReads {
    fn drop(&mut self) {
        SEALED.with(|s| s.set(false));
    }
}

/// Stops [`remember_reads`], forgetting what it remembered (the last lock released).
pub fn stop_remembering_reads() {
    if let Ok(mut r) = READS.lock() {
        *r = None;
    }
}

/// The names `p` is remembered under: absolute, and with its directory's links resolved (a
/// staged original is named canonically).
fn read_keys(p: &Path) -> impl Iterator<Item = PathBuf> {
    let canonical = p.parent().and_then(|d| {
        let d = if d.as_os_str().is_empty() {
            Path::new(".")
        } else {
            d
        };
        Some(std::fs::canonicalize(d).ok()?.join(p.file_name()?))
    });
    std::path::absolute(p).ok().into_iter().chain(canonical)
}

fn note_read(p: &Path, m: &std::fs::Metadata) {
    if !m.is_file() || SEALED.with(std::cell::Cell::get) {
        return;
    }
    if let Ok(mut guard) = READS.lock() {
        if let (Some(r), Ok(k)) = (guard.as_mut(), std::path::absolute(p)) {
            r.entry(k).or_insert_with(|| FileId::of(m));
        }
    }
}

/// The file `p` as the engine first saw it since [`remember_reads`], if it did.
pub fn read_as(p: &Path) -> Option<FileId> {
    let guard = READS.lock().ok()?;
    let r = guard.as_ref()?;
    read_keys(p).find_map(|k| r.get(&k).copied())
}

/// Forgets what was remembered of the files directly in the directory `dir` (as given, or
/// its links resolved): a partition newly locked while another lock keeps the record going,
/// whose files' earlier identities belong to no plan made under this lock.
pub fn forget_reads_in(dir: &Path) {
    if let Ok(mut guard) = READS.lock() {
        if let Some(r) = guard.as_mut() {
            // Each directory resolved once, not once per file remembered in it.
            let mut is_dir: std::collections::HashMap<PathBuf, bool> = Default::default();
            r.retain(|p, _| {
                p.parent().is_none_or(|d| {
                    !*is_dir.entry(d.to_path_buf()).or_insert_with(|| {
                        d == dir || std::fs::canonicalize(d).is_ok_and(|c| c == dir)
                    })
                })
            });
        }
    }
}

/// Forgets what `p` was: the executor changed it, and a later plan reads it anew.
pub fn forget_read(p: &Path) {
    if let Ok(mut guard) = READS.lock() {
        if let Some(r) = guard.as_mut() {
            for k in read_keys(p) {
                r.remove(&k);
            }
        }
    }
}

/// The metadata of `p` (links followed; a staged file not yet made answered by its original),
/// `None` when it does not exist. Only "not found" (or a path through a non-directory) is
/// absence: any other error (EIO, EACCES) is an error, never taken for a missing file, so a
/// plan is never made from a file it could not see.
pub fn metadata_if_exists(p: &Path) -> Result<Option<std::fs::Metadata>> {
    let at = unresolved(p);
    match stat(&at) {
        Ok(m) => Ok(Some(m)),
        Err(e) if is_absent(&e) => Ok(None),
        Err(e) => Err(Error::io(p, e)),
    }
}

/// Whether the error of a `stat` or `open` says the path names nothing.
pub fn is_absent(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR)
}

/// Whether `p` exists (links followed), a staged file not yet made or held included
/// ([`metadata_if_exists`]: an error other than "not found" is an error).
pub fn exists(p: &Path) -> Result<bool> {
    Ok(is_held(p) || shown_as(p).is_some() || metadata_if_exists(p)?.is_some())
}

/// Whether `p` is a regular file (links followed), a staged file not yet made or held included
/// ([`metadata_if_exists`]).
pub fn is_file(p: &Path) -> Result<bool> {
    Ok(is_held(p) || shown_as(p).is_some() || metadata_if_exists(p)?.is_some_and(|m| m.is_file()))
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
        assert!(exists(&staged).unwrap() && is_file(&index).unwrap());
        assert_eq!(resolve(&staged), log);
        assert_eq!(file_len(&staged).unwrap(), data.len() as u64);
        assert_eq!(read_data(&staged), data);
        assert!(same_prefix(&log, &staged, data.len() as u64).unwrap());
        let mut listed = regular_files(&work).unwrap();
        listed.sort();
        assert_eq!(listed, [index.clone(), staged.clone()]);
        // The executor's leftovers are not staged.
        assert!(!exists(&work.join("x.kseg-tmp")).unwrap());
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
        assert!(!exists(&swap).unwrap() && !exists(&index).unwrap());
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
            both(&|p| format!("{:?} {:?}", exists(p).ok(), is_file(p).ok()));
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
        assert!(!exists(&held_p).unwrap() && exists(&held_q).unwrap() && !held_q.exists());
        assert_eq!(
            read_state(&held_q, StateFile::Properties).unwrap(),
            read_state(&real_q, StateFile::Properties).unwrap()
        );
        assert!(!names(&work).contains(&name.into()));
        remove_file(&held_q).unwrap();
        remove_file(&real_q).unwrap();
        assert!(
            !exists(&held_q).unwrap() && !names(&work).contains(&format!("{name}.deleted").into())
        );
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
