//! `kseg write --jsonl`: records from a stream, one JSON object per line, batched. The result
//! is byte for byte what the equivalent spec (one append per batch) writes.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use kseg::ops::write::jsonl::write_jsonl;
use kseg::ops::write::spec::{write_spec, Spec, SpecBatch};
use serde_json::{json, Value};

const LINES: &str = r#"{"key":"k1","value":"hello","timestamp":1729990000000}
{"key_hex":"00ff","value_base64":"aGk=","headers":[{"key":"h","value":"v"},{"key":"n"}]}

{"value":null}
{"key_base64":"","value_hex":"","headers":[{"key":"b","value_hex":"0102"}]}
{"value":"last"}
"#;

/// The spec that appends the same records `batch` at a time.
fn equivalent_spec(frame: &Value, batch: &Value, per_batch: usize) -> Value {
    let records: Vec<Value> = LINES
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ops: Vec<Value> = records
        .chunks(per_batch)
        .map(|c| {
            let mut b = batch.clone();
            b["records"] = json!(c);
            json!({"op": "append", "batches": [b]})
        })
        .collect();
    let mut spec = frame.clone();
    spec["ops"] = json!(ops);
    spec
}

#[test]
fn jsonl_equals_the_equivalent_spec() {
    let frame = json!({"topic": "cap", "partition": 2, "config": {"segment.bytes": 200, "compression": "lz4"}, "ops": []});
    for (batch, per_batch) in [
        (json!({}), 2),
        (
            json!({"producer_id": 9, "producer_epoch": 1, "leader_epoch": 3}),
            3,
        ),
        (json!({"magic": 1, "compression": "gzip"}), 4),
        (json!({"magic": 0, "compression": "none"}), 1),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let spec = Spec::from_json(&frame.to_string()).unwrap();
        let template: SpecBatch = serde_json::from_value(batch.clone()).unwrap();
        let a = tmp.path().join("a/cap-2");
        let summary = write_jsonl(&spec, &template, per_batch, &mut LINES.as_bytes(), &a).unwrap();
        assert_eq!(summary.log_end_offset, 5);
        let b = tmp.path().join("b/cap-2");
        let same =
            Spec::from_json(&equivalent_spec(&frame, &batch, per_batch).to_string()).unwrap();
        assert_eq!(write_spec(&same, &b).unwrap(), summary);
        assert_eq!(
            common::dir_contents(&a),
            common::dir_contents(&b),
            "{batch}"
        );
    }
}

#[test]
fn bad_lines_are_errors_naming_the_line() {
    let mut spec = Spec::from_json(r#"{"topic":"t","partition":0,"ops":[]}"#).unwrap();
    spec.source = "<stdin>".into();
    let cases = [
        (
            "{\"value\":\"a\"}\n{\"value\":1}\n",
            "<stdin>: line 2: field `value`: expected a record object",
        ),
        ("{\"value\":\"a\"}\nnot json\n", "<stdin>: line 2:"),
        ("{\"value\":\"a\",\"vlaue\":2}\n", "unknown field `vlaue`"),
        (
            "{\"value_hex\":\"zz\"}\n",
            "<stdin>: lines 1-1: record at offset 0: value: expected an even number of hex digits",
        ),
        (
            "{}\n{}\n{\"key\":\"a\",\"key_hex\":\"00\"}\n",
            "<stdin>: lines 3-3: record at offset 2: key: given in more than one form",
        ),
        ("{\"offset\":5}\n{\"offset\":3}\n", "lines 2-2"),
    ];
    for (input, want) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let err = write_jsonl(
            &spec,
            &SpecBatch::default(),
            1,
            &mut input.as_bytes(),
            &tmp.path().join("t-0"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains(want), "{input:?}: {err}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let with_records = SpecBatch {
        records: Some(Vec::new()),
        ..SpecBatch::default()
    };
    assert!(write_jsonl(&spec, &with_records, 1, &mut "".as_bytes(), tmp.path()).is_err());
    assert!(write_jsonl(
        &spec,
        &SpecBatch::default(),
        0,
        &mut "".as_bytes(),
        tmp.path()
    )
    .is_err());
}

#[test]
fn cli_reads_standard_input() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "--json",
        "--topic",
        "cap",
        "--partition",
        "2",
        "--batch-size",
        "2",
        "--compression",
        "zstd",
        "--compression-level",
        "3",
        "--segment-bytes",
        "200",
        "--crash",
    ];
    let out = write_stdin(&args, tmp.path(), LINES);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["logEndOffset"], 5);
    assert_eq!(summary["close"], "crash");
    assert!(tmp.path().join("cap-2/00000000000000000000.log").exists());

    // The same through the library, with the same settings.
    let frame = json!({"topic": "cap", "partition": 2, "close": "crash",
        "config": {"segment.bytes": 200, "compression": "zstd", "compression_level": 3, "magic": 2}, "ops": []});
    let spec = Spec::from_json(&frame.to_string()).unwrap();
    let lib = tmp.path().join("lib/cap-2");
    write_jsonl(&spec, &SpecBatch::default(), 2, &mut LINES.as_bytes(), &lib).unwrap();
    assert_eq!(
        common::dir_contents(&lib),
        common::dir_contents(&tmp.path().join("cap-2"))
    );

    // Usage errors.
    for args in [
        vec!["write", "--jsonl"],
        vec!["write", "--jsonl", "a", "b"],
        vec!["write", "only-one"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// `kseg write --jsonl ARGS OUTDIR` fed `input`.
fn write_stdin(args: &[&str], out_dir: &std::path::Path, input: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["write", "--jsonl"])
        .args(args)
        .arg(out_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// `kseg write --jsonl --batch-size 1 OUTDIR` fed `input`: exit status and stderr.
fn write_lines(out_dir: &std::path::Path, input: &str) -> (i32, String) {
    let out = write_stdin(&["--batch-size", "1"], out_dir, input);
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Issue 12, item 6: a bad input line leaves nothing (not even the directories it would have
/// created), the error names the line and the field, and the retry is not refused.
#[test]
fn a_failed_write_leaves_nothing_and_the_retry_works() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("logs/new/records-0");
    let cases = [
        (
            "{\"value\": \"a\"}\n{\"value\": \"b\"}\n{\"value\": 3}\n",
            "<stdin>: line 3: field `value`: expected a record object (invalid type: integer `3`",
        ),
        (
            "{\"value\": \"a\"}\n{\"valu\": \"b\"}\n",
            "<stdin>: line 2: field `valu`: expected a record object (unknown field `valu`",
        ),
        (
            "{\"value\": \"a\"}\nnot json\n",
            "<stdin>: line 2: expected a record object",
        ),
    ];
    for (input, words) in cases {
        let (code, stderr) = write_lines(&out, input);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(words), "{stderr}");
        assert_eq!(
            std::fs::read_dir(tmp.path()).unwrap().count(),
            0,
            "{stderr}"
        );
    }
    // Into a directory that exists: it is left as it was, empty.
    let logs = tmp.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let (code, _) = write_lines(&logs, "{\"value\": 3}\n");
    assert_eq!(code, 2);
    assert_eq!(std::fs::read_dir(&logs).unwrap().count(), 0);
    let (code, stderr) = write_lines(&logs, "{\"value\": \"a\"}\n{\"value\": \"b\"}\n");
    assert_eq!(code, 0, "{stderr}");
    let names: Vec<_> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["records-0"]);
    assert!(logs.join("records-0/00000000000000000000.log").is_file());
}

/// A spec whose damage cannot be applied fails after the log was written: nothing is left.
#[test]
fn a_failed_spec_write_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("spec.json");
    let text = json!({"topic": "t", "partition": 0,
        "ops": [{"op": "append", "batches": [{"records": [{"value": "v"}]}]}],
        "damage": [{"kind": "flip_byte", "segment": 7}]});
    std::fs::write(&spec, text.to_string()).unwrap();
    let out_dir = tmp.path().join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .arg("write")
        .arg(&spec)
        .arg(&out_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8(run.stderr).unwrap();
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    // The error names the file where it would have been, not the temporary directory.
    assert!(stderr.contains("out/t-0/"), "{stderr}");
    assert!(!stderr.contains("kseg-tmp"), "{stderr}");
    assert!(!out_dir.exists());
}
