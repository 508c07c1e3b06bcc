//! Loading an existing partition directory the way the broker does at start-up
//! (`LogLoader.load`, behavior.md §2.3–§2.7): leftover `.deleted`/`.cleaned`/`.swap` files,
//! orphan indexes, the segment sanity check, recovery of every segment from the one holding the
//! recovery point (truncating at the first invalid batch and dropping the segments after it,
//! splitting a legacy segment whose offsets overflow and starting over, §2.6),
//! leader epochs cut to the new log end, stray snapshots, and producer state rebuilt from the
//! snapshots and the log.
//!
//! Works on the directory in place, like the broker: callers that must not change the original
//! (a dry run) load a copy.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::leader_epoch::LeaderEpochCache;
use super::log::{Log, LogConfig};
use super::producer_state::ProducerStateManager;
use super::segment::{InvalidData, RecoverStopped, Segment};
use crate::error::{Error, Result};
use crate::format::names::{
    classify, log_file_name, parse_offset_prefix, FileKind, LeftoverSuffix, SWAP_FILE_SUFFIX,
};

/// What the loader is told about the directory's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadParams {
    /// `.kafka_cleanshutdown` was present: no segment is recovered unless it must be.
    pub had_clean_shutdown: bool,
    /// Recovery starts at the segment holding this offset.
    pub recovery_point: i64,
    /// The checkpointed log start offset.
    pub log_start_offset: i64,
    /// The broker clock (producer expiration when snapshots load).
    pub now_ms: i64,
    /// `producer.id.expiration.ms`.
    pub producer_id_expiration_ms: i64,
}

/// Why a segment was recovered. Serialized as an object, `{"kind": …, "reason": …}`, the
/// reason absent for `unflushed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "reason", rename_all = "camelCase")]
pub enum RecoveryCause {
    /// At or above the recovery point after an unclean shutdown.
    Unflushed,
    /// The segment's sanity check failed (missing `.index`, corrupt `.txnindex`).
    SanityCheck(String),
    /// Asked for (index rebuild).
    Requested(String),
}

/// What loading did, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum LoadEvent {
    /// A leftover file the loader deletes (`.deleted`, `.cleaned`, an unfinished split's
    /// `.swap`, files replaced by a swap, an index without its `.log`).
    FileDeleted { file: String, why: String },
    /// A `.swap` file from an interrupted swap, renamed into place.
    SwapCompleted { from: String, to: String },
    SegmentRecovered {
        base_offset: i64,
        cause: RecoveryCause,
        log_bytes_before: u64,
        truncated_bytes: u64,
        /// The first invalid batch, if the log did not end cleanly.
        invalid: Option<InvalidData>,
        /// Offsets went backwards: every batch of the segment went.
        emptied: bool,
    },
    /// A legacy segment held an offset too far from its base (Kafka's
    /// LogSegmentOffsetOverflowException): it was split into `new_bases` (§2.6).
    SegmentSplit {
        base_offset: i64,
        /// The batch whose last offset overflowed, where recovery found it.
        position: u64,
        offset: i64,
        new_bases: Vec<i64>,
    },
    /// Segments after a truncation, or all of them when the log ends before its start offset.
    SegmentDeleted { base_offset: i64, log_bytes: u64 },
    /// No segment was left: an empty one is created at the log start offset.
    SegmentCreated { base_offset: i64 },
    /// A file the loader ignores and leaves alone.
    UnknownFileKept { file: String },
}

/// The offsets loading ends with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadReport {
    pub log_start_offset: i64,
    pub recovery_point: i64,
    pub log_end_offset: i64,
    pub events: Vec<LoadEvent>,
}

/// Recovery of segment `base` met an offset overflow at byte `position`: it must be split.
struct Overflowed {
    base: i64,
    position: u64,
    offset: i64,
}

struct Loader<'a> {
    dir: &'a Path,
    config: LogConfig,
    params: LoadParams,
    segments: BTreeMap<i64, Segment>,
    epochs: LeaderEpochCache,
    producer_state: ProducerStateManager,
    events: Vec<LoadEvent>,
    /// The unknown files reported in `events`, looked up per listed file (a directory of
    /// 200 k stray files compared each against every event before).
    unknown_kept: std::collections::HashSet<String>,
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The regular files of `dir`, sorted by name as `File.compareTo` does.
fn regular_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = super::files::regular_files(dir)?;
    out.sort();
    Ok(out)
}

fn remove(p: &Path) -> Result<()> {
    super::files::remove_file(p)
}

/// One past the last whole batch of a `.log` file, or `base` if it has none.
fn next_offset_of_log_file(path: &Path, base: i64) -> Result<i64> {
    let mut reader = super::log_reader::LogReader::open(path, None)?.with_max_entry_bytes(u64::MAX);
    let mut next = base;
    while let super::log_reader::Step::Entry { entry, .. } = reader.next_step()? {
        next = entry.last_offset() + 1;
    }
    Ok(next)
}

/// Why the broker's start-up deletes a file ([`plan_leftovers`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeletedBecause {
    MarkedForDeletion,
    UnfinishedSplit,
    UnfinishedCleaning,
    /// A file of an offset a `.log.swap` covers: the swap replaces it.
    ReplacedBySwap,
}

impl DeletedBecause {
    pub fn as_str(self) -> &'static str {
        match self {
            DeletedBecause::MarkedForDeletion => "marked for deletion",
            DeletedBecause::UnfinishedSplit => "part of an unfinished segment split",
            DeletedBecause::UnfinishedCleaning => "output of an unfinished cleaning",
            DeletedBecause::ReplacedBySwap => "replaced by an interrupted swap",
        }
    }
}

/// What the broker's start-up does with the leftovers among a partition directory's `files`
/// (`LogLoader.removeTempFilesAndCollectSwapFiles`, behavior.md §2.3), decided before anything
/// changes: the one rule the loader carries out and the read-only commands read by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeftoverPlan {
    /// Deleted, in the loader's order.
    pub deleted: Vec<(PathBuf, DeletedBecause)>,
    /// `.swap` files renamed to their names without the suffix.
    pub renamed: Vec<PathBuf>,
    /// `.cleaned` and `.swap` files whose names do not start with an offset: the loader
    /// fails on them (`offsetFromFileName`).
    pub without_offset: Vec<PathBuf>,
}

impl LeftoverPlan {
    /// What becomes of each file the plan names: deleted (and why), or renamed (None).
    pub fn fates(&self) -> BTreeMap<&Path, Option<DeletedBecause>> {
        let deleted = self
            .deleted
            .iter()
            .map(|(p, why)| (p.as_path(), Some(*why)));
        let renamed = self.renamed.iter().map(|p| (p.as_path(), None));
        deleted.chain(renamed).collect()
    }
}

/// The [`LeftoverPlan`] of `files` (a directory's regular files, sorted): `.deleted` files
/// (KRaft snapshots' aside) and `.cleaned` files go; a `.swap` at or above the lowest
/// `.cleaned` offset is part of an unfinished split and goes; the other `.swap`s are renamed
/// into place, and every other file whose name's offset lies in the `.log.swap`s' range
/// (lowest base to one past the last batch) goes, replaced by them. Reads only the
/// `.log.swap`s, for where they end.
pub fn plan_leftovers(files: &[PathBuf]) -> Result<LeftoverPlan> {
    let mut plan = LeftoverPlan::default();
    let (mut swaps, mut cleaned) = (Vec::new(), Vec::new());
    let mut min_cleaned = i64::MAX;
    for p in files {
        let name = file_name(p);
        let FileKind::Leftover { suffix, .. } = classify(&name) else {
            continue;
        };
        let offset = parse_offset_prefix(&name);
        match (suffix, offset) {
            // KRaft snapshots waiting for deletion are not the loader's.
            (LeftoverSuffix::Deleted, _) if !name.ends_with(".checkpoint.deleted") => plan
                .deleted
                .push((p.clone(), DeletedBecause::MarkedForDeletion)),
            (LeftoverSuffix::Cleaned | LeftoverSuffix::Swap, None) => {
                plan.without_offset.push(p.clone())
            }
            (LeftoverSuffix::Cleaned, Some(offset)) => {
                min_cleaned = min_cleaned.min(offset);
                cleaned.push(p.clone());
            }
            (LeftoverSuffix::Swap, Some(offset)) => swaps.push((offset, p.clone())),
            _ => {}
        }
    }
    let (mut min_swap, mut max_swap) = (i64::MAX, i64::MIN);
    for (offset, p) in swaps {
        if offset >= min_cleaned {
            plan.deleted.push((p, DeletedBecause::UnfinishedSplit));
            continue;
        }
        if file_name(&p).ends_with(".log.swap") {
            min_swap = min_swap.min(offset);
            max_swap = max_swap.max(next_offset_of_log_file(&p, offset)?);
        }
        plan.renamed.push(p);
    }
    plan.deleted.extend(
        cleaned
            .into_iter()
            .map(|p| (p, DeletedBecause::UnfinishedCleaning)),
    );
    let gone: BTreeSet<PathBuf> = plan.deleted.iter().map(|(p, _)| p.clone()).collect();
    for p in files {
        let name = file_name(p);
        if gone.contains(p) || name.ends_with(SWAP_FILE_SUFFIX) {
            continue;
        }
        if parse_offset_prefix(&name).is_some_and(|o| o >= min_swap && o < max_swap) {
            plan.deleted
                .push((p.clone(), DeletedBecause::ReplacedBySwap));
        }
    }
    Ok(plan)
}

impl Log {
    /// Loads the partition directory `dir` in place as the broker's start-up does, leaving a
    /// log that [`Log::close`] can close cleanly.
    pub fn load(dir: &Path, config: LogConfig, params: LoadParams) -> Result<(Log, LoadReport)> {
        // The broker makes its producer state manager (which lists the snapshots) first.
        let producer_state = ProducerStateManager::open(dir, params.producer_id_expiration_ms)?;
        let epochs = LeaderEpochCache::open(dir)?;
        let mut loader = Loader {
            dir,
            config,
            params,
            segments: BTreeMap::new(),
            epochs,
            producer_state,
            events: Vec::new(),
            unknown_kept: Default::default(),
        };
        loader.complete_swaps()?;
        loader.load_segments()?;
        let (recovery_point, log_end_offset) = loader.recover_log()?;
        loader
            .segments
            .values_mut()
            .next_back()
            .expect("a segment remains")
            .resize_indexes_to_max()?;
        loader.epochs.truncate_from_end(log_end_offset)?;
        let first_base = *loader.segments.keys().next().expect("a segment remains");
        let log_start_offset = params.log_start_offset.max(first_base);
        loader.epochs.truncate_from_start(params.log_start_offset)?;
        let bases: BTreeSet<i64> = loader.segments.keys().copied().collect();
        loader.producer_state.remove_stray_snapshots(&bases)?;
        let mut state = std::mem::replace(
            &mut loader.producer_state,
            ProducerStateManager::new(dir, 0),
        );
        rebuild_producer_state(
            &mut state,
            &loader.segments,
            log_start_offset,
            log_end_offset,
            params.now_ms,
            params.had_clean_shutdown,
        )?;
        let report = LoadReport {
            log_start_offset,
            recovery_point,
            log_end_offset,
            events: loader.events,
        };
        let log = Log::from_loaded(
            dir,
            config,
            loader.segments,
            log_start_offset,
            log_end_offset,
            state,
            loader.epochs,
            params.now_ms,
        );
        Ok((log, report))
    }
}

/// Runs `LogSegment.recover` (with producer state brought up to each segment) on the segments
/// `bases` of `dir`, in place and in order: their three indexes are rebuilt from the `.log`
/// with the recovery rule. Also cuts a `.log` at its first invalid batch and writes snapshots
/// and epochs as recovery does; callers that only want the indexes work on a copy.
pub fn recover_segments(
    dir: &Path,
    config: LogConfig,
    params: LoadParams,
    bases: &[(i64, String)],
) -> Result<Vec<LoadEvent>> {
    let mut loader = Loader {
        dir,
        config,
        params,
        segments: BTreeMap::new(),
        epochs: LeaderEpochCache::open(dir)?,
        producer_state: ProducerStateManager::open(dir, params.producer_id_expiration_ms)?,
        events: Vec::new(),
        unknown_kept: Default::default(),
    };
    for p in regular_files(dir)? {
        if let FileKind::Log { base_offset } = classify(&file_name(&p)) {
            let segment = Segment::open(dir, base_offset, config.segment_config(), params.now_ms)?;
            loader.segments.insert(base_offset, segment);
        }
    }
    for (base, why) in bases {
        let state = loader.state_before(*base)?;
        let mut segment = loader
            .segments
            .remove(base)
            .ok_or_else(|| Error::invalid(&dir.join(log_file_name(*base)), "no such segment"))?;
        let result =
            loader.recover_segment(&mut segment, state, RecoveryCause::Requested(why.clone()));
        loader.segments.insert(*base, segment);
        if let Err(o) = result? {
            return Err(Error::invalid(
                &dir.join(log_file_name(o.base)),
                format!(
                    "at byte {}: offset {} does not fit a segment based at {}; `kseg recover` splits such a legacy segment",
                    o.position, o.offset, o.base
                ),
            ));
        }
    }
    Ok(loader.events)
}

impl Loader<'_> {
    fn deleted(&mut self, p: &Path, why: &str) -> Result<()> {
        remove(p)?;
        self.producer_state.note_file(p, false);
        self.events.push(LoadEvent::FileDeleted {
            file: file_name(p),
            why: why.to_string(),
        });
        Ok(())
    }

    /// Steps 1–2: leftover temporary files and interrupted swaps, as [`plan_leftovers`] says.
    fn complete_swaps(&mut self) -> Result<()> {
        let files = regular_files(self.dir)?;
        for p in &files {
            super::files::open_regular(p)?;
        }
        let plan = plan_leftovers(&files)?;
        if let Some(p) = plan.without_offset.first() {
            return Err(Error::invalid(p, "the name does not start with an offset"));
        }
        for (p, why) in &plan.deleted {
            self.deleted(p, why.as_str())?;
        }
        for p in plan.renamed {
            let name = file_name(&p);
            let to = name.strip_suffix(SWAP_FILE_SUFFIX).unwrap_or(&name);
            let target = self.dir.join(to);
            super::files::rename(&p, &target)?;
            self.producer_state.note_file(&target, true);
            self.events.push(LoadEvent::SwapCompleted {
                from: name.clone(),
                to: to.to_string(),
            });
        }
        Ok(())
    }

    /// `splitOverflowedSegment` then, as `retryOnOffsetOverflow` does, the snapshot of a
    /// replaced base that is no new base goes. `loaded`: the segment was in the segment map
    /// (met by recovery of the log, not while loading), so its files are replaced and it is
    /// swapped for the new segments in the map.
    fn split(&mut self, o: Overflowed, loaded: bool) -> Result<()> {
        let new_bases = super::split::split_overflowed_segment(
            self.dir,
            o.base,
            self.config.segment_config(),
            self.params.now_ms,
            loaded,
        )?;
        if loaded {
            self.segments.remove(&o.base);
            for &b in &new_bases {
                let segment = Segment::open(
                    self.dir,
                    b,
                    self.config.segment_config(),
                    self.params.now_ms,
                )?;
                self.segments.insert(b, segment);
            }
            if !new_bases.contains(&o.base) {
                self.producer_state.delete_snapshot_of_segment(o.base)?;
            }
        }
        self.events.push(LoadEvent::SegmentSplit {
            base_offset: o.base,
            position: o.position,
            offset: o.offset,
            new_bases,
        });
        Ok(())
    }

    /// Step 3–4, redone from scratch after each split of an overflowed segment.
    fn load_segments(&mut self) -> Result<()> {
        loop {
            self.segments.clear();
            match self.load_segment_files()? {
                Ok(()) => return Ok(()),
                Err(o) => self.split(o, false)?,
            }
        }
    }

    /// Orphan indexes go, every `.log` opens as a segment, and a segment failing its sanity
    /// check is recovered at once; stops at a segment that must be split.
    fn load_segment_files(&mut self) -> Result<std::result::Result<(), Overflowed>> {
        for p in regular_files(self.dir)? {
            let name = file_name(&p);
            match classify(&name) {
                FileKind::OffsetIndex { base_offset }
                | FileKind::TimeIndex { base_offset }
                | FileKind::TxnIndex { base_offset }
                    if !super::files::exists(&self.dir.join(log_file_name(base_offset)))? =>
                {
                    self.deleted(&p, "an index without its .log")?;
                }
                FileKind::Log { base_offset } => {
                    if name != log_file_name(base_offset) {
                        return Err(Error::invalid(
                            &p,
                            format!(
                                "segment name is not the 20-digit form {}; rename it first",
                                log_file_name(base_offset)
                            ),
                        ));
                    }
                    let time_index_newly_created = !super::files::exists(
                        &self
                            .dir
                            .join(crate::format::names::time_index_file_name(base_offset)),
                    )?;
                    let mut segment = Segment::open(
                        self.dir,
                        base_offset,
                        self.config.segment_config(),
                        self.params.now_ms,
                    )?;
                    if let Some(why) = segment.sanity_check(time_index_newly_created)? {
                        let state = self.state_before(base_offset)?;
                        let cause = RecoveryCause::SanityCheck(why);
                        if let Err(o) = self.recover_segment(&mut segment, state, cause)? {
                            return Ok(Err(o));
                        }
                        // `loadSegmentFiles` catches no InvalidOffsetException around this
                        // recovery (only `recoverLog`'s does): the broker fails to load the log.
                        if let Some(LoadEvent::SegmentRecovered {
                            emptied: true,
                            invalid: Some(bad),
                            ..
                        }) = self.events.last()
                        {
                            return Err(Error::invalid(
                                &p,
                                format!(
                                    "at byte {}: {}, met while rebuilding the segment's failed indexes: the broker's loader catches that only while recovering from the recovery point, so here it fails to load the partition",
                                    bad.position, bad.reason
                                ),
                            ));
                        }
                    }
                    self.segments.insert(base_offset, segment);
                }
                // A retry after a split lists the directory again.
                FileKind::Unknown if self.unknown_kept.insert(name.clone()) => {
                    self.events.push(LoadEvent::UnknownFileKept { file: name });
                }
                _ => {}
            }
        }
        Ok(Ok(()))
    }

    /// `recoverSegment`, first half: a fresh producer state manager (seeing the snapshots on
    /// disk) brought up to the segment's base offset.
    fn state_before(&self, base_offset: i64) -> Result<ProducerStateManager> {
        let mut state = self.producer_state.open_beside()?;
        rebuild_producer_state(
            &mut state,
            &self.segments,
            self.params.log_start_offset,
            base_offset,
            self.params.now_ms,
            false,
        )?;
        Ok(state)
    }

    /// `recoverSegment`, second half: the segment recovered, a snapshot taken at its end.
    /// Returns the bytes cut; offsets going backwards empty the segment (and take no snapshot);
    /// an offset overflow leaves it to be split.
    fn recover_segment(
        &mut self,
        segment: &mut Segment,
        mut state: ProducerStateManager,
        cause: RecoveryCause,
    ) -> Result<std::result::Result<u64, Overflowed>> {
        let log_bytes_before = segment.size();
        let (truncated_bytes, invalid, emptied) =
            match segment.recover(&mut state, &mut self.epochs)? {
                Ok(outcome) => {
                    state.take_snapshot()?;
                    (outcome.truncated_bytes, outcome.invalid, false)
                }
                Err(RecoverStopped::WentBack(invalid)) => {
                    (segment.truncate_to_base()?, Some(invalid), true)
                }
                Err(RecoverStopped::Overflow { position, offset }) => {
                    return Ok(Err(Overflowed {
                        base: segment.base_offset(),
                        position,
                        offset,
                    }))
                }
            };
        self.events.push(LoadEvent::SegmentRecovered {
            base_offset: segment.base_offset(),
            cause,
            log_bytes_before,
            truncated_bytes,
            invalid,
            emptied,
        });
        Ok(Ok(truncated_bytes))
    }

    fn delete_segment(&mut self, base: i64) -> Result<()> {
        if let Some(segment) = self.segments.remove(&base) {
            let log_bytes = segment.size();
            segment.delete()?;
            self.producer_state.delete_snapshot_of_segment(base)?;
            self.events.push(LoadEvent::SegmentDeleted {
                base_offset: base,
                log_bytes,
            });
        }
        Ok(())
    }

    /// Step 5: recovery of the unflushed segments; stops at a segment that must be split.
    fn recover_unflushed(&mut self) -> Result<std::result::Result<(), Overflowed>> {
        let rp = self.params.recovery_point;
        let from = self
            .segments
            .range(..=rp)
            .next_back()
            .map_or(i64::MIN, |(&b, _)| b);
        let unflushed: Vec<i64> = self.segments.range(from..).map(|(&b, _)| b).collect();
        for (i, &base) in unflushed.iter().enumerate() {
            // The segment is in the map while producer state is rebuilt, as in Kafka.
            let state = self.state_before(base)?;
            let Some(mut segment) = self.segments.remove(&base) else {
                continue;
            };
            let result = self.recover_segment(&mut segment, state, RecoveryCause::Unflushed);
            self.segments.insert(base, segment);
            match result? {
                Err(o) => return Ok(Err(o)),
                Ok(truncated) if truncated > 0 => {
                    for &later in &unflushed[i + 1..] {
                        self.delete_segment(later)?;
                    }
                    break;
                }
                Ok(_) => {}
            }
        }
        Ok(Ok(()))
    }

    /// Step 5–7 (`recoverLog`, redone from the start after each split): returns the new
    /// recovery point and the log end offset.
    fn recover_log(&mut self) -> Result<(i64, i64)> {
        let rp = self.params.recovery_point;
        if !self.params.had_clean_shutdown {
            while let Err(o) = self.recover_unflushed()? {
                self.split(o, true)?;
            }
        }
        let mut log_end = None;
        if let Some(last) = self.segments.values_mut().next_back() {
            let leo = last.read_next_offset()?;
            if leo >= self.params.log_start_offset {
                log_end = Some(leo);
            } else {
                let bases: Vec<i64> = self.segments.keys().copied().collect();
                for b in bases {
                    self.delete_segment(b)?;
                }
                self.epochs.clear_and_flush()?;
                self.producer_state
                    .truncate_fully_and_start_at(self.params.log_start_offset)?;
            }
        }
        if self.segments.is_empty() {
            let base = self.params.log_start_offset;
            let segment = Segment::create(
                self.dir,
                base,
                self.config.segment_config(),
                self.params.now_ms,
            )?;
            self.segments.insert(base, segment);
            self.events
                .push(LoadEvent::SegmentCreated { base_offset: base });
        }
        match log_end {
            Some(leo) if self.params.had_clean_shutdown => Ok((leo, leo)),
            _ => {
                let leo = match log_end {
                    Some(leo) => leo,
                    None => self
                        .segments
                        .values_mut()
                        .next_back()
                        .expect("a segment")
                        .read_next_offset()?,
                };
                Ok((rp.min(leo), leo))
            }
        }
    }
}

/// `UnifiedLog.rebuildProducerState` (behavior.md §2.7): producer state up to `last_offset`
/// from the latest usable snapshot plus the batches after it, with snapshots at the last two
/// segment bases and at `last_offset`.
fn rebuild_producer_state(
    state: &mut ProducerStateManager,
    segments: &BTreeMap<i64, Segment>,
    log_start_offset: i64,
    last_offset: i64,
    now_ms: i64,
    reload_from_clean_shutdown: bool,
) -> Result<()> {
    let mut bases = segments.keys().rev();
    let last_base = bases.next().copied();
    let offsets_to_snapshot: Vec<i64> = [bases.next().copied(), last_base, Some(last_offset)]
        .into_iter()
        .flatten()
        .collect();
    if state.latest_snapshot_offset().is_none() && reload_from_clean_shutdown {
        // An upgrade from a version without snapshots: empty snapshots, no scan.
        for &o in &offsets_to_snapshot {
            state.update_map_end_offset(o);
            state.take_snapshot()?;
        }
        return Ok(());
    }
    let empty_before = state.is_empty() && state.map_end_offset() >= last_offset;
    state.truncate_and_reload(log_start_offset, last_offset, now_ms)?;
    if last_offset > state.map_end_offset() && !empty_before {
        let from = state.map_end_offset();
        let floor = segments
            .range(..=from)
            .next_back()
            .map_or(i64::MIN, |(&b, _)| b);
        let holder_of_last = segments.range(..=last_offset).next_back().map(|(&b, _)| b);
        for (&base, segment) in segments.range(floor..last_offset) {
            let start = base.max(state.map_end_offset()).max(log_start_offset);
            state.update_map_end_offset(start);
            if offsets_to_snapshot.contains(&base) {
                state.take_snapshot()?;
            }
            let max_position = if holder_of_last == Some(base) {
                segment
                    .translate_offset(last_offset, 0)?
                    .map_or(segment.size(), |l| l.position)
            } else {
                segment.size()
            };
            segment.load_producer_state(state, start, max_position)?;
        }
    }
    state.update_map_end_offset(last_offset);
    state.take_snapshot()?;
    Ok(())
}
