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
use crate::format::names::{classify, FileKind};
use crate::format::snapshot::ProducerSnapshotEntry;
use crate::storage::log_reader::{LogReader, Step};

mod index;
mod state;

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
    pub max_message_size: u64,
    pub index_sanity_check: bool,
    pub verify_index_only: bool,
    /// Cap on what one batch may decompress to.
    pub max_decompressed_bytes: usize,
}

impl Default for DumpOptions {
    fn default() -> Self {
        DumpOptions {
            deep: false,
            print_data: false,
            skip_record_metadata: false,
            max_bytes: DEFAULT_MAX_BYTES,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            index_sanity_check: false,
            verify_index_only: false,
            max_decompressed_bytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
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
}

impl RecordInfo<'_> {
    pub fn legacy(&self) -> Option<LegacyRecordInfo> {
        self.view.legacy
    }
}

/// Where the bytes of a log stop making sense, and where the dump picked up again.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Damage {
    pub position: u64,
    /// A stable id for the kind of damage.
    pub check: &'static str,
    pub message: String,
    /// The next valid batch found after the damage, if any.
    pub resumed_at: Option<u64>,
    pub skipped_bytes: u64,
}

/// What the dump walk reports, in file order.
#[derive(Debug)]
pub enum Event<'a> {
    FileStart {
        path: &'a Path,
    },
    /// A file kafka-dump-log would ignore and kseg has nothing to say about.
    Ignored {
        path: &'a Path,
    },
    LogStart {
        base_offset: i64,
    },
    Batch(&'a BatchInfo),
    Record(&'a RecordInfo<'a>),
    /// The records of a batch could not be decoded past some point.
    RecordsError {
        batch_position: u64,
        message: String,
    },
    Damage(&'a Damage),
    /// Bytes after the last complete batch, which Kafka's reader skips silently.
    TrailingBytes {
        path: &'a Path,
        bytes: u64,
        position: u64,
        /// The length the entry at `position` announces, when it runs past the end of the
        /// file (a torn write after a crash).
        torn_entry_len: Option<u64>,
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
    /// A file whose content does not decode (checkpoint, snapshot, index, ...).
    FileError {
        path: &'a Path,
        message: String,
    },
    FileEnd {
        path: &'a Path,
    },
}

pub trait Sink {
    /// Receives each event; an error (e.g. a closed pipe) stops the dump.
    fn event(&mut self, event: &Event<'_>) -> std::io::Result<()>;
}

/// Problems kafka-dump-log reports at the end of a run, kept per file in discovery order.
#[derive(Debug, Default, Clone)]
pub struct Summary {
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
    pub summary: Summary,
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
    outcome: Outcome,
}

/// Dumps each path: a file, or a directory whose files are dumped in base-offset order.
pub fn dump_paths(paths: &[PathBuf], opts: &DumpOptions, sink: &mut dyn Sink) -> Result<Outcome> {
    let mut w = Walker {
        opts,
        sink,
        outcome: Outcome::default(),
    };
    for p in paths {
        w.path(p)?;
    }
    Ok(w.outcome)
}

impl Walker<'_, '_> {
    fn emit(&mut self, e: Event<'_>) -> Result<()> {
        self.sink.event(&e).map_err(io_err)
    }

    fn path(&mut self, p: &Path) -> Result<()> {
        if p.is_dir() {
            for f in crate::storage::files::list_dir(p)? {
                self.path(&f)?;
            }
            return Ok(());
        }
        self.outcome.files += 1;
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
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match classify(&name) {
            FileKind::Log { base_offset } => {
                self.emit(Event::LogStart { base_offset })?;
                self.log(p)
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
            _ => self.emit(Event::Ignored { path: p }),
        }
    }

    /// Reads a whole small file (index, snapshot, checkpoint); they are bounded in size.
    fn read_small(&self, p: &Path) -> Result<Vec<u8>> {
        std::fs::read(p).map_err(|e| Error::io(p, e))
    }

    /// Reports a file whose content does not decode and counts it as damage.
    fn file_error(&mut self, p: &Path, message: String) -> Result<()> {
        self.outcome.damage += 1;
        self.emit(Event::FileError { path: p, message })
    }

    fn log(&mut self, p: &Path) -> Result<()> {
        let mut reader = LogReader::open(p, Some(self.opts.max_bytes))?;
        let mut scratch = Vec::new();
        let mut last_offset: Option<i64> = None;
        let mut regressions = Vec::new();
        loop {
            let step = reader.next_step()?;
            let (position, entry) = match step {
                Step::Entry { position, entry } => (position, entry),
                Step::End {
                    position,
                    trailing,
                    truncated_len,
                } => {
                    // A torn write: an entry announced more bytes than the file holds.
                    let torn = truncated_len.filter(|_| !reader.is_limited());
                    if torn.is_some() {
                        self.outcome.damage += 1;
                    }
                    if trailing > 0 && self.opts.max_bytes == DEFAULT_MAX_BYTES {
                        self.emit(Event::TrailingBytes {
                            path: p,
                            bytes: trailing,
                            position,
                            torn_entry_len: torn,
                        })?;
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
            if !info.is_valid {
                self.outcome.damage += 1;
            }
            if !self.opts.deep {
                self.emit(Event::Batch(&info))?;
                continue;
            }
            self.deep_batch(
                position,
                &entry,
                info,
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
        Ok(())
    }

    fn deep_batch(
        &mut self,
        position: u64,
        entry: &Entry<'_>,
        mut info: BatchInfo,
        scratch: &mut Vec<u8>,
        last_offset: &mut Option<i64>,
        regressions: &mut Vec<(i64, i64)>,
    ) -> Result<()> {
        let records = match entry.records(scratch, self.opts.max_decompressed_bytes) {
            Ok(r) => r,
            Err(e) => {
                self.emit(Event::Batch(&info))?;
                self.outcome.damage += 1;
                return self.emit(Event::RecordsError {
                    batch_position: position,
                    message: format!("{} (at byte {} of the batch)", e.message, e.pos),
                });
            }
        };
        // Collect first: a legacy wrapper's base offset is its first inner offset.
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
        self.emit(Event::Batch(&info))?;
        for view in views {
            if let Some(prev) = *last_offset {
                if view.offset <= prev {
                    regressions.push((prev, view.offset));
                }
            }
            *last_offset = Some(view.offset);
            let control = if info.is_control {
                Some(control_info(&view))
            } else {
                None
            };
            let (control, control_err) = match control {
                Some(Ok(c)) => (Some(c), None),
                Some(Err(e)) => (None, Some(e)),
                None => (None, None),
            };
            let rec = RecordInfo {
                view,
                batch_magic: info.magic,
                is_control_batch: info.is_control,
                control,
            };
            self.emit(Event::Record(&rec))?;
            if let Some(message) = control_err {
                self.outcome.damage += 1;
                self.emit(Event::RecordsError {
                    batch_position: position,
                    message,
                })?;
            }
        }
        if let Some(e) = error {
            self.outcome.damage += 1;
            self.emit(Event::RecordsError {
                batch_position: position,
                message: format!("{} (at byte {} of the records)", e.message, e.pos),
            })?;
        }
        Ok(())
    }

    /// Reports damage at `position` and moves the reader to the next valid batch.
    fn damage(
        &mut self,
        reader: &mut LogReader,
        position: u64,
        check: &'static str,
        message: String,
    ) -> Result<()> {
        self.outcome.damage += 1;
        let resumed_at = reader.resync(position + 1)?;
        let skipped_bytes = resumed_at.unwrap_or(reader.end()) - position;
        let d = Damage {
            position,
            check,
            message,
            resumed_at,
            skipped_bytes,
        };
        self.emit(Event::Damage(&d))
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
