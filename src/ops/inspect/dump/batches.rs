//! Where index checks find the batches their entries name: judged during a walk of the
//! segment's log, which `verify` makes anyway (so each segment is read once) and `dump` of an
//! index file makes for the purpose. A walk, unlike hops from header to header at the positions
//! an index names, knows where batches really start, and judges each index on its own: a
//! damaged offset index does not make the time index look wrong.
//!
//! The check streams in step with the walk: an undamaged index's entries ascend (positions,
//! offsets) as the log's batches do, so each entry is judged when the walk passes what it names,
//! reading the index as it goes, and only the entries found wrong are kept. Memory is a
//! constant plus those entries, whatever the segment's size. Entries out of order (which name
//! something the walk has passed) are kept aside and judged by a second walk, in sorted order,
//! so the verdicts are those of a lookup of every entry, as before.

use std::path::{Path, PathBuf};

use super::{DumpOptions, Event, Sink, Walker};
use crate::error::Result;
use crate::format::entry::{peek_header, Entry, EntryHeader};
use crate::format::index::{
    offset_index_entry_count, offset_index_zero_tail_start, time_index_entry_count,
    time_index_zero_tail_start, OffsetIndexEntry, TimeIndexEntry, OFFSET_INDEX_ENTRY_BYTES,
    TIME_INDEX_ENTRY_BYTES,
};
use crate::format::names::FileKind;
use crate::storage::files::{read_index, IndexBytes, IndexData};
use crate::storage::index::{IndexKind, OffsetKind, TimeKind};

/// What the log says of an offset-index entry found wrong: the first and last offset of the
/// batch at its position (which starts past the entry's offset), or None when no batch starts
/// there.
pub(super) type WrongPosition = Option<(Option<i64>, i64)>;

/// What the log says of a time-index entry found wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WrongTime {
    /// Its offset is past every batch; the last batch's last offset (-1: the log has none).
    PastEnd(i64),
    /// Its batch's largest timestamp (of the records with an exact check, else the header's)
    /// differs from the entry's.
    Timestamp(i64),
}

/// The verdicts of a walk on a segment's index entries: the wrong ones, by slot (sorted).
/// An index the walk did not read is judged as one whose entries name nothing in the log.
#[derive(Debug, Default)]
pub(super) struct WalkedBatches {
    offsets: Option<Vec<(usize, WrongPosition)>>,
    times: Option<Vec<(usize, WrongTime)>>,
    /// Entries out of order past [`MAX_LATE_ENTRIES`], of each index: not judged.
    pub(super) unchecked: (u64, u64),
}

/// The most entries out of order an index check keeps for its second walk (24 bytes each): a
/// hostile index of millions in decreasing order gets the rest counted as not checked.
pub(super) const MAX_LATE_ENTRIES: usize = 1 << 16;

/// Keeps `entry` for the second walk, or counts it when `late` is full.
fn set_aside<E>(late: &mut Vec<(usize, E)>, unchecked: &mut u64, entry: (usize, E)) {
    if late.len() < MAX_LATE_ENTRIES {
        late.push(entry);
    } else {
        *unchecked += 1;
    }
}

/// The value of `key` in a sorted list of pairs.
fn find<V: Copy>(pairs: &[(usize, V)], key: usize) -> Option<V> {
    let i = pairs.partition_point(|(k, _)| *k < key);
    pairs.get(i).filter(|(k, _)| *k == key).map(|(_, v)| *v)
}

impl WalkedBatches {
    /// Whether the offset-index entry in `slot` is wrong, and what the log says then.
    pub(super) fn wrong_position(&self, slot: usize) -> Option<WrongPosition> {
        match &self.offsets {
            Some(wrong) => find(wrong, slot),
            None => Some(None),
        }
    }

    /// Whether the time-index entry in `slot` is wrong, and what the log says then.
    pub(super) fn wrong_time(&self, slot: usize) -> Option<WrongTime> {
        match &self.times {
            Some(wrong) => find(wrong, slot),
            None => Some(WrongTime::PastEnd(-1)),
        }
    }
}

/// The largest record timestamp of an entry (-1 when it has none), as kafka-dump-log computes
/// it with a deep iteration; records that do not decode are left out.
fn max_record_timestamp(entry: &Entry<'_>, limit: usize) -> i64 {
    let mut scratch = Vec::new();
    entry.records(&mut scratch, limit).map_or(-1, |records| {
        records.flatten().map(|r| r.timestamp).fold(-1, i64::max)
    })
}

/// An index's entries in slot order, with their slots: the file's (up to its zero tail, read
/// as the walk goes, decoded as the engine's index decodes them), or those of a list.
enum Source<K: IndexKind> {
    File {
        data: IndexData,
        count: usize,
        base_offset: i64,
    },
    Listed(Vec<(usize, K::Entry)>),
}

impl<K: IndexKind> Source<K>
where
    K::Entry: Copy,
{
    fn get(&self, i: usize) -> Option<(usize, K::Entry)> {
        let n = K::ENTRY_BYTES;
        match self {
            Source::File {
                data,
                count,
                base_offset,
            } => (i < *count).then(|| {
                data.passed(i * n);
                (i, K::decode(&data[i * n..(i + 1) * n], *base_offset))
            }),
            Source::Listed(entries) => entries.get(i).copied(),
        }
    }

    /// The file's entries up to its zero tail (`count` of its bytes: entries past it are zero
    /// slots), or None when it cannot be read (the index's own check reports that).
    fn file(p: &Path, base_offset: i64, count: fn(&IndexData, i64) -> usize) -> Option<Self> {
        let IndexBytes { data, .. } = read_index(p).ok()?;
        let count = count(&data, base_offset);
        Some(Source::File {
            data,
            count,
            base_offset,
        })
    }
}

/// The offset index's entries, judged as the walk meets the positions they name.
struct PositionCheck {
    source: Source<OffsetKind>,
    next: usize,
    /// The position of the last batch the walk met.
    last: Option<u64>,
    wrong: Vec<(usize, WrongPosition)>,
    late: Vec<(usize, OffsetIndexEntry)>,
    unchecked: u64,
}

impl PositionCheck {
    fn new(source: Source<OffsetKind>) -> Self {
        PositionCheck {
            source,
            next: 0,
            last: None,
            wrong: Vec::new(),
            late: Vec::new(),
            unchecked: 0,
        }
    }

    fn judge(&mut self, slot: usize, entry: OffsetIndexEntry, found: Option<&EntryHeader>) {
        let verdict = match found {
            // The broker scans forward from the indexed position: a batch that starts after
            // the indexed offset would hide it.
            Some(h) if h.first_offset.is_some_and(|f| f > entry.offset) => {
                Some((h.first_offset, h.last_offset))
            }
            Some(_) => return,
            None => None,
        };
        self.wrong.push((slot, verdict));
    }

    /// Judges the entries naming positions up to `position`, where the batch `header` starts
    /// (None: past the log's end).
    fn batch(&mut self, position: Option<u64>, header: Option<&EntryHeader>) {
        let prev = self.last;
        while let Some((slot, entry)) = self.source.get(self.next) {
            let p = entry.position.max(0) as u64;
            if position.is_some_and(|q| p > q) {
                break;
            }
            if position == Some(p) {
                self.judge(slot, entry, header);
            } else if prev.is_none_or(|q| p > q) {
                // Between two batches the walk met: no batch starts there.
                self.judge(slot, entry, None);
            } else {
                set_aside(&mut self.late, &mut self.unchecked, (slot, entry));
            }
            self.next += 1;
        }
        if position.is_some() {
            self.last = position;
        }
    }
}

/// The time index's entries, judged on the batch a lookup of their offsets lands on: the first
/// batch whose last offset reaches it (or, when none does, the last batch there is), as the
/// broker's forward search finds it.
struct TimeCheck {
    source: Source<TimeKind>,
    next: usize,
    /// The largest last offset of the batches met, and the last batch.
    max_last_offset: Option<i64>,
    last: Option<EntryHeader>,
    wrong: Vec<(usize, WrongTime)>,
    late: Vec<(usize, TimeIndexEntry)>,
    unchecked: u64,
    /// With a deep exact check: the entries landing on the batch whose records are being
    /// walked, judged when its records are done.
    open: Vec<(usize, TimeIndexEntry)>,
}

impl TimeCheck {
    fn new(source: Source<TimeKind>) -> Self {
        TimeCheck {
            source,
            next: 0,
            max_last_offset: None,
            last: None,
            wrong: Vec::new(),
            late: Vec::new(),
            unchecked: 0,
            open: Vec::new(),
        }
    }

    /// Judges an entry landing on the batch `h` whose largest timestamp is `max`.
    fn judge(&mut self, slot: usize, entry: TimeIndexEntry, h: &EntryHeader, max: i64) {
        // kafka-dump-log compares with the records, but a batch the cleaner emptied keeps its
        // header's max timestamp, which the broker indexed: wrong only when really wrong, as
        // `verify` judges it.
        let emptied = h.record_count == Some(0) && h.max_timestamp == entry.timestamp;
        if max != entry.timestamp && !emptied {
            self.wrong.push((slot, WrongTime::Timestamp(max)));
        }
    }

    /// Judges the open entries, their batch's records being done with largest timestamp `max`.
    fn close(&mut self, max: i64) {
        if let Some(h) = self.last {
            for (slot, entry) in std::mem::take(&mut self.open) {
                self.judge(slot, entry, &h, max);
            }
        }
    }

    /// Judges the entries landing on the batch `header`; `max` gives its largest timestamp
    /// (None: known when its records are done).
    fn batch(&mut self, header: &EntryHeader, mut max: impl FnMut() -> Option<i64>) {
        let before = self.max_last_offset;
        let mut known = None;
        while let Some((slot, entry)) = self.source.get(self.next) {
            if before.is_some_and(|m| entry.offset <= m) {
                set_aside(&mut self.late, &mut self.unchecked, (slot, entry));
            } else if entry.offset <= header.last_offset {
                match *known.get_or_insert_with(&mut max) {
                    Some(max) => self.judge(slot, entry, header, max),
                    None => self.open.push((slot, entry)),
                }
            } else {
                break;
            }
            self.next += 1;
        }
        self.max_last_offset =
            Some(before.map_or(header.last_offset, |m| m.max(header.last_offset)));
        self.last = Some(*header);
    }

    /// Offsets past every batch land on the last one, as a search from disk does.
    fn finish(&mut self) {
        while let Some((slot, entry)) = self.source.get(self.next) {
            if self.max_last_offset.is_some_and(|m| entry.offset <= m) {
                set_aside(&mut self.late, &mut self.unchecked, (slot, entry));
            } else {
                let found = self.last.map_or(-1, |h| h.last_offset);
                self.wrong.push((slot, WrongTime::PastEnd(found)));
            }
            self.next += 1;
        }
    }
}

/// Entries in the order of what they name (`key`), slots in order among equals.
fn sorted<E>(mut entries: Vec<(usize, E)>, key: impl Fn(&E) -> i64) -> Vec<(usize, E)> {
    entries.sort_by_key(|(_, e)| key(e));
    entries
}

/// Stands between a log's walk and its sink, judging the segment's index entries as the
/// batches they name go by.
pub(super) struct Tap<'s> {
    inner: &'s mut dyn Sink,
    positions: Option<PositionCheck>,
    times: Option<TimeCheck>,
    /// Whether time-index checks need the largest record timestamp of each landing.
    exact: bool,
    /// Whether records are walked (then the timestamps come from their events).
    deep: bool,
    max_batch_bytes: usize,
    /// The largest record timestamp so far of the batch whose records are being walked.
    open_max: i64,
}

impl<'s> Tap<'s> {
    /// Judges the entries of `indexes` while `opts` walks the log into `inner`.
    pub fn new(inner: &'s mut dyn Sink, indexes: &[PathBuf], opts: &DumpOptions) -> Self {
        let (mut positions, mut times) = (None, None);
        for p in indexes {
            match crate::ops::input::kind_of(p, opts.base_offset).kind {
                FileKind::OffsetIndex { base_offset } if positions.is_none() => {
                    let count = |d: &IndexData, b: i64| {
                        d.find_slot(OFFSET_INDEX_ENTRY_BYTES, |s| {
                            offset_index_zero_tail_start(s, b)
                        })
                        .unwrap_or(offset_index_entry_count(d.len()))
                    };
                    positions = Source::file(p, base_offset, count).map(PositionCheck::new);
                }
                FileKind::TimeIndex { base_offset } if times.is_none() => {
                    let count = |d: &IndexData, b: i64| {
                        d.find_slot(TIME_INDEX_ENTRY_BYTES, |s| time_index_zero_tail_start(s, b))
                            .unwrap_or(time_index_entry_count(d.len()))
                    };
                    times = Source::file(p, base_offset, count).map(TimeCheck::new);
                }
                _ => {}
            }
        }
        Self::with(inner, positions, times, opts)
    }

    fn with(
        inner: &'s mut dyn Sink,
        positions: Option<PositionCheck>,
        times: Option<TimeCheck>,
        opts: &DumpOptions,
    ) -> Self {
        Tap {
            inner,
            positions,
            times,
            exact: opts.exact_time_index,
            deep: opts.deep,
            max_batch_bytes: opts.max_batch_bytes,
            open_max: -1,
        }
    }

    /// The verdicts, once the walk of `log` (with `opts`) is done. Entries out of order are
    /// judged by a second walk, in sorted order, made only when there are any.
    pub fn finish(mut self, log: &Path, opts: &DumpOptions) -> Result<WalkedBatches> {
        let mut positions = self.positions.take();
        let mut times = self.times.take();
        if let Some(t) = times.as_mut() {
            t.close(self.open_max);
            t.finish();
        }
        if let Some(p) = positions.as_mut() {
            p.batch(None, None);
        }
        let late_positions = positions.as_mut().map(|p| std::mem::take(&mut p.late));
        let late_times = times.as_mut().map(|t| std::mem::take(&mut t.late));
        let any = |n: Option<usize>| n.is_some_and(|n| n > 0);
        if any(late_positions.as_ref().map(Vec::len)) || any(late_times.as_ref().map(Vec::len)) {
            let again_positions = late_positions
                .map(|l| sorted(l, |e| i64::from(e.position.max(0))))
                .map(|l| PositionCheck::new(Source::Listed(l)));
            let again_times = late_times
                .map(|l| sorted(l, |e| e.offset))
                .map(|l| TimeCheck::new(Source::Listed(l)));
            let mut discard = Discard;
            let mut tap = Tap::with(&mut discard, again_positions, again_times, opts);
            Walker::new(opts, &mut tap).path(log)?;
            let again = tap.finish(log, opts)?;
            if let (Some(p), Some(w)) = (positions.as_mut(), again.offsets) {
                p.wrong.extend(w);
                p.wrong.sort_by_key(|(slot, _)| *slot);
            }
            if let (Some(t), Some(w)) = (times.as_mut(), again.times) {
                t.wrong.extend(w);
                t.wrong.sort_by_key(|(slot, _)| *slot);
            }
        }
        let unchecked = (
            positions.as_ref().map_or(0, |p| p.unchecked),
            times.as_ref().map_or(0, |t| t.unchecked),
        );
        Ok(WalkedBatches {
            offsets: positions.map(|p| p.wrong),
            times: times.map(|t| t.wrong),
            unchecked,
        })
    }

    fn batch(&mut self, position: u64, entry: &Entry<'_>) {
        if let Some(t) = self.times.as_mut() {
            t.close(self.open_max);
        }
        self.open_max = -1;
        let bytes = entry.bytes();
        let Some(header) = peek_header(bytes, bytes.len() as u64) else {
            return;
        };
        if let Some(p) = self.positions.as_mut() {
            p.batch(Some(position), Some(&header));
        }
        if let Some(t) = self.times.as_mut() {
            let (exact, deep, limit) = (self.exact, self.deep, self.max_batch_bytes);
            t.batch(&header, || match (exact, deep) {
                (false, _) => Some(header.max_timestamp),
                (true, false) => Some(max_record_timestamp(entry, limit)),
                (true, true) => None,
            });
        }
    }
}

impl Sink for Tap<'_> {
    fn event(&mut self, e: &Event<'_>) -> std::io::Result<()> {
        match e {
            Event::Batch { info, entry } => self.batch(info.position, entry),
            Event::BatchRecords { max_timestamp, .. } => {
                self.open_max = self.open_max.max(*max_timestamp);
            }
            _ => {}
        }
        self.inner.event(e)
    }

    fn wants_records(&self) -> bool {
        self.inner.wants_records()
    }
}

/// A sink for a walk made only to judge index entries.
pub(super) struct Discard;

impl Sink for Discard {
    fn event(&mut self, _: &Event<'_>) -> std::io::Result<()> {
        Ok(())
    }
}
