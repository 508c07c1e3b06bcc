//! `verify`: integrity checks of files, partition directories and log dirs.
//!
//! Every file is walked once by the same walker `dump` uses (so every check dump explains is a
//! finding here, with the same id); a segment's `.index` and `.timeindex` are checked against
//! what the walk of its `.log` recorded, so each log is read once. Partition-level checks
//! (segments against each other, transaction indexes against abort markers, snapshots and
//! leader epochs against the log) and log-dir checks (checkpoint files) come on top. Segments
//! and files are checked in parallel; each walk streams its file, so memory stays bounded.

mod producers;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use crate::error::{Expected, Result};
use crate::format::checkpoint::{EpochEntry, OffsetCheckpointEntry};
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::format::index::AbortedTxn;
use crate::format::names::{self, classify, parse_partition_dir, FileKind};
use crate::format::snapshot::ProducerSnapshotEntry;
use crate::ops::finding::{Finding, Severity};
use crate::ops::input::{examine, kind_of, place, sibling, Input, Shape};
use crate::ops::inspect::dump::{dump_listed, dump_segment, DumpOptions, Event, Sink};
use crate::ops::partition::{LogStart, LogStartSource};
use crate::storage::files::{read_state, StateFile};
use crate::storage::loader::{plan_leftovers, DeletedBecause};
use crate::storage::txn_index::{entry_cap, TxnIndexEntries};
use producers::{SegmentReplay, StartState};

#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// Decode every record (decompressing), not only batch headers.
    pub deep: bool,
    /// The offset of a segment file whose name carries none (`--base-offset`).
    pub base_offset: Option<i64>,
    /// The most bytes one batch may decompress to (`--max-batch-bytes`); a larger batch is
    /// `batch.unchecked` and left out of the producer-state replay's record reads.
    pub max_batch_bytes: usize,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            deep: false,
            base_offset: None,
            max_batch_bytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
        }
    }
}

/// What one `.log` holds, as far as the checks need it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SegmentSummary {
    pub base_offset: i64,
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub file: PathBuf,
    /// The file's size (`size` in every report's vocabulary).
    #[serde(rename = "size")]
    pub bytes: u64,
    #[serde(rename = "batchCount")]
    pub batches: u64,
    /// Counted with `--deep` only.
    #[serde(rename = "recordCount")]
    pub records: Option<u64>,
    pub first_offset: Option<i64>,
    pub last_offset: Option<i64>,
}

/// The checks of one partition directory (or of one file given alone).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionReport {
    /// The partition directory (or the file given alone).
    #[serde(rename = "dir")]
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub path: PathBuf,
    pub topic: Option<String>,
    pub partition: Option<i32>,
    pub segments: Vec<SegmentSummary>,
    pub log_start_offset: Option<i64>,
    pub log_start_offset_source: Option<crate::ops::partition::LogStartSource>,
    pub log_end_offset: Option<i64>,
    pub findings: Vec<Finding>,
}

impl PartitionReport {
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }

    pub fn name(&self) -> String {
        match (&self.topic, self.partition) {
            (Some(t), Some(p)) => format!("{t}-{p}"),
            _ => self.path.display().to_string(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub partitions: Vec<PartitionReport>,
    /// Findings about log-dir files (checkpoints).
    pub log_dir_findings: Vec<Finding>,
    #[serde(rename = "checkedFileCount")]
    pub files_checked: usize,
    pub bytes_checked: u64,
    /// Files kseg could not classify, so did not read.
    #[serde(
        rename = "skippedFiles",
        serialize_with = "crate::format::os_path::serialize"
    )]
    pub skipped: Vec<PathBuf>,
    /// Files known by their name only and not read: marker files (`.lock`,
    /// `.kafka_cleanshutdown`), leftovers of an interrupted operation (reported as findings),
    /// KRaft snapshots still being written.
    #[serde(
        rename = "classifiedFiles",
        serialize_with = "crate::format::os_path::serialize"
    )]
    pub classified: Vec<PathBuf>,
}

impl Report {
    /// Where findings about the partition directory `dir` go: its report's, or the log dir's
    /// when no partition reported is `dir` (findings about its remote tier, say, are added
    /// here by whoever reconciled it).
    pub fn findings_of(&mut self, dir: Option<&Path>) -> &mut Vec<Finding> {
        match self
            .partitions
            .iter_mut()
            .find(|p| Some(p.path.as_path()) == dir)
        {
            Some(p) => &mut p.findings,
            None => &mut self.log_dir_findings,
        }
    }

    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.partitions
            .iter()
            .flat_map(|p| &p.findings)
            .chain(&self.log_dir_findings)
    }

    pub fn count(&self, severity: Severity) -> usize {
        self.findings().filter(|f| f.severity == severity).count()
    }
}

/// Everything one walk of one file yields.
#[derive(Default, Clone, PartialEq)]
struct FileScan {
    findings: Vec<Finding>,
    batches: u64,
    records: u64,
    first_offset: Option<i64>,
    last_offset: Option<i64>,
    /// (epoch, first offset seen with it) whenever the partition leader epoch changes.
    epochs: Vec<(i32, i64)>,
    /// Slots of a zero-filled index tail.
    zero_tail_slots: Option<usize>,
    snapshot_entries: Vec<ProducerSnapshotEntry>,
    epoch_entries: Vec<EpochEntry>,
    checkpoint_entries: Vec<OffsetCheckpointEntry>,
    /// Not read: kseg could not classify it.
    skipped: bool,
    /// Not read: known by its name only.
    classified: bool,
    /// Per check on single `.index`/`.timeindex` entries: the findings listed, and those past
    /// [`MAX_INDEX_ENTRY_FINDINGS`], counted only (a hostile index has millions of entries).
    entry_findings: Vec<(&'static str, usize, u64)>,
}

/// The findings of one check on single index entries one file lists; the rest are counted in
/// one more finding, as a `.txnindex`'s are.
const MAX_INDEX_ENTRY_FINDINGS: usize = 100;

/// The checks made once per `.index` or `.timeindex` entry.
const INDEX_ENTRY_CHECKS: [&str; 6] = [
    "index.order",
    "index.position",
    "index.offset-hidden",
    "timeindex.order",
    "timeindex.offset",
    "timeindex.timestamp",
];

impl FileScan {
    /// The scan of a file not read: `skipped` (kseg cannot classify it) or known by its name.
    const fn unread(skipped: bool) -> FileScan {
        FileScan {
            findings: Vec::new(),
            batches: 0,
            records: 0,
            first_offset: None,
            last_offset: None,
            epochs: Vec::new(),
            zero_tail_slots: None,
            snapshot_entries: Vec::new(),
            epoch_entries: Vec::new(),
            checkpoint_entries: Vec::new(),
            skipped,
            classified: !skipped,
            entry_findings: Vec::new(),
        }
    }

    /// Whether `f` is listed: not past the bound of its check on index entries.
    fn listed(&mut self, f: &Finding) -> bool {
        if !INDEX_ENTRY_CHECKS.contains(&f.check) {
            return true;
        }
        let i = match self.entry_findings.iter().position(|(c, ..)| *c == f.check) {
            Some(i) => i,
            None => {
                self.entry_findings.push((f.check, 0, 0));
                self.entry_findings.len() - 1
            }
        };
        let (_, listed, unlisted) = &mut self.entry_findings[i];
        if *listed < MAX_INDEX_ENTRY_FINDINGS {
            *listed += 1;
            true
        } else {
            *unlisted += 1;
            false
        }
    }
}

impl Sink for FileScan {
    fn event(&mut self, e: &Event<'_>) -> std::io::Result<()> {
        match e {
            Event::Batch { info, .. } => {
                self.batches += 1;
                let first = info.base_offset.unwrap_or(info.last_offset);
                self.first_offset.get_or_insert(first);
                self.last_offset = Some(info.last_offset);
                if info.magic >= 2 && info.partition_leader_epoch >= 0 {
                    let e = info.partition_leader_epoch;
                    if self.epochs.last().is_none_or(|&(last, _)| last != e) {
                        self.epochs.push((e, first));
                    }
                }
            }
            Event::BatchRecords { shown, .. } => self.records += shown,
            Event::Finding(f) if self.listed(f) => self.findings.push((*f).clone()),
            Event::FileEnd { path, .. } => {
                for &(check, _, n) in self.entry_findings.iter().filter(|e| e.2 > 0) {
                    let f = producers::unlisted(check, path, n, MAX_INDEX_ENTRY_FINDINGS);
                    self.findings.push(f);
                }
                self.entry_findings.clear();
            }
            Event::ZeroTail { slots, .. } => self.zero_tail_slots = Some(*slots),
            Event::SnapshotEntry(s) => self.snapshot_entries.push(**s),
            Event::LeaderEpochEntry(l) => self.epoch_entries.push(**l),
            Event::OffsetCheckpointEntry(c) => self.checkpoint_entries.push((*c).clone()),
            Event::Ignored { skipped, .. } => {
                self.skipped = *skipped;
                self.classified = !*skipped;
            }
            _ => {}
        }
        Ok(())
    }
}

static SKIPPED: FileScan = FileScan::unread(true);
static CLASSIFIED: FileScan = FileScan::unread(false);

/// A file's [`FileScan`] as kept: one that is only that of a file not read ([`SKIPPED`],
/// [`CLASSIFIED`]) is shared, so a directory of 100,000 files kseg cannot classify costs a
/// path each, not a scan each.
struct Scanned {
    read: Option<Box<FileScan>>,
    unread: &'static FileScan,
}

impl Scanned {
    fn new() -> Scanned {
        Scanned {
            read: Some(Box::default()),
            unread: &SKIPPED,
        }
    }

    /// Drops the scan of a file not read for the shared one (the walk of the file is over).
    fn settle(&mut self) {
        if let Some(scan) = &self.read {
            if let Some(unread) = [&SKIPPED, &CLASSIFIED].into_iter().find(|u| **u == **scan) {
                self.unread = unread;
                self.read = None;
            }
        }
    }

    fn make_mut(&mut self) -> &mut FileScan {
        self.read
            .get_or_insert_with(|| Box::new(self.unread.clone()))
    }
}

impl std::ops::Deref for Scanned {
    type Target = FileScan;

    fn deref(&self) -> &FileScan {
        self.read.as_deref().unwrap_or(self.unread)
    }
}

/// Collects a [`FileScan`] per file of one task, in the order the walk meets them, and feeds
/// a segment's batches to its producer-state replay.
#[derive(Default)]
struct Scans {
    files: FileScans,
    replay: Option<SegmentReplay>,
}

impl Sink for Scans {
    fn event(&mut self, e: &Event<'_>) -> std::io::Result<()> {
        match e {
            Event::FileStart { path } => {
                if let Some((_, last)) = self.files.last_mut() {
                    last.settle();
                }
                self.files.push((path.to_path_buf(), Scanned::new()));
            }
            // The broker stops loading at a bad CRC; the replay skips such batches.
            Event::Batch { info, entry } if info.is_valid => {
                if let Some(r) = self.replay.as_mut() {
                    r.batch(info.position, entry);
                }
            }
            _ => {}
        }
        match self.files.last_mut() {
            Some((_, scan)) => scan.make_mut().event(e),
            None => Ok(()),
        }
    }

    /// Records are counted from [`Event::BatchRecords`]; none is shown.
    fn wants_records(&self) -> bool {
        false
    }
}

/// What a segment's task needs besides its files to replay producer state.
struct SegmentContext {
    base_offset: i64,
    /// The next segment's base offset; None for the last segment.
    next_base: Option<i64>,
    /// `<base>.snapshot`, when the directory has it.
    start_snapshot: Option<PathBuf>,
    /// The snapshots whose offsets lie in (base, next base], or above base for the last.
    snapshots: Vec<(i64, PathBuf)>,
    txn_index: Option<PathBuf>,
}

/// One piece of parallel work: a file, or a segment's `.log` with its `.index`, `.timeindex`
/// and `.txnindex`, which are checked against what the log's walk saw (each log is read once).
struct Task {
    /// The unit the files belong to; None for a log dir's own files.
    unit: Option<usize>,
    files: Vec<PathBuf>,
    segment: Option<SegmentContext>,
}

/// Each file of a task with what its walk yielded.
type FileScans = Vec<(PathBuf, Scanned)>;

/// `files` with the last one settled too (each before it was when the next began).
fn settled(mut files: FileScans) -> FileScans {
    if let Some((_, last)) = files.last_mut() {
        last.settle();
    }
    files
}

fn decoded_snapshot(path: &Path) -> Option<Vec<ProducerSnapshotEntry>> {
    let bytes = read_state(path, StateFile::ProducerSnapshot).ok()?;
    crate::format::snapshot::decode(&bytes)
        .ok()
        .map(|s| s.entries)
}

fn scan_task(task: &Task, opts: &VerifyOptions) -> Result<FileScans> {
    let dump_opts = DumpOptions {
        deep: opts.deep,
        // Shallow: time-index entries are checked against batch headers, whose max --deep checks.
        exact_time_index: opts.deep,
        // Deep: every record of an internal topic as its loader reads it.
        loader_rules: opts.deep,
        base_offset: opts.base_offset,
        max_batch_bytes: opts.max_batch_bytes,
        // Every byte: dump's default of kafka-dump-log's 2^31-1 would leave a larger segment's
        // tail unread, and its damage unseen.
        max_bytes: u64::MAX,
        ..DumpOptions::default()
    };
    let mut scans = Scans::default();
    // A segment's log may be a `.log.swap` ([`loaded_kinds`]): read as the file it becomes.
    let dump_opts = DumpOptions {
        read_leftovers: task.segment.is_some(),
        ..dump_opts
    };
    let (Some(seg), Some((log, rest))) = (&task.segment, task.files.split_first()) else {
        dump_listed(&task.files, &dump_opts, &mut scans)?;
        return Ok(settled(scans.files));
    };
    // Snapshots that do not decode are reported by their own walk and compared with nothing.
    let start = match seg.start_snapshot.as_deref().and_then(decoded_snapshot) {
        Some(entries) => StartState::Snapshot(entries),
        None if seg.base_offset == 0 => StartState::Empty,
        None => StartState::Unknown,
    };
    let snapshots = seg
        .snapshots
        .iter()
        .filter_map(|(o, p)| Some((*o, p.clone(), decoded_snapshot(p)?)))
        .collect();
    scans.replay = Some(SegmentReplay::new(log, seg.base_offset, start, snapshots));
    dump_segment(log, rest, &dump_opts, &mut scans)?;
    let Scans { mut files, replay } = scans;
    let log_end = files
        .first()
        .and_then(|(_, s)| s.last_offset)
        .map_or(seg.base_offset, |o| o + 1);
    let txn = seg
        .txn_index
        .as_ref()
        .and_then(|t| files.iter().find(|(p, _)| p == t));
    // Entries past a decoding failure are unknown: that damage is reported already.
    let txn_readable =
        txn.is_none_or(|(_, s)| !s.findings.iter().any(|f| f.check == "txnindex.decode"));
    // The `.txnindex` is read again, streamed, rather than its entries kept from the walk: a
    // hostile one holds millions.
    // As many as the walk read (`txnindex.beyond-log` says why not the rest).
    let mut entries = match txn {
        Some((p, _)) => {
            let mut entries = TxnIndexEntries::open(p)?;
            if let Some(max) = entry_cap(p)? {
                entries.cap(max);
            }
            Some((p.as_path(), entries.map_while(Result::ok)))
        }
        None => None,
    };
    let mut found = replay.map_or_else(Vec::new, |r| {
        r.finish(
            entries
                .as_mut()
                .map(|(p, e)| (*p, e as &mut dyn Iterator<Item = AbortedTxn>)),
            seg.next_base.unwrap_or(log_end),
        )
    });
    if !txn_readable {
        found.retain(|f| !f.check.starts_with("txnindex."));
    }
    if let Some((_, scan)) = files.first_mut() {
        scan.make_mut().findings.extend(found);
    }
    Ok(settled(files))
}

/// Groups each unit's files into tasks: every `.log` with the index files of its base offset.
/// Lookups by base offset go through sorted lists and maps: a partition can have many
/// thousands of segments.
fn tasks(
    units: &[Unit],
    kinds: &[Vec<FileKind>],
    log_dirs: &[PathBuf],
    base_offset: Option<i64>,
) -> Vec<Task> {
    let mut tasks = Vec::new();
    for (i, (u, kinds)) in units.iter().zip(kinds).enumerate() {
        let all = || u.files.iter().zip(kinds);
        let mut bases: Vec<i64> = all()
            .filter_map(|(_, k)| match k {
                FileKind::Log { base_offset } => Some(*base_offset),
                _ => None,
            })
            .collect();
        bases.sort_unstable();
        let mut snapshots: Vec<(i64, &PathBuf)> = all()
            .filter_map(|(f, k)| match k {
                FileKind::ProducerSnapshot { offset } => Some((*offset, f)),
                _ => None,
            })
            .collect();
        // Stable: snapshots of one offset keep their directory order.
        snapshots.sort_by_key(|(o, _)| *o);
        // Each base offset's index files in directory order, and its `.txnindex`.
        let mut indexes: BTreeMap<i64, Vec<&PathBuf>> = BTreeMap::new();
        let mut txn_indexes: BTreeMap<i64, &PathBuf> = BTreeMap::new();
        for (f, k) in all() {
            match k {
                FileKind::OffsetIndex { base_offset } | FileKind::TimeIndex { base_offset } => {
                    indexes.entry(*base_offset).or_default().push(f)
                }
                FileKind::TxnIndex { base_offset } => {
                    indexes.entry(*base_offset).or_default().push(f);
                    txn_indexes.entry(*base_offset).or_insert(f);
                }
                _ => {}
            }
        }
        // Files kseg cannot classify are not read: one task for all of them, not one each.
        let mut unclassified = Vec::new();
        for (f, kind) in all() {
            let (files, segment) = match kind {
                FileKind::Log { base_offset: base } => {
                    let own = indexes.get(base).into_iter().flatten();
                    let files: Vec<PathBuf> = std::iter::once(f.clone())
                        .chain(own.map(|g| (*g).clone()))
                        .collect();
                    let next_base = bases.get(bases.partition_point(|b| b <= base)).copied();
                    let from = snapshots.partition_point(|(o, _)| o < base);
                    let to = next_base.map_or(snapshots.len(), |n| {
                        snapshots.partition_point(|(o, _)| *o <= n)
                    });
                    let here = &snapshots[from..to];
                    let segment = SegmentContext {
                        base_offset: *base,
                        next_base,
                        start_snapshot: here
                            .iter()
                            .find(|(o, _)| o == base)
                            .map(|(_, p)| (*p).clone()),
                        snapshots: here
                            .iter()
                            .filter(|(o, _)| o > base)
                            .map(|(o, p)| (*o, (*p).clone()))
                            .collect(),
                        txn_index: txn_indexes.get(base).map(|g| (*g).clone()),
                    };
                    (files, Some(segment))
                }
                FileKind::OffsetIndex { base_offset }
                | FileKind::TimeIndex { base_offset }
                | FileKind::TxnIndex { base_offset }
                    if bases.binary_search(base_offset).is_ok() =>
                {
                    continue
                }
                FileKind::Unknown => {
                    unclassified.push(f.clone());
                    continue;
                }
                _ => (vec![f.clone()], None),
            };
            tasks.push(Task {
                unit: Some(i),
                files,
                segment,
            });
        }
        tasks.extend(unclassified_task(Some(i), unclassified));
    }
    for d in log_dirs {
        let (unclassified, files): (Vec<PathBuf>, Vec<PathBuf>) = regular_files(d)
            .map(|(f, _)| f)
            .unwrap_or_default()
            .into_iter()
            .partition(|f| kind_of(f, base_offset).kind == FileKind::Unknown);
        for f in files {
            tasks.push(Task {
                unit: None,
                files: vec![f],
                segment: None,
            });
        }
        tasks.extend(unclassified_task(None, unclassified));
    }
    tasks
}

/// The one task of a unit's files kseg cannot classify, if any.
fn unclassified_task(unit: Option<usize>, files: Vec<PathBuf>) -> Option<Task> {
    (!files.is_empty()).then_some(Task {
        unit,
        files,
        segment: None,
    })
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A unit of work: a directory (a partition's, as a rule) with its files.
struct Unit {
    path: PathBuf,
    partition: Option<names::PartitionDir>,
    files: Vec<PathBuf>,
    /// The files the user named, when not all of them: every file is read, but only these,
    /// and the files missing from their segments, are reported on.
    named: Option<Vec<PathBuf>>,
    /// The log dir this partition lives in, when the log dir was given.
    log_dir: Option<PathBuf>,
    /// Its sub-directories that are kseg backups ([`crate::ops::repair::apply::is_backup_dir`]).
    backups: Vec<PathBuf>,
}

/// The kseg backups among the directories `dirs`.
fn backups_among(dirs: &[PathBuf]) -> Vec<PathBuf> {
    dirs.iter()
        .filter(|d| crate::ops::repair::apply::is_backup_dir(d))
        .cloned()
        .collect()
}

fn regular_files(dir: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let listed = crate::storage::files::list_dir(dir)?;
    Ok(listed.into_iter().partition(|p| !p.is_dir()))
}

/// The kind of each of a partition's `files` as the broker's loader leaves it
/// ([`plan_leftovers`], `LogLoader` at start-up): a `.swap` it renames is the file it becomes
/// (a `.log.swap` the segment); a file of an offset a `.log.swap` covers is deleted, replaced
/// by it: a `.deleted` leftover here, not read ([`crate::ops::input::REPLACED_NOTE`]); every other file is its
/// kind (a `.deleted` or `.cleaned` file, or a `.swap` of an unfinished split, stays a leftover
/// the loader deletes: known by name, not read).
fn loaded_kinds(files: &[PathBuf], base_offset: Option<i64>) -> Result<Vec<FileKind>> {
    let plan = plan_leftovers(files)?;
    let fates = plan.fates();
    Ok(files
        .iter()
        .map(|f| {
            let kind = kind_of(f, base_offset).kind;
            match (fates.get(f.as_path()), kind) {
                (Some(None), FileKind::Leftover { inner, .. }) => *inner,
                (Some(Some(DeletedBecause::ReplacedBySwap)), kind) => FileKind::Leftover {
                    suffix: names::LeftoverSuffix::Deleted,
                    inner: Box::new(kind),
                },
                (_, kind) => kind,
            }
        })
        .collect())
}

/// Whether `kind` is a `.log.swap`: in a named set of files, it brings its segment's files.
fn swap_segment(kind: &FileKind) -> bool {
    matches!(
        kind,
        FileKind::Leftover {
            suffix: names::LeftoverSuffix::Swap,
            inner,
        } if matches!(**inner, FileKind::Log { .. })
    )
}

/// How many bytes of `file` its check reads: of an index, not the holes of a preallocated one;
/// of a file kseg cannot classify, none.
fn bytes_read(file: &Path, base_offset: Option<i64>) -> u64 {
    if let Some(remote) = crate::storage::tiered::shown_as(file) {
        return remote.len();
    }
    let Ok(f) = crate::storage::files::open_regular(file) else {
        return 0;
    };
    let len = f.metadata().map_or(0, |m| m.len());
    match kind_of(file, base_offset).kind {
        FileKind::OffsetIndex { .. } | FileKind::TimeIndex { .. } => {
            crate::storage::files::index_read_len(&f, len)
        }
        FileKind::Unknown => 0,
        _ => len,
    }
}

/// The unit of the files named in `dir`, reported on as far as named, with their siblings: in
/// a partition directory every Kafka file, elsewhere the files of the same stem.
fn files_unit(dir: &Path, named: Vec<PathBuf>, base_offset: Option<i64>) -> Result<Unit> {
    let listed = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let (files, _) = regular_files(listed)?;
    let name = match file_name(dir) {
        n if n.is_empty() => std::fs::canonicalize(listed)
            .map(|d| file_name(&d))
            .unwrap_or_default(),
        n => n,
    };
    let partition = parse_partition_dir(&name);
    let stem = |f: &Path| {
        file_name(f)
            .split('.')
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    // A leftover the loader deletes is judged alone: its segment's files are not its own.
    let stems: Vec<String> = named
        .iter()
        .filter(|f| {
            let k = kind_of(f, base_offset).kind;
            !matches!(k, FileKind::Leftover { .. }) || swap_segment(&k)
        })
        .map(|f| stem(f))
        .collect();
    let sibling = |f: &PathBuf| {
        kind_of(f, base_offset).kind != FileKind::Unknown
            && (partition.is_some() || stems.contains(&stem(f)))
    };
    // Listed as the user names them (`a.log`, not `./a.log`).
    let files: Vec<PathBuf> = files
        .iter()
        .filter_map(|f| f.file_name().map(|n| dir.join(n)))
        .filter(|f| named.contains(f) || sibling(f))
        .collect();
    let all = files.iter().all(|f| named.contains(f));
    Ok(Unit {
        path: listed.to_path_buf(),
        partition,
        files,
        named: (!all).then_some(named),
        log_dir: None,
        backups: Vec::new(),
    })
}

/// Sorts the paths given into partition directories, log dirs and the directories of the
/// files named (a file is judged with its segment and partition); with the findings on the log
/// dirs' own directories.
fn plan(
    paths: &[PathBuf],
    base_offset: Option<i64>,
) -> Result<(Vec<Unit>, Vec<PathBuf>, Vec<Finding>)> {
    let mut units = Vec::new();
    let mut log_dirs = Vec::new();
    let mut log_dir_findings = Vec::new();
    // The files named, by directory in the order first named.
    let mut named: Vec<(PathBuf, Vec<PathBuf>)> = Vec::new();
    for p in paths {
        let Input::Dir { files, dirs, shape } = examine(p, Expected::AnyInput)? else {
            let dir = p.parent().unwrap_or(Path::new("")).to_path_buf();
            match named.iter_mut().find(|(d, _)| *d == dir) {
                Some((_, files)) => files.push(p.clone()),
                None => named.push((dir, vec![p.clone()])),
            }
            continue;
        };
        if shape == Shape::Partition {
            let partition = parse_partition_dir(&file_name(p));
            units.push(Unit {
                path: p.clone(),
                partition,
                backups: backups_among(&dirs),
                files,
                named: None,
                log_dir: None,
            });
            continue;
        }
        log_dirs.push(p.clone());
        for d in dirs {
            let Some(partition) = parse_partition_dir(&file_name(&d)) else {
                if crate::ops::repair::apply::is_backup_dir(&d) {
                    log_dir_findings.push(Finding::error(
                        "leftover.kseg-backup",
                        &d,
                        "a kseg backup directory inside the log dir: the broker takes every directory of a log dir for a partition directory and fails the whole log dir at start-up on this name (UnifiedLog.parseTopicPartitionName in LogManager.loadLogs); move it out of the log dir",
                    ));
                } else {
                    log_dir_findings.extend(crate::ops::inspect::ls::dir_name_finding(&d));
                }
                continue;
            };
            let (files, sub_dirs) = regular_files(&d)?;
            units.push(Unit {
                path: d,
                partition: Some(partition),
                files,
                named: None,
                log_dir: Some(p.clone()),
                backups: backups_among(&sub_dirs),
            });
        }
    }
    // The same partition in two of the log dirs given: what `ls` reports, judged alike.
    let in_log_dirs: Vec<&Path> = units
        .iter()
        .filter(|u| u.log_dir.is_some())
        .map(|u| u.path.as_path())
        .collect();
    log_dir_findings.extend(
        crate::ops::inspect::ls::duplicates(&in_log_dirs)
            .into_iter()
            .map(|(_, f)| f),
    );
    for (dir, files) in named {
        // Files of a partition judged whole already (a leftover named beside its partition,
        // which the input resolver keeps: `dump` reads it as the file it was).
        let at = place(&dir);
        let whole = |u: &Unit| u.named.is_none() && place(&u.path) == at;
        if !units.iter().any(whole) {
            units.push(files_unit(&dir, files, base_offset)?);
        }
    }
    Ok((units, log_dirs, log_dir_findings))
}

/// Verifies every path; `progress` is called with the bytes of each file once it is checked.
pub fn verify_paths(
    paths: &[PathBuf],
    opts: &VerifyOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Report> {
    let (units, log_dirs, stray_backups) = plan(paths, opts.base_offset)?;
    let kinds: Vec<Vec<FileKind>> = units
        .iter()
        .map(|u| loaded_kinds(&u.files, opts.base_offset))
        .collect::<Result<_>>()?;
    let tasks = tasks(&units, &kinds, &log_dirs, opts.base_offset);
    // Each task's size, taken once: the total up front and the progress as tasks finish.
    let sized: Vec<(Task, u64)> = tasks
        .into_iter()
        .map(|t| {
            let bytes = t
                .files
                .iter()
                .map(|f| bytes_read(f, opts.base_offset))
                .sum();
            (t, bytes)
        })
        .collect();
    let scans: Vec<(Option<usize>, Result<FileScans>)> = sized
        .into_par_iter()
        .map(|(t, bytes)| {
            let scans = scan_task(&t, opts);
            progress(bytes);
            (t.unit, scans)
        })
        .collect();
    let mut per_unit: Vec<FileScans> = units.iter().map(|_| Vec::new()).collect();
    let mut log_dir_scans = Vec::new();
    for (unit, scans) in scans {
        match unit {
            Some(i) => per_unit[i].extend(scans?),
            None => log_dir_scans.extend(scans?),
        }
    }
    // Report in directory order, whatever order the tasks walked the files in.
    for (u, scans) in units.iter().zip(&mut per_unit) {
        let order: std::collections::HashMap<&PathBuf, usize> =
            u.files.iter().enumerate().map(|(i, f)| (f, i)).collect();
        scans.sort_by_key(|(f, _)| order.get(f).copied());
    }
    let all_scans = || per_unit.iter().flatten().chain(&log_dir_scans);
    let skipped: Vec<PathBuf> = all_scans()
        .filter(|(_, s)| s.skipped)
        .map(|(f, _)| f.clone())
        .collect();
    let classified: Vec<PathBuf> = all_scans()
        .filter(|(_, s)| s.classified)
        .map(|(f, _)| f.clone())
        .collect();
    // Only what was read counts as checked.
    let read = || all_scans().filter(|(_, s)| !s.skipped && !s.classified);
    let files_checked = read().count();
    let bytes_checked = read().map(|(f, _)| bytes_read(f, opts.base_offset)).sum();
    let mut partitions: Vec<PartitionReport> = units
        .iter()
        .zip(per_unit)
        .zip(&kinds)
        .map(|((u, scans), kinds)| check_partition(u, kinds, scans, opts))
        .collect();
    let mut log_dir_findings = check_log_dirs(&units, &mut partitions, log_dir_scans);
    log_dir_findings.extend(stray_backups);
    let mut report = Report {
        partitions,
        log_dir_findings,
        files_checked,
        bytes_checked,
        skipped,
        classified,
    };
    // Entries named like Kafka files that are not files: with their partition's findings.
    for f in crate::ops::finding::not_regular_findings() {
        let dir = f.file.parent().map(Path::to_path_buf);
        report.findings_of(dir.as_deref()).push(f);
    }
    Ok(report)
}

/// The checks across the files of one partition directory.
fn check_partition(
    u: &Unit,
    kinds: &[FileKind],
    scans: FileScans,
    opts: &VerifyOptions,
) -> PartitionReport {
    let mut findings = Vec::new();
    let mut segments = Vec::new();
    let mut by_base: BTreeMap<i64, Vec<(FileKind, &Path, &FileScan)>> = BTreeMap::new();
    let mut snapshots = Vec::new();
    let mut epoch_files = Vec::new();
    let kinds: BTreeMap<&PathBuf, &FileKind> = u.files.iter().zip(kinds).collect();
    for (path, scan) in &scans {
        findings.extend(scan.findings.iter().cloned());
        let name = file_name(path);
        let kind = kinds
            .get(path)
            .map_or_else(|| kind_of(path, opts.base_offset).kind, |&k| k.clone());
        match &kind {
            FileKind::Log { base_offset } => {
                segments.push(SegmentSummary {
                    base_offset: *base_offset,
                    file: path.clone(),
                    bytes: crate::storage::files::file_len(path).unwrap_or(0),
                    batches: scan.batches,
                    records: opts.deep.then_some(scan.records),
                    first_offset: scan.first_offset,
                    last_offset: scan.last_offset,
                });
            }
            FileKind::ProducerSnapshot { offset } => snapshots.push((*offset, path, scan)),
            FileKind::LeaderEpochCheckpoint => epoch_files.push(scan),
            FileKind::Leftover { suffix, .. } => findings.push(Finding::warning(
                "leftover.file",
                path,
                // A leftover by the loader's plan, not by its name: a file a swap replaces.
                if !matches!(classify(&name), FileKind::Leftover { .. }) {
                    crate::ops::input::REPLACED_NOTE.to_owned()
                } else {
                    crate::ops::input::leftover_note(*suffix, false)
                },
            )),
            // The broker ignores a file it does not know; a rerun of the command resolves it.
            _ if name.ends_with(crate::ops::repair::apply::TMP_SUFFIX) => findings.push(Finding::warning(
                "leftover.kseg-tmp",
                path,
                "temporary file of an interrupted kseg --apply: the broker ignores it; rerun the same kseg command to finish or undo the change",
            )),
            _ => {}
        }
        if let Some(base) = kind.offset().filter(|_| kind.is_segment_file()) {
            by_base
                .entry(base)
                .or_default()
                .push((kind.clone(), path, scan));
        }
    }
    for b in &u.backups {
        findings.push(Finding::warning(
            "leftover.kseg-backup",
            b,
            "a kseg backup directory inside the partition directory: the broker ignores it, but it holds copies of the partition's files and the plan of a repair; move it out of the log dir",
        ));
    }
    segments.sort_by_key(|s| s.base_offset);
    let active_base = segments.last().map(|s| s.base_offset);
    check_segment_files(&by_base, active_base, &mut findings);
    check_segment_order(&segments, &mut findings);
    // The broker's (DeleteRecords and retention move it into a segment); a checkpoint that
    // does not decode is reported on its own, and leaves the first segment's base here.
    let log_start = segments.first().map(|s| {
        crate::ops::partition::loaded_log_start(&u.path, s.base_offset).unwrap_or(LogStart {
            offset: s.base_offset,
            source: LogStartSource::FirstSegment,
        })
    });
    let log_start_offset = log_start.map(|l| l.offset);
    let log_end_offset = segments
        .last()
        .map(|s| s.last_offset.map_or(s.base_offset, |o| o + 1));
    if let (Some(start), Some(end)) = (log_start_offset, log_end_offset) {
        for (offset, path, scan) in &snapshots {
            let first_base = segments.first().map_or(start, |s| s.base_offset);
            check_snapshot(*offset, path, scan, (start, end, first_base), &mut findings);
        }
        let epochs = by_base
            .values()
            .flatten()
            .filter(|(k, _, _)| matches!(k, FileKind::Log { .. }))
            .flat_map(|(_, _, s)| s.epochs.iter().copied())
            .fold(Vec::new(), |mut runs: Vec<(i32, i64)>, (e, first)| {
                // An epoch going on into the next segment is one run.
                if runs.last().is_none_or(|&(last, _)| last != e) {
                    runs.push((e, first));
                }
                runs
            });
        let epoch_path = u.path.join(names::LEADER_EPOCH_CHECKPOINT_FILE_NAME);
        match epoch_files.first() {
            Some(scan) => check_epochs(
                &epoch_path,
                &scan.epoch_entries,
                &epochs,
                (start, end),
                &mut findings,
            ),
            // A directory only showing remote segments named alone (`--remote-segment`) has
            // no partition state to miss: none was given.
            None if !epochs.is_empty()
                && u.partition.is_some()
                && crate::storage::files::holds_state(&u.path) =>
            {
                findings.push(Finding::warning(
                    "leader-epoch.missing",
                    &epoch_path,
                    "no leader-epoch-checkpoint although batches carry partition leader epochs: the broker starts with an empty epoch cache (it does not rebuild it from the batches), so a follower truncates by its high watermark instead",
                ))
            }
            None => {}
        }
    }
    if let Some(named) = &u.named {
        findings.retain(|f| reported(f, named, &u.files, opts.base_offset));
    }
    PartitionReport {
        path: u.path.clone(),
        topic: u.partition.as_ref().map(|p| p.topic.clone()),
        partition: u.partition.as_ref().map(|p| p.partition),
        segments,
        log_start_offset,
        log_start_offset_source: log_start.map(|l| l.source),
        log_end_offset,
        findings,
    }
}

/// Whether a finding of a directory of which only the files `named` were named is reported:
/// one about a named file, or about a file missing from a named file's segment.
fn reported(f: &Finding, named: &[PathBuf], files: &[PathBuf], base_offset: Option<i64>) -> bool {
    if named.contains(&f.file) {
        return true;
    }
    let kind = kind_of(&f.file, base_offset).kind;
    let segment = |k: &FileKind| k.is_segment_file().then(|| k.offset()).flatten();
    !files.contains(&f.file)
        && segment(&kind).is_some_and(|base| {
            named
                .iter()
                .any(|n| segment(&kind_of(n, base_offset).kind) == Some(base))
        })
}

/// Each segment's offset and time indexes: present, and trimmed when closed.
fn check_segment_files(
    by_base: &BTreeMap<i64, Vec<(FileKind, &Path, &FileScan)>>,
    active_base: Option<i64>,
    findings: &mut Vec<Finding>,
) {
    for (&base, files) in by_base {
        let log = files
            .iter()
            .find(|(k, _, _)| matches!(k, FileKind::Log { .. }));
        // The loader deletes an index without its log (`LogLoader.loadSegmentFiles`).
        let Some((_, log_path, _)) = log else {
            for (_, path, _) in files {
                findings.push(Finding::warning(
                    "index.orphan",
                    *path,
                    format!(
                        "no {} for this index: the broker deletes it at start-up",
                        names::log_file_name(base)
                    ),
                ));
            }
            continue;
        };
        // A remote segment (`--remote`) has no local index to load: the broker reads the
        // plugin's, which `tiered --deep` judges.
        if crate::storage::tiered::shown_as(log_path).is_some() {
            continue;
        }
        // Without an offset index the loader recovers the segment, rebuilding every index; with
        // one but no time index it creates an empty time index (`LogSegment.sanityCheck`), which
        // a recovery past the recovery point fills, and which otherwise leaves time lookups to
        // scan the segment and time retention to go by the file's mtime.
        let has = |want: fn(&FileKind) -> bool| files.iter().any(|(k, _, _)| want(k));
        // A `.log.swap` ([`loaded_kinds`]) names the indexes of the `.log` it becomes.
        let log_path = &log_path
            .to_str()
            .and_then(|p| p.strip_suffix(names::SWAP_FILE_SUFFIX))
            .map_or_else(|| log_path.to_path_buf(), PathBuf::from);
        let has_offset_index = has(|k| matches!(k, FileKind::OffsetIndex { .. }));
        if !has_offset_index {
            let p = sibling(log_path, names::INDEX_FILE_SUFFIX);
            findings.push(Finding::warning(
                "index.missing",
                p,
                "offset index missing: the broker recovers this segment at start-up, rebuilding its indexes",
            ));
        }
        if !has(|k| matches!(k, FileKind::TimeIndex { .. })) {
            let p = sibling(log_path, names::TIME_INDEX_FILE_SUFFIX);
            let m = if has_offset_index {
                "time index missing: the broker creates it empty at start-up and fills it only if it recovers the segment; until then time lookups scan the segment and time retention uses the file's mtime"
            } else {
                "time index missing: the broker recovers this segment at start-up, rebuilding its indexes"
            };
            findings.push(Finding::warning("timeindex.missing", p, m));
        }
        for (kind, path, scan) in files {
            let Some(slots) = scan.zero_tail_slots else {
                continue;
            };
            let m = format!("{slots} preallocated zero-filled slot(s) at the end");
            let f = if Some(base) == active_base {
                Finding::warning("index.untrimmed", *path, format!("{m}: normal for the active segment of a running or crashed broker, which trims it when the segment is closed or recovered"))
            } else if matches!(kind, FileKind::TimeIndex { .. }) {
                // Its last slot, (0, base), is what the broker takes for the segment's largest
                // timestamp (`LogSegment.largestTimestamp`).
                Finding::error("index.untrimmed", *path, format!("{m} of a closed segment: the broker takes timestamp 0 for the segment's largest, so time retention deletes it early and time lookups skip it"))
            } else {
                // The zero slots sort below every real entry, so a lookup that meets one scans
                // the segment from its start: slow, but it finds the right batch.
                Finding::warning("index.untrimmed", *path, format!("{m} of a closed segment: the broker's lookups that meet them scan the segment from its start"))
            };
            findings.push(f);
        }
    }
}

/// Segments hold increasing, non-overlapping offset ranges.
fn check_segment_order(segments: &[SegmentSummary], findings: &mut Vec<Finding>) {
    let mut prev: Option<&SegmentSummary> = None;
    for s in segments {
        if let Some(p) = prev {
            let prev_last = p.last_offset.unwrap_or(p.base_offset - 1);
            let first = s.first_offset.unwrap_or(s.base_offset);
            if s.base_offset <= prev_last || first <= prev_last {
                // Named by its file's base offset, which the broker's segment map keys it by;
                // its first batch too where that is elsewhere.
                let first_batch = if first == s.base_offset {
                    String::new()
                } else {
                    format!(" (its first batch at offset {first})")
                };
                let m = format!(
                    "segment {}{first_batch} overlaps the previous segment {}, whose last offset is \
                     {prev_last}",
                    s.base_offset, p.base_offset
                );
                findings.push(Finding::error("segment.overlap", &s.file, m).offset(first));
            }
        }
        prev = Some(s);
    }
}

/// A snapshot's offset within the log (`log` is the start, the end and the first segment's base
/// offset). Its content is compared with the log by the replay of the segment it ends in; one
/// at or below the first segment's base ends in none, so only its offsets are checked here.
fn check_snapshot(
    offset: i64,
    path: &Path,
    scan: &FileScan,
    log: (i64, i64, i64),
    findings: &mut Vec<Finding>,
) {
    let (start, end, first_base) = log;
    if offset < start || offset > end {
        let m = format!("snapshot offset {offset} is outside the log ({start}..={end}); the broker deletes such snapshots at load");
        findings.push(Finding::warning("snapshot.range", path, m).offset(offset));
    }
    for e in scan
        .snapshot_entries
        .iter()
        .filter(|_| offset <= first_base)
    {
        if e.has_batch_metadata() && e.last_offset >= offset {
            let m = format!(
                "producer {} has its last batch at offset {}, not below the snapshot's offset {offset}",
                e.producer_id, e.last_offset
            );
            findings.push(Finding::error("snapshot.content", path, m).offset(e.last_offset));
        }
    }
}

/// Epochs increase, start offsets do not decrease, nothing starts past the log end, and every
/// epoch a batch carries has an entry starting at or before that batch.
fn check_epochs(
    path: &Path,
    entries: &[EpochEntry],
    seen: &[(i32, i64)],
    (log_start, log_end): (i64, i64),
    findings: &mut Vec<Finding>,
) {
    for w in entries.windows(2) {
        if w[1].epoch <= w[0].epoch || w[1].start_offset < w[0].start_offset {
            let m = format!(
                "entry (epoch {}, start offset {}) does not follow (epoch {}, start offset {})",
                w[1].epoch, w[1].start_offset, w[0].epoch, w[0].start_offset
            );
            findings.push(Finding::error("leader-epoch.order", path, m));
        }
    }
    for e in entries.iter().filter(|e| e.start_offset > log_end) {
        let m = format!(
            "epoch {} starts at offset {}, past the log end offset {log_end}",
            e.epoch, e.start_offset
        );
        findings.push(Finding::error("leader-epoch.range", path, m).offset(e.start_offset));
    }
    // When the log start moves, the broker drops the epochs wholly below it and moves the
    // start of the one it falls in up to it (`LeaderEpochFileCache.truncateFromStart`): the
    // batches below the log start are not the checkpoint's to cover.
    let runs = seen.iter().enumerate().filter_map(|(i, &(epoch, first))| {
        let run_end = seen.get(i + 1).map_or(log_end, |&(_, next)| next);
        (run_end > log_start).then_some((epoch, first.max(log_start)))
    });
    for (epoch, first) in runs {
        match entries.iter().find(|e| e.epoch == epoch) {
            Some(e) if e.start_offset <= first => {}
            Some(e) => {
                let m = format!("epoch {epoch} starts at offset {} but a batch at offset {first} already carries it", e.start_offset);
                findings.push(Finding::error("leader-epoch.coverage", path, m).offset(first));
            }
            None => {
                let m = format!("batches from offset {first} carry partition leader epoch {epoch}, which has no entry");
                findings.push(Finding::error("leader-epoch.coverage", path, m).offset(first));
            }
        }
    }
}

/// Log-dir checkpoint files against the partitions present in the log dir.
fn check_log_dirs(
    units: &[Unit],
    partitions: &mut [PartitionReport],
    scans: FileScans,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let log_dir_files: Vec<PathBuf> = scans.iter().map(|(p, _)| p.clone()).collect();
    for (path, scan) in scans {
        findings.extend(scan.findings.iter().cloned());
        let kind = classify(&file_name(&path));
        let Some(dir) = path.parent() else { continue };
        let present: Vec<usize> = units
            .iter()
            .enumerate()
            .filter(|(_, u)| {
                u.log_dir.as_deref() == Some(dir)
                    && u.partition
                        .as_ref()
                        .is_some_and(|p| p.state == names::PartitionDirState::Live)
            })
            .map(|(i, _)| i)
            .collect();
        let check_all = matches!(
            kind,
            FileKind::RecoveryPointCheckpoint | FileKind::ReplicationOffsetCheckpoint
        );
        let what = match kind {
            FileKind::RecoveryPointCheckpoint => "recovery point",
            FileKind::ReplicationOffsetCheckpoint => "high watermark",
            FileKind::LogStartOffsetCheckpoint => "log start offset",
            FileKind::CleanerOffsetCheckpoint => "cleaner offset",
            _ => continue,
        };
        let check = match kind {
            FileKind::RecoveryPointCheckpoint => "checkpoint.recovery-point",
            FileKind::ReplicationOffsetCheckpoint => "checkpoint.high-watermark",
            FileKind::LogStartOffsetCheckpoint => "checkpoint.log-start",
            _ => "checkpoint.cleaner-offset",
        };
        for e in &scan.checkpoint_entries {
            let name = names::partition_dir_name(&e.topic, e.partition);
            let Some(&i) = present.iter().find(|&&i| partitions[i].name() == name) else {
                let m = format!("{what} for {name}, which has no directory in this log dir");
                findings.push(Finding::warning("checkpoint.unknown-partition", &path, m));
                continue;
            };
            let p = &mut partitions[i];
            if kind == FileKind::LogStartOffsetCheckpoint
                && p.log_start_offset.is_none_or(|s| e.offset > s)
            {
                p.log_start_offset = Some(e.offset);
                p.log_start_offset_source = Some(LogStartSource::Checkpoint);
            }
            let (Some(start), Some(end)) = (p.log_start_offset, p.log_end_offset) else {
                continue;
            };
            let floor = if kind == FileKind::LogStartOffsetCheckpoint {
                p.segments.first().map_or(start, |s| s.base_offset)
            } else {
                start
            };
            // Retention leaves the cleaner's offset below a rising log start (only cleaning
            // writes that checkpoint), and the cleaner resets it when it next looks at the
            // log (`LogCleanerManager.cleanableOffsets`): normal, nothing to report.
            let stale_cleaner = kind == FileKind::CleanerOffsetCheckpoint && e.offset < floor;
            if (e.offset > end || e.offset < floor) && !stale_cleaner {
                let m = format!(
                    "{what} {} of {name} is outside the log ({start}..={end})",
                    e.offset
                );
                // The broker bounds these by the log: the recovery point by the log end
                // (`LogLoader.recoverLog`), the high watermark by the log start and end
                // (`UnifiedLog.updateHighWatermark`), the cleaner's offset by the log start and
                // the active segment (`LogCleanerManager.cleanableOffsets`); a log start below
                // the first segment gives way to it. Only a log start past the end is taken
                // as it is.
                let tolerated = match kind {
                    FileKind::LogStartOffsetCheckpoint => e.offset <= end,
                    _ => true,
                };
                let f = if tolerated {
                    let bound = match kind {
                        // The cleaner starts over from the log start either way.
                        FileKind::CleanerOffsetCheckpoint => start,
                        _ if e.offset > end => end,
                        _ => floor,
                    };
                    Finding::warning(
                        check,
                        &path,
                        format!("{m}: the broker takes {bound} instead"),
                    )
                } else {
                    Finding::error(
                        check,
                        &path,
                        format!("{m}: the broker takes it as the log start, past every record"),
                    )
                };
                findings.push(f.offset(e.offset));
            }
        }
        // The checkpoint's entry for the partition named `name`, if any.
        let entry_for = |name: &str| {
            scan.checkpoint_entries
                .iter()
                .find(|e| names::partition_dir_name(&e.topic, e.partition) == name)
        };
        if check_all {
            // The KRaft metadata log is the raft layer's, never the log manager's: it has no
            // entry in these checkpoints.
            let managed = present
                .iter()
                .filter(|&&i| partitions[i].topic.as_deref() != Some(KRAFT_METADATA_TOPIC));
            for &i in managed {
                let name = partitions[i].name();
                if entry_for(&name).is_none() {
                    let then = if kind == FileKind::RecoveryPointCheckpoint {
                        "the broker recovers it from offset 0 at start-up (normal for a partition created since the last checkpoint)"
                    } else {
                        "the broker starts it with no high watermark and learns it from the leader (normal for a partition created since the last checkpoint)"
                    };
                    let m = format!(
                        "no {what} entry for {name}, which is present in this log dir: {then}"
                    );
                    findings.push(Finding::warning("checkpoint.missing-entry", &path, m));
                }
            }
        }
        if kind == FileKind::RecoveryPointCheckpoint && !clean_shutdown(dir, &log_dir_files) {
            for &i in &present {
                let name = partitions[i].name();
                let point = entry_for(&name).map_or(0, |e| e.offset);
                rebuilt_at_start_up(&mut partitions[i], point);
            }
        }
    }
    // Without a recovery-point checkpoint, an unclean start recovers every partition from 0.
    for (i, u) in units.iter().enumerate() {
        let Some(dir) = u.log_dir.as_deref() else {
            continue;
        };
        let has_recovery_points = log_dir_files.iter().any(|f| {
            f.parent() == Some(dir) && classify(&file_name(f)) == FileKind::RecoveryPointCheckpoint
        });
        if !has_recovery_points && !clean_shutdown(dir, &log_dir_files) {
            rebuilt_at_start_up(&mut partitions[i], 0);
        }
    }
    findings
}

/// The name of the KRaft metadata log's topic.
const KRAFT_METADATA_TOPIC: &str = "__cluster_metadata";

/// Whether the log dir `dir` holds the marker of a clean shutdown.
fn clean_shutdown(dir: &Path, log_dir_files: &[PathBuf]) -> bool {
    log_dir_files
        .iter()
        .any(|f| f.parent() == Some(dir) && classify(&file_name(f)) == FileKind::CleanShutdown)
}

/// After an unclean shutdown the loader recovers every segment from the one holding the
/// recovery point on (`LogLoader.recoverLog`), rebuilding their offset, time and transaction
/// indexes: what is wrong with those indexes is repaired at start-up, so it is a warning.
fn rebuilt_at_start_up(p: &mut PartitionReport, recovery_point: i64) {
    let floor = p
        .segments
        .iter()
        .rev()
        .find(|s| s.base_offset <= recovery_point)
        .or(p.segments.first())
        .map_or(recovery_point, |s| s.base_offset);
    for f in p
        .findings
        .iter_mut()
        .filter(|f| f.severity == Severity::Error)
    {
        let kind = classify(&file_name(&f.file));
        let index = matches!(
            kind,
            FileKind::OffsetIndex { .. } | FileKind::TimeIndex { .. } | FileKind::TxnIndex { .. }
        );
        if index && kind.offset().is_some_and(|b| b >= floor) {
            f.severity = Severity::Warning;
            f.message.push_str(&format!("; the broker did not shut down cleanly, so it rebuilds this index at start-up (the segment is at or past the recovery point {recovery_point})"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(base: i64, first: i64, last: i64) -> SegmentSummary {
        SegmentSummary {
            base_offset: base,
            file: PathBuf::from(crate::format::names::log_file_name(base)),
            bytes: 100,
            batches: 1,
            records: None,
            first_offset: Some(first),
            last_offset: Some(last),
        }
    }

    /// A segment is named by its file's base offset, and by its first batch's where that is
    /// elsewhere: a segment whose batches start below the previous one's end overlaps it though
    /// its base offset is past it.
    #[test]
    fn overlapping_segments_are_named_by_their_base_offsets() {
        let mut findings = Vec::new();
        let segments = [segment(0, 0, 9), segment(10, 10, 19), segment(20, 15, 29)];
        check_segment_order(&segments, &mut findings);
        check_segment_order(&[segment(0, 0, 9), segment(5, 5, 12)], &mut findings);
        let said: Vec<(&str, Option<i64>)> = findings
            .iter()
            .map(|f| (f.message.as_str(), f.offset))
            .collect();
        assert_eq!(
            said,
            [
                (
                    "segment 20 (its first batch at offset 15) overlaps the previous segment 10, \
                     whose last offset is 19",
                    Some(15)
                ),
                (
                    "segment 5 overlaps the previous segment 0, whose last offset is 9",
                    Some(5)
                ),
            ]
        );
    }
}
