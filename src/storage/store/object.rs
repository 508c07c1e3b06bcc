//! One object read like a file: positional reads served from ranged reads of
//! [`ReadAhead::chunk_bytes`]. Reading forward, the next [`ReadAhead::requests`] ranges are
//! started before the current one is worked on, so that transfer and work overlap; a jump
//! cancels them and reads only where it landed. A range's bytes are worked on part by part as
//! they arrive, in the transfer's own buffers, each dropped once read past: an open object
//! buffers at most `chunk_bytes × (requests + 1)` bytes (and, for an Aiven segment, its current
//! range and one decoded chunk, or [`WINDOW_BYTES`] of a larger one), whatever its size, and
//! when the reading keeps up, little more than a part.

use std::collections::VecDeque;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;

use super::{PendingRead, ReadAhead, Store};
use crate::error::{Error, Result};
use crate::format::aiven::segment::ChunkStream;
use crate::format::aiven::SegmentReader;
use crate::format::error::{DecodeError, ErrorKind};

/// An Aiven chunk that decodes to at most this many bytes is decoded whole; a larger one
/// through a window of this many. The plugin allows chunks of up to ~1 GiB and one zstd frame
/// of a few KiB can claim them, so what is held must not follow the manifest's chunk size;
/// twice the plugin's default chunk (4 MiB) keeps the usual case as it was.
pub const WINDOW_BYTES: usize = 8 << 20;

pub struct RemoteObject {
    store: Arc<dyn Store>,
    key: String,
    /// How many bytes reads see: the object's, or the segment's an Aiven object decodes to.
    len: u64,
    read_ahead: ReadAhead,
    /// The part of a range worked on, and the position reads see of its first byte.
    part: Bytes,
    part_pos: u64,
    /// The ranges started, in order: the first is the one being received.
    ahead: VecDeque<Incoming>,
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

/// A range being received: how many of its stored bytes have arrived so far.
struct Incoming {
    piece: Piece,
    read: PendingRead,
    arrived: u64,
}

impl Incoming {
    /// The position reads see of the next byte to arrive (a chunked range is taken whole).
    fn next(&self) -> u64 {
        if self.arrived == self.piece.stored.end - self.piece.stored.start {
            self.piece.span.end
        } else {
            self.piece.span.start + self.arrived
        }
    }
}

/// An Aiven `.log` object: the reader that maps the segment's positions to chunks and decodes
/// them; the range taken last, whole (its stored bytes); and the chunk decoded last, or a
/// window of a larger one (segment bytes `[window_pos, window_pos + window.len())`).
struct Chunked {
    reader: Arc<SegmentReader>,
    piece: Option<Piece>,
    stored: Vec<u8>,
    window: Vec<u8>,
    window_pos: u64,
    /// The chunk of the range taken larger than [`WINDOW_BYTES`] that the window is in,
    /// checked whole and decoded up to the window's end.
    stream: Option<ChunkStream>,
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
        let want = index.transformed_file_size();
        if stored != want {
            return Err(Error::decode(
                &store.path_of(key),
                stored.min(want),
                DecodeError::new(
                    ErrorKind::BadLength,
                    0,
                    format!(
                        "the object has {stored} byte(s); its manifest's chunk index says {want}"
                    ),
                ),
            ));
        }
        let len = u64::from(index.original_file_size);
        let chunked = Chunked {
            reader,
            piece: None,
            stored: Vec::new(),
            window: Vec::new(),
            window_pos: 0,
            stream: None,
        };
        Ok(Self::over(store, key, len, Some(chunked)))
    }

    fn over(store: Arc<dyn Store>, key: &str, len: u64, chunked: Option<Chunked>) -> Self {
        RemoteObject {
            read_ahead: store.read_ahead(),
            store,
            key: key.to_string(),
            len,
            part: Bytes::new(),
            part_pos: 0,
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

    /// The bytes decoded together with `pos`: its Aiven chunk's, or `pos` alone for an object
    /// read as it is.
    pub fn decoded_with(&self, pos: u64) -> Range<u64> {
        self.chunked
            .as_ref()
            .and_then(|c| c.reader.chunks(pos, 1).next())
            .map_or(pos..pos + 1, |chunk| chunk.original_range())
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
        self.reach(pos)?;
        let (bytes, start) = self.held();
        let from = (pos - start) as usize;
        let n = buf.len().min(bytes.len() - from);
        buf[..n].copy_from_slice(&bytes[from..from + n]);
        Ok(n)
    }

    /// Makes the bytes `range` (within the object, not empty) ready to be lent by
    /// [`RemoteObject::lent`], without a copy: true when they lie in one part of what arrived
    /// (or one decoded chunk), false when they cross into the next or start in a part already
    /// read past (read them with `read_at`, or from a copy: going back would fetch them again).
    pub fn lend(&mut self, range: Range<u64>) -> Result<bool> {
        let passed = match &self.chunked {
            None => range.start < self.part_pos,
            // A chunk of the range taken is decoded again from it; one before is not fetched.
            // Behind the window of a chunk read through one, lending would decode the chunk
            // again from its start (for a header that straddles windows, at every window).
            Some(c) => {
                c.piece.as_ref().is_some_and(|p| range.start < p.span.start)
                    || (c.stream.is_some() && range.start < c.window_pos)
            }
        };
        if passed {
            return Ok(false);
        }
        self.reach(range.start)?;
        let (bytes, start) = self.held();
        Ok(range.end <= start + bytes.len() as u64)
    }

    /// The bytes `range` that [`RemoteObject::lend`] said it holds.
    pub fn lent(&self, range: Range<u64>) -> &[u8] {
        let (bytes, start) = self.held();
        &bytes[(range.start - start) as usize..(range.end - start) as usize]
    }

    /// The bytes held, and the position reads see of the first.
    fn held(&self) -> (&[u8], u64) {
        match &self.chunked {
            None => (&self.part[..], self.part_pos),
            Some(c) => (&c.window[..], c.window_pos),
        }
    }

    /// Whether the bytes held hold `pos`.
    fn holds(&self, pos: u64) -> bool {
        let (bytes, start) = self.held();
        (start..start + bytes.len() as u64).contains(&pos)
    }

    /// Where reading forward goes on: after the part, or the Aiven range, worked on.
    fn forward(&self) -> u64 {
        match &self.chunked {
            None => self.part_pos + self.part.len() as u64,
            Some(c) => c.piece.as_ref().map_or(0, |p| p.span.end),
        }
    }

    /// Makes the bytes at `pos` (`< len`) held: the part of a range holding them received
    /// or, for an Aiven object, the chunk holding them decoded.
    fn reach(&mut self, pos: u64) -> Result<()> {
        if self.chunked.is_some() {
            return self.reach_chunk(pos);
        }
        while !self.holds(pos) {
            self.range_for(pos)?;
            let path = self.path();
            let f = self.ahead.front_mut().expect("a range holds pos");
            let (at, size) = (f.next(), f.piece.stored.end - f.piece.stored.start);
            let Some(part) = f.read.next_part()? else {
                return Err(changed(path, &f.piece, f.arrived));
            };
            f.arrived += part.len() as u64;
            if f.arrived > size {
                return Err(changed(path, &f.piece, f.arrived));
            }
            self.part = part;
            self.part_pos = at;
        }
        Ok(())
    }

    /// [`RemoteObject::reach`] for an Aiven object: its range taken whole, then the chunk
    /// holding `pos` decoded.
    fn reach_chunk(&mut self, pos: u64) -> Result<()> {
        if self.holds(pos) {
            return Ok(());
        }
        let c = self.chunked.as_ref().expect("chunked");
        if !c.piece.as_ref().is_some_and(|p| p.span.contains(&pos)) {
            self.range_for(pos)?;
            let path = self.path();
            let f = self.ahead.front_mut().expect("a range holds pos");
            let c = self.chunked.as_mut().expect("chunked");
            // The range held is gone, whether the new one arrives or not.
            c.piece = None;
            c.stream = None;
            f.read.wait_into(&mut c.stored)?;
            f.arrived = c.stored.len() as u64;
            if f.arrived != f.piece.stored.end - f.piece.stored.start {
                return Err(changed(path, &f.piece, f.arrived));
            }
            c.piece = Some(f.piece.clone());
        }
        let c = self.chunked.as_mut().expect("chunked");
        c.decode(pos)
            .map_err(|e| Error::decode(&self.store.path_of(&self.key), 0, e))
    }

    /// Makes the first range started the one receiving `pos`: the ranges before it dropped
    /// (what they had still to receive cancelled) and, reading forward into the next, more
    /// started ahead; or, on a jump, those started cancelled and a read started at `pos`.
    fn range_for(&mut self, pos: u64) -> Result<()> {
        while let Some(f) = self.ahead.front() {
            let (span, next) = (f.piece.span.clone(), f.next());
            if span.contains(&pos) && pos >= next {
                return Ok(());
            }
            if pos < span.end {
                break;
            }
            self.ahead.pop_front();
            let ahead_holds = self
                .ahead
                .front()
                .is_some_and(|f| f.piece.span.contains(&pos));
            if ahead_holds || pos == span.end {
                self.read_ahead_from(pos);
            }
        }
        // A jump (or the first read): what was started is not needed.
        let forward = pos == self.forward();
        self.ahead.clear();
        self.start(pos);
        if forward {
            self.read_ahead_from(pos);
        }
        Ok(())
    }

    /// Starts the range holding `pos` (`< len`).
    fn start(&mut self, pos: u64) {
        let piece = self.piece_at(pos);
        let read = self.store.start_read(&self.key, piece.stored.clone());
        self.ahead.push_back(Incoming {
            piece,
            read,
            arrived: 0,
        });
    }

    /// Starts the ranges after those started, up to the one received and `requests` more,
    /// reading forward from `pos`.
    fn read_ahead_from(&mut self, pos: u64) {
        let mut next = self.ahead.back().map_or(pos, |f| f.piece.span.end);
        while self.ahead.len() <= self.read_ahead.requests && next < self.len {
            self.start(next);
            next = self.ahead.back().expect("just started").piece.span.end;
        }
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

/// A range that did not arrive as asked for: the object is not what was listed.
fn changed(path: PathBuf, piece: &Piece, arrived: u64) -> Error {
    Error::invalid(
        &path,
        format!(
            "a read of bytes {}..{} returned {} byte(s): the object changed while read",
            piece.stored.start, piece.stored.end, arrived
        ),
    )
}

impl Chunked {
    /// Decodes the chunk holding `pos` from the stored bytes of the range taken, which holds it:
    /// whole, or the window of a larger compressed chunk that holds `pos`.
    fn decode(&mut self, pos: u64) -> std::result::Result<(), DecodeError> {
        let chunk = self.reader.chunks(pos, 1).next().expect("pos < len");
        let base = self.piece.as_ref().expect("a range taken").stored.start;
        let r = chunk.transformed_range();
        let bytes = &self.stored[(r.start - base) as usize..(r.end - base) as usize];
        // Uncompressed chunks are stored bytes as they are: no larger decoded than stored.
        if chunk.original_size as usize <= WINDOW_BYTES || !self.reader.transform.compression {
            self.stream = None;
            self.window = Vec::new();
            self.window = self.reader.decode_chunk(&chunk, bytes)?;
            self.window_pos = chunk.original_position;
            return Ok(());
        }
        let window = &mut self.window;
        if self
            .stream
            .as_ref()
            .is_some_and(|s| s.chunk().id == chunk.id)
        {
            if pos < self.window_pos {
                // Behind the window: decoded again from the chunk's start.
                self.stream.as_mut().expect("just seen").restart()?;
                window.clear();
                self.window_pos = chunk.original_position;
            }
        } else {
            self.stream = None;
            *window = Vec::new();
            let mut s = self.reader.stream_chunk(&chunk, bytes)?;
            // A first pass decodes the whole chunk, a window's worth at a time dropped, so
            // that one that does not decode is one bad stretch, as a chunk decoded whole is,
            // not good bytes up to where it fails.
            *window = Vec::with_capacity(WINDOW_BYTES);
            self.window_pos = chunk.original_position;
            let checked = loop {
                match fill(&mut s, bytes, window) {
                    Ok(true) => continue,
                    Ok(false) => break Ok(()),
                    Err(e) => break Err(e),
                }
            };
            // Whatever the pass left is no window of the chunk's first bytes.
            window.clear();
            checked?;
            s.restart()?;
            self.stream = Some(s);
        }
        let stream = self.stream.as_mut().expect("just set");
        // Forward: windows decoded on from the last one's end until one holds `pos` (the
        // first pass found the chunk's every byte).
        while self.window_pos + window.len() as u64 <= pos {
            self.window_pos = stream.position();
            fill(stream, bytes, window)?;
        }
        Ok(())
    }
}

/// Decodes `window` anew (cleared first), as far as its capacity or `stream`'s end: false at
/// the end.
fn fill(
    stream: &mut ChunkStream,
    bytes: &[u8],
    window: &mut Vec<u8>,
) -> std::result::Result<bool, DecodeError> {
    window.clear();
    while window.len() < window.capacity() {
        if !stream.read(bytes, window)? {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch::HEADER_SIZE_UP_TO_MAGIC_BYTES;
    use crate::storage::store::recording::store;

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 % 251) as u8).collect()
    }

    /// Reads forward and jumps: every byte is the object's, across parts and ranges, and no
    /// more than a part and the ranges started ahead are ever held.
    #[test]
    fn reads_cross_ranges_and_stay_bounded() {
        let s = store(1000, 2, 170);
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
            assert!(o.part.len() <= 170 && o.ahead.len() <= 3);
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
        let e = RemoteObject::open(s, "a/none.log")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("memory://t/a/none.log") && e.contains("no such object"),
            "{e}"
        );
    }

    /// A read that skips forward into a range started ahead uses it: the range it leaves is
    /// dropped unfinished, and one more is started ahead.
    #[test]
    fn a_skip_forward_uses_the_ranges_started() {
        let s = store(1000, 2, 170);
        let data = data(5000);
        s.put("a", data.clone()).unwrap();
        let mut o = RemoteObject::open(s.clone(), "a").unwrap();
        let mut buf = vec![0u8; 10];
        assert_eq!(o.read_at(&mut buf, 0).unwrap(), 10);
        assert_eq!(o.read_at(&mut buf, 1500).unwrap(), 10);
        assert_eq!(&buf[..], &data[1500..1510]);
        assert_eq!(
            *s.reads.lock().unwrap(),
            [0..1000, 1000..2000, 2000..3000, 3000..4000]
        );
    }

    /// The ranges started ahead stop at the object's end: a small object is one read of its
    /// size, and a read near the end of a larger one asks for no byte past it.
    #[test]
    fn read_ahead_stops_at_the_end() {
        let s = store(1000, 3, 1000);
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
            [0..1000, 1000..2000, 2000..2500]
        );
        // The read skipped into the last range started ahead, and nothing lies past it.
        assert_eq!(large.ahead.len(), 1);
    }

    /// `len` bytes that compress to almost nothing (the shape of a zstd bomb) but say where
    /// they are: zeros, each 4 KiB block opening with its position.
    fn marked(len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        for at in (0..len).step_by(4096) {
            let n = 8.min(len - at);
            out[at..at + n].copy_from_slice(&(at as u64).to_be_bytes()[..n]);
        }
        out
    }

    /// The segment `plain` written as Aiven's plugin does, in chunks of `chunk_size`, each a
    /// zstd frame.
    fn compressed_segment(
        plain: &[u8],
        chunk_size: u32,
    ) -> crate::format::aiven::segment::SegmentObjects {
        use crate::format::aiven::segment::write_segment;
        use crate::format::aiven::{SegmentFiles, WriteOptions};
        let files = SegmentFiles {
            log: plain,
            offset_index: &[],
            time_index: &[],
            producer_snapshot: &[],
            leader_epoch: &[],
            transaction: None,
        };
        let options = WriteOptions {
            chunk_size,
            compression: true,
            encryption: None,
        };
        write_segment(&files, &options, None, &mut rsa::rand_core::OsRng).unwrap()
    }

    /// An Aiven segment of `plain` in compressed chunks of `chunk_size`, its manifest saying
    /// `claimed` original bytes in chunks of `claimed_chunk` (as written when they are the
    /// same): the reader and the `.log` object.
    fn chunked_segment(
        plain: &[u8],
        chunk_size: u32,
        claimed: u32,
        claimed_chunk: u32,
    ) -> (Arc<SegmentReader>, Vec<u8>) {
        use crate::format::aiven::{ChunkIndex, KeyRing};
        let mut objects = compressed_segment(plain, chunk_size);
        let index = &objects.manifest.chunk_index;
        let sizes = (0..index.chunk_count())
            .map(|c| index.chunk(c).transformed_size)
            .collect();
        objects.manifest.chunk_index = ChunkIndex::variable(claimed_chunk, claimed, sizes).unwrap();
        let reader = SegmentReader::open(objects.manifest, &KeyRing::default()).unwrap();
        (Arc::new(reader), objects.log)
    }

    /// Chunks that decode to more than [`WINDOW_BYTES`] (here 24 MiB each, a few KiB stored) are
    /// read through a window of at most that many bytes, forward, back, and across windows and
    /// chunks: every byte is the segment's, what is lent too, and no more is ever held decoded.
    #[test]
    fn chunks_larger_than_the_window_are_read_through_it() {
        let (chunk_size, len) = (24 << 20, (64 << 20) + 12345);
        let plain = marked(len);
        let (reader, log) = chunked_segment(&plain, chunk_size, len as u32, chunk_size);
        assert!(log.len() < len / 1000, "{} byte(s) stored", log.len());
        let s = store(1 << 20, 2, 1 << 20);
        s.put("t/0.log", log).unwrap();
        let mut o = RemoteObject::open_chunked(s, "t/0.log", reader).unwrap();
        let held = |o: &RemoteObject| {
            let c = o.chunked.as_ref().unwrap();
            assert!(c.window.len() <= c.window.capacity());
            c.window.capacity()
        };
        let mut buf = vec![0u8; (3 << 20) + 7];
        let mut pos = 0;
        while pos < len {
            let n = o.read_at(&mut buf, pos as u64).unwrap();
            assert!(n > 0);
            assert!(buf[..n] == plain[pos..pos + n], "at {pos}");
            assert!(held(&o) <= WINDOW_BYTES, "{} held at {pos}", held(&o));
            pos += n;
        }
        // Behind the window nothing is lent, and nothing is decoded again to find that out.
        let window_pos = o.chunked.as_ref().unwrap().window_pos;
        assert_eq!(window_pos, 64 << 20);
        assert!(!o.lend(window_pos - 5..window_pos + 5).unwrap());
        assert_eq!(o.chunked.as_ref().unwrap().window_pos, window_pos);
        // Back within a chunk, back into one before, forward past windows, and reads across
        // the end of a window (copied, not lent).
        let w = WINDOW_BYTES;
        for at in [
            (40 << 20) + 5,
            3,
            w - 2,
            2 * w + 9,
            (30 << 20) + 1,
            w + 100,
            len - 10,
        ] {
            let n = o.read_at(&mut buf, at as u64).unwrap();
            assert!(n > 0);
            assert!(buf[..n] == plain[at..at + n], "at {at}");
            assert!(held(&o) <= WINDOW_BYTES, "{} held at {at}", held(&o));
            let upto = (at as u64 + 1000).min(len as u64);
            if o.lend(at as u64..upto).unwrap() {
                assert!(
                    o.lent(at as u64..upto) == &plain[at..upto as usize],
                    "at {at}"
                );
            } else {
                // Only a range that runs past the window is not lent.
                let c = o.chunked.as_ref().unwrap();
                assert!(upto > c.window_pos + c.window.len() as u64, "at {at}");
            }
        }
        let mut at = (w as u64) - 3;
        assert!(!o.lend(at..at + 10).unwrap());
        let mut got = Vec::new();
        while got.len() < 10 {
            let n = o.read_at(&mut buf[..10 - got.len()], at).unwrap();
            got.extend_from_slice(&buf[..n]);
            at += n as u64;
        }
        assert!(got == plain[w - 3..w + 7]);
    }

    /// A chunk larger than the window that does not decode to what its index says fails at
    /// its first byte read, with the error a decode of it whole gives: no byte of it is served.
    #[test]
    fn a_chunk_larger_than_the_window_is_checked_whole_first() {
        let len = 3 * WINDOW_BYTES + 5;
        let plain = marked(len);
        for claimed in [len - 1, len + 1] {
            let (reader, log) = chunked_segment(&plain, len as u32, claimed as u32, claimed as u32);
            let chunk = reader.chunks(0, 1).next().unwrap();
            let whole = reader.decode_chunk(&chunk, &log).unwrap_err();
            let s = store(1 << 20, 2, 1 << 20);
            s.put("t/0.log", log).unwrap();
            let mut o = RemoteObject::open_chunked(s, "t/0.log", reader).unwrap();
            let e = o.read_at(&mut [0u8; 10], 0).unwrap_err();
            let path = o.path();
            assert_eq!(e.to_string(), Error::decode(&path, 0, whole).to_string());
            assert_eq!(o.decoded_with(5), 0..claimed as u64);
        }
        // A chunk that fails its check leaves nothing of it held as the bytes of the chunk
        // read before it.
        let chunk = 3 * WINDOW_BYTES;
        let plain = marked(2 * chunk);
        let claimed = (2 * chunk - 1) as u32;
        let (reader, log) = chunked_segment(&plain, chunk as u32, claimed, chunk as u32);
        let s = store(1 << 20, 2, 1 << 20);
        s.put("t/0.log", log).unwrap();
        let mut o = RemoteObject::open_chunked(s, "t/0.log", reader).unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(o.read_at(&mut buf, 5).unwrap(), 16);
        o.read_at(&mut buf, chunk as u64).unwrap_err();
        assert_eq!(o.read_at(&mut buf, 5).unwrap(), 16);
        assert_eq!(buf, plain[5..21]);
    }

    /// A log of 40 batches of 1 to 7 records.
    fn batches() -> Vec<u8> {
        use crate::format::batch::{build_batch, BatchSpec, RecordSpec};
        (0..40)
            .flat_map(|b| {
                let records: Vec<RecordSpec> = (0..(b % 7 + 1))
                    .map(|i| RecordSpec {
                        offset: b * 10 + i,
                        timestamp: 1000 + b,
                        key: None,
                        value: Some(vec![b as u8; 50 + 30 * i as usize]),
                        headers: vec![],
                    })
                    .collect();
                let spec = BatchSpec {
                    base_offset: b * 10,
                    ..Default::default()
                };
                build_batch(&spec, &records).unwrap()
            })
            .collect()
    }

    /// A log read through a remote object in small, odd parts walks the same entries, with
    /// the same checksums, as the file: entries inside a part are lent, those across parts
    /// and ranges copied.
    #[test]
    fn a_log_read_in_parts_is_the_file() {
        use crate::storage::log_reader::{LogReader, Step};
        let log = batches();
        let walk = |mut r: LogReader| {
            let mut out = Vec::new();
            loop {
                match r.next_step().unwrap() {
                    Step::Entry { position, entry } => {
                        assert!(entry.crc_is_valid());
                        out.push((position, entry.last_offset()));
                    }
                    Step::End { trailing: 0, .. } => return (out, r.bytes_read()),
                    other => panic!("{other:?}"),
                }
            }
        };
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, &log).unwrap();
        let (entries, _) = walk(LogReader::open(file.path(), None).unwrap());
        assert_eq!(entries.len(), 40);
        for (chunk, part) in [(4096, 97), (1000, 1000), (700, 333), (1 << 20, 1 << 20)] {
            let s = store(chunk, 2, part);
            s.put("t/0.log", log.clone()).unwrap();
            let object = RemoteObject::open(s.clone(), "t/0.log").unwrap();
            let (got, read) = walk(LogReader::open_object(object, None));
            assert_eq!(got, entries, "ranges of {chunk}, parts of {part}");
            assert_eq!(read, log.len() as u64, "ranges of {chunk}, parts of {part}");
            // Each byte fetched once: an entry that starts in a part read past is copied, not
            // fetched again.
            let ranges: Vec<Range<u64>> = (0..log.len() as u64)
                .step_by(chunk as usize)
                .map(|a| a..(a + chunk).min(log.len() as u64))
                .collect();
            assert_eq!(
                *s.reads.lock().unwrap(),
                ranges,
                "ranges of {chunk}, parts of {part}"
            );
        }
    }

    /// Aiven chunks that do not decode (their zstd frames damaged) are each a bad entry where
    /// the first batch that reaches into them starts, running to the next valid batch after
    /// them, where reading resumes (or to the segment's end): every other batch is read,
    /// whatever the ranges and parts, and a resync from inside the damage lands where the walk
    /// resumed.
    #[test]
    fn undecodable_chunks_are_bad_entries_that_reading_resumes_after() {
        use crate::format::aiven::KeyRing;
        use crate::storage::log_reader::{LogReader, Step};
        let log = batches();
        // 7 and 8 side by side: one bad entry, both named.
        let (objects, damaged, holes) =
            damaged_segment(&log, 500, |c, last| [7, 8, 20, last].contains(&c));
        let expected = walk_model(&log, &holes, log.len() as u64);
        assert_eq!(expected.iter().filter(|e| e.2.is_some()).count(), 3);
        let (first_bad, first_resume) = {
            let k = expected.iter().position(|e| e.2.is_some()).unwrap();
            (expected[k].0, expected[k + 1].0)
        };
        let reader = Arc::new(SegmentReader::open(objects.manifest, &KeyRing::default()).unwrap());
        for (chunk, part) in [(1 << 20, 1 << 20), (1000, 97), (1600, 333)] {
            let s = store(chunk, 2, part);
            s.put("t/0.log", objects.log.clone()).unwrap();
            let object = RemoteObject::open_chunked(s.clone(), "t/0.log", Arc::clone(&reader));
            let mut r = LogReader::open_object(object.unwrap(), None);
            let what = format!("ranges of {chunk}, parts of {part}");
            // A look further on (as index checks take) that meets a damaged chunk first.
            assert_eq!(r.header_at(holes[1].start + 10).unwrap(), None, "{what}");
            let mut got = Vec::new();
            loop {
                match r.next_step().unwrap() {
                    Step::Entry { position, entry } => {
                        got.push((position, entry.size_in_bytes() as u64, None))
                    }
                    Step::BadEntry {
                        position,
                        len,
                        error,
                    } => {
                        let first = holes
                            .iter()
                            .position(|h| h.start == error.pos as u64)
                            .unwrap();
                        assert!(
                            error.message.contains(&format!("chunk {}", damaged[first])),
                            "{what}: {}",
                            error.message
                        );
                        // Every damaged stretch the entry runs over is named, side by side
                        // ones as one, and none before it.
                        let named: Vec<Range<u64>> = error.message
                            [error.message.find("bytes ").unwrap() + 6..]
                            .split(" cannot")
                            .next()
                            .unwrap()
                            .split(", ")
                            .map(|r| {
                                let (a, b) = r.split_once("..").unwrap();
                                a.parse().unwrap()..b.parse().unwrap()
                            })
                            .collect();
                        let over: Vec<&Range<u64>> = holes
                            .iter()
                            .filter(|h| h.end > position && h.start < position + len)
                            .collect();
                        let covered = |h: &Range<u64>| {
                            named.iter().any(|n| n.start <= h.start && h.end <= n.end)
                        };
                        assert!(over.iter().all(|h| covered(h)), "{what}: {}", error.message);
                        let bytes: u64 = named.iter().map(|n| n.end - n.start).sum();
                        let held: u64 = over.iter().map(|h| h.end - h.start).sum();
                        assert_eq!(bytes, held, "{what}: {}", error.message);
                        got.push((position, len, Some(error.pos as u64)));
                    }
                    Step::End { trailing: 0, .. } => break,
                    other => panic!("{what}: {other:?}"),
                }
            }
            assert_eq!(got, expected, "{what}");
            assert_eq!(
                r.resync(first_bad + 1).unwrap(),
                Some(first_resume),
                "{what}"
            );
            // Cut by `--max-bytes` inside the damage (the second of the two side by side, so
            // that the batch reaching into the first is whole within the cut): the bad entry
            // ends at the cut.
            let object = RemoteObject::open_chunked(s, "t/0.log", Arc::clone(&reader));
            let cut = holes[1].start + 100;
            let mut r = LogReader::open_object(object.unwrap(), Some(cut));
            let last = loop {
                match r.next_step().unwrap() {
                    Step::Entry { .. } => {}
                    Step::BadEntry { position, len, .. } => break position + len,
                    other => panic!("{what}: {other:?}"),
                }
            };
            assert_eq!((last, r.position()), (cut, cut), "{what}");
        }
    }

    /// The segment `log` written as Aiven's plugin does in chunks of `chunk_size` (each a zstd
    /// frame), those `damaged(chunk, last chunk)` picks with their frame's first byte flipped:
    /// the objects, the chunks damaged, and their bytes in the segment.
    fn damaged_segment(
        log: &[u8],
        chunk_size: u32,
        damaged: impl Fn(usize, usize) -> bool,
    ) -> (
        crate::format::aiven::segment::SegmentObjects,
        Vec<usize>,
        Vec<Range<u64>>,
    ) {
        let mut objects = compressed_segment(log, chunk_size);
        let index = &objects.manifest.chunk_index;
        let last = index.chunk_count() - 1;
        let chunks: Vec<usize> = (0..=last).filter(|&c| damaged(c, last)).collect();
        let holes = chunks
            .iter()
            .map(|&c| index.chunk(c).original_range())
            .collect();
        for &c in &chunks {
            let at = index.chunk(c).transformed_position as usize;
            objects.log[at] ^= 0xff;
        }
        (objects, chunks, holes)
    }

    /// What a walk of `log` through an object whose bytes `holes` cannot be decoded, read up
    /// to `end`, gives, going on after each bad entry: (position, length, the first damaged
    /// byte of a bad entry). A batch that reaches into damage (only its header counts when the
    /// end cuts it) starts a bad entry that runs to the next whole batch no damage reaches
    /// into, or to the end; a batch the end cuts, with no damage in its header, ends the walk.
    fn walk_model(log: &[u8], holes: &[Range<u64>], end: u64) -> Vec<(u64, u64, Option<u64>)> {
        use crate::storage::log_reader::{LogReader, Step};
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, log).unwrap();
        let mut local = LogReader::open(file.path(), None).unwrap();
        let mut whole = Vec::new();
        while let Step::Entry { position, entry } = local.next_step().unwrap() {
            whole.push(position..position + entry.size_in_bytes() as u64);
        }
        // The damage a walk meets in `b` reading up to `upto` (never past the end).
        let met = |b: &Range<u64>, upto: u64| {
            let upto = upto.min(end);
            holes
                .iter()
                .find(|h| h.start < upto && h.end > b.start)
                .cloned()
        };
        // What a step reads first: the bytes up to the magic, and it.
        let header = |b: &Range<u64>| b.start + HEADER_SIZE_UP_TO_MAGIC_BYTES as u64 + 1;
        let mut expected = Vec::new();
        let mut i = 0;
        while i < whole.len() && whole[i].start < end {
            let b = &whole[i];
            let cut_by_end = b.end > end;
            match met(b, if cut_by_end { header(b) } else { b.end }) {
                None if cut_by_end => break,
                None => {
                    expected.push((b.start, b.end - b.start, None));
                    i += 1;
                }
                Some(h) => {
                    let resume = whole
                        .iter()
                        .position(|w| w.start >= h.end && w.end <= end && met(w, w.end).is_none());
                    let to = resume.map_or(end, |r| whole[r].start);
                    expected.push((b.start, to - b.start, Some(h.start.max(b.start))));
                    i = resume.unwrap_or(whole.len());
                }
            }
        }
        expected
    }

    /// Damage anywhere (each chunk of a random size damaged at random), read through ranges
    /// and parts of any size, with or without a cut (`--max-bytes`): a walk that goes on after
    /// each bad entry, as `stats` does, and one that resyncs after each, as `dump` does, both
    /// give the model's steps, their positions only growing, and end.
    #[test]
    fn damage_anywhere_is_walked_past_by_either_kind_of_walk() {
        use crate::format::aiven::KeyRing;
        use crate::storage::log_reader::{LogReader, Step};
        let log = batches();
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut random = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for round in 0..60 {
            let chunk_size = [300, 500, 1000, 4000][random(4) as usize];
            let picks: Vec<bool> = (0..log.len() / 300 + 1).map(|_| random(5) == 0).collect();
            let (objects, _, holes) = damaged_segment(&log, chunk_size, |c, _| picks[c]);
            let cut = (random(3) == 0).then(|| random(log.len() as u64 + 1));
            let end = cut.unwrap_or(log.len() as u64);
            let model = walk_model(&log, &holes, end);
            let reader =
                Arc::new(SegmentReader::open(objects.manifest, &KeyRing::default()).unwrap());
            let (chunk, part) =
                [(1 << 20, 1 << 20), (1000, 97), (1600, 333), (700, 50)][random(4) as usize];
            let what = format!("round {round}: chunks of {chunk_size}, holes {holes:?}, cut {cut:?}, ranges of {chunk}, parts of {part}");
            let mut walks = Vec::new();
            for resyncs in [false, true] {
                let s = store(chunk, 2, part);
                s.put("t/0.log", objects.log.clone()).unwrap();
                let object = RemoteObject::open_chunked(s, "t/0.log", Arc::clone(&reader));
                let mut r = LogReader::open_object(object.unwrap(), cut);
                let mut steps = Vec::new();
                let mut last = None;
                loop {
                    assert!(steps.len() < 1000, "{what}: no end");
                    let step = r.next_step().unwrap();
                    let at = match step {
                        Step::Entry { position, entry } => {
                            steps.push((position, entry.size_in_bytes() as u64, None));
                            position
                        }
                        Step::BadEntry {
                            position,
                            len,
                            error,
                        } => {
                            assert!(position + len <= end, "{what}: {position}+{len}");
                            steps.push((position, len, Some(error.pos as u64)));
                            if resyncs {
                                r.resync(position + 1).unwrap();
                            }
                            position
                        }
                        Step::End { .. } => break,
                        other => panic!("{what}: {other:?}"),
                    };
                    assert!(last.is_none_or(|l| at > l), "{what}: back to {at}");
                    last = Some(at);
                }
                walks.push(steps);
            }
            assert_eq!(walks[0], model, "{what}");
            assert_eq!(walks[1], model, "{what}");
        }
    }
}
