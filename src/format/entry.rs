//! Segment framing shared by all magics (formats.md §2) and one view over both batch formats.
//!
//! A `.log` file is a concatenation of entries; each starts with offset (8), size (4), then
//! the v2 partition leader epoch or the legacy CRC (4), then the magic byte that decides the
//! layout. [`frame_at`] applies Kafka's file-reader rules; [`Entry`] is what upper layers see.

use super::batch::{
    BatchHeader, BatchV2, Headers, Record, RecordSpec, Records, TimestampType,
    HEADER_SIZE_UP_TO_MAGIC_BYTES, LOG_OVERHEAD_BYTES, MAGIC_V2, MIN_ENTRY_SIZE_FIELD,
    RECORD_BATCH_OVERHEAD_BYTES,
};
use super::codec::Compression;
use super::error::{DecodeError, ErrorKind, Result};
use super::legacy::{InnerMessage, InnerMessages, LegacyMessage};
use super::snapshot::increment_sequence;

const MAGIC_OFFSET: usize = 16;

/// What Kafka's file reader finds at the start of `buf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// A whole entry of `len` bytes starts here.
    Entry { len: usize, magic: i8 },
    /// 17 or fewer bytes remain: iteration ends quietly.
    End,
    /// The size field announces an entry running past the end: iteration ends quietly.
    Truncated { len: usize },
    /// A size field below 14, e.g. a zero-filled tail: Kafka raises CorruptRecordException.
    SizeTooSmall { size: i32 },
}

pub fn frame_at(buf: &[u8]) -> Frame {
    if buf.len() <= HEADER_SIZE_UP_TO_MAGIC_BYTES {
        return Frame::End;
    }
    let size = i32::from_be_bytes(buf[8..12].try_into().expect("4 bytes"));
    if size < MIN_ENTRY_SIZE_FIELD {
        return Frame::SizeTooSmall { size };
    }
    let len = LOG_OVERHEAD_BYTES + size as usize;
    if len > buf.len() {
        return Frame::Truncated { len };
    }
    Frame::Entry {
        len,
        magic: buf[MAGIC_OFFSET] as i8,
    }
}

/// What the first bytes of an entry tell without reading its body or checking its CRC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryHeader {
    /// Whole entry, offset and size fields included.
    pub size: u64,
    pub magic: i8,
    /// None for a legacy compressed wrapper (its first offset is inside the compressed value).
    pub first_offset: Option<i64>,
    pub last_offset: i64,
    /// v2: the header's max timestamp; v1: the (wrapper) message timestamp; v0: -1.
    pub max_timestamp: i64,
    /// v2: the header's record count (0 for a batch the cleaner emptied); None for v0/v1.
    pub record_count: Option<i32>,
}

/// Bytes [`peek_header`] needs to see for any magic.
pub const PEEK_HEADER_BYTES: usize = RECORD_BATCH_OVERHEAD_BYTES;

/// Parses the header of the entry starting `buf` (at most [`PEEK_HEADER_BYTES`] are looked at),
/// given that `available` bytes of the file start there. None when no whole, plausible entry
/// starts here.
pub fn peek_header(buf: &[u8], available: u64) -> Option<EntryHeader> {
    if buf.len() <= HEADER_SIZE_UP_TO_MAGIC_BYTES {
        return None;
    }
    let size = i32::from_be_bytes(buf[8..12].try_into().expect("4 bytes"));
    if size < MIN_ENTRY_SIZE_FIELD || (LOG_OVERHEAD_BYTES as u64 + size as u64) > available {
        return None;
    }
    let len = LOG_OVERHEAD_BYTES + size as usize;
    let magic = buf[MAGIC_OFFSET] as i8;
    let int64 = |at: usize| {
        buf.get(at..at + 8)
            .map(|b| i64::from_be_bytes(b.try_into().expect("8 bytes")))
    };
    match magic {
        0 | 1 => {
            let offset = int64(0)?;
            let compressed = *buf.get(MAGIC_OFFSET + 1)? & 0x07 != 0;
            offset_limit(offset, Some(offset), 0).ok()?;
            Some(EntryHeader {
                size: len as u64,
                magic,
                first_offset: (!compressed).then_some(offset),
                last_offset: offset,
                max_timestamp: if magic == 1 {
                    int64(MAGIC_OFFSET + 2)?
                } else {
                    -1
                },
                record_count: None,
            })
        }
        m if m >= MAGIC_V2 && len >= RECORD_BATCH_OVERHEAD_BYTES => {
            let h = super::batch::BatchHeader::decode(buf).ok()?;
            offset_limit(h.base_offset, h.checked_last_offset(), 0).ok()?;
            Some(EntryHeader {
                size: len as u64,
                magic,
                first_offset: Some(h.base_offset),
                last_offset: h.last_offset(),
                max_timestamp: h.max_timestamp,
                record_count: Some(h.record_count),
            })
        }
        _ => None,
    }
}

/// The offset after an entry whose offsets start at `first` and end at `last` (None: the sum
/// of a v2 base offset and its last offset delta overflows): an error at `pos` when it is past
/// `i64::MAX`. Kafka computes `lastOffset + 1` (`RecordBatch.nextOffset`) unchecked: at
/// `Long.MAX_VALUE` it wraps to `Long.MIN_VALUE`, the log end offset
/// (`LogSegment.readNextOffset`) falls below the log start offset and `LogLoader` deletes every
/// segment of the partition; an overflowing v2 last offset is negative and no segment can hold
/// it (`LogSegment.recover` raises, and the split of `LogLoader` then fails). kseg judges such
/// an entry invalid data instead, where it stands: recovery truncates there and keeps every
/// entry before it.
pub fn offset_limit(first: i64, last: Option<i64>, pos: usize) -> Result<i64> {
    last.and_then(|l| l.checked_add(1)).ok_or_else(|| {
        let last = last.map_or_else(
            || "past 9223372036854775807".to_string(),
            |l| l.to_string(),
        );
        DecodeError::new(
            ErrorKind::BadValue,
            pos,
            format!(
                "offsets {first}..{last}: no offset follows the last one (the log end offset after it would exceed 2^63 - 1, where Kafka's nextOffset wraps to -2^63 and its loader then deletes the whole log)"
            ),
        )
    })
}

/// One entry of a segment: a v2 batch or a v0/v1 message (possibly a compressed wrapper).
#[derive(Debug, Clone, Copy)]
pub enum Entry<'a> {
    V2(BatchV2<'a>),
    Legacy(LegacyMessage<'a>),
}

impl<'a> Entry<'a> {
    /// Decodes exactly one entry. Magic ≥ 2 (even bogus 3..127) is read as v2, as Kafka does.
    pub fn decode(bytes: &'a [u8]) -> Result<Self> {
        if bytes.len() <= MAGIC_OFFSET {
            return Err(DecodeError::truncated(
                bytes.len(),
                MAGIC_OFFSET + 1,
                bytes.len(),
                "entry header",
            ));
        }
        let magic = bytes[MAGIC_OFFSET] as i8;
        if magic >= MAGIC_V2 {
            if bytes.len() < RECORD_BATCH_OVERHEAD_BYTES {
                return Err(DecodeError::new(
                    ErrorKind::BadLength,
                    8,
                    format!(
                        "v2 batch of {} bytes is smaller than its {RECORD_BATCH_OVERHEAD_BYTES}-byte header",
                        bytes.len()
                    ),
                ));
            }
            BatchV2::decode(bytes).map(Entry::V2)
        } else {
            LegacyMessage::decode(bytes).map(Entry::Legacy)
        }
        .and_then(|e| e.next_offset().map(|_| e))
    }

    /// The offset after this entry's last; an error when there is none, which makes the entry
    /// invalid data ([`offset_limit`]).
    pub fn next_offset(&self) -> Result<i64> {
        let (first, last) = match self {
            Entry::V2(b) => (b.header.base_offset, b.header.checked_last_offset()),
            Entry::Legacy(m) => (m.offset, Some(m.offset)),
        };
        offset_limit(first, last, 0)
    }

    pub fn bytes(&self) -> &'a [u8] {
        match self {
            Entry::V2(b) => b.bytes(),
            Entry::Legacy(m) => m.bytes(),
        }
    }

    pub fn size_in_bytes(&self) -> usize {
        self.bytes().len()
    }

    pub fn magic(&self) -> i8 {
        match self {
            Entry::V2(b) => b.header.magic,
            Entry::Legacy(m) => m.magic,
        }
    }

    pub fn stored_crc(&self) -> u32 {
        match self {
            Entry::V2(b) => b.header.crc,
            Entry::Legacy(m) => m.crc,
        }
    }

    pub fn compute_crc(&self) -> u32 {
        match self {
            Entry::V2(b) => b.compute_crc(),
            Entry::Legacy(m) => m.compute_crc(),
        }
    }

    pub fn crc_is_valid(&self) -> bool {
        match self {
            Entry::V2(b) => b.crc_is_valid(),
            Entry::Legacy(m) => m.crc_is_valid(),
        }
    }

    pub fn compression(&self) -> Result<Compression> {
        match self {
            Entry::V2(b) => b.header.compression(),
            Entry::Legacy(m) => m.compression(),
        }
    }

    pub fn timestamp_type(&self) -> TimestampType {
        match self {
            Entry::V2(b) => b.header.timestamp_type(),
            Entry::Legacy(m) => m.timestamp_type(),
        }
    }

    /// v2: the header's max timestamp; legacy: the (wrapper) message timestamp.
    pub fn max_timestamp(&self) -> i64 {
        match self {
            Entry::V2(b) => b.header.max_timestamp,
            Entry::Legacy(m) => m.timestamp,
        }
    }

    /// The entry's offset field for legacy messages (the last inner offset of a wrapper),
    /// the header's last offset for v2.
    pub fn last_offset(&self) -> i64 {
        match self {
            Entry::V2(b) => b.header.last_offset(),
            Entry::Legacy(m) => m.offset,
        }
    }

    pub fn is_control(&self) -> bool {
        matches!(self, Entry::V2(b) if b.header.is_control())
    }

    pub fn is_transactional(&self) -> bool {
        matches!(self, Entry::V2(b) if b.header.is_transactional())
    }

    /// Iterates the logical records: v2 records, the message itself for an uncompressed
    /// legacy entry, or the inner messages of a wrapper (with absolute offsets).
    pub fn records<'s>(&'s self, scratch: &'s mut Vec<u8>, limit: usize) -> Result<RecordIter<'s>>
    where
        'a: 's,
    {
        match self {
            Entry::V2(b) => Ok(RecordIter::V2 {
                records: b.records(scratch, limit)?,
                batch: *b,
            }),
            Entry::Legacy(m) if !m.is_compressed() => Ok(RecordIter::Legacy {
                items: LegacyItems::One(Some(InnerMessage {
                    message: *m,
                    absolute_offset: m.offset,
                    timestamp: m.timestamp,
                })),
                timestamp_type: m.timestamp_type(),
            }),
            Entry::Legacy(m) => Ok(RecordIter::Legacy {
                items: LegacyItems::Inner(m.inner_messages(scratch, limit)?),
                timestamp_type: m.timestamp_type(),
            }),
        }
    }
}

/// What a legacy (v0/v1) record adds to a record line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyRecordInfo {
    pub magic: i8,
    pub attributes: i8,
    pub crc: u32,
    pub is_valid: bool,
}

/// A record as Kafka's readers present it, whatever the magic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordView<'a> {
    pub offset: i64,
    pub timestamp: i64,
    pub timestamp_type: TimestampType,
    /// -1 when the batch has no producer sequence (and always for v0/v1).
    pub sequence: i32,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub headers: Headers<'a>,
    pub size_in_bytes: usize,
    pub legacy: Option<LegacyRecordInfo>,
}

impl RecordView<'_> {
    /// The record as the writer takes it (owned bytes), e.g. to rebuild or hand it on.
    pub fn to_spec(&self) -> RecordSpec {
        RecordSpec {
            offset: self.offset,
            timestamp: self.timestamp,
            key: self.key.map(<[u8]>::to_vec),
            value: self.value.map(<[u8]>::to_vec),
            headers: self
                .headers
                .iter()
                .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                .collect(),
        }
    }
}

/// The records of an entry; a clone reads them again without decompressing again.
#[derive(Clone)]
pub enum RecordIter<'s> {
    V2 {
        records: Records<'s>,
        batch: BatchV2<'s>,
    },
    Legacy {
        items: LegacyItems<'s>,
        timestamp_type: TimestampType,
    },
}

/// The messages of a legacy entry: itself, or a wrapper's inner messages.
#[derive(Clone)]
pub enum LegacyItems<'s> {
    One(Option<InnerMessage<'s>>),
    Inner(InnerMessages<'s>),
}

impl<'s> Iterator for LegacyItems<'s> {
    type Item = InnerMessage<'s>;

    fn next(&mut self) -> Option<InnerMessage<'s>> {
        match self {
            LegacyItems::One(m) => m.take(),
            LegacyItems::Inner(inner) => inner.next(),
        }
    }
}

/// A v2 record as Kafka's readers present it, from its batch's header.
#[inline(always)]
fn v2_view<'s>(h: &BatchHeader, r: Record<'s>) -> RecordView<'s> {
    RecordView {
        offset: h.base_offset.wrapping_add(i64::from(r.offset_delta)),
        timestamp: if h.timestamp_type() == TimestampType::LogAppendTime {
            h.max_timestamp
        } else {
            h.base_timestamp.wrapping_add(r.timestamp_delta)
        },
        timestamp_type: h.timestamp_type(),
        sequence: if h.base_sequence < 0 {
            -1
        } else {
            increment_sequence(h.base_sequence, r.offset_delta)
        },
        key: r.key,
        value: r.value,
        headers: r.headers,
        size_in_bytes: r.size_in_bytes,
        legacy: None,
    }
}

impl<'s> RecordIter<'s> {
    /// Every record [`Iterator::next`] does not take on its fast path: checked v2 records (with
    /// headers, long varints, errors) and legacy messages.
    #[inline(never)]
    fn next_other(&mut self) -> Option<Result<RecordView<'s>>> {
        match self {
            RecordIter::V2 { records, batch } => {
                let h = batch.header;
                Some(records.next()?.map(|r| v2_view(&h, r)))
            }
            RecordIter::Legacy {
                items,
                timestamp_type,
            } => {
                let m = items.next()?;
                Some(Ok(RecordView {
                    offset: m.absolute_offset,
                    timestamp: m.timestamp,
                    timestamp_type: *timestamp_type,
                    sequence: -1,
                    key: m.message.key,
                    value: m.message.value,
                    headers: Headers::default(),
                    size_in_bytes: m.message.size_in_bytes(),
                    legacy: Some(LegacyRecordInfo {
                        magic: m.message.magic,
                        attributes: m.message.attributes,
                        crc: m.message.crc,
                        is_valid: m.message.crc_is_valid(),
                    }),
                }))
            }
        }
    }
}

impl<'s> Iterator for RecordIter<'s> {
    type Item = Result<RecordView<'s>>;

    /// The common v2 record inlined where records are walked (built in place, not passed
    /// through memory); everything else out of line.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if let RecordIter::V2 { records, batch } = self {
            if let Some(r) = records.next_common() {
                return Some(Ok(v2_view(&batch.header, r)));
            }
        }
        self.next_other()
    }
}

/// An entry's checksum computed over its bytes as they stream by, so that an entry too large to
/// hold is judged by its checksum before any memory is spent on it: a v2 batch's CRC32C covers
/// the bytes from its attributes on, a legacy message's CRC32 those from its magic on.
pub struct StreamedCrc {
    stored: u32,
    v2: Option<u32>,
    legacy: crc32fast::Hasher,
}

impl StreamedCrc {
    /// Bytes of an entry's start that hold its magic and stored checksum, after which
    /// [`StreamedCrc::update`] takes the rest.
    pub const HEAD_BYTES: usize = super::batch::CRC_COVERAGE_START;

    /// From the entry's first [`Self::HEAD_BYTES`] bytes; None for a magic neither v0, v1
    /// nor v2.
    pub fn new(head: &[u8; Self::HEAD_BYTES]) -> Option<Self> {
        let be = |at: usize| u32::from_be_bytes(head[at..at + 4].try_into().expect("4 bytes"));
        let magic = head[HEADER_SIZE_UP_TO_MAGIC_BYTES - 1] as i8;
        match magic {
            2 => Some(StreamedCrc {
                stored: be(17),
                v2: Some(0),
                legacy: crc32fast::Hasher::new(),
            }),
            0 | 1 => {
                // Covered from the magic on: the magic and the bytes after the stored CRC's
                // place in v2 (for legacy, the attributes and what follows).
                let mut legacy = crc32fast::Hasher::new();
                legacy.update(&head[HEADER_SIZE_UP_TO_MAGIC_BYTES - 1..]);
                Some(StreamedCrc {
                    stored: be(12),
                    v2: None,
                    legacy,
                })
            }
            _ => None,
        }
    }

    /// The next bytes of the entry, in order, after the first [`Self::HEAD_BYTES`].
    pub fn update(&mut self, bytes: &[u8]) {
        match self.v2.as_mut() {
            Some(crc) => *crc = crc32c::crc32c_append(*crc, bytes),
            None => self.legacy.update(bytes),
        }
    }

    /// The stored checksum and the computed one.
    pub fn finish(self) -> (u32, u32) {
        let computed = self.v2.unwrap_or_else(|| self.legacy.finalize());
        (self.stored, computed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_rules() {
        assert_eq!(frame_at(&[0u8; 17]), Frame::End);
        assert_eq!(frame_at(&[0u8; 18]), Frame::SizeTooSmall { size: 0 });
        let mut b = vec![0u8; 30];
        b[11] = 14;
        b[16] = 1;
        assert_eq!(frame_at(&b), Frame::Entry { len: 26, magic: 1 });
        b[11] = 100;
        assert_eq!(frame_at(&b), Frame::Truncated { len: 112 });
        b[8] = 0x80; // negative size
        assert!(matches!(frame_at(&b), Frame::SizeTooSmall { .. }));
    }
}
