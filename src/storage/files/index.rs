//! Index files read and mapped: the leading bytes that can hold entries (past a broker's
//! sparse preallocation), whole or as a prefix, and the last slot.

use super::*;

/// The leading bytes of an index file that can hold entries, and the file's length: a running
/// broker preallocates its indexes (10 MiB by default) as sparse zero-filled files, so what
/// lies past the last data extent is known to be zero without reading it.
#[derive(Debug)]
pub struct IndexBytes {
    /// The file from its start to past its last data extent, plus at least one zero slot when
    /// the file goes on (so a zero tail is seen); whole slots of 8 and of 12 bytes.
    pub data: IndexData,
    /// The file's length; bytes `data.len()..len` are zero.
    pub len: u64,
}

/// The bytes of [`IndexBytes`]: the file mapped read-only, never read whole into memory, so
/// only the pages a check visits become resident (a 2 GiB index whose data lies at both ends
/// costs the pages at its ends; Kafka maps its indexes too), and a pass over it keeps only a
/// window of them ([`IndexData::passed`]). A file a broker shrinks while mapped reads as zeros
/// past its new end and is reported as changed ([`super::super::live`]), never a SIGBUS.
#[derive(Debug)]
pub struct IndexData {
    // Dropped before the mapping it guards.
    _guard: Option<super::super::live::MapGuard>,
    map: Option<memmap2::Mmap>,
    released: std::cell::Cell<usize>,
}

/// Bytes of an index a pass keeps resident behind where it reads (a multiple of the page).
pub(super) const INDEX_PASS_WINDOW: usize = 64 << 10;

impl IndexData {
    /// A reader of the bytes in order has reached byte `at`: the pages a window or more behind
    /// it leave this process's memory (they stay in the page cache and a read brings them back),
    /// so a pass over an index costs a window, not the index. A smaller `at` than before starts
    /// a new pass.
    pub fn passed(&self, at: usize) {
        let from = self.released.get();
        if at < from {
            self.released.set(at - at % INDEX_PASS_WINDOW);
        } else if at - from >= 2 * INDEX_PASS_WINDOW {
            self.release(at - at % INDEX_PASS_WINDOW - INDEX_PASS_WINDOW);
        }
    }

    /// Lets the pages of the bytes from the last release to `upto` go.
    fn release(&self, upto: usize) {
        let Some(map) = &self.map else { return };
        let (from, upto) = (self.released.get(), upto.min(map.len()));
        if upto > from {
            // SAFETY: a read-only shared file mapping: MADV_DONTNEED drops page-table entries
            // only, and the next access reads the same file bytes again. Failing, it is a hint
            // not taken.
            let _ = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, upto - from)
            };
            self.released.set(upto);
        }
    }

    /// `rule` (a zero-tail rule of `slot`-byte entries: the first slot past slot 0 of its bytes
    /// that matches, else None; slot 0 only when the bytes' first slots say so) over the bytes a
    /// window at a time, each let go once searched ([`IndexData::passed`]), so the search costs
    /// a window of memory. Each window after the first starts one slot early: a match past its
    /// slot 0 is a match past the previous window's last slot, and its slot 0 (a slot the
    /// previous window searched) cannot match.
    pub fn find_slot(&self, slot: usize, rule: impl Fn(&[u8]) -> Option<usize>) -> Option<usize> {
        let window = INDEX_PASS_WINDOW / slot * slot;
        let mut first: usize = 0;
        loop {
            let lo = first.saturating_sub(1) * slot;
            let hi = (lo + window).min(self.len());
            let found = rule(&self[lo..hi]).map(|i| lo / slot + i);
            self.passed(hi);
            if found.is_some() || hi == self.len() {
                // The pass that follows starts at the front.
                self.release(hi);
                return found;
            }
            first = hi / slot;
        }
    }
}

impl std::ops::Deref for IndexData {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.map.as_deref().unwrap_or_default()
    }
}

/// The LCM of the offset (8) and time (12) index entry sizes: a prefix of whole slots of both.
pub(super) const SLOT_MULTIPLE: u64 = 24;

/// Reads an index file as [`IndexBytes`], skipping the holes of a sparse file.
pub fn read_index(p: &Path) -> Result<IndexBytes> {
    let (f, len, end) = open_sparse(p)?;
    let data = map_prefix(&f, p, index_prefix_len(end, len))?;
    Ok(IndexBytes { data, len })
}

/// The whole file `p` (a `.txnindex`: every byte counts) mapped read-only, as [`IndexData`].
pub fn map_whole(p: &Path) -> Result<IndexData> {
    let f = open_regular(p)?;
    let len = f.metadata().map_err(|e| Error::io(p, e))?.len();
    map_prefix(&f, p, len)
}

/// The first `n` bytes (all there) of the file `f` at `p`, mapped read-only.
pub(super) fn map_prefix(f: &std::fs::File, p: &Path, n: u64) -> Result<IndexData> {
    if n == 0 {
        return Ok(IndexData {
            _guard: None,
            map: None,
            released: Default::default(),
        });
    }
    let n_usize =
        usize::try_from(n).map_err(|_| Error::invalid(p, format!("{n} bytes cannot be mapped")))?;
    // SAFETY: a read-only map of a file of at least `n` bytes (measured just now); a file cut
    // short under it faults into the guard made next, not into a SIGBUS (see `IndexData`).
    let map =
        unsafe { memmap2::MmapOptions::new().len(n_usize).map(f) }.map_err(|e| Error::io(p, e))?;
    super::super::progress::read(n);
    Ok(IndexData {
        _guard: Some(super::super::live::MapGuard::new(map.as_ptr(), n_usize, p)),
        map: Some(map),
        released: Default::default(),
    })
}

/// How many leading bytes of the index file `f` (of `len` bytes) [`read_index`] reads.
pub fn index_read_len(f: &std::fs::File, len: u64) -> u64 {
    index_prefix_len(data_end(f, len), len)
}

/// The prefix of an index of `len` bytes whose data ends at `end`: whole slots of both
/// entry sizes, with at least one zero slot after the data when the file goes on.
pub(super) fn index_prefix_len(end: u64, len: u64) -> u64 {
    if end >= len {
        len
    } else {
        (end.div_ceil(SLOT_MULTIPLE) * SLOT_MULTIPLE + SLOT_MULTIPLE).min(len)
    }
}

/// Bytes read per step backwards by [`read_index_last_slot`]: a page, which holds the last
/// entry unless the zero-filled tail of a preallocated file reaches into the page before.
pub(super) const INDEX_TAIL_READ_BYTES: u64 = 4096;

/// The last whole `slot`-byte slot of the index file `p` that is not all zeros (the broker never
/// writes an all-zero entry past slot 0: offsets and positions ascend), read backwards from the
/// end of the file's data a page at a time, so neither the entries before it nor the holes of a
/// preallocated sparse file are read. `None` when the file is missing or holds only zeros.
pub fn read_index_last_slot(p: &Path, slot: usize) -> Result<Option<Vec<u8>>> {
    use std::io::{Read, Seek, SeekFrom};
    let (mut f, len, end) = match open_sparse(p) {
        Ok(x) => x,
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    let slot_bytes = slot as u64;
    // Whole slots only: a partial entry at the end is not one.
    let mut hi = end.min(len) / slot_bytes * slot_bytes;
    let mut window = Vec::new();
    while hi > 0 {
        let lo = hi.saturating_sub(INDEX_TAIL_READ_BYTES) / slot_bytes * slot_bytes;
        window.resize((hi - lo) as usize, 0);
        f.seek(SeekFrom::Start(lo)).map_err(|e| Error::io(p, e))?;
        f.read_exact(&mut window).map_err(|e| Error::io(p, e))?;
        if let Some(last) = window
            .chunks_exact(slot)
            .rev()
            .find(|c| c.iter().any(|&b| b != 0))
        {
            return Ok(Some(last.to_vec()));
        }
        hi = lo;
    }
    Ok(None)
}
