//! `txns` against independent expectations: on `c-transactions` the transaction left open at
//! shutdown, the last stable offset and log end offset after Kafka's load
//! (`expected-recover.json`), and every aborted transaction Kafka indexed
//! (`write-summary.json`), with the open and completed transactions derived here from Kafka's
//! own reading of the files (`expected-dump.json`); and a property test over writer-made logs
//! with random transactions: the open, committed and aborted sets equal the generator's.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
use kseg::format::control::{encode_control_key, ControlRecordType, EndTxnMarker};
use kseg::ops::inspect::txns::{
    partition_txns, CompletedTransaction, PartitionTxns, TxnsOptions,
    DEFAULT_TRANSACTION_MAX_TIMEOUT_MS,
};
use kseg::storage::{CloseMode, Log, LogConfig};
use proptest::prelude::*;
use serde_json::Value;

const NOW: i64 = 1_730_000_000_000;

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn run(dir: &Path, timeout: i64) -> (PartitionTxns, Vec<CompletedTransaction>) {
    let mut all = Vec::new();
    let opts = TxnsOptions {
        now_ms: NOW,
        transaction_max_timeout_ms: timeout,
    };
    let r = partition_txns(dir, &opts, |t| all.push(t.clone())).expect("txns runs");
    (r, all)
}

/// (producer id, first offset, marker offset, committed) of every transaction a marker ended,
/// and (producer id, first offset) of those open at the end, by Kafka's rule: a producer's
/// transaction begins at its first transactional data batch after its last marker, a marker
/// ends it (a marker with nothing open ends nothing).
type Model = (BTreeSet<(i64, i64, i64, bool)>, BTreeSet<(i64, i64)>);

fn model_from_dump(dump: &Value) -> Model {
    let mut batches: Vec<&Value> = dump["files"]
        .as_object()
        .unwrap()
        .values()
        .filter(|f| f["type"] == "log")
        .flat_map(|f| f["batches"].as_array().unwrap())
        .collect();
    batches.sort_by_key(|b| b["baseOffset"].as_i64().unwrap());
    let mut open: BTreeMap<i64, i64> = BTreeMap::new();
    let mut done = BTreeSet::new();
    for b in batches {
        let pid = b["producerId"].as_i64().unwrap_or(-1);
        if b["isTransactional"] != true {
            continue;
        }
        let base = b["baseOffset"].as_i64().unwrap();
        if b["isControl"] == true {
            let commit = b["records"][0]["control"]["type"] == "COMMIT";
            if let Some(first) = open.remove(&pid) {
                done.insert((pid, first, base, commit));
            }
        } else {
            open.entry(pid).or_insert(base);
        }
    }
    (done, open.into_iter().collect())
}

fn model_of(r: &PartitionTxns, all: &[CompletedTransaction]) -> Model {
    (
        all.iter()
            .map(|t| (t.producer_id, t.first_offset, t.marker_offset, t.committed))
            .collect(),
        r.open
            .iter()
            .map(|o| (o.producer_id, o.first_offset))
            .collect(),
    )
}

#[test]
fn c_transactions_open_lso_and_every_abort() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let scenario = root.join("c-transactions");
    let dir = scenario.join("input/orders-0");
    let (r, all) = run(&dir, DEFAULT_TRANSACTION_MAX_TIMEOUT_MS);
    let model = model_from_dump(&json(&scenario.join("expected-dump.json")));
    assert_eq!(model_of(&r, &all), model);
    assert_eq!(model.1.len(), 1, "one transaction left open at shutdown");
    // After load the broker's log ends where Kafka's did; with the high watermark at the log
    // end (no replication checkpoint) the LSO is the open transaction's first offset
    // (`UnifiedLog.lastStableOffset`).
    let recovered = json(&scenario.join("expected-recover.json"));
    let leo = recovered["logEndOffset"].as_i64().unwrap();
    assert_eq!(r.log_end_offset, leo);
    assert_eq!(r.high_watermark.value, leo);
    let open_first = model.1.iter().map(|o| o.1).min().unwrap();
    assert!(open_first < leo);
    assert_eq!(r.last_stable_offset, open_first);
    assert_eq!(r.first_unstable_offset, Some(open_first));
    // Every aborted transaction Kafka indexed, with its LSO, in order.
    let summary = json(&scenario.join("write-summary.json"));
    let indexed: Vec<(i64, i64, i64, i64)> = summary["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "aborted_txn_indexed")
        .map(|e| {
            let n = |k: &str| e[k].as_i64().unwrap();
            (
                n("producerId"),
                n("firstOffset"),
                n("offset"),
                n("lastStableOffset"),
            )
        })
        .collect();
    let ours: Vec<(i64, i64, i64, i64)> = r
        .aborted_transactions
        .iter()
        .map(|a| {
            (
                a.producer_id,
                a.first_offset,
                a.marker_offset,
                a.last_stable_offset.unwrap(),
            )
        })
        .collect();
    assert_eq!(ours, indexed);
    assert_eq!(r.aborted.count, indexed.len() as u64);
    assert_eq!(
        r.committed.count,
        model.0.iter().filter(|t| t.3).count() as u64
    );
    // The producer went silent about an hour before the scenario's clock: hanging at the
    // default 15 minutes, not with a 2-hour timeout.
    assert_eq!(r.hanging, 1);
    assert!(r.open[0].hanging);
    let (r2, _) = run(&dir, 2 * 3_600_000);
    assert_eq!(r2.hanging, 0);
    // The producers are those of the snapshot Kafka wrote at the log end when it closed.
    let dump = json(&scenario.join("expected-dump.json"));
    let snapshot = &dump["files"]["00000000000000000432.snapshot"]["entries"];
    let ids: Vec<i64> = snapshot
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["producerId"].as_i64().unwrap())
        .collect();
    let ours: Vec<i64> = r.producers.iter().map(|p| p.producer_id).collect();
    assert_eq!(ours, ids, "Kafka's snapshot order");
    for (p, e) in r.producers.iter().zip(snapshot.as_array().unwrap()) {
        assert_eq!(
            i64::from(p.producer_epoch),
            e["producerEpoch"].as_i64().unwrap()
        );
        assert_eq!(p.last_offset, e["lastDataOffset"].as_i64().unwrap());
        assert_eq!(
            i64::from(p.last_sequence),
            e["lastSequence"].as_i64().unwrap()
        );
        assert_eq!(
            p.current_txn_first_offset,
            e["currentTxnFirstOffset"].as_i64()
        );
    }
}

#[test]
fn cli_exit_status_says_hanging() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let dir = root.join("c-transactions/input/orders-0");
    let (code, err) = common::kseg_status(&["txns", "--now", "1730000000000"], &dir);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("1 hanging transaction"), "{err}");
    let (code, err) = common::kseg_status(
        &[
            "txns",
            "--now",
            "1730000000000",
            "--transaction-max-timeout-ms",
            "7200000",
        ],
        &dir,
    );
    assert_eq!(code, 0, "{err}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["txns", "--json", "--now", "1730000000000"])
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    common::assert_json_without_duplicate_keys(&text);
    // In a pipe: one compact document on one line, the vocabulary first.
    assert!(text.starts_with("{\"format\":\"kseg/3\","), "{text}");
    assert_eq!(text.lines().count(), 1);
}

#[test]
fn a_torn_tail_stops_the_walk_where_recovery_truncates() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let scenario = root.join("f-crash-torn-tail");
    let (r, _) = run(
        &scenario.join("input/orders-0"),
        DEFAULT_TRANSACTION_MAX_TIMEOUT_MS,
    );
    let recovered = json(&scenario.join("expected-recover.json"));
    assert_eq!(
        r.log_end_offset,
        recovered["logEndOffset"].as_i64().unwrap()
    );
    assert!(r.stopped.is_some());
}

#[derive(Debug, Clone)]
enum Op {
    /// A transactional data batch of `records` records from producer `pid`.
    TxnData {
        pid: i64,
        records: i64,
    },
    /// A marker from producer `pid`.
    Marker {
        pid: i64,
        commit: bool,
    },
    /// Non-transactional data.
    Plain,
    Roll,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1i64..4, 1i64..4).prop_map(|(pid, records)| Op::TxnData { pid, records }),
        3 => (1i64..4, any::<bool>()).prop_map(|(pid, commit)| Op::Marker { pid, commit }),
        2 => Just(Op::Plain),
        1 => Just(Op::Roll),
    ]
}

/// Writes `ops` through the engine and returns what the generator knows: every transaction
/// completed, and those open at the end.
fn write(dir: &Path, ops: &[Op]) -> Model {
    let mut log = Log::create(dir, LogConfig::default(), 0, *b"kseg-txns-test!!", NOW).unwrap();
    let mut offset = 0i64;
    let mut open: BTreeMap<i64, i64> = BTreeMap::new();
    let mut done = BTreeSet::new();
    let mut rolled_empty = false;
    for op in ops {
        let ts = NOW - 10_000 + offset;
        let rec = |o: i64, key: Option<Vec<u8>>, value: Option<Vec<u8>>| RecordSpec {
            offset: o,
            timestamp: ts,
            key,
            value,
            headers: vec![],
        };
        let (spec, recs) = match *op {
            Op::Roll => {
                if !rolled_empty {
                    log.roll().unwrap();
                    rolled_empty = true;
                }
                continue;
            }
            Op::Plain => (
                BatchSpec {
                    base_offset: offset,
                    ..Default::default()
                },
                vec![rec(offset, Some(b"k".to_vec()), Some(b"v".to_vec()))],
            ),
            Op::TxnData { pid, records } => {
                open.entry(pid).or_insert(offset);
                (
                    BatchSpec {
                        base_offset: offset,
                        producer_id: pid,
                        producer_epoch: 0,
                        base_sequence: 0,
                        is_transactional: true,
                        ..Default::default()
                    },
                    (0..records)
                        .map(|i| rec(offset + i, None, Some(b"txn".to_vec())))
                        .collect(),
                )
            }
            Op::Marker { pid, commit } => {
                if let Some(first) = open.remove(&pid) {
                    done.insert((pid, first, offset, commit));
                }
                let kind = if commit {
                    ControlRecordType::Commit
                } else {
                    ControlRecordType::Abort
                };
                (
                    BatchSpec {
                        base_offset: offset,
                        producer_id: pid,
                        producer_epoch: 0,
                        is_transactional: true,
                        is_control: true,
                        ..Default::default()
                    },
                    vec![rec(
                        offset,
                        Some(encode_control_key(kind).to_vec()),
                        Some(EndTxnMarker::encode(0).to_vec()),
                    )],
                )
            }
        };
        log.append_as_follower(&build_batch(&spec, &recs).unwrap())
            .unwrap();
        offset += recs.len() as i64;
        rolled_empty = false;
    }
    log.close(CloseMode::Clean).unwrap();
    (done, open.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn open_committed_and_aborted_sets_equal_the_generators(
        ops in prop::collection::vec(op(), 1..60)
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t-0");
        let expected = write(&dir, &ops);
        let (r, all) = run(&dir, DEFAULT_TRANSACTION_MAX_TIMEOUT_MS);
        prop_assert_eq!(model_of(&r, &all), expected.clone());
        prop_assert_eq!(r.aborted.count, expected.0.iter().filter(|t| !t.3).count() as u64);
        prop_assert_eq!(r.committed.count, expected.0.iter().filter(|t| t.3).count() as u64);
        // With the high watermark at the log end, the LSO is the first open transaction's
        // first offset, else the log end.
        let first_open = expected.1.iter().map(|o| o.1).min();
        prop_assert_eq!(r.last_stable_offset, first_open.unwrap_or(r.log_end_offset));
        prop_assert!(r.stopped.is_none());
    }
}

/// Transactional id → (producer id, epoch, state, partitions).
type CoordinatorStates = BTreeMap<String, (i64, i64, String, BTreeSet<String>)>;

/// The latest (producer id, epoch, state, partitions) of every transactional id, parsed here
/// from kafka-dump-log's text in expected-decode.json, and the offset it dies at.
fn coordinator_from_decode(decode: &Value) -> (CoordinatorStates, i64) {
    let mut latest = BTreeMap::new();
    let mut fatal = i64::MAX;
    let mut files: Vec<(&String, &Value)> = decode["files"].as_object().unwrap().iter().collect();
    files.sort_by_key(|f| f.0);
    for (_, f) in files {
        for r in f["batches"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|b| b["records"].as_array().into_iter().flatten())
        {
            if r["fatal"].is_string() {
                fatal = fatal.min(r["offset"].as_i64().unwrap());
            }
            let Some(id) = r["key"]
                .as_str()
                .and_then(|k| k.strip_prefix("transaction_metadata::transactionalId="))
            else {
                continue;
            };
            match r["payload"].as_str() {
                Some("<DELETE>") => {
                    latest.remove(id);
                }
                Some(p) => {
                    // producerId:N,producerEpoch:E,state=S,partitions=[t-p,...],...
                    let field = |name: &str| {
                        let from = p.find(name).unwrap() + name.len();
                        p[from..].split([',', ']']).next().unwrap().to_owned()
                    };
                    let parts = &p[p.find("partitions=[").unwrap() + 12..];
                    let parts = &parts[..parts.find(']').unwrap()];
                    latest.insert(
                        id.to_owned(),
                        (
                            field("producerId:").parse().unwrap(),
                            field("producerEpoch:").parse().unwrap(),
                            field("state="),
                            parts
                                .split(',')
                                .filter(|s| !s.is_empty())
                                .map(str::to_owned)
                                .collect(),
                        ),
                    );
                }
                None => {}
            }
        }
    }
    (latest, fatal)
}

#[test]
fn txn_log_states_and_disagreements() {
    use kseg::ops::inspect::txns::{compare_with_coordinator, read_txn_log};
    let Some(internal) = common::reference_internal_dir() else {
        return;
    };
    let scenario = internal.join("transactions");
    let (expected, fatal) = coordinator_from_decode(&json(&scenario.join("expected-decode.json")));
    let ours = read_txn_log(&scenario.join("input/__transaction_state-0")).unwrap();
    // kafka-dump-log dies at `fatal`; records after it are ours alone.
    let after: Vec<&str> = ours
        .iter()
        .filter(|c| c.offset > fatal)
        .map(|c| c.transactional_id.as_str())
        .collect();
    assert!(after.len() <= 1, "{after:?}");
    let ours_map: CoordinatorStates = ours
        .iter()
        .filter(|c| c.offset < fatal)
        .map(|c| {
            (
                c.transactional_id.clone(),
                (
                    c.producer_id,
                    i64::from(c.producer_epoch),
                    c.state.clone(),
                    c.partitions.iter().cloned().collect(),
                ),
            )
        })
        .collect();
    let mut expected_before = expected.clone();
    expected_before.retain(|id, _| !after.contains(&id.as_str()));
    assert_eq!(ours_map, expected_before);

    // A log dir whose partitions the coordinator's transactions name: producers that agree and
    // disagree with it, each chosen from the coordinator's state parsed above.
    let unfinished = [
        "Ongoing",
        "PrepareCommit",
        "PrepareAbort",
        "PrepareEpochFence",
    ];
    let (ongoing_id, ongoing) = expected
        .iter()
        .find(|(_, v)| unfinished.contains(&v.2.as_str()) && v.3.len() >= 2)
        .expect("an unfinished transaction over two partitions");
    let mut parts = ongoing.3.iter();
    let (written, unwritten) = (parts.next().unwrap().clone(), parts.next().unwrap().clone());
    let (_, finished) = expected
        .iter()
        .find(|(_, v)| v.2.starts_with("Complete"))
        .expect("a finished transaction");
    let unknown_pid = 999_999;
    let tmp = tempfile::tempdir().unwrap();
    let write_open = |dir: &Path, producers: &[(i64, i16)]| {
        let mut log = Log::create(dir, LogConfig::default(), 0, *b"kseg-txns-test!!", NOW).unwrap();
        for (i, &(pid, epoch)) in producers.iter().enumerate() {
            let spec = BatchSpec {
                base_offset: i as i64,
                producer_id: pid,
                producer_epoch: epoch,
                base_sequence: 0,
                is_transactional: true,
                ..Default::default()
            };
            let rec = RecordSpec {
                offset: i as i64,
                timestamp: NOW,
                key: None,
                value: Some(b"v".to_vec()),
                headers: vec![],
            };
            log.append_as_follower(&build_batch(&spec, &[rec]).unwrap())
                .unwrap();
        }
        log.close(CloseMode::Clean).unwrap();
    };
    let a = tmp.path().join(&written);
    write_open(
        &a,
        &[
            (ongoing.0, ongoing.1 as i16),
            (finished.0, finished.1 as i16),
            (unknown_pid, 0),
        ],
    );
    let b = tmp.path().join(&unwritten);
    write_open(&b, &[(unknown_pid + 1, 0)]);
    let opts = TxnsOptions {
        now_ms: NOW,
        transaction_max_timeout_ms: DEFAULT_TRANSACTION_MAX_TIMEOUT_MS,
    };
    let disagreeing = |dir: &Path| -> BTreeMap<i64, bool> {
        let mut p = partition_txns(dir, &opts, |_| {}).unwrap();
        compare_with_coordinator(&mut p, &ours);
        p.coordinator
            .unwrap()
            .iter()
            .map(|v| (v.producer_id, v.disagreement.is_some()))
            .collect()
    };
    assert_eq!(
        disagreeing(&a),
        BTreeMap::from([(ongoing.0, false), (finished.0, true), (unknown_pid, true)]),
        "{ongoing_id}'s open transaction agrees; a finished one and an unknown producer do not"
    );
    assert_eq!(
        disagreeing(&b),
        BTreeMap::from([(unknown_pid + 1, true), (ongoing.0, true)]),
        "{ongoing_id}'s transaction names {unwritten}, which it never wrote to"
    );
    let (code, err) = common::kseg_status(
        &["txns", "--txn-log"],
        &scenario.join("input/__transaction_state-0"),
    );
    assert_eq!(code, 2, "no PATH: {err}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["txns", "--now", "1730000000000", "--txn-log"])
        .arg(scenario.join("input/__transaction_state-0"))
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("4 disagreement(s)"), "{err}");
}

#[test]
fn a_checkpointed_high_watermark_holds_the_lso_at_unreplicated_transactions() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let scenario = root.join("c-transactions");
    let (completed, open) = model_from_dump(&json(&scenario.join("expected-dump.json")));
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&scenario.join("input/orders-0"), &dir);
    // The broker loads the latest snapshot and replays after it
    // (`ProducerStateManager.truncateAndReload`): only transactions whose marker lies at or
    // after it count as unreplicated. Snapshots are removed one by one, newest first.
    let mut snapshots: Vec<i64> = common::listing(&dir)
        .iter()
        .filter_map(|p| {
            p.to_str()?
                .strip_suffix(".snapshot")?
                .rsplit('/')
                .next()?
                .parse()
                .ok()
        })
        .collect();
    snapshots.sort_unstable();
    assert!(snapshots.len() >= 2);
    loop {
        let loaded = snapshots.last().copied().unwrap_or(0);
        for hw in [0i64, 100, 300, 432, 10_000] {
            std::fs::write(
                tmp.path().join("replication-offset-checkpoint"),
                format!("0\n1\norders 0 {hw}\n"),
            )
            .unwrap();
            let (r, _) = run(&dir, DEFAULT_TRANSACTION_MAX_TIMEOUT_MS);
            // `UnifiedLog.updateHighWatermark` keeps it within the log; transactions whose
            // marker is at or above it are not replicated yet and stay unstable
            // (`ProducerStateManager.onHighWatermarkUpdated`, `firstUnstableOffset`); the LSO
            // is the first unstable offset when below the high watermark, else the high
            // watermark (`UnifiedLog.lastStableOffset`).
            let hw = hw.clamp(0, r.log_end_offset);
            let unstable = completed
                .iter()
                .filter(|t| t.2 >= hw && t.2 >= loaded)
                .map(|t| t.1)
                .chain(open.iter().map(|o| o.1))
                .min();
            assert_eq!(r.high_watermark.value, hw);
            assert_eq!(r.high_watermark.source, "replication-offset-checkpoint");
            assert_eq!(
                r.first_unstable_offset, unstable,
                "hw {hw}, snapshot {loaded}"
            );
            assert_eq!(
                r.last_stable_offset,
                unstable.filter(|&u| u < hw).unwrap_or(hw),
                "hw {hw}, snapshot {loaded}"
            );
        }
        let Some(newest) = snapshots.pop() else { break };
        std::fs::remove_file(dir.join(format!("{newest:020}.snapshot"))).unwrap();
    }
}
