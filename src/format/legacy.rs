//! Legacy message sets, magic v0 and v1 (formats.md §4): one message per log entry, or one
//! compressed wrapper message whose value holds an inner message set.
//!
//! Owns: the message layout, its CRC32 (IEEE, from the magic byte on), wrapper unpacking with
//! Kafka's offset rules, and the builder. Not the codecs (see `codec`).

use super::batch::{RecordSpec, TimestampType, LOG_OVERHEAD_BYTES, MIN_ENTRY_SIZE_FIELD};
use super::codec::{self, Compression};
use super::cursor::Cursor;
use super::error::{DecodeError, ErrorKind, Result};

/// Entry bytes before the magic byte: offset (8), size (4), crc (4).
const MAGIC_OFFSET: usize = 16;
/// The message CRC sits right after the log overhead.
const CRC_OFFSET: usize = 12;
const ATTRIBUTE_CODEC_MASK: i8 = 0x07;
const ATTRIBUTE_LOG_APPEND_TIME: i8 = 0x08;
/// Timestamp readers return when a message has none (magic v0).
pub const NO_TIMESTAMP: i64 = -1;

/// One v0/v1 message (a whole log entry, or an inner message of a wrapper).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyMessage<'a> {
    /// The stored offset field: absolute for top-level entries and v0 inner messages,
    /// relative for v1 inner messages (see [`LegacyMessage::inner_messages`]).
    pub offset: i64,
    pub crc: u32,
    pub magic: i8,
    pub attributes: i8,
    /// -1 for v0.
    pub timestamp: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    bytes: &'a [u8],
}

/// An inner message with its absolute offset and the timestamp a reader sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InnerMessage<'a> {
    pub message: LegacyMessage<'a>,
    pub absolute_offset: i64,
    /// The wrapper's timestamp when the wrapper is LogAppendTime, else the message's own.
    pub timestamp: i64,
}

impl<'a> LegacyMessage<'a> {
    /// Decodes one whole entry (offset, size, message) occupying all of `entry`.
    pub fn decode(entry: &'a [u8]) -> Result<Self> {
        let mut c = Cursor::new(entry);
        let offset = c.i64("offset")?;
        let size = c.i32("message size")?;
        if size < MIN_ENTRY_SIZE_FIELD || size as usize != c.remaining() {
            return Err(DecodeError::new(
                ErrorKind::BadLength,
                8,
                format!(
                    "message size field {size} does not match the {} byte(s) of the entry",
                    c.remaining()
                ),
            ));
        }
        let crc = c.u32("crc")?;
        let magic = c.i8("magic")?;
        if !(0..=1).contains(&magic) {
            return Err(DecodeError::new(
                ErrorKind::BadValue,
                MAGIC_OFFSET,
                format!("Invalid magic used in LegacyRecord: {magic}"),
            ));
        }
        let attributes = c.i8("attributes")?;
        let timestamp = if magic == 0 {
            NO_TIMESTAMP
        } else {
            c.i64("timestamp")?
        };
        let key_len = c.i32("key length")?;
        let key = c.nullable_bytes(i64::from(key_len), "key")?;
        let value_len = c.i32("value length")?;
        let value = c.nullable_bytes(i64::from(value_len), "value")?;
        Ok(LegacyMessage {
            offset,
            crc,
            magic,
            attributes,
            timestamp,
            key,
            value,
            bytes: entry,
        })
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }

    pub fn compute_crc(&self) -> u32 {
        crc32fast::hash(&self.bytes[MAGIC_OFFSET..])
    }

    /// Kafka's `isValid`: at least a v0 message and the stored CRC32 matches.
    pub fn crc_is_valid(&self) -> bool {
        self.bytes.len() >= LOG_OVERHEAD_BYTES + MIN_ENTRY_SIZE_FIELD as usize
            && self.compute_crc() == self.crc
    }

    pub fn compression(&self) -> Result<Compression> {
        Compression::from_id((self.attributes & ATTRIBUTE_CODEC_MASK) as u8)
            .map_err(|e| e.shifted(MAGIC_OFFSET + 1))
    }

    pub fn timestamp_type(&self) -> TimestampType {
        if self.magic == 0 {
            TimestampType::NoTimestampType
        } else if self.attributes & ATTRIBUTE_LOG_APPEND_TIME != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    pub fn is_compressed(&self) -> bool {
        self.attributes & ATTRIBUTE_CODEC_MASK != 0
    }

    /// Unpacks a compressed wrapper: decompresses its value into `scratch` and returns its
    /// inner messages with absolute offsets (v1: relative to `wrapper offset − last inner
    /// offset`, where a wrapper offset of 0 means base 0) and reader timestamps. Every check
    /// Kafka makes of the set is made here, in one pass over the decompressed bytes that keeps
    /// nothing; the messages are then decoded again as they are iterated, so a set of
    /// millions of tiny messages costs its decompressed bytes only.
    pub fn inner_messages<'s>(
        &self,
        scratch: &'s mut Vec<u8>,
        limit: usize,
    ) -> Result<InnerMessages<'s>> {
        let codec = self.compression()?;
        if codec == Compression::Zstd {
            return Err(DecodeError::new(
                ErrorKind::BadValue,
                MAGIC_OFFSET + 1,
                "zstd compression is not allowed for magic v0/v1 messages",
            ));
        }
        let Some(value) = self.value else {
            return Err(DecodeError::new(
                ErrorKind::BadValue,
                MAGIC_OFFSET,
                "Found invalid compressed record set with null value",
            ));
        };
        let value_pos = self.bytes.len() - value.len();
        codec::decompress(codec, self.magic, value, limit, scratch)
            .map_err(|e| e.shifted(value_pos))?;
        let mut inner = InnerMessages {
            data: scratch.as_slice(),
            pos: 0,
            value_pos,
            base: None,
            wrapper_timestamp: (self.timestamp_type() == TimestampType::LogAppendTime)
                .then_some(self.timestamp),
        };
        let (mut last, mut largest) = (None, i64::MIN);
        let mut check = inner.clone();
        while let Some(m) = check.next_message()? {
            last = Some(m.offset);
            largest = largest.max(m.offset);
        }
        let Some(last_relative) = last else {
            return Err(DecodeError::new(
                ErrorKind::BadValue,
                value_pos,
                "Found invalid compressed record set with no inner records",
            ));
        };
        if self.magic > 0 {
            let base = if self.offset == 0 {
                0
            } else if self.offset < last_relative {
                return Err(DecodeError::new(
                    ErrorKind::BadValue,
                    0,
                    format!(
                        "Found invalid wrapper offset in compressed v1 message set, wrapper offset '{}' is less than the last inner message offset '{last_relative}'",
                        self.offset
                    ),
                ));
            } else {
                // Kafka subtracts unchecked; a difference past i64 has no absolute offsets.
                self.offset
                    .checked_sub(last_relative)
                    .ok_or_else(|| inner_offset_error(value_pos, last_relative, self.offset))?
            };
            // base ≥ 0: only offsets above i64::MAX − base have no absolute offset; the first
            // of them is the one named.
            if base.checked_add(largest).is_none() {
                let mut find = inner.clone();
                while let Some(m) = find.next_message()? {
                    if base.checked_add(m.offset).is_none() {
                        return Err(inner_offset_error(value_pos, m.offset, self.offset));
                    }
                }
            }
            inner.base = Some(base);
        }
        Ok(inner)
    }
}

/// The inner messages of a compressed wrapper, decoded from its decompressed bytes as they
/// are iterated ([`LegacyMessage::inner_messages`] checked them all). A clone iterates them
/// again.
#[derive(Debug, Clone)]
pub struct InnerMessages<'s> {
    data: &'s [u8],
    pos: usize,
    /// Where the wrapper's value starts in the wrapper, the position errors name.
    value_pos: usize,
    /// v1: the base of the relative inner offsets.
    base: Option<i64>,
    /// The wrapper's timestamp when the wrapper is LogAppendTime.
    wrapper_timestamp: Option<i64>,
}

impl<'s> InnerMessages<'s> {
    /// The next inner message, its offset as written; None at the end of the set (an
    /// incomplete inner entry silently ends it, as in Kafka).
    fn next_message(&mut self) -> Result<Option<LegacyMessage<'s>>> {
        let (data, pos) = (self.data, self.pos);
        if data.len() - pos < LOG_OVERHEAD_BYTES {
            return Ok(None);
        }
        let size = i32::from_be_bytes(data[pos + 8..pos + 12].try_into().expect("4 bytes"));
        if size < MIN_ENTRY_SIZE_FIELD {
            return Err(DecodeError::new(
                ErrorKind::BadLength,
                self.value_pos,
                format!(
                    "inner message at decompressed byte {pos}: record size {size} is smaller than the minimum record overhead (14)"
                ),
            ));
        }
        let end = pos + LOG_OVERHEAD_BYTES + size as usize;
        if end > data.len() {
            return Ok(None);
        }
        let m = LegacyMessage::decode(&data[pos..end]).map_err(|e| {
            DecodeError::new(
                e.kind,
                self.value_pos,
                format!("inner message at decompressed byte {pos}: {}", e.message),
            )
        })?;
        if m.is_compressed() {
            return Err(DecodeError::new(
                ErrorKind::BadValue,
                self.value_pos,
                "Inner messages must not be compressed",
            ));
        }
        self.pos = end;
        Ok(Some(m))
    }
}

impl<'s> Iterator for InnerMessages<'s> {
    type Item = InnerMessage<'s>;

    fn next(&mut self) -> Option<InnerMessage<'s>> {
        // Checked when the set was unpacked: no error comes here.
        let m = self.next_message().ok()??;
        Some(InnerMessage {
            message: m,
            absolute_offset: self.base.map_or(m.offset, |b| b.saturating_add(m.offset)),
            timestamp: self.wrapper_timestamp.unwrap_or(m.timestamp),
        })
    }
}

/// An inner message whose relative `offset` has no absolute offset under the wrapper's.
fn inner_offset_error(pos: usize, offset: i64, wrapper_offset: i64) -> DecodeError {
    DecodeError::new(
        ErrorKind::BadValue,
        pos,
        format!(
            "inner message offset {offset} has no absolute offset within 64 bits under wrapper offset {wrapper_offset}"
        ),
    )
}

/// Appends one uncompressed-layout message entry to `out`.
#[allow(clippy::too_many_arguments)]
pub fn encode_message(
    out: &mut Vec<u8>,
    magic: i8,
    offset: i64,
    attributes: i8,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<()> {
    let header = if magic == 0 { 6 } else { 14 };
    let size = header + 8 + key.map_or(0, <[u8]>::len) + value.map_or(0, <[u8]>::len);
    let size = i32::try_from(size)
        .map_err(|_| DecodeError::new(ErrorKind::TooLarge, 0, "message larger than 2 GiB"))?;
    let start = out.len();
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&size.to_be_bytes());
    out.extend_from_slice(&[0; 4]); // crc, filled below
    out.push(magic as u8);
    out.push(attributes as u8);
    if magic > 0 {
        out.extend_from_slice(&timestamp.to_be_bytes());
    }
    for field in [key, value] {
        match field {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(b) => {
                out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                out.extend_from_slice(b);
            }
        }
    }
    let crc = crc32fast::hash(&out[start + MAGIC_OFFSET..]);
    out[start + CRC_OFFSET..start + CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// What a legacy message set is built with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacySetSpec {
    pub magic: i8,
    pub compression: Compression,
    pub compression_level: Option<i32>,
    pub timestamp_type: TimestampType,
    pub log_append_time: i64,
}

/// Builds a v0/v1 message set the way `MemoryRecordsBuilder` does: one message per record
/// when uncompressed, else one wrapper (offset = last offset) around the inner set, whose
/// v1 offsets are relative to the first record. LogAppendTime stamps the append time.
pub fn build_message_set(spec: &LegacySetSpec, records: &[RecordSpec]) -> Result<Vec<u8>> {
    if !(0..=1).contains(&spec.magic) {
        return Err(DecodeError::new(
            ErrorKind::BadValue,
            0,
            "legacy magic must be 0 or 1",
        ));
    }
    if spec.compression == Compression::Zstd {
        return Err(DecodeError::new(
            ErrorKind::BadValue,
            0,
            "zstd compression is not allowed for magic v0/v1 messages",
        ));
    }
    let log_append = spec.magic > 0 && spec.timestamp_type == TimestampType::LogAppendTime;
    let ts_attr = if log_append {
        ATTRIBUTE_LOG_APPEND_TIME
    } else {
        0
    };
    let stamp = |r: &RecordSpec| {
        if spec.magic == 0 {
            NO_TIMESTAMP
        } else if log_append {
            spec.log_append_time
        } else {
            r.timestamp
        }
    };
    let mut inner = Vec::new();
    let base_offset = records.first().map_or(0, |r| r.offset);
    let relative = spec.magic > 0 && spec.compression != Compression::None;
    for r in records {
        let offset = if relative {
            r.offset - base_offset
        } else {
            r.offset
        };
        encode_message(
            &mut inner,
            spec.magic,
            offset,
            ts_attr,
            stamp(r),
            r.key.as_deref(),
            r.value.as_deref(),
        )?;
    }
    if spec.compression == Compression::None {
        return Ok(inner);
    }
    let mut compressed = Vec::new();
    codec::compress(
        spec.compression,
        spec.compression_level,
        spec.magic,
        &inner,
        &mut compressed,
    )?;
    let wrapper_ts = if log_append {
        spec.log_append_time
    } else {
        records
            .iter()
            .map(|r| r.timestamp)
            .max()
            .unwrap_or(NO_TIMESTAMP)
    };
    let mut out = Vec::with_capacity(compressed.len() + 34);
    let last_offset = records.last().map_or(0, |r| r.offset);
    encode_message(
        &mut out,
        spec.magic,
        last_offset,
        spec.compression.id() as i8 | ts_attr,
        wrapper_ts,
        None,
        Some(&compressed),
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::test_util::hex;

    #[test]
    fn documented_v1_and_v0_messages() {
        // formats.md §4.4
        let v1 = hex(
            "00 00 00 00 00 00 00 05  00 00 00 18  1d 52 30 6d  01  00  00 00 01 8b cf e5 68 00
                      ff ff ff ff  00 00 00 02  76 30",
        );
        let m = LegacyMessage::decode(&v1).unwrap();
        assert_eq!(
            (m.offset, m.crc, m.magic, m.timestamp),
            (5, 491925613, 1, 1700000000000)
        );
        assert!(m.crc_is_valid());
        assert_eq!(m.key, None);
        assert_eq!(m.value, Some(&b"v0"[..]));
        let v0 = hex(
            "00 00 00 00 00 00 00 05 00 00 00 10 3b 98 6b 54 00 00 ff ff ff ff 00 00 00 02 76 30",
        );
        let m0 = LegacyMessage::decode(&v0).unwrap();
        assert_eq!(
            (m0.crc, m0.timestamp, m0.timestamp_type()),
            (999844692, -1, TimestampType::NoTimestampType)
        );
        assert!(m0.crc_is_valid());

        let mut built = Vec::new();
        encode_message(&mut built, 1, 5, 0, 1700000000000, None, Some(b"v0")).unwrap();
        assert_eq!(built, v1);
        built.clear();
        encode_message(&mut built, 0, 5, 0, -1, None, Some(b"v0")).unwrap();
        assert_eq!(built, v0);
    }

    #[test]
    fn crc_starts_at_magic() {
        let mut v0 = hex(
            "00 00 00 00 00 00 00 05 00 00 00 10 3b 98 6b 54 00 00 ff ff ff ff 00 00 00 02 76 30",
        );
        v0[7] = 9; // offset: not covered
        assert!(LegacyMessage::decode(&v0).unwrap().crc_is_valid());
        v0[27] ^= 1; // value: covered
        assert!(!LegacyMessage::decode(&v0).unwrap().crc_is_valid());
    }

    #[test]
    fn negative_magic_is_rejected() {
        let mut v0 = hex(
            "00 00 00 00 00 00 00 05 00 00 00 10 3b 98 6b 54 00 00 ff ff ff ff 00 00 00 02 76 30",
        );
        v0[16] = 0xff;
        let e = LegacyMessage::decode(&v0).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadValue);
        assert_eq!(e.pos, 16);
    }

    #[test]
    fn uncompressed_set_is_one_message_per_record() {
        let recs: Vec<RecordSpec> = (10..13)
            .map(|o| RecordSpec {
                offset: o,
                timestamp: 1000 + o,
                key: Some(vec![b'k']),
                value: None,
                headers: vec![],
            })
            .collect();
        let spec = LegacySetSpec {
            magic: 1,
            compression: Compression::None,
            compression_level: None,
            timestamp_type: TimestampType::LogAppendTime,
            log_append_time: 77,
        };
        let bytes = build_message_set(&spec, &recs).unwrap();
        let one = 12 + 14 + 8 + 1;
        assert_eq!(bytes.len(), 3 * one);
        let m = LegacyMessage::decode(&bytes[one..2 * one]).unwrap();
        assert_eq!(
            (m.offset, m.timestamp, m.timestamp_type()),
            (11, 77, TimestampType::LogAppendTime)
        );
        assert!(m.crc_is_valid());
    }

    #[test]
    fn truncated_and_flipped_never_panic() {
        let v1 = hex(
            "00 00 00 00 00 00 00 05  00 00 00 18  1d 52 30 6d  01  00  00 00 01 8b cf e5 68 00
                      ff ff ff ff  00 00 00 02  76 30",
        );
        for n in 0..v1.len() {
            let _ = LegacyMessage::decode(&v1[..n]);
        }
        for i in 0..v1.len() {
            let mut b = v1.clone();
            b[i] ^= 0xff;
            let _ = LegacyMessage::decode(&b);
        }
    }
}
