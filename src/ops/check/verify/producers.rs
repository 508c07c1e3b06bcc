//! Producer state replayed over one segment (behavior.md §3): the `.txnindex` entries the
//! broker writes for the segment's ABORT markers, and the state each producer snapshot in the
//! segment's range holds, both compared with the files.
//!
//! The replay feeds the segment's batches, one at a time as recovery does, through the engine's
//! own [`ProducerStateManager`], starting from the state at the segment's base offset. What the
//! broker legitimately does differently is accepted, not reported:
//! - a follower applies a whole fetch at once, so an aborted transaction's last stable offset
//!   can be the first offset of another producer's transaction begun after the marker;
//! - producers without an open transaction expire: absent from a later snapshot, or back with
//!   coordinator epoch -1 (new data) or with no batch (an empty-transaction marker);
//! - with no snapshot at the base (and base > 0), state from before the base is unknown: first
//!   offsets and last stable offsets below the base are accepted, and a producer is checked only
//!   as far as the segment shows it;
//! - the cleaner rewrites segments (offset gaps, batches holding fewer records than offsets,
//!   delete horizons; a batch skipped for a bad CRC leaves a gap too): then only what survives
//!   compaction is checked — each index entry names an ABORT marker, in marker order, and a batch
//!   a snapshot names, if still there, is that producer's batch.
//!
//! Check ids (all errors):
//! - `txnindex.missing`: an ABORT marker ended a non-empty transaction, and no entry names it;
//! - `txnindex.marker`: an entry names no ABORT marker of its producer at its last offset, a
//!   marker that ended no transaction (an empty abort), or a marker already named;
//! - `txnindex.entry`: an entry's first offset or last stable offset is not the log's;
//! - `txnindex.order`: entries out of marker order (readers stop early relying on it);
//! - `snapshot.content`: a snapshot entry differs from the replayed producer, names a batch
//!   that is not that producer's, lies at or past the snapshot's offset, or a producer with an
//!   open transaction is missing;
//! - `producer.state`: the broker refuses a batch (a non-transactional batch inside an open
//!   transaction, a control batch that is no marker): loading fails there.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::format::control::{decode_control_key, ControlRecordType};
use crate::format::entry::Entry;
use crate::format::index::{AbortedTxn, ABORTED_TXN_ENTRY_BYTES};
use crate::format::names::txn_index_file_name;
use crate::format::snapshot::{
    ProducerSnapshotEntry, PRODUCER_SNAPSHOT_ENTRY_BYTES, PRODUCER_SNAPSHOT_HEADER_BYTES,
};
use crate::ops::finding::Finding;
use crate::storage::producer_state::{CompletedTxn, IdMap, ProducerStateManager};

/// Producer state at a segment's base offset.
pub(super) enum StartState {
    /// Nothing came before (base offset 0): no producer.
    Empty,
    /// The entries of the snapshot at the base offset.
    Snapshot(Vec<ProducerSnapshotEntry>),
    /// Neither: producers are known only from what the segment shows.
    Unknown,
}

/// What the replay learned about one producer from this segment's batches.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    /// A data batch: its last batch is known.
    data: bool,
    /// A marker: its coordinator epoch is known.
    marker: bool,
    /// A marker or a non-transactional batch: whether it has an open transaction is known.
    txn: bool,
    /// Data with no transaction open since its last marker: it may have expired and come back,
    /// so a snapshot may give coordinator epoch -1.
    back_with_data: bool,
    /// A marker with no transaction open since its last data batch: it may have expired and
    /// come back through that marker, so a snapshot may give no batch.
    back_with_marker: bool,
}

/// One ABORT marker of the segment and what the replay expects the index to say about it.
#[derive(Debug, Clone)]
struct Abort {
    producer_id: i64,
    offset: i64,
    /// The engine's entry; None when it saw no open transaction (an empty abort).
    entry: Option<AbortedTxn>,
    /// The producer's open transaction was known at the marker, so `entry` is exact.
    txn_known: bool,
    /// The last stable offset the engine gives at the marker (also for an empty abort).
    lso: i64,
    /// The one a follower's multi-batch append gives instead, once known.
    lso_alt: Option<i64>,
    matched: bool,
}

/// A snapshot in the segment's range, compared when the replay reaches its offset.
struct Snapshot {
    offset: i64,
    path: PathBuf,
    entries: Vec<ProducerSnapshotEntry>,
    /// Findings of the full comparison with the replayed state.
    strict: Vec<Finding>,
    /// Findings that hold even for a rewritten segment.
    identity: Vec<Finding>,
    /// Its offset falls inside a batch, where the broker never snapshots: identity checks only.
    inside_batch: bool,
    /// Compared (at a batch, or at the end if its offset is at most the segment's end).
    compared: bool,
}

/// An offset in the segment a snapshot entry names: its producer's last batch ends there, or
/// its open transaction begins there.
#[derive(Debug, Clone, Copy)]
struct Target {
    offset: i64,
    snapshot: usize,
    entry: usize,
    txn_start: bool,
}

/// The replay of one segment; see the module documentation.
pub(super) struct SegmentReplay {
    log_path: PathBuf,
    base_offset: i64,
    state: ProducerStateManager,
    start_known: bool,
    seen: IdMap<Seen>,
    snapshots: Vec<Snapshot>,
    next_snapshot: usize,
    targets: Vec<Target>,
    next_target: usize,
    aborts: Vec<Abort>,
    /// Aborts whose LSO is marker + 1, waiting for another producer's next transaction.
    awaiting_alt: Vec<usize>,
    /// The cleaner (or damage) removed or rewrote batches: strict comparisons do not hold.
    rewritten: bool,
    /// The first batch the engine refused: from there its state is no longer the broker's.
    state_error: Option<Finding>,
    /// The offset the next batch starts at if nothing is missing.
    next_offset: i64,
    scratch: Vec<u8>,
}

fn message(e: Error) -> String {
    match e {
        Error::Invalid { message, .. } | Error::Decode { message, .. } => message,
        other => other.to_string(),
    }
}

fn snapshot_position(i: usize) -> u64 {
    (PRODUCER_SNAPSHOT_HEADER_BYTES + i * PRODUCER_SNAPSHOT_ENTRY_BYTES) as u64
}

impl SegmentReplay {
    /// `snapshots`: every snapshot of the partition whose offset lies in (base offset, next
    /// segment's base] (any offset above the base for the last segment), with its path and
    /// decoded entries.
    pub fn new(
        log_path: &Path,
        base_offset: i64,
        start: StartState,
        mut snapshots: Vec<(i64, PathBuf, Vec<ProducerSnapshotEntry>)>,
    ) -> Self {
        let dir = log_path.parent().unwrap_or(Path::new("."));
        let (state, start_known) = match &start {
            StartState::Empty => (ProducerStateManager::new(dir, base_offset), true),
            StartState::Snapshot(entries) => (
                ProducerStateManager::from_snapshot_entries(dir, base_offset, entries),
                true,
            ),
            StartState::Unknown => (ProducerStateManager::new(dir, base_offset), false),
        };
        snapshots.sort_by_key(|s| s.0);
        let mut targets = Vec::new();
        for (si, (offset, _, entries)) in snapshots.iter().enumerate() {
            for (ei, e) in entries.iter().enumerate() {
                let mut add = |o: i64, txn_start: bool| {
                    if (base_offset..*offset).contains(&o) {
                        targets.push(Target {
                            offset: o,
                            snapshot: si,
                            entry: ei,
                            txn_start,
                        });
                    }
                };
                if e.has_batch_metadata() {
                    add(e.last_offset, false);
                }
                if let Some(f) = e.current_txn_first_offset() {
                    add(f, true);
                }
            }
        }
        targets.sort_by_key(|t| t.offset);
        SegmentReplay {
            log_path: log_path.to_path_buf(),
            base_offset,
            state,
            start_known,
            seen: IdMap::default(),
            snapshots: snapshots
                .into_iter()
                .map(|(offset, path, entries)| Snapshot {
                    offset,
                    path,
                    entries,
                    strict: Vec::new(),
                    identity: Vec::new(),
                    inside_batch: false,
                    compared: false,
                })
                .collect(),
            next_snapshot: 0,
            targets,
            next_target: 0,
            aborts: Vec::new(),
            awaiting_alt: Vec::new(),
            rewritten: false,
            state_error: None,
            next_offset: base_offset,
            scratch: Vec::new(),
        }
    }

    /// Every batch of the segment whose CRC is valid, in file order, with its byte position.
    pub fn batch(&mut self, position: u64, entry: &Entry<'_>) {
        let last = entry.last_offset();
        // A legacy entry's header gives only its last offset.
        let first = match entry {
            Entry::V2(b) => b.header.base_offset,
            Entry::Legacy(_) => last,
        };
        match entry {
            Entry::V2(b) => {
                let h = &b.header;
                if first != self.next_offset
                    || i64::from(h.record_count) != i64::from(h.last_offset_delta) + 1
                    || h.delete_horizon_ms().is_some()
                {
                    self.rewritten = true;
                }
            }
            Entry::Legacy(_) if last < self.next_offset => self.rewritten = true,
            Entry::Legacy(_) => {}
        }
        self.next_offset = last.saturating_add(1);
        self.check_targets(entry, first, last);
        while let Some(s) = self.snapshots.get(self.next_snapshot) {
            if s.offset > last {
                break;
            }
            let inside = s.offset > first;
            self.compare_snapshot(self.next_snapshot, inside);
            self.next_snapshot += 1;
        }
        if let Entry::V2(b) = entry {
            if b.header.has_producer_id() {
                self.apply(position, entry);
            }
        }
    }

    /// The findings, given the segment's `.txnindex` (path and entries decoded) if it has one
    /// and the offset the segment ends at: the next segment's base offset, or the log end
    /// offset for the last segment.
    /// `txn_index`: the segment's `.txnindex` and its entries, streamed (a hostile file can
    /// hold millions of entries).
    pub fn finish(
        mut self,
        txn_index: Option<(&Path, &mut dyn Iterator<Item = AbortedTxn>)>,
        segment_end_offset: i64,
    ) -> Vec<Finding> {
        if segment_end_offset > self.next_offset {
            self.rewritten = true;
        }
        // Snapshots past the segment's end are the range check's business (the broker deletes
        // them at load); the others see the state after the last batch.
        while let Some(s) = self.snapshots.get(self.next_snapshot) {
            if s.offset <= segment_end_offset {
                self.compare_snapshot(self.next_snapshot, false);
            }
            self.next_snapshot += 1;
        }
        let relaxed = self.rewritten || self.state_error.is_some();
        let mut findings = Vec::new();
        if !self.rewritten {
            findings.extend(self.state_error.take());
        }
        for s in std::mem::take(&mut self.snapshots) {
            if s.compared {
                findings.extend(if relaxed || s.inside_batch {
                    s.identity
                } else {
                    s.strict
                });
            }
        }
        findings.extend(self.check_txn_index(txn_index, relaxed));
        findings
    }

    /// The entries the replay expects in the `.txnindex`, in order.
    #[cfg(test)]
    fn expected_entries(&self) -> Vec<AbortedTxn> {
        self.aborts.iter().filter_map(|a| a.entry).collect()
    }

    /// Snapshot entries naming an offset of this batch: it must be that producer's batch.
    fn check_targets(&mut self, entry: &Entry<'_>, first: i64, last: i64) {
        while let Some(&t) = self.targets.get(self.next_target) {
            if t.offset > last {
                break;
            }
            self.next_target += 1;
            // Below this batch and after the previous one: a gap, the batch compacted away.
            if t.offset < first {
                continue;
            }
            let snap = &self.snapshots[t.snapshot];
            let e = snap.entries[t.entry];
            let h = match entry {
                Entry::V2(b) => Some(b.header),
                Entry::Legacy(_) => None,
            };
            let same_producer =
                h.is_some_and(|h| h.producer_id == e.producer_id && !h.is_control());
            let there = match h {
                Some(h) => format!(
                    "offsets {first}..={last} of producer {}, last sequence {}, epoch {}",
                    h.producer_id,
                    h.last_sequence(),
                    h.producer_epoch
                ),
                None => format!("a legacy message ending at offset {last}"),
            };
            let m = if t.txn_start {
                if same_producer && h.is_some_and(|h| h.is_transactional() && first == t.offset) {
                    continue;
                }
                format!(
                    "producer {}'s open transaction begins at offset {} in this snapshot, but the log's batch there ({there}) does not begin a transaction of that producer",
                    e.producer_id, t.offset
                )
            } else {
                let same_batch = h.is_some_and(|h| {
                    last == e.last_offset
                        && h.last_offset_delta == e.offset_delta
                        && h.last_sequence() == e.last_sequence
                        && h.producer_epoch == e.producer_epoch
                });
                if same_producer && same_batch {
                    continue;
                }
                format!(
                    "producer {}'s last batch in this snapshot (offsets {}..={}, last sequence {}, epoch {}) is not the log's batch there ({there})",
                    e.producer_id,
                    e.first_offset(),
                    e.last_offset,
                    e.last_sequence,
                    e.producer_epoch
                )
            };
            let f = Finding::error("snapshot.content", &snap.path, m)
                .at(snapshot_position(t.entry))
                .offset(t.offset);
            self.snapshots[t.snapshot].identity.push(f);
        }
    }

    /// Whether a control batch is an ABORT (Some(true)) or COMMIT (Some(false)) marker, read
    /// as the engine reads it.
    fn marker_kind(&mut self, entry: &Entry<'_>) -> Option<bool> {
        let mut records = entry
            .records(&mut self.scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
            .ok()?;
        let r = records.next()?.ok()?;
        match decode_control_key(r.key).ok()? {
            ControlRecordType::Abort => Some(true),
            ControlRecordType::Commit => Some(false),
            _ => None,
        }
    }

    /// Applies one batch of a producer as recovery does, noting what the index needs.
    fn apply(&mut self, position: u64, entry: &Entry<'_>) {
        let Entry::V2(b) = entry else { return };
        let h = b.header;
        let pid = h.producer_id;
        let open_before = self
            .state
            .entry(pid)
            .is_some_and(|e| e.current_txn_first_offset.is_some());
        let marker = if h.is_control() {
            self.marker_kind(entry)
        } else {
            None
        };
        let mut aborted = Vec::new();
        let applied = self.state.apply_entry(entry, &self.log_path, |t| {
            aborted.push(t);
            Ok(())
        });
        if let Err(e) = applied {
            // The broker stops at the first: later refusals follow from it.
            if self.state_error.is_some() {
                return;
            }
            let m = format!(
                "the broker cannot apply producer {pid}'s batch at offset {} to its producer state ({}): recovering the segment or rebuilding producer state through it fails",
                h.base_offset,
                message(e)
            );
            self.state_error = Some(
                Finding::error("producer.state", &self.log_path, m)
                    .at(position)
                    .offset(h.base_offset),
            );
            return;
        }
        let seen = self.seen.entry(pid).or_default();
        let txn_known = self.start_known || seen.txn;
        if h.is_control() {
            // An empty control batch (the cleaner's) changes nothing.
            if marker.is_some() {
                seen.marker = true;
                seen.txn = true;
                seen.back_with_data = false;
                seen.back_with_marker |= !open_before;
            }
        } else {
            seen.data = true;
            seen.back_with_marker = false;
            seen.back_with_data |= !open_before;
            if !h.is_transactional() {
                seen.txn = true;
            } else if !open_before {
                // In a follower's multi-batch append this begun transaction already counts
                // for the LSO of the aborts before it.
                let aborts = &mut self.aborts;
                self.awaiting_alt.retain(|&i| {
                    let keep = aborts[i].producer_id == pid;
                    if !keep {
                        aborts[i].lso_alt = Some(h.base_offset);
                    }
                    keep
                });
            }
        }
        if marker == Some(true) {
            let entry = aborted.first().copied();
            let lso = entry.map_or_else(
                || {
                    self.state.last_stable_offset(&CompletedTxn {
                        producer_id: pid,
                        first_offset: h.base_offset,
                        last_offset: h.base_offset,
                        is_aborted: true,
                    })
                },
                |t| t.last_stable_offset,
            );
            if lso == h.base_offset.saturating_add(1) {
                self.awaiting_alt.push(self.aborts.len());
            }
            self.aborts.push(Abort {
                producer_id: pid,
                offset: h.base_offset,
                entry,
                txn_known,
                lso,
                lso_alt: None,
                matched: false,
            });
        }
    }

    /// Compares snapshot `i` with the state replayed so far (the state at its offset).
    fn compare_snapshot(&mut self, i: usize, inside_batch: bool) {
        let snap = &self.snapshots[i];
        let x = snap.offset;
        let mut strict = Vec::new();
        let mut identity = Vec::new();
        for (ei, e) in snap.entries.iter().enumerate() {
            let finding = |m: String| {
                Finding::error("snapshot.content", &snap.path, m)
                    .at(snapshot_position(ei))
                    .offset(x)
            };
            // Beyond the snapshot's offset: wrong whatever happened before.
            let beyond = if e.has_batch_metadata() && e.last_offset >= x {
                Some(format!("last batch at offset {}", e.last_offset))
            } else {
                e.current_txn_first_offset()
                    .filter(|&f| f >= x)
                    .map(|f| format!("open transaction from offset {f}"))
            };
            if let Some(what) = beyond {
                let f = finding(format!(
                    "producer {} has its {what}, not below the snapshot's offset {x}",
                    e.producer_id
                ));
                identity.push(f.clone());
                strict.push(f);
                continue;
            }
            if let Some(m) = self.entry_mismatch(e, x) {
                strict.push(finding(m));
            }
        }
        for r in self.state.producers() {
            if let Some(f) = r.current_txn_first_offset {
                if !snap.entries.iter().any(|e| e.producer_id == r.producer_id) {
                    let m = format!(
                        "producer {} is missing although its transaction from offset {f} is open at offset {x} (the broker never expires a producer with an open transaction)",
                        r.producer_id
                    );
                    strict.push(Finding::error("snapshot.content", &snap.path, m).offset(f));
                }
            }
        }
        let snap = &mut self.snapshots[i];
        snap.strict = strict;
        snap.identity.extend(identity);
        snap.inside_batch = inside_batch;
        snap.compared = true;
    }

    /// How snapshot entry `e` at offset `x` differs from the replayed state, in one sentence.
    fn entry_mismatch(&self, e: &ProducerSnapshotEntry, x: i64) -> Option<String> {
        let pid = e.producer_id;
        let base = self.base_offset;
        let seen = self.seen.get(&pid).copied().unwrap_or_default();
        let known = self.start_known;
        let mut diffs: Vec<String> = Vec::new();
        let diff = |what: &str, snap: i64, log: i64| format!("{what} {snap} (the log gives {log})");
        match self.state.entry(pid) {
            None if known => {
                let nor = if base > 0 {
                    format!(" nor in the snapshot at offset {base}")
                } else {
                    String::new()
                };
                return Some(format!(
                    "producer {pid} is in this snapshot but in no batch of the log below offset {x}{nor}"
                ));
            }
            None => {
                // Unknown start: what the snapshot places in this segment must be there.
                if e.last_offset >= base {
                    diffs.push(format!(
                        "last batch at offset {}, in this segment, which has no batch of that producer",
                        e.last_offset
                    ));
                }
                if let Some(f) = e.current_txn_first_offset().filter(|&f| f >= base) {
                    diffs.push(format!(
                        "open transaction from offset {f}, in this segment, which has no batch of that producer"
                    ));
                }
            }
            Some(r) => {
                if e.producer_epoch != r.producer_epoch {
                    diffs.push(diff(
                        "epoch",
                        i64::from(e.producer_epoch),
                        i64::from(r.producer_epoch),
                    ));
                }
                if known || seen.data {
                    if !(e.last_offset < 0 && seen.back_with_marker) {
                        if e.last_sequence != r.last_seq() {
                            diffs.push(diff(
                                "last sequence",
                                i64::from(e.last_sequence),
                                i64::from(r.last_seq()),
                            ));
                        }
                        if e.last_offset != r.last_data_offset() {
                            diffs.push(diff("last offset", e.last_offset, r.last_data_offset()));
                        }
                        if e.offset_delta != r.last_offset_delta() {
                            diffs.push(diff(
                                "offset delta",
                                i64::from(e.offset_delta),
                                i64::from(r.last_offset_delta()),
                            ));
                        }
                    }
                } else if e.last_offset >= base {
                    diffs.push(format!(
                        "last batch at offset {}, in this segment, where that producer has no data batch",
                        e.last_offset
                    ));
                }
                if e.timestamp != r.last_timestamp {
                    diffs.push(diff("timestamp", e.timestamp, r.last_timestamp));
                }
                if (known || seen.marker)
                    && e.coordinator_epoch != r.coordinator_epoch
                    && !(e.coordinator_epoch == -1 && seen.back_with_data)
                {
                    diffs.push(diff(
                        "coordinator epoch",
                        i64::from(e.coordinator_epoch),
                        i64::from(r.coordinator_epoch),
                    ));
                }
                let (snap_txn, log_txn) =
                    (e.current_txn_first_offset(), r.current_txn_first_offset);
                // Unknown start: an open transaction may have begun before the base.
                let from_before_base = !(known || seen.txn) && snap_txn.is_some_and(|f| f < base);
                if snap_txn != log_txn && !from_before_base {
                    diffs.push(diff(
                        "open transaction's first offset",
                        snap_txn.unwrap_or(-1),
                        log_txn.unwrap_or(-1),
                    ));
                }
            }
        }
        (!diffs.is_empty()).then(|| {
            format!(
                "producer {pid} does not match the log replayed up to offset {x}: {}",
                diffs.join(", ")
            )
        })
    }

    fn check_txn_index(
        mut self,
        txn_index: Option<(&Path, &mut dyn Iterator<Item = AbortedTxn>)>,
        relaxed: bool,
    ) -> Vec<Finding> {
        let default_path = self
            .log_path
            .with_file_name(txn_index_file_name(self.base_offset));
        // A remote segment (`--remote`) has no local transaction index: the broker reads the
        // plugin's, which `tiered --deep` judges.
        let remote =
            txn_index.is_none() && crate::storage::tiered::shown_as(&self.log_path).is_some();
        let mut none = std::iter::empty();
        let (path, entries) = txn_index.unwrap_or((default_path.as_path(), &mut none));
        let log_name = self
            .log_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let by_marker: HashMap<(i64, i64), usize> = self
            .aborts
            .iter()
            .enumerate()
            .map(|(i, a)| ((a.producer_id, a.offset), i))
            .collect();
        let base = self.base_offset;
        let start_known = self.start_known;
        let mut findings = EntryFindings::default();
        let mut last_matched: Option<i64> = None;
        for (i, t) in entries.enumerate() {
            let (pid, last) = (t.producer_id, t.last_offset);
            let error = |check: &'static str, m: String| {
                Finding::error(check, path, m)
                    .at((i * ABORTED_TXN_ENTRY_BYTES) as u64)
                    .offset(last)
            };
            let Some(&j) = by_marker.get(&(pid, last)) else {
                findings.push(error(
                    "txnindex.marker",
                    format!("aborted transaction of producer {pid} ending at offset {last} has no ABORT marker of that producer at that offset in {log_name}"),
                ));
                continue;
            };
            let a = &mut self.aborts[j];
            if a.matched {
                findings.push(error(
                    "txnindex.marker",
                    format!("second entry for producer {pid}'s ABORT marker at offset {last}: the broker indexes each aborted transaction once"),
                ));
                continue;
            }
            a.matched = true;
            if let Some(prev) = last_matched.filter(|&p| last <= p) {
                findings.push(error(
                    "txnindex.order",
                    format!("entry for the ABORT marker at offset {last} comes after the one for offset {prev}: the broker appends entries in marker order, and readers stop early relying on it"),
                ));
            }
            last_matched = Some(last_matched.map_or(last, |p| p.max(last)));
            if relaxed {
                continue;
            }
            let lso_ok = |v: i64| v == a.lso || Some(v) == a.lso_alt || (!start_known && v < base);
            let mut diffs = Vec::new();
            match a.entry {
                None if a.txn_known => {
                    findings.push(error(
                        "txnindex.marker",
                        format!("producer {pid}'s ABORT marker at offset {last} ended no transaction (an empty abort), which the broker does not index"),
                    ));
                    continue;
                }
                // State before the base unknown: the transaction may have begun before it.
                None => {
                    if t.first_offset >= base {
                        diffs.push(format!(
                            "first offset {} lies in this segment, where producer {pid} has no transactional batch before the marker",
                            t.first_offset
                        ));
                    }
                }
                Some(exp) => {
                    let first_ok = t.first_offset == exp.first_offset
                        || (!a.txn_known && t.first_offset < base);
                    if !first_ok {
                        diffs.push(format!(
                            "first offset {} (the log gives {})",
                            t.first_offset, exp.first_offset
                        ));
                    }
                }
            }
            if !lso_ok(t.last_stable_offset) {
                diffs.push(format!(
                    "last stable offset {} (the log gives {})",
                    t.last_stable_offset, a.lso
                ));
            }
            if !diffs.is_empty() {
                findings.push(error(
                    "txnindex.entry",
                    format!(
                        "aborted transaction of producer {pid} ending at offset {last} does not match the log: {}",
                        diffs.join(", ")
                    ),
                ));
            }
        }
        if !relaxed && !remote {
            for a in self.aborts.iter().filter(|a| !a.matched) {
                let Some(exp) = a.entry else { continue };
                let m = format!(
                    "producer {}'s ABORT marker at offset {} ends its transaction from offset {}, but the index has no entry for it: READ_COMMITTED consumers would read the aborted records",
                    a.producer_id, a.offset, exp.first_offset
                );
                findings.push(Finding::error("txnindex.missing", path, m).offset(a.offset));
            }
        }
        findings.finish(path)
    }
}

/// The most findings one `.txnindex` lists; a hostile file of millions of entries gets the
/// rest counted in one more finding.
const MAX_TXN_INDEX_FINDINGS: usize = 100;

#[derive(Default)]
struct EntryFindings {
    listed: Vec<Finding>,
    unlisted: u64,
}

impl EntryFindings {
    fn push(&mut self, f: Finding) {
        if self.listed.len() < MAX_TXN_INDEX_FINDINGS {
            self.listed.push(f);
        } else {
            self.unlisted += 1;
        }
    }

    fn finish(mut self, path: &Path) -> Vec<Finding> {
        if self.unlisted > 0 {
            let f = unlisted(
                "txnindex.entry",
                path,
                self.unlisted,
                MAX_TXN_INDEX_FINDINGS,
            );
            self.listed.push(f);
        }
        self.listed
    }
}

/// The finding that counts the `n` findings on an index's entries left unlisted past the
/// first `listed`.
pub(super) fn unlisted(check: &'static str, path: &Path, n: u64, listed: usize) -> Finding {
    let m = format!(
        "{n} more finding(s) on this index's entries are not listed (the first {listed} are)"
    );
    Finding::error(check, path, m)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::format::index::decode_txn_index;
    use crate::format::names::{classify, log_file_name, snapshot_file_name, FileKind};
    use crate::format::snapshot;
    use crate::format::test_util::reference_dir;
    use crate::ops::write::spec::{write_spec, Spec};
    use crate::storage::log::LogEvent;
    use crate::storage::log_reader::{LogReader, Step};

    const SCENARIOS: [&str; 9] = [
        "a-plain-v2",
        "b-codecs",
        "c-transactions",
        "d-legacy",
        "e-edge-records",
        "f-crash-torn-tail",
        "g-corrupt-middle",
        "h-index-damage",
        "i-compaction",
    ];

    /// A partition's files as the replay takes them, damaged in memory by the tests.
    struct Partition {
        dir: PathBuf,
        bases: Vec<i64>,
        snapshots: BTreeMap<i64, Vec<ProducerSnapshotEntry>>,
        txn_indexes: BTreeMap<i64, Vec<AbortedTxn>>,
        /// Replay every segment above 0 as if it had no snapshot at its base.
        unknown_starts: bool,
        /// A batch (by base offset) left out, as a bad CRC or the cleaner would.
        skip_batch: Option<i64>,
    }

    impl Partition {
        fn read(dir: &Path) -> Self {
            let mut p = Partition {
                dir: dir.to_path_buf(),
                bases: Vec::new(),
                snapshots: BTreeMap::new(),
                txn_indexes: BTreeMap::new(),
                unknown_starts: false,
                skip_batch: None,
            };
            for f in std::fs::read_dir(dir).unwrap() {
                let path = f.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                match classify(&name) {
                    FileKind::Log { base_offset } => p.bases.push(base_offset),
                    FileKind::ProducerSnapshot { offset } => {
                        let s = snapshot::decode(&std::fs::read(&path).unwrap()).unwrap();
                        p.snapshots.insert(offset, s.entries);
                    }
                    FileKind::TxnIndex { base_offset } => {
                        let t = decode_txn_index(&std::fs::read(&path).unwrap()).unwrap();
                        p.txn_indexes.insert(base_offset, t);
                    }
                    _ => {}
                }
            }
            p.bases.sort();
            p
        }

        fn base_of(&self, offset: i64) -> usize {
            self.bases.iter().rposition(|&b| b <= offset).unwrap()
        }

        /// Replays segment `i` as verify would: the entries it expects and its findings.
        fn replay(&self, i: usize) -> (Vec<AbortedTxn>, Vec<Finding>) {
            let base = self.bases[i];
            let next = self.bases.get(i + 1).copied();
            let start = match self.snapshots.get(&base) {
                Some(e) if !self.unknown_starts => StartState::Snapshot(e.clone()),
                _ if base == 0 => StartState::Empty,
                _ => StartState::Unknown,
            };
            let in_range = self
                .snapshots
                .range(base + 1..)
                .filter(|(&o, _)| next.is_none_or(|n| o <= n))
                .map(|(&o, e)| (o, self.dir.join(snapshot_file_name(o)), e.clone()))
                .collect();
            let log = self.dir.join(log_file_name(base));
            let mut replay = SegmentReplay::new(&log, base, start, in_range);
            let mut reader = LogReader::open(&log, None).unwrap();
            let mut end = base;
            while let Step::Entry { position, entry } = reader.next_step().unwrap() {
                end = entry.last_offset() + 1;
                let skipped =
                    matches!(entry, Entry::V2(b) if Some(b.header.base_offset) == self.skip_batch);
                if entry.crc_is_valid() && !skipped {
                    replay.batch(position, &entry);
                }
            }
            let expected = replay.expected_entries();
            let txn_path = self.dir.join(txn_index_file_name(base));
            let mut entries = self.txn_indexes.get(&base).map(|t| t.iter().copied());
            let txn = entries.as_mut().map(|t| {
                (
                    txn_path.as_path(),
                    t as &mut dyn Iterator<Item = AbortedTxn>,
                )
            });
            (expected, replay.finish(txn, next.unwrap_or(end)))
        }

        fn findings(&self) -> Vec<Finding> {
            (0..self.bases.len())
                .flat_map(|i| self.replay(i).1)
                .collect()
        }

        fn segment_findings(&self, offset: i64) -> Vec<Finding> {
            self.replay(self.base_of(offset)).1
        }
    }

    fn checks(findings: &[Finding]) -> Vec<(&'static str, Option<u64>, Option<i64>)> {
        findings
            .iter()
            .map(|f| (f.check, f.position, f.offset))
            .collect()
    }

    fn entry_of(entries: &mut [ProducerSnapshotEntry], pid: i64) -> &mut ProducerSnapshotEntry {
        entries.iter_mut().find(|e| e.producer_id == pid).unwrap()
    }

    #[test]
    fn reference_scenarios_replay_without_findings() {
        for scenario in SCENARIOS {
            let Some(dir) = reference_dir(scenario) else {
                return;
            };
            let mut p = Partition::read(&dir);
            assert_eq!(p.findings(), vec![], "{scenario}");
            p.unknown_starts = true;
            assert_eq!(p.findings(), vec![], "{scenario}, unknown start states");
        }
    }

    #[test]
    fn replayed_aborts_are_the_written_ones() {
        let Some(dir) = reference_dir("c-transactions") else {
            return;
        };
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("../../write-summary.json")).unwrap())
                .unwrap();
        let written: Vec<(i64, AbortedTxn)> = summary["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["event"] == "aborted_txn_indexed")
            .map(|e| {
                let n = |k: &str| e[k].as_i64().unwrap();
                let txn = AbortedTxn {
                    version: 0,
                    producer_id: n("producerId"),
                    first_offset: n("firstOffset"),
                    last_offset: n("offset"),
                    last_stable_offset: n("lastStableOffset"),
                };
                (n("segment"), txn)
            })
            .collect();
        assert_eq!(written.len(), 9);
        let p = Partition::read(&dir);
        let replayed: Vec<(i64, AbortedTxn)> = (0..p.bases.len())
            .flat_map(|i| {
                let base = p.bases[i];
                p.replay(i).0.into_iter().map(move |t| (base, t))
            })
            .collect();
        assert_eq!(replayed, written);
    }

    #[test]
    fn damaged_txn_index_entries_are_found() {
        let Some(dir) = reference_dir("c-transactions") else {
            return;
        };
        let clean = Partition::read(&dir);
        let damaged = |f: &dyn Fn(&mut Partition)| {
            let mut p = Partition::read(&dir);
            f(&mut p);
            checks(&p.findings())
                .into_iter()
                .map(|(c, pos, o)| (c.to_string(), pos, o))
                .collect::<Vec<_>>()
        };
        let one = |c: &str, pos: Option<u64>, o: i64| vec![(c.to_string(), pos, Some(o))];
        assert_eq!(clean.txn_indexes[&201][1].last_offset, 280);
        assert_eq!(
            damaged(&|p| {
                p.txn_indexes.get_mut(&201).unwrap().remove(1);
            }),
            one("txnindex.missing", None, 280)
        );
        assert_eq!(
            damaged(&|p| p.txn_indexes.get_mut(&201).unwrap()[1].first_offset += 1),
            one("txnindex.entry", Some(34), 280)
        );
        assert_eq!(
            damaged(&|p| p.txn_indexes.get_mut(&201).unwrap()[1].last_stable_offset -= 1),
            one("txnindex.entry", Some(34), 280)
        );
        // An entry for a COMMIT marker, and one for an offset holding data.
        for (pid, last) in [(16, 330), (16, 329)] {
            assert_eq!(
                damaged(&|p| p.txn_indexes.get_mut(&303).unwrap().push(AbortedTxn {
                    version: 0,
                    producer_id: pid,
                    first_offset: 323,
                    last_offset: last,
                    last_stable_offset: 331,
                })),
                one("txnindex.marker", Some(34), last)
            );
        }
        assert_eq!(
            damaged(&|p| p.txn_indexes.get_mut(&0).unwrap().swap(1, 2)),
            one("txnindex.order", Some(68), 46)
        );
        // The whole index gone: every aborted transaction of the segment is missing.
        let missing = damaged(&|p| {
            p.txn_indexes.remove(&201);
        });
        assert_eq!(missing.len(), 3);
        assert!(missing.iter().all(|(c, _, _)| c == "txnindex.missing"));
    }

    #[test]
    fn damaged_snapshot_entries_are_found() {
        let Some(dir) = reference_dir("c-transactions") else {
            return;
        };
        // 432 is the shutdown snapshot, no segment's start: damage there shows once.
        let damaged = |f: &dyn Fn(&mut Vec<ProducerSnapshotEntry>)| {
            let mut p = Partition::read(&dir);
            f(p.snapshots.get_mut(&432).unwrap());
            p.findings()
        };
        let pos = |pid: i64| {
            let p = Partition::read(&dir);
            let i = p.snapshots[&432]
                .iter()
                .position(|e| e.producer_id == pid)
                .unwrap();
            Some(snapshot_position(i))
        };
        let snap_finding = |pid| vec![("snapshot.content", pos(pid), Some(432))];
        for f in [
            &(|s: &mut Vec<_>| entry_of(s, 500).last_sequence -= 1) as &dyn Fn(&mut Vec<_>),
            &|s| entry_of(s, 500).last_offset = 412,
            &|s| entry_of(s, 500).last_offset = 432,
            &|s| entry_of(s, 500).producer_epoch += 1,
            &|s| entry_of(s, 500).timestamp += 1,
            &|s| entry_of(s, 500).current_txn_first_offset = 413,
        ] {
            assert_eq!(checks(&damaged(f)), snap_finding(500));
        }
        assert_eq!(
            checks(&damaged(&|s| entry_of(s, 33).current_txn_first_offset = 424)),
            snap_finding(33)
        );
        assert_eq!(
            checks(&damaged(&|s| entry_of(s, 1).coordinator_epoch = -1)),
            snap_finding(1)
        );
        let m = &damaged(&|s| entry_of(s, 500).last_sequence = 7)[0].message;
        assert!(
            m.contains("producer 500") && m.contains("last sequence 7 (the log gives 50)"),
            "{m}"
        );
        // Producer 33's transaction from 431 is open: it cannot have expired.
        assert_eq!(
            checks(&damaged(&|s| s.retain(|e| e.producer_id != 33))),
            vec![("snapshot.content", None, Some(431))]
        );
        // A producer that never wrote.
        assert_eq!(
            checks(&damaged(&|s| {
                let mut e = s[0];
                e.producer_id = 77;
                s.push(e);
            })),
            vec![("snapshot.content", Some(snapshot_position(4)), Some(432))]
        );
    }

    #[test]
    fn what_the_broker_may_do_is_accepted() {
        let Some(dir) = reference_dir("c-transactions") else {
            return;
        };
        let mut p = Partition::read(&dir);
        let s = p.snapshots.get_mut(&432).unwrap();
        // Expired: producer 500 has no open transaction.
        s.retain(|e| e.producer_id != 500);
        // Expired after its commit at 430 and back with the batch at 431: no coordinator epoch.
        entry_of(s, 33).coordinator_epoch = -1;
        assert_eq!(p.findings(), vec![]);
    }

    #[test]
    fn unknown_start_checks_what_the_segment_shows() {
        let Some(dir) = reference_dir("c-transactions") else {
            return;
        };
        let damaged = |f: &dyn Fn(&mut Vec<AbortedTxn>)| {
            let mut p = Partition::read(&dir);
            p.unknown_starts = true;
            f(p.txn_indexes.get_mut(&201).unwrap());
            checks(&p.segment_findings(201))
        };
        // Producer 1's transaction aborted at 218 began before the base, at 127: any first
        // offset and LSO below 201 could be right; one inside the segment cannot.
        assert_eq!(damaged(&|t| t[0].first_offset = 100), vec![]);
        assert_eq!(damaged(&|t| t[0].last_stable_offset = 3), vec![]);
        assert_eq!(
            damaged(&|t| t[0].first_offset = 205),
            vec![("txnindex.entry", Some(0), Some(218))]
        );
        // Producer 1's next transaction began after its marker at 218: exact.
        assert_eq!(
            damaged(&|t| t[2].first_offset = 218),
            vec![("txnindex.entry", Some(68), Some(302))]
        );
        assert_eq!(
            damaged(&|t| {
                t.remove(2);
            }),
            vec![("txnindex.missing", None, Some(302))]
        );
    }

    #[test]
    fn rewritten_segment_checks_only_what_survives() {
        let Some(dir) = reference_dir("c-transactions") else {
            return;
        };
        let mut p = Partition::read(&dir);
        // Producer 500's batch at 205..=209 gone, as the cleaner or a bad CRC leaves it.
        p.skip_batch = Some(205);
        assert_eq!(p.segment_findings(201), vec![]);
        p.txn_indexes.get_mut(&201).unwrap()[1].last_stable_offset = 7;
        p.txn_indexes.get_mut(&201).unwrap().remove(0);
        assert_eq!(p.segment_findings(201), vec![]);
        // A batch the snapshot names is still there, and is not what it says.
        entry_of(p.snapshots.get_mut(&303).unwrap(), 1).last_sequence = 3;
        assert_eq!(
            checks(&p.segment_findings(201)),
            vec![("snapshot.content", Some(snapshot_position(1)), Some(283))]
        );
        // An entry naming no ABORT marker is wrong whatever the cleaner did.
        p.txn_indexes.get_mut(&201).unwrap()[0].last_offset = 219;
        assert_eq!(
            checks(&p.segment_findings(201))[1],
            ("txnindex.marker", Some(0), Some(219))
        );
    }

    #[test]
    fn compacted_scenarios_replay_without_findings() {
        use crate::ops::simulate::compact::{compact_to, CompactOptions};
        for scenario in [
            "a-plain-v2",
            "c-transactions",
            "e-edge-records",
            "i-compaction",
        ] {
            let Some(dir) = reference_dir(scenario) else {
                return;
            };
            let tmp = tempfile::tempdir().unwrap();
            let now = 1_730_000_000_000;
            let mut src = dir;
            // Two rounds: the second past the delete horizon the first stamped.
            for (round, now) in [now, now + 86_400_001].into_iter().enumerate() {
                let opts = CompactOptions {
                    min_cleanable_dirty_ratio: 0.0,
                    ..CompactOptions::new(now)
                };
                let out = tmp.path().join(round.to_string());
                let report = compact_to(&src, &out, &opts).unwrap();
                src = report.out.unwrap();
                let mut p = Partition::read(&src);
                assert_eq!(p.findings(), vec![], "{scenario}, round {round}");
                p.unknown_starts = true;
                assert_eq!(
                    p.findings(),
                    vec![],
                    "{scenario}, round {round}, unknown starts"
                );
            }
        }
    }

    #[test]
    fn batch_the_broker_refuses_is_reported_once() {
        let Some(dir) = reference_dir("c-transactions") else {
            return;
        };
        let mut p = Partition::read(&dir);
        // The start snapshot says producer 500 has a transaction open; its batch at 205 is
        // not transactional.
        entry_of(p.snapshots.get_mut(&201).unwrap(), 500).current_txn_first_offset = 150;
        let found = p.segment_findings(201);
        assert_eq!(
            checks(&found),
            vec![("producer.state", Some(707), Some(205))],
            "{found:?}"
        );
        assert!(
            found[0].message.contains("transactional"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn hostile_input_gives_findings_not_panics() {
        use crate::format::batch::{build_batch, BatchSpec, RecordSpec};
        use crate::format::control::{encode_control_key, EndTxnMarker};
        let batch = |base: i64, n: i64, pid: i64, txn: bool, control: Option<Vec<u8>>| {
            let spec = BatchSpec {
                producer_id: pid,
                is_transactional: txn,
                is_control: control.is_some(),
                ..Default::default()
            };
            let records: Vec<RecordSpec> = (0..n)
                .map(|i| RecordSpec {
                    offset: i,
                    timestamp: 5,
                    key: control.clone().or(Some(b"k".to_vec())),
                    value: Some(EndTxnMarker::encode(3).to_vec()),
                    headers: vec![],
                })
                .collect();
            // The base offset is outside the CRC: set it afterwards, wrapping offsets and all.
            let mut bytes = build_batch(&spec, &records).unwrap();
            bytes[..8].copy_from_slice(&base.to_be_bytes());
            bytes
        };
        let abort = Some(encode_control_key(ControlRecordType::Abort).to_vec());
        let leader_change = Some(encode_control_key(ControlRecordType::LeaderChange).to_vec());
        let batches = [
            batch(i64::MAX - 3, 2, 1, true, None),
            batch(i64::MAX - 1, 1, 1, true, abort.clone()),
            batch(i64::MAX, 3, 2, true, None),
            batch(i64::MAX, 1, 2, false, None),
            batch(-5, 1, 3, true, abort.clone()),
            batch(7, 1, 4, true, Some(b"junk".to_vec())),
            batch(8, 1, 5, false, leader_change),
            batch(i64::MIN, 1, 6, true, abort),
        ];
        let weird = ProducerSnapshotEntry {
            producer_id: 1,
            producer_epoch: -7,
            last_sequence: i32::MIN,
            last_offset: i64::MIN,
            offset_delta: i32::MAX,
            timestamp: i64::MAX,
            coordinator_epoch: i32::MIN,
            current_txn_first_offset: i64::MAX - 2,
        };
        let entries = vec![
            weird,
            weird,
            ProducerSnapshotEntry {
                producer_id: -1,
                ..weird
            },
        ];
        let txns = [AbortedTxn {
            version: -3,
            producer_id: 1,
            first_offset: i64::MAX,
            last_offset: i64::MAX - 1,
            last_stable_offset: i64::MIN,
        }; 3];
        for start in [
            StartState::Empty,
            StartState::Unknown,
            StartState::Snapshot(entries.clone()),
        ] {
            let snaps = vec![
                (i64::MAX, PathBuf::from("a"), entries.clone()),
                (i64::MIN, PathBuf::from("b"), entries.clone()),
                (9, PathBuf::from("c"), entries.clone()),
            ];
            let mut r = SegmentReplay::new(Path::new("x/0.log"), i64::MAX - 3, start, snaps);
            // Batches ending at i64::MAX do not decode (no offset follows theirs): the
            // reader reports them as bad entries, and the replay never meets them.
            for (i, b) in batches.iter().enumerate() {
                match Entry::decode(b) {
                    Ok(e) => r.batch(i as u64, &e),
                    Err(e) => assert!(e.message.contains("no offset follows"), "{e:?}"),
                }
            }
            let found = r.finish(
                Some((Path::new("x/0.txnindex"), &mut txns.iter().copied())),
                i64::MIN,
            );
            assert!(!found.is_empty());
        }
    }

    /// Writes a partition from a SPEC's ops, as the broker's follower would.
    fn write(ops: &str) -> (tempfile::TempDir, PathBuf, Vec<LogEvent>) {
        let spec = Spec::from_json(&format!(
            r#"{{"topic":"t","partition":0,"start_ts":1000,"ops":{ops}}}"#
        ))
        .unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t-0");
        let summary = write_spec(&spec, &dir).unwrap();
        (tmp, dir, summary.events)
    }

    #[test]
    fn follower_multi_batch_append_lso_and_empty_aborts() {
        let (_tmp, dir, events) = write(
            r#"[
            {"op":"append","batches":[{"producer_id":1,"transactional":true,"records":[{"key":"a"}]}]},
            {"op":"append","batches":[
                {"producer_id":1,"control":{"type":"abort"}},
                {"records":[{"key":"b"}]},
                {"producer_id":2,"transactional":true,"records":[{"key":"c"}]}]},
            {"op":"append","batches":[{"producer_id":2,"control":{"type":"commit"}}]},
            {"op":"append","batches":[{"producer_id":3,"control":{"type":"abort"}}]},
            {"op":"append","batches":[{"producer_id":1,"producer_epoch":1,"control":{"type":"abort"}}]},
            {"op":"roll"},
            {"op":"append","batches":[{"producer_id":4,"records":[{"key":"d"}]}]}
        ]"#,
        );
        // One append call: producer 2's transaction begun at 3 already counts for the LSO.
        let indexed: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                LogEvent::AbortedTxnIndexed { txn, .. } => Some(txn.last_stable_offset),
                _ => None,
            })
            .collect();
        assert_eq!(indexed, vec![3]);
        let mut p = Partition::read(&dir);
        let (expected, findings) = p.replay(0);
        assert_eq!(expected[0].last_stable_offset, 2, "batch by batch");
        assert_eq!(findings, vec![]);
        assert_eq!(p.findings(), vec![]);
        // No entry for an empty abort, of a new producer (5) or after one (6).
        for (pid, at) in [(3, 5), (1, 6)] {
            p.txn_indexes.get_mut(&0).unwrap().push(AbortedTxn {
                version: 0,
                producer_id: pid,
                first_offset: at - 1,
                last_offset: at,
                last_stable_offset: at + 1,
            });
            assert_eq!(
                checks(&p.findings()),
                vec![("txnindex.marker", Some(34), Some(at))]
            );
            p.txn_indexes.get_mut(&0).unwrap().pop();
        }
        // Producer 1 may have expired after its abort at 1 and come back through the empty
        // abort at 6: a snapshot may then hold no batch for it.
        let e = entry_of(p.snapshots.get_mut(&7).unwrap(), 1);
        (e.last_sequence, e.last_offset, e.offset_delta) = (-1, -1, 0);
        assert_eq!(p.findings(), vec![]);
    }
}
