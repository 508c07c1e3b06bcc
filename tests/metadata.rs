//! `kseg metadata`: the KRaft metadata image rebuilt from `__cluster_metadata`. Expectations
//! come from Kafka's rules applied by hand to a log written from a spec (the image deltas'
//! `replay` methods and `PartitionRegistration.merge`), and from the log dirs real brokers
//! wrote (`../shared/realworld/`): the image must name exactly the partitions the broker hosts.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

fn kseg(args: &[&str], path: &Path) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap(), doc, stderr)
}

/// `kseg metadata --json ARGS PATH`: the report, which must be produced with exit status 0.
fn report(args: &[&str], path: &Path) -> Value {
    let mut all = vec!["metadata", "--json"];
    all.extend_from_slice(args);
    let (code, doc, stderr) = kseg(&all, path);
    assert_eq!(code, 0, "kseg {all:?} {}: {stderr}", path.display());
    doc
}

fn rec(kind: &str, version: i64, data: Value) -> Value {
    json!({"type": kind, "version": version, "data": data})
}

const ORDERS: &str = "AAAAAAAAAAAAAAAAAAAAEA";
const GONE: &str = "AAAAAAAAAAAAAAAAAAAAIA";
const ACL: &str = "AAAAAAAAAAAAAAAAAAAAMA";

fn broker(id: i64, epoch: i64, rack: Option<&str>) -> Value {
    rec(
        "REGISTER_BROKER_RECORD",
        1,
        json!({"brokerId": id, "incarnationId": "AAAAAAAAAAAAAAAAAAAAAg", "brokerEpoch": epoch,
               "endPoints": [{"name": "PLAINTEXT", "host": format!("b{id}"), "port": 9092, "securityProtocol": 0}],
               "features": [], "rack": rack, "fenced": true}),
    )
}

fn partition(topic: &str, p: i64, replicas: &[i64]) -> Value {
    rec(
        "PARTITION_RECORD",
        0,
        json!({"partitionId": p, "topicId": topic, "replicas": replicas, "isr": replicas,
               "removingReplicas": [], "addingReplicas": [], "leader": replicas[0],
               "leaderEpoch": 0, "partitionEpoch": 0}),
    )
}

fn config(rtype: i64, name: &str, key: &str, value: Option<&str>) -> Value {
    rec(
        "CONFIG_RECORD",
        0,
        json!({"resourceType": rtype, "resourceName": name, "name": key, "value": value}),
    )
}

fn topic(name: &str, id: &str) -> Value {
    rec("TOPIC_RECORD", 0, json!({"name": name, "topicId": id}))
}

/// A metadata log of one record per offset from 1 (offset 0 is the leader change), then three
/// metadata transactions (committed, aborted, left open) at offsets 25 to 32, written a minute
/// later than the rest.
fn cluster_log(dir: &Path) -> PathBuf {
    let singles = vec![
        rec(
            "FEATURE_LEVEL_RECORD",
            0,
            json!({"name": "metadata.version", "featureLevel": 14}),
        ),
        rec(
            "FEATURE_LEVEL_RECORD",
            0,
            json!({"name": "group.version", "featureLevel": 1}),
        ),
        broker(1, 10, None),
        broker(2, 11, Some("r2")),
        rec("UNFENCE_BROKER_RECORD", 0, json!({"id": 1, "epoch": 10})),
        rec("UNFENCE_BROKER_RECORD", 0, json!({"id": 2, "epoch": 11})),
        topic("orders", ORDERS),
        partition(ORDERS, 0, &[1, 2]),
        partition(ORDERS, 1, &[2, 1]),
        config(2, "orders", "retention.ms", Some("1000")),
        // Offset 11: a leader change (leader epoch +1) with a new ISR.
        rec(
            "PARTITION_CHANGE_RECORD",
            0,
            json!({"partitionId": 0, "topicId": ORDERS, "isr": [2], "leader": 2}),
        ),
        // Offset 12: an ISR change only (leader -2: no change).
        rec(
            "PARTITION_CHANGE_RECORD",
            0,
            json!({"partitionId": 1, "topicId": ORDERS, "isr": [2]}),
        ),
        topic("gone", GONE),
        partition(GONE, 0, &[1]),
        config(2, "gone", "cleanup.policy", Some("compact")),
        // Offset 16: the topic goes, with its partitions and its configs.
        rec("REMOVE_TOPIC_RECORD", 0, json!({"topicId": GONE})),
        rec(
            "BROKER_REGISTRATION_CHANGE_RECORD",
            1,
            json!({"brokerId": 2, "brokerEpoch": 11, "fenced": 0, "inControlledShutdown": 1}),
        ),
        config(4, "", "log.retention.ms", Some("5000")),
        // Offset 19: a null value deletes the config.
        config(4, "", "log.retention.ms", None),
        rec(
            "CLIENT_QUOTA_RECORD",
            0,
            json!({"entity": [{"entityType": "user", "entityName": "alice"}], "key": "producer_byte_rate", "value": 1024.0, "remove": false}),
        ),
        rec(
            "ACCESS_CONTROL_ENTRY_RECORD",
            0,
            json!({"id": ACL, "resourceType": 2, "resourceName": "orders", "patternType": 3, "principal": "User:alice", "host": "*", "operation": 3, "permissionType": 3}),
        ),
        rec(
            "PRODUCER_IDS_RECORD",
            0,
            json!({"brokerId": 1, "brokerEpoch": 10, "nextProducerId": 1000}),
        ),
        rec(
            "USER_SCRAM_CREDENTIAL_RECORD",
            0,
            json!({"name": "alice", "mechanism": 1, "salt": {"hex": "00"}, "storedKey": {"hex": "00"}, "serverKey": {"hex": "00"}, "iterations": 4096}),
        ),
        rec(
            "DELEGATION_TOKEN_RECORD",
            0,
            json!({"owner": "User:alice", "requester": "User:alice", "renewers": [], "issueTimestamp": 0, "maxTimestamp": 1, "expirationTimestamp": 1, "tokenId": "tok1"}),
        ),
    ];
    let begin = rec("BEGIN_TRANSACTION_RECORD", 0, json!({"name": "t"}));
    let transactions = vec![
        vec![
            begin.clone(),
            topic("committed", "AAAAAAAAAAAAAAAAAAAAQA"),
            rec("END_TRANSACTION_RECORD", 0, json!({})),
        ],
        vec![
            begin.clone(),
            topic("aborted", "AAAAAAAAAAAAAAAAAAAAUA"),
            rec("ABORT_TRANSACTION_RECORD", 0, json!({})),
        ],
        vec![begin, topic("open", "AAAAAAAAAAAAAAAAAAAAYA")],
    ];
    let spec = json!({"topic": "__cluster_metadata", "partition": 0, "ops": [
        {"op": "raft_leader", "epoch": 1, "leader_id": 3000, "voters": [3000]},
        {"op": "raft_append", "appends": singles.iter().map(|r| vec![r]).collect::<Vec<_>>()},
        {"op": "advance_clock", "ms": 60000},
        {"op": "raft_append", "appends": transactions},
    ]});
    let out = dir.join("__cluster_metadata-0");
    common::kseg_write(&spec.to_string(), &out);
    out
}

fn empty_image() -> Value {
    json!({"metadataVersion": null, "metadataVersionName": null, "features": [], "brokers": [],
           "controllers": [], "topics": [], "configs": [], "clientQuotas": [], "acls": [],
           "producerIds": null, "scramUsers": [], "delegationTokenIds": []})
}

fn broker_image(id: i64, epoch: i64, rack: Value, controlled_shutdown: bool) -> Value {
    json!({"brokerId": id, "brokerEpoch": epoch, "incarnationId": "AAAAAAAAAAAAAAAAAAAAAg",
           "endpoints": [{"name": "PLAINTEXT", "host": format!("b{id}"), "port": 9092, "securityProtocol": "PLAINTEXT"}],
           "rack": rack, "fenced": false, "inControlledShutdown": controlled_shutdown,
           "isMigratingZkBroker": false, "logDirs": [], "supportedFeatures": []})
}

fn partition_image(
    p: i64,
    replicas: &[i64],
    isr: &[i64],
    leader: i64,
    epochs: (i64, i64),
) -> Value {
    json!({"partition": p, "replicas": replicas, "isr": isr, "eligibleLeaderReplicas": [],
           "lastKnownElr": [], "removingReplicas": [], "addingReplicas": [], "leaderId": leader,
           "leaderEpoch": epochs.0, "partitionEpoch": epochs.1, "leaderRecoveryState": "RECOVERED",
           "directories": []})
}

#[test]
fn the_image_of_a_log_written_from_a_spec_is_the_specs_final_state() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = cluster_log(tmp.path());
    let end = report(&[], &dir);
    let expected = json!({
        "metadataVersion": 14, "metadataVersionName": "3.6-IV2",
        "features": [{"name": "group.version", "level": 1}],
        "brokers": [broker_image(1, 10, Value::Null, false), broker_image(2, 11, json!("r2"), true)],
        "controllers": [],
        "topics": [
            {"name": "committed", "topicId": "AAAAAAAAAAAAAAAAAAAAQA", "partitions": []},
            {"name": "orders", "topicId": ORDERS, "partitions": [
                partition_image(0, &[1, 2], &[2], 2, (1, 1)),
                partition_image(1, &[2, 1], &[2], 2, (0, 1)),
            ]},
        ],
        "configs": [{"resourceType": "TOPIC", "resourceName": "orders", "configValues": {"retention.ms": "1000"}}],
        "clientQuotas": [{"entity": "user=alice", "quotas": {"producer_byte_rate": 1024.0}}],
        "acls": [{"id": ACL, "resourceType": "TOPIC", "resourceName": "orders", "patternType": "LITERAL",
                  "principal": "User:alice", "host": "*", "operation": "READ", "permissionType": "ALLOW"}],
        "producerIds": {"nextProducerId": 1000, "brokerId": 1, "brokerEpoch": 10},
        "scramUsers": [{"name": "alice", "mechanism": "SCRAM-SHA-256"}],
        "delegationTokenIds": ["tok1"],
    });
    assert_eq!(end["image"], expected);
    assert_eq!(end["offset"], 33);
    assert_eq!(end["snapshot"], Value::Null);
    // The open transaction is said, not applied.
    let checks: Vec<&Value> = end["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["check"])
        .collect();
    assert_eq!(checks, [&json!("metadata.open-transaction")]);

    // Offsets: the records below N.
    assert_eq!(report(&["--at", "0"], &dir)["image"], empty_image());
    assert_eq!(report(&["--at", "1"], &dir)["image"], empty_image());
    let at2 = report(&["--at", "2"], &dir);
    assert_eq!(at2["image"]["metadataVersion"], 14);
    assert_eq!(at2["offset"], 2);
    let at8 = &report(&["--at", "8"], &dir)["image"];
    assert_eq!(
        at8["topics"],
        json!([{"name": "orders", "topicId": ORDERS, "partitions": []}])
    );
    // Both brokers registered and unfenced; nothing of the later changes.
    assert_eq!(at8["brokers"][1], broker_image(2, 11, json!("r2"), false));
    let at16 = &report(&["--at", "16"], &dir)["image"];
    assert_eq!(at16["topics"][0]["name"], "gone");
    assert_eq!(at16["configs"].as_array().unwrap().len(), 2);
    let at17 = &report(&["--at", "17"], &dir)["image"];
    assert_eq!(at17["topics"].as_array().unwrap().len(), 1);
    assert_eq!(at17["configs"].as_array().unwrap().len(), 1);
    assert_eq!(
        report(&["--at", "19"], &dir)["image"]["configs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        report(&["--at", "20"], &dir)["image"]["configs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // The committed transaction counts once it ends.
    let topics = |at: &str| -> Vec<String> {
        let r = report(&["--at", at], &dir);
        r["image"]["topics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(topics("27"), ["orders"]);
    assert_eq!(topics("28"), ["committed", "orders"]);
    assert_eq!(topics("31"), ["committed", "orders"]);

    // Times: the records written at or before T; the transactions were written a minute later.
    let before_transactions = report(&["--at", "25"], &dir)["image"].clone();
    for t in ["1730000030000", "2024-10-27T03:33:20Z"] {
        let r = report(&["--time", t], &dir);
        assert_eq!(r["image"], before_transactions, "--time {t}");
        assert_eq!(r["offset"], 25, "--time {t}");
    }
    assert_eq!(
        report(&["--time", "1730000060000"], &dir)["image"],
        expected
    );

    // --diff: one leader change.
    let d = report(&["--diff", "11", "12"], &dir);
    assert_eq!(
        d["changes"],
        json!([
            {"path": "/topics/orders/partitions/0/isr", "oldValue": "[1,2]", "newValue": "[2]"},
            {"path": "/topics/orders/partitions/0/leader", "oldValue": "1", "newValue": "2"},
            {"path": "/topics/orders/partitions/0/leaderEpoch", "oldValue": "0", "newValue": "1"},
            {"path": "/topics/orders/partitions/0/partitionEpoch", "oldValue": "0", "newValue": "1"},
        ])
    );
    let removed = report(&["--diff", "16", "17"], &dir);
    let paths: Vec<&str> = removed["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"/topics/gone/topicId")
            && paths.contains(&"/configs/topic/gone/cleanup.policy"),
        "{paths:?}"
    );
    assert!(removed["changes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["newValue"].is_null()));
    assert_eq!(
        report(&["--diff", "end", "end"], &dir)["changes"],
        json!([])
    );

    // The tree: paths as the metadata shell lays them out.
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["metadata"])
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("topics\n  committed\n    topicId: AAAAAAAAAAAAAAAAAAAAQA\n  orders\n    topicId: AAAAAAAAAAAAAAAAAAAAEA\n    partitions\n      0\n        replicas: [1,2]\n        isr: [2]\n        leader: 2\n"),
        "{text}"
    );
}

#[test]
fn check_reports_the_records_the_controller_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let unknown = "AAAAAAAAAAAAAAAAAAAAkA";
    let records = [
        topic("orders", ORDERS),
        // Offset 2: replicas on a broker never registered (kept; only suspicious).
        partition(ORDERS, 0, &[7]),
        // Offset 3: a partition change for a topic id that does not exist.
        rec(
            "PARTITION_CHANGE_RECORD",
            0,
            json!({"partitionId": 0, "topicId": unknown, "leader": 7}),
        ),
        // Offset 4: fencing a broker that never registered.
        rec("FENCE_BROKER_RECORD", 0, json!({"id": 5, "epoch": 1})),
        // Offset 5: removing a topic that does not exist.
        rec("REMOVE_TOPIC_RECORD", 0, json!({"topicId": unknown})),
        // Offset 6: a partition change for a partition that does not exist.
        rec(
            "PARTITION_CHANGE_RECORD",
            0,
            json!({"partitionId": 3, "topicId": ORDERS, "isr": [7]}),
        ),
    ];
    let spec = json!({"topic": "__cluster_metadata", "partition": 0, "ops": [
        {"op": "raft_leader", "epoch": 1, "leader_id": 3000, "voters": [3000]},
        {"op": "raft_append", "appends": records.iter().map(|r| vec![r]).collect::<Vec<_>>()},
    ]});
    let dir = tmp.path().join("__cluster_metadata-0");
    common::kseg_write(&spec.to_string(), &dir);
    let (code, doc, stderr) = kseg(&["metadata", "--check", "--json"], &dir);
    assert_eq!(code, 1, "{stderr}");
    let found: Vec<(String, String, i64)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["check"].as_str().unwrap().to_owned(),
                f["severity"].as_str().unwrap().to_owned(),
                f["offset"].as_i64().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("metadata.unknown-broker", "warning", 2),
        ("metadata.unknown-topic", "error", 3),
        ("metadata.unknown-broker", "error", 4),
        ("metadata.unknown-topic", "error", 5),
        ("metadata.unknown-topic", "error", 6),
    ];
    let expected: Vec<(String, String, i64)> = expected
        .iter()
        .map(|(c, s, o)| (c.to_string(), s.to_string(), *o))
        .collect();
    assert_eq!(found, expected);
    // The image is what the replay could apply.
    assert_eq!(
        doc["image"]["topics"][0]["partitions"][0]["replicas"],
        json!([7])
    );
    // Without --check: the image, exit 0.
    let (code, _, stderr) = kseg(&["metadata"], &dir);
    assert_eq!(code, 0, "{stderr}");
}

fn meta_node_id(log_dir: &Path) -> i64 {
    let text = std::fs::read_to_string(log_dir.join("meta.properties")).unwrap();
    text.lines()
        .find_map(|l| {
            l.strip_prefix("node.id=")
                .or_else(|| l.strip_prefix("broker.id="))
        })
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The partitions of non-internal topics the log dir holds, as (topic, partition).
fn hosted(log_dir: &Path) -> BTreeSet<(String, i64)> {
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir(log_dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !p.is_dir() || name.starts_with("__") {
            continue;
        }
        let (topic, partition) = name.rsplit_once('-').unwrap();
        out.insert((topic.to_owned(), partition.parse().unwrap()));
    }
    out
}

/// `--time` where the log no longer holds the records around the time (the controller deletes
/// the log below its snapshots): the snapshots' header times (`lastContainedLogTimestamp`)
/// place the point, exactly where a snapshot ends where the log starts, else at the newest
/// snapshot taken at or before the time, with a warning naming the window.
#[test]
fn a_time_before_the_log_is_placed_by_the_snapshots_header_times() {
    const T0: i64 = 1_730_000_000_000;
    let (a, b, c) = (ORDERS, GONE, "AAAAAAAAAAAAAAAAAAAAQA");
    let snapshot = |records: Vec<Value>| {
        json!({"op": "raft_snapshot", "offset": "leo", "epoch": 1,
               "appends": records.into_iter().map(|r| vec![r]).collect::<Vec<_>>()})
    };
    // The leader's LeaderChange at 0, offsets 1 and 2 at T0, a snapshot ending at 3 (T0); offset 3
    // at T0+60s, a snapshot ending at 4 (T0+60s); a new segment at 4, offset 4 at T0+120s.
    let spec = json!({"topic": "__cluster_metadata", "partition": 0, "ops": [
        {"op": "raft_leader", "epoch": 1, "leader_id": 3000, "voters": [3000]},
        {"op": "raft_append", "appends": [[topic("a", a)], [partition(a, 0, &[1])]]},
        snapshot(vec![topic("a", a), partition(a, 0, &[1])]),
        {"op": "advance_clock", "ms": 60000},
        {"op": "raft_append", "appends": [[topic("b", b)]]},
        snapshot(vec![topic("a", a), partition(a, 0, &[1]), topic("b", b)]),
        {"op": "roll"},
        {"op": "advance_clock", "ms": 60000},
        {"op": "raft_append", "appends": [[topic("c", c)]]},
    ]});
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("__cluster_metadata-0");
    common::kseg_write(&spec.to_string(), &dir);
    let first_segment = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                name.starts_with("00000000000000000000.")
            })
            .collect()
    };
    // The log below the newer snapshot is deleted, as the controller does.
    for p in first_segment(&dir) {
        std::fs::remove_file(p).unwrap();
    }
    let at = |t: i64| -> (i32, Value, String) {
        kseg(&["metadata", "--json", "--time", &t.to_string()], &dir)
    };
    let topics = |doc: &Value| -> Vec<String> {
        doc["image"]["topics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let approximate = |doc: &Value| {
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["check"] == "metadata.time-approximate")
            .count()
    };
    // After the last record: the log's end.
    let (code, doc, _) = at(T0 + 120_000);
    assert_eq!(
        (code, &doc["offset"], topics(&doc)),
        (0, &json!(5), vec!["a".into(), "b".into(), "c".into()])
    );
    // Between the newer snapshot's last record and the log's first: exactly that snapshot.
    let (code, doc, err) = at(T0 + 90_000);
    assert_eq!(
        (code, &doc["offset"], topics(&doc)),
        (0, &json!(4), vec!["a".into(), "b".into()]),
        "{err}"
    );
    assert_eq!(approximate(&doc), 0);
    // Between the two snapshots: the older one, and a warning with the window (offsets 3 to 4).
    let (code, doc, err) = at(T0 + 30_000);
    assert_eq!(
        (code, &doc["offset"], topics(&doc)),
        (0, &json!(3), vec!["a".to_owned()])
    );
    assert_eq!(approximate(&doc), 1, "{doc}");
    assert!(
        err.contains("between offset 3") && err.contains("and offset 4"),
        "{err}"
    );
    // Before anything on disk: refused, naming the oldest point.
    let (code, _, err) = at(T0 - 1000);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("oldest point here is offset 3"), "{err}");

    // No log at all (every segment deleted): the newest snapshot is the log's end.
    for p in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
        if p.extension()
            .is_some_and(|e| e == "log" || e == "index" || e == "timeindex")
        {
            std::fs::remove_file(p).unwrap();
        }
    }
    let (code, doc, err) = at(T0 + 120_000);
    assert_eq!(
        (code, &doc["offset"], topics(&doc)),
        (0, &json!(4), vec!["a".into(), "b".into()]),
        "{err}"
    );
    assert_eq!(approximate(&doc), 0);
}

#[test]
fn on_real_kraft_log_dirs_the_image_names_what_the_broker_hosts() {
    let Some(root) = common::realworld_dir() else {
        return;
    };
    let (tmp, _) = common::unpack_realworld(&root);
    let kraft: Vec<PathBuf> = common::broker_log_dirs(tmp.path())
        .into_iter()
        .filter(|d| d.join("__cluster_metadata-0").is_dir())
        .collect();
    assert_eq!(kraft.len(), 3, "{kraft:?}");
    let mut with_log = 0;
    for log_dir in &kraft {
        let r = report(&["--check"], log_dir);
        let image = &r["image"];
        // Brokers that wrote and read these logs back: the controller refuses nothing here.
        assert_eq!(r["findings"], json!([]), "{}", log_dir.display());
        let brokers: Vec<i64> = image["brokers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["brokerId"].as_i64().unwrap())
            .collect();
        assert_eq!(brokers, [meta_node_id(log_dir)], "{}", log_dir.display());
        assert_eq!(report(&["--at", "0"], log_dir)["image"], empty_image());
        let has_log = std::fs::read_dir(log_dir.join("__cluster_metadata-0"))
            .unwrap()
            .any(|e| e.unwrap().path().extension().is_some_and(|x| x == "log"));
        // The snapshots-only archive was collected without its partition directories.
        if !has_log {
            continue;
        }
        with_log += 1;
        let mut in_image = BTreeSet::new();
        for t in image["topics"].as_array().unwrap() {
            let name = t["name"].as_str().unwrap();
            for p in t["partitions"].as_array().unwrap() {
                // Single-broker clusters: every replica is this broker.
                assert_eq!(p["replicas"], json!([meta_node_id(log_dir)]));
                if !name.starts_with("__") {
                    in_image.insert((name.to_owned(), p["partition"].as_i64().unwrap()));
                }
            }
        }
        assert_eq!(in_image, hosted(log_dir), "{}", log_dir.display());
    }
    assert_eq!(with_log, 2);
}

/// Kafka's own metadata log (`../shared/reference-internal/cluster-metadata`): what `--check`
/// finds are exactly the records after the newest snapshot that kafka-dump-log of the same
/// Kafka could not decode (`Error at N, skipping.`), which the controller refuses too.
#[test]
fn check_on_kafkas_metadata_log_finds_the_records_kafka_could_not_decode() {
    let Some(root) = common::reference_internal_dir() else {
        return;
    };
    let scenario = root.join("cluster-metadata");
    let decode: Value =
        serde_json::from_slice(&std::fs::read(scenario.join("expected-decode.json")).unwrap())
            .unwrap();
    let mut expected = Vec::new();
    for (name, file) in decode["files"].as_object().unwrap() {
        if !name.ends_with(".log") {
            continue;
        }
        for b in file["batches"].as_array().unwrap() {
            for r in b["records"].as_array().into_iter().flatten() {
                let offset = r["offset"].as_i64().unwrap();
                let undecodable = r["payload"]
                    .as_str()
                    .is_some_and(|p| p.starts_with("Error at"));
                // The image starts from the snapshot ending at 114.
                if undecodable && offset >= 114 {
                    expected.push(("metadata.undecodable".to_owned(), offset));
                }
            }
        }
    }
    assert!(!expected.is_empty());
    let (code, doc, stderr) = kseg(&["metadata", "--check", "--json"], &scenario.join("input"));
    assert_eq!(code, 1, "{stderr}");
    let found: Vec<(String, i64)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["check"].as_str().unwrap().to_owned(),
                f["offset"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(found, expected);
    assert!(doc["snapshot"]
        .as_str()
        .unwrap()
        .ends_with("00000000000000000114-0000000002.checkpoint"));
}
