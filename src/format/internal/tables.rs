//! Our schema tables for every message kafka-dump-log's decoders read: field names (as the JSON
//! converters spell them), types, the versions each field exists in, nullable and tagged
//! versions, and explicit defaults. Written from the facts of Kafka's message definitions at the
//! corpus' source snapshot; `schema.rs` explains each part. One field per line (not rustfmt'd).

use super::schema::T::*;
use super::schema::*;

// ---- __consumer_offsets: keys (read at version = record type) and values ----
pub(super) static OFFSET_COMMIT_KEY: Msg = Msg { flex: NONE, root: &OFFSET_COMMIT_KEY_ROOT };
static OFFSET_COMMIT_KEY_ROOT: St = st("OffsetCommitKey", span(0, 1), SHARED, &[
    f("group", Str, span(0, 1)),
    f("topic", Str, span(0, 1)),
    f("partition", I32, span(0, 1)),
]);
pub(super) static OFFSET_COMMIT_VALUE: Msg = Msg { flex: from(4), root: &OFFSET_COMMIT_VALUE_ROOT };
static OFFSET_COMMIT_VALUE_ROOT: St = st("OffsetCommitValue", span(0, 4), SHARED, &[
    f("offset", I64, from(0)),
    f("leaderEpoch", I32, from(3)).def(D::Int(-1)),
    f("metadata", Str, from(0)),
    f("commitTimestamp", I64, from(0)),
    f("expireTimestamp", I64, only(1)).def(D::Int(-1)),
]);
pub(super) static GROUP_METADATA_KEY: Msg = Msg { flex: NONE, root: &GROUP_METADATA_KEY_ROOT };
static GROUP_METADATA_KEY_ROOT: St = st("GroupMetadataKey", only(2), SHARED, &[
    f("group", Str, only(2)),
]);
pub(super) static GROUP_METADATA_VALUE: Msg = Msg { flex: from(4), root: &GROUP_METADATA_VALUE_ROOT };
static GROUP_METADATA_VALUE_ROOT: St = st("GroupMetadataValue", span(0, 4), SHARED, &[
    f("protocolType", Str, from(0)),
    f("generation", I32, from(0)),
    f("protocol", Str, from(0)).null(from(0)),
    f("leader", Str, from(0)).null(from(0)),
    f("currentStateTimestamp", I64, from(2)).def(D::Int(-1)),
    f("members", StructArr(&GROUP_METADATA_VALUE_MEMBER_METADATA), from(0)),
]);
static GROUP_METADATA_VALUE_MEMBER_METADATA: St = st("MemberMetadata", from(0), SHARED, &[
    f("memberId", Str, from(0)),
    f("groupInstanceId", Str, from(3)).null(from(3)).def(D::Null),
    f("clientId", Str, from(0)),
    f("clientHost", Str, from(0)),
    f("rebalanceTimeout", I32, from(1)).def(D::Int(-1)),
    f("sessionTimeout", I32, from(0)),
    f("subscription", Bytes, from(0)),
    f("assignment", Bytes, from(0)),
]);
pub(super) static CONSUMER_GROUP_METADATA_KEY: Msg = Msg { flex: NONE, root: &CONSUMER_GROUP_METADATA_KEY_ROOT };
static CONSUMER_GROUP_METADATA_KEY_ROOT: St = st("ConsumerGroupMetadataKey", only(3), SHARED, &[
    f("groupId", Str, only(3)),
]);
pub(super) static CONSUMER_GROUP_METADATA_VALUE: Msg = Msg { flex: from(0), root: &CONSUMER_GROUP_METADATA_VALUE_ROOT };
static CONSUMER_GROUP_METADATA_VALUE_ROOT: St = st("ConsumerGroupMetadataValue", only(0), SHARED, &[
    f("epoch", I32, from(0)),
]);
pub(super) static CONSUMER_GROUP_PARTITION_METADATA_KEY: Msg = Msg { flex: NONE, root: &CONSUMER_GROUP_PARTITION_METADATA_KEY_ROOT };
static CONSUMER_GROUP_PARTITION_METADATA_KEY_ROOT: St = st("ConsumerGroupPartitionMetadataKey", only(4), SHARED, &[
    f("groupId", Str, only(4)),
]);
pub(super) static CONSUMER_GROUP_PARTITION_METADATA_VALUE: Msg = Msg { flex: from(0), root: &CONSUMER_GROUP_PARTITION_METADATA_VALUE_ROOT };
static CONSUMER_GROUP_PARTITION_METADATA_VALUE_ROOT: St = st("ConsumerGroupPartitionMetadataValue", only(0), SHARED, &[
    f("topics", StructArr(&CONSUMER_GROUP_PARTITION_METADATA_VALUE_TOPIC_METADATA), from(0)),
]);
static CONSUMER_GROUP_PARTITION_METADATA_VALUE_TOPIC_METADATA: St = st("TopicMetadata", from(0), INLINE, &[
    f("topicId", Uuid, from(0)),
    f("topicName", Str, from(0)),
    f("numPartitions", I32, from(0)),
    f("partitionMetadata", StructArr(&CONSUMER_GROUP_PARTITION_METADATA_VALUE_PARTITION_METADATA), from(0)),
]);
static CONSUMER_GROUP_PARTITION_METADATA_VALUE_PARTITION_METADATA: St = st("PartitionMetadata", from(0), INLINE, &[
    f("partition", I32, from(0)),
    f("racks", Arr(&Str), from(0)),
]);
pub(super) static CONSUMER_GROUP_MEMBER_METADATA_KEY: Msg = Msg { flex: NONE, root: &CONSUMER_GROUP_MEMBER_METADATA_KEY_ROOT };
static CONSUMER_GROUP_MEMBER_METADATA_KEY_ROOT: St = st("ConsumerGroupMemberMetadataKey", only(5), SHARED, &[
    f("groupId", Str, only(5)),
    f("memberId", Str, only(5)),
]);
pub(super) static CONSUMER_GROUP_MEMBER_METADATA_VALUE: Msg = Msg { flex: from(0), root: &CONSUMER_GROUP_MEMBER_METADATA_VALUE_ROOT };
static CONSUMER_GROUP_MEMBER_METADATA_VALUE_ROOT: St = st("ConsumerGroupMemberMetadataValue", only(0), SHARED, &[
    f("instanceId", Str, from(0)).null(from(0)),
    f("rackId", Str, from(0)).null(from(0)),
    f("clientId", Str, from(0)),
    f("clientHost", Str, from(0)),
    f("subscribedTopicNames", Arr(&Str), from(0)),
    f("subscribedTopicRegex", Str, from(0)).null(from(0)),
    f("rebalanceTimeoutMs", I32, from(0)).def(D::Int(-1)),
    f("serverAssignor", Str, from(0)).null(from(0)),
    f("classicMemberMetadata", Struct(&CONSUMER_GROUP_MEMBER_METADATA_VALUE_CLASSIC_MEMBER_METADATA), from(0)).null(from(0)).tag(0, from(0)),
]);
static CONSUMER_GROUP_MEMBER_METADATA_VALUE_CLASSIC_MEMBER_METADATA: St = st("ClassicMemberMetadata", from(0), INLINE, &[
    f("sessionTimeoutMs", I32, from(0)),
    f("supportedProtocols", StructArr(&CONSUMER_GROUP_MEMBER_METADATA_VALUE_CLASSIC_PROTOCOL), from(0)),
]);
static CONSUMER_GROUP_MEMBER_METADATA_VALUE_CLASSIC_PROTOCOL: St = st("ClassicProtocol", from(0), INLINE, &[
    f("name", Str, from(0)),
    f("metadata", Bytes, from(0)),
]);
pub(super) static CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY: Msg = Msg { flex: NONE, root: &CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY_ROOT };
static CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY_ROOT: St = st("ConsumerGroupTargetAssignmentMetadataKey", only(6), SHARED, &[
    f("groupId", Str, only(6)),
]);
pub(super) static CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE: Msg = Msg { flex: from(0), root: &CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE_ROOT };
static CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE_ROOT: St = st("ConsumerGroupTargetAssignmentMetadataValue", only(0), SHARED, &[
    f("assignmentEpoch", I32, from(0)),
]);
pub(super) static CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY: Msg = Msg { flex: NONE, root: &CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY_ROOT };
static CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY_ROOT: St = st("ConsumerGroupTargetAssignmentMemberKey", only(7), SHARED, &[
    f("groupId", Str, only(7)),
    f("memberId", Str, only(7)),
]);
pub(super) static CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE: Msg = Msg { flex: from(0), root: &CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE_ROOT };
static CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE_ROOT: St = st("ConsumerGroupTargetAssignmentMemberValue", only(0), SHARED, &[
    f("topicPartitions", StructArr(&CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE_TOPIC_PARTITION), from(0)),
]);
static CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE_TOPIC_PARTITION: St = st("TopicPartition", from(0), INLINE, &[
    f("topicId", Uuid, from(0)),
    f("partitions", Arr(&I32), from(0)),
]);
pub(super) static CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY: Msg = Msg { flex: NONE, root: &CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY_ROOT };
static CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY_ROOT: St = st("ConsumerGroupCurrentMemberAssignmentKey", only(8), SHARED, &[
    f("groupId", Str, only(8)),
    f("memberId", Str, only(8)),
]);
pub(super) static CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE: Msg = Msg { flex: from(0), root: &CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_ROOT };
static CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_ROOT: St = st("ConsumerGroupCurrentMemberAssignmentValue", only(0), SHARED, &[
    f("memberEpoch", I32, from(0)),
    f("previousMemberEpoch", I32, from(0)),
    f("state", I8, from(0)),
    f("assignedPartitions", StructArr(&CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TOPIC_PARTITIONS), from(0)),
    f("partitionsPendingRevocation", StructArr(&CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TOPIC_PARTITIONS), from(0)),
]);
static CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TOPIC_PARTITIONS: St = st("TopicPartitions", from(0), SHARED, &[
    f("topicId", Uuid, from(0)),
    f("partitions", Arr(&I32), from(0)),
]);
pub(super) static SHARE_GROUP_PARTITION_METADATA_KEY: Msg = Msg { flex: NONE, root: &SHARE_GROUP_PARTITION_METADATA_KEY_ROOT };
static SHARE_GROUP_PARTITION_METADATA_KEY_ROOT: St = st("ShareGroupPartitionMetadataKey", only(9), SHARED, &[
    f("groupId", Str, only(9)),
]);
pub(super) static SHARE_GROUP_PARTITION_METADATA_VALUE: Msg = Msg { flex: from(0), root: &SHARE_GROUP_PARTITION_METADATA_VALUE_ROOT };
static SHARE_GROUP_PARTITION_METADATA_VALUE_ROOT: St = st("ShareGroupPartitionMetadataValue", only(0), SHARED, &[
    f("topics", StructArr(&SHARE_GROUP_PARTITION_METADATA_VALUE_TOPIC_METADATA), from(0)),
]);
static SHARE_GROUP_PARTITION_METADATA_VALUE_TOPIC_METADATA: St = st("TopicMetadata", from(0), INLINE, &[
    f("topicId", Uuid, from(0)),
    f("topicName", Str, from(0)),
    f("numPartitions", I32, from(0)),
    f("partitionMetadata", StructArr(&SHARE_GROUP_PARTITION_METADATA_VALUE_PARTITION_METADATA), from(0)),
]);
static SHARE_GROUP_PARTITION_METADATA_VALUE_PARTITION_METADATA: St = st("PartitionMetadata", from(0), INLINE, &[
    f("partition", I32, from(0)),
    f("racks", Arr(&Str), from(0)),
]);
pub(super) static SHARE_GROUP_MEMBER_METADATA_KEY: Msg = Msg { flex: NONE, root: &SHARE_GROUP_MEMBER_METADATA_KEY_ROOT };
static SHARE_GROUP_MEMBER_METADATA_KEY_ROOT: St = st("ShareGroupMemberMetadataKey", only(10), SHARED, &[
    f("groupId", Str, only(10)),
    f("memberId", Str, only(10)),
]);
pub(super) static SHARE_GROUP_MEMBER_METADATA_VALUE: Msg = Msg { flex: from(0), root: &SHARE_GROUP_MEMBER_METADATA_VALUE_ROOT };
static SHARE_GROUP_MEMBER_METADATA_VALUE_ROOT: St = st("ShareGroupMemberMetadataValue", only(0), SHARED, &[
    f("rackId", Str, from(0)).null(from(0)),
    f("clientId", Str, from(0)),
    f("clientHost", Str, from(0)),
    f("subscribedTopicNames", Arr(&Str), from(0)),
]);
pub(super) static SHARE_GROUP_METADATA_KEY: Msg = Msg { flex: NONE, root: &SHARE_GROUP_METADATA_KEY_ROOT };
static SHARE_GROUP_METADATA_KEY_ROOT: St = st("ShareGroupMetadataKey", only(11), SHARED, &[
    f("groupId", Str, only(11)),
]);
pub(super) static SHARE_GROUP_METADATA_VALUE: Msg = Msg { flex: from(0), root: &SHARE_GROUP_METADATA_VALUE_ROOT };
static SHARE_GROUP_METADATA_VALUE_ROOT: St = st("ShareGroupMetadataValue", only(0), SHARED, &[
    f("epoch", I32, from(0)),
]);
pub(super) static SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY: Msg = Msg { flex: NONE, root: &SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY_ROOT };
static SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY_ROOT: St = st("ShareGroupTargetAssignmentMetadataKey", only(12), SHARED, &[
    f("groupId", Str, only(12)),
]);
pub(super) static SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE: Msg = Msg { flex: from(0), root: &SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE_ROOT };
static SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE_ROOT: St = st("ShareGroupTargetAssignmentMetadataValue", only(0), SHARED, &[
    f("assignmentEpoch", I32, from(0)),
]);
pub(super) static SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY: Msg = Msg { flex: NONE, root: &SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY_ROOT };
static SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY_ROOT: St = st("ShareGroupTargetAssignmentMemberKey", only(13), SHARED, &[
    f("groupId", Str, only(13)),
    f("memberId", Str, only(13)),
]);
pub(super) static SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE: Msg = Msg { flex: from(0), root: &SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE_ROOT };
static SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE_ROOT: St = st("ShareGroupTargetAssignmentMemberValue", only(0), SHARED, &[
    f("topicPartitions", StructArr(&SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE_TOPIC_PARTITION), from(0)),
]);
static SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE_TOPIC_PARTITION: St = st("TopicPartition", from(0), INLINE, &[
    f("topicId", Uuid, from(0)),
    f("partitions", Arr(&I32), from(0)),
]);
pub(super) static SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY: Msg = Msg { flex: NONE, root: &SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY_ROOT };
static SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY_ROOT: St = st("ShareGroupCurrentMemberAssignmentKey", only(14), SHARED, &[
    f("groupId", Str, only(14)),
    f("memberId", Str, only(14)),
]);
pub(super) static SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE: Msg = Msg { flex: from(0), root: &SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_ROOT };
static SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_ROOT: St = st("ShareGroupCurrentMemberAssignmentValue", only(0), SHARED, &[
    f("memberEpoch", I32, from(0)),
    f("previousMemberEpoch", I32, from(0)),
    f("state", I8, from(0)),
    f("assignedPartitions", StructArr(&SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TOPIC_PARTITIONS), from(0)),
]);
static SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TOPIC_PARTITIONS: St = st("TopicPartitions", from(0), SHARED, &[
    f("topicId", Uuid, from(0)),
    f("partitions", Arr(&I32), from(0)),
]);
pub(super) static SHARE_GROUP_STATE_PARTITION_METADATA_KEY: Msg = Msg { flex: NONE, root: &SHARE_GROUP_STATE_PARTITION_METADATA_KEY_ROOT };
static SHARE_GROUP_STATE_PARTITION_METADATA_KEY_ROOT: St = st("ShareGroupStatePartitionMetadataKey", only(15), SHARED, &[
    f("groupId", Str, only(15)),
]);
pub(super) static SHARE_GROUP_STATE_PARTITION_METADATA_VALUE: Msg = Msg { flex: from(0), root: &SHARE_GROUP_STATE_PARTITION_METADATA_VALUE_ROOT };
static SHARE_GROUP_STATE_PARTITION_METADATA_VALUE_ROOT: St = st("ShareGroupStatePartitionMetadataValue", only(0), SHARED, &[
    f("initializedTopics", StructArr(&SHARE_GROUP_STATE_PARTITION_METADATA_VALUE_TOPIC_PARTITIONS_INFO), from(0)),
    f("deletingTopics", StructArr(&SHARE_GROUP_STATE_PARTITION_METADATA_VALUE_TOPIC_INFO), from(0)),
]);
static SHARE_GROUP_STATE_PARTITION_METADATA_VALUE_TOPIC_PARTITIONS_INFO: St = st("TopicPartitionsInfo", from(0), SHARED, &[
    f("topicId", Uuid, from(0)),
    f("topicName", Str, from(0)),
    f("partitions", Arr(&I32), from(0)),
]);
static SHARE_GROUP_STATE_PARTITION_METADATA_VALUE_TOPIC_INFO: St = st("TopicInfo", from(0), SHARED, &[
    f("topicId", Uuid, from(0)),
    f("topicName", Str, from(0)),
]);

// ---- consumer-protocol member bytes (inside GroupMetadataValue of "consumer" groups) ----
pub(super) static CONSUMER_PROTOCOL_SUBSCRIPTION: Msg = Msg { flex: NONE, root: &CONSUMER_PROTOCOL_SUBSCRIPTION_ROOT };
static CONSUMER_PROTOCOL_SUBSCRIPTION_ROOT: St = st("ConsumerProtocolSubscription", span(0, 3), SHARED, &[
    f("topics", Arr(&Str), from(0)),
    f("userData", ZcBytes, from(0)).null(from(0)).def(D::Null),
    f("ownedPartitions", StructArr(&CONSUMER_PROTOCOL_SUBSCRIPTION_TOPIC_PARTITION), from(1)),
    f("generationId", I32, from(2)).def(D::Int(-1)),
    f("rackId", Str, from(3)).null(from(3)).def(D::Null),
]);
static CONSUMER_PROTOCOL_SUBSCRIPTION_TOPIC_PARTITION: St = st("TopicPartition", from(1), INLINE, &[
    f("topic", Str, from(1)),
    f("partitions", Arr(&I32), from(1)),
]);
pub(super) static CONSUMER_PROTOCOL_ASSIGNMENT: Msg = Msg { flex: NONE, root: &CONSUMER_PROTOCOL_ASSIGNMENT_ROOT };
static CONSUMER_PROTOCOL_ASSIGNMENT_ROOT: St = st("ConsumerProtocolAssignment", span(0, 3), SHARED, &[
    f("assignedPartitions", StructArr(&CONSUMER_PROTOCOL_ASSIGNMENT_TOPIC_PARTITION), from(0)),
    f("userData", ZcBytes, from(0)).null(from(0)).def(D::Null),
]);
static CONSUMER_PROTOCOL_ASSIGNMENT_TOPIC_PARTITION: St = st("TopicPartition", from(0), INLINE, &[
    f("topic", Str, from(0)),
    f("partitions", Arr(&I32), from(0)),
]);

// ---- __share_group_state ----
pub(super) static SHARE_SNAPSHOT_KEY: Msg = Msg { flex: NONE, root: &SHARE_SNAPSHOT_KEY_ROOT };
static SHARE_SNAPSHOT_KEY_ROOT: St = st("ShareSnapshotKey", only(0), SHARED, &[
    f("groupId", Str, only(0)),
    f("topicId", Uuid, only(0)),
    f("partition", I32, only(0)),
]);
pub(super) static SHARE_SNAPSHOT_VALUE: Msg = Msg { flex: from(0), root: &SHARE_SNAPSHOT_VALUE_ROOT };
static SHARE_SNAPSHOT_VALUE_ROOT: St = st("ShareSnapshotValue", only(0), SHARED, &[
    f("snapshotEpoch", U16, only(0)),
    f("stateEpoch", I32, from(0)),
    f("leaderEpoch", I32, from(0)),
    f("startOffset", I64, only(0)),
    f("stateBatches", StructArr(&SHARE_SNAPSHOT_VALUE_STATE_BATCH), only(0)),
]);
static SHARE_SNAPSHOT_VALUE_STATE_BATCH: St = st("StateBatch", only(0), INLINE, &[
    f("firstOffset", I64, only(0)),
    f("lastOffset", I64, only(0)),
    f("deliveryState", I8, only(0)),
    f("deliveryCount", I16, only(0)),
]);
pub(super) static SHARE_UPDATE_KEY: Msg = Msg { flex: NONE, root: &SHARE_UPDATE_KEY_ROOT };
static SHARE_UPDATE_KEY_ROOT: St = st("ShareUpdateKey", only(1), SHARED, &[
    f("groupId", Str, only(1)),
    f("topicId", Uuid, only(1)),
    f("partition", I32, only(1)),
]);
pub(super) static SHARE_UPDATE_VALUE: Msg = Msg { flex: from(0), root: &SHARE_UPDATE_VALUE_ROOT };
static SHARE_UPDATE_VALUE_ROOT: St = st("ShareUpdateValue", only(0), SHARED, &[
    f("snapshotEpoch", U16, only(0)),
    f("leaderEpoch", I32, from(0)),
    f("startOffset", I64, only(0)),
    f("stateBatches", StructArr(&SHARE_UPDATE_VALUE_STATE_BATCH), only(0)),
]);
static SHARE_UPDATE_VALUE_STATE_BATCH: St = st("StateBatch", only(0), INLINE, &[
    f("firstOffset", I64, only(0)),
    f("lastOffset", I64, only(0)),
    f("deliveryState", I8, only(0)),
    f("deliveryCount", I16, only(0)),
]);

// ---- __transaction_state ----
pub(super) static TRANSACTION_LOG_KEY: Msg = Msg { flex: NONE, root: &TRANSACTION_LOG_KEY_ROOT };
static TRANSACTION_LOG_KEY_ROOT: St = st("TransactionLogKey", only(0), SHARED, &[
    f("transactionalId", Str, only(0)),
]);
pub(super) static TRANSACTION_LOG_VALUE: Msg = Msg { flex: from(1), root: &TRANSACTION_LOG_VALUE_ROOT };
static TRANSACTION_LOG_VALUE_ROOT: St = st("TransactionLogValue", span(0, 1), SHARED, &[
    f("producerId", I64, from(0)),
    f("previousProducerId", I64, from(1)).tag(0, from(1)).def(D::Int(-1)),
    f("nextProducerId", I64, from(1)).tag(1, from(1)).def(D::Int(-1)),
    f("producerEpoch", I16, from(0)),
    f("transactionTimeoutMs", I32, from(0)),
    f("transactionStatus", I8, from(0)),
    f("transactionPartitions", StructArr(&TRANSACTION_LOG_VALUE_PARTITIONS_SCHEMA), from(0)).null(from(0)),
    f("transactionLastUpdateTimestampMs", I64, from(0)),
    f("transactionStartTimestampMs", I64, from(0)),
    f("clientTransactionVersion", I16, from(1)).tag(2, from(1)).def(D::Int(0)),
]);
static TRANSACTION_LOG_VALUE_PARTITIONS_SCHEMA: St = st("PartitionsSchema", from(0), INLINE, &[
    f("topic", Str, from(0)),
    f("partitionIds", Arr(&I32), from(0)),
]);

// ---- __cluster_metadata records ----
pub(super) static ABORT_TRANSACTION_RECORD: Msg = Msg { flex: from(0), root: &ABORT_TRANSACTION_RECORD_ROOT };
static ABORT_TRANSACTION_RECORD_ROOT: St = st("AbortTransactionRecord", only(0), SHARED, &[
    f("reason", Str, from(0)).null(from(0)).tag(0, from(0)).def(D::Null),
]);
pub(super) static ACCESS_CONTROL_ENTRY_RECORD: Msg = Msg { flex: from(0), root: &ACCESS_CONTROL_ENTRY_RECORD_ROOT };
static ACCESS_CONTROL_ENTRY_RECORD_ROOT: St = st("AccessControlEntryRecord", only(0), SHARED, &[
    f("id", Uuid, from(0)),
    f("resourceType", I8, from(0)),
    f("resourceName", Str, from(0)),
    f("patternType", I8, from(0)),
    f("principal", Str, from(0)),
    f("host", Str, from(0)),
    f("operation", I8, from(0)),
    f("permissionType", I8, from(0)),
]);
pub(super) static BEGIN_TRANSACTION_RECORD: Msg = Msg { flex: from(0), root: &BEGIN_TRANSACTION_RECORD_ROOT };
static BEGIN_TRANSACTION_RECORD_ROOT: St = st("BeginTransactionRecord", only(0), SHARED, &[
    f("name", Str, from(0)).null(from(0)).tag(0, from(0)).def(D::Null),
]);
pub(super) static BROKER_REGISTRATION_CHANGE_RECORD: Msg = Msg { flex: from(0), root: &BROKER_REGISTRATION_CHANGE_RECORD_ROOT };
static BROKER_REGISTRATION_CHANGE_RECORD_ROOT: St = st("BrokerRegistrationChangeRecord", span(0, 2), SHARED, &[
    f("brokerId", I32, from(0)),
    f("brokerEpoch", I64, from(0)),
    f("fenced", I8, from(0)).tag(0, from(0)),
    f("inControlledShutdown", I8, from(1)).tag(1, from(1)),
    f("logDirs", Arr(&Uuid), from(2)).tag(2, from(2)),
]);
pub(super) static CLIENT_QUOTA_RECORD: Msg = Msg { flex: from(0), root: &CLIENT_QUOTA_RECORD_ROOT };
static CLIENT_QUOTA_RECORD_ROOT: St = st("ClientQuotaRecord", only(0), SHARED, &[
    f("entity", StructArr(&CLIENT_QUOTA_RECORD_ENTITY_DATA), from(0)),
    f("key", Str, from(0)),
    f("value", F64, from(0)),
    f("remove", Bool, from(0)),
]);
static CLIENT_QUOTA_RECORD_ENTITY_DATA: St = st("EntityData", from(0), INLINE, &[
    f("entityType", Str, from(0)),
    f("entityName", Str, from(0)).null(from(0)),
]);
pub(super) static CONFIG_RECORD: Msg = Msg { flex: from(0), root: &CONFIG_RECORD_ROOT };
static CONFIG_RECORD_ROOT: St = st("ConfigRecord", only(0), SHARED, &[
    f("resourceType", I8, from(0)),
    f("resourceName", Str, from(0)),
    f("name", Str, from(0)),
    f("value", Str, from(0)).null(from(0)),
]);
pub(super) static DELEGATION_TOKEN_RECORD: Msg = Msg { flex: from(0), root: &DELEGATION_TOKEN_RECORD_ROOT };
static DELEGATION_TOKEN_RECORD_ROOT: St = st("DelegationTokenRecord", only(0), SHARED, &[
    f("owner", Str, from(0)),
    f("requester", Str, from(0)),
    f("renewers", Arr(&Str), from(0)),
    f("issueTimestamp", I64, from(0)),
    f("maxTimestamp", I64, from(0)),
    f("expirationTimestamp", I64, from(0)),
    f("tokenId", Str, from(0)),
]);
pub(super) static END_TRANSACTION_RECORD: Msg = Msg { flex: from(0), root: &END_TRANSACTION_RECORD_ROOT };
static END_TRANSACTION_RECORD_ROOT: St = st("EndTransactionRecord", only(0), SHARED, &[

]);
pub(super) static FEATURE_LEVEL_RECORD: Msg = Msg { flex: from(0), root: &FEATURE_LEVEL_RECORD_ROOT };
static FEATURE_LEVEL_RECORD_ROOT: St = st("FeatureLevelRecord", only(0), SHARED, &[
    f("name", Str, from(0)),
    f("featureLevel", I16, from(0)),
]);
pub(super) static FENCE_BROKER_RECORD: Msg = Msg { flex: from(0), root: &FENCE_BROKER_RECORD_ROOT };
static FENCE_BROKER_RECORD_ROOT: St = st("FenceBrokerRecord", only(0), SHARED, &[
    f("id", I32, from(0)),
    f("epoch", I64, from(0)),
]);
pub(super) static NO_OP_RECORD: Msg = Msg { flex: from(0), root: &NO_OP_RECORD_ROOT };
static NO_OP_RECORD_ROOT: St = st("NoOpRecord", only(0), SHARED, &[

]);
pub(super) static PARTITION_CHANGE_RECORD: Msg = Msg { flex: from(0), root: &PARTITION_CHANGE_RECORD_ROOT };
static PARTITION_CHANGE_RECORD_ROOT: St = st("PartitionChangeRecord", span(0, 2), SHARED, &[
    f("partitionId", I32, from(0)).def(D::Int(-1)),
    f("topicId", Uuid, from(0)),
    f("isr", Arr(&I32), from(0)).null(from(0)).tag(0, from(0)).def(D::Null),
    f("leader", I32, from(0)).tag(1, from(0)).def(D::Int(-2)),
    f("replicas", Arr(&I32), from(0)).null(from(0)).tag(2, from(0)).def(D::Null),
    f("removingReplicas", Arr(&I32), from(0)).null(from(0)).tag(3, from(0)).def(D::Null),
    f("addingReplicas", Arr(&I32), from(0)).null(from(0)).tag(4, from(0)).def(D::Null),
    f("leaderRecoveryState", I8, from(0)).tag(5, from(0)).def(D::Int(-1)),
    f("directories", Arr(&Uuid), from(1)).null(from(1)).tag(8, from(1)).def(D::Null),
    f("eligibleLeaderReplicas", Arr(&I32), from(2)).null(from(2)).tag(6, from(2)).def(D::Null),
    f("lastKnownElr", Arr(&I32), from(2)).null(from(2)).tag(7, from(2)).def(D::Null),
]);
pub(super) static PARTITION_RECORD: Msg = Msg { flex: from(0), root: &PARTITION_RECORD_ROOT };
static PARTITION_RECORD_ROOT: St = st("PartitionRecord", span(0, 2), SHARED, &[
    f("partitionId", I32, from(0)).def(D::Int(-1)),
    f("topicId", Uuid, from(0)),
    f("replicas", Arr(&I32), from(0)),
    f("isr", Arr(&I32), from(0)),
    f("removingReplicas", Arr(&I32), from(0)),
    f("addingReplicas", Arr(&I32), from(0)),
    f("leader", I32, from(0)).def(D::Int(-1)),
    f("leaderRecoveryState", I8, from(0)).tag(0, from(0)).def(D::Int(0)),
    f("leaderEpoch", I32, from(0)).def(D::Int(-1)),
    f("partitionEpoch", I32, from(0)).def(D::Int(-1)),
    f("directories", Arr(&Uuid), from(1)),
    f("eligibleLeaderReplicas", Arr(&I32), from(2)).null(from(2)).tag(1, from(2)).def(D::Null),
    f("lastKnownElr", Arr(&I32), from(2)).null(from(2)).tag(2, from(2)).def(D::Null),
]);
pub(super) static PRODUCER_IDS_RECORD: Msg = Msg { flex: from(0), root: &PRODUCER_IDS_RECORD_ROOT };
static PRODUCER_IDS_RECORD_ROOT: St = st("ProducerIdsRecord", only(0), SHARED, &[
    f("brokerId", I32, from(0)),
    f("brokerEpoch", I64, from(0)).def(D::Int(-1)),
    f("nextProducerId", I64, from(0)),
]);
pub(super) static REGISTER_BROKER_RECORD: Msg = Msg { flex: from(0), root: &REGISTER_BROKER_RECORD_ROOT };
static REGISTER_BROKER_RECORD_ROOT: St = st("RegisterBrokerRecord", span(0, 3), SHARED, &[
    f("brokerId", I32, from(0)),
    f("isMigratingZkBroker", Bool, from(2)).def(D::Bool(false)),
    f("incarnationId", Uuid, from(0)),
    f("brokerEpoch", I64, from(0)),
    f("endPoints", StructArr(&REGISTER_BROKER_RECORD_BROKER_ENDPOINT), from(0)),
    f("features", StructArr(&REGISTER_BROKER_RECORD_BROKER_FEATURE), from(0)),
    f("rack", Str, from(0)).null(from(0)),
    f("fenced", Bool, from(0)).def(D::Bool(true)),
    f("inControlledShutdown", Bool, from(1)).def(D::Bool(false)),
    f("logDirs", Arr(&Uuid), from(3)).tag(0, from(3)),
]);
static REGISTER_BROKER_RECORD_BROKER_ENDPOINT: St = st("BrokerEndpoint", from(0), INLINE, &[
    f("name", Str, from(0)),
    f("host", Str, from(0)),
    f("port", U16, from(0)),
    f("securityProtocol", I16, from(0)),
]);
static REGISTER_BROKER_RECORD_BROKER_FEATURE: St = st("BrokerFeature", from(0), INLINE, &[
    f("name", Str, from(0)),
    f("minSupportedVersion", I16, from(0)),
    f("maxSupportedVersion", I16, from(0)),
]);
pub(super) static REGISTER_CONTROLLER_RECORD: Msg = Msg { flex: from(0), root: &REGISTER_CONTROLLER_RECORD_ROOT };
static REGISTER_CONTROLLER_RECORD_ROOT: St = st("RegisterControllerRecord", only(0), SHARED, &[
    f("controllerId", I32, from(0)),
    f("incarnationId", Uuid, from(0)),
    f("zkMigrationReady", Bool, from(0)),
    f("endPoints", StructArr(&REGISTER_CONTROLLER_RECORD_CONTROLLER_ENDPOINT), from(0)),
    f("features", StructArr(&REGISTER_CONTROLLER_RECORD_CONTROLLER_FEATURE), from(0)),
]);
static REGISTER_CONTROLLER_RECORD_CONTROLLER_ENDPOINT: St = st("ControllerEndpoint", from(0), INLINE, &[
    f("name", Str, from(0)),
    f("host", Str, from(0)),
    f("port", U16, from(0)),
    f("securityProtocol", I16, from(0)),
]);
static REGISTER_CONTROLLER_RECORD_CONTROLLER_FEATURE: St = st("ControllerFeature", from(0), INLINE, &[
    f("name", Str, from(0)),
    f("minSupportedVersion", I16, from(0)),
    f("maxSupportedVersion", I16, from(0)),
]);
pub(super) static REMOVE_ACCESS_CONTROL_ENTRY_RECORD: Msg = Msg { flex: from(0), root: &REMOVE_ACCESS_CONTROL_ENTRY_RECORD_ROOT };
static REMOVE_ACCESS_CONTROL_ENTRY_RECORD_ROOT: St = st("RemoveAccessControlEntryRecord", only(0), SHARED, &[
    f("id", Uuid, from(0)),
]);
pub(super) static REMOVE_DELEGATION_TOKEN_RECORD: Msg = Msg { flex: from(0), root: &REMOVE_DELEGATION_TOKEN_RECORD_ROOT };
static REMOVE_DELEGATION_TOKEN_RECORD_ROOT: St = st("RemoveDelegationTokenRecord", only(0), SHARED, &[
    f("tokenId", Str, from(0)),
]);
pub(super) static REMOVE_TOPIC_RECORD: Msg = Msg { flex: from(0), root: &REMOVE_TOPIC_RECORD_ROOT };
static REMOVE_TOPIC_RECORD_ROOT: St = st("RemoveTopicRecord", only(0), SHARED, &[
    f("topicId", Uuid, from(0)),
]);
pub(super) static REMOVE_USER_SCRAM_CREDENTIAL_RECORD: Msg = Msg { flex: from(0), root: &REMOVE_USER_SCRAM_CREDENTIAL_RECORD_ROOT };
static REMOVE_USER_SCRAM_CREDENTIAL_RECORD_ROOT: St = st("RemoveUserScramCredentialRecord", only(0), SHARED, &[
    f("name", Str, from(0)),
    f("mechanism", I8, from(0)),
]);
pub(super) static TOPIC_RECORD: Msg = Msg { flex: from(0), root: &TOPIC_RECORD_ROOT };
static TOPIC_RECORD_ROOT: St = st("TopicRecord", only(0), SHARED, &[
    f("name", Str, from(0)),
    f("topicId", Uuid, from(0)),
]);
pub(super) static UNFENCE_BROKER_RECORD: Msg = Msg { flex: from(0), root: &UNFENCE_BROKER_RECORD_ROOT };
static UNFENCE_BROKER_RECORD_ROOT: St = st("UnfenceBrokerRecord", only(0), SHARED, &[
    f("id", I32, from(0)),
    f("epoch", I64, from(0)),
]);
pub(super) static UNREGISTER_BROKER_RECORD: Msg = Msg { flex: from(0), root: &UNREGISTER_BROKER_RECORD_ROOT };
static UNREGISTER_BROKER_RECORD_ROOT: St = st("UnregisterBrokerRecord", only(0), SHARED, &[
    f("brokerId", I32, from(0)),
    f("brokerEpoch", I64, from(0)),
]);
pub(super) static USER_SCRAM_CREDENTIAL_RECORD: Msg = Msg { flex: from(0), root: &USER_SCRAM_CREDENTIAL_RECORD_ROOT };
static USER_SCRAM_CREDENTIAL_RECORD_ROOT: St = st("UserScramCredentialRecord", only(0), SHARED, &[
    f("name", Str, from(0)),
    f("mechanism", I8, from(0)),
    f("salt", Bytes, from(0)),
    f("storedKey", Bytes, from(0)),
    f("serverKey", Bytes, from(0)),
    f("iterations", I32, from(0)),
]);
pub(super) static ZK_MIGRATION_STATE_RECORD: Msg = Msg { flex: from(0), root: &ZK_MIGRATION_STATE_RECORD_ROOT };
static ZK_MIGRATION_STATE_RECORD_ROOT: St = st("ZkMigrationStateRecord", only(0), SHARED, &[
    f("zkMigrationState", I8, from(0)),
]);

// ---- KRaft control record values ----
pub(super) static LEADER_CHANGE_MESSAGE: Msg = Msg { flex: from(0), root: &LEADER_CHANGE_MESSAGE_ROOT };
static LEADER_CHANGE_MESSAGE_ROOT: St = st("LeaderChangeMessage", span(0, 1), SHARED, &[
    f("version", I16, from(0)),
    f("leaderId", I32, from(0)),
    f("voters", StructArr(&LEADER_CHANGE_MESSAGE_VOTER), from(0)),
    f("grantingVoters", StructArr(&LEADER_CHANGE_MESSAGE_VOTER), from(0)),
]);
static LEADER_CHANGE_MESSAGE_VOTER: St = st("Voter", from(0), SHARED, &[
    f("voterId", I32, from(0)),
    f("voterDirectoryId", Uuid, from(1)),
]);
pub(super) static SNAPSHOT_HEADER_RECORD: Msg = Msg { flex: from(0), root: &SNAPSHOT_HEADER_RECORD_ROOT };
static SNAPSHOT_HEADER_RECORD_ROOT: St = st("SnapshotHeaderRecord", only(0), SHARED, &[
    f("version", I16, from(0)),
    f("lastContainedLogTimestamp", I64, from(0)),
]);
pub(super) static SNAPSHOT_FOOTER_RECORD: Msg = Msg { flex: from(0), root: &SNAPSHOT_FOOTER_RECORD_ROOT };
static SNAPSHOT_FOOTER_RECORD_ROOT: St = st("SnapshotFooterRecord", only(0), SHARED, &[
    f("version", I16, from(0)),
]);
pub(super) static K_RAFT_VERSION_RECORD: Msg = Msg { flex: from(0), root: &K_RAFT_VERSION_RECORD_ROOT };
static K_RAFT_VERSION_RECORD_ROOT: St = st("KRaftVersionRecord", only(0), SHARED, &[
    f("version", I16, from(0)),
    f("kRaftVersion", I16, from(0)),
]);
pub(super) static VOTERS_RECORD: Msg = Msg { flex: from(0), root: &VOTERS_RECORD_ROOT };
static VOTERS_RECORD_ROOT: St = st("VotersRecord", only(0), SHARED, &[
    f("version", I16, from(0)),
    f("voters", StructArr(&VOTERS_RECORD_VOTER), from(0)),
]);
static VOTERS_RECORD_VOTER: St = st("Voter", from(0), INLINE, &[
    f("voterId", I32, from(0)),
    f("voterDirectoryId", Uuid, from(0)),
    f("endpoints", StructArr(&VOTERS_RECORD_ENDPOINT), from(0)),
    f("kRaftVersionFeature", Struct(&VOTERS_RECORD_K_RAFT_VERSION_FEATURE), from(0)),
]);
static VOTERS_RECORD_ENDPOINT: St = st("Endpoint", from(0), INLINE, &[
    f("name", Str, from(0)),
    f("host", Str, from(0)),
    f("port", U16, from(0)),
]);
static VOTERS_RECORD_K_RAFT_VERSION_FEATURE: St = st("KRaftVersionFeature", from(0), INLINE, &[
    f("minSupportedVersion", I16, from(0)),
    f("maxSupportedVersion", I16, from(0)),
]);

// ---- the raft layer's `quorum-state` file (a JSON document of this message plus data_version) ----
pub(super) static QUORUM_STATE_DATA: Msg = Msg { flex: from(0), root: &QUORUM_STATE_DATA_ROOT };
static QUORUM_STATE_DATA_ROOT: St = st("QuorumStateData", span(0, 1), SHARED, &[
    f("clusterId", Str, only(0)),
    f("leaderId", I32, from(0)).def(D::Int(-1)),
    f("leaderEpoch", I32, from(0)).def(D::Int(-1)),
    f("votedId", I32, from(0)).def(D::Int(-1)),
    f("votedDirectoryId", Uuid, from(1)),
    f("appliedOffset", I64, only(0)),
    f("currentVoters", StructArr(&QUORUM_STATE_DATA_VOTER), only(0)).null(only(0)),
]);
static QUORUM_STATE_DATA_VOTER: St = st("Voter", only(0), INLINE, &[
    f("voterId", I32, only(0)),
]);

// ---- __remote_log_metadata (KIP-405; storage's RemoteLogSegmentMetadata*Record, RemotePartitionDeleteMetadataRecord) ----
pub(super) static REMOTE_LOG_SEGMENT_METADATA_RECORD: Msg = Msg { flex: from(0), root: &REMOTE_LOG_SEGMENT_METADATA_RECORD_ROOT };
static REMOTE_LOG_SEGMENT_METADATA_RECORD_ROOT: St = st("RemoteLogSegmentMetadataRecord", only(0), SHARED, &[
    f("remoteLogSegmentId", Struct(&REMOTE_LOG_SEGMENT_ID_ENTRY), from(0)),
    f("startOffset", I64, from(0)),
    f("endOffset", I64, from(0)),
    f("brokerId", I32, from(0)),
    f("maxTimestampMs", I64, from(0)),
    f("eventTimestampMs", I64, from(0)),
    f("segmentLeaderEpochs", StructArr(&SEGMENT_LEADER_EPOCH_ENTRY), from(0)),
    f("segmentSizeInBytes", I32, from(0)),
    f("customMetadata", Bytes, from(0)).null(from(0)).def(D::Null),
    f("remoteLogSegmentState", I8, from(0)),
]);
static REMOTE_LOG_SEGMENT_ID_ENTRY: St = st("RemoteLogSegmentIdEntry", from(0), INLINE, &[
    f("topicIdPartition", Struct(&TOPIC_ID_PARTITION_ENTRY), from(0)),
    f("id", Uuid, from(0)),
]);
static TOPIC_ID_PARTITION_ENTRY: St = st("TopicIdPartitionEntry", from(0), INLINE, &[
    f("name", Str, from(0)),
    f("id", Uuid, from(0)),
    f("partition", I32, from(0)),
]);
static SEGMENT_LEADER_EPOCH_ENTRY: St = st("SegmentLeaderEpochEntry", from(0), INLINE, &[
    f("leaderEpoch", I32, from(0)),
    f("offset", I64, from(0)),
]);
pub(super) static REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD: Msg = Msg { flex: from(0), root: &REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD_ROOT };
static REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD_ROOT: St = st("RemoteLogSegmentMetadataUpdateRecord", only(0), SHARED, &[
    f("remoteLogSegmentId", Struct(&REMOTE_LOG_SEGMENT_ID_ENTRY), from(0)),
    f("brokerId", I32, from(0)),
    f("eventTimestampMs", I64, from(0)),
    f("customMetadata", Bytes, from(0)).null(from(0)).def(D::Null),
    f("remoteLogSegmentState", I8, from(0)),
]);
pub(super) static REMOTE_PARTITION_DELETE_METADATA_RECORD: Msg = Msg { flex: from(0), root: &REMOTE_PARTITION_DELETE_METADATA_RECORD_ROOT };
static REMOTE_PARTITION_DELETE_METADATA_RECORD_ROOT: St = st("RemotePartitionDeleteMetadataRecord", only(0), SHARED, &[
    f("topicIdPartition", Struct(&TOPIC_ID_PARTITION_ENTRY), from(0)),
    f("brokerId", I32, from(0)),
    f("eventTimestampMs", I64, from(0)),
    f("remotePartitionDeleteState", I8, from(0)),
]);
pub(super) static REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD: Msg = Msg { flex: from(0), root: &REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD_ROOT };
static REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD_ROOT: St = st("RemoteLogSegmentMetadataSnapshotRecord", only(0), SHARED, &[
    f("segmentId", Uuid, from(0)),
    f("startOffset", I64, from(0)),
    f("endOffset", I64, from(0)),
    f("brokerId", I32, from(0)),
    f("maxTimestampMs", I64, from(0)),
    f("eventTimestampMs", I64, from(0)),
    f("segmentLeaderEpochs", StructArr(&SEGMENT_LEADER_EPOCH_ENTRY), from(0)),
    f("segmentSizeInBytes", I32, from(0)),
    f("customMetadata", Bytes, from(0)).null(from(0)).def(D::Null),
    f("remoteLogSegmentState", I8, from(0)),
]);
