//! `rebuild-index`: the `.index`, `.timeindex` and `.txnindex` of segments rebuilt from their
//! `.log` as the broker's recovery rebuilds them (`LogSegment.recover`: one entry per batch),
//! on a staging directory (its `.log` files read from the original, not copied); only index
//! files change. Without `--all`, only segments whose indexes look unsound are rebuilt:
//! missing, a partial entry, out of order, pointing past the log, or left untrimmed (a
//! zero-filled preallocated tail).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::json;

use super::apply::{self, ApplyOptions, Change};
use super::recover::{describe, render_changes};
use crate::error::{Error, Expected, Result, Work};
use crate::format::index::{
    offset_index_entries, offset_index_sanity_check, offset_index_zero_tail_start,
    time_index_entries, time_index_sanity_check, time_index_zero_tail_start, OffsetIndexEntry,
    OFFSET_INDEX_ENTRY_BYTES, TIME_INDEX_ENTRY_BYTES,
};
use crate::format::names::{
    classify, index_file_name, log_file_name, time_index_file_name, txn_index_file_name, FileKind,
    INDEX_FILE_SUFFIX, LOG_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX,
};
use crate::ops::input::{examine, kind_of, repair_target, sibling, Input, Kind};
use crate::storage::files::{read_index, IndexBytes};
use crate::storage::{recover_segments, LoadEvent, LoadParams, LogConfig};

#[derive(Debug, Clone, Copy)]
pub struct RebuildOptions {
    pub config: LogConfig,
    /// Rebuild even indexes that look sound.
    pub all: bool,
    pub now_ms: i64,
    pub producer_id_expiration_ms: i64,
}

/// The rebuild of one partition directory.
#[derive(Debug)]
pub struct RebuildPlan {
    pub dir: PathBuf,
    /// Segment base offset → why it is rebuilt.
    pub segments: BTreeMap<i64, String>,
    pub events: Vec<LoadEvent>,
    pub changes: Vec<Change>,
    _scratch: Option<crate::storage::files::Staging>,
}

/// Why the indexes of segment `base` in `dir` need a rebuild, if they do: the name of the
/// first index file found unsound (in the order `.index`, `.timeindex`, `.txnindex`) and why.
pub fn index_problem(dir: &Path, base: i64) -> Result<Option<(String, String)>> {
    let read = |name: String| -> Result<Option<IndexBytes>> {
        let p = dir.join(name);
        if !crate::storage::files::exists(&p)? {
            return Ok(None);
        }
        read_index(&p).map(Some)
    };
    let log_len = std::fs::metadata(dir.join(log_file_name(base)))
        .map_err(|e| Error::io(&dir.join(log_file_name(base)), e))?
        .len();
    let name = index_file_name(base);
    let Some(IndexBytes { data: index, len }) = read(name.clone())? else {
        return Ok(Some((name.clone(), format!("{name} is missing"))));
    };
    if let Err(m) = offset_index_sanity_check(&index, len as usize, base, &name) {
        return Ok(Some((name.clone(), m)));
    }
    if let Some(slot) = index.find_slot(OFFSET_INDEX_ENTRY_BYTES, |b| {
        offset_index_zero_tail_start(b, base)
    }) {
        return Ok(Some((
            name.clone(),
            format!(
                "{name} is not trimmed: zero entries from byte {}",
                slot * OFFSET_INDEX_ENTRY_BYTES
            ),
        )));
    }
    // One pass over the mapped file, nothing collected (an index can be any size): an entry out
    // of order is the problem named first, else the first entry past the log.
    let (mut prev, mut past_log) = (None::<OffsetIndexEntry>, None);
    for (i, e) in offset_index_entries(&index, base).enumerate() {
        index.passed(i * OFFSET_INDEX_ENTRY_BYTES);
        if prev.is_some_and(|a| e.offset <= a.offset || e.position <= a.position) {
            return Ok(Some((
                name.clone(),
                format!("{name}: entry {i} is out of order"),
            )));
        }
        if past_log.is_none() && (e.position < 0 || e.position as u64 >= log_len) {
            past_log = Some(e.offset);
        }
        prev = Some(e);
    }
    if let Some(offset) = past_log {
        return Ok(Some((
            name.clone(),
            format!("{name}: entry for offset {offset} points past the log"),
        )));
    }
    let name = time_index_file_name(base);
    let Some(IndexBytes { data: time, len }) = read(name.clone())? else {
        return Ok(Some((name.clone(), format!("{name} is missing"))));
    };
    if let Err(m) = time_index_sanity_check(&time, len as usize, base, &name) {
        return Ok(Some((name.clone(), m)));
    }
    if let Some(slot) = time.find_slot(TIME_INDEX_ENTRY_BYTES, |b| {
        time_index_zero_tail_start(b, base)
    }) {
        return Ok(Some((
            name.clone(),
            format!(
                "{name} is not trimmed: zero entries from byte {}",
                slot * TIME_INDEX_ENTRY_BYTES
            ),
        )));
    }
    let entries = || time_index_entries(&time, base);
    for (i, (a, b)) in entries().zip(entries().skip(1)).enumerate() {
        time.passed(i * TIME_INDEX_ENTRY_BYTES);
        if b.offset < a.offset || b.timestamp <= a.timestamp {
            return Ok(Some((
                name.clone(),
                format!("{name}: entry {} is out of order", i + 1),
            )));
        }
    }
    let name = txn_index_file_name(base);
    let path = dir.join(&name);
    if crate::storage::files::exists(&path)? {
        if let Err(m) = crate::storage::txn_index::sanity_check_file(&path, base, &name)? {
            return Ok(Some((name.clone(), m)));
        }
    }
    Ok(None)
}

/// Segment files or partition directories → partition directory → segments asked for
/// (None: every segment of the directory).
fn targets(paths: &[PathBuf]) -> Result<BTreeMap<PathBuf, Option<Vec<i64>>>> {
    let mut out: BTreeMap<PathBuf, Option<Vec<i64>>> = BTreeMap::new();
    for p in paths {
        if let Input::Dir { .. } = examine(p, Expected::SegmentOrPartition)? {
            out.insert(p.clone(), None);
            continue;
        }
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let base = match classify(&name) {
            FileKind::Log { base_offset }
            | FileKind::OffsetIndex { base_offset }
            | FileKind::TimeIndex { base_offset }
            | FileKind::TxnIndex { base_offset } => base_offset,
            _ => return Err(Error::invalid(p, NOT_A_SEGMENT_FILE)),
        };
        let dir = p.parent().unwrap_or(Path::new(".")).to_path_buf();
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        if !crate::storage::files::is_file(&dir.join(log_file_name(base)))? {
            return Err(Error::invalid(
                &dir.join(log_file_name(base)),
                "missing: an index cannot be rebuilt without its .log",
            ));
        }
        if let Some(list) = out.entry(dir).or_insert_with(|| Some(Vec::new())) {
            list.push(base);
        }
    }
    Ok(out)
}

/// The plan for a segment file named under a name the broker does not load
/// (`corrupt-copy.log`, or one of its indexes): read as `verify` and `dump` read it, with the
/// base offset its log's first batch gives ([`kind_of`]), its indexes are rebuilt from the log
/// of its stem and written beside it under that stem (`corrupt-copy.index`, ...), so the
/// renamed segment stays whole. Nothing else in its directory is read or touched: the broker
/// would not load the file, so there is no partition to be faithful to. Always rebuilt (the
/// file was named); the reason says why a broker would not load it.
fn renamed_plan(path: &Path, kind: &Kind, opts: &RebuildOptions) -> Result<RebuildPlan> {
    let (Some(base), Some(renamed), true) = (
        kind.kind.offset(),
        &kind.renamed,
        kind.kind.is_segment_file(),
    ) else {
        return Err(Error::invalid(path, NOT_A_SEGMENT_FILE));
    };
    let log = sibling(path, LOG_FILE_SUFFIX);
    if !crate::storage::files::is_file(&log)? {
        return Err(Error::invalid(
            &log,
            "missing: an index cannot be rebuilt without its .log",
        ));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let scratch = crate::storage::files::Staging::empty()?;
    let work = scratch.work();
    scratch.stage_data(&log, &log_file_name(base))?;
    let why = format!("{}: {renamed}", log.display());
    let params = LoadParams {
        had_clean_shutdown: false,
        recovery_point: 0,
        log_start_offset: base,
        now_ms: opts.now_ms,
        producer_id_expiration_ms: opts.producer_id_expiration_ms,
    };
    let events = recover_segments(work, opts.config, params, &[(base, why.clone())])
        .map_err(|e| e.rebased(work, &dir))?;
    let mut changes = Vec::new();
    for (built, suffix) in [
        (index_file_name(base), INDEX_FILE_SUFFIX),
        (time_index_file_name(base), TIME_INDEX_FILE_SUFFIX),
        (txn_index_file_name(base), TXN_INDEX_FILE_SUFFIX),
    ] {
        let (built, file) = (work.join(built), sibling(path, suffix));
        let size_before = crate::storage::files::metadata_if_exists(&file)?.map(|m| m.len());
        let size_after = match crate::storage::files::exists(&built)? {
            true => Some(crate::storage::files::file_len(&built)?),
            false => None,
        };
        match (size_after, size_before) {
            // Compared in chunks: an index can be gigabytes.
            (Some(size_after), _)
                if size_before != Some(size_after)
                    || !crate::storage::files::same_prefix(&built, &file, size_after)? =>
            {
                changes.push(Change::Write {
                    file,
                    source: built,
                    size_before,
                    size_after,
                })
            }
            (None, Some(size_before)) => changes.push(Change::Delete { file, size_before }),
            _ => {}
        }
    }
    Ok(RebuildPlan {
        dir,
        segments: BTreeMap::from([(base, why)]),
        events,
        changes,
        _scratch: Some(scratch),
    })
}

const NOT_A_SEGMENT_FILE: &str =
    "not a segment file (.log, .index, .timeindex, .txnindex) or partition directory";

/// Plans the rebuild for each partition directory among `paths`, and for each renamed
/// segment file among them ([`renamed_plan`]).
pub fn plan(paths: &[PathBuf], opts: &RebuildOptions) -> Result<Vec<RebuildPlan>> {
    let mut plans = Vec::new();
    let mut named = Vec::new();
    for p in paths {
        let kind = p.is_file().then(|| kind_of(p, None));
        match kind {
            Some(k) if k.renamed.is_some() => plans.push(renamed_plan(p, &k, opts)?),
            _ => named.push(p.clone()),
        }
    }
    if named.is_empty() {
        return Ok(plans);
    }
    let targets = targets(&named)?;
    for dir in targets.keys() {
        repair_target(dir, Work::Recovery)?;
    }
    for (dir, asked) in targets {
        let bases = match asked {
            Some(b) => b,
            // The `.log` files (a non-file named like one is recorded, not a segment).
            None => crate::storage::files::segment_logs(&dir)?
                .into_iter()
                .map(|(base, _)| base)
                .collect(),
        };
        let mut segments = BTreeMap::new();
        // The index file whose state selected each segment: it is written last.
        // (Sets: looked up once per planned change, which is per segment.)
        let mut selecting = BTreeSet::new();
        for base in bases {
            let why = if opts.all {
                Some((index_file_name(base), "--all".to_string()))
            } else {
                index_problem(&dir, base)?
            };
            if let Some((file, why)) = why {
                segments.insert(base, why);
                selecting.insert(dir.join(file));
            }
        }
        let leftovers = apply::leftover_tmp_files(&dir)?;
        if segments.is_empty() {
            plans.push(RebuildPlan {
                dir,
                segments,
                events: Vec::new(),
                changes: leftovers,
                _scratch: None,
            });
            continue;
        }
        let scratch = apply::stage_for_planning(&dir)?;
        let work = scratch.work().to_path_buf();
        let params = LoadParams {
            had_clean_shutdown: false,
            recovery_point: 0,
            log_start_offset: 0,
            now_ms: opts.now_ms,
            producer_id_expiration_ms: opts.producer_id_expiration_ms,
        };
        let list: Vec<(i64, String)> = segments.iter().map(|(b, w)| (*b, w.clone())).collect();
        let events = recover_segments(&work, opts.config, params, &list)
            .map_err(|e| e.rebased(&work, &dir))?;
        let index_names: BTreeSet<String> = segments
            .keys()
            .flat_map(|&b| {
                [
                    index_file_name(b),
                    time_index_file_name(b),
                    txn_index_file_name(b),
                ]
            })
            .collect();
        let mut changes = leftovers;
        changes.extend(apply::diff_dirs(&dir, &work, &|n| index_names.contains(n))?);
        // A rerun plans from what it finds: while the file that made a segment's indexes
        // unsound is unchanged, the rerun selects the segment again and finishes its other
        // files too. So that file is changed last (stable: the rest keep their order).
        changes.sort_by_key(|c| selecting.contains(c.file()));
        plans.push(RebuildPlan {
            dir,
            segments,
            events,
            changes,
            _scratch: Some(scratch),
        });
    }
    Ok(plans)
}

impl RebuildPlan {
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "dir": crate::format::os_path::escaped(&self.dir),
            "segments": self.segments.iter().map(|(b, w)| json!({"baseOffset": b, "why": w})).collect::<Vec<_>>(),
            "events": self.events,
            "changes": self.changes,
        })
    }

    /// The plan in words; all the file changes with `verbose`.
    pub fn render_text(&self, verbose: bool) -> String {
        let mut out = format!("rebuild-index {}:\n", self.dir.display());
        for e in &self.events {
            out.push_str("  ");
            out.push_str(&describe(e));
            if matches!(e, LoadEvent::SegmentRecovered { truncated_bytes, .. } if *truncated_bytes > 0)
            {
                out.push_str(" — the .log is left as it is here; `kseg recover` cuts it");
            }
            out.push('\n');
        }
        out.push_str(&render_changes(&self.changes, verbose));
        out
    }

    pub fn apply(&self, opts: &ApplyOptions) -> Result<Option<PathBuf>> {
        apply::apply(&self.dir, &self.changes, &self.to_json().to_string(), opts)
    }
}
