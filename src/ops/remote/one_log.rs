//! One log across tiers (`--remote` on the read-only commands): a partition's remote segments
//! shown under its local log ([`tiered::show`]), so that each command reads the log the broker
//! serves: remote below the local log start offset (`UnifiedLog` sends fetches below
//! `localLogStartOffset` to the remote tier), local from there on, where both hold an offset.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{local_log_start, reconcile_partition, NotObjects, Reading, Tier, TieredOptions};
use crate::error::{Error, Result};
use crate::format::names::partition_dir_name;
use crate::ops::finding::Finding;
use crate::storage::store;
use crate::storage::tiered::{self, RemoteSegment, SegmentFile};

/// What [`show_remote`] showed.
#[derive(Debug, Default)]
pub struct RemoteShown {
    /// How many remote segments.
    pub segments: usize,
    /// The partition directories whose remote segments were taken from the listing alone
    /// though the log dir holds `__remote_log_metadata`, not theirs; and why.
    pub listed_alone: Vec<(PathBuf, String)>,
    /// What reconciling each partition's remote tier finds (`kseg tiered`'s findings, without
    /// `deep`), by partition directory: a gap, a segment cut short, is in no batch read.
    pub tier_findings: Vec<(PathBuf, Vec<Finding>)>,
    /// How many remote segments the broker serves below a local log could not be shown, an
    /// object their log is read from gone (with `checked`: one of the tier's findings).
    pub unread: usize,
}

/// Shows the remote segments of the partition directory (or of every partition of the log dir)
/// `path` held in `opts.remote` under their local logs.
///
/// The segments are those `__remote_log_metadata` in the log dir says were copied
/// (`COPY_SEGMENT_FINISHED`: the only ones the broker's metadata cache serves), or, where the
/// log dir holds no metadata of the partition, every segment the store lists for it; of them,
/// those that start below the local log start offset, one per start offset.
///
/// A segment the broker serves whose objects are all gone, or a store that lists nothing, is an
/// error, unless `checked` (a command that reports the tier's findings, where it is one).
pub fn show_remote(path: &Path, opts: &TieredOptions, checked: bool) -> Result<RemoteShown> {
    let tier = Tier::open(path, opts, checked)?;
    let (store, layout, objects) = (&tier.store, &tier.layout, &tier.objects[..]);
    let mut shown = RemoteShown::default();
    for dir in &tier.dirs {
        // Shown already (the partition named twice, as `diff A A` does): the log is the one
        // shown, and its local log start is no longer the broker's to take again.
        let already = tiered::shown_in(dir).len();
        if already > 0 {
            shown.segments += already;
            continue;
        }
        let Some(t) = tier.of(dir) else {
            continue;
        };
        let (p, ours) = (&t.p, &t.ours);
        if let Some(e) = tier.metadata.elsewhere_to_say(t.elsewhere) {
            shown.listed_alone.push((dir.clone(), e.to_string()));
        }
        let copied: Option<BTreeSet<&str>> = t.elsewhere.is_none().then(|| {
            ours.iter()
                .filter(|m| m.served())
                .map(|m| m.segment_id.as_str())
                .collect()
        });
        // Taken before any segment is shown in the directory, which would move it.
        let log_start = local_log_start(dir)?;
        let local_start = log_start.map(|l| l.offset);
        let below_local = |start: i64| local_start.is_none_or(|l| start < l);
        // The segments the broker serves below the local log: those the metadata says were
        // copied, or without it every one listed; of them, one per start offset is shown, of
        // those whose log can be read (no object it is read from is gone).
        let wanted: Vec<&RemoteSegment> = t
            .listing
            .segments
            .iter()
            .filter(|s| {
                copied
                    .as_ref()
                    .is_none_or(|c| c.contains(s.segment_id.as_str()))
            })
            .filter(|s| below_local(s.start_offset))
            .collect();
        let lacks =
            |s: &RemoteSegment| (layout.log_files().iter()).find(|f| !s.files.contains_key(f));
        let mut starts = BTreeSet::new();
        let served: Vec<RemoteSegment> = wanted
            .iter()
            .filter(|s| lacks(s).is_none())
            .filter(|s| starts.insert(s.start_offset))
            .map(|s| (*s).clone())
            .collect();
        // A served segment whose log cannot be read: its offsets cannot be read, and the log
        // is not what the broker serves without them (a command that reports the tier says
        // what is gone as a finding).
        let mut unread: Vec<(&str, i64, Option<SegmentFile>)> = wanted
            .iter()
            .filter(|s| !starts.contains(&s.start_offset))
            .filter_map(|s| Some((s.segment_id.as_str(), s.start_offset, Some(*lacks(s)?))))
            .collect();
        // Copied, and not listed at all.
        let listed: BTreeSet<&str> = (t.listing.segments.iter())
            .map(|s| s.segment_id.as_str())
            .collect();
        unread.extend(
            ours.iter()
                .filter(|m| {
                    copied
                        .as_ref()
                        .is_some_and(|c| c.contains(m.segment_id.as_str()))
                })
                .filter(|m| below_local(m.start_offset) && !starts.contains(&m.start_offset))
                .filter(|m| !listed.contains(m.segment_id.as_str()))
                .map(|m| (m.segment_id.as_str(), m.start_offset, None)),
        );
        shown.unread += unread.len();
        if let Some(&(id, start, file)) = unread.first().filter(|_| !checked) {
            let key = layout.key(objects, p, start, id, file.unwrap_or(SegmentFile::Log));
            let m = ours.iter().find(|m| m.segment_id == id);
            let offsets = m.map_or(format!("start offset {start}"), |m| {
                format!("offsets {start}..{}", m.end_offset)
            });
            let copied = match m {
                Some(_) => ", which __remote_log_metadata says was copied",
                None => "",
            };
            let why = "the broker's fetches of these offsets fail, and kseg cannot read them \
                       (`kseg verify --remote` and `kseg tiered` report the tier as it is)";
            let message = match file {
                Some(f) => format!(
                    "{}: the log of remote segment {id} ({offsets}{copied}) is read from its {} \
                     object: {why}",
                    NotObjects::of(&t.odd, &tier.not_objects, &t.listing.strays)
                        .instead(&key)
                        .unwrap_or_else(|| "missing".to_string()),
                    f.suffix()
                ),
                None => format!(
                    "the store holds no object of remote segment {id} ({offsets}){copied}: {why}"
                ),
            };
            return Err(Error::invalid(&store.path_of(&key), message));
        }
        let mut sizes = BTreeMap::new();
        for segment in served {
            let id = segment.segment_id.clone();
            let path = tiered::show(dir, Arc::clone(store), Arc::clone(layout), segment)?;
            sizes.extend(
                tiered::shown_as(&path)
                    .and_then(|s| s.size())
                    .map(|n| (id, n)),
            );
            shown.segments += 1;
        }
        if t.known() {
            let reading = Reading::Shown(&sizes);
            let findings = reconcile_partition(&tier, &t, log_start, reading, false)?.findings;
            if !findings.is_empty() {
                shown.tier_findings.push((dir.clone(), findings));
            }
        }
    }
    Ok(shown)
}

/// Shows the one remote segment whose `.log` object `url` names (`--remote-segment`), with no
/// local partition directory: as the `.log` of its start offset in a directory named after its
/// partition (`orders-0`) beside the object, which is not on disk; returns that directory, for
/// the command to read as it reads a partition's.
///
/// The layout is the one whose object keys the URL's last parts have the form of (or the one
/// `opts.layout` names; the forms exclude each other: the directory holding a `LocalTiered`
/// segment ends in a topic id, an Aiven one is a partition number), the store's root what lies
/// above them; the segment's other objects (indexes, Aiven's manifest, which its chunks cannot
/// be read without) are those of the same `<startOffset>-<segmentId>` stem beside it, grouped
/// by the layout's listing as `--remote` groups them.
pub fn show_segment(url: &str, opts: &TieredOptions) -> Result<PathBuf> {
    let at = Path::new(url);
    let keys = tiered::Aiven::load_keys(&opts.keys)?;
    let named: Vec<&str> = match opts.layout.as_deref() {
        Some(n) => vec![n],
        None => tiered::LAYOUTS.to_vec(),
    };
    let found = named.into_iter().find_map(|name| {
        let layout = tiered::layout_named(name, &keys)?;
        let (root, key) = split_url(url, layout.key_depth())?;
        let p = layout.partition_of(key)?;
        Some((layout, root, key, p))
    });
    let Some((layout, root, key, p)) = found.filter(|f| f.2.ends_with(".log")) else {
        return Err(Error::invalid(
            at,
            format!(
                "names no remote segment's .log object (expected \
                 …/<topic>-<partition>-<topicId>/<startOffset>-<segmentId>.log, Kafka's \
                 LocalTieredStorage, or …/<topic>-<topicId>/<partition>/<startOffset>-<segmentId>.log, \
                 Aiven's{})",
                opts.layout
                    .as_deref()
                    .map(|l| format!("; --remote-layout {l}"))
                    .unwrap_or_default()
            ),
        ));
    };
    // Errors about the store (no such bucket, no access) name the segment asked for.
    let about = |e: Error| Error::invalid(at, e.to_string());
    let store = store::open(root, &opts.store).map_err(about)?;
    let dir = key.rsplit_once('/').map_or("", |(d, _)| d);
    let listing = store.list(dir).map_err(about)?;
    let segment = layout
        .partition(&listing.objects, &p)
        .segments
        .into_iter()
        .find(|s| s.log().is_some_and(|o| o.key == key));
    let Some(segment) = segment else {
        // Not listed: nothing there, or something that is no object (a FIFO).
        let why = match listing.not_objects.iter().find(|n| n.key == key) {
            Some(n) => store::not_an_object(n.what),
            None => "no such object".to_string(),
        };
        return Err(Error::invalid(at, why));
    };
    let shown_dir = at.with_file_name(partition_dir_name(&p.topic, p.partition));
    tiered::show(&shown_dir, store, Arc::from(layout), segment).map_err(about)?;
    Ok(shown_dir)
}

/// `url` cut before its last `depth` parts: the root and the key under it; None when nothing
/// (no bucket, no directory) would be left above the key.
fn split_url(url: &str, depth: usize) -> Option<(&str, &str)> {
    let start = url.find("://").map_or(0, |i| i + 3);
    let (cut, _) = url[start..].rmatch_indices('/').nth(depth - 1)?;
    let cut = start + cut;
    (cut > start).then(|| (&url[..cut], &url[cut + 1..]))
}

#[cfg(test)]
mod tests {
    use super::split_url;

    #[test]
    fn urls_split_above_the_layouts_key() {
        let url = "s3://b/root/orders-0-AAAAAAAAAAAAAAAAAAAAAA/0-AAAAAAAAAAAAAAAAAAAAAA.log";
        assert_eq!(
            split_url(url, 2),
            Some((
                "s3://b/root",
                "orders-0-AAAAAAAAAAAAAAAAAAAAAA/0-AAAAAAAAAAAAAAAAAAAAAA.log"
            ))
        );
        assert_eq!(
            split_url("s3://b/t-x/0/1-y.log", 3),
            Some(("s3://b", "t-x/0/1-y.log"))
        );
        // Nothing left for a bucket, or a directory, above the key.
        assert_eq!(split_url("s3://t-x/0/1-y.log", 3), None);
        assert_eq!(split_url("t-x/0/1-y.log", 3), None);
        assert_eq!(split_url("/t-x/0/1-y.log", 3), None);
        assert_eq!(
            split_url("./t-x/0/1-y.log", 3),
            Some((".", "t-x/0/1-y.log"))
        );
    }
}
