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

/// What a file named by the user is, when its name does not say it all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    pub kind: FileKind,
    /// Why the name is not one the broker loads, with where the offset came from; None when
    /// the name is Kafka's own.
    pub renamed: Option<String>,
}

const OFFSET_SUFFIXES: [&str; 5] = [
    crate::format::names::LOG_FILE_SUFFIX,
    crate::format::names::INDEX_FILE_SUFFIX,
    crate::format::names::TIME_INDEX_FILE_SUFFIX,
    crate::format::names::TXN_INDEX_FILE_SUFFIX,
    crate::format::names::PRODUCER_SNAPSHOT_FILE_SUFFIX,
];

/// The offset field of a log's first entry: a v2 batch's base offset, a legacy message's offset.
fn first_entry_offset(log: &Path) -> Option<i64> {
    use std::io::Read;
    let mut head = [0u8; 8];
    std::fs::File::open(log).ok()?.read_exact(&mut head).ok()?;
    Some(i64::from_be_bytes(head))
}

/// The offset a renamed producer snapshot is read with when none is given. The format holds
/// no offset (`ProducerStateManager` takes it from the name only): the lowest its entries
/// allow is one past the highest `lastOffset` among them (a snapshot at offset N holds the
/// state of the offsets below N); 0 when it has none or does not decode, which its read
/// then reports.
fn snapshot_offset_bound(path: &Path) -> (i64, String) {
    let entries = std::fs::read(path)
        .ok()
        .and_then(|b| crate::format::snapshot::decode(&b).ok())
        .map(|s| s.entries);
    let why = "its name; give --base-offset for the offset it was taken at";
    match entries {
        Some(e) => {
            let bound = e
                .iter()
                .map(|e| e.last_offset.saturating_add(1))
                .max()
                .unwrap_or(0)
                .max(0);
            let from = format!(
                "its entries (the lowest they allow: one past their highest lastOffset), as the snapshot format holds no offset but {why}"
            );
            (bound, from)
        }
        None => (
            0,
            format!("nowhere (its content does not decode), as the snapshot format holds no offset but {why}"),
        ),
    }
}

/// Classifies `path` by its name and, for a segment file (`.log`, `.index`, `.timeindex`,
/// `.txnindex`, `.snapshot`) whose name carries no offset, by its content: a log's offset is
/// its first batch's, an index's that of the log of the same stem beside it, a snapshot's the
/// lowest its entries allow ([`snapshot_offset_bound`]), or `base_offset` (`--base-offset`)
/// when given. Only a file none of this classifies is [`FileKind::Unknown`].
pub fn kind_of(path: &Path, base_offset: Option<i64>) -> Kind {
    let name = name_of(path);
    let kind = classify(&name);
    if kind != FileKind::Unknown {
        let kafka_name = kind
            .offset()
            .filter(|_| matches!(kind, FileKind::Log { .. }))
            .map(crate::format::names::log_file_name);
        let renamed = kafka_name
            .filter(|k| *k != name)
            .map(|k| format!("segment file name is not the 20-digit form Kafka writes ({k})"));
        return Kind { kind, renamed };
    }
    let unknown = Kind {
        kind: FileKind::Unknown,
        renamed: None,
    };
    let Some((stem, suffix)) = OFFSET_SUFFIXES
        .iter()
        .find_map(|s| name.strip_suffix(s).map(|stem| (stem, *s)))
    else {
        return unknown;
    };
    let log = path.with_file_name(format!("{stem}{}", crate::format::names::LOG_FILE_SUFFIX));
    let (offset, from) = match base_offset {
        Some(o) => (o, "--base-offset".to_owned()),
        None if suffix == crate::format::names::PRODUCER_SNAPSHOT_FILE_SUFFIX => {
            snapshot_offset_bound(path)
        }
        None => match first_entry_offset(&log) {
            Some(o) if log == path => (o, "its first batch".to_owned()),
            Some(o) => (o, format!("the first batch of {}", log.display())),
            None => return unknown,
        },
    };
    let kafka_name = crate::format::names::format_offset(offset) + suffix;
    Kind {
        kind: classify(&kafka_name),
        renamed: Some(format!(
            "a broker would not load this file under this name (it takes the offset from a 20-digit name such as {kafka_name}); read with offset {offset} from {from}"
        )),
    }
}

/// The file with `suffix` of the segment `path` belongs to: the one of the same stem (a renamed
/// segment's files keep their common stem; Kafka's names are the 20-digit offset).
pub fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let name = name_of(path);
    let stem = OFFSET_SUFFIXES
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(&name);
    path.with_file_name(format!("{stem}{suffix}"))
}
