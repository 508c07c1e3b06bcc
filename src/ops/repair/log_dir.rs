//! The partition's entries in its log dir's offset checkpoints as a clean shutdown leaves them,
//! after an operation moved the log's offsets (retention, recovery).
//!
//! At shutdown `LogManager.shutdown` flushes every log to its end (`log.flush(true)`: the
//! recovery point becomes the log end offset), then `checkpointRecoveryOffsetsInDir` writes
//! every log's recovery point and `checkpointLogStartOffsetsInDir` the log start offset of the
//! logs whose start lies above their first segment's base; both files are written whole, so
//! they exist afterwards. The high watermark (`replication-offset-checkpoint`, written by the
//! replica manager) is kept within the log (`UnifiedLog.updateLogStartOffset` raises it to the
//! log start offset); an entry the file does not have is not invented.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::apply::Change;
use crate::error::{Error, Result};
use crate::format::checkpoint::OffsetCheckpointEntry;
use crate::format::names::{
    parse_partition_dir, CLEANER_OFFSET_CHECKPOINT_FILE_NAME,
    LOG_START_OFFSET_CHECKPOINT_FILE_NAME, META_PROPERTIES_FILE_NAME,
    RECOVERY_POINT_CHECKPOINT_FILE_NAME, REPLICATION_OFFSET_CHECKPOINT_FILE_NAME,
};
use crate::ops::partition::read_checkpoint;
use crate::storage::java_hash_order::{
    scala_212_trie_order, scala_champ_order, scala_mutable_order,
    scala_mutable_table_after_inserts, scala_mutable_table_for_known_size, JavaHash,
};

/// A checkpoint file entry of this partition that the operation moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointUpdate {
    pub file: PathBuf,
    pub before: Option<i64>,
    /// None: the file has no entry for the partition afterwards.
    pub after: Option<i64>,
    /// The file does not exist yet: the broker's shutdown creates it.
    pub created: bool,
}

/// The log's offsets after the operation and a clean shutdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownOffsets {
    pub log_start_offset: i64,
    pub first_segment_base: i64,
    pub log_end_offset: i64,
}

/// The log dir holding the partition directory `dir`, if it is one: it holds
/// `meta.properties` or one of the broker's offset checkpoints.
pub fn log_dir_of(dir: &Path) -> Option<&Path> {
    let parent = dir.parent()?;
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    [
        META_PROPERTIES_FILE_NAME,
        RECOVERY_POINT_CHECKPOINT_FILE_NAME,
        REPLICATION_OFFSET_CHECKPOINT_FILE_NAME,
        LOG_START_OFFSET_CHECKPOINT_FILE_NAME,
        CLEANER_OFFSET_CHECKPOINT_FILE_NAME,
    ]
    .iter()
    .any(|n| parent.join(n).is_file())
    .then_some(parent)
}

/// Why the log start offset an operation leaves in `dir` is recorded nowhere, when it is not:
/// it lies above the first segment's base, where only the log dir's
/// `log-start-offset-checkpoint` keeps it (`checkpointLogStartOffsetsInDir`), and `dir` is not
/// in a log dir. A broker loading the directory, and kseg, then take the first segment's base
/// as the log start: the records below the asked offset are readable again.
pub fn unrecorded_log_start(dir: &Path, offsets: &ShutdownOffsets) -> Option<String> {
    (offsets.log_start_offset > offsets.first_segment_base && log_dir_of(dir).is_none()).then(
        || {
            format!(
                "{} is not in a log dir (no meta.properties or offset checkpoint beside it): nothing records the log start offset {} inside segment {}; whoever loads the directory takes the log start as {} (the segment's base)",
                dir.display(),
                offsets.log_start_offset,
                offsets.first_segment_base,
                offsets.first_segment_base
            )
        },
    )
}

/// What a clean shutdown changes in the log dir's checkpoints for the partition `dir` whose
/// log ends up at `offsets`; nothing when `dir` is not in a log dir.
pub fn shutdown_checkpoint_updates(
    dir: &Path,
    offsets: &ShutdownOffsets,
) -> Result<Vec<CheckpointUpdate>> {
    let (Some(log_dir), Some(pd)) = (
        log_dir_of(dir),
        dir.file_name()
            .and_then(|n| parse_partition_dir(&n.to_string_lossy())),
    ) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for file in [
        RECOVERY_POINT_CHECKPOINT_FILE_NAME,
        LOG_START_OFFSET_CHECKPOINT_FILE_NAME,
        REPLICATION_OFFSET_CHECKPOINT_FILE_NAME,
    ] {
        let path = log_dir.join(file);
        let checkpoint = read_checkpoint(&path)?;
        let before = checkpoint.as_ref().and_then(|c| {
            c.entries
                .iter()
                .find(|e| e.topic == pd.topic && e.partition == pd.partition)
                .map(|e| e.offset)
        });
        let after = match file {
            RECOVERY_POINT_CHECKPOINT_FILE_NAME => Some(offsets.log_end_offset),
            LOG_START_OFFSET_CHECKPOINT_FILE_NAME => (offsets.log_start_offset
                > offsets.first_segment_base)
                .then_some(offsets.log_start_offset),
            _ => before.map(|o| o.clamp(offsets.log_start_offset, offsets.log_end_offset)),
        };
        // The replica manager's file is not the log manager's to create.
        let created = checkpoint.is_none() && file != REPLICATION_OFFSET_CHECKPOINT_FILE_NAME;
        if created || (checkpoint.is_some() && before != after) {
            out.push(CheckpointUpdate {
                file: path,
                before,
                after,
                created,
            });
        }
    }
    Ok(out)
}

fn entry_hash(e: &OffsetCheckpointEntry) -> i32 {
    (e.topic.as_str(), e.partition).java_hash()
}

/// `entries`, the content of the checkpoint file `name`, in the order Kafka 4.0 writes it
/// (`OffsetCheckpointFile.write` lists its map's entries in iteration order); None where that
/// order depends on more than the entries (insertion history) and is not modelled.
///
/// - `recovery-point-offset-checkpoint`: `LogManager.checkpointRecoveryOffsetsInDir` maps the
///   log dir's logs (`logsToCheckpoint.map`) into a Scala 2.13 `mutable.HashMap` of known size.
/// - `log-start-offset-checkpoint`: `checkpointLogStartOffsetsInDir` collects them
///   (`.collect`, size unknown: grown from 16 slots).
/// - `cleaner-offset-checkpoint`: `LogCleanerManager.updateCheckpoints` writes an immutable
///   map (`toMap`, then `+`/`-`): a CHAMP trie past 4 entries; up to 4 a `Map1`..`Map4`, in
///   insertion order (what was read, then the partition updated last).
/// - `replication-offset-checkpoint`: `ReplicaManager.checkpointHighWatermarks` writes an
///   `AnyRefMap` filled in the order `allPartitions` (a `ConcurrentHashMap`, whose table
///   never shrinks) yields the partitions: a function of that table's history, not of the
///   entries, so not modelled. kseg never adds or removes an entry of this file (a high
///   watermark is only clamped into the log), and with the same partitions the broker writes
///   the same order, so the file's own order is kept.
fn kafka_order(
    name: &str,
    entries: Vec<OffsetCheckpointEntry>,
) -> Option<Vec<OffsetCheckpointEntry>> {
    let mut entries = entries;
    let n = entries.len();
    match name {
        RECOVERY_POINT_CHECKPOINT_FILE_NAME => {
            let table = scala_mutable_table_for_known_size(n);
            scala_mutable_order(&mut entries, table, entry_hash);
            Some(entries)
        }
        LOG_START_OFFSET_CHECKPOINT_FILE_NAME => {
            let table = scala_mutable_table_after_inserts(n);
            scala_mutable_order(&mut entries, table, entry_hash);
            Some(entries)
        }
        CLEANER_OFFSET_CHECKPOINT_FILE_NAME if n > 4 => {
            Some(scala_champ_order(entries, entry_hash))
        }
        _ => None,
    }
}

/// Whether `entries` (more than 4) are in the order of a Scala 2.12 immutable map (a hash
/// trie), as Kafka builds on Scala 2.12 (before 4.0; the reference corpora's brokers) wrote
/// the log manager's checkpoints (`collection.Map.map` there builds an immutable map), and
/// not in Kafka 4.0's order for the file `name`.
fn written_by_scala_212(name: &str, entries: &[OffsetCheckpointEntry]) -> bool {
    if entries.len() <= 4 {
        return false;
    }
    let mut trie = entries.to_vec();
    scala_212_trie_order(&mut trie, entry_hash);
    trie == entries && kafka_order(name, entries.to_vec()).as_deref() != Some(entries)
}

/// `entries` after this partition's entry was added or removed, in the order the broker that
/// wrote `before` (the file's entries as read) writes them: the hash order of its build, or,
/// where that is not modelled, the entries kept in their place with a new one last.
fn broker_order(
    name: &str,
    before: &[OffsetCheckpointEntry],
    entries: Vec<OffsetCheckpointEntry>,
) -> Vec<OffsetCheckpointEntry> {
    if written_by_scala_212(name, before) {
        // Up to 4 entries, Scala 2.12's `Map1`..`Map4` keep insertion order, not modelled.
        let mut entries = entries;
        if entries.len() > 4 {
            scala_212_trie_order(&mut entries, entry_hash);
        }
        return entries;
    }
    match kafka_order(name, entries.clone()) {
        Some(ordered) => ordered,
        None => entries,
    }
}

/// The writes that carry out `updates` for the partition `topic_partition`, staged in
/// `scratch`: an updated entry keeps its place (the set of partitions, which decides the
/// broker's order, is unchanged); when the entry is added or removed, the file takes the order
/// of the broker build that wrote it ([`broker_order`]).
pub fn checkpoint_writes(
    updates: &[CheckpointUpdate],
    topic_partition: &(String, i32),
    scratch: &Path,
) -> Result<Vec<Change>> {
    let (topic, partition) = topic_partition;
    let mut out = Vec::new();
    for u in updates {
        let mut cp = read_checkpoint(&u.file)?.unwrap_or_default();
        let size_before = std::fs::metadata(&u.file).ok().map(|m| m.len());
        let at = cp
            .entries
            .iter()
            .position(|e| &e.topic == topic && e.partition == *partition);
        let before = cp.entries.clone();
        match (at, u.after) {
            (Some(i), Some(offset)) => cp.entries[i].offset = offset,
            (Some(i), None) => {
                cp.entries.remove(i);
            }
            (None, Some(offset)) => cp.entries.push(OffsetCheckpointEntry {
                topic: topic.clone(),
                partition: *partition,
                offset,
            }),
            (None, None) => {}
        }
        let name = u.file.file_name().unwrap_or_default();
        if cp.entries.len() != before.len() {
            let entries = std::mem::take(&mut cp.entries);
            cp.entries = broker_order(&name.to_string_lossy(), &before, entries);
        }
        let source = scratch.join(name);
        let text = cp.encode();
        std::fs::write(&source, &text).map_err(|e| Error::io(&source, e))?;
        out.push(Change::Write {
            file: u.file.clone(),
            source,
            size_before,
            size_after: text.len() as u64,
        });
    }
    Ok(out)
}
