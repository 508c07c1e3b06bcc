//! The cleaner's pass over a group of segments (`cleanSegments`, `cleanInto`, `filterTo`): each
//! source segment read in buffer-sized windows, each batch kept, rewritten, emptied or dropped,
//! what survives appended to the one cleaned segment through the engine's [`Segment`].

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::offset_map::{key_hash, DigestSet, OffsetMap};
use super::range::ActiveProducers;
use super::rebuild::{empty_batch, rebuild};
use super::txn::TxnTracker;
use super::{CleanStats, CleanedSegment, CompactOptions, DEFAULT_MAX_MESSAGE_BYTES};
use crate::error::{Error, Result};
use crate::format::batch::MAGIC_V2;
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::format::entry::{frame_at, Entry, Frame, RecordIter, RecordView};
use crate::format::index::NO_TIMESTAMP;
use crate::format::names::log_file_name;
use crate::format::DecodeError;
use crate::ops::partition::{PartitionView, SegmentView};
use crate::storage::files::{segment_files, set_mtime};
use crate::storage::segment::SegmentConfig;
use crate::storage::txn_index::TxnIndexes;
use crate::storage::Segment;

/// Which records of a v2 or legacy batch the filter keeps: one bit per record in batch order
/// (the records themselves are read again from the decompressed batch to rebuild it, so a
/// batch of millions of records costs a bit each, not a copy).
pub(super) struct Kept {
    selected: Vec<u64>,
    pub(super) count: usize,
    /// The first kept record's timestamp, and the largest one.
    pub(super) first_timestamp: Option<i64>,
    pub(super) max_timestamp: i64,
    pub(super) all_kept: bool,
    pub(super) max_offset: i64,
    pub(super) contains_tombstones: bool,
}

impl Kept {
    fn none(all_kept: bool) -> Self {
        Kept {
            selected: Vec::new(),
            count: 0,
            first_timestamp: None,
            max_timestamp: NO_TIMESTAMP,
            all_kept,
            max_offset: -1,
            contains_tombstones: false,
        }
    }

    fn keep(&mut self, i: usize, r: &RecordView<'_>) {
        if self.selected.len() <= i / 64 {
            self.selected.resize(i / 64 + 1, 0);
        }
        self.selected[i / 64] |= 1 << (i % 64);
        self.count += 1;
        self.first_timestamp.get_or_insert(r.timestamp);
        self.max_timestamp = self.max_timestamp.max(r.timestamp);
        self.max_offset = self.max_offset.max(r.offset);
    }

    /// The kept records among `records` (the batch's records, read again), in order.
    pub(super) fn of<'s>(
        &'s self,
        records: RecordIter<'s>,
    ) -> impl Iterator<Item = std::result::Result<RecordView<'s>, DecodeError>> + 's {
        records
            .enumerate()
            .filter(|(i, _)| {
                self.selected
                    .get(i / 64)
                    .is_some_and(|w| w & (1 << (i % 64)) != 0)
            })
            .map(|(_, r)| r)
    }
}

/// One source segment read in the cleaner's buffer-sized windows.
struct Window {
    file: File,
    path: PathBuf,
    size: u64,
    buf: Vec<u8>,
}

impl Window {
    fn open(path: &Path) -> Result<Self> {
        let (file, size) = crate::storage::files::open_data(path)?;
        Ok(Window {
            file,
            path: path.to_path_buf(),
            size,
            buf: Vec::new(),
        })
    }

    /// Reads up to `cap` bytes at `position`.
    fn read(&mut self, position: u64, cap: usize) -> Result<&[u8]> {
        let len = cap.min((self.size - position) as usize);
        self.buf.resize(len, 0);
        self.file
            .read_exact_at(&mut self.buf, position)
            .map_err(|e| Error::io(&self.path, e))?;
        crate::storage::progress::read(len as u64);
        Ok(&self.buf)
    }
}

/// The whole entries at the start of `window`, with their offsets in it.
fn whole_entries<'w>(window: &'w [u8], path: &Path, base: u64) -> Result<Vec<(usize, Entry<'w>)>> {
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        match frame_at(&window[pos..]) {
            Frame::Entry { len, .. } => {
                let e = Entry::decode(&window[pos..pos + len])
                    .map_err(|e| Error::decode(path, base + pos as u64, e))?;
                out.push((pos, e));
                pos += len;
            }
            Frame::SizeTooSmall { size } => {
                return Err(Error::invalid(
                    path,
                    format!(
                        "at byte {}: size field {size} is below the minimum of 14",
                        base + pos as u64
                    ),
                ))
            }
            Frame::End | Frame::Truncated { .. } => return Ok(out),
        }
    }
}

/// What `filterTo` adds to the output for one chunk.
#[derive(Default)]
struct Chunk {
    bytes: Vec<u8>,
    max_offset: i64,
    max_timestamp: i64,
    shallow_offset_of_max_timestamp: i64,
}

impl Chunk {
    fn new() -> Self {
        Chunk {
            bytes: Vec::new(),
            max_offset: -1,
            max_timestamp: NO_TIMESTAMP,
            shallow_offset_of_max_timestamp: -1,
        }
    }

    fn retained(&mut self, bytes: &[u8], max_timestamp: i64, shallow: i64, max_offset: i64) {
        self.bytes.extend_from_slice(bytes);
        if max_timestamp > self.max_timestamp {
            self.max_timestamp = max_timestamp;
            self.shallow_offset_of_max_timestamp = shallow;
        }
        self.max_offset = self.max_offset.max(max_offset);
    }
}

/// The state of one cleaning round.
pub(super) struct Cleaner<'a> {
    pub(super) view: &'a PartitionView,
    pub(super) opts: &'a CompactOptions,
    pub(super) map: OffsetMap,
    pub(super) txns: TxnTracker,
    pub(super) txn_indexes: TxnIndexes,
    pub(super) active_producers: ActiveProducers,
    pub(super) upper_bound_of_round: i64,
    pub(super) legacy_delete_horizon_ms: i64,
    pub(super) scratch: Vec<u8>,
}

impl Cleaner<'_> {
    fn read_buffer_bytes(&self) -> usize {
        (self.opts.io_buffer_bytes / 2).max(1) as usize
    }

    /// `growBuffersOrFail`: the next buffer size after a window held no whole batch.
    fn grow(&self, cap: usize, window: &[u8], w: &Window, position: u64) -> Result<usize> {
        let max_message = self.opts.max_message_bytes as usize;
        let max_size = if cap >= max_message {
            let next = match frame_at(window) {
                Frame::Truncated { len } => len,
                _ => 0,
            };
            if next <= cap || next as u64 > w.size - position {
                return Err(Error::invalid(
                    &w.path,
                    format!(
                        "at byte {position}: the batch there ({next} bytes) does not fit in the {} bytes left; the segment may be corrupt",
                        w.size - position
                    ),
                ));
            }
            next
        } else {
            max_message
        };
        let max_buffer = max_size.max(DEFAULT_MAX_MESSAGE_BYTES as usize);
        if cap >= max_buffer {
            return Err(Error::invalid(
                &w.path,
                format!(
                    "at byte {position}: a batch is larger than the maximum of {max_buffer} bytes"
                ),
            ));
        }
        Ok((cap * 2).min(max_buffer))
    }

    /// `cleanSegments` for one group, written into `out_dir`.
    pub(super) fn clean_group(
        &mut self,
        group: &[&SegmentView],
        out_dir: &Path,
    ) -> Result<CleanedSegment> {
        let first = group[0].base_offset;
        let config = SegmentConfig {
            index_interval_bytes: self.opts.index_interval_bytes,
            max_index_bytes: self.opts.segment_index_bytes,
        };
        let mut cleaned = Segment::create(out_dir, first, config, self.opts.now_ms)?;
        let mut stats = CleanStats::default();
        let mut keys = DigestSet::default();
        for (i, s) in group.iter().enumerate() {
            let path = self.view.dir.join(log_file_name(s.base_offset));
            let upper = match group.get(i + 1) {
                Some(n) => n.base_offset,
                None => crate::ops::partition::next_offset_of_log(&path, s.base_offset)?,
            };
            self.txn_indexes
                .collect(s.base_offset, upper, &mut self.txns)?;
            let retain_legacy_deletes = s.mtime_ms > self.legacy_delete_horizon_ms;
            self.clean_into(
                &path,
                &mut cleaned,
                retain_legacy_deletes,
                &mut stats,
                &mut keys,
            )?;
        }
        cleaned.on_become_inactive()?;
        cleaned.flush()?;
        drop(cleaned);
        stats.keys = keys.len() as u64;
        // The cleaned files keep the last source segment's modification time.
        let mtime = group.last().expect("a group has a segment").mtime_ms;
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_millis(mtime.max(0) as u64);
        for p in segment_files(out_dir, first)? {
            set_mtime(&p, when)?;
        }
        Ok(CleanedSegment {
            base_offset: first,
            sources: group.iter().map(|s| s.base_offset).collect(),
            stats,
        })
    }

    /// `cleanInto`: the source segment in read-buffer windows, each window's whole batches
    /// through the filter, what survives appended to `dest` as one call.
    fn clean_into(
        &mut self,
        path: &Path,
        dest: &mut Segment,
        retain_legacy_deletes: bool,
        stats: &mut CleanStats,
        keys: &mut DigestSet,
    ) -> Result<()> {
        let mut w = Window::open(path)?;
        let mut cap = self.read_buffer_bytes();
        let mut position = 0u64;
        while position < w.size {
            let window = w.read(position, cap)?.to_vec();
            let entries = whole_entries(&window, path, position)?;
            let mut chunk = Chunk::new();
            let mut bytes_read = 0usize;
            for (at, entry) in &entries {
                bytes_read = at + entry.size_in_bytes();
                self.filter_batch(
                    entry,
                    path,
                    position + *at as u64,
                    retain_legacy_deletes,
                    &mut chunk,
                    stats,
                    keys,
                    dest,
                )?;
                // The write buffer outgrew its capacity: filterTo returns early (KAFKA-5316).
                if chunk.bytes.len() > cap {
                    break;
                }
            }
            if !chunk.bytes.is_empty() {
                dest.append(
                    chunk.max_offset,
                    chunk.max_timestamp,
                    chunk.shallow_offset_of_max_timestamp,
                    &chunk.bytes,
                )?;
            }
            position += bytes_read as u64;
            if !window.is_empty() && bytes_read == 0 {
                cap = self.grow(cap, &window, &w, position)?;
            }
        }
        Ok(())
    }

    /// `checkBatchRetention` + `shouldRetainRecord` + the output of `filterTo` for one batch.
    #[allow(clippy::too_many_arguments)]
    fn filter_batch(
        &mut self,
        entry: &Entry<'_>,
        path: &Path,
        position: u64,
        retain_legacy_deletes: bool,
        chunk: &mut Chunk,
        stats: &mut CleanStats,
        keys: &mut DigestSet,
        dest: &mut Segment,
    ) -> Result<()> {
        let err = |e| Error::decode(path, position, e);
        let pid = producer_id(entry);
        let mut scratch = std::mem::take(&mut self.scratch);
        let result = (|| -> Result<()> {
            let records = entry
                .records(&mut scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
                .map_err(err)?;
            // A first pass checks that every record decodes (nothing is kept from a batch
            // that does not) and counts them; the records are not collected.
            let (mut count, mut first) = (0usize, None);
            for r in records.clone() {
                let r = r.map_err(err)?;
                count += 1;
                first.get_or_insert(r);
            }
            stats.batches_before += 1;
            stats.bytes_before += entry.size_in_bytes() as u64;
            stats.records_before += count as u64;
            let can_discard = if entry.is_control() {
                let (can, txn) = self
                    .txns
                    .on_control(entry, pid, first.as_ref())
                    .map_err(err)?;
                if let Some(txn) = txn {
                    dest.append_aborted_txn(&txn)?;
                }
                can
            } else {
                self.txns.on_batch(entry, pid)
            };
            let horizon = match entry {
                Entry::V2(b) => b.header.delete_horizon_ms(),
                Entry::Legacy(_) => None,
            };
            let now = self.opts.now_ms;
            let discard_records = if entry.is_control() {
                can_discard && horizon.is_some_and(|h| h <= now)
            } else {
                can_discard
            };
            let last_of_producer = pid >= 0
                && self.active_producers.get(&pid).is_some_and(
                    |&(last_data, epoch)| match last_data {
                        Some(o) => entry.last_offset() == o,
                        None => entry.is_control() && producer_epoch(entry) == epoch,
                    },
                );
            let retain_empty =
                last_of_producer || entry.last_offset() + 1 == self.upper_bound_of_round;
            let marker_for_empty_txn = can_discard && entry.is_control();
            let count_removed = |stats: &mut CleanStats| {
                if entry.is_control() {
                    stats.markers_removed += 1;
                } else if can_discard {
                    stats.aborted_records_removed += count as u64;
                }
            };
            if discard_records && !retain_empty {
                count_removed(stats);
                return Ok(());
            }
            let kept = if discard_records {
                Kept::none(count == 0)
            } else {
                self.retained_records(entry, records.clone(), retain_legacy_deletes, stats, keys)
                    .map_err(err)?
            };
            if discard_records {
                count_removed(stats);
            }
            if kept.count > 0 {
                let need_horizon = entry.magic() >= MAGIC_V2
                    && (kept.contains_tombstones || marker_for_empty_txn)
                    && horizon.is_none();
                stats.batches_after += 1;
                stats.records_after += kept.count as u64;
                if kept.all_kept && !need_horizon {
                    chunk.retained(
                        entry.bytes(),
                        entry.max_timestamp(),
                        entry.last_offset(),
                        entry.last_offset(),
                    );
                    stats.bytes_after += entry.size_in_bytes() as u64;
                } else {
                    if need_horizon {
                        stats.horizons_stamped += 1;
                    }
                    let new_horizon = if need_horizon {
                        Some(now.saturating_add(self.opts.delete_retention_ms))
                    } else {
                        horizon
                    };
                    let (bytes, max_ts, shallow) =
                        rebuild(entry, records, &kept, new_horizon).map_err(err)?;
                    stats.bytes_after += bytes.len() as u64;
                    chunk.retained(&bytes, max_ts, shallow, kept.max_offset);
                }
            } else if retain_empty {
                let Entry::V2(b) = entry else {
                    return Err(Error::invalid(
                        path,
                        format!(
                            "at byte {position}: a v0/v1 entry would have to stay as an empty batch, which only v2 can be (the broker fails the same way)"
                        ),
                    ));
                };
                let bytes = empty_batch(&b.header);
                stats.batches_after += 1;
                stats.empty_batches_kept += 1;
                stats.bytes_after += bytes.len() as u64;
                chunk.retained(
                    &bytes,
                    b.header.max_timestamp,
                    b.header.last_offset(),
                    b.header.last_offset(),
                );
            } else if entry.is_control() && !discard_records {
                stats.markers_removed += 1;
            }
            Ok(())
        })();
        self.scratch = scratch;
        result
    }

    /// The record-level rule for a batch that is not discarded whole.
    /// The keys of kept data records go into `keys`.
    fn retained_records(
        &self,
        entry: &Entry<'_>,
        records: RecordIter<'_>,
        retain_legacy_deletes: bool,
        stats: &mut CleanStats,
        keys: &mut DigestSet,
    ) -> std::result::Result<Kept, DecodeError> {
        let mut kept = Kept::none(true);
        let horizon = match entry {
            Entry::V2(b) => b.header.delete_horizon_ms(),
            Entry::Legacy(_) => None,
        };
        for (i, r) in records.enumerate() {
            let r = r?;
            let keep = if entry.is_control() || r.offset > self.map.latest_offset {
                true
            } else if let Some(key) = r.key {
                let retain_deletes = if entry.magic() >= MAGIC_V2 {
                    horizon.is_none_or(|h| self.opts.now_ms < h)
                } else {
                    retain_legacy_deletes
                };
                r.offset >= self.map.get(key) && (r.value.is_some() || retain_deletes)
            } else {
                stats.keyless_removed += 1;
                false
            };
            let is_tombstone = r.value.is_none() && !entry.is_control();
            if keep {
                if r.legacy.is_some_and(|l| l.magic != entry.magic()) {
                    kept.all_kept = false;
                }
                if r.value.is_none() {
                    kept.contains_tombstones = true;
                }
                if is_tombstone {
                    stats.tombstones_kept += 1;
                }
                if let Some(k) = r.key.filter(|_| !entry.is_control()) {
                    keys.insert(key_hash(k));
                }
                kept.keep(i, &r);
            } else {
                kept.all_kept = false;
                if is_tombstone && r.key.is_some() {
                    stats.tombstones_removed += 1;
                }
            }
        }
        Ok(kept)
    }
}

pub(super) fn producer_id(e: &Entry<'_>) -> i64 {
    match e {
        Entry::V2(b) => b.header.producer_id,
        Entry::Legacy(_) => -1,
    }
}

fn producer_epoch(e: &Entry<'_>) -> i16 {
    match e {
        Entry::V2(b) => b.header.producer_epoch,
        Entry::Legacy(_) => -1,
    }
}
