//! Plans made of changes: the segment replace as changes, a staging directory compared with the
//! partition, and the staging a plan is made in.

use super::*;

/// The changes of the broker's segment replace, in the engine's order
/// ([`crate::storage::replace::replace_steps`]): the staged files of each new segment written
/// as `.cleaned` (through the executor's temporary file), renamed `.swap` from the highest base
/// down, the `old` files renamed `.deleted` and then deleted, the `.swap` files renamed to
/// their names. Every point in between is one the loader resolves at start-up.
pub fn replace_segments(new: &[Vec<(PathBuf, PathBuf)>], old: &[PathBuf]) -> Result<Vec<Change>> {
    use crate::storage::replace::{replace_steps, ReplaceStep};
    replace_steps(new, old)
        .into_iter()
        .map(|step| {
            Ok(match step {
                ReplaceStep::Stage { bytes, to } => Change::Write {
                    file: to,
                    source: bytes.to_path_buf(),
                    size_before: None,
                    size_after: file_len(bytes)?,
                },
                ReplaceStep::Rename { from, to, bytes } => Change::Rename {
                    from,
                    to,
                    size: file_len(bytes)?,
                },
                ReplaceStep::Delete { file, bytes } => Change::Delete {
                    file,
                    size_before: file_len(bytes)?,
                },
            })
        })
        .collect()
}

/// Compares the directory `original` with `updated` (regular files, by name) and lists what
/// turns the first into the second: deletions, cuts (when the new file is a prefix of the old
/// one), and writes. `keep` says which names take part.
pub fn diff_dirs(
    original: &Path,
    updated: &Path,
    keep: &dyn Fn(&str) -> bool,
) -> Result<Vec<Change>> {
    // A staged directory's files not yet made are listed too: unchanged, they compare equal
    // to their originals without a read (`same_prefix`).
    let names = |d: &Path| -> Result<std::collections::BTreeSet<String>> {
        Ok(crate::storage::files::regular_files(d)?
            .iter()
            .map(|p| {
                p.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|n| keep(n))
            .collect())
    };
    let (before, after) = (names(original)?, names(updated)?);
    let mut changes = Vec::new();
    for n in before.union(&after) {
        let (o, u) = (original.join(n), updated.join(n));
        match (before.contains(n), after.contains(n)) {
            (true, false) => changes.push(Change::Delete {
                size_before: file_len(&o)?,
                file: o,
            }),
            (false, true) => changes.push(Change::Write {
                size_after: file_len(&u)?,
                file: o,
                source: u,
                size_before: None,
            }),
            _ => {
                let (a, b) = (file_len(&o)?, file_len(&u)?);
                let prefix = b <= a && same_prefix(&o, &u, b)?;
                if prefix && a == b {
                    continue;
                }
                if prefix {
                    changes.push(Change::Truncate {
                        file: o,
                        size_before: a,
                        size_after: b,
                    });
                } else {
                    changes.push(Change::Write {
                        file: o,
                        source: u,
                        size_before: Some(a),
                        size_after: b,
                    });
                }
            }
        }
    }
    order_changes(&mut changes);
    Ok(changes)
}

/// Stages the partition directory `dir` for planning in a new scratch directory
/// ([`Staging`]): the engine's run on it is the plan, its segment data read from `dir`.
pub fn stage_for_planning(dir: &Path) -> Result<Staging> {
    Staging::new(dir, TMP_SUFFIX)
}

/// Gives every write's source its bytes (a staged placeholder becomes a file): the executor
/// copies them.
pub fn materialize_sources(changes: &[Change]) -> Result<()> {
    for c in changes {
        if let Change::Write { source, .. } = c {
            materialize(source)?;
        }
    }
    Ok(())
}
