//! `.txnindex`: one 34-byte entry per aborted transaction whose ABORT marker lies in the
//! segment (formats.md §7.3). Unlike the other indexes it is not preallocated: the file is
//! created by the first append and only grows.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::index::{
    aborted_txn_version_message, encode_aborted_txn, txn_index_entries, txn_index_sanity_check,
    AbortedTxn, ABORTED_TXN_ENTRY_BYTES,
};
use crate::format::names::txn_index_file_name;

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
        if super::files::exists(&self.path) {
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
        if !super::files::exists(&self.path) {
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
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(super::files::resolve(path)).map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        Ok(TxnIndexEntries {
            file,
            path: path.to_path_buf(),
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
        (self.len - self.whole_bytes, self.whole_bytes)
    }

    /// The byte position of the entry `next` will return.
    pub fn next_position(&self) -> u64 {
        self.window_pos + (self.next * ABORTED_TXN_ENTRY_BYTES) as u64
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

/// Kafka's `TransactionIndex.sanityCheck` over the file at `path`, streamed
/// ([`txn_index_sanity_check`]'s rule and texts, `file` naming it in them).
pub fn sanity_check_file(
    path: &Path,
    base_offset: i64,
    file: &str,
) -> Result<std::result::Result<(), String>> {
    let mut entries = TxnIndexEntries::open(path)?;
    while let Some(entry) = entries.next() {
        let txn = match entry {
            Ok(txn) => txn,
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

/// Every `.txnindex` of a partition, by segment, for `collectAbortedTransactions` (a missing
/// file holds no entry). Nothing is kept of the files but their paths: each collection streams
/// them through [`TxnIndexEntries`]' bounded window, and an entry that repeats the one before
/// it (a sparse file's zero entries, a file appended twice) is collected once, which changes
/// nothing for the readers of the entries (an aborted producer is marked once).
#[derive(Debug, Clone, Default)]
pub struct TxnIndexes(Vec<(i64, Option<PathBuf>)>);

impl TxnIndexes {
    /// The `.txnindex` of each segment base offset of `dir`, oldest first: every entry is read
    /// once here, so a file that does not decode fails now, not when a fetch reaches it.
    pub fn load(dir: &Path, bases: impl IntoIterator<Item = i64>) -> Result<Self> {
        let mut out = Vec::new();
        for base in bases {
            let path = dir.join(txn_index_file_name(base));
            let entries = match TxnIndexEntries::open(&path) {
                Ok(entries) => entries,
                Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                    out.push((base, None));
                    continue;
                }
                Err(e) => return Err(e),
            };
            for entry in entries {
                entry?;
            }
            out.push((base, Some(path)));
        }
        out.sort_by_key(|(b, _)| *b);
        Ok(TxnIndexes(out))
    }

    /// `UnifiedLog.collectAbortedTransactions(start, upper)` as the cleaner calls it: the
    /// entries from the segment holding `start` on, as seen by a fetch from that segment's base.
    pub fn collect(&self, start: i64, upper: i64) -> Result<Vec<AbortedTxn>> {
        let Some(floor) = self.floor(start) else {
            return Ok(Vec::new());
        };
        self.collect_from(floor, self.0[floor].0, upper)
    }

    /// The aborted transactions a fetch from `fetch_offset` returns (`LocalLog.read` →
    /// `addAbortedTransactions`, `TransactionIndex.collectAbortedTxns`): from the segment
    /// holding `fetch_offset` on, entries whose last offset is `>= fetch_offset` and whose first
    /// offset is `< upper`, until an entry's last stable offset reaches `upper`.
    pub fn for_fetch(&self, fetch_offset: i64, upper: i64) -> Result<Vec<AbortedTxn>> {
        let Some(floor) = self.floor(fetch_offset) else {
            return Ok(Vec::new());
        };
        self.collect_from(floor, fetch_offset, upper)
    }

    fn floor(&self, offset: i64) -> Option<usize> {
        self.0.iter().rposition(|(b, _)| *b <= offset)
    }

    fn collect_from(&self, floor: usize, fetch: i64, upper: i64) -> Result<Vec<AbortedTxn>> {
        let mut out: Vec<AbortedTxn> = Vec::new();
        for path in self.0[floor..].iter().filter_map(|(_, p)| p.as_ref()) {
            let mut prev = None;
            for t in TxnIndexEntries::open(path)? {
                let t = t?;
                if prev == Some(t) {
                    continue;
                }
                prev = Some(t);
                if t.last_offset >= fetch && t.first_offset < upper {
                    out.push(t);
                }
                if t.last_stable_offset >= upper {
                    return Ok(out);
                }
            }
        }
        Ok(out)
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
