//! Where index checks find the batches their entries name: recorded by a walk of the segment's
//! log, which `verify` makes anyway (so each segment is read once) and `dump` of an index file
//! makes for the purpose. A walk, unlike hops from header to header at the positions an index
//! names, knows where batches really start, and judges each index on its own: a damaged
//! offset index does not make the time index look wrong.

use std::path::PathBuf;

use super::{DumpOptions, Event, Sink};
use crate::format::entry::{peek_header, Entry, EntryHeader};
use crate::format::index::{
    offset_index_entries, offset_index_entry_count, offset_index_zero_tail_start,
    time_index_entries, time_index_entry_count, time_index_zero_tail_start,
};
use crate::format::names::FileKind;
use crate::storage::files::{read_index, IndexBytes};

/// The batch a lookup of an offset lands on: the first batch whose last offset reaches it
/// (or, when none does, the last batch there is), as the broker's forward search finds it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Landing {
    pub header: EntryHeader,
    /// The largest record timestamp (-1 when no record has one), when it was asked for.
    pub max_record_timestamp: Option<i64>,
}

/// What the walk of a segment's log recorded for the checks of its indexes: bounded by the
/// indexes' entry counts, not by the log's batch count.
#[derive(Debug, Default)]
pub(super) struct WalkedBatches {
    /// The header of the batch at each position an offset-index entry names, if one starts
    /// there, by position (sorted: filled in walk order).
    at: Vec<(u64, EntryHeader)>,
    /// Where a lookup of each offset a time-index entry names lands, by offset (sorted).
    landings: Vec<(i64, Landing)>,
}

/// The value of `key` in a sorted list of pairs.
fn find<K: Ord + Copy, V: Copy>(pairs: &[(K, V)], key: K) -> Option<V> {
    let i = pairs.partition_point(|(k, _)| *k < key);
    pairs.get(i).filter(|(k, _)| *k == key).map(|(_, v)| *v)
}

impl WalkedBatches {
    /// The header of the batch starting at `position`, if the walk met one there.
    pub(super) fn batch_at(&self, position: u64) -> Option<EntryHeader> {
        find(&self.at, position)
    }

    /// Where a lookup of `offset` lands, for an offset a time-index entry names.
    pub(super) fn landing(&self, offset: i64) -> Option<Landing> {
        find(&self.landings, offset)
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

/// The positions and offsets a segment's index entries name, read before its log is walked.
#[derive(Debug, Default)]
struct Targets {
    positions: Vec<u64>,
    offsets: Vec<i64>,
}

impl Targets {
    /// Unreadable index files name nothing here; the index's own check reports them.
    fn read(indexes: &[PathBuf], base_offset: Option<i64>) -> Self {
        let mut t = Targets::default();
        for p in indexes {
            let kind = crate::ops::input::kind_of(p, base_offset).kind;
            let Ok(IndexBytes { data: bytes, .. }) = read_index(p) else {
                continue;
            };
            // Entries past `bytes` are zero slots of the tail: the counts stop at its end.
            match kind {
                FileKind::OffsetIndex { base_offset } => {
                    let n = offset_index_zero_tail_start(&bytes, base_offset)
                        .unwrap_or(offset_index_entry_count(bytes.len()));
                    let entries = offset_index_entries(&bytes, base_offset).take(n);
                    t.positions
                        .extend(entries.map(|e| e.position.max(0) as u64));
                }
                FileKind::TimeIndex { base_offset } => {
                    let n = time_index_zero_tail_start(&bytes, base_offset)
                        .unwrap_or(time_index_entry_count(bytes.len()));
                    let entries = time_index_entries(&bytes, base_offset).take(n);
                    t.offsets.extend(entries.map(|e| e.offset));
                }
                _ => {}
            }
        }
        t.positions.sort_unstable();
        t.positions.dedup();
        t.offsets.sort_unstable();
        t.offsets.dedup();
        t
    }
}

/// Stands between a log's walk and its sink, recording the batches the segment's index
/// entries name as they go by.
pub(super) struct Tap<'s> {
    inner: &'s mut dyn Sink,
    targets: Targets,
    next_position: usize,
    next_offset: usize,
    walked: WalkedBatches,
    last: Option<Landing>,
    /// Whether time-index checks need the largest record timestamp of each landing.
    exact: bool,
    /// Whether records are walked (then the timestamps come from their events).
    deep: bool,
    max_batch_bytes: usize,
    /// How many landings (the last ones) are on the batch whose records are being walked,
    /// and the largest record timestamp so far.
    open: usize,
    open_max: i64,
}

impl<'s> Tap<'s> {
    /// Records what the entries of `indexes` name, while `opts` walks the log into `inner`.
    pub fn new(inner: &'s mut dyn Sink, indexes: &[PathBuf], opts: &DumpOptions) -> Self {
        Tap {
            inner,
            targets: Targets::read(indexes, opts.base_offset),
            next_position: 0,
            next_offset: 0,
            walked: WalkedBatches::default(),
            last: None,
            exact: opts.exact_time_index,
            deep: opts.deep,
            max_batch_bytes: opts.max_batch_bytes,
            open: 0,
            open_max: -1,
        }
    }

    /// What was recorded; offsets past the last batch land on it, as a search from disk does.
    pub fn finish(mut self) -> WalkedBatches {
        self.close_open();
        if let Some(last) = self.last {
            let rest = &self.targets.offsets[self.next_offset..];
            self.walked.landings.extend(rest.iter().map(|&o| (o, last)));
        }
        self.walked
    }

    fn close_open(&mut self) {
        let n = self.walked.landings.len();
        for (_, l) in &mut self.walked.landings[n - self.open..] {
            l.max_record_timestamp = Some(self.open_max);
        }
        self.open = 0;
        if let Some(l) = self.last.as_mut().filter(|_| self.deep && self.exact) {
            l.max_record_timestamp = Some(self.open_max);
        }
    }

    fn batch(&mut self, position: u64, entry: &Entry<'_>) {
        self.close_open();
        let bytes = entry.bytes();
        let Some(header) = peek_header(bytes, bytes.len() as u64) else {
            return;
        };
        let positions = &self.targets.positions;
        while positions
            .get(self.next_position)
            .is_some_and(|&p| p < position)
        {
            self.next_position += 1;
        }
        if positions.get(self.next_position) == Some(&position) {
            self.walked.at.push((position, header));
        }
        let max_record_timestamp =
            (self.exact && !self.deep).then(|| max_record_timestamp(entry, self.max_batch_bytes));
        let landing = Landing {
            header,
            max_record_timestamp,
        };
        self.open_max = -1;
        while let Some(&o) = self
            .targets
            .offsets
            .get(self.next_offset)
            .filter(|&&o| o <= header.last_offset)
        {
            self.walked.landings.push((o, landing));
            if self.exact && self.deep {
                self.open += 1;
            }
            self.next_offset += 1;
        }
        self.last = Some(landing);
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

/// A sink for a walk made only to record batches.
pub(super) struct Discard;

impl Sink for Discard {
    fn event(&mut self, _: &Event<'_>) -> std::io::Result<()> {
        Ok(())
    }
}
