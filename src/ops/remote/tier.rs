//! Tiering a partition as the broker's `RemoteLogManager` copies it (fixtures for `kseg write
//! --tier-to`): every closed segment whose offsets lie below the last stable offset goes to the
//! store, with its indexes, the producer snapshot at the next segment's base offset and the
//! leader-epoch checkpoint cut there, in Kafka's `LocalTieredStorage` layout or Aiven's
//! (chunked, optionally compressed and encrypted, with the plugin's custom metadata); and
//! `__remote_log_metadata` gets each segment's `COPY_SEGMENT_STARTED` record and its
//! `COPY_SEGMENT_FINISHED` update, in the log dir beside the partition, in the metadata
//! partition the broker's `RemoteLogMetadataTopicPartitioner` picks.
//!
//! Segment ids are Kafka uuids derived from the topic id, the partition and the start offset
//! (the broker's are random), so that a fixture is the same on every run.

use std::path::Path;

use base64::Engine;
use rsa::rand_core::OsRng;
use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::format::aiven::segment::write_segment;
use crate::format::aiven::{self, CustomMetadata, SegmentFiles, SegmentKey, Suffix};
use crate::format::checkpoint::{uuid_from_base64, uuid_to_base64};
use crate::format::checkpoint::{EpochEntry, LeaderEpochCheckpoint};
use crate::format::names::parse_partition_dir;
use crate::format::partition_for::{
    remote_log_metadata_partition, REMOTE_LOG_METADATA_TOPIC_PARTITIONS_DEFAULT,
};
use crate::ops::inspect::seek::stable_offsets;
use crate::storage::leader_epoch::LeaderEpochCache;
use crate::storage::log_reader::{LogReader, Step};
use crate::storage::seek::Seeker;
use crate::storage::store::{self, RemoteOptions};
use crate::storage::tiered::ROOT_DIR;

/// One segment copied.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CopiedSegment {
    pub segment_id: String,
    pub start_offset: i64,
    pub end_offset: i64,
    /// The objects written (keys under the store's root).
    pub objects: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TierSummary {
    pub remote: String,
    pub last_stable_offset: i64,
    /// The `__remote_log_metadata` partition the records went to.
    pub metadata_partition: i32,
    pub segments: Vec<CopiedSegment>,
}

/// The epochs a segment `[start, next)` holds: the cache's entries starting below `next`, the
/// first cut to `start` (`LeaderEpochFileCache.epochEntriesInRange`).
fn epochs_in(entries: &[EpochEntry], start: i64, next: i64) -> Vec<EpochEntry> {
    let mut out: Vec<EpochEntry> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let ends = entries.get(i + 1).map_or(i64::MAX, |n| n.start_offset);
        if e.start_offset < next && ends > start {
            out.push(EpochEntry {
                epoch: e.epoch,
                start_offset: e.start_offset.max(start),
            });
        }
    }
    out
}

/// The largest batch timestamp of a segment (its metadata's `maxTimestampMs`).
fn max_timestamp(log: &Path) -> Result<i64> {
    let mut reader = LogReader::open(log, None)?;
    let mut max = -1;
    while let Step::Entry { entry, .. } = reader.next_step()? {
        max = max.max(entry.max_timestamp());
    }
    Ok(max)
}

/// A segment id that is the same on every run and unique as the broker's random ones are:
/// of the topic id, the partition (every partition of a topic starts at offset 0) and the
/// start offset.
fn segment_uuid(topic_id: &str, partition: i32, start: i64) -> String {
    let digest = Sha256::new()
        .chain_update(topic_id.as_bytes())
        .chain_update(partition.to_be_bytes())
        .chain_update(start.to_be_bytes())
        .finalize();
    let mut id = [0u8; 16];
    id.copy_from_slice(&digest[..16]);
    uuid_to_base64(&id)
}

/// The layout segments are written in.
#[derive(Debug, Clone)]
pub enum TierLayout {
    /// Kafka's `LocalTieredStorage`, under `kafka-tiered-storage/`.
    LocalTiered,
    /// Aiven's plugin: keys under `prefix`, objects as `options` make them.
    Aiven {
        prefix: String,
        options: aiven::WriteOptions,
    },
}

/// Tiers the partition directory `dir` into the store `remote` (its `kafka-tiered-storage/`).
pub fn tier(
    dir: &Path,
    remote: &str,
    options: &RemoteOptions,
    topic_id: &str,
) -> Result<TierSummary> {
    tier_as(dir, remote, options, topic_id, &TierLayout::LocalTiered)
}

/// Tiers the partition directory `dir` into the store `remote` in `layout`.
pub fn tier_as(
    dir: &Path,
    remote: &str,
    options: &RemoteOptions,
    topic_id: &str,
    layout: &TierLayout,
) -> Result<TierSummary> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pd = parse_partition_dir(&name)
        .ok_or_else(|| Error::invalid(dir, "not a partition directory <topic>-<partition>"))?;
    let log_dir = dir.parent().unwrap_or(Path::new("."));
    let topic_uuid = uuid_from_base64(topic_id)
        .map_err(|e| Error::invalid(dir, format!("topic id {topic_id:?}: {e}")))?;
    let metadata_partition = remote_log_metadata_partition(
        &topic_uuid,
        pd.partition,
        REMOTE_LOG_METADATA_TOPIC_PARTITIONS_DEFAULT,
    );
    let meta_dir = log_dir.join(format!("{}-{metadata_partition}", super::metadata::TOPIC));
    if meta_dir.exists() {
        return Err(Error::invalid(
            &meta_dir,
            "already exists: tiering writes it anew",
        ));
    }
    let mut seeker = Seeker::open(dir)?;
    let lso = stable_offsets(dir, &mut seeker)?.last_stable_offset;
    // Oldest first.
    let bases: Vec<i64> = crate::storage::files::segment_logs(dir)?
        .into_iter()
        .map(|(base, _)| base)
        .collect();
    let epochs = LeaderEpochCache::read(dir)?
        .map(|c| c.entries().to_vec())
        .unwrap_or_default();
    let store = store::create(remote, options)?;
    let dir_prefix = format!("{ROOT_DIR}/{}-{}-{topic_id}", pd.topic, pd.partition);
    let tip = json!({"name": pd.topic, "id": topic_id, "partition": pd.partition});
    let mut records: Vec<Value> = Vec::new();
    let mut segments = Vec::new();
    // The active segment (the last) is never copied, nor a segment reaching the LSO.
    for w in bases.windows(2) {
        let (start, next) = (w[0], w[1]);
        if next > lso {
            break;
        }
        let id = segment_uuid(topic_id, pd.partition, start);
        let stem = crate::format::names::format_offset(start);
        let snapshot = crate::format::names::snapshot_file_name(next);
        let segment_epochs = epochs_in(&epochs, start, next);
        let checkpoint = LeaderEpochCheckpoint {
            entries: epochs
                .iter()
                .filter(|e| e.start_offset < next)
                .copied()
                .collect(),
        };
        let mut files: Vec<(&str, Vec<u8>)> = Vec::new();
        for (suffix, file) in [
            (".log", format!("{stem}.log")),
            (".index", format!("{stem}.index")),
            (".timeindex", format!("{stem}.timeindex")),
            (".txnindex", format!("{stem}.txnindex")),
            (".snapshot", snapshot),
        ] {
            let p = dir.join(&file);
            match std::fs::read(&p) {
                Ok(b) => files.push((suffix, b)),
                // A segment without aborted transactions has no transaction index.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && suffix == ".txnindex" => {}
                Err(e) => return Err(Error::io(&p, e)),
            }
        }
        files.push((".leader_epoch_checkpoint", checkpoint.encode().into_bytes()));
        let log_bytes = files[0].1.len() as i64;
        let max_ts = max_timestamp(&dir.join(format!("{stem}.log")))?;
        let (objects, custom) = match layout {
            TierLayout::LocalTiered => {
                let mut objects = Vec::new();
                for (suffix, bytes) in files {
                    let key = format!("{dir_prefix}/{stem}-{id}{suffix}");
                    store.put(&key, bytes)?;
                    objects.push(key);
                }
                (objects, None)
            }
            TierLayout::Aiven {
                prefix,
                options: write,
            } => {
                let key = SegmentKey {
                    topic: pd.topic.clone(),
                    topic_id: topic_uuid,
                    partition: pd.partition,
                    start_offset: start,
                    segment_id: uuid_from_base64(&id).expect("a uuid made here"),
                };
                let meta = aiven::SegmentMetadata {
                    key: key.clone(),
                    end_offset: next - 1,
                    max_timestamp_ms: max_ts,
                    broker_id: 0,
                    event_timestamp_ms: max_ts,
                    segment_leader_epochs: segment_epochs
                        .iter()
                        .map(|e| (e.epoch, e.start_offset))
                        .collect(),
                };
                let file = |s: &str| files.iter().find(|f| f.0 == s).map(|f| f.1.as_slice());
                let segment = SegmentFiles {
                    log: file(".log").unwrap_or_default(),
                    offset_index: file(".index").unwrap_or_default(),
                    time_index: file(".timeindex").unwrap_or_default(),
                    producer_snapshot: file(".snapshot").unwrap_or_default(),
                    leader_epoch: file(".leader_epoch_checkpoint").unwrap_or_default(),
                    transaction: file(".txnindex"),
                };
                let written = write_segment(&segment, write, Some(meta), &mut OsRng)
                    .map_err(|e| Error::invalid(&dir.join(format!("{stem}.log")), e.message))?;
                let mut objects = Vec::new();
                let mut size = 0;
                for (suffix, bytes) in [
                    (Suffix::Log, written.log),
                    (Suffix::Indexes, written.indexes),
                    (
                        Suffix::Manifest,
                        written.manifest.to_json_text().into_bytes(),
                    ),
                ] {
                    let k = key.object_key(prefix, suffix);
                    size += bytes.len() as i64;
                    store.put(&k, bytes)?;
                    objects.push(k);
                }
                // What the plugin returns with `custom.metadata.fields.include` set to all three.
                let custom = CustomMetadata {
                    remote_size: Some(size),
                    object_prefix: Some(prefix.clone()),
                    object_key: Some(key.main_path()),
                };
                (objects, Some(custom.encode()))
            }
        };
        let remote_id = json!({"topicIdPartition": tip, "id": id});
        let mut data = json!({"remoteLogSegmentId": remote_id, "startOffset": start,
            "endOffset": next - 1, "brokerId": 0, "maxTimestampMs": max_ts,
            "eventTimestampMs": max_ts,
            "segmentLeaderEpochs": segment_epochs.iter()
                .map(|e| json!({"leaderEpoch": e.epoch, "offset": e.start_offset}))
                .collect::<Vec<_>>(),
            "segmentSizeInBytes": log_bytes, "remoteLogSegmentState": 0});
        if let Some(c) = &custom {
            data["customMetadata"] = base64::engine::general_purpose::STANDARD.encode(c).into();
        }
        records.push(
            json!({"remote": {"type": "REMOTE_LOG_SEGMENT_METADATA_RECORD",
            "version": 0, "data": data}}),
        );
        records.push(
            json!({"remote": {"type": "REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD",
            "version": 0, "data": {"remoteLogSegmentId": remote_id, "brokerId": 0,
                "eventTimestampMs": max_ts, "remoteLogSegmentState": 1}}}),
        );
        segments.push(CopiedSegment {
            segment_id: id,
            start_offset: start,
            end_offset: next - 1,
            objects,
        });
    }
    let ops = if records.is_empty() {
        json!([])
    } else {
        json!([{"op": "append", "batches": [{"records": records}]}])
    };
    let spec = json!({"topic": super::metadata::TOPIC, "partition": metadata_partition,
        "ops": ops});
    let spec = crate::ops::write::spec::Spec::from_json(&spec.to_string())?;
    crate::ops::write::spec::write_spec(&spec, &meta_dir)?;
    Ok(TierSummary {
        remote: remote.to_string(),
        last_stable_offset: lso,
        metadata_partition,
        segments,
    })
}
