//! The `__consumer_offsets` records newer than October 2024 (testdata/kafka-messages pins the
//! definitions): consumer-group regular expressions (type 16) and KIP-1071 streams groups
//! (types 17–23). A partition written by `kseg write` from record bytes encoded here by hand,
//! by Kafka's wire rules (int16 record type then the key message, non-flexible; an int16 value
//! version then the value message, flexible: compact strings and arrays as unsigned varint
//! length + 1, an empty tagged-field section after each struct). `dump` decodes them as
//! kafka-dump-log prints coordinator records (`{"type":…,"data":…}` keys at version 0,
//! `{"version":…,"data":…}` values), `verify --deep` accepts them, `groups` rebuilds the groups by
//! `StreamsGroup`'s rules, and a record the loader refuses or skips is a finding by
//! `verify --deep`'s rule.

mod common;

use std::path::{Path, PathBuf};

use kseg::ops::inspect::groups::describe_groups;
use serde_json::{json, Value};

/// A Java `writeString`: int16 length, then the bytes.
fn string(s: &str) -> String {
    format!("{:04x}{}", s.len(), common::hex(s.as_bytes()))
}

/// A compact string: unsigned varint of length + 1 (all lengths here are below 127).
fn compact(s: &str) -> String {
    format!("{:02x}{}", s.len() + 1, common::hex(s.as_bytes()))
}

/// A compact array of already-encoded elements.
fn array(items: &[String]) -> String {
    format!("{:02x}{}", items.len() + 1, items.concat())
}

fn strings(items: &[&str]) -> String {
    array(&items.iter().map(|s| compact(s)).collect::<Vec<_>>())
}

const NO_TAGS: &str = "00";

/// Key: the record type, then the key's strings.
fn key(record_type: u16, parts: &[&str]) -> String {
    let body: String = parts.iter().map(|p| string(p)).collect();
    format!("{record_type:04x}{body}")
}

/// A flexible value at version 0: its fields, then the root's tagged-field section.
fn value(fields: &str) -> String {
    format!("0000{fields}{NO_TAGS}")
}

/// StreamsGroup `TaskIds`: subtopology id and partitions (int32s).
fn tasks(subtopology: &str, partitions: &[i32]) -> String {
    let parts: Vec<String> = partitions.iter().map(|p| format!("{p:08x}")).collect();
    format!("{}{}{NO_TAGS}", compact(subtopology), array(&parts))
}

/// StreamsGroupTopology `TopicInfo`: name, partitions, replication factor, no configs.
fn topic_info(name: &str) -> String {
    format!("{}{:08x}{:04x}{}{NO_TAGS}", compact(name), 0, 0, array(&[]))
}

fn rec(key_hex: String, value_hex: Option<String>) -> Value {
    match value_hex {
        Some(v) => json!({"key_hex": key_hex, "value_hex": v}),
        None => json!({"key_hex": key_hex}),
    }
}

/// The records of the partition: a consumer group with a regular expression, a streams group
/// with a topology and a member holding tasks, a streams group without topology.
fn records() -> Vec<Value> {
    let regex_value = value(&format!(
        "{}{:016x}{:016x}",
        strings(&["orders", "orders-eu"]),
        42,
        1_750_000_000_000i64
    ));
    let subtopology = format!(
        "{}{}{}{}{}{}{}{NO_TAGS}",
        compact("0"),
        strings(&["clicks"]),
        strings(&[]),
        array(&[topic_info("app-store-changelog")]),
        strings(&["app-repartition"]),
        array(&[]),
        array(&[]),
    );
    let member_value = value(&format!(
        "{}{}{}{}{:08x}{:08x}{}{}{}",
        "00", // instance id: null
        "00", // rack id: null
        compact("c1"),
        compact("/10.0.0.1"),
        30_000,
        1, // topology epoch
        compact("p1"),
        "ff", // user endpoint: null
        array(&[]),
    ));
    let assignment = value(&format!(
        "{:08x}{:08x}{:02x}{}{}{}{}{}{}",
        3,
        2,
        1, // MemberState.STABLE of streams
        array(&[tasks("0", &[0, 1])]),
        array(&[tasks("0", &[2])]),
        array(&[]),
        array(&[]),
        array(&[]),
        array(&[]),
    ));
    vec![
        // ConsumerGroupMetadata (3) epoch 1, a regex subscription (16).
        rec(key(3, &["cg"]), Some(value(&format!("{:08x}", 1)))),
        rec(key(16, &["cg", "orders.*"]), Some(regex_value)),
        // Streams group "sg": epoch 3 (17), topology epoch 1 (23), member m1 (19), assignment
        // epoch 3 (20), m1's current assignment at epoch 3, stable (22).
        rec(key(17, &["sg"]), Some(value(&format!("{:08x}", 3)))),
        rec(
            key(23, &["sg"]),
            Some(value(&format!("{:08x}{}", 1, array(&[subtopology])))),
        ),
        rec(key(19, &["sg", "m1"]), Some(member_value.clone())),
        rec(key(20, &["sg"]), Some(value(&format!("{:08x}", 3)))),
        rec(key(22, &["sg", "m1"]), Some(assignment)),
        // Streams group "nt": a member and no topology.
        rec(key(17, &["nt"]), Some(value(&format!("{:08x}", 1)))),
        rec(key(19, &["nt", "m9"]), Some(member_value)),
    ]
}

fn write_partition(dir: &Path, records: Vec<Value>) -> PathBuf {
    let spec = json!({"topic": "__consumer_offsets", "partition": 0,
        "ops": [{"op": "append", "batches": [{"records": records}]}]});
    let part = dir.join("__consumer_offsets-0");
    common::kseg_write(&spec.to_string(), &part);
    part
}

#[test]
fn dump_decodes_the_newer_record_types_as_kafka_dump_log_prints_them() {
    let tmp = tempfile::tempdir().unwrap();
    let part = write_partition(tmp.path(), records());
    let out = common::kseg(&[
        "dump",
        "--offsets-decoder",
        part.join("00000000000000000000.log").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let parts: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| offset: "))
        .map(|l| &l[l.find(" key: ").unwrap() + 1..])
        .collect();
    assert_eq!(parts.len(), 9, "{text}");
    assert_eq!(
        parts[1],
        r#"key: {"type":"16","data":{"groupId":"cg","regularExpression":"orders.*"}} payload: {"version":"0","data":{"topics":["orders","orders-eu"],"version":42,"timestamp":1750000000000}}"#
    );
    assert_eq!(
        parts[2],
        r#"key: {"type":"17","data":{"groupId":"sg"}} payload: {"version":"0","data":{"epoch":3}}"#
    );
    assert_eq!(
        parts[3],
        r#"key: {"type":"23","data":{"groupId":"sg"}} payload: {"version":"0","data":{"epoch":1,"subtopologies":[{"subtopologyId":"0","sourceTopics":["clicks"],"sourceTopicRegex":[],"stateChangelogTopics":[{"name":"app-store-changelog","partitions":0,"replicationFactor":0,"topicConfigs":[]}],"repartitionSinkTopics":["app-repartition"],"repartitionSourceTopics":[],"copartitionGroups":[]}]}}"#
    );
    assert_eq!(
        parts[4],
        r#"key: {"type":"19","data":{"groupId":"sg","memberId":"m1"}} payload: {"version":"0","data":{"instanceId":null,"rackId":null,"clientId":"c1","clientHost":"/10.0.0.1","rebalanceTimeoutMs":30000,"topologyEpoch":1,"processId":"p1","userEndpoint":null,"clientTags":[]}}"#
    );
    assert_eq!(
        parts[6],
        r#"key: {"type":"22","data":{"groupId":"sg","memberId":"m1"}} payload: {"version":"0","data":{"memberEpoch":3,"previousMemberEpoch":2,"state":1,"activeTasks":[{"subtopologyId":"0","partitions":[0,1]}],"standbyTasks":[{"subtopologyId":"0","partitions":[2]}],"warmupTasks":[],"activeTasksPendingRevocation":[],"standbyTasksPendingRevocation":[],"warmupTasksPendingRevocation":[]}}"#
    );
    // The loader reads them all: nothing to say.
    let (code, stderr) = common::kseg_status(&["verify", "--deep"], &part);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn groups_shows_regular_expressions_and_streams_groups() {
    let tmp = tempfile::tempdir().unwrap();
    let part = write_partition(tmp.path(), records());
    let report = describe_groups(std::slice::from_ref(&part), None).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    let by_name = |n: &str| report.groups.iter().find(|g| g.group == n).unwrap();

    let cg = by_name("cg");
    assert_eq!((cg.group_type, cg.state), ("consumer", "Empty"));
    assert_eq!(cg.regular_expressions.len(), 1);
    let re = &cg.regular_expressions[0];
    assert_eq!(re.regular_expression, "orders.*");
    assert_eq!(re.topics, ["orders", "orders-eu"]);
    assert_eq!(
        (re.metadata_image_version, re.resolved_timestamp),
        (42, 1_750_000_000_000)
    );

    // Epoch 3 = assignment epoch 3, its one member at epoch 3 and STABLE: Stable.
    let sg = by_name("sg");
    assert_eq!((sg.group_type, sg.state), ("streams", "Stable"));
    assert_eq!((sg.generation, sg.assignment_epoch), (Some(3), Some(3)));
    let topology = sg.topology.as_ref().unwrap();
    assert_eq!(topology.topology_epoch, 1);
    let st = &topology.subtopologies[0];
    assert_eq!(st.subtopology_id, "0");
    assert_eq!(st.source_topics, ["clicks"]);
    assert_eq!(st.state_changelog_topics, ["app-store-changelog"]);
    assert_eq!(st.repartition_sink_topics, ["app-repartition"]);
    let m = &sg.members[0];
    assert_eq!(m.member_id, "m1");
    assert_eq!(m.process_id.as_deref(), Some("p1"));
    assert_eq!((m.member_epoch, m.topology_epoch), (Some(3), Some(1)));
    let t = m.current_assignment.as_ref().unwrap();
    assert_eq!(t.active_tasks[0].partitions, [0, 1]);
    assert_eq!(t.standby_tasks[0].partitions, [2]);
    assert!(t.warmup_tasks.is_empty());

    // A member and no topology: NotReady.
    let nt = by_name("nt");
    assert_eq!((nt.group_type, nt.state), ("streams", "NotReady"));

    // Text and JSON through the CLI.
    let out = common::kseg(&["groups", part.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("group sg (streams, Stable)"), "{text}");
    assert!(text.contains("    active tasks: 0_0, 0_1"), "{text}");
    assert!(
        text.contains("      state changelog topics: app-store-changelog"),
        "{text}"
    );
    assert!(
        text.contains(r#"  regex "orders.*": 2 topic(s) [orders, orders-eu]"#),
        "{text}"
    );
    let out = common::kseg(&["groups", "--json", part.to_str().unwrap()]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    common::assert_matches_schema("groups", std::slice::from_ref(&doc));
    let sg = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == "sg")
        .unwrap();
    assert_eq!(
        sg["members"][0]["currentAssignment"]["activeTasks"][0]["subtopologyId"],
        "0"
    );
    assert_eq!(
        sg["topology"]["subtopologies"][0]["sourceTopics"][0],
        "clicks"
    );
}

/// `groups` judges records by the loader's rule (`verify --deep`'s): a record without key
/// fails the partition's load (an error, exit 1), an unknown type is skipped (a warning).
#[test]
fn groups_reports_what_the_loader_refuses_or_skips() {
    for (record, check, severity, status) in [
        (
            json!({"value_hex": "0003"}),
            "record.loader-rejects",
            "error",
            1,
        ),
        (
            rec(key(99, &["x"]), None),
            "record.loader-skips",
            "warning",
            0,
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let mut rs = records();
        rs.push(record);
        let part = write_partition(tmp.path(), rs);
        let report = describe_groups(std::slice::from_ref(&part), None).unwrap();
        let found: Vec<(&str, String, Option<i64>)> = report
            .findings
            .iter()
            .map(|f| {
                (
                    f.check,
                    format!("{:?}", f.severity).to_lowercase(),
                    f.offset,
                )
            })
            .collect();
        assert_eq!(found, [(check, severity.to_owned(), Some(9))]);
        // What loads is still shown.
        assert_eq!(report.groups.len(), 3);
        let (code, _) = common::kseg_status(&["groups"], &part);
        assert_eq!(code, status);
    }
}
