//! Protobuf values (`--key-decoder protobuf` / `--value-decoder protobuf`): the Confluent wire
//! format against a schema per schema id, or plain messages of one named type, decoded with
//! `prost-reflect` and printed in the canonical protobuf JSON mapping.
//!
//! The Confluent wire format for Protobuf (Schema Registry's `KafkaProtobufSerializer` and its
//! `MessageIndexes`): magic byte 0, the schema id (big-endian int32), then which message of
//! the schema's `.proto` file the value is: a list of indexes, its length and each index a
//! zigzag varint (as Kafka's `ByteUtils.writeVarint`), the first index among the file's
//! top-level messages, each next among the nested messages of the one before. The list `[0]`
//! (the file's first message, the usual case) is written as the single byte 0, a length of
//! zero. Synthetic map-entry types are not counted: the registry numbers the messages of the
//! `.proto` text, where a map is a field.

use std::collections::HashMap;

use prost_reflect::{DescriptorPool, DynamicMessage, FileDescriptor, Kind, MessageDescriptor};
use serde_json::Value;

use super::confluent_schema;
use crate::format::varint::decode_varint;

/// Protobuf writer schemas: the `.proto` file of each Confluent schema id, or one message
/// type for values without the prefix.
#[derive(Debug, Default)]
pub struct ProtoSchemas {
    by_id: HashMap<u32, FileDescriptor>,
    plain: Option<MessageDescriptor>,
}

impl ProtoSchemas {
    /// Schemas by Confluent schema id (`by_id`, each the schema's own file with its imports
    /// resolved) or the one message type of plain values.
    pub fn new(by_id: Vec<(u32, FileDescriptor)>, plain: Option<MessageDescriptor>) -> Self {
        ProtoSchemas {
            by_id: by_id.into_iter().collect(),
            plain,
        }
    }

    /// The message type a table of these values takes: the plain one, or the first message
    /// of the highest schema id's file (the message index `[0]`, the usual case).
    pub fn newest(&self) -> Option<MessageDescriptor> {
        self.plain.clone().or_else(|| {
            let (_, file) = self.by_id.iter().max_by_key(|(id, _)| **id)?;
            file.messages().next()
        })
    }

    pub(super) fn decode(&self, b: &[u8]) -> Result<Value, String> {
        let (message, body) = match &self.plain {
            Some(m) => (m.clone(), b),
            None => {
                let (file, rest) = confluent_schema(&self.by_id, b)?;
                let (indexes, used) = message_indexes(rest)?;
                (message_at(file, &indexes)?, &rest[used..])
            }
        };
        let decoded = DynamicMessage::decode(message.clone(), body)
            .map_err(|e| format!("invalid Protobuf {}: {e}", message.full_name()))?;
        let mut json = serde_json::to_value(&decoded)
            .map_err(|e| format!("Protobuf {} without a JSON form: {e}", message.full_name()))?;
        sort_maps(&message, &mut json);
        Ok(json)
    }
}

/// Puts the entries of every map field of `json` (a message of type `message` in the JSON
/// mapping) in key order: decoded maps have no order, and the same record must print the same.
fn sort_maps(message: &MessageDescriptor, json: &mut Value) {
    // The well-known types have JSON forms of their own, not their fields.
    if message.full_name().starts_with("google.protobuf.") {
        return;
    }
    let Value::Object(object) = json else {
        return;
    };
    for field in message.fields() {
        let Some(value) = object.get_mut(field.json_name()) else {
            continue;
        };
        let Kind::Message(inner) = field.kind() else {
            continue;
        };
        if field.is_map() {
            let Value::Object(entries) = value else {
                continue;
            };
            entries.sort_keys();
            if let Kind::Message(values) = inner.map_entry_value_field().kind() {
                entries.values_mut().for_each(|v| sort_maps(&values, v));
            }
        } else if let Value::Array(items) = value {
            items.iter_mut().for_each(|v| sort_maps(&inner, v));
        } else {
            sort_maps(&inner, value);
        }
    }
}

/// A `FileDescriptorSet` (`protoc --descriptor_set_out --include_imports`): the schema's own
/// file, the set's last (protoc lists each file after the files it imports).
pub fn descriptor_set_file(bytes: &[u8]) -> Result<FileDescriptor, String> {
    let pool = DescriptorPool::decode(bytes)
        .map_err(|e| format!("invalid Protobuf descriptor set: {e}"))?;
    pool.files()
        .last()
        .ok_or_else(|| "the Protobuf descriptor set holds no file".to_string())
}

/// The message type `name` (`package.Message`, a nested one as `package.Outer.Inner`) among
/// the files of `file`'s pool.
pub fn message_named(file: &FileDescriptor, name: &str) -> Result<MessageDescriptor, String> {
    let pool = file.parent_pool();
    pool.get_message_by_name(name.trim_start_matches('.'))
        .ok_or_else(|| {
            let known: Vec<String> = pool
                .all_messages()
                .map(|m| m.full_name().to_string())
                .collect();
            format!(
                "no message type {name} in the Protobuf schema (it has {})",
                known.join(", ")
            )
        })
}

/// The message-index list at the start of `b` and the bytes it took.
fn message_indexes(b: &[u8]) -> Result<(Vec<i32>, usize), String> {
    let bad = |e| format!("invalid Protobuf message-index list: {e}");
    let (count, mut used) = decode_varint(b).map_err(bad)?;
    if count == 0 {
        return Ok((vec![0], used));
    }
    // Each index takes at least a byte: a longer list cannot be there.
    if count < 0 || count as usize > b.len() - used {
        return Err(format!(
            "invalid Protobuf message-index list: length {count} with {} byte(s) left",
            b.len() - used
        ));
    }
    let mut indexes = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let (index, n) = decode_varint(&b[used..]).map_err(bad)?;
        indexes.push(index);
        used += n;
    }
    Ok((indexes, used))
}

/// The message of `file` that `indexes` name (map entries not counted).
fn message_at(file: &FileDescriptor, indexes: &[i32]) -> Result<MessageDescriptor, String> {
    let pick = |mut messages: Box<dyn Iterator<Item = MessageDescriptor> + '_>, i: i32| {
        usize::try_from(i)
            .ok()
            .and_then(|i| messages.nth(i))
            .ok_or_else(|| {
                format!(
                    "message index {indexes:?} names no message of {}",
                    file.name()
                )
            })
    };
    let mut message = pick(Box::new(file.messages()), indexes[0])?;
    for &i in &indexes[1..] {
        let nested: Vec<MessageDescriptor> = message
            .child_messages()
            .filter(|m| !m.is_map_entry())
            .collect();
        message = pick(Box::new(nested.into_iter()), i)?;
    }
    Ok(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed zigzag varints: 0 alone is [0]; 2 is a length of 1; 0x96 0x01 is
    /// zigzag 150, the index 75; 0x03 is -2, refused as a length.
    #[test]
    fn message_index_lists() {
        assert_eq!(message_indexes(&[0x00, 0xaa]).unwrap(), (vec![0], 1));
        assert_eq!(message_indexes(&[0x02, 0x00]).unwrap(), (vec![0], 2));
        assert_eq!(
            message_indexes(&[0x04, 0x96, 0x01, 0x02, 0xff]).unwrap(),
            (vec![75, 1], 4)
        );
        assert!(message_indexes(&[0x03]).unwrap_err().contains("length -2"));
        assert!(message_indexes(&[0x06, 0x00])
            .unwrap_err()
            .contains("length 3"));
        assert!(message_indexes(&[]).is_err());
    }
}
