//! Read-only seeks in a partition directory, found the way the broker finds a fetch's start and
//! a ListOffsets answer (behavior.md §7.1–§7.4): the segment by base offset (or by largest
//! timestamp), the index by Kafka's binary search, then a forward scan of the `.log` from the
//! index's position. Never a scan from the start of the partition.
//!
//! An index that is missing or fails the checks below is not used: that segment alone is scanned
//! from its start, and a [`Fallback`] says so. Every `.log` byte read is counted, so a caller can
//! show (and a test can bound) what a seek cost.

use std::path::{Path, PathBuf};

use super::log_reader::{LogReader, Step};
use crate::error::{Error, Result};
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::format::entry::Entry;
use crate::format::index::{
    decode_offset_index_entry_bytes, decode_time_index_entry_bytes, largest_lower_bound_slot,
    offset_index_sanity_check, time_index_sanity_check, OffsetIndexEntry, TimeIndexEntry,
    INDEX_WARM_SECTION_BYTES, NO_TIMESTAMP, OFFSET_INDEX_ENTRY_BYTES, TIME_INDEX_ENTRY_BYTES,
};
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
                [
                    o.map(|i| i.pages.pages_read()),
                    t.map(|i| i.pages.pages_read()),
                ]
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
            Some(index) => index.last()?.map_or(base, |e| e.offset),
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
                let last = index.last()?.unwrap_or(none);
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
            let loaded = read_offset_index(&path, base)?;
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
        match index.lookup(offset)? {
            Ok(e) => Ok(Some(e)),
            Err(IndexProblem::Damaged(why)) => {
                self.refuse_offset_index(i, why);
                Ok(None)
            }
            Err(IndexProblem::Missing) => Ok(None),
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
            let loaded = read_time_index(&path, base)?;
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
        match index.lookup(target)? {
            Ok(e) => Ok(Some(e)),
            Err(problem) => {
                let path = self.dir.join(time_index_file_name(self.segments[i].base));
                self.note(path, problem.clone());
                self.segments[i].time_index = Some(Err(problem));
                Ok(None)
            }
        }
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

/// Bytes per read of an index file: a page, as the broker's mapped index faults them in.
pub const INDEX_PAGE_BYTES: u64 = 4096;

/// One index file read page by page: a lookup reads the pages its binary search touches (and
/// keeps them), never the whole file, so a seek costs O(log n) index pages.
#[derive(Debug)]
struct IndexPages {
    path: PathBuf,
    file: std::fs::File,
    /// Whole slots before the zero-filled tail a preallocated file ends in: the entries.
    slots: usize,
    slot: usize,
    /// Pages read so far, by page number.
    pages: std::cell::RefCell<std::collections::BTreeMap<u64, Vec<u8>>>,
}

impl IndexPages {
    /// Opens `path` (None when missing) and finds where its entries end: past the data of a
    /// sparse file (its holes read as zeros), then the zero tail's start by binary search.
    fn open(path: &Path, slot: usize) -> Result<Option<(Self, u64)>> {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
        };
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let data_slots = crate::storage::files::data_end(&file, len).div_ceil(slot as u64);
        let mut index = IndexPages {
            path: path.to_path_buf(),
            file,
            slots: (len / slot as u64).min(data_slots + 2) as usize,
            slot,
            pages: Default::default(),
        };
        index.slots = index.zero_tail_start()?;
        Ok(Some((index, len)))
    }

    /// The `slot` bytes of slot `i` (`i < slots`).
    fn bytes(&self, i: usize) -> Result<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let at = (i * self.slot) as u64;
        let mut out = Vec::with_capacity(self.slot);
        let mut pages = self.pages.borrow_mut();
        let mut pos = at;
        while pos < at + self.slot as u64 {
            let page = pos / INDEX_PAGE_BYTES;
            if let std::collections::btree_map::Entry::Vacant(slot) = pages.entry(page) {
                let mut buf = vec![0u8; INDEX_PAGE_BYTES as usize];
                let mut got = 0;
                while got < buf.len() {
                    match self
                        .file
                        .read_at(&mut buf[got..], page * INDEX_PAGE_BYTES + got as u64)
                    {
                        Ok(0) => break,
                        Ok(n) => got += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(Error::io(&self.path, e)),
                    }
                }
                buf.truncate(got);
                slot.insert(buf);
            }
            let bytes = &pages[&page];
            let from = (pos - page * INDEX_PAGE_BYTES) as usize;
            let upto = ((at + self.slot as u64).min((page + 1) * INDEX_PAGE_BYTES)
                - page * INDEX_PAGE_BYTES) as usize;
            if upto > bytes.len() {
                return Err(Error::invalid(
                    &self.path,
                    format!("index slot {i} ends past the file, which shrank while read"),
                ));
            }
            out.extend_from_slice(&bytes[from..upto]);
            pos = (page + 1) * INDEX_PAGE_BYTES;
        }
        Ok(out)
    }

    fn is_zero(&self, i: usize) -> Result<bool> {
        Ok(self.bytes(i)?.iter().all(|&b| b == 0))
    }

    /// The relative offset (first 4 bytes) of slot `i`.
    fn relative_offset(&self, i: usize) -> Result<i32> {
        let b = self.bytes(i)?;
        let rel = if self.slot == crate::format::index::TIME_INDEX_ENTRY_BYTES {
            &b[8..12]
        } else {
            &b[..4]
        };
        Ok(i32::from_be_bytes(rel.try_into().expect("4 bytes")))
    }

    /// `offset_index_zero_tail_start` / `time_index_zero_tail_start`'s rule (the first slot
    /// past slot 0 holding the base offset; slot 0 itself when zero-filled and followed by the
    /// tail, or alone), found by binary search: in an index whose offsets ascend, the slots
    /// holding the base offset past slot 0 are a suffix.
    fn zero_tail_start(&self) -> Result<usize> {
        let n = self.slots;
        if n == 0 {
            return Ok(0);
        }
        let (mut lo, mut hi) = (1, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.relative_offset(mid)? == 0 {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let tail = lo;
        let time = self.slot == crate::format::index::TIME_INDEX_ENTRY_BYTES;
        // A lone zero slot 0 is the start of an empty preallocated offset index; a time index's
        // lone `(0, base)` may be an entry (records stamped 0), two zero slots never are.
        let empty = self.is_zero(0)?
            && if time {
                tail == 1 && n > 1 && self.is_zero(1)?
            } else {
                tail == 1
            };
        Ok(if empty { 0 } else { tail })
    }

    /// The bytes of the first and the last entry, what Kafka's sanity checks look at, laid out
    /// as an index of those one or two entries.
    fn ends(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        if self.slots > 0 {
            out.extend(self.bytes(0)?);
        }
        if self.slots > 1 {
            out.extend(self.bytes(self.slots - 1)?);
        }
        Ok(out)
    }

    fn pages_read(&self) -> u64 {
        self.pages.borrow().len() as u64
    }
}

/// One index file of kind `K` read through [`IndexPages`].
#[derive(Debug)]
struct PagedIndex<K> {
    pages: IndexPages,
    base: i64,
    kind: std::marker::PhantomData<K>,
}

/// What tells an offset index from a time index to the one paged lookup.
trait IndexKind {
    type Entry: Copy;
    /// The entry's bytes (one slot) decoded against the segment's base offset.
    fn decode(slot: &[u8], base: i64) -> Self::Entry;
    /// What the binary search compares.
    fn key(e: &Self::Entry) -> i64;
    /// The entry as printed in a damage message.
    fn pair(e: &Self::Entry) -> (i64, i64);
    /// Whether `b` may follow `a` in an undamaged index.
    fn ascends(a: &Self::Entry, b: &Self::Entry) -> bool;
    /// What a lookup below the first entry answers.
    fn before_first(base: i64) -> Self::Entry;
}

#[derive(Debug)]
struct OffsetKind;

#[derive(Debug)]
struct TimeKind;

impl IndexKind for OffsetKind {
    type Entry = OffsetIndexEntry;
    fn decode(slot: &[u8], base: i64) -> OffsetIndexEntry {
        decode_offset_index_entry_bytes(slot.try_into().expect("one slot"), base)
    }
    fn key(e: &OffsetIndexEntry) -> i64 {
        e.offset
    }
    fn pair(e: &OffsetIndexEntry) -> (i64, i64) {
        (e.offset, e.position.into())
    }
    fn ascends(a: &OffsetIndexEntry, b: &OffsetIndexEntry) -> bool {
        b.offset > a.offset && b.position > a.position
    }
    fn before_first(base: i64) -> OffsetIndexEntry {
        OffsetIndexEntry {
            offset: base,
            position: 0,
        }
    }
}

impl IndexKind for TimeKind {
    type Entry = TimeIndexEntry;
    fn decode(slot: &[u8], base: i64) -> TimeIndexEntry {
        decode_time_index_entry_bytes(slot.try_into().expect("one slot"), base)
    }
    fn key(e: &TimeIndexEntry) -> i64 {
        e.timestamp
    }
    fn pair(e: &TimeIndexEntry) -> (i64, i64) {
        (e.timestamp, e.offset)
    }
    fn ascends(a: &TimeIndexEntry, b: &TimeIndexEntry) -> bool {
        b.timestamp > a.timestamp && b.offset >= a.offset
    }
    fn before_first(base: i64) -> TimeIndexEntry {
        TimeIndexEntry {
            timestamp: NO_TIMESTAMP,
            offset: base,
        }
    }
}

/// A segment's `.index`.
type OffsetIndex = PagedIndex<OffsetKind>;

/// A segment's `.timeindex`.
type TimeIndex = PagedIndex<TimeKind>;

type Loaded<T> = std::result::Result<T, IndexProblem>;

/// Kafka's sanity check (its last entry, its length) on a `.index` opened page by page, with
/// entries before a preallocated zero tail. The entries' order is checked where lookups read
/// them ([`checked_ascending`]), the positions where the scan starts.
fn read_offset_index(path: &Path, base: i64) -> Result<Loaded<OffsetIndex>> {
    let Some((pages, len)) = IndexPages::open(path, OFFSET_INDEX_ENTRY_BYTES)? else {
        return Ok(Err(IndexProblem::Missing));
    };
    let name = path.display().to_string();
    let last = match pages.slots {
        0 => Vec::new(),
        n => pages.bytes(n - 1)?,
    };
    if let Err(why) = offset_index_sanity_check(&last, len as usize, base, &name) {
        return Ok(Err(IndexProblem::Damaged(why)));
    }
    Ok(Ok(PagedIndex::new(pages, base)))
}

/// Kafka's sanity check on a `.timeindex` opened page by page (first and last entries, length).
fn read_time_index(path: &Path, base: i64) -> Result<Loaded<TimeIndex>> {
    let Some((pages, len)) = IndexPages::open(path, TIME_INDEX_ENTRY_BYTES)? else {
        return Ok(Err(IndexProblem::Missing));
    };
    let name = path.display().to_string();
    if let Err(why) = time_index_sanity_check(&pages.ends()?, len as usize, base, &name) {
        return Ok(Err(IndexProblem::Damaged(why)));
    }
    Ok(Ok(PagedIndex::new(pages, base)))
}

impl<K: IndexKind> PagedIndex<K> {
    fn new(pages: IndexPages, base: i64) -> Self {
        PagedIndex {
            pages,
            base,
            kind: std::marker::PhantomData,
        }
    }

    fn entry(&self, i: usize) -> Result<K::Entry> {
        Ok(K::decode(&self.pages.bytes(i)?, self.base))
    }

    fn last(&self) -> Result<Option<K::Entry>> {
        match self.pages.slots {
            0 => Ok(None),
            n => self.entry(n - 1).map(Some),
        }
    }

    /// Kafka's lookup (`offset_index_lookup`'s and `time_index_lookup`'s search) reading only
    /// the slots it probes; the probed slots and the answer's neighbours must ascend, else the
    /// index is damaged.
    fn lookup(&self, target: i64) -> Result<Loaded<K::Entry>> {
        let warm = INDEX_WARM_SECTION_BYTES / self.pages.slot;
        let probed = Probes::default();
        let slot = largest_lower_bound_slot(
            self.pages.slots,
            warm,
            |i| probed.key(i, || self.entry(i), K::key),
            target,
        );
        let found = probed.finish(slot, self.pages.slots, |i| self.entry(i))?;
        if let Some(w) = found.windows(2).find(|w| !K::ascends(&w[0].1, &w[1].1)) {
            return Ok(Err(not_ascending(K::pair(&w[0].1), K::pair(&w[1].1))));
        }
        Ok(Ok(slot.map_or(K::before_first(self.base), |s| {
            found.iter().find(|(i, _)| *i == s).expect("probed").1
        })))
    }
}

fn not_ascending(a: (i64, i64), b: (i64, i64)) -> IndexProblem {
    IndexProblem::Damaged(format!(
        "entry ({}, {}) does not ascend after ({}, {})",
        b.0, b.1, a.0, a.1
    ))
}

/// The slots a binary search read, with the first read error (the search's key function
/// cannot fail).
struct Probes<E> {
    seen: std::cell::RefCell<std::collections::BTreeMap<usize, E>>,
    error: std::cell::RefCell<Option<Error>>,
}

impl<E> Default for Probes<E> {
    fn default() -> Self {
        Probes {
            seen: Default::default(),
            error: Default::default(),
        }
    }
}

impl<E: Copy> Probes<E> {
    fn key(&self, i: usize, read: impl FnOnce() -> Result<E>, key: impl Fn(&E) -> i64) -> i64 {
        if let Some(e) = self.seen.borrow().get(&i) {
            return key(e);
        }
        match read() {
            Ok(e) => {
                self.seen.borrow_mut().insert(i, e);
                key(&e)
            }
            Err(err) => {
                self.error.borrow_mut().get_or_insert(err);
                i64::MAX
            }
        }
    }

    /// The probed slots in slot order, with the answer's neighbours read too.
    fn finish(
        self,
        slot: Option<usize>,
        slots: usize,
        read: impl Fn(usize) -> Result<E>,
    ) -> Result<Vec<(usize, E)>> {
        if let Some(e) = self.error.into_inner() {
            return Err(e);
        }
        let mut seen = self.seen.into_inner();
        let around = slot.map_or(0..1.min(slots), |s| s.saturating_sub(1)..(s + 2).min(slots));
        for i in around {
            if let std::collections::btree_map::Entry::Vacant(v) = seen.entry(i) {
                v.insert(read(i)?);
            }
        }
        Ok(seen.into_iter().collect())
    }
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
    };

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
            let index = match read_offset_index(&path, 1000).unwrap() {
                Ok(i) => i,
                Err(p) => panic!("{n}+{zeros}: {p:?}"),
            };
            assert_eq!(index.pages.slots, want, "{n} entries, {zeros} zero slots");
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
                let fresh = match read_offset_index(&path, 1000).unwrap() {
                    Ok(i) => i,
                    Err(p) => panic!("{p:?}"),
                };
                let got = fresh.lookup(target).unwrap().unwrap();
                assert_eq!(
                    got,
                    offset_index_lookup(&entries, 1000, target),
                    "{n}: {target}"
                );
                // The tail's search, the warm section's check and the binary search: each a
                // page per probe at most.
                let bound = 2 * (usize::BITS - (n + zeros + 1).leading_zeros()) as u64 + 4;
                assert!(
                    fresh.pages.pages_read() <= bound,
                    "{n}: {} pages read for {target}",
                    fresh.pages.pages_read()
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
        let index = read_offset_index(&path, 1000).unwrap().unwrap();
        assert!(matches!(
            index.lookup(1035).unwrap(),
            Err(IndexProblem::Damaged(_))
        ));
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
            let (pages, _) = IndexPages::open(&path, TIME_INDEX_ENTRY_BYTES)
                .unwrap()
                .unwrap();
            let want = time_index_zero_tail_start(&bytes, 1000).unwrap_or(n + zeros);
            assert_eq!(pages.slots, want, "{n} entries, {zeros} zero slots");
        }
    }
}
