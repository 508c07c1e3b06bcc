//! What the cleaner decides before a round (`LogCleanerManager`): the producer state at `now`,
//! the first dirty and first uncleanable offsets, the dirty ratio and the lags.

use std::collections::HashMap;
use std::path::Path;

use super::CompactOptions;
use crate::error::Result;
use crate::format::batch::MAGIC_V2;
use crate::format::names::{log_file_name, CLEANER_OFFSET_CHECKPOINT_FILE_NAME};
use crate::ops::partition::{PartitionView, SegmentView};
use crate::ops::simulate::retention::{partition_offsets, Sourced};
use crate::storage::log_reader::{LogReader, Step};
use crate::storage::producer_state::ProducerAppends;
use crate::storage::ProducerStateManager;

/// The last batch of each producer the broker still tracks: pid → (last data offset, epoch).
pub(super) type ActiveProducers = HashMap<i64, (Option<i64>, i16)>;

/// Producer state as the broker holds it at `now`: every batch replayed from the log start
/// (no snapshot is read or written), expired producers left out. Also returns the first
/// offset of the earliest open transaction.
fn producer_state(
    view: &PartitionView,
    log_start_offset: i64,
    opts: &CompactOptions,
) -> Result<(ActiveProducers, Option<i64>)> {
    let mut state = ProducerStateManager::new(&view.dir, log_start_offset);
    for s in &view.segments {
        let path = view.dir.join(log_file_name(s.base_offset));
        let mut reader = LogReader::open(&path, None)?.with_max_entry_bytes(u64::MAX);
        let mut appends = ProducerAppends::default();
        let mut batches = 0u32;
        while let Step::Entry { entry, .. } = reader.next_step()? {
            if entry.magic() >= MAGIC_V2 && entry.last_offset() >= log_start_offset {
                appends.add(&state, &entry, &path)?;
                batches += 1;
            }
            // Applied in runs of batches, not a segment at once as the broker's load does:
            // the producers reached are the same (only the order in which new ones are first
            // seen can differ, and nothing here depends on it), and a segment's completed
            // transactions are not all held until its end.
            if batches == 4096 {
                apply_run(&mut state, std::mem::take(&mut appends))?;
                batches = 0;
            }
        }
        apply_run(&mut state, appends)?;
    }
    let mut active = HashMap::new();
    let mut first_unstable: Option<i64> = None;
    for p in state.producers() {
        if let Some(first) = p.current_txn_first_offset {
            first_unstable = Some(first_unstable.map_or(first, |f| f.min(first)));
        }
        let expired = p.current_txn_first_offset.is_none()
            && opts.now_ms.saturating_sub(p.last_timestamp) >= opts.producer_id_expiration_ms;
        if !expired {
            let last = p.last_data_offset();
            active.insert(
                p.producer_id,
                ((last >= 0).then_some(last), p.producer_epoch),
            );
        }
    }
    Ok((active, first_unstable))
}

/// One run of batches applied. Only the producers are read here, never the completed
/// transactions that hold the last stable offset back until replicated: they are let go of.
fn apply_run(state: &mut ProducerStateManager, appends: ProducerAppends) -> Result<()> {
    state.apply_loaded(appends)?;
    state.on_high_watermark_updated(i64::MAX);
    Ok(())
}

/// The first batch's max timestamp of a segment (`getFirstBatchTimestamp`), i64::MAX if none.
fn first_batch_timestamp(dir: &Path, s: &SegmentView) -> Result<i64> {
    let path = dir.join(log_file_name(s.base_offset));
    let mut reader = LogReader::open(&path, None)?;
    Ok(match reader.next_step()? {
        Step::Entry { entry, .. } => entry.max_timestamp(),
        _ => i64::MAX,
    })
}

/// `ratio = cleanable / (clean + cleanable)` over segment sizes (`calculateCleanableBytes`).
pub(super) fn dirty_ratio(
    segments: &[(i64, u64)],
    first_dirty: i64,
    first_uncleanable: i64,
) -> (u64, f64) {
    let floor = |o: i64| segments.iter().rposition(|(b, _)| *b <= o).unwrap_or(0);
    let clean: u64 = segments
        .iter()
        .filter(|(b, _)| *b < first_dirty)
        .map(|(_, s)| s)
        .sum();
    let from = floor(first_dirty.min(first_uncleanable));
    let cleanable: u64 = segments[from..]
        .iter()
        .filter(|(b, _)| *b < first_uncleanable)
        .map(|(_, s)| s)
        .sum();
    let total = clean + cleanable;
    let ratio = if total == 0 {
        0.0
    } else {
        cleanable as f64 / total as f64
    };
    (cleanable, ratio)
}

/// What `LogCleanerManager` settles before a round: the offsets it starts from, the cleanable
/// range and whether the log is cleaned now.
pub(super) struct CleanableRange {
    pub(super) high_watermark: Sourced,
    pub(super) log_start_offset: Sourced,
    pub(super) last_stable_offset: i64,
    pub(super) first_dirty_offset: Sourced,
    /// The end of the cleanable range, aligned to a segment base.
    pub(super) first_uncleanable_offset: i64,
    /// Every segment's base offset and size.
    pub(super) sizes: Vec<(i64, u64)>,
    pub(super) dirty_ratio: f64,
    pub(super) needs_compaction_now: bool,
    pub(super) cleaned: bool,
    pub(super) active_producers: ActiveProducers,
}

/// The first dirty offset (the `cleaner-offset-checkpoint`, else the log start), the first
/// uncleanable one (the last stable offset, the active segment, `min.compaction.lag.ms`), the
/// dirty ratio over them and `max.compaction.lag.ms`'s verdict.
pub(super) fn cleanable_range(
    view: &PartitionView,
    opts: &CompactOptions,
) -> Result<CleanableRange> {
    let (hw, lso) = partition_offsets(view, opts.high_watermark, opts.log_start_offset)?;
    let (active_producers, first_unstable) = producer_state(view, lso.value, opts)?;
    let last_stable = match first_unstable {
        Some(f) if f < hw.value => f.max(lso.value),
        _ => hw.value,
    };
    let leo = view.log_end_offset;
    let first_dirty = {
        let checkpointed = match opts.first_dirty_offset {
            Some(o) => Some(Sourced {
                value: o,
                source: "--first-dirty-offset".into(),
            }),
            None => view
                .checkpoint_offset(CLEANER_OFFSET_CHECKPOINT_FILE_NAME)?
                .map(|(p, o)| Sourced {
                    value: o,
                    source: p.display().to_string(),
                }),
        };
        match checkpointed {
            Some(c) if c.value >= lso.value && c.value <= leo => c,
            Some(c) => Sourced {
                value: lso.value,
                source: format!(
                    "log start offset ({} {} is out of range)",
                    c.source, c.value
                ),
            },
            None => Sourced {
                value: lso.value,
                source: "log start offset".into(),
            },
        }
    };
    let active = view.active_segment();
    let non_active = &view.segments[..view.segments.len() - 1];
    // `nonActiveLogSegmentsFrom(firstDirty)`: from the segment holding it, none in the active.
    let dirty_segments = if first_dirty.value >= active.base_offset {
        &non_active[non_active.len()..]
    } else {
        let from = non_active
            .iter()
            .rposition(|s| s.base_offset <= first_dirty.value)
            .unwrap_or(0);
        &non_active[from..]
    };
    let mut uncleanable = last_stable.min(active.base_offset);
    if opts.min_compaction_lag_ms > 0 {
        let bound = opts.now_ms.saturating_sub(opts.min_compaction_lag_ms);
        if let Some(s) = dirty_segments
            .iter()
            .find(|s| s.largest_timestamp() > bound)
        {
            uncleanable = uncleanable.min(s.base_offset);
        }
    }
    let uncleanable = uncleanable.max(first_dirty.value);
    let first_uncleanable = non_active
        .iter()
        .rposition(|s| s.base_offset <= uncleanable)
        .filter(|_| uncleanable < active.base_offset)
        .map_or(active.base_offset, |i| non_active[i].base_offset);
    let sizes: Vec<(i64, u64)> = view
        .segments
        .iter()
        .map(|s| (s.base_offset, s.size))
        .collect();
    let (cleanable_bytes, ratio) = dirty_ratio(&sizes, first_dirty.value, first_uncleanable);
    let needs_compaction_now = {
        let mut earliest = i64::MAX;
        for s in dirty_segments {
            let ts = first_batch_timestamp(&view.dir, s)?;
            if ts > 0 {
                earliest = earliest.min(ts);
            }
        }
        let clean_until = opts
            .now_ms
            .saturating_sub(opts.max_compaction_lag_ms.max(0));
        earliest != i64::MAX && clean_until > earliest
    };
    let cleaned =
        (needs_compaction_now && cleanable_bytes > 0) || ratio > opts.min_cleanable_dirty_ratio;
    Ok(CleanableRange {
        high_watermark: hw,
        log_start_offset: lso,
        last_stable_offset: last_stable,
        first_dirty_offset: first_dirty,
        first_uncleanable_offset: first_uncleanable,
        sizes,
        dirty_ratio: ratio,
        needs_compaction_now,
        cleaned,
        active_producers,
    })
}
