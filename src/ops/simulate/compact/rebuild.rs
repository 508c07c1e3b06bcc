//! The batches the cleaner writes anew: the kept records of a batch rebuilt like the original
//! (`buildRetainedRecordsInto`), and the bare header a batch whose records all went leaves
//! (`writeEmptyHeader`).

use super::clean::Kept;
use crate::format::batch::{
    attributes, offset_delta, BatchHeader, BatchSpec, BatchWriter, RecordSpec, CRC_COVERAGE_START,
    LOG_OVERHEAD_BYTES, RECORD_BATCH_OVERHEAD_BYTES,
};
use crate::format::entry::{Entry, RecordIter};
use crate::format::index::NO_TIMESTAMP;
use crate::format::legacy::{build_message_set, LegacySetSpec};

/// The 61-byte header `writeEmptyHeader` leaves for a batch whose records all went.
pub(super) fn empty_batch(h: &BatchHeader) -> Vec<u8> {
    let mut header = BatchHeader {
        length: (RECORD_BATCH_OVERHEAD_BYTES - LOG_OVERHEAD_BYTES) as i32,
        attributes: h.attributes
            & (attributes::TIMESTAMP_TYPE_LOG_APPEND_TIME
                | attributes::TRANSACTIONAL
                | attributes::CONTROL),
        base_timestamp: NO_TIMESTAMP,
        record_count: 0,
        crc: 0,
        ..*h
    };
    let mut out = vec![0u8; RECORD_BATCH_OVERHEAD_BYTES];
    header.encode_into(&mut out);
    header.crc = crc32c::crc32c(&out[CRC_COVERAGE_START..]);
    header.encode_into(&mut out);
    out
}

/// `buildRetainedRecordsInto`: the kept records in a batch like the original (same magic,
/// codec at its default level, timestamp type, producer fields; v2 keeps its base and last
/// offsets). Returns the bytes, the max timestamp and the offset that goes with it.
pub(super) fn rebuild(
    entry: &Entry<'_>,
    records: RecordIter<'_>,
    kept: &Kept,
    horizon: Option<i64>,
) -> std::result::Result<(Vec<u8>, i64, i64), crate::format::DecodeError> {
    let compression = entry.compression()?;
    let timestamp_type = entry.timestamp_type();
    let log_append = timestamp_type == crate::format::batch::TimestampType::LogAppendTime;
    match entry {
        Entry::V2(b) => {
            let h = &b.header;
            let spec = BatchSpec {
                base_offset: h.base_offset,
                partition_leader_epoch: h.partition_leader_epoch,
                compression,
                compression_level: None,
                timestamp_type,
                log_append_time: if log_append {
                    h.max_timestamp
                } else {
                    NO_TIMESTAMP
                },
                producer_id: h.producer_id,
                producer_epoch: h.producer_epoch,
                base_sequence: h.base_sequence,
                is_transactional: h.is_transactional(),
                is_control: h.is_control(),
                delete_horizon_ms: horizon,
                last_offset: Some(h.last_offset()),
            };
            // As `build_batch` encodes them: deltas from the base offset and from the base
            // timestamp (the horizon when one is set, else the first kept record's).
            let base_timestamp = horizon.unwrap_or(kept.first_timestamp.unwrap_or(NO_TIMESTAMP));
            // Encoded straight into the compressor: the batch's records area never exists
            // uncompressed beside the decompressed source.
            let mut writer = BatchWriter::new(&spec)?;
            for r in kept.of(records) {
                let r = r?;
                let headers = r.headers.iter().map(|h| (h.key, h.value));
                writer.record_parts(
                    offset_delta(h.base_offset, r.offset)?,
                    r.timestamp.wrapping_sub(base_timestamp),
                    (r.key, r.value),
                    headers,
                )?;
            }
            let count = i32::try_from(kept.count).expect("a batch's record count is an i32");
            let bytes =
                writer.finish(count, base_timestamp, kept.max_timestamp, h.last_offset())?;
            let max_ts = BatchHeader::decode(&bytes)?.max_timestamp;
            let shallow = if max_ts == NO_TIMESTAMP && !log_append {
                -1
            } else {
                h.last_offset()
            };
            Ok((bytes, max_ts, shallow))
        }
        Entry::Legacy(m) => {
            let spec = LegacySetSpec {
                magic: m.magic,
                compression,
                compression_level: None,
                timestamp_type,
                log_append_time: if log_append {
                    m.timestamp
                } else {
                    NO_TIMESTAMP
                },
            };
            let kept_records = kept
                .of(records)
                .map(|r| r.map(|r| r.to_spec()))
                .collect::<Result<Vec<RecordSpec>, _>>()?;
            let bytes = build_message_set(&spec, &kept_records)?;
            let last = kept_records.last().map_or(-1, |r| r.offset);
            let max_ts = if log_append {
                m.timestamp
            } else if m.magic == 0 {
                NO_TIMESTAMP
            } else {
                kept_records
                    .iter()
                    .map(|r| r.timestamp)
                    .max()
                    .unwrap_or(NO_TIMESTAMP)
            };
            let shallow = if max_ts == NO_TIMESTAMP && !log_append {
                -1
            } else {
                last
            };
            Ok((bytes, max_ts, shallow))
        }
    }
}
