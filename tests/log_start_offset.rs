//! One log start offset (issue #33 item 6): every command that reports one gives, for the same
//! partition, the value the broker loads: the larger of the log dir's
//! `log-start-offset-checkpoint` entry and the first segment's base offset
//! (storage/src/main/java/org/apache/kafka/storage/internals/log/LogLoader.java, `load`:
//! `Math.max(logStartOffsetCheckpoint, segments.firstSegment().get().baseOffset())`), never
//! the first batch's offset.

mod common;

use std::path::Path;

use serde_json::Value;

/// A segment based at `start` whose first batch is at `start + 40` (the batches below were
/// compacted away), then one more.
fn spec(partition: i32, start: i64) -> String {
    format!(
        r#"{{"topic":"t","partition":{partition},"start_offset":{start},"ops":[
        {{"op":"append","batches":[{{"base_offset":{},"records":[{{"key":"a"}},{{"key":"b"}}]}}]}},
        {{"op":"append","batches":[{{"records":[{{"key":"c"}}]}}]}}]}}"#,
        start + 40
    )
}

fn json(args: &[&str]) -> Value {
    let o = common::kseg(args);
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("kseg {args:?}: {}", String::from_utf8_lossy(&o.stderr)))
}

/// Each command's log start offset for the partition directory `dir` of the log dir `log_dir`,
/// with where it says it came from (`logStartOffsetSource`; null for `offsets`, which names no
/// source: its answer is the offset alone).
fn reported(log_dir: &Path, dir: &Path) -> Vec<(&'static str, Value, Value)> {
    let d = dir.to_str().unwrap();
    let ls = json(&["ls", "--json", log_dir.to_str().unwrap()]);
    let listed = ls["logDirs"][0]["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["dir"] == d)
        .unwrap()
        .clone();
    let both = |name, v: &Value| {
        (
            name,
            v["logStartOffset"].clone(),
            v["logStartOffsetSource"].clone(),
        )
    };
    vec![
        both("verify", &json(&["verify", "--json", d])["partitions"][0]),
        both("ls", &listed),
        both("txns", &json(&["txns", "--json", d])["partitions"][0]),
        both("diff a", &json(&["diff", "--json", d, d])["a"]),
        (
            "offsets",
            json(&["offsets", "--json", "--time", "earliest", d])["partitions"][0]["offset"]
                .clone(),
            Value::Null,
        ),
        both("recover", &json(&["recover", "--json", d])),
        both("retention", &json(&["retention", "--json", d])),
        both("compact", &json(&["compact", "--json", d])),
    ]
}

#[test]
fn every_command_reports_the_log_start_offset_the_broker_loads() {
    let tmp = tempfile::tempdir().unwrap();
    let log_dir = tmp.path().join("kafka-1");
    // t-0: no checkpoint entry: its base, 0 (its first batch is at 40).
    // t-1: checkpointed at 41, inside the first batch (DeleteRecords): 41, from the checkpoint.
    // t-2: based at 100, checkpointed at 7 (below it): the base, 100.
    let base = "first segment base offset";
    let cases = [
        (0, 0, 0, base),
        (1, 0, 41, "log-start-offset-checkpoint"),
        (2, 100, 100, base),
    ];
    for (partition, start, _, _) in cases {
        common::kseg_write(
            &spec(partition, start),
            &log_dir.join(format!("t-{partition}")),
        );
    }
    std::fs::write(
        log_dir.join("log-start-offset-checkpoint"),
        "0\n2\nt 1 41\nt 2 7\n",
    )
    .unwrap();
    for (partition, _, expected, source) in cases {
        let dir = log_dir.join(format!("t-{partition}"));
        let got = reported(&log_dir, &dir);
        assert!(
            got.iter().all(|(_, v, _)| *v == expected),
            "t-{partition}: expected {expected} from every command: {got:?}"
        );
        assert!(
            got.iter()
                .all(|(name, _, s)| *s == source || (*name == "offsets" && s.is_null())),
            "t-{partition}: expected the source {source:?} from every command: {got:?}"
        );
    }
}
