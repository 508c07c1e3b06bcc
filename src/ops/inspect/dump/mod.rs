//! `dump`: walks the files of partition directories through the engine's readers and reports
//! what it sees as [`Event`]s. Renderers (kafka-dump-log text, JSON Lines) live in the CLI;
//! this module decides *what* is reported, never how it is printed.
//!
//! Unlike kafka-dump-log, damage never stops the walk: it is reported with its byte position,
//! the reader resynchronises on the next valid batch, and the dump carries on.

use std::collections::BTreeMap;
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
use crate::storage::loader::{plan_leftovers, DeletedBecause};
use crate::storage::log_reader::{torn_tail, LogReader, Step, DEFAULT_MAX_ENTRY_BYTES};
use crate::storage::read::{BatchTraits, Isolation, IsolationView, RecordFilter};
use crate::storage::seek::{first_offset, BatchHit, Fallback, Seeker, SEEK_READ_CHUNK_BYTES};

mod batches;
mod index;
mod log;
mod range;
mod records;
mod schemas;
mod state;

pub use log::batch_info;
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
    /// In a directory, only the files that hold records (`export`): indexes, snapshots and
    /// checkpoints are left out as with a record filter.
    pub records_only: bool,
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
            records_only: false,
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
    /// Leftovers known by name and not read (in a directory, those the broker's loader
    /// deletes). Markers (`.lock`) are read: there is nothing in them.
    pub leftovers_unread: usize,
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
    /// Walking a directory's files: what the broker's start-up does with its leftovers
    /// ([`plan_leftovers`]). A leftover it deletes, and a file a `.log.swap` replaces, is
    /// listed, not read; a `.swap` it renames is read as the file it becomes. Named itself, a
    /// leftover is read as the file it was.
    dir_fates: Option<BTreeMap<PathBuf, Option<DeletedBecause>>>,
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

/// [`dump_paths`] of entries a directory listing gave (the caller examined what the user
/// named): each walked as a directory's entry is, one that is no file (a FIFO, a socket) and
/// has no Kafka file's name listed as skipped, not refused.
pub fn dump_listed(paths: &[PathBuf], opts: &DumpOptions, sink: &mut dyn Sink) -> Result<Outcome> {
    let mut w = Walker::new(opts, sink);
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
            dir_fates: None,
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

    fn emit(&mut self, e: Event<'_>) -> Result<()> {
        self.sink.event(&e).map_err(io_err)
    }

    fn path(&mut self, p: &Path) -> Result<()> {
        if crate::storage::files::is_dir(p) {
            // Record filters choose records: a directory's files without any have nothing to
            // show, and are left out (the caller says which).
            let records_only = self.opts.records_only || !self.opts.filter.is_empty();
            let listed = crate::storage::files::list_dir(p)?;
            // Only a walk that reads leftovers asks what becomes of them (the plan reads each
            // `.log.swap` to its end).
            let fates = if self.opts.read_leftovers {
                let files: Vec<PathBuf> = listed.iter().filter(|f| !f.is_dir()).cloned().collect();
                plan_leftovers(&files)?
                    .fates()
                    .into_iter()
                    .map(|(f, fate)| (f.to_path_buf(), fate))
                    .collect()
            } else {
                BTreeMap::new()
            };
            let outer = self.dir_fates.replace(fates);
            for f in listed {
                if records_only && !f.is_dir() && !holds_records(&f) {
                    self.outcome.without_records.push(f);
                } else {
                    self.path(&f)?;
                }
            }
            self.dir_fates = outer;
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
        let replaced = Some(&Some(DeletedBecause::ReplacedBySwap));
        if self.opts.read_leftovers && self.dir_fates.as_ref().map(|f| f.get(p)) == Some(replaced) {
            let note = crate::ops::input::REPLACED_NOTE;
            self.finding(Finding::warning("leftover.file", p, note))?;
            self.outcome.leftovers_unread += 1;
            return self.emit(Event::Ignored {
                path: p,
                skipped: false,
            });
        }
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
            // In a directory, only what the loader renames into place; it deletes the others.
            FileKind::Leftover { suffix, inner }
                if self.opts.read_leftovers
                    && self
                        .dir_fates
                        .as_ref()
                        .is_none_or(|f| f.get(p) == Some(&None)) =>
            {
                let note = crate::ops::input::leftover_note(suffix, true);
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
            other => {
                if matches!(other, FileKind::Leftover { .. }) {
                    self.outcome.leftovers_unread += 1;
                }
                self.emit(Event::Ignored {
                    path: p,
                    skipped: false,
                })
            }
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
}
