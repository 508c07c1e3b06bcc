//! A partition directory as the broker writes it: segments by base offset, the log start and
//! end offsets, producer state, the leader epoch cache and `partition.metadata`
//! (behavior.md §1, §3, §4).
//!
//! Appends follow the broker's *follower* path (`UnifiedLog.appendAsFollower`): offsets come
//! with the batches and are only checked, never assigned, and nothing is recompressed. Per
//! append call: validate, assign leader epochs, maybe roll, append to the active segment (one
//! index decision per call), apply producer state, index aborted transactions in the segment
//! that got the marker. Rolls snapshot producer state under the new segment's base offset; a
//! clean close flushes the active segment (its indexes exist afterwards), snapshots producer
//! state under the log end offset and trims the active indexes, a crash
//! close leaves everything as a killed broker would.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::leader_epoch::LeaderEpochCache;
use super::producer_state::ProducerStateManager;
use super::read::PartitionRecords;
use super::seek::{Seeker, TimeHit};
use super::segment::{BatchLocation, RollParams, Segment, SegmentConfig};
use crate::error::{Error, Result};
use crate::format::batch::MAGIC_V2;
use crate::format::checkpoint::{PartitionMetadata, PARTITION_METADATA_VERSION, UUID_BYTES};
use crate::format::entry::{frame_at, Entry, Frame};
use crate::format::index::AbortedTxn;
use crate::format::names::PARTITION_METADATA_FILE_NAME;

/// The topic settings the engine applies. Defaults are Kafka's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogConfig {
    /// `segment.bytes`.
    pub segment_bytes: u64,
    /// `segment.ms` (no jitter, not compacted).
    pub segment_ms: i64,
    /// `index.interval.bytes`.
    pub index_interval_bytes: u64,
    /// `segment.index.bytes`.
    pub segment_index_bytes: u64,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            segment_bytes: 1 << 30,
            segment_ms: 7 * 24 * 3600 * 1000,
            index_interval_bytes: 4096,
            segment_index_bytes: 10 << 20,
        }
    }
}

impl LogConfig {
    pub(super) fn segment_config(&self) -> SegmentConfig {
        SegmentConfig {
            index_interval_bytes: self.index_interval_bytes,
            max_index_bytes: self.segment_index_bytes,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseMode {
    /// Broker shutdown: producer snapshot at the log end offset, active indexes trimmed.
    Clean,
    /// The process died: active indexes stay preallocated, no shutdown snapshot.
    Crash,
}

/// Why a segment was rolled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RollReason {
    /// `maybeRoll` before an append: size, time, full index or offset overflow.
    MaybeRoll,
    /// An explicit roll request (a spec's `roll` op: `"spec"` in `write-summary.json`).
    Requested,
}

impl RollReason {
    pub fn name(self) -> &'static str {
        match self {
            RollReason::MaybeRoll => "maybeRoll",
            RollReason::Requested => "spec",
        }
    }
}

/// What the engine did that a caller may want to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEvent {
    Roll {
        /// The new segment's base offset.
        offset: i64,
        reason: RollReason,
        /// The snapshot file the roll wrote, if the offset moved past the last one.
        snapshot: Option<String>,
    },
    AbortedTxnIndexed {
        /// Base offset of the segment whose `.txnindex` got the entry.
        segment: i64,
        txn: AbortedTxn,
    },
}

/// What one append call carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogAppendInfo {
    /// The first batch's base offset; None for v0/v1, whose first offset is not in the header.
    pub first_offset: Option<i64>,
    pub last_offset: i64,
    /// The largest batch max timestamp, -1 if none has one.
    pub max_timestamp: i64,
    /// The last offset of the first batch that reached `max_timestamp`.
    pub shallow_offset_of_max_timestamp: i64,
    pub valid_bytes: u64,
    /// Base offset of the segment the call went to.
    pub segment_base_offset: i64,
}

#[derive(Debug)]
pub struct Log {
    dir: PathBuf,
    config: LogConfig,
    segments: BTreeMap<i64, Segment>,
    log_start_offset: i64,
    log_end_offset: i64,
    producer_state: ProducerStateManager,
    leader_epochs: LeaderEpochCache,
    now_ms: i64,
    events: Vec<LogEvent>,
}

impl Log {
    /// Creates the partition directory `dir` with one empty segment at `start_offset`,
    /// `partition.metadata` for `topic_id` and an empty leader-epoch checkpoint.
    pub fn create(
        dir: &Path,
        config: LogConfig,
        start_offset: i64,
        topic_id: [u8; UUID_BYTES],
        now_ms: i64,
    ) -> Result<Self> {
        if topic_id == [0; UUID_BYTES] {
            return Err(Error::invalid(dir, "the all-zero topic id is not valid"));
        }
        if start_offset < 0 {
            return Err(Error::invalid(
                dir,
                format!("log start offset {start_offset} is negative"),
            ));
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        // Written without a trailing newline, via a temp file, as PartitionMetadataFile does.
        let meta = dir.join(PARTITION_METADATA_FILE_NAME);
        let tmp = meta.with_extension("metadata.tmp");
        let text = PartitionMetadata {
            version: PARTITION_METADATA_VERSION,
            topic_id,
        }
        .encode();
        std::fs::write(&tmp, text).map_err(|e| Error::io(&meta, e))?;
        super::files::rename(&tmp, &meta)?;
        let leader_epochs = LeaderEpochCache::create(dir)?;
        let first = Segment::create(dir, start_offset, config.segment_config(), now_ms)?;
        Ok(Log {
            dir: dir.to_path_buf(),
            config,
            segments: BTreeMap::from([(start_offset, first)]),
            log_start_offset: start_offset,
            log_end_offset: start_offset,
            producer_state: ProducerStateManager::new(dir, start_offset),
            leader_epochs,
            now_ms,
            events: Vec::new(),
        })
    }

    /// A log the loader put together.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn from_loaded(
        dir: &Path,
        config: LogConfig,
        segments: BTreeMap<i64, Segment>,
        log_start_offset: i64,
        log_end_offset: i64,
        producer_state: ProducerStateManager,
        leader_epochs: LeaderEpochCache,
        now_ms: i64,
    ) -> Self {
        Log {
            dir: dir.to_path_buf(),
            config,
            segments,
            log_start_offset,
            log_end_offset,
            producer_state,
            leader_epochs,
            now_ms,
            events: Vec::new(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn config(&self) -> &LogConfig {
        &self.config
    }

    pub fn log_start_offset(&self) -> i64 {
        self.log_start_offset
    }

    pub fn log_end_offset(&self) -> i64 {
        self.log_end_offset
    }

    /// The broker clock (used for `segment.ms` when record timestamps are absent).
    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    pub fn advance_clock(&mut self, ms: i64) {
        self.now_ms = self.now_ms.saturating_add(ms);
    }

    pub fn segments(&self) -> impl Iterator<Item = &Segment> + '_ {
        self.segments.values()
    }

    pub fn active_segment(&self) -> &Segment {
        self.segments
            .values()
            .next_back()
            .expect("a log has a segment")
    }

    fn active_segment_mut(&mut self) -> &mut Segment {
        self.segments
            .values_mut()
            .next_back()
            .expect("a log has a segment")
    }

    pub fn producer_state(&self) -> &ProducerStateManager {
        &self.producer_state
    }

    pub fn leader_epochs(&self) -> &LeaderEpochCache {
        &self.leader_epochs
    }

    /// Rolls and aborted-transaction entries so far, in order.
    pub fn events(&self) -> &[LogEvent] {
        &self.events
    }

    /// Appends one call's worth of whole batches (`records` holds them back to back) the way a
    /// follower does. Returns None for an empty call, which changes nothing.
    pub fn append_as_follower(&mut self, records: &[u8]) -> Result<Option<LogAppendInfo>> {
        let entries = self.split_entries(records)?;
        if entries.is_empty() {
            return Ok(None);
        }
        let mut info = analyze(&self.dir, &entries)?;
        if info.last_offset == i64::MAX {
            return Err(Error::invalid(
                &self.dir,
                "an append cannot end at the largest possible offset",
            ));
        }
        let first_or_last_of_first = info
            .first_offset
            .unwrap_or_else(|| entries[0].last_offset());
        if first_or_last_of_first < self.log_end_offset {
            return Err(Error::invalid(
                &self.dir,
                format!(
                    "unexpected offset in append: {first_or_last_of_first} is less than the next offset {}",
                    self.log_end_offset
                ),
            ));
        }
        for e in &entries {
            match e {
                Entry::V2(b) => self
                    .leader_epochs
                    .assign(b.header.partition_leader_epoch, b.header.base_offset)?,
                // A message-format downgrade: the broker forgets epochs rather than keep
                // ones that no longer describe the log.
                Entry::Legacy(_) if !self.leader_epochs.entries().is_empty() => {
                    self.leader_epochs.clear_and_flush()?
                }
                Entry::Legacy(_) => {}
            }
        }
        if info.valid_bytes > self.config.segment_bytes {
            return Err(Error::invalid(
                &self.dir,
                format!(
                    "append of {} bytes exceeds segment.bytes {}",
                    info.valid_bytes, self.config.segment_bytes
                ),
            ));
        }
        self.maybe_roll(&info)?;
        let (updates, completed) = self.producer_state.collect_appends(&entries, &self.dir)?;
        let segment = self.active_segment_mut();
        info.segment_base_offset = segment.base_offset();
        segment.append(
            info.last_offset,
            info.max_timestamp,
            info.shallow_offset_of_max_timestamp,
            records,
        )?;
        self.log_end_offset = info.last_offset + 1;
        // Disjoint fields: the producer state indexes into the active segment as it goes.
        let Log {
            producer_state,
            segments,
            events,
            ..
        } = self;
        let segment = segments
            .values_mut()
            .next_back()
            .expect("a log has a segment");
        producer_state.apply_appends(updates, completed, |aborted| {
            segment.append_aborted_txn(&aborted)?;
            events.push(LogEvent::AbortedTxnIndexed {
                segment: segment.base_offset(),
                txn: aborted,
            });
            Ok(())
        })?;
        self.producer_state
            .update_map_end_offset(info.last_offset + 1);
        Ok(Some(info))
    }

    fn split_entries<'a>(&self, records: &'a [u8]) -> Result<Vec<Entry<'a>>> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < records.len() {
            match frame_at(&records[pos..]) {
                Frame::Entry { len, .. } => {
                    let e = Entry::decode(&records[pos..pos + len])
                        .map_err(|e| Error::decode(&self.dir, pos as u64, e))?;
                    out.push(e);
                    pos += len;
                }
                other => {
                    return Err(Error::invalid(
                        &self.dir,
                        format!("append data at byte {pos} is not a whole batch ({other:?})"),
                    ))
                }
            }
        }
        Ok(out)
    }

    fn maybe_roll(&mut self, info: &LogAppendInfo) -> Result<()> {
        let params = RollParams {
            max_segment_ms: self.config.segment_ms,
            max_segment_bytes: self.config.segment_bytes,
            max_timestamp_in_messages: info.max_timestamp,
            max_offset_in_messages: info.last_offset,
            messages_size: info.valid_bytes,
            now_ms: self.now_ms,
        };
        if self.active_segment_mut().should_roll(&params)? {
            // v0/v1 headers carry no first offset; Kafka's lower bound for it is safe because
            // the roll never goes below the log end offset anyway.
            let roll_offset = info
                .first_offset
                .unwrap_or(info.last_offset - i64::from(i32::MAX));
            self.roll_to(Some(roll_offset), RollReason::MaybeRoll)?;
        }
        Ok(())
    }

    /// Rolls a new active segment at the log end offset.
    pub fn roll(&mut self) -> Result<()> {
        self.roll_to(None, RollReason::Requested)
    }

    fn roll_to(&mut self, expected_next_offset: Option<i64>, reason: RollReason) -> Result<()> {
        let new_base = expected_next_offset.unwrap_or(0).max(self.log_end_offset);
        let active_base = self.active_segment().base_offset();
        if new_base == active_base {
            // KAFKA-6388: an empty active segment is replaced rather than rolled onto itself.
            if self.active_segment().size() != 0 {
                return Err(Error::invalid(
                    &self.dir,
                    format!("a segment with base offset {new_base} already exists"),
                ));
            }
        } else if new_base < active_base {
            return Err(Error::invalid(
                &self.dir,
                format!("cannot roll to {new_base}, below the active segment {active_base}"),
            ));
        } else {
            self.active_segment_mut().on_become_inactive()?;
        }
        let segment = Segment::create(
            &self.dir,
            new_base,
            self.config.segment_config(),
            self.now_ms,
        )?;
        self.segments.insert(new_base, segment);
        self.producer_state.update_map_end_offset(new_base);
        let snapshot = self.producer_state.take_snapshot()?;
        self.events.push(LogEvent::Roll {
            offset: new_base,
            reason,
            snapshot: snapshot
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned())),
        });
        Ok(())
    }

    /// `UnifiedLog.deleteSegments` for the `count` oldest segments: when all of them go, an
    /// empty segment is rolled at the log end offset first (a log always has one); the log
    /// start offset moves to the first remaining segment ([`Log::maybe_increment_log_start_offset`]);
    /// the segments' files and the producer snapshots at their bases are deleted. Returns the
    /// base offsets of the deleted segments.
    pub fn delete_oldest_segments(&mut self, count: usize) -> Result<Vec<i64>> {
        let deletable: Vec<i64> = self.segments.keys().take(count).copied().collect();
        let mut to_delete = deletable.clone();
        if !deletable.is_empty() && deletable.len() == self.segments.len() {
            self.roll()?;
            // An empty active segment rolled onto itself was replaced, not deleted.
            let new_base = self.active_segment().base_offset();
            to_delete.retain(|&b| b != new_base);
        }
        if let Some(&last) = to_delete.last() {
            let next = *self
                .segments
                .range(last + 1..)
                .next()
                .expect("a segment above the deleted ones")
                .0;
            self.maybe_increment_log_start_offset(next)?;
            for base in &to_delete {
                if let Some(segment) = self.segments.remove(base) {
                    segment.delete()?;
                }
            }
        }
        // The snapshots of every deletable segment go, as `deleteProducerSnapshots` is given
        // `deletable`, not only the segments removed.
        for &base in &deletable {
            self.producer_state.delete_snapshot_of_segment(base)?;
        }
        Ok(to_delete)
    }

    /// `UnifiedLog.maybeIncrementLogStartOffset`: a higher log start offset cuts the leader
    /// epoch cache from the start (`truncateFromStart`) and tells the producer state
    /// (`onLogStartOffsetIncremented`). The caller keeps the high watermark at or above it.
    fn maybe_increment_log_start_offset(&mut self, offset: i64) -> Result<bool> {
        if offset <= self.log_start_offset {
            return Ok(false);
        }
        self.log_start_offset = offset;
        self.leader_epochs.truncate_from_start(offset)?;
        self.producer_state.on_log_start_offset_incremented(offset);
        Ok(true)
    }

    /// The segment holding `offset` and the batch in it that contains it (a fetch starts at
    /// that batch's position).
    pub fn translate_offset(&self, offset: i64) -> Result<Option<(i64, BatchLocation)>> {
        let floor = self
            .segments
            .range(..=offset)
            .next_back()
            .map_or(self.log_start_offset, |(&base, _)| base);
        for (&base, segment) in self.segments.range(floor..) {
            if let Some(loc) = segment.translate_offset(offset, 0)? {
                return Ok(Some((base, loc)));
            }
        }
        Ok(None)
    }

    /// `fetchOffsetByTimestamp` for an ordinary target: search only the first segment whose
    /// largest timestamp reaches `target`. Returns `(timestamp, offset)`.
    pub fn find_offset_by_timestamp(&self, target: i64) -> Result<Option<(i64, i64)>> {
        for segment in self.segments.values() {
            // Kafka falls back to the file's mtime when a segment has no timestamps; a segment
            // written here without timestamps simply never matches.
            if segment.max_timestamp_so_far().timestamp >= target {
                return segment.find_offset_by_timestamp(target, self.log_start_offset);
            }
        }
        Ok(None)
    }

    /// The records from `offset` on, read from this log's files as a fetch reads them: the
    /// batch holding `offset` is found through the indexes, then one batch at a time (see
    /// [`PartitionRecords`]; `with_filter` chooses records). Appends not yet flushed are not seen.
    pub fn read_from(&self, offset: i64) -> Result<PartitionRecords> {
        PartitionRecords::open(&self.dir, offset.max(self.log_start_offset))
    }

    /// `fetchOffsetByTimestamp(ts)` from the files: the first record at or after the log start
    /// whose timestamp is `>= ts`, searched from the segment and time-index entry the broker
    /// picks; None when there is none.
    pub fn seek_time(&self, ts: i64) -> Result<Option<TimeHit>> {
        Seeker::open(&self.dir)?.offset_for_time(ts, self.log_start_offset)
    }

    /// Closes the log. Clean: the active segment flushed (its indexes exist afterwards), a
    /// producer snapshot at the log end offset, then every segment closed (the active one
    /// gets its final time-index entry and trimmed indexes). Crash:
    /// the files stay exactly as they are now.
    pub fn close(mut self, mode: CloseMode) -> Result<()> {
        match mode {
            CloseMode::Clean => {
                // `LogManager.shutdown` flushes each log to its end first (`flush(true)`): the
                // flush reaches the active segment, whatever the recovery point.
                self.active_segment_mut().flush_with_indexes()?;
                self.producer_state.take_snapshot()?;
                for segment in self.segments.values_mut() {
                    segment.close()?;
                }
            }
            CloseMode::Crash => {
                for segment in self.segments.values_mut() {
                    segment.flush()?;
                }
            }
        }
        Ok(())
    }
}

/// `analyzeAndValidateRecords` for the follower path: CRCs, strictly increasing last offsets,
/// the first offset, the max timestamp and which batch reached it first.
fn analyze(dir: &Path, entries: &[Entry<'_>]) -> Result<LogAppendInfo> {
    let mut info = LogAppendInfo {
        first_offset: None,
        last_offset: -1,
        max_timestamp: -1,
        shallow_offset_of_max_timestamp: -1,
        valid_bytes: 0,
        segment_base_offset: -1,
    };
    for (i, e) in entries.iter().enumerate() {
        if i == 0 && e.magic() >= MAGIC_V2 {
            if let Entry::V2(b) = e {
                info.first_offset = Some(b.header.base_offset);
            }
        }
        let last = e.last_offset();
        if i > 0 && info.last_offset >= last {
            return Err(Error::invalid(
                dir,
                format!(
                    "out of order offsets in append: {last} after {}",
                    info.last_offset
                ),
            ));
        }
        info.last_offset = last;
        if !e.crc_is_valid() {
            return Err(Error::invalid(
                dir,
                format!(
                    "record is corrupt (stored crc = {}, computed {}) at offset {last}",
                    e.stored_crc(),
                    e.compute_crc()
                ),
            ));
        }
        if e.max_timestamp() > info.max_timestamp {
            info.max_timestamp = e.max_timestamp();
            info.shallow_offset_of_max_timestamp = last;
        }
        info.valid_bytes += e.size_in_bytes() as u64;
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch::{build_batch, BatchSpec, RecordSpec, TimestampType};
    use crate::format::legacy::{build_message_set, LegacySetSpec};
    use crate::format::Compression;

    const TOPIC_ID: [u8; UUID_BYTES] = [7; UUID_BYTES];

    fn records(first: i64, n: i64, ts: i64) -> Vec<RecordSpec> {
        (0..n)
            .map(|i| RecordSpec {
                offset: first + i,
                timestamp: ts + i,
                key: Some(b"k".to_vec()),
                value: Some(vec![b'v'; 50]),
                headers: vec![],
            })
            .collect()
    }

    fn v2(base: i64, n: i64, ts: i64, epoch: i32) -> Vec<u8> {
        let spec = BatchSpec {
            base_offset: base,
            partition_leader_epoch: epoch,
            ..Default::default()
        };
        build_batch(&spec, &records(base, n, ts)).unwrap()
    }

    fn new_log(config: LogConfig) -> (tempfile::TempDir, Log) {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::create(&dir.path().join("t-0"), config, 0, TOPIC_ID, 1_000_000).unwrap();
        (dir, log)
    }

    fn rolls(log: &Log) -> Vec<i64> {
        log.events()
            .iter()
            .filter_map(|e| match e {
                LogEvent::Roll { offset, .. } => Some(*offset),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn time_index_full_one_slot_early_rolls() {
        let (_d, mut log) = new_log(LogConfig {
            index_interval_bytes: 0,
            segment_index_bytes: 36,
            ..Default::default()
        });
        for o in 0..4 {
            log.append_as_follower(&v2(o, 1, 100 + o, 0)).unwrap();
        }
        // Appends 2 and 3 add entries; two of three time slots make the index full.
        assert_eq!(rolls(&log), vec![3]);
        let first = log.segments().next().unwrap();
        assert_eq!(first.time_index().len(), 2);
        assert_eq!(first.offset_index().len(), 2);
    }

    #[test]
    fn relative_offset_overflow_rolls_at_the_batch_base() {
        let (_d, mut log) = new_log(LogConfig::default());
        log.append_as_follower(&v2(0, 1, 100, 0)).unwrap();
        let far = i64::from(i32::MAX) + 10;
        log.append_as_follower(&v2(far, 1, 101, 0)).unwrap();
        assert_eq!(rolls(&log), vec![far]);
        assert_eq!(log.log_end_offset(), far + 1);
        assert!(log.dir().join("00000000002147483657.snapshot").exists());
    }

    #[test]
    fn segment_ms_rolls_on_record_time() {
        let (_d, mut log) = new_log(LogConfig {
            segment_ms: 1000,
            ..Default::default()
        });
        log.append_as_follower(&v2(0, 1, 5000, 0)).unwrap();
        log.advance_clock(1_000_000);
        log.append_as_follower(&v2(1, 1, 6000, 0)).unwrap();
        assert!(rolls(&log).is_empty(), "exactly segment.ms does not roll");
        log.append_as_follower(&v2(2, 1, 6001, 0)).unwrap();
        assert_eq!(rolls(&log), vec![2]);
    }

    #[test]
    fn epochs_truncate_on_lower_epoch_and_clear_on_legacy() {
        let (_d, mut log) = new_log(LogConfig::default());
        log.append_as_follower(&v2(0, 2, 100, 5)).unwrap();
        log.append_as_follower(&v2(2, 1, 100, 3)).unwrap();
        let pairs: Vec<_> = log
            .leader_epochs()
            .entries()
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect();
        assert_eq!(pairs, vec![(3, 2)]);
        let legacy = LegacySetSpec {
            magic: 1,
            compression: Compression::None,
            compression_level: None,
            timestamp_type: TimestampType::CreateTime,
            log_append_time: -1,
        };
        log.append_as_follower(&build_message_set(&legacy, &records(3, 1, 100)).unwrap())
            .unwrap();
        let text = std::fs::read_to_string(log.dir().join("leader-epoch-checkpoint")).unwrap();
        assert_eq!(text, "0\n0\n");
    }

    #[test]
    fn crash_leaves_preallocated_indexes_and_no_close_snapshot() {
        let (_d, mut log) = new_log(LogConfig {
            segment_index_bytes: 100,
            ..Default::default()
        });
        log.append_as_follower(&v2(0, 3, 100, 0)).unwrap();
        let dir = log.dir().to_path_buf();
        log.close(CloseMode::Crash).unwrap();
        let len = |n: &str| std::fs::metadata(dir.join(n)).unwrap().len();
        assert_eq!(len("00000000000000000000.index"), 96);
        assert_eq!(len("00000000000000000000.timeindex"), 96);
        assert!(!dir.join("00000000000000000003.snapshot").exists());
    }

    #[test]
    fn clean_close_trims_and_snapshots_at_log_end() {
        let (_d, mut log) = new_log(LogConfig::default());
        let mut batch = v2(0, 3, 100, 0);
        batch.extend(v2(3, 2, 90, 0));
        log.append_as_follower(&batch).unwrap();
        let dir = log.dir().to_path_buf();
        log.close(CloseMode::Clean).unwrap();
        let bytes = |n: &str| std::fs::read(dir.join(n)).unwrap();
        assert!(bytes("00000000000000000000.index").is_empty());
        // The final entry: max timestamp 102 at the last offset of the batch holding it.
        assert_eq!(bytes("00000000000000000000.timeindex"), {
            let mut e = 102i64.to_be_bytes().to_vec();
            e.extend(2i32.to_be_bytes());
            e
        });
        assert!(dir.join("00000000000000000005.snapshot").exists());
    }

    #[test]
    fn lookups_find_whole_batches_and_first_matching_record() {
        let (_d, mut log) = new_log(LogConfig {
            index_interval_bytes: 1,
            segment_bytes: 400,
            ..Default::default()
        });
        for i in 0..6 {
            log.append_as_follower(&v2(i * 3, 3, 1000 + i * 10, 0))
                .unwrap();
        }
        assert!(log.segments().count() > 1);
        let (base, loc) = log.translate_offset(7).unwrap().unwrap();
        assert!(base <= 6);
        assert_eq!(loc.last_offset, 8);
        assert_eq!(log.translate_offset(18).unwrap(), None);
        assert_eq!(
            log.find_offset_by_timestamp(1031).unwrap(),
            Some((1031, 10))
        );
        assert_eq!(
            log.find_offset_by_timestamp(1033).unwrap(),
            Some((1040, 12))
        );
        assert_eq!(log.find_offset_by_timestamp(5000).unwrap(), None);
    }

    #[test]
    fn bad_appends_are_errors() {
        let (_d, mut log) = new_log(LogConfig::default());
        log.append_as_follower(&v2(0, 2, 100, 0)).unwrap();
        assert!(
            log.append_as_follower(&v2(1, 1, 100, 0)).is_err(),
            "below the log end"
        );
        let mut torn = v2(2, 1, 100, 0);
        torn.truncate(40);
        assert!(log.append_as_follower(&torn).is_err());
        let mut flipped = v2(2, 1, 100, 0);
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert!(log.append_as_follower(&flipped).is_err(), "CRC");
        assert!(log.append_as_follower(&[0xff; 100]).is_err());
        assert_eq!(log.append_as_follower(&[]).unwrap(), None);
        assert_eq!(log.log_end_offset(), 2);
    }
}
