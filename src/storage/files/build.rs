//! Staging directories: where `write`, `salvage`, `compact --out` build their output and
//! `compact --apply` keeps its journal, beside the target and outside any log dir, marked so
//! that a rerun of the same command on the same target recognises one an interrupted run
//! left, removes it and redoes the work.

use super::*;

/// The file in every staging directory naming the command and the target it was made for.
pub const STAGING_MARKER_FILE_NAME: &str = "kseg-staging";
/// The name of every staging directory begins so (hidden, and no `<topic>-<partition>`).
pub const STAGING_PREFIX: &str = ".kseg-staging.";

/// Test hook: the pause points and their directory ([`PAUSE_DIR_VAR`]): at each point the
/// process creates a file of that name there and waits until the test removes it (a test
/// kills the process at one point to see what a rerun makes of what is left).
pub const PAUSE_DIR_VAR: &str = "KSEG_TEST_PAUSE_DIR";

/// Pauses at `point` when [`PAUSE_DIR_VAR`] is set.
pub fn pause(point: &str) {
    let Some(d) = std::env::var_os(PAUSE_DIR_VAR) else {
        return;
    };
    let f = Path::new(&d).join(point);
    if std::fs::write(&f, b"").is_ok() {
        while f.exists() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// The staging steps of this process, numbered for the pause points `stage-N`.
static STAGE_STEPS: AtomicU64 = AtomicU64::new(0);

/// A point where a kill leaves a state a rerun must finish from: pause point `stage-N`.
pub fn stage_step() {
    pause(&format!(
        "stage-{}",
        STAGE_STEPS.fetch_add(1, Ordering::Relaxed)
    ));
}

/// One staging directory, for one command on one target.
#[derive(Debug)]
pub struct StagingDir {
    path: PathBuf,
}

impl StagingDir {
    /// Where the staging directory of `target` lies: beside it, and when `target` is a
    /// partition directory, beside its log dir (the broker fails a whole log dir over a
    /// directory there that is not a partition). On the target's file system, so that what
    /// is built there moves into place by a rename.
    pub fn path_for(target: &Path) -> Result<PathBuf> {
        let abs = std::path::absolute(target).map_err(|e| Error::io(target, e))?;
        let abs = match abs.file_name() {
            Some(_) => abs,
            None => std::fs::canonicalize(target).map_err(|e| Error::io(target, e))?,
        };
        let name = abs.file_name().unwrap_or_default();
        let parent = abs.parent().unwrap_or(Path::new("/"));
        let mut staged = std::ffi::OsString::from(STAGING_PREFIX);
        let partition = crate::format::names::parse_partition_dir(&name.to_string_lossy());
        let at = match (partition, parent.parent(), parent.file_name()) {
            (Some(_), Some(above), Some(log_dir)) => {
                staged.push(log_dir);
                staged.push(".");
                if let (Ok(a), Ok(b)) = (std::fs::metadata(above), std::fs::metadata(parent)) {
                    use std::os::unix::fs::MetadataExt;
                    if a.dev() != b.dev() {
                        return Err(Error::invalid(
                            target,
                            format!(
                                "its directory {} is a mount point: kseg stages its work beside \
                                 the log dir on the same file system, never inside it; choose \
                                 another target and move it in",
                                parent.display()
                            ),
                        ));
                    }
                }
                above
            }
            _ => parent,
        };
        staged.push(name);
        Ok(at.join(staged))
    }

    fn marker(command: &str, target: &Path) -> Result<Vec<u8>> {
        let abs = std::path::absolute(target).map_err(|e| Error::io(target, e))?;
        let mut m = format!("kseg {command}\n").into_bytes();
        m.extend_from_slice(abs.as_os_str().as_encoded_bytes());
        m.push(b'\n');
        Ok(m)
    }

    /// The staging directory a run of `command` on `target` left (interrupted, or killed
    /// after its last rename), if any. One under that name that is not such a run's (another
    /// command's, or not kseg's) is refused: it is not removed.
    pub fn leftover(command: &str, target: &Path) -> Result<Option<StagingDir>> {
        sweep_scratch_once();
        let path = Self::path_for(target)?;
        let marker = path.join(STAGING_MARKER_FILE_NAME);
        let found = match std::fs::read(&marker) {
            Ok(m) => m == Self::marker(command, target)?,
            // Killed between making the directory and writing its marker: empty.
            Err(e) if is_absent(&e) => match std::fs::read_dir(&path) {
                Ok(mut d) => d.next().is_none(),
                Err(e) if is_absent(&e) => return Ok(None),
                Err(e) => return Err(Error::io(&path, e)),
            },
            Err(e) => return Err(Error::io(&marker, e)),
        };
        if !found {
            return Err(Error::invalid(
                &path,
                format!(
                    "exists and is not the staging directory of `kseg {command}` for {}: \
                     kseg does not remove it; move it away and rerun",
                    target.display()
                ),
            ));
        }
        Ok(Some(StagingDir { path }))
    }

    /// A new staging directory for `command` on `target` (one an earlier run left removed
    /// first), with its marker durable.
    pub fn begin(command: &str, target: &Path) -> Result<StagingDir> {
        if let Some(old) = Self::leftover(command, target)? {
            old.remove()?;
        }
        let path = Self::path_for(target)?;
        std::fs::create_dir(&path).map_err(|e| Error::io(&path, e))?;
        let staging = StagingDir { path };
        let marker = staging.path.join(STAGING_MARKER_FILE_NAME);
        let written = std::fs::write(&marker, Self::marker(command, target)?)
            .and_then(|()| std::fs::File::open(&marker)?.sync_all())
            .map_err(|e| Error::io(&marker, e))
            .and_then(|()| sync_dir_of(&staging.path));
        if let Err(e) = written {
            let _ = std::fs::remove_dir_all(&staging.path);
            return Err(e);
        }
        stage_step();
        Ok(staging)
    }

    /// The staging directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the staging directory and what it holds, durably.
    pub fn remove(self) -> Result<()> {
        std::fs::remove_dir_all(&self.path).map_err(|e| Error::io(&self.path, e))?;
        sync_dir_of(&self.path)
    }
}

/// `fsync` of the directory holding `p`, so that a rename or removal there lasts.
pub fn sync_dir_of(p: &Path) -> Result<()> {
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// The directory a build writes in, inside its staging directory.
const BUILD_DIR_NAME: &str = "out";
/// The targets of a build's files outside its directory, listed before the first is moved.
const OUTSIDE_LIST_FILE_NAME: &str = "outside";

/// Files a build writes outside its directory (a KRaft `bootstrap.checkpoint` in the log
/// dir): each staged in the staging directory, moved into place just before the directory.
#[derive(Debug)]
pub struct Outside {
    staging: PathBuf,
    /// Where the built directory goes: a target the build names beside its own directory
    /// (`../bootstrap.checkpoint`, in the staging directory) is the one beside this.
    out_dir: PathBuf,
    /// (staged, target)
    files: Vec<(PathBuf, PathBuf)>,
}

impl Outside {
    /// Stages `bytes` for `target`, which must not exist (kseg never overwrites a file it
    /// was not asked to build).
    pub fn write(&mut self, target: &Path, bytes: &[u8]) -> Result<()> {
        let beside = match target.strip_prefix(&self.staging) {
            Ok(rel) => self.out_dir.parent().map(|p| p.join(rel)),
            Err(_) => None,
        };
        let target = beside.as_deref().unwrap_or(target);
        if exists(target)? || self.files.iter().any(|(_, t)| t == target) {
            return Err(Error::invalid(
                target,
                "exists already: kseg write does not overwrite files outside its output directory",
            ));
        }
        let staged = self.staging.join(format!("outside-{}", self.files.len()));
        std::fs::write(&staged, bytes).map_err(|e| Error::io(target, e))?;
        self.files.push((staged, target.to_path_buf()));
        Ok(())
    }

    /// Moves the staged files into place, their targets listed first: a rerun after a kill
    /// before the directory's rename removes them ([`undo_outside`]).
    fn commit(&mut self) -> Result<()> {
        if self.files.is_empty() {
            return Ok(());
        }
        let list = self.staging.join(OUTSIDE_LIST_FILE_NAME);
        let mut text = Vec::new();
        for (staged, target) in &self.files {
            let target = std::path::absolute(target).map_err(|e| Error::io(target, e))?;
            text.extend_from_slice(target.as_os_str().as_encoded_bytes());
            text.push(b'\n');
            std::fs::File::open(staged)
                .and_then(|f| f.sync_all())
                .map_err(|e| Error::io(staged, e))?;
        }
        std::fs::write(&list, text)
            .and_then(|()| std::fs::File::open(&list)?.sync_all())
            .map_err(|e| Error::io(&list, e))?;
        sync_dir_of(&list)?;
        for (staged, target) in std::mem::take(&mut self.files) {
            stage_step();
            std::fs::rename(&staged, &target).map_err(|e| Error::io(&target, e))?;
            sync_dir_of(&target)?;
            self.files.push((target.clone(), target));
        }
        Ok(())
    }

    fn remove(&self) {
        for (written, _) in &self.files {
            let _ = std::fs::remove_file(written);
        }
    }
}

/// Removes the files outside its directory that an interrupted build of `staging` moved into
/// place before its directory's rename (none when the rename happened: the build is whole).
fn undo_outside(staging: &Path) -> Result<()> {
    let list = staging.join(OUTSIDE_LIST_FILE_NAME);
    if !exists(&staging.join(BUILD_DIR_NAME))? {
        return Ok(());
    }
    let text = match std::fs::read(&list) {
        Ok(t) => t,
        Err(e) if is_absent(&e) => return Ok(()),
        Err(e) => return Err(Error::io(&list, e)),
    };
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let target = PathBuf::from(std::ffi::OsStr::from_bytes(line));
        match std::fs::remove_file(&target) {
            Err(e) if !is_absent(&e) => return Err(Error::io(&target, e)),
            _ => sync_dir_of(&target)?,
        }
    }
    Ok(())
}

use std::os::unix::ffi::OsStrExt;

/// Builds the directory `out_dir` (absent or empty) for `command` all or nothing: `build`
/// writes into a staging directory ([`StagingDir`]), whose result is renamed into place only
/// when complete; one an interrupted run of the same command left is removed first (with what
/// it had moved outside), and a failed build removes its own. Errors name paths below
/// `out_dir`, as if it had been written in place.
pub fn build_dir<T>(
    command: &str,
    out_dir: &Path,
    build: impl FnOnce(&Path, &mut Outside) -> Result<T>,
) -> Result<T> {
    if let Some(old) = StagingDir::leftover(command, out_dir)? {
        undo_outside(old.path())?;
        old.remove()?;
    }
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
    let staging = match StagingDir::begin(command, out_dir) {
        Ok(s) => s,
        Err(e) => {
            if let Some(c) = &created {
                let _ = std::fs::remove_dir_all(c);
            }
            return Err(e);
        }
    };
    let tmp = staging.path().join(BUILD_DIR_NAME);
    let mut outside = Outside {
        staging: staging.path().to_path_buf(),
        out_dir: out_dir.to_path_buf(),
        files: Vec::new(),
    };
    let built = std::fs::create_dir(&tmp)
        .map_err(|e| Error::io(&tmp, e))
        .and_then(|()| build(&tmp, &mut outside))
        .and_then(|t| {
            sync_tree(&tmp)?;
            stage_step();
            outside.commit()?;
            stage_step();
            std::fs::rename(&tmp, out_dir).map_err(|e| Error::io(out_dir, e))?;
            sync_dir_of(out_dir)?;
            Ok(t)
        });
    if built.is_err() {
        // Best effort: the error that stopped the build is the one to report.
        outside.remove();
        let _ = std::fs::remove_dir_all(staging.path());
        if let Some(c) = &created {
            let _ = std::fs::remove_dir_all(c);
        }
        return built.map_err(|e| e.rebased(&tmp, out_dir));
    }
    stage_step();
    staging.remove()?;
    built
}

/// `fsync` of every file and directory under `root` (a build's, before it moves into place).
fn sync_tree(root: &Path) -> Result<()> {
    for e in std::fs::read_dir(root).map_err(|e| Error::io(root, e))? {
        let p = e.map_err(|e| Error::io(root, e))?.path();
        if std::fs::symlink_metadata(&p)
            .map_err(|e| Error::io(&p, e))?
            .is_dir()
        {
            sync_tree(&p)?;
        } else {
            std::fs::File::open(&p)
                .and_then(|f| f.sync_all())
                .map_err(|e| Error::io(&p, e))?;
        }
    }
    std::fs::File::open(root)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(root, e))
}

/// The name of every scratch directory kseg makes in `$TMPDIR` begins so, then the pid.
const SCRATCH_PREFIX: &str = "kseg-scratch-";

/// A scratch directory in `$TMPDIR` for this process, removed when dropped (a return, an
/// error or a panic). One a killed process left (its pid gone) is removed by the next kseg
/// that makes one.
pub fn scratch_dir() -> Result<tempfile::TempDir> {
    let tmp = std::env::temp_dir();
    sweep_scratch_once();
    tempfile::Builder::new()
        .prefix(&format!("{SCRATCH_PREFIX}{}-", std::process::id()))
        .tempdir_in(&tmp)
        .map_err(|e| Error::io(&tmp, e))
        .map_err(|e| scratch_full(e, &tmp))
}

/// [`sweep_scratch`] of `$TMPDIR`, once per process: before a run makes scratch or staging
/// space, or finishes what a killed one began.
fn sweep_scratch_once() {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| sweep_scratch(&std::env::temp_dir()));
}

/// Removes the scratch directories of kseg processes gone (best effort: one it cannot remove
/// costs space, not correctness).
fn sweep_scratch(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(SCRATCH_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        use std::os::unix::fs::MetadataExt;
        // SAFETY: signal 0 only asks whether the process exists; geteuid cannot fail.
        let gone = unsafe { libc::kill(pid, 0) } == -1
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        let ours = e
            .metadata()
            .is_ok_and(|m| m.is_dir() && m.uid() == unsafe { libc::geteuid() });
        if gone && ours {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// `e`, named for what it is when it is a full scratch file system under `scratch`: `$TMPDIR`,
/// not the file kseg was working on.
pub fn scratch_full(e: Error, scratch: &Path) -> Error {
    match &e {
        Error::Io { path, source }
            if source.raw_os_error() == Some(libc::ENOSPC) && path.starts_with(scratch) =>
        {
            Error::invalid(
                &std::env::temp_dir(),
                "no space left on device in $TMPDIR, where kseg works on scratch copies: set \
                 TMPDIR to a directory with room",
            )
        }
        _ => e,
    }
}
