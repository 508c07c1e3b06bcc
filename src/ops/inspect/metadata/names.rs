//! The names Kafka's tools print for the codes metadata records store (Kafka's
//! `SecurityProtocol`, `ConfigResource.Type`, `ResourceType`, `PatternType`, `AclOperation`,
//! `AclPermissionType`, `ScramMechanism`, `LeaderRecoveryState`, `MetadataVersion`). An unknown
//! code prints as `UNKNOWN(n)`.

pub const METADATA_VERSION: &str = "metadata.version";
pub const TOPIC_RESOURCE: &str = "TOPIC";

fn name_of(table: &[(i64, &str)], code: i64) -> String {
    table
        .iter()
        .find(|(c, _)| *c == code)
        .map_or_else(|| format!("UNKNOWN({code})"), |(_, n)| (*n).to_owned())
}

pub fn security_protocol(code: i64) -> String {
    let t = [
        (0, "PLAINTEXT"),
        (1, "SSL"),
        (2, "SASL_PLAINTEXT"),
        (3, "SASL_SSL"),
    ];
    name_of(&t, code)
}

pub fn config_resource(code: i64) -> String {
    let t = [
        (2, TOPIC_RESOURCE),
        (4, "BROKER"),
        (8, "BROKER_LOGGER"),
        (16, "CLIENT_METRICS"),
        (32, "GROUP"),
    ];
    name_of(&t, code)
}

pub fn acl_resource(code: i64) -> String {
    let t = [
        (1, "ANY"),
        (2, "TOPIC"),
        (3, "GROUP"),
        (4, "CLUSTER"),
        (5, "TRANSACTIONAL_ID"),
        (6, "DELEGATION_TOKEN"),
        (7, "USER"),
    ];
    name_of(&t, code)
}

pub fn pattern_type(code: i64) -> String {
    name_of(
        &[(1, "ANY"), (2, "MATCH"), (3, "LITERAL"), (4, "PREFIXED")],
        code,
    )
}

pub fn acl_operation(code: i64) -> String {
    let t = [
        (1, "ANY"),
        (2, "ALL"),
        (3, "READ"),
        (4, "WRITE"),
        (5, "CREATE"),
        (6, "DELETE"),
        (7, "ALTER"),
        (8, "DESCRIBE"),
        (9, "CLUSTER_ACTION"),
        (10, "DESCRIBE_CONFIGS"),
        (11, "ALTER_CONFIGS"),
        (12, "IDEMPOTENT_WRITE"),
        (13, "CREATE_TOKENS"),
        (14, "DESCRIBE_TOKENS"),
    ];
    name_of(&t, code)
}

pub fn permission_type(code: i64) -> String {
    name_of(&[(1, "ANY"), (2, "DENY"), (3, "ALLOW")], code)
}

pub fn scram_mechanism(code: i64) -> String {
    name_of(&[(1, "SCRAM-SHA-256"), (2, "SCRAM-SHA-512")], code)
}

pub fn leader_recovery_state(code: i64) -> &'static str {
    match code {
        0 => "RECOVERED",
        1 => "RECOVERING",
        _ => "UNKNOWN",
    }
}

/// The release names of `metadata.version` feature levels up to 3.9 (levels above were still
/// being renumbered in the pinned trunk, so they print as numbers only).
pub fn metadata_version(level: i64) -> Option<&'static str> {
    const NAMES: [&str; 21] = [
        "3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0",
        "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV1",
        "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0",
    ];
    usize::try_from(level - 1)
        .ok()
        .and_then(|i| NAMES.get(i).copied())
}
