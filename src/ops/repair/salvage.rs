//! `salvage`: the valid batches a recovery would throw away, saved before it does. The broker's
//! recovery (`LogSegment.recover`, then `LogLoader` deleting every later segment) truncates at
//! the first invalid batch, although valid batches often follow it (KAFKA-3919). This module
//! takes the regions a [`RecoverPlan`] drops — a recovered segment's truncated tail, each
//! segment deleted after a truncation — walks them with the reader's resync past damage (the
//! one `dump` uses), and appends every batch whose checksum holds, with its original offsets
//! and bytes, to a partition directory of its own, through the engine's follower append. Byte
//! ranges that held no valid batch are reported, not saved. The source is only read.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use super::recover::RecoverPlan;
use crate::error::{Error, Result};
use crate::format::checkpoint::{uuid_from_base64, PartitionMetadata};
use crate::format::entry::Entry;
use crate::format::names::{log_file_name, PARTITION_METADATA_FILE_NAME};
use crate::ops::write::spec::DEFAULT_TOPIC_ID;
use crate::storage::files::{read_state, StateFile};
use crate::storage::log_reader::{LogReader, Step};
use crate::storage::seek::first_offset;
use crate::storage::{CloseMode, LoadEvent, Log, LogConfig};

/// The name of the report written beside the salvaged partition directory.
pub const SALVAGE_REPORT_FILE_NAME: &str = "salvage.json";

/// Back-to-back valid batches of one source file that were saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedRun {
    pub file: String,
    pub position: u64,
    pub size_in_bytes: u64,
    pub base_offset: i64,
    pub last_offset: i64,
    #[serde(rename = "batchCount")]
    pub batches: u64,
}

/// A byte range of a dropped region that was not saved, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unsaved {
    pub file: String,
    pub position: u64,
    pub size_in_bytes: u64,
    pub reason: String,
}

/// What the salvage found in the bytes recovery drops, and where it wrote them.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SalvageReport {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub dir: PathBuf,
    /// The salvaged partition directory; None when no valid batch was dropped.
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub salvaged_dir: Option<PathBuf>,
    /// Bytes of the source that recovery drops.
    pub dropped_bytes: u64,
    pub saved: Vec<SavedRun>,
    pub unsaved: Vec<Unsaved>,
}

impl SalvageReport {
    pub fn saved_batches(&self) -> u64 {
        self.saved.iter().map(|r| r.batches).sum()
    }

    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "format": crate::ops::JSON_FORMAT,
            "dir": crate::format::os_path::escaped(&self.dir),
            "salvagedDir": self.salvaged_dir.as_deref().map(crate::format::os_path::escaped),
            "droppedBytes": self.dropped_bytes,
            "savedBatchCount": self.saved_batches(),
            "savedRuns": self.saved,
            "unsavedRanges": self.unsaved,
        })
    }

    pub fn render_text(&self) -> String {
        let mut out = format!(
            "salvage {}: recovery drops {} byte(s); {} valid batch(es) saved",
            self.dir.display(),
            self.dropped_bytes,
            self.saved_batches()
        );
        match &self.salvaged_dir {
            Some(d) => out.push_str(&format!(" to {}\n", d.display())),
            None => out.push('\n'),
        }
        let line = |what: &str, file: &str, position: u64, size: u64, tail: String| {
            format!(
                "  {what:<8} {file} bytes {position}..{}: {tail}\n",
                position + size
            )
        };
        for r in &self.saved {
            let tail = format!(
                "offsets {}..={} ({} batch(es))",
                r.base_offset, r.last_offset, r.batches
            );
            out.push_str(&line("saved", &r.file, r.position, r.size_in_bytes, tail));
        }
        for u in &self.unsaved {
            let tail = u.reason.clone();
            out.push_str(&line("unsaved", &u.file, u.position, u.size_in_bytes, tail));
        }
        out
    }
}

/// Where recovery drops bytes: (segment base offset, first dropped byte of its `.log`), in
/// log order.
pub fn dropped_regions(plan: &RecoverPlan) -> Vec<(i64, u64)> {
    plan.report
        .events
        .iter()
        .filter_map(|e| match e {
            LoadEvent::SegmentRecovered {
                base_offset,
                log_bytes_before,
                truncated_bytes,
                ..
            } if *truncated_bytes > 0 => Some((*base_offset, log_bytes_before - truncated_bytes)),
            LoadEvent::SegmentDeleted { base_offset, .. } => Some((*base_offset, 0)),
            _ => None,
        })
        .collect()
}

/// The salvage being built: the log is created at the first valid batch.
struct Salvager<'a> {
    config: LogConfig,
    now_ms: i64,
    topic_id: [u8; crate::format::checkpoint::UUID_BYTES],
    part_dir: &'a Path,
    log: Option<Log>,
    report: SalvageReport,
    scratch: Vec<u8>,
}

impl Salvager<'_> {
    fn unsaved(&mut self, file: &str, from: u64, to: u64, reason: String) {
        if to > from {
            self.report.unsaved.push(Unsaved {
                file: file.to_string(),
                position: from,
                size_in_bytes: to - from,
                reason,
            });
        }
    }

    /// Appends one valid batch (its first offset being `first`); false when its offsets do
    /// not follow the batches saved before it.
    fn save(&mut self, bytes: &[u8], first: i64, new_region: bool) -> Result<bool> {
        let log = match self.log.as_mut() {
            Some(log) => {
                if first < log.log_end_offset() {
                    return Ok(false);
                }
                // One salvaged segment per source segment, as far as offsets allow.
                if new_region && log.active_segment().size() > 0 {
                    log.roll()?;
                }
                log
            }
            None => self.log.insert(Log::create(
                self.part_dir,
                self.config,
                first,
                self.topic_id,
                self.now_ms,
            )?),
        };
        log.append_as_follower(bytes)?;
        Ok(true)
    }

    fn record_saved(&mut self, file: &str, position: u64, len: u64, first: i64, last: i64) {
        if let Some(run) = self
            .report
            .saved
            .last_mut()
            .filter(|r| r.file == file && r.position + r.size_in_bytes == position)
        {
            run.size_in_bytes += len;
            run.last_offset = last;
            run.batches += 1;
            return;
        }
        self.report.saved.push(SavedRun {
            file: file.to_string(),
            position,
            size_in_bytes: len,
            base_offset: first,
            last_offset: last,
            batches: 1,
        });
    }

    /// Saves the valid batches of the `.log` at `path` from byte `from` to its end.
    fn region(&mut self, path: &Path, from: u64) -> Result<()> {
        let file = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let mut new_region = true;
        let walked = walk_region(path, from, &mut |piece| {
            let (position, entry) = match piece {
                Piece::Damaged {
                    position,
                    size,
                    reason,
                } => {
                    self.unsaved(&file, position, position + size, reason);
                    return Ok(());
                }
                Piece::Batch { position, entry } => (position, entry),
            };
            let len = entry.size_in_bytes() as u64;
            let last = entry.last_offset();
            let first = first_offset(&entry, &mut self.scratch).unwrap_or(last);
            if self.save(entry.bytes(), first, new_region)? {
                self.record_saved(&file, position, len, first, last);
                new_region = false;
            } else {
                let reason = format!(
                    "a valid batch of offsets {first}..={last}, not above the offsets saved before it"
                );
                self.unsaved(&file, position, position + len, reason);
            }
            Ok(())
        })?;
        self.report.dropped_bytes += walked;
        Ok(())
    }
}

/// What the walk of a dropped region meets, in file order.
pub(crate) enum Piece<'e> {
    /// A whole batch (or legacy entry) whose checksum holds.
    Batch { position: u64, entry: Entry<'e> },
    /// `size` bytes holding no valid batch, and why the first of them is bad.
    Damaged {
        position: u64,
        size: u64,
        reason: String,
    },
}

/// Walks the `.log` at `path` from byte `from` to its end as `dump` reads past damage (a
/// resync after each bad place), telling `visit` each valid batch and each damaged range in
/// turn; returns the bytes walked.
pub(crate) fn walk_region(
    path: &Path,
    from: u64,
    visit: &mut dyn FnMut(Piece<'_>) -> Result<()>,
) -> Result<u64> {
    let mut reader = LogReader::open(path, None)?;
    reader.seek(from);
    let walked = reader.end().saturating_sub(from);
    // The first byte not yet visited, and why it is bad.
    let mut gap: Option<(u64, String)> = None;
    let close = |gap: &mut Option<(u64, String)>,
                 to: u64,
                 visit: &mut dyn FnMut(Piece<'_>) -> Result<()>| {
        match gap.take() {
            Some((position, reason)) if to > position => visit(Piece::Damaged {
                position,
                size: to - position,
                reason,
            }),
            _ => Ok(()),
        }
    };
    loop {
        let step = reader.next_step()?;
        let at_end = matches!(step, Step::End { .. });
        let Some((position, why)) = step.damage() else {
            let Step::Entry { position, entry } = step else {
                // The clean end of the file.
                let end = reader.end();
                close(&mut gap, end, visit)?;
                return Ok(walked);
            };
            close(&mut gap, position, visit)?;
            visit(Piece::Batch { position, entry })?;
            continue;
        };
        gap.get_or_insert((position, why));
        if at_end || reader.resync(position + 1)?.is_none() {
            let end = reader.end();
            close(&mut gap, end, visit)?;
            return Ok(walked);
        }
    }
}

/// The topic id of `dir`'s `partition.metadata`, else the writer's default.
fn topic_id_of(dir: &Path) -> Result<[u8; crate::format::checkpoint::UUID_BYTES]> {
    let path = dir.join(PARTITION_METADATA_FILE_NAME);
    if let Ok(bytes) = read_state(&path, StateFile::Properties) {
        if let Ok(m) = PartitionMetadata::decode(&bytes, &path.display().to_string()) {
            if m.topic_id != [0; crate::format::checkpoint::UUID_BYTES] {
                return Ok(m.topic_id);
            }
        }
    }
    uuid_from_base64(DEFAULT_TOPIC_ID).map_err(|m| Error::invalid(&path, m))
}

/// Saves what `plan` would drop from its directory into `out` (absent or empty): the
/// salvaged partition directory `out/<name of the source>` and the report
/// `out/salvage.json`. All or nothing; the source is not modified.
pub fn salvage(
    plan: &RecoverPlan,
    config: LogConfig,
    now_ms: i64,
    out: &Path,
) -> Result<SalvageReport> {
    let dir = &plan.dir;
    let name = dir
        .file_name()
        .ok_or_else(|| Error::invalid(dir, "not a partition directory name"))?;
    super::apply::refuse_inside_log_dir(out, dir, "salvage directory")?;
    let topic_id = topic_id_of(dir)?;
    let regions = dropped_regions(plan);
    crate::ops::write::all_or_nothing("salvage", out, |tmp| {
        let part_dir = tmp.join(name);
        let mut s = Salvager {
            config,
            now_ms,
            topic_id,
            part_dir: &part_dir,
            log: None,
            report: SalvageReport {
                dir: dir.clone(),
                salvaged_dir: None,
                dropped_bytes: 0,
                saved: Vec::new(),
                unsaved: Vec::new(),
            },
            scratch: Vec::new(),
        };
        for (base, from) in regions {
            s.region(&dir.join(log_file_name(base)), from)?;
        }
        if let Some(log) = s.log.take() {
            log.close(CloseMode::Clean)?;
            s.report.salvaged_dir = Some(out.join(name));
        }
        let report_path = tmp.join(SALVAGE_REPORT_FILE_NAME);
        let text = serde_json::to_string_pretty(&s.report.to_json()).expect("JSON value");
        std::fs::write(&report_path, text + "\n").map_err(|e| Error::io(&report_path, e))?;
        Ok(s.report)
    })
}
