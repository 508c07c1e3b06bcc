//! `compact --apply`: the round computed into a scratch dir, then planned as the broker's
//! segment replace in place, through the crash-safe executor; and the resolution of an
//! interrupted run's leftovers first.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::{clean_round, CompactOptions, CompactReport};
use crate::error::{Error, Result};
use crate::format::names::{parse_partition_dir, CLEANER_OFFSET_CHECKPOINT_FILE_NAME};
use crate::ops::partition::checkpoint_entry;
use crate::ops::repair::apply::{interrupted_leftovers, Change, TMP_SUFFIX};
use crate::ops::repair::log_dir::{
    checkpoint_writes, log_dir_of, shutdown_checkpoint_updates, CheckpointUpdate, ShutdownOffsets,
};
use crate::ops::repair::recover::{plan_after_clean_shutdown, RecoverOptions, RecoverPlan};
use crate::storage::files::{segment_files, stage_step, StagingDir};
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

    /// Carries out the plan, its journal kept beside the log dir until the last change is
    /// done: a rerun after a kill at any point finishes this plan ([`interrupted_journal`])
    /// rather than cleaning again from a checkpoint not yet written, which would leave other
    /// bytes (markers stamped, a `.txnindex` dropped).
    pub fn apply(&self, opts: &crate::ops::repair::apply::ApplyOptions) -> Result<Option<PathBuf>> {
        let plan = serde_json::json!({ "report": self.report, "changes": self.changes });
        let dir = &self.report.dir;
        crate::ops::repair::apply::preflight(dir, &self.changes, opts)?;
        let journal = StagingDir::begin(JOURNAL_COMMAND, dir)?;
        let changes = write_journal(journal.path(), dir, &self.changes, &plan)?;
        stage_step();
        let backup = crate::ops::repair::apply::apply(dir, &changes, &plan.to_string(), opts)?;
        journal.remove()?;
        Ok(backup)
    }
}

/// The command a journal's marker names.
const JOURNAL_COMMAND: &str = "compact --apply";
/// The journal's plan, written after the sources it names: its presence makes it complete.
const JOURNAL_FILE_NAME: &str = "plan.json";

/// Where a file of the plan lies: the partition directory (`p`) or its log dir (`l`).
fn place(dir: &Path, file: &Path) -> Result<(&'static str, String)> {
    let name = file
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let parent = file.parent().unwrap_or(Path::new(""));
    if same_dir(parent, dir) {
        Ok(("p", name))
    } else if same_dir(parent, dir.parent().unwrap_or(Path::new(".."))) {
        Ok(("l", name))
    } else {
        Err(Error::invalid(
            file,
            "outside the partition directory and its log dir",
        ))
    }
}

/// Whether `a` and `b` name one directory (`""` is `.`).
fn same_dir(a: &Path, b: &Path) -> bool {
    let real = |p: &Path| {
        let p = if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        };
        std::fs::canonicalize(p).ok()
    };
    a == b || real(a).is_some_and(|x| real(b) == Some(x))
}

fn placed(dir: &Path, at: &str, name: &str) -> PathBuf {
    match at {
        "l" => dir.parent().unwrap_or(dir).join(name),
        _ => dir.join(name),
    }
}

/// The names of the files in `dir` no change of `changes` names, with their lengths and
/// modification times (ns): what the plan leaves alone, which a resumed plan requires
/// unchanged (a broker run in between appends to the active segment or resizes its index).
fn untouched(dir: &Path, changes: &[Change]) -> Result<Vec<(String, u64, String)>> {
    let named: HashSet<&Path> = changes
        .iter()
        .flat_map(|c| match c {
            Change::Rename { from, to, .. } => vec![from.as_path(), to.as_path()],
            c => vec![c.file()],
        })
        .collect();
    let mut out = Vec::new();
    for e in crate::storage::files::read_dir(dir)? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if named.contains(path.as_path()) || name.ends_with(TMP_SUFFIX) {
            continue;
        }
        let m = std::fs::symlink_metadata(&path).map_err(|e| Error::io(&path, e))?;
        let mtime = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        out.push((name, m.len(), mtime.to_string()));
    }
    out.sort();
    Ok(out)
}

/// Writes the journal of `changes` into `journal`: each write's source copied there, then the
/// changes themselves. Returns the changes reading their sources from the journal.
fn write_journal(
    journal: &Path,
    dir: &Path,
    changes: &[Change],
    plan: &serde_json::Value,
) -> Result<Vec<Change>> {
    let mut entries = Vec::new();
    let mut journaled = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        let mut c = c.clone();
        let entry = match &mut c {
            Change::Write {
                file,
                source,
                size_before,
                ..
            } => {
                let copy = journal.join(i.to_string());
                std::fs::copy(&*source, &copy)
                    .and_then(|_| std::fs::File::open(&copy)?.sync_all())
                    .map_err(|e| Error::io(&copy, e))?;
                *source = copy;
                let (at, name) = place(dir, file)?;
                serde_json::json!(["write", at, name, i, size_before])
            }
            Change::Truncate {
                file,
                size_before,
                size_after,
            } => {
                let (at, name) = place(dir, file)?;
                serde_json::json!(["truncate", at, name, size_before, size_after])
            }
            Change::Delete { file, size_before } => {
                let (at, name) = place(dir, file)?;
                serde_json::json!(["delete", at, name, size_before])
            }
            Change::Rename { from, to, size } => {
                let (at, from) = place(dir, from)?;
                let (to_at, to) = place(dir, to)?;
                serde_json::json!(["rename", at, from, to_at, to, size])
            }
        };
        entries.push(entry);
        journaled.push(c);
    }
    let doc = serde_json::json!({
        "changes": entries,
        "untouched": untouched(dir, changes)?,
        "plan": plan,
    });
    let file = journal.join(JOURNAL_FILE_NAME);
    crate::storage::files::sync_dir_of(&file)?;
    std::fs::write(&file, doc.to_string())
        .and_then(|()| std::fs::File::open(&file)?.sync_all())
        .map_err(|e| Error::io(&file, e))?;
    crate::storage::files::sync_dir_of(&file)?;
    Ok(journaled)
}

/// The plan an interrupted `compact --apply` of a partition left in its journal.
#[derive(Debug)]
pub struct Journal {
    staging: StagingDir,
    pub changes: Vec<Change>,
    plan: String,
}

impl Journal {
    /// Where the journal lies.
    pub fn path(&self) -> &Path {
        self.staging.path()
    }

    /// Carries out the journal's plan from its start (each change is either done already,
    /// which the executor recognises, or done now), then removes the journal.
    pub fn apply(
        self,
        dir: &Path,
        opts: &crate::ops::repair::apply::ApplyOptions,
    ) -> Result<Option<PathBuf>> {
        let backup = crate::ops::repair::apply::apply(dir, &self.changes, &self.plan, opts)?;
        self.staging.remove()?;
        Ok(backup)
    }
}

/// The complete journal an interrupted `compact --apply` of `dir` left, if any (one cut short
/// before its plan was written is no journal: nothing was changed after it, and the next
/// `--apply` removes it). Refused when a file the plan leaves alone has changed since.
pub fn interrupted_journal(dir: &Path) -> Result<Option<Journal>> {
    let Some(staging) = StagingDir::leftover(JOURNAL_COMMAND, dir)? else {
        return Ok(None);
    };
    let file = staging.path().join(JOURNAL_FILE_NAME);
    let bytes = match std::fs::read(&file) {
        Ok(b) => b,
        Err(e) if crate::storage::files::is_absent(&e) => return Ok(None),
        Err(e) => return Err(Error::io(&file, e)),
    };
    let bad = |what: &str| Error::invalid(&file, format!("not a journal kseg wrote: {what}"));
    let doc: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| bad(&e.to_string()))?;
    let text = |v: &serde_json::Value| v.as_str().map(str::to_owned).ok_or_else(|| bad("a name"));
    let num = |v: &serde_json::Value| v.as_u64().ok_or_else(|| bad("a size"));
    let mut changes = Vec::new();
    for e in doc["changes"].as_array().ok_or_else(|| bad("no changes"))? {
        let e = e.as_array().ok_or_else(|| bad("a change"))?;
        let at = |i: usize| -> Result<PathBuf> {
            let (a, n) = (text(&e[i])?, text(&e[i + 1])?);
            Ok(placed(dir, &a, &n))
        };
        let action = e.first().map(text).transpose()?.unwrap_or_default();
        changes.push(match (action.as_str(), e.len()) {
            // Written maybe by the interrupted run already: the executor takes a file holding
            // the bytes it is to get for done.
            ("write", 5) => {
                let source = staging.path().join(num(&e[3])?.to_string());
                Change::Write {
                    file: at(1)?,
                    size_after: crate::storage::files::file_len(&source)?,
                    source,
                    size_before: if e[4].is_null() {
                        None
                    } else {
                        Some(num(&e[4])?)
                    },
                }
            }
            ("truncate", 5) => Change::Truncate {
                file: at(1)?,
                size_before: num(&e[3])?,
                size_after: num(&e[4])?,
            },
            ("delete", 4) => Change::Delete {
                file: at(1)?,
                size_before: num(&e[3])?,
            },
            ("rename", 6) => Change::Rename {
                from: at(1)?,
                to: at(3)?,
                size: num(&e[5])?,
            },
            _ => return Err(bad("an unknown change")),
        });
    }
    let then: Vec<(String, u64, String)> =
        serde_json::from_value(doc["untouched"].clone()).map_err(|e| bad(&e.to_string()))?;
    if untouched(dir, &changes)? != then {
        return Err(Error::invalid(
            dir,
            format!(
                "an interrupted `compact --apply` left its plan in {}, but files it leaves alone                  changed since (a broker ran?): it no longer applies; remove it and run `kseg                  recover` before cleaning again",
                staging.path().display()
            ),
        ));
    }
    // The files it changes, as the rerun finds them under its lock, are what the executor
    // checks them against from here to the last change (the journal's sizes, and that nothing
    // else changes them meanwhile): the plan that read them was the interrupted run's.
    for c in &changes {
        crate::storage::files::metadata_if_exists(c.file())?;
    }
    Ok(Some(Journal {
        staging,
        changes,
        plan: doc["plan"].to_string(),
    }))
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
    let scratch = crate::storage::files::scratch_dir()?;
    let out_log_dir = scratch.path().join("out");
    let mut report = clean_round(dir, &out_log_dir, opts, false)
        .map_err(|e| crate::storage::files::scratch_full(e, scratch.path()))?;
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
