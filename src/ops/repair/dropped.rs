//! What a recovery drops, in the operator's terms: for each segment it truncates or deletes,
//! the offsets, records, batches and bytes that go. Counted by walking exactly the dropped
//! bytes of the original `.log` ([`dropped_regions`]) with salvage's walk past damage, so the
//! report and `--salvage` see the same batches; and the loader's events in words, one line per
//! segment.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use super::recover::{describe, RecoverPlan};
use super::salvage::{dropped_regions, walk_region, Piece};
use crate::error::Result;
use crate::format::names::log_file_name;
use crate::storage::seek::record_count;
use crate::storage::{LoadEvent, RecoveryCause};

/// What recovery drops from one segment's `.log`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Dropped {
    /// The `.log` file name.
    pub file: String,
    /// The first byte that goes, and how many go (to the end of the file).
    pub position: u64,
    pub size_in_bytes: u64,
    /// The first offset that goes: the new log end offset in the truncated segment, the base
    /// offset of a segment deleted after it.
    pub base_offset: i64,
    /// The last offset of the last valid batch that goes; null when none is valid.
    pub last_offset: Option<i64>,
    /// Records and batches whose checksum holds (damaged bytes are not counted as either).
    #[serde(rename = "recordCount")]
    pub records: u64,
    #[serde(rename = "batchCount")]
    pub batches: u64,
    /// Bytes among them that hold no valid batch (the damage itself, and what resync skipped).
    pub damaged_bytes: u64,
}

impl Dropped {
    /// `drops offsets 1352..1442: 85 records in 7 batches, 17315 bytes (bytes 11708..29023,
    /// 1179 of them damaged)`.
    pub fn describe(&self) -> String {
        let bytes = format!(
            "bytes {}..{}",
            self.position,
            self.position + self.size_in_bytes
        );
        let Some(last) = self.last_offset else {
            return format!(
                "drops no record: {} bytes ({bytes}) hold no valid batch",
                self.size_in_bytes
            );
        };
        let damaged = match self.damaged_bytes {
            0 => String::new(),
            n => format!(", {n} of them damaged"),
        };
        format!(
            "drops offsets {}..{last}: {} records in {} batches, {} bytes ({bytes}{damaged})",
            self.base_offset, self.records, self.batches, self.size_in_bytes
        )
    }
}

/// What `plan` drops, segment by segment in log order.
pub fn dropped(plan: &RecoverPlan) -> Result<Vec<Dropped>> {
    let mut scratch = Vec::new();
    dropped_regions(plan)
        .into_iter()
        .map(|(base, from)| {
            let file = log_file_name(base);
            let mut d = Dropped {
                position: from,
                size_in_bytes: 0,
                // A truncated segment keeps the offsets below the new log end; the segments
                // deleted after it lose everything from their base.
                base_offset: if from > 0 {
                    plan.report.log_end_offset
                } else {
                    base.max(plan.report.log_end_offset)
                },
                last_offset: None,
                records: 0,
                batches: 0,
                damaged_bytes: 0,
                file,
            };
            d.size_in_bytes = walk_region(&plan.dir.join(&d.file), from, &mut |piece| {
                match piece {
                    Piece::Batch { entry, .. } => {
                        d.batches += 1;
                        d.records += record_count(&entry, &mut scratch);
                        d.last_offset = Some(entry.last_offset());
                    }
                    Piece::Damaged { size, .. } => d.damaged_bytes += size,
                }
                Ok(())
            })?;
            Ok(d)
        })
        .collect()
}

/// The loader's events in words, one line per segment: a segment recovered twice (a failed
/// sanity check, then from the recovery point) is one line with both causes; what a
/// truncation or deletion drops is said in offsets, records, batches and bytes; paths in the
/// scratch copy `work` read as the partition directory `dir`.
pub fn event_lines(
    events: &[LoadEvent],
    drops: Option<&[Dropped]>,
    work: &Path,
    dir: &Path,
) -> Vec<String> {
    // The first drop of each `.log`, and the first line of each segment, by name and base: a
    // partition of many segments has an event for each.
    let mut drop_by_file: HashMap<&str, &Dropped> = HashMap::new();
    for d in drops.unwrap_or_default() {
        drop_by_file.entry(d.file.as_str()).or_insert(d);
    }
    let drop_of = |base: i64| drop_by_file.get(log_file_name(base).as_str()).copied();
    // Each line, and where its parenthesised causes end.
    let mut lines: Vec<(String, usize)> = Vec::new();
    let mut line_of: HashMap<i64, usize> = HashMap::new();
    for e in events {
        let (segment, line, causes_end) = match e {
            LoadEvent::SegmentRecovered {
                base_offset,
                cause,
                invalid,
                truncated_bytes,
                ..
            } => {
                let why = match cause {
                    RecoveryCause::Unflushed => "at or after the recovery point".to_string(),
                    RecoveryCause::SanityCheck(m) | RecoveryCause::Requested(m) => m.clone(),
                };
                if let Some((line, end)) = line_of.get(base_offset).map(|&i| &mut lines[i]) {
                    // The same segment again: its cause joins the first one's.
                    let more = format!("; {why}");
                    line.insert_str(*end, &more);
                    *end += more.len();
                    if let Some(bad) = invalid {
                        line.push_str(&format!(
                            "; first invalid data at byte {}: {}",
                            bad.position, bad.reason
                        ));
                    }
                    if *truncated_bytes > 0 {
                        line.push_str(&tail(e, drop_of(*base_offset)));
                    }
                    continue;
                }
                let full = describe(e);
                let line = match full.find("; bytes ") {
                    Some(i) if *truncated_bytes > 0 => {
                        full[..i].to_string() + &tail(e, drop_of(*base_offset))
                    }
                    _ => full,
                };
                let end = format!("segment {base_offset}: recovered ({why}").len();
                (Some(*base_offset), line, end)
            }
            LoadEvent::SegmentDeleted { base_offset, .. } => {
                let mut line = describe(e);
                if let Some(d) = drop_of(*base_offset) {
                    line.push_str(&format!("; {}", d.describe()));
                }
                (Some(*base_offset), line, 0)
            }
            _ => (None, describe(e), 0),
        };
        if let Some(base) = segment {
            line_of.entry(base).or_insert(lines.len());
        }
        lines.push((line, causes_end));
    }
    lines
        .into_iter()
        .map(|(l, _)| super::rebase_text(&l, work, dir))
        .collect()
}

/// What a truncation drops: the counts when known, else the byte range as the event has it.
fn tail(e: &LoadEvent, drop: Option<&Dropped>) -> String {
    match drop {
        Some(d) => format!("; {}", d.describe()),
        None => {
            let full = describe(e);
            full.find("; bytes ")
                .map_or_else(String::new, |i| full[i..].to_string())
        }
    }
}
