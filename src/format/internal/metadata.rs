//! `--cluster-metadata-decoder` (dump-log.md §7.4, formats.md §12.4): the metadata record frame
//! (uvarint frame version 1, api key, version) and the record types of the generated tables.

use super::json::{write_message, Json};
use super::reader::{read_message, Buf, JResult, JavaError, Val};
use super::schema::Msg;
use super::tables::*;
use super::{Decoded, UnknownVersion};

/// Api key → enum constant name and schema, from the generated tables.
pub(super) fn record_type(api_key: i16) -> Option<(&'static str, &'static Msg)> {
    METADATA_RECORDS
        .iter()
        .find(|(k, _, _)| *k == api_key)
        .map(|&(_, name, msg)| (name, msg))
}

/// The api key of a record type's enum constant name.
pub(super) fn api_key_of(types: RecordTypes, name: &str) -> Option<i16> {
    (0..=i16::MAX).find(|k| types(*k).is_some_and(|(n, _)| n == name))
}

/// Error texts of `MetadataParseException`: only the message is printed.
fn parse_error(message: impl Into<String>) -> JavaError {
    JavaError::new(
        "org.apache.kafka.server.common.serialization.MetadataParseException",
        message,
    )
}

/// kafka-dump-log's text; the JSON also for a record newer than the tables whose newer fields
/// the pinned release calls garbage (read with the newest known layout, flagged).
pub fn decode(offset: i64, value: Option<&[u8]>) -> Decoded {
    let framed = value
        // A null value makes every read fail, starting with the frame version.
        .ok_or_else(|| parse_error("Error while reading frame version"))
        .and_then(|v| read_framed(v, record_type));
    let strict = framed
        .clone()
        .and_then(Framed::strict)
        .and_then(|f| f.to_json());
    let (payload, mut json) = match strict {
        Ok(j) => (j.to_text(), Some(j.to_value())),
        Err(e) => (
            format!("Error at {offset}, skipping. {}", e.message()),
            None,
        ),
    };
    let unknown_version = framed.ok().and_then(|f| {
        let newest_known = f.msg.newer_than_known(f.version)?;
        json = Some(f.to_json().ok()?.to_value());
        Some(UnknownVersion {
            newest_known,
            unread: f.unread,
        })
    });
    Decoded {
        payload_json: json,
        unknown_version,
        ..Decoded::text(None, Some(payload))
    }
}

/// `unsignedIntToShort`: a uvarint that must fit an int16 (read failures lose their detail).
fn frame_short(buf: &mut Buf<'_>, entity: &str) -> JResult<i16> {
    let v = buf
        .uvarint()
        .map_err(|_| parse_error(format!("Error while reading {entity}")))?;
    if v > i32::from(i16::MAX) {
        return Err(parse_error(format!("Value for {entity} was too large.")));
    }
    Ok(v as i16)
}

/// Api key → the record type's enum constant name and schema: one of the two record sets
/// that use the metadata frame (`__cluster_metadata`, `__remote_log_metadata`).
pub(super) type RecordTypes = fn(i16) -> Option<(&'static str, &'static Msg)>;

/// A record read through `AbstractApiMessageSerde.read`: the frame (uvarint frame version 1,
/// api key, version), then the whole rest as the message. Errors are its
/// `MetadataParseException`s.
#[derive(Clone)]
pub(super) struct Framed {
    pub api_key: i16,
    pub name: &'static str,
    pub msg: &'static Msg,
    pub version: i16,
    pub val: Val,
    /// Bytes after the message (garbage to `AbstractApiMessageSerde.read`).
    pub unread: Vec<u8>,
}

impl Framed {
    /// `AbstractApiMessageSerde.read`'s refusal of bytes after the message.
    pub fn strict(self) -> JResult<Framed> {
        if self.unread.is_empty() {
            return Ok(self);
        }
        Err(parse_error(format!(
            "Found {} byte(s) of garbage after {}",
            self.unread.len(),
            self.api_key
        )))
    }

    /// `{"type": NAME, "version": V, "data": {…}}`.
    pub fn to_json(&self) -> JResult<Json> {
        Ok(Json::obj(vec![
            ("type", Json::Str(self.name.to_string())),
            ("version", Json::Int(self.version.into())),
            ("data", write_message(self.msg, &self.val, self.version)?),
        ]))
    }
}

pub(super) fn read_framed(value: &[u8], types: RecordTypes) -> JResult<Framed> {
    let mut buf = Buf::new(value);
    let frame = frame_short(&mut buf, "frame version")?;
    if frame == 0 {
        return Err(parse_error(
            "Could not deserialize metadata record with frame version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.",
        ));
    }
    if frame != 1 {
        return Err(parse_error(format!(
            "Could not deserialize metadata record due to unknown frame version {frame}(only frame version 1 is supported)"
        )));
    }
    let api_key = frame_short(&mut buf, "type")?;
    let version = frame_short(&mut buf, "version")?;
    let (name, msg) = types(api_key).ok_or_else(|| {
        parse_error(format!(
            "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}"
        ))
    })?;
    let val: Val = read_message(msg, &mut buf, version)
        .map_err(|_| parse_error(format!("Failed to deserialize record with type {api_key}")))?;
    Ok(Framed {
        api_key,
        name,
        msg,
        version,
        val,
        unread: buf.rest().to_vec(),
    })
}

/// The raft client's `MetadataRecordSerde` throws on a record that does not read (a null
/// value included), and the controller stops replaying the log there.
pub(super) fn loader_verdict(value: Option<&[u8]>) -> Option<super::LoaderVerdict> {
    let why = match value {
        None => "a record without a value".to_owned(),
        // A newer version's fields are no garbage to the broker that wrote them.
        Some(v) => match read_framed(v, record_type) {
            Ok(f) if f.msg.newer_than_known(f.version).is_some() => return None,
            framed => framed.and_then(Framed::strict).err()?.message(),
        },
    };
    Some(super::LoaderVerdict::Rejects(format!(
        "the controller fails to replay the log here ({why}): it stops, and brokers report a metadata loading fault"
    )))
}
