//! `kseg tiered`: a partition's remote tier reconciled with what the broker recorded about it.
//! The objects a store holds (listed through the partition's [`Layout`]) are set against the
//! segments `__remote_log_metadata` in the log dir describes, and against the local log that
//! should continue where the remote tier ends: copies never finished, deletes never finished,
//! objects no metadata names, metadata whose objects are gone, gaps and overlaps, leader-epoch
//! chains that do not join, and (`deep`) each remote segment's batches and offset index.

mod deep;
pub mod metadata;
mod one_log;
pub mod tier;

pub use one_log::{show_remote, show_segment, RemoteShown};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::format::checkpoint::uuid_to_base64;
use crate::format::checkpoint::PartitionMetadata;
use crate::format::names::{parse_partition_dir, PARTITION_METADATA_FILE_NAME};
use crate::ops::finding::{Finding, Severity};
use crate::ops::partition::{LogStart, LogStartSource};
use crate::storage::files::{read_state, StateFile};
use crate::storage::store::{self, ObjectInfo, RemoteOptions, Store, LINK_TO_NOTHING};
use crate::storage::tiered::{self, Layout, RemotePartition, SegmentFile};
use metadata::SegmentMetadata;

/// What `kseg tiered` is asked.
#[derive(Debug, Clone, Default)]
pub struct TieredOptions {
    /// The storage root: a URL or a local directory.
    pub remote: String,
    pub store: RemoteOptions,
    /// `--remote-layout`; detected when None.
    pub layout: Option<String>,
    /// Walk every remote segment's batches and check its offset index.
    pub deep: bool,
    /// `--remote-key`: private keys (with the key id each answers to, or any) that unwrap
    /// encrypted segments' data keys.
    pub keys: Vec<(Option<String>, PathBuf)>,
}

/// One remote segment, as the metadata and the store describe it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteSegmentReport {
    pub segment_id: String,
    pub start_offset: i64,
    /// From the metadata (else, with `deep`, from the log): null when unknown.
    pub end_offset: Option<i64>,
    /// The metadata's last state for it; null when no metadata names it.
    pub state: Option<String>,
    /// Whether the broker serves its offsets from it: its copy finished, or (no metadata
    /// naming it) the listing is taken as the tier.
    pub served: bool,
    /// The segment's `.log` object (its URL); null when missing.
    pub log_object: Option<String>,
    /// The `.log` object's size in bytes.
    pub size: Option<u64>,
}

/// An object that no segment accounts for.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Orphan {
    pub object: String,
    pub size: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TieredPartition {
    pub topic: String,
    pub partition: i32,
    pub topic_id: Option<String>,
    /// The first local segment's base offset: where the remote tier must reach.
    pub local_log_start_offset: Option<i64>,
    /// Where `local_log_start_offset` comes from (null with it).
    pub local_log_start_offset_source: Option<LogStartSource>,
    pub segments: Vec<RemoteSegmentReport>,
    pub orphans: Vec<Orphan>,
    /// The orphans' bytes, summed.
    pub orphan_size: u64,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TieredReport {
    pub remote: String,
    pub layout: String,
    /// Records read from `__remote_log_metadata` (0: none in the log dir; segments then come
    /// from the listing alone).
    pub metadata_record_count: u64,
    pub partitions: Vec<TieredPartition>,
}

impl TieredReport {
    pub fn count(&self, severity: Severity) -> usize {
        self.partitions
            .iter()
            .flat_map(|p| &p.findings)
            .filter(|f| f.severity == severity)
            .count()
    }
}

/// The partition directories `path` names: itself, or a log dir's; and the log dir.
fn local_partitions(path: &Path) -> Result<(PathBuf, Vec<PathBuf>)> {
    let is_partition = |p: &Path| {
        dir_name(p)
            .and_then(|n| parse_partition_dir(&n))
            .is_some_and(|d| Some(d.dir_name()) == dir_name(p) && d.topic != metadata::TOPIC)
    };
    if !path.is_dir() {
        return Err(Error::invalid(
            path,
            "not a directory (a partition directory or a log dir)",
        ));
    }
    if is_partition(path) {
        // `.`'s log dir is only named by `..`; `orders-0`'s parent is the empty path.
        let log_dir = match (path.file_name(), path.parent()) {
            (None, _) => path.join(".."),
            (Some(_), Some(p)) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        return Ok((log_dir, vec![path.to_path_buf()]));
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| Error::io(path, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && is_partition(p))
        .collect();
    dirs.sort();
    Ok((path.to_path_buf(), dirs))
}

/// `partition.metadata`'s topic id, Kafka's base64 form.
fn topic_id(dir: &Path) -> Option<String> {
    let path = dir.join(PARTITION_METADATA_FILE_NAME);
    let bytes = read_state(&path, StateFile::Properties).ok()?;
    let m = PartitionMetadata::decode(&bytes, &path.display().to_string()).ok()?;
    (m.topic_id != [0; 16]).then(|| uuid_to_base64(&m.topic_id))
}

/// The local log's start offset as the broker loads it (the one rule every command uses:
/// the checkpoint's entry, never below the first segment); `None` without a segment.
pub(super) fn local_log_start(dir: &Path) -> Result<Option<LogStart>> {
    match crate::storage::files::segment_logs(dir)?.first() {
        Some((base, _)) => Ok(Some(crate::ops::partition::loaded_log_start(dir, *base)?)),
        None => Ok(None),
    }
}

/// The directory `dir`'s own name, which `.` and `..` do not give.
fn dir_name(dir: &Path) -> Option<String> {
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    match name(dir) {
        Some(n) => Some(n),
        None => name(&std::fs::canonicalize(dir).ok()?),
    }
}

/// The partition the directory `dir` holds, as its remote tier names it.
fn remote_partition(dir: &Path) -> Option<RemotePartition> {
    let pd = parse_partition_dir(&dir_name(dir)?)?;
    Some(RemotePartition {
        topic: pd.topic.clone(),
        partition: pd.partition,
        topic_id: topic_id(dir),
    })
}

/// What the metadata says about `p`'s segments (of its topic id, when known).
fn partition_metadata<'m>(
    metadata: &'m metadata::Segments,
    p: &RemotePartition,
) -> Vec<&'m SegmentMetadata> {
    metadata
        .values()
        .filter(|m| m.topic == p.topic && m.partition == p.partition)
        .filter(|m| p.topic_id.as_ref().is_none_or(|id| *id == m.topic_id))
        .collect()
}

/// A log dir's partition directories (or the one `path` names) and their remote tier: the
/// store listed once, `__remote_log_metadata` read once, the layout detected or named.
struct Tier {
    log_dir: PathBuf,
    dirs: Vec<PathBuf>,
    store: Arc<dyn Store>,
    objects: Vec<ObjectInfo>,
    not_objects: Vec<store::NotObject>,
    /// `not_objects` as listing entries, for the layout to group by partition and segment as
    /// it groups objects.
    not_objects_as_listed: Vec<ObjectInfo>,
    metadata: metadata::Metadata,
    layout: Arc<dyn Layout>,
}

/// What the metadata and the store hold of one partition directory's partition, gathered once
/// for the reconciliation and the showing of its segments alike.
struct PartitionTier<'t> {
    dir: &'t Path,
    p: RemotePartition,
    /// The metadata of its segments.
    ours: Vec<&'t SegmentMetadata>,
    /// Where its metadata is, when the log dir does not speak for it.
    elsewhere: Option<metadata::Elsewhere>,
    listing: tiered::PartitionListing,
    /// The entries that are no object, grouped as `listing` is.
    odd: tiered::PartitionListing,
}

impl PartitionTier<'_> {
    /// Whether the metadata or the store knows the partition at all.
    fn known(&self) -> bool {
        let held = |l: &tiered::PartitionListing| !l.segments.is_empty() || !l.strays.is_empty();
        !self.ours.is_empty() || held(&self.listing) || held(&self.odd)
    }
}

impl Tier {
    /// `empty_is_kafkas`: a store that lists nothing is taken to be in Kafka's own layout (what
    /// the metadata expects, to reconcile with) instead of being refused as no layout known.
    fn open(path: &Path, opts: &TieredOptions, empty_is_kafkas: bool) -> Result<Tier> {
        let (log_dir, dirs) = local_partitions(path)?;
        let store = store::open(&opts.remote, &opts.store)?;
        let store::Listing {
            objects,
            not_objects,
        } = store.list("")?;
        let not_objects_as_listed = not_objects
            .iter()
            .map(|n| ObjectInfo {
                key: n.key.clone(),
                size: 0,
            })
            .collect();
        let metadata = metadata::read(&log_dir)?;
        let layout: Arc<dyn Layout> =
            if objects.is_empty() && opts.layout.is_none() && empty_is_kafkas {
                Arc::new(tiered::LocalTiered)
            } else {
                let keys = tiered::Aiven::load_keys(&opts.keys)?;
                Arc::from(tiered::detect(
                    store.as_ref(),
                    &objects,
                    opts.layout.as_deref(),
                    &keys,
                )?)
            };
        Ok(Tier {
            log_dir,
            dirs,
            store,
            objects,
            not_objects,
            not_objects_as_listed,
            metadata,
            layout,
        })
    }

    /// What the tier holds of the partition directory `dir`; None when its name is no
    /// partition's.
    fn of<'t>(&'t self, dir: &'t Path) -> Option<PartitionTier<'t>> {
        let p = remote_partition(dir)?;
        let ours = partition_metadata(&self.metadata.segments, &p);
        let elsewhere = self.metadata.elsewhere(&p, &ours);
        Some(PartitionTier {
            dir,
            listing: self.layout.partition(&self.objects, &p),
            odd: self.layout.partition(&self.not_objects_as_listed, &p),
            p,
            ours,
            elsewhere,
        })
    }
}

/// Reconciles the remote tier of the partition directory (or every partition of the log dir)
/// `path` with the store `opts.remote`.
pub fn reconcile(path: &Path, opts: &TieredOptions) -> Result<TieredReport> {
    let tier = Tier::open(path, opts, true)?;
    let mut partitions = Vec::new();
    for dir in &tier.dirs {
        let Some(t) = tier.of(dir).filter(PartitionTier::known) else {
            continue;
        };
        partitions.push(reconcile_partition(
            &tier,
            &t,
            local_log_start(dir)?,
            if opts.deep {
                Reading::Deep
            } else {
                Reading::Listing
            },
            true,
        )?);
    }
    Ok(TieredReport {
        remote: opts.remote.clone(),
        layout: tier.layout.name().to_string(),
        metadata_record_count: tier.metadata.records,
        partitions,
    })
}

/// What reconciling a partition's remote tier reads of its segments.
pub(super) enum Reading<'a> {
    /// The store's listing and the metadata only.
    Listing,
    /// Also the sizes of the segments' logs shown to a command, by segment id: the size of an
    /// Aiven segment is in its manifest, which showing its log read.
    Shown(&'a BTreeMap<String, u64>),
    /// Every segment read whole (`--deep`): framing, CRCs, indexes.
    Deep,
}

/// The reconciliation of a partition's remote tier `t` with its local log, which starts at
/// `local_start`. `say_elsewhere`: a partition whose metadata is not in the log dir is a
/// finding (`tiered`'s; the one-log commands say it in a notice, since the broker's view of the
/// partition is whole).
fn reconcile_partition(
    tier: &Tier,
    t: &PartitionTier<'_>,
    local_start: Option<LogStart>,
    reading: Reading<'_>,
    say_elsewhere: bool,
) -> Result<TieredPartition> {
    let (store, layout, objects) = (&tier.store, tier.layout.as_ref(), &tier.objects[..]);
    let (p, meta, listing) = (&t.p, &t.ours[..], &t.listing);
    let mut not_objects = NotObjects::of(&t.odd, &tier.not_objects, &listing.strays);
    let have_metadata = t.elsewhere.is_none();
    let mut findings = Vec::new();
    findings.extend(
        tier.metadata
            .elsewhere_to_say(t.elsewhere)
            .filter(|_| say_elsewhere)
            .map(|e| metadata_elsewhere(&tier.log_dir, t.dir, e)),
    );
    let url = |key: &str| store.name(key);
    let by_id: BTreeMap<&str, &SegmentMetadata> =
        meta.iter().map(|m| (m.segment_id.as_str(), *m)).collect();
    // A store that lists nothing at all is more likely a URL that names the wrong place
    // than a tier whose every object is gone: said beside each object missing.
    let nothing_listed = if objects.is_empty() {
        " (the store lists no object at all: is the URL's prefix the tier's root?)"
    } else {
        ""
    };
    let mut orphans: Vec<Orphan> = Vec::new();
    for o in &listing.strays {
        orphans.push(Orphan {
            object: url(&o.key),
            size: o.size,
        });
        findings.push(Finding::warning(
            "tiered.orphan",
            store.path_of(&o.key),
            format!(
                "object of {} bytes under the partition's prefix is no remote segment's (its key \
                 names none): the broker never reads nor deletes it, it only costs storage",
                o.size
            ),
        ));
    }
    let mut segments = Vec::new();
    // Listed segments: with metadata, each must be named by it; without, each stands alone.
    for seg in &listing.segments {
        let m = by_id.get(seg.segment_id.as_str());
        if have_metadata && m.is_none_or(|m| m.state == "DELETE_SEGMENT_FINISHED") {
            let bytes: u64 = seg.files.values().map(|o| o.size).sum();
            for o in seg.files.values() {
                orphans.push(Orphan {
                    object: url(&o.key),
                    size: o.size,
                });
            }
            let why = match m {
                Some(_) => "its deletion finished in __remote_log_metadata",
                None => "no __remote_log_metadata record names it",
            };
            findings.push(Finding::warning(
                "tiered.orphan",
                store.path_of(seg.files.values().next().map_or("", |o| o.key.as_str())),
                format!(
                    "remote segment {} (start offset {}, {} object(s), {bytes} bytes) is an orphan: \
                     {why}; the broker never reads nor deletes it, it only costs storage",
                    seg.segment_id,
                    seg.start_offset,
                    seg.files.len()
                ),
            )
            .offset(seg.start_offset));
            continue;
        }
        let missing: Vec<SegmentFile> = layout
            .required()
            .into_iter()
            .filter(|f| !seg.files.contains_key(f))
            .collect();
        let served = m.is_none_or(|m| m.served());
        for f in &missing {
            let key = layout.key(objects, p, seg.start_offset, &seg.segment_id, *f);
            findings.push(
                Finding::error_if(
                    served,
                    "tiered.object-missing",
                    store.path_of(&key),
                    format!(
                    "the {} object of remote segment {} is {}: a fetch the broker serves from it \
                     fails",
                    f.suffix(),
                    seg.segment_id,
                    not_objects
                        .instead(&key)
                        .unwrap_or_else(|| format!("missing{nothing_listed}"))
                ),
                )
                .offset(seg.start_offset),
            );
        }
        let mut end_offset = m.map(|m| m.end_offset);
        // A log that cannot be read without a missing object is that object's finding.
        let readable = layout.log_files().iter().all(|f| seg.files.contains_key(f));
        let mut size = layout.listed_log_size(seg).or_else(|| match reading {
            Reading::Shown(sizes) => sizes.get(&seg.segment_id).copied(),
            _ => None,
        });
        if matches!(reading, Reading::Deep) && readable {
            let walked = deep::check(Arc::clone(store), layout, seg, &mut findings)?;
            size = walked.size;
            if let (Some(m), Some(last), true) = (m, walked.last_offset, walked.complete) {
                // Kafka's metadata names the segment's base offset and the next segment's base
                // offset - 1 (`RemoteLogManager.copyLogSegment`): compaction can leave the
                // batches strictly inside that range, never outside it.
                let first = walked.first_offset.unwrap_or(last);
                if first < m.start_offset || last > m.end_offset {
                    findings.push(
                        Finding::error(
                            "tiered.offsets-mismatch",
                            store.path_of(seg.log().map_or("", |o| o.key.as_str())),
                            format!(
                            "remote segment {} holds offsets {}..{last} but __remote_log_metadata \
                             says {}..{}: the broker fetches from the wrong segment",
                            seg.segment_id,
                            walked.first_offset.unwrap_or(last),
                            m.start_offset,
                            m.end_offset
                        ),
                        )
                        .offset(m.start_offset),
                    );
                }
            }
            end_offset = end_offset.or(walked.last_offset);
        }
        // `segmentSizeInBytes` is the size of the local segment the broker copied: another
        // size is another segment, cut short or replaced, whatever its batches say.
        if let (Some(m), Some(size)) = (m, size) {
            if m.size_bytes >= 0 && size != m.size_bytes as u64 {
                findings.push(
                    Finding::error_if(
                        served,
                        "tiered.size-mismatch",
                        store.path_of(seg.log().map_or("", |o| o.key.as_str())),
                        format!(
                            "remote segment {} holds {size} bytes but __remote_log_metadata says \
                         the segment copied held {} (segmentSizeInBytes): it is not that \
                         segment (cut short, or replaced), and the broker's fetches of offsets \
                         {}..{} read other bytes or none",
                            seg.segment_id, m.size_bytes, m.start_offset, m.end_offset
                        ),
                    )
                    .offset(m.start_offset),
                );
            }
        }
        segments.push(RemoteSegmentReport {
            segment_id: seg.segment_id.clone(),
            start_offset: seg.start_offset,
            end_offset,
            state: m.map(|m| m.state.clone()),
            served,
            log_object: seg.log().map(|o| url(&o.key)),
            size: seg.log().map(|o| o.size),
        });
    }
    // Segments the metadata names and the store does not hold.
    let listed: BTreeSet<&str> = listing
        .segments
        .iter()
        .map(|s| s.segment_id.as_str())
        .collect();
    for m in meta
        .iter()
        .filter(|m| !listed.contains(m.segment_id.as_str()))
    {
        if m.state == "DELETE_SEGMENT_FINISHED" {
            continue;
        }
        let key = layout.key(objects, p, m.start_offset, &m.segment_id, SegmentFile::Log);
        let served = m.served();
        let what = if served {
            "a fetch of these offsets fails: the broker serves them from this segment"
        } else {
            "never served"
        };
        findings.push(
            Finding::error_if(
                served,
                "tiered.object-missing",
                store.path_of(&key),
                format!(
                    "remote segment {} (offsets {}..{}, {}) has no objects{}: {what}",
                    m.segment_id,
                    m.start_offset,
                    m.end_offset,
                    m.state,
                    not_objects.instead(&key).map_or_else(
                        || nothing_listed.to_string(),
                        |w| format!(" (its .log is {w})")
                    )
                ),
            )
            .offset(m.start_offset),
        );
        segments.push(RemoteSegmentReport {
            segment_id: m.segment_id.clone(),
            start_offset: m.start_offset,
            end_offset: Some(m.end_offset),
            state: Some(m.state.clone()),
            served,
            log_object: None,
            size: None,
        });
    }
    for m in meta {
        let (check, what) = match m.state.as_str() {
            "COPY_SEGMENT_STARTED" => (
                "tiered.copy-unfinished",
                "its copy started and never finished: the broker never serves it, and what was \
                 copied stays until retention breaches the segment",
            ),
            "DELETE_SEGMENT_STARTED" => (
                "tiered.delete-unfinished",
                "its deletion started and never finished: the broker retries it at the next \
                 cleanup pass",
            ),
            _ => continue,
        };
        findings.push(
            Finding::warning(
                check,
                m.source.clone(),
                format!(
                    "remote segment {} (offsets {}..{}): {what}",
                    m.segment_id, m.start_offset, m.end_offset
                ),
            )
            .offset(m.source_offset),
        );
    }
    // What is left of the entries that are no object: each its own finding, an error where
    // the broker's fetch of a segment it serves would open it.
    let serves = |id: &str| match by_id.get(id) {
        Some(m) => m.served(),
        None => !have_metadata,
    };
    for (key, (what, segment)) in not_objects.left {
        let (serious, whose) = match segment {
            // `LocalTieredStorage` asks whether an optional file exists (`File.exists`, which
            // a link to nothing does not), and the broker's index cache takes a missing
            // transaction index as an empty one.
            Some((id, file)) if serves(&id) && file.is_optional() && what == LINK_TO_NOTHING => (
                false,
                format!(
                    "it stands for the {} object of remote segment {id}: the broker takes the \
                     segment as having none",
                    file.suffix()
                ),
            ),
            Some((id, file)) if serves(&id) => (
                true,
                format!(
                    "it stands for the {} object of remote segment {id}, which the broker \
                     serves: a fetch from it fails or blocks",
                    file.suffix()
                ),
            ),
            Some((id, file)) => (
                false,
                format!(
                    "it stands for the {} object of remote segment {id}, which the broker does \
                     not serve",
                    file.suffix()
                ),
            ),
            None => (false, "no remote segment's object is named so".to_string()),
        };
        findings.push(Finding::error_if(
            serious,
            "tiered.not-an-object",
            store.path_of(&key),
            format!("{what}, not an object: kseg read nothing from it; {whose}"),
        ));
    }
    segments.sort_by(|a, b| (a.start_offset, &a.segment_id).cmp(&(b.start_offset, &b.segment_id)));
    let local_offset = local_start.map(|l| l.offset);
    check_continuity(store.as_ref(), &segments, local_offset, meta, &mut findings);
    orphans.sort_by(|a, b| a.object.cmp(&b.object));
    Ok(TieredPartition {
        topic: p.topic.clone(),
        partition: p.partition,
        topic_id: p.topic_id.clone(),
        local_log_start_offset: local_offset,
        local_log_start_offset_source: local_start.map(|l| l.source),
        orphan_size: orphans.iter().map(|o| o.size).sum(),
        orphans,
        segments,
        findings,
    })
}

/// The log dir holds metadata, but not the partition directory `dir`'s (`e`): nothing can be
/// said of which of its segments the broker serves, so none is called an orphan.
fn metadata_elsewhere(log_dir: &Path, dir: &Path, e: metadata::Elsewhere) -> Finding {
    let file = match e {
        metadata::Elsewhere::Partition(n) => log_dir.join(format!("{}-{n}", metadata::TOPIC)),
        metadata::Elsewhere::Unknown => dir.join(PARTITION_METADATA_FILE_NAME),
    };
    Finding::warning(
        "tiered.metadata-elsewhere",
        file,
        format!(
            "{e}: the partition's remote segments are those the store lists, each taken as \
             served; orphans and unfinished copies or deletions cannot be told (the log dir of \
             the broker that hosts its metadata partition can)"
        ),
    )
}

/// The entries of a partition's part of a filesystem tree that are no object (a FIFO), by key:
/// what each is, and the segment and file whose key it has, if any; and the keys of the
/// partition's objects that belong to no segment, among which a folder may stand at a missing
/// object's key.
struct NotObjects {
    left: BTreeMap<String, (&'static str, Option<SegmentKey>)>,
    strays: Vec<String>,
}

/// A segment's id, and one of its files.
type SegmentKey = (String, SegmentFile);

impl NotObjects {
    /// Those of `all` the layout's listing `odd` of them puts in the partition, beside the
    /// partition's `strays`.
    fn of(odd: &tiered::PartitionListing, all: &[store::NotObject], strays: &[ObjectInfo]) -> Self {
        let what = |key: &str| {
            all.iter()
                .find(|n| n.key == key)
                .expect("the listing grouped is of these entries")
                .what
        };
        let mut left = BTreeMap::new();
        for seg in &odd.segments {
            for (file, o) in &seg.files {
                let of = Some((seg.segment_id.clone(), *file));
                left.insert(o.key.clone(), (what(&o.key), of));
            }
        }
        for o in &odd.strays {
            left.insert(o.key.clone(), (what(&o.key), None));
        }
        NotObjects {
            left,
            strays: strays.iter().map(|o| o.key.clone()).collect(),
        }
    }

    /// What stands at the key of an object that is not in the store, if anything does: an
    /// entry that is no object (then reported with the object, not again on its own), or a
    /// folder: objects whose keys go on past it (a directory, in a filesystem tree; they stay
    /// orphans, which nothing reads).
    fn instead(&mut self, key: &str) -> Option<String> {
        if let Some((what, _)) = self.left.remove(key) {
            return Some(format!("{what}, not an object (kseg read nothing from it)"));
        }
        let folder = format!("{key}/");
        let under = self
            .strays
            .iter()
            .filter(|k| k.starts_with(&folder))
            .count();
        (under > 0).then(|| format!("a folder holding {under} object(s), not an object"))
    }
}

/// Gaps and overlaps between the served remote segments (copied, present), and between the
/// remote tier's end and the local log's start; leader-epoch chains that do not join.
fn check_continuity(
    store: &dyn Store,
    segments: &[RemoteSegmentReport],
    local_start: Option<i64>,
    meta: &[&SegmentMetadata],
    findings: &mut Vec<Finding>,
) {
    let served: Vec<&RemoteSegmentReport> = segments.iter().filter(|s| s.served).collect();
    let name = |s: &RemoteSegmentReport| {
        s.log_object
            .clone()
            .map_or_else(|| store.path_of(&s.segment_id), PathBuf::from)
    };
    let mut reach: Option<(i64, &RemoteSegmentReport)> = None;
    for s in &served {
        let Some(end) = s.end_offset else {
            // Without an end offset (no metadata, no `deep` walk) nothing can be said.
            reach = None;
            continue;
        };
        if let Some((prev_end, prev)) = reach {
            if s.start_offset > prev_end + 1 {
                findings.push(
                    Finding::error(
                        "tiered.gap",
                        name(s),
                        format!(
                            "offsets {}..{} are in no remote segment: segment {} ends at {prev_end} \
                             and {} starts at {}; a consumer fetching them gets an offset-out-of-range \
                             error or skips them",
                            prev_end + 1,
                            s.start_offset - 1,
                            prev.segment_id,
                            s.segment_id,
                            s.start_offset
                        ),
                    )
                    .offset(prev_end + 1),
                );
            } else if s.start_offset <= prev_end {
                findings.push(
                    Finding::warning(
                        "tiered.overlap",
                        name(s),
                        format!(
                            "remote segments {} (to {prev_end}) and {} (from {}) overlap: the broker \
                             serves the overlapping offsets from whichever its leader-epoch lookup finds",
                            prev.segment_id, s.segment_id, s.start_offset
                        ),
                    )
                    .offset(s.start_offset),
                );
            }
        }
        if reach.is_none_or(|(e, _)| end > e) {
            reach = Some((end, s));
        }
    }
    if let (Some((end, last)), Some(local)) = (reach, local_start) {
        if local > end + 1 {
            findings.push(
                Finding::error(
                    "tiered.gap",
                    name(last),
                    format!(
                        "offsets {}..{} are neither remote nor local: the remote tier ends at {end} \
                         and the local log starts at {local}",
                        end + 1,
                        local - 1
                    ),
                )
                .offset(end + 1),
            );
        }
    }
    // Each finished segment's epochs must not go back below the epoch its predecessor ended in.
    let mut finished: Vec<&&SegmentMetadata> = meta.iter().filter(|m| m.served()).collect();
    finished.sort_by_key(|m| m.start_offset);
    for w in finished.windows(2) {
        let (a, b) = (w[0], w[1]);
        let (Some(&(last_epoch, _)), Some(&(first_epoch, _))) =
            (a.leader_epochs.last(), b.leader_epochs.first())
        else {
            continue;
        };
        if first_epoch < last_epoch {
            findings.push(
                Finding::warning(
                    "tiered.epoch-chain",
                    b.source.clone(),
                    format!(
                        "remote segment {} starts in leader epoch {first_epoch}, below epoch \
                         {last_epoch} that segment {} ends in: the epoch chain does not join, and \
                         the broker deletes segments outside the leader's epoch lineage",
                        b.segment_id, a.segment_id
                    ),
                )
                .offset(b.source_offset),
            );
        }
    }
}
