//! Which of a recovery's changes repair damage and which are the routine housekeeping of every
//! broker start-up. Kafka's loader rebuilds what is derived from the `.log` without losing a
//! record: indexes trimmed or created (`LogSegment.sanityCheck` takes a missing time index,
//! `LazyIndex` creates index files on first use), producer snapshots taken at close or removed
//! when stray (`ProducerStateManager.removeStraySnapshots`, `truncateAndReload`), leader-epoch
//! entries at or past the log end dropped (`LeaderEpochFileCache.truncateFromEnd`), leftovers
//! of an interrupted swap resolved (`LogLoader.removeTempFilesAndCollectSwapFiles`), an empty
//! segment created in a log without one, the log dir's checkpoints written at shutdown. Damage
//! is what a segment loses or has rebuilt: `.log` bytes cut, segments dropped or split, a
//! segment whose sanity check failed on a file that exists, an index that was not a whole
//! number of entries (what `AbstractIndex.sanityCheck` and `TransactionIndex.sanityCheck`
//! call corrupt), a file replaced that `verify` reports an error on (the broker would serve
//! wrong data from it). A rebuild of a sound index in another layout is housekeeping.

use std::collections::BTreeSet;

use serde::Serialize;

use super::apply::Change;
use crate::format::index::{
    ABORTED_TXN_ENTRY_BYTES, OFFSET_INDEX_ENTRY_BYTES, TIME_INDEX_ENTRY_BYTES,
};
use crate::format::names::{classify, FileKind};
use crate::storage::{LoadEvent, LoadReport, RecoveryCause};

/// What a change of a recovery plan is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ChangeClass {
    /// Repairs damage: the broker's recovery loses or rebuilds part of the log.
    Damage,
    /// What every start-up of the broker does on a healthy log.
    Housekeeping,
}

/// The base offsets of the segments a load damaged: cut, emptied, dropped, split, or
/// recovered because a file they have fails the sanity check.
fn damaged_segments(changes: &[Change], report: &LoadReport) -> BTreeSet<i64> {
    // A missing offset index fails the sanity check too; the loader then creates it, which
    // is housekeeping (index files appear lazily).
    let created_index = |base: i64| {
        changes.iter().any(|c| {
            matches!(c, Change::Write { file, size_before: None, .. }
                if kind(file) == FileKind::OffsetIndex { base_offset: base })
        })
    };
    let mut out = BTreeSet::new();
    for e in &report.events {
        match e {
            LoadEvent::SegmentRecovered {
                base_offset,
                cause,
                truncated_bytes,
                invalid,
                emptied,
                ..
            } => {
                let insane =
                    matches!(cause, RecoveryCause::SanityCheck(_)) && !created_index(*base_offset);
                if *truncated_bytes > 0 || invalid.is_some() || *emptied || insane {
                    out.insert(*base_offset);
                }
            }
            LoadEvent::SegmentSplit {
                base_offset,
                new_bases,
                ..
            } => {
                out.insert(*base_offset);
                out.extend(new_bases);
            }
            LoadEvent::SegmentDeleted { base_offset, .. } => {
                out.insert(*base_offset);
            }
            _ => {}
        }
    }
    out
}

fn kind(file: &std::path::Path) -> FileKind {
    classify(&file.file_name().unwrap_or_default().to_string_lossy())
}

/// Whether the change replaces an index that is not a whole number of entries.
fn corrupt_index(kind: &FileKind, change: &Change) -> bool {
    let entry = match kind {
        FileKind::OffsetIndex { .. } => OFFSET_INDEX_ENTRY_BYTES,
        FileKind::TimeIndex { .. } => TIME_INDEX_ENTRY_BYTES,
        FileKind::TxnIndex { .. } => ABORTED_TXN_ENTRY_BYTES,
        _ => return false,
    } as u64;
    let before = match change {
        Change::Write { size_before, .. } => *size_before,
        Change::Truncate { size_before, .. } | Change::Delete { size_before, .. } => {
            Some(*size_before)
        }
        Change::Rename { .. } => None,
    };
    before.is_some_and(|b| b % entry != 0)
}

/// The class of each of `changes` (in order), made by the load `report`.
pub fn classify_changes(changes: &[Change], report: &LoadReport) -> Vec<ChangeClass> {
    let damaged = damaged_segments(changes, report);
    changes
        .iter()
        .map(|c| {
            let k = kind(c.file());
            let of_damaged = k.is_segment_file() && k.offset().is_some_and(|b| damaged.contains(&b))
                || matches!(&k, FileKind::Leftover { inner, .. }
                    if inner.is_segment_file() && inner.offset().is_some_and(|b| damaged.contains(&b)));
            let housekeeping = !of_damaged
                && !corrupt_index(&k, c)
                && match (&k, c) {
                    // The empty segment the loader creates where there is none.
                    (FileKind::Log { .. }, Change::Write { size_before, size_after, .. }) => {
                        size_before.is_none() && *size_after == 0
                    }
                    // Any other change to a `.log` loses or rewrites records.
                    (FileKind::Log { .. }, _) => false,
                    // Leftovers resolved and swaps completed as every start-up does.
                    _ => true,
                };
            if housekeeping {
                ChangeClass::Housekeeping
            } else {
                ChangeClass::Damage
            }
        })
        .collect()
}

/// The changes that replace or cut a file that exists: the ones a corrupt file could be
/// behind (an untrimmed time index is cut to a prefix, yet the broker reads its zero slots).
fn replaces_existing(c: &Change) -> bool {
    matches!(
        c,
        Change::Write {
            size_before: Some(_),
            ..
        } | Change::Delete { .. }
            | Change::Truncate { .. }
    )
}

/// An index replaced or cut: what `verify` is asked about. Epoch entries past the log end,
/// which `verify` calls errors, are dropped by every start-up (`truncateFromEnd`).
fn checked(c: &Change) -> bool {
    let k = kind(c.file());
    replaces_existing(c)
        && matches!(
            k,
            FileKind::OffsetIndex { .. } | FileKind::TimeIndex { .. } | FileKind::TxnIndex { .. }
        )
}

/// Whether a check of the original files is needed to class `changes`: some housekeeping
/// replaces a file that may have been corrupt.
pub fn needs_corruption_check(changes: &[Change], classes: &[ChangeClass]) -> bool {
    changes
        .iter()
        .zip(classes)
        .any(|(c, k)| *k == ChangeClass::Housekeeping && checked(c))
}

/// Makes damage of each housekeeping change that replaces a file `corrupt` says is.
pub fn mark_corrupt(
    changes: &[Change],
    classes: &mut [ChangeClass],
    corrupt: &dyn Fn(&std::path::Path) -> bool,
) {
    for (c, k) in changes.iter().zip(classes.iter_mut()) {
        if *k == ChangeClass::Housekeeping && checked(c) && corrupt(c.file()) {
            *k = ChangeClass::Damage;
        }
    }
}
