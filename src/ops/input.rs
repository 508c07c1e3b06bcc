//! What a path named on the command line holds, judged once for every operation before any
//! work starts. A path that does not exist, an empty directory, or a directory with neither a
//! Kafka file nor a partition directory is an [`Error::Unusable`] naming what was expected:
//! nothing to do is never reported as success.

use std::path::{Path, PathBuf};

use crate::error::{Error, Expected, Result, Unusable};
use crate::format::names::{classify, parse_partition_dir, FileKind};

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
