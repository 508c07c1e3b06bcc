//! Kafka's `LocalTieredStorage` (the RemoteStorageManager of Kafka's own tests and of
//! filesystem-backed setups): under a root named `kafka-tiered-storage`, one directory per
//! partition, `<topic>-<partition>-<topicId>`, holding per segment
//! `<startOffset>-<segmentId><suffix>` for the log, the offset and time indexes, the producer
//! snapshot, the leader-epoch checkpoint and (when there is one) the transaction index. Start
//! offsets are 20-digit padded by current Kafka, unpadded by older versions; both are read.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::{Layout, PartitionListing, RemotePartition, RemoteSegment, SegmentFile};
use crate::error::Result;
use crate::storage::log_reader::LogReader;
use crate::storage::store::{ObjectInfo, RemoteObject, Store};

/// The directory `LocalTieredStorage` creates under its configured `dir`.
pub const ROOT_DIR: &str = "kafka-tiered-storage";
/// A Kafka `Uuid` in its base64 form.
const UUID_CHARS: usize = 22;

pub struct LocalTiered;

/// `<topic>-<partition>-<topicId>` → its parts (the id is the last 22 characters: it may hold `-`).
pub fn parse_partition_dir(name: &str) -> Option<(&str, i32, &str)> {
    let id_at = name.len().checked_sub(UUID_CHARS)?;
    let (rest, id) = (name.get(..id_at)?, &name[id_at..]);
    if !is_uuid(id) {
        return None;
    }
    let rest = rest.strip_suffix('-')?;
    let dash = rest.rfind('-')?;
    let (topic, partition) = (&rest[..dash], &rest[dash + 1..]);
    if topic.is_empty() || partition.is_empty() || !partition.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((topic, partition.parse().ok()?, id))
}

/// `<startOffset>-<segmentId><suffix>` → its parts (`RemoteLogSegmentFileset`'s file name form).
pub fn parse_segment_file(name: &str) -> Option<(i64, &str, SegmentFile)> {
    let dash = name.find('-')?;
    let offset = &name[..dash];
    if offset.is_empty() || !offset.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let rest = &name[dash + 1..];
    let id = rest.get(..UUID_CHARS)?;
    if !is_uuid(id) {
        return None;
    }
    let suffix = &rest[UUID_CHARS..];
    let file = SegmentFile::ALL
        .into_iter()
        .find(|f| f.suffix() == suffix)?;
    Some((offset.parse().ok()?, id, file))
}

fn is_uuid(s: &str) -> bool {
    s.len() == UUID_CHARS
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The part of keys before the partition directories: `kafka-tiered-storage/` when the store's
/// root is that directory's parent, else nothing.
fn root_of(objects: &[ObjectInfo]) -> &'static str {
    let under_root = |o: &ObjectInfo| {
        o.key
            .strip_prefix(ROOT_DIR)
            .and_then(|k| k.strip_prefix('/'))
            .is_some_and(|k| key_parts(k).is_some())
    };
    if objects.iter().any(under_root) {
        "kafka-tiered-storage/"
    } else {
        ""
    }
}

/// `<partition dir>/<file>` → (the dir's parts, the file's parts).
#[allow(clippy::type_complexity)]
fn key_parts(key: &str) -> Option<((&str, i32, &str), (i64, &str, SegmentFile))> {
    let (dir, file) = key.split_once('/')?;
    Some((parse_partition_dir(dir)?, parse_segment_file(file)?))
}

impl Layout for LocalTiered {
    fn name(&self) -> &'static str {
        "local-tiered"
    }

    fn recognises(&self, objects: &[ObjectInfo]) -> bool {
        let root = root_of(objects);
        objects
            .iter()
            .filter_map(|o| o.key.strip_prefix(root))
            .any(|k| key_parts(k).is_some())
    }

    fn key_depth(&self) -> usize {
        2
    }

    fn partition_of(&self, key: &str) -> Option<RemotePartition> {
        let ((topic, partition, topic_id), _) = key_parts(key)?;
        Some(RemotePartition {
            topic: topic.to_string(),
            partition,
            topic_id: Some(topic_id.to_string()),
        })
    }

    fn partition(&self, objects: &[ObjectInfo], p: &RemotePartition) -> PartitionListing {
        let root = root_of(objects);
        let mut segments: BTreeMap<(i64, String), RemoteSegment> = BTreeMap::new();
        let mut strays = Vec::new();
        for o in objects {
            let Some(key) = o.key.strip_prefix(root) else {
                continue;
            };
            let Some((dir, file)) = key.split_once('/') else {
                continue;
            };
            let Some((topic, partition, topic_id)) = parse_partition_dir(dir) else {
                continue;
            };
            let ours = topic == p.topic
                && partition == p.partition
                && p.topic_id.as_deref().is_none_or(|id| id == topic_id);
            if !ours {
                continue;
            }
            match parse_segment_file(file) {
                Some((start_offset, id, kind)) => {
                    segments
                        .entry((start_offset, id.to_string()))
                        .or_insert_with(|| RemoteSegment {
                            segment_id: id.to_string(),
                            topic_id: topic_id.to_string(),
                            start_offset,
                            files: BTreeMap::new(),
                        })
                        .files
                        .insert(kind, o.clone());
                }
                None => strays.push(o.clone()),
            }
        }
        PartitionListing {
            segments: segments.into_values().collect(),
            strays,
        }
    }

    fn key(
        &self,
        objects: &[ObjectInfo],
        p: &RemotePartition,
        start_offset: i64,
        segment_id: &str,
        file: SegmentFile,
    ) -> String {
        format!(
            "{}{}-{}-{}/{}-{segment_id}{}",
            root_of(objects),
            p.topic,
            p.partition,
            p.topic_id.as_deref().unwrap_or(""),
            crate::format::names::format_offset(start_offset),
            file.suffix()
        )
    }

    fn required(&self) -> Vec<SegmentFile> {
        SegmentFile::ALL
            .into_iter()
            .filter(|f| !f.is_optional())
            .collect()
    }

    fn log_files(&self) -> &'static [SegmentFile] {
        &[SegmentFile::Log]
    }

    /// The `.log` object is the segment's file, copied as it was.
    fn listed_log_size(&self, segment: &RemoteSegment) -> Option<u64> {
        segment.log().map(|o| o.size)
    }

    fn open_log(&self, store: Arc<dyn Store>, segment: &RemoteSegment) -> Result<LogReader> {
        let Some(log) = segment.log() else {
            return Err(segment.absent(store.as_ref(), SegmentFile::Log));
        };
        Ok(LogReader::open_object(
            RemoteObject::open(store, &log.key)?,
            None,
        ))
    }

    fn read_file(
        &self,
        store: &dyn Store,
        segment: &RemoteSegment,
        file: SegmentFile,
    ) -> Result<Option<(PathBuf, Vec<u8>)>> {
        let Some(o) = segment.files.get(&file) else {
            return Ok(None);
        };
        let path = store.path_of(&o.key);
        let log_size = segment.log().map_or(0, |l| l.size);
        super::refuse_oversized(&path, file, o.size, log_size, Some((store, &o.key, 0)))?;
        Ok(Some((path, store.read_all(&o.key)?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_dir_names_parse_with_dashes_in_topic_and_id() {
        assert_eq!(
            parse_partition_dir("my-topic-3-AAAAAAAAAAAAAAAAAAAA-w"),
            Some(("my-topic", 3, "AAAAAAAAAAAAAAAAAAAA-w"))
        );
        assert_eq!(parse_partition_dir("topic-3"), None);
        assert_eq!(parse_partition_dir("topic-x-AAAAAAAAAAAAAAAAAAAAAA"), None);
    }

    #[test]
    fn segment_file_names_padded_or_not() {
        let id = "kQ1hHLhzQ0a3p2iUb9XlZA";
        assert_eq!(
            parse_segment_file(&format!("00000000000000000042-{id}.log")),
            Some((42, id, SegmentFile::Log))
        );
        assert_eq!(
            parse_segment_file(&format!("42-{id}.leader_epoch_checkpoint")),
            Some((42, id, SegmentFile::LeaderEpochCheckpoint))
        );
        assert_eq!(parse_segment_file(&format!("42-{id}.deleted")), None);
        assert_eq!(parse_segment_file("42-short.log"), None);
    }
}
