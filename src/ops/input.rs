//! What a path named on the command line holds, judged once for every operation before any
//! work starts. A path that does not exist, an empty directory, or a directory with neither a
//! Kafka file nor a partition directory is an [`Error::Unusable`] naming what was expected:
//! nothing to do is never reported as success. In-place work is refused ([`repair_target`])
//! where the broker would not do it.

use std::path::{Path, PathBuf};

use crate::error::{Error, Expected, Result, Unusable, Work};
use crate::format::names::{
    classify, parse_partition_dir, FileKind, PartitionDir, PartitionDirState,
};

/// A path that passed [`examine`].
#[derive(Debug)]
pub enum Input {
    File,
    /// A directory's files (in [`crate::storage::files::list_dir`] order) and subdirectories.
    Dir {
        files: Vec<PathBuf>,
        dirs: Vec<PathBuf>,
    },
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn is_kafka_file(p: &Path) -> bool {
    classify(&name_of(p)) != FileKind::Unknown
}

/// Checks that `path` exists and, when it is a directory, holds a Kafka file or a partition
/// directory; `expected` is what the error says the operation takes.
pub fn examine(path: &Path, expected: Expected) -> Result<Input> {
    let unusable = |problem| Err(Error::unusable(path, problem, expected));
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return unusable(Unusable::Missing),
        Err(e) => return Err(Error::io(path, e)),
    };
    if !meta.is_dir() {
        return match expected {
            Expected::Partition => unusable(Unusable::NotADirectory),
            _ => Ok(Input::File),
        };
    }
    let (dirs, files): (Vec<PathBuf>, Vec<PathBuf>) = crate::storage::files::list_dir(path)?
        .into_iter()
        .partition(|p| p.is_dir());
    if files.is_empty() && dirs.is_empty() {
        return unusable(Unusable::EmptyDirectory);
    }
    let partitions = dirs
        .iter()
        .any(|d| parse_partition_dir(&name_of(d)).is_some());
    if !partitions && !files.iter().any(|f| is_kafka_file(f)) {
        return unusable(Unusable::NoKafkaFiles);
    }
    Ok(Input::Dir { files, dirs })
}

/// Checks that `work` may be done in place in `dir`: a directory holding Kafka files, named as
/// a partition directory the broker does that work in. The broker deletes a `-delete`
/// directory without recovering it, recovers a `-stray` one at load but then leaves it alone
/// (no retention, no cleaning), and runs retention but not the cleaner on a `-future` one.
pub fn repair_target(dir: &Path, work: Work) -> Result<PartitionDir> {
    let unusable = |problem| Err(Error::unusable(dir, problem, Expected::Partition));
    let Input::Dir { files, .. } = examine(dir, Expected::Partition)? else {
        return unusable(Unusable::NotADirectory);
    };
    if !files.iter().any(|f| is_kafka_file(f)) {
        return unusable(Unusable::NothingToRepair);
    }
    // `.` or `..` name no directory: the name is the resolved directory's.
    let resolved = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, e))?;
    let name = name_of(&resolved);
    let Some(partition) = parse_partition_dir(&name) else {
        return unusable(Unusable::NotPartitionName(name));
    };
    match (&partition.state, work) {
        (PartitionDirState::Delete { .. }, _) => unusable(Unusable::ScheduledForDeletion),
        (PartitionDirState::Stray { .. }, Work::Retention | Work::Cleaning) => {
            unusable(Unusable::Stray(work))
        }
        (PartitionDirState::Future { .. }, Work::Cleaning) => unusable(Unusable::Future),
        _ => Ok(partition),
    }
}
