//! `kseg txns`: a partition's transactions as the broker sees them after loading it — the
//! last stable offset and first unstable offset, the transactions open at the log end (hanging
//! when the producer has been silent longer than `transaction.max.timeout.ms`, as
//! `kafka-transactions.sh find-hanging` judges), committed and aborted ones, and each
//! producer's state as the snapshot the broker would write holds it.
//!
//! Producer state is the engine's own: every batch goes, one at a time as the broker's
//! recovery applies them, through [`ProducerStateManager::apply_entry`], from the snapshot at
//! the first segment's base offset (none needed at 0); the first unstable offset is
//! [`ProducerStateManager::first_unstable_offset`] once the high watermark is known
//! (`UnifiedLog.lastStableOffset`); as after a broker's load, the completed transactions it
//! counts as possibly unreplicated are those whose marker lies at or after the latest snapshot
//! (the load replays from there). What this module adds is bookkeeping per transaction
//! (records, bytes, times). The walk stops where recovery would truncate (a batch whose CRC
//! fails, broken framing, a torn tail): what follows is not in the broker's log.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::stats::histogram::{Histogram, Log2Histogram};
use crate::error::{Error, Result};
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::format::control::ControlRecordType;
use crate::format::entry::Entry;
use crate::format::names::{classify, parse_partition_dir, snapshot_file_name, FileKind};
use crate::format::snapshot;
use crate::ops::inspect::seek::partition_dirs;
use crate::ops::partition::checkpoint_entry;
use crate::ops::simulate::retention::Sourced;
use crate::storage::files::{read_state, StateFile};
use crate::storage::log_reader::{torn_tail, LogReader, Step};
use crate::storage::producer_state::{IdMap, ProducerStateManager};
use crate::storage::read::marker_type;

/// `transaction.max.timeout.ms`, Kafka's default (15 minutes).
pub const DEFAULT_TRANSACTION_MAX_TIMEOUT_MS: i64 = 900_000;

#[derive(Debug, Clone, Copy)]
pub struct TxnsOptions {
    pub now_ms: i64,
    /// Open transactions whose producer wrote nothing for longer are hanging.
    pub transaction_max_timeout_ms: i64,
}

/// The coordinator's state of one transactional id, the latest record of it in the
/// `__transaction_state` partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CoordinatorTxn {
    pub transactional_id: String,
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// `Empty`, `Ongoing`, `PrepareCommit`, `PrepareAbort`, `CompleteCommit`, `CompleteAbort`,
    /// `Dead`, `PrepareEpochFence`.
    pub state: String,
    /// The partitions of its current transaction, `topic-partition`.
    pub partitions: Vec<String>,
    pub last_update_timestamp: i64,
    pub timeout_ms: i64,
    /// The record's offset in the transaction log.
    pub offset: i64,
}

/// What the coordinator says of one producer of the partition, and where the two sides differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CoordinatorView {
    pub producer_id: i64,
    /// None when no transactional id of the transaction log has this producer id.
    pub transactional_id: Option<String>,
    pub state: Option<String>,
    pub producer_epoch: Option<i16>,
    /// The coordinator's transaction includes this partition.
    pub includes_partition: bool,
    /// Where the log and the coordinator disagree, in words; None when they agree.
    pub disagreement: Option<String>,
}

/// The states in which the coordinator's transaction is not finished: its markers are still
/// to be written (`TransactionState`).
const UNFINISHED_STATES: [&str; 4] = [
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "PrepareEpochFence",
];

/// A transaction open at the log end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenTxn {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub first_offset: i64,
    /// The last offset of its last data batch seen (None: begun before the first segment).
    pub last_offset: Option<i64>,
    #[serde(rename = "recordCount")]
    pub records: u64,
    pub bytes: u64,
    /// The producer's last timestamp (`lastTimestamp` of its state).
    pub last_timestamp: i64,
    /// `now − lastTimestamp`, what `find-hanging` compares with the timeout.
    pub age_ms: i64,
    pub hanging: bool,
}

/// A transaction a marker completed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletedTransaction {
    pub producer_id: i64,
    /// The marker's producer epoch.
    pub producer_epoch: i16,
    pub first_offset: i64,
    /// The marker's offset.
    pub marker_offset: i64,
    pub committed: bool,
    /// Data records and bytes (whole batches) between the first offset and the marker.
    #[serde(rename = "recordCount")]
    pub records: u64,
    pub bytes: u64,
    /// Marker timestamp minus the first batch's first timestamp (None: begun before the first
    /// segment).
    pub duration_ms: Option<i64>,
    /// The marker carries a higher epoch than the transaction's data (the coordinator fenced
    /// the producer and ended its transaction).
    pub after_epoch_bump: bool,
    /// For an abort, the last stable offset its `.txnindex` entry records.
    pub last_stable_offset: Option<i64>,
}

/// Commits or aborts, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutcomeTotals {
    pub count: u64,
    #[serde(rename = "recordCount")]
    pub records: u64,
    pub bytes: u64,
    /// Markers that completed no transaction (no data since the producer's last marker).
    #[serde(rename = "emptyCount")]
    pub empty: u64,
    #[serde(rename = "afterEpochBumpCount")]
    pub after_epoch_bump: u64,
    #[serde(rename = "durationHistogram")]
    pub duration_ms: Option<Histogram>,
}

/// A producer as the snapshot the broker would write holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProducerTxnState {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub last_sequence: i32,
    /// The last offset of its last data batch (-1 when none is remembered).
    pub last_offset: i64,
    pub coordinator_epoch: i32,
    pub current_txn_first_offset: Option<i64>,
    pub last_timestamp: i64,
}

/// Where the walk stopped before the end of the files: what recovery truncates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stop {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub file: PathBuf,
    pub position: u64,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionTxns {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub dir: PathBuf,
    pub topic: Option<String>,
    pub partition: Option<i32>,
    pub log_start_offset: i64,
    pub log_start_offset_source: crate::ops::partition::LogStartSource,
    pub log_end_offset: i64,
    /// From `replication-offset-checkpoint`, else the log end offset (none checkpointed).
    #[serde(
        flatten,
        serialize_with = "crate::ops::simulate::retention::sourced_as::high_watermark"
    )]
    pub high_watermark: Sourced,
    pub last_stable_offset: i64,
    pub first_unstable_offset: Option<i64>,
    #[serde(rename = "openTransactions")]
    pub open: Vec<OpenTxn>,
    #[serde(rename = "hangingCount")]
    pub hanging: u64,
    #[serde(rename = "committedTotals")]
    pub committed: OutcomeTotals,
    #[serde(rename = "abortedTotals")]
    pub aborted: OutcomeTotals,
    pub aborted_transactions: Vec<CompletedTransaction>,
    pub producers: Vec<ProducerTxnState>,
    /// (`--txn-log`) the coordinator's side, per producer of the partition and per
    /// transactional id whose unfinished transaction includes the partition.
    #[serde(rename = "coordinatorViews")]
    pub coordinator: Option<Vec<CoordinatorView>>,
    pub stopped: Option<Stop>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TxnsReport {
    pub now_ms: i64,
    pub transaction_max_timeout_ms: i64,
    pub partitions: Vec<PartitionTxns>,
}

/// Every partition of `paths` (each a partition directory or a log dir), compared with the
/// coordinator's state in `txn_log` (a `__transaction_state` partition directory) when given.
pub fn txns(paths: &[PathBuf], opts: &TxnsOptions, txn_log: Option<&Path>) -> Result<TxnsReport> {
    let coordinator = txn_log.map(read_txn_log).transpose()?;
    let mut partitions = Vec::new();
    for path in paths {
        for d in partition_dirs(path)? {
            partitions.push(partition_txns(&d, opts, |_| {})?);
        }
    }
    if let Some(c) = &coordinator {
        partitions
            .iter_mut()
            .for_each(|p| compare_with_coordinator(p, c));
    }
    Ok(TxnsReport {
        now_ms: opts.now_ms,
        transaction_max_timeout_ms: opts.transaction_max_timeout_ms,
        partitions,
    })
}

/// What is known of a transaction while it is open.
#[derive(Debug, Clone, Copy)]
struct Running {
    /// Its first batch was seen (not begun before the first segment).
    seen_start: bool,
    epoch: i16,
    first_timestamp: i64,
    last_offset: i64,
    records: u64,
    bytes: u64,
}

#[derive(Default)]
struct Totals {
    totals: OutcomeTotals,
    durations: Log2Histogram,
}

impl Totals {
    fn add(&mut self, t: &CompletedTransaction) {
        self.totals.count += 1;
        self.totals.records += t.records;
        self.totals.bytes += t.bytes;
        self.totals.after_epoch_bump += u64::from(t.after_epoch_bump);
        if let Some(d) = t.duration_ms {
            self.durations.add(d.max(0) as u64);
        }
    }

    fn finish(mut self) -> OutcomeTotals {
        self.totals.duration_ms = self.durations.report();
        self.totals
    }
}

/// One partition directory; `on_completed` sees every completed transaction in log order.
pub fn partition_txns(
    dir: &Path,
    opts: &TxnsOptions,
    mut on_completed: impl FnMut(&CompletedTransaction),
) -> Result<PartitionTxns> {
    let logs = super::stats::logs_of(dir)?;
    let Some(&(_, first_base)) = logs.first() else {
        return Err(Error::invalid(dir, "no .log segment in this directory"));
    };
    let mut state = start_state(dir, first_base)?;
    let log_start = crate::ops::partition::loaded_log_start(dir, first_base)?;
    let log_start_offset = log_start.offset;
    let mut running: IdMap<Running> = IdMap::default();
    let (mut committed, mut aborted) = (Totals::default(), Totals::default());
    let mut aborted_transactions = Vec::new();
    let mut log_end_offset = first_base;
    let mut stopped = None;
    let mut scratch = Vec::new();
    'segments: for (log, base) in &logs {
        log_end_offset = log_end_offset.max(*base);
        let mut reader = LogReader::open(log, None)?;
        loop {
            let stop = |position: u64, message: String| Stop {
                file: log.clone(),
                position,
                message,
            };
            let (position, entry) = match reader.next_step()? {
                Step::Entry { position, entry } => (position, entry),
                Step::End { trailing: 0, .. } => break,
                Step::End {
                    position,
                    trailing,
                    truncated_len,
                } => {
                    stopped = Some(stop(position, torn_tail(trailing, truncated_len)));
                    break 'segments;
                }
                Step::BadEntry {
                    position, error, ..
                } => {
                    stopped = Some(stop(position, error.to_string()));
                    break 'segments;
                }
                Step::SizeTooSmall { position, size } => {
                    stopped = Some(stop(position, format!("size field {size} is too small")));
                    break 'segments;
                }
                Step::TooLarge { position, len } => {
                    stopped = Some(stop(position, format!("an entry of {len} bytes")));
                    break 'segments;
                }
                Step::BadCrc { position, .. } => {
                    stopped = Some(stop(position, "CRC mismatch".to_owned()));
                    break 'segments;
                }
            };
            if !entry.crc_is_valid() {
                stopped = Some(stop(position, "CRC mismatch".to_owned()));
                break 'segments;
            }
            log_end_offset = entry.last_offset() + 1;
            let Entry::V2(b) = entry else { continue };
            let h = b.header;
            if !h.has_producer_id() {
                continue;
            }
            if h.is_transactional() && !h.is_control() {
                let open = state
                    .entry(h.producer_id)
                    .is_some_and(|e| e.current_txn_first_offset.is_some());
                let r = running.entry(h.producer_id).or_insert(Running {
                    seen_start: !open,
                    epoch: h.producer_epoch,
                    first_timestamp: h.base_timestamp,
                    last_offset: h.last_offset(),
                    records: 0,
                    bytes: 0,
                });
                r.last_offset = h.last_offset();
                r.records += u64::try_from(h.record_count).unwrap_or(0);
                r.bytes += entry.size_in_bytes() as u64;
            }
            let mut lso = None;
            let completed = match state.apply_entry(&entry, log, |a| {
                lso = Some(a.last_stable_offset);
                Ok(())
            }) {
                Ok(c) => c,
                Err(e) => {
                    stopped = Some(stop(position, e.to_string()));
                    break 'segments;
                }
            };
            if h.is_control() && completed.is_empty() {
                // A marker that completed nothing: an empty transaction.
                match marker_type(&entry, &mut scratch) {
                    Some(ControlRecordType::Commit) => committed.totals.empty += 1,
                    Some(ControlRecordType::Abort) => aborted.totals.empty += 1,
                    _ => {}
                }
            }
            for c in completed {
                let r = running.remove(&c.producer_id);
                let t = CompletedTransaction {
                    producer_id: c.producer_id,
                    producer_epoch: h.producer_epoch,
                    first_offset: c.first_offset,
                    marker_offset: c.last_offset,
                    committed: !c.is_aborted,
                    records: r.map_or(0, |r| r.records),
                    bytes: r.map_or(0, |r| r.bytes),
                    duration_ms: r
                        .filter(|r| r.seen_start)
                        .map(|r| h.max_timestamp - r.first_timestamp),
                    after_epoch_bump: r.is_some_and(|r| h.producer_epoch != r.epoch),
                    last_stable_offset: if c.is_aborted { lso } else { None },
                };
                on_completed(&t);
                if c.is_aborted {
                    aborted.add(&t);
                    aborted_transactions.push(t);
                } else {
                    committed.add(&t);
                }
            }
        }
    }
    let (high_watermark, high_watermark_source) =
        high_watermark(dir, log_start_offset, log_end_offset)?;
    // A broker loads the latest snapshot and replays what follows: it knows only the
    // transactions completed from there on as possibly unreplicated.
    if let Some(loaded) = latest_snapshot_at_or_below(dir, log_end_offset)? {
        state.on_high_watermark_updated(loaded);
    }
    state.on_high_watermark_updated(high_watermark);
    let first_unstable_offset = state.first_unstable_offset();
    let last_stable_offset = state.last_stable_offset_at(high_watermark);
    let open: Vec<OpenTxn> = state
        .ongoing_txns()
        .map(|(first_offset, pid)| {
            let e = state.entry(pid);
            let r = running.get(&pid);
            let last_timestamp = e.map_or(-1, |e| e.last_timestamp);
            let age_ms = opts.now_ms.saturating_sub(last_timestamp);
            OpenTxn {
                producer_id: pid,
                producer_epoch: e.map_or(-1, |e| e.producer_epoch),
                first_offset,
                last_offset: r.map(|r| r.last_offset),
                records: r.map_or(0, |r| r.records),
                bytes: r.map_or(0, |r| r.bytes),
                last_timestamp,
                age_ms,
                hanging: age_ms > opts.transaction_max_timeout_ms,
            }
        })
        .collect();
    let producers = state
        .producers()
        .map(|e| ProducerTxnState {
            producer_id: e.producer_id,
            producer_epoch: e.producer_epoch,
            last_sequence: e.last_seq(),
            last_offset: e.last_data_offset(),
            coordinator_epoch: e.coordinator_epoch,
            current_txn_first_offset: e.current_txn_first_offset,
            last_timestamp: e.last_timestamp,
        })
        .collect();
    let parsed = dir
        .file_name()
        .and_then(|n| parse_partition_dir(&n.to_string_lossy()));
    Ok(PartitionTxns {
        dir: dir.to_path_buf(),
        topic: parsed.as_ref().map(|p| p.topic.clone()),
        partition: parsed.map(|p| p.partition),
        log_start_offset,
        log_start_offset_source: log_start.source,
        log_end_offset,
        high_watermark: Sourced {
            value: high_watermark,
            source: high_watermark_source.to_owned(),
        },
        last_stable_offset,
        first_unstable_offset,
        hanging: open.iter().filter(|o| o.hanging).count() as u64,
        open,
        committed: committed.finish(),
        aborted: aborted.finish(),
        aborted_transactions,
        producers,
        coordinator: None,
        stopped,
    })
}

/// The latest state of every transactional id in a `__transaction_state` partition directory
/// (tombstoned ids dropped), as the coordinator loads it; records kafka-dump-log cannot decode
/// are skipped. Walks the segments once; memory is one entry per transactional id.
pub fn read_txn_log(dir: &Path) -> Result<Vec<CoordinatorTxn>> {
    use crate::format::internal::{decode_record, Decoder};
    let mut latest: std::collections::BTreeMap<String, CoordinatorTxn> = Default::default();
    let mut scratch = Vec::new();
    for (log, _) in super::stats::logs_of(dir)? {
        let mut reader = LogReader::open(&log, None)?;
        while let Step::Entry { entry, .. } = reader.next_step()? {
            if !entry.crc_is_valid() || entry.is_control() {
                continue;
            }
            let Ok(records) = entry.records(&mut scratch, DEFAULT_MAX_DECOMPRESSED_BYTES) else {
                continue;
            };
            for r in records.flatten() {
                let d = decode_record(Decoder::TransactionLog, r.offset, r.key, r.value);
                let Some(id) = d
                    .key
                    .as_deref()
                    .and_then(|k| k.strip_prefix("transaction_metadata::transactionalId="))
                else {
                    continue;
                };
                let Some(v) = d.payload_json else {
                    if d.payload.as_deref() == Some("<DELETE>") {
                        latest.remove(id);
                    }
                    continue;
                };
                let data = &v["data"];
                let int = |k: &str| data[k].as_i64().unwrap_or(-1);
                let state = v["state"].as_str().unwrap_or_default().to_owned();
                // The coordinator ignores the partitions an Empty value lists
                // (`TransactionLog.readTxnRecordValue`).
                let listed = if state == "Empty" {
                    &serde_json::Value::Null
                } else {
                    &data["transactionPartitions"]
                };
                let partitions = listed
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|t| {
                        let topic = t["topic"].as_str().unwrap_or_default().to_owned();
                        t["partitionIds"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|p| p.as_i64())
                            .map(move |p| format!("{topic}-{p}"))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                latest.insert(
                    id.to_owned(),
                    CoordinatorTxn {
                        transactional_id: id.to_owned(),
                        producer_id: int("producerId"),
                        producer_epoch: i16::try_from(int("producerEpoch")).unwrap_or(-1),
                        state,
                        partitions,
                        last_update_timestamp: int("transactionLastUpdateTimestampMs"),
                        timeout_ms: int("transactionTimeoutMs"),
                        offset: r.offset,
                    },
                );
            }
        }
    }
    Ok(latest.into_values().collect())
}

/// Sets `p.coordinator` from the coordinator's state: for each producer of the partition and
/// each transactional id whose unfinished transaction includes it, whether the two agree (a
/// transaction open in the log needs an unfinished one on the coordinator that includes the
/// partition, and the other way round; the log's epoch is never above the coordinator's).
pub fn compare_with_coordinator(p: &mut PartitionTxns, coordinator: &[CoordinatorTxn]) {
    let name = p
        .dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let by_producer: IdMap<&CoordinatorTxn> =
        coordinator.iter().map(|c| (c.producer_id, c)).collect();
    let mut views = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for prod in &p.producers {
        seen.insert(prod.producer_id);
        let c = by_producer.get(&prod.producer_id).copied();
        let open = prod.current_txn_first_offset;
        let includes = c.is_some_and(|c| c.partitions.contains(&name));
        let unfinished = c.is_some_and(|c| UNFINISHED_STATES.contains(&c.state.as_str()));
        let disagreement = match (c, open) {
            (None, Some(first)) => Some(format!(
                "a transaction is open in the log from offset {first}, but no transactional id of the coordinator has producer id {}",
                prod.producer_id
            )),
            (None, None) => None,
            (Some(c), Some(first)) if !unfinished => Some(format!(
                "a transaction is open in the log from offset {first}, but the coordinator's state is {}: no marker will come (hanging)",
                c.state
            )),
            (Some(_), Some(first)) if !includes => Some(format!(
                "a transaction is open in the log from offset {first}, but the coordinator's transaction does not include {name}"
            )),
            (Some(c), None) if unfinished && includes => Some(format!(
                "the coordinator's transaction ({}) includes {name}, but none is open in the log",
                c.state
            )),
            (Some(c), _) if prod.producer_epoch > c.producer_epoch => Some(format!(
                "the log has producer epoch {}, above the coordinator's {}",
                prod.producer_epoch, c.producer_epoch
            )),
            _ => None,
        };
        views.push(CoordinatorView {
            producer_id: prod.producer_id,
            transactional_id: c.map(|c| c.transactional_id.clone()),
            state: c.map(|c| c.state.clone()),
            producer_epoch: c.map(|c| c.producer_epoch),
            includes_partition: includes,
            disagreement,
        });
    }
    for c in coordinator {
        let unfinished = UNFINISHED_STATES.contains(&c.state.as_str());
        if unfinished && c.partitions.contains(&name) && !seen.contains(&c.producer_id) {
            views.push(CoordinatorView {
                producer_id: c.producer_id,
                transactional_id: Some(c.transactional_id.clone()),
                state: Some(c.state.clone()),
                producer_epoch: Some(c.producer_epoch),
                includes_partition: true,
                disagreement: Some(format!(
                    "the coordinator's transaction ({}) includes {name}, but producer {} never wrote to it",
                    c.state, c.producer_id
                )),
            });
        }
    }
    p.coordinator = Some(views);
}

/// The high watermark a broker loads: the log dir's `replication-offset-checkpoint`, bounded by
/// the log start and end as `UnifiedLog.updateHighWatermark` bounds it; the log end without
/// one. With where it came from.
pub(crate) fn high_watermark(
    dir: &Path,
    log_start_offset: i64,
    log_end_offset: i64,
) -> Result<(i64, &'static str)> {
    Ok(
        match checkpoint_entry(dir, "replication-offset-checkpoint")? {
            Some((_, c, i)) => (
                c.entries[i]
                    .offset
                    .clamp(log_start_offset, log_end_offset.max(log_start_offset)),
                "replication-offset-checkpoint",
            ),
            None => (log_end_offset, "log end offset"),
        },
    )
}

/// Producer state at the first segment's base: its snapshot's, or none (a log from 0, or a
/// base without a readable snapshot: producers are known from what the log shows).
pub(crate) fn start_state(dir: &Path, base: i64) -> Result<ProducerStateManager> {
    let path = dir.join(snapshot_file_name(base));
    let entries = match read_state(&path, StateFile::ProducerSnapshot) {
        Ok(bytes) if base > 0 => {
            snapshot::decode(&bytes).map_or_else(|_| Vec::new(), |s| s.entries)
        }
        Ok(_) => Vec::new(),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Vec::new()
        }
        Err(e) => return Err(e),
    };
    Ok(ProducerStateManager::from_snapshot_entries(
        dir, base, &entries,
    ))
}

/// The offset of the latest readable `.snapshot` at or below `log_end`: the one the broker's
/// load starts from (`ProducerStateManager.truncateAndReload` deletes those above the log end,
/// `loadFromSnapshot` skips corrupt ones).
pub(crate) fn latest_snapshot_at_or_below(dir: &Path, log_end: i64) -> Result<Option<i64>> {
    let mut offsets: Vec<i64> = crate::storage::files::list_dir(dir)?
        .iter()
        .filter_map(|p| match classify(&p.file_name()?.to_string_lossy()) {
            FileKind::ProducerSnapshot { offset } if offset <= log_end => Some(offset),
            _ => None,
        })
        .collect();
    offsets.sort_unstable();
    for offset in offsets.into_iter().rev() {
        let path = dir.join(snapshot_file_name(offset));
        let bytes = read_state(&path, StateFile::ProducerSnapshot)?;
        if snapshot::decode(&bytes).is_ok() {
            return Ok(Some(offset));
        }
    }
    Ok(None)
}
