//! Records of the internal topics given in the decoders' JSON form, encoded as Kafka's
//! serializers encode them: the coordinator framing (int16 record type before the key, int16
//! version before the value), the transaction log's version-prefixed key and value, and the
//! metadata record frame (uvarint frame version 1, api key, version). The schemas are the
//! decoders' own ([`super::tables`]), looked up the same way.
//!
//! Anywhere a key, value or record is expected, `{"hex": "…"}` (or `{"base64": "…"}`) gives
//! raw bytes instead, which is how a fixture holds bytes that do not decode.

use serde_json::Value;

use super::coordinator::{self, Topic};
use super::json::{write_message, Json};
use super::metadata::{self, RecordTypes};
use super::remote;
use super::schema::Msg;
use super::tables::{
    CONSUMER_PROTOCOL_ASSIGNMENT, CONSUMER_PROTOCOL_SUBSCRIPTION, K_RAFT_VERSION_RECORD,
    LEADER_CHANGE_MESSAGE, QUORUM_STATE_DATA, SNAPSHOT_FOOTER_RECORD, SNAPSHOT_HEADER_RECORD,
    TRANSACTION_LOG_KEY, TRANSACTION_LOG_VALUE, VOTERS_RECORD,
};
use super::txn::STATES;
use super::writer::{bytes_of_json, encode_message, raw_tags_of_json, uvarint, val_from_json};
use super::Decoder;
use crate::format::control::ControlRecordType;

/// A record's key and value bytes (`None`: null).
pub type KeyValue = (Option<Vec<u8>>, Option<Vec<u8>>);

/// Encodes one record of `decoder`'s topic from its JSON form:
/// - offsets / share-state: `{"key": {"type": T, "data": {…}}, "value": null | {"version": V,
///   "data": {…}, "unknownTaggedFields": [{"tag": N, "hex": "…"}]}}` (share-state values may
///   say `"type"` for the version, as their decoder prints it). GroupMetadataValue members'
///   `subscription` / `assignment` may be `{"consumerProtocolSubscription": {"version": V, …}}`
///   / `{"consumerProtocolAssignment": {…}}`, encoded as the consumer protocol does.
/// - transaction log: `{"transactionalId": "…", "keyVersion": 0, "value": null | {"version":
///   V, "data": {…}}}`, `transactionStatus` a state name or its id.
/// - cluster metadata: `{"type": "TOPIC_RECORD" | 2, "version": V, "data": {…}}` (no key);
///   remote log metadata alike (`"REMOTE_LOG_SEGMENT_METADATA_RECORD"` …).
pub fn encode_record(decoder: Decoder, json: &Value) -> Result<KeyValue, String> {
    match decoder {
        Decoder::Offsets => coordinator_record(Topic::Offsets, json),
        Decoder::ShareGroupState => coordinator_record(Topic::ShareState, json),
        Decoder::TransactionLog => txn_record(json),
        Decoder::ClusterMetadata => Ok((None, Some(framed_record(json, metadata::record_type)?))),
        Decoder::RemoteLogMetadata => Ok((None, Some(framed_record(json, remote::record_type)?))),
    }
}

/// A number, or a string holding one (the decoders print versions as strings).
fn small_int(v: Option<&Value>, what: &str) -> Result<i16, String> {
    let n = match v {
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.parse().ok(),
        _ => None,
    };
    n.and_then(|n| i16::try_from(n).ok())
        .ok_or_else(|| format!("{what}: expected an int16, found {}", show(v)))
}

fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "nothing".to_string(), Value::to_string)
}

fn object<'v>(v: &'v Value, what: &str) -> Result<&'v serde_json::Map<String, Value>, String> {
    v.as_object()
        .ok_or_else(|| format!("{what}: expected an object, found {v}"))
}

/// Raw bytes when `v` is a hex/base64 object.
fn raw(v: &Value) -> Option<Result<Vec<u8>, String>> {
    v.is_object().then(|| bytes_of_json(v)).flatten()
}

/// `prefix` (the int16 version or record type) and the message at `version` from `{"data": …,
/// "unknownTaggedFields": …}`.
fn versioned(
    msg: &Msg,
    obj: &serde_json::Map<String, Value>,
    prefix: i16,
    version: i16,
) -> Result<Vec<u8>, String> {
    let empty = Value::Object(Default::default());
    let data = obj.get("data").unwrap_or(&empty);
    let val = val_from_json(msg, data, version)?;
    let tags = raw_tags_of_json(obj.get("unknownTaggedFields"))?;
    let mut out = prefix.to_be_bytes().to_vec();
    out.extend(encode_message(msg, &val, version, &tags));
    Ok(out)
}

fn coordinator_record(topic: Topic, json: &Value) -> Result<KeyValue, String> {
    let o = object(json, "record")?;
    let key_json = o.get("key").ok_or("record: needs a key")?;
    let (key, value_msg) = match raw(key_json) {
        Some(bytes) => (bytes?, None),
        None => {
            let k = object(key_json, "key")?;
            let record_type = small_int(k.get("type"), "key.type")?;
            let (key_msg, value_msg) = coordinator::schemas(topic, record_type)
                .ok_or_else(|| format!("key.type: unknown record type {record_type}"))?;
            let bytes =
                versioned(key_msg, k, record_type, record_type).map_err(|m| format!("key: {m}"))?;
            (bytes, Some(value_msg))
        }
    };
    let value = match o.get("value") {
        None | Some(Value::Null) => None,
        Some(v) => Some(match raw(v) {
            Some(bytes) => bytes?,
            None => {
                let msg = value_msg.ok_or("value: a raw key needs a raw value")?;
                let obj = object(v, "value")?;
                let label = if obj.contains_key("version") || topic == Topic::Offsets {
                    "version"
                } else {
                    "type"
                };
                let version = small_int(obj.get(label), "value.version")?;
                versioned(msg, obj, version, version).map_err(|m| format!("value: {m}"))?
            }
        }),
    };
    Ok((Some(key), value))
}

/// Consumer-protocol member bytes (a GroupMetadataValue member's subscription or assignment,
/// a classic protocol's metadata) given as `{"consumerProtocolSubscription": {"version": V, …}}`
/// or `{"consumerProtocolAssignment": {"version": V, …}}`: int16 version, then the message at
/// that version, as `ConsumerProtocol` serializes them. In this wrapper (the corpus' spec
/// form) `userData` is hex and the assignment's list may be called `partitions`. `None` when `v` is neither.
pub(super) fn consumer_protocol_bytes(v: &Value) -> Option<Result<Vec<u8>, String>> {
    let o = v.as_object().filter(|o| o.len() == 1)?;
    let (wrapper, inner) = o.iter().next()?;
    let msg = match wrapper.as_str() {
        "consumerProtocolSubscription" => &CONSUMER_PROTOCOL_SUBSCRIPTION,
        "consumerProtocolAssignment" => &CONSUMER_PROTOCOL_ASSIGNMENT,
        _ => return None,
    };
    Some((|| {
        let mut data = object(inner, wrapper)?.clone();
        let version = small_int(data.get("version"), wrapper)?;
        data.remove("version");
        if let Some(Value::String(hex)) = data.get("userData") {
            let hex = serde_json::json!({ "hex": hex });
            data.insert("userData".into(), hex);
        }
        if std::ptr::eq(msg, &CONSUMER_PROTOCOL_ASSIGNMENT) {
            if let Some(p) = data.remove("partitions") {
                data.entry("assignedPartitions").or_insert(p);
            }
            if let Some(list) = data.get("assignedPartitions") {
                let grouped = group_by_topic(list, false)?;
                data.insert("assignedPartitions".into(), grouped);
            }
        } else {
            if let Some(Value::Array(topics)) = data.get_mut("topics") {
                topics.sort_by(|a, b| java_order(a.as_str(), b.as_str()));
            }
            if let Some(list) = data.get("ownedPartitions") {
                let grouped = group_by_topic(list, true)?;
                data.insert("ownedPartitions".into(), grouped);
            }
        }
        let val = val_from_json(msg, &Value::Object(data), version)?;
        let mut out = version.to_be_bytes().to_vec();
        out.extend(encode_message(msg, &val, version, &[]));
        Ok(out)
    })())
}

/// Java's `String.compareTo` (UTF-16 code units); non-strings first.
fn java_order(a: Option<&str>, b: Option<&str>) -> std::cmp::Ordering {
    let units = |s: Option<&str>| s.map(|s| s.encode_utf16().collect::<Vec<u16>>());
    units(a).cmp(&units(b))
}

/// `[{"topic", "partitions"}]` as `ConsumerProtocol` builds it from its topic-partitions
/// (ConsumerProtocol.java, serializeSubscription / serializeAssignment): one entry per topic in
/// order of first appearance, or, for a subscription's owned partitions, every partition
/// sorted by topic then partition first.
fn group_by_topic(list: &Value, sorted: bool) -> Result<Value, String> {
    let Value::Array(items) = list else {
        return Ok(list.clone());
    };
    let mut pairs: Vec<(Option<String>, Value)> = Vec::new();
    for item in items {
        let topic = item
            .get("topic")
            .and_then(Value::as_str)
            .map(str::to_string);
        let parts = item
            .get("partitions")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                format!("topic partitions: expected {{\"topic\", \"partitions\"}}, found {item}")
            })?;
        pairs.extend(parts.iter().map(|p| (topic.clone(), p.clone())));
    }
    if sorted {
        pairs.sort_by(|(t1, p1), (t2, p2)| {
            java_order(t1.as_deref(), t2.as_deref()).then(p1.as_i64().cmp(&p2.as_i64()))
        });
    }
    let mut grouped: Vec<(Option<String>, Vec<Value>)> = Vec::new();
    for (topic, p) in pairs {
        // A sorted list groups consecutive runs; an assignment finds the topic anywhere.
        let at = if sorted {
            grouped
                .last()
                .filter(|(t, _)| *t == topic)
                .map(|_| grouped.len() - 1)
        } else {
            grouped.iter().position(|(t, _)| *t == topic)
        };
        match at {
            Some(i) => grouped[i].1.push(p),
            None => grouped.push((topic, vec![p])),
        }
    }
    Ok(Value::Array(
        grouped
            .into_iter()
            .map(|(t, ps)| serde_json::json!({ "topic": t, "partitions": ps }))
            .collect(),
    ))
}

fn txn_record(json: &Value) -> Result<KeyValue, String> {
    let o = object(json, "txn")?;
    let key_version = match o.get("keyVersion") {
        None => 0,
        v => small_int(v, "keyVersion")?,
    };
    let id = o
        .get("transactionalId")
        .and_then(Value::as_str)
        .ok_or("txn: needs a transactionalId")?;
    let key_data = serde_json::json!({ "data": { "transactionalId": id } });
    let key = versioned(
        &TRANSACTION_LOG_KEY,
        object(&key_data, "key")?,
        key_version,
        0,
    )?;
    let value = match o.get("value") {
        None | Some(Value::Null) => None,
        Some(v) => Some(match raw(v) {
            Some(bytes) => bytes?,
            None => {
                let mut obj = object(v, "value")?.clone();
                let version = small_int(obj.get("version"), "value.version")?;
                if let Some(Value::Object(data)) = obj.get_mut("data") {
                    if let Some(Value::String(name)) = data.get("transactionStatus") {
                        let id = STATES
                            .iter()
                            .position(|s| s == name)
                            .ok_or_else(|| format!("value: unknown transactionStatus {name:?}"))?;
                        data.insert("transactionStatus".into(), Value::from(id));
                    }
                }
                versioned(&TRANSACTION_LOG_VALUE, &obj, version, version)
                    .map_err(|m| format!("value: {m}"))?
            }
        }),
    };
    Ok((Some(key), value))
}

/// A metadata or remote-log-metadata record's frame: uvarint frame version 1, api key and
/// version, then the message.
fn framed_record(json: &Value, types: RecordTypes) -> Result<Vec<u8>, String> {
    if let Some(bytes) = raw(json) {
        return bytes;
    }
    let o = object(json, "metadata record")?;
    let api_key = match o.get("type") {
        Some(Value::String(name)) => metadata::api_key_of(types, name)
            .ok_or_else(|| format!("type: unknown metadata record type {name:?}"))?,
        v => small_int(v, "type")?,
    };
    let (_, msg) =
        types(api_key).ok_or_else(|| format!("type: unknown metadata record type {api_key}"))?;
    let version = small_int(o.get("version"), "version")?;
    let empty = Value::Object(Default::default());
    let val = val_from_json(msg, o.get("data").unwrap_or(&empty), version)?;
    let tags = raw_tags_of_json(o.get("unknownTaggedFields"))?;
    let mut out = Vec::new();
    uvarint(1, &mut out);
    uvarint(api_key as u16 as u32, &mut out);
    uvarint(version as u16 as u32, &mut out);
    out.extend(encode_message(msg, &val, version, &tags));
    Ok(out)
}

/// A KRaft control record's value (SnapshotHeader, SnapshotFooter, KRaftVersion, Voters,
/// LeaderChange) from its JSON form, e.g. `{"version": 0, "kRaftVersion": 1}`. Encoded at
/// version 0, the version the decoders (and Kafka's `ControlRecordUtils`) read them at.
pub fn encode_kraft_control(kind: ControlRecordType, json: &Value) -> Result<Vec<u8>, String> {
    let msg = match kind {
        ControlRecordType::LeaderChange => &LEADER_CHANGE_MESSAGE,
        ControlRecordType::SnapshotHeader => &SNAPSHOT_HEADER_RECORD,
        ControlRecordType::SnapshotFooter => &SNAPSHOT_FOOTER_RECORD,
        ControlRecordType::KraftVersion => &K_RAFT_VERSION_RECORD,
        ControlRecordType::KraftVoters => &VOTERS_RECORD,
        other => return Err(format!("{} is not a KRaft control record", other.name())),
    };
    let val = val_from_json(msg, json, 0)?;
    Ok(encode_message(msg, &val, 0, &[]))
}

/// The text of the raft layer's `quorum-state` file (FileQuorumStateStore.java): the
/// QuorumStateData JSON converter's output at `version` (0 or 1) with `data_version` appended.
pub fn quorum_state_text(json: &Value, version: i16) -> Result<String, String> {
    let val = val_from_json(&QUORUM_STATE_DATA, json, version)?;
    let mut doc = write_message(&QUORUM_STATE_DATA, &val, version).map_err(|e| e.message())?;
    if let Json::Obj(members) = &mut doc {
        members.push(("data_version".into(), Json::Int(version.into())));
    }
    Ok(doc.to_text())
}
