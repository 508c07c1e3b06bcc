//! `metadata`: the KRaft metadata image of a cluster at a point of its `__cluster_metadata`
//! log, built as the controller and the brokers' metadata loader build it: the newest snapshot
//! (`<end offset>-<epoch>.checkpoint`) at or before the point, then the log's records from the
//! snapshot's end offset up to the point, each applied by [`image::Image::apply`]; records of a
//! metadata transaction (KIP-868) only once its END_TRANSACTION_RECORD is read, none of an
//! aborted one (`MetadataBatchLoader`).
//!
//! A point is an offset N: the image holds the records with offsets below N, exactly what a
//! snapshot named `N-…checkpoint` holds. A time T is the offset of the first record written
//! after T, from the log's record times and the snapshots' header times.

pub mod image;
mod names;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Expected, Result, Unusable};
use crate::format::control::ControlRecordType;
use crate::format::internal::{
    loader_verdict, snapshot_last_contained_timestamp, Decoder, LoaderVerdict,
};
use crate::format::names::{classify, partition_dir_name, FileKind};
use crate::ops::finding::Finding;
use crate::ops::human::instant;
use crate::ops::input::{examine, Input};
use crate::ops::inspect::ls::KRAFT_METADATA_TOPIC;
use crate::ops::inspect::records::{replay, ReplayedRecord};
use crate::storage::read::leading_control_value;
use image::Image;

/// Where in the log the image is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// After every record on disk.
    End,
    /// After the records with offsets below this one.
    Offset(i64),
    /// After the records written at or before this time (ms since the epoch).
    Time(i64),
}

/// The image at one point, with where it came from and what the replay found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MetadataReport {
    /// The `__cluster_metadata-0` directory.
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub dir: PathBuf,
    /// The snapshot the image starts from (null: none at or before the point).
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub snapshot: Option<PathBuf>,
    /// The image holds the records with offsets below this one.
    pub offset: i64,
    /// The time of the last record applied from the log (null: none).
    pub last_record_timestamp: Option<i64>,
    pub image: Image,
    pub findings: Vec<Finding>,
}

/// The `__cluster_metadata-0` directory of `path`: that directory itself, or a log dir
/// holding one.
pub fn metadata_dir(path: &Path) -> Result<PathBuf> {
    let expected = Expected::PartitionOrLogDir;
    let Input::Dir { dirs, .. } = examine(path, expected)? else {
        return Err(Error::unusable(path, Unusable::NotADirectory, expected));
    };
    let own = partition_dir_name(KRAFT_METADATA_TOPIC, 0);
    let named = |p: &Path| p.file_name().is_some_and(|n| n.to_string_lossy() == own);
    if named(path) || path.canonicalize().is_ok_and(|c| named(&c)) {
        return Ok(path.to_path_buf());
    }
    dirs.into_iter().find(|d| named(d)).ok_or_else(|| {
        Error::invalid(
            path,
            format!("neither a {own} directory nor a log dir holding one (a KRaft log dir)"),
        )
    })
}

/// The snapshots of `dir` by end offset.
fn snapshots(dir: &Path) -> Result<BTreeMap<i64, PathBuf>> {
    let mut out = BTreeMap::new();
    for p in crate::storage::files::list_dir(dir)? {
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if let FileKind::KraftSnapshot { end_offset, .. } = classify(&name) {
            out.insert(end_offset, p);
        }
    }
    Ok(out)
}

/// The `.log` segments of `dir` by base offset.
fn segments(dir: &Path) -> Result<Vec<(i64, PathBuf)>> {
    crate::storage::files::segment_logs(dir)
}

/// The segment holding `offset` (the last whose base offset is at or below it).
fn segment_of(segments: &[(i64, PathBuf)], offset: i64) -> Option<&Path> {
    segments
        .iter()
        .rev()
        .find(|(base, _)| *base <= offset)
        .or(segments.first())
        .map(|(_, p)| p.as_path())
}

/// The point of `time`: the offset of the first record written after it, found in the log's
/// record times and the snapshots' `lastContainedLogTimestamp`s. Exact when the records around
/// it are on disk; when they are not (gone from the log, between two snapshots), the newest
/// snapshot taken at or before `time`, with a warning giving the window the point lies in.
fn offset_at_time(
    dir: &Path,
    segments: &[(i64, PathBuf)],
    snapshots: &BTreeMap<i64, PathBuf>,
    time: i64,
) -> Result<(i64, Option<Finding>)> {
    let files: Vec<PathBuf> = segments.iter().map(|(_, p)| p.clone()).collect();
    let (mut first, mut first_after, mut end) = (None, None, None);
    replay(&files, Decoder::ClusterMetadata, 0, false, &mut |r| {
        first.get_or_insert((r.offset, r.timestamp));
        end = Some(r.offset + 1);
        if r.timestamp > time && first_after.is_none() {
            first_after = Some(r.offset);
        }
    })?;
    match (first, first_after, end) {
        // A log record written at or before the time, then one after it (or the log's end).
        (Some((first, _)), Some(after), _) if after > first => return Ok((after, None)),
        (Some(_), None, Some(end)) => return Ok((end, None)),
        // The log starts at offset 0 after the time: nothing was written before it.
        (Some((0, _)), _, _) => return Ok((0, None)),
        _ => {}
    }
    // What the log does not answer, the snapshots may: each holds the records below its end
    // offset, the last of them written at its header's time.
    let mut timed = Vec::new();
    for (&end_offset, path) in snapshots {
        let header = leading_control_value(path, ControlRecordType::SnapshotHeader)?;
        if let Some(ts) = header
            .as_deref()
            .and_then(snapshot_last_contained_timestamp)
        {
            timed.push((end_offset, ts));
        }
    }
    let Some(&(at, taken)) = timed.iter().rev().find(|(_, ts)| *ts <= time) else {
        let earliest = timed.first().map(|&(o, ts)| (o, ts)).or(first);
        let m = match earliest {
            Some((o, ts)) => format!(
                "nothing on disk is as old as the time asked for: the oldest point here is offset {o}, written {}",
                instant(ts)
            ),
            None => "no record and no snapshot with a time is on disk".to_owned(),
        };
        return Err(Error::invalid(dir, m));
    };
    // The next known time after the snapshot: a later snapshot's, or the log's first record.
    let next = timed
        .iter()
        .find(|(o, _)| *o > at)
        .copied()
        .into_iter()
        .chain(first.filter(|(o, _)| *o >= at))
        .min_by_key(|(o, _)| *o);
    let exact = match next {
        // The records from the snapshot's end on are on disk, the first written after the time.
        Some((o, _)) => o == at,
        // No later snapshot and no log: the snapshot is the log's end.
        None => first.is_none(),
    };
    let approximate = (!exact).then(|| {
        let (o, ts) = next.unwrap_or((at, taken));
        Finding::warning(
            "metadata.time-approximate",
            dir,
            format!(
                "the records written around that time are no longer on disk: the point lies between offset {at} (the snapshot's end, its last record written {}) and offset {o} (written {}); the image shown is the snapshot's",
                instant(taken),
                instant(ts)
            ),
        )
        .offset(at)
    });
    Ok((at, approximate))
}

/// Whether a finding is the replay's own (`metadata.*`: what the controller refuses, what
/// the image leaves out), not damage met reading the files.
pub fn replayed(f: &Finding) -> bool {
    f.check.starts_with("metadata.")
}

/// The image of `path` (a KRaft log dir or its `__cluster_metadata-0`) at `point`.
pub fn load(path: &Path, point: Point) -> Result<MetadataReport> {
    load_dir(&metadata_dir(path)?, point)
}

/// The image at `point` of `dir`, a `__cluster_metadata-0` directory whatever its name.
pub fn load_dir(dir: &Path, point: Point) -> Result<MetadataReport> {
    let dir = dir.to_path_buf();
    let segments = segments(&dir)?;
    let snapshots = snapshots(&dir)?;
    let mut findings = Vec::new();
    let limit = match point {
        Point::End => i64::MAX,
        Point::Offset(n) => n,
        Point::Time(t) => {
            let (at, approximate) = offset_at_time(&dir, &segments, &snapshots, t)?;
            findings.extend(approximate);
            at
        }
    };
    let snapshot = snapshots
        .range(..=limit)
        .next_back()
        .map(|(o, p)| (*o, p.clone()));
    let mut loader = Loader::default();
    let from = match &snapshot {
        Some((end, path)) => {
            findings.extend(replay(
                std::slice::from_ref(path),
                Decoder::ClusterMetadata,
                0,
                false,
                &mut |r| loader.take(path, r),
            )?);
            loader.end_of_snapshot();
            *end
        }
        None => 0,
    };
    let mut offset = from;
    let mut last_time = None;
    let mut first_log = None;
    let files: Vec<PathBuf> = segments.iter().map(|(_, p)| p.clone()).collect();
    if !files.is_empty() && from < limit {
        findings.extend(replay(
            &files,
            Decoder::ClusterMetadata,
            from,
            false,
            &mut |r| {
                if r.offset >= limit {
                    return;
                }
                first_log.get_or_insert(r.offset);
                offset = r.offset + 1;
                last_time = Some(r.timestamp);
                loader.take(segment_of(&segments, r.offset).unwrap_or(&dir), r);
            },
        )?);
    }
    let missing_to = first_log.or((limit != i64::MAX).then_some(limit));
    if let Some(to) = missing_to.filter(|to| *to > from) {
        findings.push(Finding::warning(
            "metadata.gap",
            &dir,
            format!(
                "records {from} to {} are in no snapshot and no log segment here: the image is that of offset {from}{}",
                to - 1,
                if first_log.is_some() { ", then the log's records from offset ".to_owned() + &to.to_string() } else { String::new() }
            ),
        ));
    }
    if let Some(open) = loader.pending.take() {
        let m = format!(
            "a metadata transaction begun at offset {} has not ended at this point: its {} record(s) are not in the image (the loader applies them at END_TRANSACTION_RECORD)",
            open.begin,
            open.records.len()
        );
        findings.push(Finding::warning("metadata.open-transaction", &dir, m).offset(open.begin));
    }
    findings.extend(loader.findings);
    Ok(MetadataReport {
        dir,
        snapshot: snapshot.map(|(_, p)| p),
        offset,
        last_record_timestamp: last_time,
        image: loader.image,
        findings,
    })
}

/// An open metadata transaction: its records, applied at its end.
#[derive(Debug)]
struct Transaction {
    begin: i64,
    records: Vec<(PathBuf, i64, Value)>,
}

#[derive(Debug, Default)]
struct Loader {
    image: Image,
    pending: Option<Transaction>,
    findings: Vec<Finding>,
}

impl Loader {
    /// One record of a snapshot or the log; control records are the raft layer's.
    fn take(&mut self, file: &Path, r: &ReplayedRecord<'_>) {
        if r.control.is_some() {
            return;
        }
        // The one rule of what the controller's serde refuses (`verify --deep`'s too).
        let verdict = loader_verdict(Decoder::ClusterMetadata, None, r.value_bytes);
        if let Some(LoaderVerdict::Rejects(m)) = verdict {
            let f = Finding::error("metadata.undecodable", file, m);
            self.findings.push(f.offset(r.offset));
        } else if let Some(v) = r.value {
            self.record(file, r.offset, v);
        }
    }

    fn record(&mut self, file: &Path, offset: i64, v: &Value) {
        let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
        let misplaced = |what: &str| {
            Finding::error(
                "metadata.transaction",
                file,
                format!("{kind} {what}: the loader throws on it (a controller stops, a broker reports a metadata loading fault)"),
            )
            .offset(offset)
        };
        match kind {
            "BEGIN_TRANSACTION_RECORD" => {
                if self.pending.is_some() {
                    self.findings.push(misplaced("inside a transaction"));
                } else {
                    self.pending = Some(Transaction {
                        begin: offset,
                        records: Vec::new(),
                    });
                }
            }
            "END_TRANSACTION_RECORD" | "ABORT_TRANSACTION_RECORD" => match self.pending.take() {
                None => self
                    .findings
                    .push(misplaced("without a BEGIN_TRANSACTION_RECORD")),
                Some(t) if kind == "END_TRANSACTION_RECORD" => {
                    for (file, offset, v) in t.records {
                        self.apply(&file, offset, &v);
                    }
                }
                Some(_) => {}
            },
            _ => match &mut self.pending {
                Some(t) => t.records.push((file.to_path_buf(), offset, v.clone())),
                None => self.apply(file, offset, v),
            },
        }
    }

    /// A snapshot holds no open transaction: what one left open is dropped.
    fn end_of_snapshot(&mut self) {
        self.pending = None;
    }

    fn apply(&mut self, file: &Path, offset: i64, v: &Value) {
        for r in self.image.apply(v) {
            let f = if r.throws {
                Finding::error(
                    r.check,
                    file,
                    format!(
                        "{}: a controller replaying it stops (its replay faults are fatal)",
                        r.message
                    ),
                )
            } else {
                Finding::warning(r.check, file, r.message)
            };
            self.findings.push(f.offset(offset));
        }
    }
}

/// One leaf of the image's tree: its path (`["topics", "orders", "partitions", "0",
/// "leader"]`) and value, as `kafka-metadata-shell` lays the image out.
pub type Entry = (Vec<String>, String);

fn list(v: &[i64]) -> String {
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(","))
}

fn endpoints(e: &[image::Endpoint]) -> String {
    let items: Vec<String> = e
        .iter()
        .map(|e| {
            format!(
                "{}://{}:{} ({})",
                e.name, e.host, e.port, e.security_protocol
            )
        })
        .collect();
    items.join(", ")
}

fn supported(f: &[image::SupportedFeature]) -> String {
    let items: Vec<String> = f
        .iter()
        .map(|f| {
            format!(
                "{} {}-{}",
                f.name, f.min_supported_version, f.max_supported_version
            )
        })
        .collect();
    items.join(", ")
}

impl Image {
    /// The image as leaves of a tree, in the order the tree shows them.
    pub fn entries(&self) -> Vec<Entry> {
        let mut out: Vec<Entry> = Vec::new();
        let mut put = |path: &[&str], v: String| {
            out.push((path.iter().map(|s| (*s).to_owned()).collect(), v));
        };
        if let Some(level) = self.metadata_version {
            let name = self
                .metadata_version_name
                .map_or(String::new(), |n| format!(" ({n})"));
            put(
                &["features", names::METADATA_VERSION],
                format!("{level}{name}"),
            );
        }
        for f in self.features.values() {
            put(&["features", &f.name], f.level.to_string());
        }
        for b in self.brokers.values() {
            let id = b.broker_id.to_string();
            let p = |k: &'static str| ["brokers", id.as_str(), k];
            put(&p("brokerEpoch"), b.broker_epoch.to_string());
            put(&p("incarnationId"), b.incarnation_id.clone());
            put(&p("endpoints"), endpoints(&b.endpoints));
            put(&p("rack"), b.rack.clone().unwrap_or_else(|| "null".into()));
            put(&p("fenced"), b.fenced.to_string());
            put(
                &p("inControlledShutdown"),
                b.in_controlled_shutdown.to_string(),
            );
            if b.is_migrating_zk_broker {
                put(&p("isMigratingZkBroker"), "true".into());
            }
            if !b.log_dirs.is_empty() {
                put(&p("logDirs"), format!("[{}]", b.log_dirs.join(",")));
            }
            if !b.supported_features.is_empty() {
                put(&p("supportedFeatures"), supported(&b.supported_features));
            }
        }
        for c in self.controllers.values() {
            let id = c.controller_id.to_string();
            let p = |k: &'static str| ["controllers", id.as_str(), k];
            put(&p("incarnationId"), c.incarnation_id.clone());
            put(&p("endpoints"), endpoints(&c.endpoints));
            if !c.supported_features.is_empty() {
                put(&p("supportedFeatures"), supported(&c.supported_features));
            }
        }
        let mut topics: Vec<&image::Topic> = self.topics.values().collect();
        topics.sort_by(|a, b| a.name.cmp(&b.name));
        for t in topics {
            put(&["topics", &t.name, "topicId"], t.topic_id.clone());
            for p in t.partitions.values() {
                let n = p.partition.to_string();
                let k = |k: &'static str| ["topics", t.name.as_str(), "partitions", n.as_str(), k];
                put(&k("replicas"), list(&p.replicas));
                put(&k("isr"), list(&p.isr));
                // Lists that are usually empty are left out while they are.
                for (key, v) in [
                    ("eligibleLeaderReplicas", &p.eligible_leader_replicas),
                    ("lastKnownElr", &p.last_known_elr),
                    ("addingReplicas", &p.adding_replicas),
                    ("removingReplicas", &p.removing_replicas),
                ] {
                    if !v.is_empty() {
                        put(&k(key), list(v));
                    }
                }
                put(
                    &k("leader"),
                    p.leader.map_or("none".to_owned(), |l| l.to_string()),
                );
                put(&k("leaderEpoch"), p.leader_epoch.to_string());
                put(&k("partitionEpoch"), p.partition_epoch.to_string());
                put(
                    &k("leaderRecoveryState"),
                    p.leader_recovery_state.to_owned(),
                );
                if !p.directories.is_empty() {
                    put(&k("directories"), format!("[{}]", p.directories.join(",")));
                }
            }
        }
        for r in self.configs.values() {
            let rtype = r.resource_type.to_lowercase();
            let name = if r.resource_name.is_empty() {
                "<default>"
            } else {
                &r.resource_name
            };
            for (k, v) in &r.configs {
                put(&["configs", &rtype, name, k], v.clone());
            }
        }
        for q in self.client_quotas.values() {
            for (k, v) in &q.quotas {
                put(&["clientQuotas", &q.entity, k], v.to_string());
            }
        }
        for a in self.acls.values() {
            let v = format!(
                "{} {} from host {} {} on {} {} ({})",
                a.permission_type,
                a.principal,
                a.host,
                a.operation,
                a.resource_type,
                a.resource_name,
                a.pattern_type
            );
            put(&["acls", &a.id], v);
        }
        if let Some(p) = &self.producer_ids {
            put(
                &["producerIds", "nextProducerId"],
                p.next_producer_id.to_string(),
            );
            put(&["producerIds", "brokerId"], p.broker_id.to_string());
            put(&["producerIds", "brokerEpoch"], p.broker_epoch.to_string());
        }
        for u in &self.scram_users {
            put(&["scramUsers", &u.name, &u.mechanism], String::new());
        }
        for t in &self.delegation_token_ids {
            put(&["delegationTokens", t], String::new());
        }
        out
    }
}

/// One difference between two images.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// `/topics/orders/partitions/0/leader`.
    pub path: String,
    /// Null: added. (`oldValue`: `before` is an offset in other commands.)
    #[serde(rename = "oldValue")]
    pub before: Option<String>,
    /// Null: removed.
    #[serde(rename = "newValue")]
    pub after: Option<String>,
}

/// The leaves that differ between `a` and `b`, in `b`'s tree order (removed ones where they
/// stood in `a`).
pub fn diff(a: &Image, b: &Image) -> Vec<Change> {
    let before: BTreeMap<Vec<String>, String> = a.entries().into_iter().collect();
    let after: BTreeMap<Vec<String>, String> = b.entries().into_iter().collect();
    let path = |p: &[String]| format!("/{}", p.join("/"));
    let mut out: Vec<Change> = Vec::new();
    for (p, v) in a.entries() {
        if !after.contains_key(&p) {
            out.push(Change {
                path: path(&p),
                before: Some(v),
                after: None,
            });
        }
    }
    for (p, v) in b.entries() {
        match before.get(&p) {
            Some(old) if *old == v => {}
            old => out.push(Change {
                path: path(&p),
                before: old.cloned(),
                after: Some(v),
            }),
        }
    }
    out
}
