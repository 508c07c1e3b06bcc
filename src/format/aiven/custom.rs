//! The custom metadata the plugin returns from `copyLogSegmentData`, which the broker stores in
//! the segment's `__remote_log_metadata` record (`customMetadata`). It is a Kafka protocol struct
//! made of tagged fields only (`SegmentCustomMetadataField`, `SegmentCustomMetadataSerde`):
//! tag 0 `remote_size` (VARLONG: the bytes of the three objects), tag 1 `object_prefix`
//! (COMPACT_STRING), tag 2 `object_key` (COMPACT_STRING: the key without prefix and suffix).
//! No fields is no bytes at all. When present, prefix and key override those of the plugin's
//! configuration and of the segment's metadata.

use crate::format::cursor::Cursor;
use crate::format::error::{DecodeError, ErrorKind, Result};
use crate::format::varint;

const TAG_REMOTE_SIZE: u32 = 0;
const TAG_OBJECT_PREFIX: u32 = 1;
const TAG_OBJECT_KEY: u32 = 2;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CustomMetadata {
    pub remote_size: Option<i64>,
    pub object_prefix: Option<String>,
    pub object_key: Option<String>,
}

impl CustomMetadata {
    pub fn encode(&self) -> Vec<u8> {
        let mut fields: Vec<(u32, Vec<u8>)> = Vec::new();
        if let Some(size) = self.remote_size {
            let mut v = Vec::new();
            varint::write_varlong(&mut v, size);
            fields.push((TAG_REMOTE_SIZE, v));
        }
        for (tag, text) in [
            (TAG_OBJECT_PREFIX, &self.object_prefix),
            (TAG_OBJECT_KEY, &self.object_key),
        ] {
            if let Some(text) = text {
                let mut v = Vec::new();
                varint::write_unsigned_varint(&mut v, text.len() as u32 + 1);
                v.extend_from_slice(text.as_bytes());
                fields.push((tag, v));
            }
        }
        let mut out = Vec::new();
        if fields.is_empty() {
            return out;
        }
        varint::write_unsigned_varint(&mut out, fields.len() as u32);
        for (tag, value) in fields {
            varint::write_unsigned_varint(&mut out, tag);
            varint::write_unsigned_varint(&mut out, value.len() as u32);
            out.extend_from_slice(&value);
        }
        out
    }

    /// Tags other than 0–2 are skipped, as Kafka's reader keeps them aside.
    pub fn decode(bytes: &[u8]) -> Result<CustomMetadata> {
        let mut out = CustomMetadata::default();
        if bytes.is_empty() {
            return Ok(out);
        }
        let mut c = Cursor::new(bytes);
        let count = c.uvarint("tagged field count")?;
        let mut last_tag = None;
        for _ in 0..count {
            let at = c.position();
            let tag = c.uvarint("tag")?;
            if last_tag.is_some_and(|l| tag <= l) {
                return Err(DecodeError::new(
                    ErrorKind::BadValue,
                    at,
                    format!(
                        "tag {tag} after tag {}: tags must increase",
                        last_tag.unwrap_or(0)
                    ),
                ));
            }
            last_tag = Some(tag);
            let size = c.uvarint("tagged field size")? as usize;
            let value_at = c.position();
            let value = c.take(size, "tagged field value")?;
            let field = |what: &str, e: DecodeError| {
                DecodeError::new(e.kind, value_at + e.pos, format!("{what}: {}", e.message))
            };
            match tag {
                TAG_REMOTE_SIZE => {
                    let mut v = Cursor::new(value);
                    out.remote_size = Some(
                        v.varlong("remote_size")
                            .map_err(|e| field("remote_size", e))?,
                    );
                    trailing(&v, value_at, "remote_size")?;
                }
                TAG_OBJECT_PREFIX | TAG_OBJECT_KEY => {
                    let what = if tag == TAG_OBJECT_PREFIX {
                        "object_prefix"
                    } else {
                        "object_key"
                    };
                    let mut v = Cursor::new(value);
                    let len = v.uvarint(what).map_err(|e| field(what, e))?;
                    let Some(len) = len.checked_sub(1) else {
                        return Err(DecodeError::new(
                            ErrorKind::BadValue,
                            value_at,
                            format!("{what} is null; the plugin writes a string"),
                        ));
                    };
                    let text = v.take(len as usize, what).map_err(|e| field(what, e))?;
                    trailing(&v, value_at, what)?;
                    let text = std::str::from_utf8(text)
                        .map_err(|_| {
                            DecodeError::new(
                                ErrorKind::BadValue,
                                value_at,
                                format!("{what} is not UTF-8"),
                            )
                        })?
                        .to_string();
                    if tag == TAG_OBJECT_PREFIX {
                        out.object_prefix = Some(text);
                    } else {
                        out.object_key = Some(text);
                    }
                }
                _ => {}
            }
        }
        if !c.is_empty() {
            return Err(DecodeError::new(
                ErrorKind::BadLength,
                c.position(),
                format!("{} byte(s) after the tagged fields", c.remaining()),
            ));
        }
        Ok(out)
    }
}

fn trailing(v: &Cursor<'_>, base: usize, what: &str) -> Result<()> {
    if v.is_empty() {
        return Ok(());
    }
    Err(DecodeError::new(
        ErrorKind::BadLength,
        base + v.position(),
        format!(
            "{what}: {} byte(s) past its value inside its tagged field",
            v.remaining()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_in_kafka_tagged_field_layout() {
        let m = CustomMetadata {
            remote_size: Some(1000),
            object_prefix: Some("p/".into()),
            object_key: Some("k".into()),
        };
        // count 3; tag 0 size 2 varlong(1000) = zigzag 2000 = d0 0f; tag 1 size 3 "\x03p/";
        // tag 2 size 2 "\x02k".
        let want = [3, 0, 2, 0xd0, 0x0f, 1, 3, 3, b'p', b'/', 2, 2, 2, b'k'];
        assert_eq!(m.encode(), want);
        assert_eq!(CustomMetadata::decode(&want).unwrap(), m);
        assert_eq!(CustomMetadata::default().encode(), Vec::<u8>::new());
        assert_eq!(
            CustomMetadata::decode(&[]).unwrap(),
            CustomMetadata::default()
        );
        // An unknown tag is skipped.
        let mut with_unknown = want.to_vec();
        with_unknown[0] = 4;
        with_unknown.extend_from_slice(&[9, 1, 0]);
        assert_eq!(CustomMetadata::decode(&with_unknown).unwrap(), m);
    }

    #[test]
    fn hostile_lengths_are_errors() {
        assert_eq!(
            CustomMetadata::decode(&[1, 1, 200]).unwrap_err().kind,
            ErrorKind::Truncated
        );
        assert_eq!(
            CustomMetadata::decode(&[1, 1, 1, 0]).unwrap_err().kind,
            ErrorKind::BadValue
        );
        assert_eq!(
            CustomMetadata::decode(&[2, 1, 1, 1, 1, 1, 1])
                .unwrap_err()
                .kind,
            ErrorKind::BadValue
        );
        assert_eq!(
            CustomMetadata::decode(&[0, 7]).unwrap_err().kind,
            ErrorKind::BadLength
        );
    }
}
