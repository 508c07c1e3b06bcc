//! Decoders of Kafka's internal topics and KRaft control records, printing exactly what
//! kafka-dump-log prints with `--offsets-decoder`, `--transaction-log-decoder`,
//! `--cluster-metadata-decoder`, `--remote-log-metadata-decoder` and `--share-group-state-decoder` (dump-log.md §3.6, §7;
//! formats.md §0.2, §6, §12), plus a structured JSON form of the same data.
//!
//! One generic reader ([`reader`]) and JSON writer ([`json`]) of Kafka's message encoding are
//! driven by our schema tables ([`tables`]). Nothing here panics on any input: a record that
//! does not decode gives Kafka's own `Error at …` text, or, where kafka-dump-log itself dies,
//! [`Decoded::fatal`].

mod coordinator;
mod encode;
mod json;
mod kraft;
mod metadata;
mod reader;
mod remote;
mod schema;
#[rustfmt::skip]
mod tables;
mod txn;
mod writer;

#[cfg(test)]
mod tests;

pub use encode::{encode_kraft_control, encode_record, quorum_state_text, KeyValue};
use json::Json;
pub use kraft::snapshot_last_contained_timestamp;
use reader::JavaError;

/// Which of kafka-dump-log's record decoders to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decoder {
    /// `--offsets-decoder` (`__consumer_offsets`).
    Offsets,
    /// `--transaction-log-decoder` (`__transaction_state`).
    TransactionLog,
    /// `--cluster-metadata-decoder` (`__cluster_metadata`, KRaft snapshots).
    ClusterMetadata,
    /// `--remote-log-metadata-decoder` (`__remote_log_metadata`, tiered storage).
    RemoteLogMetadata,
    /// `--share-group-state-decoder` (`__share_group_state`).
    ShareGroupState,
}

impl Decoder {
    /// The decoder of an internal topic's records, by topic name.
    pub fn for_topic(topic: &str) -> Option<Decoder> {
        Some(match topic {
            "__consumer_offsets" => Decoder::Offsets,
            "__transaction_state" => Decoder::TransactionLog,
            "__cluster_metadata" => Decoder::ClusterMetadata,
            "__share_group_state" => Decoder::ShareGroupState,
            "__remote_log_metadata" => Decoder::RemoteLogMetadata,
            _ => return None,
        })
    }
}

/// What kafka-dump-log prints for one data record (non-control batch) with a decoder.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decoded {
    /// The text after `key: ` (`None`: no key part printed).
    pub key: Option<String>,
    /// The text after ` payload: ` (`None`: no payload part).
    pub payload: Option<String>,
    /// The key as a JSON object, when it decoded to one.
    pub key_json: Option<serde_json::Value>,
    /// The payload as a JSON object, when it decoded to one.
    pub payload_json: Option<serde_json::Value>,
    /// Where kafka-dump-log itself dies on this record: the exception it dies with
    /// (`class: message`). Key and payload are then `None`.
    pub fatal: Option<String>,
    /// A value at a version newer than the tables: read with the newest known layout (in
    /// `payload_json`, even where the pinned kafka-dump-log's text is an error).
    pub unknown_version: Option<UnknownVersion>,
}

/// What a record newer than the tables leaves unread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVersion {
    /// The newest version of the record's schema in the tables.
    pub newest_known: i16,
    /// The bytes after the fields of that version.
    pub unread: Vec<u8>,
}

impl Decoded {
    fn text(key: Option<String>, payload: Option<String>) -> Self {
        Decoded {
            key,
            payload,
            ..Default::default()
        }
    }

    /// Key and payload given as JSON trees (a string tree, like `<DELETE>`, is plain text).
    fn json(key: Option<Json>, payload: Option<Json>) -> Self {
        let text = |j: &Json| match j {
            Json::Str(s) => s.clone(),
            j => j.to_text(),
        };
        let structured = |j: &Json| match j {
            Json::Obj(_) => Some(j.to_value()),
            _ => None,
        };
        Decoded {
            key: key.as_ref().map(text),
            payload: payload.as_ref().map(text),
            key_json: key.as_ref().and_then(structured),
            payload_json: payload.as_ref().and_then(structured),
            ..Default::default()
        }
    }

    fn fatal(e: JavaError) -> Self {
        Decoded {
            fatal: Some(e.to_java_string()),
            ..Default::default()
        }
    }
}

/// Decodes one data record (of a non-control batch) as kafka-dump-log's `decoder` does.
pub fn decode_record(
    decoder: Decoder,
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Decoded {
    match decoder {
        Decoder::Offsets => coordinator::decode(coordinator::Topic::Offsets, offset, key, value),
        Decoder::ShareGroupState => {
            coordinator::decode(coordinator::Topic::ShareState, offset, key, value)
        }
        Decoder::TransactionLog => txn::decode(key, value),
        Decoder::ClusterMetadata => metadata::decode(offset, value),
        Decoder::RemoteLogMetadata => remote::decode(offset, value),
    }
}

/// How the broker's loader of an internal topic takes one data record (`verify --deep`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoaderVerdict {
    /// The loader throws on it: what the broker then does.
    Rejects(String),
    /// The loader ignores it (a warning in its log): why.
    Skips(String),
}

/// What the loader of `decoder`'s topic does with a data record, when it does not simply
/// load it: the group and share coordinators' `CoordinatorLoaderImpl` (a missing key or a key
/// or value that does not deserialize fails the load; an unknown record type is skipped),
/// `TransactionStateManager.loadTransactionsMetadata` (a missing key, or a key or value that
/// does not read, ends the load there; an unknown key version is skipped), and the metadata
/// loader (a record that does not deserialize stops the controller). `__remote_log_metadata`
/// is not judged.
pub fn loader_verdict(
    decoder: Decoder,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Option<LoaderVerdict> {
    match decoder {
        Decoder::Offsets => coordinator::loader_verdict(coordinator::Topic::Offsets, key, value),
        Decoder::ShareGroupState => {
            coordinator::loader_verdict(coordinator::Topic::ShareState, key, value)
        }
        Decoder::TransactionLog => txn::loader_verdict(key, value),
        Decoder::ClusterMetadata => metadata::loader_verdict(value),
        Decoder::RemoteLogMetadata => None,
    }
}

/// The text kafka-dump-log appends to a control record's line, with its leading space
/// (` SnapshotHeader {"version":0,…}`, ` controlType: LEADER_CHANGE(2)`,
/// ` endTxnMarker: COMMIT coordinatorEpoch: 5`, ` controlType: UNKNOWN(9)`), and a JSON form:
/// the decoded KRaft value (LeaderChange included, which the text leaves out), or
/// `{"endTxnMarker":"COMMIT","coordinatorEpoch":5}` for markers; none for unknown types.
/// `Err` holds the exception kafka-dump-log would die with (`class: message`).
pub fn control_record_text(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<(String, Option<serde_json::Value>), String> {
    kraft::control_text(key, value).map_err(|e| e.to_java_string())
}
