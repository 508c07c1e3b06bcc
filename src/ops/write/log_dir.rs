//! The log-dir form of a spec: several partitions written into one log directory, with the
//! directory's own files as a broker leaves them — the offset checkpoints, `meta.properties`
//! and, after a clean shutdown, `.kafka_cleanshutdown`.
//!
//! Checkpoint entries are sorted by topic and partition (Kafka writes them in its hash map's
//! order, which readers do not depend on).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Value};

use super::spec::{write_spec, Spec, WriteSummary, DEFAULT_NOW_MS};
use crate::error::{Error, Result};
use crate::format::checkpoint::{
    java_date_string_utc, uuid_from_base64, CleanShutdown, MetaProperties, OffsetCheckpoint,
    OffsetCheckpointEntry,
};
use crate::format::names::{
    partition_dir_name, CLEANER_OFFSET_CHECKPOINT_FILE_NAME, CLEAN_SHUTDOWN_FILE_NAME,
    LOG_START_OFFSET_CHECKPOINT_FILE_NAME, META_PROPERTIES_FILE_NAME,
    RECOVERY_POINT_CHECKPOINT_FILE_NAME, REPLICATION_OFFSET_CHECKPOINT_FILE_NAME,
};
use crate::storage::CloseMode;

/// `meta.properties` written when the spec gives none: a KRaft (version 1) file.
pub const DEFAULT_CLUSTER_ID: &str = "a3NlZy1maXh0dXJlcy0xAA";
pub const DEFAULT_NODE_ID: i32 = 1;
pub const DEFAULT_DIRECTORY_ID: &str = "a3NlZy1sb2ctZGlyLTAwMQ";

/// A log-dir spec: `{"partitions": [SPEC, …], …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogDirSpec {
    pub partitions: Vec<Spec>,
    /// The clock of the `meta.properties` date comment (default: the reference `now_ms`).
    pub now_ms: Option<i64>,
    #[serde(default)]
    pub meta_properties: MetaSpec,
    #[serde(default)]
    pub checkpoints: CheckpointSpec,
    /// Whether to write `.kafka_cleanshutdown`; by default when every partition closes clean.
    pub clean_shutdown: Option<bool>,
    /// The broker epoch in `.kafka_cleanshutdown` (default -1, what a broker without one writes).
    pub broker_epoch: Option<i64>,
    #[serde(skip)]
    pub source: PathBuf,
}

/// `meta.properties`: version 1 needs `cluster_id` and `node_id`; version 0 takes an optional
/// `node_id` (its `broker.id`). Absent fields take the defaults above (version 1).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetaSpec {
    pub version: Option<i32>,
    pub cluster_id: Option<String>,
    pub node_id: Option<i32>,
    pub directory_id: Option<String>,
}

/// Overrides per `<topic>-<partition>`. Defaults: the recovery point is the log end offset
/// after a clean close, the active segment's base offset after a crash (the flush that follows
/// a roll); the high watermark is the log end offset; the log start offset is the spec's
/// (listed only when above the first segment's base offset, as Kafka does); the cleaner
/// checkpoint is written only when `cleaner` is given.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointSpec {
    #[serde(default)]
    pub recovery_point: BTreeMap<String, i64>,
    #[serde(default)]
    pub high_watermark: BTreeMap<String, i64>,
    #[serde(default)]
    pub log_start_offset: BTreeMap<String, i64>,
    pub cleaner: Option<BTreeMap<String, i64>>,
}

/// What writing a log dir did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogDirSummary {
    pub partitions: Vec<WriteSummary>,
    /// The log dir's own files, in the order written.
    pub files: Vec<String>,
}

impl LogDirSummary {
    /// The summary in kseg's report vocabulary, each partition as [`WriteSummary::report`].
    pub fn report(&self, log_dir: &Path) -> Value {
        let partitions: Vec<Value> = self
            .partitions
            .iter()
            .map(|p| p.report(&log_dir.join(&p.topic_partition)))
            .collect();
        json!({"logDir": crate::format::os_path::escaped(log_dir), "files": self.files, "partitions": partitions})
    }
}

/// Writes every partition of `spec` into the log dir `out_dir` (absent or empty), then its
/// checkpoints and `meta.properties`.
pub fn write_log_dir(spec: &LogDirSpec, out_dir: &Path) -> Result<LogDirSummary> {
    super::all_or_nothing("write", out_dir, |dir| build_log_dir(spec, dir))
}

/// [`write_log_dir`] into the directory `out_dir`, which exists and is empty.
fn build_log_dir(spec: &LogDirSpec, out_dir: &Path) -> Result<LogDirSummary> {
    let src = &spec.source;
    for (i, p) in spec.partitions.iter().enumerate() {
        p.check(&format!("partitions[{i}]."))
            .map_err(|m| Error::invalid(src, m))?;
    }
    let names: Vec<String> = spec
        .partitions
        .iter()
        .map(|p| partition_dir_name(&p.topic, p.partition))
        .collect();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            return Err(Error::invalid(
                src,
                format!("partitions[{i}]: {name} appears twice"),
            ));
        }
    }
    let c = &spec.checkpoints;
    for (what, map) in [
        ("recovery_point", &c.recovery_point),
        ("high_watermark", &c.high_watermark),
        ("log_start_offset", &c.log_start_offset),
    ]
    .into_iter()
    .chain(c.cleaner.as_ref().map(|m| ("cleaner", m)))
    {
        if let Some(k) = map.keys().find(|k| !names.contains(k)) {
            return Err(Error::invalid(
                src,
                format!("checkpoints.{what}: {k:?} is not one of the partitions {names:?}"),
            ));
        }
    }
    let meta = meta_properties(&spec.meta_properties)
        .map_err(|m| Error::invalid(src, format!("meta_properties: {m}")))?;

    let mut partitions = Vec::new();
    let mut recovery = Vec::new();
    let mut high_watermarks = Vec::new();
    let mut log_starts = Vec::new();
    for (p, name) in spec.partitions.iter().zip(&names) {
        let mut p = p.clone();
        p.source = src.clone();
        let summary = write_spec(&p, &out_dir.join(name))?;
        let first_base = summary.segments.first().copied().unwrap_or_default();
        let active_base = summary.segments.last().copied().unwrap_or_default();
        let leo = summary.log_end_offset;
        let entry = |offset: i64| OffsetCheckpointEntry {
            topic: p.topic.clone(),
            partition: p.partition,
            offset,
        };
        let in_log = |what: &str, offset: i64| {
            if (first_base..=leo).contains(&offset) {
                Ok(offset)
            } else {
                Err(Error::invalid(
                    src,
                    format!("checkpoints.{what}[{name:?}] = {offset}: expected an offset from {first_base} to the log end offset {leo}"),
                ))
            }
        };
        let recovery_point = match c.recovery_point.get(name) {
            Some(o) => in_log("recovery_point", *o)?,
            None if summary.close == CloseMode::Clean => leo,
            None => active_base,
        };
        recovery.push(entry(recovery_point));
        let hw = c.high_watermark.get(name).copied().unwrap_or(leo);
        high_watermarks.push(entry(in_log("high_watermark", hw)?));
        let log_start = c.log_start_offset.get(name).copied().unwrap_or(first_base);
        if in_log("log_start_offset", log_start)? > first_base {
            log_starts.push(entry(log_start));
        }
        partitions.push(summary);
    }

    let sorted = |mut entries: Vec<OffsetCheckpointEntry>| {
        entries.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
        OffsetCheckpoint { entries }.encode()
    };
    let cleaner = c.cleaner.as_ref().map(|m| {
        let entries = spec
            .partitions
            .iter()
            .zip(&names)
            .filter_map(|(p, name)| {
                m.get(name).map(|offset| OffsetCheckpointEntry {
                    topic: p.topic.clone(),
                    partition: p.partition,
                    offset: *offset,
                })
            })
            .collect();
        sorted(entries)
    });
    let now_ms = spec.now_ms.unwrap_or(DEFAULT_NOW_MS);
    let all_clean = partitions.iter().all(|s| s.close == CloseMode::Clean);
    let clean_shutdown = spec.clean_shutdown.unwrap_or(all_clean).then(|| {
        CleanShutdown {
            version: 0,
            broker_epoch: spec.broker_epoch.unwrap_or(-1),
        }
        .encode()
    });

    let mut files = Vec::new();
    let mut write = |name: &str, text: String| -> Result<()> {
        std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
        let path = out_dir.join(name);
        std::fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
        files.push(name.to_string());
        Ok(())
    };
    write(
        META_PROPERTIES_FILE_NAME,
        meta.encode(&java_date_string_utc(now_ms)),
    )?;
    write(RECOVERY_POINT_CHECKPOINT_FILE_NAME, sorted(recovery))?;
    write(
        REPLICATION_OFFSET_CHECKPOINT_FILE_NAME,
        sorted(high_watermarks),
    )?;
    write(LOG_START_OFFSET_CHECKPOINT_FILE_NAME, sorted(log_starts))?;
    if let Some(text) = cleaner {
        write(CLEANER_OFFSET_CHECKPOINT_FILE_NAME, text)?;
    }
    if let Some(text) = clean_shutdown {
        write(CLEAN_SHUTDOWN_FILE_NAME, text)?;
    }
    Ok(LogDirSummary { partitions, files })
}

/// The `meta.properties` the spec asks for, validated as Kafka validates the file.
fn meta_properties(m: &MetaSpec) -> std::result::Result<MetaProperties, String> {
    let version = m.version.unwrap_or(1);
    let defaults = version == 1;
    let directory_id = m
        .directory_id
        .as_deref()
        .or(defaults.then_some(DEFAULT_DIRECTORY_ID))
        .map(|d| uuid_from_base64(d).map_err(|e| format!("directory_id: {e}")))
        .transpose()?;
    let meta = MetaProperties {
        version,
        cluster_id: m
            .cluster_id
            .clone()
            .or(defaults.then(|| DEFAULT_CLUSTER_ID.to_string())),
        node_id: m.node_id.or(defaults.then_some(DEFAULT_NODE_ID)),
        directory_id,
    };
    // What Kafka would refuse to read back is refused here.
    MetaProperties::from_properties(&meta.to_properties())
}
