//! `recover`: what the broker does to a partition directory on an unclean restart
//! (`LogLoader.load`: recovery from the recovery point, truncation at the first invalid batch,
//! later segments dropped, indexes, producer snapshots and leader epochs rebuilt, leftovers
//! resolved, legacy segments whose offsets overflow split), followed by a clean close —
//! computed by the engine on a staging directory whose segment data is read from the original
//! (`storage::files::Staging`: no `.log` copied, a cut recorded as a length), so a dry run
//! changes nothing, and carried out through the crash-safe executor.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::apply::{self, ApplyOptions, Change};
use super::dropped::{dropped, event_lines};
use super::housekeeping::{classify_changes, mark_corrupt, needs_corruption_check, ChangeClass};
use super::log_dir::{
    checkpoint_writes, shutdown_checkpoint_updates, unrecorded_log_start, ShutdownOffsets,
};
use crate::error::Result;
use crate::format::names::{
    parse_partition_dir, LOG_START_OFFSET_CHECKPOINT_FILE_NAME, RECOVERY_POINT_CHECKPOINT_FILE_NAME,
};
use crate::ops::check::verify::{verify_paths, VerifyOptions};
use crate::ops::finding::Finding;
use crate::ops::partition::checkpoint_entry;
use crate::storage::files::{file_len, same_prefix, segment_files};
use crate::storage::replace::staged_segment;
use crate::storage::{CloseMode, LoadEvent, LoadParams, LoadReport, Log, LogConfig};

#[derive(Debug, Clone, Copy)]
pub struct RecoverOptions {
    pub config: LogConfig,
    pub now_ms: i64,
    /// Else the log dir's `recovery-point-offset-checkpoint`, else 0.
    pub recovery_point: Option<i64>,
    pub producer_id_expiration_ms: i64,
}

/// What recovery would change.
#[derive(Debug)]
pub struct RecoverPlan {
    pub dir: PathBuf,
    /// Where recovery started and why.
    pub recovery_point: i64,
    pub recovery_point_source: &'static str,
    pub report: LoadReport,
    /// The log's offsets after recovery and the clean close.
    pub offsets: ShutdownOffsets,
    pub changes: Vec<Change>,
    /// What each of `changes` is: damage repaired or the start-up's housekeeping.
    pub classes: Vec<ChangeClass>,
    /// How long loading the staged directory took: the recovery walk the broker's start-up
    /// does too (the staging and the comparison around it are kseg's own).
    pub load_time: std::time::Duration,
    /// What `verify --deep` reports on the directory as recovery leaves it (errors and
    /// warnings the broker's recovery keeps: a batch whose CRC holds but whose records do not
    /// decode, offsets out of order, counts, timestamps, leader-epoch coverage…), in the
    /// directory's own paths; the reason when it could not be checked. `None` until
    /// [`RecoverPlan::check_remains`] runs: it reads the whole partition, where the plan reads
    /// only what lies past the recovery point.
    pub remains: Option<std::result::Result<Vec<Finding>, String>>,
    /// Holds the staged files the writes come from.
    _scratch: crate::storage::files::Staging,
}

/// The changes of each offset-overflow split the recovery of the staged directory `work` did, as the
/// broker's segment replace ([`apply::replace_segments`], §2.6) of the original's files by the
/// new segments'. The diff's changes of those segment files are taken out of `changes`.
fn split_changes(
    dir: &Path,
    work: &Path,
    report: &LoadReport,
    changes: &mut Vec<Change>,
) -> Result<Vec<Change>> {
    let mut out = Vec::new();
    let mut done = std::collections::BTreeSet::new();
    for e in &report.events {
        let LoadEvent::SegmentSplit {
            base_offset,
            new_bases,
            ..
        } = e
        else {
            continue;
        };
        // A segment met while loading keeps its `.log` when its first batch starts above its
        // base, and recovery splits it again: its files are replaced once.
        if !done.insert(*base_offset) {
            continue;
        }
        let new: Vec<_> = new_bases
            .iter()
            .map(|&b| staged_segment(work, b, dir))
            .collect::<Result<_>>()?;
        let finals: Vec<PathBuf> = new.iter().flatten().map(|(_, f)| f.clone()).collect();
        let originals = segment_files(dir, *base_offset)?;
        out.extend(apply::replace_segments(&new, &originals)?);
        changes.retain(|c| !finals.iter().chain(&originals).any(|f| f == c.file()));
    }
    Ok(out)
}

/// Each `.swap` file the loader renamed into place whose bytes are the final ones is renamed
/// too, as the broker does (a file keeps its mtime), instead of the diff's delete and write.
fn swap_renames(
    dir: &Path,
    work: &Path,
    report: &LoadReport,
    changes: &mut Vec<Change>,
) -> Result<()> {
    for e in &report.events {
        let LoadEvent::SwapCompleted { from, to } = e else {
            continue;
        };
        let (from, to, fin) = (dir.join(from), dir.join(to), work.join(to));
        if !crate::storage::files::is_file(&fin)? {
            continue;
        }
        let len = file_len(&from)?;
        if file_len(&fin)? != len || !same_prefix(&from, &fin, len)? {
            continue;
        }
        changes.retain(|c| c.file() != from && c.file() != to);
        changes.push(Change::Rename {
            size: file_len(&from)?,
            from,
            to,
        });
    }
    Ok(())
}

/// Computes the plan for the partition directory `dir`.
pub fn plan(dir: &Path, opts: &RecoverOptions) -> Result<RecoverPlan> {
    plan_load(dir, opts, false)
}

/// The plan of the broker's load after a clean shutdown: leftovers resolved (`.swap`
/// segments recovered and swapped in, `.cleaned` and `.deleted` files removed), no other
/// segment recovered. What a rerun of kseg's own interrupted swap needs: the segments it did
/// not touch are as sound as before.
pub fn plan_after_clean_shutdown(dir: &Path, opts: &RecoverOptions) -> Result<RecoverPlan> {
    plan_load(dir, opts, true)
}

fn plan_load(dir: &Path, opts: &RecoverOptions, had_clean_shutdown: bool) -> Result<RecoverPlan> {
    crate::ops::input::repair_target(dir, crate::error::Work::Recovery)?;
    let (recovery_point, recovery_point_source) = match opts.recovery_point {
        Some(rp) => (rp, "--recovery-point"),
        None => match checkpoint_entry(dir, RECOVERY_POINT_CHECKPOINT_FILE_NAME)? {
            Some((_, c, i)) => (c.entries[i].offset, RECOVERY_POINT_CHECKPOINT_FILE_NAME),
            None => (
                0,
                "the start of the log (no checkpoint names the partition)",
            ),
        },
    };
    let log_start_checkpoint = checkpoint_entry(dir, LOG_START_OFFSET_CHECKPOINT_FILE_NAME)?;
    let scratch = apply::stage_for_planning(dir)?;
    let work = scratch.work().to_path_buf();
    let params = LoadParams {
        had_clean_shutdown,
        recovery_point,
        log_start_offset: log_start_checkpoint
            .as_ref()
            .map_or(0, |(_, c, i)| c.entries[*i].offset),
        now_ms: opts.now_ms,
        producer_id_expiration_ms: opts.producer_id_expiration_ms,
    };
    let started = std::time::Instant::now();
    let (log, report) = Log::load(&work, opts.config, params).map_err(|e| e.rebased(&work, dir))?;
    let load_time = started.elapsed();
    let first_segment_base = log.segments().next().map_or(0, |s| s.base_offset());
    log.close(CloseMode::Clean)?;
    let mut changes = apply::diff_dirs(dir, &work, &|_| true)?;
    let split = split_changes(dir, &work, &report, &mut changes)?;
    swap_renames(dir, &work, &report, &mut changes)?;
    // The log dir's checkpoints as the clean shutdown after recovery writes them.
    let offsets = ShutdownOffsets {
        log_start_offset: report.log_start_offset,
        first_segment_base,
        log_end_offset: report.log_end_offset,
    };
    let updates = shutdown_checkpoint_updates(dir, &offsets)?;
    if let Some(pd) = dir
        .file_name()
        .and_then(|n| parse_partition_dir(&n.to_string_lossy()))
    {
        changes.extend(checkpoint_writes(
            &updates,
            &(pd.topic, pd.partition),
            scratch.scratch(),
        )?);
    }
    apply::order_changes(&mut changes);
    // The splits go first, each in the broker's own replace order: every point of it is one
    // the loader resolves (§2.3 steps 1–2), and what follows is ordinary recovery.
    changes.splice(0..0, split);
    apply::materialize_sources(&changes)?;
    let mut classes = classify_changes(&changes, &report);
    if needs_corruption_check(&changes, &classes) {
        let corrupt = corrupt_files(dir);
        mark_corrupt(&changes, &mut classes, &|f| match &corrupt {
            Some(names) => f.file_name().is_some_and(|n| names.contains(n)),
            None => true,
        });
    }
    Ok(RecoverPlan {
        dir: dir.to_path_buf(),
        recovery_point,
        recovery_point_source,
        report,
        offsets,
        changes,
        classes,
        load_time,
        remains: None,
        _scratch: scratch,
    })
}

/// The names of the files of `dir` that `verify` reports an error on, as they are before the
/// plan: a file recovery replaces is damage when it was corrupt. None when `dir` could not
/// be checked: then no replaced file is known to be sound.
fn corrupt_files(dir: &Path) -> Option<std::collections::BTreeSet<std::ffi::OsString>> {
    let report = verify_paths(&[dir.to_path_buf()], &VerifyOptions::default(), &|_| {}).ok()?;
    Some(
        report
            .findings()
            .filter(|f| f.severity == crate::ops::finding::Severity::Error)
            .filter_map(|f| f.file.file_name().map(|n| n.to_os_string()))
            .collect(),
    )
}

/// `verify --deep` of the staged directory `work` as recovery and a clean close leave it, each
/// finding named as in `dir`: what the same check of `dir` reports once the plan is applied.
fn remains(work: &Path, dir: &Path) -> std::result::Result<Vec<Finding>, String> {
    let opts = VerifyOptions {
        deep: true,
        ..Default::default()
    };
    let report = verify_paths(&[work.to_path_buf()], &opts, &|_| {})
        .map_err(|e| e.rebased(work, dir).to_string())?;
    Ok(report
        .findings()
        .map(|f| Finding {
            file: crate::error::rebase_path(&f.file, work, dir),
            message: super::rebase_text(&f.message, work, dir),
            ..f.clone()
        })
        .collect())
}

impl RecoverPlan {
    /// Fills [`RecoverPlan::remains`]: `verify --deep` of the directory as the plan leaves it.
    pub fn check_remains(&mut self) {
        // `verify` opens the staged files itself: the ones not yet made are made first.
        self.remains = Some(
            self._scratch
                .materialize_all()
                .map_err(|e| e.to_string())
                .and_then(|()| remains(&self.work(), &self.dir)),
        );
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// How many of the changes are of `class`.
    pub fn count(&self, class: ChangeClass) -> usize {
        self.classes.iter().filter(|c| **c == class).count()
    }

    /// The changes of `class`, in order.
    fn changes_of(&self, class: ChangeClass) -> Vec<Change> {
        self.changes
            .iter()
            .zip(&self.classes)
            .filter(|(_, c)| **c == class)
            .map(|(ch, _)| ch.clone())
            .collect()
    }

    /// Why the log start offset recovery leaves is recorded nowhere, when it is not
    /// ([`unrecorded_log_start`], as retention says it). The loader takes the larger of the
    /// log-start-offset-checkpoint's entry (none outside a log dir) and the first segment's
    /// base (`LogLoader.load`), so outside a log dir recovery leaves the log start at a base.
    pub fn unrecorded_log_start(&self) -> Option<String> {
        unrecorded_log_start(&self.dir, &self.offsets)
    }

    /// The log end offset, when the recovery point lies past it: the broker's loader takes
    /// the smaller of the two (a checkpointed recovery point may run ahead of the log).
    pub fn clamped_recovery_point(&self) -> Option<i64> {
        (self.report.recovery_point < self.recovery_point).then_some(self.report.recovery_point)
    }

    pub fn to_json(&self) -> serde_json::Value {
        // The events name files of the scratch copy the plan was made on: they read as the
        // partition directory's.
        let events = serde_json::to_string(&self.report.events).expect("events serialize");
        let events: serde_json::Value =
            serde_json::from_str(&super::rebase_json(&events, &self.work(), &self.dir))
                .expect("still JSON");
        json!({
            "dir": crate::format::os_path::escaped(&self.dir),
            "recoveryPoint": self.recovery_point,
            "recoveryPointSource": self.recovery_point_source,
            "logStartOffset": self.report.log_start_offset,
            "logStartOffsetSource": crate::ops::partition::LogStartSource::of_loaded(
                self.report.log_start_offset,
                self.offsets.first_segment_base,
            ),
            "logEndOffset": self.report.log_end_offset,
            "events": events,
            "droppedSegments": dropped(self).ok(),
            "remainingFindings": self.remains.as_ref().and_then(|r| r.as_ref().ok()),
            "changes": self.changes.iter().zip(&self.classes).map(|(ch, class)| {
                let mut v = serde_json::to_value(ch).expect("a change serializes");
                v["class"] = json!(class);
                v
            }).collect::<Vec<_>>(),
            "damageCount": self.count(ChangeClass::Damage),
            "housekeepingCount": self.count(ChangeClass::Housekeeping),
        })
    }

    /// The staging directory the plan was made on.
    fn work(&self) -> PathBuf {
        self._scratch.work().to_path_buf()
    }

    /// The plan in words: what recovery found, then the file changes (all of them with
    /// `verbose`).
    pub fn render_text(&self, verbose: bool) -> String {
        let mut out = format!(
            "recover {}: recovery from offset {} ({}); new log end offset {}, log start offset {}\n",
            self.dir.display(),
            self.recovery_point,
            self.recovery_point_source,
            self.report.log_end_offset,
            self.report.log_start_offset
        );
        let drops = dropped(self);
        for line in event_lines(
            &self.report.events,
            drops.as_deref().ok(),
            &self.work(),
            &self.dir,
        ) {
            out.push_str(&format!("  {line}\n"));
        }
        if let Err(e) = drops {
            out.push_str(&format!(
                "  (what recovery drops could not be counted: {e})\n"
            ));
        }
        // Damage under the heading other repairs use; the start-up's own housekeeping apart.
        let damage = self.changes_of(ChangeClass::Damage);
        let housekeeping = self.changes_of(ChangeClass::Housekeeping);
        if damage.is_empty() && !housekeeping.is_empty() {
            out.push_str("no damage to repair\n");
        } else {
            out.push_str(&render_changes(&damage, verbose));
        }
        if !housekeeping.is_empty() {
            out.push_str(&render_changes(&housekeeping, verbose).replacen(
                "changes: ",
                "housekeeping (what every start-up of the broker does, not damage): ",
                1,
            ));
        }
        out
    }

    pub fn apply(&self, opts: &ApplyOptions) -> Result<Option<PathBuf>> {
        apply::apply(&self.dir, &self.changes, &self.to_json().to_string(), opts)
    }
}

pub fn describe(e: &LoadEvent) -> String {
    match e {
        LoadEvent::FileDeleted { file, why } => format!("{file}: deleted ({why})"),
        LoadEvent::SwapCompleted { from, to } => {
            format!("{from}: renamed to {to} (interrupted swap)")
        }
        LoadEvent::SegmentRecovered {
            base_offset,
            cause,
            log_bytes_before,
            truncated_bytes,
            invalid,
            emptied,
        } => {
            let why = match cause {
                crate::storage::RecoveryCause::Unflushed => {
                    "at or after the recovery point".to_string()
                }
                crate::storage::RecoveryCause::SanityCheck(m)
                | crate::storage::RecoveryCause::Requested(m) => m.clone(),
            };
            let mut s = format!("segment {base_offset}: recovered ({why})");
            if let Some(bad) = invalid {
                s.push_str(&format!(
                    "; first invalid data at byte {}: {}",
                    bad.position, bad.reason
                ));
            }
            if *truncated_bytes > 0 {
                s.push_str(&format!(
                    "; bytes {}..{} go ({truncated_bytes} bytes{})",
                    log_bytes_before - truncated_bytes,
                    log_bytes_before,
                    if *emptied { ", the whole segment" } else { "" }
                ));
            }
            s
        }
        LoadEvent::SegmentSplit {
            base_offset,
            position,
            offset,
            new_bases,
        } => format!(
            "segment {base_offset}: split into segments {} (offset {offset} of the batch at byte {position} does not fit a 32-bit offset relative to the base)",
            new_bases
                .iter()
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        LoadEvent::SegmentDeleted {
            base_offset,
            log_bytes,
        } => format!(
            "segment {base_offset}: deleted ({log_bytes} bytes of log), it follows a truncation"
        ),
        LoadEvent::SegmentCreated { base_offset } => {
            format!("segment {base_offset}: created empty at the log start offset")
        }
        LoadEvent::UnknownFileKept { file } => {
            format!("{file}: not a Kafka file; left alone")
        }
    }
}

/// The file changes, one line each, and the total.
/// Changes listed before the rest is summarised, unless `verbose`.
const CHANGES_LISTED: usize = 20;

/// A plan's file changes in the words of its JSON (`write`, `truncate`, `delete`, `rename`):
/// a summary line first, then each change in the order they are made; past
/// [`CHANGES_LISTED`] the rest is counted by action unless `verbose`.
pub fn render_changes(changes: &[Change], verbose: bool) -> String {
    use crate::ops::human::size;
    if changes.is_empty() {
        return "no file changes\n".to_string();
    }
    let counts = |cs: &[Change]| {
        let mut by_action: Vec<(&str, usize)> = Vec::new();
        for c in cs {
            match by_action.iter_mut().find(|(a, _)| *a == c.action()) {
                Some((_, n)) => *n += 1,
                None => by_action.push((c.action(), 1)),
            }
        }
        by_action
            .iter()
            .map(|(a, n)| format!("{n} {a}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = format!("changes: {} file(s): {}\n", changes.len(), counts(changes));
    let listed = if verbose {
        changes.len()
    } else {
        changes.len().min(CHANGES_LISTED)
    };
    for c in &changes[..listed] {
        let line = match c {
            Change::Write {
                file,
                size_before: Some(b),
                size_after,
                ..
            } => format!(
                "write    {} ({} -> {})",
                file.display(),
                size(*b),
                size(*size_after)
            ),
            Change::Write {
                file, size_after, ..
            } => format!("write    {} (new, {})", file.display(), size(*size_after)),
            Change::Truncate {
                file,
                size_before,
                size_after,
            } => format!(
                "truncate {} ({} -> {}: bytes {size_after}..{size_before} go)",
                file.display(),
                size(*size_before),
                size(*size_after)
            ),
            Change::Delete { file, size_before } => {
                format!("delete   {} ({})", file.display(), size(*size_before))
            }
            Change::Rename {
                from,
                to,
                size: len,
            } => format!(
                "rename   {} -> {} ({})",
                from.display(),
                to.file_name().unwrap_or_default().to_string_lossy(),
                size(*len)
            ),
        };
        out.push_str("  ");
        out.push_str(&line);
        out.push('\n');
    }
    if listed < changes.len() {
        out.push_str(&format!(
            "  … and {} more: {} (--verbose lists them)\n",
            changes.len() - listed,
            counts(&changes[listed..])
        ));
    }
    out
}
