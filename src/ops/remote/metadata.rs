//! What `__remote_log_metadata` says about remote segments: its records folded per segment the
//! way the broker's metadata cache folds them (`RemoteLogMetadataCache`): a segment's
//! `RemoteLogSegmentMetadataRecord` (or snapshot record) opens it, each update record moves it
//! to a later state.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::Result;
use crate::format::checkpoint::uuid_from_base64;
use crate::format::internal::{decode_record, Decoder};
use crate::format::names::parse_partition_dir;
use crate::format::partition_for::{
    remote_log_metadata_partition, REMOTE_LOG_METADATA_TOPIC_PARTITIONS_DEFAULT,
};
use crate::storage::read::PartitionRecords;
use crate::storage::tiered::RemotePartition;

/// The internal topic's name.
pub const TOPIC: &str = "__remote_log_metadata";

/// One remote segment as the metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentMetadata {
    pub topic: String,
    pub partition: i32,
    pub topic_id: String,
    pub segment_id: String,
    pub start_offset: i64,
    pub end_offset: i64,
    pub size_bytes: i64,
    /// (leader epoch, its start offset), ascending.
    pub leader_epochs: Vec<(i32, i64)>,
    /// `COPY_SEGMENT_STARTED` … `DELETE_SEGMENT_FINISHED`: the last state recorded.
    pub state: String,
    /// Where the record that set the state is: the metadata partition's `.log` and offset.
    pub source: PathBuf,
    pub source_offset: i64,
}

impl SegmentMetadata {
    /// Whether the broker serves the segment's offsets from it: its copy finished, the only
    /// state in which its metadata cache gives a segment to fetches (`RemoteLogMetadataCache`).
    pub fn served(&self) -> bool {
        self.state == "COPY_SEGMENT_FINISHED"
    }
}

/// Segments by (topic id, partition, segment id): the broker's cache keeps each partition's
/// apart (`RemoteLogMetadataCache` per `TopicIdPartition`).
pub type Segments = BTreeMap<(String, i32, String), SegmentMetadata>;

/// What the `__remote_log_metadata` partitions of a log dir say.
#[derive(Debug, Default)]
pub struct Metadata {
    pub segments: Segments,
    /// How many metadata records were read.
    pub records: u64,
    /// The metadata partitions the log dir holds (a broker holds the few it hosts).
    pub partitions: BTreeSet<i32>,
}

/// Where `p`'s metadata records go, when the log dir does not speak for it (`None`: it does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elsewhere {
    /// In this partition of the default count, which the log dir does not hold.
    Partition(i32),
    /// In a partition that cannot be named: the topic id is unknown.
    Unknown,
}

impl Metadata {
    /// Whether the log dir's metadata speaks for the partition `p`, whose records of it are
    /// `ours`: it holds records about it, or the metadata partition its records go to (of the
    /// default 50, as `RemoteLogMetadataTopicPartitioner` picks) with none. Else the partition's
    /// records are on the broker that hosts that metadata partition, and this log dir says
    /// nothing of which of its remote segments were copied or deleted (`Some`: where they are).
    pub fn elsewhere(&self, p: &RemotePartition, ours: &[&SegmentMetadata]) -> Option<Elsewhere> {
        if !ours.is_empty() {
            return None;
        }
        let Some(id) = p
            .topic_id
            .as_deref()
            .and_then(|id| uuid_from_base64(id).ok())
        else {
            return Some(Elsewhere::Unknown);
        };
        let n = remote_log_metadata_partition(
            &id,
            p.partition,
            REMOTE_LOG_METADATA_TOPIC_PARTITIONS_DEFAULT,
        );
        (!self.partitions.contains(&n)).then_some(Elsewhere::Partition(n))
    }

    /// [`Metadata::elsewhere`] when it is worth saying: the log dir holds metadata, only not
    /// `p`'s. With none at all, every partition is read from the listing, as the report's
    /// record count already says.
    pub fn elsewhere_to_say(&self, elsewhere: Option<Elsewhere>) -> Option<Elsewhere> {
        elsewhere.filter(|_| !self.partitions.is_empty())
    }
}

impl std::fmt::Display for Elsewhere {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Elsewhere::Partition(n) => write!(
                f,
                "the log dir holds no {TOPIC}-{n}, where its records go (of the default 50 \
                 metadata partitions)"
            ),
            Elsewhere::Unknown => write!(
                f,
                "the log dir's {TOPIC} has no record of it, and without its topic id \
                 (partition.metadata) the metadata partition its records go to is unknown"
            ),
        }
    }
}

/// Every segment the metadata partitions of `log_dir` know, how many metadata records were
/// read, and which metadata partitions are there.
pub fn read(log_dir: &Path) -> Result<Metadata> {
    let mut segments = BTreeMap::new();
    let mut records = 0;
    let mut partitions = BTreeSet::new();
    let mut dirs: Vec<PathBuf> = match std::fs::read_dir(log_dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                p.is_dir()
                    && p.file_name()
                        .and_then(|n| n.to_str())
                        .and_then(parse_partition_dir)
                        .is_some_and(|d| {
                            d.topic == TOPIC
                                && d.dir_name() == p.file_name().unwrap().to_string_lossy()
                        })
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    dirs.sort();
    for dir in dirs {
        if let Some(d) = dir
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(parse_partition_dir)
        {
            partitions.insert(d.partition);
        }
        for r in PartitionRecords::open(&dir, 0)? {
            let r = r?;
            if r.batch.is_control {
                continue;
            }
            records += 1;
            let decoded = decode_record(
                Decoder::RemoteLogMetadata,
                r.offset,
                None,
                r.value.as_deref(),
            );
            if let Some(v) = decoded.payload_json {
                apply(&mut segments, &v, &r.file, r.offset);
            }
        }
    }
    Ok(Metadata {
        segments,
        records,
        partitions,
    })
}

fn text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

const STATES: [&str; 4] = [
    "COPY_SEGMENT_STARTED",
    "COPY_SEGMENT_FINISHED",
    "DELETE_SEGMENT_STARTED",
    "DELETE_SEGMENT_FINISHED",
];

fn state(v: &Value) -> String {
    v.as_u64()
        .and_then(|s| STATES.get(s as usize))
        .map_or_else(|| text(v), |s| s.to_string())
}

fn apply(segments: &mut Segments, v: &Value, file: &Path, offset: i64) {
    let data = &v["data"];
    match v["type"].as_str().unwrap_or("") {
        "REMOTE_LOG_SEGMENT_METADATA_RECORD" => {
            let id = &data["remoteLogSegmentId"];
            let tip = &id["topicIdPartition"];
            let m = SegmentMetadata {
                topic: text(&tip["name"]),
                partition: tip["partition"].as_i64().unwrap_or(-1) as i32,
                topic_id: text(&tip["id"]),
                segment_id: text(&id["id"]),
                start_offset: data["startOffset"].as_i64().unwrap_or(-1),
                end_offset: data["endOffset"].as_i64().unwrap_or(-1),
                size_bytes: data["segmentSizeInBytes"].as_i64().unwrap_or(-1),
                leader_epochs: data["segmentLeaderEpochs"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|e| {
                                (
                                    e["leaderEpoch"].as_i64().unwrap_or(-1) as i32,
                                    e["offset"].as_i64().unwrap_or(-1),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                state: state(&data["remoteLogSegmentState"]),
                source: file.to_path_buf(),
                source_offset: offset,
            };
            segments.insert((m.topic_id.clone(), m.partition, m.segment_id.clone()), m);
        }
        "REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD" => {
            let id = &data["remoteLogSegmentId"];
            let tip = &id["topicIdPartition"];
            let partition = tip["partition"].as_i64().unwrap_or(-1) as i32;
            let key = (text(&tip["id"]), partition, text(&id["id"]));
            // An update of a segment never opened is dropped, as the broker's cache drops it.
            if let Some(m) = segments.get_mut(&key) {
                m.state = state(&data["remoteLogSegmentState"]);
                m.source = file.to_path_buf();
                m.source_offset = offset;
            }
        }
        _ => {}
    }
}
