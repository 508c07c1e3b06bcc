//! One object read like a file: positional reads served from ranged reads of
//! [`ReadAhead::chunk_bytes`]. Reading forward, the next [`ReadAhead::requests`] ranges are
//! started before the current one is worked on, so that transfer and work overlap; a jump
//! cancels them and reads only where it landed. An open object buffers at most
//! `chunk_bytes × (requests + 1)` bytes (and one decoded chunk of an Aiven segment), whatever
//! its size.

use std::collections::VecDeque;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use super::{PendingRead, ReadAhead, Store};
use crate::error::{Error, Result};
use crate::format::aiven::SegmentReader;

pub struct RemoteObject {
    store: Arc<dyn Store>,
    key: String,
    /// How many bytes reads see: the object's, or the segment's an Aiven object decodes to.
    len: u64,
    read_ahead: ReadAhead,
    /// The range worked on, and its stored bytes.
    current: Piece,
    bytes: Vec<u8>,
    /// The ranges started after it, in order.
    ahead: VecDeque<(Piece, PendingRead)>,
    /// Aiven's chunked `.log` objects: None when the object is the file.
    chunked: Option<Chunked>,
}

/// One ranged read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    /// The positions reads see that it holds.
    span: Range<u64>,
    /// Its bytes in the stored object.
    stored: Range<u64>,
}

impl Piece {
    const NONE: Piece = Piece {
        span: 0..0,
        stored: 0..0,
    };
}

/// An Aiven `.log` object: the reader that maps the segment's positions to chunks and decodes
/// them, and the chunk decoded last (segment bytes `[window_pos, window_pos + window.len())`).
struct Chunked {
    reader: Arc<SegmentReader>,
    window: Vec<u8>,
    window_pos: u64,
}

impl RemoteObject {
    /// Opens `key` (one HEAD request: its size; a missing object is an error naming it).
    pub fn open(store: Arc<dyn Store>, key: &str) -> Result<Self> {
        let len = store.len(key)?;
        Ok(Self::over(store, key, len, None))
    }

    /// Opens an Aiven `.log` object read as the segment it decodes to: its chunks are fetched
    /// whole, adjacent ones together in ranged reads of up to `chunk_bytes` (a larger chunk is
    /// a read of its own), and decoded one at a time as reads reach them.
    pub fn open_chunked(
        store: Arc<dyn Store>,
        key: &str,
        reader: Arc<SegmentReader>,
    ) -> Result<Self> {
        let stored = store.len(key)?;
        let index = &reader.manifest.chunk_index;
        if stored != index.transformed_file_size() {
            return Err(Error::invalid(
                &store.path_of(key),
                format!(
                    "the object has {stored} byte(s); its manifest's chunk index says {}",
                    index.transformed_file_size()
                ),
            ));
        }
        let len = u64::from(index.original_file_size);
        let chunked = Chunked {
            reader,
            window: Vec::new(),
            window_pos: 0,
        };
        Ok(Self::over(store, key, len, Some(chunked)))
    }

    fn over(store: Arc<dyn Store>, key: &str, len: u64, chunked: Option<Chunked>) -> Self {
        RemoteObject {
            read_ahead: store.read_ahead(),
            store,
            key: key.to_string(),
            len,
            current: Piece::NONE,
            bytes: Vec::new(),
            ahead: VecDeque::new(),
            chunked,
        }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The path errors about this object name: its URL.
    pub fn path(&self) -> PathBuf {
        self.store.path_of(&self.key)
    }

    /// Copies bytes from `pos` into `buf`; returns how many (0 at the end of the object).
    pub fn read_at(&mut self, buf: &mut [u8], pos: u64) -> Result<usize> {
        if pos >= self.len || buf.is_empty() {
            return Ok(0);
        }
        if !self.current.span.contains(&pos) {
            self.advance(pos)?;
        }
        let (bytes, start) = match &mut self.chunked {
            None => (&self.bytes[..], self.current.span.start),
            Some(c) => {
                if !(c.window_pos..c.window_pos + c.window.len() as u64).contains(&pos) {
                    c.decode(pos, &self.current, &self.bytes)
                        .map_err(|e| Error::decode(&self.store.path_of(&self.key), 0, e))?;
                }
                (&c.window[..], c.window_pos)
            }
        };
        let from = (pos - start) as usize;
        let n = buf.len().min(bytes.len() - from);
        buf[..n].copy_from_slice(&bytes[from..from + n]);
        Ok(n)
    }

    /// Makes the range holding `pos` the current one: the one started ahead for it, else a
    /// read started now. Reading forward, the ranges after it are started too.
    fn advance(&mut self, pos: u64) -> Result<()> {
        let started = self
            .ahead
            .front()
            .is_some_and(|(p, _)| p.span.contains(&pos));
        let forward = started || pos == self.current.span.end;
        // The bytes worked on are done with, and their buffer receives the next range started:
        // an object holds at most `requests + 1` buffers while bytes arrive, and reuses them
        // (a fresh buffer per range cost a page fault per 4 KiB, a third of a read's CPU).
        self.current = Piece::NONE;
        let mut spare = Some(std::mem::take(&mut self.bytes));
        if let Some(c) = &mut self.chunked {
            c.window = Vec::new();
        }
        if !started {
            // A jump: what was started ahead is not needed.
            self.ahead.clear();
            let piece = self.piece_at(pos);
            let buf = spare.take().unwrap_or_default();
            let read = self.store.start_read(&self.key, piece.stored.clone(), buf);
            self.ahead.push_back((piece, read));
        }
        let (piece, read) = self.ahead.pop_front().expect("a read holds pos");
        if forward {
            let mut next = self
                .ahead
                .back()
                .map_or(piece.span.end, |(p, _)| p.span.end);
            while self.ahead.len() < self.read_ahead.requests && next < self.len {
                let p = self.piece_at(next);
                next = p.span.end;
                let buf = spare.take().unwrap_or_default();
                let read = self.store.start_read(&self.key, p.stored.clone(), buf);
                self.ahead.push_back((p, read));
            }
        }
        drop(spare);
        let bytes = read.wait()?;
        if bytes.len() as u64 != piece.stored.end - piece.stored.start {
            return Err(Error::invalid(
                &self.path(),
                format!(
                    "a read of bytes {}..{} returned {} byte(s): the object changed while read",
                    piece.stored.start,
                    piece.stored.end,
                    bytes.len()
                ),
            ));
        }
        (self.current, self.bytes) = (piece, bytes);
        Ok(())
    }

    /// The range to read for `pos` (`< len`): `chunk_bytes` from it, or the whole Aiven chunks
    /// from the one holding it that fit in `chunk_bytes` (one at least).
    fn piece_at(&self, pos: u64) -> Piece {
        let budget = self.read_ahead.chunk_bytes;
        match &self.chunked {
            None => {
                let span = pos..pos.saturating_add(budget).min(self.len);
                Piece {
                    stored: span.clone(),
                    span,
                }
            }
            Some(c) => {
                let mut chunks = c.reader.chunks(pos, self.len - pos);
                let first = chunks.next().expect("pos < len: a chunk holds it");
                let base = first.transformed_position;
                let last = chunks
                    .take_while(|k| k.transformed_range().end - base <= budget)
                    .last()
                    .unwrap_or(first);
                Piece {
                    span: first.original_position..last.original_range().end,
                    stored: base..last.transformed_range().end,
                }
            }
        }
    }
}

impl Chunked {
    /// Decodes the chunk holding `pos` from `bytes`, the stored bytes of `piece`, which holds it.
    fn decode(
        &mut self,
        pos: u64,
        piece: &Piece,
        bytes: &[u8],
    ) -> std::result::Result<(), crate::format::error::DecodeError> {
        let chunk = self.reader.chunks(pos, 1).next().expect("pos < len");
        let r = chunk.transformed_range();
        let at = (r.start - piece.stored.start) as usize..(r.end - piece.stored.start) as usize;
        self.window = Vec::new();
        self.window = self.reader.decode_chunk(&chunk, &bytes[at])?;
        self.window_pos = chunk.original_position;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store::{ObjectInfo, Remote};
    use std::sync::Mutex;

    /// A store that records the ranges it is asked to read.
    struct Recording {
        inner: Remote,
        reads: Mutex<Vec<Range<u64>>>,
        /// The capacity of the spare buffer each read was given.
        spares: Mutex<Vec<usize>>,
    }

    impl Store for Recording {
        fn name(&self, key: &str) -> String {
            self.inner.name(key)
        }
        fn len(&self, key: &str) -> Result<u64> {
            self.inner.len(key)
        }
        fn start_read(&self, key: &str, range: Range<u64>, buf: Vec<u8>) -> PendingRead {
            self.reads.lock().unwrap().push(range.clone());
            self.spares.lock().unwrap().push(buf.capacity());
            self.inner.start_read(key, range, buf)
        }
        fn read_ahead(&self) -> ReadAhead {
            self.inner.read_ahead()
        }
        fn list(&self, prefix: &str) -> Result<Vec<ObjectInfo>> {
            self.inner.list(prefix)
        }
        fn put(&self, key: &str, bytes: Vec<u8>) -> Result<()> {
            self.inner.put(key, bytes)
        }
        fn upload(&self, key: &str) -> Result<Box<dyn crate::storage::store::Upload>> {
            self.inner.upload(key)
        }
    }

    fn store(chunk_bytes: u64, requests: usize) -> Arc<Recording> {
        let memory = Arc::new(object_store::memory::InMemory::new());
        let read_ahead = ReadAhead {
            chunk_bytes,
            requests,
        };
        Arc::new(Recording {
            inner: Remote::over("memory://t", memory, read_ahead).unwrap(),
            reads: Mutex::new(Vec::new()),
            spares: Mutex::new(Vec::new()),
        })
    }

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 % 251) as u8).collect()
    }

    /// Reads forward and jumps: every byte is the object's, across ranges, and no more than the
    /// current range and the ones started ahead are ever held.
    #[test]
    fn reads_cross_ranges_and_stay_bounded() {
        let s = store(1000, 2);
        let len = 6123;
        let data = data(len);
        s.put("a/b.log", data.clone()).unwrap();
        let mut o = RemoteObject::open(s.clone(), "a/b.log").unwrap();
        assert_eq!(o.len(), len as u64);
        let (mut pos, mut buf) = (0usize, vec![0u8; 300]);
        while pos < len {
            let n = o.read_at(&mut buf, pos as u64).unwrap();
            assert!(n > 0);
            assert_eq!(&buf[..n], &data[pos..pos + n]);
            assert!(o.bytes.len() <= 1000 && o.ahead.len() <= 2);
            pos += n;
        }
        assert_eq!(o.read_at(&mut buf, len as u64).unwrap(), 0);
        // A jump reads from where it lands, across the boundary of the ranges read forward.
        let at = 2993;
        assert_eq!(o.read_at(&mut buf[..10], at as u64).unwrap(), 10);
        assert_eq!(&buf[..10], &data[at..at + 10]);
        // Each range read once, in order, none past the end.
        let reads = s.reads.lock().unwrap().clone();
        let forward: Vec<Range<u64>> = (0..7)
            .map(|i| i * 1000..(i * 1000 + 1000).min(6123))
            .collect();
        assert_eq!(reads[..7], forward[..]);
        assert_eq!((reads.len(), &reads[7]), (8, &(2993..3993)));
        // The first range and the two ahead of it get new buffers; every later one, forward or
        // at the jump, the spent buffer of the range before it.
        let spares = s.spares.lock().unwrap().clone();
        assert_eq!(spares[..3], [0, 0, 0]);
        assert!(spares[3..].iter().all(|&c| c >= 1000), "{spares:?}");
        let e = RemoteObject::open(s, "a/none.log")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("memory://t/a/none.log") && e.contains("no such object"),
            "{e}"
        );
    }

    /// The ranges started ahead stop at the object's end: a small object is one read of its
    /// size, and a read near the end of a larger one asks for no byte past it.
    #[test]
    fn read_ahead_stops_at_the_end() {
        let s = store(1000, 3);
        s.put("small", data(100)).unwrap();
        s.put("large", data(2500)).unwrap();
        let mut buf = vec![0u8; 64];
        let mut small = RemoteObject::open(s.clone(), "small").unwrap();
        let mut pos = 0;
        while let n @ 1.. = small.read_at(&mut buf, pos).unwrap() {
            pos += n as u64;
        }
        assert_eq!(pos, 100);
        let small_reads = std::mem::take(&mut *s.reads.lock().unwrap());
        assert_eq!((small_reads.len(), &small_reads[0]), (1, &(0..100)));
        let mut large = RemoteObject::open(s.clone(), "large").unwrap();
        assert_eq!(large.read_at(&mut buf, 0).unwrap(), 64);
        assert_eq!(large.read_at(&mut buf, 2490).unwrap(), 10);
        assert_eq!(&buf[..10], &data(2500)[2490..]);
        assert_eq!(large.read_at(&mut buf, 2500).unwrap(), 0);
        assert_eq!(
            std::mem::take(&mut *s.reads.lock().unwrap()),
            [0..1000, 1000..2000, 2000..2500, 2490..2500]
        );
        // Nothing is read ahead after a jump.
        assert!(large.ahead.is_empty());
    }
}
