//! Dumping the small state files: transaction indexes, producer snapshots, leader-epoch and
//! offset checkpoints, `partition.metadata` and `meta.properties`.

use std::path::Path;

use super::{Event, Walker};
use crate::error::{Error, Result};
use crate::format::checkpoint::{
    uuid_to_base64, LeaderEpochCheckpoint, MetaProperties, OffsetCheckpoint, PartitionMetadata,
};
use crate::format::index::ABORTED_TXN_ENTRY_BYTES;
use crate::format::snapshot;
use crate::ops::finding::Finding;
use crate::storage::files::StateFile;
use crate::storage::txn_index::{entry_cap, TxnIndexEntries};

impl Walker<'_, '_> {
    pub(super) fn txn_index(&mut self, p: &Path) -> Result<()> {
        // Streamed in windows: a `.txnindex` is not preallocated, but a hostile one can be of
        // any size.
        let mut entries = TxnIndexEntries::open(p)?;
        // Only as many entries as the segment has room for ABORT markers are read: a sparse
        // or padded file of gigabytes costs what its `.log` does.
        let beyond = entry_cap(p)?.and_then(|max| Some((entries.cap(max)?, max)));
        for entry in entries.by_ref() {
            match entry {
                Ok(t) => self.emit(Event::TxnEntry(&t))?,
                Err(Error::Decode {
                    position, message, ..
                }) => {
                    let f = Finding::error("txnindex.decode", p, message).at(position);
                    return self.finding(f);
                }
                Err(e) => return Err(e),
            }
        }
        if let Some((count, max)) = beyond {
            let at = max * ABORTED_TXN_ENTRY_BYTES as u64;
            let m = format!(
                "{count} entries, but the segment's .log has room for at most {max} ABORT markers, one per entry (Kafka appends an entry per aborted transaction and never preallocates this file; a sparse or padded file?): the broker reads all {count} at start-up, and a READ_COMMITTED fetch from this segment collects those it matches; the entries from position {at} on were not read"
            );
            return self.finding(Finding::error("txnindex.beyond-log", p, m).at(at));
        }
        let (partial, at) = entries.partial_tail();
        if partial != 0 {
            let m = format!(
                "{partial} trailing byte(s) at position {at} are not a whole entry (34 bytes)"
            );
            return self.finding(Finding::error("txnindex.partial-entry", p, m).at(at));
        }
        Ok(())
    }

    pub(super) fn producer_snapshot(&mut self, p: &Path) -> Result<()> {
        let bytes = self.read_small(p, StateFile::ProducerSnapshot)?;
        match snapshot::decode(&bytes) {
            Ok(s) => {
                for e in &s.entries {
                    self.emit(Event::SnapshotEntry(e))?;
                }
                Ok(())
            }
            // The loader deletes a snapshot it cannot read and rebuilds producer state from an
            // older one or from the log (`ProducerStateManager.loadFromSnapshot`).
            Err(e) => {
                let m = format!("{}: the broker deletes this snapshot at load and rebuilds producer state from an older snapshot or the log", e.message);
                self.finding(Finding::warning("snapshot.decode", p, m).at(e.pos as u64))
            }
        }
    }

    pub(super) fn leader_epochs(&mut self, p: &Path) -> Result<()> {
        let bytes = self.read_small(p, StateFile::Checkpoint)?;
        match LeaderEpochCheckpoint::decode(&bytes, &p.display().to_string()) {
            Ok(c) => c
                .entries
                .iter()
                .try_for_each(|e| self.emit(Event::LeaderEpochEntry(e))),
            Err(e) => self.finding(Finding::error("leader-epoch.decode", p, e.message)),
        }
    }

    pub(super) fn offset_checkpoint(&mut self, p: &Path) -> Result<()> {
        let bytes = self.read_small(p, StateFile::Checkpoint)?;
        match OffsetCheckpoint::decode(&bytes, &p.display().to_string()) {
            Ok(c) => c
                .entries
                .iter()
                .try_for_each(|e| self.emit(Event::OffsetCheckpointEntry(e))),
            Err(e) => self.finding(Finding::error("checkpoint.decode", p, e.message)),
        }
    }

    pub(super) fn partition_metadata(&mut self, p: &Path) -> Result<()> {
        let bytes = self.read_small(p, StateFile::Properties)?;
        match PartitionMetadata::decode(&bytes, &p.display().to_string()) {
            Ok(m) => self.emit(Event::PartitionMetadata {
                version: m.version,
                topic_id: uuid_to_base64(&m.topic_id),
            }),
            Err(e) => self.finding(Finding::error("partition-metadata.decode", p, e.message)),
        }
    }

    pub(super) fn meta_properties(&mut self, p: &Path) -> Result<()> {
        let bytes = self.read_small(p, StateFile::Properties)?;
        match MetaProperties::decode(&bytes) {
            Ok(m) => m
                .to_properties()
                .iter()
                .try_for_each(|(key, value)| self.emit(Event::Property { key, value })),
            Err(e) => self.finding(Finding::error("meta-properties.decode", p, e.message)),
        }
    }
}
