//! Format-level targets: bytes straight into the crate's decoders (no files), so each input
//! costs microseconds and the decoders' own branches are what the fuzzer explores.

use kseg::format::checkpoint::{
    parse_java_properties, CleanShutdown, LeaderEpochCheckpoint, MetaProperties, OffsetCheckpoint,
    PartitionMetadata,
};
use kseg::format::codec::{compress, decompress};
use kseg::format::control::{decode_control_key, EndTxnMarker};
use kseg::format::entry::{frame_at, peek_header, Entry};
use kseg::format::index::{
    decode_txn_index, offset_index_entries, offset_index_lookup, offset_index_sanity_check,
    offset_index_zero_tail_start, time_index_entries, time_index_lookup, time_index_sanity_check,
    time_index_zero_tail_start, txn_index_sanity_check,
};
use kseg::format::internal::control_record_text;
use kseg::format::{snapshot, Compression};

use super::alloc;

/// What one batch may decompress to in these targets (the engine's default is 256 MiB; a
/// smaller limit keeps the fuzzer fast and makes the allocation bound tight).
pub const BATCH_LIMIT: usize = 1 << 20;

/// The bound on any single allocation (and half the bound on live bytes) while decoding
/// `input_len` bytes with `batch_limit`: a constant, a small multiple of the input (a decoder
/// may copy what it reads, a view may index it) and the decompression buffer, which grows
/// geometrically up to one byte past the limit.
pub fn allocation_bound(input_len: usize, batch_limit: usize) -> usize {
    const SLACK: usize = 1 << 20;
    SLACK + 64 * input_len + 2 * (batch_limit + 1)
}

/// One entry of a `.log` (v2 batch, or v0/v1 message with its wrapped inner messages): the
/// framing peeks, the header, the CRC, and every record with its headers; a control batch's
/// records through the control-record decoders (transaction markers, KRaft control records).
pub fn batch(data: &[u8]) {
    let base = alloc::reset();
    let _ = frame_at(data);
    let _ = peek_header(data, data.len() as u64);
    if let Ok(entry) = Entry::decode(data) {
        let _ = (
            entry.crc_is_valid(),
            entry.compression(),
            entry.max_timestamp(),
        );
        let _ = (entry.last_offset(), entry.timestamp_type(), entry.magic());
        let mut scratch = Vec::new();
        if let Ok(records) = entry.records(&mut scratch, BATCH_LIMIT) {
            for r in records {
                let Ok(view) = r else { break };
                if entry.is_control() {
                    let _ = decode_control_key(view.key);
                    let _ = EndTxnMarker::decode(view.value);
                    let _ = control_record_text(view.key, view.value);
                }
                let _ = view.to_spec();
            }
        }
    }
    alloc::assert_within(
        "batch",
        alloc::usage(base),
        allocation_bound(data.len(), BATCH_LIMIT),
    );
}

/// The first byte picks a codec (bits 0–2) and a magic (bits 3–4, mod 3: LZ4's framing
/// differs for magic 0); the rest is decompressed through the codec layer with its limit. Then
/// the rest is compressed and decompressed again, which must give it back.
pub fn codec(data: &[u8]) {
    let Some((&selector, input)) = data.split_first() else {
        return;
    };
    let Ok(codec) = Compression::from_id(selector & 0x07) else {
        return;
    };
    let magic = ((selector >> 3) & 0x03) as i8 % 3;
    let base = alloc::reset();
    let mut out = Vec::new();
    let _ = decompress(codec, magic, input, BATCH_LIMIT, &mut out);
    alloc::assert_within(
        "decompress",
        alloc::usage(base),
        allocation_bound(input.len(), BATCH_LIMIT),
    );
    let mut packed = Vec::new();
    if compress(codec, None, magic, input, &mut packed).is_ok() {
        decompress(codec, magic, &packed, BATCH_LIMIT, &mut out)
            .unwrap_or_else(|e| panic!("{codec:?} magic {magic}: own output fails: {e:?}"));
        assert!(out == input, "{codec:?} magic {magic}: round trip differs");
    }
}

/// The first byte picks the decoder of a segment's or a partition's small files (and its
/// base offset); the rest is the file: `.index`, `.timeindex`, `.txnindex`, producer
/// `.snapshot`, `leader-epoch-checkpoint`, `partition.metadata`, the log dir's offset
/// checkpoints, `meta.properties` (and the Java properties under it), `.kafka_cleanshutdown`.
pub fn state_files(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let base_offset = [0, 5, i64::from(i32::MAX), i64::MAX - 3][usize::from(selector >> 6)];
    let probe = i64::from_le_bytes(
        bytes
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .unwrap_or([0; 8]),
    );
    let base = alloc::reset();
    match selector & 0x3f {
        0 => {
            let _ = offset_index_sanity_check(bytes, bytes.len(), base_offset, "x.index");
            let _ = offset_index_zero_tail_start(bytes, base_offset);
            let entries: Vec<_> = offset_index_entries(bytes, base_offset).collect();
            let _ = offset_index_lookup(&entries, base_offset, probe);
        }
        1 => {
            let _ = time_index_sanity_check(bytes, bytes.len(), base_offset, "x.timeindex");
            let _ = time_index_zero_tail_start(bytes, base_offset);
            let entries: Vec<_> = time_index_entries(bytes, base_offset).collect();
            let _ = time_index_lookup(&entries, base_offset, probe);
        }
        2 => {
            let _ = decode_txn_index(bytes);
            let _ = txn_index_sanity_check(bytes, base_offset, "x.txnindex");
        }
        3 => {
            if let Ok(s) = snapshot::decode(bytes) {
                // What decodes, encoded again, decodes to the same entries.
                let again = snapshot::decode(&snapshot::encode(&s.entries))
                    .unwrap_or_else(|e| panic!("own snapshot fails to decode: {e:?}"));
                assert_eq!(again.entries, s.entries, "snapshot round trip");
            }
        }
        4 => round_trip(
            LeaderEpochCheckpoint::decode(bytes, "leader-epoch-checkpoint"),
            |c| LeaderEpochCheckpoint::decode(c.encode().as_bytes(), "again").map(|d| d.encode()),
        ),
        5 => round_trip(
            PartitionMetadata::decode(bytes, "partition.metadata"),
            |m| PartitionMetadata::decode(m.encode().as_bytes(), "again").map(|d| d.encode()),
        ),
        6 => round_trip(
            OffsetCheckpoint::decode(bytes, "recovery-point-offset-checkpoint"),
            |c| OffsetCheckpoint::decode(c.encode().as_bytes(), "again").map(|d| d.encode()),
        ),
        7 => {
            let _ = parse_java_properties(bytes);
            let _ = MetaProperties::decode(bytes).map(|m| (m.broker_id(), m.encode("#")));
        }
        8 => {
            let _ = CleanShutdown::decode(bytes).map(|c| c.encode());
        }
        _ => {}
    }
    alloc::assert_within(
        "state file",
        alloc::usage(base),
        allocation_bound(bytes.len(), 0),
    );
}

/// A decoded state file, encoded and decoded again, encodes the same: what kseg writes it reads.
fn round_trip<T: Encode, E: std::fmt::Debug>(
    decoded: Result<T, E>,
    again: impl Fn(&T) -> Result<String, E>,
) {
    if let Ok(v) = decoded {
        let first = v.encoded();
        let second = again(&v).unwrap_or_else(|e| panic!("own output fails to decode: {e:?}"));
        assert_eq!(first, second, "encode(decode(encode(x))) differs");
    }
}

trait Encode {
    fn encoded(&self) -> String;
}

impl Encode for LeaderEpochCheckpoint {
    fn encoded(&self) -> String {
        self.encode()
    }
}

impl Encode for PartitionMetadata {
    fn encoded(&self) -> String {
        self.encode()
    }
}

impl Encode for OffsetCheckpoint {
    fn encoded(&self) -> String {
        self.encode()
    }
}

/// Arbitrary keys and values through every internal-topic decoder (`__consumer_offsets`,
/// `__transaction_state`, `__cluster_metadata` (KRaft metadata records),
/// `__remote_log_metadata`, `__share_group_state`) and the control-record decoders. The first
/// byte says how much of the rest is the key (0xff: a null key).
pub fn internal_records(data: &[u8]) {
    use kseg::format::internal::{decode_record, Decoder};
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let (key, value) = if split == 0xff {
        (None, rest)
    } else {
        let (k, v) = rest.split_at(usize::from(split).min(rest.len()));
        (Some(k), v)
    };
    let base = alloc::reset();
    for decoder in [
        Decoder::Offsets,
        Decoder::TransactionLog,
        Decoder::ClusterMetadata,
        Decoder::RemoteLogMetadata,
        Decoder::ShareGroupState,
    ] {
        let _ = decode_record(decoder, 7, key, Some(value));
        let _ = decode_record(decoder, 7, key, None);
    }
    let _ = control_record_text(key, Some(value));
    alloc::assert_within(
        "internal record",
        alloc::usage(base),
        allocation_bound(data.len(), 0),
    );
}
