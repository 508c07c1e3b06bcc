//! The library's error: what went wrong, in which file, at which byte.

use std::path::{Path, PathBuf};

use crate::format::DecodeError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Bytes that do not follow the format; `position` is absolute within the file.
    #[error("{path}: at byte {position}: {message}")]
    Decode {
        path: PathBuf,
        position: u64,
        message: String,
        kind: crate::format::ErrorKind,
    },
    /// Anything else that makes an operation impossible (bad arguments, missing companions).
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    /// A path that holds nothing the operation can work on, or where the broker would not do
    /// it: checked before any work starts ([`crate::ops::input`]).
    #[error("{path}: {problem} (expected {expected})")]
    Unusable {
        path: PathBuf,
        problem: Unusable,
        expected: Expected,
    },
}

/// What an operation takes as its path, for the error that says what was expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Expected {
    /// `dump`, `verify`.
    #[error("a segment file, a partition directory or a log dir")]
    AnyInput,
    /// `rebuild-index`.
    #[error("a segment file or a partition directory")]
    SegmentOrPartition,
    /// `offsets`, `locate`.
    #[error("a partition directory or a log dir")]
    PartitionOrLogDir,
    /// `ls`.
    #[error("a log dir")]
    LogDir,
    /// `recover`, `retention`, `compact`.
    #[error("a partition directory `<topic>-<partition>`")]
    Partition,
    /// `digest`.
    #[error("a partition directory, a log dir or a directory of log dirs")]
    PartitionOrLogDirs,
    /// `diff`: both sides of one shape.
    #[error("two partition directories, or two log dirs (or directories of log dirs)")]
    PartitionsOrLogDirs,
}

/// In-place work, as the broker does it to the logs it loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Work {
    /// `recover`, `rebuild-index`: what loading a log does.
    #[error("recovery")]
    Recovery,
    /// `retention --apply`.
    #[error("retention")]
    Retention,
    /// `compact --apply`.
    #[error("the log cleaner")]
    Cleaning,
}

/// Why a path cannot be worked on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unusable {
    #[error("no such file or directory")]
    Missing,
    #[error("not a directory")]
    NotADirectory,
    /// Neither a regular file nor a directory: what it is (`a FIFO`, `a socket`, ...).
    #[error(
        "{0}, not a regular file: only regular files (or links to them) are read as Kafka files"
    )]
    NotAFile(&'static str),
    #[error("this is {0}")]
    Shape(&'static str),
    /// Two paths to compare, of two shapes.
    #[error("this is {this}, the other path {other}")]
    Mixed {
        this: &'static str,
        other: &'static str,
    },
    #[error("a directory of log dirs ({0}); name them one by one")]
    LogDirs(String),
    #[error("empty directory")]
    EmptyDirectory,
    #[error("no Kafka files or partition directories here")]
    NoKafkaFiles,
    #[error("no Kafka file in this directory: nothing to repair")]
    NothingToRepair,
    #[error(
        "`{0}` is not a partition directory name: the broker refuses to start with such a \
         directory in a log dir, and kseg changes files only in partition directories"
    )]
    NotPartitionName(String),
    #[error(
        "scheduled for deletion (`-delete`): the broker deletes it at start-up without \
         recovering it; refused"
    )]
    ScheduledForDeletion,
    #[error("a stray replica (`-stray`): the broker loads it but never runs {0} on it; refused")]
    Stray(Work),
    #[error(
        "a future replica (`-future`, moving between log dirs): the broker's log cleaner never \
         compacts it; refused"
    )]
    Future,
}

impl Error {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// A format error seen in `path`, whose slice started at file byte `base`.
    pub fn decode(path: &Path, base: u64, e: DecodeError) -> Self {
        Error::Decode {
            path: path.to_path_buf(),
            position: base + e.pos as u64,
            message: e.message,
            kind: e.kind,
        }
    }

    pub fn unusable(path: &Path, problem: Unusable, expected: Expected) -> Self {
        Error::Unusable {
            path: path.to_path_buf(),
            problem,
            expected,
        }
    }

    pub fn invalid(path: &Path, message: impl Into<String>) -> Self {
        Error::Invalid {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    /// The same error naming the file under `to` instead of under `from`: an operation run on
    /// a scratch copy reports the user's file.
    pub fn rebased(mut self, from: &Path, to: &Path) -> Self {
        let (Error::Io { path, .. }
        | Error::Decode { path, .. }
        | Error::Invalid { path, .. }
        | Error::Unusable { path, .. }) = &mut self;
        *path = rebase_path(path, from, to);
        self
    }
}

/// `path` under `to` if it is under `from`, else `path` as it is: a file of a scratch copy
/// named as the user's.
pub fn rebase_path(path: &Path, from: &Path, to: &Path) -> PathBuf {
    match path.strip_prefix(from) {
        Err(_) => path.to_path_buf(),
        // `from` itself: `to`, not `to/`.
        Ok(rest) if rest.as_os_str().is_empty() => to.to_path_buf(),
        Ok(rest) => to.join(rest),
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
