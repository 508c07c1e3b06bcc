//! One log across tiers (`--remote` on the read-only commands): a partition's remote segments
//! shown under its local log ([`tiered::show`]), so that each command reads the log the broker
//! serves: remote below the local log start offset (`UnifiedLog` sends fetches below
//! `localLogStartOffset` to the remote tier), local from there on, where both hold an offset.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use super::{
    local_log_start, local_partitions, metadata, partition_metadata, remote_partition,
    TieredOptions,
};
use crate::error::Result;
use crate::storage::store;
use crate::storage::tiered::{self, Layout, RemoteSegment};

/// Shows the remote segments of the partition directory (or of every partition of the log dir)
/// `path` held in `opts.remote` under their local logs; returns how many were shown.
///
/// The segments are those `__remote_log_metadata` in the log dir says were copied
/// (`COPY_SEGMENT_FINISHED`: the only ones the broker's metadata cache serves), or, without
/// metadata, every segment the store lists for the partition; of them, those that start below
/// the local log start offset, one per start offset.
pub fn show_remote(path: &Path, opts: &TieredOptions) -> Result<usize> {
    let (log_dir, dirs) = local_partitions(path)?;
    let store = store::open(&opts.remote, &opts.store)?;
    let objects = store.list("")?;
    let keys = tiered::Aiven::load_keys(&opts.keys)?;
    let layout: Arc<dyn Layout> = Arc::from(tiered::detect(
        store.as_ref(),
        &objects,
        opts.layout.as_deref(),
        &keys,
    )?);
    let (metadata, metadata_records) = metadata::read(&log_dir)?;
    let mut shown = 0;
    for dir in &dirs {
        let Some(p) = remote_partition(dir) else {
            continue;
        };
        let copied: Option<BTreeSet<&str>> = (metadata_records > 0).then(|| {
            partition_metadata(&metadata, &p)
                .into_iter()
                .filter(|m| m.state == "COPY_SEGMENT_FINISHED")
                .map(|m| m.segment_id.as_str())
                .collect()
        });
        let local_start = local_log_start(dir)?.map(|l| l.offset);
        let mut starts = BTreeSet::new();
        let served: Vec<RemoteSegment> = layout
            .partition(&objects, &p)
            .segments
            .into_iter()
            .filter(|s| {
                copied
                    .as_ref()
                    .is_none_or(|c| c.contains(s.segment_id.as_str()))
            })
            .filter(|s| local_start.is_none_or(|l| s.start_offset < l))
            .filter(|s| starts.insert(s.start_offset))
            .collect();
        for segment in served {
            tiered::show(dir, Arc::clone(&store), Arc::clone(&layout), segment)?;
            shown += 1;
        }
    }
    Ok(shown)
}
