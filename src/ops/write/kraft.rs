//! The KRaft ops of a spec (`raft_leader`, `raft_append`, `raft_snapshot`,
//! `bootstrap_checkpoint`, `quorum_state`): `__cluster_metadata` as the raft layer writes it.
//!
//! What the raft layer writes (Kafka's `raft` module): every batch uncompressed, CreateTime at
//! the broker clock for the batch and each record, no producer (`producerId` -1, sequence -1),
//! the leader's epoch as partition leader epoch; metadata records without key, their value the
//! metadata record frame; one append per batch (`KafkaRaftClient` appends each drained batch
//! alone). A snapshot file holds only batches, starting at offset 0. The record and control
//! values are encoded by `format::internal`, through the decoders' schema tables.

use std::path::{Component, Path, PathBuf};

use serde_json::{json, Value};

use super::spec::{Op, Planner};
use crate::error::{Error, Result};
use crate::format::batch::{
    build_batch, encode_record as encode_batch_record, BatchSpec, RecordSpec, TimestampType,
    RECORD_BATCH_OVERHEAD_BYTES,
};
use crate::format::control::{encode_control_key, ControlRecordType};
use crate::format::internal::{encode_kraft_control, encode_record, quorum_state_text, Decoder};
use crate::format::names::{kraft_snapshot_file_name, QUORUM_STATE_FILE_NAME};
use crate::storage::Log;

/// The leader state the raft ops carry from one op to the next.
#[derive(Debug, Clone, Default)]
pub(super) struct Raft {
    epoch: i32,
    leader_id: Option<i32>,
    voters: Vec<i32>,
    kraft_version: i16,
    voter_set: Option<Value>,
}

/// A record of a raft batch: key and value bytes.
type KeyValue = (Option<Vec<u8>>, Option<Vec<u8>>);

/// Runs one KRaft op (any other op is the caller's).
pub(super) fn run(op: &Op, log: &mut Log, planner: &mut Planner<'_>) -> Result<()> {
    let source = planner.source;
    let bad = |m: String| Error::invalid(source, m);
    match op {
        Op::RaftLeader {
            epoch,
            leader_id,
            voters,
            granting_voters,
            kraft_version,
            write_voters,
            voter_set,
        } => {
            let raft = &mut planner.raft;
            if *epoch < raft.epoch {
                return Err(bad(format!(
                    "raft_leader: epoch {epoch} is below the current epoch {}",
                    raft.epoch
                )));
            }
            if voter_set.is_some() {
                raft.voter_set.clone_from(voter_set);
            }
            raft.epoch = *epoch;
            raft.leader_id = Some(*leader_id);
            raft.voters.clone_from(voters);
            raft.kraft_version = *kraft_version;
            let ids = |ids: &[i32]| -> Vec<Value> {
                ids.iter().map(|id| json!({ "voterId": id })).collect()
            };
            let leader_change = json!({
                "version": 0,
                "leaderId": leader_id,
                "voters": ids(voters),
                "grantingVoters": ids(granting_voters),
            });
            let mut records = vec![control(ControlRecordType::LeaderChange, &leader_change)];
            if *write_voters {
                records.extend(voter_records(&planner.raft));
            }
            let records = records.into_iter().collect::<std::result::Result<_, _>>();
            let batch = raft_batch(
                planner,
                log.log_end_offset(),
                *epoch,
                true,
                records.map_err(bad)?,
            )?;
            append(log, planner, &batch)
        }
        Op::RaftAppend { appends } => {
            let epoch = planner.raft.epoch;
            for records in metadata_batches(appends).map_err(bad)? {
                let batch = raft_batch(planner, log.log_end_offset(), epoch, false, records)?;
                append(log, planner, &batch)?;
            }
            Ok(())
        }
        Op::RaftSnapshot {
            offset,
            epoch,
            kraft_version,
            voter_set,
            last_contained_log_timestamp,
            appends,
        } => {
            let end_offset = match offset {
                Value::String(s) if s == "leo" => log.log_end_offset(),
                v => v.as_i64().ok_or_else(|| {
                    bad(format!(
                        "raft_snapshot: offset: expected a number or \"leo\", found {v}"
                    ))
                })?,
            };
            if voter_set.is_some() {
                planner.raft.voter_set.clone_from(voter_set);
            }
            let header_voters = Raft {
                kraft_version: *kraft_version,
                ..planner.raft.clone()
            };
            let timestamp = last_contained_log_timestamp.unwrap_or(planner.now_ms);
            let bytes = snapshot(planner, *epoch, timestamp, &header_voters, appends)?;
            let name = kraft_snapshot_file_name(end_offset, *epoch);
            write_file(&log.dir().join(&name), &bytes)?;
            let event = json!({"bytes": bytes.len(), "epoch": epoch, "event": "snapshot", "file": name, "offset": end_offset});
            planner.raft_files.push((log.events().len(), event));
            Ok(())
        }
        Op::BootstrapCheckpoint { path, records } => {
            let bytes = snapshot(
                planner,
                0,
                0,
                &Raft::default(),
                std::slice::from_ref(records),
            )?;
            let event = json!({"bytes": bytes.len(), "event": "bootstrap_checkpoint", "file": path, "offset": 0});
            planner.raft_files.push((log.events().len(), event));
            // Usually `../bootstrap.checkpoint`, in the log dir: outside the partition
            // directory, so written with it, not before (all or nothing).
            let target = lexical(&log.dir().join(path));
            if target.starts_with(lexical(log.dir())) {
                write_file(&target, &bytes)?;
            } else {
                planner.outside.push((target, bytes));
            }
            Ok(())
        }
        Op::QuorumState => {
            let raft = &planner.raft;
            let leader_id = raft
                .leader_id
                .ok_or_else(|| bad("quorum_state: needs a raft_leader before it".into()))?;
            // KRaftVersion.quorumStateVersion: data version 1 from kraft.version 1 on.
            let version = i16::from(raft.kraft_version >= 1);
            let data = json!({
                "leaderId": leader_id,
                "leaderEpoch": raft.epoch,
                "votedId": -1,
                "currentVoters": raft.voters.iter().map(|id| json!({ "voterId": id })).collect::<Vec<_>>(),
            });
            let text =
                quorum_state_text(&data, version).map_err(|m| bad(format!("quorum_state: {m}")))?;
            write_file(&log.dir().join(QUORUM_STATE_FILE_NAME), text.as_bytes())
        }
        Op::Append { .. } | Op::Roll | Op::Repeat { .. } | Op::AdvanceClock { .. } => Ok(()),
    }
}

/// A control record: its key and value.
fn control(kind: ControlRecordType, json: &Value) -> std::result::Result<KeyValue, String> {
    let value = encode_kraft_control(kind, json).map_err(|m| format!("{}: {m}", kind.name()))?;
    Ok((Some(encode_control_key(kind).to_vec()), Some(value)))
}

/// KRaftVersion and, from kraft version 1 on, Voters (of the last voter set given).
fn voter_records(raft: &Raft) -> Vec<std::result::Result<KeyValue, String>> {
    let mut out = vec![control(
        ControlRecordType::KraftVersion,
        &json!({ "version": 0, "kRaftVersion": raft.kraft_version }),
    )];
    let voters = raft
        .voter_set
        .as_ref()
        .ok_or_else(|| "the Voters record needs a voter_set".to_string())
        .and_then(|v| control(ControlRecordType::KraftVoters, v));
    out.push(voters);
    out
}

/// `KafkaRaftClient.MAX_BATCH_SIZE_BYTES`: the most bytes of a raft batch (8 MiB).
const MAX_RAFT_BATCH_BYTES: usize = 8 * 1024 * 1024;

/// The records of every list (each one append call to the raft client), in the batches the
/// client's accumulator makes of them (`BatchAccumulator.maybeAllocateBatch` with
/// `BatchBuilder.bytesNeeded`): an append joins the open batch when the batch stays within
/// [`MAX_RAFT_BATCH_BYTES`] with it, else it starts the next batch; an append too large for
/// a batch of its own is refused (Kafka's `RecordBatchTooLargeException`). Empty lists add
/// nothing.
fn metadata_batches(lists: &[Vec<Value>]) -> std::result::Result<Vec<Vec<KeyValue>>, String> {
    let mut batches: Vec<Vec<KeyValue>> = Vec::new();
    let mut open: Vec<KeyValue> = Vec::new();
    // The open batch's bytes: its header and records.
    let mut open_bytes = RECORD_BATCH_OVERHEAD_BYTES;
    for (i, list) in lists.iter().enumerate() {
        let records = list
            .iter()
            .enumerate()
            .map(|(j, r)| {
                encode_record(Decoder::ClusterMetadata, r)
                    .map_err(|m| format!("appends[{i}][{j}]: {m}"))
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        // Sized at the open batch's next offsets, as Kafka sizes them.
        let needed = records_bytes(open.len(), &records)?;
        if open_bytes + needed > MAX_RAFT_BATCH_BYTES {
            if RECORD_BATCH_OVERHEAD_BYTES + needed > MAX_RAFT_BATCH_BYTES {
                return Err(format!(
                    "appends[{i}]: the total record(s) size of {} exceeds the maximum allowed batch size of {MAX_RAFT_BATCH_BYTES}",
                    RECORD_BATCH_OVERHEAD_BYTES + needed
                ));
            }
            batches.push(std::mem::take(&mut open));
            open_bytes = RECORD_BATCH_OVERHEAD_BYTES + records_bytes(0, &records)?;
        } else {
            open_bytes += needed;
        }
        open.extend(records);
    }
    if !open.is_empty() {
        batches.push(open);
    }
    Ok(batches)
}

/// The bytes `records` take in a raft batch from offset delta `first_delta` on (timestamp
/// delta 0, no headers: how the raft client writes them).
fn records_bytes(first_delta: usize, records: &[KeyValue]) -> std::result::Result<usize, String> {
    let mut scratch = Vec::new();
    for ((key, value), delta) in records.iter().zip(first_delta..) {
        let record = RecordSpec {
            offset: 0,
            timestamp: 0,
            key: key.clone(),
            value: value.clone(),
            headers: Vec::new(),
        };
        let delta = i32::try_from(delta).map_err(|_| "too many records for a batch".to_string())?;
        encode_batch_record(&mut scratch, delta, 0, &record).map_err(|e| e.to_string())?;
    }
    Ok(scratch.len())
}

/// A raft batch of `records` at `base_offset`, stamped with the broker clock.
fn raft_batch(
    planner: &Planner<'_>,
    base_offset: i64,
    epoch: i32,
    is_control: bool,
    records: Vec<KeyValue>,
) -> Result<Vec<u8>> {
    let now = planner.now_ms;
    let records: Vec<RecordSpec> = records
        .into_iter()
        .zip(base_offset..)
        .map(|((key, value), offset)| RecordSpec {
            offset,
            timestamp: now,
            key,
            value,
            headers: Vec::new(),
        })
        .collect();
    let spec = BatchSpec {
        base_offset,
        partition_leader_epoch: epoch,
        timestamp_type: TimestampType::CreateTime,
        log_append_time: now,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        is_control,
        ..BatchSpec::default()
    };
    build_batch(&spec, &records)
        .map_err(|e| Error::invalid(planner.source, format!("cannot build raft batch: {e}")))
}

fn append(log: &mut Log, planner: &mut Planner<'_>, batch: &[u8]) -> Result<()> {
    log.append_as_follower(batch)?;
    planner.next_offset = log.log_end_offset();
    Ok(())
}

/// A snapshot file's bytes: header batch, the records in batches as the accumulator cuts them
/// ([`metadata_batches`]), footer batch.
fn snapshot(
    planner: &Planner<'_>,
    epoch: i32,
    last_contained_log_timestamp: i64,
    raft: &Raft,
    appends: &[Vec<Value>],
) -> Result<Vec<u8>> {
    let bad = |m: String| Error::invalid(planner.source, m);
    let header = json!({ "version": 0, "lastContainedLogTimestamp": last_contained_log_timestamp });
    let mut records = vec![control(ControlRecordType::SnapshotHeader, &header)];
    if raft.kraft_version > 0 {
        records.extend(voter_records(raft));
    }
    let records = records
        .into_iter()
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(bad)?;
    let mut next = records.len() as i64;
    let mut out = raft_batch(planner, 0, epoch, true, records)?;
    for records in metadata_batches(appends).map_err(bad)? {
        let count = records.len() as i64;
        out.extend(raft_batch(planner, next, epoch, false, records)?);
        next += count;
    }
    let footer =
        control(ControlRecordType::SnapshotFooter, &json!({ "version": 0 })).map_err(bad)?;
    out.extend(raft_batch(planner, next, epoch, true, vec![footer])?);
    Ok(out)
}

/// `path` with its `.` and `..` components resolved as names (no link followed).
pub(super) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::names::BOOTSTRAP_CHECKPOINT_FILE_NAME;
    use crate::ops::write::spec::{write_spec, Spec};

    fn config_record(value_len: usize) -> Value {
        json!({"type": "CONFIG_RECORD", "version": 0, "data": {"resourceType": 2,
            "resourceName": "t", "name": "x", "value": "a".repeat(value_len)}})
    }

    /// The bytes of a raft batch of `records` (base offset 0), as the writer builds it.
    fn batch_bytes(records: &[KeyValue]) -> usize {
        let records: Vec<RecordSpec> = records
            .iter()
            .zip(0..)
            .map(|((key, value), offset)| RecordSpec {
                offset,
                timestamp: 0,
                key: key.clone(),
                value: value.clone(),
                headers: Vec::new(),
            })
            .collect();
        build_batch(&BatchSpec::default(), &records).unwrap().len()
    }

    /// KafkaRaftClient.MAX_BATCH_SIZE_BYTES = 8 * 1024 * 1024 and BatchAccumulator: an append
    /// call's records stay together, join the open batch while it stays within 8 MiB, and
    /// start the next batch when they would not.
    #[test]
    fn raft_appends_are_cut_into_batches_of_at_most_8_mib() {
        let mib = 1024 * 1024;
        let lists: Vec<Vec<Value>> = vec![
            vec![config_record(3 * mib), config_record(10)],
            vec![config_record(3 * mib)],
            vec![config_record(3 * mib)],
            vec![config_record(100)],
            vec![],
            vec![config_record(5 * mib)],
        ];
        let batches = metadata_batches(&lists).unwrap();
        let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
        assert_eq!(sizes, [3, 2, 1]);
        for (i, b) in batches.iter().enumerate() {
            assert!(batch_bytes(b) <= MAX_RAFT_BATCH_BYTES, "batch {i}");
            // Cut only where the next append would not have fitted.
            if let Some(next) = batches.get(i + 1) {
                let mut joined = b.clone();
                joined.extend(next.iter().take(1).cloned());
                assert!(batch_bytes(&joined) > MAX_RAFT_BATCH_BYTES, "batch {i}");
            }
        }
        // Small appends share one batch, as before.
        let small = vec![vec![config_record(1)], vec![config_record(2)]];
        assert_eq!(metadata_batches(&small).unwrap().len(), 1);
        // One append larger than a batch: Kafka's RecordBatchTooLargeException.
        let err = metadata_batches(&[vec![], vec![config_record(8 * mib)]]).unwrap_err();
        assert!(
            err.starts_with("appends[1]: the total record(s) size of ")
                && err.ends_with("exceeds the maximum allowed batch size of 8388608"),
            "{err}"
        );
    }

    fn spec(ops: &str) -> Spec {
        Spec::from_json(&format!(
            r#"{{"topic": "__cluster_metadata", "partition": 0, "ops": [
                {{"op": "bootstrap_checkpoint", "path": "../bootstrap.checkpoint",
                  "records": [{{"type": "FEATURE_LEVEL_RECORD", "version": 0,
                               "data": {{"name": "metadata.version", "featureLevel": 21}}}}]}}
                {ops}]}}"#
        ))
        .unwrap()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        out.sort();
        out
    }

    /// The bootstrap checkpoint lies outside the partition directory, in the log dir: it is
    /// written with the partition or not at all, and never over an existing file.
    #[test]
    fn bootstrap_checkpoint_is_all_or_nothing_with_the_partition() {
        let root = tempfile::tempdir().unwrap();
        let logs = root.path().join("logs");
        let part = logs.join("__cluster_metadata-0");
        // A later op fails: neither the partition nor the checkpoint is there.
        let err = write_spec(&spec(r#", {"op": "quorum_state"}"#), &part).unwrap_err();
        assert!(err.to_string().contains("needs a raft_leader"), "{err}");
        assert!(!logs.exists(), "{:?}", names(root.path()));

        let summary = write_spec(&spec(""), &part).unwrap();
        assert_eq!(
            names(&logs),
            ["__cluster_metadata-0", BOOTSTRAP_CHECKPOINT_FILE_NAME]
        );
        let bytes = std::fs::read(logs.join(BOOTSTRAP_CHECKPOINT_FILE_NAME)).unwrap();
        assert_eq!(summary.kraft_files[0].1["bytes"], bytes.len());

        // An existing checkpoint is not overwritten, and the partition is not written.
        let other = logs.join("__cluster_metadata-1");
        let err = write_spec(&spec(""), &other).unwrap_err();
        assert!(err.to_string().contains("exists already"), "{err}");
        assert_eq!(
            names(&logs),
            ["__cluster_metadata-0", BOOTSTRAP_CHECKPOINT_FILE_NAME]
        );
        assert_eq!(
            std::fs::read(logs.join(BOOTSTRAP_CHECKPOINT_FILE_NAME)).unwrap(),
            bytes
        );

        // A path inside the partition directory is written there directly.
        let inside = spec("").ops.into_iter().next().unwrap();
        let Op::BootstrapCheckpoint { records, .. } = inside else {
            unreachable!()
        };
        let text = json!({"topic": "__cluster_metadata", "partition": 0, "ops": [
            {"op": "bootstrap_checkpoint", "path": "./sub/../bootstrap.checkpoint", "records": records}]});
        let third = root.path().join("third/__cluster_metadata-0");
        write_spec(&Spec::from_json(&text.to_string()).unwrap(), &third).unwrap();
        assert!(names(&third).contains(&BOOTSTRAP_CHECKPOINT_FILE_NAME.to_string()));
        assert_eq!(names(third.parent().unwrap()), ["__cluster_metadata-0"]);
    }
}
