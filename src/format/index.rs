//! Segment index layouts (formats.md §7): the offset index `.index` (8-byte entries), the time
//! index `.timeindex` (12-byte entries) and the transaction index `.txnindex` (34-byte aborted
//! transaction entries).
//!
//! This module owns the entry layouts in both directions, the entry count of a file (every slot,
//! as Kafka counts), the zero-filled preallocated tail rule of the dump tool, Kafka's sanity checks
//! with their exact `CorruptIndexException` texts, the preallocation sizes, and Kafka's lookups
//! (the same binary search with its "warm section", so even unsorted damaged files give the
//! broker's answer). Files are passed in as byte slices; nothing here does I/O.

use std::fmt;

use serde::Serialize;

use super::error::{DecodeError, ErrorKind, Result};

/// Size of one `.index` entry: relative offset (int32) + position (int32).
pub const OFFSET_INDEX_ENTRY_BYTES: usize = 8;
/// Size of one `.timeindex` entry: timestamp (int64) + relative offset (int32).
pub const TIME_INDEX_ENTRY_BYTES: usize = 12;
/// Size of one `.txnindex` entry: version (int16) + four int64.
pub const ABORTED_TXN_ENTRY_BYTES: usize = 34;
/// The only aborted-transaction version Kafka writes (as an int16) and accepts (as one byte).
pub const ABORTED_TXN_CURRENT_VERSION: i8 = 0;
/// Default `segment.index.bytes`.
pub const DEFAULT_SEGMENT_INDEX_BYTES: i32 = 10 * 1024 * 1024;
/// Smallest `segment.index.bytes` the config accepts (an index still needs one whole entry).
pub const MIN_SEGMENT_INDEX_BYTES: i32 = 4;
/// Default `index.interval.bytes`.
pub const DEFAULT_INDEX_INTERVAL_BYTES: i32 = 4096;
/// Bytes at the end of an index that Kafka's lookup searches first (its "warm section").
pub const INDEX_WARM_SECTION_BYTES: usize = 8192;
/// Timestamp Kafka uses for "none" (time index lookups that find nothing).
pub const NO_TIMESTAMP: i64 = -1;

const OFFSET_INDEX_POSITION_AT_BYTES: usize = 4;
const TIME_INDEX_RELATIVE_OFFSET_AT_BYTES: usize = 8;

/// One `.index` entry, with the offset made absolute (base offset + relative offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OffsetIndexEntry {
    pub offset: i64,
    pub position: i32,
}

/// One `.timeindex` entry, with the offset made absolute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeIndexEntry {
    pub timestamp: i64,
    pub offset: i64,
}

/// One `.txnindex` entry. `version` is the single byte at entry offset 0 read as a signed byte
/// (Kafka writes an int16 0 but reads back only its high byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AbortedTxn {
    pub version: i8,
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

/// Kafka's `AbortedTxn.toString`, which its sanity-check message embeds.
impl fmt::Display for AbortedTxn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "AbortedTxn(version={}, producerId={}, firstOffset={}, lastOffset={}, lastStableOffset={})",
            self.version, self.producer_id, self.first_offset, self.last_offset, self.last_stable_offset
        )
    }
}

/// An absolute offset that does not fit an index entry of a segment (relative offset outside
/// `0..=i32::MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelativeOffsetOverflow {
    pub offset: i64,
    pub base_offset: i64,
}

impl RelativeOffsetOverflow {
    /// Kafka's `IndexOffsetOverflowException` text for the index file `file`.
    pub fn kafka_message(&self, file: &str) -> String {
        format!("Integer overflow for offset: {} ({file})", self.offset)
    }
}

impl fmt::Display for RelativeOffsetOverflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "offset {} is not within 0..={} of base offset {}",
            self.offset,
            i32::MAX,
            self.base_offset
        )
    }
}

impl std::error::Error for RelativeOffsetOverflow {}

/// `offset − base_offset` if it fits `0..=i32::MAX`.
pub fn relative_offset(base_offset: i64, offset: i64) -> Result<i32, RelativeOffsetOverflow> {
    offset
        .checked_sub(base_offset)
        .and_then(|r| i32::try_from(r).ok())
        .filter(|r| *r >= 0)
        .ok_or(RelativeOffsetOverflow {
            offset,
            base_offset,
        })
}

// ---------------------------------------------------------------------------------------------
// Entry counts and preallocation

/// Entries Kafka sees in an offset index of `len_bytes` bytes: `floor(len / 8)`, every slot.
pub fn offset_index_entry_count(len_bytes: usize) -> usize {
    len_bytes / OFFSET_INDEX_ENTRY_BYTES
}

/// Entries Kafka sees in a time index of `len_bytes` bytes: `floor(len / 12)`, every slot.
pub fn time_index_entry_count(len_bytes: usize) -> usize {
    len_bytes / TIME_INDEX_ENTRY_BYTES
}

/// Whole entries in a transaction index; a partial trailing entry is ignored.
pub fn txn_index_entry_count(len_bytes: usize) -> usize {
    len_bytes / ABORTED_TXN_ENTRY_BYTES
}

/// Size a new index file is preallocated to: `segment.index.bytes` rounded down to a multiple of
/// the entry size. Kafka refuses a size smaller than one entry ("Invalid max index size: N").
pub fn preallocated_index_bytes(
    segment_index_bytes: i32,
    entry_bytes: usize,
) -> std::result::Result<usize, String> {
    match usize::try_from(segment_index_bytes) {
        Ok(size) if size >= entry_bytes => Ok(size - size % entry_bytes),
        _ => Err(format!("Invalid max index size: {segment_index_bytes}")),
    }
}

/// Entries a new index can hold (`maxEntries`): preallocated size / entry size.
pub fn max_index_entries(
    segment_index_bytes: i32,
    entry_bytes: usize,
) -> std::result::Result<usize, String> {
    Ok(preallocated_index_bytes(segment_index_bytes, entry_bytes)? / entry_bytes)
}

/// Kafka's `OffsetIndex.isFull`: no slot left.
pub fn offset_index_is_full(entries: usize, max_entries: usize) -> bool {
    entries >= max_entries
}

/// Kafka's `TimeIndex.isFull`: the last slot is kept for the entry written when the segment is
/// rolled or closed.
pub fn time_index_is_full(entries: usize, max_entries: usize) -> bool {
    entries >= max_entries.saturating_sub(1)
}

// ---------------------------------------------------------------------------------------------
// Offset index

fn slot<const N: usize>(bytes: &[u8], i: usize, entry_bytes: usize, what: &str) -> Result<[u8; N]> {
    let start = i.saturating_mul(entry_bytes);
    match bytes.get(start..start.saturating_add(N)) {
        Some(s) => {
            let mut out = [0u8; N];
            out.copy_from_slice(s);
            Ok(out)
        }
        None => Err(DecodeError::truncated(
            start.min(bytes.len()),
            N,
            bytes.len().saturating_sub(start),
            what,
        )),
    }
}

fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn be_i64(b: &[u8]) -> i64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    i64::from_be_bytes(a)
}

/// Decodes one offset index entry from its 8 bytes.
pub fn decode_offset_index_entry_bytes(
    entry: &[u8; OFFSET_INDEX_ENTRY_BYTES],
    base_offset: i64,
) -> OffsetIndexEntry {
    OffsetIndexEntry {
        offset: base_offset.wrapping_add(i64::from(be_i32(&entry[..4]))),
        position: be_i32(&entry[OFFSET_INDEX_POSITION_AT_BYTES..]),
    }
}

/// Decodes slot `i` of an offset index file's bytes.
pub fn decode_offset_index_entry(
    bytes: &[u8],
    base_offset: i64,
    i: usize,
) -> Result<OffsetIndexEntry> {
    let raw =
        slot::<OFFSET_INDEX_ENTRY_BYTES>(bytes, i, OFFSET_INDEX_ENTRY_BYTES, "offset index entry")?;
    Ok(decode_offset_index_entry_bytes(&raw, base_offset))
}

/// Encodes an offset index entry; the offset must be within `0..=i32::MAX` of the base offset.
pub fn encode_offset_index_entry(
    entry: &OffsetIndexEntry,
    base_offset: i64,
) -> std::result::Result<[u8; OFFSET_INDEX_ENTRY_BYTES], RelativeOffsetOverflow> {
    let rel = relative_offset(base_offset, entry.offset)?;
    let mut out = [0u8; OFFSET_INDEX_ENTRY_BYTES];
    out[..4].copy_from_slice(&rel.to_be_bytes());
    out[OFFSET_INDEX_POSITION_AT_BYTES..].copy_from_slice(&entry.position.to_be_bytes());
    Ok(out)
}

/// Appends an encoded offset index entry to `out`.
pub fn write_offset_index_entry(
    out: &mut Vec<u8>,
    entry: &OffsetIndexEntry,
    base_offset: i64,
) -> std::result::Result<(), RelativeOffsetOverflow> {
    out.extend_from_slice(&encode_offset_index_entry(entry, base_offset)?);
    Ok(())
}

/// Every slot of an offset index (zero tail included), as Kafka counts them.
pub fn offset_index_entries(
    bytes: &[u8],
    base_offset: i64,
) -> impl Iterator<Item = OffsetIndexEntry> + '_ {
    bytes.chunks_exact(OFFSET_INDEX_ENTRY_BYTES).map(move |c| {
        decode_offset_index_entry_bytes(c.try_into().expect("8-byte chunk"), base_offset)
    })
}

/// Kafka's `lastOffset` of an offset index: the last slot's offset, or the base offset if empty.
pub fn offset_index_last_offset(bytes: &[u8], base_offset: i64) -> i64 {
    match offset_index_entry_count(bytes.len()) {
        0 => base_offset,
        n => offset_index_entries(&bytes[(n - 1) * OFFSET_INDEX_ENTRY_BYTES..], base_offset)
            .next()
            .map_or(base_offset, |e| e.offset),
    }
}

/// Where the zero-filled preallocated tail of an offset index starts: the first slot `i > 0`
/// whose offset equals the base offset (where kafka-dump-log stops), or slot 0 itself when it
/// is zero-filled too. The broker never indexes position 0 (an entry is written only once more
/// than `index.interval.bytes` precede the batch, in `LogSegment.append` and `recover` alike),
/// so a zero slot 0 is the start of a running broker's preallocated file, not an entry.
/// `None` if there is no tail.
pub fn offset_index_zero_tail_start(bytes: &[u8], base_offset: i64) -> Option<usize> {
    let after_first = offset_index_entries(bytes, base_offset)
        .enumerate()
        .skip(1)
        .find(|(_, e)| e.offset == base_offset)
        .map(|(i, _)| i);
    let count = offset_index_entry_count(bytes.len());
    let first_zero = count > 0 && bytes[..OFFSET_INDEX_ENTRY_BYTES].iter().all(|&b| b == 0);
    match after_first {
        Some(1) | None if first_zero && (count == 1 || after_first == Some(1)) => Some(0),
        t => t,
    }
}

/// How many leading slots kafka-dump-log prints of an index whose zero tail starts at `tail`:
/// it stops at the first slot past slot 0 that holds the base offset, so it shows a zero slot 0.
pub fn dump_tool_shown_slots(tail: Option<usize>, count: usize) -> usize {
    tail.map_or(count, |t| t.max(1).min(count))
}

/// Kafka's `OffsetIndex.sanityCheck` on a whole file; `file` is the path its message names.
///
/// `bytes` may be a prefix of the file's `len` bytes ending in a zero slot, the rest being zero
/// too (a sparse file's holes need not be read).
pub fn offset_index_sanity_check(
    bytes: &[u8],
    len: usize,
    base_offset: i64,
    file: &str,
) -> std::result::Result<(), String> {
    let last_offset = offset_index_last_offset(bytes, base_offset);
    if offset_index_entry_count(len) != 0 && last_offset < base_offset {
        return Err(format!(
            "Corrupt index found, index file {file} has non-zero size but the last offset is \
             {last_offset} which is less than the base offset {base_offset}"
        ));
    }
    if len % OFFSET_INDEX_ENTRY_BYTES != 0 {
        return Err(format!(
            "Index file {file} is corrupt, found {len} bytes which is neither positive nor a \
             multiple of {OFFSET_INDEX_ENTRY_BYTES}"
        ));
    }
    Ok(())
}

/// Kafka's offset lookup: the largest entry with offset ≤ `target`, or `(base_offset, 0)`.
pub fn offset_index_lookup(
    entries: &[OffsetIndexEntry],
    base_offset: i64,
    target: i64,
) -> OffsetIndexEntry {
    let warm = INDEX_WARM_SECTION_BYTES / OFFSET_INDEX_ENTRY_BYTES;
    match largest_lower_bound_slot(entries.len(), warm, |i| entries[i].offset, target) {
        Some(i) => entries[i],
        None => OffsetIndexEntry {
            offset: base_offset,
            position: 0,
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Time index

/// Decodes one time index entry from its 12 bytes.
pub fn decode_time_index_entry_bytes(
    entry: &[u8; TIME_INDEX_ENTRY_BYTES],
    base_offset: i64,
) -> TimeIndexEntry {
    TimeIndexEntry {
        timestamp: be_i64(&entry[..8]),
        offset: base_offset.wrapping_add(i64::from(be_i32(
            &entry[TIME_INDEX_RELATIVE_OFFSET_AT_BYTES..],
        ))),
    }
}

/// Decodes slot `i` of a time index file's bytes.
pub fn decode_time_index_entry(bytes: &[u8], base_offset: i64, i: usize) -> Result<TimeIndexEntry> {
    let raw = slot::<TIME_INDEX_ENTRY_BYTES>(bytes, i, TIME_INDEX_ENTRY_BYTES, "time index entry")?;
    Ok(decode_time_index_entry_bytes(&raw, base_offset))
}

/// Encodes a time index entry; the offset must be within `0..=i32::MAX` of the base offset.
pub fn encode_time_index_entry(
    entry: &TimeIndexEntry,
    base_offset: i64,
) -> std::result::Result<[u8; TIME_INDEX_ENTRY_BYTES], RelativeOffsetOverflow> {
    let rel = relative_offset(base_offset, entry.offset)?;
    let mut out = [0u8; TIME_INDEX_ENTRY_BYTES];
    out[..8].copy_from_slice(&entry.timestamp.to_be_bytes());
    out[TIME_INDEX_RELATIVE_OFFSET_AT_BYTES..].copy_from_slice(&rel.to_be_bytes());
    Ok(out)
}

/// Appends an encoded time index entry to `out`.
pub fn write_time_index_entry(
    out: &mut Vec<u8>,
    entry: &TimeIndexEntry,
    base_offset: i64,
) -> std::result::Result<(), RelativeOffsetOverflow> {
    out.extend_from_slice(&encode_time_index_entry(entry, base_offset)?);
    Ok(())
}

/// Every slot of a time index (zero tail included), as Kafka counts them.
pub fn time_index_entries(
    bytes: &[u8],
    base_offset: i64,
) -> impl Iterator<Item = TimeIndexEntry> + '_ {
    bytes.chunks_exact(TIME_INDEX_ENTRY_BYTES).map(move |c| {
        decode_time_index_entry_bytes(c.try_into().expect("12-byte chunk"), base_offset)
    })
}

/// Kafka's `lastEntry` of a time index: the last slot, or `(-1, base_offset)` if empty.
pub fn time_index_last_entry(bytes: &[u8], base_offset: i64) -> TimeIndexEntry {
    let empty = TimeIndexEntry {
        timestamp: NO_TIMESTAMP,
        offset: base_offset,
    };
    match time_index_entry_count(bytes.len()) {
        0 => empty,
        n => time_index_entries(&bytes[(n - 1) * TIME_INDEX_ENTRY_BYTES..], base_offset)
            .next()
            .unwrap_or(empty),
    }
}

/// Where the zero-filled tail of a time index starts: the first slot `i > 0` whose offset equals
/// the base offset (the dump tool's rule), or slot 0 when it and slot 1 are both zero-filled: the
/// broker appends a time-index entry only with a timestamp above the last one, so two zero slots
/// are never two entries, while a lone `(0, base)` could be one (records stamped 0).
/// `None` if there is no tail.
pub fn time_index_zero_tail_start(bytes: &[u8], base_offset: i64) -> Option<usize> {
    let after_first = time_index_entries(bytes, base_offset)
        .enumerate()
        .skip(1)
        .find(|(_, e)| e.offset == base_offset)
        .map(|(i, _)| i);
    let zero = |slot: usize| {
        bytes[slot * TIME_INDEX_ENTRY_BYTES..(slot + 1) * TIME_INDEX_ENTRY_BYTES]
            .iter()
            .all(|&b| b == 0)
    };
    match after_first {
        Some(1) if zero(0) && zero(1) => Some(0),
        t => t,
    }
}

/// Kafka's `TimeIndex.sanityCheck` on a whole file. An untrimmed file with a zero tail fails the
/// first test (last timestamp 0 is below the first timestamp).
///
/// `bytes` may be a zero-tailed prefix of a file of `len` bytes, as for the offset index.
pub fn time_index_sanity_check(
    bytes: &[u8],
    len: usize,
    base_offset: i64,
    file: &str,
) -> std::result::Result<(), String> {
    let count = time_index_entry_count(len);
    let last = time_index_last_entry(bytes, base_offset);
    if count != 0 {
        let first_timestamp = time_index_entries(bytes, base_offset)
            .next()
            .map_or(NO_TIMESTAMP, |e| e.timestamp);
        if last.timestamp < first_timestamp {
            return Err(format!(
                "Corrupt time index found, time index file ({file}) has non-zero size but the last \
                 timestamp is {} which is less than the first timestamp {first_timestamp}",
                last.timestamp
            ));
        }
        if last.offset < base_offset {
            return Err(format!(
                "Corrupt time index found, time index file ({file}) has non-zero size but the last \
                 offset is {} which is less than the first offset {base_offset}",
                last.offset
            ));
        }
    }
    if len % TIME_INDEX_ENTRY_BYTES != 0 {
        return Err(format!(
            "Time index file {file} is corrupt, found {len} bytes which is neither positive nor a \
             multiple of {TIME_INDEX_ENTRY_BYTES}"
        ));
    }
    Ok(())
}

/// Kafka's timestamp lookup: the largest entry with timestamp ≤ `target`, or
/// `(-1, base_offset)`.
pub fn time_index_lookup(
    entries: &[TimeIndexEntry],
    base_offset: i64,
    target_timestamp: i64,
) -> TimeIndexEntry {
    let warm = INDEX_WARM_SECTION_BYTES / TIME_INDEX_ENTRY_BYTES;
    match largest_lower_bound_slot(
        entries.len(),
        warm,
        |i| entries[i].timestamp,
        target_timestamp,
    ) {
        Some(i) => entries[i],
        None => TimeIndexEntry {
            timestamp: NO_TIMESTAMP,
            offset: base_offset,
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Kafka's search

/// Kafka's `largestLowerBoundSlotFor` over `len` slots whose keys `key(i)` should ascend: the
/// last `warm_entries + 1` slots are searched first when the target lies past the first of them,
/// otherwise the head; both with Kafka's binary search. On sorted keys this is "the last slot
/// with key ≤ target"; on damaged (unsorted) keys it returns the slot the broker would.
pub fn largest_lower_bound_slot(
    len: usize,
    warm_entries: usize,
    key: impl Fn(usize) -> i64,
    target: i64,
) -> Option<usize> {
    if len == 0 {
        return None;
    }
    let first_hot = (len - 1).saturating_sub(warm_entries);
    if key(first_hot) < target {
        return Some(binary_search(&key, target, first_hot, len - 1));
    }
    if key(0) > target {
        return None;
    }
    Some(binary_search(&key, target, 0, first_hot))
}

fn binary_search(key: &impl Fn(usize) -> i64, target: i64, begin: usize, end: usize) -> usize {
    let (mut lo, mut hi) = (begin, end);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        match key(mid).cmp(&target) {
            std::cmp::Ordering::Greater => hi = mid - 1,
            std::cmp::Ordering::Less => lo = mid,
            std::cmp::Ordering::Equal => return mid,
        }
    }
    lo
}

// ---------------------------------------------------------------------------------------------
// Transaction index

/// Decodes one 34-byte entry, without judging its version.
pub fn decode_aborted_txn_bytes(entry: &[u8; ABORTED_TXN_ENTRY_BYTES]) -> AbortedTxn {
    AbortedTxn {
        version: entry[0] as i8,
        producer_id: be_i64(&entry[2..]),
        first_offset: be_i64(&entry[10..]),
        last_offset: be_i64(&entry[18..]),
        last_stable_offset: be_i64(&entry[26..]),
    }
}

/// Encodes an entry as Kafka writes it: the version as an int16 0 regardless of `version`.
pub fn encode_aborted_txn(txn: &AbortedTxn) -> [u8; ABORTED_TXN_ENTRY_BYTES] {
    let mut out = [0u8; ABORTED_TXN_ENTRY_BYTES];
    out[..2].copy_from_slice(&i16::from(ABORTED_TXN_CURRENT_VERSION).to_be_bytes());
    out[2..10].copy_from_slice(&txn.producer_id.to_be_bytes());
    out[10..18].copy_from_slice(&txn.first_offset.to_be_bytes());
    out[18..26].copy_from_slice(&txn.last_offset.to_be_bytes());
    out[26..34].copy_from_slice(&txn.last_stable_offset.to_be_bytes());
    out
}

/// Appends an encoded entry to `out`.
pub fn write_aborted_txn(out: &mut Vec<u8>, txn: &AbortedTxn) {
    out.extend_from_slice(&encode_aborted_txn(txn));
}

/// Kafka's text for a version byte above the current version, in the index file `file`.
pub fn aborted_txn_version_message(version: i8, file: &str) -> String {
    format!(
        "Unexpected aborted transaction version {version} in transaction index {file}, current \
         version is {ABORTED_TXN_CURRENT_VERSION}"
    )
}

/// Iterates the entries of a `.txnindex` as Kafka's reader does: whole 34-byte entries only (a
/// partial trailing entry is ignored); an entry whose version byte is above 0 yields an error
/// (`BadValue`, at the entry's position) and ends the iteration. The error text leaves out the
/// file name; see [`aborted_txn_version_message`] for Kafka's full text.
pub fn txn_index_entries(bytes: &[u8]) -> impl Iterator<Item = Result<AbortedTxn>> + '_ {
    let mut failed = false;
    bytes
        .chunks_exact(ABORTED_TXN_ENTRY_BYTES)
        .enumerate()
        .map_while(move |(i, c)| {
            if failed {
                return None;
            }
            let txn = decode_aborted_txn_bytes(c.try_into().expect("34-byte chunk"));
            if txn.version > ABORTED_TXN_CURRENT_VERSION {
                failed = true;
                return Some(Err(DecodeError::new(
                    ErrorKind::BadValue,
                    i * ABORTED_TXN_ENTRY_BYTES,
                    format!(
                        "Unexpected aborted transaction version {}, current version is {}",
                        txn.version, ABORTED_TXN_CURRENT_VERSION
                    ),
                )));
            }
            Some(Ok(txn))
        })
}

/// All entries of a `.txnindex`, or the first version error.
pub fn decode_txn_index(bytes: &[u8]) -> Result<Vec<AbortedTxn>> {
    txn_index_entries(bytes).collect()
}

/// Kafka's `TransactionIndex.sanityCheck`: every entry's last offset ≥ the segment's start offset
/// (`start_offset` = base offset). A version error surfaces as Kafka's version message.
pub fn txn_index_sanity_check(
    bytes: &[u8],
    start_offset: i64,
    file: &str,
) -> std::result::Result<(), String> {
    for (i, entry) in txn_index_entries(bytes).enumerate() {
        let txn = match entry {
            Ok(txn) => txn,
            Err(_) => {
                let raw = &bytes[i * ABORTED_TXN_ENTRY_BYTES..];
                return Err(aborted_txn_version_message(raw[0] as i8, file));
            }
        };
        if txn.last_offset < start_offset {
            return Err(format!(
                "Last offset of aborted transaction {txn} in index {file} is less than start offset \
                 {start_offset}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::test_util::reference_dir;

    fn off(offset: i64, position: i32) -> OffsetIndexEntry {
        OffsetIndexEntry { offset, position }
    }

    fn ts(timestamp: i64, offset: i64) -> TimeIndexEntry {
        TimeIndexEntry { timestamp, offset }
    }

    #[test]
    fn offset_index_entry_layout() {
        // offset 1012 at position 4096 in a segment based at 1000: relative 12 = 0x0c, 4096 = 0x1000.
        let bytes = encode_offset_index_entry(&off(1012, 4096), 1000).unwrap();
        assert_eq!(bytes, [0, 0, 0, 0x0c, 0, 0, 0x10, 0]);
        assert_eq!(
            decode_offset_index_entry_bytes(&bytes, 1000),
            off(1012, 4096)
        );
        assert_eq!(
            decode_offset_index_entry(&bytes, 1000, 0).unwrap(),
            off(1012, 4096)
        );
        let mut v = Vec::new();
        write_offset_index_entry(&mut v, &off(1000, 0), 1000).unwrap();
        write_offset_index_entry(&mut v, &off(1012, 4096), 1000).unwrap();
        assert_eq!(v.len(), 16);
        assert_eq!(
            offset_index_entries(&v, 1000).collect::<Vec<_>>(),
            vec![off(1000, 0), off(1012, 4096)]
        );
    }

    #[test]
    fn time_index_entry_layout() {
        // timestamp 0x0102030405060708, offset 1007 in a segment based at 1000.
        let e = ts(0x0102_0304_0506_0708, 1007);
        let bytes = encode_time_index_entry(&e, 1000).unwrap();
        assert_eq!(bytes, [1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 7]);
        assert_eq!(decode_time_index_entry_bytes(&bytes, 1000), e);
        let mut v = Vec::new();
        write_time_index_entry(&mut v, &e, 1000).unwrap();
        assert_eq!(decode_time_index_entry(&v, 1000, 0).unwrap(), e);
    }

    #[test]
    fn relative_offsets_must_fit_an_int() {
        assert_eq!(relative_offset(10, 10), Ok(0));
        assert_eq!(relative_offset(0, i64::from(i32::MAX)), Ok(i32::MAX));
        let over = relative_offset(0, i64::from(i32::MAX) + 1).unwrap_err();
        assert_eq!(
            over.kafka_message("f.index"),
            "Integer overflow for offset: 2147483648 (f.index)"
        );
        assert!(relative_offset(10, 9).is_err());
        assert!(relative_offset(i64::MIN, i64::MAX).is_err());
        assert!(encode_offset_index_entry(&off(9, 0), 10).is_err());
        assert!(encode_time_index_entry(&ts(0, 9), 10).is_err());
        let mut v = Vec::new();
        assert!(write_offset_index_entry(&mut v, &off(9, 0), 10).is_err());
        assert!(write_time_index_entry(&mut v, &ts(0, 9), 10).is_err());
        assert!(v.is_empty());
    }

    #[test]
    fn out_of_range_slots_are_truncation_errors() {
        let bytes = [0u8; 12];
        let e = decode_offset_index_entry(&bytes, 0, 1).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Truncated);
        assert_eq!(e.pos, 8);
        assert_eq!(
            decode_offset_index_entry(&bytes, 0, 5).unwrap_err().kind,
            ErrorKind::Truncated
        );
        assert_eq!(
            decode_offset_index_entry(&bytes, 0, usize::MAX)
                .unwrap_err()
                .kind,
            ErrorKind::Truncated
        );
        assert_eq!(
            decode_time_index_entry(&bytes[..11], 0, 0)
                .unwrap_err()
                .kind,
            ErrorKind::Truncated
        );
    }

    #[test]
    fn negative_relative_offsets_read_as_kafka_does() {
        let bytes = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1];
        assert_eq!(decode_offset_index_entry_bytes(&bytes, 100), off(99, 1));
    }

    #[test]
    fn counts_floor_and_preallocation() {
        assert_eq!(offset_index_entry_count(0), 0);
        assert_eq!(offset_index_entry_count(15), 1);
        assert_eq!(offset_index_entry_count(16), 2);
        assert_eq!(time_index_entry_count(127), 10);
        assert_eq!(txn_index_entry_count(67), 1);
        assert_eq!(
            preallocated_index_bytes(DEFAULT_SEGMENT_INDEX_BYTES, OFFSET_INDEX_ENTRY_BYTES),
            Ok(10_485_760)
        );
        assert_eq!(
            preallocated_index_bytes(DEFAULT_SEGMENT_INDEX_BYTES, TIME_INDEX_ENTRY_BYTES),
            Ok(10_485_756)
        );
        assert_eq!(
            max_index_entries(DEFAULT_SEGMENT_INDEX_BYTES, OFFSET_INDEX_ENTRY_BYTES),
            Ok(1_310_720)
        );
        assert_eq!(
            max_index_entries(DEFAULT_SEGMENT_INDEX_BYTES, TIME_INDEX_ENTRY_BYTES),
            Ok(873_813)
        );
        assert_eq!(
            preallocated_index_bytes(8192, TIME_INDEX_ENTRY_BYTES),
            Ok(8184)
        );
        assert_eq!(
            preallocated_index_bytes(MIN_SEGMENT_INDEX_BYTES, OFFSET_INDEX_ENTRY_BYTES),
            Err("Invalid max index size: 4".to_string())
        );
        assert!(preallocated_index_bytes(-1, OFFSET_INDEX_ENTRY_BYTES).is_err());
        assert!(offset_index_is_full(3, 3));
        assert!(!offset_index_is_full(2, 3));
        assert!(time_index_is_full(2, 3));
        assert!(!time_index_is_full(1, 3));
    }

    #[test]
    fn zero_tail_rule() {
        let base = 1294;
        let mut bytes = Vec::new();
        for e in [off(1294, 0), off(1310, 4100), off(1330, 8300)] {
            write_offset_index_entry(&mut bytes, &e, base).unwrap();
        }
        assert_eq!(offset_index_zero_tail_start(&bytes, base), None);
        bytes.resize(80, 0);
        // The first slot legitimately holds the base offset; the tail starts at slot 3.
        assert_eq!(offset_index_entry_count(bytes.len()), 10);
        assert_eq!(offset_index_entries(&bytes, base).count(), 10);
        assert_eq!(offset_index_zero_tail_start(&bytes, base), Some(3));
        assert_eq!(offset_index_last_offset(&bytes, base), base);
        // A zero tail passes the offset index sanity check.
        assert_eq!(
            offset_index_sanity_check(&bytes, bytes.len(), base, "f"),
            Ok(())
        );
        // Entirely zero (a running broker's preallocated file): the tail starts at slot 0,
        // since position 0 is never indexed; kafka-dump-log still prints slot 0.
        assert_eq!(offset_index_zero_tail_start(&[0u8; 24], 7), Some(0));
        assert_eq!(offset_index_zero_tail_start(&[0u8; 8], 7), Some(0));
        assert_eq!(dump_tool_shown_slots(Some(0), 3), 1);
        assert_eq!(dump_tool_shown_slots(Some(2), 3), 2);
        assert_eq!(dump_tool_shown_slots(None, 3), 3);

        let mut t = Vec::new();
        write_time_index_entry(&mut t, &ts(1000, 1300), base).unwrap();
        write_time_index_entry(&mut t, &ts(2000, 1320), base).unwrap();
        assert_eq!(time_index_zero_tail_start(&t, base), None);
        t.resize(12 * 5, 0);
        assert_eq!(time_index_zero_tail_start(&t, base), Some(2));
        assert_eq!(time_index_last_entry(&t, base), ts(0, base));
        // All zero: no entry at all; a lone zero slot may be a real (0, base) entry.
        assert_eq!(time_index_zero_tail_start(&[0u8; 36], base), Some(0));
        assert_eq!(time_index_zero_tail_start(&[0u8; 12], base), None);
        // ...but fails the time index sanity check.
        assert_eq!(
            time_index_sanity_check(&t, t.len(), base, "00000000000000001294.timeindex"),
            Err("Corrupt time index found, time index file (00000000000000001294.timeindex) has non-zero \
                 size but the last timestamp is 0 which is less than the first timestamp 1000"
                .to_string())
        );
    }

    #[test]
    fn offset_index_sanity_messages() {
        assert_eq!(offset_index_sanity_check(&[], 0, 5, "f"), Ok(()));
        assert_eq!(offset_index_last_offset(&[], 5), 5);
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&[0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0]); // relative -2
        assert_eq!(
            offset_index_sanity_check(&bytes, bytes.len(), 100, "/d/00000000000000000100.index"),
            Err("Corrupt index found, index file /d/00000000000000000100.index has non-zero size but the \
                 last offset is 98 which is less than the base offset 100"
                .to_string())
        );
        let odd = [0u8; 13];
        assert_eq!(
            offset_index_sanity_check(&odd, odd.len(), 0, "x.index"),
            Err("Index file x.index is corrupt, found 13 bytes which is neither positive nor a multiple of 8"
                .to_string())
        );
        // A file shorter than one entry has no entries but still fails the length test.
        assert!(offset_index_sanity_check(&[0u8; 3], 3, 0, "x").is_err());
    }

    #[test]
    fn time_index_sanity_messages() {
        assert_eq!(time_index_sanity_check(&[], 0, 5, "f"), Ok(()));
        assert_eq!(time_index_last_entry(&[], 5), ts(NO_TIMESTAMP, 5));
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&10i64.to_be_bytes());
        bytes.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(
            time_index_sanity_check(&bytes, bytes.len(), 100, "t.timeindex"),
            Err("Corrupt time index found, time index file (t.timeindex) has non-zero size but the last \
                 offset is 99 which is less than the first offset 100"
                .to_string())
        );
        let mut ok = Vec::new();
        write_time_index_entry(&mut ok, &ts(10, 100), 100).unwrap();
        assert_eq!(time_index_sanity_check(&ok, ok.len(), 100, "t"), Ok(()));
        ok.push(0);
        assert_eq!(
            time_index_sanity_check(&ok, ok.len(), 100, "00000000000000000317.timeindex"),
            Err("Time index file 00000000000000000317.timeindex is corrupt, found 13 bytes which is neither \
                 positive nor a multiple of 12"
                .to_string())
        );
    }

    #[test]
    fn lookups() {
        let entries = [off(12, 100), off(28, 200), off(44, 300)];
        assert_eq!(offset_index_lookup(&entries, 0, 5), off(0, 0));
        assert_eq!(offset_index_lookup(&entries, 0, 12), off(12, 100));
        assert_eq!(offset_index_lookup(&entries, 0, 27), off(12, 100));
        assert_eq!(offset_index_lookup(&entries, 0, 28), off(28, 200));
        assert_eq!(offset_index_lookup(&entries, 0, 1000), off(44, 300));
        assert_eq!(offset_index_lookup(&[], 7, 1000), off(7, 0));

        let times = [ts(100, 5), ts(200, 9), ts(300, 12)];
        assert_eq!(time_index_lookup(&times, 0, 99), ts(NO_TIMESTAMP, 0));
        assert_eq!(time_index_lookup(&times, 0, 100), ts(100, 5));
        assert_eq!(time_index_lookup(&times, 0, 250), ts(200, 9));
        assert_eq!(time_index_lookup(&times, 0, i64::MAX), ts(300, 12));
        assert_eq!(time_index_lookup(&[], 3, 1), ts(NO_TIMESTAMP, 3));
    }

    #[test]
    fn lookup_agrees_with_linear_scan_on_sorted_keys_across_the_warm_section() {
        let n = 3000usize;
        let entries: Vec<_> = (0..n).map(|i| off(10 + 3 * i as i64, i as i32)).collect();
        for target in [
            0i64, 10, 11, 12, 13, 1000, 5000, 5990, 6000, 8996, 8997, 9005, 20000,
        ] {
            let want = entries
                .iter()
                .rev()
                .find(|e| e.offset <= target)
                .copied()
                .unwrap_or(off(0, 0));
            assert_eq!(
                offset_index_lookup(&entries, 0, target),
                want,
                "target {target}"
            );
        }
    }

    #[test]
    fn lookup_on_swapped_entries_follows_kafka_binary_search() {
        // Entries 1 and 2 swapped (as in the h-index-damage scenario): the search of [0, 3]
        // probes mid 2 (offset 20 ≤ 25 → lo = 2), then mid 3 (offset 40 > 25 → hi = 2): slot 2.
        let entries = [off(10, 1), off(30, 3), off(20, 2), off(40, 4)];
        assert_eq!(offset_index_lookup(&entries, 0, 25), off(20, 2));
        assert_eq!(
            largest_lower_bound_slot(4, 1024, |i| entries[i].offset, 35),
            Some(2)
        );
    }

    #[test]
    fn aborted_txn_layout() {
        let txn = AbortedTxn {
            version: 0,
            producer_id: 0x0102,
            first_offset: 4,
            last_offset: 45,
            last_stable_offset: 0x0a0b,
        };
        let bytes = encode_aborted_txn(&txn);
        #[rustfmt::skip]
        let want: [u8; 34] = [
            0, 0,
            0, 0, 0, 0, 0, 0, 0x01, 0x02,
            0, 0, 0, 0, 0, 0, 0, 4,
            0, 0, 0, 0, 0, 0, 0, 45,
            0, 0, 0, 0, 0, 0, 0x0a, 0x0b,
        ];
        assert_eq!(bytes, want);
        assert_eq!(decode_aborted_txn_bytes(&bytes), txn);
        let mut v = Vec::new();
        write_aborted_txn(&mut v, &txn);
        write_aborted_txn(&mut v, &txn);
        v.extend_from_slice(&[0u8; 20]); // partial trailing entry: ignored
        assert_eq!(decode_txn_index(&v).unwrap(), vec![txn, txn]);
        assert_eq!(
            txn.to_string(),
            "AbortedTxn(version=0, producerId=258, firstOffset=4, lastOffset=45, lastStableOffset=2571)"
        );
    }

    #[test]
    fn txn_version_is_the_first_byte_only() {
        let txn = AbortedTxn {
            version: 0,
            producer_id: 1,
            first_offset: 2,
            last_offset: 3,
            last_stable_offset: 4,
        };
        let mut bytes = encode_aborted_txn(&txn);
        // The low byte of the int16 is never looked at.
        bytes[1] = 7;
        assert_eq!(decode_txn_index(&bytes).unwrap()[0].version, 0);
        // A negative first byte is not "greater than 0" for Kafka either.
        bytes[0] = 0xff;
        assert_eq!(decode_txn_index(&bytes).unwrap()[0].version, -1);
        // A positive first byte stops the reader, after the entries before it.
        let mut file = encode_aborted_txn(&txn).to_vec();
        bytes[0] = 1;
        file.extend_from_slice(&bytes);
        file.extend_from_slice(&encode_aborted_txn(&txn));
        let got: Vec<_> = txn_index_entries(&file).collect();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], Ok(txn));
        let err = got[1].clone().unwrap_err();
        assert_eq!(err.kind, ErrorKind::BadValue);
        assert_eq!(err.pos, 34);
        assert!(err
            .message
            .starts_with("Unexpected aborted transaction version 1"));
        assert!(decode_txn_index(&file).is_err());
        assert_eq!(
            txn_index_sanity_check(&file, 0, "/d/x.txnindex"),
            Err("Unexpected aborted transaction version 1 in transaction index /d/x.txnindex, current version is 0"
                .to_string())
        );
        // Writing always puts an int16 0, whatever the value says.
        let odd = AbortedTxn { version: 5, ..txn };
        assert_eq!(&encode_aborted_txn(&odd)[..2], &[0, 0]);
    }

    #[test]
    fn txn_sanity_check() {
        let txn = AbortedTxn {
            version: 0,
            producer_id: 33,
            first_offset: 105,
            last_offset: 112,
            last_stable_offset: 113,
        };
        let bytes = encode_aborted_txn(&txn);
        assert_eq!(txn_index_sanity_check(&bytes, 100, "f"), Ok(()));
        assert_eq!(txn_index_sanity_check(&bytes, 112, "f"), Ok(()));
        assert_eq!(
            txn_index_sanity_check(&bytes, 113, "00000000000000000113.txnindex"),
            Err("Last offset of aborted transaction AbortedTxn(version=0, producerId=33, firstOffset=105, \
                 lastOffset=112, lastStableOffset=113) in index 00000000000000000113.txnindex is less than \
                 start offset 113"
                .to_string())
        );
        assert_eq!(txn_index_sanity_check(&[], 0, "f"), Ok(()));
    }

    #[test]
    fn reference_txnindex_and_indexes() {
        let Some(dir) = reference_dir("c-transactions") else {
            return;
        };
        let bytes = std::fs::read(dir.join("00000000000000000100.txnindex")).unwrap();
        let got = decode_txn_index(&bytes).unwrap();
        assert_eq!(
            got,
            vec![AbortedTxn {
                version: 0,
                producer_id: 33,
                first_offset: 105,
                last_offset: 112,
                last_stable_offset: 113
            }]
        );
        assert_eq!(txn_index_sanity_check(&bytes, 100, "f"), Ok(()));
        let bytes = std::fs::read(dir.join("00000000000000000000.txnindex")).unwrap();
        let got = decode_txn_index(&bytes).unwrap();
        assert_eq!(got.len(), 4);
        assert_eq!(
            (
                got[1].producer_id,
                got[1].first_offset,
                got[1].last_offset,
                got[1].last_stable_offset
            ),
            (16, 0, 46, 13)
        );

        let idx = std::fs::read(dir.join("00000000000000000398.index")).unwrap();
        let entries: Vec<_> = offset_index_entries(&idx, 398).collect();
        assert_eq!(
            entries,
            vec![
                off(412, 1158),
                off(413, 2331),
                off(429, 4072),
                off(430, 5126)
            ]
        );
        assert_eq!(offset_index_sanity_check(&idx, idx.len(), 398, "f"), Ok(()));
        let tidx = std::fs::read(dir.join("00000000000000000398.timeindex")).unwrap();
        assert_eq!(
            time_index_last_entry(&tidx, 398),
            ts(1_729_996_402_609, 431)
        );
        assert_eq!(time_index_sanity_check(&tidx, tidx.len(), 398, "f"), Ok(()));
    }

    #[test]
    fn reference_zero_tail() {
        let Some(dir) = reference_dir("f-crash-torn-tail") else {
            return;
        };
        let idx = std::fs::read(dir.join("00000000000000001294.index")).unwrap();
        assert_eq!(offset_index_entry_count(idx.len()), 1024);
        assert_eq!(
            offset_index_sanity_check(&idx, idx.len(), 1294, "f"),
            Ok(())
        );
        let start = offset_index_zero_tail_start(&idx, 1294).unwrap();
        assert!(start > 0 && start < 1024);
        let tidx = std::fs::read(dir.join("00000000000000001294.timeindex")).unwrap();
        assert_eq!(time_index_entry_count(tidx.len()), 682);
        let err =
            time_index_sanity_check(&tidx, tidx.len(), 1294, "00000000000000001294.timeindex")
                .unwrap_err();
        assert_eq!(
            err,
            "Corrupt time index found, time index file (00000000000000001294.timeindex) has non-zero size but \
             the last timestamp is 0 which is less than the first timestamp 1729989203916"
        );
    }
}
