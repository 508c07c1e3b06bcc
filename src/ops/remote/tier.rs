//! Tiering a partition as the broker's `RemoteLogManager` copies it (fixtures for `kseg write
//! --tier-to`): every closed segment whose offsets lie below the last stable offset goes to the
//! store in Kafka's `LocalTieredStorage` layout, with its indexes, the producer snapshot at the
//! next segment's base offset and the leader-epoch checkpoint cut there; and
//! `__remote_log_metadata` gets each segment's `COPY_SEGMENT_STARTED` record and its
//! `COPY_SEGMENT_FINISHED` update, in the log dir beside the partition.
//!
//! Segment ids are Kafka uuids derived from the topic id and the start offset (the broker's are
//! random), so that a fixture is the same on every run.

use std::path::Path;

use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::format::checkpoint::uuid_to_base64;
use crate::format::checkpoint::{EpochEntry, LeaderEpochCheckpoint};
use crate::format::names::parse_partition_dir;
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

fn segment_uuid(topic_id: &str, start: i64) -> String {
    let digest = Sha256::new()
        .chain_update(topic_id.as_bytes())
        .chain_update(start.to_be_bytes())
        .finalize();
    let mut id = [0u8; 16];
    id.copy_from_slice(&digest[..16]);
    uuid_to_base64(&id)
}

/// Tiers the partition directory `dir` into the store `remote` (its `kafka-tiered-storage/`).
pub fn tier(
    dir: &Path,
    remote: &str,
    options: &RemoteOptions,
    topic_id: &str,
) -> Result<TierSummary> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pd = parse_partition_dir(&name)
        .ok_or_else(|| Error::invalid(dir, "not a partition directory <topic>-<partition>"))?;
    let log_dir = dir.parent().unwrap_or(Path::new("."));
    let meta_dir = log_dir.join(format!("{}-0", super::metadata::TOPIC));
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
    let prefix = format!("{ROOT_DIR}/{}-{}-{topic_id}", pd.topic, pd.partition);
    let tip = json!({"name": pd.topic, "id": topic_id, "partition": pd.partition});
    let mut records: Vec<Value> = Vec::new();
    let mut segments = Vec::new();
    // The active segment (the last) is never copied, nor a segment reaching the LSO.
    for w in bases.windows(2) {
        let (start, next) = (w[0], w[1]);
        if next > lso {
            break;
        }
        let id = segment_uuid(topic_id, start);
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
        let remote_id = json!({"topicIdPartition": tip, "id": id});
        records.push(
            json!({"remote": {"type": "REMOTE_LOG_SEGMENT_METADATA_RECORD", "version": 0,
            "data": {"remoteLogSegmentId": remote_id, "startOffset": start, "endOffset": next - 1,
                "brokerId": 0, "maxTimestampMs": max_ts, "eventTimestampMs": max_ts,
                "segmentLeaderEpochs": segment_epochs.iter()
                    .map(|e| json!({"leaderEpoch": e.epoch, "offset": e.start_offset}))
                    .collect::<Vec<_>>(),
                "segmentSizeInBytes": log_bytes, "remoteLogSegmentState": 0}}}),
        );
        let mut objects = Vec::new();
        for (suffix, bytes) in files {
            let key = format!("{prefix}/{stem}-{id}{suffix}");
            store.put(&key, bytes)?;
            objects.push(key);
        }
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
    let spec = json!({"topic": super::metadata::TOPIC, "partition": 0, "ops": ops});
    let spec = crate::ops::write::spec::Spec::from_json(&spec.to_string())?;
    crate::ops::write::spec::write_spec(&spec, &meta_dir)?;
    Ok(TierSummary {
        remote: remote.to_string(),
        last_stable_offset: lso,
        segments,
    })
}
