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
    scala_211_hash_table_order, scala_212_trie_order, scala_champ_order, scala_mutable_order,
    scala_mutable_table_after_inserts, scala_mutable_table_for_known_size,
    topic_and_partition_hash, JavaHash,
};

/// A checkpoint file entry of this partition that the operation moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointUpdate {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
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
/// `meta.properties` or one of the broker's offset checkpoints. An error other than "not
/// found" on one of them is an error: a plan made without the log dir would leave its
/// checkpoints as they were.
pub fn log_dir_of(dir: &Path) -> Result<Option<&Path>> {
    let Some(parent) = dir.parent() else {
        return Ok(None);
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    for n in [
        META_PROPERTIES_FILE_NAME,
        RECOVERY_POINT_CHECKPOINT_FILE_NAME,
        REPLICATION_OFFSET_CHECKPOINT_FILE_NAME,
        LOG_START_OFFSET_CHECKPOINT_FILE_NAME,
        CLEANER_OFFSET_CHECKPOINT_FILE_NAME,
    ] {
        if crate::storage::files::is_file(&parent.join(n))? {
            return Ok(Some(parent));
        }
    }
    Ok(None)
}

/// Why the log start offset an operation leaves in `dir` is recorded nowhere, when it is not:
/// it lies above the first segment's base, where only the log dir's
/// `log-start-offset-checkpoint` keeps it (`checkpointLogStartOffsetsInDir`), and `dir` is not
/// in a log dir. A broker loading the directory, and kseg, then take the first segment's base
/// as the log start: the records below the asked offset are readable again.
pub fn unrecorded_log_start(dir: &Path, offsets: &ShutdownOffsets) -> Option<String> {
    // The plan that came first read the same files: an error there stopped it.
    (offsets.log_start_offset > offsets.first_segment_base
        && matches!(log_dir_of(dir), Ok(None)))
    .then(
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
        log_dir_of(dir)?,
        dir.file_name()
            .and_then(|n| parse_partition_dir(&n.to_string_lossy())),
    ) else {
        return Ok(Vec::new());
    };
    // The KRaft metadata log is the raft layer's, never in `LogManager`'s logs: no offset
    // checkpoint of its log dir names it.
    if pd.topic == crate::ops::inspect::ls::KRAFT_METADATA_TOPIC {
        return Ok(Vec::new());
    }
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

/// The broker build whose maps decide the order of a log dir's checkpoint files, as the files
/// themselves show it ([`Writer::shown_by`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Writer {
    /// Kafka up to 0.10.1 (Scala 2.10/2.11): maps keyed by the case class `TopicAndPartition`
    /// (`LogManager.checkpointLogsInDir` writes `logsByDir`, a `groupBy` of `logs.toMap`, and
    /// `ReplicaManager.checkpointHighWatermarks` a `toMap`: immutable hash tries past 4
    /// entries; `OffsetCheckpoint.read` builds a `mutable.HashMap`).
    Kafka010,
    /// Kafka 0.10.2 to 3.x built on Scala 2.11/2.12: the same immutable hash tries, keyed by
    /// the Java `TopicPartition`.
    Scala212,
    /// Kafka 4.0 (Scala 2.13 only); also what a file whose writer cannot be told gets.
    Kafka4,
}

impl Writer {
    /// The hash the writer's maps key an entry by.
    fn hash(self) -> fn(&OffsetCheckpointEntry) -> i32 {
        match self {
            Writer::Kafka010 => |e| topic_and_partition_hash(&e.topic, e.partition),
            Writer::Scala212 | Writer::Kafka4 => entry_hash,
        }
    }

    /// `entries` (more than 4) in the order this writer's immutable map of them iterates.
    fn immutable_order(self, entries: Vec<OffsetCheckpointEntry>) -> Vec<OffsetCheckpointEntry> {
        match self {
            Writer::Kafka4 => scala_champ_order(entries, entry_hash),
            Writer::Kafka010 | Writer::Scala212 => {
                let mut entries = entries;
                scala_212_trie_order(&mut entries, self.hash());
                entries
            }
        }
    }

    /// The writer whose order the file `name`'s `entries` are in, when they show one: more
    /// than 4 entries (fewer are in insertion order for every writer) in exactly one of the
    /// orders modelled.
    fn shown_by(name: &str, entries: &[OffsetCheckpointEntry]) -> Option<Writer> {
        if entries.len() <= 4 {
            return None;
        }
        let in_order = |w: Writer| {
            let ordered = match w {
                Writer::Kafka4 => kafka_order(name, entries.to_vec()),
                _ => Some(w.immutable_order(entries.to_vec())),
            };
            ordered.as_deref() == Some(entries)
        };
        let mut shown = [Writer::Kafka010, Writer::Scala212, Writer::Kafka4]
            .into_iter()
            .filter(|&w| in_order(w));
        match (shown.next(), shown.next()) {
            (Some(w), None) => Some(w),
            _ => None,
        }
    }

    /// The writer of `file` (whose entries are `entries`): the one the file shows, else the
    /// one another offset checkpoint of its log dir shows (all four are written by the same
    /// broker), else Kafka 4.0.
    /// A checkpoint that cannot be decoded shows nothing; one that cannot be read is an error.
    fn of(file: &Path, entries: &[OffsetCheckpointEntry]) -> Result<Writer> {
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        if let Some(w) = Writer::shown_by(&name, entries) {
            return Ok(w);
        }
        let Some(dir) = file.parent() else {
            return Ok(Writer::Kafka4);
        };
        for other in [
            RECOVERY_POINT_CHECKPOINT_FILE_NAME,
            LOG_START_OFFSET_CHECKPOINT_FILE_NAME,
            REPLICATION_OFFSET_CHECKPOINT_FILE_NAME,
            CLEANER_OFFSET_CHECKPOINT_FILE_NAME,
        ] {
            if other == name {
                continue;
            }
            let cp = match read_checkpoint(&dir.join(other)) {
                Ok(cp) => cp,
                Err(e @ Error::Io { .. }) => return Err(e),
                Err(_) => None,
            };
            if let Some(w) = cp.and_then(|cp| Writer::shown_by(other, &cp.entries)) {
                return Ok(w);
            }
        }
        Ok(Writer::Kafka4)
    }
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
///   insertion order ([`cleaner_update`]).
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

/// `entries` with the partition `(topic, partition)`'s entry set to `after` in its place,
/// added last, or removed (`None`): an immutable `Map1`..`Map4`'s `+` and `-`.
fn edit(
    mut entries: Vec<OffsetCheckpointEntry>,
    (topic, partition): &(String, i32),
    after: Option<i64>,
) -> Vec<OffsetCheckpointEntry> {
    let at = entries
        .iter()
        .position(|e| &e.topic == topic && e.partition == *partition);
    match (at, after) {
        (Some(i), Some(offset)) => entries[i].offset = offset,
        (Some(i), None) => {
            entries.remove(i);
        }
        (None, Some(offset)) => entries.push(OffsetCheckpointEntry {
            topic: topic.clone(),
            partition: *partition,
            offset,
        }),
        (None, None) => {}
    }
    entries
}

/// `cleaner-offset-checkpoint` after `LogCleanerManager.updateCheckpoints` set, added or
/// removed one partition's entry, from the file's entries `before` as `writer` does it: it
/// reads the file into a map, filters it into another, turns that into an immutable map
/// (`toMap`: `Map1`..`Map4` in the order it is given, a hash trie past 4), removes or adds the
/// partition (`-`, `+`: in place, or last; a fifth entry makes a hash trie, and a trie stays
/// one below 5) and writes that map's order.
///
/// - Kafka 4.0: `OffsetCheckpointFile.read` fills a `java.util.HashMap`; `asScala.filter`
///   builds a Scala 2.13 `mutable.HashMap` of the default 16 slots
///   (`mutable.Map`'s `mapFactory`, whose builder takes no size hint), whose order is a
///   function of the keys: up to 4 entries are read back in that order.
/// - Kafka 2.x to 3.4 (Scala 2.12): `read()` is `checkpoint.read().toMap` of the file's lines
///   (2.1: `.filterKeys(logs.keys) ++ update`, the same order): up to 4 entries in file order.
///   (3.5 to 3.9 read into a `mutable.Map` first; a Scala 2.12 build of those orders up to 4
///   entries by 2.12's `mutable.HashMap`, which a file does not tell apart: not modelled.)
/// - Kafka 0.10 (Scala 2.10/2.11): `OffsetCheckpoint.read` fills a `mutable.HashMap` in file
///   order, and `filterKeys(logs.keys) ++ update` builds the immutable map in its order.
///
/// The broker also drops the entries of partitions it does not host (`logs.keys`); kseg keeps
/// every entry (it does not know the broker's other log dirs).
fn cleaner_update(
    writer: Writer,
    before: &[OffsetCheckpointEntry],
    topic_partition: &(String, i32),
    after: Option<i64>,
) -> Vec<OffsetCheckpointEntry> {
    let mut read = before.to_vec();
    if read.len() <= 4 {
        match writer {
            Writer::Kafka4 => {
                let table = scala_mutable_table_after_inserts(read.len());
                scala_mutable_order(&mut read, table, entry_hash);
            }
            Writer::Kafka010 => read = scala_211_hash_table_order(read, writer.hash()),
            Writer::Scala212 => {}
        }
    }
    let edited = edit(read, topic_partition, after);
    if before.len() > 4 || edited.len() > 4 {
        writer.immutable_order(edited)
    } else {
        edited
    }
}

/// `before`, the file `name`'s entries as read, after this partition's entry became `after`,
/// in the order the broker build that wrote the file (`writer`) writes them. An entry whose
/// value changes in a file of more than 4 keeps its place (the set of partitions, which
/// decides the order, is unchanged); `cleaner-offset-checkpoint` is what
/// [`cleaner_update`] leaves; an entry added to or removed from another file puts the file in
/// its writer's hash order, or, where that is not modelled (up to 4 entries before 4.0, the
/// high watermarks), leaves the others in their place and a new one last.
fn broker_update(
    name: &str,
    writer: Writer,
    before: &[OffsetCheckpointEntry],
    topic_partition: &(String, i32),
    after: Option<i64>,
) -> Vec<OffsetCheckpointEntry> {
    let edited = edit(before.to_vec(), topic_partition, after);
    if edited.len() == before.len() && before.len() > 4 {
        return edited;
    }
    if name == CLEANER_OFFSET_CHECKPOINT_FILE_NAME {
        return cleaner_update(writer, before, topic_partition, after);
    }
    if edited.len() == before.len() {
        return edited;
    }
    match writer {
        Writer::Kafka4 => kafka_order(name, edited.clone()).unwrap_or(edited),
        Writer::Kafka010 | Writer::Scala212 if edited.len() > 4 => writer.immutable_order(edited),
        Writer::Kafka010 | Writer::Scala212 => edited,
    }
}

/// The writes that carry out `updates` for the partition `topic_partition`, staged in
/// `scratch`, each file in the order of the broker build that wrote it ([`broker_update`]).
pub fn checkpoint_writes(
    updates: &[CheckpointUpdate],
    topic_partition: &(String, i32),
    scratch: &Path,
) -> Result<Vec<Change>> {
    let mut out = Vec::new();
    for u in updates {
        let mut cp = read_checkpoint(&u.file)?.unwrap_or_default();
        let size_before = crate::storage::files::metadata_if_exists(&u.file)?.map(|m| m.len());
        let name = u.file.file_name().unwrap_or_default();
        let writer = Writer::of(&u.file, &cp.entries)?;
        cp.entries = broker_update(
            &name.to_string_lossy(),
            writer,
            &cp.entries,
            topic_partition,
            u.after,
        );
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
