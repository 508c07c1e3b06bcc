//! `kseg dump --value-decoder avro` on a fixture written with `kseg write` whose values were
//! encoded by apache-avro's writer (`to_avro_datum`, an encoder path independent of kseg's
//! decoding) in the Confluent wire format (magic 0, big-endian schema id, datum): each record
//! decodes back to the value that went in (unions, nested records, enums, maps, arrays), a
//! value whose schema id is not among the local schemas, or that is not in the wire format,
//! prints raw with its error, and plain Avro decodes with --avro-schema.

mod common;

use apache_avro::types::Value as Avro;
use apache_avro::{to_avro_datum, Schema};
use serde_json::{json, Value};

const ORDER: &str = r#"{"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},
    {"name": "customer", "type": {"type": "record", "name": "Customer", "fields": [
        {"name": "name", "type": "string"},
        {"name": "email", "type": ["null", "string"], "default": null}]}},
    {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]}},
    {"name": "tags", "type": {"type": "map", "values": "int"}},
    {"name": "lines", "type": {"type": "array", "items": "string"}},
    {"name": "discount", "type": ["null", "double"]}]}"#;

fn order(id: i64, email: Option<&str>, status: (u32, &str), discount: Option<f64>) -> Avro {
    Avro::Record(vec![
        ("id".into(), Avro::Long(id)),
        (
            "customer".into(),
            Avro::Record(vec![
                ("name".into(), Avro::String(format!("c{id}"))),
                (
                    "email".into(),
                    match email {
                        None => Avro::Union(0, Box::new(Avro::Null)),
                        Some(e) => Avro::Union(1, Box::new(Avro::String(e.into()))),
                    },
                ),
            ]),
        ),
        ("status".into(), Avro::Enum(status.0, status.1.into())),
        (
            "tags".into(),
            Avro::Map(
                [
                    ("a".to_string(), Avro::Int(1)),
                    ("b".to_string(), Avro::Int(-2)),
                ]
                .into(),
            ),
        ),
        ("lines".into(), Avro::Array(vec![Avro::String("x".into())])),
        (
            "discount".into(),
            match discount {
                None => Avro::Union(0, Box::new(Avro::Null)),
                Some(d) => Avro::Union(1, Box::new(Avro::Double(d))),
            },
        ),
    ])
}

fn confluent(id: u32, datum: &[u8]) -> Vec<u8> {
    let mut out = vec![0];
    out.extend(id.to_be_bytes());
    out.extend(datum);
    out
}

fn dump(args: &[&str], path: &std::path::Path) -> Vec<Value> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .arg("dump")
        .args(args)
        .arg("--jsonl")
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "record")
        .collect()
}

#[test]
fn avro_values_decode_back_to_what_the_writer_encoded() {
    let schema = Schema::parse_str(ORDER).unwrap();
    let a = to_avro_datum(&schema, order(1, Some("a@x"), (1, "PAID"), Some(2.5))).unwrap();
    let b = to_avro_datum(&schema, order(2, None, (2, "SHIPPED"), None)).unwrap();
    let values = [
        confluent(42, &a),
        confluent(42, &b),
        confluent(7, &a),
        b"{}".to_vec(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let part = common::write_values(dir.path(), "orders", &values);
    let schemas = dir.path().join("schemas");
    std::fs::create_dir(&schemas).unwrap();
    std::fs::write(schemas.join("42.avsc"), ORDER).unwrap();
    std::fs::write(schemas.join("README.txt"), "not a schema").unwrap();

    let got = dump(
        &[
            "--value-decoder",
            "avro",
            "--schema-dir",
            schemas.to_str().unwrap(),
        ],
        &part,
    );
    let want = |id: i64, email: Value, status: &str, discount: Value| {
        json!({"id": id, "customer": {"name": format!("c{id}"), "email": email},
               "status": status, "tags": {"a": 1, "b": -2}, "lines": ["x"], "discount": discount})
    };
    assert_eq!(
        got[0]["decodedValue"],
        want(1, json!("a@x"), "PAID", json!(2.5))
    );
    assert_eq!(
        got[1]["decodedValue"],
        want(2, Value::Null, "SHIPPED", Value::Null)
    );
    assert_eq!(
        got[2]["valueError"],
        "schema id 7 is not among the local schemas"
    );
    assert!(got[2].get("decodedValue").is_none());
    assert_eq!(
        got[3]["valueError"],
        "not the Confluent wire format: magic byte 0x7b, expected 0x00"
    );
    assert_eq!(got[3]["value"]["data"], "{}");

    // Plain Avro (no prefix) with one schema: the datum alone decodes, the prefixed one not.
    let plain_dir = dir.path().join("plain");
    let part = common::write_values(&plain_dir, "orders", std::slice::from_ref(&b));
    let got = dump(
        &[
            "--value-decoder",
            "avro",
            "--avro-schema",
            schemas.join("42.avsc").to_str().unwrap(),
        ],
        &part,
    );
    assert_eq!(
        got[0]["decodedValue"],
        want(2, Value::Null, "SHIPPED", Value::Null)
    );

    // No schemas named: refused before anything is dumped.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["dump", "--value-decoder", "avro"])
        .arg(&part)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--schema-dir or --avro-schema"));
}

/// `bytes` and `fixed` print as Avro's JSON encoding writes them (Java's `JsonEncoder`, what
/// kafka-avro-console-consumer shows): a string of one character per byte, its ISO-8859-1
/// code point; map entries in key order.
#[test]
fn avro_bytes_and_fixed_print_as_avro_json_strings() {
    const BLOB: &str = r#"{"type": "record", "name": "Blob", "fields": [
        {"name": "b", "type": "bytes"},
        {"name": "f", "type": {"type": "fixed", "name": "Three", "size": 3}},
        {"name": "m", "type": {"type": "map", "values": "bytes"}}]}"#;
    let schema = Schema::parse_str(BLOB).unwrap();
    let blob = Avro::Record(vec![
        ("b".into(), Avro::Bytes(vec![0x00, 0x41, 0xe9, 0xff])),
        ("f".into(), Avro::Fixed(3, vec![0x01, 0x22, 0x80])),
        (
            "m".into(),
            Avro::Map(
                [
                    ("z".to_string(), Avro::Bytes(vec![0x7a])),
                    ("a".to_string(), Avro::Bytes(vec![])),
                ]
                .into(),
            ),
        ),
    ]);
    let datum = to_avro_datum(&schema, blob).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let part = common::write_values(dir.path(), "blobs", &[confluent(3, &datum)]);
    let schemas = dir.path().join("schemas");
    std::fs::create_dir(&schemas).unwrap();
    std::fs::write(schemas.join("3.avsc"), BLOB).unwrap();
    let args = [
        "--value-decoder",
        "avro",
        "--schema-dir",
        schemas.to_str().unwrap(),
    ];
    let got = dump(&args, &part);
    let want = json!({"b": "\u{0}A\u{e9}\u{ff}", "f": "\u{1}\"\u{80}", "m": {"a": "", "z": "z"}});
    assert_eq!(got[0]["decodedValue"], want);
    // The text: the same JSON, compact, control characters escaped, the rest as UTF-8.
    let out = common::kseg(&[&["dump"], &args[..], &[part.to_str().unwrap()]].concat());
    let text = String::from_utf8(out.stdout).unwrap();
    let payload = " payload: {\"b\":\"\\u0000A\u{e9}\u{ff}\",\"f\":\"\\u0001\\\"\u{80}\",\"m\":{\"a\":\"\",\"z\":\"z\"}}";
    assert!(text.contains(payload), "{text}");
}
