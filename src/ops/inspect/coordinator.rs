//! `coordinator`: which `__consumer_offsets` or `__transaction_state` partition holds a group
//! or a transactional id, so the operator knows which directory to read. The arithmetic is
//! [`crate::format::partition_for`]'s; this names the topic and the directory.

use serde::Serialize;

use crate::format::names::partition_dir_name;
use crate::format::partition_for::{java_string_hash, partition_for};

/// `Topic.GROUP_METADATA_TOPIC_NAME`.
pub const GROUP_METADATA_TOPIC_NAME: &str = "__consumer_offsets";
/// `Topic.TRANSACTION_STATE_TOPIC_NAME`.
pub const TRANSACTION_STATE_TOPIC_NAME: &str = "__transaction_state";

/// What is looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoordinatorKey {
    Group(String),
    TransactionalId(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CoordinatorAnswer {
    /// `"group"` or `"transactionalId"`.
    pub key_type: &'static str,
    #[serde(rename = "coordinatorKey")]
    pub key: String,
    /// Java's `String.hashCode` of the key.
    pub hash_code: i32,
    /// The partition count the answer assumes.
    #[serde(rename = "partitionCount")]
    pub partitions: i32,
    pub topic: &'static str,
    pub partition: i32,
    /// The partition directory's name in a log dir.
    pub dir: String,
}

/// The partition of the coordinator topic (of `partitions` partitions, at least 1) holding `key`.
pub fn lookup(key: &CoordinatorKey, partitions: i32) -> CoordinatorAnswer {
    let (key_type, key, topic) = match key {
        CoordinatorKey::Group(g) => ("group", g, GROUP_METADATA_TOPIC_NAME),
        CoordinatorKey::TransactionalId(t) => ("transactionalId", t, TRANSACTION_STATE_TOPIC_NAME),
    };
    let partition = partition_for(key, partitions);
    CoordinatorAnswer {
        key_type,
        key: key.clone(),
        hash_code: java_string_hash(key),
        partitions,
        topic,
        partition,
        dir: partition_dir_name(topic, partition),
    }
}
