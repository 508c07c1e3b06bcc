//! Decoded keys and values as typed columns (`decodedKey`, `decodedValue`): the Arrow type of
//! a side comes from its writer schema (Avro, Protobuf), from a sample of its JSON documents,
//! or is text; each value is the decoder's JSON (the one `dump --json` prints) laid into that
//! type, fields matched by name. A value that does not decode, or whose JSON does not fit the
//! type, is null and counted.
//!
//! Avro: records → struct, arrays → list, maps → map, enums and uuids → string, a union with
//! one non-null branch → that branch, other unions → their JSON text, bytes, fixed, decimals
//! and durations → binary (their JSON is one character per byte), date → date, timestamps →
//! timestamp. Protobuf (JSON names): messages → struct, repeated → list, maps → map, enums →
//! string, 64-bit integers from their JSON strings, bytes from base64,
//! `google.protobuf.Timestamp` → timestamp (µs), wrappers → their value, other well-known
//! types → their JSON text. Recursive types and empty records, which Parquet cannot hold,
//! are JSON text at the level they recur.

use std::collections::HashSet;
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Date32Builder, Float32Builder, Float64Builder, Int32Builder,
    Int64Builder, StringBuilder, TimestampMicrosecondBuilder, TimestampMillisecondBuilder,
    TimestampNanosecondBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, ListArray, MapArray, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use base64::Engine as _;
use prost_reflect::{Kind, MessageDescriptor};
use serde_json::Value;

use crate::format::payload::PayloadDecoder;

/// How a side's binary values are written in its JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BytesJson {
    /// Avro's JSON encoding: a character per byte.
    Latin1,
    /// Protobuf's JSON mapping: base64.
    Base64,
}

/// One decoded side: its decoder, the column's type, and the values of the rows being built.
pub struct DecodedSide {
    pub decoder: PayloadDecoder,
    pub data_type: DataType,
    bytes: BytesJson,
    values: Vec<Option<Value>>,
    /// Rows whose bytes did not decode or whose JSON did not fit the type.
    pub undecoded: u64,
}

impl DecodedSide {
    /// The side decoded by `decoder`; `sample` is the JSON documents to infer a JSON side's
    /// type from (none: the JSON text).
    pub fn new(decoder: PayloadDecoder, sample: &[Value]) -> DecodedSide {
        let (data_type, bytes) = match &decoder {
            PayloadDecoder::Int => (DataType::Int32, BytesJson::Latin1),
            PayloadDecoder::Long => (DataType::Int64, BytesJson::Latin1),
            PayloadDecoder::Avro(s) => (
                s.newest().map_or(DataType::Utf8, avro_type),
                BytesJson::Latin1,
            ),
            PayloadDecoder::Protobuf(s) => (
                s.newest()
                    .map_or(DataType::Utf8, |m| message_type(&m, &mut Vec::new())),
                BytesJson::Base64,
            ),
            PayloadDecoder::Json => (
                sample
                    .iter()
                    .fold(None, |t, v| Some(merge(t, json_type(v))))
                    .flatten()
                    .unwrap_or(DataType::Utf8),
                BytesJson::Latin1,
            ),
            PayloadDecoder::String | PayloadDecoder::Hex | PayloadDecoder::Base64 => {
                (DataType::Utf8, BytesJson::Latin1)
            }
        };
        DecodedSide {
            decoder,
            data_type,
            bytes,
            values: Vec::new(),
            undecoded: 0,
        }
    }

    /// Appends the reading of one row's key or value (`None`: null).
    pub fn push(&mut self, b: Option<&[u8]>) {
        let v = b.and_then(|b| match self.decoder.decode(b) {
            Ok(p) if fits(&self.data_type, &p.json, self.bytes) => Some(p.json),
            _ => {
                self.undecoded += 1;
                None
            }
        });
        self.values.push(v);
    }

    /// The column of the rows pushed since the last call.
    pub fn finish(&mut self) -> ArrayRef {
        let values: Vec<Option<&Value>> = self.values.iter().map(Option::as_ref).collect();
        let a = build(&self.data_type, &values, self.bytes);
        self.values.clear();
        a
    }
}

fn nullable(name: &str, t: DataType) -> Field {
    Field::new(name, t, true)
}

fn map_type(value: DataType) -> DataType {
    let entries = Fields::from(vec![
        Field::new("key", DataType::Utf8, false),
        nullable("value", value),
    ]);
    DataType::Map(
        Arc::new(Field::new("entries", DataType::Struct(entries), false)),
        false,
    )
}

fn list_type(item: DataType) -> DataType {
    DataType::List(Arc::new(nullable("item", item)))
}

/// A struct of `fields`; none (Parquet has no empty group) is text.
fn struct_type(fields: Vec<Field>) -> DataType {
    if fields.is_empty() {
        DataType::Utf8
    } else {
        DataType::Struct(Fields::from(fields))
    }
}

fn utc(unit: TimeUnit) -> DataType {
    DataType::Timestamp(unit, Some("UTC".into()))
}

/// The Arrow type of the newest writer schema.
fn avro_type(schema: &apache_avro::Schema) -> DataType {
    let resolved = apache_avro::schema::ResolvedSchema::try_from(schema).ok();
    let names = resolved.as_ref().map(|r| r.get_names());
    avro(schema, names, &mut HashSet::new())
}

fn avro(
    s: &apache_avro::Schema,
    names: Option<&apache_avro::schema::NamesRef<'_>>,
    open: &mut HashSet<apache_avro::schema::Name>,
) -> DataType {
    use apache_avro::Schema as S;
    match s {
        S::Boolean => DataType::Boolean,
        S::Int | S::TimeMillis => DataType::Int32,
        S::Long | S::TimeMicros => DataType::Int64,
        S::Float => DataType::Float32,
        S::Double => DataType::Float64,
        S::Bytes | S::Fixed(_) | S::Decimal(_) | S::Duration => DataType::Binary,
        S::Date => DataType::Date32,
        S::TimestampMillis => utc(TimeUnit::Millisecond),
        S::TimestampMicros => utc(TimeUnit::Microsecond),
        S::TimestampNanos => utc(TimeUnit::Nanosecond),
        S::LocalTimestampMillis => DataType::Timestamp(TimeUnit::Millisecond, None),
        S::LocalTimestampMicros => DataType::Timestamp(TimeUnit::Microsecond, None),
        S::LocalTimestampNanos => DataType::Timestamp(TimeUnit::Nanosecond, None),
        S::Array(a) => list_type(avro(&a.items, names, open)),
        S::Map(m) => map_type(avro(&m.types, names, open)),
        S::Union(u) => match u
            .variants()
            .iter()
            .filter(|v| **v != S::Null)
            .collect::<Vec<_>>()[..]
        {
            [one] => avro(one, names, open),
            _ => DataType::Utf8,
        },
        S::Record(r) => {
            if !open.insert(r.name.clone()) {
                return DataType::Utf8;
            }
            let fields = r
                .fields
                .iter()
                .map(|f| nullable(&f.name, avro(&f.schema, names, open)))
                .collect();
            open.remove(&r.name);
            struct_type(fields)
        }
        S::Ref { name } => match names.and_then(|n| n.get(name)) {
            Some(def) if !open.contains(name) => avro(def, names, open),
            _ => DataType::Utf8,
        },
        S::Null | S::String | S::Enum(_) | S::Uuid | S::BigDecimal => DataType::Utf8,
    }
}

/// The Arrow type of a message; `open` holds the messages being laid out (a recursive one is
/// text where it recurs).
fn message_type(m: &MessageDescriptor, open: &mut Vec<String>) -> DataType {
    match m.full_name() {
        "google.protobuf.Timestamp" => return utc(TimeUnit::Microsecond),
        "google.protobuf.DoubleValue" => return DataType::Float64,
        "google.protobuf.FloatValue" => return DataType::Float32,
        "google.protobuf.Int64Value" => return DataType::Int64,
        "google.protobuf.UInt64Value" => return DataType::UInt64,
        "google.protobuf.Int32Value" => return DataType::Int32,
        "google.protobuf.UInt32Value" => return DataType::UInt32,
        "google.protobuf.BoolValue" => return DataType::Boolean,
        "google.protobuf.BytesValue" => return DataType::Binary,
        n if n.starts_with("google.protobuf.") || open.iter().any(|o| o == n) => {
            return DataType::Utf8
        }
        _ => {}
    }
    open.push(m.full_name().to_owned());
    let fields = m
        .fields()
        .map(|f| {
            let t = if f.is_map() {
                let Kind::Message(entry) = f.kind() else {
                    unreachable!("a map field's kind is its entry message")
                };
                map_type(field_type(&entry.map_entry_value_field().kind(), open))
            } else if f.is_list() {
                list_type(field_type(&f.kind(), open))
            } else {
                field_type(&f.kind(), open)
            };
            nullable(f.json_name(), t)
        })
        .collect();
    open.pop();
    struct_type(fields)
}

fn field_type(k: &Kind, open: &mut Vec<String>) -> DataType {
    match k {
        Kind::Double => DataType::Float64,
        Kind::Float => DataType::Float32,
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => DataType::Int32,
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => DataType::Int64,
        Kind::Uint32 | Kind::Fixed32 => DataType::UInt32,
        Kind::Uint64 | Kind::Fixed64 => DataType::UInt64,
        Kind::Bool => DataType::Boolean,
        Kind::Bytes => DataType::Binary,
        Kind::String | Kind::Enum(_) => DataType::Utf8,
        Kind::Message(m) => message_type(m, open),
    }
}

/// The type of one JSON document (`None` for null, which says nothing).
fn json_type(v: &Value) -> Option<DataType> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(_) => DataType::Boolean,
        Value::Number(n) if n.is_i64() => DataType::Int64,
        Value::Number(_) => DataType::Float64,
        Value::String(_) => DataType::Utf8,
        Value::Array(items) => list_type(
            items
                .iter()
                .fold(None, |t, v| Some(merge(t, json_type(v))))
                .flatten()
                .unwrap_or(DataType::Utf8),
        ),
        Value::Object(o) => struct_type(
            // A null field says nothing of its type: a later document's value does.
            o.iter()
                .filter_map(|(k, v)| Some(nullable(k, json_type(v)?)))
                .collect(),
        ),
    })
}

/// The type that holds documents of types `a` and `b`: struct fields united, integers
/// widened to floats, anything else that differs is text.
fn merge(a: Option<Option<DataType>>, b: Option<DataType>) -> Option<DataType> {
    let Some(a) = a.flatten() else { return b };
    let Some(b) = b else { return Some(a) };
    Some(match (a, b) {
        (a, b) if a == b => a,
        (DataType::Int64, DataType::Float64) | (DataType::Float64, DataType::Int64) => {
            DataType::Float64
        }
        (DataType::List(a), DataType::List(b)) => list_type(
            merge(
                Some(Some(a.data_type().clone())),
                Some(b.data_type().clone()),
            )
            .unwrap_or(DataType::Utf8),
        ),
        (DataType::Struct(a), DataType::Struct(b)) => {
            let mut fields: Vec<Field> = a.iter().map(|f| f.as_ref().clone()).collect();
            for f in b.iter() {
                match fields.iter_mut().find(|x| x.name() == f.name()) {
                    Some(x) => {
                        let t = merge(
                            Some(Some(x.data_type().clone())),
                            Some(f.data_type().clone()),
                        );
                        *x = nullable(f.name(), t.unwrap_or(DataType::Utf8));
                    }
                    None => fields.push(f.as_ref().clone()),
                }
            }
            struct_type(fields)
        }
        _ => DataType::Utf8,
    })
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        // Protobuf's JSON writes 64-bit integers as strings.
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn uint(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn float(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        // Protobuf's JSON writes the non-finite ones by name.
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            s => s.parse().ok(),
        },
        _ => None,
    }
}

fn bytes(v: &Value, enc: BytesJson) -> Option<Vec<u8>> {
    let s = v.as_str()?;
    match enc {
        BytesJson::Latin1 => s.chars().map(|c| u8::try_from(c).ok()).collect(),
        BytesJson::Base64 => base64::engine::general_purpose::STANDARD.decode(s).ok(),
    }
}

/// A timestamp in `unit`: a number is already one; a string is RFC 3339.
fn timestamp(v: &Value, unit: &TimeUnit) -> Option<i64> {
    if let Some(n) = v.as_i64() {
        return Some(n);
    }
    let ts: jiff::Timestamp = v.as_str()?.parse().ok()?;
    let ns = ts.as_nanosecond();
    i64::try_from(match unit {
        TimeUnit::Second => ns / 1_000_000_000,
        TimeUnit::Millisecond => ns / 1_000_000,
        TimeUnit::Microsecond => ns / 1_000,
        TimeUnit::Nanosecond => ns,
    })
    .ok()
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether `v` can be laid into `t` (null can be anywhere; fields `t` lacks are left out).
fn fits(t: &DataType, v: &Value, enc: BytesJson) -> bool {
    match (t, v) {
        (_, Value::Null) | (DataType::Utf8, _) => true,
        (DataType::Boolean, v) => v.is_boolean(),
        (DataType::Int32 | DataType::Date32, v) => int(v).is_some_and(|i| i32::try_from(i).is_ok()),
        (DataType::Int64, v) => int(v).is_some(),
        (DataType::UInt32, v) => uint(v).is_some_and(|i| u32::try_from(i).is_ok()),
        (DataType::UInt64, v) => uint(v).is_some(),
        (DataType::Float32 | DataType::Float64, v) => float(v).is_some(),
        (DataType::Binary, v) => bytes(v, enc).is_some(),
        (DataType::Timestamp(unit, _), v) => timestamp(v, unit).is_some(),
        (DataType::List(item), Value::Array(items)) => {
            items.iter().all(|i| fits(item.data_type(), i, enc))
        }
        (DataType::Struct(fields), Value::Object(o)) => fields
            .iter()
            .all(|f| o.get(f.name()).is_none_or(|x| fits(f.data_type(), x, enc))),
        (DataType::Map(entries, _), Value::Object(o)) => {
            let DataType::Struct(kv) = entries.data_type() else {
                unreachable!("map entries are a struct")
            };
            o.values().all(|x| fits(kv[1].data_type(), x, enc))
        }
        _ => false,
    }
}

/// The column of `t` holding `values` (each fits `t`; `None` and JSON null are null).
fn build(t: &DataType, values: &[Option<&Value>], enc: BytesJson) -> ArrayRef {
    let vals = || values.iter().map(|v| v.filter(|v| !v.is_null()));
    macro_rules! column {
        ($builder:expr, $f:expr) => {{
            let mut b = $builder;
            vals().for_each(|v| b.append_option(v.and_then($f)));
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    match t {
        DataType::Boolean => column!(BooleanBuilder::new(), Value::as_bool),
        DataType::Int32 => column!(Int32Builder::new(), |v| int(v).map(|i| i as i32)),
        DataType::Date32 => column!(Date32Builder::new(), |v| int(v).map(|i| i as i32)),
        DataType::Int64 => column!(Int64Builder::new(), int),
        DataType::UInt32 => column!(UInt32Builder::new(), |v| uint(v).map(|i| i as u32)),
        DataType::UInt64 => column!(UInt64Builder::new(), uint),
        DataType::Float32 => column!(Float32Builder::new(), |v| float(v).map(|f| f as f32)),
        DataType::Float64 => column!(Float64Builder::new(), float),
        DataType::Binary => column!(BinaryBuilder::new(), |v| bytes(v, enc)),
        DataType::Timestamp(unit, tz) => {
            let ts = |v| timestamp(v, unit);
            let tz = tz.clone();
            match unit {
                TimeUnit::Millisecond => {
                    column!(TimestampMillisecondBuilder::new().with_timezone_opt(tz), ts)
                }
                TimeUnit::Microsecond => {
                    column!(TimestampMicrosecondBuilder::new().with_timezone_opt(tz), ts)
                }
                _ => column!(TimestampNanosecondBuilder::new().with_timezone_opt(tz), ts),
            }
        }
        DataType::Struct(fields) => {
            let children = fields
                .iter()
                .map(|f| {
                    let child: Vec<Option<&Value>> =
                        vals().map(|v| v.and_then(|v| v.get(f.name()))).collect();
                    build(f.data_type(), &child, enc)
                })
                .collect();
            let nulls = NullBuffer::from_iter(vals().map(|v| v.is_some()));
            Arc::new(StructArray::new(fields.clone(), children, Some(nulls)))
        }
        DataType::List(item) => {
            let (lens, items) = flatten(values, |v| v.as_array().map(|a| a.iter().collect()));
            Arc::new(ListArray::new(
                item.clone(),
                OffsetBuffer::from_lengths(lens),
                build(item.data_type(), &items, enc),
                Some(NullBuffer::from_iter(vals().map(|v| v.is_some()))),
            ))
        }
        DataType::Map(entries, sorted) => {
            let DataType::Struct(kv) = entries.data_type() else {
                unreachable!("map entries are a struct")
            };
            let mut keys = StringBuilder::new();
            let (lens, items) = flatten(values, |v| {
                let o = v.as_object()?;
                o.keys().for_each(|k| keys.append_value(k));
                Some(o.values().collect())
            });
            let entries_array = StructArray::new(
                kv.clone(),
                vec![
                    Arc::new(keys.finish()),
                    build(kv[1].data_type(), &items, enc),
                ],
                None,
            );
            Arc::new(MapArray::new(
                entries.clone(),
                OffsetBuffer::from_lengths(lens),
                entries_array,
                Some(NullBuffer::from_iter(vals().map(|v| v.is_some()))),
                *sorted,
            ))
        }
        _ => column!(StringBuilder::new(), |v| Some(text(v))),
    }
}

/// The items of each value's list (`items` of a non-null value), one after another, and how
/// many each value has.
fn flatten<'v>(
    values: &[Option<&'v Value>],
    mut items: impl FnMut(&'v Value) -> Option<Vec<&'v Value>>,
) -> (Vec<usize>, Vec<Option<&'v Value>>) {
    let mut lens = Vec::with_capacity(values.len());
    let mut all = Vec::new();
    for v in values {
        let these = v
            .filter(|v| !v.is_null())
            .and_then(&mut items)
            .unwrap_or_default();
        lens.push(these.len());
        all.extend(these.into_iter().map(Some));
    }
    (lens, all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_sample_inference() {
        let t = [
            json!({"a": 1, "b": [1]}),
            json!({"a": 1.5, "c": "x", "b": null}),
        ]
        .iter()
        .fold(None, |t, v| Some(merge(t, json_type(v))))
        .flatten()
        .unwrap();
        let DataType::Struct(f) = &t else {
            panic!("{t}")
        };
        let types: Vec<(&str, &DataType)> = f
            .iter()
            .map(|f| (f.name().as_str(), f.data_type()))
            .collect();
        assert_eq!(
            types,
            [
                ("a", &DataType::Float64),
                ("b", &list_type(DataType::Int64)),
                ("c", &DataType::Utf8)
            ]
        );
        // A value of another shape does not fit; a missing field does.
        assert!(fits(&t, &json!({"a": 2}), BytesJson::Latin1));
        assert!(!fits(&t, &json!({"a": "two"}), BytesJson::Latin1));
        assert!(!fits(&t, &json!([1]), BytesJson::Latin1));
    }
}
