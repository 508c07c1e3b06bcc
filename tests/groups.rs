//! `kseg groups`: on the reference-internal offsets scenarios, the committed offsets and the
//! latest group metadata equal what the scenario's SPEC.json says was appended, replayed here
//! by the group coordinator's rules (group-coordinator OffsetMetadataManager.replay and
//! replayEndTransactionMarker): records in append order, a tombstone deletes the committed
//! offset and the pending ones of that partition, a transactional commit waits for its
//! producer's marker — COMMIT applies it unless a later record already committed that
//! partition, ABORT drops it. Lag is checked against a partition whose log end offset `verify`
//! reports.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use kseg::ops::inspect::groups::describe_groups;
use serde_json::Value;

type Key = (String, String, i64);

#[derive(Default)]
struct Model {
    /// (group, topic, partition) → (offset, leader epoch, sequence number of the record).
    offsets: BTreeMap<Key, (i64, i64, usize)>,
    pending: HashMap<i64, BTreeMap<Key, (i64, i64, usize)>>,
    /// group → latest classic GroupMetadataValue (None: deleted).
    classic: BTreeMap<String, Option<Value>>,
    /// group → latest ConsumerGroupMetadataValue epoch (None: deleted).
    consumer_epoch: BTreeMap<String, Option<i64>>,
    aborted: usize,
    committed_txn: usize,
}

/// Replays a SPEC.json's appended batches.
fn model(spec: &Value) -> Model {
    let mut m = Model::default();
    let mut seq = 0usize;
    for op in spec["ops"].as_array().unwrap() {
        for b in op["batches"].as_array().into_iter().flatten() {
            let producer = b["producer_id"].as_i64().unwrap_or(-1);
            if let Some(c) = b.get("control") {
                let pending = m.pending.remove(&producer).unwrap_or_default();
                match c["type"].as_str().unwrap() {
                    "commit" => {
                        m.committed_txn += 1;
                        for (k, v) in pending {
                            if m.offsets.get(&k).is_none_or(|e| v.2 > e.2) {
                                m.offsets.insert(k, v);
                            }
                        }
                    }
                    _ => m.aborted += 1,
                }
                seq += 1;
                continue;
            }
            let transactional = b["transactional"].as_bool().unwrap_or(false);
            for r in b["records"].as_array().into_iter().flatten() {
                seq += 1;
                let Some(g) = r.get("group") else { continue };
                let key = &g["key"];
                let data = &key["data"];
                let value = &g["value"];
                match key["type"].as_i64().unwrap() {
                    0 | 1 => {
                        let k: Key = (
                            data["group"].as_str().unwrap().to_string(),
                            data["topic"].as_str().unwrap().to_string(),
                            data["partition"].as_i64().unwrap(),
                        );
                        if value.is_null() {
                            m.offsets.remove(&k);
                            for p in m.pending.values_mut() {
                                p.remove(&k);
                            }
                            continue;
                        }
                        let v = &value["data"];
                        let entry = (
                            v["offset"].as_i64().unwrap(),
                            v["leaderEpoch"].as_i64().unwrap_or(-1),
                            seq,
                        );
                        if transactional {
                            m.pending.entry(producer).or_default().insert(k, entry);
                        } else {
                            m.offsets.insert(k, entry);
                        }
                    }
                    2 => {
                        let group = data["group"].as_str().unwrap().to_string();
                        m.classic
                            .insert(group, (!value.is_null()).then(|| value["data"].clone()));
                    }
                    3 => {
                        let group = data["groupId"].as_str().unwrap().to_string();
                        m.consumer_epoch
                            .insert(group, value["data"]["epoch"].as_i64());
                    }
                    _ => {}
                }
            }
        }
    }
    m
}

fn spec(scenario: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(scenario.join("SPEC.json")).unwrap()).unwrap()
}

fn check_scenario(name: &str) -> Model {
    let root = common::reference_internal_dir().unwrap();
    let scenario = root.join(name);
    let m = model(&spec(&scenario));
    let dir = scenario.join("input/__consumer_offsets-0");
    let report = describe_groups(&[dir], None).unwrap();
    let mut got: BTreeMap<Key, (i64, i64, i64)> = BTreeMap::new();
    for g in &report.groups {
        for o in &g.offsets {
            assert_eq!(o.record_partition, 0);
            got.insert(
                (g.group.clone(), o.topic.clone(), i64::from(o.partition)),
                (o.offset, i64::from(o.leader_epoch), o.record_offset),
            );
        }
    }
    let want: BTreeMap<Key, (i64, i64)> = m
        .offsets
        .iter()
        .map(|(k, v)| (k.clone(), (v.0, v.1)))
        .collect();
    let got_values: BTreeMap<Key, (i64, i64)> =
        got.iter().map(|(k, v)| (k.clone(), (v.0, v.1))).collect();
    assert_eq!(got_values, want, "{name}");
    // Pending transactional commits: none left open in these scenarios unless the model says so.
    let open: usize = m.pending.values().map(BTreeMap::len).sum();
    let reported: usize = report
        .groups
        .iter()
        .map(|g| g.pending_transactional_offsets.len())
        .sum();
    assert_eq!(reported, open, "{name}");
    for (group, latest) in &m.classic {
        let g = report.groups.iter().find(|g| &g.group == group);
        match latest {
            // A deleted classic group is gone unless offsets keep it as a simple group.
            None => assert!(g.is_none_or(|g| g.group_type != "classic"), "{group}"),
            Some(v) => {
                if m.consumer_epoch.get(group).is_some_and(Option::is_some) {
                    continue;
                }
                let g = g.unwrap_or_else(|| panic!("{name}: no group {group}"));
                assert_eq!(g.group_type, "classic", "{group}");
                assert_eq!(
                    g.generation.map(i64::from),
                    v["generation"].as_i64(),
                    "{group}"
                );
                assert_eq!(g.protocol.as_deref(), v["protocol"].as_str(), "{group}");
                assert_eq!(
                    g.protocol_type.as_deref(),
                    v["protocolType"].as_str(),
                    "{group}"
                );
                let members = v["members"].as_array().map_or(0, Vec::len);
                assert_eq!(g.members.len(), members, "{group}");
                // ClassicGroup.fromRecord: Empty without members, else Stable.
                let state = if members == 0 { "Empty" } else { "Stable" };
                assert_eq!(g.state, state, "{group}");
            }
        }
    }
    for (group, epoch) in &m.consumer_epoch {
        let g = report.groups.iter().find(|g| &g.group == group);
        match epoch {
            None => assert!(g.is_none_or(|g| g.group_type != "consumer"), "{group}"),
            Some(e) => {
                let g = g.unwrap();
                assert_eq!(g.group_type, "consumer");
                assert_eq!(g.generation.map(i64::from), Some(*e), "{group}");
            }
        }
    }
    m
}

#[test]
fn classic_offsets_with_transactions_and_tombstones() {
    if common::reference_internal_dir().is_none() {
        return;
    }
    let m = check_scenario("offsets-classic");
    // The scenario exercises what the rules are about.
    assert!(m.aborted >= 1 && m.committed_txn >= 1);
    assert!(!m.offsets.is_empty());
}

#[test]
fn modern_consumer_groups() {
    if common::reference_internal_dir().is_none() {
        return;
    }
    let m = check_scenario("offsets-modern");
    assert!(!m.consumer_epoch.is_empty());
    let root = common::reference_internal_dir().unwrap();
    let report = describe_groups(
        &[root.join("offsets-modern/input/__consumer_offsets-0")],
        None,
    )
    .unwrap();
    // Every KIP-848 group's state follows from its epochs (ConsumerGroup.maybeUpdateGroupState).
    for g in report.groups.iter().filter(|g| g.group_type == "consumer") {
        let (epoch, target) = (g.generation.unwrap(), g.assignment_epoch.unwrap());
        let expected = if g.members.is_empty() {
            "Empty"
        } else if epoch > target {
            "Assigning"
        } else {
            g.state
        };
        assert_eq!(g.state, expected, "{}", g.group);
        if g.state == "Stable" {
            assert!(g.members.iter().all(|m| m.member_epoch == Some(target)));
        }
    }
}

#[test]
fn group_filter_lag_and_cli() {
    let (Some(internal), Some(reference)) =
        (common::reference_internal_dir(), common::reference_dir())
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let log_dir = tmp.path().join("kafka-logs");
    common::copy_dir(
        &internal.join("offsets-classic/input/__consumer_offsets-0"),
        &log_dir.join("__consumer_offsets-0"),
    );
    common::copy_dir(
        &reference.join("a-plain-v2/input/orders-0"),
        &log_dir.join("orders-0"),
    );
    let verify = kseg::ops::check::verify::verify_paths(
        &[log_dir.join("orders-0")],
        &Default::default(),
        &|_| {},
    )
    .unwrap();
    let end = verify.partitions[0].log_end_offset.unwrap();
    let report = describe_groups(std::slice::from_ref(&log_dir), Some("orders-service")).unwrap();
    assert_eq!(report.groups.len(), 1);
    let g = &report.groups[0];
    let mut with_lag = 0;
    for o in &g.offsets {
        if o.topic == "orders" && o.partition == 0 {
            // No replication-offset-checkpoint: against the log end, said so.
            assert_eq!(o.log_end_offset, Some(end));
            assert_eq!(o.lag, Some(end - o.offset));
            let against = o.lag_against.as_ref().unwrap();
            assert_eq!(against.value, end);
            assert!(
                against.source.starts_with("log end offset"),
                "{}",
                against.source
            );
            with_lag += 1;
        } else {
            assert_eq!(o.lag, None, "{}-{}", o.topic, o.partition);
        }
    }
    assert_eq!(with_lag, 1);
    let committed = g
        .offsets
        .iter()
        .find(|o| o.topic == "orders" && o.partition == 0)
        .unwrap()
        .offset;

    // kafka-consumer-groups.sh lags against ListOffsets LATEST, which at the default
    // READ_UNCOMMITTED isolation is the high watermark (Partition.fetchOffsetForTimestamp:
    // lastFetchableOffset), bounded at load by the log end (UnifiedLog.updateHighWatermark).
    let checkpoint = log_dir.join("replication-offset-checkpoint");
    for (hw, expected) in [(end - 3, end - 3), (end + 50, end)] {
        std::fs::write(&checkpoint, format!("0\n1\norders 0 {hw}\n")).unwrap();
        let report =
            describe_groups(std::slice::from_ref(&log_dir), Some("orders-service")).unwrap();
        let o = report.groups[0]
            .offsets
            .iter()
            .find(|o| o.topic == "orders" && o.partition == 0)
            .unwrap();
        assert_eq!(o.log_end_offset, Some(end));
        assert_eq!(o.lag, Some(expected - committed), "hw {hw}");
        let against = o.lag_against.as_ref().unwrap();
        assert_eq!(against.value, expected);
        assert!(
            against.source.contains(&checkpoint.display().to_string()),
            "{}",
            against.source
        );
    }
    // The tool's column names; the value from the checkpoint, not marked as a log end.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["groups", "--group", "orders-service"])
        .arg(&log_dir)
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for column in ["CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"] {
        assert!(text.contains(column), "{text}");
    }
    assert!(text.contains(&format!(" {end} ")), "{text}");
    assert!(!text.contains(&format!("{end}*")), "{text}");
    std::fs::remove_file(&checkpoint).unwrap();

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["groups", "--json", "--group", "orders-service"])
        .arg(&log_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    common::assert_json_without_duplicate_keys(&text);
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc.as_object().unwrap().keys().next().unwrap(), "format");
    assert_eq!(doc["groups"][0]["group"], "orders-service");
    let (code, _) = common::kseg_status(&["groups", "--group", "no-such-group"], &log_dir);
    assert_eq!(code, 2);
    let (code, _) = common::kseg_status(&["groups"], &log_dir.join("orders-0"));
    assert_eq!(code, 2);
    // Undecodable records are reported (exit 1) while the rest is replayed.
    let edge = internal.join("offsets-edge/input/__consumer_offsets-0");
    let (code, _) = common::kseg_status(&["groups"], &edge);
    assert_eq!(code, 1);
}

/// A Java `writeString`: int16 length, then the bytes.
fn string(s: &str) -> String {
    format!("{:04x}{}", s.len(), common::hex(s.as_bytes()))
}

/// OffsetCommitKey, record type (version) 1: group, topic, partition.
fn commit_key(group: &str, topic: &str, partition: i32) -> String {
    format!("0001{}{}{:08x}", string(group), string(topic), partition)
}

/// OffsetCommitValue version 3: offset, leader epoch, metadata, commit timestamp.
fn commit_value(offset: i64) -> String {
    format!(
        "0003{offset:016x}{:08x}{}{:016x}",
        -1i32 as u32,
        string(""),
        1_730_000_000_000i64
    )
}

#[test]
fn transaction_rules_on_a_crafted_partition() {
    use serde_json::json;
    let commit =
        |p: i32, o: i64| json!({"key_hex": commit_key("g", "t", p), "value_hex": commit_value(o)});
    let tombstone = |p: i32| json!({"key_hex": commit_key("g", "t", p)});
    let txn = |pid: i64, records: Vec<Value>| json!({"producer_id": pid, "producer_epoch": 0, "base_sequence": 0, "transactional": true, "records": records});
    let marker = |pid: i64, kind: &str| json!({"producer_id": pid, "producer_epoch": 0, "transactional": true, "control": {"type": kind}});
    let plain = |records: Vec<Value>| json!({"records": records});
    let batches = vec![
        plain(vec![commit(0, 10)]),
        // P1 commits t-0 and t-1; a plain commit of t-0 lands before P1's COMMIT marker:
        // the later record wins (replayEndTransactionMarker compares record offsets).
        txn(1, vec![commit(0, 20), commit(1, 21)]),
        plain(vec![commit(0, 30)]),
        marker(1, "commit"),
        // P2 aborts: its t-2 never counts.
        txn(2, vec![commit(2, 40)]),
        marker(2, "abort"),
        // A tombstone of t-3 drops P3's pending t-3 too, before P3 commits.
        txn(3, vec![commit(3, 50)]),
        plain(vec![tombstone(3)]),
        marker(3, "commit"),
        // A plain commit deleted by its tombstone.
        plain(vec![commit(4, 60)]),
        plain(vec![tombstone(4)]),
        // P4 never ends: pending.
        txn(4, vec![commit(5, 70)]),
    ];
    let ops: Vec<Value> = batches
        .into_iter()
        .map(|b| json!({"op": "append", "batches": [b]}))
        .collect();
    let spec = json!({"topic": "__consumer_offsets", "partition": 0, "ops": ops});
    let tmp = tempfile::tempdir().unwrap();
    let spec_path = tmp.path().join("spec.json");
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let dir = tmp.path().join("__consumer_offsets-0");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .arg("write")
        .arg(&spec_path)
        .arg(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    let report = describe_groups(&[dir], None).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert_eq!(report.groups.len(), 1);
    let g = &report.groups[0];
    assert_eq!(
        (g.group.as_str(), g.group_type, g.state),
        ("g", "simple", "Empty")
    );
    let offsets: Vec<(i32, i64, i64)> = g
        .offsets
        .iter()
        .map(|o| (o.partition, o.offset, o.record_offset))
        .collect();
    // Record offsets: one per record and one per marker, in append order.
    assert_eq!(offsets, [(0, 30, 3), (1, 21, 2)]);
    let pending: Vec<(i64, i32, i64)> = g
        .pending_transactional_offsets
        .iter()
        .map(|p| (p.producer_id, p.offset.partition, p.offset.offset))
        .collect();
    assert_eq!(pending, [(4, 5, 70)]);
}
