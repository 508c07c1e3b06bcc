//! The producer state snapshot `.snapshot` (formats.md §8), version 1, and the sequence number
//! arithmetic of formats.md §3.5.
//!
//! This module owns the snapshot layout in both directions: a 10-byte header (version int16,
//! CRC-32C uint32 over everything after byte 6, entry count int32) then 46-byte entries. Decoding
//! follows Kafka's reader, including the order of its checks (schema first, then CRC) and its
//! error texts; encoding produces the bytes Kafka writes, with the entries in the caller's order
//! (Kafka's order is its hash map's iteration order).

use serde::Serialize;

use super::cursor::Cursor;
use super::error::{DecodeError, ErrorKind, Result};

/// The only snapshot version Kafka reads and writes.
pub const PRODUCER_SNAPSHOT_VERSION: i16 = 1;
/// Byte position of the CRC field.
pub const PRODUCER_SNAPSHOT_CRC_AT_BYTES: usize = 2;
/// Byte position where the CRC-covered part (entry count and entries) begins.
pub const PRODUCER_SNAPSHOT_CRC_COVERAGE_START_BYTES: usize = 6;
/// Version + CRC + entry count.
pub const PRODUCER_SNAPSHOT_HEADER_BYTES: usize = 10;
/// One producer entry.
pub const PRODUCER_SNAPSHOT_ENTRY_BYTES: usize = 46;
/// "No sequence" in Kafka's producer state.
pub const NO_SEQUENCE: i32 = -1;

/// A decoded `.snapshot` file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProducerSnapshot {
    pub version: i16,
    /// The stored CRC (checked equal to the computed one by [`decode`]).
    pub crc: u32,
    pub entries: Vec<ProducerSnapshotEntry>,
}

/// One producer's state as stored (field names follow `ProducerSnapshot.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProducerSnapshotEntry {
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// Last sequence of the newest retained batch (-1 if none).
    pub last_sequence: i32,
    /// Last offset of the newest retained batch (-1 if none).
    pub last_offset: i64,
    /// `last_offset − first offset` of that batch (0 if none).
    pub offset_delta: i32,
    pub timestamp: i64,
    pub coordinator_epoch: i32,
    /// First offset of the ongoing transaction, -1 if none.
    pub current_txn_first_offset: i64,
}

impl ProducerSnapshotEntry {
    /// Kafka keeps batch metadata for the entry only if `last_offset ≥ 0`.
    pub fn has_batch_metadata(&self) -> bool {
        self.last_offset >= 0
    }

    /// First sequence of the retained batch (`decrementSequence(last, delta)`), or -1 without
    /// batch metadata, as Kafka's `ProducerStateEntry.firstSeq` reports it.
    pub fn first_sequence(&self) -> i32 {
        if self.has_batch_metadata() {
            decrement_sequence(self.last_sequence, self.offset_delta)
        } else {
            NO_SEQUENCE
        }
    }

    /// First offset of the retained batch (`last_offset − offset_delta`), or -1 without batch
    /// metadata.
    pub fn first_offset(&self) -> i64 {
        if self.has_batch_metadata() {
            self.last_offset.wrapping_sub(i64::from(self.offset_delta))
        } else {
            -1
        }
    }

    /// The ongoing transaction's first offset, present only if ≥ 0.
    pub fn current_txn_first_offset(&self) -> Option<i64> {
        (self.current_txn_first_offset >= 0).then_some(self.current_txn_first_offset)
    }
}

/// Kafka's `incrementSequence`: `s + d`, wrapping past `i32::MAX` to 0 (never negative).
pub fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    if sequence > i32::MAX.wrapping_sub(increment) {
        increment
            .wrapping_sub(i32::MAX.wrapping_sub(sequence))
            .wrapping_sub(1)
    } else {
        sequence.wrapping_add(increment)
    }
}

/// Kafka's `decrementSequence`: `s − d`, wrapping below 0 to `i32::MAX`.
pub fn decrement_sequence(sequence: i32, decrement: i32) -> i32 {
    if sequence < decrement {
        i32::MAX
            .wrapping_sub(decrement.wrapping_sub(sequence))
            .wrapping_add(1)
    } else {
        sequence.wrapping_sub(decrement)
    }
}

/// CRC-32C of the covered part of a snapshot file (bytes 6..end); 0-length coverage if shorter.
pub fn compute_crc(bytes: &[u8]) -> u32 {
    crc32c::crc32c(
        bytes
            .get(PRODUCER_SNAPSHOT_CRC_COVERAGE_START_BYTES..)
            .unwrap_or(&[]),
    )
}

const SCHEMA_ERROR_PREFIX: &str = "Snapshot failed schema validation: ";

/// Kafka's message for bytes running out while parsing (`BufferUnderflowException` has no
/// message, so Kafka's text ends in "null"); the position says where.
fn underflow(e: DecodeError) -> DecodeError {
    DecodeError::new(
        ErrorKind::Truncated,
        e.pos,
        format!("{SCHEMA_ERROR_PREFIX}null"),
    )
}

/// Trailing bytes after the entries a snapshot is read with ([`max_len`]): the broker never
/// writes any, but reads them (under the CRC) when there.
pub const PRODUCER_SNAPSHOT_MAX_TRAILING_BYTES: u64 = 1 << 20;

/// The most bytes a `.snapshot` beginning with `head` (its first bytes, up to the header's)
/// is read with: the header, the entries its count announces, and
/// [`PRODUCER_SNAPSHOT_MAX_TRAILING_BYTES`]; past that, nothing [`decode`] could use.
pub fn max_len(head: &[u8]) -> u64 {
    let count = head
        .get(PRODUCER_SNAPSHOT_CRC_COVERAGE_START_BYTES..PRODUCER_SNAPSHOT_HEADER_BYTES)
        .map_or(0, |b| {
            i32::from_be_bytes([b[0], b[1], b[2], b[3]]).max(0) as u64
        });
    PRODUCER_SNAPSHOT_HEADER_BYTES as u64
        + count * PRODUCER_SNAPSHOT_ENTRY_BYTES as u64
        + PRODUCER_SNAPSHOT_MAX_TRAILING_BYTES
}

/// Decodes a whole `.snapshot` file as Kafka's `readSnapshot` does: version (must be 1), the
/// message body (CRC, entry array), then the CRC check. Bytes after the last entry are not
/// parsed but are covered by the CRC. Error messages are Kafka's `CorruptSnapshotException`
/// texts.
pub fn decode(bytes: &[u8]) -> Result<ProducerSnapshot> {
    let mut c = Cursor::new(bytes);
    let version = c.i16("snapshot version").map_err(underflow)?;
    if version != PRODUCER_SNAPSHOT_VERSION {
        return Err(DecodeError::new(
            ErrorKind::BadValue,
            0,
            format!("{SCHEMA_ERROR_PREFIX}Snapshot contained an unknown file version {version}"),
        ));
    }
    let crc = c.u32("snapshot crc").map_err(underflow)?;
    let count_at = c.position();
    let count = c.i32("producer entry count").map_err(underflow)?;
    if count < 0 {
        return Err(DecodeError::new(
            ErrorKind::BadLength,
            count_at,
            format!(
                "{SCHEMA_ERROR_PREFIX}non-nullable field producerEntries was serialized as null"
            ),
        ));
    }
    if count as usize > c.remaining() {
        return Err(DecodeError::new(
            ErrorKind::BadLength,
            count_at,
            format!(
                "{SCHEMA_ERROR_PREFIX}Tried to allocate a collection of size {count}, but there are only {} \
                 bytes remaining.",
                c.remaining()
            ),
        ));
    }
    // Kafka's check above counts bytes; each entry takes 46 of them, so no more entries than
    // that are reserved for.
    let mut entries =
        Vec::with_capacity((count as usize).min(c.remaining() / PRODUCER_SNAPSHOT_ENTRY_BYTES));
    for _ in 0..count {
        entries.push(decode_entry(&mut c).map_err(underflow)?);
    }
    let computed = compute_crc(bytes);
    if crc != computed {
        return Err(DecodeError::new(
            ErrorKind::BadChecksum,
            PRODUCER_SNAPSHOT_CRC_AT_BYTES,
            format!("Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: {computed}"),
        ));
    }
    Ok(ProducerSnapshot {
        version,
        crc,
        entries,
    })
}

fn decode_entry(c: &mut Cursor<'_>) -> Result<ProducerSnapshotEntry> {
    Ok(ProducerSnapshotEntry {
        producer_id: c.i64("ProducerId")?,
        producer_epoch: c.i16("Epoch")?,
        last_sequence: c.i32("LastSequence")?,
        last_offset: c.i64("LastOffset")?,
        offset_delta: c.i32("OffsetDelta")?,
        timestamp: c.i64("Timestamp")?,
        coordinator_epoch: c.i32("CoordinatorEpoch")?,
        current_txn_first_offset: c.i64("CurrentTxnFirstOffset")?,
    })
}

/// Appends one 46-byte entry.
pub fn write_entry(out: &mut Vec<u8>, e: &ProducerSnapshotEntry) {
    out.extend_from_slice(&e.producer_id.to_be_bytes());
    out.extend_from_slice(&e.producer_epoch.to_be_bytes());
    out.extend_from_slice(&e.last_sequence.to_be_bytes());
    out.extend_from_slice(&e.last_offset.to_be_bytes());
    out.extend_from_slice(&e.offset_delta.to_be_bytes());
    out.extend_from_slice(&e.timestamp.to_be_bytes());
    out.extend_from_slice(&e.coordinator_epoch.to_be_bytes());
    out.extend_from_slice(&e.current_txn_first_offset.to_be_bytes());
}

/// The bytes Kafka writes for these entries (in the given order): version 1, CRC, count, entries.
///
/// # Panics
/// If there are more than `i32::MAX` entries (an array Kafka cannot write either).
pub fn encode(entries: &[ProducerSnapshotEntry]) -> Vec<u8> {
    let count =
        i32::try_from(entries.len()).expect("more producer entries than an int32 count can hold");
    let mut out = Vec::with_capacity(
        PRODUCER_SNAPSHOT_HEADER_BYTES + PRODUCER_SNAPSHOT_ENTRY_BYTES * entries.len(),
    );
    out.extend_from_slice(&PRODUCER_SNAPSHOT_VERSION.to_be_bytes());
    out.extend_from_slice(&[0u8; 4]);
    out.extend_from_slice(&count.to_be_bytes());
    for e in entries {
        write_entry(&mut out, e);
    }
    let crc = compute_crc(&out);
    out[PRODUCER_SNAPSHOT_CRC_AT_BYTES..PRODUCER_SNAPSHOT_CRC_COVERAGE_START_BYTES]
        .copy_from_slice(&crc.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> ProducerSnapshotEntry {
        ProducerSnapshotEntry {
            producer_id: 0x0102_0304_0506_0708,
            producer_epoch: 0x090a,
            last_sequence: 0x0b0c_0d0e,
            last_offset: 0x1112_1314_1516_1718,
            offset_delta: 0x191a_1b1c,
            timestamp: 0x2122_2324_2526_2728,
            coordinator_epoch: 0x292a_2b2c,
            current_txn_first_offset: -1,
        }
    }

    #[test]
    fn entry_is_46_bytes_in_schema_order() {
        let mut out = Vec::new();
        write_entry(&mut out, &entry());
        #[rustfmt::skip]
        let want: [u8; 46] = [
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // ProducerId
            0x09, 0x0a,                                     // Epoch
            0x0b, 0x0c, 0x0d, 0x0e,                         // LastSequence
            0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, // LastOffset
            0x19, 0x1a, 0x1b, 0x1c,                         // OffsetDelta
            0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, // Timestamp
            0x29, 0x2a, 0x2b, 0x2c,                         // CoordinatorEpoch
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // CurrentTxnFirstOffset
        ];
        assert_eq!(out, want);
    }

    #[test]
    fn empty_snapshot_bytes() {
        let bytes = encode(&[]);
        // CRC-32C of four zero bytes is 0x48674bc7.
        assert_eq!(bytes, [0, 1, 0x48, 0x67, 0x4b, 0xc7, 0, 0, 0, 0]);
        let snap = decode(&bytes).unwrap();
        assert_eq!(snap.version, 1);
        assert_eq!(snap.crc, 0x4867_4bc7);
        assert!(snap.entries.is_empty());
    }

    #[test]
    fn round_trip_keeps_order() {
        let a = entry();
        let b = ProducerSnapshotEntry {
            producer_id: 1,
            producer_epoch: 0,
            last_sequence: 5,
            last_offset: 67,
            offset_delta: 5,
            timestamp: 1_729_996_400_317,
            coordinator_epoch: 11,
            current_txn_first_offset: 62,
        };
        let bytes = encode(&[b, a]);
        assert_eq!(
            bytes.len(),
            PRODUCER_SNAPSHOT_HEADER_BYTES + 2 * PRODUCER_SNAPSHOT_ENTRY_BYTES
        );
        assert_eq!(&bytes[6..10], &[0, 0, 0, 2]);
        let snap = decode(&bytes).unwrap();
        assert_eq!(snap.entries, vec![b, a]);
        assert_eq!(snap.crc, compute_crc(&bytes));
        assert_eq!(encode(&snap.entries), bytes);
    }

    #[test]
    fn entry_helpers() {
        let e = ProducerSnapshotEntry {
            producer_id: 16,
            producer_epoch: 0,
            last_sequence: 21,
            last_offset: 79,
            offset_delta: 5,
            timestamp: 0,
            coordinator_epoch: 10,
            current_txn_first_offset: -1,
        };
        assert_eq!(e.first_sequence(), 16);
        assert_eq!(e.first_offset(), 74);
        assert_eq!(e.current_txn_first_offset(), None);
        let wrapped = ProducerSnapshotEntry {
            last_sequence: 1,
            offset_delta: 3,
            current_txn_first_offset: 0,
            ..e
        };
        assert_eq!(wrapped.first_sequence(), i32::MAX - 1);
        assert_eq!(wrapped.current_txn_first_offset(), Some(0));
        let none = ProducerSnapshotEntry {
            last_offset: -1,
            ..e
        };
        assert!(!none.has_batch_metadata());
        assert_eq!(none.first_sequence(), NO_SEQUENCE);
        assert_eq!(none.first_offset(), -1);
    }

    #[test]
    fn sequence_wrap() {
        assert_eq!(increment_sequence(5, 3), 8);
        assert_eq!(increment_sequence(i32::MAX, 1), 0);
        assert_eq!(increment_sequence(i32::MAX - 1, 3), 1);
        assert_eq!(increment_sequence(i32::MAX, 0), i32::MAX);
        assert_eq!(decrement_sequence(8, 3), 5);
        assert_eq!(decrement_sequence(0, 1), i32::MAX);
        assert_eq!(decrement_sequence(1, 3), i32::MAX - 1);
        for (s, d) in [(0, 0), (10, 10), (i32::MAX - 2, 7), (3, 100)] {
            assert_eq!(
                decrement_sequence(increment_sequence(s, d), d),
                s,
                "{s} {d}"
            );
        }
    }

    #[test]
    fn unknown_version() {
        let mut bytes = encode(&[entry()]);
        bytes[1] = 2;
        let e = decode(&bytes).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadValue);
        assert_eq!(
            e.message,
            "Snapshot failed schema validation: Snapshot contained an unknown file version 2"
        );
        bytes[0] = 0xff;
        bytes[1] = 0xff;
        assert!(decode(&bytes)
            .unwrap_err()
            .message
            .ends_with("unknown file version -1"));
    }

    #[test]
    fn bad_crc() {
        let mut bytes = encode(&[entry()]);
        let stored = u32::from_be_bytes(bytes[2..6].try_into().unwrap());
        bytes[20] ^= 1;
        let computed = compute_crc(&bytes);
        let e = decode(&bytes).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadChecksum);
        assert_eq!(e.pos, 2);
        assert_eq!(
            e.message,
            format!("Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. Computed crc: {computed}")
        );
    }

    #[test]
    fn trailing_bytes_are_covered_by_the_crc() {
        let mut bytes = encode(&[entry()]);
        bytes.push(0);
        assert_eq!(decode(&bytes).unwrap_err().kind, ErrorKind::BadChecksum);
        // With a CRC that covers them they are accepted and ignored.
        let crc = compute_crc(&bytes);
        bytes[2..6].copy_from_slice(&crc.to_be_bytes());
        assert_eq!(decode(&bytes).unwrap().entries, vec![entry()]);
    }

    #[test]
    fn truncated() {
        let bytes = encode(&[entry(), entry()]);
        for len in [0, 1, 5, 9] {
            let e = decode(&bytes[..len]).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Truncated, "len {len}");
            assert_eq!(e.message, "Snapshot failed schema validation: null");
        }
        // The count passes the "remaining bytes" test but the second entry runs out.
        let e = decode(&bytes[..bytes.len() - 1]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Truncated);
        assert_eq!(e.message, "Snapshot failed schema validation: null");
        assert_eq!(e.pos, 10 + 46 + 38);
    }

    #[test]
    fn bad_counts() {
        let mut bytes = encode(&[]);
        bytes[6..10].copy_from_slice(&(-1i32).to_be_bytes());
        let e = decode(&bytes).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadLength);
        assert_eq!(
            e.message,
            "Snapshot failed schema validation: non-nullable field producerEntries was serialized as null"
        );
        bytes[6..10].copy_from_slice(&3i32.to_be_bytes());
        let e = decode(&bytes).unwrap_err();
        assert_eq!(e.pos, 6);
        assert_eq!(
            e.message,
            "Snapshot failed schema validation: Tried to allocate a collection of size 3, but there are only 0 \
             bytes remaining."
        );
    }

    #[test]
    fn reference_snapshots() {
        let Some(dir) = crate::format::test_util::corpus(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/reference/c-transactions"),
        ) else {
            return;
        };
        let expected: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("expected-dump.json")).unwrap())
                .unwrap();
        let mut checked = 0;
        for (name, want) in expected["files"].as_object().unwrap() {
            if want["type"] != "producer_snapshot" {
                continue;
            }
            let bytes = std::fs::read(dir.join("input/orders-0").join(name)).unwrap();
            let snap = decode(&bytes).unwrap();
            assert_eq!(i64::from(snap.version), want["version"].as_i64().unwrap());
            assert_eq!(i64::from(snap.crc), want["crc"].as_i64().unwrap());
            let want_entries = want["entries"].as_array().unwrap();
            assert_eq!(snap.entries.len(), want_entries.len());
            for (got, w) in snap.entries.iter().zip(want_entries) {
                assert_eq!(got.producer_id, w["producerId"].as_i64().unwrap());
                assert_eq!(
                    i64::from(got.producer_epoch),
                    w["producerEpoch"].as_i64().unwrap()
                );
                assert_eq!(
                    i64::from(got.coordinator_epoch),
                    w["coordinatorEpoch"].as_i64().unwrap()
                );
                assert_eq!(got.timestamp, w["lastTimestamp"].as_i64().unwrap());
                assert_eq!(
                    got.current_txn_first_offset(),
                    w["currentTxnFirstOffset"].as_i64()
                );
                assert_eq!(
                    i64::from(got.first_sequence()),
                    w["firstSequence"].as_i64().unwrap()
                );
                assert_eq!(got.first_offset(), w["firstDataOffset"].as_i64().unwrap());
                assert_eq!(got.last_offset, w["lastDataOffset"].as_i64().unwrap());
                assert_eq!(
                    i64::from(got.offset_delta),
                    w["lastOffsetDelta"].as_i64().unwrap()
                );
            }
            assert_eq!(
                encode(&snap.entries),
                bytes,
                "{name} re-encodes byte for byte"
            );
            checked += 1;
        }
        assert!(checked >= 5);
    }
}
