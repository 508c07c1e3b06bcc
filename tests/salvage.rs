//! `salvage` and `recover --salvage`: the valid batches the broker's recovery drops are saved
//! exactly. The broker truncates a segment at its first invalid batch (`LogSegment.recover`,
//! storage/src/main/java/org/apache/kafka/storage/internals/log/LogSegment.java) and deletes
//! every later segment (`LogLoader.recoverLog`, storage/.../internals/log/LogLoader.java), so
//! what is dropped is every batch after the damage; the valid ones among them are what a
//! salvage must hold, byte for byte, and nothing else.

mod common;

use std::path::Path;

use common::{kseg, write_spec_value as write};
use serde_json::{json, Value};

/// The bytes of each batch of every `.log` of `dir`, in offset order.
fn log_batches(dir: &Path) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for log in common::logs(dir) {
        let bytes = std::fs::read(&log).unwrap();
        for (pos, len) in common::batches(&log) {
            out.push(bytes[pos as usize..(pos + len) as usize].to_vec());
        }
    }
    out
}

fn report(out: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("salvage.json")).unwrap()).unwrap()
}

/// g-corrupt-middle: batch 8 of the last segment has a flipped byte (DAMAGE.json). Kafka's
/// reader (expected-dump.json) lists the batches after it as valid: the salvage holds exactly
/// those, at their original offsets and with their bytes; it verifies clean; and the recovery
/// applied after the salvage is still byte-identical to Kafka's recovered-and-closed directory.
#[test]
fn g_corrupt_middle_salvage_then_recover_matches_kafka() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let s = root.join("g-corrupt-middle");
    let damage: Value =
        serde_json::from_slice(&std::fs::read(s.join("DAMAGE.json")).unwrap()).unwrap();
    let dump: Value =
        serde_json::from_slice(&std::fs::read(s.join("expected-dump.json")).unwrap()).unwrap();
    let closed: Value =
        serde_json::from_slice(&std::fs::read(s.join("expected-recover-closed.json")).unwrap())
            .unwrap();
    let file = damage["file"].as_str().unwrap();
    let bad_at = damage["batchPosition"].as_u64().unwrap();
    let log = std::fs::read(s.join("input/orders-0").join(file)).unwrap();
    let kafka_batches = dump["files"][file]["batches"].as_array().unwrap();
    let bad = kafka_batches
        .iter()
        .find(|b| b["position"].as_u64() == Some(bad_at))
        .unwrap();
    assert_eq!(bad["isValid"], json!(false));
    let after: Vec<&Value> = kafka_batches
        .iter()
        .filter(|b| b["position"].as_u64().unwrap() > bad_at)
        .collect();
    assert!(after.iter().all(|b| b["isValid"] == json!(true)));
    let want: Vec<Vec<u8>> = after
        .iter()
        .map(|b| {
            let (p, n) = (
                b["position"].as_u64().unwrap() as usize,
                b["sizeInBytes"].as_u64().unwrap() as usize,
            );
            log[p..p + n].to_vec()
        })
        .collect();

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("logs/orders-0");
    common::copy_dir(&s.join("input/orders-0"), &dir);
    let before = common::dir_contents(&dir);
    let d = dir.to_str().unwrap();
    let now = closed["params"]["nowMs"].to_string();
    let p = &closed["params"];
    let (iib, sib) = (
        p["index.interval.bytes"].to_string(),
        p["segment.index.bytes"].to_string(),
    );
    let cfg = [
        "--index-interval-bytes",
        &iib,
        "--segment-index-bytes",
        &sib,
    ];

    // `kseg salvage` only reads its source.
    let out1 = tmp.path().join("salvage1");
    let o = kseg(&["salvage", d, "--out", out1.to_str().unwrap(), "--now", &now]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        common::dir_contents(&dir),
        before,
        "salvage changes no byte"
    );
    assert_eq!(log_batches(&out1.join("orders-0")), want);

    // `recover --salvage DIR --apply`: the same salvage, then Kafka's recovery.
    let out2 = tmp.path().join("salvage2");
    let o = kseg(
        &[
            &["recover", "--apply", "--no-backup", "--now", &now][..],
            &cfg,
            &["--salvage", out2.to_str().unwrap(), d],
        ]
        .concat(),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let salvaged = out2.join("orders-0");
    assert_eq!(log_batches(&salvaged), want);
    common::assert_verifies_clean(&salvaged);
    assert_eq!(
        common::dir_contents(&dir),
        common::dir_contents(&s.join("expected-recovered-closed/orders-0")),
        "the recovery after the salvage is Kafka's"
    );
    // The report: the saved run starts where the first valid batch after the damage does,
    // and the damaged batch is the one range that held nothing valid.
    let r = report(&out2);
    assert_eq!(r["format"], json!("kseg/3"));
    assert_eq!(r["savedBatchCount"], json!(want.len()));
    assert_eq!(r["savedRuns"][0]["position"], after[0]["position"]);
    assert_eq!(r["savedRuns"][0]["baseOffset"], after[0]["baseOffset"]);
    assert_eq!(
        r["savedRuns"][0]["lastOffset"],
        after.last().unwrap()["lastOffset"]
    );
    let unsaved = r["unsavedRanges"].as_array().unwrap();
    assert_eq!(unsaved.len(), 1);
    assert_eq!(unsaved[0]["position"], json!(bad_at));
    assert_eq!(unsaved[0]["sizeInBytes"], bad["sizeInBytes"]);
}

/// Four segments of three appends (one batch each, generated records), closed cleanly.
fn four_segments(damage: Value) -> Value {
    let mut ops = Vec::new();
    for seg in 0..4 {
        if seg > 0 {
            ops.push(json!({"op": "roll"}));
        }
        for b in 0..3 {
            let seed = seg * 10 + b;
            ops.push(json!({"op": "append", "batches": [{
                "producer_id": 7, "producer_epoch": 0,
                "leader_epoch": seg,
                "gen": {"count": 2 + b, "value_len": 30, "seed": seed}
            }]}));
        }
    }
    json!({"topic": "t", "partition": 0, "ops": ops, "damage": damage})
}

/// Writer-made damage in the first, a middle and the last segment: a flipped byte in the
/// middle batch (CRC mismatch), then recovery drops that batch, the one after it and every
/// later segment. The salvage holds exactly the valid ones: the clean write's batches after
/// the damaged one; the recovery after it, those before.
#[test]
fn writer_damage_in_first_middle_and_last_segment() {
    let tmp = tempfile::tempdir().unwrap();
    let clean_dir = tmp.path().join("clean/t-0");
    write(&four_segments(json!([])), &clean_dir);
    let clean = log_batches(&clean_dir);
    assert_eq!(clean.len(), 12);
    for segment_index in [0i64, 2, 3] {
        let case = tmp.path().join(format!("case{segment_index}"));
        let dir = case.join("logs/t-0");
        write(
            &four_segments(
                json!({"kind": "flip_byte", "segment_index": segment_index, "batch": 1}),
            ),
            &dir,
        );
        let before = common::dir_contents(&dir);
        let out = case.join("salvage");
        let o = kseg(&[
            "salvage",
            dir.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(common::dir_contents(&dir), before);
        let damaged = segment_index as usize * 3 + 1;
        let salvaged = out.join("t-0");
        assert_eq!(
            log_batches(&salvaged),
            clean[damaged + 1..].to_vec(),
            "damage in segment {segment_index}"
        );
        common::assert_verifies_clean(&salvaged);
        let r = report(&out);
        assert_eq!(r["unsavedRanges"].as_array().unwrap().len(), 1);
        assert_eq!(
            r["unsavedRanges"][0]["sizeInBytes"],
            json!(clean[damaged].len()),
            "the damaged batch is the one range not saved"
        );
        // A dropped segment per later source segment: the salvage keeps their boundaries.
        assert_eq!(common::logs(&salvaged).len(), 4 - segment_index as usize);

        // `recover --salvage --apply`: the same salvage, then the recovery keeps exactly the
        // batches before the damaged one.
        let out2 = case.join("salvage2");
        let o = kseg(&[
            "recover",
            "--apply",
            "--no-backup",
            "--salvage",
            out2.to_str().unwrap(),
            dir.to_str().unwrap(),
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            log_batches(&out2.join("t-0")),
            clean[damaged + 1..].to_vec()
        );
        assert_eq!(log_batches(&dir), clean[..damaged].to_vec());
    }
}

/// The record lines of `kseg dump --json --print-data-log DIR`, without the fields that name
/// where a record is stored.
fn dumped_records(dir: &Path) -> Vec<Value> {
    let o = kseg(&["dump", "--jsonl", "--print-data-log", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "record")
        .map(|v| {
            json!([
                v["offset"],
                v["timestamp"],
                v["key"],
                v["value"],
                v["headers"]
            ])
        })
        .collect()
}

/// `kseg dump --json --print-data-log SALVAGE | kseg write --jsonl` keeps the records: the
/// same offsets, timestamps, keys, values and headers.
#[test]
fn salvage_replays_through_dump_and_write_jsonl() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("logs/t-0");
    write(
        &four_segments(json!({"kind": "flip_byte", "segment_index": 1, "batch": 0})),
        &dir,
    );
    let out = tmp.path().join("salvage");
    kseg(&[
        "salvage",
        dir.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let salvaged = out.join("t-0");
    let dump = kseg(&[
        "dump",
        "--jsonl",
        "--print-data-log",
        salvaged.to_str().unwrap(),
    ]);
    let replay = tmp.path().join("replay");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["write", "--jsonl", "--topic", "t", replay.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(&dump.stdout).unwrap();
    assert!(child.wait().unwrap().success());
    let want = dumped_records(&salvaged);
    // Segment 1's batches 1 and 2 (3 + 4 records), then segments 2 and 3 (2 + 3 + 4 each).
    assert_eq!(want.len(), 25);
    assert_eq!(dumped_records(&replay.join("t-0")), want);
}

/// A torn tail and a zero-filled tail hold no valid batch: nothing is saved, the range is
/// reported, and no partition directory is made.
#[test]
fn torn_tail_saves_nothing_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("logs/t-0");
    let mut spec = four_segments(json!([]));
    spec["tail_garbage"] = json!({"type": "partial_batch", "len": 40, "batch_index": -1});
    write(&spec, &dir);
    let out = tmp.path().join("salvage");
    let o = kseg(&[
        "salvage",
        "--json",
        dir.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r, report(&out));
    assert_eq!(r["savedBatchCount"], json!(0));
    assert_eq!(r["salvagedDir"], Value::Null);
    assert_eq!(r["droppedBytes"], json!(40));
    assert_eq!(r["unsavedRanges"][0]["sizeInBytes"], json!(40));
    assert!(!out.join("t-0").exists());

    // A salvage inside the log dir would be taken for a partition by the broker: refused.
    let inside = tmp.path().join("logs/rescued");
    let o = kseg(&[
        "salvage",
        dir.to_str().unwrap(),
        "--out",
        inside.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("inside the log dir"));
    assert!(!inside.exists());

    // Nothing dropped: exit 0, an empty report.
    let clean = tmp.path().join("c/t-0");
    write(&four_segments(json!([])), &clean);
    let out = tmp.path().join("salvage-clean");
    let o = kseg(&[
        "salvage",
        clean.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(report(&out)["droppedBytes"], json!(0));
}
