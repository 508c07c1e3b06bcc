//! The control part of a control record's line (dump-log.md §3.6): end-transaction markers,
//! and the KRaft control values decoded at version 0 and printed at their own `version`.

use super::json::{write_message, Json};
use super::reader::{read_message, Buf, JavaError};
use super::schema::Msg;
use super::tables::{
    K_RAFT_VERSION_RECORD, LEADER_CHANGE_MESSAGE, SNAPSHOT_FOOTER_RECORD, SNAPSHOT_HEADER_RECORD,
    VOTERS_RECORD,
};
use crate::format::control::ControlRecordType;

const INVALID_RECORD: &str = "org.apache.kafka.common.InvalidRecordException";

/// The text appended to the record line (with its leading space) and a JSON form; `Err` is the
/// exception kafka-dump-log dies with.
pub fn control_text(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<(String, Option<serde_json::Value>), JavaError> {
    let key = key.ok_or_else(JavaError::null_pointer)?;
    if key.len() < 4 {
        return Err(JavaError::new(
            INVALID_RECORD,
            format!(
                "Invalid value size found for end control record key. Must have at least 4 bytes, but found only {}",
                key.len()
            ),
        ));
    }
    let version = i16::from_be_bytes([key[0], key[1]]);
    if version < 0 {
        return Err(JavaError::new(
            INVALID_RECORD,
            format!(
                "Invalid version found for control record: {version}. May indicate data corruption"
            ),
        ));
    }
    let type_id = i16::from_be_bytes([key[2], key[3]]);
    let kind = ControlRecordType::from_id(type_id);
    let kraft =
        |label: &str, msg: &Msg| -> Result<(String, Option<serde_json::Value>), JavaError> {
            let json = kraft_value(msg, value)?;
            Ok((
                format!(" {label} {}", json.to_text()),
                Some(json.to_value()),
            ))
        };
    match kind {
        ControlRecordType::Abort | ControlRecordType::Commit => {
            let value = value.ok_or_else(JavaError::null_pointer)?;
            if value.len() < 6 {
                return Err(JavaError::new(
                    INVALID_RECORD,
                    format!(
                        "Invalid value size found for end transaction marker. Must have at least 6 bytes, but found only {}",
                        value.len()
                    ),
                ));
            }
            let marker_version = i16::from_be_bytes([value[0], value[1]]);
            if marker_version < 0 {
                return Err(JavaError::new(
                    INVALID_RECORD,
                    format!("Invalid version found for end transaction marker: {marker_version}. May indicate data corruption"),
                ));
            }
            let epoch = i32::from_be_bytes([value[2], value[3], value[4], value[5]]);
            let json = Json::obj(vec![
                ("endTxnMarker", Json::Str(kind.name().into())),
                ("coordinatorEpoch", Json::Int(epoch.into())),
            ]);
            Ok((
                format!(" endTxnMarker: {} coordinatorEpoch: {epoch}", kind.name()),
                Some(json.to_value()),
            ))
        }
        ControlRecordType::SnapshotHeader => kraft("SnapshotHeader", &SNAPSHOT_HEADER_RECORD),
        ControlRecordType::SnapshotFooter => kraft("SnapshotFooter", &SNAPSHOT_FOOTER_RECORD),
        ControlRecordType::KraftVersion => kraft("KRaftVersion", &K_RAFT_VERSION_RECORD),
        ControlRecordType::KraftVoters => kraft("KRaftVoters", &VOTERS_RECORD),
        ControlRecordType::LeaderChange => {
            // kafka-dump-log prints only the type; the JSON form has the decoded message.
            let json = kraft_value(&LEADER_CHANGE_MESSAGE, value).ok();
            Ok((
                format!(" controlType: LEADER_CHANGE({type_id})"),
                json.map(|j| j.to_value()),
            ))
        }
        ControlRecordType::Unknown(_) => Ok((format!(" controlType: UNKNOWN({type_id})"), None)),
    }
}

/// A KRaft snapshot's SnapshotHeader value's `lastContainedLogTimestamp`: when the last
/// record the snapshot holds was written (None when the value does not decode).
pub fn snapshot_last_contained_timestamp(value: &[u8]) -> Option<i64> {
    let mut buf = Buf::new(value);
    let val = read_message(&SNAPSHOT_HEADER_RECORD, &mut buf, 0).ok()?;
    val.field(SNAPSHOT_HEADER_RECORD.root, "lastContainedLogTimestamp")?
        .as_int()
}

/// A KRaft control value: read at version 0, written at the version its `version` field claims.
fn kraft_value(msg: &Msg, value: Option<&[u8]>) -> Result<Json, JavaError> {
    let mut buf = Buf::new(value.ok_or_else(JavaError::null_pointer)?);
    let val = read_message(msg, &mut buf, 0)?;
    let version = val
        .field(msg.root, "version")
        .and_then(|v| v.as_int())
        .unwrap_or(0) as i16;
    write_message(msg, &val, version)
}
