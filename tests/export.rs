//! `kseg export`: its Parquet and Arrow files read back by independent readers (pyarrow and
//! DuckDB, Python packages `.ci/run` installs) hold exactly the records `dump --json` prints,
//! byte for byte, for every reference scenario; `read_committed` drops exactly the aborted and
//! open transactions' records, worked out here from the markers `dump` prints; a Hive tree is
//! one table to DuckDB.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{json, Value};

/// Reads a table with pyarrow and DuckDB and prints each row once per reader as JSON (bytes
/// as hex, timestamps as epoch ms). argv: the format, then the files (or a glob for DuckDB).
const READER: &str = r#"
import json, sys
import pyarrow as pa, pyarrow.parquet as pq, pyarrow.ipc as ipc, duckdb

def hx(b):
    return None if b is None else bytes(b).hex()

def show(reader, row):
    print(json.dumps({
        "reader": reader, "topic": row["topic"], "partition": row["partition"],
        "offset": row["offset"], "timestamp": row["timestamp"],
        "timestampType": row["timestampType"], "key": hx(row["key"]), "value": hx(row["value"]),
        "headers": [[h["key"], hx(h["value"])] for h in row["headers"]],
        "producerId": row["producerId"], "sequence": row["sequence"],
        "isControl": row["isControl"], "isTransactional": row["isTransactional"],
    }))

fmt, paths = sys.argv[1], sys.argv[2:]
for p in paths:
    t = pq.read_table(p) if fmt == "parquet" else ipc.open_file(p).read_all()
    i = t.schema.get_field_index("timestamp")
    assert str(t.schema.field(i).type) == "timestamp[ms, tz=UTC]", t.schema.field(i).type
    t = t.set_column(i, "timestamp", t.column(i).cast(pa.int64()))
    for row in t.to_pylist():
        show("pyarrow", row)
if fmt == "parquet":
    q = "SELECT * REPLACE (epoch_ms(timestamp) AS timestamp) FROM read_parquet(?) ORDER BY \"offset\""
    cur = duckdb.connect().execute(q, [paths])
    names = [d[0] for d in cur.description]
    for r in cur.fetchall():
        show("duckdb", dict(zip(names, r)))
"#;

/// `python3 -c SCRIPT ARGS`' standard output.
fn python(script: &str, args: &[&str]) -> String {
    let mut all = vec!["-c", script];
    all.extend_from_slice(args);
    common::python(&all)
}

/// The independent readers: pyarrow and duckdb.
fn readers_present() -> bool {
    common::python_modules(&["pyarrow", "duckdb"])
}

fn kseg(args: &[&str]) -> (i32, String, String) {
    common::outcome(std::process::Command::new(env!("CARGO_BIN_EXE_kseg")).args(args))
}

fn hex_of(v: &Value) -> Value {
    match v {
        Value::Null => Value::Null,
        e => {
            assert_eq!(e["encoding"], "hex", "{e}");
            e["data"].clone()
        }
    }
}

/// The data records `dump --jsonl --print-data-log` prints for `dir` with `flags`, as the
/// reader script shows rows (topic `orders`, partition 0), and the control records' markers.
fn dumped(dir: &Path, flags: &[&str]) -> (Vec<Value>, Vec<Value>) {
    let d = dir.to_str().unwrap();
    let mut args = vec![
        "dump",
        "--jsonl",
        "--deep-iteration",
        "--print-data-log",
        "--key-format",
        "hex",
        "--value-format",
        "hex",
    ];
    args.extend_from_slice(flags);
    args.push(d);
    let (_, out, err) = kseg(&args);
    let (mut records, mut markers) = (Vec::new(), Vec::new());
    let mut batch = Value::Null;
    for line in out.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        match v["type"].as_str() {
            Some("batch") => batch = v,
            Some("record") if batch["isControl"] == true => {
                markers.push(
                    json!({"producerId": batch["producerId"], "offset": v["offset"],
                                    "control": v["control"]["type"]}),
                );
            }
            Some("record") => {
                let ts = v["timestamp"].as_i64().unwrap();
                records.push(json!({
                    "topic": "orders", "partition": 0, "offset": v["offset"],
                    "timestamp": (v["timestampType"] != "NoTimestampType").then_some(ts),
                    "timestampType": v["timestampType"],
                    "key": hex_of(&v["key"]), "value": hex_of(&v["value"]),
                    "headers": v["headers"].as_array().unwrap().iter()
                        .map(|h| json!([h["key"], hex_of(&h["value"])])).collect::<Vec<_>>(),
                    "producerId": batch["producerId"], "sequence": v["sequence"],
                    "isControl": false, "isTransactional": batch["isTransactional"],
                }));
            }
            _ => {}
        }
    }
    assert!(!out.is_empty(), "dump {d}: {err}");
    (records, markers)
}

/// The rows each reader read, by reader.
fn read_back(format: &str, paths: &[&str]) -> BTreeMap<String, Vec<Value>> {
    let mut args = vec![format];
    args.extend_from_slice(paths);
    let mut by_reader: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for line in python(READER, &args).lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        let reader = v["reader"].as_str().unwrap().to_owned();
        v.as_object_mut().unwrap().remove("reader");
        by_reader.entry(reader).or_default().push(v);
    }
    by_reader
}

fn offsets(rows: &[Value]) -> Vec<i64> {
    rows.iter().map(|r| r["offset"].as_i64().unwrap()).collect()
}

#[test]
fn every_reference_scenario_reads_back_as_dump_prints_it() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    if !readers_present() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut rows_checked = 0;
    for s in common::scenarios(&root) {
        let dir = s.join("input/orders-0");
        let name = s.file_name().unwrap().to_string_lossy().into_owned();
        let (expected, _) = dumped(&dir, &[]);
        for (format, compression) in [
            ("parquet", "zstd"),
            ("parquet", "snappy"),
            ("arrow", "none"),
        ] {
            let out = tmp.path().join(format!("{name}-{compression}.{format}"));
            let (status, _, err) = kseg(&[
                "export",
                "--format",
                format,
                "--compression",
                compression,
                "--out",
                out.to_str().unwrap(),
                dir.to_str().unwrap(),
            ]);
            // Damaged scenarios export what can be read and say so (exit status 1).
            assert!(status == 0 || status == 1, "{name}: {status}: {err}");
            let read = read_back(format, &[out.to_str().unwrap()]);
            let readers: Vec<&str> = read.keys().map(String::as_str).collect();
            let want: &[&str] = if format == "parquet" {
                &["duckdb", "pyarrow"]
            } else {
                &["pyarrow"]
            };
            assert_eq!(readers, want, "{name} {format}: rows from each reader");
            for (reader, rows) in &read {
                assert_eq!(
                    rows.len(),
                    expected.len(),
                    "{name} {format} {reader}: row count"
                );
                let sum: i64 = offsets(rows).iter().sum();
                let want_sum: i64 = offsets(&expected).iter().sum();
                assert_eq!(sum, want_sum, "{name} {format} {reader}: sum of offsets");
                for (got, want) in rows.iter().zip(&expected) {
                    assert_eq!(got, want, "{name} {format} {reader}");
                }
                rows_checked += rows.len();
            }
        }
    }
    assert!(rows_checked > 10_000, "only {rows_checked} rows checked");
}

/// `read_committed` keeps a transactional record when its producer's next marker commits it
/// and drops it when that marker aborts it or none follows (an open transaction, whose first
/// offset bounds the last stable offset: nothing from there on is kept).
#[test]
fn read_committed_drops_exactly_aborted_and_open_transactions() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    if !readers_present() {
        return;
    }
    let dir = root.join("c-transactions/input/orders-0");
    let (all, markers) = dumped(&dir, &[]);
    let mut open_from: Option<i64> = None;
    let mut kept = BTreeSet::new();
    let mut dropped = 0;
    for r in &all {
        let offset = r["offset"].as_i64().unwrap();
        let ended = markers
            .iter()
            .find(|m| m["producerId"] == r["producerId"] && m["offset"].as_i64() > Some(offset));
        let committed = match (r["isTransactional"] == true, ended) {
            (false, _) => true,
            (true, Some(m)) => m["control"] == "COMMIT",
            (true, None) => {
                open_from = Some(open_from.map_or(offset, |o: i64| o.min(offset)));
                false
            }
        };
        if committed {
            kept.insert(offset);
        } else {
            dropped += 1;
        }
    }
    let open_from = open_from.expect("the scenario leaves a transaction open");
    kept.retain(|&o| o < open_from);
    assert!(dropped > 0, "the scenario aborts transactions");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("committed.parquet");
    let (status, _, err) = kseg(&[
        "export",
        "--isolation",
        "read_committed",
        "--out",
        out.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert_eq!(status, 0, "{err}");
    for (reader, rows) in read_back("parquet", &[out.to_str().unwrap()]) {
        let got: BTreeSet<i64> = offsets(&rows).into_iter().collect();
        assert_eq!(got, kept, "{reader}: the committed records");
    }
}

#[test]
fn a_hive_tree_is_one_table_to_duckdb() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    if !readers_present() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // A log dir of two partitions: the plain scenario's as orders-0, the codecs' as orders-1.
    let log_dir = tmp.path().join("logs");
    common::copy_dir(
        &root.join("a-plain-v2/input/orders-0"),
        &log_dir.join("orders-0"),
    );
    common::copy_dir(
        &root.join("b-codecs/input/orders-0"),
        &log_dir.join("orders-1"),
    );
    let out = tmp.path().join("table");
    let (status, report, err) = kseg(&[
        "export",
        "--json",
        "--compression",
        "gzip",
        "--row-group-bytes",
        "65536",
        "--out",
        out.to_str().unwrap(),
        log_dir.to_str().unwrap(),
    ]);
    assert_eq!(status, 0, "{err}");
    let report: Value = serde_json::from_str(&report).unwrap();
    common::assert_matches_schema("export", std::slice::from_ref(&report));
    let files: Vec<&str> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    let p = |n| {
        format!(
            "{}/topic=orders/partition={n}/part-00000.parquet",
            out.display()
        )
    };
    assert_eq!(files, [p(0), p(1)]);
    let mut want = Vec::new();
    for (n, scenario) in [(0, "a-plain-v2"), (1, "b-codecs")] {
        let (rows, _) = dumped(&root.join(scenario).join("input/orders-0"), &[]);
        let sum: i64 = offsets(&rows).iter().sum();
        want.push(json!(["orders", n, rows.len(), sum]));
    }
    let sql = format!(
        "import duckdb, json\n\
         q = \"SELECT topic, partition::INTEGER, count(*), sum(\\\"offset\\\")::BIGINT \
         FROM read_parquet('{}/**/*.parquet', hive_partitioning = true) GROUP BY ALL ORDER BY 2\"\n\
         print(json.dumps([list(r) for r in duckdb.sql(q).fetchall()]))",
        out.display()
    );
    let got: Value = serde_json::from_str(&python(&sql, &[])).unwrap();
    assert_eq!(got, Value::Array(want));
    // Row groups: one per segment at most 64 KiB, with offset statistics engines skip by.
    let groups = report["rowGroupCount"].as_u64().unwrap();
    assert!(groups > 2, "{groups} row groups");
    let stats = python(
        "import sys, pyarrow.parquet as pq\n\
         m = pq.ParquetFile(sys.argv[1]).metadata\n\
         i = m.schema.names.index('offset')\n\
         print(m.num_row_groups, all(m.row_group(g).column(i).statistics.has_min_max for g in range(m.num_row_groups)))",
        &[&p(0)],
    );
    assert!(stats.trim().ends_with("True"), "{stats}");
}

#[test]
fn csv_and_jsonl_on_standard_output_hold_every_record() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let dir = root.join("a-plain-v2/input/orders-0");
    let (expected, _) = dumped(&dir, &[]);
    let (status, jsonl, err) = kseg(&[
        "export",
        "--format",
        "jsonl",
        "--out",
        "-",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(status, 0, "{err}");
    let rows: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(offsets(&rows), offsets(&expected));
    for (got, want) in rows.iter().zip(&expected) {
        let b64 = |v: &Value| v.as_str().map(|s| common::hex(&base64_decode(s)));
        assert_eq!(
            b64(&got["value"]),
            want["value"].as_str().map(str::to_owned)
        );
        assert_eq!(got["timestamp"], want["timestamp"]);
    }
    let (status, csv, _) = kseg(&[
        "export",
        "--format",
        "csv",
        "--out",
        "-",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(status, 0);
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("topic,partition,offset,timestamp,"));
    assert_eq!(lines.count(), expected.len());
    // Parquet is not written to a terminal or a pipe.
    let (status, _, _) = kseg(&["export", "--out", "-", dir.to_str().unwrap()]);
    assert_eq!(status, 2);
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

/// Reads `decodedValue` of a Parquet file back with pyarrow and DuckDB: a line per reader
/// of its rows, nulls left out of objects, bytes as argv[1] says (`latin1`, Avro's JSON, or
/// `base64`, Protobuf's), timestamps as epoch ms (DuckDB's through `epoch_ms`: its Python
/// timestamps with a zone need pytz).
const DECODED_READER: &str = r#"
import json, sys, base64, datetime
import pyarrow.parquet as pq, duckdb
enc, path = sys.argv[1], sys.argv[2]
def norm(x):
    if isinstance(x, dict):
        return {k: norm(v) for k, v in x.items() if v is not None}
    if isinstance(x, (list, tuple)):
        return [norm(v) for v in x]
    if isinstance(x, (bytes, bytearray, memoryview)):
        b = bytes(x)
        return b.decode("latin1") if enc == "latin1" else base64.b64encode(b).decode()
    if isinstance(x, datetime.datetime):
        return round(x.timestamp() * 1000)
    return x
t = pq.read_table(path)
col = t.column("decodedValue").combine_chunks()
print(json.dumps({"reader": "pyarrow", "type": str(col.type),
                  "rows": [norm(v) for v in col.to_pylist(maps_as_pydicts="strict")]}))
con = duckdb.connect()
names = [d[0] for d in con.execute("SELECT decodedValue.* FROM read_parquet(?) LIMIT 0", [path]).description]
ts = " REPLACE (epoch_ms(ts) AS ts)" if "ts" in names else ""
cur = con.execute(f"SELECT *{ts} FROM "
                  "(SELECT decodedValue IS NULL AS absent, decodedValue.*, \"offset\" FROM read_parquet(?)) "
                  "ORDER BY \"offset\"", [path])
cols = [d[0] for d in cur.description]
rows = []
for r in cur.fetchall():
    d = dict(zip(cols, r))
    d.pop("offset")
    rows.append(None if d.pop("absent") else norm(d))
print(json.dumps({"reader": "duckdb", "rows": rows}))
"#;

/// Exports `part` with `flags` and returns the report and each reader's `decodedValue` rows.
fn decoded_read_back(part: &Path, flags: &[&str], bytes: &str) -> (Value, Vec<Value>) {
    let out = part.parent().unwrap().join("decoded.parquet");
    let o = out.to_str().unwrap();
    let args = [
        &["export", "--json", "--out", o],
        flags,
        &[part.to_str().unwrap()],
    ]
    .concat();
    let (code, report, err) = kseg(&args);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&report).unwrap();
    common::assert_matches_schema("export", std::slice::from_ref(&report));
    let readers = python(DECODED_READER, &[bytes, o])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (report, readers)
}

/// A decoder's JSON without its nulls (Arrow has a null where Avro's JSON says null and
/// where Protobuf's JSON leaves a default value out).
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_nulls).collect()),
        v => v.clone(),
    }
}

/// What `dump --value-decoder …` prints as each record's `decodedValue` (null when it does
/// not decode).
fn dumped_decoded(part: &Path, flags: &[&str]) -> Vec<Value> {
    let args = [&["dump", "--jsonl"], flags, &[part.to_str().unwrap()]].concat();
    let (code, out, err) = kseg(&args);
    assert_eq!(code, 0, "{err}");
    out.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "record")
        .map(|v| without_nulls(&v["decodedValue"]))
        .collect()
}

#[test]
fn decoded_avro_columns_equal_the_decoders_json() {
    use apache_avro::types::Value as Avro;
    if !readers_present() {
        return;
    }
    const SCHEMA: &str = r#"{"type": "record", "name": "Order", "namespace": "shop", "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": {"type": "record", "name": "Customer", "fields": [
            {"name": "name", "type": "string"},
            {"name": "email", "type": ["null", "string"], "default": null}]}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {"name": "tags", "type": {"type": "map", "values": "int"}},
        {"name": "lines", "type": {"type": "array", "items": "Customer"}},
        {"name": "discount", "type": ["null", "double"]},
        {"name": "raw", "type": "bytes"},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}}]}"#;
    let schema = apache_avro::Schema::parse_str(SCHEMA).unwrap();
    let customer = |name: &str, email: Option<&str>| {
        let email = match email {
            None => Avro::Union(0, Box::new(Avro::Null)),
            Some(e) => Avro::Union(1, Box::new(Avro::String(e.into()))),
        };
        Avro::Record(vec![
            ("name".into(), Avro::String(name.into())),
            ("email".into(), email),
        ])
    };
    let order = |id: i64, discount: Option<f64>, lines: Vec<Avro>| {
        let datum = apache_avro::to_avro_datum(
            &schema,
            Avro::Record(vec![
                ("id".into(), Avro::Long(id)),
                ("customer".into(), customer("c", Some("a@x"))),
                ("status".into(), Avro::Enum(1, "PAID".into())),
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
                ("lines".into(), Avro::Array(lines)),
                (
                    "discount".into(),
                    match discount {
                        None => Avro::Union(0, Box::new(Avro::Null)),
                        Some(d) => Avro::Union(1, Box::new(Avro::Double(d))),
                    },
                ),
                ("raw".into(), Avro::Bytes(vec![0, 0xff, b'a'])),
                ("ts".into(), Avro::TimestampMillis(1_700_000_000_123 + id)),
            ]),
        )
        .unwrap();
        [vec![0, 0, 0, 0, 42], datum].concat()
    };
    let values = [
        order(
            1,
            Some(2.5),
            vec![customer("l1", None), customer("l2", Some("e"))],
        ),
        order(-7, None, vec![]),
        b"not avro".to_vec(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let part = common::write_values(dir.path(), "orders", &values);
    let schemas = dir.path().join("schemas");
    std::fs::create_dir(&schemas).unwrap();
    std::fs::write(schemas.join("42.avsc"), SCHEMA).unwrap();
    let flags = [
        "--value-decoder",
        "avro",
        "--schema-dir",
        schemas.to_str().unwrap(),
    ];
    let want = dumped_decoded(&part, &flags);
    assert_eq!(want[0]["lines"][1]["email"], "e", "{want:?}");
    assert_eq!(want[2], Value::Null);

    let (report, readers) = decoded_read_back(&part, &flags, "latin1");
    assert_eq!(report["undecodedValueCount"], 1, "{report}");
    assert_eq!(report["undecodedKeyCount"], Value::Null);
    assert_eq!(
        readers[0]["type"],
        "struct<id: int64, customer: struct<name: string, email: string>, status: string, \
         tags: map<string, int32 ('tags')>, lines: list<item: struct<name: string, email: string>>, \
         discount: double, raw: binary, ts: timestamp[ms, tz=UTC]>"
    );
    for r in &readers {
        assert_eq!(r["rows"].as_array().unwrap(), &want, "{}", r["reader"]);
    }
    // export's --value-format names the same decoder.
    let by_format = ["--value-format", "avro", "--schema-dir", flags[3]];
    let (report, again) = decoded_read_back(&part, &by_format, "latin1");
    assert_eq!(report["undecodedValueCount"], 1, "{report}");
    assert_eq!(again, readers);
}

#[test]
fn decoded_protobuf_columns_equal_the_decoders_json() {
    use prost_reflect::prost::Message as _;
    use prost_reflect::{DynamicMessage, MapKey, Value as Proto};
    if !readers_present() {
        return;
    }
    const ORDERS: &str = r#"syntax = "proto3";
package shop;
enum Status { NEW = 0; PAID = 1; }
message Order {
  int64 id = 1;
  Customer customer = 2;
  Status status = 3;
  repeated string lines = 4;
  map<string, int32> tags = 5;
  bytes note = 6;
  uint64 big = 7;
  repeated Customer friends = 8;
  message Customer { string name = 1; Order last = 2; }
}
"#;
    let dir = tempfile::tempdir().unwrap();
    let schemas = dir.path().join("schemas");
    std::fs::create_dir(&schemas).unwrap();
    std::fs::write(schemas.join("5.proto"), ORDERS).unwrap();
    let mut compiler = protox::Compiler::new([&schemas]).unwrap();
    compiler.open_file("5.proto").unwrap();
    let pool = compiler.descriptor_pool();
    let customer_type = pool.get_message_by_name("shop.Order.Customer").unwrap();
    let order = |id: i64, big: u64, names: &[&str]| {
        let mut o = DynamicMessage::new(pool.get_message_by_name("shop.Order").unwrap());
        o.set_field_by_name("id", Proto::I64(id));
        o.set_field_by_name("status", Proto::EnumNumber(1));
        o.set_field_by_name("lines", Proto::List(vec![Proto::String("x".into())]));
        let tags = [("b", -2), ("a", 1)].map(|(k, v)| (MapKey::String(k.into()), Proto::I32(v)));
        o.set_field_by_name("tags", Proto::Map(tags.into_iter().collect()));
        o.set_field_by_name("note", Proto::Bytes(vec![0xff, 0x00].into()));
        o.set_field_by_name("big", Proto::U64(big));
        let friends = names.iter().map(|n| {
            let mut c = DynamicMessage::new(customer_type.clone());
            c.set_field_by_name("name", Proto::String((*n).into()));
            Proto::Message(c)
        });
        o.set_field_by_name("friends", Proto::List(friends.collect()));
        [vec![0, 0, 0, 0, 5, 0], o.encode_to_vec()].concat()
    };
    let values = [
        order(-5, u64::MAX, &["a", "b"]),
        vec![0, 0, 0, 0, 5],
        order(0, 1, &[]),
    ];
    let part = common::write_values(dir.path(), "orders", &values);
    let flags = [
        "--value-decoder",
        "protobuf",
        "--schema-dir",
        schemas.to_str().unwrap(),
    ];
    let mut want = dumped_decoded(&part, &flags);
    assert_eq!(want[0]["id"], "-5", "{want:?}");
    assert_eq!(want[1], Value::Null);
    // Protobuf's JSON writes 64-bit integers as strings; the columns hold them as integers.
    for w in want.iter_mut().filter(|w| w.is_object()) {
        for (k, v) in w.as_object_mut().unwrap() {
            if k == "id" || k == "big" {
                *v = serde_json::from_str(v.as_str().unwrap()).unwrap();
            }
        }
    }

    let (report, readers) = decoded_read_back(&part, &flags, "base64");
    assert_eq!(report["undecodedValueCount"], 1, "{report}");
    // The message recurs through Customer.last: there it is its JSON text.
    assert_eq!(
        readers[0]["type"],
        "struct<id: int64, customer: struct<name: string, last: string>, status: string, \
         lines: list<item: string>, tags: map<string, int32 ('tags')>, note: binary, \
         big: uint64, friends: list<item: struct<name: string, last: string>>>"
    );
    for r in &readers {
        assert_eq!(r["rows"].as_array().unwrap(), &want, "{}", r["reader"]);
    }
}

#[test]
fn a_log_dirs_future_delete_and_stray_partitions_are_skipped_unless_named() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = tmp.path().join("logs");
    let live = common::write_values(&logs, "orders", &[b"a".to_vec(), b"b".to_vec()]);
    std::fs::remove_file(logs.join("SPEC.json")).unwrap();
    // The same records again in each form the broker does not serve.
    let id = "0123456789abcdef0123456789abcdef";
    let others: Vec<_> = ["future", "delete", "stray"]
        .map(|s| logs.join(format!("orders-0.{id}-{s}")))
        .into();
    for o in &others {
        common::copy_dir(&live, o);
    }
    let out = tmp.path().join("t.jsonl");
    let o = out.to_str().unwrap();
    let (code, report, err) = kseg(&[
        "export",
        "--json",
        "--format",
        "jsonl",
        "--out",
        o,
        logs.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["rowCount"], 2, "{report}");
    assert_eq!(report["skippedPartitionDirCount"], 3);
    assert!(
        err.contains("3 -delete, -future or -stray partition director(ies) skipped"),
        "{err}"
    );
    // Named, the -future directory is what is exported.
    let (code, report, err) = kseg(&[
        "export",
        "--json",
        "--format",
        "jsonl",
        "--out",
        o,
        others[0].to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(
        (&report["rowCount"], &report["skippedPartitionDirCount"]),
        (&json!(2), &json!(0))
    );
}

/// Issue 33: one partition from two directories (replicas from two brokers' log dirs) is
/// refused before anything is written: one table would hold each offset twice. The same
/// directory named twice is read once.
#[test]
fn one_partition_from_two_directories_is_refused_and_one_named_twice_read_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("broker-a"), tmp.path().join("broker-b"));
    for logs in [&a, &b] {
        common::write_values(logs, "orders", &[b"a".to_vec(), b"b".to_vec()]);
        std::fs::remove_file(logs.join("SPEC.json")).unwrap();
    }
    let out = tmp.path().join("t.jsonl");
    let o = out.to_str().unwrap();
    let (code, _, err) = kseg(&[
        "export",
        "--format",
        "jsonl",
        "--out",
        o,
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("partition orders-0 is also in") && err.contains("broker-a"),
        "{err}"
    );
    assert!(!out.exists(), "nothing is written");
    let (code, report, err) = kseg(&[
        "export",
        "--json",
        "--format",
        "jsonl",
        "--out",
        o,
        a.to_str().unwrap(),
        a.join("orders-0").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["rowCount"], 2, "{report}");
}

/// Issue 40: `bytesRead` is the `.log` bytes read, each once. A partition of 64 KiB records,
/// in batches of one record and in batches of 16 (just over 1 MiB, as a producer with a
/// `batch.size` of 1 MiB writes them), reports exactly the size of its `.log`: batches over
/// 1 MiB were read twice (their checksum streamed, then the batch loaded), 2x the file.
#[test]
fn bytes_read_is_each_log_byte_once_for_64_kib_records() {
    for per_batch in [1, 16] {
        let tmp = tempfile::tempdir().unwrap();
        let part = tmp.path().join("big-0");
        let batches: Vec<Value> = (0..64 / per_batch)
            .map(|b| {
                let records: Vec<Value> = (0..per_batch)
                    .map(|i| json!({"key": "k", "value_hex": common::hex(&vec![(b * per_batch + i) as u8; 64 << 10])}))
                    .collect();
                json!({"records": records})
            })
            .collect();
        let spec = json!({"topic": "big", "partition": 0,
            "ops": [{"op": "append", "batches": batches}]});
        common::kseg_write(&spec.to_string(), &part);
        let out = tmp.path().join("t.jsonl");
        let (code, report, err) = kseg(&[
            "export",
            "--json",
            "--format",
            "jsonl",
            "--out",
            out.to_str().unwrap(),
            part.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        let report: Value = serde_json::from_str(&report).unwrap();
        assert_eq!(report["rowCount"], 64, "{report}");
        let log_bytes: u64 = common::logs(&part)
            .iter()
            .map(|l| l.metadata().unwrap().len())
            .sum();
        assert!(log_bytes > 64 << 16, "{log_bytes}");
        assert_eq!(
            report["bytesRead"], log_bytes,
            "{per_batch} record(s) per batch: {report}"
        );
    }
}

/// Issue 40: `--out` is any bytes a local path can be: a file and a Hive tree under a
/// directory whose name is not UTF-8 are written under exactly those bytes (nothing under a
/// lossy name), named in the report with the bytes escaped (docs/json.md, "Paths"); an
/// object-storage URL that is not UTF-8 is refused, nothing written.
#[test]
fn an_out_path_that_is_not_utf8_is_written_as_its_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    let part = common::write_values(tmp.path(), "orders", &[b"a".to_vec(), b"b".to_vec()]);
    let dir = tmp.path().join(std::ffi::OsStr::from_bytes(b"out\xff"));
    let run = |out: &Path| {
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
            .args(["export", "--json", "--format", "jsonl", "--out"])
            .arg(out)
            .arg(&part)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&run.stderr).into_owned();
        (run.status.code().unwrap(), run.stdout, err)
    };
    let file = dir.join(std::ffi::OsStr::from_bytes(b"t\xfe.jsonl"));
    std::fs::create_dir(&dir).unwrap();
    let (code, report, err) = run(&file);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_slice(&report).unwrap();
    let escaped = format!("{}/out\\xff/t\\xfe.jsonl", tmp.path().to_str().unwrap());
    assert_eq!(report["files"][0]["file"], escaped.as_str(), "{report}");
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 2);
    // A Hive tree at a directory not yet there.
    let tree = dir.join(std::ffi::OsStr::from_bytes(b"tree\xfd"));
    let (code, report, err) = run(&tree);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_slice(&report).unwrap();
    let written = tree.join("topic=orders/partition=0/part-00000.jsonl");
    assert_eq!(
        std::fs::read_to_string(&written).unwrap().lines().count(),
        2
    );
    assert_eq!(
        report["files"][0]["file"],
        format!(
            "{}/out\\xff/tree\\xfd/topic=orders/partition=0/part-00000.jsonl",
            tmp.path().to_str().unwrap()
        )
        .as_str(),
    );
    // Nothing else: no file or directory under a lossy name.
    let mut names: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().as_bytes().to_vec())
        .collect();
    names.sort();
    assert_eq!(names, [b"tree\xfd".to_vec(), b"t\xfe.jsonl".to_vec()]);
    // A URL names objects by UTF-8 keys.
    let url = Path::new(std::ffi::OsStr::from_bytes(b"s3://lake/t\xff.jsonl"));
    let (code, _, err) = run(url);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a URL must be UTF-8"), "{err}");
}

/// An export run by a library caller on every thread of rayon's global pool at once: its
/// Parquet writer encodes on threads of its own, so it never waits on a pool whose threads
/// are all waiting on it (a hang before, when the columns were encoded on the global pool).
#[test]
fn exports_on_every_thread_of_rayons_pool_finish() {
    use kseg::ops::export::{export, Compression, ExportOptions, Format, Layout};
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_path_buf();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rows = rayon::broadcast(|ctx| {
            let opts = ExportOptions {
                format: Format::Parquet,
                compression: Compression::Snappy,
                row_group_bytes: 1 << 20,
                layout: Layout::File(out.join(format!("{}.parquet", ctx.index()))),
                key_decoder: None,
                value_decoder: None,
                json_schema_sample: 0,
            };
            let paths = [Path::new("testdata/orders").to_path_buf()];
            export(&paths, &Default::default(), &opts)
                .unwrap()
                .0
                .row_count
        });
        done.send(rows).unwrap();
    });
    let rows = finished
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("exports on every thread of rayon's global pool finish");
    assert_eq!(rows.len(), rayon::current_num_threads());
    assert!(rows.iter().all(|&r| r == rows[0] && r > 0), "{rows:?}");
}
