//! The batches of a partition directory as one stream in offset order, segment boundaries
//! left out: what `diff` and `digest` compare. Each batch is copied out of the reader's buffer
//! (two streams are read side by side), so memory is the largest batch per stream. Reading
//! stops at the first damage (a checksum that does not hold, broken framing, a torn tail),
//! where the broker's recovery would truncate; [`PartitionBatches::stopped`] says where.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Expected, Result};
use crate::format::entry::Entry;
use crate::format::names::FileKind;
use crate::ops::input::{examine, kind_of, Input};
use crate::storage::log_reader::{LogReader, Step};
use crate::storage::seek::{first_offset, record_count, Seeker};

/// One whole, valid batch (or legacy entry) and where it was read.
#[derive(Debug, Clone)]
pub struct OwnedBatch {
    /// Index into [`PartitionBatches::logs`].
    pub log: usize,
    pub position: u64,
    pub base_offset: i64,
    pub last_offset: i64,
    pub bytes: Vec<u8>,
}

impl OwnedBatch {
    pub fn entry(&self) -> Entry<'_> {
        Entry::decode(&self.bytes).expect("decoded when it was read")
    }

    /// Records in the batch: a v2 header's count, a legacy entry's inner messages.
    pub fn record_count(&self, scratch: &mut Vec<u8>) -> u64 {
        record_count(&self.entry(), scratch)
    }
}

/// Where and why a stream stopped before the end of its last segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stopped {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub file: PathBuf,
    pub position: u64,
    pub message: String,
}

pub struct PartitionBatches {
    logs: Vec<PathBuf>,
    next_log: usize,
    reader: Option<LogReader>,
    stopped: Option<Stopped>,
    scratch: Vec<u8>,
}

impl PartitionBatches {
    /// The `.log` segments of the partition directory `dir`, in base-offset order.
    pub fn open(dir: &Path) -> Result<Self> {
        let Input::Dir { files, .. } = examine(dir, Expected::Partition)? else {
            unreachable!("a partition is a directory")
        };
        let logs = files
            .into_iter()
            .filter(|f| matches!(kind_of(f, None).kind, FileKind::Log { .. }))
            .collect();
        Ok(PartitionBatches {
            logs,
            next_log: 0,
            reader: None,
            stopped: None,
            scratch: Vec::new(),
        })
    }

    /// Starts the stream at the batch holding `offset` (or the first after it), found through
    /// the offset indexes as a fetch finds it; at the end when the log ends before it.
    pub fn start_at_offset(&mut self, dir: &Path, offset: i64) -> Result<()> {
        let mut seeker = Seeker::open(dir)?;
        if offset < seeker.first_segment_base() {
            return Ok(());
        }
        self.reader = None;
        self.next_log = self.logs.len();
        if let Some(hit) = seeker.batch_for_offset(offset)? {
            if let Some(i) = self
                .logs
                .iter()
                .position(|l| l.file_name() == hit.log.file_name())
            {
                let mut reader = LogReader::open(&self.logs[i], None)?;
                reader.seek(hit.position);
                self.reader = Some(reader);
                self.next_log = i + 1;
            }
        }
        Ok(())
    }

    pub fn logs(&self) -> &[PathBuf] {
        &self.logs
    }

    pub fn stopped(&self) -> Option<&Stopped> {
        self.stopped.as_ref()
    }

    fn stop(&mut self, file: &Path, position: u64, message: String) {
        self.stopped = Some(Stopped {
            file: file.to_path_buf(),
            position,
            message,
        });
        self.next_log = self.logs.len();
        self.reader = None;
    }

    /// The next batch, None at the end or at damage.
    pub fn next_batch(&mut self) -> Result<Option<OwnedBatch>> {
        loop {
            if self.reader.is_none() {
                let Some(path) = self.logs.get(self.next_log) else {
                    return Ok(None);
                };
                self.reader = Some(LogReader::open(path, None)?);
                self.next_log += 1;
            }
            let reader = self.reader.as_mut().expect("opened above");
            let path = reader.path().to_path_buf();
            let step = reader.next_step()?;
            let Some((position, message)) = step.damage() else {
                if let Step::Entry { position, entry } = step {
                    let last_offset = entry.last_offset();
                    let base_offset =
                        first_offset(&entry, &mut self.scratch).unwrap_or(last_offset);
                    return Ok(Some(OwnedBatch {
                        log: self.next_log - 1,
                        position,
                        base_offset,
                        last_offset,
                        bytes: entry.bytes().to_vec(),
                    }));
                }
                self.reader = None;
                continue;
            };
            self.stop(&path, position, message);
            return Ok(None);
        }
    }
}
