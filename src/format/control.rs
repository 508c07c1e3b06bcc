//! Control records of v2 control batches (formats.md §6): the 4-byte key that names the
//! control type, and the end-transaction marker value. KRaft control values are message
//! schemas and are decoded with the internal-topic decoders.

use super::cursor::Cursor;
use super::error::{DecodeError, ErrorKind, Result};

pub const CONTROL_KEY_BYTES: usize = 4;
pub const END_TXN_MARKER_VALUE_BYTES: usize = 6;
pub const CURRENT_CONTROL_KEY_VERSION: i16 = 0;
pub const CURRENT_END_TXN_MARKER_VERSION: i16 = 0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    Abort,
    Commit,
    LeaderChange,
    SnapshotHeader,
    SnapshotFooter,
    KraftVersion,
    KraftVoters,
    /// A type id this version does not know; readers ignore such records.
    Unknown(i16),
}

impl ControlRecordType {
    pub fn from_id(id: i16) -> Self {
        match id {
            0 => Self::Abort,
            1 => Self::Commit,
            2 => Self::LeaderChange,
            3 => Self::SnapshotHeader,
            4 => Self::SnapshotFooter,
            5 => Self::KraftVersion,
            6 => Self::KraftVoters,
            n => Self::Unknown(n),
        }
    }

    pub fn id(self) -> i16 {
        match self {
            Self::Abort => 0,
            Self::Commit => 1,
            Self::LeaderChange => 2,
            Self::SnapshotHeader => 3,
            Self::SnapshotFooter => 4,
            Self::KraftVersion => 5,
            Self::KraftVoters => 6,
            Self::Unknown(n) => n,
        }
    }

    /// Kafka's enum constant name (`UNKNOWN` for unknown ids).
    pub fn name(self) -> &'static str {
        match self {
            Self::Abort => "ABORT",
            Self::Commit => "COMMIT",
            Self::LeaderChange => "LEADER_CHANGE",
            Self::SnapshotHeader => "SNAPSHOT_HEADER",
            Self::SnapshotFooter => "SNAPSHOT_FOOTER",
            Self::KraftVersion => "KRAFT_VERSION",
            Self::KraftVoters => "KRAFT_VOTERS",
            Self::Unknown(_) => "UNKNOWN",
        }
    }
}

/// Parses a control record key: int16 version (≥ 0) then int16 type.
pub fn decode_control_key(key: Option<&[u8]>) -> Result<ControlRecordType> {
    let key = key.ok_or_else(|| {
        DecodeError::new(
            ErrorKind::BadValue,
            0,
            "Failed to parse control record: the key is null",
        )
    })?;
    if key.len() < CONTROL_KEY_BYTES {
        return Err(DecodeError::new(
            ErrorKind::Truncated,
            0,
            format!(
                "Invalid control record key of {} byte(s): expected at least 4",
                key.len()
            ),
        ));
    }
    let mut c = Cursor::new(key);
    let version = c.i16("control key version")?;
    if version < 0 {
        return Err(DecodeError::new(
            ErrorKind::BadValue,
            0,
            format!(
                "Invalid version found for control record: {version}. May indicate data corruption"
            ),
        ));
    }
    Ok(ControlRecordType::from_id(c.i16("control record type")?))
}

pub fn encode_control_key(t: ControlRecordType) -> [u8; CONTROL_KEY_BYTES] {
    let mut out = [0u8; CONTROL_KEY_BYTES];
    out[..2].copy_from_slice(&CURRENT_CONTROL_KEY_VERSION.to_be_bytes());
    out[2..].copy_from_slice(&t.id().to_be_bytes());
    out
}

/// The value of an ABORT or COMMIT control record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndTxnMarker {
    pub version: i16,
    pub coordinator_epoch: i32,
}

impl EndTxnMarker {
    pub fn decode(value: Option<&[u8]>) -> Result<Self> {
        let value = value.unwrap_or(&[]);
        if value.len() < END_TXN_MARKER_VALUE_BYTES {
            return Err(DecodeError::new(
                ErrorKind::Truncated,
                0,
                format!(
                    "Invalid end transaction marker value of {} byte(s): expected at least 6",
                    value.len()
                ),
            ));
        }
        let mut c = Cursor::new(value);
        let version = c.i16("end transaction marker version")?;
        if version < 0 {
            return Err(DecodeError::new(
                ErrorKind::BadValue,
                0,
                format!("Invalid version found for end transaction marker: {version}. May indicate data corruption"),
            ));
        }
        Ok(EndTxnMarker {
            version,
            coordinator_epoch: c.i32("coordinator epoch")?,
        })
    }

    pub fn encode(coordinator_epoch: i32) -> [u8; END_TXN_MARKER_VALUE_BYTES] {
        let mut out = [0u8; END_TXN_MARKER_VALUE_BYTES];
        out[..2].copy_from_slice(&CURRENT_END_TXN_MARKER_VERSION.to_be_bytes());
        out[2..].copy_from_slice(&coordinator_epoch.to_be_bytes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_commit_marker() {
        // formats.md §3.6 batch B: key = version 0 / type 1, value = version 0 / epoch 5.
        assert_eq!(encode_control_key(ControlRecordType::Commit), [0, 0, 0, 1]);
        assert_eq!(EndTxnMarker::encode(5), [0, 0, 0, 0, 0, 5]);
        assert_eq!(
            decode_control_key(Some(&[0, 0, 0, 1])).unwrap(),
            ControlRecordType::Commit
        );
        assert_eq!(
            EndTxnMarker::decode(Some(&[0, 0, 0, 0, 0, 5])).unwrap(),
            EndTxnMarker {
                version: 0,
                coordinator_epoch: 5
            }
        );
    }

    #[test]
    fn bad_keys_and_values() {
        assert!(decode_control_key(None).is_err());
        assert!(decode_control_key(Some(&[0, 0, 1])).is_err());
        assert!(decode_control_key(Some(&[0xff, 0xff, 0, 1])).is_err());
        assert_eq!(
            decode_control_key(Some(&[0, 7, 0, 0x20])).unwrap(),
            ControlRecordType::Unknown(32)
        );
        assert!(EndTxnMarker::decode(Some(&[0, 0, 0, 0, 5])).is_err());
        assert!(EndTxnMarker::decode(None).is_err());
    }
}
