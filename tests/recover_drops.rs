//! What `recover` says it drops (issue 17, item 8), against Kafka's own numbers: the bytes
//! each segment loses come from `LogLoader.load()`'s outcome (`expected-recover.json`:
//! `bytesTruncated`, `deleted`, `logBytesAfter`), the batches, records and offsets among them
//! from Kafka's own read of the input (`expected-dump.json`: every batch of the dropped byte
//! range whose `isValid` holds).

mod common;

use serde_json::Value;

fn json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The `dropped` entries Kafka's outputs imply for `scenario`.
fn expected(scenario: &std::path::Path) -> Vec<Value> {
    let recover = json(&scenario.join("expected-recover.json"));
    let dump = json(&scenario.join("expected-dump.json"));
    let log_end = recover["logEndOffset"].as_i64().unwrap();
    let mut out = Vec::new();
    for s in recover["segments"].as_array().unwrap() {
        let base = s["baseOffset"].as_i64().unwrap();
        let deleted = s["deleted"].as_bool().unwrap();
        let truncated = s["bytesTruncated"].as_u64().unwrap();
        if !deleted && truncated == 0 {
            continue;
        }
        let before = s["logBytesBefore"].as_u64().unwrap();
        let from = if deleted { 0 } else { before - truncated };
        let file = format!("{base:020}.log");
        let valid: Vec<&Value> = dump["files"][&file]["batches"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["position"].as_u64().unwrap() >= from && b["isValid"] == true)
            .collect();
        let valid_bytes: u64 = valid
            .iter()
            .map(|b| b["sizeInBytes"].as_u64().unwrap())
            .sum();
        out.push(serde_json::json!({
            "file": file,
            "position": from,
            "sizeInBytes": before - from,
            "baseOffset": if from > 0 { log_end } else { base.max(log_end) },
            "lastOffset": valid.last().map(|b| b["lastOffset"].clone()),
            "recordCount": valid.iter().map(|b| b["count"].as_u64().unwrap()).sum::<u64>(),
            "batchCount": valid.len(),
            "damagedBytes": before - from - valid_bytes,
        }));
    }
    out
}

#[test]
fn recover_reports_what_kafka_drops_in_offsets_records_batches_and_bytes() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let mut dropping = Vec::new();
    for scenario in common::scenarios(&root) {
        if !scenario.join("expected-recover.json").is_file() {
            continue;
        }
        let recover = json(&scenario.join("expected-recover.json"));
        let input = scenario.join("input/orders-0");
        let out = common::kseg(&[
            "recover",
            "--json",
            "--now",
            &recover["params"]["nowMs"].to_string(),
            "--recovery-point",
            &recover["params"]["recoveryPointCheckpoint"].to_string(),
            input.to_str().unwrap(),
        ]);
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let want = expected(&scenario);
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(doc["droppedSegments"], Value::from(want.clone()), "{name}");
        if !want.is_empty() {
            dropping.push(name.clone());
            // The text says the same, one line per segment, with no scratch path.
            let text = common::kseg(&[
                "recover",
                "--now",
                &recover["params"]["nowMs"].to_string(),
                input.to_str().unwrap(),
            ]);
            let text = String::from_utf8(text.stdout).unwrap();
            for d in &want {
                let base = d["file"].as_str().unwrap()[..20].parse::<i64>().unwrap();
                let lines: Vec<&str> = text
                    .lines()
                    .filter(|l| l.starts_with(&format!("  segment {base}:")))
                    .collect();
                assert_eq!(lines.len(), 1, "{name}: {text}");
                let size = d["sizeInBytes"].as_u64().unwrap();
                let said = match d["lastOffset"].as_i64() {
                    Some(last) => format!(
                        "drops offsets {}..{last}: {} records in {} batches, {size} bytes",
                        d["baseOffset"], d["recordCount"], d["batchCount"]
                    ),
                    None => format!("drops no record: {size} bytes"),
                };
                assert!(
                    lines[0].contains(&said),
                    "{name}: {said} not in {}",
                    lines[0]
                );
            }
        }
        // The partition's own path may lie under the temp dir too (a clone in /tmp): only
        // what is left once it is taken out must not point there.
        assert!(
            !String::from_utf8_lossy(&out.stdout)
                .replace(input.to_str().unwrap(), "")
                .contains(&std::env::temp_dir().display().to_string()),
            "{name}: a scratch path in the report"
        );
    }
    // The corrupt batch in the middle and the torn tail both drop something.
    assert!(
        dropping.iter().any(|n| n == "g-corrupt-middle")
            && dropping.iter().any(|n| n == "f-crash-torn-tail"),
        "{dropping:?}"
    );
}
