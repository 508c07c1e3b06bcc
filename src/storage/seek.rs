//! Read-only seeks in a partition directory, found the way the broker finds a fetch's start and
//! a ListOffsets answer (behavior.md §7.1–§7.4): the segment by base offset (or by largest
//! timestamp), the index by Kafka's binary search, then a forward scan of the `.log` from the
//! index's position. Never a scan from the start of the partition.
//!
//! An index that is missing or fails the checks below is not used: that segment alone is scanned
//! from its start, and a [`Fallback`] says so. Every `.log` byte read is counted, so a caller can
//! show (and a test can bound) what a seek cost.

use std::path::{Path, PathBuf};

use super::files::list_dir;
use super::log_reader::{LogReader, Step};
use crate::error::{Error, Result};
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::format::entry::Entry;
use crate::format::index::{
    offset_index_entries, offset_index_lookup, offset_index_sanity_check,
    offset_index_zero_tail_start, time_index_entries, time_index_lookup, time_index_sanity_check,
    time_index_zero_tail_start, OffsetIndexEntry, TimeIndexEntry, NO_TIMESTAMP,
};
use crate::format::names::{classify, index_file_name, time_index_file_name, FileKind};

/// Bytes per read while seeking: a few index intervals (4 KiB by default), so a seek costs about
/// one interval of log bytes rather than a whole read chunk.
pub const SEEK_READ_CHUNK_BYTES: usize = 8 << 10;

/// Why an index was not used.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "reason")]
pub enum IndexProblem {
    Missing,
    Damaged(String),
}

/// A segment scanned from its start because one of its indexes could not be used.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fallback {
    pub index: PathBuf,
    pub problem: IndexProblem,
}

impl std::fmt::Display for Fallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.problem {
            IndexProblem::Missing => write!(f, "{} is missing", self.index.display())?,
            IndexProblem::Damaged(why) => write!(f, "{} is damaged ({why})", self.index.display())?,
        }
        write!(f, "; scanned that segment from its start instead")
    }
}

/// The batch that holds (or, after a gap, follows) an offset, and how it was found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchHit {
    /// The base offset of the segment holding the batch.
    #[serde(rename = "segmentBaseOffset")]
    pub segment_base: i64,
    /// The segment's `.log`.
    #[serde(rename = "file")]
    pub log: PathBuf,
    /// The offset-index entry the scan started from; None when the index was not used.
    pub index_entry: Option<OffsetIndexEntry>,
    pub position: u64,
    /// The batch's size on disk, header included.
    #[serde(rename = "sizeInBytes")]
    pub size: u64,
    pub first_offset: i64,
    pub last_offset: i64,
}

/// A record found by timestamp: `(timestamp, offset, leader epoch)` as ListOffsets returns them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeHit {
    pub timestamp: i64,
    pub offset: i64,
    /// The batch's partition leader epoch, None when it has none (-1, or a legacy message).
    pub leader_epoch: Option<i32>,
}

/// One segment's files; its indexes are read on first use.
#[derive(Debug)]
struct SegmentFiles {
    base: i64,
    log: PathBuf,
    offset_index: Option<std::result::Result<Vec<OffsetIndexEntry>, IndexProblem>>,
    time_index: Option<std::result::Result<Vec<TimeIndexEntry>, IndexProblem>>,
}

/// Seeks in one partition directory, reading only the files it needs.
#[derive(Debug)]
pub struct Seeker {
    dir: PathBuf,
    /// Oldest first.
    segments: Vec<SegmentFiles>,
    log_bytes_read: u64,
    fallbacks: Vec<Fallback>,
}

impl Seeker {
    /// Lists the directory's segments (names only; nothing is read yet).
    pub fn open(dir: &Path) -> Result<Self> {
        let mut segments: Vec<SegmentFiles> = list_dir(dir)?
            .into_iter()
            .filter_map(|p| {
                let name = p.file_name()?.to_string_lossy().into_owned();
                match classify(&name) {
                    FileKind::Log { base_offset } => Some(SegmentFiles {
                        base: base_offset,
                        log: p,
                        offset_index: None,
                        time_index: None,
                    }),
                    _ => None,
                }
            })
            .collect();
        if segments.is_empty() {
            return Err(Error::invalid(dir, "no .log segment in this directory"));
        }
        segments.sort_by_key(|s| s.base);
        Ok(Seeker {
            dir: dir.to_path_buf(),
            segments,
            log_bytes_read: 0,
            fallbacks: Vec::new(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn first_segment_base(&self) -> i64 {
        self.segments[0].base
    }

    /// `.log` bytes read by all seeks so far.
    pub fn log_bytes_read(&self) -> u64 {
        self.log_bytes_read
    }

    /// The indexes that could not be used, once each, in the order they were met.
    pub fn fallbacks(&self) -> &[Fallback] {
        &self.fallbacks
    }

    /// `LocalLog.read`'s start: from the floor segment of `offset` on, the first batch whose last
    /// offset is `>= offset` (`translateOffset`). None when `offset` is below the first segment or
    /// at or past the log end.
    pub fn batch_for_offset(&mut self, offset: i64) -> Result<Option<BatchHit>> {
        let Some(floor) = self.segments.iter().rposition(|s| s.base <= offset) else {
            return Ok(None);
        };
        for i in floor..self.segments.len() {
            let base = self.segments[i].base;
            let index_entry = self
                .offset_index(i)?
                .map(|entries| offset_index_lookup(entries, base, offset));
            let from = index_entry.map_or(0, |e| e.position.max(0) as u64);
            let mut reader = self.reader(i, from)?;
            let found = scan_for_offset(&mut reader, offset);
            self.log_bytes_read += reader.bytes_read();
            if let Some((position, size, first_offset, last_offset)) = found? {
                return Ok(Some(BatchHit {
                    segment_base: base,
                    log: self.segments[i].log.clone(),
                    index_entry,
                    position,
                    size,
                    first_offset,
                    last_offset,
                }));
            }
        }
        Ok(None)
    }

    /// The log end offset as `readNextOffset` finds it: read the last segment from its offset
    /// index's last entry to the end.
    pub fn log_end_offset(&mut self) -> Result<i64> {
        let last = self.segments.len() - 1;
        let base = self.segments[last].base;
        let from = self
            .offset_index(last)?
            .and_then(|entries| entries.last())
            .map_or(0, |e| e.position.max(0) as u64);
        let mut reader = self.reader(last, from)?;
        let result = scan_to_end(&mut reader, base);
        self.log_bytes_read += reader.bytes_read();
        result.map(|tail| tail.next_offset)
    }

    /// `searchOffsetInLocalLog`: in the first segment whose largest timestamp is `>= target`
    /// only, the first record with `timestamp >= target` and `offset >= start_offset`, searched
    /// from the time index's floor entry. None when there is no such segment or record.
    pub fn offset_for_time(&mut self, target: i64, start_offset: i64) -> Result<Option<TimeHit>> {
        let mut segment = None;
        for i in 0..self.segments.len() {
            if self.largest_timestamp(i)? >= target {
                segment = Some(i);
                break;
            }
        }
        let Some(i) = segment else {
            return Ok(None);
        };
        let base = self.segments[i].base;
        let floor = self.time_index(i)?.map_or(base, |entries| {
            time_index_lookup(entries, base, target).offset
        });
        let from = self.position_of(i, floor.max(start_offset))?;
        let mut reader = self.reader(i, from)?;
        let found = scan_for_time(&mut reader, target, start_offset);
        self.log_bytes_read += reader.bytes_read();
        found
    }

    /// ListOffsets' MAX_TIMESTAMP: in the first segment with the highest `maxTimestampSoFar`,
    /// the first batch (from the offset index's floor of that entry's offset) whose max
    /// timestamp equals it, answered with its first record carrying that timestamp.
    pub fn max_timestamp(&mut self) -> Result<Option<TimeHit>> {
        let mut best: Option<(usize, TimeIndexEntry)> = None;
        for i in 0..self.segments.len() {
            let e = self.max_timestamp_so_far(i)?;
            if best.is_none_or(|(_, b)| e.timestamp > b.timestamp) {
                best = Some((i, e));
            }
        }
        let Some((i, max)) = best else {
            return Ok(None);
        };
        let from = self.position_of(i, max.offset)?;
        let mut reader = self.reader(i, from)?;
        let found = scan_for_max_timestamp(&mut reader, max.timestamp);
        self.log_bytes_read += reader.bytes_read();
        found
    }

    /// The offset index's position for `offset` in segment `i` (0 without a usable index).
    fn position_of(&mut self, i: usize, offset: i64) -> Result<u64> {
        let base = self.segments[i].base;
        Ok(self.offset_index(i)?.map_or(0, |entries| {
            offset_index_lookup(entries, base, offset).position.max(0) as u64
        }))
    }

    /// `LogSegment.largestTimestamp`: the max timestamp so far, else the `.log` mtime.
    fn largest_timestamp(&mut self, i: usize) -> Result<i64> {
        let max = self.max_timestamp_so_far(i)?.timestamp;
        if max >= 0 {
            return Ok(max);
        }
        crate::storage::files::mtime_ms(&self.segments[i].log)
    }

    /// `maxTimestampSoFar` and its offset: the time index's last entry, `(-1, base)` when
    /// empty. The active segment's index may lag its `.log` (a crash; the broker keeps the
    /// newest maximum in memory), so its batches after that entry are read too. Without a usable
    /// time index, the whole segment is read.
    fn max_timestamp_so_far(&mut self, i: usize) -> Result<TimeIndexEntry> {
        let base = self.segments[i].base;
        let none = TimeIndexEntry {
            timestamp: NO_TIMESTAMP,
            offset: base,
        };
        let (from, last) = match self.time_index(i)? {
            Some(entries) => {
                let last = entries.last().copied().unwrap_or(none);
                if i + 1 < self.segments.len() {
                    return Ok(last);
                }
                (self.position_of(i, last.offset)?, last)
            }
            None => (0, none),
        };
        let mut reader = self.reader(i, from)?;
        let mut max = last;
        let result = loop {
            match reader.next_step() {
                Ok(Step::Entry { entry, .. }) if entry.max_timestamp() > max.timestamp => {
                    max = TimeIndexEntry {
                        timestamp: entry.max_timestamp(),
                        offset: entry.last_offset(),
                    };
                }
                Ok(Step::Entry { .. }) => {}
                Ok(_) => break Ok(max),
                Err(e) => break Err(e),
            }
        };
        self.log_bytes_read += reader.bytes_read();
        result
    }

    fn reader(&self, i: usize, from: u64) -> Result<LogReader> {
        seek_reader(&self.segments[i].log, from)
    }

    /// Segment `i`'s offset index, or None (recorded as a fallback) when it cannot be used.
    fn offset_index(&mut self, i: usize) -> Result<Option<&[OffsetIndexEntry]>> {
        if self.segments[i].offset_index.is_none() {
            let s = &self.segments[i];
            let path = self.dir.join(index_file_name(s.base));
            let loaded = read_offset_index(&path, s.base, &s.log)?;
            if let Err(problem) = &loaded {
                self.note(path, problem.clone());
            }
            self.segments[i].offset_index = Some(loaded);
        }
        Ok(self.segments[i]
            .offset_index
            .as_ref()
            .and_then(|r| r.as_ref().ok())
            .map(Vec::as_slice))
    }

    /// Segment `i`'s time index, or None (recorded as a fallback) when it cannot be used.
    fn time_index(&mut self, i: usize) -> Result<Option<&[TimeIndexEntry]>> {
        if self.segments[i].time_index.is_none() {
            let base = self.segments[i].base;
            let path = self.dir.join(time_index_file_name(base));
            let loaded = read_time_index(&path, base)?;
            if let Err(problem) = &loaded {
                self.note(path, problem.clone());
            }
            self.segments[i].time_index = Some(loaded);
        }
        Ok(self.segments[i]
            .time_index
            .as_ref()
            .and_then(|r| r.as_ref().ok())
            .map(Vec::as_slice))
    }

    fn note(&mut self, index: PathBuf, problem: IndexProblem) {
        self.fallbacks.push(Fallback { index, problem });
    }
}

/// A reader of `log` for seeks, at byte `from`.
pub fn seek_reader(log: &Path, from: u64) -> Result<LogReader> {
    let mut reader = LogReader::open(log, None)?
        .with_read_chunk(SEEK_READ_CHUNK_BYTES)
        .with_max_entry_bytes(u64::MAX);
    reader.seek(from);
    Ok(reader)
}

/// What the batches from a reader's position to the end of the valid data say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TailScan {
    /// One past the last offset of the last whole batch (`base` when there is none).
    pub next_offset: i64,
    /// The largest batch max timestamp seen, [`NO_TIMESTAMP`] when none.
    pub max_timestamp: i64,
}

/// `LogSegment.readNextOffset`'s scan: every whole batch from the reader's position on, for the
/// next offset after them.
pub fn scan_to_end(reader: &mut LogReader, base: i64) -> Result<TailScan> {
    let mut tail = TailScan {
        next_offset: base,
        max_timestamp: NO_TIMESTAMP,
    };
    while let Step::Entry { entry, .. } = reader.next_step()? {
        tail.next_offset = entry.last_offset() + 1;
        tail.max_timestamp = tail.max_timestamp.max(entry.max_timestamp());
    }
    Ok(tail)
}

type Loaded<T> = std::result::Result<Vec<T>, IndexProblem>;

fn read_index_bytes(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Kafka's sanity check, plus what a lookup silently relies on: offsets and positions that
/// ascend, and positions inside the `.log`. A preallocated zero tail is not an entry.
fn read_offset_index(path: &Path, base: i64, log: &Path) -> Result<Loaded<OffsetIndexEntry>> {
    let Some(bytes) = read_index_bytes(path)? else {
        return Ok(Err(IndexProblem::Missing));
    };
    let name = path.display().to_string();
    let whole = offset_index_zero_tail_start(&bytes, base).map_or(bytes.len(), |t| {
        t * crate::format::index::OFFSET_INDEX_ENTRY_BYTES
    });
    if let Err(why) = offset_index_sanity_check(&bytes[..whole], bytes.len(), base, &name) {
        return Ok(Err(IndexProblem::Damaged(why)));
    }
    let log_len = crate::storage::files::file_len(log)?;
    let entries: Vec<_> = offset_index_entries(&bytes[..whole], base).collect();
    if let Some(w) = entries
        .windows(2)
        .find(|w| w[1].offset <= w[0].offset || w[1].position <= w[0].position)
    {
        return Ok(Err(IndexProblem::Damaged(format!(
            "entry ({}, {}) does not ascend after ({}, {})",
            w[1].offset, w[1].position, w[0].offset, w[0].position
        ))));
    }
    if let Some(e) = entries
        .iter()
        .find(|e| e.position < 0 || e.position as u64 >= log_len)
    {
        return Ok(Err(IndexProblem::Damaged(format!(
            "position {} of offset {} is outside the {log_len}-byte .log",
            e.position, e.offset
        ))));
    }
    Ok(Ok(entries))
}

/// Kafka's sanity check, plus ascending timestamps and offsets.
fn read_time_index(path: &Path, base: i64) -> Result<Loaded<TimeIndexEntry>> {
    let Some(bytes) = read_index_bytes(path)? else {
        return Ok(Err(IndexProblem::Missing));
    };
    let name = path.display().to_string();
    let whole = time_index_zero_tail_start(&bytes, base).map_or(bytes.len(), |t| {
        t * crate::format::index::TIME_INDEX_ENTRY_BYTES
    });
    if let Err(why) = time_index_sanity_check(&bytes[..whole], bytes.len(), base, &name) {
        return Ok(Err(IndexProblem::Damaged(why)));
    }
    let entries: Vec<_> = time_index_entries(&bytes[..whole], base).collect();
    if let Some(w) = entries
        .windows(2)
        .find(|w| w[1].timestamp <= w[0].timestamp || w[1].offset < w[0].offset)
    {
        return Ok(Err(IndexProblem::Damaged(format!(
            "entry ({}, {}) does not ascend after ({}, {})",
            w[1].timestamp, w[1].offset, w[0].timestamp, w[0].offset
        ))));
    }
    Ok(Ok(entries))
}

/// The first offset of an entry (a legacy wrapper's first inner offset).
pub fn first_offset(entry: &Entry<'_>, scratch: &mut Vec<u8>) -> Option<i64> {
    match entry {
        Entry::V2(b) => Some(b.header.base_offset),
        Entry::Legacy(_) => entry
            .records(scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
            .ok()?
            .next()?
            .ok()
            .map(|r| r.offset),
    }
}

/// The records of an entry: a v2 header's count, a legacy entry's (inner) messages.
pub fn record_count(entry: &Entry<'_>, scratch: &mut Vec<u8>) -> u64 {
    match entry {
        Entry::V2(b) => b.header.record_count.max(0) as u64,
        e => e
            .records(scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
            .map_or(0, |r| r.count() as u64),
    }
}

fn leader_epoch(entry: &Entry<'_>) -> Option<i32> {
    match entry {
        Entry::V2(b) if b.header.partition_leader_epoch >= 0 => {
            Some(b.header.partition_leader_epoch)
        }
        _ => None,
    }
}

/// `translateOffset`'s scan: from the reader's position, the first batch whose last offset is
/// `>= offset`, as `(position, size, first offset, last offset)`. Stops at the end of the
/// valid data.
pub fn scan_for_offset(
    reader: &mut LogReader,
    offset: i64,
) -> Result<Option<(u64, u64, i64, i64)>> {
    let mut scratch = Vec::new();
    while let Step::Entry { position, entry } = reader.next_step()? {
        if entry.last_offset() >= offset {
            let first = first_offset(&entry, &mut scratch).unwrap_or(entry.last_offset());
            return Ok(Some((
                position,
                entry.size_in_bytes() as u64,
                first,
                entry.last_offset(),
            )));
        }
    }
    Ok(None)
}

/// `FileRecords.searchForTimestamp`: from the reader's position, the first record with
/// `timestamp >= target` and `offset >= start_offset`, in batches whose max timestamp reaches
/// `target`.
pub fn scan_for_time(
    reader: &mut LogReader,
    target: i64,
    start_offset: i64,
) -> Result<Option<TimeHit>> {
    let path = reader.path().to_path_buf();
    let mut scratch = Vec::new();
    while let Step::Entry { position, entry } = reader.next_step()? {
        if entry.max_timestamp() < target {
            continue;
        }
        let records = entry
            .records(&mut scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
            .map_err(|e| Error::decode(&path, position, e))?;
        // LogAppendTime records read as the batch's append time (RecordView does it).
        for r in records {
            let r = r.map_err(|e| Error::decode(&path, position, e))?;
            if r.timestamp >= target && r.offset >= start_offset {
                return Ok(Some(TimeHit {
                    timestamp: r.timestamp,
                    offset: r.offset,
                    leader_epoch: leader_epoch(&entry),
                }));
            }
        }
    }
    Ok(None)
}

/// The first batch from the reader's position whose max timestamp is `max`, answered with its
/// first record stamped `max` (`offsetOfMaxTimestamp`).
fn scan_for_max_timestamp(reader: &mut LogReader, max: i64) -> Result<Option<TimeHit>> {
    while let Step::Entry { entry, .. } = reader.next_step()? {
        if entry.max_timestamp() == max {
            let epoch = leader_epoch(&entry);
            let mut scratch = Vec::new();
            let offset = entry
                .records(&mut scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
                .ok()
                .and_then(|mut records| {
                    records.find_map(|r| r.ok().filter(|r| r.timestamp == max).map(|r| r.offset))
                })
                .unwrap_or(entry.last_offset());
            return Ok(Some(TimeHit {
                timestamp: max,
                offset,
                leader_epoch: epoch,
            }));
        }
    }
    Ok(None)
}
