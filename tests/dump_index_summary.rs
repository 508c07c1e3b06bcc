//! `dump`'s end-of-run `Mismatches in` list (issue 17, item 7): only index entries the log
//! really contradicts, as `verify` judges them, not kafka-dump-log's false alarms for the
//! entries of multi-batch appends (`LogSegment.append` indexes an append's largest offset at
//! its first batch's position).

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

/// `(file name, index offset, log offset)` of each `Mismatches in` line on dump's stderr.
fn listed(stderr: &str) -> BTreeSet<(String, i64, i64)> {
    let mut out = BTreeSet::new();
    let mut file = None;
    for line in stderr.lines() {
        if let Some(p) = line.strip_prefix("Mismatches in :") {
            file = Path::new(p)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
        } else if let Some(rest) = line.strip_prefix("  Index offset: ") {
            let (index, log) = rest.split_once(", log offset: ").unwrap();
            out.insert((
                file.clone().unwrap(),
                index.parse().unwrap(),
                log.parse().unwrap(),
            ));
        } else {
            file = None;
        }
    }
    out
}

fn dump_stderr(dir: &Path) -> String {
    String::from_utf8(common::kseg(&["dump", dir.to_str().unwrap()]).stderr).unwrap()
}

/// Kafka's rule in kafka-dump-log (`DumpLogSegments.dumpIndex`): an entry whose offset is not
/// the last offset of the first batch at its position, from Kafka's own read of the files.
fn kafka_dump_log_pairs(expected_dump: &Value) -> usize {
    let files = expected_dump["files"].as_object().unwrap();
    let mut n = 0;
    for (name, f) in files {
        let Some(log_name) = name.strip_suffix(".index") else {
            continue;
        };
        let batches = files[&format!("{log_name}.log")]["batches"]
            .as_array()
            .unwrap();
        for e in f["entries"].as_array().unwrap() {
            let at = batches
                .iter()
                .find(|b| b["position"] == e["position"])
                .unwrap();
            n += usize::from(at["lastOffset"] != e["offset"]);
        }
    }
    n
}

/// The a-plain-v2 scenario (multi-batch appends, a healthy partition) and Kafka's dump of it.
fn plain() -> Option<(std::path::PathBuf, Value)> {
    let scenario = common::reference_dir()?.join("a-plain-v2");
    let text = std::fs::read_to_string(scenario.join("expected-dump.json")).unwrap();
    Some((scenario, serde_json::from_str(&text).unwrap()))
}

#[test]
fn multi_batch_appends_are_no_mismatch() {
    let Some((scenario, expected)) = plain() else {
        return;
    };
    // kafka-dump-log would list some entries of this healthy partition…
    assert!(kafka_dump_log_pairs(&expected) > 0);
    // …which verify calls clean, and dump does not list.
    let dir = scenario.join("input/orders-0");
    let verify = common::kseg(&["verify", dir.to_str().unwrap()]);
    assert_eq!(verify.status.code(), Some(0));
    assert_eq!(listed(&dump_stderr(&dir)), BTreeSet::new());
}

#[test]
fn entries_the_log_contradicts_are_listed_with_the_log_offset() {
    let Some((scenario, expected)) = plain() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&scenario.join("input/orders-0"), &dir);
    let name = "00000000000000000317";
    let base = 317;
    let entries = expected["files"][format!("{name}.index")]["entries"]
        .as_array()
        .unwrap()
        .clone();
    let batches = expected["files"][format!("{name}.log")]["batches"]
        .as_array()
        .unwrap()
        .clone();
    let batch_at = |pos: &Value| batches.iter().find(|b| &b["position"] == pos).unwrap();
    // Entry 1 names an offset below the first offset of the batch at its position (a lookup
    // would skip it); entry 3 points one byte into a batch.
    let e1 = &entries[1];
    let hidden = batch_at(&e1["position"])["baseOffset"].as_i64().unwrap() - 1;
    assert!(hidden > entries[0]["offset"].as_i64().unwrap());
    let e3 = &entries[3];
    let index_path = dir.join(format!("{name}.index"));
    let mut index = std::fs::read(&index_path).unwrap();
    index[8..12].copy_from_slice(&((hidden - base) as u32).to_be_bytes());
    let moved = e3["position"].as_u64().unwrap() as u32 + 1;
    index[28..32].copy_from_slice(&moved.to_be_bytes());
    std::fs::write(&index_path, &index).unwrap();
    let want: BTreeSet<(String, i64, i64)> = [
        (
            format!("{name}.index"),
            hidden,
            batch_at(&e1["position"])["lastOffset"].as_i64().unwrap(),
        ),
        (format!("{name}.index"), e3["offset"].as_i64().unwrap(), -1),
    ]
    .into();
    assert_eq!(listed(&dump_stderr(&dir)), want);
    // The same two entries are what verify finds wrong in that index.
    let v = common::kseg(&["verify", "--json", dir.to_str().unwrap()]);
    let report: Value = serde_json::from_slice(&v.stdout).unwrap();
    let found: BTreeSet<i64> = report["partitions"][0]["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(
            report["partitions"][0]["segments"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|s| s["findings"].as_array().into_iter().flatten()),
        )
        .filter(|f| f["check"].as_str().unwrap().starts_with("index."))
        .map(|f| f["offset"].as_i64().unwrap())
        .collect();
    assert_eq!(
        found,
        want.iter().map(|(_, o, _)| *o).collect::<BTreeSet<_>>()
    );
}
