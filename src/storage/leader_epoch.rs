//! The leader epoch cache and its `leader-epoch-checkpoint` file (behavior.md §4,
//! formats.md §9.2): epoch → start offset, both strictly increasing. An append assigns every v2
//! batch's partition leader epoch at its base offset; an assignment that conflicts with newer
//! entries removes them. The file is rewritten (temp file, then rename) on every change, as the
//! broker's synchronous `assign` and `clearAndFlush` do.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::checkpoint::{EpochEntry, LeaderEpochCheckpoint};
use crate::format::names::LEADER_EPOCH_CHECKPOINT_FILE_NAME;

#[derive(Debug)]
pub struct LeaderEpochCache {
    path: PathBuf,
    entries: Vec<EpochEntry>,
}

impl LeaderEpochCache {
    /// An empty cache for a new log. Kafka's checkpoint file object creates an empty file up
    /// front, so a log that never saw a v2 batch still has a (0-byte) checkpoint.
    pub fn create(dir: &Path) -> Result<Self> {
        let path = dir.join(LEADER_EPOCH_CHECKPOINT_FILE_NAME);
        super::files::prepare_write(&path, false)?;
        std::fs::write(&path, b"").map_err(|e| Error::io(&path, e))?;
        Ok(LeaderEpochCache {
            path,
            entries: Vec::new(),
        })
    }

    /// The cache of an existing directory: every line of the checkpoint goes through the
    /// same rules as `assign`, without rewriting the file. A missing file is created empty,
    /// as Kafka's checkpoint file object does.
    pub fn open(dir: &Path) -> Result<Self> {
        match Self::read(dir)? {
            Some(cache) => Ok(cache),
            // There but not a regular file (a FIFO would block the write; recorded as a
            // finding by the read): empty, as the broker's cache would be, and left alone.
            None if super::files::exists(&dir.join(LEADER_EPOCH_CHECKPOINT_FILE_NAME))? => {
                Ok(LeaderEpochCache {
                    path: dir.join(LEADER_EPOCH_CHECKPOINT_FILE_NAME),
                    entries: Vec::new(),
                })
            }
            None => Self::create(dir),
        }
    }

    /// The cache of an existing directory as [`Self::open`] reads it, without creating a
    /// missing file (None then): for commands that only read.
    pub fn read(dir: &Path) -> Result<Option<Self>> {
        let path = dir.join(LEADER_EPOCH_CHECKPOINT_FILE_NAME);
        let bytes = match super::files::read_state(&path, super::files::StateFile::Checkpoint) {
            Ok(b) => b,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None)
            }
            Err(e) => return Err(e),
        };
        let file = LeaderEpochCheckpoint::decode(&bytes, &path.display().to_string())
            .map_err(|e| Error::decode(&path, 0, e))?;
        let mut cache = LeaderEpochCache {
            path,
            entries: Vec::new(),
        };
        for e in file.entries {
            cache.apply(e.epoch, e.start_offset)?;
        }
        Ok(Some(cache))
    }

    pub fn entries(&self) -> &[EpochEntry] {
        &self.entries
    }

    pub fn latest(&self) -> Option<EpochEntry> {
        self.entries.last().copied()
    }

    /// `endOffsetFor(requestedEpoch, logEndOffset)`: see [`end_offset_for`].
    pub fn end_offset_for(&self, requested_epoch: i32, log_end_offset: i64) -> EpochEndOffset {
        end_offset_for(&self.entries, requested_epoch, log_end_offset)
    }

    /// `assign(epoch, start_offset)`: nothing if the epoch is the latest one and the offset
    /// does not go back; otherwise drop every newer-or-equal epoch and every entry starting at
    /// or after `start_offset`, add the entry, and rewrite the file.
    pub fn assign(&mut self, epoch: i32, start_offset: i64) -> Result<()> {
        if self.apply(epoch, start_offset)? {
            self.write()?;
        }
        Ok(())
    }

    /// What segment recovery does: assign only an epoch greater than the latest one.
    pub fn assign_if_newer(&mut self, epoch: i32, start_offset: i64) -> Result<()> {
        if epoch >= 0 && self.latest().is_none_or(|l| epoch > l.epoch) {
            self.assign(epoch, start_offset)?;
        }
        Ok(())
    }

    /// `assign` without the write; true if the entries changed.
    fn apply(&mut self, epoch: i32, start_offset: i64) -> Result<bool> {
        if epoch < 0 || start_offset < 0 {
            return Err(Error::invalid(
                &self.path,
                format!("invalid partition leader epoch entry (epoch {epoch}, start offset {start_offset})"),
            ));
        }
        let needed = self
            .latest()
            .is_none_or(|l| epoch != l.epoch || start_offset < l.start_offset);
        if !needed {
            return Ok(false);
        }
        while self
            .entries
            .last()
            .is_some_and(|e| e.epoch >= epoch || e.start_offset >= start_offset)
        {
            self.entries.pop();
        }
        self.entries.push(EpochEntry {
            epoch,
            start_offset,
        });
        Ok(true)
    }

    /// `truncateFromEnd`: drops the entries starting at or after `end_offset` and rewrites
    /// the file if any went.
    pub fn truncate_from_end(&mut self, end_offset: i64) -> Result<()> {
        if end_offset >= 0 && self.latest().is_some_and(|l| l.start_offset >= end_offset) {
            self.entries.retain(|e| e.start_offset < end_offset);
            self.write()?;
        }
        Ok(())
    }

    /// `truncateFromStart`: drops the entries starting at or before `start_offset`, keeping
    /// the last of them re-based at `start_offset`; rewrites the file if any went.
    pub fn truncate_from_start(&mut self, start_offset: i64) -> Result<()> {
        let n = self
            .entries
            .partition_point(|e| e.start_offset <= start_offset);
        if n > 0 {
            let last = self.entries[n - 1];
            self.entries.drain(..n);
            self.entries.insert(
                0,
                EpochEntry {
                    epoch: last.epoch,
                    start_offset,
                },
            );
            self.write()?;
        }
        Ok(())
    }

    /// `clearAndFlush`: what an append of a v0/v1 batch does to a non-empty cache.
    pub fn clear_and_flush(&mut self) -> Result<()> {
        self.entries.clear();
        self.write()
    }

    fn write(&self) -> Result<()> {
        let text = LeaderEpochCheckpoint {
            entries: self.entries.clone(),
        }
        .encode();
        let tmp = self.path.with_extension("tmp");
        std::fs::write(&tmp, text).map_err(|e| Error::io(&tmp, e))?;
        super::files::rename(&tmp, &self.path)
    }
}

/// Kafka's undefined epoch and offset (`UNDEFINED_EPOCH`, `UNDEFINED_EPOCH_OFFSET`).
pub const UNDEFINED_EPOCH: i32 = -1;
pub const UNDEFINED_EPOCH_OFFSET: i64 = -1;

/// What `endOffsetFor` answers: the epoch it found and where that epoch ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EpochEndOffset {
    pub leader_epoch: i32,
    pub end_offset: i64,
}

impl EpochEndOffset {
    pub const UNDEFINED: EpochEndOffset = EpochEndOffset {
        leader_epoch: UNDEFINED_EPOCH,
        end_offset: UNDEFINED_EPOCH_OFFSET,
    };
}

/// `LeaderEpochFileCache.endOffsetFor` over `entries` (epochs and start offsets increasing):
/// the latest epoch ends at the log end offset; an older one at the start of the first
/// larger epoch, reported as the largest epoch at or below the requested one (the requested
/// epoch itself when it is below every entry); an undefined or unknown-newer epoch is
/// undefined.
pub fn end_offset_for(
    entries: &[EpochEntry],
    requested_epoch: i32,
    log_end_offset: i64,
) -> EpochEndOffset {
    if requested_epoch == UNDEFINED_EPOCH {
        return EpochEndOffset::UNDEFINED;
    }
    if entries.last().is_some_and(|l| l.epoch == requested_epoch) {
        return EpochEndOffset {
            leader_epoch: requested_epoch,
            end_offset: log_end_offset,
        };
    }
    let higher = entries.partition_point(|e| e.epoch <= requested_epoch);
    let Some(next) = entries.get(higher) else {
        return EpochEndOffset::UNDEFINED;
    };
    let leader_epoch = match higher.checked_sub(1) {
        Some(floor) => entries[floor].epoch,
        None => requested_epoch,
    };
    EpochEndOffset {
        leader_epoch,
        end_offset: next.start_offset,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache_with(entries: &[(i32, i64)]) -> (tempfile::TempDir, LeaderEpochCache) {
        let dir = tempfile::tempdir().unwrap();
        let mut c = LeaderEpochCache::create(dir.path()).unwrap();
        for &(e, o) in entries {
            c.assign(e, o).unwrap();
        }
        (dir, c)
    }

    fn pairs(c: &LeaderEpochCache) -> Vec<(i32, i64)> {
        c.entries()
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect()
    }

    #[test]
    fn assign_examples_from_the_spec() {
        assert_eq!(pairs(&cache_with(&[(2, 9), (2, 10)]).1), vec![(2, 9)]);
        assert_eq!(pairs(&cache_with(&[(2, 9), (3, 9)]).1), vec![(3, 9)]);
        assert_eq!(pairs(&cache_with(&[(2, 6), (3, 5)]).1), vec![(3, 5)]);
        assert_eq!(
            pairs(&cache_with(&[(1, 5), (2, 6), (1, 7)]).1),
            vec![(1, 7)]
        );
        assert_eq!(
            pairs(&cache_with(&[(5, 11), (6, 12), (7, 13), (7, 12)]).1),
            vec![(5, 11), (7, 12)]
        );
    }

    #[test]
    fn truncations_from_the_spec() {
        let t = |f: &dyn Fn(&mut LeaderEpochCache)| {
            let (_d, mut c) = cache_with(&[(2, 6), (3, 8), (4, 11)]);
            f(&mut c);
            pairs(&c)
        };
        assert_eq!(t(&|c| c.truncate_from_end(8).unwrap()), vec![(2, 6)]);
        assert_eq!(
            t(&|c| c.truncate_from_end(9).unwrap()),
            vec![(2, 6), (3, 8)]
        );
        assert_eq!(
            t(&|c| c.truncate_from_start(6).unwrap()),
            vec![(2, 6), (3, 8), (4, 11)]
        );
        assert_eq!(
            t(&|c| c.truncate_from_start(9).unwrap()),
            vec![(3, 9), (4, 11)]
        );
        assert_eq!(t(&|c| c.truncate_from_start(15).unwrap()), vec![(4, 15)]);
        assert_eq!(
            t(&|c| c.assign_if_newer(3, 20).unwrap()),
            vec![(2, 6), (3, 8), (4, 11)]
        );
    }

    /// The rule of `LeaderEpochFileCache.endOffsetFor` (storage/src/main/java/org/apache/kafka/
    /// storage/internals/epoch/LeaderEpochFileCache.java) by hand, and the cases of its test
    /// (core/src/test/scala/unit/kafka/server/epoch/LeaderEpochFileCacheTest.scala).
    #[test]
    fn end_offset_for_as_kafka_answers() {
        let (_d, c) = cache_with(&[(2, 6), (3, 8), (5, 11)]);
        let at = |epoch, leo| {
            let r = c.end_offset_for(epoch, leo);
            (r.leader_epoch, r.end_offset)
        };
        assert_eq!(at(5, 20), (5, 20), "the latest epoch ends at the log end");
        assert_eq!(
            at(3, 20),
            (3, 11),
            "an older epoch ends where the next starts"
        );
        assert_eq!(
            at(4, 20),
            (3, 11),
            "an unknown epoch: the largest one below it"
        );
        assert_eq!(
            at(1, 20),
            (1, 6),
            "below every epoch: the first start offset"
        );
        assert_eq!(at(6, 20), (-1, -1), "newer than the latest: undefined");
        assert_eq!(at(-1, 20), (-1, -1));
        let (_e, empty) = cache_with(&[]);
        assert_eq!(empty.end_offset_for(0, 5), EpochEndOffset::UNDEFINED);
        // shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested
        let (_f, k) = cache_with(&[(0, 10), (2, 13), (4, 17)]);
        let got: Vec<_> = [1, 2, 3]
            .map(|e| k.end_offset_for(e, 0))
            .map(|r| (r.leader_epoch, r.end_offset))
            .to_vec();
        assert_eq!(got, vec![(0, 13), (2, 17), (2, 17)]);
    }

    #[test]
    fn checkpoint_text_and_clear() {
        let (dir, mut c) = cache_with(&[(0, 0), (3, 1500)]);
        let path = dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE_NAME);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "0\n2\n0 0\n3 1500\n"
        );
        c.clear_and_flush().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "0\n0\n");
        assert!(c.assign(-1, 0).is_err());
    }
}
