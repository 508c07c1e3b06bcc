//! Transactions across a cleaning round: which data batches belong to aborted transactions
//! and which markers can go (`CleanedTransactionMetadata`), from the source's `.txnindex`
//! entries (`collectAbortedTransactions`).

use std::collections::{BinaryHeap, HashMap, HashSet};

use crate::error::Result;
use crate::format::control::{decode_control_key, ControlRecordType};
use crate::format::entry::{Entry, RecordView};
use crate::format::index::AbortedTxn;

/// `CleanedTransactionMetadata`: which transactional batches were aborted and which markers
/// can go, tracked across the whole round.
#[derive(Default)]
pub(super) struct TxnTracker {
    /// Aborted transactions not reached yet, by first offset.
    pending: BinaryHeap<std::cmp::Reverse<(i64, i64, i64, i64)>>,
    /// pid → (the AbortedTxn, whether a batch of it was seen in this round).
    ongoing_aborted: HashMap<i64, (AbortedTxn, bool)>,
    ongoing_committed: HashSet<i64>,
}

impl TxnTracker {
    pub(super) fn add(&mut self, txns: &[AbortedTxn]) {
        for t in txns {
            self.pending.push(std::cmp::Reverse((
                t.first_offset,
                t.producer_id,
                t.last_offset,
                t.last_stable_offset,
            )));
        }
    }

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
