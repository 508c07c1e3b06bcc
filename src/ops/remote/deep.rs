//! `tiered --deep`: one remote segment read through the store as the broker's fetches read it:
//! every batch's framing and checksum, offsets that go forward, the offset index's entries
//! pointing at the batches that hold their offsets, and the other indexes, the producer
//! snapshot and the leader-epoch checkpoint passing the checks the broker reads them with
//! (from their own objects, or from Aiven's `.indexes` object).

use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::format::checkpoint::LeaderEpochCheckpoint;
use crate::format::entry::Entry;
use crate::format::index::{
    offset_index_entries, offset_index_sanity_check, time_index_sanity_check,
    txn_index_sanity_check, OffsetIndexEntry,
};
use crate::format::snapshot;
use crate::ops::finding::Finding;
use crate::storage::log_reader::Step;
use crate::storage::store::Store;
use crate::storage::tiered::{Layout, RemoteSegment, SegmentFile};

/// What the walk saw of the segment's offsets.
pub struct Walked {
    pub first_offset: Option<i64>,
    pub last_offset: Option<i64>,
    /// Whether the walk read every batch of the log (no damage in it).
    pub complete: bool,
    /// The segment's size in bytes (decoded); None when none of it can be decoded.
    pub size: Option<u64>,
}

fn base_offset(e: &Entry<'_>) -> i64 {
    match e {
        Entry::V2(b) => b.header.base_offset,
        Entry::Legacy(m) => m.offset,
    }
}

/// The rules the broker applies to a segment's file when it reads it: the indexes' sanity
/// checks, the snapshot's and the checkpoint's formats.
fn check_file(
    file: SegmentFile,
    bytes: &[u8],
    start_offset: i64,
    path: &Path,
) -> std::result::Result<(), String> {
    let name = path.display().to_string();
    match file {
        SegmentFile::OffsetIndex => {
            offset_index_sanity_check(bytes, bytes.len(), start_offset, &name)
        }
        SegmentFile::TimeIndex => time_index_sanity_check(bytes, bytes.len(), start_offset, &name),
        SegmentFile::TxnIndex => txn_index_sanity_check(bytes, start_offset, &name),
        SegmentFile::ProducerSnapshot if !bytes.is_empty() => snapshot::decode(bytes)
            .map(|_| ())
            .map_err(|e| format!("at byte {}: {}", e.pos, e.message)),
        SegmentFile::LeaderEpochCheckpoint if !bytes.is_empty() => {
            LeaderEpochCheckpoint::decode(bytes, &name)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
        _ => Ok(()),
    }
}

pub fn check(
    store: Arc<dyn Store>,
    layout: &dyn Layout,
    seg: &RemoteSegment,
    findings: &mut Vec<Finding>,
) -> Result<Walked> {
    let mut reader = layout.open_log(Arc::clone(&store), seg)?;
    let log = reader.path().to_path_buf();
    let size = reader.decoded_size();
    // A segment that cannot be decoded at all for a reason outside its `.log` (an Aiven
    // manifest that is none) has indexes read through the same: that reason is reported once,
    // by the walk.
    let undecodable_elsewhere =
        reader.is_undecodable() && seg.log().map(|o| store.path_of(&o.key)).as_ref() != Some(&log);
    let mut index = Vec::new();
    let mut index_path = None;
    let files = if undecodable_elsewhere {
        &[][..]
    } else {
        &[
            SegmentFile::OffsetIndex,
            SegmentFile::TimeIndex,
            SegmentFile::TxnIndex,
            SegmentFile::ProducerSnapshot,
            SegmentFile::LeaderEpochCheckpoint,
        ][..]
    };
    for &file in files {
        let (path, bytes) = match layout.read_file(store.as_ref(), seg, file) {
            Ok(Some(f)) => f,
            Ok(None) => continue,
            Err(Error::Decode {
                path,
                position,
                message,
                ..
            }) => {
                findings.push(
                    Finding::error(
                        "tiered.index",
                        path,
                        format!("{message}: the broker's fetches that need it fail"),
                    )
                    .at(position),
                );
                continue;
            }
            Err(e) => return Err(e),
        };
        if let Err(m) = check_file(file, &bytes, seg.start_offset, &path) {
            findings.push(Finding::error("tiered.index", path.clone(), m));
        }
        if file == SegmentFile::OffsetIndex {
            (index, index_path) = (bytes, Some(path));
        }
    }
    // Entries ascend by position: matched against the batches as the walk meets them.
    let mut entries = offset_index_entries(&index, seg.start_offset)
        .filter(|e| !(e.offset == seg.start_offset && e.position == 0))
        .peekable();
    let (mut first, mut last) = (None, None::<i64>);
    let mut complete = true;
    // An entry that names no batch start: found as the walk passes its position.
    let index_file = index_path.clone().unwrap_or_else(|| log.clone());
    let misplaced = |e: &OffsetIndexEntry| {
        Finding::error(
            "tiered.index",
            index_file.clone(),
            format!(
                "entry (offset {}, position {}) does not point at a batch starting at or before \
                 that offset: fetches through it read the wrong bytes",
                e.offset, e.position
            ),
        )
        .offset(e.offset)
    };
    // Whether the walk ended in damage, with no batch after it.
    let mut ended_in_damage = false;
    loop {
        let step = reader.next_step()?;
        if let Some((position, why)) = step.damage() {
            findings.push(
                Finding::error(
                    "tiered.log-damaged",
                    log.clone(),
                    format!("{why}: a fetch of this remote segment fails here"),
                )
                .at(position),
            );
            complete = false;
            // Entries before the damage point inside the batch before it.
            while let Some(e) = entries.next_if(|e| i64::from(e.position) < position as i64) {
                findings.push(misplaced(&e));
            }
            // On at the next valid batch, as a fetch from there is served (where undecodable
            // bytes were, the reader is there already); entries into the damage are not
            // judged.
            if reader.position() <= position && reader.resync(position + 1)?.is_none() {
                ended_in_damage = true;
                break;
            }
            let resumed = reader.position() as i64;
            while entries
                .next_if(|e| i64::from(e.position) < resumed)
                .is_some()
            {}
            continue;
        }
        let Step::Entry { position, entry } = step else {
            break;
        };
        let (base, end) = (base_offset(&entry), entry.last_offset());
        if last.is_some_and(|l| base <= l) {
            findings.push(
                Finding::error(
                    "tiered.log-damaged",
                    log.clone(),
                    format!(
                        "a batch at offset {base} follows offset {}: offsets go back",
                        last.unwrap_or(0)
                    ),
                )
                .at(position)
                .offset(base),
            );
        }
        first.get_or_insert(base);
        last = Some(end);
        while let Some(e) = entries.next_if(|e| i64::from(e.position) <= position as i64) {
            // An entry names the last offset of an append and the position of its first batch
            // (`LogSegment.append`): it must start a batch at or below its offset; a lookup
            // scans forward from there.
            if i64::from(e.position) != position as i64 || e.offset < base {
                findings.push(misplaced(&e));
            }
        }
    }
    // Entries left after the last batch point past it; after damage that ends the log, they
    // are not judged.
    if let (Some(p), Some(e), false) = (&index_path, entries.next(), ended_in_damage) {
        findings.push(Finding::error(
            "tiered.index",
            p.clone(),
            format!(
                "entry (offset {}, position {}) lies past the segment's last batch",
                e.offset, e.position
            ),
        ));
    }
    Ok(Walked {
        first_offset: first,
        last_offset: last,
        complete,
        size,
    })
}
