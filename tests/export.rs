//! `kseg export`: its Parquet and Arrow files read back by independent readers (pyarrow and
//! DuckDB, Python packages `.ci/run` installs) hold exactly the records `dump --json` prints,
//! byte for byte, for every reference scenario; `read_committed` drops exactly the aborted and
//! open transactions' records, worked out here from the markers `dump` prints; a Hive tree is
//! one table to DuckDB.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

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

fn python(script: &str, args: &[&str]) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 (pyarrow and duckdb are installed by .ci/run): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Whether pyarrow and duckdb can be imported; without them the test fails when
/// `KSEG_REFERENCE` is set (CI), else it is skipped, said on stderr.
fn readers_present() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import pyarrow, duckdb"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("KSEG_REFERENCE").is_none(),
            "pyarrow and duckdb are needed (pip install pyarrow duckdb)"
        );
        eprintln!("skipped: python3 with pyarrow and duckdb not found");
    }
    ok
}

fn kseg(args: &[&str]) -> (i32, String, String) {
    let out = common::kseg(args);
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
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
