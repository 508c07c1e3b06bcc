//! The metadata image and how each record changes it, as Kafka's image deltas replay them
//! (`metadata/.../image/*Delta.java`, `PartitionRegistration.merge`), with the controller's
//! refusals (`ClusterControlManager`, `ReplicationControlManager`, `MetadataBatchLoader`) kept
//! as findings instead of exceptions.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::names;

/// `PartitionChangeRecord.leader`'s "no change" (`LeaderConstants.NO_LEADER_CHANGE`).
const NO_LEADER_CHANGE: i64 = -2;

fn values<K, V: Serialize, S: Serializer>(m: &BTreeMap<K, V>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(m.values())
}

/// Topics by name, as the tree shows them (the image keys them by id).
fn topics_by_name<S: Serializer>(m: &BTreeMap<String, Topic>, s: S) -> Result<S::Ok, S::Error> {
    let mut v: Vec<&Topic> = m.values().collect();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    s.collect_seq(v)
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    /// `metadata.version`'s feature level (null: no FeatureLevelRecord for it yet).
    pub metadata_version: Option<i64>,
    /// Its release name (`3.7-IV4`), for the levels of released Kafka versions.
    pub metadata_version_name: Option<&'static str>,
    /// Other finalized features (`kraft.version` is the raft layer's, not here).
    #[serde(serialize_with = "values")]
    pub features: BTreeMap<String, Feature>,
    #[serde(serialize_with = "values")]
    pub brokers: BTreeMap<i64, Broker>,
    #[serde(serialize_with = "values")]
    pub controllers: BTreeMap<i64, Controller>,
    /// By topic id.
    #[serde(serialize_with = "topics_by_name")]
    pub topics: BTreeMap<String, Topic>,
    /// By (resource type, resource name).
    #[serde(serialize_with = "values")]
    pub configs: BTreeMap<(String, String), ConfigResource>,
    #[serde(serialize_with = "values")]
    pub client_quotas: BTreeMap<String, ClientQuota>,
    /// By ACL id.
    #[serde(serialize_with = "values")]
    pub acls: BTreeMap<String, Acl>,
    pub producer_ids: Option<ProducerIds>,
    pub scram_users: BTreeSet<ScramUser>,
    pub delegation_token_ids: BTreeSet<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Feature {
    pub name: String,
    pub level: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    pub name: String,
    pub host: String,
    pub port: i64,
    pub security_protocol: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SupportedFeature {
    pub name: String,
    pub min_supported_version: i64,
    pub max_supported_version: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Broker {
    pub broker_id: i64,
    pub broker_epoch: i64,
    pub incarnation_id: String,
    pub endpoints: Vec<Endpoint>,
    pub rack: Option<String>,
    pub fenced: bool,
    pub in_controlled_shutdown: bool,
    pub is_migrating_zk_broker: bool,
    pub log_dirs: Vec<String>,
    pub supported_features: Vec<SupportedFeature>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Controller {
    pub controller_id: i64,
    pub incarnation_id: String,
    pub endpoints: Vec<Endpoint>,
    pub supported_features: Vec<SupportedFeature>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Topic {
    pub name: String,
    pub topic_id: String,
    #[serde(serialize_with = "values")]
    pub partitions: BTreeMap<i64, Partition>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Partition {
    pub partition: i64,
    pub replicas: Vec<i64>,
    pub isr: Vec<i64>,
    pub eligible_leader_replicas: Vec<i64>,
    pub last_known_elr: Vec<i64>,
    pub removing_replicas: Vec<i64>,
    pub adding_replicas: Vec<i64>,
    /// Null: no leader.
    /// `leaderId`: `leader` is a member id in `groups`.
    #[serde(rename = "leaderId")]
    pub leader: Option<i64>,
    pub leader_epoch: i64,
    pub partition_epoch: i64,
    pub leader_recovery_state: &'static str,
    /// The log directory id of each replica (empty before metadata.version 3.7-IV2).
    pub directories: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigResource {
    pub resource_type: String,
    pub resource_name: String,
    /// Config name → value: a map keyed by data, hence not `configs` (the image's list).
    #[serde(rename = "configValues")]
    pub configs: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientQuota {
    /// `user=alice,client-id=app` (a default entity's name is `<default>`).
    pub entity: String,
    pub quotas: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Acl {
    pub id: String,
    pub resource_type: String,
    pub resource_name: String,
    pub pattern_type: String,
    pub principal: String,
    pub host: String,
    pub operation: String,
    pub permission_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProducerIds {
    pub next_producer_id: i64,
    pub broker_id: i64,
    pub broker_epoch: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScramUser {
    pub name: String,
    pub mechanism: String,
}

/// A record the controller refuses on replay (it throws: the controller's fatal fault handler
/// stops the process), or a reference to what was never there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub check: &'static str,
    /// Whether the controller throws on it (else it is only suspicious).
    pub throws: bool,
    pub message: String,
}

fn int(d: &Value, k: &str) -> Option<i64> {
    d.get(k)?.as_i64()
}

fn text(d: &Value, k: &str) -> Option<String> {
    d.get(k)?.as_str().map(str::to_owned)
}

/// An int array field; `None` when absent or null ("no change" in a PartitionChangeRecord).
fn ints(d: &Value, k: &str) -> Option<Vec<i64>> {
    d.get(k)?.as_array()?.iter().map(Value::as_i64).collect()
}

fn strings(d: &Value, k: &str) -> Option<Vec<String>> {
    d.get(k)?
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn endpoints(d: &Value) -> Vec<Endpoint> {
    let list = d.get("endPoints").and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .map(|e| Endpoint {
            name: text(e, "name").unwrap_or_default(),
            host: text(e, "host").unwrap_or_default(),
            port: int(e, "port").unwrap_or_default(),
            security_protocol: names::security_protocol(int(e, "securityProtocol").unwrap_or(-1)),
        })
        .collect()
}

fn supported_features(d: &Value) -> Vec<SupportedFeature> {
    let list = d.get("features").and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .map(|f| SupportedFeature {
            name: text(f, "name").unwrap_or_default(),
            min_supported_version: int(f, "minSupportedVersion").unwrap_or_default(),
            max_supported_version: int(f, "maxSupportedVersion").unwrap_or_default(),
        })
        .collect()
}

impl Image {
    pub fn topic_by_name(&self, name: &str) -> Option<&Topic> {
        self.topics.values().find(|t| t.name == name)
    }

    /// Applies one metadata record (`{"type", "version", "data"}` as the decoder gives it);
    /// returns what the controller would refuse or find dangling in it.
    pub fn apply(&mut self, record: &Value) -> Vec<Refusal> {
        let mut out = Vec::new();
        let (Some(kind), Some(d)) = (
            record.get("type").and_then(Value::as_str),
            record.get("data"),
        ) else {
            return out;
        };
        let mut refuse = |check, throws, message: String| {
            out.push(Refusal {
                check,
                throws,
                message,
            })
        };
        match kind {
            "FEATURE_LEVEL_RECORD" => {
                let (name, level) = (text(d, "name").unwrap_or_default(), int(d, "featureLevel"));
                let level = level.unwrap_or_default();
                if name == names::METADATA_VERSION {
                    self.metadata_version = Some(level);
                    self.metadata_version_name = names::metadata_version(level);
                } else if level == 0 {
                    self.features.remove(&name);
                } else {
                    self.features.insert(name.clone(), Feature { name, level });
                }
            }
            "REGISTER_BROKER_RECORD" => {
                let id = int(d, "brokerId").unwrap_or_default();
                let broker = Broker {
                    broker_id: id,
                    broker_epoch: int(d, "brokerEpoch").unwrap_or_default(),
                    incarnation_id: text(d, "incarnationId").unwrap_or_default(),
                    endpoints: endpoints(d),
                    rack: text(d, "rack"),
                    fenced: d.get("fenced").and_then(Value::as_bool).unwrap_or(true),
                    in_controlled_shutdown: d
                        .get("inControlledShutdown")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    is_migrating_zk_broker: d
                        .get("isMigratingZkBroker")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    log_dirs: strings(d, "logDirs").unwrap_or_default(),
                    supported_features: supported_features(d),
                };
                self.brokers.insert(id, broker);
            }
            "UNREGISTER_BROKER_RECORD" => {
                self.brokers.remove(&int(d, "brokerId").unwrap_or_default());
            }
            "REGISTER_CONTROLLER_RECORD" => {
                let id = int(d, "controllerId").unwrap_or_default();
                let controller = Controller {
                    controller_id: id,
                    incarnation_id: text(d, "incarnationId").unwrap_or_default(),
                    endpoints: endpoints(d),
                    supported_features: supported_features(d),
                };
                self.controllers.insert(id, controller);
            }
            "FENCE_BROKER_RECORD"
            | "UNFENCE_BROKER_RECORD"
            | "BROKER_REGISTRATION_CHANGE_RECORD" => {
                let change = kind == "BROKER_REGISTRATION_CHANGE_RECORD";
                let (id_key, epoch_key) = if change {
                    ("brokerId", "brokerEpoch")
                } else {
                    ("id", "epoch")
                };
                let id = int(d, id_key).unwrap_or_default();
                let epoch = int(d, epoch_key).unwrap_or_default();
                let action = match kind {
                    "FENCE_BROKER_RECORD" => "fence",
                    "UNFENCE_BROKER_RECORD" => "unfence",
                    _ => "change",
                };
                let Some(b) = self.brokers.get_mut(&id) else {
                    refuse(
                        "metadata.unknown-broker",
                        true,
                        format!("{kind} for broker {id}, which is not registered (the controller throws \"Tried to {action} broker {id}, but that broker was not registered\")"),
                    );
                    return out;
                };
                if b.broker_epoch != epoch {
                    refuse(
                        "metadata.broker-epoch",
                        true,
                        format!("{kind} for broker {id} at epoch {epoch}, but its registration has epoch {} (the controller throws on it)", b.broker_epoch),
                    );
                    return out;
                }
                match kind {
                    "FENCE_BROKER_RECORD" => b.fenced = true,
                    "UNFENCE_BROKER_RECORD" => b.fenced = false,
                    _ => {
                        // BrokerRegistrationFencingChange: 1 fence, 0 none, -1 unfence;
                        // in-controlled-shutdown: 1 yes, 0 none.
                        match int(d, "fenced").unwrap_or(0) {
                            1 => b.fenced = true,
                            -1 => b.fenced = false,
                            0 => {}
                            v => refuse(
                                "metadata.bad-value",
                                true,
                                format!("{kind} for broker {id} with fenced {v}, which is none of -1, 0, 1 (the controller throws on it)"),
                            ),
                        }
                        match int(d, "inControlledShutdown").unwrap_or(0) {
                            1 => b.in_controlled_shutdown = true,
                            0 => {}
                            v => refuse(
                                "metadata.bad-value",
                                true,
                                format!("{kind} for broker {id} with inControlledShutdown {v}, which is neither 0 nor 1 (the controller throws on it)"),
                            ),
                        }
                        if let Some(dirs) = strings(d, "logDirs").filter(|l| !l.is_empty()) {
                            b.log_dirs = dirs;
                        }
                    }
                }
            }
            "TOPIC_RECORD" => {
                let id = text(d, "topicId").unwrap_or_default();
                let name = text(d, "name").unwrap_or_default();
                self.topics.insert(
                    id.clone(),
                    Topic {
                        name,
                        topic_id: id,
                        partitions: BTreeMap::new(),
                    },
                );
            }
            "PARTITION_RECORD" => {
                let id = text(d, "topicId").unwrap_or_default();
                let p = int(d, "partitionId").unwrap_or_default();
                let partition = Partition {
                    partition: p,
                    replicas: ints(d, "replicas").unwrap_or_default(),
                    isr: ints(d, "isr").unwrap_or_default(),
                    eligible_leader_replicas: ints(d, "eligibleLeaderReplicas").unwrap_or_default(),
                    last_known_elr: ints(d, "lastKnownElr").unwrap_or_default(),
                    removing_replicas: ints(d, "removingReplicas").unwrap_or_default(),
                    adding_replicas: ints(d, "addingReplicas").unwrap_or_default(),
                    leader: int(d, "leader").filter(|l| *l >= 0),
                    leader_epoch: int(d, "leaderEpoch").unwrap_or_default(),
                    partition_epoch: int(d, "partitionEpoch").unwrap_or_default(),
                    leader_recovery_state: names::leader_recovery_state(
                        int(d, "leaderRecoveryState").unwrap_or(0),
                    ),
                    directories: strings(d, "directories").unwrap_or_default(),
                };
                self.unknown_brokers(&partition, &id, &mut refuse);
                match self.topics.get_mut(&id) {
                    Some(t) => {
                        t.partitions.insert(p, partition);
                    }
                    None => refuse(
                        "metadata.unknown-topic",
                        true,
                        format!("PARTITION_RECORD for partition {p} of topic id {id}, which does not exist (the controller throws \"no topic with that ID was found\")"),
                    ),
                }
            }
            "PARTITION_CHANGE_RECORD" => {
                let id = text(d, "topicId").unwrap_or_default();
                let p = int(d, "partitionId").unwrap_or_default();
                let Some(t) = self.topics.get_mut(&id) else {
                    refuse(
                        "metadata.unknown-topic",
                        true,
                        format!("PARTITION_CHANGE_RECORD for partition {p} of topic id {id}, which does not exist (the controller throws \"no topic with that ID was found\")"),
                    );
                    return out;
                };
                let Some(part) = t.partitions.get_mut(&p) else {
                    refuse(
                        "metadata.unknown-topic",
                        true,
                        format!("PARTITION_CHANGE_RECORD for partition {p} of topic {} ({id}), which has no such partition (the controller throws \"no partition with that id was found\")", t.name),
                    );
                    return out;
                };
                merge(part, d);
                let part = part.clone();
                self.unknown_brokers(&part, &id, &mut refuse);
            }
            "REMOVE_TOPIC_RECORD" => {
                let id = text(d, "topicId").unwrap_or_default();
                match self.topics.remove(&id) {
                    // The topic's configs go with it (`ConfigurationsDelta.replay(RemoveTopicRecord)`).
                    Some(t) => {
                        self.configs.remove(&(names::TOPIC_RESOURCE.to_owned(), t.name));
                    }
                    None => refuse(
                        "metadata.unknown-topic",
                        true,
                        format!("REMOVE_TOPIC_RECORD for topic id {id}, which does not exist (the controller throws \"no such topic found\")"),
                    ),
                }
            }
            "CONFIG_RECORD" => {
                let rtype = names::config_resource(int(d, "resourceType").unwrap_or(-1));
                let rname = text(d, "resourceName").unwrap_or_default();
                let key = (rtype.clone(), rname.clone());
                let name = text(d, "name").unwrap_or_default();
                match text(d, "value") {
                    Some(v) => {
                        let r = self.configs.entry(key).or_insert(ConfigResource {
                            resource_type: rtype,
                            resource_name: rname,
                            configs: BTreeMap::new(),
                        });
                        r.configs.insert(name, v);
                    }
                    None => {
                        if let Some(r) = self.configs.get_mut(&key) {
                            r.configs.remove(&name);
                            if r.configs.is_empty() {
                                self.configs.remove(&key);
                            }
                        }
                    }
                }
            }
            "CLIENT_QUOTA_RECORD" => {
                let entity = quota_entity(d);
                let key = text(d, "key").unwrap_or_default();
                if d.get("remove").and_then(Value::as_bool).unwrap_or(false) {
                    if let Some(q) = self.client_quotas.get_mut(&entity) {
                        q.quotas.remove(&key);
                        if q.quotas.is_empty() {
                            self.client_quotas.remove(&entity);
                        }
                    }
                } else {
                    let value = d.get("value").and_then(Value::as_f64).unwrap_or_default();
                    let q = self
                        .client_quotas
                        .entry(entity.clone())
                        .or_insert(ClientQuota {
                            entity,
                            quotas: BTreeMap::new(),
                        });
                    q.quotas.insert(key, value);
                }
            }
            "ACCESS_CONTROL_ENTRY_RECORD" => {
                let id = text(d, "id").unwrap_or_default();
                let acl = Acl {
                    id: id.clone(),
                    resource_type: names::acl_resource(int(d, "resourceType").unwrap_or(0)),
                    resource_name: text(d, "resourceName").unwrap_or_default(),
                    pattern_type: names::pattern_type(int(d, "patternType").unwrap_or(0)),
                    principal: text(d, "principal").unwrap_or_default(),
                    host: text(d, "host").unwrap_or_default(),
                    operation: names::acl_operation(int(d, "operation").unwrap_or(0)),
                    permission_type: names::permission_type(int(d, "permissionType").unwrap_or(0)),
                };
                self.acls.insert(id, acl);
            }
            "REMOVE_ACCESS_CONTROL_ENTRY_RECORD" => {
                let id = text(d, "id").unwrap_or_default();
                if self.acls.remove(&id).is_none() {
                    refuse(
                        "metadata.unknown-acl",
                        true,
                        format!("REMOVE_ACCESS_CONTROL_ENTRY_RECORD for ACL id {id}, which does not exist (the controller throws on it)"),
                    );
                }
            }
            "PRODUCER_IDS_RECORD" => {
                self.producer_ids = Some(ProducerIds {
                    next_producer_id: int(d, "nextProducerId").unwrap_or_default(),
                    broker_id: int(d, "brokerId").unwrap_or_default(),
                    broker_epoch: int(d, "brokerEpoch").unwrap_or_default(),
                });
            }
            "USER_SCRAM_CREDENTIAL_RECORD" | "REMOVE_USER_SCRAM_CREDENTIAL_RECORD" => {
                let user = ScramUser {
                    name: text(d, "name").unwrap_or_default(),
                    mechanism: names::scram_mechanism(int(d, "mechanism").unwrap_or(0)),
                };
                if kind == "USER_SCRAM_CREDENTIAL_RECORD" {
                    self.scram_users.insert(user);
                } else {
                    self.scram_users.remove(&user);
                }
            }
            "DELEGATION_TOKEN_RECORD" => {
                self.delegation_token_ids
                    .insert(text(d, "tokenId").unwrap_or_default());
            }
            "REMOVE_DELEGATION_TOKEN_RECORD" => {
                self.delegation_token_ids
                    .remove(&text(d, "tokenId").unwrap_or_default());
            }
            _ => {}
        }
        out
    }

    /// Replicas, ISR, ELR and leader naming a broker that was never registered in what was
    /// replayed (a broker unregistered since is normal: it was decommissioned).
    fn unknown_brokers(
        &self,
        p: &Partition,
        topic_id: &str,
        refuse: &mut impl FnMut(&'static str, bool, String),
    ) {
        let named = p
            .replicas
            .iter()
            .chain(&p.isr)
            .chain(&p.eligible_leader_replicas)
            .chain(&p.leader);
        let unknown: BTreeSet<i64> = named
            .filter(|b| !self.brokers.contains_key(b))
            .copied()
            .collect();
        if !unknown.is_empty() {
            let name = self.topics.get(topic_id).map_or(topic_id, |t| &t.name);
            refuse(
                "metadata.unknown-broker",
                false,
                format!(
                    "partition {} of {name} names broker(s) {unknown:?}, not registered at this point: they cannot host it until they register",
                    p.partition
                ),
            );
        }
    }
}

/// `PartitionRegistration.merge`: each field that the record carries replaces the old; a
/// leader change bumps the leader epoch; every change bumps the partition epoch.
fn merge(p: &mut Partition, d: &Value) {
    if let Some(r) = ints(d, "replicas") {
        p.replicas = r;
    }
    if let Some(dirs) = strings(d, "directories") {
        p.directories = dirs;
    }
    if let Some(v) = ints(d, "isr") {
        p.isr = v;
    }
    if let Some(v) = ints(d, "removingReplicas") {
        p.removing_replicas = v;
    }
    if let Some(v) = ints(d, "addingReplicas") {
        p.adding_replicas = v;
    }
    let leader = int(d, "leader").unwrap_or(NO_LEADER_CHANGE);
    if leader != NO_LEADER_CHANGE {
        p.leader = (leader >= 0).then_some(leader);
        p.leader_epoch += 1;
    }
    // -1: no change (`LeaderRecoveryState.changeTo`).
    let state = int(d, "leaderRecoveryState").unwrap_or(-1);
    if state != -1 {
        p.leader_recovery_state = names::leader_recovery_state(state);
    }
    if let Some(v) = ints(d, "eligibleLeaderReplicas") {
        p.eligible_leader_replicas = v;
    }
    if let Some(v) = ints(d, "lastKnownElr") {
        p.last_known_elr = v;
    }
    p.partition_epoch += 1;
}

/// `user=alice,client-id=app`, in the record's order; a null name is the default entity.
fn quota_entity(d: &Value) -> String {
    let list = d.get("entity").and_then(Value::as_array);
    let parts: Vec<String> = list
        .into_iter()
        .flatten()
        .map(|e| {
            let name = text(e, "entityName").unwrap_or_else(|| "<default>".to_owned());
            format!("{}={name}", text(e, "entityType").unwrap_or_default())
        })
        .collect();
    parts.join(",")
}
