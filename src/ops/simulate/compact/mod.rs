//! `kseg compact`: one round of the broker's log cleaner on a partition directory
//! (behavior.md §6; `LogCleanerManager` choosing the range, `Cleaner.doClean` cleaning it).
//!
//! The cleanable range runs from the first dirty offset (the log dir's
//! `cleaner-offset-checkpoint`) to the first uncleanable offset (the last stable offset, the
//! active segment, `min.compaction.lag.ms`), aligned down to a segment. An offset map of the
//! latest offset per key (by MD5, as the broker's) is built over it; then every segment from
//! the log start up to the map's end is rewritten in groups bounded by the cleaner's size
//! limits, batch by batch through `filterTo`'s rules: the latest record per key survives,
//! tombstones until their delete horizon (stamped into rewritten batches), aborted data and
//! removable markers go, each active producer's last batch stays (possibly as a bare header),
//! untouched batches are copied byte for byte. Cleaned segments are appended through the
//! engine's [`Segment`](crate::storage::Segment) in the cleaner's read-buffer chunks, so their
//! indexes are the broker's.
//!
//! Reads the source read-only; writes the cleaned partition to a new log dir ([`compact_to`],
//! here with the options and the report); [`plan`] carries the round out in place. The parts,
//! by the name a reader looks for: `range` (what the cleaner decides before a round),
//! `offset_map`, `txn` (aborted transactions and removable markers), `group` (which segments
//! are cleaned into one), `clean` (the per-segment pass), `rebuild` (batches written anew).

mod clean;
mod group;
mod offset_map;
pub mod plan;
mod range;
mod rebuild;
mod txn;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::format::checkpoint::{OffsetCheckpoint, OffsetCheckpointEntry};
use crate::format::names::{
    classify, partition_dir_name, FileKind, CLEANER_OFFSET_CHECKPOINT_FILE_NAME,
};
use crate::ops::partition::{mtime_ms, PartitionView, SegmentView};
use crate::ops::simulate::retention::Sourced;
use crate::storage::files::copy_writable;
use crate::storage::producer_state::DEFAULT_PRODUCER_ID_EXPIRATION_MS;
use crate::storage::txn_index::TxnIndexes;
use clean::Cleaner;
use group::group_segments;
use offset_map::OffsetMap;
use range::{cleanable_range, dirty_ratio};
use txn::TxnTracker;

/// `log.cleaner.dedupe.buffer.size` default (one cleaner thread).
pub const DEFAULT_DEDUPE_BUFFER_BYTES: u64 = 134_217_728;
/// `log.cleaner.io.buffer.size` default; each of the read and write buffers gets half.
pub const DEFAULT_IO_BUFFER_BYTES: u64 = 524_288;
/// `message.max.bytes` / `max.message.bytes` default: how far the I/O buffers may grow.
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 1_048_588;
/// Bytes per offset-map slot: a 16-byte MD5 and an 8-byte offset.
pub const OFFSET_MAP_SLOT_BYTES: u64 = 24;
/// `log.cleaner.io.buffer.load.factor`.
pub const OFFSET_MAP_LOAD_FACTOR: f64 = 0.9;

/// The topic and cleaner settings. Defaults are Kafka's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompactOptions {
    pub now_ms: i64,
    pub delete_retention_ms: i64,
    pub min_compaction_lag_ms: i64,
    pub max_compaction_lag_ms: i64,
    pub min_cleanable_dirty_ratio: f64,
    pub segment_bytes: u64,
    pub segment_index_bytes: u64,
    pub index_interval_bytes: u64,
    pub max_message_bytes: u64,
    pub dedupe_buffer_bytes: u64,
    pub io_buffer_bytes: u64,
    pub producer_id_expiration_ms: i64,
    /// Default: the log dir's `cleaner-offset-checkpoint`, else the log start offset.
    pub first_dirty_offset: Option<i64>,
    /// Default: `replication-offset-checkpoint`, else the log end offset.
    pub high_watermark: Option<i64>,
    /// Default: `log-start-offset-checkpoint`, else the first segment's base offset.
    pub log_start_offset: Option<i64>,
}

impl CompactOptions {
    pub fn new(now_ms: i64) -> Self {
        CompactOptions {
            now_ms,
            delete_retention_ms: 86_400_000,
            min_compaction_lag_ms: 0,
            max_compaction_lag_ms: i64::MAX,
            min_cleanable_dirty_ratio: 0.5,
            segment_bytes: 1 << 30,
            segment_index_bytes: 10 << 20,
            index_interval_bytes: 4096,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            dedupe_buffer_bytes: DEFAULT_DEDUPE_BUFFER_BYTES,
            io_buffer_bytes: DEFAULT_IO_BUFFER_BYTES,
            producer_id_expiration_ms: DEFAULT_PRODUCER_ID_EXPIRATION_MS,
            first_dirty_offset: None,
            high_watermark: None,
            log_start_offset: None,
        }
    }
}

/// Counts before and after cleaning.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanStats {
    #[serde(rename = "batchCountBefore")]
    pub batches_before: u64,
    #[serde(rename = "batchCountAfter")]
    pub batches_after: u64,
    #[serde(rename = "recordCountBefore")]
    pub records_before: u64,
    #[serde(rename = "recordCountAfter")]
    pub records_after: u64,
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// Distinct keys among the records kept.
    #[serde(rename = "keyCount")]
    pub keys: u64,
    #[serde(rename = "removedTombstoneCount")]
    pub tombstones_removed: u64,
    #[serde(rename = "keptTombstoneCount")]
    pub tombstones_kept: u64,
    /// Records of aborted transactions removed.
    #[serde(rename = "removedAbortedRecordCount")]
    pub aborted_records_removed: u64,
    #[serde(rename = "removedMarkerCount")]
    pub markers_removed: u64,
    /// Records without a key (dropped below the map's end).
    #[serde(rename = "removedKeylessRecordCount")]
    pub keyless_removed: u64,
    /// Batches kept as 61-byte headers for producer state or the round's last offset.
    #[serde(rename = "keptEmptyBatchCount")]
    pub empty_batches_kept: u64,
    /// Batches rewritten with a new delete horizon.
    #[serde(rename = "stampedHorizonCount")]
    pub horizons_stamped: u64,
}

impl CleanStats {
    fn add(&mut self, o: &CleanStats) {
        self.batches_before += o.batches_before;
        self.batches_after += o.batches_after;
        self.records_before += o.records_before;
        self.records_after += o.records_after;
        self.bytes_before += o.bytes_before;
        self.bytes_after += o.bytes_after;
        self.keys += o.keys;
        self.tombstones_removed += o.tombstones_removed;
        self.tombstones_kept += o.tombstones_kept;
        self.aborted_records_removed += o.aborted_records_removed;
        self.markers_removed += o.markers_removed;
        self.keyless_removed += o.keyless_removed;
        self.empty_batches_kept += o.empty_batches_kept;
        self.horizons_stamped += o.horizons_stamped;
    }
}

/// One cleaned segment: a group of source segments rewritten into one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanedSegment {
    pub base_offset: i64,
    /// Base offsets of the source segments it replaces.
    pub sources: Vec<i64>,
    #[serde(flatten)]
    pub stats: CleanStats,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactReport {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub dir: PathBuf,
    /// The partition directory written (`--out`).
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub out: Option<PathBuf>,
    pub now_ms: i64,
    #[serde(
        flatten,
        serialize_with = "crate::ops::simulate::retention::sourced_as::log_start_offset"
    )]
    pub log_start_offset: Sourced,
    #[serde(
        flatten,
        serialize_with = "crate::ops::simulate::retention::sourced_as::high_watermark"
    )]
    pub high_watermark: Sourced,
    pub log_end_offset: i64,
    pub last_stable_offset: i64,
    #[serde(
        flatten,
        serialize_with = "crate::ops::simulate::retention::sourced_as::first_dirty_offset"
    )]
    pub first_dirty_offset: Sourced,
    /// The end of the cleanable range, aligned to a segment base.
    pub first_uncleanable_offset: i64,
    pub dirty_ratio_before: f64,
    pub dirty_ratio_after: f64,
    /// `max.compaction.lag.ms` forces a clean now.
    pub needs_compaction_now: bool,
    /// The cleaner would pick this log (ratio above the minimum, or the lag forces it).
    pub cleaned: bool,
    /// One past the last offset the map covers: the new `cleaner-offset-checkpoint`.
    pub end_offset: i64,
    #[serde(rename = "offsetMapKeyCount")]
    pub keys_in_map: u64,
    pub map_full: bool,
    /// `now + delete.retention.ms`, stamped into rewritten batches holding tombstones.
    pub delete_horizon_ms: i64,
    pub segments: Vec<CleanedSegment>,
    pub total: CleanStats,
}

/// Runs one cleaning round on the partition directory `dir` and writes the result into the
/// log dir `out_log_dir` (created; it must not exist yet or be empty): the partition under its
/// own name, and a `cleaner-offset-checkpoint` holding the new first dirty offset.
pub fn compact_to(dir: &Path, out_log_dir: &Path, opts: &CompactOptions) -> Result<CompactReport> {
    // Built in a staging directory and renamed into place whole: a killed run leaves no
    // partial copy that passes for a complete one, and a rerun starts afresh.
    let mut report = crate::storage::files::build_dir("compact --out", out_log_dir, |tmp, _| {
        clean_round(dir, tmp, opts, true)
    })?;
    if let Some(out) = &mut report.out {
        *out = out_log_dir.join(out.file_name().unwrap_or_default());
    }
    Ok(report)
}

/// [`compact_to`]; with `copy_untouched` false only the cleaned segments (and the checkpoint)
/// are written: what `compact --apply` plans from, leaving what cleaning does not touch
/// uncopied.
pub(super) fn clean_round(
    dir: &Path,
    out_log_dir: &Path,
    opts: &CompactOptions,
    copy_untouched: bool,
) -> Result<CompactReport> {
    let view = PartitionView::open(dir)?;
    let range = cleanable_range(&view, opts)?;
    let (topic, partition) = view
        .topic_partition
        .clone()
        .ok_or_else(|| Error::invalid(dir, "the directory name is not <topic>-<partition>"))?;
    let out_dir = out_log_dir.join(partition_dir_name(&topic, partition));
    let slots = opts.dedupe_buffer_bytes.min(i32::MAX as u64) / OFFSET_MAP_SLOT_BYTES;
    let max_entries = (slots as f64 * OFFSET_MAP_LOAD_FACTOR) as usize;
    if max_entries < 1 {
        return Err(Error::invalid(
            dir,
            format!(
                "log.cleaner.dedupe.buffer.size {}: the offset map is too small to fit in even a \
                 single message, so log cleaning would never make progress (at least {} bytes)",
                opts.dedupe_buffer_bytes,
                // The map fills to 90% of its slots: one key needs two.
                2 * OFFSET_MAP_SLOT_BYTES
            ),
        ));
    }
    std::fs::create_dir_all(&out_dir).map_err(|e| Error::io(&out_dir, e))?;

    let legacy_delete_horizon_ms = view
        .segments
        .iter()
        .rfind(|s| s.base_offset < range.first_dirty_offset.value)
        .map_or(0, |s| s.mtime_ms - opts.delete_retention_ms);
    let mut cleaner = Cleaner {
        view: &view,
        opts,
        map: OffsetMap {
            map: HashMap::default(),
            max_entries,
            latest_offset: -1,
        },
        txns: TxnTracker::default(),
        txn_indexes: TxnIndexes::load(&view.dir, view.segments.iter().map(|s| s.base_offset))?,
        active_producers: range.active_producers,
        upper_bound_of_round: range.first_uncleanable_offset,
        legacy_delete_horizon_ms,
        scratch: Vec::new(),
    };
    let mut report_segments = Vec::new();
    let mut end_offset = range.first_dirty_offset.value;
    let mut replaced: HashSet<i64> = HashSet::new();
    if range.cleaned {
        cleaner.build_offset_map(
            range.first_dirty_offset.value,
            range.first_uncleanable_offset,
        )?;
        end_offset = cleaner.map.latest_offset.saturating_add(1);
        let below: Vec<&SegmentView> = view
            .segments
            .iter()
            .filter(|s| s.base_offset < end_offset)
            .collect();
        for group in group_segments(
            &below,
            opts.segment_bytes,
            opts.segment_index_bytes,
            range.first_uncleanable_offset,
        ) {
            let c = cleaner.clean_group(&group, &out_dir)?;
            replaced.extend(group.iter().map(|s| s.base_offset));
            report_segments.push(c);
        }
    }
    if copy_untouched {
        copy_rest(&view, &out_dir, &replaced, &report_segments)?;
    }
    let checkpoint = OffsetCheckpoint {
        entries: vec![OffsetCheckpointEntry {
            topic,
            partition,
            offset: end_offset,
        }],
    };
    let cp_path = out_log_dir.join(CLEANER_OFFSET_CHECKPOINT_FILE_NAME);
    std::fs::write(&cp_path, checkpoint.encode()).map_err(|e| Error::io(&cp_path, e))?;

    let mut total = CleanStats::default();
    for s in &report_segments {
        total.add(&s.stats);
    }
    total.keys = cleaner.map.map.len() as u64;
    let after_sizes: Vec<(i64, u64)> = range
        .sizes
        .iter()
        .filter(|(b, _)| !replaced.contains(b))
        .copied()
        .chain(
            report_segments
                .iter()
                .map(|s| (s.base_offset, s.stats.bytes_after)),
        )
        .collect::<std::collections::BTreeMap<i64, u64>>()
        .into_iter()
        .collect();
    let (_, ratio_after) = if range.cleaned {
        dirty_ratio(&after_sizes, end_offset, range.first_uncleanable_offset)
    } else {
        (0, range.dirty_ratio)
    };
    Ok(CompactReport {
        dir: dir.to_path_buf(),
        out: Some(out_dir),
        now_ms: opts.now_ms,
        log_start_offset: range.log_start_offset,
        high_watermark: range.high_watermark,
        log_end_offset: view.log_end_offset,
        last_stable_offset: range.last_stable_offset,
        first_dirty_offset: range.first_dirty_offset,
        first_uncleanable_offset: range.first_uncleanable_offset,
        dirty_ratio_before: range.dirty_ratio,
        dirty_ratio_after: ratio_after,
        needs_compaction_now: range.needs_compaction_now,
        cleaned: range.cleaned,
        end_offset,
        keys_in_map: cleaner.map.map.len() as u64,
        map_full: range.cleaned && cleaner.map.map.len() >= max_entries,
        delete_horizon_ms: opts.now_ms.saturating_add(opts.delete_retention_ms),
        segments: report_segments,
        total,
    })
}

/// Copies what cleaning leaves alone: segments at or above the map's end, and the other files
/// of the partition, except the producer snapshots of replaced segments that are not the base
/// of a cleaned one (the swap marks those deleted).
fn copy_rest(
    view: &PartitionView,
    out_dir: &Path,
    replaced: &HashSet<i64>,
    cleaned: &[CleanedSegment],
) -> Result<()> {
    let new_bases: HashSet<i64> = cleaned.iter().map(|c| c.base_offset).collect();
    for e in std::fs::read_dir(&view.dir).map_err(|e| Error::io(&view.dir, e))? {
        let e = e.map_err(|e| Error::io(&view.dir, e))?;
        let from = e.path();
        if !crate::storage::files::is_regular_file(&e)? {
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        let skip = match classify(&name) {
            FileKind::Log { base_offset }
            | FileKind::OffsetIndex { base_offset }
            | FileKind::TimeIndex { base_offset }
            | FileKind::TxnIndex { base_offset } => replaced.contains(&base_offset),
            FileKind::ProducerSnapshot { offset } => {
                replaced.contains(&offset) && !new_bases.contains(&offset)
            }
            _ => false,
        };
        if skip {
            continue;
        }
        let when = std::time::UNIX_EPOCH
            + std::time::Duration::from_millis(mtime_ms(&from)?.max(0) as u64);
        copy_writable(&from, &out_dir.join(&name), when)?;
    }
    Ok(())
}
