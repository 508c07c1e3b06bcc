//! `compact --apply`: the round computed into a scratch dir, then planned as the broker's
//! segment replace in place, through the crash-safe executor; and the resolution of an
//! interrupted run's leftovers first.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::{clean_round, CompactOptions, CompactReport};
use crate::error::{Error, Result};
use crate::format::names::{parse_partition_dir, CLEANER_OFFSET_CHECKPOINT_FILE_NAME};
use crate::ops::partition::checkpoint_entry;
use crate::ops::repair::apply::interrupted_leftovers;
use crate::ops::repair::log_dir::{
    checkpoint_writes, log_dir_of, shutdown_checkpoint_updates, CheckpointUpdate, ShutdownOffsets,
};
use crate::ops::repair::recover::{plan_after_clean_shutdown, RecoverOptions, RecoverPlan};
use crate::storage::files::segment_files;
use crate::storage::replace::staged_segment;
use crate::storage::LogConfig;

/// `compact --apply`: the cleaning round carried out in place with the broker's file dance
/// (`LocalLog.replaceSegments`, behavior.md §6.8), group by group: the cleaned segment's files
/// written as `.cleaned`, renamed to `.swap`, the replaced segments' files renamed to
/// `.deleted` and deleted, the `.swap` files renamed to their final names; then the replaced
/// bases' producer snapshots go the same two-step way and the log dir's
/// `cleaner-offset-checkpoint` takes the new first dirty offset. Computed with [`compact_to`]
/// into a scratch dir, so the result is byte for byte what `--out` writes. A crash at any
/// point leaves a directory the broker's loader (and `kseg recover`) resolves to either the
/// old or the new segments of the interrupted group.
#[derive(Debug)]
pub struct CompactPlan {
    pub report: CompactReport,
    pub changes: Vec<crate::ops::repair::apply::Change>,
    _scratch: tempfile::TempDir,
}

impl CompactPlan {
    /// Why nothing will record the offset this cleaning ends at, when the partition directory
    /// is not in a log dir: a later run (as the broker's cleaner without a checkpoint) takes
    /// the whole log as dirty again unless told where the cleaning ended.
    pub fn unrecorded_clean_offset(&self) -> Option<String> {
        let cleans = self.changes.iter().any(|c| {
            c.file()
                .file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(".cleaned"))
        });
        // The plan read the same files: an error there stopped it.
        (cleans && matches!(log_dir_of(&self.report.dir), Ok(None))).then(|| {
            format!(
                "{} is not in a log dir (no meta.properties or offset checkpoint beside it): no cleaner-offset-checkpoint records that cleaning ends at offset {}; a rerun takes the whole log as dirty unless given --first-dirty-offset {}",
                self.report.dir.display(),
                self.report.end_offset,
                self.report.end_offset
            )
        })
    }

    pub fn apply(&self, opts: &crate::ops::repair::apply::ApplyOptions) -> Result<Option<PathBuf>> {
        let plan = serde_json::json!({ "report": self.report, "changes": self.changes });
        crate::ops::repair::apply::apply(&self.report.dir, &self.changes, &plan.to_string(), opts)
    }
}

/// When `dir` holds leftovers of an interrupted `compact --apply` (or of the broker's own
/// cleaner), the recovery that resolves them as the broker's loader does at start-up: what a
/// rerun of `compact --apply` carries out before cleaning again.
pub fn plan_resolve_leftovers(dir: &Path, opts: &CompactOptions) -> Result<Option<RecoverPlan>> {
    crate::ops::input::repair_target(dir, crate::error::Work::Cleaning)?;
    if interrupted_leftovers(dir)?.is_empty() {
        return Ok(None);
    }
    let recover_opts = RecoverOptions {
        config: LogConfig {
            segment_bytes: opts.segment_bytes,
            segment_index_bytes: opts.segment_index_bytes,
            index_interval_bytes: opts.index_interval_bytes,
            ..LogConfig::default()
        },
        now_ms: opts.now_ms,
        recovery_point: None,
        producer_id_expiration_ms: opts.producer_id_expiration_ms,
    };
    // The segments the interrupted run did not touch are as sound as before it: only the
    // swap's own segments are recovered (the loader always recovers a `.swap` segment), so the
    // rerun's result is the uninterrupted run's.
    plan_after_clean_shutdown(dir, &recover_opts).map(Some)
}

/// The base offset of the first segment in `dir` (cleaning keeps it: a group keeps its first
/// segment's base).
fn first_segment_base(dir: &Path) -> Result<i64> {
    let mut bases = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let n = e.map_err(|e| Error::io(dir, e))?.file_name();
        if let crate::format::names::FileKind::Log { base_offset } =
            crate::format::names::classify(&n.to_string_lossy())
        {
            bases.push(base_offset);
        }
    }
    Ok(bases.into_iter().min().unwrap_or(0))
}

/// Plans `compact --apply` on the partition directory `dir`. Refuses a directory holding
/// leftovers of an interrupted swap: [`plan_resolve_leftovers`] resolves them first.
pub fn plan_apply(dir: &Path, opts: &CompactOptions) -> Result<CompactPlan> {
    crate::ops::input::repair_target(dir, crate::error::Work::Cleaning)?;
    if let Some(p) = interrupted_leftovers(dir)?.first() {
        return Err(Error::invalid(
            p,
            "a leftover of an interrupted run; resolve it first (rerun `kseg compact --apply`, or `kseg recover --apply`)",
        ));
    }
    let scratch = tempfile::tempdir().map_err(|e| Error::io(&std::env::temp_dir(), e))?;
    let out_log_dir = scratch.path().join("out");
    let mut report = clean_round(dir, &out_log_dir, opts, false)?;
    let out = report.out.take().unwrap_or_default();
    let mut changes = Vec::new();
    if report.cleaned {
        let new_bases: HashSet<i64> = report.segments.iter().map(|s| s.base_offset).collect();
        let mut snapshots = Vec::new();
        // One replace per new segment, as the cleaner calls it once per group.
        for seg in &report.segments {
            let new = staged_segment(&out, seg.base_offset, dir)?;
            let mut old: Vec<PathBuf> = Vec::new();
            for &o in &seg.sources {
                old.extend(segment_files(dir, o)?);
            }
            changes.extend(crate::ops::repair::apply::replace_segments(&[new], &old)?);
            for &old in &seg.sources {
                let snap = dir.join(crate::format::names::snapshot_file_name(old));
                if !new_bases.contains(&old) && crate::storage::files::is_file(&snap)? {
                    snapshots.push(snap);
                }
            }
        }
        // The replaced bases' snapshots go the way of their segments (renamed, then deleted).
        changes.extend(crate::ops::repair::apply::replace_segments(
            &[],
            &snapshots,
        )?);
        // `LogCleanerManager.doneCleaning`: the log dir's cleaner-offset-checkpoint gets this
        // partition's entry, set or added. A directory outside a log dir has no such file
        // (the broker keeps one per log dir): nothing records the cleaned offset there
        // (`unrecorded_clean_offset` says so).
        // Then the clean shutdown's recovery-point and log-start checkpoints, as after every
        // other operation (`LogManager.shutdown`): cleaning moves neither offset, so they
        // change only where the log dir lacks them.
        if let Some(log_dir) = log_dir_of(dir)? {
            let file = log_dir.join(CLEANER_OFFSET_CHECKPOINT_FILE_NAME);
            let before = checkpoint_entry(dir, CLEANER_OFFSET_CHECKPOINT_FILE_NAME)?
                .map(|(_, c, i)| c.entries[i].offset);
            let update = CheckpointUpdate {
                created: !crate::storage::files::exists(&file)?,
                file,
                before,
                after: Some(report.end_offset),
            };
            let mut updates = shutdown_checkpoint_updates(
                dir,
                &ShutdownOffsets {
                    log_start_offset: report.log_start_offset.value,
                    first_segment_base: first_segment_base(dir)?,
                    log_end_offset: report.log_end_offset,
                },
            )?;
            // The cleaner's checkpoint last: once it records the cleaning, a rerun plans none,
            // so everything else must be done by then.
            if update.created || update.before != update.after {
                updates.push(update);
            }
            if !updates.is_empty() {
                let name = dir.file_name().unwrap_or_default().to_string_lossy();
                let pd = parse_partition_dir(&name).ok_or_else(|| {
                    Error::invalid(dir, "the directory name is not <topic>-<partition>")
                })?;
                changes.extend(checkpoint_writes(
                    &updates,
                    &(pd.topic, pd.partition),
                    scratch.path(),
                )?);
            }
        }
    }
    report.out = None;
    Ok(CompactPlan {
        report,
        changes,
        _scratch: scratch,
    })
}
