//! The broker's segment replace (`LocalLog.replaceSegments`, behavior.md §6.8), the one
//! definition of its order: the files of each new segment put in the directory as `.cleaned`,
//! renamed `.swap` from the highest base down, the old files renamed `.deleted` and then
//! deleted, the `.swap` files renamed to their names. A crash at any step leaves files the
//! loader resolves at start-up (behavior.md §2.3).
//!
//! Owns the order only. Who carries the steps out decides how: the engine's own split
//! (`storage::split`) moves the files it built straight in; the repair executor
//! (`ops::repair::apply`) turns each step into a planned change, written through its
//! temporary files and fsyncs.

use std::path::{Path, PathBuf};

use super::files::{remove_file, rename, segment_files, with_suffix};
use crate::error::Result;
use crate::format::names::{CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, SWAP_FILE_SUFFIX};

/// One step of the replace. `bytes` is the file whose bytes the step moves, as it is before
/// the replace begins: a new segment's staged file, or an old file.
#[derive(Debug, PartialEq, Eq)]
pub enum ReplaceStep<'p> {
    /// A new segment's file, built at `bytes`, put in the directory as `to` (`<name>.cleaned`).
    Stage { bytes: &'p Path, to: PathBuf },
    Rename {
        from: PathBuf,
        to: PathBuf,
        bytes: &'p Path,
    },
    /// An old file, renamed `.deleted` by an earlier step, unlinked.
    Delete { file: PathBuf, bytes: &'p Path },
}

/// The steps replacing the files `old` by `new`: for each new segment (in base-offset order)
/// its files as (staged file, final path), in `segment_files` order. With no `new` segment the
/// `old` files only go the two-step way (`.deleted`, then unlinked); with no `old` file the new
/// ones overwrite whatever holds their names.
pub fn replace_steps<'p>(
    new: &'p [Vec<(PathBuf, PathBuf)>],
    old: &'p [PathBuf],
) -> Vec<ReplaceStep<'p>> {
    let mut out = Vec::new();
    for (staged, fin) in new.iter().flatten() {
        out.push(ReplaceStep::Stage {
            bytes: staged,
            to: with_suffix(fin, CLEANED_FILE_SUFFIX),
        });
    }
    // `sortedNewSegments.reverse.foreach(_.changeFileSuffixes(Cleaned, Swap))`: segments from
    // the highest base down, each one's files in its own order.
    for (staged, fin) in new.iter().rev().flatten() {
        out.push(ReplaceStep::Rename {
            from: with_suffix(fin, CLEANED_FILE_SUFFIX),
            to: with_suffix(fin, SWAP_FILE_SUFFIX),
            bytes: staged,
        });
    }
    // `deleteSegmentFiles(asyncDelete = true)`: every old file renamed, the unlinks after.
    for f in old {
        out.push(ReplaceStep::Rename {
            from: f.clone(),
            to: with_suffix(f, DELETED_FILE_SUFFIX),
            bytes: f,
        });
    }
    for f in old {
        out.push(ReplaceStep::Delete {
            file: with_suffix(f, DELETED_FILE_SUFFIX),
            bytes: f,
        });
    }
    for (staged, fin) in new.iter().flatten() {
        out.push(ReplaceStep::Rename {
            from: with_suffix(fin, SWAP_FILE_SUFFIX),
            to: fin.clone(),
            bytes: staged,
        });
    }
    out
}

/// The files of segment `base` built in `staging`, each with its final path in `dir`: one
/// new segment of [`replace_steps`].
pub fn staged_segment(staging: &Path, base: i64, dir: &Path) -> Result<Vec<(PathBuf, PathBuf)>> {
    Ok(segment_files(staging, base)?
        .into_iter()
        .map(|staged| {
            let fin = dir.join(staged.file_name().unwrap_or_default());
            (staged, fin)
        })
        .collect())
}

/// Carries out the replace at once, moving the staged files (which must be on the same file
/// system) into the directory: what the engine does when it replaces segments itself.
pub fn replace_now(new: &[Vec<(PathBuf, PathBuf)>], old: &[PathBuf]) -> Result<()> {
    for step in replace_steps(new, old) {
        match step {
            ReplaceStep::Stage { bytes, to } => rename(bytes, &to)?,
            ReplaceStep::Rename { from, to, .. } => rename(&from, &to)?,
            ReplaceStep::Delete { file, .. } => remove_file(&file)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_new_segments_replace_one_old() {
        let p = |s: &str| PathBuf::from(s);
        let new = vec![
            vec![
                (p("s/0.log"), p("d/0.log")),
                (p("s/0.index"), p("d/0.index")),
            ],
            vec![
                (p("s/5.log"), p("d/5.log")),
                (p("s/5.index"), p("d/5.index")),
            ],
        ];
        let old = vec![p("d/0.log")];
        let steps: Vec<String> = replace_steps(&new, &old)
            .into_iter()
            .map(|s| match s {
                ReplaceStep::Stage { bytes, to } => {
                    format!("stage {} {}", bytes.display(), to.display())
                }
                ReplaceStep::Rename { from, to, .. } => {
                    format!("rename {} {}", from.display(), to.display())
                }
                ReplaceStep::Delete { file, .. } => format!("delete {}", file.display()),
            })
            .collect();
        assert_eq!(
            steps,
            [
                "stage s/0.log d/0.log.cleaned",
                "stage s/0.index d/0.index.cleaned",
                "stage s/5.log d/5.log.cleaned",
                "stage s/5.index d/5.index.cleaned",
                "rename d/5.log.cleaned d/5.log.swap",
                "rename d/5.index.cleaned d/5.index.swap",
                "rename d/0.log.cleaned d/0.log.swap",
                "rename d/0.index.cleaned d/0.index.swap",
                "rename d/0.log d/0.log.deleted",
                "delete d/0.log.deleted",
                "rename d/0.log.swap d/0.log",
                "rename d/0.index.swap d/0.index",
                "rename d/5.log.swap d/5.log",
                "rename d/5.index.swap d/5.index",
            ]
        );
    }
}
