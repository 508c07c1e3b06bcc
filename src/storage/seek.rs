//! Read-only seeks in a partition directory, found the way the broker finds a fetch's start and
//! a ListOffsets answer (behavior.md §7.1–§7.4): the segment by base offset (or by largest
//! timestamp), the index by Kafka's binary search, then a forward scan of the `.log` from the
//! index's position. Never a scan from the start of the partition.
//!
//! An index that is missing or fails the checks below is not used: that segment alone is scanned
//! from its start, and a [`Fallback`] says so. Every `.log` byte read is counted, so a caller can
//! show (and a test can bound) what a seek cost.

use std::path::{Path, PathBuf};

use super::index::{Index, IndexKind, OffsetIndex, TimeIndex};
use super::log_reader::{LogReader, Step};
use crate::error::{Error, Result};
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::format::entry::Entry;
use crate::format::index::{OffsetIndexEntry, TimeIndexEntry, NO_TIMESTAMP};
use crate::format::names::{index_file_name, time_index_file_name};

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
    #[serde(serialize_with = "crate::format::os_path::serialize")]
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
    #[serde(serialize_with = "crate::format::os_path::serialize")]
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

/// One segment's files; its indexes are opened on first use.
#[derive(Debug)]
struct SegmentFiles {
    base: i64,
    log: PathBuf,
    offset_index: Option<Loaded<OffsetIndex>>,
    time_index: Option<Loaded<TimeIndex>>,
}

/// Seeks in one partition directory, reading only the files it needs.
pub struct Seeker {
    dir: PathBuf,
    /// Oldest first.
    segments: Vec<SegmentFiles>,
    log_bytes_read: u64,
    fallbacks: Vec<Fallback>,
    /// The reader that found the last [`BatchHit`], at its position.
    last_hit: Option<(PathBuf, LogReader)>,
}

impl Seeker {
    /// Lists the directory's segments (names only; nothing is read yet).
    pub fn open(dir: &Path) -> Result<Self> {
        let logs = crate::storage::files::segment_logs(dir)?;
        if logs.is_empty() {
            return Err(Error::invalid(dir, "no .log segment in this directory"));
        }
        Ok(Self::of_segments(dir, logs))
    }

    /// A seeker over `logs`, the base offsets and `.log` files of `dir`, oldest first.
    fn of_segments(dir: &Path, logs: Vec<(i64, PathBuf)>) -> Self {
        Seeker {
            dir: dir.to_path_buf(),
            segments: logs
                .into_iter()
                .map(|(base, log)| SegmentFiles {
                    base,
                    log,
                    offset_index: None,
                    time_index: None,
                })
                .collect(),
            log_bytes_read: 0,
            fallbacks: Vec::new(),
            last_hit: None,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn first_segment_base(&self) -> i64 {
        self.segments[0].base
    }

    /// The segments from the one based at `base` on: base offset and `.log`, oldest first.
    pub fn segments_from(&self, base: i64) -> Vec<(i64, PathBuf)> {
        self.segments
            .iter()
            .filter(|s| s.base >= base)
            .map(|s| (s.base, s.log.clone()))
            .collect()
    }

    /// `.log` bytes read by all seeks so far.
    pub fn log_bytes_read(&self) -> u64 {
        self.log_bytes_read
    }

    /// Index pages read by all seeks so far.
    pub fn index_pages_read(&self) -> u64 {
        self.segments
            .iter()
            .flat_map(|s| {
                let o = s.offset_index.as_ref().and_then(|r| r.as_ref().ok());
                let t = s.time_index.as_ref().and_then(|r| r.as_ref().ok());
                [o.map(Index::pages_read), t.map(Index::pages_read)]
            })
            .flatten()
            .sum()
    }

    /// Counts `.log` bytes read elsewhere on this seeker's behalf (a replay from a seek).
    pub fn count_log_bytes(&mut self, bytes: u64) {
        self.log_bytes_read += bytes;
    }

    /// The indexes that could not be used, once each, in the order they were met.
    pub fn fallbacks(&self) -> &[Fallback] {
        &self.fallbacks
    }

    /// The reader that found the last [`BatchHit`] in `log`, at the hit's position, with the
    /// batch still in its buffer: a walk from the hit goes on with it instead of reading the
    /// batch again. Its bytes so far are counted in [`Self::log_bytes_read`].
    pub fn take_reader(&mut self, log: &Path) -> Option<LogReader> {
        match self.last_hit.take() {
            Some((p, reader)) if p == log => Some(reader),
            _ => None,
        }
    }

    /// `LocalLog.read`'s start: from the floor segment of `offset` on, the first batch whose last
    /// offset is `>= offset` (`translateOffset`). None when `offset` is below the first segment or
    /// at or past the log end.
    pub fn batch_for_offset(&mut self, offset: i64) -> Result<Option<BatchHit>> {
        self.last_hit = None;
        let Some(floor) = self.segments.iter().rposition(|s| s.base <= offset) else {
            return Ok(None);
        };
        for i in floor..self.segments.len() {
            let base = self.segments[i].base;
            let (mut reader, index_entry) = self.start_at(i, offset)?;
            let found = scan_for_offset(&mut reader, offset);
            self.log_bytes_read += reader.bytes_read();
            if let Some((position, size, first_offset, last_offset)) = found? {
                let log = self.segments[i].log.clone();
                reader.seek(position);
                self.last_hit = Some((log.clone(), reader));
                return Ok(Some(BatchHit {
                    segment_base: base,
                    log,
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
        let from = match self.offset_index(last)? {
            Some(index) => index.last().map_or(base, |e| e.offset),
            None => base,
        };
        let (mut reader, _) = self.start_at(last, from)?;
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
        let floor = self.lookup_time(i, target)?.map_or(base, |e| e.offset);
        let (mut reader, _) = self.start_at(i, floor.max(start_offset))?;
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
        let (mut reader, _) = self.start_at(i, max.offset)?;
        let found = scan_for_max_timestamp(&mut reader, max.timestamp);
        self.log_bytes_read += reader.bytes_read();
        found
    }

    /// A reader of segment `i` where a scan for `offset` starts: at the offset index's floor
    /// entry of `offset`, with that entry, once the batch there is seen to start at or before
    /// the entry's offset; at the segment's start (and None) without a usable index.
    fn start_at(&mut self, i: usize, offset: i64) -> Result<(LogReader, Option<OffsetIndexEntry>)> {
        let entry = self.lookup_offset(i, offset)?;
        if let Some(e) = entry.filter(|e| e.position > 0) {
            let mut reader = self.reader(i, e.position as u64)?;
            let problem = match reader.next_step()? {
                Step::Entry { position, entry } => {
                    let mut scratch = Vec::new();
                    let first = first_offset(&entry, &mut scratch).unwrap_or(entry.last_offset());
                    (first > e.offset)
                        .then(|| {
                            format!(
                                "entry ({}, {}) points at a batch of offsets {first}..={}",
                                e.offset,
                                e.position,
                                entry.last_offset()
                            )
                        })
                        .map_or_else(|| Ok(position), Err)
                }
                _ => Err(format!(
                    "entry ({}, {}) points at no batch of the {}-byte .log",
                    e.offset,
                    e.position,
                    reader.end()
                )),
            };
            match problem {
                Ok(position) => {
                    // The batch stays in the reader's buffer: reading it again costs nothing.
                    reader.seek(position);
                    return Ok((reader, entry));
                }
                Err(why) => {
                    self.log_bytes_read += reader.bytes_read();
                    self.refuse_offset_index(i, why);
                }
            }
        }
        let reader = self.reader(i, 0)?;
        Ok((reader, entry.filter(|_| self.offset_index_usable(i))))
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
        let last = match self.time_index(i)? {
            Some(index) => {
                let last = index.last().unwrap_or(none);
                if i + 1 < self.segments.len() {
                    return Ok(last);
                }
                Some(last)
            }
            None => None,
        };
        let (mut reader, _) = match last {
            Some(last) => self.start_at(i, last.offset)?,
            None => (self.reader(i, 0)?, None),
        };
        let mut max = last.unwrap_or(none);
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
    fn offset_index(&mut self, i: usize) -> Result<Option<&OffsetIndex>> {
        if self.segments[i].offset_index.is_none() {
            let base = self.segments[i].base;
            let path = self.dir.join(index_file_name(base));
            let loaded = read_index(&path, base)?;
            if let Err(problem) = &loaded {
                self.note(path, problem.clone());
            }
            self.segments[i].offset_index = Some(loaded);
        }
        Ok(self.segments[i]
            .offset_index
            .as_ref()
            .and_then(|r| r.as_ref().ok()))
    }

    fn offset_index_usable(&self, i: usize) -> bool {
        matches!(self.segments[i].offset_index, Some(Ok(_)))
    }

    /// Segment `i`'s offset-index floor entry of `offset`; None without a usable index (a
    /// lookup that finds the index damaged refuses it from then on).
    fn lookup_offset(&mut self, i: usize, offset: i64) -> Result<Option<OffsetIndexEntry>> {
        let Some(index) = self.offset_index(i)? else {
            return Ok(None);
        };
        match index.lookup_checked(offset)? {
            Ok(e) => Ok(Some(e)),
            Err(why) => {
                self.refuse_offset_index(i, why);
                Ok(None)
            }
        }
    }

    fn refuse_offset_index(&mut self, i: usize, why: String) {
        let problem = IndexProblem::Damaged(why);
        self.note(
            self.dir.join(index_file_name(self.segments[i].base)),
            problem.clone(),
        );
        self.segments[i].offset_index = Some(Err(problem));
    }

    /// Segment `i`'s time index, or None (recorded as a fallback) when it cannot be used.
    fn time_index(&mut self, i: usize) -> Result<Option<&TimeIndex>> {
        if self.segments[i].time_index.is_none() {
            let base = self.segments[i].base;
            let path = self.dir.join(time_index_file_name(base));
            let loaded = read_index(&path, base)?;
            if let Err(problem) = &loaded {
                self.note(path, problem.clone());
            }
            self.segments[i].time_index = Some(loaded);
        }
        Ok(self.segments[i]
            .time_index
            .as_ref()
            .and_then(|r| r.as_ref().ok()))
    }

    /// Segment `i`'s time-index floor entry of `target`; None without a usable index.
    fn lookup_time(&mut self, i: usize, target: i64) -> Result<Option<TimeIndexEntry>> {
        let Some(index) = self.time_index(i)? else {
            return Ok(None);
        };
        match index.lookup_checked(target)? {
            Ok(e) => Ok(Some(e)),
            Err(why) => {
                let problem = IndexProblem::Damaged(why);
                let path = self.dir.join(time_index_file_name(self.segments[i].base));
                self.note(path, problem.clone());
                self.segments[i].time_index = Some(Err(problem));
                Ok(None)
            }
        }
    }

    fn note(&mut self, index: PathBuf, problem: IndexProblem) {
        // A remote segment has no local index (the broker loads none for it): scanning it is
        // how it is read, nothing to say.
        let remote = || crate::storage::tiered::shown_as(&index.with_extension("log")).is_some();
        if problem == IndexProblem::Missing && remote() {
            return;
        }
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

/// A segment's index opened for seeks, or why it cannot be used.
type Loaded<T> = std::result::Result<T, IndexProblem>;

/// A segment's `.index` or `.timeindex` opened page by page for seeks: Kafka's sanity check (its
/// first and last entries, its length) on the entries before a preallocated zero tail. The
/// entries' order is checked where lookups read them ([`Index::lookup_checked`]), the offset
/// index's positions where the scan starts.
fn read_index<K: IndexKind>(path: &Path, base: i64) -> Result<Loaded<Index<K>>> {
    Ok(match Index::<K>::open_for_seek(path, base)? {
        None => Err(IndexProblem::Missing),
        Some(loaded) => loaded.map_err(IndexProblem::Damaged),
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::index::{
        encode_offset_index_entry, encode_time_index_entry, offset_index_entries,
        offset_index_lookup, offset_index_zero_tail_start, time_index_zero_tail_start,
        OFFSET_INDEX_ENTRY_BYTES, TIME_INDEX_ENTRY_BYTES,
    };
    use crate::storage::index::{OffsetKind, TimeKind};

    /// `n` offset-index entries (every 10th offset, 4 KiB apart) from base 1000, then
    /// `zero_slots` zero slots (a sparse preallocated tail past the data).
    fn offset_index_file(dir: &Path, n: usize, zero_slots: usize) -> (PathBuf, Vec<u8>) {
        let mut bytes = Vec::new();
        for i in 0..n {
            let e = OffsetIndexEntry {
                offset: 1000 + 10 * (i as i64 + 1),
                position: 4096 * (i as i32 + 1),
            };
            bytes.extend(encode_offset_index_entry(&e, 1000).unwrap());
        }
        let path = dir.join(format!("{n}-{zero_slots}.index"));
        std::fs::write(&path, &bytes).unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(((n + zero_slots) * OFFSET_INDEX_ENTRY_BYTES) as u64)
            .unwrap();
        bytes.resize((n + zero_slots) * OFFSET_INDEX_ENTRY_BYTES, 0);
        (path, bytes)
    }

    /// The zero tail found by binary search over pages is the format's linear rule's, and a
    /// lookup answers as the whole-file lookup does, reading O(log n) pages.
    #[test]
    fn paged_lookups_read_log_n_pages_and_agree_with_the_whole_file() {
        let tmp = tempfile::tempdir().unwrap();
        for (n, zeros) in [
            (0, 0),
            (0, 5),
            (1, 0),
            (1, 1),
            (7, 0),
            (7, 3),
            (65_536, 0),
            (65_536, 1_000_000),
        ] {
            let (path, bytes) = offset_index_file(tmp.path(), n, zeros);
            let want = offset_index_zero_tail_start(&bytes, 1000).unwrap_or(n + zeros);
            let index = match read_index::<OffsetKind>(&path, 1000).unwrap() {
                Ok(i) => i,
                Err(p) => panic!("{n}+{zeros}: {p:?}"),
            };
            assert_eq!(
                index.len() as usize,
                want,
                "{n} entries, {zeros} zero slots"
            );
            let entries: Vec<_> = offset_index_entries(&bytes[..want * 8], 1000).collect();
            for target in [
                999,
                1000,
                1005,
                1010,
                1011,
                1000 + 10 * n as i64 / 2 + 3,
                i64::MAX,
            ] {
                let fresh = match read_index::<OffsetKind>(&path, 1000).unwrap() {
                    Ok(i) => i,
                    Err(p) => panic!("{p:?}"),
                };
                let got = fresh.lookup_checked(target).unwrap().unwrap();
                assert_eq!(
                    got,
                    offset_index_lookup(&entries, 1000, target),
                    "{n}: {target}"
                );
                // The tail's search, the warm section's check and the binary search: each a
                // page per probe at most.
                let bound = 2 * (usize::BITS - (n + zeros + 1).leading_zeros()) as u64 + 4;
                assert!(
                    fresh.pages_read() <= bound,
                    "{n}: {} pages read for {target}",
                    fresh.pages_read()
                );
            }
        }
    }

    /// Entries that do not ascend where a lookup reads them refuse the index.
    #[test]
    fn a_lookup_through_swapped_entries_refuses_the_index() {
        let tmp = tempfile::tempdir().unwrap();
        let (path, mut bytes) = offset_index_file(tmp.path(), 3, 0);
        bytes[8..24].rotate_left(8);
        std::fs::write(&path, &bytes).unwrap();
        let index = read_index::<OffsetKind>(&path, 1000).unwrap().unwrap();
        assert!(index.lookup_checked(1035).unwrap().is_err());
    }

    /// A time index's zero tail as the format's rule finds it, found by binary search.
    #[test]
    fn paged_time_index_tail_is_the_formats() {
        let tmp = tempfile::tempdir().unwrap();
        for (n, zeros) in [(0, 2), (1, 0), (1, 3), (9, 4)] {
            let mut bytes = Vec::new();
            for i in 0..n {
                let e = TimeIndexEntry {
                    timestamp: 1_700_000_000_000 + i as i64,
                    offset: 1000 + i as i64 + 1,
                };
                bytes.extend(encode_time_index_entry(&e, 1000).unwrap());
            }
            bytes.resize((n + zeros) * TIME_INDEX_ENTRY_BYTES, 0);
            let path = tmp.path().join(format!("{n}-{zeros}.timeindex"));
            std::fs::write(&path, &bytes).unwrap();
            let index = read_index::<TimeKind>(&path, 1000).unwrap().unwrap();
            let want = time_index_zero_tail_start(&bytes, 1000).unwrap_or(n + zeros);
            assert_eq!(
                index.len() as usize,
                want,
                "{n} entries, {zeros} zero slots"
            );
        }
    }
}
