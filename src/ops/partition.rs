//! A read-only view of a partition directory for the simulations (`retention`, `compact`):
//! each segment's size, mtime, largest timestamp and index sizes, the log end offset, and the
//! offsets the log dir's checkpoint files hold for this partition (read for `recover` too).
//!
//! Nothing here writes: the broker's start-up work (recovery, snapshot clean-up) is
//! [`crate::storage::Log::load`]'s; a dry run must leave the directory exactly as it found it,
//! so it reads the files as a broker holds them after a clean start.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::format::checkpoint::OffsetCheckpoint;
use crate::format::index::{OFFSET_INDEX_ENTRY_BYTES, TIME_INDEX_ENTRY_BYTES};
use crate::format::names::{
    classify, index_file_name, log_file_name, parse_partition_dir, time_index_file_name, FileKind,
    LOG_START_OFFSET_CHECKPOINT_FILE_NAME,
};
use crate::storage::files::{read_state, StateFile};
use crate::storage::log_reader::{LogReader, Step};
use crate::storage::TimeIndex;

pub use crate::storage::files::mtime_ms;

/// One segment as the broker's `LogSegment` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SegmentView {
    pub base_offset: i64,
    /// Bytes in the `.log`.
    pub size: u64,
    /// The `.log` file's modification time.
    pub mtime_ms: i64,
    /// `maxTimestampSoFar`: the time index's last entry, -1 when it has none.
    pub max_timestamp: i64,
    /// `offsetIndex.sizeInBytes` (every whole slot of the file counts, as Kafka counts them).
    pub offset_index_bytes: u64,
    /// `timeIndex.sizeInBytes`.
    pub time_index_bytes: u64,
}

impl SegmentView {
    /// `LogSegment.largestTimestamp`: the largest record timestamp, else the `.log` mtime.
    pub fn largest_timestamp(&self) -> i64 {
        if self.max_timestamp >= 0 {
            self.max_timestamp
        } else {
            self.mtime_ms
        }
    }

    /// Where [`Self::largest_timestamp`] comes from: `"records"` or `"mtime"`.
    pub fn timestamp_source(&self) -> &'static str {
        if self.max_timestamp >= 0 {
            "records"
        } else {
            "mtime"
        }
    }
}

#[derive(Debug, Clone)]
pub struct PartitionView {
    pub dir: PathBuf,
    /// Topic and partition from the directory name, when it is a partition directory name.
    pub topic_partition: Option<(String, i32)>,
    /// Oldest first; never empty.
    pub segments: Vec<SegmentView>,
    /// One past the last offset of the last segment's last whole batch (its base if none).
    pub log_end_offset: i64,
}

fn file_len_or_zero(path: &Path) -> Result<u64> {
    match std::fs::metadata(path) {
        Ok(m) => Ok(m.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// One past the last offset of the last whole batch of a `.log` file, `base` when none.
pub fn next_offset_of_log(path: &Path, base: i64) -> Result<i64> {
    let mut reader = LogReader::open(path, None)?.with_max_entry_bytes(u64::MAX);
    let mut next = base;
    while let Step::Entry { entry, .. } = reader.next_step()? {
        next = entry.last_offset() + 1;
    }
    Ok(next)
}

impl PartitionView {
    pub fn open(dir: &Path) -> Result<Self> {
        crate::ops::input::examine(dir, crate::error::Expected::Partition)?;
        let mut bases = Vec::new();
        for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
            let e = e.map_err(|e| Error::io(dir, e))?;
            let name = e.file_name().to_string_lossy().into_owned();
            if let FileKind::Log { base_offset } = classify(&name) {
                if name != log_file_name(base_offset) {
                    return Err(Error::invalid(
                        &e.path(),
                        format!(
                            "segment name is not the 20-digit form {}",
                            log_file_name(base_offset)
                        ),
                    ));
                }
                bases.push(base_offset);
            }
        }
        bases.sort_unstable();
        let Some(&last_base) = bases.last() else {
            return Err(Error::invalid(dir, "no .log segment in this directory"));
        };
        let mut segments = Vec::with_capacity(bases.len());
        for base in bases {
            let log = dir.join(log_file_name(base));
            let time_index_path = dir.join(time_index_file_name(base));
            let time_index_bytes = file_len_or_zero(&time_index_path)?;
            let max_timestamp = if time_index_bytes >= TIME_INDEX_ENTRY_BYTES as u64 {
                TimeIndex::open_existing(&time_index_path, base)?
                    .last_entry()
                    .timestamp
            } else {
                -1
            };
            segments.push(SegmentView {
                base_offset: base,
                size: file_len_or_zero(&log)?,
                mtime_ms: mtime_ms(&log)?,
                max_timestamp,
                offset_index_bytes: round_down(
                    file_len_or_zero(&dir.join(index_file_name(base)))?,
                    OFFSET_INDEX_ENTRY_BYTES,
                ),
                time_index_bytes: round_down(time_index_bytes, TIME_INDEX_ENTRY_BYTES),
            });
        }
        let log_end_offset = next_offset_of_log(&dir.join(log_file_name(last_base)), last_base)?;
        let topic_partition = dir
            .file_name()
            .and_then(|n| parse_partition_dir(&n.to_string_lossy()))
            .map(|p| (p.topic, p.partition));
        Ok(PartitionView {
            dir: dir.to_path_buf(),
            topic_partition,
            segments,
            log_end_offset,
        })
    }

    pub fn active_segment(&self) -> &SegmentView {
        self.segments.last().expect("a view has a segment")
    }

    /// The log dir holding this partition directory (where the offset checkpoints live).
    pub fn log_dir(&self) -> Option<&Path> {
        self.dir.parent()
    }

    /// This partition's entry in the log dir's checkpoint file `file_name`, if the file exists
    /// and has one. Returns the file's path with the offset.
    pub fn checkpoint_offset(&self, file_name: &str) -> Result<Option<(PathBuf, i64)>> {
        Ok(checkpoint_entry(&self.dir, file_name)?
            .map(|(path, checkpoint, i)| (path, checkpoint.entries[i].offset)))
    }
}

/// Where a log start offset comes from: `logStartOffsetSource` beside every `logStartOffset`,
/// named here once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogStartSource {
    /// The first segment's base offset (no checkpoint entry, or one below it).
    FirstSegment,
    /// The log dir's `log-start-offset-checkpoint` entry.
    Checkpoint,
    /// The command line's `--log-start-offset`.
    Given,
}

impl LogStartSource {
    /// The source of `offset`, loaded as the larger of a checkpoint entry and the first
    /// segment's base `first_segment_base`: the checkpoint only when it is above the base.
    pub fn of_loaded(offset: i64, first_segment_base: i64) -> Self {
        if offset > first_segment_base {
            LogStartSource::Checkpoint
        } else {
            LogStartSource::FirstSegment
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LogStartSource::FirstSegment => "first segment base offset",
            LogStartSource::Checkpoint => LOG_START_OFFSET_CHECKPOINT_FILE_NAME,
            LogStartSource::Given => "--log-start-offset",
        }
    }
}

impl serde::Serialize for LogStartSource {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A log start offset and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogStart {
    pub offset: i64,
    pub source: LogStartSource,
}

/// The log start offset the broker loads for the partition directory `dir` whose first
/// segment's base offset is `first_segment_base`: the larger of that base and the log dir's
/// `log-start-offset-checkpoint` entry (`LogLoader.load`). A batch's offset plays no part: a
/// compacted first segment whose first batch is at 2459 still starts the log at its base.
pub fn loaded_log_start(dir: &Path, first_segment_base: i64) -> Result<LogStart> {
    let checkpointed = checkpoint_entry(dir, LOG_START_OFFSET_CHECKPOINT_FILE_NAME)?
        .map(|(_, c, i)| c.entries[i].offset);
    let offset = checkpointed.map_or(first_segment_base, |c| c.max(first_segment_base));
    Ok(LogStart {
        offset,
        source: LogStartSource::of_loaded(offset, first_segment_base),
    })
}

/// The log dir's checkpoint file `file_name` beside the partition directory `dir`, decoded,
/// and the index of the partition's entry in it: `None` when the file is missing, the
/// directory is not named `<topic>-<partition>`, or the file does not name the partition.
pub fn checkpoint_entry(
    dir: &Path,
    file_name: &str,
) -> Result<Option<(PathBuf, OffsetCheckpoint, usize)>> {
    let Some(log_dir) = dir.parent() else {
        return Ok(None);
    };
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some(pd) = parse_partition_dir(&name) else {
        return Ok(None);
    };
    let path = log_dir.join(file_name);
    let Some(checkpoint) = read_checkpoint(&path)? else {
        return Ok(None);
    };
    let entry = checkpoint
        .entries
        .iter()
        .position(|e| e.topic == pd.topic && e.partition == pd.partition);
    Ok(entry.map(|i| (path, checkpoint, i)))
}

/// The offset checkpoint file at `path`, decoded; `None` when it does not exist.
pub fn read_checkpoint(path: &Path) -> Result<Option<OffsetCheckpoint>> {
    match read_state(path, StateFile::Checkpoint) {
        Ok(b) => OffsetCheckpoint::decode(&b, &path.display().to_string())
            .map(Some)
            .map_err(|e| Error::decode(path, 0, e)),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn round_down(len: u64, entry_bytes: usize) -> u64 {
    len / entry_bytes as u64 * entry_bytes as u64
}
