//! Streaming reader of one `.log` file (or KRaft `.checkpoint`), with Kafka's file-reader
//! rules (formats.md §2) and resynchronisation after damage.
//!
//! Reads go through one reused buffer with plain `read` calls rather than a memory map. A map
//! measured somewhat faster for a bare CRC pass (`benches/throughput.rs`), but decoding, not
//! reading, bounds every real walk, and a mapped file that another process truncates turns
//! into SIGBUS, while a short `read` is just an error we can report. Memory stays flat: the
//! buffer holds one read chunk or one entry, whichever is larger.

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::batch::{
    HEADER_SIZE_UP_TO_MAGIC_BYTES, LOG_OVERHEAD_BYTES, MIN_ENTRY_SIZE_FIELD,
};
use crate::format::entry::{
    frame_at, peek_header, Entry, EntryHeader, Frame, StreamedCrc, PEEK_HEADER_BYTES,
};
use crate::format::DecodeError;

/// Bytes read from the file per call when scanning sequentially: enough to make the system calls
/// a small part of a walk, small enough that the walks `verify` runs in parallel keep little
/// resident (a megabyte each made its peak RSS grow with the segments' size).
pub const READ_CHUNK_BYTES: usize = 128 << 10;
/// Bytes read per call when jumping between positions (index checks): enough for a typical
/// batch, without reading a megabyte for every entry.
pub const RANDOM_READ_CHUNK_BYTES: usize = 64 << 10;
/// Largest entry the reader will load; a bigger size field is reported, not allocated.
pub const DEFAULT_MAX_ENTRY_BYTES: u64 = 256 << 20;
/// Smallest v2 length field a plausible batch has (61-byte header − 12).
const MIN_V2_SIZE_FIELD: i32 = 49;

/// What the reader found at its position.
#[derive(Debug)]
pub enum Step<'r> {
    Entry {
        position: u64,
        entry: Entry<'r>,
    },
    /// The framing holds but the entry's layout does not (e.g. a v2 batch smaller than its
    /// header, a legacy message with a negative magic); or the entry reaches into bytes of a
    /// remote object that cannot be decoded, and `len` runs to the next valid batch after them
    /// (or the end). `error.pos` is absolute.
    BadEntry {
        position: u64,
        len: u64,
        error: DecodeError,
    },
    /// A size field below 14 (a zero-filled tail, or garbage): Kafka's CorruptRecordException.
    SizeTooSmall {
        position: u64,
        size: i32,
    },
    /// A whole entry larger than [`STREAMED_CHECKSUM_ABOVE_BYTES`] whose checksum, computed
    /// as its bytes streamed by, does not hold (or whose magic has no checksum layout, then
    /// `stored` and `computed` are None): judged without loading it, as the broker's load
    /// would reject it.
    BadCrc {
        position: u64,
        len: u64,
        stored: Option<u32>,
        computed: Option<u32>,
    },
    /// A size field larger than the reader accepts, of an entry whose checksum holds.
    TooLarge {
        position: u64,
        len: u64,
    },
    /// Nothing more: `trailing` bytes follow `position` (17 or fewer, or an entry that does
    /// not fit, whose announced length is `truncated_len`).
    End {
        position: u64,
        trailing: u64,
        truncated_len: Option<u64>,
    },
}

impl Step<'_> {
    /// Where and why reading cannot go on here, in words: None for a whole entry whose
    /// checksum holds and for the clean end of the file.
    pub fn damage(&self) -> Option<(u64, String)> {
        let (position, why) = match self {
            Step::Entry { entry, .. } if entry.crc_is_valid() => return None,
            Step::End { trailing: 0, .. } => return None,
            Step::Entry { position, entry } => (
                position,
                format!(
                    "stored CRC {} does not match the computed {}",
                    entry.stored_crc(),
                    entry.compute_crc()
                ),
            ),
            Step::BadEntry {
                position, error, ..
            } => (
                position,
                format!("{} (at byte {})", error.message, error.pos),
            ),
            Step::SizeTooSmall { position, size } => (
                position,
                format!("record size {size} smaller than minimum record overhead (14)"),
            ),
            Step::BadCrc { position, .. } => (position, self.bad_crc().expect("a bad CRC")),
            Step::TooLarge { position, len } => (
                position,
                format!("entry of {len} bytes is larger than the reader accepts"),
            ),
            Step::End {
                position,
                trailing,
                truncated_len,
            } => (
                position,
                format!("torn write: {}", torn_tail(*trailing, *truncated_len)),
            ),
        };
        Some((*position, why))
    }
}

impl Step<'_> {
    /// For [`Step::BadCrc`], why the entry is invalid, in the words a loaded entry's bad
    /// checksum is reported with.
    pub fn bad_crc(&self) -> Option<String> {
        let Step::BadCrc {
            len,
            stored,
            computed,
            ..
        } = self
        else {
            return None;
        };
        Some(match (stored, computed) {
            (Some(s), Some(c)) => format!("stored CRC {s} does not match the computed {c}"),
            _ => format!("an entry of {len} bytes with an unknown magic"),
        })
    }
}

/// Entries larger than this are checked by a checksum computed as their bytes stream by before
/// they are loaded, so no declared length costs more memory than this unless its bytes check
/// out. The price is reading such an entry twice (streamed, then loaded), so it lies above the
/// batches brokers write: Kafka's default limit is 1 MiB + 12 bytes (`message.max.bytes`), and
/// at 1 MiB a partition of such batches was read twice over.
pub const STREAMED_CHECKSUM_ABOVE_BYTES: u64 = 8 << 20;

/// What the `trailing` bytes after the last whole entry are, for a message: a torn entry
/// that announced `truncated_len` bytes, or too few bytes for an entry header.
pub fn torn_tail(trailing: u64, truncated_len: Option<u64>) -> String {
    match truncated_len {
        Some(len) => format!("the entry there announces {len} bytes but only {trailing} remain"),
        None => format!("{trailing} trailing byte(s), too few for an entry header"),
    }
}

/// Where a reader's bytes come from: a local file, or an object of a remote store (a tiered
/// segment), read the same way.
enum Source {
    File(File),
    Object(Box<super::store::RemoteObject>),
    /// A remote segment whose objects say how to decode it in a way that does not hold (an
    /// Aiven manifest that is no manifest, or that does not fit its `.log` object): no bytes,
    /// the reader's first step the bad entry that says why.
    Undecodable,
}

impl Source {
    /// Bytes at `pos` into `buf`: how many (0 at the end).
    fn read_at(&mut self, path: &Path, buf: &mut [u8], pos: u64) -> Result<usize> {
        use std::os::unix::fs::FileExt;
        match self {
            Source::File(f) => loop {
                match f.read_at(buf, pos) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    r => return r.map_err(|e| Error::io(path, e)),
                }
            },
            Source::Object(o) => o.read_at(buf, pos),
            Source::Undecodable => Ok(0),
        }
    }
}

pub struct LogReader {
    path: PathBuf,
    src: Source,
    /// Where reading stops: the file size, or less with `--max-bytes`.
    end: u64,
    file_len: u64,
    buf: Vec<u8>,
    /// Bytes of `buf` holding file data; the file cursor is at `buf_pos + valid`.
    valid: usize,
    /// File position of `buf[0]`.
    buf_pos: u64,
    pos: u64,
    max_entry_bytes: u64,
    read_chunk: usize,
    /// What `read_chunk` may double up to after each read (itself: no growth).
    max_read_chunk: usize,
    /// Bytes read from the file so far: what a seek's cost is measured in.
    bytes_read: u64,
    /// The bytes of a remote object handed over last (lent or copied): a walk asks for an
    /// entry's header, then the whole entry, and its bytes count as read once.
    handed: Range<u64>,
    /// The bytes of a remote object found undecodable (an Aiven chunk whose GCM tag or zstd
    /// frame is damaged), by position: reads end short where one starts, the step that
    /// reaches into one reports it as a bad entry, as damage in a local file is, rather than
    /// failing the whole command, and reading resumes at the next valid batch after it, as a
    /// fetch from there would be served.
    holes: Vec<Undecodable>,
}

struct Undecodable {
    /// The segment's bytes that cannot be decoded.
    span: Range<u64>,
    kind: crate::format::ErrorKind,
    /// The object's error, its byte position in the object included.
    message: String,
}

impl Undecodable {
    fn message(message: &str, position: u64) -> String {
        format!("{message} (byte {position} of the object)")
    }
}

/// Bytes [`LogReader::fill`] made ready: lent by the remote object, or in the buffer.
enum Held {
    Lent(Range<u64>),
    Buffered(Range<usize>),
}

impl LogReader {
    /// Opens the file `path`, or the remote segment shown as it ([`super::tiered::shown_as`]).
    pub fn open(path: &Path, max_bytes: Option<u64>) -> Result<Self> {
        if let Some(remote) = super::tiered::shown_as(path) {
            return remote.open(max_bytes);
        }
        let (file, len) = super::files::open_data(path)?;
        Ok(Self::over(
            path.to_path_buf(),
            Source::File(file),
            len,
            max_bytes,
        ))
    }

    /// A reader of a remote segment object; messages name it by its URL.
    pub fn open_object(object: super::store::RemoteObject, max_bytes: Option<u64>) -> Self {
        let len = object.len();
        Self::over(
            object.path(),
            Source::Object(Box::new(object)),
            len,
            max_bytes,
        )
    }

    /// A reader of a remote segment of `len` bytes that cannot be decoded, for the reason
    /// `e` gives ([`Error::Decode`] of the object named): its first step is a bad entry that
    /// says so. Any other error is returned.
    pub fn undecodable(e: Error, len: u64) -> Result<Self> {
        let Error::Decode {
            path,
            position,
            message,
            kind,
        } = e
        else {
            return Err(e);
        };
        let mut reader = Self::over(path, Source::Undecodable, len, None);
        // Known before any read (and whatever the object's size, 0 included): no read reaches
        // the source, which holds nothing.
        reader.holes.push(Undecodable {
            span: 0..len,
            kind,
            message: Undecodable::message(&message, position),
        });
        Ok(reader)
    }

    fn over(path: PathBuf, src: Source, len: u64, max_bytes: Option<u64>) -> Self {
        LogReader {
            path,
            src,
            end: max_bytes.map_or(len, |m| m.min(len)),
            file_len: len,
            buf: Vec::new(),
            valid: 0,
            buf_pos: 0,
            pos: 0,
            max_entry_bytes: DEFAULT_MAX_ENTRY_BYTES,
            read_chunk: READ_CHUNK_BYTES,
            max_read_chunk: READ_CHUNK_BYTES,
            bytes_read: 0,
            handed: 0..0,
            holes: Vec::new(),
        }
    }

    /// Stops reading after `max_bytes` (`--max-bytes`), when given.
    pub fn limited(mut self, max_bytes: Option<u64>) -> Self {
        if let Some(m) = max_bytes {
            self.end = self.end.min(m);
        }
        self
    }

    pub fn with_max_entry_bytes(mut self, n: u64) -> Self {
        self.max_entry_bytes = n;
        self
    }

    /// Reads in small chunks: for callers that seek from entry to entry.
    pub fn for_random_access(self) -> Self {
        self.with_read_chunk(RANDOM_READ_CHUNK_BYTES)
    }

    /// Reads at least `n` bytes per call (more when an entry needs it).
    pub fn with_read_chunk(mut self, n: usize) -> Self {
        self.read_chunk = n.max(1);
        self.max_read_chunk = self.read_chunk;
        self
    }

    /// Reads `n` bytes first, then twice as many each read up to [`READ_CHUNK_BYTES`]: a walk
    /// from a seek that may stop after one batch, or go on for gigabytes.
    pub fn with_growing_read_chunk(mut self, n: usize) -> Self {
        self.read_chunk = n.max(1);
        self.max_read_chunk = READ_CHUNK_BYTES.max(self.read_chunk);
        self
    }

    /// Bytes read from the file so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn position(&self) -> u64 {
        self.pos
    }

    pub fn end(&self) -> u64 {
        self.end
    }

    /// Whether the segment could not be opened for decoding ([`LogReader::undecodable`]).
    pub fn is_undecodable(&self) -> bool {
        matches!(self.src, Source::Undecodable)
    }

    /// The segment's size in bytes, decoded; None when it could not be opened for decoding
    /// (then [`LogReader::end`] is what is stored, not the segment's).
    pub fn decoded_size(&self) -> Option<u64> {
        (!self.is_undecodable()).then_some(self.end)
    }

    /// Whether reading stops before the end of the file (a `--max-bytes` limit).
    pub fn is_limited(&self) -> bool {
        self.end < self.file_len
    }

    /// Moves to `pos` (e.g. an index entry's position, or past damage).
    pub fn seek(&mut self, pos: u64) {
        self.pos = pos.min(self.end);
    }

    /// The file bytes `[pos, pos + n)`, or up to `end`: lent by a remote object when it holds
    /// them in one piece, else read into `buf`. The buffer only grows; bytes still needed move
    /// to its front, and reads go straight into the space after them (no zero-filling per read).
    fn fill(&mut self, pos: u64, n: u64) -> Result<&[u8]> {
        let held = self.prepare(pos, n)?;
        Ok(self.held(held))
    }

    /// The bytes [`LogReader::prepare`] made ready.
    fn held(&self, held: Held) -> &[u8] {
        match (held, &self.src) {
            (Held::Lent(range), Source::Object(o)) => o.lent(range),
            (Held::Lent(_), _) => unreachable!("only a remote object lends"),
            (Held::Buffered(range), _) => &self.buf[range],
        }
    }

    /// [`LogReader::fill`]'s work, the bytes left where they are: so that a caller can look at
    /// what else the read found (an undecodable object) before it borrows them.
    fn prepare(&mut self, pos: u64, n: u64) -> Result<Held> {
        let want_end = pos.saturating_add(n).min(self.readable_end(pos));
        // Bytes the buffer holds already (a resync's candidates) are not asked for again.
        let buffered = pos >= self.buf_pos && want_end <= self.buf_pos + self.valid as u64;
        if pos < want_end && !buffered && self.lends(pos..want_end)? {
            return Ok(Held::Lent(pos..want_end));
        }
        // A lend that met undecodable bytes ended reading there.
        let want_end = want_end.min(self.readable_end(pos));
        let have_end = self.buf_pos + self.valid as u64;
        if pos < self.buf_pos || pos > have_end {
            self.valid = 0;
            self.buf_pos = pos;
        } else if want_end > have_end && pos > self.buf_pos {
            let shift = (pos - self.buf_pos) as usize;
            self.buf.copy_within(shift..self.valid, 0);
            self.valid -= shift;
            self.buf_pos = pos;
        }
        let mut have_end = self.buf_pos + self.valid as u64;
        // A remote object holds what it fetched: from it, only the bytes wanted are copied.
        let read_chunk = match self.src {
            Source::File(_) => self.read_chunk as u64,
            Source::Object(_) | Source::Undecodable => 0,
        };
        while have_end < want_end {
            let chunk = read_chunk.max(want_end - have_end).min(self.end - have_end) as usize;
            if self.buf.len() < self.valid + chunk {
                self.buf.resize(self.valid + chunk, 0);
            }
            let read = self.src.read_at(
                &self.path,
                &mut self.buf[self.valid..self.valid + chunk],
                have_end,
            );
            let got = match read {
                Ok(got) => got,
                Err(e) => {
                    self.note_undecodable(have_end, e)?;
                    break;
                }
            };
            if got == 0 {
                // The file shrank under us (a broker truncating it): behave as if it ended
                // here, and say so once the command is done.
                self.end = have_end;
                super::live::note_changed(&self.path);
                break;
            }
            self.valid += got;
            self.count(have_end..have_end + got as u64);
            self.read_chunk = (self.read_chunk * 2).min(self.max_read_chunk);
            have_end += got as u64;
        }
        // Past a shrunken end, `pos` can lie beyond what was read (and beyond `end`): an empty
        // slice then.
        let stop = want_end.min(have_end).saturating_sub(self.buf_pos) as usize;
        let start = ((pos - self.buf_pos) as usize).min(stop);
        Ok(Held::Buffered(start..stop))
    }

    /// Where reading from `pos` stops: the end, or the start of the first undecodable bytes
    /// after `pos` (`pos` itself inside them).
    fn readable_end(&self, pos: u64) -> u64 {
        self.holes
            .get(self.holes_ending_by(pos))
            .map_or(self.end, |h| h.span.start.max(pos).min(self.end))
    }

    /// The undecodable bytes `pos` lies in, if any.
    fn hole_at(&self, pos: u64) -> Option<&Undecodable> {
        self.holes
            .get(self.holes_ending_by(pos))
            .filter(|h| h.span.contains(&pos))
    }

    /// How many of the undecodable stretches end at or before `pos`. They are chunks, apart
    /// and in order, so their ends are in order too: a search, not a scan (a manifest may cut
    /// a segment into a chunk per byte, every one of them damaged).
    fn holes_ending_by(&self, pos: u64) -> usize {
        self.holes.partition_point(|h| h.span.end <= pos)
    }

    /// Notes the bytes at `at` as undecodable (their whole Aiven chunk) when `e` says so;
    /// returns any other error.
    fn note_undecodable(&mut self, at: u64, e: Error) -> Result<()> {
        match (&self.src, e) {
            (
                Source::Object(o),
                Error::Decode {
                    position,
                    message,
                    kind,
                    ..
                },
            ) => {
                let span = o.decoded_with(at);
                let i = self.holes.partition_point(|h| h.span.start < span.start);
                if self.holes.get(i).is_none_or(|h| h.span != span) {
                    let message = Undecodable::message(&message, position);
                    self.holes.insert(
                        i,
                        Undecodable {
                            span,
                            kind,
                            message,
                        },
                    );
                }
                Ok(())
            }
            (_, e) => Err(e),
        }
    }

    /// The step at `position` when the `needed` bytes from there reach bytes found
    /// undecodable (by this read, or an earlier one that looked further on): a bad entry that
    /// runs to the next valid batch after them, where reading resumes (or to the end).
    fn undecodable_step(&mut self, position: u64, needed: u64) -> Result<Option<Step<'static>>> {
        let reach = position.saturating_add(needed);
        // From the first stretch that ends at `position` or later (an empty one there
        // included), up to those that start past what is needed.
        let first = self.holes.partition_point(|h| h.span.end < position);
        let Some(i) = self.holes[first..]
            .iter()
            .take_while(|h| h.span.start <= reach)
            .position(|h| {
                if h.span.is_empty() {
                    // A segment of no bytes that cannot be decoded, reported once.
                    h.span.start == position
                } else {
                    // At the end (a cut inside the damage) the walk is over.
                    position < self.end && h.span.start < reach && h.span.end > position
                }
            })
            .map(|j| first + j)
        else {
            return Ok(None);
        };
        let (span, kind, first) = {
            let h = &self.holes[i];
            (h.span.clone(), h.kind, h.message.clone())
        };
        if span.is_empty() {
            self.holes.remove(i);
        }
        let resumed = self.resync(span.end)?;
        // Past the undecodable bytes (within the end: `--max-bytes` may cut them).
        self.pos = resumed.unwrap_or(self.end).max(span.end.min(self.end));
        // Every stretch the resync went past with no valid batch between is this entry's,
        // side by side ones as one.
        let mut spans: Vec<Range<u64>> = vec![span.clone()];
        for h in self.holes[i..].iter().skip(usize::from(!span.is_empty())) {
            if h.span.start >= self.pos.max(span.end) {
                break;
            }
            match spans.last_mut() {
                Some(s) if s.end == h.span.start => s.end = h.span.end,
                _ => spans.push(h.span.clone()),
            }
        }
        let spans: Vec<String> = spans
            .iter()
            .map(|s| format!("{}..{}", s.start, s.end))
            .collect();
        // Of a segment that cannot be decoded at all (its manifest is none), the span is only
        // the size some object claims: not said.
        let message = if self.is_undecodable() {
            format!("{first}: none of the segment can be decoded")
        } else {
            format!(
                "{first}: the segment's bytes {} cannot be decoded",
                spans.join(", ")
            )
        };
        Ok(Some(Step::BadEntry {
            position,
            len: self.pos - position,
            error: DecodeError::new(kind, span.start.max(position) as usize, message),
        }))
    }

    /// Whether the remote object read holds `range` in one part of what arrived, which it then
    /// lends: a copy of every byte saved (beside the kernel's, the largest cost of reading a
    /// remote segment).
    fn lends(&mut self, range: Range<u64>) -> Result<bool> {
        let Source::Object(o) = &mut self.src else {
            return Ok(false);
        };
        match o.lend(range.clone()) {
            Ok(true) => {}
            Ok(false) => return Ok(false),
            Err(e) => {
                self.note_undecodable(range.start, e)?;
                return Ok(false);
            }
        }
        self.count(range);
        Ok(true)
    }

    /// Counts the bytes `range` as read: all of them from a file; from a remote object, those
    /// the range handed over before did not hold.
    fn count(&mut self, range: Range<u64>) {
        let mut new = range.end - range.start;
        if let Source::Object(_) = self.src {
            let seen = range.start.max(self.handed.start)..range.end.min(self.handed.end);
            new -= seen.end.saturating_sub(seen.start);
            self.handed = range;
        }
        self.bytes_read += new;
        super::progress::read(new);
    }

    /// Reads the entry at the current position and advances past it (past whatever length
    /// the framing announced, for `Entry` and `BadEntry`; past undecodable bytes, to the next
    /// valid batch, for a `BadEntry` that reaches into them).
    pub fn next_step(&mut self) -> Result<Step<'_>> {
        let position = self.pos;
        let head_len = (HEADER_SIZE_UP_TO_MAGIC_BYTES + 1) as u64;
        let mut head_buf = [0u8; HEADER_SIZE_UP_TO_MAGIC_BYTES + 1];
        let got = self.fill(position, head_len)?;
        let head = &mut head_buf[..got.len()];
        head.copy_from_slice(got);
        if let Some(bad) = self.undecodable_step(position, head_len)? {
            return Ok(bad);
        }
        match frame_at(head) {
            Frame::End => Ok(Step::End {
                position,
                trailing: self.end.saturating_sub(position),
                truncated_len: None,
            }),
            Frame::SizeTooSmall { size } => Ok(Step::SizeTooSmall { position, size }),
            Frame::Entry { .. } | Frame::Truncated { .. } => {
                let size = i32::from_be_bytes(head[8..12].try_into().expect("4 bytes"));
                let len = LOG_OVERHEAD_BYTES as u64 + size as u64;
                // An entry cut by the end is the end, whatever undecodable bytes earlier reads
                // found inside it: the same step whatever was read before.
                if position + len > self.end {
                    return Ok(Step::End {
                        position,
                        trailing: self.end.saturating_sub(position),
                        truncated_len: Some(len),
                    });
                }
                if let Some(bad) = self.undecodable_step(position, len)? {
                    return Ok(bad);
                }
                if len > STREAMED_CHECKSUM_ABOVE_BYTES {
                    if let Some(bad) = self.streamed_crc(position, len)? {
                        self.pos = position + len;
                        return Ok(bad);
                    }
                    if let Some(bad) = self.undecodable_step(position, len)? {
                        return Ok(bad);
                    }
                }
                if len > self.max_entry_bytes {
                    return Ok(Step::TooLarge { position, len });
                }
                self.pos = position + len;
                let held = self.prepare(position, len)?;
                if let Some(bad) = self.undecodable_step(position, len)? {
                    return Ok(bad);
                }
                let bytes = self.held(held);
                Ok(match Entry::decode(bytes) {
                    Ok(entry) => Step::Entry { position, entry },
                    Err(e) => Step::BadEntry {
                        position,
                        len,
                        error: e.shifted(position as usize),
                    },
                })
            }
        }
    }

    /// The [`Step::BadCrc`] of the whole entry of `len` bytes at `position`, its checksum
    /// computed over reads of [`READ_CHUNK_BYTES`]; None when it holds.
    fn streamed_crc(&mut self, position: u64, len: u64) -> Result<Option<Step<'static>>> {
        const HEAD: usize = StreamedCrc::HEAD_BYTES;
        let mut head = [0u8; HEAD];
        let got = self.fill(position, HEAD as u64)?;
        if got.len() < HEAD {
            // The bytes end short (a file that shrank, or undecodable ones): the walk's next
            // step finds where.
            return Ok(None);
        }
        head.copy_from_slice(got);
        let bad = |stored, computed| {
            Some(Step::BadCrc {
                position,
                len,
                stored,
                computed,
            })
        };
        let Some(mut crc) = StreamedCrc::new(&head) else {
            return Ok(bad(None, None));
        };
        let (mut at, end) = (position + HEAD as u64, position + len);
        while at < end {
            let chunk = self.fill(at, (end - at).min(READ_CHUNK_BYTES as u64))?;
            if chunk.is_empty() {
                // The file shrank under the read: the entry is torn; the walk's next step
                // finds the end.
                return Ok(None);
            }
            crc.update(chunk);
            at += chunk.len() as u64;
        }
        let (stored, computed) = crc.finish();
        Ok((stored != computed)
            .then(|| bad(Some(stored), Some(computed)))
            .flatten())
    }

    /// The header of the entry at `position`, read on its own (no body, no checksum): what
    /// index checks need when they jump from entry to entry. None when no whole, plausible
    /// entry starts there.
    pub fn header_at(&mut self, position: u64) -> Result<Option<EntryHeader>> {
        if position >= self.end {
            return Ok(None);
        }
        let available = self.readable_end(position).saturating_sub(position);
        let have_end = self.buf_pos + self.valid as u64;
        if position >= self.buf_pos && position + PEEK_HEADER_BYTES as u64 <= have_end {
            let start = (position - self.buf_pos) as usize;
            return Ok(peek_header(
                &self.buf[start..start + PEEK_HEADER_BYTES],
                available,
            ));
        }
        // Index checks jump a few KiB at a time: reading the header alone beats reading the
        // whole log through the buffer again.
        let mut head = [0u8; PEEK_HEADER_BYTES];
        let want = (PEEK_HEADER_BYTES as u64).min(available) as usize;
        let mut got = 0;
        while got < want {
            let read = self
                .src
                .read_at(&self.path, &mut head[got..want], position + got as u64);
            let n = match read {
                Ok(n) => n,
                Err(e) => {
                    self.note_undecodable(position + got as u64, e)?;
                    break;
                }
            };
            if n == 0 {
                break;
            }
            self.count(position + got as u64..position + (got + n) as u64);
            got += n;
        }
        Ok(peek_header(&head[..got], available))
    }

    /// Scans forward from `from` for the next position where a whole entry with a valid
    /// checksum starts, and moves there. Returns None (and moves to the end) if there is none.
    pub fn resync(&mut self, from: u64) -> Result<Option<u64>> {
        let mut p = from;
        while p + (HEADER_SIZE_UP_TO_MAGIC_BYTES as u64) < self.end {
            if let Some(h) = self.hole_at(p) {
                // No batch starts in bytes that cannot be decoded.
                p = h.span.end;
                continue;
            }
            let window = self.fill(p, READ_CHUNK_BYTES as u64)?.to_vec();
            let scan_len = window.len().saturating_sub(HEADER_SIZE_UP_TO_MAGIC_BYTES);
            let mut i = 0;
            while i < scan_len {
                // A zero-filled stretch (a preallocated or sparse tail) holds no size field:
                // skipped a block at a time, not byte by byte.
                const BLOCK: usize = 64;
                if window.get(i + 8..i + 8 + BLOCK) == Some(&[0u8; BLOCK][..]) {
                    i += BLOCK - 3;
                    continue;
                }
                let h = &window[i..];
                i += 1;
                let size = i32::from_be_bytes(h[8..12].try_into().expect("4 bytes"));
                let magic = h[16] as i8;
                let plausible = match magic {
                    0 | 1 => size >= MIN_ENTRY_SIZE_FIELD,
                    2 => size >= MIN_V2_SIZE_FIELD,
                    _ => false,
                } && i64::from_be_bytes(h[..8].try_into().expect("8 bytes")) >= 0;
                let cand = p + (i - 1) as u64;
                let len = LOG_OVERHEAD_BYTES as u64 + size.max(0) as u64;
                // Whole: not cut by the end, nor by undecodable bytes.
                if !plausible || cand + len > self.readable_end(cand) || len > self.max_entry_bytes
                {
                    continue;
                }
                if len > STREAMED_CHECKSUM_ABOVE_BYTES {
                    // Judged by its checksum as it streams by, not loaded (and whole: its bytes
                    // may end short, at undecodable ones it finds).
                    if self.streamed_crc(cand, len)?.is_none()
                        && cand + len <= self.readable_end(cand)
                    {
                        self.pos = cand;
                        return Ok(Some(cand));
                    }
                    continue;
                }
                let bytes = self.fill(cand, len)?;
                if Entry::decode(bytes).is_ok_and(|e| e.crc_is_valid()) {
                    self.pos = cand;
                    return Ok(Some(cand));
                }
                // `fill` may have moved the buffer; the copied window stays valid.
            }
            p += scan_len.max(1) as u64;
        }
        self.pos = self.end;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch::{build_batch, BatchSpec, RecordSpec};
    use std::io::Write;

    fn batch(base: i64, n: usize) -> Vec<u8> {
        let recs: Vec<_> = (0..n)
            .map(|i| RecordSpec {
                offset: base + i as i64,
                timestamp: 1000 + i as i64,
                key: Some(format!("k{i}").into_bytes()),
                value: Some(vec![b'v'; 100]),
                headers: vec![],
            })
            .collect();
        build_batch(
            &BatchSpec {
                base_offset: base,
                ..Default::default()
            },
            &recs,
        )
        .unwrap()
    }

    fn write(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        f
    }

    /// A segment that cannot be decoded at all is a bad entry at its first byte, whatever its
    /// stored size (0 included) and whatever was looked at first.
    #[test]
    fn an_undecodable_segment_is_a_bad_entry_at_its_start() {
        let e = || Error::Decode {
            path: "s3://b/x.rsm-manifest".into(),
            position: 3,
            message: "manifest is not JSON".into(),
            kind: crate::format::ErrorKind::Malformed,
        };
        for len in [0, 1000] {
            let mut r = LogReader::undecodable(e(), len).unwrap();
            assert_eq!(r.header_at(500).unwrap(), None);
            match r.next_step().unwrap() {
                Step::BadEntry {
                    position: 0,
                    error,
                    len: bad_len,
                } => {
                    assert_eq!((error.pos, bad_len), (0, len));
                    assert!(error.message.contains("not JSON (byte 3 of the object)"));
                }
                other => panic!("{len}: {other:?}"),
            }
            assert!(matches!(
                r.next_step().unwrap(),
                Step::End { trailing: 0, .. }
            ));
            // A resync from inside the damage, as a dump's after a bad entry, finds no batch
            // and stays past it: the walk ends, never meets the damage again.
            r.seek(0);
            assert!(matches!(r.next_step().unwrap(), Step::BadEntry { .. }) || len == 0);
            assert_eq!(r.resync(1).unwrap(), None, "{len}");
            assert_eq!(r.position(), len, "{len}");
            assert!(matches!(
                r.next_step().unwrap(),
                Step::End { trailing: 0, .. }
            ));
        }
        let io = Error::Invalid {
            path: "x".into(),
            message: "no key".into(),
        };
        assert!(LogReader::undecodable(io, 10).is_err());
    }

    fn positions(r: &mut LogReader) -> (Vec<u64>, Step<'static>) {
        let mut out = Vec::new();
        loop {
            match r.next_step().unwrap() {
                Step::Entry { position, .. } => out.push(position),
                Step::End {
                    position,
                    trailing,
                    truncated_len,
                } => {
                    return (
                        out,
                        Step::End {
                            position,
                            trailing,
                            truncated_len,
                        },
                    )
                }
                Step::SizeTooSmall { position, size } => {
                    return (out, Step::SizeTooSmall { position, size })
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn reads_batches_and_reports_torn_tail() {
        let (a, b) = (batch(0, 3), batch(3, 2));
        let mut bytes = [a.clone(), b.clone()].concat();
        bytes.extend_from_slice(&b[..40]);
        let f = write(&bytes);
        let mut r = LogReader::open(f.path(), None).unwrap();
        let (pos, end) = positions(&mut r);
        assert_eq!(pos, vec![0, a.len() as u64]);
        match end {
            Step::End {
                position,
                trailing,
                truncated_len,
            } => {
                assert_eq!(position, (a.len() + b.len()) as u64);
                assert_eq!(trailing, 40);
                assert_eq!(truncated_len, Some(b.len() as u64));
            }
            _ => unreachable!(),
        }
    }

    #[test]
    fn zero_tail_is_corruption_and_max_bytes_limits() {
        let a = batch(0, 3);
        let mut bytes = a.clone();
        bytes.extend_from_slice(&[0u8; 100]);
        let f = write(&bytes);
        let mut r = LogReader::open(f.path(), None).unwrap();
        let (pos, end) = positions(&mut r);
        assert_eq!(pos, vec![0]);
        assert!(
            matches!(end, Step::SizeTooSmall { position, size: 0 } if position == a.len() as u64)
        );
        let mut r = LogReader::open(f.path(), Some(a.len() as u64 - 1)).unwrap();
        let (pos, _) = positions(&mut r);
        assert!(pos.is_empty());
    }

    #[test]
    fn resync_finds_next_valid_batch() {
        let (a, b) = (batch(0, 3), batch(3, 2));
        let garbage = vec![0xabu8; 333];
        let bytes = [a.clone(), garbage.clone(), b.clone()].concat();
        let f = write(&bytes);
        let mut r = LogReader::open(f.path(), None).unwrap();
        assert!(matches!(r.next_step().unwrap(), Step::Entry { .. }));
        let found = r.resync(a.len() as u64 + 1).unwrap();
        assert_eq!(found, Some((a.len() + garbage.len()) as u64));
        assert!(
            matches!(r.next_step().unwrap(), Step::Entry { entry, .. } if entry.last_offset() == 4)
        );
    }

    #[test]
    fn entries_larger_than_the_read_chunk() {
        let recs = vec![RecordSpec {
            offset: 0,
            timestamp: 1,
            key: None,
            value: Some(vec![7u8; 3 << 20]),
            headers: vec![],
        }];
        let big = build_batch(&BatchSpec::default(), &recs).unwrap();
        let bytes = [batch(0, 1), big.clone(), batch(1, 1)].concat();
        let f = write(&bytes);
        let mut r = LogReader::open(f.path(), None).unwrap();
        let (pos, _) = positions(&mut r);
        assert_eq!(pos.len(), 3);
    }

    /// Entries above [`STREAMED_CHECKSUM_ABOVE_BYTES`], v2 and legacy: whole and valid they
    /// are read as any entry; one flipped byte is a [`Step::BadCrc`] with the stored and
    /// computed checksums the loaded entry has, and the walk goes on after it.
    #[test]
    fn large_entries_are_judged_by_a_streamed_checksum() {
        let value = vec![7u8; (STREAMED_CHECKSUM_ABOVE_BYTES + 100) as usize];
        let record = RecordSpec {
            offset: 0,
            timestamp: 1000,
            key: None,
            value: Some(value),
            headers: vec![],
        };
        let v2 = build_batch(&BatchSpec::default(), std::slice::from_ref(&record)).unwrap();
        let legacy = crate::format::legacy::build_message_set(
            &crate::format::legacy::LegacySetSpec {
                magic: 1,
                compression: crate::format::codec::Compression::None,
                compression_level: None,
                timestamp_type: crate::format::batch::TimestampType::CreateTime,
                log_append_time: 0,
            },
            &[record],
        )
        .unwrap();
        for good in [v2, legacy] {
            let mut bad = good.clone();
            let last = bad.len() - 1;
            bad[last] ^= 1;
            let (stored, computed) = {
                let e = Entry::decode(&bad).unwrap();
                (e.stored_crc(), e.compute_crc())
            };
            let f = write(&[&good[..], &bad[..], &good[..]].concat());
            let mut r = LogReader::open(f.path(), None).unwrap();
            assert!(
                matches!(r.next_step().unwrap(), Step::Entry { entry, .. } if entry.crc_is_valid())
            );
            match r.next_step().unwrap() {
                Step::BadCrc {
                    position,
                    len,
                    stored: s,
                    computed: c,
                } => {
                    assert_eq!((position, len), (good.len() as u64, bad.len() as u64));
                    assert_eq!((s, c), (Some(stored), Some(computed)));
                }
                other => panic!("{other:?}"),
            }
            assert!(
                matches!(r.next_step().unwrap(), Step::Entry { position, .. } if position == 2 * good.len() as u64)
            );
            assert!(matches!(
                r.next_step().unwrap(),
                Step::End { trailing: 0, .. }
            ));
        }
    }
}
