//! The other direction of [`super::reader`] and [`super::json`]: a record given in the
//! decoders' JSON form (the JSON converters' field names) becomes a [`Val`], and a [`Val`]
//! becomes Kafka's message bytes, both driven by the same schema tables.
//!
//! The encoding is that of Kafka's generated `write` methods (formats.md §0.2): fields of the
//! (clamped) version in schema order; in flexible versions compact lengths, then the tagged
//! fields that differ from their default, merged in tag order with the unknown tagged fields
//! the caller supplies.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde_json::Value;

use super::encode::consumer_protocol_bytes;
use super::reader::{default_val, Val};
use super::schema::{Msg, St, F, T, V};

/// Unknown tagged fields of a root struct: tag and raw bytes.
pub type RawTags = Vec<(u32, Vec<u8>)>;

/// Bytes of a field given in JSON: a base64 string (the decoders' form), `{"hex": …}` or
/// `{"base64": …}`. `None` when `v` has none of these forms.
pub fn bytes_of_json(v: &Value) -> Option<Result<Vec<u8>, String>> {
    match v {
        Value::String(s) => Some(STANDARD.decode(s).map_err(|e| format!("base64 {s:?}: {e}"))),
        Value::Object(o) if o.len() == 1 => {
            if let Some(Value::String(h)) = o.get("hex") {
                Some(crate::format::decode_hex(h))
            } else if let Some(Value::String(b)) = o.get("base64") {
                Some(STANDARD.decode(b).map_err(|e| format!("base64 {b:?}: {e}")))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// `unknownTaggedFields: [{"tag": N, "hex": "…"}, …]` of a record's JSON form.
pub fn raw_tags_of_json(v: Option<&Value>) -> Result<RawTags, String> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = v else {
        return Err("unknownTaggedFields: expected a list".into());
    };
    items
        .iter()
        .map(|t| {
            let tag = t
                .get("tag")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or("unknownTaggedFields: each needs a tag")?;
            let mut rest = t.clone();
            if let Some(o) = rest.as_object_mut() {
                o.remove("tag");
            }
            let bytes = bytes_of_json(&rest).ok_or("unknownTaggedFields: each needs hex")??;
            Ok((tag, bytes))
        })
        .collect()
}

/// `json` (an object of the decoders' field names; absent fields take their defaults) as a
/// value of `msg` at `version`. Byte fields are base64, `{"hex": …}`, `{"base64": …}` or
/// consumer-protocol member bytes ([`consumer_protocol_bytes`]).
pub fn val_from_json(msg: &Msg, json: &Value, version: i16) -> Result<Val, String> {
    struct_from_json(msg.root, None, json, version)
}

fn struct_from_json(st: &St, parent: Option<V>, json: &Value, v: i16) -> Result<Val, String> {
    let Value::Object(members) = json else {
        return Err(format!("{}: expected an object, found {json}", st.name));
    };
    let cur = st.possible(parent);
    if let Some(k) = members
        .keys()
        .find(|k| !st.fields.iter().any(|f| f.name == *k))
    {
        return Err(format!("{}: unknown field {k:?}", st.name));
    }
    st.fields
        .iter()
        .map(|f| match members.get(f.name) {
            None => Ok(default_val(f)),
            Some(x) => field_from_json(&f.ty, x, cur, v)
                .map_err(|m| format!("{}.{}: {m}", st.name, f.name)),
        })
        .collect::<Result<_, _>>()
        .map(Val::Struct)
}

fn field_from_json(ty: &T, x: &Value, cur: V, v: i16) -> Result<Val, String> {
    let int = |lo: i64, hi: i64| match x.as_i64() {
        Some(n) if (lo..=hi).contains(&n) => Ok(Val::Int(n)),
        _ => Err(format!("expected an integer from {lo} to {hi}, found {x}")),
    };
    if x.is_null() {
        return Ok(Val::Null);
    }
    match ty {
        T::Bool => x
            .as_bool()
            .map(Val::Bool)
            .ok_or_else(|| format!("expected true or false, found {x}")),
        T::I8 => int(i8::MIN.into(), i8::MAX.into()),
        T::I16 => int(i16::MIN.into(), i16::MAX.into()),
        T::U16 => int(0, u16::MAX.into()),
        T::I32 => int(i32::MIN.into(), i32::MAX.into()),
        T::I64 => int(i64::MIN, i64::MAX),
        T::F64 => x
            .as_f64()
            .map(Val::F64)
            .ok_or_else(|| format!("expected a number, found {x}")),
        T::Uuid => {
            let s = x
                .as_str()
                .ok_or_else(|| format!("expected a uuid, found {x}"))?;
            let bytes = URL_SAFE_NO_PAD
                .decode(s)
                .map_err(|e| format!("uuid {s:?}: {e}"))?;
            <[u8; 16]>::try_from(bytes)
                .map(Val::Uuid)
                .map_err(|_| format!("uuid {s:?}: expected 16 bytes"))
        }
        T::Str => x
            .as_str()
            .map(|s| Val::Str(s.to_string()))
            .ok_or_else(|| format!("expected a string, found {x}")),
        T::Bytes | T::ZcBytes => consumer_protocol_bytes(x)
            .or_else(|| bytes_of_json(x))
            .ok_or_else(|| format!("expected base64 or {{\"hex\": …}}, found {x}"))?
            .map(Val::Bytes),
        T::Struct(s) => struct_from_json(s, Some(cur), x, v),
        T::Arr(elem) => array(x)?
            .iter()
            .map(|i| field_from_json(elem, i, cur, v))
            .collect::<Result<_, _>>()
            .map(Val::Arr),
        T::StructArr(s) => array(x)?
            .iter()
            .map(|i| struct_from_json(s, Some(cur), i, v))
            .collect::<Result<_, _>>()
            .map(Val::Arr),
    }
}

fn array(x: &Value) -> Result<&Vec<Value>, String> {
    x.as_array()
        .ok_or_else(|| format!("expected a list, found {x}"))
}

/// `val` as `msg` at `version`, with `raw` (unknown tagged fields of the root) merged in.
pub fn encode_message(msg: &Msg, val: &Val, version: i16, raw: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    write_struct(msg, msg.root, None, val, version, raw, &mut out);
    out
}

fn write_struct(
    msg: &Msg,
    st: &St,
    parent: Option<V>,
    val: &Val,
    v: i16,
    raw: &[(u32, Vec<u8>)],
    out: &mut Vec<u8>,
) {
    let cur = st.possible(parent);
    let e = cur.clamp(v);
    let flexible = msg.flex.contains(e);
    let empty = Vec::new();
    let vals = match val {
        Val::Struct(vals) => vals,
        _ => &empty,
    };
    let mut tagged: Vec<(u32, Vec<u8>)> = raw.to_vec();
    for (i, f) in st.fields.iter().enumerate() {
        let x = vals.get(i).cloned().unwrap_or_else(|| default_val(f));
        if f.fixed_at(e) {
            write_field(msg, f, &x, cur, v, e, false, out);
        } else if f.versions.contains(e) && f.tagged_at(e) && x != default_val(f) {
            let mut body = Vec::new();
            write_field(msg, f, &x, cur, v, e, true, &mut body);
            tagged.push((f.tag.map_or(0, |(t, _)| t), body));
        }
    }
    if flexible {
        tagged.sort_by_key(|(t, _)| *t);
        uvarint(tagged.len() as u32, out);
        for (tag, body) in tagged {
            uvarint(tag, out);
            uvarint(body.len() as u32, out);
            out.extend_from_slice(&body);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn write_field(msg: &Msg, f: &F, x: &Val, cur: V, v: i16, e: i16, tagged: bool, out: &mut Vec<u8>) {
    let flexible = msg.flex.contains(e);
    match (f.ty, x) {
        (T::Struct(_), Val::Null) => {
            if tagged {
                uvarint(0, out);
            } else {
                out.push(0xff);
            }
        }
        (T::Struct(s), _) => {
            if f.nullable.contains(e) {
                if tagged {
                    uvarint(1, out);
                } else {
                    out.push(1);
                }
            }
            write_struct(msg, s, Some(cur), x, v, &[], out);
        }
        (T::Arr(_) | T::StructArr(_), Val::Null) => length(flexible, true, -1, out),
        (T::Arr(elem), Val::Arr(items)) => {
            length(flexible, true, items.len() as i64, out);
            for i in items {
                write_scalar(elem, i, flexible, out);
            }
        }
        (T::StructArr(s), Val::Arr(items)) => {
            length(flexible, true, items.len() as i64, out);
            for i in items {
                write_struct(msg, s, Some(cur), i, v, &[], out);
            }
        }
        (ty, x) => write_scalar(&ty, x, flexible, out),
    }
}

/// A length or count: int16 (strings) / int32 (bytes, arrays) or a compact uvarint of n + 1.
fn length(flexible: bool, wide: bool, n: i64, out: &mut Vec<u8>) {
    if flexible {
        uvarint((n + 1) as u32, out);
    } else if wide {
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.extend_from_slice(&(n as i16).to_be_bytes());
    }
}

fn write_scalar(ty: &T, x: &Val, flexible: bool, out: &mut Vec<u8>) {
    let n = x.as_int().unwrap_or(0);
    match (ty, x) {
        (T::Bool, Val::Bool(b)) => out.push(u8::from(*b)),
        (T::I8, _) => out.push(n as u8),
        (T::I16 | T::U16, _) => out.extend_from_slice(&(n as u16).to_be_bytes()),
        (T::I32, _) => out.extend_from_slice(&(n as i32).to_be_bytes()),
        (T::I64, _) => out.extend_from_slice(&n.to_be_bytes()),
        (T::F64, Val::F64(d)) => out.extend_from_slice(&d.to_bits().to_be_bytes()),
        (T::Uuid, Val::Uuid(u)) => out.extend_from_slice(u),
        (T::Str, Val::Null) => length(flexible, false, -1, out),
        (T::Str, Val::Str(s)) => {
            length(flexible, false, s.len() as i64, out);
            out.extend_from_slice(s.as_bytes());
        }
        (T::Bytes | T::ZcBytes, Val::Null) => length(flexible, true, -1, out),
        (T::Bytes | T::ZcBytes, Val::Bytes(b)) => {
            length(flexible, true, b.len() as i64, out);
            out.extend_from_slice(b);
        }
        // Values of another kind do not come from `val_from_json` or the defaults.
        _ => {}
    }
}

/// Kafka's `writeUnsignedVarint`.
pub fn uvarint(mut n: u32, out: &mut Vec<u8>) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}
