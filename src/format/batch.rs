//! Record batches of magic v2 (formats.md §3): the 61-byte header, the records inside it, and
//! the builder that produces the bytes Kafka's `MemoryRecordsBuilder` produces.
//!
//! Owns: header layout, attribute bits, CRC32C coverage, record encoding. Not the framing of
//! a whole segment (see `entry`) nor the codecs (see `codec`).

use super::codec::{self, Compression};
use super::cursor::Cursor;
use super::error::{DecodeError, ErrorKind, Result};
use super::snapshot::increment_sequence;
use super::varint;

/// Bytes of the offset and size fields that precede every entry of a segment (`LOG_OVERHEAD`).
pub const LOG_OVERHEAD_BYTES: usize = 12;
/// Bytes needed to see the magic byte of any entry (offset, size, epoch/crc, magic).
pub const HEADER_SIZE_UP_TO_MAGIC_BYTES: usize = 17;
/// Size of the v2 batch header (`RECORD_BATCH_OVERHEAD`).
pub const RECORD_BATCH_OVERHEAD_BYTES: usize = 61;
/// Smallest legal value of an entry's size field (a v0 message with no key or value).
pub const MIN_ENTRY_SIZE_FIELD: i32 = 14;
/// The CRC32C of a v2 batch covers bytes from here (attributes) to the end of the batch.
pub const CRC_COVERAGE_START: usize = 21;
pub const MAGIC_V2: i8 = 2;

/// Where a v2 batch's partition leader epoch sits (before the CRC's coverage).
pub const PARTITION_LEADER_EPOCH_OFFSET: usize = 12;
const MAGIC_OFFSET: usize = 16;
const CRC_OFFSET: usize = 17;
const ATTRIBUTES_OFFSET: usize = 21;

/// Attribute bits of a v2 batch (formats.md §3.2).
pub mod attributes {
    pub const COMPRESSION_CODEC_MASK: i16 = 0x07;
    pub const TIMESTAMP_TYPE_LOG_APPEND_TIME: i16 = 0x08;
    pub const TRANSACTIONAL: i16 = 0x10;
    pub const CONTROL: i16 = 0x20;
    pub const DELETE_HORIZON: i16 = 0x40;
}

/// Kafka's `TimestampType`, with its `name` as printed by kafka-dump-log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimestampType {
    NoTimestampType,
    CreateTime,
    LogAppendTime,
}

impl TimestampType {
    pub fn name(self) -> &'static str {
        match self {
            TimestampType::NoTimestampType => "NoTimestampType",
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        [Self::NoTimestampType, Self::CreateTime, Self::LogAppendTime]
            .into_iter()
            .find(|t| t.name() == s)
    }
}

/// The 61-byte header of a v2 batch, field for field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    pub base_offset: i64,
    /// Bytes after this field: batch size − 12.
    pub length: i32,
    pub partition_leader_epoch: i32,
    pub magic: i8,
    pub crc: u32,
    pub attributes: i16,
    pub last_offset_delta: i32,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub record_count: i32,
}

impl BatchHeader {
    /// Reads the header from the first 61 bytes of `buf`.
    pub fn decode(buf: &[u8]) -> Result<Self> {
        if buf.len() < RECORD_BATCH_OVERHEAD_BYTES {
            return Err(DecodeError::truncated(
                buf.len(),
                RECORD_BATCH_OVERHEAD_BYTES,
                buf.len(),
                "v2 batch header",
            ));
        }
        // Fixed offsets into a fixed-size array: no per-field length checks (the length was
        // checked above), which matters at one header per batch.
        let b: &[u8; RECORD_BATCH_OVERHEAD_BYTES] = buf[..RECORD_BATCH_OVERHEAD_BYTES]
            .try_into()
            .expect("length checked above");
        let i64_at = |i: usize| {
            i64::from_be_bytes([
                b[i],
                b[i + 1],
                b[i + 2],
                b[i + 3],
                b[i + 4],
                b[i + 5],
                b[i + 6],
                b[i + 7],
            ])
        };
        let i32_at = |i: usize| i32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let i16_at = |i: usize| i16::from_be_bytes([b[i], b[i + 1]]);
        Ok(BatchHeader {
            base_offset: i64_at(0),
            length: i32_at(8),
            partition_leader_epoch: i32_at(12),
            magic: b[16] as i8,
            crc: i32_at(17) as u32,
            attributes: i16_at(21),
            last_offset_delta: i32_at(23),
            base_timestamp: i64_at(27),
            max_timestamp: i64_at(35),
            producer_id: i64_at(43),
            producer_epoch: i16_at(51),
            base_sequence: i32_at(53),
            record_count: i32_at(57),
        })
    }

    /// Writes the header into the first 61 bytes of `out`.
    pub fn encode_into(&self, out: &mut [u8]) {
        let out = &mut out[..RECORD_BATCH_OVERHEAD_BYTES];
        out[0..8].copy_from_slice(&self.base_offset.to_be_bytes());
        out[8..12].copy_from_slice(&self.length.to_be_bytes());
        out[PARTITION_LEADER_EPOCH_OFFSET..PARTITION_LEADER_EPOCH_OFFSET + 4]
            .copy_from_slice(&self.partition_leader_epoch.to_be_bytes());
        out[16] = self.magic as u8;
        out[17..21].copy_from_slice(&self.crc.to_be_bytes());
        out[21..23].copy_from_slice(&self.attributes.to_be_bytes());
        out[23..27].copy_from_slice(&self.last_offset_delta.to_be_bytes());
        out[27..35].copy_from_slice(&self.base_timestamp.to_be_bytes());
        out[35..43].copy_from_slice(&self.max_timestamp.to_be_bytes());
        out[43..51].copy_from_slice(&self.producer_id.to_be_bytes());
        out[51..53].copy_from_slice(&self.producer_epoch.to_be_bytes());
        out[53..57].copy_from_slice(&self.base_sequence.to_be_bytes());
        out[57..61].copy_from_slice(&self.record_count.to_be_bytes());
    }

    /// Batch size on disk: the length field plus the 12 bytes before it.
    pub fn size_in_bytes(&self) -> i64 {
        i64::from(self.length) + LOG_OVERHEAD_BYTES as i64
    }

    /// The last offset, None when base offset + last offset delta overflows (such a batch is
    /// invalid: [`super::entry::offset_limit`]).
    pub fn checked_last_offset(&self) -> Option<i64> {
        self.base_offset
            .checked_add(i64::from(self.last_offset_delta))
    }

    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .wrapping_add(i64::from(self.last_offset_delta))
    }

    /// Kafka reads only the low byte of the attributes.
    fn attr(&self) -> i16 {
        self.attributes & 0xff
    }

    pub fn compression(&self) -> Result<Compression> {
        Compression::from_id((self.attr() & attributes::COMPRESSION_CODEC_MASK) as u8)
            .map_err(|e| e.shifted(ATTRIBUTES_OFFSET))
    }

    pub fn timestamp_type(&self) -> TimestampType {
        if self.attr() & attributes::TIMESTAMP_TYPE_LOG_APPEND_TIME != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    pub fn is_transactional(&self) -> bool {
        self.attr() & attributes::TRANSACTIONAL != 0
    }

    pub fn is_control(&self) -> bool {
        self.attr() & attributes::CONTROL != 0
    }

    /// The delete horizon the cleaner stamped into `base_timestamp`, if the flag is set.
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        (self.attr() & attributes::DELETE_HORIZON != 0).then_some(self.base_timestamp)
    }

    /// Last sequence with Kafka's wrap from `i32::MAX` to 0; -1 when the batch has none.
    pub fn last_sequence(&self) -> i32 {
        if self.base_sequence == -1 {
            -1
        } else {
            increment_sequence(self.base_sequence, self.last_offset_delta)
        }
    }

    /// Whether the batch carries producer state (an idempotent or transactional producer).
    pub fn has_producer_id(&self) -> bool {
        self.producer_id >= 0
    }
}

/// One v2 batch borrowed from a segment: its parsed header and its exact bytes.
#[derive(Debug, Clone, Copy)]
pub struct BatchV2<'a> {
    pub header: BatchHeader,
    bytes: &'a [u8],
}

impl<'a> BatchV2<'a> {
    /// `bytes` must be exactly one batch (offset field through the last record byte).
    pub fn decode(bytes: &'a [u8]) -> Result<Self> {
        let header = BatchHeader::decode(bytes)?;
        if header.size_in_bytes() != bytes.len() as i64 {
            return Err(DecodeError::new(
                ErrorKind::BadLength,
                8,
                format!(
                    "batch length field says {} bytes but {} were given",
                    header.size_in_bytes(),
                    bytes.len()
                ),
            ));
        }
        Ok(BatchV2 { header, bytes })
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The records area: uncompressed records or the compressed stream of them.
    pub fn records_area(&self) -> &'a [u8] {
        &self.bytes[RECORD_BATCH_OVERHEAD_BYTES..]
    }

    pub fn compute_crc(&self) -> u32 {
        crc32c::crc32c(&self.bytes[CRC_COVERAGE_START..])
    }

    /// Kafka's `isValid`: big enough for a header and the stored CRC32C matches.
    pub fn crc_is_valid(&self) -> bool {
        self.bytes.len() >= RECORD_BATCH_OVERHEAD_BYTES && self.compute_crc() == self.header.crc
    }

    /// Iterates the records, decompressing into `scratch` when the batch is compressed.
    /// `limit` caps the decompressed size.
    pub fn records<'s>(&'s self, scratch: &'s mut Vec<u8>, limit: usize) -> Result<Records<'s>>
    where
        'a: 's,
    {
        if self.header.record_count < 0 {
            return Err(DecodeError::new(
                ErrorKind::BadLength,
                57,
                format!("Found invalid record count {}", self.header.record_count),
            ));
        }
        let compression = self.header.compression()?;
        let data: &'s [u8] = if compression == Compression::None {
            self.records_area()
        } else {
            codec::decompress(
                compression,
                self.header.magic,
                self.records_area(),
                limit,
                scratch,
            )
            .map_err(|e| e.shifted(RECORD_BATCH_OVERHEAD_BYTES))?;
            scratch.as_slice()
        };
        Ok(Records {
            cursor: Cursor::new(data),
            remaining: self.header.record_count,
            compressed: compression != Compression::None,
            done: false,
        })
    }
}

/// The fewest bytes one record header takes: a one-byte key length and a one-byte value length.
const MIN_HEADER_BYTES: usize = 2;

/// A header of a v2 record; the value is null when Kafka wrote length -1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader<'a> {
    pub key: &'a [u8],
    pub value: Option<&'a [u8]>,
}

/// A v2 record's headers, borrowed from the record's bytes and decoded as they are iterated:
/// a record may declare millions of them, and nothing is allocated per header. The bytes were
/// checked when the record was decoded, so iterating cannot fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Headers<'a> {
    bytes: &'a [u8],
    count: usize,
}

impl<'a> Headers<'a> {
    /// Checks `count` headers at the cursor (`DefaultRecord.readHeaders`' checks) and returns
    /// them, the cursor moved past them. The count was bounded by the caller.
    fn decode(b: &mut Cursor<'a>, count: usize) -> Result<Self> {
        let start = b.position();
        let bytes = b.rest();
        for _ in 0..count {
            read_header(b)?;
        }
        Ok(Headers {
            bytes: &bytes[..b.position() - start],
            count,
        })
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn iter(&self) -> HeaderIter<'a> {
        HeaderIter {
            cursor: Cursor::new(self.bytes),
            remaining: self.count,
        }
    }
}

impl<'a> IntoIterator for &Headers<'a> {
    type Item = RecordHeader<'a>;
    type IntoIter = HeaderIter<'a>;

    fn into_iter(self) -> HeaderIter<'a> {
        self.iter()
    }
}

/// One header at the cursor: key length (never negative), key, value length, value.
fn read_header<'a>(b: &mut Cursor<'a>) -> Result<RecordHeader<'a>> {
    let klen_pos = b.position();
    let klen = b.varint("header key length")?;
    if klen < 0 {
        return Err(DecodeError::new(
            ErrorKind::BadLength,
            klen_pos,
            format!("Invalid negative header key size {klen}"),
        ));
    }
    let key = b.take(klen as usize, "header key")?;
    let vlen = b.varint("header value length")?;
    let value = b.nullable_bytes(i64::from(vlen), "header value")?;
    Ok(RecordHeader { key, value })
}

/// The headers of one record, in order.
#[derive(Clone)]
pub struct HeaderIter<'a> {
    cursor: Cursor<'a>,
    remaining: usize,
}

impl<'a> Iterator for HeaderIter<'a> {
    type Item = RecordHeader<'a>;

    fn next(&mut self) -> Option<RecordHeader<'a>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        Some(read_header(&mut self.cursor).expect("checked when the record was decoded"))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for HeaderIter<'_> {}

/// One v2 record as stored: deltas relative to its batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    pub attributes: i8,
    pub timestamp_delta: i64,
    pub offset_delta: i32,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub headers: Headers<'a>,
    /// The length varint plus the body it announces.
    pub size_in_bytes: usize,
}

impl<'a> Record<'a> {
    /// Reads one record at the cursor, with `DefaultRecord.readFrom`'s checks.
    #[inline]
    pub fn decode(c: &mut Cursor<'a>) -> Result<Self> {
        match Self::decode_common(c.rest()) {
            Some(r) => {
                c.skip(r.size_in_bytes);
                Ok(r)
            }
            None => Self::decode_checked(c),
        }
    }

    /// The common record, read without building an error for each field: every varint of one
    /// to three bytes, no headers, every check passed. None sends the record to
    /// [`Record::decode_checked`], which reads it again and says what is wrong, if anything:
    /// whatever this accepts, that reads the same way.
    #[inline(always)]
    fn decode_common(buf: &'a [u8]) -> Option<Self> {
        let (length, p) = small_varint(buf, 0)?;
        let body = buf.get(p..p.checked_add(usize::try_from(length).ok()?)?)?;
        let attributes = *body.first()? as i8;
        let (timestamp_delta, q) = small_varint(body, 1)?;
        let (offset_delta, q) = small_varint(body, q)?;
        let (key, q) = small_nullable(body, q)?;
        let (value, q) = small_nullable(body, q)?;
        let (header_count, q) = small_varint(body, q)?;
        if header_count != 0 || q != body.len() {
            return None;
        }
        Some(Record {
            attributes,
            timestamp_delta: i64::from(timestamp_delta),
            offset_delta,
            key,
            value,
            headers: Headers::default(),
            size_in_bytes: p + body.len(),
        })
    }

    /// [`Record::decode`] field by field, each read checked and explained.
    #[inline(never)]
    fn decode_checked(c: &mut Cursor<'a>) -> Result<Self> {
        let start = c.position();
        let length = c.varint("record length")?;
        if length < 0 {
            return Err(DecodeError::new(
                ErrorKind::BadLength,
                start,
                format!("Invalid record size: negative length {length}"),
            ));
        }
        let body_start = c.position();
        let body = c.take(length as usize, "record body")?;
        let mut b = Cursor::new(body);
        let rec = Self::decode_body(&mut b).map_err(|e| e.shifted(body_start))?;
        if !b.is_empty() {
            return Err(DecodeError::new(
                ErrorKind::BadLength,
                body_start + b.position(),
                format!(
                    "Invalid record size: expected to read {length} bytes in record payload, but instead read {}",
                    b.position()
                ),
            ));
        }
        Ok(Record {
            size_in_bytes: c.position() - start,
            ..rec
        })
    }

    #[inline]
    fn decode_body(b: &mut Cursor<'a>) -> Result<Self> {
        let attributes = b.i8("record attributes")?;
        let timestamp_delta = b.varlong("timestampDelta")?;
        let offset_delta = b.varint("offsetDelta")?;
        let key_len = b.varint("key length")?;
        let key = b.nullable_bytes(i64::from(key_len), "key")?;
        let value_len = b.varint("value length")?;
        let value = b.nullable_bytes(i64::from(value_len), "value")?;
        let header_count_pos = b.position();
        let header_count = b.varint("header count")?;
        // Each header takes at least 2 bytes (a key length and a value length), so a count
        // the record's remaining bytes cannot hold is refused before any header is read.
        if header_count < 0 || header_count as usize > b.remaining() / MIN_HEADER_BYTES {
            return Err(DecodeError::new(
                ErrorKind::BadLength,
                header_count_pos,
                format!("Invalid number of record headers {header_count}"),
            ));
        }
        let headers = Headers::decode(b, header_count as usize)?;
        Ok(Record {
            attributes,
            timestamp_delta,
            offset_delta,
            key,
            value,
            headers,
            size_in_bytes: 0,
        })
    }
}

/// The zigzag varint of one to three bytes at `at` in `buf` and the position after it; None for
/// a longer one or the end of `buf`. (Up to three bytes a varint and a varlong read the same.)
#[inline(always)]
fn small_varint(buf: &[u8], at: usize) -> Option<(i32, usize)> {
    let b0 = u32::from(*buf.get(at)?);
    let (u, n) = if b0 < 0x80 {
        (b0, 1)
    } else {
        let b1 = u32::from(*buf.get(at + 1)?);
        if b1 < 0x80 {
            ((b0 & 0x7f) | b1 << 7, 2)
        } else {
            let b2 = u32::from(*buf.get(at + 2)?);
            if b2 >= 0x80 {
                return None;
            }
            ((b0 & 0x7f) | (b1 & 0x7f) << 7 | b2 << 14, 3)
        }
    };
    Some((((u >> 1) as i32) ^ -((u & 1) as i32), at + n))
}

/// A key or value at `at`: its length as a small varint, -1 for null, then its bytes; None
/// where [`small_varint`] gives none, for any other negative length, or past the end.
#[inline(always)]
fn small_nullable(buf: &[u8], at: usize) -> Option<(Option<&[u8]>, usize)> {
    let (len, at) = small_varint(buf, at)?;
    if len == -1 {
        return Some((None, at));
    }
    let end = at.checked_add(usize::try_from(len).ok()?)?;
    Some((Some(buf.get(at..end)?), end))
}

/// Iterator over the records of one batch. After `count` records it checks that nothing is
/// left, as Kafka does ("records still remaining"). A clone reads the same records again
/// (without decompressing again).
#[derive(Clone)]
pub struct Records<'s> {
    cursor: Cursor<'s>,
    remaining: i32,
    compressed: bool,
    done: bool,
}

impl<'s> Records<'s> {
    /// Position in the (decompressed when compressed) records area.
    pub fn position(&self) -> usize {
        self.cursor.position()
    }

    pub fn is_compressed(&self) -> bool {
        self.compressed
    }

    /// The next record when it is a common one ([`Record::decode_common`]); None leaves the
    /// iterator as it was, for [`Iterator::next`] to read (or explain) what comes. A caller
    /// that builds its own value from the record takes it from here without the `Result`
    /// that `next` passes through memory (shared with the checked reader's result).
    #[inline(always)]
    pub fn next_common(&mut self) -> Option<Record<'s>> {
        if self.done || self.remaining == 0 {
            return None;
        }
        let r = Record::decode_common(self.cursor.rest())?;
        self.cursor.skip(r.size_in_bytes);
        self.remaining -= 1;
        Some(r)
    }
}

impl<'s> Iterator for Records<'s> {
    type Item = Result<Record<'s>>;

    // Inlined into the walk's loop, where a record's fields that no one reads are never built.
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.remaining == 0 {
            self.done = true;
            if !self.cursor.is_empty() {
                return Some(Err(DecodeError::new(
                    ErrorKind::BadLength,
                    self.cursor.position(),
                    format!(
                        "Incorrect declared batch size, {} byte(s) still remaining after the last record",
                        self.cursor.remaining()
                    ),
                )));
            }
            return None;
        }
        self.remaining -= 1;
        let r = Record::decode(&mut self.cursor);
        if r.is_err() {
            self.done = true;
        }
        Some(r)
    }
}

/// One record to build into a batch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordSpec {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

/// Everything of a v2 batch header that the writer chooses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchSpec {
    pub base_offset: i64,
    pub partition_leader_epoch: i32,
    pub compression: Compression,
    pub compression_level: Option<i32>,
    pub timestamp_type: TimestampType,
    /// Broker append time, used as max timestamp when `timestamp_type` is LogAppendTime.
    pub log_append_time: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub is_transactional: bool,
    pub is_control: bool,
    pub delete_horizon_ms: Option<i64>,
    /// Overrides the last offset (a batch whose tail records compaction removed).
    pub last_offset: Option<i64>,
}

impl Default for BatchSpec {
    fn default() -> Self {
        BatchSpec {
            base_offset: 0,
            partition_leader_epoch: 0,
            compression: Compression::None,
            compression_level: None,
            timestamp_type: TimestampType::CreateTime,
            log_append_time: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            is_transactional: false,
            is_control: false,
            delete_horizon_ms: None,
            last_offset: None,
        }
    }
}

/// Appends the encoding of one record (length varint included) to `out`.
pub fn encode_record(
    out: &mut Vec<u8>,
    offset_delta: i32,
    timestamp_delta: i64,
    r: &RecordSpec,
) -> Result<()> {
    let headers = r.headers.iter().map(|(k, v)| (k.as_slice(), v.as_deref()));
    let parts = (r.key.as_deref(), r.value.as_deref());
    encode_record_parts(out, offset_delta, timestamp_delta, parts, headers)
}

/// [`encode_record`] from borrowed parts: the key and value, and the headers as they are
/// iterated (a decoded record's, re-encoded without copying them first).
pub fn encode_record_parts<'h>(
    out: &mut Vec<u8>,
    offset_delta: i32,
    timestamp_delta: i64,
    parts: (Option<&[u8]>, Option<&[u8]>),
    headers: impl ExactSizeIterator<Item = (&'h [u8], Option<&'h [u8]>)> + Clone,
) -> Result<()> {
    encode_record_into(out, offset_delta, timestamp_delta, parts, headers)
}

/// Where a record's encoding goes: a buffer, or a [`BatchWriter`] that hands its buffer on to
/// the compressor whenever a piece is full.
trait RecordOut {
    fn buf(&mut self) -> &mut Vec<u8>;
    /// Called between fields: a chance to hand the buffer on.
    fn step(&mut self) -> Result<()>;
}

impl RecordOut for Vec<u8> {
    fn buf(&mut self) -> &mut Vec<u8> {
        self
    }

    fn step(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Bytes of records gathered before they go on to the compressor.
const RECORD_PIECE_BYTES: usize = 64 * 1024;

/// The record as `DefaultRecord.writeTo` lays it out. Its length comes first, so a first pass
/// over the headers sizes the body; the second writes it field by field (long fields in pieces),
/// so that a record of millions of headers never needs a buffer of its own.
fn encode_record_into<'h>(
    out: &mut impl RecordOut,
    offset_delta: i32,
    timestamp_delta: i64,
    (key, value): (Option<&[u8]>, Option<&[u8]>),
    headers: impl ExactSizeIterator<Item = (&'h [u8], Option<&'h [u8]>)> + Clone,
) -> Result<()> {
    let mut body = 1 // record attributes are unused and written as 0
        + varint::varlong_size(timestamp_delta)
        + varint::varint_size(offset_delta)
        + nullable_size(key)?
        + nullable_size(value)?
        + varint::varint_size(len_i32(headers.len())?);
    for (k, v) in headers.clone() {
        body += varint::varint_size(len_i32(k.len())?) + k.len() + nullable_size(v)?;
    }
    let head = out.buf();
    varint::write_varint(head, len_i32(body)?);
    head.push(0);
    varint::write_varlong(head, timestamp_delta);
    varint::write_varint(head, offset_delta);
    put_nullable(out, key)?;
    put_nullable(out, value)?;
    varint::write_varint(out.buf(), headers.len() as i32);
    for (k, v) in headers {
        varint::write_varint(out.buf(), k.len() as i32);
        put_bytes(out, k)?;
        put_nullable(out, v)?;
    }
    Ok(())
}

fn nullable_size(b: Option<&[u8]>) -> Result<usize> {
    match b {
        None => Ok(varint::varint_size(-1)),
        Some(b) => Ok(varint::varint_size(len_i32(b.len())?) + b.len()),
    }
}

fn put_nullable(out: &mut impl RecordOut, b: Option<&[u8]>) -> Result<()> {
    match b {
        None => varint::write_varint(out.buf(), -1),
        Some(b) => {
            varint::write_varint(out.buf(), b.len() as i32);
            put_bytes(out, b)?;
        }
    }
    out.step()
}

fn put_bytes(out: &mut impl RecordOut, b: &[u8]) -> Result<()> {
    for piece in b.chunks(RECORD_PIECE_BYTES) {
        out.buf().extend_from_slice(piece);
        out.step()?;
    }
    Ok(())
}

fn len_i32(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| DecodeError::new(ErrorKind::TooLarge, 0, "length exceeds i32"))
}

/// A record's offset delta from its batch's base offset, refused unless it is in 0..=i32::MAX
/// (the builder appends at increasing offsets from the base).
pub fn offset_delta(base_offset: i64, offset: i64) -> Result<i32> {
    offset
        .checked_sub(base_offset)
        .and_then(|d| i32::try_from(d).ok())
        .filter(|d| *d >= 0)
        .ok_or_else(|| {
            DecodeError::new(
                ErrorKind::BadValue,
                0,
                format!(
                    "record offset {offset} cannot be stored relative to base offset {base_offset}"
                ),
            )
        })
}

/// Builds the exact bytes of a v2 batch, as Kafka's `MemoryRecordsBuilder` would: the base
/// timestamp is the first record's timestamp (or the delete horizon), the max timestamp the
/// largest record timestamp (or the append time for LogAppendTime).
pub fn build_batch(spec: &BatchSpec, records: &[RecordSpec]) -> Result<Vec<u8>> {
    let first_ts = records.first().map_or(-1, |r| r.timestamp);
    let base_timestamp = spec.delete_horizon_ms.unwrap_or(first_ts);
    let mut raw = Vec::new();
    let mut max_timestamp = -1i64;
    for r in records {
        let delta = offset_delta(spec.base_offset, r.offset)?;
        encode_record(&mut raw, delta, r.timestamp.wrapping_sub(base_timestamp), r)?;
        max_timestamp = max_timestamp.max(r.timestamp);
    }
    let last_offset = spec
        .last_offset
        .or_else(|| records.last().map(|r| r.offset))
        .unwrap_or(spec.base_offset);
    let count = len_i32(records.len())?;
    build_batch_of_records(
        spec,
        &raw,
        count,
        base_timestamp,
        max_timestamp,
        last_offset,
    )
}

/// [`build_batch`] over records as they come (generated ones): each goes through the batch's
/// writer ([`BatchWriter`]) and is dropped, so the cost is the built batch and a constant
/// whatever the record count; a batch growing past what its length field holds (2^31 - 1
/// bytes) is refused as soon as it does, not once built.
pub fn build_batch_streamed(
    spec: &BatchSpec,
    records: impl Iterator<Item = RecordSpec>,
) -> Result<Vec<u8>> {
    let mut records = records.peekable();
    let first_ts = records.peek().map_or(-1, |r| r.timestamp);
    let base_timestamp = spec.delete_horizon_ms.unwrap_or(first_ts);
    let mut writer = BatchWriter::new(spec)?;
    let (mut max_timestamp, mut count, mut last) = (-1i64, 0usize, None);
    for r in records {
        let delta = offset_delta(spec.base_offset, r.offset)?;
        let headers = r.headers.iter().map(|(k, v)| (k.as_slice(), v.as_deref()));
        writer.record_parts(
            delta,
            r.timestamp.wrapping_sub(base_timestamp),
            (r.key.as_deref(), r.value.as_deref()),
            headers,
        )?;
        if writer.out.len() > i32::MAX as usize {
            return Err(DecodeError::new(
                ErrorKind::TooLarge,
                0,
                format!(
                    "the batch passed 2^31 - 1 bytes (the most its length field holds) at its \
                     record {count}"
                ),
            ));
        }
        max_timestamp = max_timestamp.max(r.timestamp);
        count += 1;
        last = Some(r.offset);
    }
    let last_offset = spec.last_offset.or(last).unwrap_or(spec.base_offset);
    writer.finish(len_i32(count)?, base_timestamp, max_timestamp, last_offset)
}

/// Builds a v2 batch around `raw`, the records area before compression (`count` records
/// encoded as [`encode_record`] does), with the given header timestamps and last offset; the
/// max timestamp becomes the append time for LogAppendTime. [`build_batch`] is this after
/// encoding its records; tests build records no [`RecordSpec`] can hold cheaply through it
/// (a record of millions of headers).
pub fn build_batch_of_records(
    spec: &BatchSpec,
    raw: &[u8],
    count: i32,
    base_timestamp: i64,
    max_timestamp: i64,
    last_offset: i64,
) -> Result<Vec<u8>> {
    let mut writer = BatchWriter::new(spec)?;
    writer.compressor.write(raw, &mut writer.out)?;
    writer.finish(count, base_timestamp, max_timestamp, last_offset)
}

/// [`build_batch_of_records`] with the records encoded one by one: they reach the compressor
/// in pieces of about 64 KiB, which writes into the batch's buffer after the header slot, so
/// the uncompressed records area never exists whole (a rebuilt batch costs its compressed size
/// and a constant). The header is filled in by [`BatchWriter::finish`].
pub struct BatchWriter<'s> {
    spec: &'s BatchSpec,
    out: Vec<u8>,
    compressor: codec::Compressor,
    piece: Vec<u8>,
}

impl<'s> BatchWriter<'s> {
    pub fn new(spec: &'s BatchSpec) -> Result<Self> {
        let mut out = vec![0u8; RECORD_BATCH_OVERHEAD_BYTES];
        let compressor =
            codec::Compressor::new(spec.compression, spec.compression_level, MAGIC_V2, &mut out)?;
        Ok(BatchWriter {
            spec,
            out,
            compressor,
            piece: Vec::new(),
        })
    }

    /// Appends one record, as [`encode_record_parts`] encodes it.
    pub fn record_parts<'h>(
        &mut self,
        offset_delta: i32,
        timestamp_delta: i64,
        parts: (Option<&[u8]>, Option<&[u8]>),
        headers: impl ExactSizeIterator<Item = (&'h [u8], Option<&'h [u8]>)> + Clone,
    ) -> Result<()> {
        encode_record_into(self, offset_delta, timestamp_delta, parts, headers)
    }

    /// The batch's bytes, its header filled in (see [`build_batch_of_records`]).
    pub fn finish(
        mut self,
        count: i32,
        base_timestamp: i64,
        mut max_timestamp: i64,
        last_offset: i64,
    ) -> Result<Vec<u8>> {
        let spec = self.spec;
        self.compressor.write(&self.piece, &mut self.out)?;
        self.compressor.finish(&mut self.out)?;
        let mut out = self.out;
        if spec.timestamp_type == TimestampType::LogAppendTime {
            max_timestamp = spec.log_append_time;
        }
        let mut attrs = i16::from(spec.compression.id());
        if spec.timestamp_type == TimestampType::LogAppendTime {
            attrs |= attributes::TIMESTAMP_TYPE_LOG_APPEND_TIME;
        }
        if spec.is_transactional {
            attrs |= attributes::TRANSACTIONAL;
        }
        if spec.is_control {
            attrs |= attributes::CONTROL;
        }
        if spec.delete_horizon_ms.is_some() {
            attrs |= attributes::DELETE_HORIZON;
        }
        let header = BatchHeader {
            base_offset: spec.base_offset,
            length: len_i32(out.len() - LOG_OVERHEAD_BYTES)?,
            partition_leader_epoch: spec.partition_leader_epoch,
            magic: MAGIC_V2,
            crc: 0,
            attributes: attrs,
            last_offset_delta: len_i32((last_offset - spec.base_offset).max(0) as usize)?,
            base_timestamp,
            max_timestamp,
            producer_id: spec.producer_id,
            producer_epoch: spec.producer_epoch,
            base_sequence: spec.base_sequence,
            record_count: count,
        };
        header.encode_into(&mut out);
        let crc = crc32c::crc32c(&out[CRC_COVERAGE_START..]);
        out[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
        debug_assert_eq!(out[MAGIC_OFFSET], MAGIC_V2 as u8);
        Ok(out)
    }
}

impl RecordOut for BatchWriter<'_> {
    fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.piece
    }

    fn step(&mut self) -> Result<()> {
        if self.piece.len() >= RECORD_PIECE_BYTES {
            self.compressor.write(&self.piece, &mut self.out)?;
            self.piece.clear();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::test_util::hex;

    /// A record's bytes from its fields as `DefaultRecord.writeTo` lays them out, with `flip`
    /// (position, xor) applied afterwards: mostly the small varints of the fast path, and
    /// every kind of damage one byte can do to them.
    fn record_bytes(
        ts: i64,
        od: i32,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: i32,
        flip: Option<(usize, u8)>,
    ) -> Vec<u8> {
        let mut body = vec![0];
        varint::write_varlong(&mut body, ts);
        varint::write_varint(&mut body, od);
        for field in [key, value] {
            match field {
                None => varint::write_varint(&mut body, -1),
                Some(b) => {
                    varint::write_varint(&mut body, b.len() as i32);
                    body.extend_from_slice(b);
                }
            }
        }
        varint::write_varint(&mut body, headers);
        for _ in 0..headers {
            body.extend_from_slice(&[2, b'h', 2]);
        }
        let mut out = Vec::new();
        varint::write_varint(&mut out, body.len() as i32);
        out.extend_from_slice(&body);
        if let Some((at, x)) = flip {
            let at = at % out.len();
            out[at] ^= x;
        }
        out
    }

    proptest::proptest! {
        /// The fast path agrees with the checked reader wherever it answers: the same record,
        /// the same bytes consumed (and it may only decline, never accept what is refused).
        #[test]
        fn the_common_record_path_reads_as_the_checked_reader(
            ts in proptest::prop_oneof![-70_000i64..70_000, proptest::num::i64::ANY],
            od in proptest::prop_oneof![0i32..70_000, proptest::num::i32::ANY],
            key in proptest::option::of(proptest::collection::vec(proptest::num::u8::ANY, 0..300)),
            value in proptest::option::of(proptest::collection::vec(proptest::num::u8::ANY, 0..300)),
            headers in 0i32..3,
            flip in proptest::option::of((0usize..1000, 1u8..=255)),
            tail in proptest::collection::vec(proptest::num::u8::ANY, 0..4),
        ) {
            let mut bytes = record_bytes(ts, od, key.as_deref(), value.as_deref(), headers, flip);
            bytes.extend_from_slice(&tail);
            let checked = Record::decode_checked(&mut Cursor::new(&bytes));
            if let Some(fast) = Record::decode_common(&bytes) {
                let checked = checked.expect("the checked reader accepts what the fast path does");
                proptest::prop_assert_eq!(fast, checked);
            }
        }
    }

    /// One record body (attributes, timestamp delta, offset delta, null key, null value) with
    /// the header count `count` followed by `tail`.
    fn record_with_header_bytes(count: i32, tail: &[u8]) -> Vec<u8> {
        let mut body = vec![0, 0, 0, 1, 1];
        varint::write_varint(&mut body, count);
        body.extend_from_slice(tail);
        let mut out = Vec::new();
        varint::write_varint(&mut out, body.len() as i32);
        out.extend_from_slice(&body);
        out
    }

    #[test]
    fn header_counts_are_bounded_by_the_bytes_that_can_hold_them() {
        // Three headers of 2 bytes each (key length 0, value length -1): exactly enough.
        let ok = record_with_header_bytes(3, &[0, 1, 0, 1, 0, 1]);
        let r = Record::decode(&mut Cursor::new(&ok)).unwrap();
        assert_eq!(r.headers.len(), 3);
        let all: Vec<_> = r.headers.iter().collect();
        assert!(all.iter().all(|h| h.key.is_empty() && h.value.is_none()));
        assert_eq!(r.size_in_bytes, ok.len());
        // Four in 6 bytes, or 100 M (the hostile count) in 6 bytes: refused at the
        // count, before any header is read (the count's position is byte 6 of the record).
        for count in [4, 100_000_000, i32::MAX] {
            let bad = record_with_header_bytes(count, &[0, 1, 0, 1, 0, 1]);
            let e = Record::decode(&mut Cursor::new(&bad)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::BadLength, "{count}");
            assert!(
                e.message.contains("number of record headers"),
                "{}",
                e.message
            );
            assert_eq!(e.pos, 6, "{count}");
        }
        // A header whose key length runs past the record: the header's own error.
        let long_key = record_with_header_bytes(1, &[0x7e, 1]);
        let e = Record::decode(&mut Cursor::new(&long_key)).unwrap_err();
        assert!(e.message.contains("header key"), "{}", e.message);
    }

    /// Batch A of formats.md §3.6, byte for byte.
    fn batch_a_bytes() -> Vec<u8> {
        hex(
            "00 00 00 00 00 00 00 00  00 00 00 49  00 00 00 00  02  cb f4 13 99  00 00  00 00 00 01
             00 00 01 8b cf e5 68 00  00 00 01 8b cf e5 68 05  ff ff ff ff ff ff ff ff  ff ff
             ff ff ff ff  00 00 00 02
             1c 00 00 00 04 6b 30 04 76 30 02 02 68 02 78
             10 00 0a 02 01 04 76 31 00",
        )
    }

    #[test]
    fn decodes_documented_batch() {
        let bytes = batch_a_bytes();
        assert_eq!(bytes.len(), 85);
        let b = BatchV2::decode(&bytes).unwrap();
        assert_eq!(b.header.crc, 3421770649);
        assert!(b.crc_is_valid());
        assert_eq!(b.header.last_offset(), 1);
        assert_eq!(b.header.max_timestamp, 1700000000005);
        assert_eq!(b.header.last_sequence(), -1);
        let mut scratch = Vec::new();
        let recs: Vec<_> = b
            .records(&mut scratch, 1 << 20)
            .unwrap()
            .collect::<Result<_>>()
            .unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].key, Some(&b"k0"[..]));
        assert_eq!(recs[0].value, Some(&b"v0"[..]));
        assert_eq!(
            recs[0].headers.iter().collect::<Vec<_>>(),
            vec![RecordHeader {
                key: b"h",
                value: Some(b"x")
            }]
        );
        assert_eq!(recs[0].size_in_bytes, 15);
        assert_eq!(recs[1].key, None);
        assert_eq!(recs[1].timestamp_delta, 5);
        assert_eq!(recs[1].offset_delta, 1);
        assert_eq!(recs[1].size_in_bytes, 9);
    }

    #[test]
    fn builder_reproduces_documented_batch() {
        let spec = BatchSpec {
            base_offset: 0,
            partition_leader_epoch: 0,
            ..Default::default()
        };
        let recs = vec![
            RecordSpec {
                offset: 0,
                timestamp: 1700000000000,
                key: Some(b"k0".to_vec()),
                value: Some(b"v0".to_vec()),
                headers: vec![(b"h".to_vec(), Some(b"x".to_vec()))],
            },
            RecordSpec {
                offset: 1,
                timestamp: 1700000000005,
                key: None,
                value: Some(b"v1".to_vec()),
                headers: vec![],
            },
        ];
        assert_eq!(build_batch(&spec, &recs).unwrap(), batch_a_bytes());
    }

    #[test]
    fn crc_covers_attributes_onward_only() {
        let mut bytes = batch_a_bytes();
        bytes[12] = 9; // partition leader epoch: outside the CRC
        assert!(BatchV2::decode(&bytes).unwrap().crc_is_valid());
        bytes[21] ^= 0x08; // attributes: inside
        assert!(!BatchV2::decode(&bytes).unwrap().crc_is_valid());
    }

    #[test]
    fn record_count_mismatch_is_reported() {
        let mut bytes = batch_a_bytes();
        bytes[60] = 1; // count 1 but two records present
        let b = BatchV2::decode(&bytes).unwrap();
        let mut scratch = Vec::new();
        let out: Vec<_> = b.records(&mut scratch, 1 << 20).unwrap().collect();
        assert_eq!(out.len(), 2);
        assert!(out[0].is_ok());
        let e = out[1].as_ref().unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadLength);
        assert_eq!(e.pos, 15);
    }

    #[test]
    fn sequences_wrap() {
        let mut h = BatchV2::decode(&batch_a_bytes()).unwrap().header;
        h.base_sequence = i32::MAX;
        h.last_offset_delta = 1;
        assert_eq!(h.last_sequence(), 0);
    }

    #[test]
    fn truncated_batch_never_panics() {
        let bytes = batch_a_bytes();
        for n in 0..bytes.len() {
            let _ = BatchV2::decode(&bytes[..n]);
            let _ = BatchHeader::decode(&bytes[..n]);
        }
        for i in 0..bytes.len() {
            for bit in [0x01u8, 0x80] {
                let mut b = bytes.clone();
                b[i] ^= bit;
                if let Ok(batch) = BatchV2::decode(&b) {
                    let mut scratch = Vec::new();
                    if let Ok(recs) = batch.records(&mut scratch, 1 << 20) {
                        for _ in recs {}
                    }
                }
            }
        }
    }
}
