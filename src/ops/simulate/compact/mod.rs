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
//! engine's [`Segment`] in the cleaner's read-buffer chunks, so their indexes are the broker's.
//!
//! Reads the source read-only; writes the cleaned partition to a new log dir.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use md5::{Digest, Md5};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::format::batch::{
    attributes, build_batch, BatchHeader, BatchSpec, RecordSpec, CRC_COVERAGE_START,
    LOG_OVERHEAD_BYTES, MAGIC_V2, RECORD_BATCH_OVERHEAD_BYTES,
};
use crate::format::checkpoint::{OffsetCheckpoint, OffsetCheckpointEntry};
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::format::control::{decode_control_key, ControlRecordType};
use crate::format::entry::{frame_at, Entry, Frame, RecordView};
use crate::format::index::{decode_txn_index, AbortedTxn, NO_TIMESTAMP};
use crate::format::legacy::{build_message_set, LegacySetSpec};
use crate::format::names::{
    classify, index_file_name, log_file_name, partition_dir_name, txn_index_file_name, FileKind,
    CLEANER_OFFSET_CHECKPOINT_FILE_NAME,
};
use crate::ops::partition::{mtime_ms, PartitionView, SegmentView};
use crate::ops::repair::recover::{plan as recover_plan, RecoverOptions, RecoverPlan};
use crate::ops::simulate::retention::{partition_offsets, Sourced};
use crate::storage::files::segment_files;
use crate::storage::log_reader::{LogReader, Step};
use crate::storage::producer_state::{ProducerAppends, DEFAULT_PRODUCER_ID_EXPIRATION_MS};
use crate::storage::replace::staged_segment;
use crate::storage::segment::SegmentConfig;
use crate::storage::{LogConfig, OffsetIndex, ProducerStateManager, Segment};

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
    pub batches_before: u64,
    pub batches_after: u64,
    pub records_before: u64,
    pub records_after: u64,
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// Distinct keys among the records kept.
    pub keys: u64,
    pub tombstones_removed: u64,
    pub tombstones_kept: u64,
    /// Records of aborted transactions removed.
    pub aborted_records_removed: u64,
    pub markers_removed: u64,
    /// Records without a key (dropped below the map's end).
    pub keyless_removed: u64,
    /// Batches kept as 61-byte headers for producer state or the round's last offset.
    pub empty_batches_kept: u64,
    /// Batches rewritten with a new delete horizon.
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
    pub dir: PathBuf,
    /// The partition directory written (`--out`).
    pub out: Option<PathBuf>,
    pub now_ms: i64,
    pub log_start_offset: Sourced,
    pub high_watermark: Sourced,
    pub log_end_offset: i64,
    pub last_stable_offset: i64,
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
    pub keys_in_map: u64,
    pub map_full: bool,
    /// `now + delete.retention.ms`, stamped into rewritten batches holding tombstones.
    pub delete_horizon_ms: i64,
    pub segments: Vec<CleanedSegment>,
    pub total: CleanStats,
}

/// The offset map: latest offset per MD5 of a key, at most `max_entries` keys.
struct OffsetMap {
    map: HashMap<[u8; 16], i64>,
    max_entries: usize,
    latest_offset: i64,
}

fn key_hash(key: &[u8]) -> [u8; 16] {
    Md5::digest(key).into()
}

impl OffsetMap {
    fn get(&self, key: &[u8]) -> i64 {
        self.map.get(&key_hash(key)).copied().unwrap_or(-1)
    }
}

/// `CleanedTransactionMetadata`: which transactional batches were aborted and which markers
/// can go, tracked across the whole round.
#[derive(Default)]
struct TxnTracker {
    /// Aborted transactions not reached yet, by first offset.
    pending: BinaryHeap<std::cmp::Reverse<(i64, i64, i64, i64)>>,
    /// pid → (the AbortedTxn, whether a batch of it was seen in this round).
    ongoing_aborted: HashMap<i64, (AbortedTxn, bool)>,
    ongoing_committed: HashSet<i64>,
}

impl TxnTracker {
    fn add(&mut self, txns: &[AbortedTxn]) {
        for t in txns {
            self.pending.push(std::cmp::Reverse((
                t.first_offset,
                t.producer_id,
                t.last_offset,
                t.last_stable_offset,
            )));
        }
    }

    fn consume_up_to(&mut self, offset: i64) {
        while let Some(std::cmp::Reverse((first, pid, last, lso))) = self.pending.peek().copied() {
            if first > offset {
                break;
            }
            self.pending.pop();
            self.ongoing_aborted.entry(pid).or_insert((
                AbortedTxn {
                    version: crate::format::index::ABORTED_TXN_CURRENT_VERSION,
                    producer_id: pid,
                    first_offset: first,
                    last_offset: last,
                    last_stable_offset: lso,
                },
                false,
            ));
        }
    }

    /// A data batch: true if it belongs to an aborted transaction.
    fn on_batch(&mut self, e: &Entry<'_>, pid: i64) -> bool {
        self.consume_up_to(e.last_offset());
        if !e.is_transactional() {
            return false;
        }
        match self.ongoing_aborted.get_mut(&pid) {
            Some(t) => {
                t.1 = true;
                true
            }
            None => {
                self.ongoing_committed.insert(pid);
                false
            }
        }
    }

    /// A control batch: whether it can go, and an aborted transaction to index in the cleaned
    /// segment (its data was seen, so the marker stays).
    fn on_control(
        &mut self,
        e: &Entry<'_>,
        pid: i64,
        first: Option<&RecordView<'_>>,
    ) -> Result<(bool, Option<AbortedTxn>), crate::format::DecodeError> {
        self.consume_up_to(e.last_offset());
        let Some(r) = first else {
            return Ok((true, None));
        };
        Ok(match decode_control_key(r.key)? {
            ControlRecordType::Abort => match self.ongoing_aborted.remove(&pid) {
                Some((txn, true)) => (false, Some(txn)),
                _ => (true, None),
            },
            ControlRecordType::Commit => (!self.ongoing_committed.remove(&pid), None),
            _ => (false, None),
        })
    }
}

/// Every `.txnindex` of the source, by segment, for `collectAbortedTransactions`.
struct TxnIndexes(Vec<(i64, Vec<AbortedTxn>)>);

impl TxnIndexes {
    fn load(view: &PartitionView) -> Result<Self> {
        let mut out = Vec::new();
        for s in &view.segments {
            let path = view.dir.join(txn_index_file_name(s.base_offset));
            let txns = match std::fs::read(&path) {
                Ok(b) => decode_txn_index(&b).map_err(|e| Error::decode(&path, 0, e))?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
                Err(e) => return Err(Error::io(&path, e)),
            };
            out.push((s.base_offset, txns));
        }
        Ok(TxnIndexes(out))
    }

    /// `UnifiedLog.collectAbortedTransactions(start, upper)`: from the segment holding
    /// `start` onwards, entries overlapping `[floor base, upper)`, until an entry's last
    /// stable offset reaches `upper`.
    fn collect(&self, start: i64, upper: i64) -> Vec<AbortedTxn> {
        let Some(floor) = self.0.iter().rposition(|(b, _)| *b <= start) else {
            return Vec::new();
        };
        let fetch = self.0[floor].0;
        let mut out = Vec::new();
        for (_, txns) in &self.0[floor..] {
            for t in txns {
                if t.last_offset >= fetch && t.first_offset < upper {
                    out.push(*t);
                }
                if t.last_stable_offset >= upper {
                    return out;
                }
            }
        }
        out
    }
}

/// The last batch of each producer the broker still tracks: pid → (last data offset, epoch).
type ActiveProducers = HashMap<i64, (Option<i64>, i16)>;

/// Producer state as the broker holds it at `now`: every batch replayed from the log start
/// (no snapshot is read or written), expired producers left out. Also returns the first
/// offset of the earliest open transaction.
fn producer_state(
    view: &PartitionView,
    log_start_offset: i64,
    opts: &CompactOptions,
) -> Result<(ActiveProducers, Option<i64>)> {
    let mut state = ProducerStateManager::new(&view.dir, log_start_offset);
    for s in &view.segments {
        let path = view.dir.join(log_file_name(s.base_offset));
        let mut reader = LogReader::open(&path, None)?.with_max_entry_bytes(u64::MAX);
        let mut appends = ProducerAppends::default();
        while let Step::Entry { entry, .. } = reader.next_step()? {
            if entry.magic() >= MAGIC_V2 && entry.last_offset() >= log_start_offset {
                appends.add(&state, &entry, &path)?;
            }
        }
        state.apply_loaded(appends)?;
    }
    let mut active = HashMap::new();
    let mut first_unstable: Option<i64> = None;
    for p in state.producers() {
        if let Some(first) = p.current_txn_first_offset {
            first_unstable = Some(first_unstable.map_or(first, |f| f.min(first)));
        }
        let expired = p.current_txn_first_offset.is_none()
            && opts.now_ms.saturating_sub(p.last_timestamp) >= opts.producer_id_expiration_ms;
        if !expired {
            let last = p.last_data_offset();
            active.insert(
                p.producer_id,
                ((last >= 0).then_some(last), p.producer_epoch),
            );
        }
    }
    Ok((active, first_unstable))
}

/// The first batch's max timestamp of a segment (`getFirstBatchTimestamp`), i64::MAX if none.
fn first_batch_timestamp(dir: &Path, s: &SegmentView) -> Result<i64> {
    let path = dir.join(log_file_name(s.base_offset));
    let mut reader = LogReader::open(&path, None)?;
    Ok(match reader.next_step()? {
        Step::Entry { entry, .. } => entry.max_timestamp(),
        _ => i64::MAX,
    })
}

/// `ratio = cleanable / (clean + cleanable)` over segment sizes (`calculateCleanableBytes`).
fn dirty_ratio(segments: &[(i64, u64)], first_dirty: i64, first_uncleanable: i64) -> (u64, f64) {
    let floor = |o: i64| segments.iter().rposition(|(b, _)| *b <= o).unwrap_or(0);
    let clean: u64 = segments
        .iter()
        .filter(|(b, _)| *b < first_dirty)
        .map(|(_, s)| s)
        .sum();
    let from = floor(first_dirty.min(first_uncleanable));
    let cleanable: u64 = segments[from..]
        .iter()
        .filter(|(b, _)| *b < first_uncleanable)
        .map(|(_, s)| s)
        .sum();
    let total = clean + cleanable;
    let ratio = if total == 0 {
        0.0
    } else {
        cleanable as f64 / total as f64
    };
    (cleanable, ratio)
}

/// Where a v2 or legacy batch's records go after the filter.
struct Kept {
    records: Vec<RecordSpec>,
    all_kept: bool,
    max_offset: i64,
    contains_tombstones: bool,
}

/// One source segment read in the cleaner's buffer-sized windows.
struct Window {
    file: File,
    path: PathBuf,
    size: u64,
    buf: Vec<u8>,
}

impl Window {
    fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let size = file.metadata().map_err(|e| Error::io(path, e))?.len();
        Ok(Window {
            file,
            path: path.to_path_buf(),
            size,
            buf: Vec::new(),
        })
    }

    /// Reads up to `cap` bytes at `position`.
    fn read(&mut self, position: u64, cap: usize) -> Result<&[u8]> {
        let len = cap.min((self.size - position) as usize);
        self.buf.resize(len, 0);
        self.file
            .read_exact_at(&mut self.buf, position)
            .map_err(|e| Error::io(&self.path, e))?;
        Ok(&self.buf)
    }
}

/// The whole entries at the start of `window`, with their offsets in it.
fn whole_entries<'w>(window: &'w [u8], path: &Path, base: u64) -> Result<Vec<(usize, Entry<'w>)>> {
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        match frame_at(&window[pos..]) {
            Frame::Entry { len, .. } => {
                let e = Entry::decode(&window[pos..pos + len])
                    .map_err(|e| Error::decode(path, base + pos as u64, e))?;
                out.push((pos, e));
                pos += len;
            }
            Frame::SizeTooSmall { size } => {
                return Err(Error::invalid(
                    path,
                    format!(
                        "at byte {}: size field {size} is below the minimum of 14",
                        base + pos as u64
                    ),
                ))
            }
            Frame::End | Frame::Truncated { .. } => return Ok(out),
        }
    }
}

/// The 61-byte header `writeEmptyHeader` leaves for a batch whose records all went.
fn empty_batch(h: &BatchHeader) -> Vec<u8> {
    let mut header = BatchHeader {
        length: (RECORD_BATCH_OVERHEAD_BYTES - LOG_OVERHEAD_BYTES) as i32,
        attributes: h.attributes
            & (attributes::TIMESTAMP_TYPE_LOG_APPEND_TIME
                | attributes::TRANSACTIONAL
                | attributes::CONTROL),
        base_timestamp: NO_TIMESTAMP,
        record_count: 0,
        crc: 0,
        ..*h
    };
    let mut out = vec![0u8; RECORD_BATCH_OVERHEAD_BYTES];
    header.encode_into(&mut out);
    header.crc = crc32c::crc32c(&out[CRC_COVERAGE_START..]);
    header.encode_into(&mut out);
    out
}

fn record_spec(r: &RecordView<'_>) -> RecordSpec {
    RecordSpec {
        offset: r.offset,
        timestamp: r.timestamp,
        key: r.key.map(<[u8]>::to_vec),
        value: r.value.map(<[u8]>::to_vec),
        headers: r
            .headers
            .iter()
            .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
            .collect(),
    }
}

/// What `filterTo` adds to the output for one chunk.
#[derive(Default)]
struct Chunk {
    bytes: Vec<u8>,
    max_offset: i64,
    max_timestamp: i64,
    shallow_offset_of_max_timestamp: i64,
}

impl Chunk {
    fn new() -> Self {
        Chunk {
            bytes: Vec::new(),
            max_offset: -1,
            max_timestamp: NO_TIMESTAMP,
            shallow_offset_of_max_timestamp: -1,
        }
    }

    fn retained(&mut self, bytes: &[u8], max_timestamp: i64, shallow: i64, max_offset: i64) {
        self.bytes.extend_from_slice(bytes);
        if max_timestamp > self.max_timestamp {
            self.max_timestamp = max_timestamp;
            self.shallow_offset_of_max_timestamp = shallow;
        }
        self.max_offset = self.max_offset.max(max_offset);
    }
}

/// The state of one cleaning round.
struct Cleaner<'a> {
    view: &'a PartitionView,
    opts: &'a CompactOptions,
    map: OffsetMap,
    txns: TxnTracker,
    txn_indexes: TxnIndexes,
    active_producers: ActiveProducers,
    upper_bound_of_round: i64,
    legacy_delete_horizon_ms: i64,
    scratch: Vec<u8>,
}

impl Cleaner<'_> {
    fn read_buffer_bytes(&self) -> usize {
        (self.opts.io_buffer_bytes / 2).max(1) as usize
    }

    /// `growBuffersOrFail`: the next buffer size after a window held no whole batch.
    fn grow(&self, cap: usize, window: &[u8], w: &Window, position: u64) -> Result<usize> {
        let max_message = self.opts.max_message_bytes as usize;
        let max_size = if cap >= max_message {
            let next = match frame_at(window) {
                Frame::Truncated { len } => len,
                _ => 0,
            };
            if next <= cap || next as u64 > w.size - position {
                return Err(Error::invalid(
                    &w.path,
                    format!(
                        "at byte {position}: the batch there ({next} bytes) does not fit in the {} bytes left; the segment may be corrupt",
                        w.size - position
                    ),
                ));
            }
            next
        } else {
            max_message
        };
        let max_buffer = max_size.max(DEFAULT_MAX_MESSAGE_BYTES as usize);
        if cap >= max_buffer {
            return Err(Error::invalid(
                &w.path,
                format!(
                    "at byte {position}: a batch is larger than the maximum of {max_buffer} bytes"
                ),
            ));
        }
        Ok((cap * 2).min(max_buffer))
    }

    /// `buildOffsetMap(start, end)`.
    fn build_offset_map(&mut self, start: i64, end: i64) -> Result<()> {
        let dirty: Vec<&SegmentView> = {
            let floor = self
                .view
                .segments
                .iter()
                .rposition(|s| s.base_offset <= start)
                .unwrap_or(0);
            self.view.segments[floor..]
                .iter()
                .filter(|s| s.base_offset < end)
                .collect()
        };
        let mut tracker = TxnTracker::default();
        tracker.add(&self.txn_indexes.collect(start, end));
        for (i, s) in dirty.iter().enumerate() {
            let next_start = dirty.get(i + 1).map_or(end, |n| n.base_offset);
            if self.map_segment(s, start, &mut tracker)? {
                return Ok(());
            }
            self.map.latest_offset = next_start - 1;
        }
        Ok(())
    }

    /// `buildOffsetMapForSegment`: true when the map filled up.
    fn map_segment(
        &mut self,
        s: &SegmentView,
        start: i64,
        tracker: &mut TxnTracker,
    ) -> Result<bool> {
        let path = self.view.dir.join(log_file_name(s.base_offset));
        let index = self.view.dir.join(index_file_name(s.base_offset));
        let position = if index.exists() {
            OffsetIndex::open_existing(&index, s.base_offset)?
                .lookup(start)
                .position
                .max(0) as u64
        } else {
            0
        };
        let mut reader = LogReader::open(&path, None)?.with_max_entry_bytes(u64::MAX);
        reader.seek(position);
        loop {
            let (pos, entry) = match reader.next_step()? {
                Step::Entry { position, entry } => (position, entry),
                Step::End { .. } => return Ok(false),
                other => {
                    return Err(Error::invalid(
                        &path,
                        format!("unreadable batch while building the offset map: {other:?}"),
                    ))
                }
            };
            let pid = producer_id(&entry);
            if entry.is_control() {
                let mut records = entry
                    .records(&mut self.scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
                    .map_err(|e| Error::decode(&path, pos, e))?;
                let first = records
                    .next()
                    .transpose()
                    .map_err(|e| Error::decode(&path, pos, e))?;
                tracker
                    .on_control(&entry, pid, first.as_ref())
                    .map_err(|e| Error::decode(&path, pos, e))?;
            } else if !tracker.on_batch(&entry, pid) {
                let records = entry
                    .records(&mut self.scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
                    .map_err(|e| Error::decode(&path, pos, e))?;
                for r in records {
                    let r = r.map_err(|e| Error::decode(&path, pos, e))?;
                    if let Some(key) = r.key {
                        if r.offset >= start {
                            if self.map.map.len() >= self.map.max_entries {
                                return Ok(true);
                            }
                            self.map.map.insert(key_hash(key), r.offset);
                            self.map.latest_offset = r.offset;
                        }
                    }
                }
            }
            if entry.last_offset() >= start {
                self.map.latest_offset = entry.last_offset();
            }
        }
    }

    /// `cleanSegments` for one group, written into `out_dir`.
    fn clean_group(&mut self, group: &[&SegmentView], out_dir: &Path) -> Result<CleanedSegment> {
        let first = group[0].base_offset;
        let config = SegmentConfig {
            index_interval_bytes: self.opts.index_interval_bytes,
            max_index_bytes: self.opts.segment_index_bytes,
        };
        let mut cleaned = Segment::create(out_dir, first, config, self.opts.now_ms)?;
        let mut stats = CleanStats::default();
        let mut keys: HashSet<[u8; 16]> = HashSet::new();
        for (i, s) in group.iter().enumerate() {
            let path = self.view.dir.join(log_file_name(s.base_offset));
            let upper = match group.get(i + 1) {
                Some(n) => n.base_offset,
                None => crate::ops::partition::next_offset_of_log(&path, s.base_offset)?,
            };
            let aborted = self.txn_indexes.collect(s.base_offset, upper);
            self.txns.add(&aborted);
            let retain_legacy_deletes = s.mtime_ms > self.legacy_delete_horizon_ms;
            self.clean_into(
                &path,
                &mut cleaned,
                retain_legacy_deletes,
                &mut stats,
                &mut keys,
            )?;
        }
        cleaned.on_become_inactive()?;
        cleaned.flush()?;
        drop(cleaned);
        stats.keys = keys.len() as u64;
        // The cleaned files keep the last source segment's modification time.
        let mtime = group.last().expect("a group has a segment").mtime_ms;
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_millis(mtime.max(0) as u64);
        for name in [
            log_file_name(first),
            index_file_name(first),
            crate::format::names::time_index_file_name(first),
            txn_index_file_name(first),
        ] {
            let p = out_dir.join(name);
            if p.exists() {
                File::options()
                    .write(true)
                    .open(&p)
                    .and_then(|f| f.set_modified(when))
                    .map_err(|e| Error::io(&p, e))?;
            }
        }
        Ok(CleanedSegment {
            base_offset: first,
            sources: group.iter().map(|s| s.base_offset).collect(),
            stats,
        })
    }

    /// `cleanInto`: the source segment in read-buffer windows, each window's whole batches
    /// through the filter, what survives appended to `dest` as one call.
    fn clean_into(
        &mut self,
        path: &Path,
        dest: &mut Segment,
        retain_legacy_deletes: bool,
        stats: &mut CleanStats,
        keys: &mut HashSet<[u8; 16]>,
    ) -> Result<()> {
        let mut w = Window::open(path)?;
        let mut cap = self.read_buffer_bytes();
        let mut position = 0u64;
        while position < w.size {
            let window = w.read(position, cap)?.to_vec();
            let entries = whole_entries(&window, path, position)?;
            let mut chunk = Chunk::new();
            let mut bytes_read = 0usize;
            for (at, entry) in &entries {
                bytes_read = at + entry.size_in_bytes();
                self.filter_batch(
                    entry,
                    path,
                    position + *at as u64,
                    retain_legacy_deletes,
                    &mut chunk,
                    stats,
                    keys,
                    dest,
                )?;
                // The write buffer outgrew its capacity: filterTo returns early (KAFKA-5316).
                if chunk.bytes.len() > cap {
                    break;
                }
            }
            if !chunk.bytes.is_empty() {
                dest.append(
                    chunk.max_offset,
                    chunk.max_timestamp,
                    chunk.shallow_offset_of_max_timestamp,
                    &chunk.bytes,
                )?;
            }
            position += bytes_read as u64;
            if !window.is_empty() && bytes_read == 0 {
                cap = self.grow(cap, &window, &w, position)?;
            }
        }
        Ok(())
    }

    /// `checkBatchRetention` + `shouldRetainRecord` + the output of `filterTo` for one batch.
    #[allow(clippy::too_many_arguments)]
    fn filter_batch(
        &mut self,
        entry: &Entry<'_>,
        path: &Path,
        position: u64,
        retain_legacy_deletes: bool,
        chunk: &mut Chunk,
        stats: &mut CleanStats,
        keys: &mut HashSet<[u8; 16]>,
        dest: &mut Segment,
    ) -> Result<()> {
        let err = |e| Error::decode(path, position, e);
        let pid = producer_id(entry);
        let mut scratch = std::mem::take(&mut self.scratch);
        let result = (|| -> Result<()> {
            let records: Vec<RecordView<'_>> = entry
                .records(&mut scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
                .map_err(err)?
                .collect::<std::result::Result<_, _>>()
                .map_err(err)?;
            stats.batches_before += 1;
            stats.bytes_before += entry.size_in_bytes() as u64;
            stats.records_before += records.len() as u64;
            let can_discard = if entry.is_control() {
                let (can, txn) = self
                    .txns
                    .on_control(entry, pid, records.first())
                    .map_err(err)?;
                if let Some(txn) = txn {
                    dest.append_aborted_txn(&txn)?;
                }
                can
            } else {
                self.txns.on_batch(entry, pid)
            };
            let horizon = match entry {
                Entry::V2(b) => b.header.delete_horizon_ms(),
                Entry::Legacy(_) => None,
            };
            let now = self.opts.now_ms;
            let discard_records = if entry.is_control() {
                can_discard && horizon.is_some_and(|h| h <= now)
            } else {
                can_discard
            };
            let last_of_producer = pid >= 0
                && self.active_producers.get(&pid).is_some_and(
                    |&(last_data, epoch)| match last_data {
                        Some(o) => entry.last_offset() == o,
                        None => entry.is_control() && producer_epoch(entry) == epoch,
                    },
                );
            let retain_empty =
                last_of_producer || entry.last_offset() + 1 == self.upper_bound_of_round;
            let marker_for_empty_txn = can_discard && entry.is_control();
            let count_removed = |stats: &mut CleanStats, records: &[RecordView<'_>]| {
                if entry.is_control() {
                    stats.markers_removed += 1;
                } else if can_discard {
                    stats.aborted_records_removed += records.len() as u64;
                }
            };
            if discard_records && !retain_empty {
                count_removed(stats, &records);
                return Ok(());
            }
            let kept = if discard_records {
                Kept {
                    records: Vec::new(),
                    all_kept: records.is_empty(),
                    max_offset: -1,
                    contains_tombstones: false,
                }
            } else {
                self.retained_records(entry, &records, retain_legacy_deletes, stats)
            };
            if discard_records {
                count_removed(stats, &records);
            }
            if !kept.records.is_empty() {
                for r in &kept.records {
                    if !entry.is_control() {
                        if let Some(k) = &r.key {
                            keys.insert(key_hash(k));
                        }
                    }
                }
                let need_horizon = entry.magic() >= MAGIC_V2
                    && (kept.contains_tombstones || marker_for_empty_txn)
                    && horizon.is_none();
                stats.batches_after += 1;
                stats.records_after += kept.records.len() as u64;
                if kept.all_kept && !need_horizon {
                    chunk.retained(
                        entry.bytes(),
                        entry.max_timestamp(),
                        entry.last_offset(),
                        entry.last_offset(),
                    );
                    stats.bytes_after += entry.size_in_bytes() as u64;
                } else {
                    if need_horizon {
                        stats.horizons_stamped += 1;
                    }
                    let new_horizon = if need_horizon {
                        Some(now.saturating_add(self.opts.delete_retention_ms))
                    } else {
                        horizon
                    };
                    let (bytes, max_ts, shallow) =
                        rebuild(entry, &kept, new_horizon).map_err(err)?;
                    stats.bytes_after += bytes.len() as u64;
                    chunk.retained(&bytes, max_ts, shallow, kept.max_offset);
                }
            } else if retain_empty {
                let Entry::V2(b) = entry else {
                    return Err(Error::invalid(
                        path,
                        format!(
                            "at byte {position}: a v0/v1 entry would have to stay as an empty batch, which only v2 can be (the broker fails the same way)"
                        ),
                    ));
                };
                let bytes = empty_batch(&b.header);
                stats.batches_after += 1;
                stats.empty_batches_kept += 1;
                stats.bytes_after += bytes.len() as u64;
                chunk.retained(
                    &bytes,
                    b.header.max_timestamp,
                    b.header.last_offset(),
                    b.header.last_offset(),
                );
            } else if entry.is_control() && !discard_records {
                stats.markers_removed += 1;
            }
            Ok(())
        })();
        self.scratch = scratch;
        result
    }

    /// The record-level rule for a batch that is not discarded whole.
    fn retained_records(
        &self,
        entry: &Entry<'_>,
        records: &[RecordView<'_>],
        retain_legacy_deletes: bool,
        stats: &mut CleanStats,
    ) -> Kept {
        let mut kept = Kept {
            records: Vec::with_capacity(records.len()),
            all_kept: true,
            max_offset: -1,
            contains_tombstones: false,
        };
        let horizon = match entry {
            Entry::V2(b) => b.header.delete_horizon_ms(),
            Entry::Legacy(_) => None,
        };
        for r in records {
            let keep = if entry.is_control() || r.offset > self.map.latest_offset {
                true
            } else if let Some(key) = r.key {
                let retain_deletes = if entry.magic() >= MAGIC_V2 {
                    horizon.is_none_or(|h| self.opts.now_ms < h)
                } else {
                    retain_legacy_deletes
                };
                r.offset >= self.map.get(key) && (r.value.is_some() || retain_deletes)
            } else {
                stats.keyless_removed += 1;
                false
            };
            let is_tombstone = r.value.is_none() && !entry.is_control();
            if keep {
                if r.legacy.is_some_and(|l| l.magic != entry.magic()) {
                    kept.all_kept = false;
                }
                kept.max_offset = kept.max_offset.max(r.offset);
                if r.value.is_none() {
                    kept.contains_tombstones = true;
                }
                if is_tombstone {
                    stats.tombstones_kept += 1;
                }
                kept.records.push(record_spec(r));
            } else {
                kept.all_kept = false;
                if is_tombstone && r.key.is_some() {
                    stats.tombstones_removed += 1;
                }
            }
        }
        kept
    }
}

fn producer_id(e: &Entry<'_>) -> i64 {
    match e {
        Entry::V2(b) => b.header.producer_id,
        Entry::Legacy(_) => -1,
    }
}

fn producer_epoch(e: &Entry<'_>) -> i16 {
    match e {
        Entry::V2(b) => b.header.producer_epoch,
        Entry::Legacy(_) => -1,
    }
}

/// `buildRetainedRecordsInto`: the kept records in a batch like the original (same magic,
/// codec at its default level, timestamp type, producer fields; v2 keeps its base and last
/// offsets). Returns the bytes, the max timestamp and the offset that goes with it.
fn rebuild(
    entry: &Entry<'_>,
    kept: &Kept,
    horizon: Option<i64>,
) -> std::result::Result<(Vec<u8>, i64, i64), crate::format::DecodeError> {
    let compression = entry.compression()?;
    let timestamp_type = entry.timestamp_type();
    let log_append = timestamp_type == crate::format::batch::TimestampType::LogAppendTime;
    match entry {
        Entry::V2(b) => {
            let h = &b.header;
            let spec = BatchSpec {
                base_offset: h.base_offset,
                partition_leader_epoch: h.partition_leader_epoch,
                compression,
                compression_level: None,
                timestamp_type,
                log_append_time: if log_append {
                    h.max_timestamp
                } else {
                    NO_TIMESTAMP
                },
                producer_id: h.producer_id,
                producer_epoch: h.producer_epoch,
                base_sequence: h.base_sequence,
                is_transactional: h.is_transactional(),
                is_control: h.is_control(),
                delete_horizon_ms: horizon,
                last_offset: Some(h.last_offset()),
            };
            let bytes = build_batch(&spec, &kept.records)?;
            let max_ts = BatchHeader::decode(&bytes)?.max_timestamp;
            let shallow = if max_ts == NO_TIMESTAMP && !log_append {
                -1
            } else {
                h.last_offset()
            };
            Ok((bytes, max_ts, shallow))
        }
        Entry::Legacy(m) => {
            let spec = LegacySetSpec {
                magic: m.magic,
                compression,
                compression_level: None,
                timestamp_type,
                log_append_time: if log_append {
                    m.timestamp
                } else {
                    NO_TIMESTAMP
                },
            };
            let bytes = build_message_set(&spec, &kept.records)?;
            let last = kept.records.last().map_or(-1, |r| r.offset);
            let max_ts = if log_append {
                m.timestamp
            } else if m.magic == 0 {
                NO_TIMESTAMP
            } else {
                kept.records
                    .iter()
                    .map(|r| r.timestamp)
                    .max()
                    .unwrap_or(NO_TIMESTAMP)
            };
            let shallow = if max_ts == NO_TIMESTAMP && !log_append {
                -1
            } else {
                last
            };
            Ok((bytes, max_ts, shallow))
        }
    }
}

/// `groupSegmentsBySize` over the segments below `end_offset`.
fn group_segments<'v>(
    segments: &[&'v SegmentView],
    max_size: u64,
    max_index_size: u64,
    first_uncleanable: i64,
) -> Vec<Vec<&'v SegmentView>> {
    let mut groups = Vec::new();
    let mut i = 0;
    while i < segments.len() {
        let first = segments[i];
        let mut group = vec![first];
        let (mut log, mut index, mut time) =
            (first.size, first.offset_index_bytes, first.time_index_bytes);
        i += 1;
        while let Some(n) = segments.get(i) {
            let last_offset = segments
                .get(i + 1)
                .map_or(first_uncleanable - 1, |s| s.base_offset - 1);
            let fits = log + n.size <= max_size
                && index + n.offset_index_bytes <= max_index_size
                && time + n.time_index_bytes <= max_index_size
                && (n.size == 0 || last_offset - first.base_offset <= i64::from(i32::MAX));
            if !fits {
                break;
            }
            log += n.size;
            index += n.offset_index_bytes;
            time += n.time_index_bytes;
            group.push(n);
            i += 1;
        }
        groups.push(group);
    }
    groups
}

/// Runs one cleaning round on the partition directory `dir` and writes the result into the
/// log dir `out_log_dir` (created; it must not exist yet or be empty): the partition under its
/// own name, and a `cleaner-offset-checkpoint` holding the new first dirty offset.
pub fn compact_to(dir: &Path, out_log_dir: &Path, opts: &CompactOptions) -> Result<CompactReport> {
    let view = PartitionView::open(dir)?;
    let (hw, lso) = partition_offsets(&view, opts.high_watermark, opts.log_start_offset)?;
    let (active_producers, first_unstable) = producer_state(&view, lso.value, opts)?;
    let last_stable = match first_unstable {
        Some(f) if f < hw.value => f.max(lso.value),
        _ => hw.value,
    };
    let leo = view.log_end_offset;
    let first_dirty = {
        let checkpointed = match opts.first_dirty_offset {
            Some(o) => Some(Sourced {
                value: o,
                source: "--first-dirty-offset".into(),
            }),
            None => view
                .checkpoint_offset(CLEANER_OFFSET_CHECKPOINT_FILE_NAME)?
                .map(|(p, o)| Sourced {
                    value: o,
                    source: p.display().to_string(),
                }),
        };
        match checkpointed {
            Some(c) if c.value >= lso.value && c.value <= leo => c,
            Some(c) => Sourced {
                value: lso.value,
                source: format!(
                    "log start offset ({} {} is out of range)",
                    c.source, c.value
                ),
            },
            None => Sourced {
                value: lso.value,
                source: "log start offset".into(),
            },
        }
    };
    let active = view.active_segment();
    let non_active = &view.segments[..view.segments.len() - 1];
    // `nonActiveLogSegmentsFrom(firstDirty)`: from the segment holding it, none in the active.
    let dirty_segments = if first_dirty.value >= active.base_offset {
        &non_active[non_active.len()..]
    } else {
        let from = non_active
            .iter()
            .rposition(|s| s.base_offset <= first_dirty.value)
            .unwrap_or(0);
        &non_active[from..]
    };
    let mut uncleanable = last_stable.min(active.base_offset);
    if opts.min_compaction_lag_ms > 0 {
        let bound = opts.now_ms.saturating_sub(opts.min_compaction_lag_ms);
        if let Some(s) = dirty_segments
            .iter()
            .find(|s| s.largest_timestamp() > bound)
        {
            uncleanable = uncleanable.min(s.base_offset);
        }
    }
    let uncleanable = uncleanable.max(first_dirty.value);
    let first_uncleanable = non_active
        .iter()
        .rposition(|s| s.base_offset <= uncleanable)
        .filter(|_| uncleanable < active.base_offset)
        .map_or(active.base_offset, |i| non_active[i].base_offset);
    let sizes: Vec<(i64, u64)> = view
        .segments
        .iter()
        .map(|s| (s.base_offset, s.size))
        .collect();
    let (cleanable_bytes, ratio) = dirty_ratio(&sizes, first_dirty.value, first_uncleanable);
    let needs_compaction_now = {
        let mut earliest = i64::MAX;
        for s in dirty_segments {
            let ts = first_batch_timestamp(&view.dir, s)?;
            if ts > 0 {
                earliest = earliest.min(ts);
            }
        }
        let clean_until = opts
            .now_ms
            .saturating_sub(opts.max_compaction_lag_ms.max(0));
        earliest != i64::MAX && clean_until > earliest
    };
    let cleaned =
        (needs_compaction_now && cleanable_bytes > 0) || ratio > opts.min_cleanable_dirty_ratio;

    let (topic, partition) = view
        .topic_partition
        .clone()
        .ok_or_else(|| Error::invalid(dir, "the directory name is not <topic>-<partition>"))?;
    let out_dir = out_log_dir.join(partition_dir_name(&topic, partition));
    if out_log_dir.exists()
        && std::fs::read_dir(out_log_dir)
            .map_err(|e| Error::io(out_log_dir, e))?
            .next()
            .is_some()
    {
        return Err(Error::invalid(
            out_log_dir,
            "the output directory exists and is not empty",
        ));
    }
    std::fs::create_dir_all(&out_dir).map_err(|e| Error::io(&out_dir, e))?;

    let slots = opts.dedupe_buffer_bytes.min(i32::MAX as u64) / OFFSET_MAP_SLOT_BYTES;
    let max_entries = (slots as f64 * OFFSET_MAP_LOAD_FACTOR) as usize;
    if max_entries < 1 {
        return Err(Error::invalid(
            dir,
            "the dedupe buffer is too small to hold one key",
        ));
    }
    let legacy_delete_horizon_ms = view
        .segments
        .iter()
        .rfind(|s| s.base_offset < first_dirty.value)
        .map_or(0, |s| s.mtime_ms - opts.delete_retention_ms);
    let mut cleaner = Cleaner {
        view: &view,
        opts,
        map: OffsetMap {
            map: HashMap::new(),
            max_entries,
            latest_offset: -1,
        },
        txns: TxnTracker::default(),
        txn_indexes: TxnIndexes::load(&view)?,
        active_producers,
        upper_bound_of_round: first_uncleanable,
        legacy_delete_horizon_ms,
        scratch: Vec::new(),
    };
    let mut report_segments = Vec::new();
    let mut end_offset = first_dirty.value;
    let mut replaced: HashSet<i64> = HashSet::new();
    if cleaned {
        cleaner.build_offset_map(first_dirty.value, first_uncleanable)?;
        end_offset = cleaner.map.latest_offset + 1;
        let below: Vec<&SegmentView> = view
            .segments
            .iter()
            .filter(|s| s.base_offset < end_offset)
            .collect();
        for group in group_segments(
            &below,
            opts.segment_bytes,
            opts.segment_index_bytes,
            first_uncleanable,
        ) {
            let c = cleaner.clean_group(&group, &out_dir)?;
            replaced.extend(group.iter().map(|s| s.base_offset));
            report_segments.push(c);
        }
    }
    copy_rest(&view, &out_dir, &replaced, &report_segments)?;
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
    let after_sizes: Vec<(i64, u64)> = sizes
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
    let (_, ratio_after) = if cleaned {
        dirty_ratio(&after_sizes, end_offset, first_uncleanable)
    } else {
        (0, ratio)
    };
    Ok(CompactReport {
        dir: dir.to_path_buf(),
        out: Some(out_dir),
        now_ms: opts.now_ms,
        log_start_offset: lso,
        high_watermark: hw,
        log_end_offset: leo,
        last_stable_offset: last_stable,
        first_dirty_offset: first_dirty,
        first_uncleanable_offset: first_uncleanable,
        dirty_ratio_before: ratio,
        dirty_ratio_after: ratio_after,
        needs_compaction_now,
        cleaned,
        end_offset,
        keys_in_map: cleaner.map.map.len() as u64,
        map_full: cleaned && cleaner.map.map.len() >= max_entries,
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
        if !e
            .file_type()
            .map_err(|err| Error::io(&from, err))?
            .is_file()
        {
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
        let to = out_dir.join(&name);
        std::fs::copy(&from, &to).map_err(|e| Error::io(&from, e))?;
        let mut perm = std::fs::metadata(&to)
            .map_err(|e| Error::io(&to, e))?
            .permissions();
        // A read-only source (an archived copy) still gives a writable result.
        #[allow(clippy::permissions_set_readonly_false)]
        perm.set_readonly(false);
        std::fs::set_permissions(&to, perm).map_err(|e| Error::io(&to, e))?;
        let when = std::time::UNIX_EPOCH
            + std::time::Duration::from_millis(mtime_ms(&from)?.max(0) as u64);
        File::options()
            .write(true)
            .open(&to)
            .and_then(|f| f.set_modified(when))
            .map_err(|e| Error::io(&to, e))?;
    }
    Ok(())
}

/// `compact --apply`: the cleaning round carried out in place with the broker's file dance
/// (`LocalLog.replaceSegments`, behavior.md §6.8), group by group: the cleaned segment's files
/// written as `.cleaned`, renamed to `.swap`, the replaced segments' files renamed to
/// `.deleted` and deleted, the `.swap` files renamed to their final names; then the replaced
/// bases' producer snapshots go the same two-step way and the log dir's
/// `cleaner-offset-checkpoint` takes the new first dirty offset. Computed with [`compact_to`]
/// into a scratch dir, so the result is byte for byte what `--out` writes. A crash at any
/// point leaves a directory the broker's loader (and `kseg recover`) resolves to either the
/// old or the new segments of the interrupted group.
#[derive(Debug)]
pub struct CompactPlan {
    pub report: CompactReport,
    pub changes: Vec<crate::ops::repair::apply::Change>,
    _scratch: tempfile::TempDir,
}

impl CompactPlan {
    pub fn apply(&self, opts: &crate::ops::repair::apply::ApplyOptions) -> Result<Option<PathBuf>> {
        let plan = serde_json::json!({ "report": self.report, "changes": self.changes });
        crate::ops::repair::apply::apply(&self.report.dir, &self.changes, &plan.to_string(), opts)
    }
}

/// The leftovers of an interrupted swap or deletion (`.cleaned`, `.swap`, `.deleted`) in `dir`.
fn leftovers(dir: &Path) -> Result<Vec<PathBuf>> {
    use crate::format::names::{CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, SWAP_FILE_SUFFIX};
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let n = e.map_err(|e| Error::io(dir, e))?.file_name();
        let n = n.to_string_lossy();
        if [CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX, DELETED_FILE_SUFFIX]
            .iter()
            .any(|s| n.ends_with(s))
        {
            out.push(dir.join(&*n));
        }
    }
    Ok(out)
}

/// When `dir` holds leftovers of an interrupted `compact --apply` (or of the broker's own
/// cleaner), the recovery that resolves them as the broker's loader does at start-up: what a
/// rerun of `compact --apply` carries out before cleaning again.
pub fn plan_resolve_leftovers(dir: &Path, opts: &CompactOptions) -> Result<Option<RecoverPlan>> {
    if !dir.is_dir() {
        return Err(Error::invalid(dir, "not a partition directory"));
    }
    if leftovers(dir)?.is_empty() {
        return Ok(None);
    }
    let recover_opts = RecoverOptions {
        config: LogConfig {
            segment_bytes: opts.segment_bytes,
            segment_index_bytes: opts.segment_index_bytes,
            index_interval_bytes: opts.index_interval_bytes,
            ..LogConfig::default()
        },
        now_ms: opts.now_ms,
        recovery_point: None,
        producer_id_expiration_ms: opts.producer_id_expiration_ms,
    };
    recover_plan(dir, &recover_opts).map(Some)
}

/// Plans `compact --apply` on the partition directory `dir`. Refuses a directory holding
/// leftovers of an interrupted swap: [`plan_resolve_leftovers`] resolves them first.
pub fn plan_apply(dir: &Path, opts: &CompactOptions) -> Result<CompactPlan> {
    use crate::ops::repair::apply::Change;
    if !dir.is_dir() {
        return Err(Error::invalid(dir, "not a partition directory"));
    }
    if let Some(p) = leftovers(dir)?.first() {
        return Err(Error::invalid(
            p,
            "a leftover of an interrupted swap or deletion; resolve it first (rerun `kseg compact --apply`, or `kseg recover --apply`)",
        ));
    }
    let scratch = tempfile::tempdir().map_err(|e| Error::io(&std::env::temp_dir(), e))?;
    let out_log_dir = scratch.path().join("out");
    let mut report = compact_to(dir, &out_log_dir, opts)?;
    let out = report.out.take().unwrap_or_default();
    let mut changes = Vec::new();
    if report.cleaned {
        let new_bases: HashSet<i64> = report.segments.iter().map(|s| s.base_offset).collect();
        let mut snapshots = Vec::new();
        // One replace per new segment, as the cleaner calls it once per group.
        for seg in &report.segments {
            let new = staged_segment(&out, seg.base_offset, dir);
            let old: Vec<PathBuf> = seg
                .sources
                .iter()
                .flat_map(|&old| segment_files(dir, old))
                .collect();
            changes.extend(crate::ops::repair::apply::replace_segments(&[new], &old)?);
            for &old in &seg.sources {
                let snap = dir.join(crate::format::names::snapshot_file_name(old));
                if !new_bases.contains(&old) && snap.is_file() {
                    snapshots.push(snap);
                }
            }
        }
        // The replaced bases' snapshots go the way of their segments (renamed, then deleted).
        changes.extend(crate::ops::repair::apply::replace_segments(
            &[],
            &snapshots,
        )?);
        // The log dir's cleaner-offset-checkpoint: this partition's entry set or added.
        let log_dir = dir.parent().unwrap_or(Path::new("."));
        let path = log_dir.join(CLEANER_OFFSET_CHECKPOINT_FILE_NAME);
        let (mut ckpt, size_before) = match std::fs::read(&path) {
            Ok(b) => (
                OffsetCheckpoint::decode(&b, &path.display().to_string())
                    .map_err(|e| Error::decode(&path, 0, e))?,
                Some(b.len() as u64),
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                (OffsetCheckpoint::default(), None)
            }
            Err(e) => return Err(Error::io(&path, e)),
        };
        let staged = out_log_dir.join(CLEANER_OFFSET_CHECKPOINT_FILE_NAME);
        let ours = OffsetCheckpoint::decode(
            &std::fs::read(&staged).map_err(|e| Error::io(&staged, e))?,
            &staged.display().to_string(),
        )
        .map_err(|e| Error::decode(&staged, 0, e))?;
        for entry in ours.entries {
            match ckpt
                .entries
                .iter_mut()
                .find(|e| e.topic == entry.topic && e.partition == entry.partition)
            {
                Some(e) => e.offset = entry.offset,
                None => ckpt.entries.push(entry),
            }
        }
        let text = ckpt.encode();
        if size_before.is_none() || std::fs::read(&path).ok().as_deref() != Some(text.as_bytes()) {
            let source = scratch.path().join(CLEANER_OFFSET_CHECKPOINT_FILE_NAME);
            std::fs::write(&source, &text).map_err(|e| Error::io(&source, e))?;
            changes.push(Change::Write {
                file: path,
                source,
                size_before,
                size_after: text.len() as u64,
            });
        }
    }
    report.out = None;
    Ok(CompactPlan {
        report,
        changes,
        _scratch: scratch,
    })
}
