//! Unit tests of the internal-topic decoders with hand-computed bytes at the version
//! boundaries, and fuzz-style tests that no truncation or corruption panics.

use super::*;

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn offsets(key: &[u8], value: Option<&[u8]>) -> Decoded {
    decode_record(Decoder::Offsets, 0, Some(key), value)
}

fn payload(d: &Decoded) -> &str {
    d.payload.as_deref().unwrap_or("<none>")
}

fn key_of(d: &Decoded) -> &str {
    d.key.as_deref().unwrap_or("<none>")
}

// OffsetCommitKey, record type 1: group "g", topic "t", partition 3.
const COMMIT_KEY: &[u8] = &[0, 1, 0, 1, b'g', 0, 1, b't', 0, 0, 0, 3];
const I64_5: &[u8] = &[0, 0, 0, 0, 0, 0, 0, 5];
const I64_1000: &[u8] = &[0, 0, 0, 0, 0, 0, 0x03, 0xe8];
const I64_2000: &[u8] = &[0, 0, 0, 0, 0, 0, 0x07, 0xd0];

#[test]
fn offset_commit_key_and_values_v0_to_v3() {
    let v0 = cat(&[&[0, 0], I64_5, &[0, 1, b'm'], I64_1000]);
    let d = offsets(COMMIT_KEY, Some(&v0));
    assert_eq!(
        key_of(&d),
        r#"{"type":"1","data":{"group":"g","topic":"t","partition":3}}"#
    );
    assert_eq!(
        payload(&d),
        r#"{"version":"0","data":{"offset":5,"metadata":"m","commitTimestamp":1000}}"#
    );
    assert!(d.key_json.is_some() && d.payload_json.is_some() && d.fatal.is_none());

    // v1 alone has the expire timestamp.
    let v1 = cat(&[&[0, 1], I64_5, &[0, 1, b'm'], I64_1000, I64_2000]);
    assert_eq!(
        payload(&offsets(COMMIT_KEY, Some(&v1))),
        r#"{"version":"1","data":{"offset":5,"metadata":"m","commitTimestamp":1000,"expireTimestamp":2000}}"#
    );
    // v3 adds the leader epoch before the metadata.
    let v3 = cat(&[&[0, 3], I64_5, &[0, 0, 0, 7], &[0, 0], I64_1000]);
    assert_eq!(
        payload(&offsets(COMMIT_KEY, Some(&v3))),
        r#"{"version":"3","data":{"offset":5,"leaderEpoch":7,"metadata":"","commitTimestamp":1000}}"#
    );
    // Tombstone.
    assert_eq!(payload(&offsets(COMMIT_KEY, None)), "<DELETE>");
}

#[test]
fn offset_commit_value_flexible_tagged_and_future_versions() {
    let body = |version: u8, tagged: &[u8]| {
        cat(&[
            &[0, version],
            I64_5,
            &[0, 0, 0, 7],
            &[2, b'm'],
            I64_1000,
            tagged,
        ])
    };
    let want = |v: &str| {
        format!(
            r#"{{"version":"{v}","data":{{"offset":5,"leaderEpoch":7,"metadata":"m","commitTimestamp":1000}}}}"#
        )
    };
    // v4 is flexible: compact string, tagged-field section.
    assert_eq!(
        payload(&offsets(COMMIT_KEY, Some(&body(4, &[0])))),
        want("4")
    );
    // Unknown tagged fields are skipped.
    assert_eq!(
        payload(&offsets(
            COMMIT_KEY,
            Some(&body(4, &[2, 9, 2, 0xaa, 0xbb, 10, 0]))
        )),
        want("4")
    );
    // A version beyond the schema reads with the newest layout and prints its own number.
    assert_eq!(
        payload(&offsets(COMMIT_KEY, Some(&body(9, &[0])))),
        want("9")
    );
    // An unknown tagged field longer than what is left.
    let d = offsets(COMMIT_KEY, Some(&body(4, &[1, 9, 5, 0xaa])));
    assert_eq!(
        key_of(&d),
        "Error at offset 0, skipping. Could not read record with version 4 from value's buffer due to: Error reading byte array of 5 byte(s): only 1 byte(s) available."
    );
    assert_eq!(d.payload, None);
    // Missing tagged-field section: a buffer underflow, whose message is null.
    assert_eq!(
        key_of(&offsets(COMMIT_KEY, Some(&body(4, &[])))),
        "Error at offset 0, skipping. Could not read record with version 4 from value's buffer due to: null."
    );
}

#[test]
fn coordinator_framing_errors() {
    assert_eq!(
        key_of(&offsets(&[0, 24, 0], Some(&[0, 0]))),
        "Unknown record type 24 at offset 0, skipping."
    );
    assert_eq!(
        key_of(&offsets(&[0xff, 0xff], None)),
        "Unknown record type -1 at offset 0, skipping."
    );
    assert_eq!(
        key_of(&offsets(&[1], None)),
        "Error at offset 0, skipping. Could not read version from key's buffer."
    );
    assert_eq!(
        key_of(&offsets(COMMIT_KEY, Some(&[3]))),
        "Error at offset 0, skipping. Could not read version from value's buffer."
    );
    assert_eq!(
        key_of(&offsets(&[0, 1, 0, 5, b'g'], None)),
        "Error at offset 0, skipping. Could not read record with version 1 from key's buffer due to: Error reading byte array of 5 byte(s): only 1 byte(s) available."
    );
    // A null string in a non-nullable field.
    assert_eq!(
        key_of(&offsets(&[0, 2, 0xff, 0xff], None)),
        "Error at offset 0, skipping. Could not read record with version 2 from key's buffer due to: non-nullable field group was serialized as null."
    );
    let d = decode_record(Decoder::Offsets, 13, None, Some(&[0, 0]));
    assert_eq!(
        d.fatal.as_deref(),
        Some("java.lang.RuntimeException: Failed to decode message at offset 13 using offset topic decoder (message had a missing key)")
    );
    assert_eq!((d.key, d.payload), (None, None));
    let d = decode_record(Decoder::ShareGroupState, 2, None, None);
    assert!(d
        .fatal
        .unwrap()
        .contains("using share group state topic decoder"));
}

/// GroupMetadataValue v3 of a group with one member whose bytes are given.
fn group_value(protocol_type: &str, subscription: &[u8], assignment: &[u8]) -> Vec<u8> {
    let s16 = |s: &str| cat(&[&(s.len() as i16).to_be_bytes(), s.as_bytes()]);
    let b32 = |b: &[u8]| cat(&[&(b.len() as i32).to_be_bytes(), b]);
    cat(&[
        &[0, 3],
        &s16(protocol_type),
        &[0, 0, 0, 1],
        &s16("range"),
        &s16("m"),
        &[0xff; 8],
        &[0, 0, 0, 1],
        &s16("m"),
        &[0xff, 0xff],
        &s16("c"),
        &s16("h"),
        &[0, 0, 0, 10],
        &[0, 0, 0, 20],
        &b32(subscription),
        &b32(assignment),
    ])
}

const GROUP_KEY: &[u8] = &[0, 2, 0, 1, b'g'];
// ConsumerProtocolSubscription v0: topics ["t"], userData null.
const SUB_V0: &[u8] = &[0, 0, 0, 0, 0, 1, 0, 1, b't', 0xff, 0xff, 0xff, 0xff];
// ConsumerProtocolAssignment v0: [{"t", [0]}], userData null.
const ASSIGN_V0: &[u8] = &[
    0, 0, 0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
];

fn member_part(group: &Decoded) -> String {
    let p = payload(group);
    p[p.find("\"sessionTimeout\"").unwrap()..].to_string()
}

#[test]
fn consumer_protocol_member_bytes() {
    let d = offsets(GROUP_KEY, Some(&group_value("consumer", SUB_V0, ASSIGN_V0)));
    assert_eq!(
        payload(&d),
        r#"{"version":"3","data":{"protocolType":"consumer","generation":1,"protocol":"range","leader":"m","currentStateTimestamp":-1,"members":[{"memberId":"m","groupInstanceId":null,"clientId":"c","clientHost":"h","rebalanceTimeout":10,"sessionTimeout":20,"subscription":{"topics":["t"],"userData":null},"assignment":{"assignedPartitions":[{"topic":"t","partitions":[0]}],"userData":null}}]}}"#
    );
    // Another protocol type: bytes stay base64; empty bytes are "".
    let d = offsets(GROUP_KEY, Some(&group_value("connect", SUB_V0, &[])));
    assert_eq!(
        member_part(&d),
        r#""sessionTimeout":20,"subscription":"AAAAAAABAAF0/////w==","assignment":""}]}}"#
    );
    // Trailing bytes are ignored; a failing parse keeps the base64.
    let d = offsets(
        GROUP_KEY,
        Some(&group_value(
            "consumer",
            &cat(&[SUB_V0, &[1, 2]]),
            &[0, 0, 0],
        )),
    );
    assert_eq!(
        member_part(&d),
        r#""sessionTimeout":20,"subscription":{"topics":["t"],"userData":null},"assignment":"AAAA"}]}}"#
    );
    // Version 7 reads with the v3 layout; an inline struct at version 7 cannot be read.
    let v7_empty_owned = cat(&[
        &[0, 7, 0, 0, 0, 1, 0, 1, b't', 0xff, 0xff, 0xff, 0xff],
        &[0, 0, 0, 0],
        &[0, 0, 0, 4],
        &[0xff, 0xff],
    ]);
    let d = offsets(
        GROUP_KEY,
        Some(&group_value("consumer", &v7_empty_owned, &[])),
    );
    assert!(member_part(&d).starts_with(
        r#""sessionTimeout":20,"subscription":{"topics":["t"],"userData":null,"ownedPartitions":[],"generationId":4,"rackId":null}"#
    ));
    let v7_owned = cat(&[
        &[0, 7, 0, 0, 0, 1, 0, 1, b't', 0xff, 0xff, 0xff, 0xff],
        &[0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 0],
        &[0, 0, 0, 4],
        &[0xff, 0xff],
    ]);
    let d = offsets(GROUP_KEY, Some(&group_value("consumer", &v7_owned, &[])));
    assert!(member_part(&d).starts_with(r#""sessionTimeout":20,"subscription":"AAc"#));
}

#[test]
fn inline_structs_refuse_versions_beyond_their_parent() {
    // ConsumerGroupPartitionMetadataValue v1 with one topic: Kafka cannot read the topic.
    let key = [0, 4, 0, 1, b'g'];
    let value = cat(&[
        &[0, 1],
        &[2],
        &[0; 16],
        &[2, b't'],
        &[0, 0, 0, 1],
        &[1],
        &[0],
        &[0],
    ]);
    assert_eq!(
        key_of(&offsets(&key, Some(&value))),
        "Error at offset 0, skipping. Could not read record with version 1 from value's buffer due to: Can't read version 1 of TopicMetadata."
    );
    // With no topics it decodes, printed at version 1.
    assert_eq!(
        payload(&offsets(&key, Some(&[0, 1, 1, 0]))),
        r#"{"version":"1","data":{"topics":[]}}"#
    );
}

#[test]
fn tagged_struct_defaults_to_an_empty_struct() {
    // ConsumerGroupMemberMetadataValue v0, no classic metadata tag: the field is omitted;
    // tag 0 with a null marker prints null.
    let key = [0, 5, 0, 1, b'g', 0, 1, b'm'];
    let fixed: &[u8] = &[0, 0, 2, b'c', 2, b'h', 1, 0, 0xff, 0xff, 0xff, 0xff, 0];
    let head = r#"{"version":"0","data":{"instanceId":null,"rackId":null,"clientId":"c","clientHost":"h","subscribedTopicNames":[],"subscribedTopicRegex":null,"rebalanceTimeoutMs":-1,"serverAssignor":null"#;
    assert_eq!(
        payload(&offsets(&key, Some(&cat(&[&[0, 0], fixed, &[0]])))),
        format!("{head}}}}}")
    );
    assert_eq!(
        payload(&offsets(&key, Some(&cat(&[&[0, 0], fixed, &[1, 0, 1, 0]])))),
        format!(r#"{head},"classicMemberMetadata":null}}}}"#)
    );
    // Present and equal to the empty struct: omitted again.
    assert_eq!(
        payload(&offsets(
            &key,
            Some(&cat(&[&[0, 0], fixed, &[1, 0, 7, 1, 0, 0, 0, 0, 1, 0]]))
        )),
        format!("{head}}}}}")
    );
}

#[test]
fn share_group_state_records() {
    let key = cat(&[&[0, 1, 0, 1, b'g'], &[0; 15], &[1], &[0, 0, 0, 2]]);
    // ShareUpdateValue claiming version 1 (schema has 0 only).
    let value = cat(&[
        &[0, 1],
        &[0, 3],
        &[0, 0, 0, 4],
        I64_5,
        &[2],
        I64_5,
        &[0, 0, 0, 0, 0, 0, 0, 9],
        &[2, 0, 1, 0],
        &[0],
    ]);
    let d = decode_record(Decoder::ShareGroupState, 0, Some(&key), Some(&value));
    assert_eq!(
        key_of(&d),
        r#"{"type":"1","data":{"groupId":"g","topicId":"AAAAAAAAAAAAAAAAAAAAAQ","partition":2}}"#
    );
    assert_eq!(
        payload(&d),
        r#"{"type":"1","data":{"snapshotEpoch":3,"leaderEpoch":4,"startOffset":5,"stateBatches":[{"firstOffset":5,"lastOffset":9,"deliveryState":2,"deliveryCount":1}]}}"#
    );
    let d = decode_record(Decoder::ShareGroupState, 3, Some(&[0, 2]), None);
    assert_eq!(key_of(&d), "Unknown record type 2 at offset 3, skipping.");
}

fn metadata(value: Option<&[u8]>) -> String {
    decode_record(Decoder::ClusterMetadata, 7, None, value)
        .payload
        .unwrap()
}

#[test]
fn metadata_records_and_tagged_fields() {
    let mut uuid1 = [0u8; 16];
    uuid1[15] = 1;
    let topic = cat(&[&[1, 2, 0, 2, b't'], &uuid1, &[0]]);
    assert_eq!(
        metadata(Some(&topic)),
        r#"{"type":"TOPIC_RECORD","version":0,"data":{"name":"t","topicId":"AAAAAAAAAAAAAAAAAAAAAQ"}}"#
    );
    let d = decode_record(Decoder::ClusterMetadata, 7, Some(b"ignored"), Some(&topic));
    assert_eq!(d.key, None);
    assert!(d.payload_json.is_some());

    // PartitionChangeRecord: tagged leader (tag 1) only when present.
    let change =
        |version: u8, tagged: &[u8]| cat(&[&[1, 5, version, 0, 0, 0, 0], &[0; 16], tagged]);
    let zero = "AAAAAAAAAAAAAAAAAAAAAA";
    assert_eq!(
        metadata(Some(&change(0, &[0]))),
        format!(
            r#"{{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{{"partitionId":0,"topicId":"{zero}"}}}}"#
        )
    );
    assert_eq!(
        metadata(Some(&change(0, &[1, 1, 4, 0, 0, 0, 5]))),
        format!(
            r#"{{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{{"partitionId":0,"topicId":"{zero}","leader":5}}}}"#
        )
    );
    // Tag 6 (eligible leader replicas) exists from v2 only.
    assert_eq!(
        metadata(Some(&change(0, &[1, 6, 5, 2, 0, 0, 0, 1]))),
        "Error at 7, skipping. Failed to deserialize record with type 5"
    );
    assert_eq!(
        metadata(Some(&change(2, &[2, 6, 5, 2, 0, 0, 0, 1, 99, 1, 0]))),
        format!(
            r#"{{"type":"PARTITION_CHANGE_RECORD","version":2,"data":{{"partitionId":0,"topicId":"{zero}","eligibleLeaderReplicas":[1]}}}}"#
        )
    );
    // A tagged field at its default is left out even when written.
    assert_eq!(
        metadata(Some(&change(0, &[1, 1, 4, 0xff, 0xff, 0xff, 0xfe]))),
        format!(
            r#"{{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{{"partitionId":0,"topicId":"{zero}"}}}}"#
        )
    );
    // BrokerRegistrationChangeRecord v1: fenced and inControlledShutdown are tagged int8s.
    let brc = cat(&[&[1, 17, 1, 0, 0, 0, 1], I64_5, &[2, 0, 1, 1, 1, 1, 1]]);
    assert_eq!(
        metadata(Some(&brc)),
        r#"{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":1,"data":{"brokerId":1,"brokerEpoch":5,"fenced":1,"inControlledShutdown":1}}"#
    );
    // ClientQuotaRecord: float64 as Java prints it.
    let quota = cat(&[
        &[1, 14, 0, 2, 2, b'u', 2, b'a', 0, 2, b'k'],
        &1.5e7f64.to_be_bytes(),
        &[1, 0],
    ]);
    assert_eq!(
        metadata(Some(&quota)),
        r#"{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"u","entityName":"a"}],"key":"k","value":1.5E7,"remove":true}}"#
    );
}

#[test]
fn metadata_frame_errors() {
    let cases: [(Option<&[u8]>, &str); 8] = [
        (None, "Error while reading frame version"),
        (Some(&[]), "Error while reading frame version"),
        (Some(&[0]), "Could not deserialize metadata record with frame version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported."),
        (Some(&[2]), "Could not deserialize metadata record due to unknown frame version 2(only frame version 1 is supported)"),
        (Some(&[1, 6, 0]), "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 6"),
        (Some(&[1, 20, 0, 0, 0xff]), "Found 1 byte(s) of garbage after 20"),
        (Some(&[1, 0xff, 0xff, 0x03]), "Value for type was too large."),
        (Some(&[1, 0xff, 0xff, 0xff, 0xff, 0xff]), "Error while reading type"),
    ];
    for (value, message) in cases {
        assert_eq!(metadata(value), format!("Error at 7, skipping. {message}"));
    }
}

fn txn(key: Option<&[u8]>, value: Option<&[u8]>) -> Decoded {
    decode_record(Decoder::TransactionLog, 0, key, value)
}

const TXN_KEY: &[u8] = &[0, 0, 0, 1, b'x'];

#[test]
fn transaction_log_v0_and_v1() {
    let head = |version: u8, status: u8| {
        cat(&[
            &[0, version],
            &[0, 0, 0, 0, 0, 0, 0, 7],
            &[0, 1],
            &[0, 0, 0xea, 0x60],
            &[status],
        ])
    };
    // v0, Ongoing, partitions t-0 and t-1: hashes 1077 and 1108, buckets 5 and 4.
    let v0 = cat(&[
        &head(0, 1),
        &[0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1],
        &[0, 0, 0, 0, 0, 0, 0, 100],
        &[0, 0, 0, 0, 0, 0, 0, 50],
    ]);
    let d = txn(Some(TXN_KEY), Some(&v0));
    assert_eq!(key_of(&d), "transaction_metadata::transactionalId=x");
    assert_eq!(
        payload(&d),
        "producerId:7,producerEpoch:1,state=Ongoing,partitions=[t-1,t-0],txnLastUpdateTimestamp=100,txnTimeoutMs=60000"
    );
    // v1 is flexible, with the transaction version as tagged field 2.
    let v1 = |status: u8, tv: u8| {
        cat(&[
            &head(1, status),
            &[2, 2, b't', 2, 0, 0, 0, 0, 0],
            &[0, 0, 0, 0, 0, 0, 0, 100],
            &[0, 0, 0, 0, 0, 0, 0, 50],
            &[1, 2, 2, 0, tv],
        ])
    };
    assert_eq!(
        payload(&txn(Some(TXN_KEY), Some(&v1(4, 2)))),
        "producerId:7,producerEpoch:1,state=CompleteCommit,partitions=[t-0],txnLastUpdateTimestamp=100,txnTimeoutMs=60000"
    );
    // Empty ignores its partitions.
    assert!(payload(&txn(Some(TXN_KEY), Some(&v1(0, 0)))).contains("state=Empty,partitions=[],"));
    assert_eq!(payload(&txn(Some(TXN_KEY), None)), "<DELETE>");
    let d = txn(Some(&[0, 1, 0, 1, b'x']), Some(&v0));
    assert_eq!(
        (key_of(&d), d.payload.as_deref()),
        ("unknown::version=1", None)
    );
    // Everything else kills kafka-dump-log.
    for (k, v, fatal) in [
        (None, Some(v0.clone()), "java.lang.NullPointerException"),
        (Some(TXN_KEY), Some(cat(&[&[0, 2], &v0[2..]])), "java.lang.IllegalStateException: Unknown version 2 from the transaction log message value"),
        (Some(TXN_KEY), Some(v1(9, 0)), "java.lang.IllegalStateException: Unknown transaction state id 9 from the transaction status message"),
        (Some(TXN_KEY), Some(v1(4, 3)), "java.lang.IllegalArgumentException: No feature:transaction.version with feature level 3"),
        (Some(&[0][..]), None, "java.nio.BufferUnderflowException"),
    ] {
        let d = txn(k, v.as_deref());
        assert_eq!(d.fatal.as_deref(), Some(fatal));
        assert_eq!((d.key, d.payload), (None, None));
    }
}

#[test]
fn transaction_partitions_follow_scala_hash_set_order() {
    // 13 partitions of one topic: the set is sized for them (32 buckets) before adding.
    let ids: Vec<i32> = (0..13).collect();
    let mut value = cat(&[
        &[0, 0],
        I64_5,
        &[0, 1],
        &[0, 0, 0, 1],
        &[1],
        &[0, 0, 0, 1],
        &[0, 2, b'a', b'b'],
    ]);
    value.extend((ids.len() as i32).to_be_bytes());
    for id in &ids {
        value.extend(id.to_be_bytes());
    }
    value.extend([0u8; 16]);
    let d = txn(Some(TXN_KEY), Some(&value));
    let improved = |p: i32| {
        let h = 31i32 * (31 + p) + (97 * 31 + 98);
        h ^ ((h as u32) >> 16) as i32
    };
    let mut want = ids.clone();
    want.sort_by_key(|p| ((improved(*p) as u32) & 31, improved(*p)));
    let want: Vec<String> = want.iter().map(|p| format!("ab-{p}")).collect();
    assert!(
        payload(&d).contains(&format!("partitions=[{}]", want.join(","))),
        "{}",
        payload(&d)
    );
}

#[test]
fn control_records() {
    let header = cat(&[&[0, 0], &[0, 0, 0, 0, 0, 0, 0x27, 0x10], &[0]]);
    let (text, json) = control_record_text(Some(&[0, 0, 0, 3]), Some(&header)).unwrap();
    assert_eq!(
        text,
        r#" SnapshotHeader {"version":0,"lastContainedLogTimestamp":10000}"#
    );
    assert_eq!(json.unwrap()["lastContainedLogTimestamp"], 10000);
    // Printed at the version the value claims.
    let header1 = cat(&[&[0, 1], &header[2..]]);
    assert_eq!(
        control_record_text(Some(&[0, 0, 0, 3]), Some(&header1))
            .unwrap()
            .0,
        r#" SnapshotHeader {"version":1,"lastContainedLogTimestamp":10000}"#
    );
    assert_eq!(
        control_record_text(Some(&[0, 0, 0, 4]), Some(&[0, 0, 0]))
            .unwrap()
            .0,
        r#" SnapshotFooter {"version":0}"#
    );
    assert_eq!(
        control_record_text(Some(&[0, 0, 0, 5]), Some(&[0, 0, 0, 1, 0]))
            .unwrap()
            .0,
        r#" KRaftVersion {"version":0,"kRaftVersion":1}"#
    );
    let mut dir = [0u8; 16];
    dir[0] = 0xfb;
    let voters = cat(&[
        &[0, 0, 2, 0, 0, 0x0b, 0xb8],
        &dir,
        &[2, 2, b'C', 2, b'h', 0x23, 0x85, 0],
        &[0, 0, 0, 1, 0],
        &[0, 0],
    ]);
    assert_eq!(
        control_record_text(Some(&[0, 0, 0, 6]), Some(&voters))
            .unwrap()
            .0,
        r#" KRaftVoters {"version":0,"voters":[{"voterId":3000,"voterDirectoryId":"-wAAAAAAAAAAAAAAAAAAAA","endpoints":[{"name":"C","host":"h","port":9093}],"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}"#
    );
    let leader = [
        0, 0, 0, 0, 0x0b, 0xb8, 2, 0, 0, 0x0b, 0xb8, 0, 2, 0, 0, 0x0b, 0xb8, 0, 0,
    ];
    let (text, json) = control_record_text(Some(&[0, 0, 0, 2]), Some(&leader)).unwrap();
    assert_eq!(text, " controlType: LEADER_CHANGE(2)");
    assert_eq!(
        json.unwrap().to_string(),
        r#"{"version":0,"leaderId":3000,"voters":[{"voterId":3000}],"grantingVoters":[{"voterId":3000}]}"#
    );
    assert_eq!(
        control_record_text(Some(&[0, 3, 0, 9]), None).unwrap().0,
        " controlType: UNKNOWN(9)"
    );
    assert_eq!(
        control_record_text(Some(&[0, 0, 0, 1]), Some(&[0, 0, 0, 0, 0, 5]))
            .unwrap()
            .0,
        " endTxnMarker: COMMIT coordinatorEpoch: 5"
    );
    assert_eq!(
        control_record_text(Some(&[0, 0, 0, 0]), Some(&[0, 0, 0, 0, 0, 4, 1]))
            .unwrap()
            .0,
        " endTxnMarker: ABORT coordinatorEpoch: 4"
    );
    for (k, v) in [
        (None, None),
        (Some(&[0u8, 0, 1][..]), None),
        (
            Some(&[0xff, 0xff, 0, 1][..]),
            Some(&[0u8, 0, 0, 0, 0, 5][..]),
        ),
        (Some(&[0, 0, 0, 1][..]), Some(&[0, 0, 0, 0, 5][..])),
        (Some(&[0, 0, 0, 1][..]), None),
        (Some(&[0, 0, 0, 3][..]), None),
        (Some(&[0, 0, 0, 3][..]), Some(&[0, 0, 0][..])),
    ] {
        assert!(control_record_text(k, v).is_err(), "{k:?} {v:?}");
    }
}

/// Valid keys and values for every decoder, the seeds of the corruption tests.
/// A decoder with a key and a value.
type Seed = (Decoder, Option<Vec<u8>>, Option<Vec<u8>>);

fn seeds() -> Vec<Seed> {
    let mut out = vec![
        (
            Decoder::Offsets,
            Some(COMMIT_KEY.to_vec()),
            Some(cat(&[
                &[0, 4],
                I64_5,
                &[0, 0, 0, 7],
                &[2, b'm'],
                I64_1000,
                &[1, 9, 1, 0],
            ])),
        ),
        (
            Decoder::Offsets,
            Some(GROUP_KEY.to_vec()),
            Some(group_value("consumer", SUB_V0, ASSIGN_V0)),
        ),
        (
            Decoder::Offsets,
            Some(vec![0, 5, 0, 1, b'g', 0, 1, b'm']),
            Some(vec![
                0, 0, 0, 0, 2, b'c', 2, b'h', 1, 0, 0xff, 0xff, 0xff, 0xff, 0, 1, 0, 7, 1, 0, 0, 0,
                0, 1, 0,
            ]),
        ),
        (
            Decoder::TransactionLog,
            Some(TXN_KEY.to_vec()),
            Some(cat(&[
                &[0, 1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 1, 0, 0, 0xea, 0x60, 1],
                &[2, 2, b't', 2, 0, 0, 0, 0, 0],
                &[0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0, 50],
                &[1, 2, 2, 0, 2],
            ])),
        ),
        (
            Decoder::ClusterMetadata,
            None,
            Some(cat(&[
                &[1, 5, 2, 0, 0, 0, 0],
                &[0; 16],
                &[2, 6, 5, 2, 0, 0, 0, 1, 8, 2, 1, 0],
            ])),
        ),
        (
            Decoder::ClusterMetadata,
            None,
            Some(cat(&[
                &[1, 14, 0, 2, 2, b'u', 1, 0, 2, b'k'],
                &12.5f64.to_be_bytes(),
                &[0, 0],
            ])),
        ),
        (
            Decoder::ShareGroupState,
            Some(cat(&[&[0, 0, 0, 1, b'g'], &[0; 16], &[0, 0, 0, 2]])),
            Some(cat(&[
                &[0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5],
                I64_5,
                &[2],
                I64_5,
                I64_5,
                &[2, 0, 1, 0, 0],
            ])),
        ),
    ];
    out.push((Decoder::Offsets, Some(vec![0, 1]), None));
    out
}

/// Every truncation and every single-byte corruption of valid keys and values decodes
/// without panicking, to text or to a fatal error.
#[test]
fn corrupted_inputs_never_panic() {
    let check = |decoder: Decoder, k: Option<&[u8]>, v: Option<&[u8]>| {
        let d = decode_record(decoder, 1, k, v);
        assert!(d.fatal.is_some() || d.key.is_some() || d.payload.is_some());
    };
    let mut variants = 0usize;
    for (decoder, k, v) in seeds() {
        check(decoder, k.as_deref(), v.as_deref());
        for (which, bytes) in [(0, &k), (1, &v)] {
            let Some(bytes) = bytes else { continue };
            let with = |b: &[u8]| {
                if which == 0 {
                    check(decoder, Some(b), v.as_deref());
                } else {
                    check(decoder, k.as_deref(), Some(b));
                }
            };
            for n in 0..bytes.len() {
                with(&bytes[..n]);
                variants += 1;
            }
            for i in 0..bytes.len() {
                for flip in [0xff, 0x80, 0x01, 0x7f] {
                    let mut b = bytes.clone();
                    b[i] ^= flip;
                    with(&b);
                    variants += 1;
                }
            }
        }
    }
    assert!(variants > 500);
}

#[test]
fn truncated_values_give_error_texts() {
    let value = cat(&[&[0, 3], I64_5, &[0, 0, 0, 7], &[0, 1, b'm'], I64_1000]);
    for n in 0..value.len() {
        let d = offsets(COMMIT_KEY, Some(&value[..n]));
        assert!(
            key_of(&d).starts_with("Error at offset 0, skipping. Could not read"),
            "{n}"
        );
        assert_eq!(d.payload, None);
    }
    let topic = cat(&[&[1, 2, 0, 2, b't'], &[0; 16], &[0]]);
    for n in 0..topic.len() {
        assert!(
            metadata(Some(&topic[..n])).starts_with("Error at 7, skipping. "),
            "{n}"
        );
    }
    let header = [0, 0, 0, 0, 0, 0, 0, 0, 0x27, 0x10, 0];
    for n in 0..header.len() {
        assert!(control_record_text(Some(&[0, 0, 0, 3]), Some(&header[..n])).is_err());
    }
}

#[test]
fn random_bytes_never_panic() {
    // A small xorshift generator: deterministic, no dependency.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        let len = (next() % 40) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        // Bias toward plausible prefixes so the decoders get past their framing.
        if len > 2 && next() % 2 == 0 {
            bytes[0] = 0;
            bytes[1] = (next() % 16) as u8;
        }
        let split = if len == 0 {
            0
        } else {
            (next() as usize) % (len + 1)
        };
        let (k, v) = bytes.split_at(split);
        for decoder in [
            Decoder::Offsets,
            Decoder::TransactionLog,
            Decoder::ClusterMetadata,
            Decoder::ShareGroupState,
        ] {
            let _ = decode_record(decoder, 0, Some(k), Some(v));
            let _ = decode_record(decoder, 0, Some(k), None);
        }
        let _ = control_record_text(Some(k), Some(v));
        let mut frame = vec![1u8, (next() % 28) as u8, (next() % 4) as u8];
        frame.extend_from_slice(v);
        let _ = decode_record(Decoder::ClusterMetadata, 0, None, Some(&frame));
    }
}

// ---- __remote_log_metadata: bytes derived by hand from storage's RemoteLog*Record.json
// (all flexible at version 0: compact strings/arrays/bytes, a tagged-field count after every
// struct), texts from the objects' toString() in storage/api.

const TOPIC_ID: [u8; 16] = [1; 16];
const SEGMENT_ID: [u8; 16] = [2; 16];
const TOPIC_ID_TEXT: &str = "AQEBAQEBAQEBAQEBAQEBAQ";
const SEGMENT_ID_TEXT: &str = "AgICAgICAgICAgICAgICAg";

fn remote(value: Option<&[u8]>) -> String {
    let d = decode_record(Decoder::RemoteLogMetadata, 5, Some(b"ignored"), value);
    assert_eq!(d.key, None, "no key part is printed");
    d.payload.unwrap()
}

/// TopicIdPartitionEntry {name "foo", id, partition 0}.
fn topic_id_partition() -> Vec<u8> {
    cat(&[&[4], b"foo", &TOPIC_ID, &[0, 0, 0, 0], &[0]])
}

/// RemoteLogSegmentIdEntry {topicIdPartition, id}.
fn segment_id_entry() -> Vec<u8> {
    cat(&[&topic_id_partition(), &SEGMENT_ID, &[0]])
}

fn i64b(n: i64) -> [u8; 8] {
    n.to_be_bytes()
}

fn i32b(n: i32) -> [u8; 4] {
    n.to_be_bytes()
}

/// A RemoteLogSegmentMetadataRecord (api key 0) or its snapshot form (api key 3, which
/// starts with the segment id instead of the whole RemoteLogSegmentIdEntry).
fn segment_record(
    api_key: u8,
    start: i64,
    end: i64,
    epochs: &[(i32, i64)],
    custom: Option<&[u8]>,
    state: u8,
) -> Vec<u8> {
    let mut epoch_bytes = vec![epochs.len() as u8 + 1];
    for (e, o) in epochs {
        epoch_bytes.extend(i32b(*e));
        epoch_bytes.extend(i64b(*o));
        epoch_bytes.push(0);
    }
    let custom = match custom {
        None => vec![0],
        Some(c) => cat(&[&[c.len() as u8 + 1], c]),
    };
    let id = if api_key == 0 {
        segment_id_entry()
    } else {
        SEGMENT_ID.to_vec()
    };
    cat(&[
        &[1, api_key, 0],
        &id,
        &i64b(start),
        &i64b(end),
        &i32b(1),
        &i64b(1000),
        &i64b(2000),
        &epoch_bytes,
        &i32b(4096),
        &custom,
        &[state, 0],
    ])
}

#[test]
fn remote_log_segment_metadata_record_v0() {
    // Epoch 3 twice: the HashMap keeps the last; the TreeMap prints by epoch.
    let v = segment_record(
        0,
        0,
        99,
        &[(3, 50), (0, 0), (3, 60)],
        Some(&[9, 9, 9, 9]),
        1,
    );
    assert_eq!(
        remote(Some(&v)),
        format!("RemoteLogSegmentMetadata{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition={TOPIC_ID_TEXT}:foo-0, id={SEGMENT_ID_TEXT}}}, startOffset=0, endOffset=99, brokerId=1, maxTimestampMs=1000, eventTimestampMs=2000, segmentLeaderEpochs={{0=0, 3=60}}, segmentSizeInBytes=4096, customMetadata=Optional[CustomMetadata{{4 bytes}}], state=COPY_SEGMENT_FINISHED}}")
    );
    let d = decode_record(Decoder::RemoteLogMetadata, 5, None, Some(&v));
    let json = d.payload_json.unwrap();
    assert_eq!(json["type"], "REMOTE_LOG_SEGMENT_METADATA_RECORD");
    assert_eq!(
        json["data"]["remoteLogSegmentId"]["topicIdPartition"]["name"],
        "foo"
    );
    assert_eq!(json["data"]["customMetadata"], "CQkJCQ==");
    // The constructors' checks, in their order, as Error-at-offset lines.
    let err = |v: &[u8]| remote(Some(v));
    assert_eq!(
        err(&segment_record(0, -1, 99, &[(0, 0)], None, 0)),
        "Error at offset 5, skipping. Unexpected start offset = -1. StartOffset for a remote segment cannot be negative"
    );
    assert_eq!(
        err(&segment_record(0, 10, 9, &[], None, 9)),
        "Error at offset 5, skipping. Unexpected end offset = 9. EndOffset for a remote segment cannot be less than startOffset = 10"
    );
    assert_eq!(
        err(&segment_record(0, 0, 9, &[], None, 9)),
        "Error at offset 5, skipping. segmentLeaderEpochs can not be null or empty"
    );
    assert_eq!(
        err(&segment_record(0, 0, 9, &[(0, 0)], None, 4)),
        "Error at offset 5, skipping. state can not be null"
    );
    assert!(err(&segment_record(0, 0, 9, &[(0, 0)], None, 0))
        .ends_with("customMetadata=Optional.empty, state=COPY_SEGMENT_STARTED}"));
}

#[test]
fn remote_log_segment_metadata_update_delete_and_snapshot_records_v0() {
    let update = cat(&[
        &[1, 1, 0],
        &segment_id_entry(),
        &i32b(7),
        &i64b(3000),
        &[0],
        &[3, 0],
    ]);
    assert_eq!(
        remote(Some(&update)),
        format!("RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition={TOPIC_ID_TEXT}:foo-0, id={SEGMENT_ID_TEXT}}}, customMetadata=Optional.empty, state=DELETE_SEGMENT_FINISHED, eventTimestampMs=3000, brokerId=7}}")
    );
    let bad_state = cat(&[
        &[1, 1, 0],
        &segment_id_entry(),
        &i32b(7),
        &i64b(3000),
        &[0],
        &[0xff, 0],
    ]);
    assert_eq!(
        remote(Some(&bad_state)),
        "Error at offset 5, skipping. state can not be null"
    );

    let delete = |state: u8| {
        cat(&[
            &[1, 2, 0],
            &topic_id_partition(),
            &i32b(0),
            &i64b(0),
            &[state, 0],
        ])
    };
    assert_eq!(
        remote(Some(&delete(0))),
        format!("RemotePartitionDeleteMetadata{{topicPartition={TOPIC_ID_TEXT}:foo-0, state=DELETE_PARTITION_MARKED, eventTimestampMs=0, brokerId=0}}")
    );
    assert!(remote(Some(&delete(2))).contains("state=DELETE_PARTITION_FINISHED"));
    // Objects.requireNonNull(state) without a message: getMessage() is null.
    assert_eq!(
        remote(Some(&delete(3))),
        "Error at offset 5, skipping. null"
    );

    let snapshot = segment_record(3, 10, 20, &[(1, 10)], Some(&[]), 2);
    assert_eq!(
        remote(Some(&snapshot)),
        format!("RemoteLogSegmentMetadataSnapshot{{segmentId={SEGMENT_ID_TEXT}, startOffset=10, endOffset=20, maxTimestampMs=1000, segmentLeaderEpochs={{1=10}}, segmentSizeInBytes=4096, customMetadata=Optional[CustomMetadata{{0 bytes}}], state=DELETE_SEGMENT_STARTED}}")
    );
    // The snapshot checks its state before its epochs; no offset checks.
    assert_eq!(
        remote(Some(&segment_record(3, 10, 2, &[], None, 8))),
        "Error at offset 5, skipping. state can not be null"
    );
    assert_eq!(
        remote(Some(&segment_record(3, 10, 2, &[], None, 0))),
        "Error at offset 5, skipping. segmentLeaderEpochs can not be null or empty"
    );
}

#[test]
fn remote_log_metadata_frame_errors() {
    let garbage = cat(&[
        &[1, 2, 0],
        &topic_id_partition(),
        &i32b(0),
        &i64b(0),
        &[0, 0, 0xab],
    ]);
    let cases: [(&[u8], &str); 5] = [
        (&[1, 7, 0], "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 7"),
        (&[2, 0, 0], "Could not deserialize metadata record due to unknown frame version 2(only frame version 1 is supported)"),
        (&[1, 2, 0, 4, b'f'], "Failed to deserialize record with type 2"),
        (&[], "Error while reading frame version"),
        (&garbage, "Found 1 byte(s) of garbage after 2"),
    ];
    for (bytes, message) in cases {
        assert_eq!(
            remote(Some(bytes)),
            format!("Error at offset 5, skipping. {message}"),
            "{bytes:?}"
        );
    }
    assert_eq!(
        remote(None),
        "Error at offset 5, skipping. Cannot invoke \"java.nio.ByteBuffer.remaining()\" because the return value of \"org.apache.kafka.common.record.Record.value()\" is null"
    );
}

#[test]
fn remote_log_metadata_records_encode_from_their_json_form() {
    // The decoder's JSON form, written back through the same tables, gives the hand bytes.
    let v = segment_record(0, 0, 99, &[(0, 0), (3, 60)], Some(&[9, 9, 9, 9]), 1);
    let json = decode_record(Decoder::RemoteLogMetadata, 0, None, Some(&v))
        .payload_json
        .unwrap();
    assert_eq!(
        encode_record(Decoder::RemoteLogMetadata, &json).unwrap(),
        (None, Some(v))
    );
    let by_id = serde_json::json!({"type": 2, "version": 0, "data": {
        "topicIdPartition": {"name": "foo", "id": TOPIC_ID_TEXT, "partition": 0},
        "brokerId": 0, "eventTimestampMs": 0, "remotePartitionDeleteState": 0}});
    let delete = cat(&[
        &[1, 2, 0],
        &topic_id_partition(),
        &i32b(0),
        &i64b(0),
        &[0, 0],
    ]);
    assert_eq!(
        encode_record(Decoder::RemoteLogMetadata, &by_id).unwrap().1,
        Some(delete)
    );
    let typo = serde_json::json!({"type": 2, "version": 0, "data": {"brokerID": 1}});
    assert!(encode_record(Decoder::RemoteLogMetadata, &typo)
        .unwrap_err()
        .contains("unknown field \"brokerID\""));
}

/// A JSON object giving every field of `st` that exists at version `v` a value other than its
/// default (one element in each array), as the writer takes it.
fn sample(st: &schema::St, v: i16) -> serde_json::Value {
    use schema::T;
    fn of(ty: &T, v: i16) -> serde_json::Value {
        match ty {
            T::Bool => serde_json::json!(true),
            T::I8 | T::I16 | T::U16 | T::I32 | T::I64 => serde_json::json!(7),
            T::F64 => serde_json::json!(1.5),
            T::Uuid => serde_json::json!("AAAAAAAAAAAAAAAAAAAAAQ"),
            T::Str => serde_json::json!("s"),
            T::Bytes | T::ZcBytes => serde_json::json!({"hex": "0102"}),
            T::Struct(s) => sample(s, v),
            T::Arr(e) => serde_json::json!([of(e, v)]),
            T::StructArr(s) => serde_json::json!([sample(s, v)]),
        }
    }
    let v = st.versions.clamp(v);
    serde_json::Value::Object(
        st.fields
            .iter()
            .filter(|f| f.versions.contains(v))
            .map(|f| (f.name.to_string(), of(&f.ty, v)))
            .collect(),
    )
}

/// Encodes `json` as `decoder`'s record, decodes it, encodes the decoded JSON again: the
/// bytes must be the same. Returns how the record decoded.
fn round_trip(decoder: Decoder, json: serde_json::Value) -> Decoded {
    let (k, v) = encode_record(decoder, &json).unwrap_or_else(|e| panic!("{json}: {e}"));
    let d = decode_record(decoder, 0, k.as_deref(), v.as_deref());
    assert!(
        d.fatal.is_none() && d.payload_json.is_some(),
        "{json}: {d:?}"
    );
    let again = match (&d.key_json, decoder) {
        (Some(key), _) => serde_json::json!({"key": key, "value": d.payload_json}),
        (None, _) => d.payload_json.clone().unwrap(),
    };
    let back = encode_record(decoder, &again).unwrap_or_else(|e| panic!("{again}: {e}"));
    assert_eq!(back, (k, v), "{json} → {again}");
    d
}

#[test]
fn every_generated_record_type_and_version_round_trips() {
    let mut count = 0;
    for (decoder, table) in [
        (Decoder::Offsets, tables::OFFSETS_RECORDS),
        (Decoder::ShareGroupState, tables::SHARE_STATE_RECORDS),
    ] {
        for &(t, key, value) in table {
            let schema::V(lo, hi) = value.root.versions;
            for version in lo..=hi {
                round_trip(
                    decoder,
                    serde_json::json!({
                        "key": {"type": t, "data": sample(key.root, t)},
                        "value": {"version": version, "data": sample(value.root, version)},
                    }),
                );
                count += 1;
            }
        }
    }
    for &(api_key, name, msg) in tables::METADATA_RECORDS {
        let schema::V(lo, hi) = msg.root.versions;
        for version in lo..=hi {
            let d = round_trip(
                Decoder::ClusterMetadata,
                serde_json::json!({"type": api_key, "version": version, "data": sample(msg.root, version)}),
            );
            assert_eq!(d.payload_json.unwrap()["type"], name);
            count += 1;
        }
    }
    // Offsets: type 0 (the legacy commit, v0), 1 (v0–4), 2 (v0–4), 3–23 (v0); share state: 2
    // types (v0); metadata: 25 types, 34 versions. A table that lost an entry fails here.
    assert_eq!(count, 1 + 5 + 5 + 21 + 2 + 34);
}

/// A value newer than the tables (issue 38, item 2): the fields of the newest known version,
/// then the rest as unread bytes, flagged; the text stays what the pinned kafka-dump-log prints.
#[test]
fn newer_than_known_versions_read_the_newest_layout_and_keep_the_rest() {
    // OffsetCommitValue v9 (newest known: 4): v4's fields and tagged section, then two bytes
    // of a future field.
    let v9 = cat(&[
        &[0, 9],
        I64_5,
        &[0, 0, 0, 7],
        &[2, b'm'],
        I64_1000,
        &[0],
        &[0xca, 0xfe],
    ]);
    let d = offsets(COMMIT_KEY, Some(&v9));
    assert_eq!(
        payload(&d),
        r#"{"version":"9","data":{"offset":5,"leaderEpoch":7,"metadata":"m","commitTimestamp":1000}}"#
    );
    assert_eq!(
        d.unknown_version,
        Some(UnknownVersion {
            newest_known: 4,
            unread: vec![0xca, 0xfe],
        })
    );
    // A known version is not flagged, whatever follows it (the deserializer ignores it).
    let v4 = cat(&[&[0, 4], I64_5, &[0, 0, 0, 7], &[2, b'm'], I64_1000, &[0]]);
    assert_eq!(offsets(COMMIT_KEY, Some(&v4)).unknown_version, None);

    // TopicRecord v5 (newest known: 0) with a byte after v0's fields: the pinned release
    // calls it garbage; the JSON has v0's fields and the flag; no loader refuses it.
    let mut uuid1 = [0u8; 16];
    uuid1[15] = 1;
    let topic = cat(&[&[1, 2, 5, 2, b't'], &uuid1, &[0], &[0x2a]]);
    let d = decode_record(Decoder::ClusterMetadata, 7, None, Some(&topic));
    assert_eq!(
        d.payload.as_deref(),
        Some("Error at 7, skipping. Found 1 byte(s) of garbage after 2")
    );
    assert_eq!(
        d.payload_json.unwrap()["data"],
        serde_json::json!({"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"})
    );
    assert_eq!(
        d.unknown_version,
        Some(UnknownVersion {
            newest_known: 0,
            unread: vec![0x2a],
        })
    );
    assert_eq!(
        loader_verdict(Decoder::ClusterMetadata, None, Some(&topic)),
        None
    );
    // The same byte after a known version is garbage to every reader.
    let garbage = cat(&[&[1, 2, 0, 2, b't'], &uuid1, &[0], &[0x2a]]);
    assert!(matches!(
        loader_verdict(Decoder::ClusterMetadata, None, Some(&garbage)),
        Some(LoaderVerdict::Rejects(_))
    ));
    let d = decode_record(Decoder::ClusterMetadata, 7, None, Some(&garbage));
    assert_eq!((d.payload_json, d.unknown_version), (None, None));
}
