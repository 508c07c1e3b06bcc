//! Decoders of ordinary record keys and values (`kseg dump --key-decoder` / `--value-decoder`,
//! and kafka-dump-log's `--key-decoder-class` / `--value-decoder-class`): each gives the text
//! printed after `key: ` / `payload: ` and a JSON value, or says why the bytes do not decode.
//!
//! kafka-dump-log's decoder classes (Kafka's `tools-api`, `StringDecoder.java`,
//! `IntegerDecoder.java`, `LongDecoder.java`, `DefaultDecoder.java`; before 4.0 the same
//! classes in `kafka.serializer`): `new String(bytes, UTF_8)`, `ByteBuffer.wrap(bytes).getInt()`
//! / `getLong()` (the leading 4 / 8 bytes, big-endian, the rest ignored; fewer bytes throw a
//! `BufferUnderflowException` that kills kafka-dump-log, here a per-record error) and the bytes
//! themselves, which Scala's string interpolation prints as the array's identity (`[B@1b6d3586`,
//! a JVM address no other process can reproduce): kseg prints them as hex instead.

use std::collections::HashMap;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::Value;

pub mod protobuf;
use super::java_utf8;
pub use protobuf::ProtoSchemas;

/// A decoded key or value: the text form and the JSON form.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload {
    pub text: String,
    pub json: Value,
}

/// How to read a key or value.
#[derive(Debug, Clone)]
pub enum PayloadDecoder {
    /// UTF-8, malformed sequences replaced (`StringDecoder`).
    String,
    /// A big-endian int32 from the first 4 bytes (`IntegerDecoder`).
    Int,
    /// A big-endian int64 from the first 8 bytes (`LongDecoder`).
    Long,
    Hex,
    Base64,
    /// A JSON document, printed compactly.
    Json,
    /// Avro: the Confluent wire format against local schemas, or plain Avro ([`AvroSchemas`]).
    Avro(Arc<AvroSchemas>),
    /// Protobuf: the Confluent wire format against local schemas, or plain messages of one
    /// type ([`ProtoSchemas`]).
    Protobuf(Arc<ProtoSchemas>),
}

/// The magic byte that starts a value in the Confluent wire format (then a big-endian int32
/// schema id, then the encoded value).
const CONFLUENT_MAGIC: u8 = 0;

/// Avro writer schemas: by Confluent schema id, or one schema for values without the prefix.
#[derive(Debug, Default)]
pub struct AvroSchemas {
    by_id: HashMap<u32, apache_avro::Schema>,
    plain: Option<apache_avro::Schema>,
}

impl AvroSchemas {
    /// Schemas from their JSON texts (`.avsc`): `by_id` for the wire format, or `plain` for
    /// values that are bare Avro datums. Errors name the schema that does not parse.
    pub fn parse(by_id: &[(u32, String)], plain: Option<&str>) -> Result<AvroSchemas, String> {
        let parse = |text: &str, what: &str| {
            apache_avro::Schema::parse_str(text)
                .map_err(|e| format!("{what}: invalid Avro schema: {e}"))
        };
        let mut out = AvroSchemas::default();
        for (id, text) in by_id {
            out.by_id
                .insert(*id, parse(text, &format!("schema id {id}"))?);
        }
        out.plain = plain.map(|t| parse(t, "the Avro schema")).transpose()?;
        Ok(out)
    }

    /// The schema a table of these values takes: the plain one, or the highest schema id's
    /// (the newest, as a registry numbers them).
    pub fn newest(&self) -> Option<&apache_avro::Schema> {
        self.plain
            .as_ref()
            .or_else(|| self.by_id.iter().max_by_key(|(id, _)| **id).map(|(_, s)| s))
    }

    fn decode(&self, b: &[u8]) -> Result<Value, String> {
        let (schema, mut datum) = match &self.plain {
            Some(schema) => (schema, b),
            None => confluent_schema(&self.by_id, b)?,
        };
        let value = apache_avro::from_avro_datum(schema, &mut datum, None)
            .map_err(|e| format!("invalid Avro datum: {e}"))?;
        if !datum.is_empty() {
            return Err(format!("{} byte(s) after the Avro datum", datum.len()));
        }
        avro_json(value)
    }
}

/// The JSON form of an Avro value, as Avro's JSON encoding (Java's `JsonEncoder`, which
/// kafka-avro-console-consumer prints through) writes `bytes` and `fixed`: a string of one
/// character per byte, the byte's ISO-8859-1 code point. Unions print their value alone
/// (Java's encoder wraps it in `{"type": value}`).
fn avro_json(value: apache_avro::types::Value) -> Result<Value, String> {
    use apache_avro::types::Value as Avro;
    let latin1 = |b: &[u8]| Value::String(b.iter().map(|&x| char::from(x)).collect());
    let fields = |items: Vec<(String, Avro)>| {
        items
            .into_iter()
            .map(|(k, v)| Ok((k, avro_json(v)?)))
            .collect::<Result<serde_json::Map<_, _>, String>>()
            .map(Value::Object)
    };
    match value {
        Avro::Bytes(b) | Avro::Fixed(_, b) => Ok(latin1(&b)),
        Avro::Decimal(d) => Vec::<u8>::try_from(&d)
            .map(|b| latin1(&b))
            .map_err(|e| format!("Avro decimal without bytes: {e}")),
        Avro::Duration(d) => Ok(latin1(&<[u8; 12]>::from(d))),
        Avro::Union(_, v) => avro_json(*v),
        Avro::Array(items) => items
            .into_iter()
            .map(avro_json)
            .collect::<Result<_, _>>()
            .map(Value::Array),
        // A map's entries in key order: the decoded map has none, the output one.
        Avro::Map(items) => {
            let mut items: Vec<_> = items.into_iter().collect();
            items.sort_by(|a, b| a.0.cmp(&b.0));
            fields(items)
        }
        Avro::Record(items) => fields(items),
        other => Value::try_from(other).map_err(|e| format!("Avro value without a JSON form: {e}")),
    }
}

/// The local schema of a value in the Confluent wire format, and the bytes after its prefix.
fn confluent_schema<'s, 'b, T>(
    by_id: &'s HashMap<u32, T>,
    b: &'b [u8],
) -> Result<(&'s T, &'b [u8]), String> {
    let id = confluent_schema_id(b)?;
    let schema = by_id
        .get(&id)
        .ok_or_else(|| format!("schema id {id} is not among the local schemas"))?;
    Ok((schema, &b[5..]))
}

/// The schema id of a value in the Confluent wire format.
fn confluent_schema_id(b: &[u8]) -> Result<u32, String> {
    match b {
        [CONFLUENT_MAGIC, a, b2, c, d, ..] => Ok(u32::from_be_bytes([*a, *b2, *c, *d])),
        [CONFLUENT_MAGIC, ..] | [] => Err(format!(
            "not the Confluent wire format: {} byte(s), expected a magic byte and a 4-byte schema id",
            b.len()
        )),
        [m, ..] => Err(format!(
            "not the Confluent wire format: magic byte {m:#04x}, expected 0x00"
        )),
    }
}

/// The decoder classes kafka-dump-log ships, by class name (4.0's `tools-api` and the
/// `kafka.serializer` classes that kafka-dump-log took before 4.0).
pub const DECODER_CLASSES: &[(&str, PayloadDecoder)] = &[
    (
        "org.apache.kafka.tools.api.StringDecoder",
        PayloadDecoder::String,
    ),
    (
        "org.apache.kafka.tools.api.IntegerDecoder",
        PayloadDecoder::Int,
    ),
    (
        "org.apache.kafka.tools.api.LongDecoder",
        PayloadDecoder::Long,
    ),
    (
        "org.apache.kafka.tools.api.DefaultDecoder",
        PayloadDecoder::Hex,
    ),
    ("kafka.serializer.StringDecoder", PayloadDecoder::String),
    ("kafka.serializer.IntegerDecoder", PayloadDecoder::Int),
    ("kafka.serializer.LongDecoder", PayloadDecoder::Long),
    ("kafka.serializer.DefaultDecoder", PayloadDecoder::Hex),
];

impl PayloadDecoder {
    /// The decoder standing in for a kafka-dump-log decoder class.
    pub fn from_class(class: &str) -> Option<PayloadDecoder> {
        DECODER_CLASSES
            .iter()
            .find(|(name, _)| *name == class)
            .map(|(_, d)| d.clone())
    }

    pub fn decode(&self, b: &[u8]) -> Result<Payload, String> {
        let text = |s: String| Payload {
            json: Value::String(s.clone()),
            text: s,
        };
        match self {
            PayloadDecoder::String => Ok(text(java_utf8::lossy(b).into_owned())),
            PayloadDecoder::Int => {
                let n = i32::from_be_bytes(leading(b)?);
                Ok(Payload {
                    text: n.to_string(),
                    json: n.into(),
                })
            }
            PayloadDecoder::Long => {
                let n = i64::from_be_bytes(leading(b)?);
                Ok(Payload {
                    text: n.to_string(),
                    json: n.into(),
                })
            }
            PayloadDecoder::Hex => Ok(text(b.iter().map(|x| format!("{x:02x}")).collect())),
            PayloadDecoder::Base64 => Ok(text(STANDARD.encode(b))),
            PayloadDecoder::Json => {
                { serde_json::from_slice(b).map_err(|e| format!("invalid JSON: {e}")) }.map(compact)
            }
            PayloadDecoder::Avro(schemas) => schemas.decode(b).map(compact),
            PayloadDecoder::Protobuf(schemas) => schemas.decode(b).map(compact),
        }
    }
}

/// A JSON value and its compact text.
fn compact(json: Value) -> Payload {
    Payload {
        text: json.to_string(),
        json,
    }
}

/// The first `N` bytes, as `ByteBuffer.getInt` / `getLong` read them.
fn leading<const N: usize>(b: &[u8]) -> Result<[u8; N], String> {
    b.get(..N)
        .and_then(|s| <[u8; N]>::try_from(s).ok())
        .ok_or_else(|| format!("expected at least {N} bytes, found {}", b.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_decoder_classes() {
        // IntegerDecoder / LongDecoder: big-endian, leading bytes only (ByteBuffer.getInt).
        let int = PayloadDecoder::from_class("org.apache.kafka.tools.api.IntegerDecoder").unwrap();
        assert_eq!(int.decode(&[0xff, 0xff, 0xff, 0xfe]).unwrap().text, "-2");
        assert_eq!(int.decode(&[0, 0, 1, 0, 9, 9]).unwrap().text, "256");
        assert_eq!(
            int.decode(&[0, 1]).unwrap_err(),
            "expected at least 4 bytes, found 2"
        );
        let long = PayloadDecoder::from_class("kafka.serializer.LongDecoder").unwrap();
        assert_eq!(
            long.decode(&[0x80, 0, 0, 0, 0, 0, 0, 0]).unwrap().json,
            Value::from(i64::MIN)
        );
        // StringDecoder: one U+FFFD per malformed sequence.
        let s = PayloadDecoder::from_class("org.apache.kafka.tools.api.StringDecoder").unwrap();
        assert_eq!(s.decode(b"a\xffb").unwrap().text, "a\u{fffd}b");
        assert!(PayloadDecoder::from_class("com.example.Mine").is_none());
    }

    #[test]
    fn json_hex_base64() {
        let j = PayloadDecoder::Json
            .decode(br#" { "a" : [1, 2] } "#)
            .unwrap();
        assert_eq!(j.text, r#"{"a":[1,2]}"#);
        assert!(PayloadDecoder::Json
            .decode(b"{nope")
            .unwrap_err()
            .starts_with("invalid JSON"));
        assert_eq!(PayloadDecoder::Hex.decode(&[0, 0xab]).unwrap().text, "00ab");
        assert_eq!(PayloadDecoder::Base64.decode(&[1, 2]).unwrap().text, "AQI=");
    }
}
