//! `--offsets-decoder` and `--share-group-state-decoder` (dump-log.md §7.2, §7.6): the
//! coordinator record framing of formats.md §12.1 and the text kafka-dump-log makes of it.

use super::json::{write_message, Json};
use super::reader::{read_message, Buf, JavaError, Val, RUNTIME};
use super::schema::Msg;
use super::tables::*;
use super::Decoded;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    Offsets,
    ShareState,
}

/// Key and value schemas by record type (the key's version prefix), from the generated tables.
pub(super) fn schemas(topic: Topic, record_type: i16) -> Option<(&'static Msg, &'static Msg)> {
    let table = match topic {
        Topic::Offsets => OFFSETS_RECORDS,
        Topic::ShareState => SHARE_STATE_RECORDS,
    };
    table
        .iter()
        .find(|(t, _, _)| *t == record_type)
        .map(|&(_, k, v)| (k, v))
}

enum Failure {
    UnknownType(i16),
    Java(JavaError),
}

impl From<JavaError> for Failure {
    fn from(e: JavaError) -> Self {
        Failure::Java(e)
    }
}

pub fn decode(topic: Topic, offset: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Decoded {
    let Some(key) = key else {
        let which = match topic {
            Topic::Offsets => "offset",
            Topic::ShareState => "share group state",
        };
        return Decoded::fatal(JavaError::new(
            RUNTIME,
            format!(
                "Failed to decode message at offset {offset} using {which} topic decoder (message had a missing key)"
            ),
        ));
    };
    match parse(topic, key, value) {
        Ok((k, v, unknown_version)) => {
            let v = v.unwrap_or_else(|| Json::Str("<DELETE>".into()));
            Decoded {
                unknown_version,
                ..Decoded::json(Some(k), Some(v))
            }
        }
        Err(Failure::UnknownType(t)) => Decoded::text(
            Some(format!(
                "Unknown record type {t} at offset {offset}, skipping."
            )),
            None,
        ),
        Err(Failure::Java(e)) => Decoded::text(
            Some(format!(
                "Error at offset {offset}, skipping. {}",
                e.message()
            )),
            None,
        ),
    }
}

/// `CoordinatorLoaderImpl`: `deserialize` throwing `UnknownRecordTypeException` is logged and
/// skipped; any other exception (a null key included) fails the partition's load.
pub(super) fn loader_verdict(
    topic: Topic,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Option<super::LoaderVerdict> {
    use super::LoaderVerdict::{Rejects, Skips};
    let coordinator = match topic {
        Topic::Offsets => "group coordinator",
        Topic::ShareState => "share coordinator",
    };
    let fails = |why: String| {
        Rejects(format!(
            "the {coordinator} fails to load the partition ({why}): the groups it holds stay unavailable"
        ))
    };
    let Some(key) = key else {
        return Some(fails(
            "a record without a key: its deserializer throws".into(),
        ));
    };
    match parse(topic, key, value) {
        Ok(_) => None,
        Err(Failure::UnknownType(t)) => Some(Skips(format!(
            "record type {t} is unknown to the {coordinator}: its loader ignores the record"
        ))),
        Err(Failure::Java(e)) => Some(fails(format!(
            "deserializing the record throws: {}",
            e.message()
        ))),
    }
}

fn read_version(buf: &mut Buf<'_>, what: &str) -> Result<i16, JavaError> {
    buf.i16().map_err(|_| {
        JavaError::new(
            RUNTIME,
            format!("Could not read version from {what}'s buffer."),
        )
    })
}

fn read_part(msg: &Msg, buf: &mut Buf<'_>, version: i16, what: &str) -> Result<Val, JavaError> {
    read_message(msg, buf, version).map_err(|e| {
        JavaError::new(
            RUNTIME,
            format!(
                "Could not read record with version {version} from {what}'s buffer due to: {}.",
                e.message()
            ),
        )
    })
}

/// The key object and the value object (`None` for a tombstone), as kafka-dump-log builds them,
/// and what a value newer than the tables leaves unread (the deserializer ignores it).
type Parsed = (Json, Option<Json>, Option<super::UnknownVersion>);

fn parse(topic: Topic, key: &[u8], value: Option<&[u8]>) -> Result<Parsed, Failure> {
    let mut kb = Buf::new(key);
    let record_type = read_version(&mut kb, "key")?;
    let (key_msg, value_msg) =
        schemas(topic, record_type).ok_or(Failure::UnknownType(record_type))?;
    let key_val = read_part(key_msg, &mut kb, record_type, "key")?;
    let mut unknown_version = None;
    let value = match value {
        None => None,
        Some(v) => {
            let mut vb = Buf::new(v);
            let version = read_version(&mut vb, "value")?;
            let val = read_part(value_msg, &mut vb, version, "value")?;
            unknown_version =
                value_msg
                    .newer_than_known(version)
                    .map(|newest_known| super::UnknownVersion {
                        newest_known,
                        unread: vb.rest().to_vec(),
                    });
            Some((version, val))
        }
    };
    let key_json = Json::obj(vec![
        ("type", Json::Str(record_type.to_string())),
        ("data", write_message(key_msg, &key_val, record_type)?),
    ]);
    let value_json = match value {
        None => None,
        Some((version, val)) => {
            let mut data = write_message(value_msg, &val, version)?;
            if std::ptr::eq(value_msg, &GROUP_METADATA_VALUE) {
                decode_consumer_protocol(&mut data);
            }
            let label = match topic {
                Topic::Offsets => "version",
                Topic::ShareState => "type",
            };
            Some(Json::obj(vec![
                (label, Json::Str(version.to_string())),
                ("data", data),
            ]))
        }
    };
    Ok((key_json, value_json, unknown_version))
}

/// In a group whose protocolType is exactly "consumer", each member's subscription and
/// assignment bytes (int16 version + message) become their JSON; bytes that do not decode
/// stay base64. Trailing bytes are ignored.
fn decode_consumer_protocol(group: &mut Json) {
    if group.get("protocolType") != Some(&Json::Str("consumer".into())) {
        return;
    }
    let Some(Json::Arr(members)) = group.get_mut("members") else {
        return;
    };
    for member in members {
        for (field, msg) in [
            ("subscription", &CONSUMER_PROTOCOL_SUBSCRIPTION),
            ("assignment", &CONSUMER_PROTOCOL_ASSIGNMENT),
        ] {
            if let Some(slot) = member.get_mut(field) {
                if let Json::Bytes(bytes) = slot {
                    if let Ok(decoded) = decode_member_bytes(msg, bytes) {
                        *slot = decoded;
                    }
                }
            }
        }
    }
}

fn decode_member_bytes(msg: &Msg, bytes: &[u8]) -> Result<Json, JavaError> {
    let mut buf = Buf::new(bytes);
    let version = buf.i16()?;
    let val = read_message(msg, &mut buf, version)?;
    write_message(msg, &val, version)
}
