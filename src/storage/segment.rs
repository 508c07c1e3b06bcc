//! One segment: the `.log` of one base offset with its `.index`, `.timeindex` and `.txnindex`
//! (behavior.md §1.2–§1.7, §7.1–§7.4).
//!
//! Owns the append-time index rule — one offset-index entry per append *call*, keyed by the
//! call's last offset at the call's start position, once more than `index.interval.bytes` were
//! appended by earlier calls — the in-memory max timestamp so far, the roll test, what becomes
//! of the files on roll and close, and the lookups. Not which segment an append goes to, nor
//! producer state (see [`super::log::Log`]).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::index::{OffsetIndex, TimeIndex};
use super::log_reader::{LogReader, Step};
use super::txn_index::TxnIndex;
use crate::error::{Error, Result};
use crate::format::index::{AbortedTxn, OffsetIndexEntry, TimeIndexEntry};
use crate::format::names::{
    index_file_name, log_file_name, time_index_file_name, txn_index_file_name,
};

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

#[derive(Debug)]
pub struct Segment {
    base_offset: i64,
    log_path: PathBuf,
    log: File,
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
        let txn_path = dir.join(txn_index_file_name(base_offset));
        for stale in [
            dir.join(index_file_name(base_offset)),
            dir.join(time_index_file_name(base_offset)),
            txn_path.clone(),
        ] {
            match std::fs::remove_file(&stale) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(Error::io(&stale, e))
                }
                _ => {}
            }
        }
        let log = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&log_path)
            .map_err(|e| Error::io(&log_path, e))?;
        Ok(Segment {
            base_offset,
            log_path,
            log,
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
            txn_index: TxnIndex::new(txn_path),
            config,
            bytes_since_last_index_entry: 0,
            max_timestamp_so_far: None,
            rolling_based_timestamp: None,
            created_ms: now_ms,
        })
    }

    pub fn base_offset(&self) -> i64 {
        self.base_offset
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

    fn can_convert_to_relative_offset(&self, offset: i64) -> bool {
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
        self.log
            .write_all(records)
            .map_err(|e| Error::io(&self.log_path, e))?;
        self.size += records.len() as u64;
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
        self.flush()
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
        self.log.flush().map_err(|e| Error::io(&self.log_path, e))
    }

    /// `translateOffset`: the first batch at or after the index's floor position (and
    /// `start_position`) whose last offset is `>= offset`. A batch, not a record.
    pub fn translate_offset(
        &self,
        offset: i64,
        start_position: u64,
    ) -> Result<Option<BatchLocation>> {
        let floor = self.offset_index.lookup(offset);
        let from = (floor.position.max(0) as u64).max(start_position);
        let mut reader = LogReader::open(&self.log_path, None)?;
        reader.seek(from);
        while let Step::Entry { position, entry } = reader.next_step()? {
            if entry.last_offset() >= offset {
                return Ok(Some(BatchLocation {
                    last_offset: entry.last_offset(),
                    position,
                    size: entry.size_in_bytes() as u64,
                }));
            }
        }
        Ok(None)
    }

    /// The offset-index entry a lookup of `offset` starts from.
    pub fn lookup(&self, offset: i64) -> OffsetIndexEntry {
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
        let entry = self.time_index.lookup(target);
        let from = self
            .offset_index
            .lookup(entry.offset.max(start_offset))
            .position;
        let mut reader = LogReader::open(&self.log_path, None)?;
        reader.seek(from.max(0) as u64);
        let mut scratch = Vec::new();
        loop {
            match reader.next_step()? {
                Step::Entry { entry, .. } => {
                    if entry.max_timestamp() < target {
                        continue;
                    }
                    let records = entry
                        .records(
                            &mut scratch,
                            crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES,
                        )
                        .map_err(|e| Error::decode(&self.log_path, 0, e))?;
                    // LogAppendTime records read as the batch's append time (RecordView does it).
                    for r in records {
                        let r = r.map_err(|e| Error::decode(&self.log_path, 0, e))?;
                        if r.timestamp >= target && r.offset >= start_offset {
                            return Ok(Some((r.timestamp, r.offset)));
                        }
                    }
                }
                _ => return Ok(None),
            }
        }
    }
}
