//! Going straight to an offset or a time in a partition directory: `kseg offsets` (the offline
//! ListOffsets answer, `UnifiedLog.fetchOffsetByTimestamp`) and `kseg locate` (where on disk an
//! offset is). Both go through [`crate::storage::seek::Seeker`], never a full read.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Expected, Result, Unusable};
use crate::format::checkpoint::EpochEntry;
use crate::format::names::parse_partition_dir;
use crate::ops::input::{examine, Input};
use crate::storage::leader_epoch::LeaderEpochCache;
use crate::storage::log_reader::Step;
use crate::storage::read::{Isolation, PartitionRecords};
use crate::storage::seek::{seek_reader, BatchHit, Fallback, Seeker, TimeHit};

/// What ListOffsets is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetQuery {
    /// -2: the log start offset.
    Earliest,
    /// -1: the log end offset.
    Latest,
    /// -3: the record with the largest timestamp.
    MaxTimestamp,
    /// The first offset whose timestamp is `>=` this (epoch ms).
    Timestamp(i64),
}

/// One partition's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OffsetsAnswer {
    /// The partition directory.
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub dir: PathBuf,
    /// None: the broker answers "no offset" (no record at or after the timestamp).
    pub offset: Option<i64>,
    /// -1 for earliest and latest, as the broker returns (null in JSON).
    #[serde(serialize_with = "crate::ops::minus_one_as_null")]
    pub timestamp: i64,
    pub leader_epoch: Option<i32>,
    /// Indexes that could not be used; their segments were scanned instead.
    pub fallbacks: Vec<Fallback>,
    /// `.log` bytes read to answer.
    pub log_bytes_read: u64,
}

/// The partition directories `path` names: itself when it holds a `.log`, else its partition
/// directories that do.
pub fn partition_dirs(path: &Path) -> Result<Vec<PathBuf>> {
    Ok(partition_seekers(path)?
        .iter()
        .map(|s| s.dir().to_path_buf())
        .collect())
}

/// A [`Seeker`] for each partition directory `path` names (see [`partition_dirs`]). A partition
/// directory costs one listing of its names; a log dir, that of each partition directory too.
pub fn partition_seekers(path: &Path) -> Result<Vec<Seeker>> {
    if let Ok(seeker) = Seeker::open(path) {
        return Ok(vec![seeker]);
    }
    let expected = Expected::PartitionOrLogDir;
    let Input::Dir { dirs, .. } = examine(path, expected)? else {
        return Err(Error::unusable(path, Unusable::NotADirectory, expected));
    };
    let mut out = Vec::new();
    for d in dirs {
        let named = d
            .file_name()
            .is_some_and(|n| parse_partition_dir(&n.to_string_lossy()).is_some());
        if !named {
            continue;
        }
        match Seeker::open(&d) {
            Ok(seeker) => out.push(seeker),
            Err(Error::Invalid { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    if out.is_empty() {
        return Err(Error::invalid(path, "no .log segment in this directory"));
    }
    Ok(out)
}

/// The log start offset the broker loads: the log dir's checkpoint, but never below the first
/// segment.
pub(crate) fn log_start_offset(dir: &Path, seeker: &Seeker) -> Result<i64> {
    Ok(crate::ops::partition::loaded_log_start(dir, seeker.first_segment_base())?.offset)
}

/// The epoch cache as loaded: the checkpoint's entries, cut to `[log start, log end)` as load's
/// `truncateFromStart` / `truncateFromEnd` do. Nothing is written.
fn epochs(dir: &Path) -> Result<Vec<EpochEntry>> {
    let file = dir.join(crate::format::names::LEADER_EPOCH_CHECKPOINT_FILE_NAME);
    if !file.exists() {
        return Ok(Vec::new());
    }
    Ok(LeaderEpochCache::open(dir)?.entries().to_vec())
}

/// `fetchOffsetByTimestamp` for one partition directory.
pub fn list_offsets(dir: &Path, query: OffsetQuery) -> Result<OffsetsAnswer> {
    offsets_of(Seeker::open(dir)?, query)
}

/// `fetchOffsetByTimestamp` for each partition directory `path` names ([`partition_dirs`]).
pub fn partition_offsets(path: &Path, query: OffsetQuery) -> Result<Vec<OffsetsAnswer>> {
    partition_seekers(path)?
        .into_iter()
        .map(|s| offsets_of(s, query))
        .collect()
}

fn offsets_of(mut seeker: Seeker, query: OffsetQuery) -> Result<OffsetsAnswer> {
    let dir = seeker.dir().to_path_buf();
    let dir = dir.as_path();
    let start = log_start_offset(dir, &seeker)?;
    let cache = epochs(dir)?;
    let (offset, timestamp, leader_epoch) = match query {
        OffsetQuery::Earliest => {
            // The first cached epoch counts only if it starts at or before the log start (a
            // message format bump can leave older batches without epochs).
            let epoch = cache
                .iter()
                .rev()
                .find(|e| e.start_offset <= start)
                .map(|e| e.epoch);
            (Some(start), -1, epoch)
        }
        OffsetQuery::Latest => {
            let end = seeker.log_end_offset()?;
            let epoch = cache
                .iter()
                .rev()
                .find(|e| e.start_offset < end)
                .map(|e| e.epoch);
            (Some(end), -1, epoch)
        }
        OffsetQuery::MaxTimestamp => hit(seeker.max_timestamp()?),
        OffsetQuery::Timestamp(t) => hit(seeker.offset_for_time(t, start)?),
    };
    Ok(OffsetsAnswer {
        dir: dir.to_path_buf(),
        offset,
        timestamp,
        leader_epoch,
        fallbacks: seeker.fallbacks().to_vec(),
        log_bytes_read: seeker.log_bytes_read(),
    })
}

fn hit(h: Option<TimeHit>) -> (Option<i64>, i64, Option<i32>) {
    match h {
        Some(h) => (Some(h.offset), h.timestamp, h.leader_epoch),
        None => (None, -1, None),
    }
}

/// Where an offset is on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    pub offset: i64,
    /// None: below the first segment or at/after the log end.
    pub batch: Option<BatchHit>,
    pub fallbacks: Vec<Fallback>,
    pub log_bytes_read: u64,
}

/// A [`Location`] in one partition of several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionLocation {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub dir: PathBuf,
    #[serde(flatten)]
    pub location: Location,
}

/// The batch holding `offset` (or the next one after a gap), found as a fetch finds it.
pub fn locate(dir: &Path, offset: i64) -> Result<Location> {
    locate_with(Seeker::open(dir)?, offset)
}

/// [`locate`] in each partition directory `path` names (itself, or a log dir's: see
/// [`partition_dirs`]).
pub fn locate_all(path: &Path, offset: i64) -> Result<Vec<PartitionLocation>> {
    partition_seekers(path)?
        .into_iter()
        .map(|s| {
            let dir = s.dir().to_path_buf();
            let location = locate_with(s, offset)?;
            Ok(PartitionLocation { dir, location })
        })
        .collect()
}

fn locate_with(mut seeker: Seeker, offset: i64) -> Result<Location> {
    let batch = seeker.batch_for_offset(offset)?;
    Ok(Location {
        offset,
        batch,
        fallbacks: seeker.fallbacks().to_vec(),
        log_bytes_read: seeker.log_bytes_read(),
    })
}

/// What a `read_committed` consumer reads of `dir` from `offset` on: the record iterator up to
/// the last stable offset of [`stable_offsets`] (whose replay's bytes it counts), aborted
/// transactions and control batches left out.
pub fn read_committed(dir: &Path, offset: i64) -> Result<PartitionRecords> {
    let mut seeker = Seeker::open(dir)?;
    let last_stable_offset = stable_offsets(dir, &mut seeker)?.last_stable_offset;
    PartitionRecords::with_seeker(seeker, offset)?
        .with_isolation(Isolation::ReadCommitted { last_stable_offset })
}

/// Where a `read_committed` consumer's view of a partition ends, as a broker that loaded it
/// computes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StableOffsets {
    pub log_start_offset: i64,
    pub log_end_offset: i64,
    pub high_watermark: i64,
    /// `UnifiedLog.lastStableOffset`: the first unstable offset if below the high watermark,
    /// else the high watermark.
    pub last_stable_offset: i64,
}

/// The last stable offset the broker's load leaves: producer state from the latest readable
/// snapshot at or below the log end (`ProducerStateManager.truncateAndReload`), then the
/// batches after it replayed (`rebuildProducerState`), so only the log's tail past that
/// snapshot is read (nothing after a clean shutdown). The replay stops at the first damaged
/// batch, where recovery would cut the log.
pub fn stable_offsets(dir: &Path, seeker: &mut Seeker) -> Result<StableOffsets> {
    use super::txns::{high_watermark, latest_snapshot_at_or_below, start_state};
    let log_end_offset = seeker.log_end_offset()?;
    let log_start_offset = log_start_offset(dir, seeker)?;
    let first_base = seeker.first_segment_base();
    let from = latest_snapshot_at_or_below(dir, log_end_offset)?
        .filter(|&s| s >= first_base)
        .unwrap_or(first_base);
    let mut state = start_state(dir, from)?;
    let (high_watermark, _) = high_watermark(dir, log_start_offset, log_end_offset)?;
    // Transactions completed below the high watermark are let go of as the replay goes (every
    // 65,536 batches; the last call below would drop them anyway), so that they are not all
    // held at once: each would cost a map entry until the end.
    let mut applied = 0u32;
    if let Some(hit) = seeker.batch_for_offset(from)? {
        for (_, log) in seeker.segments_from(hit.segment_base) {
            let mut reader = match seeker.take_reader(&log) {
                Some(r) => r,
                None => seek_reader(&log, 0)?,
            };
            let before = reader.bytes_read();
            let mut damaged = false;
            while let Step::Entry { entry, .. } = reader.next_step()? {
                if !entry.crc_is_valid() || state.apply_entry(&entry, &log, |_| Ok(())).is_err() {
                    damaged = true;
                    break;
                }
                applied = applied.wrapping_add(1);
                if applied % 65_536 == 0 {
                    state.on_high_watermark_updated(high_watermark);
                }
            }
            seeker.count_log_bytes(reader.bytes_read() - before);
            if damaged {
                break;
            }
        }
    }
    // Transactions completed before the snapshot are replicated (the load knows none of them).
    state.on_high_watermark_updated(from);
    state.on_high_watermark_updated(high_watermark);
    let last_stable_offset = state.last_stable_offset_at(high_watermark);
    Ok(StableOffsets {
        log_start_offset,
        log_end_offset,
        high_watermark,
        last_stable_offset,
    })
}
