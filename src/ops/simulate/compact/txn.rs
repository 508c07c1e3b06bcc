//! Transactions across a cleaning round: which data batches belong to aborted transactions
//! and which markers can go (`CleanedTransactionMetadata`), from the source's `.txnindex`
//! entries (`collectAbortedTransactions`).

use std::collections::{BinaryHeap, HashMap, HashSet};

use crate::error::Result;
use crate::format::control::{decode_control_key, ControlRecordType};
use crate::format::entry::{Entry, RecordView};
use crate::format::index::AbortedTxn;
use crate::storage::txn_index::{heap_order, AbortedTxnSink};

/// `CleanedTransactionMetadata`: which transactional batches were aborted and which markers
/// can go, tracked across the whole round.
#[derive(Default)]
pub(super) struct TxnTracker {
    /// Aborted transactions not reached yet, by first offset ([`heap_order`]).
    pending: BinaryHeap<std::cmp::Reverse<(i64, i64, i64, i64)>>,
    /// pid → (the AbortedTxn, whether a batch of it was seen in this round).
    ongoing_aborted: HashMap<i64, (AbortedTxn, bool)>,
    ongoing_committed: HashSet<i64>,
}

/// The round's collections of aborted transactions go straight into the queue (32 bytes an
/// entry).
impl AbortedTxnSink for TxnTracker {
    fn reserve(&mut self, count: usize) {
        self.pending.reserve_exact(count);
    }
    fn push(&mut self, t: AbortedTxn) {
        self.pending.push(std::cmp::Reverse(heap_order(&t)));
    }
}

impl TxnTracker {
    fn consume_up_to(&mut self, offset: i64) {
        while let Some(std::cmp::Reverse((first, pid, last, lso))) = self.pending.peek().copied() {
            if first > offset {
                break;
            }
            self.pending.pop();
            self.ongoing_aborted.entry(pid).or_insert((
                AbortedTxn {
                    version: crate::format::index::ABORTED_TXN_CURRENT_VERSION,
                    producer_id: pid,
                    first_offset: first,
                    last_offset: last,
                    last_stable_offset: lso,
                },
                false,
            ));
        }
    }

    /// A data batch: true if it belongs to an aborted transaction.
    pub(super) fn on_batch(&mut self, e: &Entry<'_>, pid: i64) -> bool {
        self.consume_up_to(e.last_offset());
        if !e.is_transactional() {
            return false;
        }
        match self.ongoing_aborted.get_mut(&pid) {
            Some(t) => {
                t.1 = true;
                true
            }
            None => {
                self.ongoing_committed.insert(pid);
                false
            }
        }
    }

    /// A control batch: whether it can go, and an aborted transaction to index in the cleaned
    /// segment (its data was seen, so the marker stays).
    pub(super) fn on_control(
        &mut self,
        e: &Entry<'_>,
        pid: i64,
        first: Option<&RecordView<'_>>,
    ) -> Result<(bool, Option<AbortedTxn>), crate::format::DecodeError> {
        self.consume_up_to(e.last_offset());
        let Some(r) = first else {
            return Ok((true, None));
        };
        Ok(match decode_control_key(r.key)? {
            ControlRecordType::Abort => match self.ongoing_aborted.remove(&pid) {
                Some((txn, true)) => (false, Some(txn)),
                _ => (true, None),
            },
            ControlRecordType::Commit => (!self.ongoing_committed.remove(&pid), None),
            _ => (false, None),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch::{build_batch_of_records, encode_record, BatchSpec, RecordSpec};
    use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
    use crate::format::control::{encode_control_key, EndTxnMarker};
    use crate::storage::read::{marker_type, BatchTraits, CommittedView};
    use crate::storage::txn_index::{Usable, WalkedBatch};
    use proptest::prelude::*;

    /// One batch at its offset: (producer, kind) with kind 0 a transactional data batch, 1 a
    /// plain one, 2 an ABORT marker, 3 a COMMIT marker.
    fn batch(offset: i64, producer: i64, kind: u8) -> Vec<u8> {
        let control = kind >= 2;
        let r = RecordSpec {
            offset,
            timestamp: 0,
            key: Some(if control {
                let t = if kind == 2 {
                    ControlRecordType::Abort
                } else {
                    ControlRecordType::Commit
                };
                encode_control_key(t).to_vec()
            } else {
                b"k".to_vec()
            }),
            value: Some(if control {
                EndTxnMarker::encode(0).to_vec()
            } else {
                b"v".to_vec()
            }),
            headers: vec![],
        };
        let mut raw = Vec::new();
        encode_record(&mut raw, 0, 0, &r).unwrap();
        let spec = BatchSpec {
            base_offset: offset,
            producer_id: producer,
            is_transactional: kind != 1,
            is_control: control,
            ..BatchSpec::default()
        };
        build_batch_of_records(&spec, &raw, 1, 0, 0, offset).unwrap()
    }

    /// What the cleaner decides for each batch, the aborted transactions added at the start and
    /// (`later`) at batch `at`.
    fn cleaner(
        log: &[Vec<u8>],
        first: &[AbortedTxn],
        at: usize,
        later: &[AbortedTxn],
    ) -> Vec<(bool, Option<AbortedTxn>)> {
        let mut tracker = TxnTracker::default();
        let mut out = Vec::new();
        for (i, bytes) in log.iter().enumerate() {
            let add = |tracker: &mut TxnTracker, txns: &[AbortedTxn]| {
                tracker.reserve(txns.len());
                txns.iter().for_each(|t| tracker.push(*t));
            };
            if i == 0 {
                add(&mut tracker, first);
            }
            if i == at {
                add(&mut tracker, later);
            }
            let e = Entry::decode(bytes).unwrap();
            let pid = BatchTraits::of(&e).producer_id;
            if e.is_control() {
                let mut scratch = Vec::new();
                let r = e
                    .records(&mut scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
                    .unwrap()
                    .next()
                    .map(|r| r.unwrap());
                out.push(tracker.on_control(&e, pid, r.as_ref()).unwrap());
            } else {
                out.push((tracker.on_batch(&e, pid), None));
            }
        }
        out
    }

    /// What a read_committed consumer keeps of each batch.
    fn consumer(log: &[Vec<u8>], txns: &[AbortedTxn]) -> Vec<bool> {
        let mut view = CommittedView::new(txns.to_vec());
        let mut scratch = Vec::new();
        log.iter()
            .map(|bytes| {
                let e = Entry::decode(bytes).unwrap();
                view.keeps(&BatchTraits::of(&e), marker_type(&e, &mut scratch))
            })
            .collect()
    }

    fn usable(log: &[Vec<u8>]) -> Usable {
        let mut u = Usable::default();
        assert!(u.add(
            log.iter()
                .map(|b| WalkedBatch::of(&Entry::decode(b).unwrap()))
        ));
        u.finish()
    }

    proptest! {
        /// Only the first entry of each group is kept, and neither reader can tell: the
        /// cleaner's decisions (and the entries it indexes) and the consumer's are those of
        /// every entry. Few producers and offsets, so that groups hold many entries.
        #[test]
        fn the_first_of_each_group_decides_as_all_entries_do(
            walk in proptest::collection::vec((0i64..4, 0u8..4), 1..40),
            txns in proptest::collection::vec((0i64..5, 0i64..45, 0i64..5, 0i64..45), 0..60),
            at in 0usize..40,
            split in 0usize..60,
        ) {
            let log: Vec<Vec<u8>> = walk
                .iter()
                .enumerate()
                .map(|(o, &(p, k))| batch(o as i64, p, k))
                .collect();
            let txns: Vec<AbortedTxn> = txns
                .iter()
                .map(|&(p, first, len, lso)| AbortedTxn {
                    version: 0,
                    producer_id: p,
                    first_offset: first,
                    last_offset: first + len,
                    last_stable_offset: lso,
                })
                .collect();
            let (first, later) = txns.split_at(split.min(txns.len()));
            let u = usable(&log);
            let kept = |t: &[AbortedTxn]| u.first_of_groups(t.iter().copied());
            prop_assert_eq!(consumer(&log, &txns), consumer(&log, &kept(&txns)));
            prop_assert_eq!(
                cleaner(&log, first, at, later),
                cleaner(&log, &kept(first), at, &kept(later))
            );
        }
    }
}
