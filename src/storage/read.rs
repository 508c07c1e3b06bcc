//! Reading a partition directory from an offset on, and choosing what is shown: record filters
//! ([`RecordFilter`]), what a `read_committed` consumer keeps ([`CommittedView`]), and an
//! iterator of records ([`PartitionRecords`]) that starts where a fetch starts (found through
//! the indexes by [`Seeker`]) and streams one batch at a time. `dump`'s seeks and filters use the
//! same pieces; the iterator is the library's way to them (`Log::read_from`).
//!
//! Nothing here decides how a record is printed, nor computes the last stable offset (that
//! needs the producer state: `ops::inspect::seek::stable_offsets`).

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

use super::log_reader::Step;
use super::seek::{first_offset, seek_reader, Seeker};
use crate::error::{Error, Result};
use crate::format::batch::RecordSpec;
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::format::control::{decode_control_key, ControlRecordType};
use crate::format::entry::{Entry, RecordView};
use crate::format::index::AbortedTxn;
use crate::storage::txn_index::{AbortedTxnSink, TxnIndexes};

/// The batch fields record filters and isolation look at (legacy entries have none: -1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchTraits {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub partition_leader_epoch: i32,
    pub is_transactional: bool,
    pub is_control: bool,
    pub last_offset: i64,
}

impl BatchTraits {
    pub fn of(entry: &Entry<'_>) -> Self {
        match entry {
            Entry::V2(b) => BatchTraits {
                producer_id: b.header.producer_id,
                producer_epoch: b.header.producer_epoch,
                partition_leader_epoch: b.header.partition_leader_epoch,
                is_transactional: b.header.is_transactional(),
                is_control: b.header.is_control(),
                last_offset: b.header.last_offset(),
            },
            Entry::Legacy(m) => BatchTraits {
                producer_id: -1,
                producer_epoch: -1,
                partition_leader_epoch: -1,
                is_transactional: false,
                is_control: false,
                last_offset: m.offset,
            },
        }
    }
}

/// `--header NAME[=VALUE]`: a header named `name` (with exactly this value, when given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderMatch {
    pub name: String,
    pub value: Option<Vec<u8>>,
}

/// Which records are shown; every condition set must hold (an empty filter keeps everything).
#[derive(Debug, Clone, Default)]
pub struct RecordFilter {
    /// The key, byte for byte.
    pub key: Option<Vec<u8>>,
    /// A regular expression the key matches (anywhere; anchor it with `^…$`).
    pub key_regex: Option<regex::bytes::Regex>,
    /// Every one of these headers is present.
    pub headers: Vec<HeaderMatch>,
    pub producer_id: Option<i64>,
    pub producer_epoch: Option<i16>,
    pub leader_epoch: Option<i32>,
    /// Only records of transactional batches.
    pub transactional: bool,
    /// Only records of control batches (transaction markers).
    pub control: bool,
    /// Only records without a value.
    pub tombstones: bool,
}

impl RecordFilter {
    pub fn is_empty(&self) -> bool {
        !self.needs_records() && self.batch_conditions_are_empty()
    }

    fn batch_conditions_are_empty(&self) -> bool {
        self.producer_id.is_none()
            && self.producer_epoch.is_none()
            && self.leader_epoch.is_none()
            && !self.transactional
            && !self.control
    }

    /// Whether some condition looks into records (so batches must be decoded to judge them).
    pub fn needs_records(&self) -> bool {
        self.key.is_some()
            || self.key_regex.is_some()
            || !self.headers.is_empty()
            || self.tombstones
    }

    /// The conditions on the batch's header.
    pub fn matches_batch(&self, b: &BatchTraits) -> bool {
        self.producer_id.is_none_or(|p| b.producer_id == p)
            && self.producer_epoch.is_none_or(|e| b.producer_epoch == e)
            && self
                .leader_epoch
                .is_none_or(|e| b.partition_leader_epoch == e)
            && (!self.transactional || b.is_transactional)
            && (!self.control || b.is_control)
    }

    /// The conditions on the record itself (its batch's are [`Self::matches_batch`]).
    pub fn matches_record(&self, r: &RecordView<'_>) -> bool {
        let key = r.key;
        self.key.as_deref().is_none_or(|k| key == Some(k))
            && self
                .key_regex
                .as_ref()
                .is_none_or(|re| key.is_some_and(|k| re.is_match(k)))
            && (!self.tombstones || r.value.is_none())
            && self.headers.iter().all(|h| {
                r.headers.iter().any(|rh| {
                    rh.key == h.name.as_bytes()
                        && h.value.as_deref().is_none_or(|v| rh.value == Some(v))
                })
            })
    }
}

/// The control type of a control batch's first record (a transaction marker's ABORT or
/// COMMIT); None for other batches or an undecodable one.
pub fn marker_type(entry: &Entry<'_>, scratch: &mut Vec<u8>) -> Option<ControlRecordType> {
    first_control_record(entry, scratch).map(|(kind, _)| kind)
}

/// A control batch's first record, with its control type; None for other batches or an
/// undecodable one.
fn first_control_record<'s>(
    entry: &'s Entry<'_>,
    scratch: &'s mut Vec<u8>,
) -> Option<(ControlRecordType, RecordView<'s>)> {
    if !BatchTraits::of(entry).is_control {
        return None;
    }
    let first = entry
        .records(scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
        .ok()?
        .next()?
        .ok()?;
    Some((decode_control_key(first.key).ok()?, first))
}

/// The value of the first record of `path`'s first batch when that batch is a control batch
/// led by a record of type `kind` (a KRaft snapshot's SnapshotHeader), reading that batch only;
/// None when the file does not start so.
pub fn leading_control_value(path: &Path, kind: ControlRecordType) -> Result<Option<Vec<u8>>> {
    let mut reader = super::log_reader::LogReader::open(path, None)?;
    let Step::Entry { entry, .. } = reader.next_step()? else {
        return Ok(None);
    };
    let mut scratch = Vec::new();
    Ok(first_control_record(&entry, &mut scratch)
        .filter(|(k, _)| *k == kind)
        .and_then(|(_, r)| r.value.map(<[u8]>::to_vec)))
}

/// What a `read_committed` consumer keeps of one fetch's batches, given the aborted
/// transactions the fetch response carried (`TxnIndexes::for_fetch`). The consumer's
/// `CompletedFetch.nextFetchedRecord` (clients/.../consumer/internals/CompletedFetch.java):
/// for each batch with a producer id, the aborted transactions whose first offset is at or
/// below the batch's last offset make their producer "aborted"; an ABORT marker of that
/// producer ends it; a transactional batch of an aborted producer is skipped; control batches
/// are never returned.
#[derive(Debug, Default)]
pub struct CommittedView {
    /// (first offset, producer) of each aborted transaction, by first offset from `next` on
    /// (sorted when the first batch is judged): all the consumer uses of an entry.
    pending: Vec<(i64, i64)>,
    next: usize,
    sorted: bool,
    aborted_producers: HashSet<i64>,
}

impl AbortedTxnSink for CommittedView {
    fn reserve(&mut self, count: usize) {
        self.pending.reserve_exact(count);
    }
    fn push(&mut self, t: AbortedTxn) {
        self.pending.push((t.first_offset, t.producer_id));
        self.sorted = false;
    }
}

impl CommittedView {
    pub fn new(aborted: Vec<AbortedTxn>) -> Self {
        let mut view = CommittedView::default();
        view.reserve(aborted.len());
        for t in aborted {
            view.push(t);
        }
        view
    }

    /// Whether the consumer returns the batch; `marker` is its control type (if control).
    pub fn keeps(&mut self, b: &BatchTraits, marker: Option<ControlRecordType>) -> bool {
        if !self.sorted {
            // In place: a stable sort would take half the entries' size again. Entries of
            // one first offset are taken together, in any order.
            self.pending[self.next..].sort_unstable();
            self.sorted = true;
        }
        if b.producer_id >= 0 {
            while let Some(&(_, producer)) = self
                .pending
                .get(self.next)
                .filter(|(first, _)| *first <= b.last_offset)
            {
                self.next += 1;
                self.aborted_producers.insert(producer);
            }
            if marker == Some(ControlRecordType::Abort) {
                self.aborted_producers.remove(&b.producer_id);
            } else if b.is_transactional && self.aborted_producers.contains(&b.producer_id) {
                return false;
            }
        }
        !b.is_control
    }
}

/// Which records a consumer is returned (`isolation.level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// Everything below the log end.
    #[default]
    ReadUncommitted,
    /// Only what a `read_committed` consumer gets: records below the last stable offset
    /// (`ops::inspect::seek::stable_offsets` computes it as a broker that loaded the partition
    /// does), aborted transactions removed, control batches hidden.
    ReadCommitted { last_stable_offset: i64 },
}

/// An isolation level applied to a partition read segment by segment, each segment read as
/// one fetch: the fetch's aborted transactions from the `.txnindex` files
/// (`TxnIndexes::for_fetch`), kept or dropped batch by batch as the consumer does
/// ([`CommittedView`]). `dump --isolation` and [`PartitionRecords`] both read through it.
#[derive(Debug, Default)]
pub struct IsolationView {
    /// `read_committed`: every segment's aborted transactions, the last stable offset and the
    /// view of the segment being read.
    committed: Option<(TxnIndexes, i64, CommittedView)>,
}

impl IsolationView {
    /// For a read of `dir`'s segments `bases` (oldest first; the `.txnindex` files of these
    /// only are read).
    pub fn new(dir: &Path, isolation: Isolation, bases: &[i64]) -> Result<Self> {
        Ok(IsolationView {
            committed: match isolation {
                Isolation::ReadUncommitted => None,
                Isolation::ReadCommitted { last_stable_offset } => Some((
                    TxnIndexes::load(dir, bases.iter().copied())?,
                    last_stable_offset,
                    CommittedView::default(),
                )),
            },
        })
    }

    /// The first offset not shown (the last stable offset); None: the log end.
    pub fn end(&self) -> Option<i64> {
        self.committed.as_ref().map(|(_, lso, _)| *lso)
    }

    /// Starts a segment's fetch at `fetch_offset`; `next_base` is the next segment's base.
    pub fn start_fetch(&mut self, fetch_offset: i64, next_base: Option<i64>) -> Result<()> {
        if let Some((txns, _, view)) = self.committed.as_mut() {
            *view = CommittedView::default();
            txns.for_fetch(fetch_offset, next_base.unwrap_or(i64::MAX), view)?;
        }
        Ok(())
    }

    /// Whether the consumer is returned this batch of the segment being fetched (every batch
    /// must be shown to it, in order: markers end aborted transactions).
    pub fn keeps(&mut self, entry: &Entry<'_>, scratch: &mut Vec<u8>) -> bool {
        match self.committed.as_mut() {
            None => true,
            Some((_, _, view)) => view.keeps(&BatchTraits::of(entry), marker_type(entry, scratch)),
        }
    }
}

/// One record as [`PartitionRecords`] yields it, owned, with its batch's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRecord {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    pub batch: BatchTraits,
    /// The segment's `.log` and the batch's position in it.
    pub file: PathBuf,
    pub position: u64,
}

/// The records of a partition directory from an offset on, in offset order, that a filter
/// keeps. Starts at the batch a fetch of the offset starts at (through the indexes, never a
/// scan from the partition's start), holds one batch's records at a time, and stops at the end
/// of each segment's valid data (damage ends the segment, as the broker's reader does). Legacy
/// entries' records come too; control records come only if the filter allows them.
pub struct PartitionRecords {
    seeker: Seeker,
    filter: RecordFilter,
    from: i64,
    /// Segments still to read: base offset, `.log`, the position to start at.
    segments: VecDeque<(i64, PathBuf, u64)>,
    /// The segment being read, with the bytes its reader had read before the walk took it
    /// (the seek's, counted by the seeker).
    reader: Option<(PathBuf, super::log_reader::LogReader, u64)>,
    /// Whether the walk has started on its first segment (later ones are fetched from their
    /// base).
    started: bool,
    isolation: IsolationView,
    /// `.log` bytes read by the walk in segments done (the seeks' are the seeker's).
    walk_bytes: u64,
    pending: VecDeque<ReadRecord>,
    scratch: Vec<u8>,
}

impl PartitionRecords {
    /// Records of `dir` from `offset` on (all of them, until a filter or an isolation level is
    /// set).
    pub fn open(dir: &Path, offset: i64) -> Result<Self> {
        Self::with_seeker(Seeker::open(dir)?, offset)
    }

    /// As [`Self::open`], through `seeker` (its costs so far are this read's too).
    pub fn with_seeker(mut seeker: Seeker, offset: i64) -> Result<Self> {
        let start = seeker.batch_for_offset(offset.max(seeker.first_segment_base()))?;
        let segments = match &start {
            None => VecDeque::new(),
            Some(hit) => seeker
                .segments_from(hit.segment_base)
                .into_iter()
                .map(|(base, log)| {
                    let from = if base == hit.segment_base {
                        hit.position
                    } else {
                        0
                    };
                    (base, log, from)
                })
                .collect(),
        };
        Ok(PartitionRecords {
            seeker,
            filter: RecordFilter::default(),
            from: offset,
            segments,
            reader: None,
            started: false,
            isolation: IsolationView::default(),
            walk_bytes: 0,
            pending: VecDeque::new(),
            scratch: Vec::new(),
        })
    }

    pub fn with_filter(mut self, filter: RecordFilter) -> Self {
        self.filter = filter;
        self
    }

    /// Only what a consumer of `isolation` is returned (read before the first record).
    pub fn with_isolation(mut self, isolation: Isolation) -> Result<Self> {
        let bases: Vec<i64> = self.segments.iter().map(|(b, _, _)| *b).collect();
        self.isolation = IsolationView::new(self.seeker.dir(), isolation, &bases)?;
        Ok(self)
    }

    /// The seeks' costs so far and the indexes they could not use.
    pub fn seeker(&self) -> &Seeker {
        &self.seeker
    }

    /// `.log` bytes read so far: the seek's and the walk's.
    pub fn log_bytes_read(&self) -> u64 {
        self.seeker.log_bytes_read()
            + self.walk_bytes
            + self
                .reader
                .as_ref()
                .map_or(0, |(_, r, before)| r.bytes_read() - before)
    }

    /// Leaves the segment being read, counting what its reader read.
    fn end_segment(&mut self) {
        if let Some((_, r, before)) = self.reader.take() {
            self.walk_bytes += r.bytes_read() - before;
        }
    }

    /// Reads batches until one yields kept records, or the partition (or the isolation's view
    /// of it) ends.
    fn fill(&mut self) -> Result<bool> {
        let end = self.isolation.end().unwrap_or(i64::MAX);
        loop {
            if self.reader.is_none() {
                let Some((base, log, from)) = self.segments.pop_front() else {
                    return Ok(false);
                };
                // The seek's reader holds the batch it found: go on with it.
                let reader = match self.seeker.take_reader(&log) {
                    Some(r) => r,
                    None => seek_reader(&log, from)?,
                };
                let before = reader.bytes_read();
                let fetch = if self.started {
                    base
                } else {
                    self.from.max(base)
                };
                self.started = true;
                let next_base = self.segments.front().map(|(b, _, _)| *b);
                self.isolation.start_fetch(fetch, next_base)?;
                self.reader = Some((log, reader, before));
            }
            let (log, reader, _) = self.reader.as_mut().expect("just set");
            let Step::Entry { position, entry } = reader.next_step()? else {
                self.end_segment();
                continue;
            };
            if first_offset(&entry, &mut self.scratch).unwrap_or(entry.last_offset()) >= end {
                self.segments.clear();
                self.end_segment();
                return Ok(false);
            }
            let traits = BatchTraits::of(&entry);
            if !self.isolation.keeps(&entry, &mut self.scratch)
                || traits.last_offset < self.from
                || !self.filter.matches_batch(&traits)
            {
                continue;
            }
            let records = entry
                .records(&mut self.scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
                .map_err(|e| Error::decode(&*log, position, e))?;
            for r in records {
                let r = r.map_err(|e| Error::decode(&*log, position, e))?;
                if r.offset < self.from || r.offset >= end || !self.filter.matches_record(&r) {
                    continue;
                }
                let RecordSpec {
                    offset,
                    timestamp,
                    key,
                    value,
                    headers,
                } = r.to_spec();
                self.pending.push_back(ReadRecord {
                    offset,
                    timestamp,
                    key,
                    value,
                    headers,
                    batch: traits,
                    file: log.clone(),
                    position,
                });
            }
            if !self.pending.is_empty() {
                return Ok(true);
            }
        }
    }
}

impl Iterator for PartitionRecords {
    type Item = Result<ReadRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pending.is_empty() {
            match self.fill() {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    // An error ends the iteration.
                    self.segments.clear();
                    self.reader = None;
                    return Some(Err(e));
                }
            }
        }
        self.pending.pop_front().map(Ok)
    }
}
