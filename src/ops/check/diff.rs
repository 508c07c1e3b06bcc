//! `diff`: two replicas of one partition (directories copied from two brokers), compared the
//! way the broker would reconcile them and record by record.
//!
//! Two independent answers to "where do they diverge":
//! - by leader epochs, as a follower truncates after an election (KIP-101/KIP-279): the
//!   follower sends its latest epoch (`OffsetsForLeaderEpoch`), the leader answers with
//!   `endOffsetFor` on its cache, and the follower truncates to the minimum of that end offset,
//!   its own end offset for the epoch the leader answered and its log end — or, when it does
//!   not know that epoch, to the end of its own largest epoch below it and asks again
//!   (`AbstractFetcherThread.getOffsetTruncationState`). Computed in both directions (B
//!   following A, A following B) from the `leader-epoch-checkpoint` files;
//! - by the batches themselves: the first offset where the two streams of batches (in offset
//!   order, segment boundaries left out) stop being byte-identical, and what lies only on one
//!   side (below the other's log start, or after the divergence).
//!
//! Also compared: the log start offsets, the producer state the batches leave (each
//! producer's epoch, last sequence and last offset) and the aborted transactions of the
//! `.txnindex` files. Nothing is written.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use super::stream::{OwnedBatch, PartitionBatches, Stopped};
use crate::error::{Error, Expected, Result, Unusable};
use crate::format::batch::PARTITION_LEADER_EPOCH_OFFSET;
use crate::format::checkpoint::EpochEntry;
use crate::format::entry::Entry;
use crate::format::index::AbortedTxn;
use crate::format::names::TXN_INDEX_FILE_SUFFIX;
use crate::ops::input::{live_partitions, resolve, sibling, Shape, NO_LIVE_PARTITION};
use crate::ops::partition::{loaded_log_start, LogStartSource};
use crate::storage::leader_epoch::{end_offset_for, UNDEFINED_EPOCH_OFFSET};
use crate::storage::txn_index::TxnIndexEntries;
use crate::storage::LeaderEpochCache;

/// One side's offsets and counts.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SideSummary {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub dir: PathBuf,
    pub log_start_offset: i64,
    pub log_start_offset_source: LogStartSource,
    pub log_end_offset: i64,
    /// The checkpoint's epochs (those starting below the log end), oldest first.
    pub leader_epochs: Vec<EpochEntry>,
    #[serde(rename = "batchCount")]
    pub batches: u64,
    #[serde(rename = "recordCount")]
    pub records: u64,
    /// Reading stopped at damage here; later batches were not compared.
    pub stopped: Option<Stopped>,
}

/// A run of batches only one side has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OnlyRange {
    pub base_offset: i64,
    pub last_offset: i64,
    #[serde(rename = "batchCount")]
    pub batches: u64,
    #[serde(rename = "recordCount")]
    pub records: u64,
}

/// A batch named in a difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchRef {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub file: PathBuf,
    pub position: u64,
    pub base_offset: i64,
    pub last_offset: i64,
    pub crc: u32,
    pub partition_leader_epoch: Option<i32>,
}

/// Where the batch streams stop agreeing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FirstDifference {
    pub offset: i64,
    /// `offsets` (the batches cover different offsets), `content` (same offsets, other
    /// bytes), `partitionLeaderEpoch` (the same bytes but for the epoch, which the CRC does not
    /// cover), `aEnds` / `bEnds` (one side has no more batches).
    pub kind: &'static str,
    pub a: Option<BatchRef>,
    pub b: Option<BatchRef>,
}

/// One round of the `OffsetsForLeaderEpoch` exchange.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Exchange {
    /// The follower's latest epoch, sent to the leader.
    pub requested_epoch: i32,
    /// The leader's answer.
    pub leader_epoch: i32,
    pub leader_end_offset: i64,
    /// Where the follower truncates after this round.
    pub truncate_to: i64,
    /// False when the follower did not know the leader's epoch and asks again.
    pub completed: bool,
}

/// The follower's truncation against the leader's epochs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FollowerTruncation {
    /// None when the broker would fall back to the follower's high watermark, which the
    /// directory does not hold (`note` says why).
    pub truncate_to: Option<i64>,
    pub exchanges: Vec<Exchange>,
    pub note: Option<String>,
}

/// A producer's last batch as the log leaves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProducerLast {
    pub producer_epoch: i16,
    pub last_sequence: i32,
    pub last_offset: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProducerDifference {
    pub producer_id: i64,
    pub a: Option<ProducerLast>,
    pub b: Option<ProducerLast>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TxnEntry {
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffReport {
    pub a: SideSummary,
    pub b: SideSummary,
    /// B truncating as a follower of A, and A as a follower of B.
    pub b_following_a: FollowerTruncation,
    pub a_following_b: FollowerTruncation,
    pub first_difference: Option<FirstDifference>,
    pub only_a: Vec<OnlyRange>,
    pub only_b: Vec<OnlyRange>,
    pub producers: Vec<ProducerDifference>,
    pub aborted_txns_only_a: Vec<TxnEntry>,
    pub aborted_txns_only_b: Vec<TxnEntry>,
}

/// The follower's truncation (`AbstractFetcherThread.getOffsetTruncationState`, with the
/// answers of `LeaderEpochFileCache.endOffsetFor` on both sides), rounds repeated while the
/// follower does not know the epoch the leader answered with.
pub fn follower_truncation(
    leader: &[EpochEntry],
    leader_log_end: i64,
    follower: &[EpochEntry],
    follower_log_end: i64,
) -> FollowerTruncation {
    let mut entries = follower;
    let mut log_end = follower_log_end;
    let mut exchanges = Vec::new();
    loop {
        let Some(latest) = entries.last() else {
            return FollowerTruncation {
                truncate_to: None,
                exchanges,
                note: Some(
                    "the follower has no leader epoch: the broker truncates it to its high watermark"
                        .into(),
                ),
            };
        };
        let answer = end_offset_for(leader, latest.epoch, leader_log_end);
        if answer.end_offset == UNDEFINED_EPOCH_OFFSET {
            return FollowerTruncation {
                truncate_to: None,
                exchanges,
                note: Some(format!(
                    "the leader answers epoch {} with an undefined offset: the broker truncates the follower to its high watermark",
                    latest.epoch
                )),
            };
        }
        let local = end_offset_for(entries, answer.leader_epoch, log_end);
        let (truncate_to, completed) = if local.end_offset == UNDEFINED_EPOCH_OFFSET {
            // The follower tracks no epoch at or below the answer: the leader's offset.
            (answer.end_offset.min(log_end), true)
        } else if local.leader_epoch != answer.leader_epoch {
            (local.end_offset.min(log_end), false)
        } else {
            (local.end_offset.min(answer.end_offset).min(log_end), true)
        };
        exchanges.push(Exchange {
            requested_epoch: latest.epoch,
            leader_epoch: answer.leader_epoch,
            leader_end_offset: answer.end_offset,
            truncate_to,
            completed,
        });
        // The truncation drops the epochs starting at or after it (`truncateFromEnd`).
        let kept = &entries[..entries.partition_point(|e| e.start_offset < truncate_to)];
        if completed || kept.len() == entries.len() {
            return FollowerTruncation {
                truncate_to: Some(truncate_to),
                exchanges,
                note: None,
            };
        }
        entries = kept;
        log_end = truncate_to;
    }
}

/// One side's walk: its batch stream with one batch looked ahead, and what it has seen.
struct Side {
    batches: PartitionBatches,
    log_start_offset: i64,
    log_start_source: LogStartSource,
    peeked: Option<OwnedBatch>,
    done: bool,
    count: u64,
    records: u64,
    log_end_offset: i64,
    producers: BTreeMap<i64, ProducerLast>,
    only: Vec<OnlyRange>,
    /// Whether the next batch only this side has extends the last range.
    only_open: bool,
    scratch: Vec<u8>,
}

impl Side {
    fn open(dir: &Path) -> Result<Self> {
        let batches = PartitionBatches::open(dir)?;
        let first_base = batches
            .logs()
            .first()
            .and_then(|l| crate::ops::input::kind_of(l, None).kind.offset())
            .unwrap_or(0);
        let log_start = loaded_log_start(dir, first_base)?;
        let log_start_offset = log_start.offset;
        Ok(Side {
            batches,
            log_start_offset,
            log_start_source: log_start.source,
            peeked: None,
            done: false,
            count: 0,
            records: 0,
            log_end_offset: log_start_offset,
            producers: BTreeMap::new(),
            only: Vec::new(),
            only_open: false,
            scratch: Vec::new(),
        })
    }

    /// Looks ahead to the next batch at or above the log start offset.
    fn fill(&mut self) -> Result<()> {
        while self.peeked.is_none() && !self.done {
            match self.batches.next_batch()? {
                Some(b) if b.last_offset < self.log_start_offset => {}
                Some(b) => self.peeked = Some(b),
                None => self.done = true,
            }
        }
        Ok(())
    }

    /// Consumes the peeked batch; `only` when the other side does not have it.
    fn take(&mut self, only: bool) -> Result<()> {
        let b = self.peeked.take().expect("peeked before");
        let records = b.record_count(&mut self.scratch);
        self.count += 1;
        self.records += records;
        self.log_end_offset = b.last_offset + 1;
        if let Entry::V2(v2) = b.entry() {
            let h = &v2.header;
            if h.producer_id >= 0 {
                self.producers.insert(
                    h.producer_id,
                    ProducerLast {
                        producer_epoch: h.producer_epoch,
                        last_sequence: h.last_sequence(),
                        last_offset: h.last_offset(),
                    },
                );
            }
        }
        if !only {
            self.only_open = false;
            return Ok(());
        }
        match self.only.last_mut().filter(|_| self.only_open) {
            Some(r) => {
                r.last_offset = b.last_offset;
                r.batches += 1;
                r.records += records;
            }
            None => self.only.push(OnlyRange {
                base_offset: b.base_offset,
                last_offset: b.last_offset,
                batches: 1,
                records,
            }),
        }
        self.only_open = true;
        Ok(())
    }

    fn batch_ref(&self, b: &OwnedBatch) -> BatchRef {
        let e = b.entry();
        BatchRef {
            file: self.batches.logs()[b.log].clone(),
            position: b.position,
            base_offset: b.base_offset,
            last_offset: b.last_offset,
            crc: e.stored_crc(),
            partition_leader_epoch: match e {
                Entry::V2(v2) => Some(v2.header.partition_leader_epoch),
                Entry::Legacy(_) => None,
            },
        }
    }
}

/// How two batches at the same place differ; None when they are the same bytes.
fn batch_difference(x: &OwnedBatch, y: &OwnedBatch) -> Option<&'static str> {
    if x.bytes == y.bytes {
        return None;
    }
    if (x.base_offset, x.last_offset) != (y.base_offset, y.last_offset) {
        return Some("offsets");
    }
    let epoch = PARTITION_LEADER_EPOCH_OFFSET..PARTITION_LEADER_EPOCH_OFFSET + 4;
    let v2 = matches!((x.entry(), y.entry()), (Entry::V2(_), Entry::V2(_)));
    let same_but_epoch = v2
        && x.bytes.len() == y.bytes.len()
        && x.bytes[..epoch.start] == y.bytes[..epoch.start]
        && x.bytes[epoch.end..] == y.bytes[epoch.end..];
    Some(if same_but_epoch {
        "partitionLeaderEpoch"
    } else {
        "content"
    })
}

/// The aborted transactions of every `.txnindex` beside the segments.
fn aborted_txns(batches: &PartitionBatches) -> Result<BTreeSet<(i64, i64, i64, i64)>> {
    let mut out = BTreeSet::new();
    for log in batches.logs() {
        let path = sibling(log, TXN_INDEX_FILE_SUFFIX);
        let entries = match TxnIndexEntries::open(&path) {
            Ok(entries) => entries,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                continue
            }
            Err(e) => return Err(e),
        };
        for t in entries {
            let t: AbortedTxn = t?;
            out.insert((
                t.last_offset,
                t.first_offset,
                t.producer_id,
                t.last_stable_offset,
            ));
        }
    }
    Ok(out)
}

fn txn_entries<'a>(set: impl Iterator<Item = &'a (i64, i64, i64, i64)>) -> Vec<TxnEntry> {
    set.map(
        |&(last_offset, first_offset, producer_id, last_stable_offset)| TxnEntry {
            producer_id,
            first_offset,
            last_offset,
            last_stable_offset,
        },
    )
    .collect()
}

/// The epochs of `dir`'s checkpoint that start below `log_end` (the broker's load truncates
/// the cache to the log end); none when the file is missing.
fn epochs(dir: &Path, log_end: i64) -> Result<Vec<EpochEntry>> {
    let mut entries = LeaderEpochCache::read(dir)?
        .map(|c| c.entries().to_vec())
        .unwrap_or_default();
    entries.retain(|e| e.start_offset < log_end);
    Ok(entries)
}

/// Compares the partition directories `a` and `b`.
pub fn diff(a_dir: &Path, b_dir: &Path) -> Result<DiffReport> {
    let (mut a, mut b) = (Side::open(a_dir)?, Side::open(b_dir)?);
    let mut common_seen = false;
    let mut first_difference: Option<FirstDifference> = None;
    loop {
        a.fill()?;
        b.fill()?;
        let (x, y) = (a.peeked.as_ref(), b.peeked.as_ref());
        // Which side(s) to consume, and whether it is only on that side.
        let (take_a, take_b) = match (x, y) {
            (None, None) => break,
            _ if first_difference.is_some() => (x.is_some(), y.is_some()),
            (Some(x), None) => {
                first_difference = Some(FirstDifference {
                    offset: x.base_offset,
                    kind: "bEnds",
                    a: Some(a.batch_ref(x)),
                    b: None,
                });
                (true, false)
            }
            (None, Some(y)) => {
                first_difference = Some(FirstDifference {
                    offset: y.base_offset,
                    kind: "aEnds",
                    a: None,
                    b: Some(b.batch_ref(y)),
                });
                (false, true)
            }
            (Some(x), Some(y)) => match batch_difference(x, y) {
                None => {
                    common_seen = true;
                    a.take(false)?;
                    b.take(false)?;
                    continue;
                }
                // Below the other side's first batch: that side's log starts later.
                Some(_) if !common_seen && x.last_offset < y.base_offset => (true, false),
                Some(_) if !common_seen && y.last_offset < x.base_offset => (false, true),
                Some(kind) => {
                    first_difference = Some(FirstDifference {
                        offset: x.base_offset.min(y.base_offset),
                        kind,
                        a: Some(a.batch_ref(x)),
                        b: Some(b.batch_ref(y)),
                    });
                    a.only_open = false;
                    b.only_open = false;
                    (true, true)
                }
            },
        };
        if take_a {
            a.take(true)?;
        }
        if take_b {
            b.take(true)?;
        }
    }
    let (a_epochs, b_epochs) = (
        epochs(a_dir, a.log_end_offset)?,
        epochs(b_dir, b.log_end_offset)?,
    );
    let b_following_a =
        follower_truncation(&a_epochs, a.log_end_offset, &b_epochs, b.log_end_offset);
    let a_following_b =
        follower_truncation(&b_epochs, b.log_end_offset, &a_epochs, a.log_end_offset);
    let ids: BTreeSet<i64> = a
        .producers
        .keys()
        .chain(b.producers.keys())
        .copied()
        .collect();
    let producers = ids
        .into_iter()
        .filter_map(|id| {
            let (pa, pb) = (a.producers.get(&id).copied(), b.producers.get(&id).copied());
            (pa != pb).then_some(ProducerDifference {
                producer_id: id,
                a: pa,
                b: pb,
            })
        })
        .collect();
    let (ta, tb) = (aborted_txns(&a.batches)?, aborted_txns(&b.batches)?);
    let summary = |s: &Side, dir: &Path, leader_epochs| SideSummary {
        dir: dir.to_path_buf(),
        log_start_offset: s.log_start_offset,
        log_start_offset_source: s.log_start_source,
        log_end_offset: s.log_end_offset,
        leader_epochs,
        batches: s.count,
        records: s.records,
        stopped: s.batches.stopped().cloned(),
    };
    Ok(DiffReport {
        a: summary(&a, a_dir, a_epochs),
        b: summary(&b, b_dir, b_epochs),
        b_following_a,
        a_following_b,
        first_difference,
        only_a: std::mem::take(&mut a.only),
        only_b: std::mem::take(&mut b.only),
        producers,
        aborted_txns_only_a: txn_entries(ta.difference(&tb)),
        aborted_txns_only_b: txn_entries(tb.difference(&ta)),
    })
}

impl DiffReport {
    /// No batch, log start offset, producer or aborted transaction differs.
    pub fn identical(&self) -> bool {
        self.first_difference.is_none()
            && self.only_a.is_empty()
            && self.only_b.is_empty()
            && self.a.log_start_offset == self.b.log_start_offset
            && self.producers.is_empty()
            && self.aborted_txns_only_a.is_empty()
            && self.aborted_txns_only_b.is_empty()
    }

    /// Where the logs stop agreeing by their leader epochs: the smaller of the two
    /// truncations (each is bounded by its follower's log end).
    pub fn epoch_divergence(&self) -> Option<i64> {
        match (
            self.b_following_a.truncate_to,
            self.a_following_b.truncate_to,
        ) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "format": crate::ops::JSON_FORMAT,
            "identical": self.identical(),
            "a": self.a,
            "b": self.b,
            "epochDivergence": self.epoch_divergence(),
            "bFollowingA": self.b_following_a,
            "aFollowingB": self.a_following_b,
            "firstDifference": self.first_difference,
            "rangesOnlyA": self.only_a,
            "rangesOnlyB": self.only_b,
            "producers": self.producers,
            "abortedTxnsOnlyA": self.aborted_txns_only_a,
            "abortedTxnsOnlyB": self.aborted_txns_only_b,
        })
    }

    pub fn render_text(&self) -> String {
        let mut out = String::new();
        for (name, s) in [("A", &self.a), ("B", &self.b)] {
            out.push_str(&format!(
                "{name}: {}: log start offset {}, log end offset {}, {} batch(es), {} record(s)\n",
                s.dir.display(),
                s.log_start_offset,
                s.log_end_offset,
                s.batches,
                s.records
            ));
            if let Some(st) = &s.stopped {
                out.push_str(&format!(
                    "   read up to damage in {} at position {}: {}\n",
                    st.file.display(),
                    st.position,
                    st.message
                ));
            }
        }
        if self.identical() {
            out.push_str("identical\n");
            return out;
        }
        let t = |t: &FollowerTruncation| match (t.truncate_to, &t.note) {
            (Some(o), _) => o.to_string(),
            (None, Some(n)) => format!("undefined ({n})"),
            (None, None) => "undefined".into(),
        };
        out.push_str(&format!(
            "by leader epochs: B following A truncates to {}; A following B truncates to {}\n",
            t(&self.b_following_a),
            t(&self.a_following_b)
        ));
        match &self.first_difference {
            Some(d) => out.push_str(&format!(
                "batches first differ at offset {} ({})\n",
                d.offset, d.kind
            )),
            None => out.push_str("batches agree where both have them\n"),
        }
        for (name, ranges) in [("A", &self.only_a), ("B", &self.only_b)] {
            for r in ranges {
                out.push_str(&format!(
                    "only on {name}: offsets {}..={} ({} batch(es), {} record(s))\n",
                    r.base_offset, r.last_offset, r.batches, r.records
                ));
            }
        }
        if self.a.log_start_offset != self.b.log_start_offset {
            out.push_str(&format!(
                "log start offsets differ: {} on A, {} on B\n",
                self.a.log_start_offset, self.b.log_start_offset
            ));
        }
        for p in &self.producers {
            let show = |l: &Option<ProducerLast>| match l {
                Some(l) => format!(
                    "epoch {} last sequence {} last offset {}",
                    l.producer_epoch, l.last_sequence, l.last_offset
                ),
                None => "absent".into(),
            };
            out.push_str(&format!(
                "producer {}: {} on A, {} on B\n",
                p.producer_id,
                show(&p.a),
                show(&p.b)
            ));
        }
        for (name, txns) in [
            ("A", &self.aborted_txns_only_a),
            ("B", &self.aborted_txns_only_b),
        ] {
            for t in txns {
                out.push_str(&format!(
                    "aborted transaction only on {name}: producer {} offsets {}..={} (last stable offset {})\n",
                    t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset
                ));
            }
        }
        out
    }
}

/// One partition of two log dirs compared.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionComparison {
    pub topic: String,
    pub partition: i32,
    /// `identical`, `onlyInA`, `onlyInB` or `diverge`.
    pub status: &'static str,
    /// The partition directory on each side; null where it is absent. (`aDir`: `a` is a
    /// replica's side, an object, in the diff of two partitions.)
    #[serde(rename = "aDir", serialize_with = "crate::format::os_path::serialize")]
    pub a: Option<PathBuf>,
    #[serde(rename = "bDir", serialize_with = "crate::format::os_path::serialize")]
    pub b: Option<PathBuf>,
    /// Where they stop agreeing (`diverge`): the first differing batch's offset, else the lower
    /// log start offset, else the first aborted transaction only one side has; null when only
    /// producer state differs.
    pub offset: Option<i64>,
    /// The partition leader epoch of the first differing batch (A's, else B's); null without
    /// one (a legacy batch, or no batch differs).
    pub leader_epoch: Option<i32>,
    /// What differs first: a `firstDifference` kind (`offsets`, `content`,
    /// `partitionLeaderEpoch`, `aEnds`, `bEnds`), `logStartOffset`, `producers` or
    /// `abortedTxns`; null unless `diverge`.
    pub difference: Option<&'static str>,
    /// Where reading stopped at damage on each side; later batches were not compared.
    pub a_stopped: Option<Stopped>,
    pub b_stopped: Option<Stopped>,
}

impl PartitionComparison {
    fn only(key: &(String, i32), a: Option<&Path>, b: Option<&Path>) -> Self {
        PartitionComparison {
            topic: key.0.clone(),
            partition: key.1,
            status: if a.is_some() { "onlyInA" } else { "onlyInB" },
            a: a.map(Path::to_path_buf),
            b: b.map(Path::to_path_buf),
            offset: None,
            leader_epoch: None,
            difference: None,
            a_stopped: None,
            b_stopped: None,
        }
    }

    fn of(key: &(String, i32), r: &DiffReport) -> Self {
        let (offset, leader_epoch, difference) = if r.identical() {
            (None, None, None)
        } else if let Some(d) = &r.first_difference {
            let epoch =
                d.a.as_ref()
                    .or(d.b.as_ref())
                    .and_then(|b| b.partition_leader_epoch);
            (Some(d.offset), epoch, Some(d.kind))
        } else if r.a.log_start_offset != r.b.log_start_offset {
            let lower = r.a.log_start_offset.min(r.b.log_start_offset);
            (Some(lower), None, Some("logStartOffset"))
        } else if !r.producers.is_empty() {
            (None, None, Some("producers"))
        } else {
            let first = r
                .aborted_txns_only_a
                .iter()
                .chain(&r.aborted_txns_only_b)
                .map(|t| t.first_offset)
                .min();
            (first, None, Some("abortedTxns"))
        };
        PartitionComparison {
            topic: key.0.clone(),
            partition: key.1,
            status: if r.identical() {
                "identical"
            } else {
                "diverge"
            },
            a: Some(r.a.dir.clone()),
            b: Some(r.b.dir.clone()),
            offset,
            leader_epoch,
            difference,
            a_stopped: r.a.stopped.clone(),
            b_stopped: r.b.stopped.clone(),
        }
    }

    /// `orders-0  diverge at offset 100 (epoch 2): content`.
    fn line(&self) -> String {
        let what = match self.status {
            "identical" => "identical".to_owned(),
            "onlyInA" => "only in A".to_owned(),
            "onlyInB" => "only in B".to_owned(),
            _ => {
                let at = match (self.offset, self.leader_epoch) {
                    (Some(o), Some(e)) => format!("diverge at offset {o} (epoch {e})"),
                    (Some(o), None) => format!("diverge at offset {o}"),
                    (None, _) => "diverge".to_owned(),
                };
                format!("{at}: {}", self.difference.unwrap_or("content"))
            }
        };
        format!("{}-{}  {what}\n", self.topic, self.partition)
    }
}

/// Two log dirs (or directories of log dirs) compared partition by partition.
#[derive(Debug, Clone)]
pub struct LogDirsDiff {
    pub a: PathBuf,
    pub b: PathBuf,
    /// By topic and partition.
    pub partitions: Vec<PartitionComparison>,
}

impl LogDirsDiff {
    pub fn identical(&self) -> bool {
        self.partitions.iter().all(|p| p.status == "identical")
    }

    /// How many partitions have `status`.
    pub fn count(&self, status: &str) -> usize {
        self.partitions
            .iter()
            .filter(|p| p.status == status)
            .count()
    }

    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "format": crate::ops::JSON_FORMAT,
            "identical": self.identical(),
            "aDir": crate::format::os_path::escaped(&self.a),
            "bDir": crate::format::os_path::escaped(&self.b),
            "partitions": self.partitions,
            "partitionCount": self.partitions.len(),
            "identicalCount": self.count("identical"),
            "divergeCount": self.count("diverge"),
            "onlyInACount": self.count("onlyInA"),
            "onlyInBCount": self.count("onlyInB"),
        })
    }

    /// One line per partition, then the counts.
    pub fn render_text(&self) -> String {
        let mut out: String = self.partitions.iter().map(|p| p.line()).collect();
        out.push_str(&format!(
            "{} partition(s): {} identical, {} diverge, {} only in A, {} only in B\n",
            self.partitions.len(),
            self.count("identical"),
            self.count("diverge"),
            self.count("onlyInA"),
            self.count("onlyInB"),
        ));
        out
    }
}

/// What `kseg diff A B` compared.
#[derive(Debug, Clone)]
pub enum Comparison {
    Partition(Box<DiffReport>),
    LogDirs(LogDirsDiff),
}

/// Compares `a` and `b`: two partition directories as [`diff`] does, or two log dirs (or
/// directories of log dirs) partition by partition. Anything else, or one of each, is refused.
pub fn compare(a: &Path, b: &Path) -> Result<Comparison> {
    let expected = Expected::PartitionsOrLogDirs;
    let (sa, _) = resolve(a, expected)?;
    let (sb, _) = resolve(b, expected)?;
    let log_dirs = |s: &Shape| matches!(s, Shape::LogDir | Shape::LogDirs(_));
    match (&sa, &sb) {
        (Shape::Partition, Shape::Partition) => Ok(Comparison::Partition(Box::new(diff(a, b)?))),
        (x, y) if log_dirs(x) && log_dirs(y) => {
            let (pa, pb) = (live_partitions(a, x)?, live_partitions(b, y)?);
            if pa.is_empty() && pb.is_empty() {
                return Err(Error::invalid(a, NO_LIVE_PARTITION));
            }
            let keys: BTreeSet<&(String, i32)> = pa.keys().chain(pb.keys()).collect();
            let mut partitions = Vec::with_capacity(keys.len());
            for key in keys {
                partitions.push(match (pa.get(key), pb.get(key)) {
                    (Some(x), Some(y)) => PartitionComparison::of(key, &diff(x, y)?),
                    (x, y) => PartitionComparison::only(
                        key,
                        x.map(|p| p.as_path()),
                        y.map(|p| p.as_path()),
                    ),
                });
            }
            Ok(Comparison::LogDirs(LogDirsDiff {
                a: a.to_path_buf(),
                b: b.to_path_buf(),
                partitions,
            }))
        }
        (Shape::File, _) => Err(Error::unusable(a, Unusable::NotADirectory, expected)),
        (_, Shape::File) => Err(Error::unusable(b, Unusable::NotADirectory, expected)),
        // A partition directory and a log dir: no pairing of their partitions is sure.
        (_, other) => Err(Error::unusable(
            b,
            Unusable::Mixed {
                this: other.describe(),
                other: sa.describe(),
            },
            expected,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(pairs: &[(i32, i64)]) -> Vec<EpochEntry> {
        pairs
            .iter()
            .map(|&(epoch, start_offset)| EpochEntry {
                epoch,
                start_offset,
            })
            .collect()
    }

    /// Two rounds, by hand from `AbstractFetcherThread.getOffsetTruncationState`
    /// (core/src/main/scala/kafka/server/AbstractFetcherThread.scala): the leader's epochs
    /// [(0,0),(2,10),(4,20)], log end 30; the follower's [(0,0),(1,5),(3,12)], log end 18.
    /// Round 1: the follower sends 3; the leader answers (2, 20) (2 is its largest epoch at or
    /// below 3, and 4 starts at 20). The follower does not know 2: its largest below is 1,
    /// ending at 12, so it truncates to min(12, 18) = 12 and asks again. Round 2: it sends 1;
    /// the leader answers (0, 10); the follower's epoch 0 ends at 5: min(5, 10, 12) = 5.
    #[test]
    fn follower_asks_again_for_an_epoch_it_does_not_know() {
        let leader = entries(&[(0, 0), (2, 10), (4, 20)]);
        let follower = entries(&[(0, 0), (1, 5), (3, 12)]);
        let t = follower_truncation(&leader, 30, &follower, 18);
        let rounds: Vec<_> = t
            .exchanges
            .iter()
            .map(|e| {
                (
                    e.requested_epoch,
                    e.leader_epoch,
                    e.leader_end_offset,
                    e.truncate_to,
                    e.completed,
                )
            })
            .collect();
        assert_eq!(rounds, vec![(3, 2, 20, 12, false), (1, 0, 10, 5, true)]);
        assert_eq!(t.truncate_to, Some(5));
    }

    /// A leader that knows no epoch at or above the follower's latest answers undefined, and
    /// a follower without epochs has only its high watermark: no offset either way. A follower
    /// whose epochs all start above the leader's answer ends that epoch at its first start.
    #[test]
    fn follower_without_the_epochs() {
        let leader = entries(&[(0, 0), (4, 20)]);
        let follower = entries(&[(5, 25)]);
        // The follower sends 5, above the leader's latest 4: undefined.
        assert_eq!(
            follower_truncation(&leader, 30, &follower, 40).truncate_to,
            None
        );
        let follower = entries(&[(2, 3)]);
        // Sends 2: the leader answers (0, 20); the follower's epochs start at 2 > 0, so its
        // endOffsetFor(0) is (0, 3): the same epoch, min(3, 20, 40) = 3.
        assert_eq!(
            follower_truncation(&leader, 30, &follower, 40).truncate_to,
            Some(3)
        );
        assert_eq!(follower_truncation(&leader, 30, &[], 40).truncate_to, None);
    }
}
