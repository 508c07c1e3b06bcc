//! The two sparse indexes of a segment, `.index` (offset → file position) and `.timeindex`
//! (max timestamp so far → offset), with the broker's file lifecycle (behavior.md §1.4–§1.5,
//! §7.1): a new index file is created on first access and preallocated to
//! `segment.index.bytes` rounded down to whole slots, entries are written in place, and the file
//! is trimmed to its entries on roll and close. Opening an existing file counts every whole slot
//! as an entry, zero-filled tail included, exactly as Kafka does.
//!
//! Owns the files and the in-memory entries; not the entry layout (`format::index`) nor the
//! rule of when to add an entry (that is [`super::segment::Segment::append`]'s).

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::index::{
    encode_offset_index_entry, encode_time_index_entry, offset_index_entries, time_index_entries,
    OffsetIndexEntry, RelativeOffsetOverflow, TimeIndexEntry, NO_TIMESTAMP,
    OFFSET_INDEX_ENTRY_BYTES, TIME_INDEX_ENTRY_BYTES,
};

/// The file side shared by both indexes, as Kafka's lazy index: nothing happens to the file
/// until first access; then an existing file is opened as it is (every whole slot counts as an
/// entry and the file is full), a missing one is created preallocated to `max_index_bytes`.
#[derive(Debug)]
struct IndexFile {
    path: PathBuf,
    entry_bytes: u64,
    /// `segment.index.bytes`: what a new file, `reset` and the active segment are sized to.
    max_index_bytes: u64,
    max_entries: u64,
    file: Option<File>,
    /// Entries appended but not yet written: one write per [`PENDING_WRITE_BYTES`], not one
    /// `lseek` + `write` per entry. Written before the file is resized, synced or dropped.
    pending: Vec<u8>,
    /// The slot of `pending`'s first byte.
    pending_slot: u64,
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
            file: None,
            pending: Vec::new(),
            pending_slot: 0,
        }
    }

    fn is_open(&self) -> bool {
        self.file.is_some()
    }

    /// Opens the file on first access and returns the bytes of an existing one (empty for a
    /// new one), whose whole slots become the entries; with `read` false (a reset, which drops
    /// the entries) an existing file's bytes are not read.
    fn materialize(&mut self, read: bool) -> Result<Vec<u8>> {
        if self.file.is_some() {
            return Ok(Vec::new());
        }
        let existed = self.path.exists();
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.path)
            .map_err(|e| Error::io(&self.path, e))?;
        let mut bytes = Vec::new();
        if existed && read {
            file.read_to_end(&mut bytes)
                .map_err(|e| Error::io(&self.path, e))?;
            super::progress::read(bytes.len() as u64);
            let whole = bytes.len() as u64 / self.entry_bytes;
            bytes.truncate((whole * self.entry_bytes) as usize);
            self.max_entries = whole;
        } else if existed {
            let len = file.metadata().map_err(|e| Error::io(&self.path, e))?.len();
            self.max_entries = len / self.entry_bytes;
        } else {
            let size = self.max_index_bytes / self.entry_bytes * self.entry_bytes;
            file.set_len(size).map_err(|e| Error::io(&self.path, e))?;
            self.max_entries = size / self.entry_bytes;
        }
        self.file = Some(file);
        Ok(bytes)
    }

    /// Opens an existing file read-only and returns its bytes (every whole slot counts).
    fn read_existing(path: &Path) -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        File::open(path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .map_err(|e| Error::io(path, e))?;
        super::progress::read(bytes.len() as u64);
        Ok(bytes)
    }

    fn file(&mut self) -> Result<&mut File> {
        if self.file.is_none() {
            return Err(Error::invalid(
                &self.path,
                "index used before it was opened",
            ));
        }
        Ok(self.file.as_mut().expect("checked"))
    }

    /// Puts `bytes` in slot `slot`: gathered with the entries appended just before, written
    /// when enough are (or at [`Self::write_pending`]).
    fn write_slot(&mut self, slot: u64, bytes: &[u8]) -> Result<()> {
        self.file()?;
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

    /// Cuts the file to `entries` slots; they become the new maximum, as in Kafka, so a trimmed
    /// index reports itself full.
    fn trim(&mut self, entries: u64) -> Result<()> {
        self.resize(entries * self.entry_bytes)
    }

    fn sync(&mut self) -> Result<()> {
        let path = self.path.clone();
        self.write_pending()?;
        match &self.file {
            Some(f) => f.sync_all().map_err(|e| Error::io(&path, e)),
            None => Ok(()),
        }
    }
}

fn overflow(path: &Path, e: RelativeOffsetOverflow) -> Error {
    Error::invalid(path, e.to_string())
}

/// `.index`: the largest offset of an append call → where that call started in the `.log`.
#[derive(Debug)]
pub struct OffsetIndex {
    base_offset: i64,
    file: IndexFile,
    entries: Vec<OffsetIndexEntry>,
}

impl OffsetIndex {
    /// A new, not yet materialised index for a new segment.
    pub fn new(path: PathBuf, base_offset: i64, max_index_bytes: u64) -> Self {
        OffsetIndex {
            base_offset,
            file: IndexFile::new(path, OFFSET_INDEX_ENTRY_BYTES as u64, max_index_bytes),
            entries: Vec::new(),
        }
    }

    /// Reads an existing file for lookups. Every whole slot is an entry, as Kafka counts them.
    pub fn open_existing(path: &Path, base_offset: i64) -> Result<Self> {
        let bytes = IndexFile::read_existing(path)?;
        let entries = offset_index_entries(&bytes, base_offset).collect::<Vec<_>>();
        let mut file = IndexFile::new(path.to_path_buf(), OFFSET_INDEX_ENTRY_BYTES as u64, 0);
        file.max_entries = entries.len() as u64;
        Ok(OffsetIndex {
            base_offset,
            file,
            entries,
        })
    }

    pub fn path(&self) -> &Path {
        &self.file.path
    }

    pub fn entries(&self) -> &[OffsetIndexEntry] {
        &self.entries
    }

    pub fn is_full(&self) -> bool {
        self.entries.len() as u64 >= self.file.max_entries
    }

    pub fn is_materialized(&self) -> bool {
        self.file.is_open()
    }

    /// Materialises the file, as any access to Kafka's lazy index does: an existing file's
    /// slots become the entries.
    pub fn touch(&mut self) -> Result<()> {
        if !self.file.is_open() {
            let bytes = self.file.materialize(true)?;
            self.entries = offset_index_entries(&bytes, self.base_offset).collect();
        }
        Ok(())
    }

    /// `reset`: no entries, the file sized back to `segment.index.bytes` (recovery).
    pub fn reset(&mut self) -> Result<()> {
        self.file.materialize(false)?;
        self.entries.clear();
        self.file.resize(self.file.max_index_bytes)
    }

    /// `resize(segment.index.bytes)`: room for more entries (the active segment after load).
    pub fn resize_to_max(&mut self) -> Result<()> {
        self.touch()?;
        self.file.resize(self.file.max_index_bytes)
    }

    /// The largest offset indexed, or the base offset (`lastOffset`).
    pub fn last_offset(&self) -> i64 {
        self.entries.last().map_or(self.base_offset, |e| e.offset)
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
                    self.entries.len()
                ),
            ));
        }
        if let Some(last) = self.entries.last() {
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
        self.file.write_slot(self.entries.len() as u64, &slot)?;
        self.entries.push(entry);
        Ok(())
    }

    /// The entry with the largest offset `<= target`, else `(base, 0)` (behavior.md §7.1).
    pub fn lookup(&self, target: i64) -> OffsetIndexEntry {
        let n = self.entries.partition_point(|e| e.offset <= target);
        match n {
            0 => OffsetIndexEntry {
                offset: self.base_offset,
                position: 0,
            },
            _ => self.entries[n - 1],
        }
    }

    pub fn trim_to_valid_size(&mut self) -> Result<()> {
        self.touch()?;
        self.file.trim(self.entries.len() as u64)
    }
}

/// `.timeindex`: the segment's max timestamp so far → the last offset of the batch (or call)
/// that carried it. Full one slot early: the last slot is kept for the entry written on roll.
#[derive(Debug)]
pub struct TimeIndex {
    base_offset: i64,
    file: IndexFile,
    entries: Vec<TimeIndexEntry>,
}

impl TimeIndex {
    pub fn new(path: PathBuf, base_offset: i64, max_index_bytes: u64) -> Self {
        TimeIndex {
            base_offset,
            file: IndexFile::new(path, TIME_INDEX_ENTRY_BYTES as u64, max_index_bytes),
            entries: Vec::new(),
        }
    }

    /// Reads an existing file for lookups. Every whole slot is an entry, as Kafka counts them.
    pub fn open_existing(path: &Path, base_offset: i64) -> Result<Self> {
        let bytes = IndexFile::read_existing(path)?;
        let entries = time_index_entries(&bytes, base_offset).collect::<Vec<_>>();
        let mut file = IndexFile::new(path.to_path_buf(), TIME_INDEX_ENTRY_BYTES as u64, 0);
        file.max_entries = entries.len() as u64;
        Ok(TimeIndex {
            base_offset,
            file,
            entries,
        })
    }

    pub fn entries(&self) -> &[TimeIndexEntry] {
        &self.entries
    }

    pub fn is_materialized(&self) -> bool {
        self.file.is_open()
    }

    pub fn touch(&mut self) -> Result<()> {
        if !self.file.is_open() {
            let bytes = self.file.materialize(true)?;
            self.entries = time_index_entries(&bytes, self.base_offset).collect();
        }
        Ok(())
    }

    /// `reset`: no entries, the file sized back to `segment.index.bytes` (recovery).
    pub fn reset(&mut self) -> Result<()> {
        self.file.materialize(false)?;
        self.entries.clear();
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
        self.entries.len() as u64 >= self.file.max_entries.saturating_sub(1)
    }

    /// The last entry, or `(-1, base)` while there is none.
    pub fn last_entry(&self) -> TimeIndexEntry {
        self.entries.last().copied().unwrap_or(TimeIndexEntry {
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
                    self.entries.len()
                ),
            ));
        }
        let last = self.last_entry();
        if !self.entries.is_empty() && (offset < last.offset || timestamp < last.timestamp) {
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
            self.file.write_slot(self.entries.len() as u64, &slot)?;
            self.entries.push(entry);
        }
        Ok(())
    }

    /// The entry with the largest timestamp `<= target`, else `(-1, base)` (behavior.md §7.1).
    pub fn lookup(&self, target: i64) -> TimeIndexEntry {
        let n = self.entries.partition_point(|e| e.timestamp <= target);
        match n {
            0 => TimeIndexEntry {
                timestamp: NO_TIMESTAMP,
                offset: self.base_offset,
            },
            _ => self.entries[n - 1],
        }
    }

    pub fn trim_to_valid_size(&mut self) -> Result<()> {
        self.touch()?;
        self.file.trim(self.entries.len() as u64)
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
        assert_eq!(idx.lookup(99).offset, 100);
        assert_eq!(idx.lookup(109).position, 4000);
        assert_eq!(idx.lookup(110).position, 9000);
        idx.trim_to_valid_size().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], &[0, 0, 0, 5, 0, 0, 0x0f, 0xa0]);
        assert_eq!(
            OffsetIndex::open_existing(&path, 100).unwrap().entries(),
            idx.entries()
        );
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
        assert!(idx.entries().is_empty());
        idx.maybe_append(10, 5, false).unwrap();
        idx.maybe_append(10, 5, false).unwrap();
        idx.maybe_append(20, 9, false).unwrap();
        assert!(idx.is_full());
        assert!(idx.maybe_append(30, 12, false).is_err());
        idx.maybe_append(30, 12, true).unwrap();
        assert!(idx.maybe_append(25, 13, true).is_err());
        assert_eq!(idx.lookup(9).timestamp, -1);
        assert_eq!(idx.lookup(25).offset, 9);
        idx.trim_to_valid_size().unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 36);
    }
}
