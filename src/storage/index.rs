//! The two sparse indexes of a segment, `.index` (offset → file position) and `.timeindex`
//! (max timestamp so far → offset), with the broker's file lifecycle (behavior.md §1.4–§1.5,
//! §7.1): a new index file is created on first access and preallocated to
//! `segment.index.bytes` rounded down to whole slots, entries are written in place, and the file
//! is trimmed to its entries on roll and close. Opening an existing file counts every whole slot
//! as an entry, zero-filled tail included, exactly as Kafka does; a seek opens it with its
//! entries ending where the preallocated zero tail starts ([`Index::open_for_seek`]).
//!
//! The one on-demand reader of both: an entry is read when asked for, by the page
//! ([`INDEX_PAGE_BYTES`]) holding it, and a lookup is Kafka's search (`format::index`'s
//! [`largest_lower_bound_slot`]) reading only the pages it probes. What tells the two indexes
//! apart is an [`IndexKind`].
//!
//! Owns the files (the entries are read from them when asked for); not the entry layout (`format::index`) nor the
//! rule of when to add an entry (that is [`super::segment::Segment::append`]'s).

use super::files::Reader;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::index::{
    decode_offset_index_entry_bytes, decode_time_index_entry_bytes, encode_offset_index_entry,
    encode_time_index_entry, largest_lower_bound_slot, offset_index_is_full,
    offset_index_sanity_check, time_index_is_full, time_index_sanity_check, OffsetIndexEntry,
    RelativeOffsetOverflow, TimeIndexEntry, INDEX_WARM_SECTION_BYTES, NO_TIMESTAMP,
    OFFSET_INDEX_ENTRY_BYTES, TIME_INDEX_ENTRY_BYTES,
};

/// Bytes per read of an index file: a page, as the broker's mapped index faults them in.
pub const INDEX_PAGE_BYTES: u64 = 4096;

/// What tells an offset index from a time index to the one reader.
pub trait IndexKind {
    type Entry: Copy + std::fmt::Debug + PartialEq;
    /// Bytes per slot.
    const ENTRY_BYTES: usize;
    /// Whether a zero slot 0 followed by the zero tail (or alone) is an empty preallocated file
    /// rather than an entry: for an offset index (the broker never indexes position 0); a time
    /// index's lone `(0, base)` may be an entry (records stamped 0), two zero slots never are.
    const LONE_ZERO_SLOT_IS_EMPTY: bool;
    /// The entry's bytes (one slot) decoded against the segment's base offset.
    fn decode(slot: &[u8], base: i64) -> Self::Entry;
    /// The entry's slot bytes into `out` (one slot long).
    fn encode(
        e: &Self::Entry,
        base: i64,
        out: &mut [u8],
    ) -> std::result::Result<(), RelativeOffsetOverflow>;
    /// What the binary search compares.
    fn key(e: &Self::Entry) -> i64;
    /// The offset the entry names (its relative offset is 0 where the zero tail starts).
    fn offset(e: &Self::Entry) -> i64;
    /// The entry as printed in a damage message.
    fn pair(e: &Self::Entry) -> (i64, i64);
    /// Whether `b` may follow `a` in an undamaged index.
    fn ascends(a: &Self::Entry, b: &Self::Entry) -> bool;
    /// What a lookup below the first entry answers.
    fn before_first(base: i64) -> Self::Entry;
    /// Kafka's `isFull`.
    fn is_full(entries: u64, max_entries: u64) -> bool;
    /// Kafka's `sanityCheck` on `ends`, the bytes of the first and the last entry laid out as
    /// an index of those one or two entries, and the file's length.
    fn sanity_check(
        ends: &[u8],
        len: u64,
        base: i64,
        file: &str,
    ) -> std::result::Result<(), String>;
}

/// `.index`'s [`IndexKind`].
#[derive(Debug)]
pub struct OffsetKind;

/// `.timeindex`'s [`IndexKind`].
#[derive(Debug)]
pub struct TimeKind;

impl IndexKind for OffsetKind {
    type Entry = OffsetIndexEntry;
    const ENTRY_BYTES: usize = OFFSET_INDEX_ENTRY_BYTES;
    const LONE_ZERO_SLOT_IS_EMPTY: bool = true;
    fn decode(slot: &[u8], base: i64) -> OffsetIndexEntry {
        decode_offset_index_entry_bytes(slot.try_into().expect("one slot"), base)
    }
    fn encode(
        e: &OffsetIndexEntry,
        base: i64,
        out: &mut [u8],
    ) -> std::result::Result<(), RelativeOffsetOverflow> {
        out.copy_from_slice(&encode_offset_index_entry(e, base)?);
        Ok(())
    }
    fn key(e: &OffsetIndexEntry) -> i64 {
        e.offset
    }
    fn offset(e: &OffsetIndexEntry) -> i64 {
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
    fn is_full(entries: u64, max_entries: u64) -> bool {
        offset_index_is_full(entries as usize, max_entries as usize)
    }
    fn sanity_check(
        ends: &[u8],
        len: u64,
        base: i64,
        file: &str,
    ) -> std::result::Result<(), String> {
        offset_index_sanity_check(ends, len as usize, base, file)
    }
}

impl IndexKind for TimeKind {
    type Entry = TimeIndexEntry;
    const ENTRY_BYTES: usize = TIME_INDEX_ENTRY_BYTES;
    const LONE_ZERO_SLOT_IS_EMPTY: bool = false;
    fn decode(slot: &[u8], base: i64) -> TimeIndexEntry {
        decode_time_index_entry_bytes(slot.try_into().expect("one slot"), base)
    }
    fn encode(
        e: &TimeIndexEntry,
        base: i64,
        out: &mut [u8],
    ) -> std::result::Result<(), RelativeOffsetOverflow> {
        out.copy_from_slice(&encode_time_index_entry(e, base)?);
        Ok(())
    }
    fn key(e: &TimeIndexEntry) -> i64 {
        e.timestamp
    }
    fn offset(e: &TimeIndexEntry) -> i64 {
        e.offset
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
    fn is_full(entries: u64, max_entries: u64) -> bool {
        time_index_is_full(entries as usize, max_entries as usize)
    }
    fn sanity_check(
        ends: &[u8],
        len: u64,
        base: i64,
        file: &str,
    ) -> std::result::Result<(), String> {
        time_index_sanity_check(ends, len as usize, base, file)
    }
}

/// The file side shared by both indexes, as Kafka's lazy index: nothing happens to the file
/// until first access; then an existing file is opened as it is (every whole slot counts as an
/// entry and the file is full), a missing one is created preallocated to `max_index_bytes`.
///
/// The entries live in the file, as in Kafka's mapped index, not in memory: an entry is read
/// when asked for (a lookup reads the pages its search visits, [`PageReads`]), so an index of
/// any size (a sparse 2 GiB one included) costs a few pages of memory.
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
    /// Pages read from the file so far.
    pages_read: Cell<u64>,
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
            pages_read: Cell::new(0),
        }
    }

    /// An existing file opened read-only for lookups, of `len` bytes: every whole slot is an
    /// entry.
    fn read_only(path: &Path, entry_bytes: u64, len: u64) -> Self {
        let mut index = IndexFile::new(path.to_path_buf(), entry_bytes, 0);
        index.entries = len / entry_bytes;
        index.max_entries = index.entries;
        index.opened = Some(Access::Read);
        index
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
        let existed = super::files::exists(&self.path)?;
        // Every change goes through `files` (`set_len`, `write_at`): a new or reset index in a
        // plan is held in memory until written.
        super::files::prepare_held_write(&self.path, keep)?;
        if existed {
            let len = super::files::file_len(&self.path)?;
            self.max_entries = len / self.entry_bytes;
            self.entries = if keep { self.max_entries } else { 0 };
        } else {
            let size = self.max_index_bytes / self.entry_bytes * self.entry_bytes;
            super::files::create_zeroed(&self.path, size)?;
            self.max_entries = size / self.entry_bytes;
            self.entries = 0;
        }
        self.opened = Some(Access::ReadWrite);
        Ok(())
    }

    /// The file, opened again for reading (never created: a deleted index stays deleted).
    fn file(&self) -> Result<Reader> {
        if self.opened.is_none() {
            return Err(Error::invalid(
                &self.path,
                "index used before it was opened",
            ));
        }
        super::files::open_bytes(&self.path)
    }

    /// Refuses a change to an index not opened for writing.
    fn writable(&self) -> Result<()> {
        match self.opened {
            Some(Access::ReadWrite) => Ok(()),
            Some(Access::Read) => Err(Error::invalid(
                &self.path,
                "index changed while opened read-only",
            )),
            None => Err(Error::invalid(
                &self.path,
                "index used before it was opened",
            )),
        }
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
        if self.pending.is_empty() {
            return Ok(());
        }
        self.writable()?;
        let pos = self.pending_slot * self.entry_bytes;
        let pending = std::mem::take(&mut self.pending);
        super::files::write_at(&self.path, &pending, pos, false)?;
        // The buffer is kept for the next entries.
        self.pending = pending;
        self.pending.clear();
        Ok(())
    }

    /// `resize`: the file length becomes `bytes` rounded down to whole slots, which become the
    /// new maximum. Entries already written stay.
    fn resize(&mut self, bytes: u64) -> Result<()> {
        let len = bytes / self.entry_bytes * self.entry_bytes;
        self.write_pending()?;
        self.writable()?;
        super::files::set_len(&self.path, len)?;
        self.max_entries = len / self.entry_bytes;
        Ok(())
    }

    /// Cuts the file to its entries; they become the new maximum, as in Kafka, so a trimmed
    /// index reports itself full.
    fn trim(&mut self) -> Result<()> {
        self.resize(self.entries * self.entry_bytes)
    }

    fn sync(&mut self) -> Result<()> {
        self.write_pending()?;
        match self.opened {
            Some(_) => super::files::sync_path(&self.path),
            None => Ok(()),
        }
    }
}

/// One operation's reads of an index file (a lookup, an open): the pages it touches, each read
/// once by positioned reads of one descriptor opened at the first page, all dropped with it, so
/// an index keeps neither pages nor a descriptor between operations. Entries appended but not
/// yet written are read from where they are gathered.
struct PageReads<'a> {
    file: &'a IndexFile,
    fd: RefCell<Option<Reader>>,
    pages: RefCell<BTreeMap<u64, Vec<u8>>>,
}

impl<'a> PageReads<'a> {
    fn new(file: &'a IndexFile) -> Self {
        PageReads {
            file,
            fd: RefCell::new(None),
            pages: RefCell::new(BTreeMap::new()),
        }
    }

    /// Reads through `fd`, the file already opened.
    fn with_fd(file: &'a IndexFile, fd: Reader) -> Self {
        let reads = PageReads::new(file);
        *reads.fd.borrow_mut() = Some(fd);
        reads
    }

    /// Page `page` of the file (shorter at its end), read on first need.
    fn with_page<R>(&self, page: u64, f: impl FnOnce(&[u8]) -> R) -> Result<R> {
        let mut pages = self.pages.borrow_mut();
        if let std::collections::btree_map::Entry::Vacant(slot) = pages.entry(page) {
            let mut fd = self.fd.borrow_mut();
            if fd.is_none() {
                *fd = Some(self.file.file()?);
            }
            let fd = fd.as_ref().expect("opened above");
            let mut buf = vec![0u8; INDEX_PAGE_BYTES as usize];
            let mut got = 0;
            while got < buf.len() {
                match fd.read_at(&mut buf[got..], page * INDEX_PAGE_BYTES + got as u64) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(Error::io(&self.file.path, e)),
                }
            }
            buf.truncate(got);
            slot.insert(buf);
            self.file.pages_read.set(self.file.pages_read.get() + 1);
        }
        Ok(f(&pages[&page]))
    }

    /// The bytes of slot `slot` (below the index's entries) into `out`.
    fn slot(&self, slot: u64, out: &mut [u8]) -> Result<()> {
        let file = self.file;
        let gathered = (file.pending.len() as u64) / file.entry_bytes;
        if slot >= file.pending_slot && slot - file.pending_slot < gathered {
            let at = ((slot - file.pending_slot) * file.entry_bytes) as usize;
            out.copy_from_slice(&file.pending[at..at + out.len()]);
            return Ok(());
        }
        let at = slot * file.entry_bytes;
        let end = at + out.len() as u64;
        let mut pos = at;
        while pos < end {
            let page = pos / INDEX_PAGE_BYTES;
            let from = (pos - page * INDEX_PAGE_BYTES) as usize;
            let upto = (end.min((page + 1) * INDEX_PAGE_BYTES) - page * INDEX_PAGE_BYTES) as usize;
            let into = &mut out[(pos - at) as usize..(pos - at) as usize + (upto - from)];
            let whole = self.with_page(page, |bytes| {
                (upto <= bytes.len())
                    .then(|| into.copy_from_slice(&bytes[from..upto]))
                    .is_some()
            })?;
            if !whole {
                return Err(Error::invalid(
                    &file.path,
                    format!("index slot {slot} ends past the file, which shrank while read"),
                ));
            }
            pos = (page + 1) * INDEX_PAGE_BYTES;
        }
        Ok(())
    }

    fn entry<K: IndexKind>(&self, slot: u64, base: i64) -> Result<K::Entry> {
        let mut raw = [0u8; 16];
        let raw = &mut raw[..K::ENTRY_BYTES];
        self.slot(slot, raw)?;
        Ok(K::decode(raw, base))
    }

    fn is_zero(&self, slot: u64) -> Result<bool> {
        let mut raw = [0u8; 16];
        let raw = &mut raw[..self.file.entry_bytes as usize];
        self.slot(slot, raw)?;
        Ok(raw.iter().all(|&b| b == 0))
    }
}

fn overflow(path: &Path, e: RelativeOffsetOverflow) -> Error {
    Error::invalid(path, e.to_string())
}

/// The entries a search read, by slot.
type Probed<K> = BTreeMap<u64, <K as IndexKind>::Entry>;

/// One index file of kind `K`: [`OffsetIndex`] or [`TimeIndex`].
#[derive(Debug)]
pub struct Index<K: IndexKind> {
    base_offset: i64,
    file: IndexFile,
    /// The last entry, kept for the checks of every append.
    last: Option<K::Entry>,
}

/// `.index`: the largest offset of an append call → where that call started in the `.log`.
pub type OffsetIndex = Index<OffsetKind>;

/// `.timeindex`: the segment's max timestamp so far → the last offset of the batch (or call)
/// that carried it. Full one slot early: the last slot is kept for the entry written on roll.
pub type TimeIndex = Index<TimeKind>;

/// An index a seek opened: None when the file is missing, else the index or why Kafka's sanity
/// check refuses it.
pub type SeekIndex<K> = Option<std::result::Result<Index<K>, String>>;

impl<K: IndexKind> Index<K> {
    /// A new, not yet materialised index for a new segment.
    pub fn new(path: PathBuf, base_offset: i64, max_index_bytes: u64) -> Self {
        Index {
            base_offset,
            file: IndexFile::new(path, K::ENTRY_BYTES as u64, max_index_bytes),
            last: None,
        }
    }

    /// Opens an existing file for lookups. Every whole slot is an entry, as Kafka counts them.
    pub fn open_existing(path: &Path, base_offset: i64) -> Result<Self> {
        let len = super::files::file_len(path)?;
        let mut index = Index {
            base_offset,
            file: IndexFile::read_only(path, K::ENTRY_BYTES as u64, len),
            last: None,
        };
        index.last = index.read_last(&PageReads::new(&index.file))?;
        Ok(index)
    }

    /// Opens an existing file for a seek, page by page: its entries end where the zero-filled
    /// tail a preallocated file ends in starts (past the data of a sparse file, whose holes read
    /// as zeros, then by binary search), and it passes Kafka's sanity check (its first and last
    /// entries, its length) or says why not. The entries' order is not checked here but where
    /// lookups read them ([`Self::lookup_checked`]).
    pub fn open_for_seek(path: &Path, base_offset: i64) -> Result<SeekIndex<K>> {
        let fd = match super::files::open_bytes(path) {
            Ok(f) => f,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None)
            }
            Err(e) => return Err(e),
        };
        let len = fd.byte_len().map_err(|e| Error::io(path, e))?;
        let data_slots = fd.data_end(len).div_ceil(K::ENTRY_BYTES as u64);
        let mut file = IndexFile::read_only(path, K::ENTRY_BYTES as u64, len);
        file.entries = (len / K::ENTRY_BYTES as u64).min(data_slots + 2);
        let mut index = Index {
            base_offset,
            file,
            last: None,
        };
        let reads = PageReads::with_fd(&index.file, fd);
        let entries = index.zero_tail_start(&reads)?;
        let mut ends = Vec::new();
        for slot in [0, entries.saturating_sub(1)]
            .into_iter()
            .take(entries.min(2) as usize)
        {
            let mut raw = [0u8; 16];
            let raw = &mut raw[..K::ENTRY_BYTES];
            reads.slot(slot, raw)?;
            ends.extend_from_slice(raw);
        }
        let last = match entries {
            0 => None,
            n => Some(reads.entry::<K>(n - 1, base_offset)?),
        };
        drop(reads);
        let name = path.display().to_string();
        if let Err(why) = K::sanity_check(&ends, len, base_offset, &name) {
            return Ok(Some(Err(why)));
        }
        index.file.entries = entries;
        index.file.max_entries = entries;
        index.last = last;
        Ok(Some(Ok(index)))
    }

    /// `offset_index_zero_tail_start` / `time_index_zero_tail_start`'s rule (the first slot
    /// past slot 0 holding the base offset; slot 0 itself when zero-filled and followed by the
    /// tail, or alone), found by binary search: in an index whose offsets ascend, the slots
    /// holding the base offset past slot 0 are a suffix.
    fn zero_tail_start(&self, reads: &PageReads<'_>) -> Result<u64> {
        let n = self.file.entries;
        if n == 0 {
            return Ok(0);
        }
        let (mut lo, mut hi) = (1, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if K::offset(&reads.entry::<K>(mid, self.base_offset)?) == self.base_offset {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let tail = lo;
        let empty = tail == 1
            && reads.is_zero(0)?
            && (K::LONE_ZERO_SLOT_IS_EMPTY || (n > 1 && reads.is_zero(1)?));
        Ok(if empty { 0 } else { tail })
    }

    fn read_last(&self, reads: &PageReads<'_>) -> Result<Option<K::Entry>> {
        match self.file.entries {
            0 => Ok(None),
            n => reads.entry::<K>(n - 1, self.base_offset).map(Some),
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
    pub fn entry(&self, slot: u64) -> Result<K::Entry> {
        PageReads::new(&self.file).entry::<K>(slot, self.base_offset)
    }

    /// The last entry, if any.
    pub fn last(&self) -> Option<K::Entry> {
        self.last
    }

    /// Index pages read from the file so far.
    pub fn pages_read(&self) -> u64 {
        self.file.pages_read.get()
    }

    pub fn is_full(&self) -> bool {
        K::is_full(self.file.entries, self.file.max_entries)
    }

    pub fn is_materialized(&self) -> bool {
        self.file.is_open()
    }

    /// Materialises the file, as any access to Kafka's lazy index does: an existing file's
    /// slots become the entries.
    pub fn touch(&mut self) -> Result<()> {
        if !self.file.is_open() {
            self.file.materialize(true)?;
            self.last = self.read_last(&PageReads::new(&self.file))?;
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

    pub fn sync(&mut self) -> Result<()> {
        self.file.sync()
    }

    pub fn trim_to_valid_size(&mut self) -> Result<()> {
        self.touch()?;
        self.file.trim()
    }

    /// Appends `entry` in the next slot (the caller has checked it may follow the last one).
    fn push(&mut self, entry: K::Entry) -> Result<()> {
        let mut raw = [0u8; 16];
        let raw = &mut raw[..K::ENTRY_BYTES];
        K::encode(&entry, self.base_offset, raw).map_err(|e| overflow(&self.file.path, e))?;
        self.file.write_slot(self.file.entries, raw)?;
        self.file.entries += 1;
        self.last = Some(entry);
        Ok(())
    }

    /// Kafka's search for `target` (`largestLowerBoundSlotFor`, warm section first), reading
    /// only the pages it probes: the slot it answers and every entry it read, by slot.
    fn search(&self, reads: &PageReads<'_>, target: i64) -> Result<(Option<u64>, Probed<K>)> {
        let seen = RefCell::new(BTreeMap::new());
        let error = RefCell::new(None);
        let key = |i: usize| {
            let i = i as u64;
            if let Some(e) = seen.borrow().get(&i) {
                return K::key(e);
            }
            match reads.entry::<K>(i, self.base_offset) {
                Ok(e) => {
                    seen.borrow_mut().insert(i, e);
                    K::key(&e)
                }
                Err(err) => {
                    error.borrow_mut().get_or_insert(err);
                    i64::MAX
                }
            }
        };
        let warm = INDEX_WARM_SECTION_BYTES / K::ENTRY_BYTES;
        let slot = largest_lower_bound_slot(self.file.entries as usize, warm, key, target);
        if let Some(e) = error.into_inner() {
            return Err(e);
        }
        Ok((slot.map(|s| s as u64), seen.into_inner()))
    }

    /// Kafka's lookup: the entry with the largest key `<= target`, else the one below the first
    /// (behavior.md §7.1).
    pub fn lookup(&self, target: i64) -> Result<K::Entry> {
        let (slot, seen) = self.search(&PageReads::new(&self.file), target)?;
        Ok(slot.map_or(K::before_first(self.base_offset), |s| seen[&s]))
    }

    /// [`Self::lookup`] for a seek, which must not trust a damaged index: the probed slots and
    /// the answer's neighbours must ascend, else why they do not.
    pub fn lookup_checked(&self, target: i64) -> Result<std::result::Result<K::Entry, String>> {
        let reads = PageReads::new(&self.file);
        let (slot, mut seen) = self.search(&reads, target)?;
        let slots = self.file.entries;
        let around = slot.map_or(0..1.min(slots), |s| s.saturating_sub(1)..(s + 2).min(slots));
        for i in around {
            if let std::collections::btree_map::Entry::Vacant(v) = seen.entry(i) {
                v.insert(reads.entry::<K>(i, self.base_offset)?);
            }
        }
        let found: Vec<_> = seen.values().collect();
        if let Some(w) = found.windows(2).find(|w| !K::ascends(w[0], w[1])) {
            let (a, b) = (K::pair(w[0]), K::pair(w[1]));
            return Ok(Err(format!(
                "entry ({}, {}) does not ascend after ({}, {})",
                b.0, b.1, a.0, a.1
            )));
        }
        Ok(Ok(
            slot.map_or(K::before_first(self.base_offset), |s| seen[&s])
        ))
    }
}

impl OffsetIndex {
    /// The last entry, if any.
    pub fn last_entry(&self) -> Option<OffsetIndexEntry> {
        self.last
    }

    /// The largest offset indexed, or the base offset (`lastOffset`).
    pub fn last_offset(&self) -> i64 {
        self.last.map_or(self.base_offset, |e| e.offset)
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
        self.push(OffsetIndexEntry { offset, position })
    }
}

impl TimeIndex {
    /// `resize(0)`: what the loader does to a time index it had to create.
    pub fn resize_to_empty(&mut self) -> Result<()> {
        self.touch()?;
        self.file.resize(0)
    }

    /// The last entry, or `(-1, base)` while there is none.
    pub fn last_entry(&self) -> TimeIndexEntry {
        self.last
            .unwrap_or(TimeKind::before_first(self.base_offset))
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
            self.push(TimeIndexEntry { timestamp, offset })?;
        }
        Ok(())
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

    /// The engine's lookups answer as Kafka's whole-index lookup (`largestLowerBoundSlotFor`
    /// in storage/src/main/java/org/apache/kafka/storage/internals/log/AbstractIndex.java, the
    /// warm section searched first) on sorted entries and on damaged, unsorted ones alike,
    /// reading a few pages per lookup, none kept.
    #[test]
    fn lookups_are_kafkas_search_over_the_pages_they_probe() {
        use crate::format::index::{
            offset_index_entries, offset_index_lookup, time_index_entries, time_index_lookup,
        };
        let dir = tempfile::tempdir().unwrap();
        let n = 20_000u64;
        let mut offsets = Vec::new();
        let mut times = Vec::new();
        for i in 0..n {
            let (offset, position) = (100 + 3 * (i as i64 + 1), 4096 * (i as i32 + 1));
            let e = OffsetIndexEntry { offset, position };
            offsets.extend(encode_offset_index_entry(&e, 100).unwrap());
            let t = TimeIndexEntry {
                timestamp: 1_700_000_000_000 + 7 * i as i64,
                offset,
            };
            times.extend(encode_time_index_entry(&t, 100).unwrap());
        }
        for damaged in [false, true] {
            let (mut offsets, mut times) = (offsets.clone(), times.clone());
            if damaged {
                // Swapped and out-of-order slots, at the head, the middle and the warm section.
                for (a, b) in [(3, 9), (n / 2, n / 2 + 700), (n - 40, n - 2)] {
                    let (a, b) = (a as usize, b as usize);
                    for (bytes, w) in [(&mut offsets, 8), (&mut times, 12)] {
                        let x = bytes[a * w..(a + 1) * w].to_vec();
                        let y = bytes[b * w..(b + 1) * w].to_vec();
                        bytes[a * w..(a + 1) * w].copy_from_slice(&y);
                        bytes[b * w..(b + 1) * w].copy_from_slice(&x);
                    }
                }
            }
            let op = dir.path().join(format!("{damaged}.index"));
            let tp = dir.path().join(format!("{damaged}.timeindex"));
            std::fs::write(&op, &offsets).unwrap();
            std::fs::write(&tp, &times).unwrap();
            let oi = OffsetIndex::open_existing(&op, 100).unwrap();
            let ti = TimeIndex::open_existing(&tp, 100).unwrap();
            let oe: Vec<_> = offset_index_entries(&offsets, 100).collect();
            let te: Vec<_> = time_index_entries(&times, 100).collect();
            // Where the damage makes Kafka's search and a plain partition point part ways.
            let mut parted = false;
            for k in (0..n as i64 * 3 + 200)
                .step_by(97)
                .chain([i64::MIN, 99, 100, i64::MAX])
            {
                let before = oi.pages_read();
                let o = k.saturating_add(100);
                let kafka = offset_index_lookup(&oe, 100, o);
                assert_eq!(oi.lookup(o).unwrap(), kafka, "{k}");
                let n = oe.partition_point(|e| e.offset <= o);
                parted |= n.checked_sub(1).map(|i| oe[i]) != Some(kafka) && n > 0;
                assert!(
                    oi.pages_read() - before <= 20,
                    "{k}: {}",
                    oi.pages_read() - before
                );
                let t = k.saturating_mul(2).saturating_add(1_700_000_000_000);
                assert_eq!(ti.lookup(t).unwrap(), time_index_lookup(&te, 100, t), "{k}");
            }
            assert_eq!(parted, damaged);
        }
    }
}
