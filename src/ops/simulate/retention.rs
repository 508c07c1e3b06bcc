//! `kseg retention`: which segments the broker's retention would delete, why, and when the
//! others become eligible (behavior.md §5, `UnifiedLog.deleteOldSegments`).
//!
//! Three passes run in the broker's order — log start offset, size, time — each over the log
//! the previous one left. A pass walks the segments oldest first and stops at the first one it
//! may not delete: only a prefix ever goes, nothing at or above the high watermark, never an
//! empty last segment, and when every segment goes a new one is rolled at the log end offset
//! first. This module plans; it changes no file.

use crate::ops::human::exact_duration;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::format::names::{
    index_file_name, log_file_name, parse_offset_prefix, snapshot_file_name, time_index_file_name,
    txn_index_file_name, LEADER_EPOCH_CHECKPOINT_FILE_NAME,
    REPLICATION_OFFSET_CHECKPOINT_FILE_NAME,
};
use crate::ops::partition::{
    loaded_log_start, LogStart, LogStartSource, PartitionView, SegmentView,
};
use crate::ops::repair::apply::{self, ApplyOptions, Change};
pub use crate::ops::repair::log_dir::CheckpointUpdate;
use crate::ops::repair::log_dir::{
    checkpoint_writes, shutdown_checkpoint_updates, ShutdownOffsets,
};
use crate::storage::{CloseMode, LoadParams, Log, LogConfig};

/// `retention.ms` default: 7 days.
pub const DEFAULT_RETENTION_MS: i64 = 604_800_000;
/// `retention.bytes` default: unlimited.
pub const DEFAULT_RETENTION_BYTES: i64 = -1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionOptions {
    /// `retention.ms`; negative = unlimited.
    pub retention_ms: i64,
    /// `retention.bytes`; negative = unlimited.
    pub retention_bytes: i64,
    /// Default: `log-start-offset-checkpoint`, else the first segment's base offset.
    pub log_start_offset: Option<i64>,
    /// Default: `replication-offset-checkpoint`, else the log end offset.
    pub high_watermark: Option<i64>,
    pub now_ms: i64,
    /// The topic's index settings, for the segment a roll creates.
    pub config: LogConfig,
    /// `producer.id.expiration.ms`, as the log loads.
    pub producer_id_expiration_ms: i64,
}

/// Which pass deletes a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DeletionReason {
    LogStartOffsetBreach,
    RetentionSizeBreach,
    RetentionMsBreach,
}

impl DeletionReason {
    pub fn name(self) -> &'static str {
        match self {
            DeletionReason::LogStartOffsetBreach => "log start offset",
            DeletionReason::RetentionSizeBreach => "retention.bytes",
            DeletionReason::RetentionMsBreach => "retention.ms",
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sourced {
    pub value: i64,
    pub source: String,
}

/// A [`Sourced`] field as two JSON keys, `NAME` (the value) and `NAMESource`, so that a
/// concept keeps one type across commands (`logStartOffset` is a number everywhere). Used as
/// `#[serde(flatten, serialize_with = "sourced_as::log_start_offset")]`.
pub mod sourced_as {
    use super::Sourced;
    use serde::ser::{SerializeMap, Serializer};

    fn flat<S: Serializer>(v: Option<&Sourced>, name: &str, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry(name, &v.map(|v| v.value))?;
        m.serialize_entry(&format!("{name}Source"), &v.map(|v| &v.source))?;
        m.end()
    }

    pub fn log_start_offset<S: Serializer>(v: &Sourced, s: S) -> Result<S::Ok, S::Error> {
        flat(Some(v), "logStartOffset", s)
    }

    pub fn high_watermark<S: Serializer>(v: &Sourced, s: S) -> Result<S::Ok, S::Error> {
        flat(Some(v), "highWatermark", s)
    }

    pub fn first_dirty_offset<S: Serializer>(v: &Sourced, s: S) -> Result<S::Ok, S::Error> {
        flat(Some(v), "firstDirtyOffset", s)
    }

    /// Both keys null when there is nothing to lag against.
    pub fn lag_against<S: Serializer>(v: &Option<Sourced>, s: S) -> Result<S::Ok, S::Error> {
        flat(v.as_ref(), "lagAgainst", s)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletedSegment {
    pub base_offset: i64,
    /// The next segment's base offset (the log end offset for the last segment).
    pub upper_bound_offset: i64,
    pub size: u64,
    #[serde(rename = "maxTimestamp")]
    pub largest_timestamp: i64,
    /// `records` (the time index's last entry) or `mtime` (the `.log` modification time).
    pub timestamp_source: &'static str,
    pub reason: DeletionReason,
    /// The numbers behind the decision, in words.
    pub detail: String,
    /// Files renamed with `.deleted` and then removed (the producer snapshot at the base too).
    pub files: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemainingSegment {
    pub base_offset: i64,
    pub size: u64,
    #[serde(rename = "maxTimestamp")]
    pub largest_timestamp: i64,
    pub timestamp_source: &'static str,
    pub active: bool,
    /// The first time (ms) at which time retention deletes it, if nothing else changes; None
    /// when it cannot be time-deleted as things stand (see `note`).
    pub eligible_at_ms: Option<i64>,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RetentionReport {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub dir: PathBuf,
    #[serde(skip)]
    pub topic_partition: Option<(String, i32)>,
    pub now_ms: i64,
    pub retention_ms: i64,
    pub retention_bytes: i64,
    pub log_end_offset: i64,
    #[serde(flatten, serialize_with = "sourced_as::high_watermark")]
    pub high_watermark: Sourced,
    #[serde(flatten, serialize_with = "sourced_as::log_start_offset")]
    pub log_start_offset: Sourced,
    pub new_log_start_offset: i64,
    pub size_before: u64,
    pub bytes_freed: u64,
    /// Every segment goes: the broker first rolls an empty segment (and a producer snapshot)
    /// at this offset.
    pub rolled_at: Option<i64>,
    #[serde(rename = "deletedSegments")]
    pub deleted: Vec<DeletedSegment>,
    #[serde(rename = "remainingSegments")]
    pub remaining: Vec<RemainingSegment>,
    pub checkpoint_updates: Vec<CheckpointUpdate>,
    #[serde(skip)]
    config: LogConfig,
    #[serde(skip)]
    producer_id_expiration_ms: i64,
}

/// The high watermark and log start offset the broker would use, and where they came from.
pub fn partition_offsets(
    view: &PartitionView,
    high_watermark: Option<i64>,
    log_start_offset: Option<i64>,
) -> Result<(Sourced, Sourced)> {
    let from_checkpoint = |file: &str, fallback: (i64, &str)| -> Result<Sourced> {
        Ok(match view.checkpoint_offset(file)? {
            Some((path, value)) => Sourced {
                value,
                source: path.display().to_string(),
            },
            None => Sourced {
                value: fallback.0,
                source: fallback.1.to_string(),
            },
        })
    };
    let mut hw = match high_watermark {
        Some(value) => Sourced {
            value,
            source: "--high-watermark".into(),
        },
        None => from_checkpoint(
            REPLICATION_OFFSET_CHECKPOINT_FILE_NAME,
            (view.log_end_offset, "log end offset"),
        )?,
    };
    // The broker bounds a high watermark by the log end (a checkpointed one can run ahead of
    // a log cut by recovery).
    if hw.value > view.log_end_offset {
        hw = Sourced {
            value: view.log_end_offset,
            source: format!(
                "log end offset: {} from {} is past it, and the broker bounds the high watermark by the log end",
                hw.value, hw.source
            ),
        };
    }
    let first_base = view.segments[0].base_offset;
    // Named as every command names it; the loader never lets the log start below the first
    // segment, a given one included.
    let loaded = match log_start_offset {
        Some(offset) if offset >= first_base => LogStart {
            offset,
            source: LogStartSource::Given,
        },
        Some(_) => LogStart {
            offset: first_base,
            source: LogStartSource::FirstSegment,
        },
        None => loaded_log_start(&view.dir, first_base)?,
    };
    let lso = Sourced {
        value: loaded.offset,
        source: loaded.source.as_str().to_owned(),
    };
    if lso.value > view.log_end_offset {
        return Err(Error::invalid(
            &view.dir,
            format!(
                "log start offset {} ({}) is past the log end offset {}",
                lso.value, lso.source, view.log_end_offset
            ),
        ));
    }
    if lso.value > hw.value {
        return Err(Error::invalid(
            &view.dir,
            format!(
                "log start offset {} ({}) is above the high watermark {} ({})",
                lso.value, lso.source, hw.value, hw.source
            ),
        ));
    }
    Ok((hw, lso))
}

/// The files of segment `base` that exist, with the producer snapshot at that base.
fn segment_files(dir: &Path, base: i64) -> Result<Vec<String>> {
    [
        log_file_name(base),
        index_file_name(base),
        time_index_file_name(base),
        txn_index_file_name(base),
        snapshot_file_name(base),
    ]
    .into_iter()
    .filter_map(|n| match crate::storage::files::exists(&dir.join(&n)) {
        Ok(true) => Some(Ok(n)),
        Ok(false) => None,
        Err(e) => Some(Err(e)),
    })
    .collect()
}

/// The log as the passes change it.
struct Sim<'a> {
    dir: &'a Path,
    segments: Vec<SegmentView>,
    log_start_offset: i64,
    high_watermark: i64,
    log_end_offset: i64,
    now_ms: i64,
    rolled_at: Option<i64>,
    deleted: Vec<DeletedSegment>,
}

impl Sim<'_> {
    /// `deletableSegments` + `deleteSegments` for one pass; `predicate` sees the segment and
    /// its successor and returns why it may go.
    fn pass(
        &mut self,
        reason: DeletionReason,
        mut predicate: impl FnMut(&SegmentView, Option<&SegmentView>) -> Option<String>,
    ) -> Result<()> {
        let mut deletable = Vec::new();
        for (i, s) in self.segments.iter().enumerate() {
            let next = self.segments.get(i + 1);
            let upper = next.map_or(self.log_end_offset, |n| n.base_offset);
            let is_last_and_empty = next.is_none() && s.size == 0;
            if self.high_watermark < upper || is_last_and_empty {
                break;
            }
            match predicate(s, next) {
                Some(detail) => deletable.push((upper, detail)),
                None => break,
            }
        }
        if deletable.is_empty() {
            return Ok(());
        }
        if deletable.len() == self.segments.len() {
            // The log keeps a segment: roll an empty one at the log end offset first.
            self.segments.push(SegmentView {
                base_offset: self.log_end_offset,
                size: 0,
                mtime_ms: self.now_ms,
                max_timestamp: -1,
                offset_index_bytes: 0,
                time_index_bytes: 0,
            });
            self.rolled_at = Some(self.log_end_offset);
        }
        let gone: Vec<SegmentView> = self.segments.drain(..deletable.len()).collect();
        let new_start = self.segments[0].base_offset;
        if new_start > self.log_start_offset {
            self.log_start_offset = new_start;
            self.high_watermark = self.high_watermark.max(new_start);
        }
        for (s, (upper, detail)) in gone.into_iter().zip(deletable) {
            self.deleted.push(DeletedSegment {
                base_offset: s.base_offset,
                upper_bound_offset: upper,
                size: s.size,
                largest_timestamp: s.largest_timestamp(),
                timestamp_source: s.timestamp_source(),
                reason,
                detail,
                files: segment_files(self.dir, s.base_offset)?,
            });
        }
        Ok(())
    }

    fn total_size(&self) -> u64 {
        self.segments.iter().map(|s| s.size).sum()
    }
}

/// Plans retention for the partition directory `dir`.
pub fn plan_retention(dir: &Path, opts: &RetentionOptions) -> Result<RetentionReport> {
    let view = PartitionView::open(dir)?;
    let (hw, lso) = partition_offsets(&view, opts.high_watermark, opts.log_start_offset)?;
    let mut sim = Sim {
        dir,
        segments: view.segments.clone(),
        log_start_offset: lso.value,
        high_watermark: hw.value,
        log_end_offset: view.log_end_offset,
        now_ms: opts.now_ms,
        rolled_at: None,
        deleted: Vec::new(),
    };
    let size_before = sim.total_size();

    let start = sim.log_start_offset;
    sim.pass(DeletionReason::LogStartOffsetBreach, |_, next| {
        let next = next?;
        (next.base_offset <= start).then(|| {
            format!(
                "the next segment starts at {} <= log start offset {start}",
                next.base_offset
            )
        })
    })?;

    let limit = opts.retention_bytes;
    let total = sim.total_size();
    if limit >= 0 && total >= limit as u64 {
        let mut diff = total as i64 - limit;
        sim.pass(DeletionReason::RetentionSizeBreach, |s, _| {
            let size = s.size as i64;
            (diff - size >= 0).then(|| {
                let detail = format!(
                    "the log is {} over retention.bytes={limit}; without this segment's {} it is {} over",
                    crate::ops::human::size(diff as u64),
                    crate::ops::human::size(size as u64),
                    crate::ops::human::size((diff - size) as u64)
                );
                diff -= size;
                detail
            })
        })?;
    }

    let ms = opts.retention_ms;
    let now = opts.now_ms;
    if ms >= 0 {
        sim.pass(DeletionReason::RetentionMsBreach, |s, _| {
            let age = now.saturating_sub(s.largest_timestamp());
            (age > ms).then(|| {
                // The timestamp itself and its source are beside this in the table and the
                // JSON (`largestTimestamp`), as a time people read rather than epoch ms.
                format!(
                    "the largest timestamp is {} old ({age} ms) > retention.ms {} ({ms} ms)",
                    exact_duration(age),
                    exact_duration(ms)
                )
            })
        })?;
    }

    let remaining = remaining_segments(&sim, ms);
    let bytes_freed = sim.deleted.iter().map(|d| d.size).sum();
    let checkpoint_updates = if sim.deleted.is_empty() {
        Vec::new()
    } else {
        shutdown_checkpoint_updates(
            dir,
            &ShutdownOffsets {
                log_start_offset: sim.log_start_offset,
                first_segment_base: sim.segments[0].base_offset,
                log_end_offset: sim.log_end_offset,
            },
        )?
    };
    Ok(RetentionReport {
        dir: dir.to_path_buf(),
        topic_partition: view.topic_partition.clone(),
        now_ms: opts.now_ms,
        retention_ms: opts.retention_ms,
        retention_bytes: opts.retention_bytes,
        log_end_offset: view.log_end_offset,
        high_watermark: hw,
        log_start_offset: lso,
        new_log_start_offset: sim.log_start_offset,
        size_before,
        bytes_freed,
        rolled_at: sim.rolled_at,
        deleted: sim.deleted,
        remaining,
        checkpoint_updates,
        config: opts.config,
        producer_id_expiration_ms: opts.producer_id_expiration_ms,
    })
}

/// When each remaining segment would go by time, if nothing but the clock changes: its own
/// deadline, but never before the segments ahead of it (only a prefix is deleted).
fn remaining_segments(sim: &Sim<'_>, retention_ms: i64) -> Vec<RemainingSegment> {
    let mut out = Vec::new();
    let mut earliest = i64::MIN;
    let mut first_blocked: Option<i64> = None;
    for (i, s) in sim.segments.iter().enumerate() {
        let next = sim.segments.get(i + 1);
        let upper = next.map_or(sim.log_end_offset, |n| n.base_offset);
        let active = next.is_none();
        let ts = s.largest_timestamp();
        let own_block = if retention_ms < 0 {
            Some("retention.ms is unlimited".to_string())
        } else if sim.high_watermark < upper {
            Some(format!(
                "holds offsets at or above the high watermark {}",
                sim.high_watermark
            ))
        } else if active && s.size == 0 {
            Some("the empty active segment is never deleted".to_string())
        } else {
            None
        };
        let (eligible_at_ms, note) = match (first_blocked, own_block) {
            (_, Some(why)) if retention_ms < 0 => (None, why),
            (Some(base), _) => (None, format!("behind segment {base}, which cannot go yet")),
            (None, Some(why)) => {
                first_blocked = Some(s.base_offset);
                (None, why)
            }
            (None, None) => {
                let own = ts.saturating_add(retention_ms).saturating_add(1);
                let note = if own < earliest {
                    "after the segments before it".to_string()
                } else if ts > sim.now_ms {
                    "largest timestamp is in the future: it holds back every later segment"
                        .to_string()
                } else if active {
                    "active segment: the broker rolls a new one first".to_string()
                } else {
                    String::new()
                };
                earliest = earliest.max(own);
                (Some(earliest), note)
            }
        };
        out.push(RemainingSegment {
            base_offset: s.base_offset,
            size: s.size,
            largest_timestamp: ts,
            timestamp_source: s.timestamp_source(),
            active,
            eligible_at_ms,
            note,
        });
    }
    out
}

impl RetentionReport {
    /// What `--apply` changes, in execution order: the rolled segment's files (when every
    /// segment goes), what else the deletion and a clean shutdown rewrite (the leader epoch
    /// checkpoint, snapshots, leftovers of an interrupted run) and the log dir's checkpoints,
    /// then the deleted segments' files oldest first (so an interrupted run leaves a
    /// contiguous log, and a rerun finishes it). The engine carries the plan out on the
    /// directory staged in `scratch` (`storage::files::Staging`: segment data read from the
    /// original, not copied; load, one `deleteSegments` per pass, clean close); the changes
    /// turn the original into what the engine left there.
    ///
    /// As the broker does (behavior.md §5.4, `deleteSegmentFiles`: the old files' half of the
    /// segment replace), every file of the deleted segments is first renamed to `.deleted`,
    /// oldest segment first, and only then unlinked (the broker waits `file.delete.delay.ms`
    /// for readers; offline there are none). A crash in between leaves `.deleted` files, which
    /// the next load removes.
    pub fn changes(&self, scratch: &Path) -> Result<Vec<Change>> {
        let staging =
            crate::storage::files::Staging::within(scratch, "log", &self.dir, apply::TMP_SUFFIX)?;
        let work = staging.work().to_path_buf();
        let params = LoadParams {
            had_clean_shutdown: true,
            recovery_point: self.log_end_offset,
            log_start_offset: self.log_start_offset.value,
            now_ms: self.now_ms,
            producer_id_expiration_ms: self.producer_id_expiration_ms,
        };
        let (mut log, _) =
            Log::load(&work, self.config, params).map_err(|e| e.rebased(&work, &self.dir))?;
        let mut deleted_bases = Vec::new();
        for pass in self.deleted.chunk_by(|a, b| a.reason == b.reason) {
            deleted_bases.extend(log.delete_oldest_segments(pass.len())?);
        }
        log.close(CloseMode::Clean)?;
        let planned: Vec<i64> = self.deleted.iter().map(|d| d.base_offset).collect();
        if deleted_bases != planned {
            return Err(Error::invalid(
                &self.dir,
                format!("the log deleted segments {deleted_bases:?}, the plan {planned:?}"),
            ));
        }
        // A set: every name of both directories is looked up in it.
        let gone: std::collections::HashSet<&str> = self
            .deleted
            .iter()
            .flat_map(|d| &d.files)
            .map(String::as_str)
            .collect();
        let diff = apply::diff_dirs(&self.dir, &work, &|n| !gone.contains(n))?;
        // The broker rolls before it deletes: at no point is the log without a segment.
        let (mut out, rest): (Vec<Change>, Vec<Change>) = diff.into_iter().partition(|c| {
            self.rolled_at.is_some()
                && c.file()
                    .file_name()
                    .and_then(|n| parse_offset_prefix(&n.to_string_lossy()))
                    == self.rolled_at
        });
        // The `.log` first: it is what makes the segment exist for the loader.
        out.sort_by_key(|c| c.file().extension().is_none_or(|e| e != "log"));
        // Then what the deletion leaves besides (the leader epoch checkpoint truncated from the
        // start, snapshots, the log dir's checkpoints, the leftovers of an interrupted run
        // removed as the loader removes them), and the deletions last: a rerun plans them from
        // the segments still there, so until the last one is gone it plans the same result,
        // while these writes, were they to come after, would be planned by nothing once the
        // segments are gone.
        // The leader epoch checkpoint alone comes after the deletions: a rerun that finds
        // them done derives its truncation from the start again ([`Self::stale_epochs`]),
        // while written first it would start at the rolled log end, which the rerun's load
        // drops (`truncateFromEnd`).
        let epochs = self.dir.join(LEADER_EPOCH_CHECKPOINT_FILE_NAME);
        let (epoch_write, mut rest): (Vec<Change>, Vec<Change>) =
            rest.into_iter().partition(|c| c.file() == epochs);
        if self.deleted.is_empty() {
            // Nothing to delete: only what an interrupted run left undone (its leftovers, the
            // epoch truncation), not what the load alone would change.
            let leftovers: std::collections::HashSet<PathBuf> =
                apply::interrupted_leftovers(&self.dir)?
                    .into_iter()
                    .collect();
            rest.retain(|c| leftovers.contains(c.file()));
        }
        out.extend(rest);
        if let Some(tp) = &self.topic_partition {
            out.extend(checkpoint_writes(&self.checkpoint_updates, tp, scratch)?);
        }
        let gone: Vec<PathBuf> = self
            .deleted
            .iter()
            .flat_map(|d| &d.files)
            .map(|n| self.dir.join(n))
            .collect();
        out.extend(apply::replace_segments(&[], &gone)?);
        out.extend(epoch_write);
        // The staged files outlive the staging (they are in `scratch`): the placeholders
        // among the sources get their bytes before it ends.
        apply::materialize_sources(&out)?;
        Ok(out)
    }

    /// Whether the leader epoch checkpoint still lists epochs below the log start offset, as
    /// a deletion interrupted before `truncateFromStart` was recorded leaves it: retention
    /// truncates it then even with nothing left to delete (the engine's load truncates from
    /// the log start, `LogLoader`), so a rerun finishes the job.
    pub fn stale_epochs(&self) -> Result<bool> {
        let cache = crate::storage::leader_epoch::LeaderEpochCache::read(&self.dir)?;
        Ok(cache
            .as_ref()
            .and_then(|c| c.entries().first())
            .is_some_and(|e| e.start_offset < self.new_log_start_offset))
    }

    /// The changes [`Self::apply`] makes, planned in a new scratch directory that holds the
    /// new files' bytes while it lives (a dry run states their disk space).
    pub fn planned_changes(&self) -> Result<(tempfile::TempDir, Vec<Change>)> {
        let scratch = crate::storage::files::scratch_dir()?;
        let changes = self
            .changes(scratch.path())
            .map_err(|e| crate::storage::files::scratch_full(e, scratch.path()))?;
        Ok((scratch, changes))
    }

    /// Carries out the plan through the crash-safe executor (lock probe, backup first), in a
    /// partition directory the broker runs retention in only.
    pub fn apply(&self, opts: &ApplyOptions) -> Result<Option<PathBuf>> {
        crate::ops::input::repair_target(&self.dir, crate::error::Work::Retention)?;
        let (_scratch, changes) = self.planned_changes()?;
        let plan =
            serde_json::to_string(self).map_err(|e| Error::invalid(&self.dir, e.to_string()))?;
        apply::apply(&self.dir, &changes, &plan, opts)
    }
}
