//! `kseg stats`: what segments, partitions and log dirs hold, counted in one streaming pass
//! (`pg_waldump --stats`, `sst_dump --show_properties` are the models): batches, records and
//! bytes by codec, message format, timestamp type and batch kind; log2 histograms of sizes;
//! timestamps; producers; and, with `deep`, keys (distinct keys estimated with a
//! [`hll::HyperLogLog`]).
//!
//! Segments are read in parallel, each with the engine's [`LogReader`]; each gives a partial
//! result per group, and partial results are merged in log order (rayon's `reduce` keeps the
//! order), so sequence gaps and timestamps going back are seen across segment boundaries too.
//! Memory is a constant per group (histograms, a 16 KiB key counter) plus one entry per
//! producer and per segment, and the largest batch. Only batches whose CRC holds are counted;
//! damaged bytes are skipped as `dump` skips them and counted.

pub mod histogram;
pub mod hll;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use crate::error::{Error, Expected, Result};
use crate::format::batch::{TimestampType, LOG_OVERHEAD_BYTES, RECORD_BATCH_OVERHEAD_BYTES};
use crate::format::codec::{Compression, DEFAULT_MAX_DECOMPRESSED_BYTES};
use crate::format::entry::Entry;
use crate::format::names::{classify, parse_partition_dir, FileKind};
use crate::format::snapshot::increment_sequence;
use crate::format::ErrorKind;
use crate::ops::input::{examine, Input};
use crate::ops::inspect::seek::partition_dirs;
use crate::storage::log_reader::{LogReader, Step};
use crate::storage::producer_state::IdMap;
use histogram::{Histogram, Log2Histogram};
use hll::HyperLogLog;

/// What the counts are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupBy {
    Segment,
    #[default]
    Partition,
    Topic,
    Producer,
}

#[derive(Debug, Clone, Copy)]
pub struct StatsOptions {
    /// Decode every record: record, key, value and header sizes, uncompressed bytes, keys.
    pub deep: bool,
    pub by: GroupBy,
    /// Timestamps after this (epoch ms) are in the future.
    pub now_ms: i64,
    /// How many producers the top lists name.
    pub top: usize,
    /// Largest decompressed batch decoded (`--deep`); larger ones are counted as unchecked.
    pub max_batch_bytes: usize,
}

impl Default for StatsOptions {
    fn default() -> Self {
        StatsOptions {
            deep: false,
            by: GroupBy::Partition,
            now_ms: i64::MAX,
            top: 10,
            max_batch_bytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
        }
    }
}

/// One segment to read, and the partition it belongs to.
#[derive(Debug, Clone)]
struct SegmentRef {
    /// Index into [`Report::partitions`]'s order.
    partition: usize,
    log: PathBuf,
    base_offset: i64,
}

/// A partition directory (or the directory of a `.log` named alone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionRef {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub dir: PathBuf,
    pub topic: Option<String>,
    pub partition: Option<i32>,
}

/// What a group's counts are of. Fields that do not apply are null.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupName {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub dir: Option<PathBuf>,
    pub topic: Option<String>,
    pub partition: Option<i32>,
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub file: Option<PathBuf>,
    pub base_offset: Option<i64>,
    pub producer_id: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum GroupKey {
    Segment(usize, i64),
    Partition(usize),
    Topic(String),
    /// -1: batches without a producer id (and v0/v1 entries).
    Producer(i64),
}

/// Per codec.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodecStats {
    pub codec: String,
    #[serde(rename = "batchCount")]
    pub batches: u64,
    #[serde(rename = "recordCount")]
    pub records: u64,
    /// Bytes on disk, whole batches (headers included).
    pub bytes: u64,
    /// (`deep`) the batches' bytes with their records uncompressed: batch header plus the
    /// records' own sizes for v2, the inner messages with their log overhead for a v0/v1
    /// wrapper.
    pub uncompressed_bytes: Option<u64>,
    /// `uncompressedBytes / bytes`.
    pub ratio: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Histograms {
    /// Bytes per batch on disk.
    #[serde(rename = "batchSizeHistogram")]
    pub batch_size: Option<Histogram>,
    /// Records per batch (v2 header counts; v0/v1 wrappers with `deep`).
    #[serde(rename = "recordsPerBatchHistogram")]
    pub records_per_batch: Option<Histogram>,
    /// Milliseconds between a v2 batch's first and largest timestamp.
    #[serde(rename = "batchTimeSpanHistogram")]
    pub batch_time_span_ms: Option<Histogram>,
    /// (`deep`) bytes per record.
    #[serde(rename = "recordSizeHistogram")]
    pub record_size: Option<Histogram>,
    /// (`deep`) bytes per non-null key.
    #[serde(rename = "keySizeHistogram")]
    pub key_size: Option<Histogram>,
    /// (`deep`) bytes per non-null value.
    #[serde(rename = "valueSizeHistogram")]
    pub value_size: Option<Histogram>,
    /// (`deep`) headers per v2 record.
    #[serde(rename = "headersPerRecordHistogram")]
    pub headers_per_record: Option<Histogram>,
}

/// The first and largest timestamp of one segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SegmentTimes {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub file: PathBuf,
    pub base_offset: i64,
    pub min_timestamp: Option<i64>,
    pub max_timestamp: Option<i64>,
}

/// Timestamps. Without `deep` they are the batches' (a v2 batch's base and max timestamp, a
/// v0/v1 entry's timestamp); with it, the records'. `NoTimestampType` (-1) is left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeStats {
    /// `"records"` with `deep`, else `"batches"`: what the counts below count.
    pub unit: &'static str,
    pub min_timestamp: Option<i64>,
    pub max_timestamp: Option<i64>,
    /// Timestamps below the one before them (in log order, across segments).
    pub out_of_order: u64,
    /// The largest such step back, in ms.
    pub worst_step_back_ms: i64,
    /// Timestamps after `--now`.
    pub future: u64,
    pub segments: Vec<SegmentTimes>,
}

/// One producer's share.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProducerSummary {
    pub producer_id: i64,
    #[serde(rename = "batchCount")]
    pub batches: u64,
    #[serde(rename = "recordCount")]
    pub records: u64,
    pub bytes: u64,
    /// The producer epochs its batches carry.
    pub epochs: Vec<i16>,
    /// Batches of one epoch whose base sequence does not follow the previous batch's last.
    #[serde(rename = "sequenceGapCount")]
    pub sequence_gaps: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProducerStats {
    /// Producer ids seen (batches with a producer id).
    pub count: u64,
    #[serde(rename = "epochCount")]
    pub epochs_seen: u64,
    #[serde(rename = "sequenceGapCount")]
    pub sequence_gaps: u64,
    #[serde(rename = "topProducersByBytes")]
    pub top_by_bytes: Vec<ProducerSummary>,
    #[serde(rename = "topProducersByBatches")]
    pub top_by_batches: Vec<ProducerSummary>,
}

/// (`deep`) Keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyStats {
    /// Records with a key.
    #[serde(rename = "keyedRecordCount")]
    pub keyed_records: u64,
    #[serde(rename = "nullKeyCount")]
    pub null_keys: u64,
    /// Records with a null value.
    #[serde(rename = "tombstoneCount")]
    pub tombstones: u64,
    /// Distinct keys, estimated (HyperLogLog, 2^14 registers).
    #[serde(rename = "distinctKeyEstimate")]
    pub distinct_keys_estimate: u64,
    /// The estimate's relative standard error (0.0081); three of them bound it in 99.7 %.
    #[serde(rename = "distinctKeyRelativeError")]
    pub distinct_keys_relative_error: f64,
    /// Keyed records that a later record of the same key supersedes (what compaction would
    /// reclaim at most), estimated as keyed records minus distinct keys.
    pub superseded_estimate: u64,
    /// `supersededEstimate / keyedRecords`.
    pub superseded_share: Option<f64>,
}

/// The counts of one group (or of everything).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    #[serde(rename = "segmentCount")]
    pub segments: u64,
    #[serde(rename = "batchCount")]
    pub batches: u64,
    /// v2 header counts and v0/v1 messages; v0/v1 compressed wrappers count only with `deep`.
    #[serde(rename = "recordCount")]
    pub records: u64,
    pub bytes: u64,
    /// v0/v1 compressed wrappers whose records were not counted (without `deep`).
    #[serde(rename = "unopenedWrapperCount")]
    pub unopened_wrappers: u64,
    /// Entries skipped: CRC mismatch, or records that do not decode (`deep`).
    #[serde(rename = "invalidBatchCount")]
    pub invalid_batches: u64,
    /// Bytes skipped where framing broke, and torn tails.
    pub damaged_bytes: u64,
    pub codecs: Vec<CodecStats>,
    /// Batches per magic: `v0`, `v1`, `v2`.
    pub formats: BTreeMap<String, u64>,
    /// Batches per timestamp type.
    pub timestamp_types: BTreeMap<String, u64>,
    #[serde(rename = "controlBatchCount")]
    pub control_batches: u64,
    #[serde(rename = "transactionalBatchCount")]
    pub transactional_batches: u64,
    /// Batches with a producer id (transactional ones included).
    #[serde(rename = "idempotentBatchCount")]
    pub idempotent_batches: u64,
    pub histograms: Histograms,
    pub time: TimeStats,
    #[serde(rename = "producerStats")]
    pub producers: ProducerStats,
    #[serde(rename = "keyStats")]
    pub keys: Option<KeyStats>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupStats {
    #[serde(rename = "groupKey")]
    pub group: GroupName,
    #[serde(flatten)]
    pub stats: Stats,
}

/// What `stats` found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub deep: bool,
    pub partitions: Vec<PartitionRef>,
    pub groups: Vec<GroupStats>,
    pub total: Stats,
    /// Files named that are not segments (`.log`), so were not read.
    #[serde(
        rename = "skippedFiles",
        serialize_with = "crate::format::os_path::serialize"
    )]
    pub skipped: Vec<PathBuf>,
}

#[derive(Debug, Clone, Default)]
struct CodecAcc {
    batches: u64,
    records: u64,
    bytes: u64,
    uncompressed: u64,
}

#[derive(Debug, Clone, Default)]
struct ProducerAcc {
    batches: u64,
    records: u64,
    bytes: u64,
    epochs: BTreeSet<i16>,
    /// Epoch and base sequence of its first sequenced batch here.
    first: Option<(i16, i32)>,
    /// Epoch and last sequence of its last sequenced batch here.
    last: Option<(i16, i32)>,
    sequence_gaps: u64,
}

impl ProducerAcc {
    fn sequenced(&mut self, epoch: i16, base_seq: i32, last_seq: i32) {
        if let Some((e, s)) = self.last {
            if e == epoch && base_seq != increment_sequence(s, 1) {
                self.sequence_gaps += 1;
            }
        }
        self.first.get_or_insert((epoch, base_seq));
        self.last = Some((epoch, last_seq));
    }

    fn merge(&mut self, later: ProducerAcc) {
        if let Some((epoch, base_seq)) = later.first {
            if let Some((e, s)) = self.last {
                if e == epoch && base_seq != increment_sequence(s, 1) {
                    self.sequence_gaps += 1;
                }
            }
            self.first.get_or_insert((epoch, base_seq));
        }
        self.last = later.last.or(self.last);
        self.batches += later.batches;
        self.records += later.records;
        self.bytes += later.bytes;
        self.epochs.extend(later.epochs);
        self.sequence_gaps += later.sequence_gaps;
    }

    fn summary(&self, producer_id: i64) -> ProducerSummary {
        ProducerSummary {
            producer_id,
            batches: self.batches,
            records: self.records,
            bytes: self.bytes,
            epochs: self.epochs.iter().copied().collect(),
            sequence_gaps: self.sequence_gaps,
        }
    }
}

#[derive(Debug, Clone, Default)]
struct TimeAcc {
    min: Option<i64>,
    max: Option<i64>,
    first: Option<i64>,
    last: Option<i64>,
    out_of_order: u64,
    worst_step_back: i64,
    future: u64,
}

impl TimeAcc {
    fn see(&mut self, ts: i64, now_ms: i64) {
        if ts < 0 {
            return;
        }
        self.first.get_or_insert(ts);
        if let Some(last) = self.last {
            self.step(last, ts);
        }
        self.last = Some(ts);
        self.min = Some(self.min.map_or(ts, |m| m.min(ts)));
        self.max = Some(self.max.map_or(ts, |m| m.max(ts)));
        if ts > now_ms {
            self.future += 1;
        }
    }

    fn step(&mut self, from: i64, to: i64) {
        if to < from {
            self.out_of_order += 1;
            self.worst_step_back = self.worst_step_back.max(from - to);
        }
    }

    fn merge(&mut self, later: &TimeAcc) {
        if let (Some(last), Some(first)) = (self.last, later.first) {
            self.step(last, first);
        }
        self.first = self.first.or(later.first);
        self.last = later.last.or(self.last);
        self.min = self.min.into_iter().chain(later.min).min();
        self.max = self.max.into_iter().chain(later.max).max();
        self.out_of_order += later.out_of_order;
        self.worst_step_back = self.worst_step_back.max(later.worst_step_back);
        self.future += later.future;
    }
}

#[derive(Debug, Clone, Default)]
struct Acc {
    segments: u64,
    batches: u64,
    records: u64,
    bytes: u64,
    unopened_wrappers: u64,
    invalid_batches: u64,
    damaged_bytes: u64,
    codecs: [CodecAcc; 5],
    formats: [u64; 3],
    timestamp_types: [u64; 3],
    control: u64,
    transactional: u64,
    idempotent: u64,
    batch_size: Log2Histogram,
    records_per_batch: Log2Histogram,
    batch_span: Log2Histogram,
    record_size: Log2Histogram,
    key_size: Log2Histogram,
    value_size: Log2Histogram,
    headers: Log2Histogram,
    time: TimeAcc,
    segment_times: Vec<SegmentTimes>,
    producers: IdMap<ProducerAcc>,
    keys: Option<Box<HyperLogLog>>,
    keyed: u64,
    null_keys: u64,
    tombstones: u64,
}

fn timestamp_type_index(t: TimestampType) -> usize {
    match t {
        TimestampType::NoTimestampType => 0,
        TimestampType::CreateTime => 1,
        TimestampType::LogAppendTime => 2,
    }
}

const TIMESTAMP_TYPES: [TimestampType; 3] = [
    TimestampType::NoTimestampType,
    TimestampType::CreateTime,
    TimestampType::LogAppendTime,
];

impl Acc {
    fn merge(&mut self, later: Acc) {
        self.segments += later.segments;
        self.batches += later.batches;
        self.records += later.records;
        self.bytes += later.bytes;
        self.unopened_wrappers += later.unopened_wrappers;
        self.invalid_batches += later.invalid_batches;
        self.damaged_bytes += later.damaged_bytes;
        for (a, b) in self.codecs.iter_mut().zip(&later.codecs) {
            a.batches += b.batches;
            a.records += b.records;
            a.bytes += b.bytes;
            a.uncompressed += b.uncompressed;
        }
        for i in 0..3 {
            self.formats[i] += later.formats[i];
            self.timestamp_types[i] += later.timestamp_types[i];
        }
        self.control += later.control;
        self.transactional += later.transactional;
        self.idempotent += later.idempotent;
        for (a, b) in [
            (&mut self.batch_size, &later.batch_size),
            (&mut self.records_per_batch, &later.records_per_batch),
            (&mut self.batch_span, &later.batch_span),
            (&mut self.record_size, &later.record_size),
            (&mut self.key_size, &later.key_size),
            (&mut self.value_size, &later.value_size),
            (&mut self.headers, &later.headers),
        ] {
            a.merge(b);
        }
        self.time.merge(&later.time);
        self.segment_times.extend(later.segment_times);
        for (pid, p) in later.producers {
            self.producers.entry(pid).or_default().merge(p);
        }
        match (&mut self.keys, later.keys) {
            (Some(a), Some(b)) => a.merge(&b),
            (a @ None, b) => *a = b,
            (Some(_), None) => {}
        }
        self.keyed += later.keyed;
        self.null_keys += later.null_keys;
        self.tombstones += later.tombstones;
    }

    fn finish(&self, opts: &StatsOptions) -> Stats {
        let codecs = Compression::ALL
            .iter()
            .zip(&self.codecs)
            .filter(|(_, c)| c.batches > 0)
            .map(|(codec, c)| CodecStats {
                codec: codec.name().to_owned(),
                batches: c.batches,
                records: c.records,
                bytes: c.bytes,
                uncompressed_bytes: opts.deep.then_some(c.uncompressed),
                ratio: (opts.deep && c.bytes > 0).then(|| c.uncompressed as f64 / c.bytes as f64),
            })
            .collect();
        let formats = (0..3)
            .filter(|&m| self.formats[m] > 0)
            .map(|m| (format!("v{m}"), self.formats[m]))
            .collect();
        let timestamp_types = TIMESTAMP_TYPES
            .iter()
            .filter(|&&t| self.timestamp_types[timestamp_type_index(t)] > 0)
            .map(|&t| {
                (
                    t.name().to_owned(),
                    self.timestamp_types[timestamp_type_index(t)],
                )
            })
            .collect();
        let mut summaries: Vec<ProducerSummary> = self
            .producers
            .iter()
            .filter(|(&pid, _)| pid >= 0)
            .map(|(&pid, p)| p.summary(pid))
            .collect();
        summaries.sort_by_key(|s| s.producer_id);
        let top = |key: fn(&ProducerSummary) -> u64| {
            let mut v = summaries.clone();
            v.sort_by(|a, b| key(b).cmp(&key(a)).then(a.producer_id.cmp(&b.producer_id)));
            v.truncate(opts.top);
            v
        };
        let producers = ProducerStats {
            count: summaries.len() as u64,
            epochs_seen: summaries.iter().map(|s| s.epochs.len() as u64).sum(),
            sequence_gaps: summaries.iter().map(|s| s.sequence_gaps).sum(),
            top_by_bytes: top(|s| s.bytes),
            top_by_batches: top(|s| s.batches),
        };
        let keys = opts.deep.then(|| {
            let distinct = self
                .keys
                .as_ref()
                .map_or(0, |h| h.estimate())
                .min(self.keyed);
            let superseded = self.keyed - distinct;
            KeyStats {
                keyed_records: self.keyed,
                null_keys: self.null_keys,
                tombstones: self.tombstones,
                distinct_keys_estimate: distinct,
                distinct_keys_relative_error: hll::STANDARD_ERROR,
                superseded_estimate: superseded,
                superseded_share: (self.keyed > 0).then(|| superseded as f64 / self.keyed as f64),
            }
        });
        Stats {
            segments: self.segments,
            batches: self.batches,
            records: self.records,
            bytes: self.bytes,
            unopened_wrappers: self.unopened_wrappers,
            invalid_batches: self.invalid_batches,
            damaged_bytes: self.damaged_bytes,
            codecs,
            formats,
            timestamp_types,
            control_batches: self.control,
            transactional_batches: self.transactional,
            idempotent_batches: self.idempotent,
            histograms: Histograms {
                batch_size: self.batch_size.report(),
                records_per_batch: self.records_per_batch.report(),
                batch_time_span_ms: self.batch_span.report(),
                record_size: self.record_size.report(),
                key_size: self.key_size.report(),
                value_size: self.value_size.report(),
                headers_per_record: self.headers.report(),
            },
            time: TimeStats {
                unit: if opts.deep { "records" } else { "batches" },
                min_timestamp: self.time.min,
                max_timestamp: self.time.max,
                out_of_order: self.time.out_of_order,
                worst_step_back_ms: self.time.worst_step_back,
                future: self.time.future,
                segments: self.segment_times.clone(),
            },
            producers,
            keys,
        }
    }

    /// Counts one entry whose CRC holds; returns false when its records do not decode.
    fn entry(&mut self, entry: &Entry<'_>, opts: &StatsOptions, scratch: &mut Scratch) -> bool {
        let size = entry.size_in_bytes() as u64;
        let Ok(codec) = entry.compression() else {
            return false;
        };
        let (deep_records, uncompressed) = if opts.deep {
            match self.records(entry, opts, scratch) {
                Ok(r) => (Some(r.0), r.1),
                // Past --max-batch-bytes a batch is not damaged, only not opened (verify's
                // batch.unchecked, a warning): counted from its header, as without --deep.
                Err(ErrorKind::TooLarge) => (None, 0),
                Err(_) => return false,
            }
        } else {
            (None, 0)
        };
        let records = match (entry, deep_records) {
            (_, Some(n)) => n,
            (Entry::V2(b), None) => u64::try_from(b.header.record_count).unwrap_or(0),
            (Entry::Legacy(m), None) if m.is_compressed() => {
                self.unopened_wrappers += 1;
                0
            }
            (Entry::Legacy(_), None) => 1,
        };
        self.batches += 1;
        self.records += records;
        self.bytes += size;
        let c = &mut self.codecs[usize::from(codec.id())];
        c.batches += 1;
        c.records += records;
        c.bytes += size;
        c.uncompressed += uncompressed;
        self.formats[usize::try_from(entry.magic()).unwrap_or(2).min(2)] += 1;
        self.timestamp_types[timestamp_type_index(entry.timestamp_type())] += 1;
        self.batch_size.add(size);
        if deep_records.is_some() || !matches!(entry, Entry::Legacy(m) if m.is_compressed()) {
            self.records_per_batch.add(records);
        }
        let pid = match entry {
            Entry::V2(b) => {
                let h = &b.header;
                self.control += u64::from(h.is_control());
                self.transactional += u64::from(h.is_transactional());
                if h.timestamp_type() == TimestampType::CreateTime
                    && h.base_timestamp >= 0
                    && h.max_timestamp >= h.base_timestamp
                {
                    self.batch_span
                        .add((h.max_timestamp - h.base_timestamp) as u64);
                }
                if !opts.deep && h.timestamp_type() != TimestampType::NoTimestampType {
                    if h.timestamp_type() == TimestampType::CreateTime {
                        self.time.see(h.base_timestamp, opts.now_ms);
                    }
                    self.time.see(h.max_timestamp, opts.now_ms);
                }
                h.has_producer_id().then_some(h)
            }
            Entry::Legacy(m) => {
                if !opts.deep && m.magic >= 1 {
                    self.time.see(m.timestamp, opts.now_ms);
                }
                None
            }
        };
        let p = self
            .producers
            .entry(pid.map_or(-1, |h| h.producer_id))
            .or_default();
        p.batches += 1;
        p.records += records;
        p.bytes += size;
        if let Some(h) = pid {
            self.idempotent += 1;
            p.epochs.insert(h.producer_epoch);
            if !h.is_control() && h.base_sequence >= 0 {
                p.sequenced(h.producer_epoch, h.base_sequence, h.last_sequence());
            }
        }
        true
    }

    /// (`deep`) Decodes the records of `entry` and counts them: their number and the
    /// uncompressed bytes. The error's kind when they do not decode; nothing is counted then.
    fn records(
        &mut self,
        entry: &Entry<'_>,
        opts: &StatsOptions,
        scratch: &mut Scratch,
    ) -> std::result::Result<(u64, u64), ErrorKind> {
        let pending = &mut scratch.pending;
        pending.clear();
        let records = entry
            .records(&mut scratch.buf, opts.max_batch_bytes)
            .map_err(|e| e.kind)?;
        for r in records {
            let r = r.map_err(|e| e.kind)?;
            pending.push(RecordFacts {
                size: r.size_in_bytes as u64,
                key: r.key.map(|k| (k.len() as u64, hll::hash(k))),
                value: r.value.map(|v| v.len() as u64),
                headers: r.headers.len() as u64,
                timestamp: r.timestamp,
            });
        }
        let is_control = entry.is_control();
        // What the batch would take uncompressed: a v2 header and its records, or each v0/v1
        // message with its log overhead (offset and size fields).
        let (mut uncompressed, per_record) = match entry {
            Entry::V2(_) => (RECORD_BATCH_OVERHEAD_BYTES as u64, 0),
            Entry::Legacy(m) if m.is_compressed() => (0, LOG_OVERHEAD_BYTES as u64),
            // An uncompressed message is its own one record.
            Entry::Legacy(_) => (entry.size_in_bytes() as u64, 0),
        };
        let legacy_plain = matches!(entry, Entry::Legacy(m) if !m.is_compressed());
        for f in pending.iter() {
            if !legacy_plain {
                uncompressed += f.size + per_record;
            }
            self.record_size.add(f.size);
            self.time.see(f.timestamp, opts.now_ms);
            if matches!(entry, Entry::V2(_)) {
                self.headers.add(f.headers);
            }
            // Control records (transaction markers) are the broker's, not keys of the topic.
            if is_control {
                continue;
            }
            match f.key {
                Some((len, hash)) => {
                    self.keyed += 1;
                    self.key_size.add(len);
                    self.keys
                        .get_or_insert_with(Default::default)
                        .add_hash(hash);
                }
                None => self.null_keys += 1,
            }
            match f.value {
                Some(len) => self.value_size.add(len),
                None => self.tombstones += 1,
            }
        }
        Ok((pending.len() as u64, uncompressed))
    }
}

/// What the deep pass keeps of a record until its whole batch has decoded.
#[derive(Debug, Clone, Copy)]
struct RecordFacts {
    size: u64,
    /// Length and hash of a non-null key.
    key: Option<(u64, u64)>,
    value: Option<u64>,
    headers: u64,
    timestamp: i64,
}

/// Buffers reused from batch to batch.
#[derive(Default)]
struct Scratch {
    buf: Vec<u8>,
    pending: Vec<RecordFacts>,
}

type Groups = BTreeMap<GroupKey, Acc>;

fn merge_groups(mut a: Groups, b: Groups) -> Groups {
    for (k, acc) in b {
        match a.get_mut(&k) {
            Some(x) => x.merge(acc),
            None => {
                a.insert(k, acc);
            }
        }
    }
    a
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn partition_ref(dir: &Path) -> PartitionRef {
    let parsed = parse_partition_dir(&name_of(dir));
    PartitionRef {
        dir: dir.to_path_buf(),
        topic: parsed.as_ref().map(|p| p.topic.clone()),
        partition: parsed.map(|p| p.partition),
    }
}

/// The `.log` files of a partition directory, by base offset.
pub(crate) fn logs_of(dir: &Path) -> Result<Vec<(PathBuf, i64)>> {
    let mut out: Vec<(PathBuf, i64)> = crate::storage::files::list_dir(dir)?
        .into_iter()
        .filter_map(|p| match classify(&name_of(&p)) {
            // A file (a remote segment shown with `--remote` included), not a directory.
            FileKind::Log { base_offset }
                if crate::storage::files::is_file(&p).unwrap_or(false) =>
            {
                Some((p, base_offset))
            }
            _ => None,
        })
        .collect();
    out.sort_by_key(|(_, b)| *b);
    Ok(out)
}

/// Counts what `paths` hold: `.log` files, partition directories and log dirs (files of other
/// kinds named explicitly are listed as skipped).
pub fn stats(paths: &[PathBuf], opts: &StatsOptions) -> Result<Report> {
    let mut partitions: Vec<PartitionRef> = Vec::new();
    let mut segments: Vec<SegmentRef> = Vec::new();
    let mut skipped = Vec::new();
    // Each partition's directory resolved: one named twice, however spelled, is one partition.
    let mut places: Vec<PathBuf> = Vec::new();
    let mut partition_index = |dir: &Path, partitions: &mut Vec<PartitionRef>| {
        let place = crate::ops::input::place(dir);
        places.iter().position(|p| *p == place).unwrap_or_else(|| {
            places.push(place);
            partitions.push(partition_ref(dir));
            partitions.len() - 1
        })
    };
    for path in paths {
        match examine(path, Expected::AnyInput)? {
            Input::File => {
                let kind = crate::ops::input::kind_of(path, None).kind;
                let FileKind::Log { base_offset } = kind else {
                    skipped.push(path.clone());
                    continue;
                };
                let dir = path.parent().unwrap_or(Path::new("."));
                let partition = partition_index(dir, &mut partitions);
                segments.push(SegmentRef {
                    partition,
                    log: path.clone(),
                    base_offset,
                });
            }
            Input::Dir { .. } => {
                for dir in partition_dirs(path)? {
                    let partition = partition_index(&dir, &mut partitions);
                    for (log, base_offset) in logs_of(&dir)? {
                        segments.push(SegmentRef {
                            partition,
                            log,
                            base_offset,
                        });
                    }
                }
            }
        }
    }
    if segments.is_empty() {
        // Directories without a segment were refused above: only named files are left.
        let path = skipped
            .first()
            .or(paths.first())
            .cloned()
            .unwrap_or_default();
        return Err(Error::invalid(
            &path,
            "not a segment: stats reads .log files, partition directories and log dirs",
        ));
    }
    // Log order: by partition as named, then by base offset.
    segments.sort_by_key(|s| (s.partition, s.base_offset));
    // A log reached twice (in a directory the input resolver does not merge with its log dir).
    segments.dedup_by(|a, b| a.partition == b.partition && a.log.file_name() == b.log.file_name());
    let groups = segments
        .par_iter()
        .map(|s| segment_groups(s, &partitions[s.partition], opts))
        .try_reduce(Groups::new, |a, b| Ok(merge_groups(a, b)))?;
    let mut total = Acc::default();
    let mut reported = Vec::with_capacity(groups.len());
    for (key, acc) in groups {
        let group = group_name(&key, &partitions, &segments);
        reported.push(GroupStats {
            group,
            stats: acc.finish(opts),
        });
        total.merge(acc);
    }
    if opts.by == GroupBy::Producer {
        // Each producer's group counted its segments: the total is the number read.
        total.segments = segments.len() as u64;
    }
    Ok(Report {
        deep: opts.deep,
        partitions,
        groups: reported,
        total: total.finish(opts),
        skipped,
    })
}

fn group_name(key: &GroupKey, partitions: &[PartitionRef], segments: &[SegmentRef]) -> GroupName {
    let none = GroupName {
        dir: None,
        topic: None,
        partition: None,
        file: None,
        base_offset: None,
        producer_id: None,
    };
    let of_partition = |i: usize| {
        let p = &partitions[i];
        GroupName {
            dir: Some(p.dir.clone()),
            topic: p.topic.clone(),
            partition: p.partition,
            ..none.clone()
        }
    };
    match key {
        GroupKey::Segment(i, base) => GroupName {
            file: segments
                .iter()
                .find(|s| s.partition == *i && s.base_offset == *base)
                .map(|s| s.log.clone()),
            base_offset: Some(*base),
            ..of_partition(*i)
        },
        GroupKey::Partition(i) => of_partition(*i),
        GroupKey::Topic(t) => GroupName {
            topic: Some(t.clone()),
            ..none
        },
        GroupKey::Producer(pid) => GroupName {
            producer_id: Some(*pid),
            ..none
        },
    }
}

/// One segment's counts, per group.
fn segment_groups(seg: &SegmentRef, part: &PartitionRef, opts: &StatsOptions) -> Result<Groups> {
    let mut reader = LogReader::open(&seg.log, None)?;
    let mut fixed = Acc::default();
    let mut by_producer: IdMap<Acc> = IdMap::default();
    let per_producer = opts.by == GroupBy::Producer;
    let mut scratch = Scratch::default();
    let mut damaged = 0u64;
    loop {
        match reader.next_step()? {
            Step::Entry { entry, .. } => {
                let acc = if per_producer {
                    let pid = match &entry {
                        Entry::V2(b) if b.header.has_producer_id() => b.header.producer_id,
                        _ => -1,
                    };
                    by_producer.entry(pid).or_default()
                } else {
                    &mut fixed
                };
                if !entry.crc_is_valid() || !acc.entry(&entry, opts, &mut scratch) {
                    acc.invalid_batches += 1;
                }
            }
            // The framing holds (or the reader went past undecodable bytes to the next valid
            // batch): the walk goes on after the entry, as after a loaded one whose checksum
            // fails.
            Step::BadEntry { len, .. } | Step::BadCrc { len, .. } => damaged += len,
            Step::SizeTooSmall { position, .. } | Step::TooLarge { position, .. } => {
                let next = reader.resync(position + 1)?;
                damaged += next.unwrap_or(reader.end()) - position;
                if next.is_none() {
                    break;
                }
            }
            Step::End { trailing, .. } => {
                damaged += trailing;
                break;
            }
        }
    }
    let mut groups = Groups::new();
    if per_producer {
        by_producer.entry(-1).or_default().damaged_bytes += damaged;
        for (pid, mut acc) in by_producer {
            acc.segments = 1;
            if pid == -1 && acc.batches == 0 && acc.damaged_bytes == 0 && acc.invalid_batches == 0 {
                continue;
            }
            groups.insert(GroupKey::Producer(pid), acc);
        }
        return Ok(groups);
    }
    fixed.segments = 1;
    fixed.damaged_bytes = damaged;
    fixed.segment_times.push(SegmentTimes {
        file: seg.log.clone(),
        base_offset: seg.base_offset,
        min_timestamp: fixed.time.min,
        max_timestamp: fixed.time.max,
    });
    let key = match opts.by {
        GroupBy::Segment => GroupKey::Segment(seg.partition, seg.base_offset),
        GroupBy::Partition | GroupBy::Producer => GroupKey::Partition(seg.partition),
        GroupBy::Topic => GroupKey::Topic(part.topic.clone().unwrap_or_else(|| name_of(&part.dir))),
    };
    groups.insert(key, fixed);
    Ok(groups)
}
