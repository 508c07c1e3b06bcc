//! `ls`: what a log dir holds, partition by partition, as `kafka-log-dirs.sh` would describe it
//! from a running broker, read from the disk alone. Only metadata is read: file sizes and
//! times, the log dir's checkpoint files, `partition.metadata`, `meta.properties`, the last
//! slot of the active segment's offset index and of every time index, and the `.log` bytes from
//! that last offset-index entry to the end of the active segment. That last read is what
//! `LogSegment.readNextOffset` does when the broker loads a cleanly shut down log: it is bounded
//! by `index.interval.bytes` (plus one batch) wherever the index is current.
//!
//! Directory states are the loader's (`LogManager.loadLogs` / `loadLog`): `-delete` directories
//! are queued for deletion, `-stray` ones kept aside, `-future` ones are replica moves, and a
//! name that does not parse fails the whole log dir. Problems are those metadata shows: a missing
//! `partition.metadata`, a topic id the KRaft metadata does not know or gives another name, a
//! partition whose replicas do not include this broker (`LogManager.isStrayKraftReplica`),
//! checkpoint entries for partitions that have no directory, the same partition twice.

use crate::ops::partition::LogStartSource;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::format::checkpoint::{uuid_to_base64, MetaProperties, PartitionMetadata};
use crate::format::index::{
    decode_offset_index_entry_bytes, decode_time_index_entry_bytes, offset_index_entries,
    offset_index_lookup, offset_index_zero_tail_start, OFFSET_INDEX_ENTRY_BYTES,
    TIME_INDEX_ENTRY_BYTES,
};
use crate::format::names::{
    classify, index_file_name, parse_partition_dir, partition_dir_name, time_index_file_name,
    FileKind, PartitionDirState, CLEANER_OFFSET_CHECKPOINT_FILE_NAME,
    LOG_START_OFFSET_CHECKPOINT_FILE_NAME, META_PROPERTIES_FILE_NAME, PARTITION_METADATA_FILE_NAME,
    RECOVERY_POINT_CHECKPOINT_FILE_NAME, REPLICATION_OFFSET_CHECKPOINT_FILE_NAME,
};
use crate::ops::finding::Finding;
use crate::ops::inspect::metadata::{self, image::Image, Point};
use crate::ops::partition::read_checkpoint;
use crate::storage::files::{list_dir, mtime_ms, read_index, read_index_last_slot, segment_logs};
use crate::storage::files::{read_state, StateFile};
use crate::storage::seek::{scan_to_end, seek_reader};

/// The KRaft metadata log's topic: the raft layer's, not the log manager's.
pub const KRAFT_METADATA_TOPIC: &str = "__cluster_metadata";
/// The tiered-storage index cache directory the loader skips (`RemoteIndexCache.DIR_NAME`).
pub const REMOTE_INDEX_CACHE_DIR_NAME: &str = "remote-log-index-cache";

/// What to compare the partitions with.
#[derive(Debug, Clone, Default)]
pub struct LsOptions {
    /// A `__cluster_metadata-0` directory (or a log dir holding one) to take topic ids and
    /// replica assignments from, instead of the log dir's own.
    pub metadata: Option<PathBuf>,
}

/// One directory of a log dir.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionListing {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub dir: PathBuf,
    pub topic: Option<String>,
    pub partition: Option<i32>,
    /// `live`, `delete`, `future`, `stray`, or `unparseable` (a name the loader rejects).
    pub state: &'static str,
    /// The unique id of a `-delete`, `-future` or `-stray` name.
    pub unique_id: Option<String>,
    /// `partition.metadata`'s topic id (base64, as Kafka prints it).
    pub topic_id: Option<String>,
    /// Bytes in the `.log` segments (`Log.size`).
    /// Bytes on disk (`size` in every report's vocabulary).
    #[serde(rename = "size")]
    pub size_in_bytes: u64,
    #[serde(rename = "segmentCount")]
    pub segments: usize,
    /// The log dir's `log-start-offset-checkpoint` entry, never below the first segment.
    pub log_start_offset: Option<i64>,
    pub log_start_offset_source: Option<LogStartSource>,
    pub log_end_offset: Option<i64>,
    /// `replication-offset-checkpoint`.
    pub high_watermark: Option<i64>,
    /// `recovery-point-offset-checkpoint`.
    pub recovery_point: Option<i64>,
    /// `cleaner-offset-checkpoint`.
    pub cleaner_checkpoint: Option<i64>,
    /// The newest `.log` modification time.
    pub last_modified_ms: Option<i64>,
    /// The largest timestamp the time indexes (and the active segment's tail) record; -1 none.
    pub max_timestamp: Option<i64>,
    /// `.log` bytes read (the active segment from its last index entry).
    pub log_bytes_read: u64,
    pub findings: Vec<Finding>,
}

impl PartitionListing {
    /// A directory's listing before anything in it was read.
    fn unmeasured(
        dir: PathBuf,
        topic_partition: Option<(String, i32)>,
        state: &'static str,
        unique_id: Option<String>,
    ) -> Self {
        let (topic, partition) = topic_partition.unzip();
        PartitionListing {
            dir,
            topic,
            partition,
            state,
            unique_id,
            topic_id: None,
            size_in_bytes: 0,
            segments: 0,
            log_start_offset: None,
            log_start_offset_source: None,
            log_end_offset: None,
            high_watermark: None,
            recovery_point: None,
            cleaner_checkpoint: None,
            last_modified_ms: None,
            max_timestamp: None,
            log_bytes_read: 0,
            findings: Vec::new(),
        }
    }
}

/// Sums over a topic or a log dir.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    #[serde(rename = "partitionCount")]
    pub partitions: usize,
    #[serde(rename = "segmentCount")]
    pub segments: usize,
    /// Bytes on disk (`size` in every report's vocabulary).
    #[serde(rename = "size")]
    pub size_in_bytes: u64,
}

impl Totals {
    fn add(&mut self, p: &PartitionListing) {
        self.partitions += 1;
        self.segments += p.segments;
        self.size_in_bytes += p.size_in_bytes;
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicTotals {
    pub topic: String,
    #[serde(flatten)]
    pub totals: Totals,
}

/// One log dir.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogDirListing {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub log_dir: PathBuf,
    /// `meta.properties`' node id (or broker id).
    pub broker_id: Option<i32>,
    /// The `__cluster_metadata-0` directory topic ids and assignments came from.
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub metadata: Option<PathBuf>,
    pub partitions: Vec<PartitionListing>,
    /// About the log dir's own files (checkpoints, `meta.properties`, the metadata log).
    pub findings: Vec<Finding>,
    pub topics: Vec<TopicTotals>,
    pub totals: Totals,
}

impl LogDirListing {
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.partitions
            .iter()
            .flat_map(|p| &p.findings)
            .chain(&self.findings)
    }
}

/// A log dir's checkpoint file, read once: its entries by topic-partition.
#[derive(Debug, Default)]
struct Checkpoint {
    path: PathBuf,
    entries: HashMap<(String, i32), i64>,
}

fn load_checkpoint(log_dir: &Path, name: &str, findings: &mut Vec<Finding>) -> Checkpoint {
    let path = log_dir.join(name);
    let entries = match read_checkpoint(&path) {
        Ok(Some(c)) => c
            .entries
            .into_iter()
            .map(|e| ((e.topic, e.partition), e.offset))
            .collect(),
        Ok(None) => HashMap::new(),
        Err(e) => {
            findings.push(Finding::error("checkpoint.decode", &path, e.to_string()));
            HashMap::new()
        }
    };
    Checkpoint { path, entries }
}

fn state_name(state: &PartitionDirState) -> (&'static str, Option<String>) {
    match state {
        PartitionDirState::Live => ("live", None),
        PartitionDirState::Delete { unique_id } => ("delete", Some(unique_id.clone())),
        PartitionDirState::Future { unique_id } => ("future", Some(unique_id.clone())),
        PartitionDirState::Stray { unique_id } => ("stray", Some(unique_id.clone())),
    }
}

/// The offset-index entry of the active segment to read from: the floor entry of the earlier of
/// the offset index's last entry and the time index's last entry (`maxTimestampSoFar`'s
/// offset). The time index can lag the offset index after a crash (its pages written back later),
/// and a maximum found earlier in the segment is recorded at the offset of its own batch: from
/// the batch holding that offset on, every batch may carry a larger timestamp than the time index
/// says. The whole offset index is read only when the time index's offset lies before its last
/// entry.
fn tail_entry(
    index: &Path,
    base: i64,
    time_offset: i64,
) -> Result<Option<crate::format::index::OffsetIndexEntry>> {
    let Some(slot) = read_index_last_slot(index, OFFSET_INDEX_ENTRY_BYTES)? else {
        return Ok(None);
    };
    let slot = slot.as_slice().try_into().expect("an index slot");
    let last = decode_offset_index_entry_bytes(slot, base);
    if time_offset >= last.offset {
        return Ok(Some(last));
    }
    let bytes = read_index(index)?;
    let slots = bytes.data.len() / OFFSET_INDEX_ENTRY_BYTES;
    let whole = offset_index_zero_tail_start(&bytes.data, base).unwrap_or(slots);
    let entries: Vec<_> =
        offset_index_entries(&bytes.data[..whole * OFFSET_INDEX_ENTRY_BYTES], base).collect();
    Ok(Some(offset_index_lookup(&entries, base, time_offset)))
}

/// The segments' sizes and times, the log end offset and the largest timestamp, read from
/// metadata and index tails: every segment's time index's last entry (the broker's
/// `readMaxTimestampAndOffsetSoFar` of a loaded segment), and the active segment's batches
/// from the earlier of its two indexes' last entries on (`readNextOffset`, and what the time
/// index may not have recorded yet).
fn measure(dir: &Path, p: &mut PartitionListing) -> Result<()> {
    let segments = segment_logs(dir)?;
    let Some((last_base, last_log)) = segments.last().cloned() else {
        return Ok(());
    };
    let mut max_timestamp = crate::format::index::NO_TIMESTAMP;
    let mut last_modified = i64::MIN;
    let mut active_time_offset = last_base;
    for (base, log) in &segments {
        let meta = std::fs::metadata(log).map_err(|e| Error::io(log, e))?;
        p.size_in_bytes += meta.len();
        last_modified = last_modified.max(mtime_ms(log)?);
        let time_index = dir.join(time_index_file_name(*base));
        if let Some(slot) = read_index_last_slot(&time_index, TIME_INDEX_ENTRY_BYTES)? {
            let slot = slot.as_slice().try_into().expect("a time index slot");
            let e = decode_time_index_entry_bytes(slot, *base);
            max_timestamp = max_timestamp.max(e.timestamp);
            active_time_offset = e.offset;
        } else {
            // No time entry (none written yet, or lost): every batch may be past what it records.
            active_time_offset = *base;
        }
    }
    p.segments = segments.len();
    p.last_modified_ms = Some(last_modified);
    let log_len = std::fs::metadata(&last_log)
        .map_err(|e| Error::io(&last_log, e))?
        .len();
    let index = dir.join(index_file_name(last_base));
    let mut reader = seek_reader(&last_log, 0)?;
    let mut from = 0;
    // The floor of an offset below the first entry is the segment's start: read from there.
    let entry = tail_entry(&index, last_base, active_time_offset)?
        .filter(|e| !(e.position == 0 && e.offset == last_base));
    if let Some(e) = entry {
        // The broker indexes a batch by its last offset (`LogSegment.append`, `recover`): an
        // entry that does not name the batch at its position cannot be trusted to start from.
        let position = u64::try_from(e.position).ok().filter(|&pos| pos < log_len);
        let names_its_batch = match position {
            Some(pos) => reader
                .header_at(pos)?
                .is_some_and(|h| h.last_offset == e.offset),
            None => false,
        };
        match position {
            Some(pos) if names_its_batch => from = pos,
            _ => {
                let m = format!(
                    "the entry (offset {}, position {}) does not name the batch at its position: the log end offset and largest timestamp were found by reading the segment from its start",
                    e.offset, e.position
                );
                p.findings
                    .push(Finding::warning("ls.index-tail", &index, m));
            }
        }
    }
    reader.seek(from);
    let tail = scan_to_end(&mut reader, last_base)?;
    p.log_bytes_read = reader.bytes_read();
    p.log_end_offset = Some(tail.next_offset);
    // No timestamp anywhere (-1 in the indexes and batches) is none, not a time.
    p.max_timestamp = Some(max_timestamp.max(tail.max_timestamp))
        .filter(|&t| t != crate::format::index::NO_TIMESTAMP);
    p.log_start_offset = Some(segments[0].0);
    p.log_start_offset_source = Some(LogStartSource::FirstSegment);
    Ok(())
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Lists one log dir.
pub fn list_log_dir(log_dir: &Path, opts: &LsOptions) -> Result<LogDirListing> {
    let crate::ops::input::Input::Dir { files, .. } =
        crate::ops::input::examine(log_dir, crate::error::Expected::LogDir)?
    else {
        return Err(Error::unusable(
            log_dir,
            crate::error::Unusable::NotADirectory,
            crate::error::Expected::LogDir,
        ));
    };
    if files
        .iter()
        .any(|f| matches!(classify(&file_name(f)), FileKind::Log { .. }))
    {
        return Err(Error::invalid(
            log_dir,
            "a partition directory (it holds .log segments); ls takes the log dir that holds it",
        ));
    }
    let mut findings = Vec::new();
    let broker_id = match read_state(
        &log_dir.join(META_PROPERTIES_FILE_NAME),
        StateFile::Properties,
    ) {
        Ok(b) => match MetaProperties::decode(&b) {
            // node.id (KRaft, version 1) or broker.id (ZooKeeper, version 0).
            Ok(m) => m.node_id,
            Err(e) => {
                let f = log_dir.join(META_PROPERTIES_FILE_NAME);
                findings.push(Finding::error("meta-properties.decode", f, e.to_string()));
                None
            }
        },
        Err(_) => None,
    };
    let checkpoints = [
        RECOVERY_POINT_CHECKPOINT_FILE_NAME,
        REPLICATION_OFFSET_CHECKPOINT_FILE_NAME,
        LOG_START_OFFSET_CHECKPOINT_FILE_NAME,
        CLEANER_OFFSET_CHECKPOINT_FILE_NAME,
    ]
    .map(|n| load_checkpoint(log_dir, n, &mut findings));
    let [recovery, replication, log_start, cleaner] = &checkpoints;

    let own_metadata = log_dir.join(partition_dir_name(KRAFT_METADATA_TOPIC, 0));
    let metadata_dir = match &opts.metadata {
        Some(m) if m.join(partition_dir_name(KRAFT_METADATA_TOPIC, 0)).is_dir() => {
            Some(m.join(partition_dir_name(KRAFT_METADATA_TOPIC, 0)))
        }
        Some(m) => Some(m.clone()),
        None => own_metadata.is_dir().then_some(own_metadata),
    };
    let image = match &metadata_dir {
        Some(d) => {
            let r = metadata::load_dir(d, Point::End)?;
            // What the walk met; the replay's own findings are `metadata --check`'s.
            findings.extend(r.findings.into_iter().filter(|f| !metadata::replayed(f)));
            Some((r.dir, r.image))
        }
        None => None,
    };

    let mut partitions = Vec::new();
    for dir in list_dir(log_dir)?.into_iter().filter(|d| d.is_dir()) {
        let name = file_name(&dir);
        if name == REMOTE_INDEX_CACHE_DIR_NAME {
            continue;
        }
        let parsed = parse_partition_dir(&name);
        let (state, unique_id) = parsed
            .as_ref()
            .map_or(("unparseable", None), |pd| state_name(&pd.state));
        let mut p = PartitionListing::unmeasured(
            dir.clone(),
            parsed.as_ref().map(|pd| (pd.topic.clone(), pd.partition)),
            state,
            unique_id,
        );
        p.findings.extend(dir_name_finding(&dir));
        if let Err(e) = measure(&dir, &mut p) {
            p.findings
                .push(Finding::error("ls.unreadable", &dir, e.to_string()));
        }
        let metadata_file = dir.join(PARTITION_METADATA_FILE_NAME);
        match read_state(&metadata_file, StateFile::Properties) {
            Ok(b) => match PartitionMetadata::decode(&b, &metadata_file.display().to_string()) {
                Ok(m) => p.topic_id = Some(uuid_to_base64(&m.topic_id)),
                Err(e) => p.findings.push(Finding::error(
                    "partition-metadata.decode",
                    &metadata_file,
                    e.to_string(),
                )),
            },
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => p.findings.push(Finding::error(
                "partition-metadata.decode",
                &metadata_file,
                e.to_string(),
            )),
        }
        if let Some(pd) = &parsed {
            let key = (pd.topic.clone(), pd.partition);
            let live = pd.state == PartitionDirState::Live;
            let raft = pd.topic == KRAFT_METADATA_TOPIC;
            p.recovery_point = recovery.entries.get(&key).copied();
            if let (Some(&c), Some(first)) = (log_start.entries.get(&key), p.log_start_offset) {
                let offset = c.max(first);
                p.log_start_offset = Some(offset);
                p.log_start_offset_source = Some(LogStartSource::of_loaded(offset, first));
            }
            if live {
                p.high_watermark = replication.entries.get(&key).copied();
                p.cleaner_checkpoint = cleaner.entries.get(&key).copied();
            }
            if live && !raft {
                judge_against_metadata(&mut p, image.as_ref().map(|(_, i)| i), broker_id);
            }
        }
        partitions.push(p);
    }

    // Without KRaft metadata, brokers before 2.8 wrote no partition.metadata at all: a missing
    // one says something only beside partitions that have theirs.
    if image.is_none() && partitions.iter().any(|p| p.topic_id.is_some()) {
        for p in partitions
            .iter_mut()
            .filter(|p| p.state == "live" && p.topic_id.is_none())
        {
            let m = "no partition.metadata, which the other partitions of this log dir have: the broker writes it when it next becomes leader or follower; in KRaft mode it takes a log without a topic id for a stray replica at start-up";
            let file = p.dir.join(PARTITION_METADATA_FILE_NAME);
            p.findings
                .push(Finding::warning("ls.partition-metadata-missing", file, m));
        }
    }
    check_checkpoint_entries(&checkpoints, &partitions, &mut findings);
    let mut topics: BTreeMap<String, Totals> = BTreeMap::new();
    let mut totals = Totals::default();
    for p in &partitions {
        totals.add(p);
        if let Some(t) = &p.topic {
            topics.entry(t.clone()).or_default().add(p);
        }
    }
    Ok(LogDirListing {
        log_dir: log_dir.to_path_buf(),
        broker_id,
        metadata: image.map(|(dir, _)| dir),
        partitions,
        findings,
        topics: topics
            .into_iter()
            .map(|(topic, totals)| TopicTotals { topic, totals })
            .collect(),
        totals,
    })
}

/// `LogManager.isStrayKraftReplica`, and a missing `partition.metadata` without metadata.
fn judge_against_metadata(p: &mut PartitionListing, image: Option<&Image>, broker_id: Option<i32>) {
    let (Some(topic), Some(partition)) = (p.topic.clone(), p.partition) else {
        return;
    };
    let file = p.dir.join(PARTITION_METADATA_FILE_NAME);
    let Some(image) = image else {
        return;
    };
    let Some(id) = p.topic_id.clone() else {
        let m = "no partition.metadata: in KRaft mode the broker takes a log without a topic id for a stray replica at start-up and renames it -stray";
        p.findings
            .push(Finding::error("ls.partition-metadata-missing", &file, m));
        return;
    };
    let by_name = image.topic_by_name(&topic).map(|t| t.topic_id.clone());
    match image.topics.get(&id).map(|t| (&t.name, t)) {
        None => {
            let also = by_name.map_or(String::new(), |other| {
                format!(" (the metadata's topic {topic} has id {other}: the topic was deleted and created again)")
            });
            let m = format!("topic id {id} is not in the metadata{also}: the broker takes this log for a stray replica at start-up");
            p.findings.push(Finding::error("ls.topic-id", &file, m));
        }
        Some((name, _)) if *name != topic => {
            let m = format!("topic id {id} is topic {name} in the metadata, not {topic}");
            p.findings.push(Finding::error("ls.topic-id", &file, m));
        }
        Some((_, t)) => match t.partitions.get(&i64::from(partition)).map(|p| &p.replicas) {
            None => {
                let m = format!("the metadata has no partition {partition} of {topic}: the broker takes this log for a stray replica at start-up");
                p.findings.push(Finding::error("ls.not-hosted", &p.dir, m));
            }
            Some(replicas) => {
                if let Some(b) = broker_id.filter(|b| !replicas.contains(&i64::from(*b))) {
                    let m = format!("the metadata assigns {topic}-{partition} to brokers {replicas:?}, not to broker {b} (meta.properties): the broker takes this log for a stray replica at start-up");
                    p.findings.push(Finding::error("ls.not-hosted", &p.dir, m));
                }
            }
        },
    }
}

/// Checkpoint entries naming partitions without a live directory here.
fn check_checkpoint_entries(
    checkpoints: &[Checkpoint],
    partitions: &[PartitionListing],
    findings: &mut Vec<Finding>,
) {
    let live: std::collections::HashSet<(String, i32)> = partitions
        .iter()
        .filter(|p| p.state == "live")
        .filter_map(|p| Some((p.topic.clone()?, p.partition?)))
        .collect();
    for c in checkpoints {
        let mut missing: Vec<&(String, i32)> =
            c.entries.keys().filter(|k| !live.contains(*k)).collect();
        missing.sort();
        for (topic, partition) in missing {
            let name = partition_dir_name(topic, *partition);
            let m = format!(
                "an entry for {name}, which has no directory in this log dir (deleted or moved since the checkpoint was written)"
            );
            findings.push(Finding::warning("checkpoint.unknown-partition", &c.path, m));
        }
    }
}

/// Lists several log dirs; a partition live in two of them is reported in both (the broker
/// refuses to start: `Duplicate log directories`).
pub fn list_log_dirs(log_dirs: &[PathBuf], opts: &LsOptions) -> Result<Vec<LogDirListing>> {
    let mut out: Vec<LogDirListing> = log_dirs
        .iter()
        .map(|d| list_log_dir(d, opts))
        .collect::<Result<_>>()?;
    let places: Vec<(usize, usize)> = out
        .iter()
        .enumerate()
        .flat_map(|(i, l)| (0..l.partitions.len()).map(move |j| (i, j)))
        .collect();
    let dirs: Vec<&Path> = places
        .iter()
        .map(|&(i, j)| out[i].partitions[j].dir.as_path())
        .collect();
    for (k, f) in duplicates(&dirs) {
        let (i, j) = places[k];
        out[i].partitions[j].findings.push(f);
    }
    Ok(out)
}

/// The error for a directory of a log dir whose name the loader does not parse as a partition
/// directory's (`lost+found`, `backup_old`): the broker fails the whole log dir at start-up.
/// The tiered-storage index cache is not one.
pub fn dir_name_finding(dir: &Path) -> Option<Finding> {
    let name = file_name(dir);
    if name == REMOTE_INDEX_CACHE_DIR_NAME || parse_partition_dir(&name).is_some() {
        return None;
    }
    let m = format!(
        "'{name}' is not a partition directory name (topic-partition, or with a .uniqueId-delete, -future or -stray suffix): the broker fails this whole log dir at start-up"
    );
    Some(Finding::error("ls.dir-name", dir, m))
}

/// The errors for a live (or future) partition found in more than one of the partition
/// directories `dirs` (of all the log dirs given), by index into `dirs`: the broker refuses to
/// start.
pub fn duplicates(dirs: &[&Path]) -> Vec<(usize, Finding)> {
    let mut seen: BTreeMap<(String, i32, bool), Vec<usize>> = BTreeMap::new();
    for (k, d) in dirs.iter().enumerate() {
        let Some(pd) = parse_partition_dir(&file_name(d)) else {
            continue;
        };
        let future = matches!(pd.state, PartitionDirState::Future { .. });
        if pd.state == PartitionDirState::Live || future {
            seen.entry((pd.topic, pd.partition, future))
                .or_default()
                .push(k);
        }
    }
    let mut out = Vec::new();
    for places in seen.values().filter(|v| v.len() > 1) {
        let named: Vec<String> = places
            .iter()
            .map(|&k| dirs[k].display().to_string())
            .collect();
        for &k in places {
            let m = format!(
                "the same partition is in {}: the broker refuses to start (duplicate log directories)",
                named.join(" and ")
            );
            out.push((k, Finding::error("ls.duplicate", dirs[k], m)));
        }
    }
    out.sort_by_key(|(k, _)| *k);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reassignment as the controller writes it (metadata `PartitionChangeRecord.json`:
    /// `Replicas` is a tagged field, "null if the replicas didn't change; the new replicas
    /// otherwise"): the image follows the new replicas, and a change without them (a leader
    /// or ISR change) keeps the old.
    #[test]
    fn a_partition_change_record_reassigns_replicas() {
        let id = "aMO8CfeHDjKjEa4IxeG3Eg";
        let mut image = Image::default();
        for record in [
            format!(
                r#"{{"type":"TOPIC_RECORD","version":0,"data":{{"name":"orders","topicId":"{id}"}}}}"#
            ),
            format!(
                r#"{{"type":"PARTITION_RECORD","version":1,"data":{{"partitionId":7,"topicId":"{id}","replicas":[1,2,3],"isr":[1,2,3],"leader":1}}}}"#
            ),
            format!(
                r#"{{"type":"PARTITION_CHANGE_RECORD","version":1,"data":{{"partitionId":7,"topicId":"{id}","replicas":[4,2,3],"addingReplicas":[],"removingReplicas":[]}}}}"#
            ),
            format!(
                r#"{{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{{"partitionId":7,"topicId":"{id}","leader":4}}}}"#
            ),
            format!(
                r#"{{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{{"partitionId":7,"topicId":"{id}","replicas":null,"isr":[4,2]}}}}"#
            ),
        ] {
            image.apply(&serde_json::from_str(&record).unwrap());
        }
        assert_eq!(image.topics[id].partitions[&7].replicas, [4, 2, 3]);
        let listing = |image: &Image, broker| {
            let mut p = PartitionListing::unmeasured(
                PathBuf::from("orders-7"),
                Some(("orders".into(), 7)),
                "live",
                None,
            );
            p.topic_id = Some(id.into());
            judge_against_metadata(&mut p, Some(image), Some(broker));
            p.findings.iter().map(|f| f.check).collect::<Vec<_>>()
        };
        // Broker 1 was moved off the partition; broker 4 now hosts it.
        assert_eq!(listing(&image, 1), ["ls.not-hosted"]);
        assert_eq!(listing(&image, 4), Vec::<&str>::new());
        // The topic removed: its partitions go with it.
        image.apply(
            &serde_json::from_str(&format!(
                r#"{{"type":"REMOVE_TOPIC_RECORD","version":0,"data":{{"topicId":"{id}"}}}}"#
            ))
            .unwrap(),
        );
        assert!(image.topics.is_empty());
        assert_eq!(listing(&image, 4), ["ls.topic-id"]);
    }
}
