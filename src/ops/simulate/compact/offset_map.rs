//! The cleaner's offset map (`SkimpyOffsetMap`, `buildOffsetMap`): the latest offset of each
//! key in the cleanable range, keyed by a 128-bit digest of the key, up to as many keys as
//! the dedupe buffer holds; when it fills up, the round cleans only up to where it got.
//!
//! The broker digests keys with MD5 (`log.cleaner.hash.algorithm`), but only as a hash: its
//! `SkimpyOffsetMap` (storage/.../log/SkimpyOffsetMap.java) places an entry by the digest's
//! bytes and finds it again by `Arrays.equals` of digests, and it fills up by a count of
//! entries, never by where they land. Any 128-bit hash therefore gives the same map, the same
//! fill point and the same cleaning, except for two keys whose digests collide (where the
//! broker, too, would keep only the later of two different keys). kseg uses XXH3-128, many
//! times faster than MD5, and since the keys of its map are already uniform digests, it hashes
//! them by taking their first 8 bytes instead of running SipHash over them again.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use super::clean::{producer_id, Cleaner};
use super::txn::TxnTracker;
use crate::error::{Error, Result};
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::format::names::{index_file_name, log_file_name};
use crate::ops::partition::SegmentView;
use crate::storage::log_reader::{LogReader, Step};
use crate::storage::OffsetIndex;

/// The offset map: latest offset per digest of a key, at most `max_entries` keys.
pub(super) struct OffsetMap {
    pub(super) map: HashMap<[u8; 16], i64, DigestHash>,
    pub(super) max_entries: usize,
    pub(super) latest_offset: i64,
}

pub(super) fn key_hash(key: &[u8]) -> [u8; 16] {
    xxhash_rust::xxh3::xxh3_128(key).to_le_bytes()
}

/// Key digests, each seen once (the keys a cleaned segment keeps).
pub(super) type DigestSet = HashSet<[u8; 16], DigestHash>;

pub(super) type DigestHash = BuildHasherDefault<DigestHasher>;

/// The hasher of a map whose keys are digests: their first 8 bytes are already uniform.
#[derive(Default)]
pub(super) struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn write(&mut self, bytes: &[u8]) {
        // A `[u8; 16]` hashes as its length (a `usize`, see `write_usize`) then its bytes.
        let mut first = [0u8; 8];
        let n = bytes.len().min(8);
        first[..n].copy_from_slice(&bytes[..n]);
        self.0 ^= u64::from_le_bytes(first);
    }

    fn write_usize(&mut self, _len: usize) {}

    fn finish(&self) -> u64 {
        self.0
    }
}

impl OffsetMap {
    pub(super) fn get(&self, key: &[u8]) -> i64 {
        self.map.get(&key_hash(key)).copied().unwrap_or(-1)
    }
}

impl Cleaner<'_> {
    /// `buildOffsetMap(start, end)`.
    pub(super) fn build_offset_map(&mut self, start: i64, end: i64) -> Result<()> {
        let dirty: Vec<&SegmentView> = {
            let floor = self
                .view
                .segments
                .iter()
                .rposition(|s| s.base_offset <= start)
                .unwrap_or(0);
            self.view.segments[floor..]
                .iter()
                .filter(|s| s.base_offset < end)
                .collect()
        };
        let mut tracker = TxnTracker::default();
        self.txn_indexes.collect(start, end, &mut tracker)?;
        for (i, s) in dirty.iter().enumerate() {
            let next_start = dirty.get(i + 1).map_or(end, |n| n.base_offset);
            if self.map_segment(s, start, &mut tracker)? {
                return Ok(());
            }
            self.map.latest_offset = next_start - 1;
        }
        Ok(())
    }

    /// `buildOffsetMapForSegment`: true when the map filled up.
    fn map_segment(
        &mut self,
        s: &SegmentView,
        start: i64,
        tracker: &mut TxnTracker,
    ) -> Result<bool> {
        let path = self.view.dir.join(log_file_name(s.base_offset));
        let index = self.view.dir.join(index_file_name(s.base_offset));
        let position = if crate::storage::files::exists(&index)? {
            OffsetIndex::open_existing(&index, s.base_offset)?
                .lookup(start)?
                .position
                .max(0) as u64
        } else {
            0
        };
        let mut reader = LogReader::open(&path, None)?.with_max_entry_bytes(u64::MAX);
        reader.seek(position);
        loop {
            let (pos, entry) = match reader.next_step()? {
                Step::Entry { position, entry } => (position, entry),
                Step::End { .. } => return Ok(false),
                other => {
                    return Err(Error::invalid(
                        &path,
                        format!("unreadable batch while building the offset map: {other:?}"),
                    ))
                }
            };
            let pid = producer_id(&entry);
            if entry.is_control() {
                let mut records = entry
                    .records(&mut self.scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
                    .map_err(|e| Error::decode(&path, pos, e))?;
                let first = records
                    .next()
                    .transpose()
                    .map_err(|e| Error::decode(&path, pos, e))?;
                tracker
                    .on_control(&entry, pid, first.as_ref())
                    .map_err(|e| Error::decode(&path, pos, e))?;
            } else if !tracker.on_batch(&entry, pid) {
                let records = entry
                    .records(&mut self.scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
                    .map_err(|e| Error::decode(&path, pos, e))?;
                for r in records {
                    let r = r.map_err(|e| Error::decode(&path, pos, e))?;
                    if let Some(key) = r.key {
                        if r.offset >= start {
                            if self.map.map.len() >= self.map.max_entries {
                                return Ok(true);
                            }
                            self.map.map.insert(key_hash(key), r.offset);
                            self.map.latest_offset = r.offset;
                        }
                    }
                }
            }
            if entry.last_offset() >= start {
                self.map.latest_offset = entry.last_offset();
            }
        }
    }
}
