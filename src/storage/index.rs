//! The two sparse indexes of a segment, `.index` (offset → file position) and `.timeindex`
//! (max timestamp so far → offset), with the broker's file lifecycle (behavior.md §1.4–§1.5,
//! §7.1): a new index file is created on first access and preallocated to
//! `segment.index.bytes` rounded down to whole slots, entries are written in place, and the file
//! is trimmed to its entries on roll and close. Opening an existing file counts every whole slot
//! as an entry, zero-filled tail included, exactly as Kafka does.
//!
//! Owns the files (the entries are read from them when asked for); not the entry layout (`format::index`) nor the
//! rule of when to add an entry (that is [`super::segment::Segment::append`]'s).

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::index::{
    decode_offset_index_entry_bytes, decode_time_index_entry_bytes, encode_offset_index_entry,
    encode_time_index_entry, OffsetIndexEntry, RelativeOffsetOverflow, TimeIndexEntry,
    NO_TIMESTAMP, OFFSET_INDEX_ENTRY_BYTES, TIME_INDEX_ENTRY_BYTES,
};

/// The file side shared by both indexes, as Kafka's lazy index: nothing happens to the file
/// until first access; then an existing file is opened as it is (every whole slot counts as an
/// entry and the file is full), a missing one is created preallocated to `max_index_bytes`.
///
/// The entries live in the file, as in Kafka's mapped index, not in memory: an entry is read
/// when asked for (a lookup reads the slots its binary search visits), so an index of any
/// size (a sparse 2 GiB one included) costs a few slots of memory.
#[derive(Debug)]
struct IndexFile {
    path: PathBuf,
    entry_bytes: u64,
    /// `segment.index.bytes`: what a new file, `reset` and the active segment are sized to.
    max_index_bytes: u64,
    max_entries: u64,
    /// Whether the file was opened (materialised, or opened for lookups), and for writing.
    /// No descriptor is kept between calls: a log of 10,000 segments would hold 20,000 (Kafka
    /// too closes an index's file once it is mapped).
    opened: Option<Access>,
    /// The entries the index holds: the whole slots of the file as it was opened, then the
    /// ones appended since.
    entries: u64,
    /// Entries appended but not yet written: one write per [`PENDING_WRITE_BYTES`], not one
    /// `lseek` + `write` per entry. Written before the file is resized, synced or dropped.
    pending: Vec<u8>,
    /// The slot of `pending`'s first byte.
    pending_slot: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    ReadWrite,
}

/// How many bytes of appended entries [`IndexFile`] gathers before it writes them.
const PENDING_WRITE_BYTES: usize = 64 << 10;

impl Drop for IndexFile {
    /// The entries still gathered reach the file when the index goes without a resize or
    /// sync (a log dropped without a close). A failure here has no one to be reported to; the
    /// engine's own paths (close, roll, recovery) write them through `resize` and `sync`.
    fn drop(&mut self) {
        let _ = self.write_pending();
    }
}

impl IndexFile {
    fn new(path: PathBuf, entry_bytes: u64, max_index_bytes: u64) -> Self {
        IndexFile {
            path,
            entry_bytes,
            max_index_bytes,
            max_entries: max_index_bytes / entry_bytes,
            opened: None,
            entries: 0,
            pending: Vec::new(),
            pending_slot: 0,
        }
    }

    /// An existing file opened read-only for lookups: every whole slot is an entry.
    fn open_existing(path: &Path, entry_bytes: u64) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let mut index = IndexFile::new(path.to_path_buf(), entry_bytes, 0);
        index.entries = len / entry_bytes;
        index.max_entries = index.entries;
        index.opened = Some(Access::Read);
        Ok(index)
    }

    fn is_open(&self) -> bool {
        self.opened.is_some()
    }

    /// Opens the file on first access; an existing one's whole slots become the entries,
    /// unless `keep` is false (a reset, which drops them).
    fn materialize(&mut self, keep: bool) -> Result<()> {
        if self.opened.is_some() {
            return Ok(());
        }
        let existed = self.path.exists();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.path)
            .map_err(|e| Error::io(&self.path, e))?;
        if existed {
            let len = file.metadata().map_err(|e| Error::io(&self.path, e))?.len();
            self.max_entries = len / self.entry_bytes;
            self.entries = if keep { self.max_entries } else { 0 };
        } else {
            let size = self.max_index_bytes / self.entry_bytes * self.entry_bytes;
            file.set_len(size).map_err(|e| Error::io(&self.path, e))?;
            self.max_entries = size / self.entry_bytes;
            self.entries = 0;
        }
        self.opened = Some(Access::ReadWrite);
        Ok(())
    }

    /// The file, opened again as it was first opened (never created: a deleted index stays
    /// deleted).
    fn file(&self) -> Result<File> {
        let Some(access) = self.opened else {
            return Err(Error::invalid(
                &self.path,
                "index used before it was opened",
            ));
        };
        OpenOptions::new()
            .read(true)
            .write(access == Access::ReadWrite)
            .open(&self.path)
            .map_err(|e| Error::io(&self.path, e))
    }

    /// The bytes of entry `slot` (below [`Self::entries`]) into `out`: from the entries
    /// gathered for writing, else from the file.
    fn read_slot(&self, slot: u64, out: &mut [u8]) -> Result<()> {
        use std::os::unix::fs::FileExt;
        let gathered = (self.pending.len() as u64) / self.entry_bytes;
        if slot >= self.pending_slot && slot - self.pending_slot < gathered {
            let at = ((slot - self.pending_slot) * self.entry_bytes) as usize;
            out.copy_from_slice(&self.pending[at..at + out.len()]);
            return Ok(());
        }
        let file = self.file()?;
        let pos = slot * self.entry_bytes;
        file.read_exact_at(out, pos).map_err(|e| {
            Error::io(
                &self.path,
                std::io::Error::new(e.kind(), format!("entry at byte {pos}: {e}")),
            )
        })
    }

    /// The number of entries for which `pred` holds at the start of the index, found by the
    /// same binary search as `slice::partition_point` (so a damaged, unsorted index gives
    /// the same answer as its entries held in memory would), reading only the slots visited.
    fn partition_point<E>(
        &self,
        decode: impl Fn(&IndexFile, u64) -> Result<E>,
        pred: impl Fn(&E) -> bool,
    ) -> Result<u64> {
        let mut size = self.entries;
        if size == 0 {
            return Ok(0);
        }
        let mut base = 0u64;
        while size > 1 {
            let half = size / 2;
            let mid = base + half;
            if pred(&decode(self, mid)?) {
                base = mid;
            }
            size -= half;
        }
        Ok(base + u64::from(pred(&decode(self, base)?)))
    }

    /// Puts `bytes` in slot `slot`: gathered with the entries appended just before, written
    /// when enough are (or at [`Self::write_pending`]).
    fn write_slot(&mut self, slot: u64, bytes: &[u8]) -> Result<()> {
        if self.opened != Some(Access::ReadWrite) {
            return Err(Error::invalid(
                &self.path,
                "index written before it was opened for writing",
            ));
        }
        let pending_end = self.pending_slot + (self.pending.len() as u64) / self.entry_bytes;
        if self.pending.is_empty() || slot != pending_end {
            self.write_pending()?;
            self.pending_slot = slot;
        }
        self.pending.extend_from_slice(bytes);
        if self.pending.len() >= PENDING_WRITE_BYTES {
            self.write_pending()?;
        }
        Ok(())
    }

    /// Writes the gathered entries, in one positioned write.
    fn write_pending(&mut self) -> Result<()> {
        use std::os::unix::fs::FileExt;
        if self.pending.is_empty() {
            return Ok(());
        }
        let pos = self.pending_slot * self.entry_bytes;
        let path = self.path.clone();
        let pending = std::mem::take(&mut self.pending);
        self.file()?
            .write_all_at(&pending, pos)
            .map_err(|e| Error::io(&path, e))?;
        // The buffer is kept for the next entries.
        self.pending = pending;
        self.pending.clear();
        Ok(())
    }

    /// `resize`: the file length becomes `bytes` rounded down to whole slots, which become the
    /// new maximum. Entries already written stay.
    fn resize(&mut self, bytes: u64) -> Result<()> {
        let len = bytes / self.entry_bytes * self.entry_bytes;
        let path = self.path.clone();
        self.write_pending()?;
        self.file()?.set_len(len).map_err(|e| Error::io(&path, e))?;
        self.max_entries = len / self.entry_bytes;
        Ok(())
    }

    /// Cuts the file to its entries; they become the new maximum, as in Kafka, so a trimmed
    /// index reports itself full.
    fn trim(&mut self) -> Result<()> {
        self.resize(self.entries * self.entry_bytes)
    }

    fn sync(&mut self) -> Result<()> {
        let path = self.path.clone();
        self.write_pending()?;
        match self.opened {
            Some(_) => super::files::sync_all(&self.file()?, &path),
            None => Ok(()),
        }
    }
}

fn overflow(path: &Path, e: RelativeOffsetOverflow) -> Error {
    Error::invalid(path, e.to_string())
}

/// Entry `slot` of an offset index file.
fn offset_entry(file: &IndexFile, base_offset: i64, slot: u64) -> Result<OffsetIndexEntry> {
    let mut raw = [0u8; OFFSET_INDEX_ENTRY_BYTES];
    file.read_slot(slot, &mut raw)?;
    Ok(decode_offset_index_entry_bytes(&raw, base_offset))
}

/// Entry `slot` of a time index file.
fn time_entry(file: &IndexFile, base_offset: i64, slot: u64) -> Result<TimeIndexEntry> {
    let mut raw = [0u8; TIME_INDEX_ENTRY_BYTES];
    file.read_slot(slot, &mut raw)?;
    Ok(decode_time_index_entry_bytes(&raw, base_offset))
}

/// `.index`: the largest offset of an append call → where that call started in the `.log`.
#[derive(Debug)]
pub struct OffsetIndex {
    base_offset: i64,
    file: IndexFile,
    /// The last entry, kept for the checks of every append.
    last: Option<OffsetIndexEntry>,
}

impl OffsetIndex {
    /// A new, not yet materialised index for a new segment.
    pub fn new(path: PathBuf, base_offset: i64, max_index_bytes: u64) -> Self {
        OffsetIndex {
            base_offset,
            file: IndexFile::new(path, OFFSET_INDEX_ENTRY_BYTES as u64, max_index_bytes),
            last: None,
        }
    }

    /// Opens an existing file for lookups. Every whole slot is an entry, as Kafka counts them.
    pub fn open_existing(path: &Path, base_offset: i64) -> Result<Self> {
        let mut index = OffsetIndex {
            base_offset,
            file: IndexFile::open_existing(path, OFFSET_INDEX_ENTRY_BYTES as u64)?,
            last: None,
        };
        index.last = index.read_last()?;
        Ok(index)
    }

    fn read_last(&self) -> Result<Option<OffsetIndexEntry>> {
        match self.file.entries {
            0 => Ok(None),
            n => offset_entry(&self.file, self.base_offset, n - 1).map(Some),
        }
    }

    pub fn path(&self) -> &Path {
        &self.file.path
    }

    /// How many entries the index holds (every whole slot of an existing file).
    pub fn len(&self) -> u64 {
        self.file.entries
    }

    pub fn is_empty(&self) -> bool {
        self.file.entries == 0
    }

    /// The entry in slot `slot` (below [`Self::len`]), read from the file.
    pub fn entry(&self, slot: u64) -> Result<OffsetIndexEntry> {
        offset_entry(&self.file, self.base_offset, slot)
    }

    /// The last entry, if any.
    pub fn last_entry(&self) -> Option<OffsetIndexEntry> {
        self.last
    }

    pub fn is_full(&self) -> bool {
        self.file.entries >= self.file.max_entries
    }

    pub fn is_materialized(&self) -> bool {
        self.file.is_open()
    }

    /// Materialises the file, as any access to Kafka's lazy index does: an existing file's
    /// slots become the entries.
    pub fn touch(&mut self) -> Result<()> {
        if !self.file.is_open() {
            self.file.materialize(true)?;
            self.last = self.read_last()?;
        }
        Ok(())
    }

    /// `reset`: no entries, the file sized back to `segment.index.bytes` (recovery).
    pub fn reset(&mut self) -> Result<()> {
        self.file.materialize(false)?;
        self.file.entries = 0;
        self.last = None;
        self.file.resize(self.file.max_index_bytes)
    }

    /// `resize(segment.index.bytes)`: room for more entries (the active segment after load).
    pub fn resize_to_max(&mut self) -> Result<()> {
        self.touch()?;
        self.file.resize(self.file.max_index_bytes)
    }

    /// The largest offset indexed, or the base offset (`lastOffset`).
    pub fn last_offset(&self) -> i64 {
        self.last.map_or(self.base_offset, |e| e.offset)
    }

    pub fn sync(&mut self) -> Result<()> {
        self.file.sync()
    }

    pub fn append(&mut self, offset: i64, position: i32) -> Result<()> {
        self.touch()?;
        if self.is_full() {
            return Err(Error::invalid(
                &self.file.path,
                format!(
                    "attempt to append to a full index (size = {})",
                    self.file.entries
                ),
            ));
        }
        if let Some(last) = self.last {
            if offset <= last.offset {
                return Err(Error::invalid(
                    &self.file.path,
                    format!(
                        "attempt to append offset {offset} no larger than the last offset {} appended",
                        last.offset
                    ),
                ));
            }
        }
        let entry = OffsetIndexEntry { offset, position };
        let slot = encode_offset_index_entry(&entry, self.base_offset)
            .map_err(|e| overflow(&self.file.path, e))?;
        self.file.write_slot(self.file.entries, &slot)?;
        self.file.entries += 1;
        self.last = Some(entry);
        Ok(())
    }

    /// The entry with the largest offset `<= target`, else `(base, 0)` (behavior.md §7.1).
    pub fn lookup(&self, target: i64) -> Result<OffsetIndexEntry> {
        let base = self.base_offset;
        let n = self
            .file
            .partition_point(|f, i| offset_entry(f, base, i), |e| e.offset <= target)?;
        match n {
            0 => Ok(OffsetIndexEntry {
                offset: self.base_offset,
                position: 0,
            }),
            _ => self.entry(n - 1),
        }
    }

    pub fn trim_to_valid_size(&mut self) -> Result<()> {
        self.touch()?;
        self.file.trim()
    }
}

/// `.timeindex`: the segment's max timestamp so far → the last offset of the batch (or call)
/// that carried it. Full one slot early: the last slot is kept for the entry written on roll.
#[derive(Debug)]
pub struct TimeIndex {
    base_offset: i64,
    file: IndexFile,
    /// The last entry, kept for the checks of every append.
    last: Option<TimeIndexEntry>,
}

impl TimeIndex {
    pub fn new(path: PathBuf, base_offset: i64, max_index_bytes: u64) -> Self {
        TimeIndex {
            base_offset,
            file: IndexFile::new(path, TIME_INDEX_ENTRY_BYTES as u64, max_index_bytes),
            last: None,
        }
    }

    /// Opens an existing file for lookups. Every whole slot is an entry, as Kafka counts them.
    pub fn open_existing(path: &Path, base_offset: i64) -> Result<Self> {
        let mut index = TimeIndex {
            base_offset,
            file: IndexFile::open_existing(path, TIME_INDEX_ENTRY_BYTES as u64)?,
            last: None,
        };
        index.last = index.read_last()?;
        Ok(index)
    }

    fn read_last(&self) -> Result<Option<TimeIndexEntry>> {
        match self.file.entries {
            0 => Ok(None),
            n => time_entry(&self.file, self.base_offset, n - 1).map(Some),
        }
    }

    /// How many entries the index holds (every whole slot of an existing file).
    pub fn len(&self) -> u64 {
        self.file.entries
    }

    pub fn is_empty(&self) -> bool {
        self.file.entries == 0
    }

    /// The entry in slot `slot` (below [`Self::len`]), read from the file.
    pub fn entry(&self, slot: u64) -> Result<TimeIndexEntry> {
        time_entry(&self.file, self.base_offset, slot)
    }

    pub fn is_materialized(&self) -> bool {
        self.file.is_open()
    }

    pub fn touch(&mut self) -> Result<()> {
        if !self.file.is_open() {
            self.file.materialize(true)?;
            self.last = self.read_last()?;
        }
        Ok(())
    }

    /// `reset`: no entries, the file sized back to `segment.index.bytes` (recovery).
    pub fn reset(&mut self) -> Result<()> {
        self.file.materialize(false)?;
        self.file.entries = 0;
        self.last = None;
        self.file.resize(self.file.max_index_bytes)
    }

    /// `resize(0)`: what the loader does to a time index it had to create.
    pub fn resize_to_empty(&mut self) -> Result<()> {
        self.touch()?;
        self.file.resize(0)
    }

    pub fn resize_to_max(&mut self) -> Result<()> {
        self.touch()?;
        self.file.resize(self.file.max_index_bytes)
    }

    pub fn sync(&mut self) -> Result<()> {
        self.file.sync()
    }

    pub fn is_full(&self) -> bool {
        self.file.entries >= self.file.max_entries.saturating_sub(1)
    }

    /// The last entry, or `(-1, base)` while there is none.
    pub fn last_entry(&self) -> TimeIndexEntry {
        self.last.unwrap_or(TimeIndexEntry {
            timestamp: NO_TIMESTAMP,
            offset: self.base_offset,
        })
    }

    /// Appends `(timestamp, offset)` only if `timestamp` is greater than the last entry's;
    /// an equal one is skipped silently, which makes the final entry on roll/close a no-op
    /// when nothing changed.
    pub fn maybe_append(
        &mut self,
        timestamp: i64,
        offset: i64,
        skip_full_check: bool,
    ) -> Result<()> {
        // The file is touched even when nothing is written: Kafka materialises it on access.
        self.touch()?;
        if !skip_full_check && self.is_full() {
            return Err(Error::invalid(
                &self.file.path,
                format!(
                    "attempt to append to a full time index (size = {})",
                    self.file.entries
                ),
            ));
        }
        let last = self.last_entry();
        if !self.is_empty() && (offset < last.offset || timestamp < last.timestamp) {
            return Err(Error::invalid(
                &self.file.path,
                format!(
                    "time index entry ({timestamp}, {offset}) goes backwards from ({}, {})",
                    last.timestamp, last.offset
                ),
            ));
        }
        if timestamp > last.timestamp {
            let entry = TimeIndexEntry { timestamp, offset };
            let slot = encode_time_index_entry(&entry, self.base_offset)
                .map_err(|e| overflow(&self.file.path, e))?;
            self.file.write_slot(self.file.entries, &slot)?;
            self.file.entries += 1;
            self.last = Some(entry);
        }
        Ok(())
    }

    /// The entry with the largest timestamp `<= target`, else `(-1, base)` (behavior.md §7.1).
    pub fn lookup(&self, target: i64) -> Result<TimeIndexEntry> {
        let base = self.base_offset;
        let n = self
            .file
            .partition_point(|f, i| time_entry(f, base, i), |e| e.timestamp <= target)?;
        match n {
            0 => Ok(TimeIndexEntry {
                timestamp: NO_TIMESTAMP,
                offset: self.base_offset,
            }),
            _ => self.entry(n - 1),
        }
    }

    pub fn trim_to_valid_size(&mut self) -> Result<()> {
        self.touch()?;
        self.file.trim()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_index_preallocates_appends_and_trims() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000100.index");
        let mut idx = OffsetIndex::new(path.clone(), 100, 8 * 3 + 5);
        assert!(!path.exists());
        idx.append(105, 4000).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 24);
        assert!(idx.append(105, 5000).is_err());
        idx.append(110, 9000).unwrap();
        idx.append(111, 9500).unwrap();
        assert!(idx.is_full());
        assert!(idx.append(112, 9900).is_err());
        assert_eq!(idx.lookup(99).unwrap().offset, 100);
        assert_eq!(idx.lookup(109).unwrap().position, 4000);
        assert_eq!(idx.lookup(110).unwrap().position, 9000);
        idx.trim_to_valid_size().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], &[0, 0, 0, 5, 0, 0, 0x0f, 0xa0]);
        let reopened = OffsetIndex::open_existing(&path, 100).unwrap();
        assert_eq!(reopened.len(), 3);
        let entries: Vec<_> = (0..3).map(|i| reopened.entry(i).unwrap()).collect();
        let expected = [(105, 4000), (110, 9000), (111, 9500)]
            .map(|(offset, position)| OffsetIndexEntry { offset, position });
        assert_eq!(entries, expected);
        assert_eq!(reopened.last_offset(), 111);
    }

    #[test]
    fn time_index_skips_equal_timestamps_and_is_full_one_slot_early() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.timeindex");
        let mut idx = TimeIndex::new(path.clone(), 0, 12 * 3);
        assert_eq!(
            idx.last_entry(),
            TimeIndexEntry {
                timestamp: -1,
                offset: 0
            }
        );
        idx.maybe_append(-1, 0, false).unwrap();
        assert!(idx.is_empty());
        idx.maybe_append(10, 5, false).unwrap();
        idx.maybe_append(10, 5, false).unwrap();
        idx.maybe_append(20, 9, false).unwrap();
        assert!(idx.is_full());
        assert!(idx.maybe_append(30, 12, false).is_err());
        idx.maybe_append(30, 12, true).unwrap();
        assert!(idx.maybe_append(25, 13, true).is_err());
        assert_eq!(idx.lookup(9).unwrap().timestamp, -1);
        assert_eq!(idx.lookup(25).unwrap().offset, 9);
        idx.trim_to_valid_size().unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 36);
    }
}
