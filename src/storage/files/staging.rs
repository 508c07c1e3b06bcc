//! The planning overlay: placeholders, staged and held files, the writes and renames the
//! engine makes through them, and [`Staging`], the directory a repair is planned in.

use super::*;

/// The planning overlay: while a repair is planned, the engine runs on a staging directory
/// whose segment data files (`.log`, and their `.swap`/`.cleaned`/`.deleted` forms) are
/// *placeholders*: sparse files of the original's length and mtime, no data. Their bytes are
/// read from the original file ([`open_data`]), so unchanged data is never copied; what the
/// engine does to a placeholder is the record of what it would do to the original: a cut
/// shortens it (a recorded length), a rename moves it, a deletion unlinks it. Every other file
/// the engine writes is a real file in the staging directory, or a held one ([`Held`]). The map from placeholder to
/// original lives here, in the one place through which the engine opens, renames and deletes
/// segment data ([`open_data`], [`rename`], [`remove_file`], [`create_truncated`]).
pub(super) static PLACEHOLDERS: Locked<PathBuf> = Locked::new(PathMap::new());

/// A process-wide map of staged paths (to the original files they stand for, or held files).
pub(super) type Locked<V> = std::sync::Mutex<PathMap<V>>;

/// Staged paths by directory, then by name: a lookup compares a few directories and then
/// names as bytes (a map keyed by whole paths compared them component by component, most of
/// a plan's CPU time over many segments), and a directory's entries are listed without a
/// pass over every staged path.
#[derive(Debug)]
pub(super) struct PathMap<V> {
    dirs: std::collections::BTreeMap<PathBuf, std::collections::BTreeMap<std::ffi::OsString, V>>,
}

/// The directory and name of `p` (a path without a name is keyed as itself, unnamed).
pub(super) fn split(p: &Path) -> (&Path, &std::ffi::OsStr) {
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

    pub(super) fn get(&self, p: &Path) -> Option<&V> {
        let (d, n) = split(p);
        self.dirs.get(d)?.get(n)
    }

    pub(super) fn get_mut(&mut self, p: &Path) -> Option<&mut V> {
        let (d, n) = split(p);
        self.dirs.get_mut(d)?.get_mut(n)
    }

    pub(super) fn contains_key(&self, p: &Path) -> bool {
        self.get(p).is_some()
    }

    pub(super) fn insert(&mut self, p: PathBuf, v: V) -> Option<V> {
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

    pub(super) fn remove(&mut self, p: &Path) -> Option<V> {
        let (d, n) = split(p);
        let names = self.dirs.get_mut(d)?;
        let v = names.remove(n);
        if names.is_empty() {
            self.dirs.remove(d);
        }
        v
    }

    pub(super) fn extend(&mut self, entries: impl IntoIterator<Item = (PathBuf, V)>) {
        for (p, v) in entries {
            self.insert(p, v);
        }
    }

    #[cfg(test)]
    pub(super) fn keys(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.dirs
            .iter()
            .flat_map(|(d, names)| names.keys().map(move |n| d.join(n)))
    }

    /// The paths in the directory `dir`.
    pub(super) fn in_dir(&self, dir: &Path) -> Vec<PathBuf> {
        self.dirs
            .get(dir)
            .map(|names| names.keys().map(|n| dir.join(n)).collect())
            .unwrap_or_default()
    }

    /// The paths under `root`.
    pub(super) fn under(&self, root: &Path) -> Vec<PathBuf> {
        self.dirs_under(root)
            .flat_map(|(d, names)| names.keys().map(move |n| d.join(n)))
            .collect()
    }

    /// Forgets the paths under `root`.
    pub(super) fn remove_under(&mut self, root: &Path) {
        let under: Vec<PathBuf> = self.dirs_under(root).map(|(d, _)| d.clone()).collect();
        for d in under {
            self.dirs.remove(&d);
        }
    }

    /// The directories at and under `root`: a run of the map (paths order by components, so
    /// a directory's descendants follow it), found without a walk over the others (a log dir
    /// of 30 k partitions stages 30 k directories).
    fn dirs_under<'a>(
        &'a self,
        root: &'a Path,
    ) -> impl Iterator<
        Item = (
            &'a PathBuf,
            &'a std::collections::BTreeMap<std::ffi::OsString, V>,
        ),
    > {
        self.dirs
            .range::<Path, _>((std::ops::Bound::Included(root), std::ops::Bound::Unbounded))
            .take_while(move |(d, _)| d.starts_with(root))
    }
}

pub(super) fn locked<V>(map: &'static Locked<V>) -> std::sync::MutexGuard<'static, PathMap<V>> {
    // A panic elsewhere cannot leave a map half-changed: every change is one call.
    map.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(super) fn placeholders() -> std::sync::MutexGuard<'static, PathMap<PathBuf>> {
    locked(&PLACEHOLDERS)
}

/// The original file whose bytes the placeholder `p` stands for, if `p` is one.
pub fn placeholder_origin(p: &Path) -> Option<PathBuf> {
    placeholders().get(p).cloned()
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

/// The files of the [`Staging`]s alive that are staged but not yet made: staged path ->
/// original. Every function here that reads, stats or lists a staged path answers from the
/// original; the first that changes one makes it ([`prepare_write`]); a rename moves the
/// entry and a deletion drops it, no file made.
pub(super) static UNSTAGED: Locked<PathBuf> = Locked::new(PathMap::new());

pub(super) fn unstaged() -> std::sync::MutexGuard<'static, PathMap<PathBuf>> {
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
pub(super) fn unresolved(p: &Path) -> PathBuf {
    unstaged()
        .get(p)
        .cloned()
        .unwrap_or_else(|| p.to_path_buf())
}

/// The staged files not yet made in the directory `dir` (none outside a [`Staging`]).
pub(super) fn unstaged_in(dir: &Path) -> Vec<PathBuf> {
    unstaged().in_dir(dir)
}

/// A file the engine made in a staging directory that is held in memory instead of on disk:
/// its length, its leading bytes (the rest zeros) and its mtime. Over many segments most new
/// files of a plan are indexes created, sized, trimmed and never written, and 10-byte producer
/// snapshots: on disk, each cost a create, resizes, reopens and an unlink of the staging
/// directory at the end, most of a dry run's time.
#[derive(Debug, Clone)]
pub(super) struct Held {
    pub(super) data: Vec<u8>,
    pub(super) len: u64,
    pub(super) mtime: SystemTime,
}

/// Bytes of data a held file may have; a write past them makes it a real file.
pub(super) const HELD_MAX_BYTES: u64 = 4096;

/// The held files of the [`Staging`]s alive, by path. Every function here that stats, lists,
/// reads, renames or deletes a path answers a held one from its record; one that needs a real
/// file (an open by path, [`resolve`]) makes it first ([`make_held_real`]).
pub(super) static HELD: Locked<Held> = Locked::new(PathMap::new());

pub(super) fn held() -> std::sync::MutexGuard<'static, PathMap<Held>> {
    locked(&HELD)
}

pub(super) fn is_held(p: &Path) -> bool {
    held().contains_key(p)
}

/// The held files in the directory `dir`.
pub(super) fn held_in(dir: &Path) -> Vec<PathBuf> {
    held().in_dir(dir)
}

/// Whether `p` lies in the work directory of a [`Staging`] alive (a file there may be held).
pub(super) fn in_staging(p: &Path) -> bool {
    is_staged(p)
}

/// Makes the held file `p` a real one with its bytes, length and mtime.
pub(super) fn make_held_real(p: &Path) -> Result<()> {
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
        let fresh = create && !map.contains_key(p) && in_staging(p) && !exists_unheld(p)?;
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
pub(super) fn exists_unheld(p: &Path) -> Result<bool> {
    Ok(metadata_if_exists(p)?.is_some())
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
pub(super) fn open_sparse_reader(p: &Path) -> Result<(Reader, u64)> {
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

pub(super) fn prepare(p: &Path, keep: bool, hold: bool) -> Result<()> {
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
pub(super) fn is_segment_data(name: &str) -> bool {
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
        let tmp = scratch_dir()?;
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
        staged_dirs().insert(staging.work.clone());
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
        let tmp = scratch_dir()?;
        let scratch = tmp.path().to_path_buf();
        staged_dirs().insert(scratch.clone());
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
pub(super) fn stage_placeholder(
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
        staged_dirs().remove(&self.work);
    }
}

/// The work directories of the [`Staging`]s alive: what the engine writes there is a plan,
/// which no crash can leave half-written on the partition, so it is not fsynced.
pub(super) static STAGED_DIRS: std::sync::Mutex<std::collections::BTreeSet<PathBuf>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Whether `p` is in a staged directory: its ancestors looked up, not every directory staged.
fn is_staged(p: &Path) -> bool {
    let staged = staged_dirs();
    !staged.is_empty() && p.ancestors().any(|a| staged.contains(a))
}

pub(super) fn staged_dirs() -> std::sync::MutexGuard<'static, std::collections::BTreeSet<PathBuf>> {
    STAGED_DIRS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `fsync` of the engine's file `f` at `path`, as the broker syncs what it writes; skipped
/// for a staged file (planning): durability of a plan's scratch files means nothing, and
/// under a busy disk each fsync costs milliseconds (per segment, most of a dry run's time).
pub fn sync_all(f: &std::fs::File, path: &Path) -> Result<()> {
    if is_staged(path) {
        return Ok(());
    }
    f.sync_all().map_err(|e| Error::io(path, e))
}
