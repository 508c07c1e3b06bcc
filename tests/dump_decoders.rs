//! `kseg dump --key-decoder-class / --value-decoder-class` with the decoder classes Kafka
//! ships, on the reference corpus: every record's key and payload text equals what the class
//! makes of the record's bytes (the bytes from Kafka's own reader, expected-dump.json), derived
//! here from the classes' source (tools-api `IntegerDecoder.java`: `ByteBuffer.wrap(bytes)
//! .getInt()`, `LongDecoder.java`: `getLong()`, both big-endian over the leading bytes; fewer
//! bytes throw, which kseg reports per record instead of dying). Unknown classes exit 2.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// The text a decoder class gives for `bytes`: the leading `N` bytes as a big-endian number.
fn number_text<const N: usize>(bytes: &[u8]) -> String {
    if bytes.len() < N {
        return format!(
            "[not decoded: expected at least {N} bytes, found {}] {}",
            bytes.len(),
            common::hex(bytes)
        );
    }
    // Two's complement of the leading bytes, most significant first.
    let mut n: i128 = 0;
    for b in &bytes[..N] {
        n = n * 256 + i128::from(*b);
    }
    if n >= 1i128 << (8 * N - 1) {
        n -= 1i128 << (8 * N);
    }
    n.to_string()
}

/// Record offset → the (key, payload) parts of its line, from kseg's text output.
fn record_parts(text: &str) -> BTreeMap<i64, (Option<String>, Option<String>)> {
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| offset: ")) {
        let offset: i64 = line["| offset: ".len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let (head, payload) = match line.split_once(" payload: ") {
            Some((h, p)) => (h, Some(p.to_string())),
            None => (line, None),
        };
        let key = head.split_once(" key: ").map(|(_, k)| k.to_string());
        out.insert(offset, (key, payload));
    }
    out
}

/// `kseg dump ARGS`: exit status, stdout and stderr.
fn kseg_dump(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .arg("dump")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `kseg dump --files FILE ARGS`.
fn run(args: &[&str], file: &Path) -> (i32, String, String) {
    let mut all = vec![std::ffi::OsStr::new("--files"), file.as_os_str()];
    all.extend(args.iter().map(std::ffi::OsStr::new));
    kseg_dump(&all)
}

#[test]
fn integer_and_long_decoder_classes_print_what_kafkas_classes_make_of_the_bytes() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let mut checked = 0;
    for scenario in common::scenarios(&root) {
        let expected: Value =
            serde_json::from_slice(&std::fs::read(scenario.join("expected-dump.json")).unwrap())
                .unwrap();
        for (name, file) in expected["files"].as_object().unwrap() {
            if file["type"] != "log" {
                continue;
            }
            let mut want = BTreeMap::new();
            for b in file["batches"].as_array().unwrap() {
                if b["isControl"] == true {
                    continue;
                }
                for r in b["records"].as_array().into_iter().flatten() {
                    let bytes = |f: &str| r[f].as_str().map(common::unhex);
                    want.insert(
                        r["offset"].as_i64().unwrap(),
                        (
                            bytes("key").map(|k| number_text::<4>(&k)),
                            bytes("value").map(|v| number_text::<8>(&v)),
                        ),
                    );
                }
            }
            let path = scenario.join("input/orders-0").join(name);
            for tools in ["org.apache.kafka.tools.api", "kafka.serializer"] {
                let (_, text, _) = run(
                    &[
                        "--key-decoder-class",
                        &format!("{tools}.IntegerDecoder"),
                        "--value-decoder-class",
                        &format!("{tools}.LongDecoder"),
                    ],
                    &path,
                );
                let got = record_parts(&text);
                for (offset, parts) in &want {
                    // kseg goes on where Kafka's reader stopped; compare what both read.
                    if let Some(g) = got.get(offset) {
                        assert_eq!(g, parts, "{}/{name} offset {offset}", scenario.display());
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} records compared");
}

#[test]
fn unknown_classes_are_refused_with_kseg_decoders_named() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let log = root.join("a-plain-v2/input/orders-0/00000000000000000000.log");
    let (code, out, err) = run(&["--value-decoder-class", "com.example.AvroDecoder"], &log);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("com.example.AvroDecoder"), "{err}");
    assert!(
        err.contains("--value-decoder string|int|long|hex|base64|json"),
        "{err}"
    );
    // Without a class name, the option means kafka-dump-log's default, StringDecoder.
    let (code, text, _) = run(&["--value-decoder-class"], &log);
    let (_, plain, _) = run(&["--print-data-log"], &log);
    assert_eq!((code, text), (0, plain));
}

#[test]
fn json_decoder_nests_values_and_reports_invalid_ones_per_record() {
    let dir = tempfile::tempdir().unwrap();
    let spec = r#"{"topic":"t","partition":0,"ops":[{"op":"append","batches":[{"records":[
        {"key":"k1","value":"{ \"a\" : [1, 2] }"},
        {"key":"k2","value":"not json"},
        {"key":"k3"}]}]}]}"#;
    let out_dir = dir.path().join("t-0");
    common::kseg_write(spec, &out_dir);
    let log = out_dir.join("00000000000000000000.log");
    let (code, text, _) = run(&["--value-decoder", "json"], &log);
    assert_eq!(code, 0);
    let parts = record_parts(&text);
    assert_eq!(parts[&0].1.as_deref(), Some(r#"{"a":[1,2]}"#));
    assert!(parts[&1]
        .1
        .as_deref()
        .unwrap()
        .starts_with("[not decoded: invalid JSON"));
    assert_eq!(
        parts[&1].1.as_deref().unwrap().rsplit(' ').next(),
        Some(common::hex(b"not json").as_str())
    );
    assert_eq!(parts[&2], (Some("k3".into()), None));
    let (_, json, _) = run(&["--value-decoder", "json", "--jsonl"], &log);
    let records: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "record")
        .collect();
    assert_eq!(records[0]["decodedValue"], serde_json::json!({"a": [1, 2]}));
    assert!(records[1]["valueError"]
        .as_str()
        .unwrap()
        .starts_with("invalid JSON"));
    assert!(records[1].get("decodedValue").is_none());
    assert_eq!(records[1]["value"]["data"], "not json");
}

/// `kseg dump ARGS PATH`: exit status and stdout.
fn dump_dir(args: &[&str], path: &Path) -> (i32, String) {
    let mut all: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    all.push(path.as_os_str());
    let (code, out, _) = kseg_dump(&all);
    (code, out)
}

#[test]
fn decode_auto_picks_the_decoder_kafka_dump_log_was_run_with() {
    let Some(root) = common::reference_internal_dir() else {
        return;
    };
    let mut scenarios = 0;
    for scenario in common::scenarios(&root) {
        let expected: Value =
            serde_json::from_slice(&std::fs::read(scenario.join("expected-decode.json")).unwrap())
                .unwrap();
        let option = expected["decoderOption"].as_str().unwrap();
        let dir = scenario
            .join("input")
            .join(expected["directory"].as_str().unwrap());
        let auto = dump_dir(&["--decode", "auto"], &dir);
        assert_eq!(auto, dump_dir(&[option], &dir), "{}", scenario.display());
        assert_ne!(auto.1, dump_dir(&["--print-data-log"], &dir).1);
        scenarios += 1;
    }
    assert_eq!(scenarios, 6);
    // Any other topic: kafka-dump-log's default decoders; without --decode, nothing decodes.
    let Some(reference) = common::reference_dir() else {
        return;
    };
    let plain = reference.join("a-plain-v2/input/orders-0");
    assert_eq!(
        dump_dir(&["--decode", "auto"], &plain),
        dump_dir(&["--print-data-log"], &plain)
    );
    let offsets = root.join("offsets-classic/input/__consumer_offsets-0");
    assert_eq!(
        dump_dir(&["--print-data-log"], &offsets),
        dump_dir(&["--print-data-log", "--decode", "none"], &offsets)
    );
}

/// `kseg write` of a `__remote_log_metadata` partition whose records are given in the
/// decoder's JSON form, then `kseg dump --remote-log-metadata-decoder`: each record prints as
/// the toString() of Kafka's objects (storage/api RemoteLogSegmentMetadata.java and
/// RemotePartitionDeleteMetadata.java, texts written out by hand here).
#[test]
fn remote_log_metadata_written_and_decoded_back() {
    let topic = "AQEBAQEBAQEBAQEBAQEBAQ";
    let segment = "AgICAgICAgICAgICAgICAg";
    let tip = serde_json::json!({"name": "orders", "id": topic, "partition": 3});
    let spec = serde_json::json!({"topic": "__remote_log_metadata", "partition": 0, "ops": [
        {"op": "append", "batches": [{"records": [
            {"remote": {"type": "REMOTE_LOG_SEGMENT_METADATA_RECORD", "version": 0, "data": {
                "remoteLogSegmentId": {"topicIdPartition": tip, "id": segment},
                "startOffset": 100, "endOffset": 199, "brokerId": 2, "maxTimestampMs": 5,
                "eventTimestampMs": 6, "segmentLeaderEpochs": [{"leaderEpoch": 4, "offset": 100}],
                "segmentSizeInBytes": 1024, "customMetadata": {"hex": "0001"},
                "remoteLogSegmentState": 0}}},
            {"remote": {"type": 2, "version": 0, "data": {
                "topicIdPartition": tip, "brokerId": 1, "eventTimestampMs": 7,
                "remotePartitionDeleteState": 1}}},
            {"value": "not a frame"}
        ]}]}
    ]});
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("__remote_log_metadata-0");
    common::kseg_write(&spec.to_string(), &part);
    let (code, text) = dump_dir(&["--remote-log-metadata-decoder"], &part);
    assert_eq!(code, 0);
    let parts = record_parts(&text);
    assert_eq!(
        parts[&0],
        (None, Some(format!("RemoteLogSegmentMetadata{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition={topic}:orders-3, id={segment}}}, startOffset=100, endOffset=199, brokerId=2, maxTimestampMs=5, eventTimestampMs=6, segmentLeaderEpochs={{4=100}}, segmentSizeInBytes=1024, customMetadata=Optional[CustomMetadata{{2 bytes}}], state=COPY_SEGMENT_STARTED}}")))
    );
    assert_eq!(
        parts[&1].1.as_deref(),
        Some(format!("RemotePartitionDeleteMetadata{{topicPartition={topic}:orders-3, state=DELETE_PARTITION_STARTED, eventTimestampMs=7, brokerId=1}}").as_str())
    );
    // "not a frame": 'n' (0x6e) is read as frame version 110.
    assert_eq!(
        parts[&2].1.as_deref(),
        Some("Error at offset 2, skipping. Could not deserialize metadata record due to unknown frame version 110(only frame version 1 is supported)")
    );
    assert_eq!(dump_dir(&["--decode", "auto"], &part), (code, text));
    let (_, json) = dump_dir(&["--remote-log-metadata-decoder", "--jsonl"], &part);
    let first: Value =
        serde_json::from_str(json.lines().find(|l| l.contains("\"record\"")).unwrap()).unwrap();
    assert_eq!(
        first["decodedValue"]["data"]["segmentLeaderEpochs"][0]["leaderEpoch"],
        4
    );
}
