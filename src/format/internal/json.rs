//! Kafka's generated JSON converters and the text Jackson makes of their trees.
//!
//! Fields come in schema order; a field the version lacks is left out, a tagged field only
//! when it differs from its default. Jackson writes compact JSON, non-ASCII characters raw,
//! `"`, `\` and control characters escaped (`\n`, `\t`, … or `\u00XX` with upper-case hex),
//! bytes as standard base64 with padding, doubles as Java's `Double.toString`.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde_json::Value;

use super::reader::{default_val, JResult, JavaError, Val, UNSUPPORTED_VERSION};
use super::schema::{Msg, St, T, V};

/// A JSON tree as Jackson holds it (numbers keep their Java kind, bytes stay bytes).
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    F64(f64),
    Str(String),
    Bytes(Vec<u8>),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub fn obj(members: Vec<(&str, Json)>) -> Json {
        Json::Obj(
            members
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Obj(m) => m.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The compact text Jackson's `toString()` gives.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(n) => out.push_str(&n.to_string()),
            Json::F64(d) if d.is_finite() => out.push_str(&java_double(*d)),
            Json::F64(d) => write_str(&java_double(*d), out),
            Json::Str(s) => write_str(s, out),
            Json::Bytes(b) => write_str(&STANDARD.encode(b), out),
            Json::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Obj(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(k, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    /// The same tree as a `serde_json` value (bytes as base64 strings, non-finite doubles as
    /// the strings Jackson quotes them as).
    pub fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Int(n) => Value::from(*n),
            Json::F64(d) => serde_json::Number::from_f64(*d)
                .map(Value::Number)
                .unwrap_or_else(|| Value::String(java_double(*d))),
            Json::Str(s) => Value::String(s.clone()),
            Json::Bytes(b) => Value::String(STANDARD.encode(b)),
            Json::Arr(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Obj(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
        }
    }
}

fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Java's `Double.toString`: the shortest digits that round-trip, plain notation for
/// magnitudes in [10⁻³, 10⁷), computerized scientific notation (`1.5E7`) otherwise, and at
/// least one digit after the point.
pub fn java_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".to_string();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0.0" } else { "0.0" }.to_string();
    }
    // Rust's `{:e}` gives the shortest round-trip digits ("1.5e7", "1e-3"). Where that is a
    // single digit, Java takes the two-digit decimal nearest the value when it still
    // round-trips (`4.9E-324`, not `5.0E-324`).
    let (mut digits, mut exp) = sci_parts(&format!("{:e}", d.abs()));
    if digits.len() == 1 {
        let two = format!("{:.1e}", d.abs());
        if two.parse::<f64>() == Ok(d.abs()) {
            (digits, exp) = sci_parts(&two);
        }
    }
    let sign = if d < 0.0 { "-" } else { "" };
    let abs = d.abs();
    if (1e-3..1e7).contains(&abs) {
        let body = if exp >= 0 {
            let point = exp as usize + 1;
            let int: String = digits
                .chars()
                .chain(std::iter::repeat('0'))
                .take(point.max(digits.len()))
                .collect();
            let (i, frac) = int.split_at(point);
            let frac = if frac.is_empty() { "0" } else { frac };
            format!("{i}.{frac}")
        } else {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        };
        format!("{sign}{body}")
    } else {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}E{exp}")
    }
}

/// Significant digits (no trailing zeros, at least one) and decimal exponent of `{:e}` text.
fn sci_parts(sci: &str) -> (String, i32) {
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let trimmed = digits.trim_end_matches('0');
    let digits = if trimmed.is_empty() { "0" } else { trimmed };
    (digits.to_string(), exp.parse().unwrap_or(0))
}

/// A UUID as Kafka prints it: URL-safe base64 of its 16 bytes, no padding.
pub fn kafka_uuid(u: &[u8; 16]) -> String {
    URL_SAFE_NO_PAD.encode(u)
}

/// The message's JSON converter applied at `version`.
pub fn write_message(msg: &Msg, val: &Val, version: i16) -> JResult<Json> {
    write_struct(msg.root, None, val, version)
}

fn write_struct(st: &St, parent: Option<V>, val: &Val, v: i16) -> JResult<Json> {
    if let Some(p) = parent.filter(|_| st.inline) {
        if !st.versions.contains(p.clamp(v)) {
            return Err(JavaError::new(
                UNSUPPORTED_VERSION,
                format!("Can't write version {v} of {}", st.name),
            ));
        }
    }
    let cur = st.possible(parent);
    let e = cur.clamp(v);
    let Val::Struct(vals) = val else {
        return Ok(Json::Null);
    };
    let mut members = Vec::new();
    for (f, x) in st.fields.iter().zip(vals) {
        if !f.versions.contains(e) || (f.tagged_at(e) && *x == default_val(f)) {
            continue;
        }
        members.push((f.name.to_string(), to_json(&f.ty, x, cur, v)?));
    }
    Ok(Json::Obj(members))
}

fn to_json(ty: &T, x: &Val, cur: V, v: i16) -> JResult<Json> {
    Ok(match (x, ty) {
        (Val::Null, _) => Json::Null,
        (Val::Bool(b), _) => Json::Bool(*b),
        (Val::Int(n), _) => Json::Int(*n),
        (Val::F64(d), _) => Json::F64(*d),
        (Val::Uuid(u), _) => Json::Str(kafka_uuid(u)),
        (Val::Str(s), _) => Json::Str(s.clone()),
        (Val::Bytes(b), _) => Json::Bytes(b.clone()),
        (Val::Arr(items), T::StructArr(s)) => Json::Arr(
            items
                .iter()
                .map(|i| write_struct(s, Some(cur), i, v))
                .collect::<JResult<_>>()?,
        ),
        (Val::Arr(items), T::Arr(elem)) => Json::Arr(
            items
                .iter()
                .map(|i| to_json(elem, i, cur, v))
                .collect::<JResult<_>>()?,
        ),
        (Val::Struct(_), T::Struct(s)) => write_struct(s, Some(cur), x, v)?,
        _ => Json::Null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_like_java() {
        let cases = [
            (1048576.0, "1048576.0"),
            (1.5e7, "1.5E7"),
            (12.5, "12.5"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (1e7, "1.0E7"),
            (9999999.0, "9999999.0"),
            (123456789.0, "1.23456789E8"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (1e21, "1.0E21"),
            (4.9e-324, "4.9E-324"),
            (f64::MAX, "1.7976931348623157E308"),
            (-0.0, "-0.0"),
            (f64::NAN, "NaN"),
        ];
        for (d, s) in cases {
            assert_eq!(java_double(d), s, "{d}");
        }
        assert_eq!(Json::F64(f64::INFINITY).to_text(), "\"Infinity\"");
    }

    #[test]
    fn strings_escape_like_jackson() {
        let s = Json::Str("a\"b\\c\nd\te\u{1}f\u{8}\u{c}\r\u{1f}é中\u{7f}/".into());
        assert_eq!(
            s.to_text(),
            "\"a\\\"b\\\\c\\nd\\te\\u0001f\\b\\f\\r\\u001Fé中\u{7f}/\""
        );
    }

    #[test]
    fn uuids_and_bytes() {
        let mut u = [0u8; 16];
        u[15] = 0xff;
        assert_eq!(kafka_uuid(&u), "AAAAAAAAAAAAAAAAAAAA_w");
        assert_eq!(Json::Bytes(vec![1, 2]).to_text(), "\"AQI=\"");
    }
}
