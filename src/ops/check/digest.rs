//! `digest`: one SHA-256 over the record stream of a partition, so replicas on two machines
//! are compared by exchanging one line. Segment and batch boundaries, compression, CRCs and
//! (unless asked for) the batches' partition leader epochs are left out: the same records
//! written with other `segment.bytes` or recompressed have the same digest.
//!
//! The canonical encoding (version 1; integers big-endian, lengths as i32 with -1 for null):
//! the ASCII bytes `kseg/digest/1\n`, then for each record in offset order: offset (i64),
//! timestamp (i64, as Kafka's reader gives it: a LogAppendTime batch's time for each record),
//! timestamp type (i8: -1 none, 0 CreateTime, 1 LogAppendTime), producer id (i64), producer
//! epoch (i16), sequence (i32, -1 without one), transactional and control flags (one byte
//! each, 0 or 1), key (length, bytes), value (length, bytes), header count (i32), then each
//! header's key (length, bytes) and value (length, bytes); with `--with-epochs`, after the
//! flags, the batch's partition leader epoch (i32, -1 for v0/v1). The reported digest is the
//! lowercase hex SHA-256 of those bytes. Reading stops at the first damage.
//!
//! A log dir (or a directory of log dirs) gets one digest per live partition and a combined
//! one: the SHA-256 of the ASCII bytes `kseg/digest-logdir/1\n`, then for each partition in
//! (topic, partition) order the line `<topic> <partition> <digest>\n` (partition in decimal,
//! digest in lowercase hex). Two log dirs have the same combined digest exactly when they
//! hold the same partitions with the same records.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::stream::{PartitionBatches, Stopped};
use crate::error::{Error, Expected, Result};
use crate::format::batch::TimestampType;
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::format::entry::{Entry, RecordView};
use crate::ops::input::{Shape, NO_LIVE_PARTITION};

/// What the canonical encoding starts with.
pub const DIGEST_DOMAIN: &[u8] = b"kseg/digest/1\n";

/// What a log dir's combined digest starts with.
pub const LOG_DIR_DIGEST_DOMAIN: &[u8] = b"kseg/digest-logdir/1\n";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DigestOptions {
    /// First offset hashed (inclusive).
    pub from_offset: Option<i64>,
    /// Last offset hashed (inclusive).
    pub to_offset: Option<i64>,
    /// Hash the batches' partition leader epochs too.
    pub with_epochs: bool,
    /// A digest per segment as well.
    pub segments: bool,
}

/// The digest of some records, with what they cover.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordsDigest {
    /// The segment's `.log` (per-segment digests only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub file: Option<PathBuf>,
    #[serde(rename = "recordCount")]
    pub records: u64,
    /// The first and last offsets hashed; None without records.
    pub first_offset: Option<i64>,
    pub last_offset: Option<i64>,
    pub sha256: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DigestReport {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub dir: PathBuf,
    pub from_offset: Option<i64>,
    pub to_offset: Option<i64>,
    pub with_epochs: bool,
    pub digest: RecordsDigest,
    /// With `--segments`: one per segment holding a hashed record.
    pub segments: Vec<RecordsDigest>,
    pub stopped: Option<Stopped>,
}

/// A running hash of records.
struct Hasher {
    sha: Sha256,
    records: u64,
    first: Option<i64>,
    last: Option<i64>,
}

impl Hasher {
    fn new() -> Self {
        let mut sha = Sha256::new();
        sha.update(DIGEST_DOMAIN);
        Hasher {
            sha,
            records: 0,
            first: None,
            last: None,
        }
    }

    fn add(&mut self, encoded: &[u8], offset: i64) {
        self.sha.update(encoded);
        self.records += 1;
        self.first.get_or_insert(offset);
        self.last = Some(offset);
    }

    fn finish(self, file: Option<PathBuf>) -> RecordsDigest {
        RecordsDigest {
            file,
            records: self.records,
            first_offset: self.first,
            last_offset: self.last,
            sha256: hex(&self.sha.finalize()),
        }
    }
}

fn put_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        Some(b) => {
            out.extend_from_slice(&(b.len() as i32).to_be_bytes());
            out.extend_from_slice(b);
        }
        None => out.extend_from_slice(&(-1i32).to_be_bytes()),
    }
}

/// The batch fields every record of it carries in the encoding.
struct BatchFields {
    producer_id: i64,
    producer_epoch: i16,
    transactional: bool,
    control: bool,
    partition_leader_epoch: i32,
}

impl BatchFields {
    fn of(entry: &Entry<'_>) -> Self {
        match entry {
            Entry::V2(b) => BatchFields {
                producer_id: b.header.producer_id,
                producer_epoch: b.header.producer_epoch,
                transactional: b.header.is_transactional(),
                control: b.header.is_control(),
                partition_leader_epoch: b.header.partition_leader_epoch,
            },
            Entry::Legacy(_) => BatchFields {
                producer_id: -1,
                producer_epoch: -1,
                transactional: false,
                control: false,
                partition_leader_epoch: -1,
            },
        }
    }
}

/// The canonical encoding of one record (see the module documentation).
fn encode(out: &mut Vec<u8>, r: &RecordView<'_>, batch: &BatchFields, with_epochs: bool) {
    out.clear();
    out.extend_from_slice(&r.offset.to_be_bytes());
    out.extend_from_slice(&r.timestamp.to_be_bytes());
    let timestamp_type: i8 = match r.timestamp_type {
        TimestampType::NoTimestampType => -1,
        TimestampType::CreateTime => 0,
        TimestampType::LogAppendTime => 1,
    };
    out.extend_from_slice(&timestamp_type.to_be_bytes());
    out.extend_from_slice(&batch.producer_id.to_be_bytes());
    out.extend_from_slice(&batch.producer_epoch.to_be_bytes());
    out.extend_from_slice(&r.sequence.to_be_bytes());
    out.push(u8::from(batch.transactional));
    out.push(u8::from(batch.control));
    if with_epochs {
        out.extend_from_slice(&batch.partition_leader_epoch.to_be_bytes());
    }
    put_bytes(out, r.key);
    put_bytes(out, r.value);
    out.extend_from_slice(&(r.headers.len() as i32).to_be_bytes());
    for h in &r.headers {
        put_bytes(out, Some(h.key));
        put_bytes(out, h.value);
    }
}

/// The digest of the records of the partition directory `dir` in the asked offset range.
pub fn digest(dir: &Path, opts: &DigestOptions) -> Result<DigestReport> {
    let mut batches = PartitionBatches::open(dir)?;
    let from = opts.from_offset.unwrap_or(i64::MIN);
    let to = opts.to_offset.unwrap_or(i64::MAX);
    if let Some(f) = opts.from_offset {
        batches.start_at_offset(dir, f)?;
    }
    let mut total = Hasher::new();
    let mut segments = Vec::new();
    let mut segment: Option<(usize, Hasher)> = None;
    let (mut scratch, mut encoded) = (Vec::new(), Vec::new());
    while let Some(b) = batches.next_batch()? {
        if b.base_offset > to {
            break;
        }
        if b.last_offset < from {
            continue;
        }
        let entry = b.entry();
        let fields = BatchFields::of(&entry);
        let records = entry
            .records(&mut scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
            .map_err(|e| Error::decode(&batches.logs()[b.log], b.position, e))?;
        for r in records {
            let r = r.map_err(|e| Error::decode(&batches.logs()[b.log], b.position, e))?;
            if r.offset < from || r.offset > to {
                continue;
            }
            encode(&mut encoded, &r, &fields, opts.with_epochs);
            total.add(&encoded, r.offset);
            if !opts.segments {
                continue;
            }
            if segment.as_ref().is_none_or(|(log, _)| *log != b.log) {
                if let Some((log, h)) = segment.take() {
                    segments.push(h.finish(Some(batches.logs()[log].clone())));
                }
                segment = Some((b.log, Hasher::new()));
            }
            if let Some((_, h)) = segment.as_mut() {
                h.add(&encoded, r.offset);
            }
        }
    }
    if let Some((log, h)) = segment.take() {
        segments.push(h.finish(Some(batches.logs()[log].clone())));
    }
    Ok(DigestReport {
        dir: dir.to_path_buf(),
        from_offset: opts.from_offset,
        to_offset: opts.to_offset,
        with_epochs: opts.with_epochs,
        digest: total.finish(None),
        segments,
        stopped: batches.stopped().cloned(),
    })
}

/// A log dir's (or a directory of log dirs') partitions digested.
#[derive(Debug, Clone)]
pub struct LogDirsDigest {
    pub path: PathBuf,
    /// By topic and partition.
    pub partitions: Vec<((String, i32), DigestReport)>,
    /// The combined digest (see the module documentation).
    pub sha256: String,
}

/// What `kseg digest PATH` hashed.
#[derive(Debug, Clone)]
pub enum Digests {
    Partition(Box<DigestReport>),
    LogDirs(LogDirsDigest),
}

impl Digests {
    /// The reports that stopped at damage.
    pub fn stopped(&self) -> Vec<&Stopped> {
        match self {
            Digests::Partition(r) => r.stopped.iter().collect(),
            Digests::LogDirs(l) => l
                .partitions
                .iter()
                .filter_map(|(_, r)| r.stopped.as_ref())
                .collect(),
        }
    }
}

/// [`digest`] of a partition directory, or of every live partition of a log dir (or a
/// directory of log dirs) with their combined digest.
pub fn digest_path(path: &Path, opts: &DigestOptions) -> Result<Digests> {
    let (shape, _) = crate::ops::input::resolve(path, Expected::PartitionOrLogDirs)?;
    if !matches!(shape, Shape::LogDir | Shape::LogDirs(_)) {
        // A partition, or the error naming what is expected.
        return Ok(Digests::Partition(Box::new(digest(path, opts)?)));
    }
    let mut partitions = Vec::new();
    let mut combined = Sha256::new();
    combined.update(LOG_DIR_DIGEST_DOMAIN);
    let live = crate::ops::input::live_partitions(path, &shape)?;
    if live.is_empty() {
        return Err(Error::invalid(path, NO_LIVE_PARTITION));
    }
    for (key, dir) in live {
        let report = digest(&dir, opts)?;
        combined.update(format!("{} {} {}\n", key.0, key.1, report.digest.sha256).as_bytes());
        partitions.push((key, report));
    }
    Ok(Digests::LogDirs(LogDirsDigest {
        path: path.to_path_buf(),
        partitions,
        sha256: hex(&combined.finalize()),
    }))
}

fn hex(hash: &[u8]) -> String {
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

impl LogDirsDigest {
    pub fn to_json(&self, opts: &DigestOptions) -> serde_json::Value {
        let partitions: Vec<_> = self
            .partitions
            .iter()
            .map(|((topic, partition), r)| {
                json!({
                    "topic": topic,
                    "partition": partition,
                    "dir": crate::format::os_path::escaped(&r.dir),
                    "sha256": r.digest.sha256,
                    "recordCount": r.digest.records,
                    "firstOffset": r.digest.first_offset,
                    "lastOffset": r.digest.last_offset,
                    "segments": r.segments,
                    "stopped": r.stopped,
                })
            })
            .collect();
        json!({
            "format": crate::ops::JSON_FORMAT,
            "path": crate::format::os_path::escaped(&self.path),
            "algorithm": "sha256",
            "encoding": "kseg/digest/1",
            "combinedEncoding": "kseg/digest-logdir/1",
            "fromOffset": opts.from_offset,
            "toOffset": opts.to_offset,
            "withEpochs": opts.with_epochs,
            "sha256": self.sha256,
            "partitions": partitions,
            "partitionCount": self.partitions.len(),
            "recordCount": self.partitions.iter().map(|(_, r)| r.digest.records).sum::<u64>(),
        })
    }

    /// Each partition's lines, then the combined digest's.
    pub fn render_text(&self) -> String {
        let mut out: String = self
            .partitions
            .iter()
            .map(|(_, r)| r.render_text())
            .collect();
        out.push_str(&format!(
            "{}  {}  combined, {} partition(s)\n",
            self.sha256,
            self.path.display(),
            self.partitions.len()
        ));
        out
    }
}

impl DigestReport {
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "format": crate::ops::JSON_FORMAT,
            "dir": crate::format::os_path::escaped(&self.dir),
            "algorithm": "sha256",
            "encoding": "kseg/digest/1",
            "fromOffset": self.from_offset,
            "toOffset": self.to_offset,
            "withEpochs": self.with_epochs,
            "sha256": self.digest.sha256,
            "recordCount": self.digest.records,
            "firstOffset": self.digest.first_offset,
            "lastOffset": self.digest.last_offset,
            "segments": self.segments,
            "stopped": self.stopped,
        })
    }

    /// One line per segment (with `--segments`), then the line for the whole range.
    pub fn render_text(&self) -> String {
        let line = |d: &RecordsDigest, what: String| {
            let range = match (d.first_offset, d.last_offset) {
                (Some(f), Some(l)) => format!("offsets {f}..={l}"),
                _ => "no offsets".to_string(),
            };
            format!("{}  {what}  {} record(s), {range}\n", d.sha256, d.records)
        };
        let mut out = String::new();
        for s in &self.segments {
            let file = s.file.as_deref().unwrap_or(Path::new(""));
            out.push_str(&line(s, file.display().to_string()));
        }
        out.push_str(&line(&self.digest, self.dir.display().to_string()));
        out
    }
}
