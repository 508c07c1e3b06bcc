//! Producer state as the broker keeps it on the follower (REPLICATION) append path
//! (behavior.md §3): per producer id its epoch, its last (up to five) batches, coordinator
//! epoch, last timestamp and open transaction; the open transactions by first offset; the map
//! end offset; and the `.snapshot` files written from it.
//!
//! Owns: applying batches and markers, completing transactions, the last stable offset of a
//! completed transaction, snapshot files and their names. Not the transaction index (the log
//! writes the entries this module computes) and not sequence validation (the follower path
//! accepts any sequence).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::path::{Path, PathBuf};

use super::java_hash_order::JavaHashOrder;
use crate::error::{Error, Result};
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::format::control::{decode_control_key, ControlRecordType, EndTxnMarker};
use crate::format::entry::Entry;
use crate::format::index::{AbortedTxn, ABORTED_TXN_CURRENT_VERSION};
use crate::format::names::{classify, snapshot_file_name, FileKind};
use crate::format::snapshot::{self, decrement_sequence, ProducerSnapshotEntry};

/// Hashes producer ids for the maps the replay looks up on every batch: a splitmix64 finish,
/// far cheaper than SipHash, and ids in files are not chosen by an attacker of this process.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0.rotate_left(8) ^ u64::from(b));
        }
    }

    fn write_i64(&mut self, id: i64) {
        self.write_u64(id as u64);
    }

    fn write_u64(&mut self, x: u64) {
        let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        self.0 = z ^ (z >> 31);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map keyed by producer id.
pub(crate) type IdMap<V> = HashMap<i64, V, BuildHasherDefault<IdHasher>>;

/// `producer.id.expiration.ms`, Kafka's default.
pub const DEFAULT_PRODUCER_ID_EXPIRATION_MS: i64 = 86_400_000;

/// How many batches Kafka remembers per producer (for duplicate detection).
pub const NUM_BATCHES_TO_RETAIN: usize = 5;
const NO_PRODUCER_EPOCH: i16 = -1;
const NO_SEQUENCE: i32 = -1;
const NO_COORDINATOR_EPOCH: i32 = -1;
const NO_TIMESTAMP: i64 = -1;

/// One remembered batch of a producer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMetadata {
    pub last_seq: i32,
    pub last_offset: i64,
    pub offset_delta: i32,
    pub timestamp: i64,
}

impl BatchMetadata {
    pub fn first_seq(&self) -> i32 {
        decrement_sequence(self.last_seq, self.offset_delta)
    }

    pub fn first_offset(&self) -> i64 {
        self.last_offset.wrapping_sub(i64::from(self.offset_delta))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerStateEntry {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub batches: VecDeque<BatchMetadata>,
    pub coordinator_epoch: i32,
    pub last_timestamp: i64,
    pub current_txn_first_offset: Option<i64>,
}

impl ProducerStateEntry {
    fn empty(producer_id: i64) -> Self {
        ProducerStateEntry {
            producer_id,
            producer_epoch: NO_PRODUCER_EPOCH,
            batches: VecDeque::new(),
            coordinator_epoch: NO_COORDINATOR_EPOCH,
            last_timestamp: NO_TIMESTAMP,
            current_txn_first_offset: None,
        }
    }

    /// A new epoch forgets the batches of the old one.
    fn maybe_update_producer_epoch(&mut self, epoch: i16) {
        if self.producer_epoch != epoch {
            self.batches.clear();
            self.producer_epoch = epoch;
        }
    }

    fn push_batch(&mut self, b: BatchMetadata) {
        if self.batches.len() == NUM_BATCHES_TO_RETAIN {
            self.batches.pop_front();
        }
        self.batches.push_back(b);
    }

    /// Merges what an append produced into the stored entry (`ProducerStateEntry.update`).
    fn merge(&mut self, next: ProducerStateEntry) {
        self.maybe_update_producer_epoch(next.producer_epoch);
        for b in next.batches {
            self.push_batch(b);
        }
        self.coordinator_epoch = next.coordinator_epoch;
        self.current_txn_first_offset = next.current_txn_first_offset;
        self.last_timestamp = next.last_timestamp;
    }

    /// An entry as a snapshot stores it: only the newest batch survives, and only if it has
    /// an offset.
    fn from_snapshot(e: &ProducerSnapshotEntry) -> Self {
        let mut batches = VecDeque::new();
        if e.has_batch_metadata() {
            batches.push_back(BatchMetadata {
                last_seq: e.last_sequence,
                last_offset: e.last_offset,
                offset_delta: e.offset_delta,
                timestamp: e.timestamp,
            });
        }
        ProducerStateEntry {
            producer_id: e.producer_id,
            producer_epoch: e.producer_epoch,
            batches,
            coordinator_epoch: e.coordinator_epoch,
            last_timestamp: e.timestamp,
            current_txn_first_offset: e.current_txn_first_offset(),
        }
    }

    pub fn last_seq(&self) -> i32 {
        self.batches.back().map_or(NO_SEQUENCE, |b| b.last_seq)
    }

    pub fn first_seq(&self) -> i32 {
        self.batches
            .front()
            .map_or(NO_SEQUENCE, BatchMetadata::first_seq)
    }

    pub fn last_data_offset(&self) -> i64 {
        self.batches.back().map_or(-1, |b| b.last_offset)
    }

    pub fn last_offset_delta(&self) -> i32 {
        self.batches.back().map_or(0, |b| b.offset_delta)
    }
}

/// A transaction that a marker ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    /// The marker's offset.
    pub last_offset: i64,
    pub is_aborted: bool,
}

/// The changes one append makes to one producer, applied to a copy of its entry that starts
/// with no batches (`ProducerAppendInfo`).
#[derive(Debug, Clone)]
pub struct ProducerAppendInfo {
    producer_id: i64,
    updated: ProducerStateEntry,
    started_txn_first_offsets: Vec<i64>,
}

impl ProducerAppendInfo {
    pub fn producer_id(&self) -> i64 {
        self.producer_id
    }

    /// A data batch. The follower path accepts any epoch and sequence; a non-transactional
    /// batch while a transaction is open is refused on every path.
    pub fn append_data_batch(
        &mut self,
        epoch: i16,
        last_seq: i32,
        max_timestamp: i64,
        first_offset: i64,
        last_offset: i64,
        is_transactional: bool,
    ) -> Result<()> {
        // Java's long arithmetic wraps: a header's last offset (base + delta) may have wrapped.
        let offset_delta = i32::try_from(last_offset.wrapping_sub(first_offset)).map_err(|_| {
            Error::invalid(
                Path::new(""),
                format!("batch offsets {first_offset}..{last_offset} span more than 2^31"),
            )
        })?;
        self.updated.maybe_update_producer_epoch(epoch);
        self.updated.push_batch(BatchMetadata {
            last_seq,
            last_offset,
            offset_delta,
            timestamp: max_timestamp,
        });
        self.updated.last_timestamp = max_timestamp;
        match (self.updated.current_txn_first_offset, is_transactional) {
            (Some(_), false) => Err(Error::invalid(
                Path::new(""),
                format!(
                    "expected a transactional write from producer {} at offset {first_offset}",
                    self.producer_id
                ),
            )),
            (None, true) => {
                self.updated.current_txn_first_offset = Some(first_offset);
                self.started_txn_first_offsets.push(first_offset);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// An end-transaction marker at `offset`: completes the open transaction, if any (a marker
    /// for an empty transaction completes nothing), and clears the batches if the epoch moved.
    pub fn append_end_txn_marker(
        &mut self,
        is_abort: bool,
        coordinator_epoch: i32,
        producer_epoch: i16,
        offset: i64,
        timestamp: i64,
    ) -> Option<CompletedTxn> {
        let completed = self
            .updated
            .current_txn_first_offset
            .map(|first_offset| CompletedTxn {
                producer_id: self.producer_id,
                first_offset,
                last_offset: offset,
                is_aborted: is_abort,
            });
        self.updated.maybe_update_producer_epoch(producer_epoch);
        self.updated.coordinator_epoch = coordinator_epoch;
        self.updated.current_txn_first_offset = None;
        self.updated.last_timestamp = timestamp;
        completed
    }
}

#[derive(Debug)]
pub struct ProducerStateManager {
    dir: PathBuf,
    producers: IdMap<ProducerStateEntry>,
    /// The order Kafka's `HashMap` iterates `producers` in, which snapshots are written in.
    order: JavaHashOrder,
    /// Open transactions: first offset → producer id.
    ongoing_txns: BTreeMap<i64, i64>,
    /// Completed transactions not yet known to be replicated: first offset → marker offset.
    unreplicated_txns: BTreeMap<i64, i64>,
    /// Offsets of the `.snapshot` files this manager knows of.
    snapshots: SnapshotOffsets,
    /// The `.snapshot` files in `dir` as every manager opened from one listing (one load)
    /// changed them: what a listing of the directory would find, without listing it again
    /// for each segment recovered ([`Self::open_beside`]).
    on_disk: Option<std::sync::Arc<std::sync::Mutex<SnapshotOffsets>>>,
    map_end_offset: i64,
    last_snap_offset: i64,
    /// `producer.id.expiration.ms`: entries idle that long are skipped when a snapshot loads.
    expiration_ms: i64,
}

impl ProducerStateManager {
    /// Empty state for a new log starting at `start_offset`: no snapshot is due there.
    pub fn new(dir: &Path, start_offset: i64) -> Self {
        ProducerStateManager {
            dir: dir.to_path_buf(),
            producers: IdMap::default(),
            order: JavaHashOrder::new(),
            ongoing_txns: BTreeMap::new(),
            unreplicated_txns: BTreeMap::new(),
            snapshots: SnapshotOffsets::default(),
            on_disk: None,
            map_end_offset: start_offset,
            last_snap_offset: start_offset,
            expiration_ms: DEFAULT_PRODUCER_ID_EXPIRATION_MS,
        }
    }

    /// The state a snapshot at `offset` holds, every entry loaded (none expired) and no files
    /// behind it: replaying a log from there writes nothing.
    pub fn from_snapshot_entries(
        dir: &Path,
        offset: i64,
        entries: &[ProducerSnapshotEntry],
    ) -> Self {
        let mut m = ProducerStateManager::new(dir, offset);
        for e in entries {
            m.load_entry(ProducerStateEntry::from_snapshot(e));
        }
        m
    }

    /// An empty manager for an existing directory: it knows the `.snapshot` files there.
    pub fn open(dir: &Path, expiration_ms: i64) -> Result<Self> {
        let mut m = ProducerStateManager::new(dir, 0);
        m.expiration_ms = expiration_ms;
        m.snapshots = list_snapshots(dir)?;
        m.on_disk = Some(std::sync::Arc::new(std::sync::Mutex::new(
            m.snapshots.clone(),
        )));
        Ok(m)
    }

    /// What [`Self::open`] of the same directory returns now, from the snapshot files this
    /// manager and the others opened beside it have written and deleted since its listing
    /// (Kafka's `recoverSegment` makes a fresh manager, which lists the directory, for every
    /// segment it recovers: a listing per segment made a load quadratic in segments).
    pub fn open_beside(&self) -> Result<Self> {
        let Some(on_disk) = &self.on_disk else {
            return Self::open(&self.dir, self.expiration_ms);
        };
        let mut m = ProducerStateManager::new(&self.dir, 0);
        m.expiration_ms = self.expiration_ms;
        m.snapshots = lock_listing(on_disk).clone();
        m.on_disk = Some(on_disk.clone());
        Ok(m)
    }

    /// Tells the shared listing that the loader itself deleted (`present` false) or renamed
    /// into place (true) the file `path`, if it is a `.snapshot`.
    pub fn note_file(&self, path: &Path, present: bool) {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if let FileKind::ProducerSnapshot { offset } = classify(&name) {
            self.note_on_disk(offset, present);
        }
    }

    /// Records in the shared listing that the snapshot at `offset` was written (or deleted).
    fn note_on_disk(&self, offset: i64, present: bool) {
        if let Some(on_disk) = &self.on_disk {
            let mut listing = lock_listing(on_disk);
            if present {
                listing.insert(offset);
            } else {
                listing.remove(&offset);
            }
        }
    }

    /// No producer and no unreplicated transaction.
    pub fn is_empty(&self) -> bool {
        self.producers.is_empty() && self.unreplicated_txns.is_empty()
    }

    pub fn latest_snapshot_offset(&self) -> Option<i64> {
        self.snapshots.last().copied()
    }

    fn clear(&mut self) {
        self.producers.clear();
        self.order = JavaHashOrder::new();
        self.ongoing_txns.clear();
        self.unreplicated_txns.clear();
    }

    fn remove_and_delete_snapshot(&mut self, offset: i64) -> Result<()> {
        if self.snapshots.remove(&offset) {
            let path = self.dir.join(snapshot_file_name(offset));
            super::files::remove_file(&path)?;
            self.note_on_disk(offset, false);
        }
        Ok(())
    }

    /// `truncateAndReload`: deletes snapshots above `log_end` or at or below `log_start`; then,
    /// unless the map already ends at `log_end`, forgets everything and loads the latest
    /// readable snapshot (corrupt ones are deleted), skipping producers expired at `now_ms`.
    pub fn truncate_and_reload(&mut self, log_start: i64, log_end: i64, now_ms: i64) -> Result<()> {
        let out_of_range = self.snapshots.outside(log_start, log_end);
        for o in out_of_range {
            self.remove_and_delete_snapshot(o)?;
        }
        if log_end != self.map_end_offset {
            self.clear();
            self.load_from_snapshot(log_start, now_ms)
        } else {
            self.on_log_start_offset_incremented(log_start);
            Ok(())
        }
    }

    fn load_from_snapshot(&mut self, log_start: i64, now_ms: i64) -> Result<()> {
        while let Some(offset) = self.latest_snapshot_offset() {
            let path = self.dir.join(snapshot_file_name(offset));
            let bytes = super::files::read_state(&path, super::files::StateFile::ProducerSnapshot)?;
            match snapshot::decode(&bytes) {
                Ok(snap) => {
                    for e in &snap.entries {
                        let expired = e.current_txn_first_offset().is_none()
                            && now_ms.saturating_sub(e.timestamp) >= self.expiration_ms;
                        if !expired {
                            self.load_entry(ProducerStateEntry::from_snapshot(e));
                        }
                    }
                    self.last_snap_offset = offset;
                    self.map_end_offset = offset;
                    return Ok(());
                }
                // A corrupt snapshot is deleted and the next latest tried, as Kafka does.
                Err(_) => self.remove_and_delete_snapshot(offset)?,
            }
        }
        self.last_snap_offset = log_start;
        self.map_end_offset = log_start;
        Ok(())
    }

    fn load_entry(&mut self, entry: ProducerStateEntry) {
        let pid = entry.producer_id;
        if let Some(first) = entry.current_txn_first_offset {
            self.ongoing_txns.insert(first, pid);
        }
        if self.producers.insert(pid, entry).is_none() {
            self.order.insert(pid);
        }
    }

    pub fn on_log_start_offset_incremented(&mut self, log_start: i64) {
        self.unreplicated_txns
            .retain(|_, &mut last| last >= log_start);
        self.map_end_offset = self.map_end_offset.max(log_start);
        self.last_snap_offset = self.latest_snapshot_offset().unwrap_or(log_start);
    }

    /// `truncateFullyAndStartAt`: no state, no snapshot, the map ends at `offset`.
    pub fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<()> {
        self.clear();
        for o in std::mem::take(&mut self.snapshots) {
            self.snapshots.insert(o);
            self.remove_and_delete_snapshot(o)?;
        }
        self.last_snap_offset = 0;
        self.map_end_offset = offset;
        Ok(())
    }

    /// `removeStraySnapshots`: keeps the snapshots at segment bases and the latest other one
    /// if it lies above every base.
    pub fn remove_stray_snapshots(&mut self, segment_bases: &BTreeSet<i64>) -> Result<()> {
        self.snapshots = list_snapshots(&self.dir)?;
        if let Some(on_disk) = &self.on_disk {
            *lock_listing(on_disk) = self.snapshots.clone();
        }
        let mut latest_stray: Option<i64> = None;
        for o in self.snapshots.clone() {
            if segment_bases.contains(&o) {
                continue;
            }
            if let Some(prev) = latest_stray.replace(o) {
                self.remove_and_delete_snapshot(prev)?;
            }
        }
        if let (Some(stray), Some(&max_base)) = (latest_stray, segment_bases.last()) {
            if stray < max_base {
                self.remove_and_delete_snapshot(stray)?;
            }
        }
        Ok(())
    }

    /// The snapshot of segment `base` goes with the segment (`removeAndMarkSnapshotForDeletion`;
    /// offline the file is deleted at once rather than renamed `.deleted`).
    pub fn delete_snapshot_of_segment(&mut self, base: i64) -> Result<()> {
        self.remove_and_delete_snapshot(base)
    }

    pub fn map_end_offset(&self) -> i64 {
        self.map_end_offset
    }

    pub fn update_map_end_offset(&mut self, offset: i64) {
        self.map_end_offset = offset;
    }

    pub fn entry(&self, producer_id: i64) -> Option<&ProducerStateEntry> {
        self.producers.get(&producer_id)
    }

    /// Producers in the order Kafka iterates (and snapshots) them.
    pub fn producers(&self) -> impl Iterator<Item = &ProducerStateEntry> + '_ {
        self.order.iter().map(|id| &self.producers[&id])
    }

    /// Starts an append's changes for `producer_id` from its current (or an empty) entry.
    pub fn prepare_update(&self, producer_id: i64) -> ProducerAppendInfo {
        // The copy starts with no batches: cloning them only to drop them costs an allocation
        // per batch replayed.
        let updated = match self.producers.get(&producer_id) {
            Some(e) => ProducerStateEntry {
                batches: VecDeque::new(),
                ..*e
            },
            None => ProducerStateEntry::empty(producer_id),
        };
        ProducerAppendInfo {
            producer_id,
            updated,
            started_txn_first_offsets: Vec::new(),
        }
    }

    pub fn update(&mut self, info: ProducerAppendInfo) {
        let pid = info.producer_id;
        for first in &info.started_txn_first_offsets {
            self.ongoing_txns.insert(*first, pid);
        }
        match self.producers.get_mut(&pid) {
            Some(current) => current.merge(info.updated),
            None => {
                self.producers.insert(pid, info.updated);
                self.order.insert(pid);
            }
        }
    }

    /// The first offset of the earliest open transaction of *another* producer, else the
    /// marker's offset + 1. Computed before the transaction is completed.
    pub fn last_stable_offset(&self, txn: &CompletedTxn) -> i64 {
        self.ongoing_txns
            .iter()
            .find(|(_, &pid)| pid != txn.producer_id)
            .map_or(txn.last_offset.wrapping_add(1), |(&first, _)| first)
    }

    pub fn complete_txn(&mut self, txn: &CompletedTxn) -> Result<()> {
        self.ongoing_txns
            .remove(&txn.first_offset)
            .map(|_| {
                self.unreplicated_txns
                    .insert(txn.first_offset, txn.last_offset);
            })
            .ok_or_else(|| {
                Error::invalid(
                    &self.dir,
                    format!(
                        "no open transaction starts at offset {} for producer {}",
                        txn.first_offset, txn.producer_id
                    ),
                )
            })
    }

    /// Applies what one append collected as the broker does (`UnifiedLog.append`, and
    /// `LogSegment.recover` batch by batch): every producer's changes first, then each completed
    /// transaction in log order, its last stable offset taken just before it completes. Each
    /// aborted one goes to `index_aborted` as the transaction-index entry the broker writes.
    pub fn apply_appends(
        &mut self,
        updates: Vec<ProducerAppendInfo>,
        completed: Vec<CompletedTxn>,
        mut index_aborted: impl FnMut(AbortedTxn) -> Result<()>,
    ) -> Result<()> {
        for u in updates {
            self.update(u);
        }
        for txn in completed {
            if txn.is_aborted {
                index_aborted(AbortedTxn {
                    version: ABORTED_TXN_CURRENT_VERSION,
                    producer_id: txn.producer_id,
                    first_offset: txn.first_offset,
                    last_offset: txn.last_offset,
                    last_stable_offset: self.last_stable_offset(&txn),
                })?;
            }
            self.complete_txn(&txn)?;
        }
        Ok(())
    }

    /// Applies one batch on its own, as `LogSegment.recover` does batch by batch: its changes,
    /// then the transaction its marker completes (each aborted one to `index_aborted`, as for
    /// [`Self::apply_appends`]). Returns the completed transactions (at most one).
    pub fn apply_entry(
        &mut self,
        entry: &Entry<'_>,
        path: &Path,
        index_aborted: impl FnMut(AbortedTxn) -> Result<()>,
    ) -> Result<Vec<CompletedTxn>> {
        let mut appends = ProducerAppends::default();
        appends.add(self, entry, path)?;
        let (updates, completed) = appends.finish();
        self.apply_appends(updates, completed.clone(), index_aborted)?;
        Ok(completed)
    }

    /// `onHighWatermarkUpdated`: completed transactions whose marker lies below the high
    /// watermark are replicated, so no longer hold the last stable offset back.
    pub fn on_high_watermark_updated(&mut self, high_watermark: i64) {
        self.unreplicated_txns
            .retain(|_, &mut last| last >= high_watermark);
    }

    /// `firstUnstableOffset`: the first offset of the earliest transaction that is open, or
    /// completed by a marker not yet known to be replicated.
    pub fn first_unstable_offset(&self) -> Option<i64> {
        let undecided = self.ongoing_txns.keys().next();
        let unreplicated = self.unreplicated_txns.keys().next();
        undecided.into_iter().chain(unreplicated).min().copied()
    }

    /// `UnifiedLog.lastStableOffset`: the first unstable offset if below `high_watermark`,
    /// else the high watermark.
    pub fn last_stable_offset_at(&self, high_watermark: i64) -> i64 {
        self.first_unstable_offset()
            .filter(|&f| f < high_watermark)
            .unwrap_or(high_watermark)
    }

    /// The open transactions: first offset and producer id, by first offset.
    pub fn ongoing_txns(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.ongoing_txns.iter().map(|(&f, &p)| (f, p))
    }

    /// Writes `<map end offset>.snapshot` if the map end offset moved past the last snapshot;
    /// returns the file written.
    pub fn take_snapshot(&mut self) -> Result<Option<PathBuf>> {
        if self.map_end_offset <= self.last_snap_offset {
            return Ok(None);
        }
        let path = self.dir.join(snapshot_file_name(self.map_end_offset));
        // Kafka opens the file CREATE + WRITE without truncating: bytes past the new content
        // of a longer file already there would stay. A new small one in a plan is held in
        // memory (`files::write_at`).
        super::files::prepare_write(&path, true)?;
        if let Some(f) = super::files::write_at(&path, &self.encode_snapshot(), 0, true)? {
            super::files::sync_all(&f, &path)?;
        }
        self.snapshots.insert(self.map_end_offset);
        self.note_on_disk(self.map_end_offset, true);
        self.last_snap_offset = self.map_end_offset;
        Ok(Some(path))
    }

    /// What a run of whole batches does to producer state (see [`ProducerAppends`]).
    pub fn collect_appends<'e>(
        &self,
        entries: impl IntoIterator<Item = &'e Entry<'e>>,
        path: &Path,
    ) -> Result<(Vec<ProducerAppendInfo>, Vec<CompletedTxn>)> {
        let mut appends = ProducerAppends::default();
        for e in entries {
            appends.add(self, e, path)?;
        }
        Ok(appends.finish())
    }

    /// Applies what [`ProducerAppends`] collected as rebuilding from the log does
    /// (`loadProducersFromRecords`): every producer's changes, then every completed
    /// transaction; no transaction index is written.
    pub fn apply_loaded(&mut self, appends: ProducerAppends) -> Result<()> {
        let (updates, completed) = appends.finish();
        self.apply_appends(updates, completed, |_| Ok(()))
    }

    /// The snapshot bytes: only the newest batch of each producer, in Kafka's map order.
    fn encode_snapshot(&self) -> Vec<u8> {
        let entries: Vec<ProducerSnapshotEntry> = self
            .producers()
            .map(|e| ProducerSnapshotEntry {
                producer_id: e.producer_id,
                producer_epoch: e.producer_epoch,
                last_sequence: e.last_seq(),
                last_offset: e.last_data_offset(),
                offset_delta: e.last_offset_delta(),
                timestamp: e.last_timestamp,
                coordinator_epoch: e.coordinator_epoch,
                current_txn_first_offset: e.current_txn_first_offset.unwrap_or(-1),
            })
            .collect();
        snapshot::encode(&entries)
    }
}

/// What a run of whole batches does to producer state: each producer's changes, in the order
/// Kafka's per-call `HashMap` applies them, and the transactions its markers complete, in log
/// order. Batches without a producer id (and v0/v1 entries) change nothing.
#[derive(Debug, Default)]
pub struct ProducerAppends {
    /// Each producer's changes, in the order its first entry came.
    infos: Vec<ProducerAppendInfo>,
    /// Where each producer's changes are in `infos`, once there are too many to scan (most
    /// runs, and every batch the verify replay feeds alone, have one producer).
    index: IdMap<usize>,
    completed: Vec<CompletedTxn>,
    scratch: Vec<u8>,
}

/// Up to this many producers in a run, their changes are found by scanning.
const SCANNED_PRODUCERS: usize = 8;

impl ProducerAppends {
    /// Adds one entry, read against `state` (the state before the whole run); `path` names
    /// the file in errors.
    pub fn add(&mut self, state: &ProducerStateManager, e: &Entry<'_>, path: &Path) -> Result<()> {
        let Entry::V2(b) = e else { return Ok(()) };
        let h = &b.header;
        if !h.has_producer_id() {
            return Ok(());
        }
        let at = self.info_at(state, h.producer_id);
        if h.is_control() {
            let mut records = e
                .records(&mut self.scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
                .map_err(|e| Error::decode(path, 0, e))?;
            // A control batch the cleaner emptied completes nothing.
            let Some(first) = records.next() else {
                return Ok(());
            };
            let r = first.map_err(|e| Error::decode(path, 0, e))?;
            let kind = decode_control_key(r.key).map_err(|e| Error::decode(path, 0, e))?;
            let is_abort = match kind {
                ControlRecordType::Abort => true,
                ControlRecordType::Commit => false,
                other => {
                    return Err(Error::invalid(
                        path,
                        format!(
                        "control batch at offset {} of producer {} is {}, not a transaction marker",
                        h.base_offset,
                        h.producer_id,
                        other.name()
                    ),
                    ))
                }
            };
            let marker = EndTxnMarker::decode(r.value).map_err(|e| Error::decode(path, 0, e))?;
            self.completed.extend(self.infos[at].append_end_txn_marker(
                is_abort,
                marker.coordinator_epoch,
                h.producer_epoch,
                h.base_offset,
                r.timestamp,
            ));
            Ok(())
        } else {
            self.infos[at]
                .append_data_batch(
                    h.producer_epoch,
                    h.last_sequence(),
                    h.max_timestamp,
                    h.base_offset,
                    h.last_offset(),
                    h.is_transactional(),
                )
                .map_err(|e| match e {
                    Error::Invalid { message, .. } => Error::invalid(path, message),
                    other => other,
                })
        }
    }

    /// The changes in Kafka's map order, and the completed transactions in log order.
    pub fn finish(mut self) -> (Vec<ProducerAppendInfo>, Vec<CompletedTxn>) {
        if self.infos.len() > 1 {
            // Inserting in first-seen order gives the order Kafka's map iterates in.
            let mut java = JavaHashOrder::new();
            self.infos.iter().for_each(|i| java.insert(i.producer_id));
            let rank: IdMap<usize> = java.iter().enumerate().map(|(r, id)| (id, r)).collect();
            self.infos.sort_by_key(|i| rank[&i.producer_id]);
        }
        (self.infos, self.completed)
    }

    /// Where the changes of `producer_id` are, started from `state` on its first entry.
    fn info_at(&mut self, state: &ProducerStateManager, producer_id: i64) -> usize {
        let found = if self.infos.len() <= SCANNED_PRODUCERS {
            self.infos.iter().position(|i| i.producer_id == producer_id)
        } else {
            self.index.get(&producer_id).copied()
        };
        let at = found.unwrap_or_else(|| {
            self.infos.push(state.prepare_update(producer_id));
            let n = self.infos.len();
            if n == SCANNED_PRODUCERS + 1 {
                self.index = self
                    .infos
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (p.producer_id, i))
                    .collect();
            } else if n > SCANNED_PRODUCERS {
                self.index.insert(producer_id, n - 1);
            }
            n - 1
        });
        at
    }
}

/// A shared listing; a panic elsewhere cannot leave it half-changed (each change is one call).
fn lock_listing(
    on_disk: &std::sync::Mutex<SnapshotOffsets>,
) -> std::sync::MutexGuard<'_, SnapshotOffsets> {
    on_disk
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The offsets of the `.snapshot` files in `dir`.
fn list_snapshots(dir: &Path) -> Result<SnapshotOffsets> {
    let mut out = SnapshotOffsets::default();
    for p in super::files::regular_files(dir)? {
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        if let FileKind::ProducerSnapshot { offset } = classify(&name) {
            out.insert(offset);
        }
    }
    Ok(out)
}

/// The offsets of a directory's `.snapshot` files, ascending: a sorted vector, as a set.
/// Every segment the loader recovers opens a manager with a copy of the listing
/// ([`ProducerStateManager::open_beside`]): a copy is one allocation and a `memcpy` (a tree's
/// was a node per few entries, most of a load's time at 100,000 segments), and snapshots are
/// taken at ascending offsets, so an insert is a push.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct SnapshotOffsets(Vec<i64>);

impl SnapshotOffsets {
    fn last(&self) -> Option<&i64> {
        self.0.last()
    }

    /// Adds `o`; whether it was not there.
    fn insert(&mut self, o: i64) -> bool {
        match self.0.binary_search(&o) {
            Ok(_) => false,
            Err(i) => {
                self.0.insert(i, o);
                true
            }
        }
    }

    /// Removes `o`; whether it was there.
    fn remove(&mut self, o: &i64) -> bool {
        match self.0.binary_search(o) {
            Ok(i) => {
                self.0.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// The offsets at or below `low` and above `high`, ascending.
    fn outside(&self, low: i64, high: i64) -> Vec<i64> {
        let below = self.0.partition_point(|&o| o <= low);
        let above = self.0.partition_point(|&o| o <= high).max(below);
        self.0[..below]
            .iter()
            .chain(&self.0[above..])
            .copied()
            .collect()
    }
}

impl IntoIterator for SnapshotOffsets {
    type Item = i64;
    type IntoIter = std::vec::IntoIter<i64>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_offsets_are_a_sorted_set() {
        let mut s = SnapshotOffsets::default();
        for o in [5, 1, 9, 5, 3] {
            s.insert(o);
        }
        assert_eq!(s.0, [1, 3, 5, 9]);
        assert!(s.remove(&3) && !s.remove(&3));
        assert_eq!(s.last(), Some(&9));
        // At or below the first bound, above the second (`truncateAndReload`'s range).
        assert_eq!(s.outside(1, 5), [1, 9]);
        assert_eq!(s.outside(0, 9), Vec::<i64>::new());
        assert_eq!(s.outside(6, 2), [1, 5, 9]);
        assert_eq!(s.into_iter().collect::<Vec<_>>(), [1, 5, 9]);
    }

    fn data(m: &mut ProducerStateManager, pid: i64, first: i64, last: i64, txn: bool) {
        let mut info = m.prepare_update(pid);
        info.append_data_batch(0, (last - first) as i32, 100, first, last, txn)
            .unwrap();
        m.update(info);
    }

    fn marker(
        m: &mut ProducerStateManager,
        pid: i64,
        offset: i64,
        abort: bool,
    ) -> Option<CompletedTxn> {
        let mut info = m.prepare_update(pid);
        let done = info.append_end_txn_marker(abort, 3, 0, offset, 200);
        m.update(info);
        done
    }

    #[test]
    fn lso_is_first_offset_of_another_open_txn() {
        // LogLoaderTest.testFullTransactionIndexRecovery, first part.
        let dir = tempfile::tempdir().unwrap();
        let mut m = ProducerStateManager::new(dir.path(), 0);
        data(&mut m, 1, 0, 4, true);
        data(&mut m, 2, 8, 9, true);
        data(&mut m, 1, 10, 13, true);
        data(&mut m, 3, 14, 16, true);
        let t = marker(&mut m, 1, 29, true).unwrap();
        assert_eq!((t.first_offset, t.last_offset), (0, 29));
        assert_eq!(m.last_stable_offset(&t), 8);
        m.complete_txn(&t).unwrap();
        let t = marker(&mut m, 2, 30, true).unwrap();
        assert_eq!(m.last_stable_offset(&t), 14);
        m.complete_txn(&t).unwrap();
        let t = marker(&mut m, 3, 31, false).unwrap();
        assert_eq!(m.last_stable_offset(&t), 32);
        assert!(
            marker(&mut m, 3, 40, true).is_none(),
            "empty abort completes nothing"
        );
    }

    #[test]
    fn snapshot_keeps_newest_batch_in_java_order_and_only_when_moved() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = ProducerStateManager::new(dir.path(), 0);
        for pid in [500, 33, 1, 16] {
            data(&mut m, pid, pid, pid + 1, false);
        }
        m.update_map_end_offset(600);
        let path = m.take_snapshot().unwrap().unwrap();
        assert!(path.ends_with("00000000000000000600.snapshot"));
        assert!(m.take_snapshot().unwrap().is_none());
        let read = snapshot::decode(&std::fs::read(path).unwrap()).unwrap();
        let ids: Vec<i64> = read.entries.iter().map(|e| e.producer_id).collect();
        assert_eq!(ids, vec![16, 33, 1, 500]);
        assert_eq!(read.entries[0].last_offset, 17);
    }

    #[test]
    fn first_sequence_undoes_the_wrap() {
        let b = BatchMetadata {
            last_seq: 2,
            last_offset: 10,
            offset_delta: 5,
            timestamp: 0,
        };
        assert_eq!(b.first_seq(), i32::MAX - 2);
        assert_eq!(b.first_offset(), 5);
    }
}
