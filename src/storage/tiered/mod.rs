//! The remote half of a partition: how a tiered-storage plugin lays a partition's segments out
//! as objects of a [`Store`], and how the engine reads them back.
//!
//! A layout is one implementation of [`Layout`]: it lists a partition's segments (grouping the
//! objects by segment, setting aside those that name none) and opens a segment's log as a
//! [`LogReader`], so a remote segment is walked like a local one. [`LocalTiered`] is Kafka's own
//! `LocalTieredStorage`; another plugin's layout (Aiven's, with chunked, compressed, encrypted
//! objects) plugs in as a second implementation and a name in [`LAYOUTS`]/[`layout_named`].

mod aiven;
mod local_tiered;
mod shown;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::log_reader::LogReader;
use super::store::{ObjectInfo, Store};
use crate::error::{Error, Result};
use crate::format::aiven::KeyRing;

pub use aiven::Aiven;
pub use local_tiered::{LocalTiered, ROOT_DIR};
pub use shown::{show, shown_as, shown_in, shown_txn_index, ShownLog};

/// A file of a tiered segment, as `RemoteLogSegmentFileset` names its kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SegmentFile {
    Log,
    OffsetIndex,
    TimeIndex,
    TxnIndex,
    ProducerSnapshot,
    LeaderEpochCheckpoint,
    /// Aiven's layout: the five indexes in one object.
    Indexes,
    /// Aiven's layout: the segment's manifest.
    Manifest,
}

impl SegmentFile {
    /// `LocalTieredStorage`'s files.
    pub const ALL: [SegmentFile; 6] = [
        SegmentFile::Log,
        SegmentFile::OffsetIndex,
        SegmentFile::TimeIndex,
        SegmentFile::TxnIndex,
        SegmentFile::ProducerSnapshot,
        SegmentFile::LeaderEpochCheckpoint,
    ];

    /// The name's suffix in Kafka's local tiered storage (`LogFileUtils`' suffixes).
    pub fn suffix(self) -> &'static str {
        match self {
            SegmentFile::Log => ".log",
            SegmentFile::OffsetIndex => ".index",
            SegmentFile::TimeIndex => ".timeindex",
            SegmentFile::TxnIndex => ".txnindex",
            SegmentFile::ProducerSnapshot => ".snapshot",
            SegmentFile::LeaderEpochCheckpoint => ".leader_epoch_checkpoint",
            SegmentFile::Indexes => ".indexes",
            SegmentFile::Manifest => ".rsm-manifest",
        }
    }

    /// The transaction index is copied only when the segment has one.
    pub fn is_optional(self) -> bool {
        self == SegmentFile::TxnIndex
    }
}

/// Refuses, unread, a `file` of `size` bytes (named `path`) longer than any such file of a
/// segment of `log_size` bytes can be: an offset or time index holds at most an entry per
/// entry of the log (the smallest is 26 bytes), a transaction index one per ABORT marker
/// ([`crate::storage::txn_index::max_entries`]), a leader-epoch checkpoint no more than a
/// local checkpoint file kseg reads, a producer snapshot no more than its count of entries
/// says (the rule local ones are read by, [`crate::format::snapshot::max_len`]: its header is
/// fetched first from `snapshot_at`, the object and position of its plain bytes; an encrypted
/// one has none, and is bounded by its object alone). A read whole of what a bucket holds is
/// then bounded by what the segment is, not by what an object (or a manifest's range) says.
pub fn refuse_oversized(
    path: &Path,
    file: SegmentFile,
    size: u64,
    log_size: u64,
    snapshot_at: Option<(&dyn Store, &str, u64)>,
) -> Result<()> {
    use crate::format::batch::{LOG_OVERHEAD_BYTES, MIN_ENTRY_SIZE_FIELD};
    use crate::format::index::{
        ABORTED_TXN_ENTRY_BYTES, OFFSET_INDEX_ENTRY_BYTES, TIME_INDEX_ENTRY_BYTES,
    };
    use crate::format::snapshot::{max_len, PRODUCER_SNAPSHOT_HEADER_BYTES};
    use crate::storage::txn_index::max_entries;
    let entries = log_size / (LOG_OVERHEAD_BYTES as u64 + MIN_ENTRY_SIZE_FIELD as u64) + 1;
    let txn = ABORTED_TXN_ENTRY_BYTES as u64;
    // What the file is, for the message; None: a snapshot, bounded by its own count.
    let (most, what) = match file {
        SegmentFile::OffsetIndex => (
            entries * OFFSET_INDEX_ENTRY_BYTES as u64,
            Some("offset index"),
        ),
        SegmentFile::TimeIndex => (entries * TIME_INDEX_ENTRY_BYTES as u64, Some("time index")),
        // The rule local ones are read by, and the partial entry a reader leaves.
        SegmentFile::TxnIndex => (
            max_entries(log_size) * txn + txn - 1,
            Some("transaction index"),
        ),
        SegmentFile::LeaderEpochCheckpoint => (
            crate::storage::files::CHECKPOINT_MAX_BYTES,
            Some("leader-epoch checkpoint"),
        ),
        SegmentFile::ProducerSnapshot => match snapshot_at {
            // An empty one is no request.
            Some((store, key, at)) if size > 0 => {
                let head = at..at + size.min(PRODUCER_SNAPSHOT_HEADER_BYTES as u64);
                (max_len(&store.read_range(key, head)?), None)
            }
            _ => return Ok(()),
        },
        _ => return Ok(()),
    };
    if size <= most {
        return Ok(());
    }
    let why = match what {
        Some(what) => format!(
            "more than its segment has room for (the {what} of a segment of {log_size} bytes: \
             {most} at most)"
        ),
        None => format!("more than the entries its header counts fill ({most} bytes at most)"),
    };
    Err(Error::decode(
        path,
        0,
        crate::format::DecodeError::new(
            crate::format::ErrorKind::BadLength,
            0,
            format!("stored in {size} bytes, {why}: not read"),
        ),
    ))
}

/// The partition a remote listing is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemotePartition {
    pub topic: String,
    pub partition: i32,
    /// The topic id, Kafka's base64 form: from `partition.metadata`, else from the listing.
    pub topic_id: Option<String>,
}

/// One remote segment's objects, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteSegment {
    /// The `RemoteLogSegmentId`'s uuid, Kafka's base64 form.
    pub segment_id: String,
    pub topic_id: String,
    /// The start offset its object names carry.
    pub start_offset: i64,
    pub files: BTreeMap<SegmentFile, ObjectInfo>,
}

impl RemoteSegment {
    pub fn log(&self) -> Option<&ObjectInfo> {
        self.files.get(&SegmentFile::Log)
    }

    /// The error of a read of the segment's `file`, which its listing does not hold: naming the
    /// key it has beside the segment's other objects (the same `<startOffset>-<segmentId>`
    /// stem), and what the store says is there (nothing, or an entry that is no object).
    pub fn absent(&self, store: &dyn Store, file: SegmentFile) -> Error {
        let key = self.files.iter().next().and_then(|(f, o)| {
            let stem = o.key.strip_suffix(f.suffix())?;
            Some(format!("{stem}{}", file.suffix()))
        });
        let key = key.unwrap_or_else(|| {
            format!("{}-{}{}", self.start_offset, self.segment_id, file.suffix())
        });
        match store.len(&key) {
            Err(e) => e,
            // Put there since the listing.
            Ok(_) => Error::invalid(
                &store.path_of(&key),
                format!("the segment's listing has no {} object", file.suffix()),
            ),
        }
    }
}

/// What a store holds for one partition.
#[derive(Debug, Clone, Default)]
pub struct PartitionListing {
    /// By start offset, then segment id.
    pub segments: Vec<RemoteSegment>,
    /// Objects under the partition's prefix that belong to no segment.
    pub strays: Vec<ObjectInfo>,
}

/// How a tiered-storage plugin stores a partition's segments.
pub trait Layout: Send + Sync {
    /// The `--remote-layout` name.
    fn name(&self) -> &'static str;
    /// Whether `objects` (a whole listing) look like this layout's.
    fn recognises(&self, objects: &[ObjectInfo]) -> bool;
    /// How many `/`-separated parts at the end of a segment object's key name its partition
    /// and itself: what lies above them is a storage root the layout's listings work from.
    fn key_depth(&self) -> usize;
    /// The partition a segment object's key names (the key taken from a root [`key_depth`]
    /// parts above the object); None when the key is no segment object of this layout.
    ///
    /// [`key_depth`]: Layout::key_depth
    fn partition_of(&self, key: &str) -> Option<RemotePartition>;
    /// The partition's segments in `store` (`objects`: the store's listing).
    fn partition(&self, objects: &[ObjectInfo], p: &RemotePartition) -> PartitionListing;
    /// The key of `file` of a segment known only from metadata (to name a missing object).
    fn key(
        &self,
        objects: &[ObjectInfo],
        p: &RemotePartition,
        start_offset: i64,
        segment_id: &str,
        file: SegmentFile,
    ) -> String;
    /// The files every segment has.
    fn required(&self) -> Vec<SegmentFile>;
    /// The files a segment's log is read from: without one, it cannot be read at all.
    fn log_files(&self) -> &'static [SegmentFile];
    /// The segment's size as its listing tells it (the `.log` object's, where that is the
    /// segment's bytes as they were); None when only reading the segment tells it.
    fn listed_log_size(&self, segment: &RemoteSegment) -> Option<u64>;
    /// The segment's log, read as the engine reads a local one.
    fn open_log(&self, store: Arc<dyn Store>, segment: &RemoteSegment) -> Result<LogReader>;
    /// One of the segment's other files (an index, the producer snapshot, the leader-epoch
    /// checkpoint) as the broker had it, and the name to report it by; `None` when the segment
    /// has none. Bytes that cannot be recovered are an [`Error::Decode`] naming the object; so
    /// is a file stored in more bytes than its segment has room for, not read
    /// ([`refuse_oversized`]).
    fn read_file(
        &self,
        store: &dyn Store,
        segment: &RemoteSegment,
        file: SegmentFile,
    ) -> Result<Option<(PathBuf, Vec<u8>)>>;
}

/// Every layout, in the order detection tries them.
pub const LAYOUTS: [&str; 2] = ["local-tiered", "aiven"];

/// The layout `--remote-layout` names; `keys` (`--remote-key`) open encrypted segments.
pub fn layout_named(name: &str, keys: &KeyRing) -> Option<Box<dyn Layout>> {
    match name {
        "local-tiered" => Some(Box::new(LocalTiered)),
        "aiven" => Some(Box::new(Aiven::new(keys.clone()))),
        _ => None,
    }
}

/// The layout `objects` are in: the one named, else the first that recognises them.
pub fn detect(
    store: &dyn Store,
    objects: &[ObjectInfo],
    named: Option<&str>,
    keys: &KeyRing,
) -> Result<Box<dyn Layout>> {
    if let Some(n) = named {
        return layout_named(n, keys).ok_or_else(|| {
            Error::invalid(
                &store.path_of(""),
                format!(
                    "unknown remote layout {n:?} (known: {})",
                    LAYOUTS.join(", ")
                ),
            )
        });
    }
    LAYOUTS
        .iter()
        .filter_map(|n| layout_named(n, keys))
        .find(|l| l.recognises(objects))
        .ok_or_else(|| {
            Error::invalid(
                &store.path_of(""),
                format!(
                    "no tiered-storage layout recognised among {} object(s) (known: {}; name one \
                     with --remote-layout)",
                    objects.len(),
                    LAYOUTS.join(", ")
                ),
            )
        })
}
