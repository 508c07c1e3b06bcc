//! `kseg dump --value-decoder protobuf` on fixtures written with `kseg write`. The schema is
//! a `.proto` text with an import, given to kseg both as a descriptor set (compiled in the
//! test by protox, as `protoc --include_imports --descriptor_set_out` would) and as the
//! `.proto` source itself. Values are encoded in the test, independently of kseg's decoding:
//! a message built field by field with prost-reflect's `DynamicMessage` (nested message,
//! repeated, map, enum, oneof, bytes) and messages whose bytes are computed by hand from the
//! Protobuf encoding rules; each in the Confluent wire format (magic 0, big-endian schema id,
//! message-index list of zigzag varints, `0` alone for [0]). Expected JSON: protobuf's
//! canonical JSON mapping (lowerCamelCase names, int64 as strings, enums by name, bytes in
//! base64, default values left out). Bad values print raw with an error, never aborting.

mod common;

use std::path::Path;

use prost_reflect::prost::Message as _;
use prost_reflect::{DynamicMessage, MapKey, Value as Proto};
use serde_json::{json, Value};

const COMMON: &str = r#"syntax = "proto3";
package shop;
message Customer { string name = 1; string email = 2; }
"#;

const ORDERS: &str = r#"syntax = "proto3";
package shop;
import "common.proto";

enum Status { NEW = 0; PAID = 1; SHIPPED = 2; }

message Order {
  int64 id = 1;
  Customer customer = 2;
  Status status = 3;
  repeated string lines = 4;
  map<string, int32> tags = 5;
  oneof payment { string card = 6; Voucher voucher = 7; }
  message Voucher { string code = 1; }
  bytes note = 8;
}

message Refund {
  map<string, string> meta = 1;
  message Line { string sku = 1; int32 qty = 2; }
  repeated Line lines = 2;
}
"#;

/// The Confluent wire format: magic 0, schema id, the message-index list as written.
fn confluent(id: u32, indexes: &[u8], message: &[u8]) -> Vec<u8> {
    let mut out = vec![0];
    out.extend(id.to_be_bytes());
    out.extend(indexes);
    out.extend(message);
    out
}

fn dump(args: &[&str], path: &Path) -> (Vec<Value>, String) {
    let out = common::kseg(&[&["dump", "--jsonl"], args, &[path.to_str().unwrap()]].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    common::assert_matches_schema("dumpLine", &lines);
    let records = lines
        .into_iter()
        .filter(|v| v["type"] == "record")
        .collect();
    (records, text)
}

#[test]
fn protobuf_values_decode_to_their_canonical_json() {
    let dir = tempfile::tempdir().unwrap();
    let sources = dir.path().join("src");
    std::fs::create_dir(&sources).unwrap();
    std::fs::write(sources.join("common.proto"), COMMON).unwrap();
    std::fs::write(sources.join("orders.proto"), ORDERS).unwrap();
    let mut compiler = protox::Compiler::new([&sources]).unwrap();
    compiler
        .include_imports(true)
        .open_file("orders.proto")
        .unwrap();
    let set = compiler.encode_file_descriptor_set();
    let pool = compiler.descriptor_pool();
    // The map entry is Refund's first nested type, Line its second: the registry's index
    // [1, 0] must skip the entry to name Line.
    let refund = pool.get_message_by_name("shop.Refund").unwrap();
    let nested: Vec<String> = refund
        .child_messages()
        .map(|m| m.name().to_string())
        .collect();
    assert_eq!(nested, ["MetaEntry", "Line"]);

    let order_type = pool.get_message_by_name("shop.Order").unwrap();
    let mut customer = DynamicMessage::new(pool.get_message_by_name("shop.Customer").unwrap());
    customer.set_field_by_name("name", Proto::String("c1".into()));
    customer.set_field_by_name("email", Proto::String("a@x".into()));
    let mut voucher = DynamicMessage::new(pool.get_message_by_name("shop.Order.Voucher").unwrap());
    voucher.set_field_by_name("code", Proto::String("V1".into()));
    let mut order = DynamicMessage::new(order_type);
    order.set_field_by_name("id", Proto::I64(-5));
    order.set_field_by_name("customer", Proto::Message(customer));
    order.set_field_by_name("status", Proto::EnumNumber(1));
    order.set_field_by_name(
        "lines",
        Proto::List(vec![Proto::String("x".into()), Proto::String("y".into())]),
    );
    let tags =
        [("b", -2), ("a", 1), ("c", 30)].map(|(k, v)| (MapKey::String(k.into()), Proto::I32(v)));
    order.set_field_by_name("tags", Proto::Map(tags.into_iter().collect()));
    order.set_field_by_name("voucher", Proto::Message(voucher));
    order.set_field_by_name("note", Proto::Bytes(vec![0xff, 0x00].into()));
    let order = order.encode_to_vec();
    let order_json = json!({"id": "-5", "customer": {"name": "c1", "email": "a@x"},
        "status": "PAID", "lines": ["x", "y"], "tags": {"a": 1, "b": -2, "c": 30},
        "voucher": {"code": "V1"}, "note": "/wA="});

    // Refund.Line by hand: field 1 (sku, length-delimited) "ab", field 2 (qty, varint) 3.
    let line = [0x0a, 0x02, b'a', b'b', 0x10, 0x03];
    // Refund by hand: meta {"k": "v"} (field 1: an entry of key field 1 and value field 2),
    // then lines [Line{sku "ab", qty 3}] (field 2).
    let mut refund = vec![0x0a, 0x06, 0x0a, 0x01, b'k', 0x12, 0x01, b'v', 0x12, 0x06];
    refund.extend(line);
    // A Customer field cut short: field 2, length 5, one byte there.
    let truncated = [0x12, 0x05, 0x0a];

    let values = [
        confluent(5, &[0x00], &order),            // [0], the usual single 0
        confluent(5, &[0x02, 0x00], &order),      // [0] written in full: length 1, index 0
        confluent(5, &[0x04, 0x02, 0x00], &line), // [1, 0]: Refund.Line
        confluent(5, &[0x02, 0x02], &refund),     // [1]: Refund
        confluent(6, &[0x00], &order),            // the same schema from its .proto source
        confluent(9, &[0x00], &order),            // no such schema id
        confluent(5, &[0x00], &truncated),        // bytes that do not decode
        confluent(5, &[0x02, 0x06], &order),      // [3]: no such message
        confluent(5, &[0x7f], &order),            // index-list length -64
        b"{\"id\": 1}".to_vec(),                  // not the wire format
    ];
    let part = common::write_values(dir.path(), "orders", &values);
    let schemas = dir.path().join("schemas");
    std::fs::create_dir(&schemas).unwrap();
    std::fs::write(schemas.join("5.desc"), &set).unwrap();
    std::fs::write(schemas.join("6.proto"), ORDERS).unwrap();
    // 6.proto's import, resolved in the schema directory; not a schema id itself.
    std::fs::write(schemas.join("common.proto"), COMMON).unwrap();
    let schema_dir = schemas.to_str().unwrap();

    let (got, text) = dump(
        &["--value-decoder", "protobuf", "--schema-dir", schema_dir],
        &part,
    );
    assert_eq!(got.len(), values.len());
    assert_eq!(got[0]["decodedValue"], order_json);
    assert_eq!(got[1]["decodedValue"], order_json);
    assert_eq!(got[2]["decodedValue"], json!({"sku": "ab", "qty": 3}));
    assert_eq!(
        got[3]["decodedValue"],
        json!({"meta": {"k": "v"}, "lines": [{"sku": "ab", "qty": 3}]})
    );
    assert_eq!(got[4]["decodedValue"], order_json);
    assert_eq!(
        got[5]["valueError"],
        "schema id 9 is not among the local schemas"
    );
    let error6 = got[6]["valueError"].as_str().unwrap();
    assert!(
        error6.starts_with("invalid Protobuf shop.Order: "),
        "{error6}"
    );
    assert_eq!(
        got[7]["valueError"],
        "message index [3] names no message of orders.proto"
    );
    let error8 = got[8]["valueError"].as_str().unwrap();
    assert!(
        error8.starts_with("invalid Protobuf message-index list: length -64"),
        "{error8}"
    );
    assert_eq!(
        got[9]["valueError"],
        "not the Confluent wire format: magic byte 0x7b, expected 0x00"
    );
    for (i, r) in got.iter().enumerate().skip(5) {
        assert!(r.get("decodedValue").is_none(), "record {i}");
        assert!(r["value"]["data"].is_string(), "record {i}");
        assert_eq!(r["valueSize"], values[i].len(), "record {i}");
    }

    // The text output: the canonical JSON, map entries in key order on every run.
    let out = common::kseg(&[
        "dump",
        "--value-decoder",
        "protobuf",
        "--schema-dir",
        schema_dir,
        part.to_str().unwrap(),
    ]);
    let text_out = String::from_utf8(out.stdout).unwrap();
    assert!(
        text_out.contains(&format!(" payload: {}", order_json)),
        "{text_out}"
    );
    assert!(text_out.contains(r#""tags":{"a":1,"b":-2,"c":30}"#));
    assert!(text_out.contains("[not decoded: schema id 9 is not among the local schemas]"));
    let (_, again) = dump(
        &["--value-decoder", "protobuf", "--schema-dir", schema_dir],
        &part,
    );
    assert_eq!(text, again);

    // Plain Protobuf (no prefix): one message type of a descriptor set or a .proto file.
    let plain_dir = dir.path().join("plain");
    let plain = common::write_values(&plain_dir, "orders", &[order.clone(), line.to_vec()]);
    let plain_dump = |descriptor: &Path, message: &str| {
        let descriptor = descriptor.to_str().unwrap();
        let args = ["--key-decoder", "string", "--value-decoder", "protobuf"];
        let plain_args = ["--proto-descriptor", descriptor, "--proto-message", message];
        dump(&[&args[..], &plain_args[..]].concat(), &plain).0
    };
    let got = plain_dump(&schemas.join("5.desc"), "shop.Order");
    assert_eq!(got[0]["decodedValue"], order_json);
    let got = plain_dump(&sources.join("orders.proto"), "shop.Refund.Line");
    assert_eq!(got[1]["decodedValue"], json!({"sku": "ab", "qty": 3}));
    assert_eq!(got[1]["decodedKey"], "k");

    // Refused before anything is dumped: no schemas, an unknown message type.
    let refused = |args: &[&str], want: &str| {
        let out = common::kseg(&[&["dump"], args, &[plain.to_str().unwrap()]].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    };
    refused(
        &["--value-decoder", "protobuf"],
        "--schema-dir, or --proto-descriptor with --proto-message",
    );
    refused(
        &[
            "--value-decoder",
            "protobuf",
            "--proto-descriptor",
            schemas.join("5.desc").to_str().unwrap(),
            "--proto-message",
            "shop.Nope",
        ],
        "no message type shop.Nope in the Protobuf schema (it has shop.Customer, ",
    );
    refused(
        &[
            "--value-decoder",
            "protobuf",
            "--schema-dir",
            sources.to_str().unwrap(),
        ],
        "no <schema id>.desc or <schema id>.proto file in the schema directory",
    );
}
