//! `groups`: what `kafka-consumer-groups.sh --describe` would say, rebuilt offline from
//! `__consumer_offsets` partitions by the group coordinator's own replay rules
//! (`group-coordinator/.../OffsetMetadataManager.replay` and `replayEndTransactionMarker`,
//! `GroupMetadataManager.replay`):
//!
//! - offset commits are applied in offset order; a tombstone deletes the committed offset and
//!   the pending transactional ones of that partition;
//! - a commit in a batch with a producer id is pending until its transaction's COMMIT marker,
//!   which applies it unless a later (by record offset) commit is already there; ABORT drops it;
//! - the latest group metadata gives a classic group's protocol, generation and members
//!   (`Empty` without members, else `Stable`, as a loaded group starts); a KIP-848 consumer
//!   group's state comes from its epochs (`ConsumerGroup.maybeUpdateGroupState`: `Empty`,
//!   `Assigning`, `Reconciling`, `Stable`); a group with offsets and no metadata is a "simple"
//!   group, empty;
//! - a consumer group's regular-expression subscriptions are the topics the coordinator last
//!   resolved each to (`ConsumerGroupRegularExpression` records);
//! - a KIP-1071 streams group (the `StreamsGroup*` records) has a topology, members with the
//!   tasks of their current assignment, and a state as `StreamsGroup.maybeUpdateGroupState`
//!   sets it: `Empty` without members, `NotReady` without a topology, then `Assigning`,
//!   `Reconciling` or `Stable` by its epochs. (The broker also says `NotReady` while the
//!   topology's topics are missing from the cluster; offline that is not known.)
//!
//! A record the coordinator's loader refuses (no key, a key or value that does not
//! deserialize) or skips (an unknown record type) is a finding by the rule `verify --deep`
//! applies ([`crate::format::internal::loader_verdict`]).
//!
//! Where the log dir holds the committed partitions, the lag is what `kafka-consumer-groups.sh
//! --describe` computes: the committed offset subtracted from what AdminClient
//! `listOffsets(OffsetSpec.latest())` answers (`ConsumerGroupCommand.getLogEndOffsets`, shown as
//! LOG-END-OFFSET), which at `ListOffsetsOptions`' default READ_UNCOMMITTED isolation is the
//! high watermark, not the log end (`Partition.fetchOffsetForTimestamp`'s
//! `lastFetchableOffset`). Offline, the high watermark is the log dir's
//! `replication-offset-checkpoint` entry bounded by the log start and end offsets as the broker
//! bounds it at load (`Partition.createLog` → `UnifiedLog.updateHighWatermark`); without an entry,
//! the log end offset (found as `offsets --time latest` finds it), said so in the source. A
//! commit of offset -1 has no lag (`getLag`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Expected, Result, Unusable};
use crate::format::control::ControlRecordType;
use crate::format::internal::Decoder;
use crate::format::names::{
    parse_partition_dir, partition_dir_name, PartitionDirState,
    LOG_START_OFFSET_CHECKPOINT_FILE_NAME, REPLICATION_OFFSET_CHECKPOINT_FILE_NAME,
};
use crate::ops::finding::Finding;
use crate::ops::input::{examine, Input};
use crate::ops::inspect::coordinator::GROUP_METADATA_TOPIC_NAME;
use crate::ops::inspect::records::{log_files, replay, ReplayedRecord};
use crate::ops::partition::checkpoint_entry;
use crate::ops::simulate::retention::Sourced;
use crate::storage::seek::Seeker;

/// A committed offset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommittedOffset {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    /// -1 when the commit carries none (null in JSON).
    #[serde(serialize_with = "crate::ops::minus_one_as_null")]
    pub leader_epoch: i32,
    pub metadata: String,
    pub commit_timestamp: i64,
    /// The `__consumer_offsets` partition and offset of the commit record.
    pub record_partition: i32,
    pub record_offset: i64,
    /// The committed partition's log end offset, when this log dir holds it.
    pub log_end_offset: Option<i64>,
    /// What `kafka-consumer-groups.sh` shows as LOG-END-OFFSET and lags against: the high
    /// watermark (its source the checkpoint file), else the log end offset (said so).
    #[serde(
        flatten,
        serialize_with = "crate::ops::simulate::retention::sourced_as::lag_against"
    )]
    pub lag_against: Option<Sourced>,
    pub lag: Option<i64>,
}

/// A member as the latest group metadata lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub member_id: String,
    pub client_id: Option<String>,
    pub client_host: Option<String>,
    pub group_instance_id: Option<String>,
    /// KIP-848 and streams members: the member epoch of the current assignment.
    pub member_epoch: Option<i32>,
    /// Streams members: the Kafka Streams process the member runs in.
    pub process_id: Option<String>,
    /// Streams members: the topology epoch the member runs.
    pub topology_epoch: Option<i32>,
    /// Streams members: the tasks of the current assignment.
    pub current_assignment: Option<StreamsTasks>,
}

/// The tasks of a streams member's assignment, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamsTasks {
    pub active_tasks: Vec<SubtopologyTasks>,
    pub standby_tasks: Vec<SubtopologyTasks>,
    pub warmup_tasks: Vec<SubtopologyTasks>,
}

/// Tasks of one subtopology: a task per partition number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubtopologyTasks {
    pub subtopology_id: String,
    pub partitions: Vec<i32>,
}

/// A consumer group's regular-expression subscription as the coordinator last resolved it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RegexSubscription {
    pub regular_expression: String,
    /// The topics it matched.
    pub topics: Vec<String>,
    /// The metadata image version it was resolved against.
    pub metadata_image_version: i64,
    /// When it was resolved (epoch milliseconds).
    pub resolved_timestamp: i64,
}

/// A streams group's topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Topology {
    pub topology_epoch: i32,
    pub subtopologies: Vec<Subtopology>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Subtopology {
    pub subtopology_id: String,
    pub source_topics: Vec<String>,
    pub source_topic_regexes: Vec<String>,
    pub repartition_source_topics: Vec<String>,
    pub repartition_sink_topics: Vec<String>,
    pub state_changelog_topics: Vec<String>,
}

/// One group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Group {
    pub group: String,
    /// `classic`, `consumer` (KIP-848), `streams` (KIP-1071) or `simple` (offsets without
    /// membership).
    pub group_type: &'static str,
    pub state: &'static str,
    pub protocol_type: Option<String>,
    pub protocol: Option<String>,
    pub leader: Option<String>,
    /// Classic: the generation; consumer: the group epoch.
    pub generation: Option<i32>,
    /// Consumer and streams: the target assignment epoch.
    pub assignment_epoch: Option<i32>,
    pub members: Vec<Member>,
    /// Consumer: the regular-expression subscriptions of its members.
    pub regular_expressions: Vec<RegexSubscription>,
    /// Streams: the topology (none before one is recorded).
    pub topology: Option<Topology>,
    pub offsets: Vec<CommittedOffset>,
    /// Transactional commits still waiting for their transaction's marker.
    pub pending_transactional_offsets: Vec<PendingOffset>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingOffset {
    pub producer_id: i64,
    #[serde(flatten)]
    pub offset: CommittedOffset,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupsReport {
    /// The `__consumer_offsets` partition directories replayed.
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub dirs: Vec<PathBuf>,
    pub groups: Vec<Group>,
    /// What the walk found wrong in those partitions.
    pub findings: Vec<Finding>,
}

#[derive(Debug, Default)]
struct ClassicState {
    protocol_type: Option<String>,
    protocol: Option<String>,
    leader: Option<String>,
    generation: Option<i32>,
    members: Vec<Member>,
}

#[derive(Debug, Default)]
struct ConsumerState {
    epoch: i32,
    assignment_epoch: i32,
    /// member id → (metadata, member epoch and state of its current assignment).
    members: BTreeMap<String, (Member, i32, i64)>,
    regexes: BTreeMap<String, RegexSubscription>,
}

#[derive(Debug, Default)]
struct StreamsState {
    epoch: i32,
    assignment_epoch: i32,
    topology: Option<Topology>,
    /// As [`ConsumerState::members`].
    members: BTreeMap<String, (Member, i32, i64)>,
}

type Key = (String, String, i32);

#[derive(Debug, Default)]
struct Replay {
    classic: HashMap<String, ClassicState>,
    consumer: HashMap<String, ConsumerState>,
    streams: HashMap<String, StreamsState>,
    offsets: BTreeMap<Key, CommittedOffset>,
    pending: HashMap<i64, BTreeMap<Key, CommittedOffset>>,
}

fn s<'a>(v: &'a serde_json::Value, k: &str) -> Option<&'a str> {
    v.get(k)?.as_str()
}

fn int(v: &serde_json::Value, k: &str) -> Option<i64> {
    v.get(k)?.as_i64()
}

fn i32_of(v: &serde_json::Value, k: &str) -> Option<i32> {
    int(v, k).and_then(|n| i32::try_from(n).ok())
}

fn member(data: &serde_json::Value, id: &str) -> Member {
    Member {
        member_id: id.to_owned(),
        client_id: s(data, "clientId").map(str::to_owned),
        client_host: s(data, "clientHost").map(str::to_owned),
        group_instance_id: s(data, "groupInstanceId")
            .or_else(|| s(data, "instanceId"))
            .map(str::to_owned),
        member_epoch: None,
        process_id: s(data, "processId").map(str::to_owned),
        topology_epoch: i32_of(data, "topologyEpoch"),
        current_assignment: None,
    }
}

fn strings(v: &serde_json::Value, k: &str) -> Vec<String> {
    let items = v.get(k).and_then(|a| a.as_array()).into_iter().flatten();
    items
        .filter_map(|x| x.as_str().map(str::to_owned))
        .collect()
}

/// The names of a list of `TopicInfo` structs.
fn topic_names(v: &serde_json::Value, k: &str) -> Vec<String> {
    let items = v.get(k).and_then(|a| a.as_array()).into_iter().flatten();
    items
        .filter_map(|t| s(t, "name").map(str::to_owned))
        .collect()
}

fn task_ids(v: &serde_json::Value, k: &str) -> Vec<SubtopologyTasks> {
    let items = v.get(k).and_then(|a| a.as_array()).into_iter().flatten();
    items
        .map(|t| SubtopologyTasks {
            subtopology_id: s(t, "subtopologyId").unwrap_or_default().to_owned(),
            partitions: t
                .get("partitions")
                .and_then(|p| p.as_array())
                .into_iter()
                .flatten()
                .filter_map(|n| n.as_i64().and_then(|n| i32::try_from(n).ok()))
                .collect(),
        })
        .collect()
}

fn topology(v: &serde_json::Value) -> Topology {
    let subs = v.get("subtopologies").and_then(|a| a.as_array());
    Topology {
        topology_epoch: i32_of(v, "epoch").unwrap_or(0),
        subtopologies: subs
            .into_iter()
            .flatten()
            .map(|t| Subtopology {
                subtopology_id: s(t, "subtopologyId").unwrap_or_default().to_owned(),
                source_topics: strings(t, "sourceTopics"),
                source_topic_regexes: strings(t, "sourceTopicRegex"),
                repartition_source_topics: topic_names(t, "repartitionSourceTopics"),
                repartition_sink_topics: strings(t, "repartitionSinkTopics"),
                state_changelog_topics: topic_names(t, "stateChangelogTopics"),
            })
            .collect(),
    }
}

/// `MemberState.STABLE` of consumer groups.
const MEMBER_STATE_STABLE: i64 = 0;
/// `streams.MemberState.STABLE`.
const STREAMS_MEMBER_STATE_STABLE: i64 = 1;

/// The record types of the pinned definitions (`tables.rs`, `OFFSETS_RECORDS`) replayed here
/// beyond the classic and KIP-848 ones.
const REGULAR_EXPRESSION: &str = "16";
const STREAMS_METADATA: &str = "17";
const STREAMS_MEMBER_METADATA: &str = "19";
const STREAMS_TARGET_ASSIGNMENT_METADATA: &str = "20";
const STREAMS_CURRENT_MEMBER_ASSIGNMENT: &str = "22";
const STREAMS_TOPOLOGY: &str = "23";

/// A member's metadata record: a tombstone removes the member, a value replaces its metadata
/// and keeps the epoch of its current assignment.
fn member_metadata(
    members: &mut BTreeMap<String, (Member, i32, i64)>,
    id: &str,
    value: Option<&serde_json::Value>,
    stable: i64,
) {
    let Some(v) = value else {
        members.remove(id);
        return;
    };
    let entry = members
        .entry(id.to_owned())
        .or_insert_with(|| (member(v, id), 0, stable));
    entry.0 = Member {
        member_epoch: entry.0.member_epoch,
        current_assignment: entry.0.current_assignment.take(),
        ..member(v, id)
    };
}

/// The group state from its epochs and its members' (`maybeUpdateGroupState` of both types).
fn epoch_state(
    epoch: i32,
    assignment_epoch: i32,
    members: &[(i32, i64)],
    stable: i64,
) -> &'static str {
    if members.is_empty() {
        "Empty"
    } else if epoch > assignment_epoch {
        "Assigning"
    } else if members
        .iter()
        .any(|&(e, state)| e != assignment_epoch || state != stable)
    {
        "Reconciling"
    } else {
        "Stable"
    }
}

impl Replay {
    fn record(&mut self, record_partition: i32, r: &ReplayedRecord<'_>) {
        match r.control {
            Some(ControlRecordType::Commit) => return self.end_transaction(r.producer_id, true),
            Some(ControlRecordType::Abort) => return self.end_transaction(r.producer_id, false),
            Some(_) => return,
            None => {}
        }
        let Some(key) = r.key else { return };
        let (Some(kind), Some(k)) = (s(key, "type"), key.get("data")) else {
            return;
        };
        let value = if r.tombstone {
            None
        } else {
            match r.value.and_then(|v| v.get("data")) {
                Some(v) => Some(v),
                // A value that did not decode is not replayed.
                None => return,
            }
        };
        let group = s(k, "group")
            .or_else(|| s(k, "groupId"))
            .unwrap_or_default();
        let group = group.to_owned();
        match kind {
            "0" | "1" => {
                let (Some(topic), Some(partition)) = (s(k, "topic"), i32_of(k, "partition")) else {
                    return;
                };
                let key = (group, topic.to_owned(), partition);
                self.offset_commit(key, record_partition, r, value);
            }
            "2" => match value {
                None => {
                    self.classic.remove(&group);
                }
                Some(v) => {
                    let members = v
                        .get("members")
                        .and_then(|m| m.as_array())
                        .into_iter()
                        .flatten()
                        .map(|m| member(m, s(m, "memberId").unwrap_or_default()))
                        .collect();
                    self.classic.insert(
                        group,
                        ClassicState {
                            protocol_type: s(v, "protocolType").map(str::to_owned),
                            protocol: s(v, "protocol").map(str::to_owned),
                            leader: s(v, "leader").map(str::to_owned),
                            generation: i32_of(v, "generation"),
                            members,
                        },
                    );
                }
            },
            "3" => match value {
                None => {
                    self.consumer.remove(&group);
                }
                Some(v) => {
                    self.consumer.entry(group).or_default().epoch = i32_of(v, "epoch").unwrap_or(0);
                }
            },
            "5" | "8" => {
                let Some(id) = s(k, "memberId") else { return };
                let g = self.consumer.entry(group).or_default();
                match (kind, value) {
                    ("5", v) => member_metadata(&mut g.members, id, v, MEMBER_STATE_STABLE),
                    (_, Some(v)) => {
                        if let Some(m) = g.members.get_mut(id) {
                            m.1 = i32_of(v, "memberEpoch").unwrap_or(0);
                            m.2 = int(v, "state").unwrap_or(MEMBER_STATE_STABLE);
                            m.0.member_epoch = Some(m.1);
                        }
                    }
                    _ => {}
                }
            }
            "6" => {
                if let Some(v) = value {
                    self.consumer.entry(group).or_default().assignment_epoch =
                        i32_of(v, "assignmentEpoch").unwrap_or(0);
                }
            }
            REGULAR_EXPRESSION => {
                let Some(regex) = s(k, "regularExpression") else {
                    return;
                };
                let g = self.consumer.entry(group).or_default();
                match value {
                    None => {
                        g.regexes.remove(regex);
                    }
                    Some(v) => {
                        let sub = RegexSubscription {
                            regular_expression: regex.to_owned(),
                            topics: strings(v, "topics"),
                            metadata_image_version: int(v, "version").unwrap_or(0),
                            resolved_timestamp: int(v, "timestamp").unwrap_or(0),
                        };
                        g.regexes.insert(regex.to_owned(), sub);
                    }
                }
            }
            _ => self.streams_record(kind, group, k, value),
        }
    }

    /// `GroupMetadataManager.replay` of the streams-group records.
    fn streams_record(
        &mut self,
        kind: &str,
        group: String,
        k: &serde_json::Value,
        value: Option<&serde_json::Value>,
    ) {
        let member_id = s(k, "memberId");
        match (kind, value, member_id) {
            (STREAMS_METADATA, None, _) => {
                self.streams.remove(&group);
            }
            (STREAMS_METADATA, Some(v), _) => {
                self.streams.entry(group).or_default().epoch = i32_of(v, "epoch").unwrap_or(0);
            }
            (STREAMS_TOPOLOGY, v, _) => {
                self.streams.entry(group).or_default().topology = v.map(topology);
            }
            (STREAMS_TARGET_ASSIGNMENT_METADATA, Some(v), _) => {
                self.streams.entry(group).or_default().assignment_epoch =
                    i32_of(v, "assignmentEpoch").unwrap_or(0);
            }
            (STREAMS_MEMBER_METADATA, v, Some(id)) => {
                let g = self.streams.entry(group).or_default();
                member_metadata(&mut g.members, id, v, STREAMS_MEMBER_STATE_STABLE);
            }
            (STREAMS_CURRENT_MEMBER_ASSIGNMENT, Some(v), Some(id)) => {
                let g = self.streams.entry(group).or_default();
                if let Some(m) = g.members.get_mut(id) {
                    m.1 = i32_of(v, "memberEpoch").unwrap_or(0);
                    m.2 = int(v, "state").unwrap_or(STREAMS_MEMBER_STATE_STABLE);
                    m.0.member_epoch = Some(m.1);
                    m.0.current_assignment = Some(StreamsTasks {
                        active_tasks: task_ids(v, "activeTasks"),
                        standby_tasks: task_ids(v, "standbyTasks"),
                        warmup_tasks: task_ids(v, "warmupTasks"),
                    });
                }
            }
            _ => {}
        }
    }

    fn offset_commit(
        &mut self,
        key: Key,
        record_partition: i32,
        r: &ReplayedRecord<'_>,
        value: Option<&serde_json::Value>,
    ) {
        let Some(v) = value else {
            self.offsets.remove(&key);
            for pending in self.pending.values_mut() {
                pending.remove(&key);
            }
            return;
        };
        let committed = CommittedOffset {
            topic: key.1.clone(),
            partition: key.2,
            offset: int(v, "offset").unwrap_or(-1),
            leader_epoch: i32_of(v, "leaderEpoch").unwrap_or(-1),
            metadata: s(v, "metadata").unwrap_or_default().to_owned(),
            commit_timestamp: int(v, "commitTimestamp").unwrap_or(-1),
            record_partition,
            record_offset: r.offset,
            log_end_offset: None,
            lag_against: None,
            lag: None,
        };
        // RecordBatch.NO_PRODUCER_ID: a plain commit.
        if r.producer_id == -1 {
            self.offsets.insert(key, committed);
        } else {
            self.pending
                .entry(r.producer_id)
                .or_default()
                .insert(key, committed);
        }
    }

    fn end_transaction(&mut self, producer_id: i64, commit: bool) {
        let Some(pending) = self.pending.remove(&producer_id) else {
            return;
        };
        if !commit {
            return;
        }
        for (key, committed) in pending {
            let newer = self
                .offsets
                .get(&key)
                .is_none_or(|existing| committed.record_offset > existing.record_offset);
            if newer {
                self.offsets.insert(key, committed);
            }
        }
    }

    fn groups(self) -> Vec<Group> {
        let mut names: Vec<String> = self
            .classic
            .keys()
            .chain(self.consumer.keys())
            .chain(self.streams.keys())
            .cloned()
            .chain(self.offsets.keys().map(|k| k.0.clone()))
            .chain(
                self.pending
                    .values()
                    .flat_map(|p| p.keys().map(|k| k.0.clone())),
            )
            .collect();
        names.sort();
        names.dedup();
        let mut offsets: HashMap<String, Vec<CommittedOffset>> = HashMap::new();
        for ((g, _, _), o) in self.offsets {
            offsets.entry(g).or_default().push(o);
        }
        let mut pending: HashMap<String, Vec<PendingOffset>> = HashMap::new();
        for (producer_id, p) in self.pending {
            for ((g, _, _), offset) in p {
                pending.entry(g).or_default().push(PendingOffset {
                    producer_id,
                    offset,
                });
            }
        }
        let mut classic = self.classic;
        let mut consumer = self.consumer;
        let mut streams = self.streams;
        names
            .into_iter()
            .map(|name| {
                let mut g = Group {
                    group: name.clone(),
                    group_type: "simple",
                    state: "Empty",
                    protocol_type: None,
                    protocol: None,
                    leader: None,
                    generation: None,
                    assignment_epoch: None,
                    members: Vec::new(),
                    regular_expressions: Vec::new(),
                    topology: None,
                    offsets: offsets.remove(&name).unwrap_or_default(),
                    pending_transactional_offsets: pending.remove(&name).unwrap_or_default(),
                };
                g.pending_transactional_offsets
                    .sort_by_key(|p| (p.producer_id, p.offset.topic.clone(), p.offset.partition));
                let epochs = |m: &BTreeMap<String, (Member, i32, i64)>| -> Vec<(i32, i64)> {
                    m.values().map(|(_, e, s)| (*e, *s)).collect()
                };
                if let Some(c) = streams.remove(&name) {
                    g.group_type = "streams";
                    g.generation = Some(c.epoch);
                    g.assignment_epoch = Some(c.assignment_epoch);
                    let stable = STREAMS_MEMBER_STATE_STABLE;
                    g.state =
                        match epoch_state(c.epoch, c.assignment_epoch, &epochs(&c.members), stable)
                        {
                            "Empty" => "Empty",
                            _ if c.topology.is_none() => "NotReady",
                            state => state,
                        };
                    g.topology = c.topology;
                    g.members = c.members.into_values().map(|(m, _, _)| m).collect();
                } else if let Some(c) = consumer.remove(&name) {
                    g.group_type = "consumer";
                    g.generation = Some(c.epoch);
                    g.assignment_epoch = Some(c.assignment_epoch);
                    let stable = MEMBER_STATE_STABLE;
                    g.state = epoch_state(c.epoch, c.assignment_epoch, &epochs(&c.members), stable);
                    g.members = c.members.into_values().map(|(m, _, _)| m).collect();
                    g.regular_expressions = c.regexes.into_values().collect();
                } else if let Some(c) = classic.remove(&name) {
                    g.group_type = "classic";
                    g.state = if c.members.is_empty() {
                        "Empty"
                    } else {
                        "Stable"
                    };
                    g.protocol_type = c.protocol_type;
                    g.protocol = c.protocol;
                    g.leader = c.leader;
                    g.generation = c.generation;
                    g.members = c.members;
                }
                g
            })
            .collect()
    }
}

/// The `__consumer_offsets` partition directories `path` names: itself, or the live ones of a
/// log dir.
pub fn offsets_partitions(path: &Path) -> Result<Vec<(PathBuf, i32)>> {
    let name = path
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let of_topic = |n: &str| {
        parse_partition_dir(n).filter(|pd| {
            pd.topic == GROUP_METADATA_TOPIC_NAME && pd.state == PartitionDirState::Live
        })
    };
    let expected = Expected::PartitionOrLogDir;
    let Input::Dir { dirs, .. } = examine(path, expected)? else {
        return Err(Error::unusable(path, Unusable::NotADirectory, expected));
    };
    if let Some(pd) = of_topic(&name) {
        return Ok(vec![(path.to_path_buf(), pd.partition)]);
    }
    let mut out: Vec<(PathBuf, i32)> = dirs
        .into_iter()
        .filter_map(|d| {
            let pd = of_topic(&d.file_name()?.to_string_lossy())?;
            Some((d, pd.partition))
        })
        .collect();
    out.sort_by_key(|(_, p)| *p);
    if out.is_empty() {
        return Err(Error::invalid(
            path,
            format!("neither a {GROUP_METADATA_TOPIC_NAME}-N directory nor a log dir holding one"),
        ));
    }
    Ok(out)
}

/// How the source of a lag computed against the log end offset starts.
pub const LOG_END_SOURCE: &str = "log end offset";

/// The log end offset of the partition directory `dir` and what lag is computed against (see
/// the module's words): the checkpointed high watermark bounded by the log start and end.
fn lag_end(dir: &Path) -> Result<(i64, Sourced)> {
    let mut seeker = Seeker::open(dir)?;
    let log_end = seeker.log_end_offset()?;
    let entry = |file| -> Result<Option<(PathBuf, i64)>> {
        Ok(checkpoint_entry(dir, file)?.map(|(p, c, i)| (p, c.entries[i].offset)))
    };
    let Some((path, hw)) = entry(REPLICATION_OFFSET_CHECKPOINT_FILE_NAME)? else {
        let source = format!(
            "{LOG_END_SOURCE}: {REPLICATION_OFFSET_CHECKPOINT_FILE_NAME} has no entry for the partition (kafka-consumer-groups.sh shows the high watermark)"
        );
        return Ok((
            log_end,
            Sourced {
                value: log_end,
                source,
            },
        ));
    };
    let log_start = entry(LOG_START_OFFSET_CHECKPOINT_FILE_NAME)?
        .map_or(i64::MIN, |(_, o)| o)
        .max(seeker.first_segment_base());
    let value = hw.max(log_start).min(log_end);
    let source = if value == hw {
        format!("high watermark: {}", path.display())
    } else {
        format!(
            "high watermark: {hw} from {}, bounded by the log start {log_start} and end {log_end} as the broker does at load",
            path.display()
        )
    };
    Ok((log_end, Sourced { value, source }))
}

/// Replays the `__consumer_offsets` partitions that `paths` name; only `group` when given.
pub fn describe_groups(paths: &[PathBuf], group: Option<&str>) -> Result<GroupsReport> {
    let mut partitions = Vec::new();
    for p in paths {
        partitions.extend(offsets_partitions(p)?);
    }
    let mut state = Replay::default();
    let mut findings = Vec::new();
    for (dir, n) in &partitions {
        let logs = log_files(dir)?;
        if logs.is_empty() {
            continue;
        }
        findings.extend(replay(&logs, Decoder::Offsets, 0, true, &mut |r| {
            state.record(*n, r)
        })?);
    }
    let mut groups = state.groups();
    if let Some(g) = group {
        groups.retain(|x| x.group == g);
    }
    // Lag, against the partitions the same log dirs hold.
    let mut ends: HashMap<(PathBuf, String, i32), Option<(i64, Sourced)>> = HashMap::new();
    for g in &mut groups {
        for o in &mut g.offsets {
            let log_dir = partitions
                .iter()
                .find(|(_, n)| *n == o.record_partition)
                .and_then(|(d, _)| d.parent())
                .map(Path::to_path_buf)
                .unwrap_or_default();
            let key = (log_dir.clone(), o.topic.clone(), o.partition);
            let end = ends.entry(key).or_insert_with(|| {
                let dir = log_dir.join(partition_dir_name(&o.topic, o.partition));
                dir.is_dir().then(|| lag_end(&dir).ok()).flatten()
            });
            if let Some((log_end, against)) = end {
                o.log_end_offset = Some(*log_end);
                o.lag = (o.offset != -1).then(|| against.value - o.offset);
                o.lag_against = Some(against.clone());
            }
        }
    }
    Ok(GroupsReport {
        dirs: partitions.into_iter().map(|(d, _)| d).collect(),
        groups,
        findings,
    })
}
