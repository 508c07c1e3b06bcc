//! `.txnindex`: one 34-byte entry per aborted transaction whose ABORT marker lies in the
//! segment (formats.md §7.3). Unlike the other indexes it is not preallocated: the file is
//! created by the first append and only grows.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::log_reader::{LogReader, Step};

use crate::error::{Error, Result};
use crate::format::batch::RECORD_BATCH_OVERHEAD_BYTES;
use crate::format::entry::Entry;
use crate::format::index::{
    aborted_txn_version_message, encode_aborted_txn, txn_index_entries, txn_index_sanity_check,
    AbortedTxn, ABORTED_TXN_ENTRY_BYTES,
};
use crate::format::names::{log_file_name, txn_index_file_name};

#[derive(Debug)]
pub struct TxnIndex {
    path: PathBuf,
    file: Option<File>,
    /// Only entries appended through this object are checked, as in Kafka: the last offset is
    /// not loaded from an existing file.
    last_offset: Option<i64>,
}

impl TxnIndex {
    pub fn new(path: PathBuf) -> Self {
        TxnIndex {
            path,
            file: None,
            last_offset: None,
        }
    }

    /// `reset`: an existing file is cut to 0 bytes (a missing one stays missing).
    pub fn reset(&mut self) -> Result<()> {
        self.last_offset = None;
        self.file = None;
        if super::files::exists(&self.path)? {
            super::files::prepare_write(&self.path, false)?;
            let f = OpenOptions::new()
                .append(true)
                .open(&self.path)
                .map_err(|e| Error::io(&self.path, e))?;
            f.set_len(0).map_err(|e| Error::io(&self.path, e))?;
            self.file = Some(f);
        }
        Ok(())
    }

    /// `sanityCheck`: every entry ends at or after the segment's base offset. The error is
    /// Kafka's CorruptIndexException text.
    pub fn sanity_check(&self, base_offset: i64) -> Result<std::result::Result<(), String>> {
        if !super::files::exists(&self.path)? {
            return Ok(Ok(()));
        }
        sanity_check_file(&self.path, base_offset, &self.path.display().to_string())
    }

    pub fn sync(&mut self) -> Result<()> {
        match &self.file {
            Some(f) => super::files::sync_all(f, &self.path),
            None => Ok(()),
        }
    }

    pub fn append(&mut self, txn: &AbortedTxn) -> Result<()> {
        if let Some(last) = self.last_offset {
            if last >= txn.last_offset {
                return Err(Error::invalid(
                    &self.path,
                    format!(
                        "aborted transaction last offset {} is not greater than the previous {last}",
                        txn.last_offset
                    ),
                ));
            }
        }
        if self.file.is_none() {
            super::files::prepare_write(&self.path, true)?;
            let f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)
                .map_err(|e| Error::io(&self.path, e))?;
            self.file = Some(f);
        }
        let file = self.file.as_mut().expect("just opened");
        file.write_all(&encode_aborted_txn(txn))
            .map_err(|e| Error::io(&self.path, e))?;
        self.last_offset = Some(txn.last_offset);
        Ok(())
    }
}

/// Entries read per window by [`TxnIndexEntries`]: 68 KiB at a time, whatever the file's size.
const WINDOW_ENTRIES: usize = 2048;

/// The entries of a `.txnindex` file read in bounded windows, as Kafka's reader does: whole
/// 34-byte entries (a partial trailing entry is not one), ending after the first entry whose
/// version is unknown (a `Decode` error at its position) or at a read error. For the walks
/// that visit every entry of a file of any size, a hostile one of gigabytes included.
pub struct TxnIndexEntries {
    file: File,
    path: PathBuf,
    len: u64,
    whole_bytes: u64,
    window: Vec<u8>,
    /// File position of `window`'s first byte, and the next entry's index in it.
    window_pos: u64,
    next: usize,
    done: bool,
}

impl TxnIndexEntries {
    /// The entries of `path` (a remote segment's, [`super::files::open_txn_index`], named by
    /// its object).
    pub fn open(path: &Path) -> Result<Self> {
        let (file, path) = super::files::open_txn_index(path)?;
        let len = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        Ok(TxnIndexEntries {
            file,
            path,
            len,
            whole_bytes: len - len % ABORTED_TXN_ENTRY_BYTES as u64,
            window: Vec::new(),
            window_pos: 0,
            next: 0,
            done: false,
        })
    }

    /// Bytes after the last whole entry (0 to 33), and where they begin.
    pub fn partial_tail(&self) -> (u64, u64) {
        let whole = self.len - self.len % ABORTED_TXN_ENTRY_BYTES as u64;
        (self.len - whole, whole)
    }

    /// Reads no entry past the first `max`; the count of whole entries in the file when it
    /// holds more (see [`entry_cap`]).
    pub fn cap(&mut self, max: u64) -> Option<u64> {
        let whole = self.whole_bytes / ABORTED_TXN_ENTRY_BYTES as u64;
        if whole <= max {
            return None;
        }
        self.whole_bytes = max * ABORTED_TXN_ENTRY_BYTES as u64;
        Some(whole)
    }

    /// The byte position of the entry `next` will return.
    pub fn next_position(&self) -> u64 {
        self.window_pos + (self.next * ABORTED_TXN_ENTRY_BYTES) as u64
    }

    /// The next entry and how many entries in a row it stands for: more than one only for the
    /// whole entries lying in a hole of a sparse file, all zeros (version 0, producer 0,
    /// offsets 0), read as one. Kafka never leaves a hole (the file is not preallocated, only
    /// appended), so a hole is hostile, and every entry of it judged alike: the readers that
    /// judge each entry on its own or collect repeated entries once take a run as its entry,
    /// at the cost of the file's data, not of its length.
    pub fn next_run(&mut self) -> Option<Result<(AbortedTxn, u64)>> {
        if !self.done && self.next * ABORTED_TXN_ENTRY_BYTES >= self.window.len() {
            let pos = self.next_position();
            let run = self.hole_entries(pos);
            if run > 0 {
                self.window.clear();
                self.next = 0;
                self.window_pos = pos + run * ABORTED_TXN_ENTRY_BYTES as u64;
                let zeros = [0u8; ABORTED_TXN_ENTRY_BYTES];
                let entry = txn_index_entries(&zeros).next().expect("one whole entry");
                return Some(entry.map(|t| (t, run)).map_err(|e| {
                    self.done = true;
                    Error::decode(&self.path, pos, e)
                }));
            }
        }
        self.next().map(|r| r.map(|t| (t, 1)))
    }

    /// How many whole entries from `pos` (an entry's start) lie in a hole (0 where the file
    /// system cannot say).
    fn hole_entries(&self, pos: u64) -> u64 {
        use std::os::fd::AsRawFd;
        let Ok(from) = libc::off_t::try_from(pos) else {
            return 0;
        };
        if pos >= self.whole_bytes {
            return 0;
        }
        // SAFETY: lseek on a descriptor we own; reads are positioned, so moving the file
        // offset changes nothing.
        let data = unsafe { libc::lseek(self.file.as_raw_fd(), from, libc::SEEK_DATA) };
        let hole_end = if data >= 0 {
            data as u64
        } else if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO) {
            // No data past `pos`: the rest of the file is a hole.
            self.whole_bytes
        } else {
            return 0;
        };
        (hole_end.min(self.whole_bytes).saturating_sub(pos)) / ABORTED_TXN_ENTRY_BYTES as u64
    }

    fn fill(&mut self) -> Result<bool> {
        let pos = self.next_position();
        if pos >= self.whole_bytes {
            return Ok(false);
        }
        let n = (self.whole_bytes - pos).min((WINDOW_ENTRIES * ABORTED_TXN_ENTRY_BYTES) as u64);
        self.window.resize(n as usize, 0);
        std::os::unix::fs::FileExt::read_exact_at(&self.file, &mut self.window, pos)
            .map_err(|e| Error::io(&self.path, e))?;
        self.window_pos = pos;
        self.next = 0;
        Ok(true)
    }
}

impl Iterator for TxnIndexEntries {
    type Item = Result<AbortedTxn>;

    fn next(&mut self) -> Option<Result<AbortedTxn>> {
        if self.done {
            return None;
        }
        if self.next * ABORTED_TXN_ENTRY_BYTES >= self.window.len() {
            match self.fill() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        let at = self.next * ABORTED_TXN_ENTRY_BYTES;
        let one = &self.window[at..at + ABORTED_TXN_ENTRY_BYTES];
        let entry = txn_index_entries(one).next().expect("one whole entry");
        let base = self.next_position();
        self.next += 1;
        Some(entry.map_err(|e| {
            self.done = true;
            Error::decode(&self.path, base, e)
        }))
    }
}

/// The most entries the `.txnindex` at `path` holds as Kafka writes it ([`max_entries`] of the
/// `.log` beside it). None without that `.log`.
pub fn entry_cap(path: &Path) -> Result<Option<u64>> {
    use crate::format::names::{classify, FileKind};
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let FileKind::TxnIndex { base_offset } = classify(&name) else {
        return Ok(None);
    };
    let log = path.with_file_name(log_file_name(base_offset));
    if !super::files::is_file(&log)? {
        return Ok(None);
    }
    Ok(Some(max_entries(super::files::file_len(&log)?)))
}

/// The most entries a `.txnindex` holds as Kafka writes it beside a `.log` of `log_len` bytes:
/// one per ABORT marker of its segment, each a batch of at least [`RECORD_BATCH_OVERHEAD_BYTES`]
/// (`TransactionIndex` only appends, one entry per aborted transaction completed in the
/// segment, and never preallocates).
pub fn max_entries(log_len: u64) -> u64 {
    log_len / RECORD_BATCH_OVERHEAD_BYTES as u64
}

/// Kafka's `TransactionIndex.sanityCheck` over the file at `path`, streamed
/// ([`txn_index_sanity_check`]'s rule and texts, `file` naming it in them).
pub fn sanity_check_file(
    path: &Path,
    base_offset: i64,
    file: &str,
) -> Result<std::result::Result<(), String>> {
    let mut entries = TxnIndexEntries::open(path)?;
    while let Some(entry) = entries.next_run() {
        let txn = match entry {
            Ok((txn, _)) => txn,
            // The entry at `position`, whose version byte is its first.
            Err(Error::Decode { position, .. }) => {
                let mut version = [0u8; 1];
                std::os::unix::fs::FileExt::read_exact_at(&entries.file, &mut version, position)
                    .map_err(|e| Error::io(path, e))?;
                return Ok(Err(aborted_txn_version_message(version[0] as i8, file)));
            }
            Err(e) => return Err(e),
        };
        if txn.last_offset < base_offset {
            // The rule and text of the format's whole-bytes check, on this one entry.
            return Ok(txn_index_sanity_check(
                &encode_aborted_txn(&txn),
                base_offset,
                file,
            ));
        }
    }
    Ok(Ok(()))
}

/// Where the aborted transactions of a collection go: [`TxnIndexes`] says how many are coming
/// before the first, so a reader's own store is sized once (no growth by doubling).
pub trait AbortedTxnSink {
    fn reserve(&mut self, count: usize);
    fn push(&mut self, txn: AbortedTxn);
}

impl AbortedTxnSink for Vec<AbortedTxn> {
    fn reserve(&mut self, count: usize) {
        self.reserve_exact(count);
    }
    fn push(&mut self, txn: AbortedTxn) {
        Vec::push(self, txn);
    }
}

/// Which segments' batches a collection's reader walks after taking the entries: a fetch reads
/// its own segment; a cleaning round goes on to the partition's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    Segment,
    Rest,
}

/// Every `.txnindex` of a partition, by segment, for `collectAbortedTransactions` (a missing
/// file holds no entry). Nothing is kept of the files but their paths: each collection streams
/// them through [`TxnIndexEntries`]' bounded window, and an entry that repeats the one before
/// it (a sparse file's zero entries, a file appended twice) is collected once, which changes
/// nothing for the readers of the entries (an aborted producer is marked once).
///
/// A collection holds more entries than its walk has batches only in a hostile file: it is
/// then cut to those its reader can act on ([`Usable`]), so what a reader keeps is bounded by
/// the `.log` bytes it reads, whatever the size of the `.txnindex`.
#[derive(Debug, Clone, Default)]
pub struct TxnIndexes {
    dir: PathBuf,
    files: Vec<(i64, Option<PathBuf>)>,
    /// The positions in `files` of the segments that have a `.txnindex`: a collection visits
    /// only those, and a partition of many segments has few.
    indexed: Vec<usize>,
    /// The sizes of the segments' `.log`s summed from the first (a missing one counts 0),
    /// statted once, when a collection first needs its room: a collection per segment would
    /// otherwise stat every later `.log` again.
    log_bytes_upto: std::cell::OnceCell<Vec<u64>>,
    /// [`Usable`] over every segment, for the cleaner's collections (scanned once, when one
    /// first needs it).
    usable_everywhere: std::cell::OnceCell<Option<Usable>>,
}

impl TxnIndexes {
    /// The `.txnindex` of each segment base offset of `dir`, oldest first: every entry is read
    /// once here, so a file that does not decode fails now, not when a fetch reaches it.
    pub fn load(dir: &Path, bases: impl IntoIterator<Item = i64>) -> Result<Self> {
        let mut out = Vec::new();
        for base in bases {
            let path = dir.join(txn_index_file_name(base));
            let mut entries = match TxnIndexEntries::open(&path) {
                Ok(entries) => entries,
                Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                    out.push((base, None));
                    continue;
                }
                Err(e) => return Err(e),
            };
            while let Some(entry) = entries.next_run() {
                entry?;
            }
            out.push((base, Some(path)));
        }
        out.sort_by_key(|(b, _)| *b);
        let indexed = (0..out.len()).filter(|&i| out[i].1.is_some()).collect();
        Ok(TxnIndexes {
            dir: dir.to_path_buf(),
            files: out,
            indexed,
            log_bytes_upto: Default::default(),
            usable_everywhere: Default::default(),
        })
    }

    /// `UnifiedLog.collectAbortedTransactions(start, upper)` as the cleaner calls it: the
    /// entries from the segment holding `start` on, as seen by a fetch from that segment's base.
    /// The cleaner walks on to the end of its round after taking them.
    pub fn collect(&self, start: i64, upper: i64, sink: &mut impl AbortedTxnSink) -> Result<()> {
        let Some(floor) = self.floor(start) else {
            return Ok(());
        };
        self.collect_from(floor, self.files[floor].0, upper, Walk::Rest, sink)
    }

    /// The aborted transactions a fetch from `fetch_offset` returns (`LocalLog.read` →
    /// `addAbortedTransactions`, `TransactionIndex.collectAbortedTxns`): from the segment
    /// holding `fetch_offset` on, entries whose last offset is `>= fetch_offset` and whose first
    /// offset is `< upper`, until an entry's last stable offset reaches `upper`. The fetch
    /// reads that one segment's batches.
    pub fn for_fetch(
        &self,
        fetch_offset: i64,
        upper: i64,
        sink: &mut impl AbortedTxnSink,
    ) -> Result<()> {
        let Some(floor) = self.floor(fetch_offset) else {
            return Ok(());
        };
        self.collect_from(floor, fetch_offset, upper, Walk::Segment, sink)
    }

    fn floor(&self, offset: i64) -> Option<usize> {
        // Sorted by base: the last at or below `offset`.
        self.files
            .partition_point(|(b, _)| *b <= offset)
            .checked_sub(1)
    }

    /// Kafka's loop over the files, each collected entry given to `each`; returns how many.
    fn each_from(
        &self,
        floor: usize,
        fetch: i64,
        upper: i64,
        mut each: impl FnMut(AbortedTxn),
    ) -> Result<usize> {
        let mut count = 0;
        let from = self.indexed.partition_point(|&i| i < floor);
        let paths = self.indexed[from..].iter().map(|&i| &self.files[i].1);
        for path in paths.flatten() {
            let mut prev = None;
            let mut entries = TxnIndexEntries::open(path)?;
            while let Some(run) = entries.next_run() {
                // A run repeats its entry, which is collected once.
                let (t, _) = run?;
                if prev == Some(t) {
                    continue;
                }
                prev = Some(t);
                if t.last_offset >= fetch && t.first_offset < upper {
                    count += 1;
                    each(t);
                }
                if t.last_stable_offset >= upper {
                    return Ok(count);
                }
            }
        }
        Ok(count)
    }

    /// The files are read twice, first to count: a collection no larger than its walk's room
    /// for batches goes to `sink` whole; a larger one only its entries a reader can act on.
    fn collect_from(
        &self,
        floor: usize,
        fetch: i64,
        upper: i64,
        walk: Walk,
        sink: &mut impl AbortedTxnSink,
    ) -> Result<()> {
        let count = self.each_from(floor, fetch, upper, |_| {})?;
        if count == 0 {
            return Ok(());
        }
        let logs = match walk {
            Walk::Segment => &self.files[floor..=floor],
            Walk::Rest => &self.files[floor..],
        };
        let upto = self.log_bytes_upto.get_or_init(|| {
            // A missing `.log` is no room (and its scan leaves every entry in). Through
            // `files`, which knows a remote segment's size: its log is not read again to find
            // room it has.
            let sizes = self.files.iter().map(|(base, _)| {
                super::files::file_len(&self.dir.join(log_file_name(*base))).unwrap_or(0)
            });
            std::iter::once(0)
                .chain(sizes.scan(0, |sum, len| {
                    *sum += len;
                    Some(*sum)
                }))
                .collect()
        });
        let log_bytes = upto[floor + logs.len()] - upto[floor];
        // Each group of [`Usable`] needs a v2 batch of its own in the walk.
        let room = log_bytes / RECORD_BATCH_OVERHEAD_BYTES as u64;
        let scanned;
        let usable = if count as u64 <= room {
            None
        } else if walk == Walk::Segment {
            scanned = Usable::scan(&self.dir, logs)?;
            scanned.as_ref()
        } else {
            if self.usable_everywhere.get().is_none() {
                let everywhere = Usable::scan(&self.dir, &self.files)?;
                let _ = self.usable_everywhere.set(everywhere);
            }
            self.usable_everywhere.get().and_then(Option::as_ref)
        };
        let Some(usable) = usable else {
            sink.reserve(count);
            self.each_from(floor, fetch, upper, |t| sink.push(t))?;
            return Ok(());
        };
        // The groups' firsts are found before any is passed on: the entries come in file
        // order, not in the order they are taken.
        let mut firsts = Firsts::new();
        self.each_from(floor, fetch, upper, |t| usable.offer(&mut firsts, t))?;
        sink.reserve(firsts.len());
        for t in firsts.into_values() {
            sink.push(t);
        }
        Ok(())
    }
}

/// The order in which a reader takes a collection's entries: by first offset, ties by the
/// rest (as the cleaner's queue breaks them).
pub fn heap_order(t: &AbortedTxn) -> (i64, i64, i64, i64) {
    (
        t.first_offset,
        t.producer_id,
        t.last_offset,
        t.last_stable_offset,
    )
}

/// Which entries of a collection its reader can act on, from the batch headers of the
/// segments it walks (a superset of them).
///
/// Both readers (the consumer's `CompletedFetch`, the cleaner's `CleanedTransactionMetadata`)
/// walk batches in offset order; at each batch they take every entry whose first offset is at
/// or below the batch's last offset, marking its producer aborted unless it is already; a
/// producer's ABORT marker unmarks it; only its transactional data batches look at the mark.
/// So an entry whose producer has no transactional data batch changes nothing; and of the
/// entries of one producer whose first offsets lie between the same two of its control
/// batches, only the first taken can mark it (the others find it marked, no marker coming in
/// between): that group is its first entry. A producer has at most one group more than it has
/// control batches, so the groups are bounded by the batches of the walk. Batches whose last
/// offsets go back, or damage the walk could resync past, leave no such order: then no entry
/// is left out.
#[derive(Debug, Clone, Default)]
pub struct Usable {
    /// Producer → (whether it has a transactional data batch, the last offsets of its control
    /// batches, ascending); after [`Usable::finish`] only those with a data batch.
    controls: HashMap<i64, (bool, Vec<i64>)>,
    last_offset: Option<i64>,
}

/// The first entry of each group seen so far.
type Firsts = HashMap<(i64, usize), AbortedTxn>;

/// What [`Usable`] looks at in a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkedBatch {
    pub last_offset: i64,
    /// None: a v0/v1 entry (no producer).
    pub producer_id: Option<i64>,
    pub is_control: bool,
    pub is_transactional: bool,
}

impl WalkedBatch {
    pub fn of(entry: &Entry<'_>) -> Self {
        match entry {
            Entry::V2(b) => WalkedBatch {
                last_offset: b.header.last_offset(),
                producer_id: Some(b.header.producer_id),
                is_control: b.header.is_control(),
                is_transactional: b.header.is_transactional(),
            },
            Entry::Legacy(_) => WalkedBatch {
                last_offset: entry.last_offset(),
                producer_id: None,
                is_control: false,
                is_transactional: false,
            },
        }
    }
}

impl Usable {
    fn scan(dir: &Path, segments: &[(i64, Option<PathBuf>)]) -> Result<Option<Self>> {
        let mut usable = Usable::default();
        for (base, _) in segments {
            let path = dir.join(log_file_name(*base));
            if !super::files::exists(&path)? {
                return Ok(None);
            }
            let mut reader = LogReader::open(&path, None)?;
            loop {
                match reader.next_step()? {
                    Step::Entry { entry, .. } => {
                        if !usable.add([WalkedBatch::of(&entry)]) {
                            return Ok(None);
                        }
                    }
                    Step::End { .. } => break,
                    _ => return Ok(None),
                }
            }
        }
        Ok(Some(usable.finish()))
    }

    /// The next batches of the walk, in its order; false when their last offsets go back
    /// (then no entry can be left out).
    pub fn add(&mut self, batches: impl IntoIterator<Item = WalkedBatch>) -> bool {
        for b in batches {
            if self.last_offset.is_some_and(|l| b.last_offset < l) {
                return false;
            }
            self.last_offset = Some(b.last_offset);
            let Some(pid) = b.producer_id else { continue };
            let producer = self.controls.entry(pid).or_default();
            if b.is_control {
                producer.1.push(b.last_offset);
            } else if b.is_transactional {
                producer.0 = true;
            }
        }
        true
    }

    /// Once every batch is added.
    pub fn finish(mut self) -> Self {
        self.controls.retain(|_, (data, _)| *data);
        self
    }

    /// The entry's group: its producer and how many of its control batches end before the
    /// entry's first offset. None: no reader acts on it.
    fn group(&self, t: &AbortedTxn) -> Option<(i64, usize)> {
        let (_, controls) = self.controls.get(&t.producer_id)?;
        Some((
            t.producer_id,
            controls.partition_point(|&o| o < t.first_offset),
        ))
    }

    /// Keeps `t` in `firsts` if it is the first of its group so far.
    fn offer(&self, firsts: &mut Firsts, t: AbortedTxn) {
        if let Some(group) = self.group(&t) {
            let first = firsts.entry(group).or_insert(t);
            if heap_order(&t) < heap_order(first) {
                *first = t;
            }
        }
    }

    /// Of `entries`, those a reader walking these batches can act on: the first of each group.
    pub fn first_of_groups(
        &self,
        entries: impl IntoIterator<Item = AbortedTxn>,
    ) -> Vec<AbortedTxn> {
        let mut firsts = Firsts::new();
        for t in entries {
            self.offer(&mut firsts, t);
        }
        firsts.into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_lazily_and_strictly_increasing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.txnindex");
        let mut idx = TxnIndex::new(path.clone());
        assert!(!path.exists());
        let t = AbortedTxn {
            version: 0,
            producer_id: 7,
            first_offset: 3,
            last_offset: 9,
            last_stable_offset: 10,
        };
        idx.append(&t).unwrap();
        assert!(idx.append(&t).is_err());
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 34);
        assert_eq!(&bytes[..2], &[0, 0]);
        assert_eq!(bytes[9], 7);
        assert_eq!(bytes[33], 10);
    }
}
