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
    all_or_nothing_with(out_dir, |tmp, _| build(tmp))
}

/// Files a build writes outside its directory (a KRaft `bootstrap.checkpoint` in the log
/// dir): each staged under a temporary name beside its target, moved into place just before
/// the directory, removed with the build when it fails.
#[derive(Debug, Default)]
pub(crate) struct Outside {
    /// (staged, target)
    files: Vec<(PathBuf, PathBuf)>,
}

impl Outside {
    /// Stages `bytes` for `target`, which must not exist (kseg never overwrites a file it
    /// was not asked to build).
    pub(crate) fn write(&mut self, target: &Path, bytes: &[u8]) -> Result<()> {
        if target.exists() || self.files.iter().any(|(_, t)| t == target) {
            return Err(Error::invalid(
                target,
                "exists already: kseg write does not overwrite files outside its output directory",
            ));
        }
        let staged = temp_beside(target);
        std::fs::write(&staged, bytes).map_err(|e| Error::io(target, e))?;
        self.files.push((staged, target.to_path_buf()));
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        for (staged, target) in std::mem::take(&mut self.files) {
            std::fs::rename(&staged, &target).map_err(|e| Error::io(&target, e))?;
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

/// A hidden name beside `path` with kseg's suffix: no broker takes it for one of its files.
fn temp_beside(path: &Path) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(format!(".{}", std::process::id()));
    name.push(crate::ops::repair::apply::TMP_SUFFIX);
    path.with_file_name(name)
}

/// [`all_or_nothing`] for a build that may also write files outside `out_dir` ([`Outside`]).
pub(crate) fn all_or_nothing_with<T>(
    out_dir: &Path,
    build: impl FnOnce(&Path, &mut Outside) -> Result<T>,
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
    let tmp = temp_beside(out_dir);
    let mut outside = Outside::default();
    let built = std::fs::create_dir(&tmp)
        .map_err(|e| Error::io(&tmp, e))
        .and_then(|()| build(&tmp, &mut outside))
        .and_then(|t| {
            outside.commit()?;
            std::fs::rename(&tmp, out_dir).map_err(|e| Error::io(out_dir, e))?;
            Ok(t)
        });
    if built.is_err() {
        // Best effort: the error that stopped the build is the one to report.
        outside.remove();
        let _ = std::fs::remove_dir_all(created.as_deref().unwrap_or(&tmp));
    }
    built.map_err(|e| e.rebased(&tmp, out_dir))
}
