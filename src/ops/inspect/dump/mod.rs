//! `dump`: walks the files of partition directories through the engine's readers and reports
//! what it sees as [`Event`]s. Renderers (kafka-dump-log text, JSON Lines) live in the CLI;
//! this module decides *what* is reported, never how it is printed.
//!
//! Unlike kafka-dump-log, damage never stops the walk: it is reported with its byte position,
//! the reader resynchronises on the next valid batch, and the dump carries on.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::format::checkpoint::{EpochEntry, OffsetCheckpointEntry};
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::format::control::{decode_control_key, ControlRecordType, EndTxnMarker};
use crate::format::entry::{Entry, LegacyRecordInfo, RecordView};
use crate::format::index::{AbortedTxn, OffsetIndexEntry, TimeIndexEntry};
use crate::format::internal::{
    control_record_text, decode_record, loader_verdict, Decoded, Decoder, LoaderVerdict,
};
use crate::format::names::{classify, FileKind};
use crate::format::payload::{Payload, PayloadDecoder};
use crate::format::snapshot::ProducerSnapshotEntry;
use crate::ops::finding::Finding;
use crate::storage::files::{read_state, StateFile};
use crate::storage::log_reader::{torn_tail, LogReader, Step, DEFAULT_MAX_ENTRY_BYTES};
use crate::storage::read::{BatchTraits, Isolation, IsolationView, RecordFilter};
use crate::storage::seek::{first_offset, BatchHit, Fallback, Seeker, SEEK_READ_CHUNK_BYTES};

mod batches;
mod index;
mod schemas;
mod state;

pub use schemas::{load_avro_schemas, load_proto_schemas};

/// kafka-dump-log's default for `--max-bytes`; the "invalid bytes" line is printed only then.
pub const DEFAULT_MAX_BYTES: u64 = i32::MAX as u64;
/// kafka-dump-log's default for `--max-message-size`.
pub const DEFAULT_MAX_MESSAGE_SIZE: u64 = 5 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct DumpOptions {
    /// One event per record (`--deep-iteration`, implied by `--print-data-log`).
    pub deep: bool,
    pub print_data: bool,
    pub skip_record_metadata: bool,
    pub max_bytes: u64,
    pub index_sanity_check: bool,
    pub verify_index_only: bool,
    /// Cap on what one batch may decompress to.
    pub max_batch_bytes: usize,
    /// Internal-topic decoder for keys and values (implies `print_data`).
    pub decoder: Option<Decoder>,
    /// Pick the internal-topic decoder of each file from its partition directory's topic
    /// name (`__consumer_offsets`, …) when `decoder` is none (`--decode auto`).
    pub auto_decoder: bool,
    /// Decoders of ordinary keys and values (with `print_data`, when `decoder` is none).
    pub key_decoder: Option<PayloadDecoder>,
    pub value_decoder: Option<PayloadDecoder>,
    /// Check time-index timestamps against the largest record timestamp of the batch (a deep
    /// read, as kafka-dump-log does) rather than the batch header's max timestamp.
    pub exact_time_index: bool,
    /// With `deep`: judge every data record of an internal topic's partition as the broker's
    /// loader of that topic reads it ([`loader_verdict`]; `verify --deep`).
    pub loader_rules: bool,
    /// Only the batches (and records) of an offset range of a partition directory, from the
    /// batch a fetch of its start would begin with.
    pub range: Option<OffsetRange>,
    /// The offset of a segment file whose name carries none (`--base-offset`).
    pub base_offset: Option<i64>,
    /// Which records (and so which batches) are shown.
    pub filter: RecordFilter,
    /// With a filter: every batch line (for context), not only those with a record shown.
    pub all_batches: bool,
    /// A `.deleted`/`.cleaned`/`.swap` file named itself is read as the file it was (`dump`);
    /// otherwise, and in a directory, it is only listed.
    pub read_leftovers: bool,
}

/// `--offset`, `--from-offset` / `--to-offset`, `--from-time` / `--to-time`, `--count`,
/// `--isolation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OffsetRange {
    pub from: i64,
    /// Inclusive; None: to the log end.
    pub to: Option<i64>,
    /// Records with `deep`, batches without.
    pub count: Option<u64>,
    /// Start at the offset ListOffsets answers for this time (epoch ms), not before `from`.
    pub from_time: Option<i64>,
    /// End before the first record stamped after this time, as ListOffsets finds it (its
    /// answer for this time + 1), not after `to`.
    pub to_time: Option<i64>,
    /// Only what a `read_committed` consumer gets: below the last stable offset, aborted
    /// transactions and control batches left out.
    pub read_committed: bool,
}

impl Default for DumpOptions {
    fn default() -> Self {
        DumpOptions {
            deep: false,
            print_data: false,
            skip_record_metadata: false,
            max_bytes: DEFAULT_MAX_BYTES,
            index_sanity_check: false,
            verify_index_only: false,
            max_batch_bytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
            exact_time_index: true,
            decoder: None,
            auto_decoder: false,
            loader_rules: false,
            key_decoder: None,
            value_decoder: None,
            range: None,
            read_leftovers: false,
            base_offset: None,
            filter: RecordFilter::default(),
            all_batches: false,
        }
    }
}

/// One batch (v2) or shallow legacy entry, with every header field.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchInfo {
    pub position: u64,
    pub size_in_bytes: u64,
    pub magic: i8,
    pub crc: u32,
    pub is_valid: bool,
    /// For legacy compressed wrappers only known when the wrapper was unpacked (deep).
    pub base_offset: Option<i64>,
    pub last_offset: i64,
    pub count: Option<i32>,
    pub compression: &'static str,
    pub timestamp_type: &'static str,
    pub max_timestamp: i64,
    pub base_timestamp: Option<i64>,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub last_sequence: i32,
    pub partition_leader_epoch: i32,
    pub is_transactional: bool,
    pub is_control: bool,
    pub delete_horizon_ms: Option<i64>,
}

/// What a control record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlInfo {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip)]
    pub control_type: ControlRecordType,
    /// ABORT/COMMIT markers only.
    pub coordinator_epoch: Option<i32>,
}

/// One record with the batch context a renderer needs.
#[derive(Debug, Clone)]
pub struct RecordInfo<'a> {
    pub view: RecordView<'a>,
    pub batch_magic: i8,
    pub is_control_batch: bool,
    pub control: Option<ControlInfo>,
    /// What kafka-dump-log appends to a control record's line (leading space included), and
    /// the same value as JSON where it has one.
    pub control_text: Option<(String, Option<serde_json::Value>)>,
    /// The internal-topic decoder's reading of a data record (`--offsets-decoder`, ...).
    pub decoded: Option<Decoded>,
    /// The key and value decoders' readings of a data record's non-null key and value, for
    /// the sides that have a decoder; an error says why the bytes do not decode.
    pub key_payload: Option<Result<Payload, String>>,
    pub value_payload: Option<Result<Payload, String>>,
}

impl RecordInfo<'_> {
    pub fn legacy(&self) -> Option<LegacyRecordInfo> {
        self.view.legacy
    }
}

/// What kind of batch file is being dumped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogHeader {
    /// A `.log` segment and the base offset in its name.
    Segment { base_offset: i64 },
    /// A KRaft snapshot, `<end offset>-<epoch>.checkpoint`.
    KraftSnapshot { end_offset: i64, epoch: i32 },
    /// `bootstrap.checkpoint`.
    Bootstrap,
}

/// What the dump walk reports, in file order.
#[derive(Debug)]
pub enum Event<'a> {
    FileStart {
        path: &'a Path,
    },
    /// A file kafka-dump-log would ignore and kseg has nothing to say about: a marker file
    /// (`.lock`, `.kafka_cleanshutdown`), a leftover, or (`skipped`) one kseg cannot classify.
    Ignored {
        path: &'a Path,
        skipped: bool,
    },
    /// The line before a log's batches: its base offset, or the KRaft snapshot it is.
    LogHeader(LogHeader),
    /// The content of `quorum-state`.
    QuorumState(&'a serde_json::Value),
    /// A batch's header fields, and the entry itself for sinks that look further.
    Batch {
        info: &'a BatchInfo,
        entry: &'a Entry<'a>,
    },
    Record(&'a RecordInfo<'a>),
    /// After the records of a batch in a deep iteration: how many of them were shown (each an
    /// [`Event::Record`] for a sink that [wants them](Sink::wants_records)) and the largest of
    /// their timestamps (-1 with none).
    BatchRecords {
        shown: u64,
        max_timestamp: i64,
    },
    /// Something wrong, explained: damage in a log, a bad index entry, an undecodable file.
    Finding(&'a Finding),
    /// Bytes after the last complete batch, which Kafka's reader skips silently.
    TrailingBytes {
        path: &'a Path,
        bytes: u64,
        position: u64,
    },
    /// An index with no entries at all.
    IndexEmpty {
        path: &'a Path,
    },
    /// `--index-sanity-check`: Kafka's check passed, or its CorruptIndexException message.
    SanityCheck {
        path: &'a Path,
        result: std::result::Result<(), String>,
    },
    OffsetIndexEntry {
        slot: usize,
        entry: OffsetIndexEntry,
    },
    TimeIndexEntry {
        slot: usize,
        entry: TimeIndexEntry,
    },
    /// A preallocated, zero-filled index tail: `slots` unused slots from `first_slot` on.
    ZeroTail {
        path: &'a Path,
        first_slot: usize,
        slots: usize,
        bytes: u64,
    },
    TxnEntry(&'a AbortedTxn),
    SnapshotEntry(&'a ProducerSnapshotEntry),
    LeaderEpochEntry(&'a EpochEntry),
    OffsetCheckpointEntry(&'a OffsetCheckpointEntry),
    PartitionMetadata {
        version: i32,
        topic_id: String,
    },
    /// A `key=value` of `meta.properties`.
    Property {
        key: &'a str,
        value: &'a str,
    },
    FileEnd {
        path: &'a Path,
    },
}

pub trait Sink {
    /// Receives each event; an error (e.g. a closed pipe) stops the dump.
    fn event(&mut self, event: &Event<'_>) -> std::io::Result<()>;

    /// Whether the sink reads [`Event::Record`]s. The walk of one that does not (`verify`
    /// counts records, it shows none) checks every record as it would for a dump but builds no
    /// event for it: the batch's [`Event::BatchRecords`] says what a dump would have shown.
    fn wants_records(&self) -> bool {
        true
    }
}

/// Problems kafka-dump-log reports at the end of a run, kept per file in discovery order.
#[derive(Debug, Default, Clone)]
pub struct Summary {
    /// Index files that failed Kafka's sanity check (`--index-sanity-check`).
    pub sanity_failures: usize,
    /// Records whose offset does not increase (never explained by compaction or control
    /// batches, unlike mere gaps).
    pub offset_regressions: Vec<(PathBuf, Vec<(i64, i64)>)>,
    /// `.index` entries whose offset differs from the last offset of the first batch at their
    /// position: (entry offset, batch last offset), in discovery order.
    pub index_mismatches: Vec<(PathBuf, Vec<(i64, i64)>)>,
    /// `.timeindex` entries whose timestamp differs from the batch's max record timestamp.
    pub time_mismatches: Vec<(PathBuf, Vec<(i64, i64)>)>,
    /// `.timeindex` entries whose timestamp is not above the previous entry's.
    pub time_out_of_order: Vec<(PathBuf, Vec<(i64, i64)>)>,
    /// `.timeindex` offsets that are not the last offset of a batch: (offset, found or -1).
    pub time_offsets_not_found: Vec<(i64, i64)>,
}

/// How a dump went: what decides the exit status.
#[derive(Debug, Default, Clone)]
pub struct Outcome {
    pub files: usize,
    /// Damage found in files (bad CRCs, broken framing, undecodable records, bad indexes).
    pub damage: usize,
    /// Files that could not be read at all.
    pub unreadable: usize,
    /// Files kseg could not classify, so did not read.
    pub skipped: Vec<PathBuf>,
    /// With record filters: the files of directories left out because they hold no records
    /// (indexes, snapshots, checkpoints, unknown files); a file named itself is dumped.
    pub without_records: Vec<PathBuf>,
    /// The error findings, counted by check id (damage found otherwise is in `summary`):
    /// counts, as a hostile index can have an error per entry.
    pub errors: std::collections::BTreeMap<&'static str, usize>,
    pub summary: Summary,
    /// With a range: indexes the seek could not use (their segments were scanned instead).
    pub fallbacks: Vec<Fallback>,
    /// `.log` bytes the walk read (with a range, the seeks' too).
    pub log_bytes_read: u64,
    /// With a range: the index pages its seeks read.
    pub index_pages_read: u64,
    /// With a range: partitions whose log ends at or before its start, with the start asked
    /// for and the log end offset (`locate`'s question, answered alike).
    pub past_end: Vec<(PathBuf, i64, i64)>,
}

fn io_err(e: std::io::Error) -> Error {
    Error::Io {
        path: PathBuf::from("<output>"),
        source: e,
    }
}

struct Walker<'o, 's> {
    opts: &'o DumpOptions,
    sink: &'s mut dyn Sink,
    /// Whether the sink reads record events ([`Sink::wants_records`]).
    record_events: bool,
    outcome: Outcome,
    /// Walking a directory's files: a leftover among them is listed, not read (the broker
    /// only deletes or swaps it); one named itself is read as the file it was.
    in_dir: bool,
    /// The file being dumped.
    current: PathBuf,
    /// The internal-topic decoder of its records.
    decoder: Option<Decoder>,
    /// The internal topic of its partition directory, by its decoder.
    topic_decoder: Option<Decoder>,
    /// The batches a log's walk recorded for the checks of its indexes, and that log.
    walked: Option<(PathBuf, batches::WalkedBatches)>,
    /// With a range: batches or records still to show; the range is done at 0.
    left: u64,
    /// With a range: whether its first batch was shown.
    range_started: bool,
    /// With a range: its first and last offset (inclusive) in the partition being dumped.
    bounds: Option<(i64, Option<i64>)>,
    /// With a range: what a consumer of its isolation level keeps of the segment being read.
    isolation: IsolationView,
}

/// Dumps each path: a file, or a directory whose files are dumped in base-offset order. Every
/// path is examined first: one that holds nothing to dump fails before anything is dumped.
pub fn dump_paths(paths: &[PathBuf], opts: &DumpOptions, sink: &mut dyn Sink) -> Result<Outcome> {
    let mut w = Walker::new(opts, sink);
    if let Some(range) = opts.range {
        // Seeks work on partitions: every path must be a partition directory or a log dir.
        let mut seekers = Vec::new();
        for p in paths {
            seekers.extend(crate::ops::inspect::seek::partition_seekers(p)?);
        }
        for s in seekers {
            w.range(s, range)?;
        }
        return Ok(w.outcome);
    }
    for p in paths {
        crate::ops::input::examine(p, crate::error::Expected::AnyInput)?;
    }
    for p in paths {
        w.path(p)?;
    }
    Ok(w.outcome)
}

/// Whether `p`'s name is that of a file of record batches: a segment's `.log`, a KRaft snapshot
/// or the bootstrap checkpoint.
fn holds_records(p: &Path) -> bool {
    p.file_name().is_some_and(|n| {
        matches!(
            classify(&n.to_string_lossy()),
            FileKind::Log { .. } | FileKind::KraftSnapshot { .. } | FileKind::BootstrapCheckpoint
        )
    })
}

/// Walks a segment's `.log`, then its index files `indexes`, checking the `.index` and
/// `.timeindex` against the batches that walk saw instead of reading the log again, as `verify`
/// does with every segment. Events come file by file: the log's, then each index's.
pub fn dump_segment(
    log: &Path,
    indexes: &[PathBuf],
    opts: &DumpOptions,
    sink: &mut dyn Sink,
) -> Result<Outcome> {
    let mut tap = batches::Tap::new(sink, indexes, opts);
    let mut w = Walker::new(opts, &mut tap);
    w.path(log)?;
    let outcome = w.outcome;
    let walked = tap.finish(log, opts)?;
    let mut w = Walker::new(opts, sink);
    w.walked = Some((log.to_path_buf(), walked));
    w.outcome = outcome;
    for p in indexes {
        w.path(p)?;
    }
    Ok(w.outcome)
}

impl<'o, 's> Walker<'o, 's> {
    fn new(opts: &'o DumpOptions, sink: &'s mut dyn Sink) -> Self {
        Walker {
            opts,
            record_events: sink.wants_records(),
            sink,
            outcome: Outcome::default(),
            in_dir: false,
            current: PathBuf::new(),
            decoder: opts.decoder,
            topic_decoder: None,
            walked: None,
            left: u64::MAX,
            range_started: false,
            bounds: None,
            isolation: IsolationView::default(),
        }
    }

    /// The `.log` files of the partition directory of `seeker` from the batch a fetch of the
    /// range's start begins with (found through the indexes) until the range is done.
    fn range(&mut self, mut seeker: Seeker, range: OffsetRange) -> Result<()> {
        let dir = seeker.dir().to_path_buf();
        let found = self.range_start(&dir, &mut seeker, range);
        self.outcome.fallbacks.extend_from_slice(seeker.fallbacks());
        self.outcome.log_bytes_read += seeker.log_bytes_read();
        self.outcome.index_pages_read += seeker.index_pages_read();
        let Some((start, from, to, isolation)) = found? else {
            return Ok(());
        };
        self.bounds = Some((from, to));
        self.left = range.count.unwrap_or(u64::MAX);
        self.range_started = false;
        let logs = seeker.segments_from(start.segment_base);
        let bases: Vec<i64> = logs.iter().map(|(b, _)| *b).collect();
        self.isolation = IsolationView::new(&dir, isolation, &bases)?;
        for (i, (base, p)) in logs.iter().enumerate() {
            let base = *base;
            if self.left == 0 {
                break;
            }
            self.outcome.files += 1;
            self.set_current(p);
            self.emit(Event::FileStart { path: p })?;
            self.emit(Event::LogHeader(LogHeader::Segment { base_offset: base }))?;
            let first = base == start.segment_base;
            // Each segment is read as one fetch: from the range's start, then from its base.
            self.isolation
                .start_fetch(if first { from } else { base }, bases.get(i + 1).copied())?;
            let done = if first {
                self.log_from(p, base, start.position, seeker.take_reader(p))?
            } else {
                self.log(p, base, 0)?
            };
            self.emit(Event::FileEnd { path: p })?;
            if done {
                break;
            }
        }
        self.isolation = IsolationView::default();
        Ok(())
    }

    /// Where a range starts in `dir` (the fetch's first batch), its first and last offset
    /// there, from its offsets, times and isolation, and the isolation level (with the last
    /// stable offset); None when it holds nothing.
    #[allow(clippy::type_complexity)]
    fn range_start(
        &mut self,
        dir: &Path,
        seeker: &mut Seeker,
        range: OffsetRange,
    ) -> Result<Option<(BatchHit, i64, Option<i64>, Isolation)>> {
        let (mut from, mut to) = (range.from, range.to);
        let log_start = crate::ops::inspect::seek::log_start_offset(dir, seeker)?;
        if let Some(t) = range.from_time {
            match seeker.offset_for_time(t, log_start)? {
                Some(hit) => from = from.max(hit.offset),
                None => return Ok(None),
            }
        }
        if let Some(t) = range.to_time {
            if let Some(hit) = seeker.offset_for_time(t.saturating_add(1), log_start)? {
                to = Some(to.map_or(hit.offset - 1, |to| to.min(hit.offset - 1)));
            }
        }
        let mut isolation = Isolation::ReadUncommitted;
        if range.read_committed {
            let lso = crate::ops::inspect::seek::stable_offsets(dir, seeker)?.last_stable_offset;
            to = Some(to.map_or(lso - 1, |to| to.min(lso - 1)));
            isolation = Isolation::ReadCommitted {
                last_stable_offset: lso,
            };
        }
        if to.is_some_and(|to| to < from) {
            return Ok(None);
        }
        let start = seeker.batch_for_offset(from.max(seeker.first_segment_base()))?;
        if start.is_none() && range.from_time.is_none() {
            let end = seeker.log_end_offset()?;
            if from >= end {
                self.outcome.past_end.push((dir.to_path_buf(), from, end));
            }
        }
        Ok(start.map(|s| (s, from, to, isolation)))
    }

    /// Starts on the file `p`, choosing its records' decoder.
    fn set_current(&mut self, p: &Path) {
        self.current = p.to_path_buf();
        self.topic_decoder = (|| {
            let dir = std::path::absolute(p)
                .ok()?
                .parent()?
                .file_name()?
                .to_str()?
                .to_owned();
            let topic = crate::format::names::parse_partition_dir(&dir)?.topic;
            Decoder::for_topic(&topic)
        })();
        self.decoder = self
            .opts
            .decoder
            .or(self.topic_decoder.filter(|_| self.opts.auto_decoder));
    }

    /// Whether the record at `offset` is shown; counts it against `--count`.
    fn take_record(&mut self, offset: i64) -> bool {
        if !self.in_bounds(offset) {
            return false;
        }
        if self.bounds.is_none() {
            return true;
        }
        if self.left > 0 {
            self.left -= 1;
            return true;
        }
        false
    }

    /// With a range: whether the batch starting at `first` lies past its end (the fetch's
    /// first batch never does), or the count is used up.
    fn past_range(&self, first: i64) -> bool {
        match self.bounds {
            None => false,
            Some(_) if self.left == 0 => true,
            Some((_, to)) => self.range_started && to.is_some_and(|to| first > to),
        }
    }

    /// Whether a record at `offset` lies inside the range (always, without one).
    fn in_bounds(&self, offset: i64) -> bool {
        self.bounds
            .is_none_or(|(from, to)| offset >= from && to.is_none_or(|to| offset <= to))
    }

    fn emit(&mut self, e: Event<'_>) -> Result<()> {
        self.sink.event(&e).map_err(io_err)
    }

    fn path(&mut self, p: &Path) -> Result<()> {
        if p.is_dir() {
            // Record filters choose records: a directory's files without any have nothing to
            // show, and are left out (the caller says which).
            let records_only = !self.opts.filter.is_empty();
            let outer = std::mem::replace(&mut self.in_dir, true);
            for f in crate::storage::files::list_dir(p)? {
                if records_only && !f.is_dir() && !holds_records(&f) {
                    self.outcome.without_records.push(f);
                } else {
                    self.path(&f)?;
                }
            }
            self.in_dir = outer;
            return Ok(());
        }
        self.outcome.files += 1;
        self.set_current(p);
        self.emit(Event::FileStart { path: p })?;
        let r = self.file(p);
        match r {
            Ok(()) => {}
            Err(Error::Io { path, source }) if path == p => {
                self.outcome.unreadable += 1;
                return Err(Error::Io { path, source });
            }
            Err(e) => return Err(e),
        }
        self.emit(Event::FileEnd { path: p })
    }

    fn file(&mut self, p: &Path) -> Result<()> {
        let kind = crate::ops::input::kind_of(p, self.opts.base_offset);
        if let Some(m) = kind.renamed {
            self.finding(Finding::warning("segment.name", p, m))?;
        }
        self.file_of_kind(p, kind.kind)
    }

    /// Dumps `p` as a file of `kind`; a leftover as what it was, with what the broker does
    /// with it.
    fn file_of_kind(&mut self, p: &Path, kind: FileKind) -> Result<()> {
        match kind {
            FileKind::Leftover { suffix, inner } if self.opts.read_leftovers && !self.in_dir => {
                let note = crate::ops::input::leftover_note(suffix);
                self.finding(Finding::warning("leftover.file", p, note))?;
                self.file_of_kind(p, *inner)
            }
            FileKind::Log { base_offset } => {
                self.emit(Event::LogHeader(LogHeader::Segment { base_offset }))?;
                self.log(p, base_offset, 0).map(drop)
            }
            // KRaft snapshots hold batches from offset 0 on.
            FileKind::KraftSnapshot { end_offset, epoch } => {
                self.emit(Event::LogHeader(LogHeader::KraftSnapshot {
                    end_offset,
                    epoch,
                }))?;
                self.log(p, 0, 0).map(drop)
            }
            FileKind::BootstrapCheckpoint => {
                self.emit(Event::LogHeader(LogHeader::Bootstrap))?;
                self.log(p, 0, 0).map(drop)
            }
            FileKind::QuorumState => {
                let bytes = self.read_small(p, StateFile::Properties)?;
                match serde_json::from_slice::<serde_json::Value>(&bytes) {
                    Ok(v) => self.emit(Event::QuorumState(&v)),
                    Err(e) => {
                        let m = format!("not valid JSON: {e}");
                        self.finding(Finding::error("quorum-state.decode", p, m))
                    }
                }
            }
            FileKind::OffsetIndex { base_offset } => self.offset_index(p, base_offset),
            FileKind::TimeIndex { base_offset } => self.time_index(p, base_offset),
            FileKind::TxnIndex { .. } => self.txn_index(p),
            FileKind::ProducerSnapshot { .. } => self.producer_snapshot(p),
            FileKind::LeaderEpochCheckpoint => self.leader_epochs(p),
            FileKind::PartitionMetadata => self.partition_metadata(p),
            FileKind::RecoveryPointCheckpoint
            | FileKind::ReplicationOffsetCheckpoint
            | FileKind::LogStartOffsetCheckpoint
            | FileKind::CleanerOffsetCheckpoint => self.offset_checkpoint(p),
            FileKind::MetaProperties => self.meta_properties(p),
            FileKind::Unknown => {
                self.outcome.skipped.push(p.to_path_buf());
                self.emit(Event::Ignored {
                    path: p,
                    skipped: true,
                })
            }
            _ => self.emit(Event::Ignored {
                path: p,
                skipped: false,
            }),
        }
    }

    /// Reads a whole state file, bounded by its format ([`read_state`]).
    fn read_small(&self, p: &Path, kind: StateFile) -> Result<Vec<u8>> {
        read_state(p, kind)
    }

    /// Reports a finding; errors count as damage.
    fn finding(&mut self, f: Finding) -> Result<()> {
        if f.severity == crate::ops::Severity::Error {
            self.outcome.damage += 1;
            *self.outcome.errors.entry(f.check).or_default() += 1;
        }
        self.emit(Event::Finding(&f))
    }

    /// Walks a `.log` from its start. Returns whether it stopped at the end of a range.
    fn log(&mut self, p: &Path, base_offset: i64, start: u64) -> Result<bool> {
        self.log_from(p, base_offset, start, None)
    }

    /// Walks a `.log` from `start` (0, or where a range's seek found its first batch), with the
    /// seek's reader when it has one there (its buffer holds the batch, read once). Returns
    /// whether it stopped at the end of a range.
    fn log_from(
        &mut self,
        p: &Path,
        base_offset: i64,
        start: u64,
        seek: Option<LogReader>,
    ) -> Result<bool> {
        let mut reader = match seek {
            // The seek read the whole file's length; `--max-bytes` may ask for less.
            Some(r) if r.end() <= self.opts.max_bytes => r
                .with_max_entry_bytes(DEFAULT_MAX_ENTRY_BYTES)
                .with_growing_read_chunk(SEEK_READ_CHUNK_BYTES),
            _ if self.bounds.is_some() => LogReader::open(p, Some(self.opts.max_bytes))?
                .with_growing_read_chunk(SEEK_READ_CHUNK_BYTES),
            _ => LogReader::open(p, Some(self.opts.max_bytes))?,
        };
        // Bytes the seek read are counted already.
        let counted = reader.bytes_read();
        reader.seek(start);
        let mut done = false;
        let mut scratch = Vec::new();
        let mut last_offset: Option<i64> = None;
        let mut prev_batch_last: Option<i64> = None;
        let mut regressions = Vec::new();
        loop {
            // A range done by the last batch (offsets ascend) ends here, without reading the
            // next batch only to find it past the end.
            let to = self.bounds.and_then(|(_, to)| to);
            if self.bounds.is_some()
                && (self.left == 0 || prev_batch_last.zip(to).is_some_and(|(l, to)| l >= to))
            {
                done = true;
                break;
            }
            let step = reader.next_step()?;
            let (position, entry) = match step {
                Step::Entry { position, entry } => (position, entry),
                Step::End {
                    position,
                    trailing,
                    truncated_len,
                } => {
                    if trailing > 0 && self.opts.max_bytes == DEFAULT_MAX_BYTES {
                        self.emit(Event::TrailingBytes {
                            path: p,
                            bytes: trailing,
                            position,
                        })?;
                    }
                    // A torn write: an entry announced more bytes than the file holds, or too
                    // few bytes are left to hold an entry's header at all. Recovery cuts them.
                    if trailing > 0 && !reader.is_limited() {
                        let m = format!(
                            "Torn write at position {position}: {}; valid data ends at position {position}",
                            torn_tail(trailing, truncated_len)
                        );
                        self.finding(Finding::error("log.torn-tail", p, m).at(position))?;
                    }
                    break;
                }
                Step::SizeTooSmall { position, size } => {
                    let msg = format!(
                        "Found record size {size} smaller than minimum record overhead (14)"
                    );
                    self.damage(&mut reader, position, "log.size-too-small", msg)?;
                    continue;
                }
                Step::TooLarge { position, len } => {
                    let msg = format!("entry of {len} bytes is larger than the reader accepts");
                    self.damage(&mut reader, position, "log.entry-too-large", msg)?;
                    continue;
                }
                Step::BadEntry {
                    position, error, ..
                } => {
                    let msg = format!("{} (at byte {})", error.message, error.pos);
                    self.damage(&mut reader, position, "log.bad-entry", msg)?;
                    continue;
                }
            };
            let info = batch_info(position, &entry, None);
            if self.bounds.is_some() {
                let first = first_offset(&entry, &mut scratch).unwrap_or(info.last_offset);
                if self.past_range(first) {
                    done = true;
                    break;
                }
                self.range_started = true;
            }
            self.check_batch(p, &entry, &info, base_offset, prev_batch_last)?;
            prev_batch_last = Some(info.last_offset);
            let traits = BatchTraits::of(&entry);
            if !self.isolation.keeps(&entry, &mut scratch) {
                continue;
            }
            let filter = &self.opts.filter;
            let batch_matches = filter.matches_batch(&traits);
            if !self.opts.deep && !filter.needs_records() {
                if !batch_matches && !self.opts.all_batches {
                    continue;
                }
                if self.bounds.is_some() && batch_matches {
                    self.left -= 1;
                }
                self.emit(Event::Batch {
                    info: &info,
                    entry: &entry,
                })?;
                continue;
            }
            self.deep_batch(
                position,
                &entry,
                info,
                batch_matches,
                &mut scratch,
                &mut last_offset,
                &mut regressions,
            )?;
        }
        if !regressions.is_empty() {
            self.outcome.damage += 1;
            self.outcome
                .summary
                .offset_regressions
                .push((p.to_path_buf(), regressions));
        }
        self.outcome.log_bytes_read += reader.bytes_read() - counted;
        Ok(done)
    }

    /// One batch's records; with a filter, the batch line only when a record of it is shown
    /// (or `all_batches`), and only the records it keeps (none without `deep`: then a batch
    /// shown counts against `--count`).
    #[allow(clippy::too_many_arguments)]
    fn deep_batch(
        &mut self,
        position: u64,
        entry: &Entry<'_>,
        mut info: BatchInfo,
        batch_matches: bool,
        scratch: &mut Vec<u8>,
        last_offset: &mut Option<i64>,
        regressions: &mut Vec<(i64, i64)>,
    ) -> Result<()> {
        let records = match entry.records(scratch, self.opts.max_batch_bytes) {
            Ok(r) => r,
            Err(e) => {
                self.emit(Event::Batch { info: &info, entry })?;
                return self.records_error(position, info.last_offset, &e, "batch");
            }
        };
        let filter = &self.opts.filter;
        // Streamed when nothing needs the whole batch first: the batch line comes before its
        // records whatever they hold (no filter); a v2 batch's base offset is its header's, a
        // legacy wrapper's its first inner offset (read from a clone of the records).
        if filter.is_empty() && self.opts.deep {
            if let (Entry::Legacy(_), Some(Ok(first))) = (entry, records.clone().next()) {
                info.base_offset = Some(first.offset);
            }
            self.emit(Event::Batch { info: &info, entry })?;
            let mut batch = DeepBatch::new(position, entry, &info, self.decoded_records());
            for r in records {
                match r {
                    Ok(view) => {
                        let shown = batch_matches && self.in_bounds(view.offset);
                        self.deep_record(&mut batch, view, shown, last_offset, regressions)?;
                    }
                    Err(e) => {
                        self.batch_records(&batch)?;
                        return self.records_error(position, info.last_offset, &e, "records");
                    }
                }
            }
            return self.batch_records(&batch);
        }
        // Collect first: a legacy wrapper's base offset is its first inner offset, and with a
        // filter the batch line is shown only when a record of it is.
        let mut views = Vec::new();
        let mut error = None;
        for r in records {
            match r {
                Ok(v) => views.push(v),
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        if let (Entry::Legacy(_), Some(first)) = (entry, views.first()) {
            info.base_offset = Some(first.offset);
        }
        let shown: Vec<bool> = views
            .iter()
            .map(|v| batch_matches && filter.matches_record(v) && self.in_bounds(v.offset))
            .collect();
        let any_shown = shown.contains(&true);
        if filter.is_empty() || self.opts.all_batches || any_shown {
            self.emit(Event::Batch { info: &info, entry })?;
        }
        if !self.opts.deep {
            if any_shown && self.bounds.is_some() {
                self.left = self.left.saturating_sub(1);
            }
            return Ok(());
        }
        let mut batch = DeepBatch::new(position, entry, &info, self.decoded_records());
        for (view, shown) in views.into_iter().zip(shown) {
            self.deep_record(&mut batch, view, shown, last_offset, regressions)?;
        }
        self.batch_records(&batch)?;
        if let Some(e) = error {
            self.records_error(position, info.last_offset, &e, "records")?;
        }
        Ok(())
    }

    /// One record of a deep iteration: its checks, its decoding, and its event when `shown`.
    /// Inlined into the loop over a batch's records, for `verify`'s walk: a record nothing
    /// decodes and no event shows is checked and counted there, the rest is out of line.
    #[inline(always)]
    fn deep_record(
        &mut self,
        batch: &mut DeepBatch,
        view: RecordView<'_>,
        shown: bool,
        last_offset: &mut Option<i64>,
        regressions: &mut Vec<(i64, i64)>,
    ) -> Result<()> {
        self.check_record(batch, view.offset, view.timestamp, last_offset, regressions)?;
        if let Some(d) = self.topic_decoder.filter(|_| self.opts.loader_rules) {
            if !batch.is_control {
                self.judge_load(d, &view, batch.position)?;
            }
        }
        if batch.checks_only {
            self.count_shown(batch, &view, shown);
            return Ok(());
        }
        self.decode_record(batch, view, shown)
    }

    /// The finding for a record the internal topic's loader rejects or skips.
    #[inline(never)]
    fn judge_load(&mut self, d: Decoder, view: &RecordView<'_>, position: u64) -> Result<()> {
        let f = match loader_verdict(d, view.key, view.value) {
            None => return Ok(()),
            Some(LoaderVerdict::Rejects(m)) => {
                Finding::error("record.loader-rejects", self.current.clone(), m)
            }
            Some(LoaderVerdict::Skips(m)) => {
                Finding::warning("record.loader-skips", self.current.clone(), m)
            }
        };
        self.finding(f.at(position).offset(view.offset))
    }

    /// [`Walker::deep_record`] past the checks: a control record's reading or the decoders'
    /// (with `print_data`), then the record's event.
    #[inline(never)]
    fn decode_record(
        &mut self,
        batch: &mut DeepBatch,
        view: RecordView<'_>,
        shown: bool,
    ) -> Result<()> {
        let position = batch.position;
        let (mut control, mut control_text, mut decoded, mut fatal) = (None, None, None, None);
        let (mut key_payload, mut value_payload) = (None, None);
        if batch.is_control {
            match control_info(&view)
                .and_then(|c| Ok((c, control_record_text(view.key, view.value)?)))
            {
                Ok((c, text)) => (control, control_text) = (Some(c), Some(text)),
                Err(e) => fatal = Some(format!("bad control record: {e}")),
            }
        } else if let (Some(d), true) = (self.decoder, self.opts.print_data) {
            let r = decode_record(d, view.offset, view.key, view.value);
            match r.fatal.clone() {
                Some(f) => fatal = Some(format!("kafka-dump-log would stop here: {f}")),
                None => decoded = Some(r),
            }
        } else if self.opts.print_data {
            let read = |d: Option<&PayloadDecoder>, b: Option<&[u8]>| Some(d?.decode(b?));
            key_payload = read(self.opts.key_decoder.as_ref(), view.key);
            value_payload = read(self.opts.value_decoder.as_ref(), view.value);
        }
        if let Some(message) = fatal {
            // Where kafka-dump-log dies on a record, kseg says why and goes on.
            let f = Finding::error(
                "record.decode",
                self.current.clone(),
                format!("Error decoding the record at offset {} (batch at position {position}): {message}", view.offset),
            );
            return self.finding(f.at(position).offset(view.offset));
        }
        if !self.count_shown(batch, &view, shown) || !self.record_events {
            return Ok(());
        }
        let rec = RecordInfo {
            view,
            batch_magic: batch.magic,
            is_control_batch: batch.is_control,
            control,
            control_text,
            decoded,
            key_payload,
            value_payload,
        };
        self.emit(Event::Record(&rec))
    }

    /// The checks of every record of a deep iteration: its offset within its batch's and
    /// above the previous record's, its timestamp within the batch's max; offsets that do not
    /// increase across batches are kept for the summary. (Per record: the findings' text is
    /// built out of line.)
    #[inline(always)]
    fn check_record(
        &mut self,
        batch: &mut DeepBatch,
        offset: i64,
        timestamp: i64,
        last_offset: &mut Option<i64>,
        regressions: &mut Vec<(i64, i64)>,
    ) -> Result<()> {
        let out_of_range = offset < batch.first || offset > batch.last;
        if out_of_range || batch.prev.is_some_and(|p| offset <= p) {
            self.record_offset_finding(batch, offset)?;
        }
        batch.prev = Some(offset);
        if batch.max_timestamp.is_some_and(|max| timestamp > max) {
            self.record_timestamp_finding(batch, offset, timestamp)?;
        }
        if let Some(prev) = *last_offset {
            if offset <= prev {
                regressions.push((prev, offset));
            }
        }
        *last_offset = Some(offset);
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn record_offset_finding(&mut self, batch: &DeepBatch, offset: i64) -> Result<()> {
        let position = batch.position;
        let m = format!(
            "Record offset {offset} in the batch at position {position} is outside {}..={} or not above the previous record's",
            batch.first, batch.last
        );
        let f = Finding::error("record.offset", self.current.clone(), m);
        self.finding(f.at(position).offset(offset))
    }

    #[cold]
    #[inline(never)]
    fn record_timestamp_finding(
        &mut self,
        batch: &DeepBatch,
        offset: i64,
        timestamp: i64,
    ) -> Result<()> {
        let m = format!(
            "Record at offset {offset} has timestamp {timestamp}, above its batch's max timestamp {}",
            batch.max_timestamp.unwrap_or_default()
        );
        let f = Finding::error("record.timestamp", self.current.clone(), m);
        self.finding(f.at(batch.position).offset(offset))
    }

    /// Counts the record `view` as shown when it is (`shown`, within a range's count).
    #[inline(always)]
    fn count_shown(&mut self, batch: &mut DeepBatch, view: &RecordView<'_>, shown: bool) -> bool {
        if !shown || !self.take_record(view.offset) {
            return false;
        }
        batch.shown += 1;
        batch.max_shown_timestamp = batch.max_shown_timestamp.max(view.timestamp);
        true
    }

    /// Whether a deep iteration does more with a record than check and count it: decode it
    /// (`print_data`) or show it to a sink that wants record events.
    fn decoded_records(&self) -> bool {
        self.record_events || self.opts.print_data
    }

    /// What the deep iteration of `batch` showed.
    fn batch_records(&mut self, batch: &DeepBatch) -> Result<()> {
        self.emit(Event::BatchRecords {
            shown: batch.shown,
            max_timestamp: batch.max_shown_timestamp,
        })
    }

    /// Header-level checks of one batch: CRC, magic, count, offsets against the previous
    /// batch and the segment's base offset.
    fn check_batch(
        &mut self,
        p: &Path,
        entry: &Entry<'_>,
        info: &BatchInfo,
        segment_base: i64,
        prev_last: Option<i64>,
    ) -> Result<()> {
        let at = info.position;
        let first = info.base_offset.unwrap_or(info.last_offset);
        let problem = |check, m: String| Finding::error(check, p, m).at(at).offset(first);
        if !info.is_valid {
            let m = format!(
                "Batch at position {at}: stored CRC {} does not match the computed {}",
                info.crc,
                entry.compute_crc()
            );
            self.finding(problem("batch.crc", m))?;
        }
        if info.magic > 2 {
            let m = format!("Batch at position {at}: unknown magic {}", info.magic);
            self.finding(problem("batch.magic", m))?;
        }
        if let (Entry::V2(b), Some(count)) = (entry, info.count) {
            if count < 0 || i64::from(count) > i64::from(b.header.last_offset_delta) + 1 {
                let m = format!(
                    "Batch at position {at}: {count} records cannot fit offsets {}..{}",
                    b.header.base_offset, info.last_offset
                );
                self.finding(problem("batch.count", m))?;
            }
        }
        if entry.compression().is_err() {
            let m = format!("Batch at position {at}: unknown compression codec id");
            self.finding(problem("batch.codec", m))?;
        }
        match prev_last {
            Some(prev) if first <= prev => {
                let m =
                    format!("Batch at position {at}: offsets go backwards, {first} follows {prev}");
                self.finding(problem("log.offset-order", m))?;
            }
            None if first < segment_base => {
                let m = format!(
                    "Batch at position {at}: offset {first} is below the segment's base offset {segment_base}"
                );
                self.finding(problem("segment.base-offset", m))?;
            }
            _ => {}
        }
        Ok(())
    }

    /// A batch whose records do not decode; `within` says what `e.pos` counts in. One that
    /// decompresses past the limit is not damaged, only unchecked beyond it: the broker itself
    /// never decompresses on load, and a consumer with the memory reads it.
    fn records_error(
        &mut self,
        position: u64,
        offset: i64,
        e: &crate::format::DecodeError,
        within: &str,
    ) -> Result<()> {
        let file = self.current.clone();
        let f = if e.kind == crate::format::ErrorKind::TooLarge {
            Finding::warning(
                "batch.unchecked",
                file,
                format!(
                    "The records of the batch at position {position} were not checked: it decompresses to more than {} bytes (--max-batch-bytes raises the limit)",
                    self.opts.max_batch_bytes
                ),
            )
        } else {
            Finding::error(
                "batch.records",
                file,
                format!(
                    "Error reading the records of the batch at position {position}: {} (at byte {} of the {within})",
                    e.message, e.pos
                ),
            )
        };
        self.finding(f.at(position).offset(offset))
    }

    /// Reports damage at `position` and moves the reader to the next valid batch.
    fn damage(
        &mut self,
        reader: &mut LogReader,
        position: u64,
        check: &'static str,
        what: String,
    ) -> Result<()> {
        let resumed_at = reader.resync(position + 1)?;
        let skipped = resumed_at.unwrap_or(reader.end()) - position;
        let message = match resumed_at {
            Some(at) => format!(
                "Corrupt data at position {position}: {what}; skipped {skipped} bytes to the next valid batch at position {at}"
            ),
            None => format!(
                "Corrupt data at position {position}: {what}; no valid batch in the remaining {skipped} bytes"
            ),
        };
        self.finding(Finding::error(check, reader.path(), message).at(position))
    }
}

/// What the records of one batch are checked against in a deep iteration.
struct DeepBatch {
    position: u64,
    /// The batch's first and last offsets (`first` is `i64::MIN` when unknown).
    first: i64,
    last: i64,
    /// The previous record's offset in this batch.
    prev: Option<i64>,
    /// Record timestamps can be checked against the header only where the header's max is
    /// the max of the record timestamps as written (CreateTime v2).
    max_timestamp: Option<i64>,
    magic: i8,
    is_control: bool,
    /// Whether its records are only checked and counted: nothing decodes them (no control
    /// batch, no `print_data`) and the sink wants no record events. (Known per batch, not
    /// looked up per record.)
    checks_only: bool,
    /// The records shown so far, and the largest of their timestamps (-1 with none).
    shown: u64,
    max_shown_timestamp: i64,
}

impl DeepBatch {
    fn new(position: u64, entry: &Entry<'_>, info: &BatchInfo, decoded: bool) -> Self {
        DeepBatch {
            position,
            first: info.base_offset.unwrap_or(i64::MIN),
            last: info.last_offset,
            prev: None,
            max_timestamp: match entry {
                Entry::V2(b) if info.timestamp_type == "CreateTime" => Some(b.header.max_timestamp),
                _ => None,
            },
            magic: info.magic,
            is_control: info.is_control,
            checks_only: !decoded && !info.is_control,
            shown: 0,
            max_shown_timestamp: -1,
        }
    }
}

fn control_info(view: &RecordView<'_>) -> std::result::Result<ControlInfo, String> {
    let t = decode_control_key(view.key).map_err(|e| e.message)?;
    let coordinator_epoch = match t {
        ControlRecordType::Abort | ControlRecordType::Commit => Some(
            EndTxnMarker::decode(view.value)
                .map_err(|e| e.message)?
                .coordinator_epoch,
        ),
        _ => None,
    };
    Ok(ControlInfo {
        kind: t.name(),
        control_type: t,
        coordinator_epoch,
    })
}

/// Every header field of an entry, as kafka-dump-log and Kafka's readers see them.
pub fn batch_info(position: u64, entry: &Entry<'_>, base_offset: Option<i64>) -> BatchInfo {
    let compression = entry.compression().map(|c| c.name()).unwrap_or("unknown");
    match entry {
        Entry::V2(b) => {
            let h = &b.header;
            BatchInfo {
                position,
                size_in_bytes: entry.size_in_bytes() as u64,
                magic: h.magic,
                crc: h.crc,
                is_valid: b.crc_is_valid(),
                base_offset: Some(h.base_offset),
                last_offset: h.last_offset(),
                count: Some(h.record_count),
                compression,
                timestamp_type: h.timestamp_type().name(),
                max_timestamp: h.max_timestamp,
                base_timestamp: Some(h.base_timestamp),
                producer_id: h.producer_id,
                producer_epoch: h.producer_epoch,
                base_sequence: h.base_sequence,
                last_sequence: h.last_sequence(),
                partition_leader_epoch: h.partition_leader_epoch,
                is_transactional: h.is_transactional(),
                is_control: h.is_control(),
                delete_horizon_ms: h.delete_horizon_ms(),
            }
        }
        Entry::Legacy(m) => BatchInfo {
            position,
            size_in_bytes: entry.size_in_bytes() as u64,
            magic: m.magic,
            crc: m.crc,
            is_valid: m.crc_is_valid(),
            base_offset: base_offset.or((!m.is_compressed()).then_some(m.offset)),
            last_offset: m.offset,
            count: None,
            compression,
            timestamp_type: m.timestamp_type().name(),
            max_timestamp: m.timestamp,
            base_timestamp: None,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            last_sequence: -1,
            partition_leader_epoch: -1,
            is_transactional: false,
            is_control: false,
            delete_horizon_ms: None,
        },
    }
}
