//! One segment: the `.log` of one base offset with its `.index`, `.timeindex` and `.txnindex`
//! (behavior.md §1.2–§1.7, §7.1–§7.4).
//!
//! Owns the append-time index rule — one offset-index entry per append *call*, keyed by the
//! call's last offset at the call's start position, once more than `index.interval.bytes` were
//! appended by earlier calls — the in-memory max timestamp so far, the roll test, what becomes
//! of the files on roll and close, and the lookups. Not which segment an append goes to, nor
//! producer state (see [`super::log::Log`]).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::files;
use super::index::{OffsetIndex, TimeIndex};
use super::leader_epoch::LeaderEpochCache;
use super::log_reader::{torn_tail, LogReader, Step};
use super::producer_state::{ProducerAppends, ProducerStateManager};
use super::seek::{scan_for_offset, scan_for_time};
use super::txn_index::TxnIndex;
use crate::error::{Error, Result};
use crate::format::batch::MAGIC_V2;
use crate::format::entry::Entry;
use crate::format::index::{AbortedTxn, OffsetIndexEntry, TimeIndexEntry};
use crate::format::names::{
    index_file_name, log_file_name, time_index_file_name, txn_index_file_name,
};

fn open_for_writes(p: &Path) -> Result<File> {
    files::prepare_write(p, true)?;
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(p)
        .map_err(|e| Error::io(p, e))
}

/// The segment settings of `LogConfig` that a segment itself applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentConfig {
    /// `index.interval.bytes`.
    pub index_interval_bytes: u64,
    /// `segment.index.bytes`: the preallocated size of a new index file.
    pub max_index_bytes: u64,
}

/// What `LogSegment.shouldRoll` is asked with.
#[derive(Debug, Clone, Copy)]
pub struct RollParams {
    pub max_segment_ms: i64,
    pub max_segment_bytes: u64,
    pub max_timestamp_in_messages: i64,
    pub max_offset_in_messages: i64,
    pub messages_size: u64,
    pub now_ms: i64,
}

/// The batch that holds an offset: its last offset, start position and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchLocation {
    pub last_offset: i64,
    pub position: u64,
    pub size: u64,
}

/// Why recovery stopped reading a segment before its end: the first bad position and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InvalidData {
    pub position: u64,
    pub reason: String,
}

/// What `LogSegment.recover` did to one segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoverOutcome {
    /// Bytes cut from the end of the `.log`.
    pub truncated_bytes: u64,
    /// Where the valid data ended and why (None when the whole file was valid).
    pub invalid: Option<InvalidData>,
}

/// Why `LogSegment.recover` stopped with an exception the loader handles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecoverStopped {
    /// An offset that does not go forward (Kafka's InvalidOffsetException): the loader empties
    /// the segment.
    WentBack(InvalidData),
    /// A batch's last offset does not fit the segment's relative range (Kafka's
    /// LogSegmentOffsetOverflowException, only possible in legacy segments): the loader splits
    /// the segment. Nothing was cut.
    Overflow { position: u64, offset: i64 },
}

#[derive(Debug)]
pub struct Segment {
    base_offset: i64,
    log_path: PathBuf,
    /// The `.log` open for writing, from the first write (an append or a cut) until the segment
    /// becomes inactive or closes; reads open the file themselves ([`LogReader`]). A loaded
    /// partition of 100,000 segments holds no descriptor per segment: the broker opens every
    /// one, but an offline tool must not fail on a partition larger than `ulimit -n`.
    log: Option<File>,
    size: u64,
    offset_index: OffsetIndex,
    time_index: TimeIndex,
    txn_index: TxnIndex,
    config: SegmentConfig,
    /// Reset whenever the segment object is created; never derived from the file.
    bytes_since_last_index_entry: u64,
    /// None until first needed, then loaded from the time index's last entry, as Kafka does.
    max_timestamp_so_far: Option<TimeIndexEntry>,
    /// The largest timestamp of the first append call; drives `segment.ms` rolling.
    rolling_based_timestamp: Option<i64>,
    /// Broker clock when this segment object was made: the `segment.ms` fallback.
    created_ms: i64,
}

impl Segment {
    /// Creates the empty `.log` of a new segment (replacing stale files of that base, as a roll
    /// does); the indexes appear on first access.
    pub fn create(
        dir: &Path,
        base_offset: i64,
        config: SegmentConfig,
        now_ms: i64,
    ) -> Result<Self> {
        let log_path = dir.join(log_file_name(base_offset));
        for stale in [
            dir.join(index_file_name(base_offset)),
            dir.join(time_index_file_name(base_offset)),
            dir.join(txn_index_file_name(base_offset)),
        ] {
            files::remove_file(&stale)?;
        }
        let log = files::create_truncated(&log_path)?;
        let mut segment = Segment::create_unchecked(dir, base_offset, config, now_ms);
        segment.log = Some(log);
        Ok(segment)
    }

    /// Opens the existing segment of `base_offset` in `dir`; its indexes stay untouched until
    /// first used, as Kafka's lazy indexes do.
    pub fn open(dir: &Path, base_offset: i64, config: SegmentConfig, now_ms: i64) -> Result<Self> {
        let log_path = dir.join(log_file_name(base_offset));
        // One stat, no descriptor kept (see `Segment::log`).
        let size = files::file_len(&log_path)?;
        let mut segment = Segment::create_unchecked(dir, base_offset, config, now_ms);
        segment.size = size;
        Ok(segment)
    }

    fn create_unchecked(dir: &Path, base_offset: i64, config: SegmentConfig, now_ms: i64) -> Self {
        Segment {
            base_offset,
            log_path: dir.join(log_file_name(base_offset)),
            log: None,
            size: 0,
            offset_index: OffsetIndex::new(
                dir.join(index_file_name(base_offset)),
                base_offset,
                config.max_index_bytes,
            ),
            time_index: TimeIndex::new(
                dir.join(time_index_file_name(base_offset)),
                base_offset,
                config.max_index_bytes,
            ),
            txn_index: TxnIndex::new(dir.join(txn_index_file_name(base_offset))),
            config,
            bytes_since_last_index_entry: 0,
            max_timestamp_so_far: None,
            rolling_based_timestamp: None,
            created_ms: now_ms,
        }
    }

    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// The loader's `sanityCheck`: None when the segment can be used as it is, else why it
    /// must be recovered (no `.index`, or a `.txnindex` entry ending before the base offset).
    /// A missing `.timeindex` is created empty and stays so.
    pub fn sanity_check(&mut self, time_index_newly_created: bool) -> Result<Option<String>> {
        if !files::exists(self.offset_index.path())? {
            return Ok(Some(format!(
                "offset index {} does not exist",
                self.offset_index.path().display()
            )));
        }
        if time_index_newly_created {
            self.time_index.resize_to_empty()?;
        }
        Ok(self.txn_index.sanity_check(self.base_offset)?.err())
    }

    /// `LogSegment.recover`: rebuilds the three indexes from the `.log` with the recovery
    /// index rule (one entry per batch once more than `index.interval.bytes` passed since the
    /// last indexed batch *start*), replays producer state and leader epochs into `state` and
    /// `epochs`, and cuts the `.log` at the first invalid batch. An offset that does not go
    /// forward, or one outside the relative range, is returned as [`RecoverStopped`] with
    /// nothing cut yet.
    pub fn recover(
        &mut self,
        state: &mut ProducerStateManager,
        epochs: &mut LeaderEpochCache,
    ) -> Result<std::result::Result<RecoverOutcome, RecoverStopped>> {
        self.offset_index.reset()?;
        self.time_index.reset()?;
        self.txn_index.reset()?;
        self.max_timestamp_so_far = None;
        let mut valid_bytes = 0u64;
        let mut last_index_entry = 0u64;
        // An empty `.log` holds no batch: not opened (over many empty segments, an open each).
        let mut reader = match self.size {
            0 => None,
            _ => Some(LogReader::open(&self.log_path, None)?.with_max_entry_bytes(u64::MAX)),
        };
        let invalid = loop {
            let Some(reader) = reader.as_mut() else {
                break None;
            };
            let (position, entry) = match reader.next_step()? {
                Step::Entry { position, entry } => (position, entry),
                Step::End {
                    position,
                    trailing,
                    truncated_len,
                } => {
                    break (trailing > 0).then(|| InvalidData {
                        position,
                        reason: format!("torn write: {}", torn_tail(trailing, truncated_len)),
                    })
                }
                Step::SizeTooSmall { position, size } => {
                    break Some(InvalidData {
                        position,
                        reason: format!(
                            "size field {size} is below the minimum of 14 (CorruptRecordException)"
                        ),
                    })
                }
                Step::BadEntry {
                    position, error, ..
                } => {
                    break Some(InvalidData {
                        position,
                        reason: format!("invalid batch: {} (at byte {})", error.message, error.pos),
                    })
                }
                Step::BadCrc {
                    position,
                    stored: Some(stored),
                    computed: Some(computed),
                    ..
                } => {
                    break Some(InvalidData {
                        position,
                        reason: format!(
                            "record is corrupt (stored crc = {stored}, computed crc = {computed})"
                        ),
                    })
                }
                ref bad @ Step::BadCrc { position, .. } => {
                    break Some(InvalidData {
                        position,
                        reason: format!("invalid batch: {}", bad.bad_crc().unwrap_or_default()),
                    })
                }
                Step::TooLarge { position, len } => {
                    break Some(InvalidData {
                        position,
                        reason: format!("batch of {len} bytes is larger than any segment"),
                    })
                }
            };
            if !entry.crc_is_valid() {
                break Some(InvalidData {
                    position,
                    reason: format!(
                        "record is corrupt (stored crc = {}, computed crc = {})",
                        entry.stored_crc(),
                        entry.compute_crc()
                    ),
                });
            }
            let last_offset = entry.last_offset();
            if !self.can_convert_to_relative_offset(last_offset) {
                return Ok(Err(RecoverStopped::Overflow {
                    position,
                    offset: last_offset,
                }));
            }
            let went_back = |what: &str, last: i64| {
                Ok(Err(RecoverStopped::WentBack(InvalidData {
                    position,
                    reason: format!(
                        "offset {last_offset} is not above the {what} {last} (InvalidOffsetException)"
                    ),
                })))
            };
            let mut max = self.max_timestamp_and_offset_so_far();
            if entry.max_timestamp() > max.timestamp {
                max = TimeIndexEntry {
                    timestamp: entry.max_timestamp(),
                    offset: last_offset,
                };
                self.max_timestamp_so_far = Some(max);
            }
            if valid_bytes - last_index_entry > self.config.index_interval_bytes {
                if let Some(last) = self.offset_index.last_entry() {
                    if last_offset <= last.offset {
                        return went_back("last indexed offset", last.offset);
                    }
                }
                let last_time = self.time_index.last_entry();
                if !self.time_index.is_empty() && max.offset < last_time.offset {
                    return went_back("last time-indexed offset", last_time.offset);
                }
                let position = i32::try_from(valid_bytes).map_err(|_| {
                    Error::invalid(&self.log_path, "segment position exceeds 2^31 - 1")
                })?;
                self.offset_index.append(last_offset, position)?;
                self.time_index
                    .maybe_append(max.timestamp, max.offset, false)?;
                last_index_entry = valid_bytes;
            }
            valid_bytes += entry.size_in_bytes() as u64;
            if let Entry::V2(b) = &entry {
                epochs.assign_if_newer(b.header.partition_leader_epoch, b.header.base_offset)?;
                self.apply_producer_state(state, &entry)?;
            }
        };
        let truncated_bytes = self.size - valid_bytes;
        // Only a real cut touches the file, as `FileRecords.truncateTo`: the mtime of a
        // segment without timestamps is what retention goes by.
        if truncated_bytes > 0 {
            self.cut_log(valid_bytes)?;
        }
        self.size = valid_bytes;
        self.offset_index.trim_to_valid_size()?;
        let max = self.max_timestamp_and_offset_so_far();
        // The closing time-index entry names the offset of the largest timestamp; when a
        // batch with a larger offset came before it (offsets went back between index
        // entries), Kafka's `TimeIndex.maybeAppend` raises InvalidOffsetException here, which
        // the loader catches by emptying the segment (`LogLoader.recoverLog`).
        let last_time = self.time_index.last_entry();
        if !self.time_index.is_empty() && max.offset < last_time.offset {
            return Ok(Err(RecoverStopped::WentBack(InvalidData {
                position: valid_bytes,
                reason: format!(
                    "the segment's largest timestamp is at offset {}, below the last time-indexed offset {} (InvalidOffsetException)",
                    max.offset, last_time.offset
                ),
            })));
        }
        self.time_index
            .maybe_append(max.timestamp, max.offset, true)?;
        self.time_index.trim_to_valid_size()?;
        Ok(Ok(RecoverOutcome {
            truncated_bytes,
            invalid,
        }))
    }

    /// `updateProducerState` for one recovered batch: the transaction it completes is indexed
    /// here if it aborted.
    fn apply_producer_state(
        &mut self,
        state: &mut ProducerStateManager,
        entry: &Entry<'_>,
    ) -> Result<()> {
        let (updates, completed) = state.collect_appends([entry], &self.log_path)?;
        state.apply_appends(updates, completed, |aborted| {
            self.txn_index.append(&aborted)
        })?;
        state.update_map_end_offset(entry.last_offset() + 1);
        Ok(())
    }

    /// `truncateTo(base)`: what the loader does to a segment whose offsets went back — every
    /// batch from the first one reaching the base offset goes, the indexes are emptied and
    /// sized for appends again. Returns the bytes cut.
    pub fn truncate_to_base(&mut self) -> Result<u64> {
        let mapping = self.translate_offset(self.base_offset, 0)?;
        self.offset_index.reset()?;
        self.time_index.reset()?;
        self.txn_index.reset()?;
        let cut = match mapping {
            Some(m) => {
                let cut = self.size - m.position;
                self.cut_log(m.position)?;
                self.size = m.position;
                cut
            }
            None => 0,
        };
        self.bytes_since_last_index_entry = 0;
        self.rolling_based_timestamp = None;
        self.max_timestamp_so_far = None;
        Ok(cut)
    }

    /// `readNextOffset`: one past the last batch found from the offset index's last entry,
    /// else the base offset.
    pub fn read_next_offset(&mut self) -> Result<i64> {
        self.offset_index.touch()?;
        let from = self.offset_index.last_offset();
        let Some(start) = self.translate_offset(from, 0)? else {
            return Ok(self.base_offset);
        };
        let mut reader = LogReader::open(&self.log_path, None)?.with_max_entry_bytes(u64::MAX);
        reader.seek(start.position);
        let mut next = self.base_offset;
        while let Step::Entry { entry, .. } = reader.next_step()? {
            next = entry.last_offset() + 1;
        }
        Ok(next)
    }

    /// Feeds the batches from the one holding `start_offset` up to byte `max_position` into
    /// producer state, as rebuilding it from the log does (`loadProducersFromRecords`).
    pub fn load_producer_state(
        &self,
        state: &mut ProducerStateManager,
        start_offset: i64,
        max_position: u64,
    ) -> Result<()> {
        let Some(start) = self.translate_offset(start_offset, 0)? else {
            return Ok(());
        };
        let mut reader =
            LogReader::open(&self.log_path, Some(max_position))?.with_max_entry_bytes(u64::MAX);
        reader.seek(start.position);
        let mut appends = ProducerAppends::default();
        while let Step::Entry { entry, .. } = reader.next_step()? {
            if entry.magic() >= MAGIC_V2 {
                appends.add(state, &entry, &self.log_path)?;
            }
        }
        state.apply_loaded(appends)
    }

    /// `resizeIndexes(segment.index.bytes)`: the active segment after loading.
    pub fn resize_indexes_to_max(&mut self) -> Result<()> {
        self.offset_index.resize_to_max()?;
        self.time_index.resize_to_max()
    }

    /// Deletes the segment's files (those that exist).
    pub fn delete(self) -> Result<()> {
        let dir = self
            .log_path
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf();
        drop(self.log);
        for name in [
            log_file_name(self.base_offset),
            index_file_name(self.base_offset),
            time_index_file_name(self.base_offset),
            txn_index_file_name(self.base_offset),
        ] {
            files::remove_file(&dir.join(name))?;
        }
        Ok(())
    }

    /// Bytes in the `.log`.
    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    pub fn offset_index(&self) -> &OffsetIndex {
        &self.offset_index
    }

    pub fn time_index(&self) -> &TimeIndex {
        &self.time_index
    }

    pub fn can_convert_to_relative_offset(&self, offset: i64) -> bool {
        offset
            .checked_sub(self.base_offset)
            .is_some_and(|d| (0..=i64::from(i32::MAX)).contains(&d))
    }

    /// The largest timestamp appended and the offset that goes with it, `(-1, base)` if none.
    pub fn max_timestamp_so_far(&self) -> TimeIndexEntry {
        self.max_timestamp_so_far
            .unwrap_or_else(|| self.time_index.last_entry())
    }

    fn max_timestamp_and_offset_so_far(&mut self) -> TimeIndexEntry {
        *self
            .max_timestamp_so_far
            .get_or_insert_with(|| self.time_index.last_entry())
    }

    /// `LogSegment.shouldRoll`. Touches both indexes, which materialises their files.
    pub fn should_roll(&mut self, p: &RollParams) -> Result<bool> {
        self.offset_index.touch()?;
        self.time_index.touch()?;
        let reached_roll_ms =
            self.time_waited_for_roll(p.now_ms, p.max_timestamp_in_messages) > p.max_segment_ms;
        Ok(self.size + p.messages_size > p.max_segment_bytes
            || (self.size > 0 && reached_roll_ms)
            || self.offset_index.is_full()
            || self.time_index.is_full()
            || !self.can_convert_to_relative_offset(p.max_offset_in_messages))
    }

    /// Record time since the first append call's max timestamp when that is known (≥ 0),
    /// else wall-clock time since this segment object was made.
    pub fn time_waited_for_roll(&self, now_ms: i64, message_timestamp: i64) -> i64 {
        match self.rolling_based_timestamp {
            Some(ts) if ts >= 0 => message_timestamp.saturating_sub(ts),
            _ => now_ms.saturating_sub(self.created_ms),
        }
    }

    /// Appends the bytes of one append call, whose largest offset, largest timestamp and the
    /// offset that goes with that timestamp are given, following `LogSegment.append`.
    pub fn append(
        &mut self,
        largest_offset: i64,
        largest_timestamp: i64,
        shallow_offset_of_max_timestamp: i64,
        records: &[u8],
    ) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        let physical_position = self.size;
        if physical_position == 0 {
            self.rolling_based_timestamp = Some(largest_timestamp);
        }
        if !self.can_convert_to_relative_offset(largest_offset) {
            return Err(Error::invalid(
                &self.log_path,
                format!(
                    "offset {largest_offset} is out of range for a segment with base offset {}",
                    self.base_offset
                ),
            ));
        }
        let position = i32::try_from(physical_position)
            .map_err(|_| Error::invalid(&self.log_path, "segment position exceeds 2^31 - 1"))?;
        // At the segment's end, wherever a cut left the file offset.
        self.log_for_writes()?
            .write_all_at(records, physical_position)
            .map_err(|e| Error::io(&self.log_path, e))?;
        self.size += records.len() as u64;
        super::progress::wrote(records.len() as u64);
        if largest_timestamp > self.max_timestamp_and_offset_so_far().timestamp {
            self.max_timestamp_so_far = Some(TimeIndexEntry {
                timestamp: largest_timestamp,
                offset: shallow_offset_of_max_timestamp,
            });
        }
        // The interval counts bytes of earlier calls only: the first call into a segment object
        // never adds an entry, and one entry covers a whole (possibly multi-batch) call.
        if self.bytes_since_last_index_entry > self.config.index_interval_bytes {
            self.offset_index.append(largest_offset, position)?;
            let max = self.max_timestamp_and_offset_so_far();
            self.time_index
                .maybe_append(max.timestamp, max.offset, false)?;
            self.bytes_since_last_index_entry = 0;
        }
        self.bytes_since_last_index_entry += records.len() as u64;
        Ok(())
    }

    pub fn append_aborted_txn(&mut self, txn: &AbortedTxn) -> Result<()> {
        self.txn_index.append(txn)
    }

    /// Roll: the final time-index entry, then both indexes trimmed to their entries.
    pub fn on_become_inactive(&mut self) -> Result<()> {
        let max = self.max_timestamp_and_offset_so_far();
        self.time_index
            .maybe_append(max.timestamp, max.offset, true)?;
        self.offset_index.trim_to_valid_size()?;
        self.time_index.trim_to_valid_size()?;
        self.flush()?;
        // No more appends: the descriptor goes (see `Segment::log`).
        self.log = None;
        Ok(())
    }

    /// Clean close: the final time-index entry if the max timestamp was ever needed, then the
    /// materialised indexes trimmed. An untouched index stays absent, as with Kafka's lazy ones.
    pub fn close(&mut self) -> Result<()> {
        if let Some(max) = self.max_timestamp_so_far {
            self.time_index
                .maybe_append(max.timestamp, max.offset, true)?;
        }
        if self.time_index.is_materialized() {
            self.time_index.trim_to_valid_size()?;
        }
        if self.offset_index.is_materialized() {
            self.offset_index.trim_to_valid_size()?;
        }
        self.flush()
    }

    pub fn flush(&mut self) -> Result<()> {
        use std::io::Write;
        match &mut self.log {
            Some(log) => log.flush().map_err(|e| Error::io(&self.log_path, e)),
            None => Ok(()),
        }
    }

    /// The `.log` open for writing, opened now if it is not (see `Segment::log`).
    fn log_for_writes(&mut self) -> Result<&File> {
        if self.log.is_none() {
            self.log = Some(open_for_writes(&self.log_path)?);
        }
        Ok(self.log.as_ref().expect("opened just now"))
    }

    /// Cuts the `.log` to `len` bytes and syncs it, as `FileRecords.truncateTo` does; a
    /// descriptor opened for the cut alone is closed after it.
    fn cut_log(&self, len: u64) -> Result<()> {
        let opened;
        let log = match &self.log {
            Some(log) => log,
            None => {
                opened = open_for_writes(&self.log_path)?;
                &opened
            }
        };
        log.set_len(len).map_err(|e| Error::io(&self.log_path, e))?;
        super::files::sync_all(log, &self.log_path)
    }

    /// `LogSegment.flush` as the shutdown's flush calls it: it reaches both indexes, which
    /// materialises lazy ones (a new file, preallocated, for a segment never appended to).
    pub fn flush_with_indexes(&mut self) -> Result<()> {
        self.offset_index.touch()?;
        self.time_index.touch()?;
        self.flush()
    }

    /// `translateOffset`: the first batch at or after the index's floor position (and
    /// `start_position`) whose last offset is `>= offset`. A batch, not a record.
    pub fn translate_offset(
        &self,
        offset: i64,
        start_position: u64,
    ) -> Result<Option<BatchLocation>> {
        let floor = self.offset_index.lookup(offset)?;
        let from = (floor.position.max(0) as u64).max(start_position);
        // Nothing past the end: the `.log` is not opened (an empty segment's lookups).
        if from >= self.size {
            return Ok(None);
        }
        let mut reader = LogReader::open(&self.log_path, None)?;
        reader.seek(from);
        Ok(
            scan_for_offset(&mut reader, offset)?.map(|(position, size, _, last_offset)| {
                BatchLocation {
                    last_offset,
                    position,
                    size,
                }
            }),
        )
    }

    /// The offset-index entry a lookup of `offset` starts from.
    pub fn lookup(&self, offset: i64) -> Result<OffsetIndexEntry> {
        self.offset_index.lookup(offset)
    }

    /// `findOffsetByTimestamp`: the first record with `timestamp >= target` and
    /// `offset >= start_offset`, searched from the time index's floor entry, within this
    /// segment only. Returns `(timestamp, offset)`.
    pub fn find_offset_by_timestamp(
        &self,
        target: i64,
        start_offset: i64,
    ) -> Result<Option<(i64, i64)>> {
        let entry = self.time_index.lookup(target)?;
        let from = self
            .offset_index
            .lookup(entry.offset.max(start_offset))?
            .position;
        let mut reader = LogReader::open(&self.log_path, None)?;
        reader.seek(from.max(0) as u64);
        Ok(
            scan_for_time(&mut reader, target, start_offset)?
                .map(|hit| (hit.timestamp, hit.offset)),
        )
    }
}
