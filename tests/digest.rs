//! `kseg digest`: equal for the same records however they are laid out in segments, different
//! after any single change to a record, and the documented encoding computed by hand.

mod common;

use common::{kseg, write_spec_value as write};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// `kseg digest --json ARGS DIR` of `spec` written into a fresh directory.
fn digest_of(spec: &Value, args: &[&str]) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t-0");
    write(spec, &dir);
    let o = kseg(&[&["digest", "--json"][..], args, &[dir.to_str().unwrap()]].concat());
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Twelve records with explicit keys, values, headers and timestamps, in four appends of
/// three (an idempotent producer), leader epoch `epoch`; `change` edits record `i` first.
fn records_spec(segment_bytes: u64, epoch: i32, change: &dyn Fn(usize, &mut Value)) -> Value {
    let mut ops = Vec::new();
    for b in 0..4 {
        let mut records = Vec::new();
        for r in 0..3 {
            let i = b * 3 + r;
            let mut rec = json!({
                "timestamp": 1_700_000_000_000i64 + i as i64 * 7,
                "key": format!("key-{i}"),
                "value": format!("value number {i}"),
                "headers": [{"key": "h", "value": format!("{i}")}]
            });
            change(i, &mut rec);
            records.push(rec);
        }
        ops.push(json!({"op": "append", "batches": [{
            "leader_epoch": epoch, "producer_id": 11, "producer_epoch": 2, "records": records
        }]}));
    }
    json!({"topic": "t", "partition": 0, "config": {"segment.bytes": segment_bytes}, "ops": ops})
}

fn same(_: usize, _: &mut Value) {}

#[test]
fn equal_across_segment_sizes_per_segment_digests_differ() {
    let one = digest_of(&records_spec(1 << 30, 0, &same), &["--segments"]);
    let many = digest_of(&records_spec(200, 0, &same), &["--segments"]);
    assert_eq!(one["format"], json!("kseg/3"));
    assert_eq!(one["recordCount"], json!(12));
    assert_eq!(one["sha256"], many["sha256"]);
    assert_eq!(one["segments"].as_array().unwrap().len(), 1);
    let segs = many["segments"].as_array().unwrap();
    assert!(segs.len() > 2, "{many}");
    // The segments' digests cover their own records, which add up to the whole.
    let n: u64 = segs
        .iter()
        .map(|s| s["recordCount"].as_u64().unwrap())
        .sum();
    assert_eq!(n, 12);
    assert_eq!(one["segments"][0]["sha256"], one["sha256"]);
    assert_ne!(segs[0]["sha256"], one["sha256"]);
}

#[test]
fn any_single_record_change_changes_the_digest() {
    type Edit = (&'static str, fn(&mut Value));
    let edits: [Edit; 6] = [
        ("value", |r| r["value"] = json!("changed")),
        ("key", |r| r["key"] = json!("changed")),
        ("null key", |r| {
            r.as_object_mut().unwrap().remove("key");
        }),
        ("timestamp", |r| {
            r["timestamp"] = json!(r["timestamp"].as_i64().unwrap() + 1)
        }),
        ("header value", |r| r["headers"][0]["value"] = json!("x")),
        ("extra header", |r| {
            r["headers"]
                .as_array_mut()
                .unwrap()
                .push(json!({"key": "h2"}))
        }),
    ];
    let base = digest_of(&records_spec(1 << 30, 0, &same), &[])["sha256"].clone();
    let mut seen = std::collections::BTreeSet::from([base.to_string()]);
    for (what, edit) in edits {
        for target in 0..12 {
            let d = digest_of(
                &records_spec(1 << 30, 0, &|i, r| {
                    if i == target {
                        edit(r)
                    }
                }),
                &[],
            )["sha256"]
                .to_string();
            assert!(
                seen.insert(d),
                "{what} of record {target}: a digest seen before"
            );
        }
    }
}

#[test]
fn epochs_only_with_with_epochs_and_producer_fields_always() {
    let e0 = records_spec(1 << 30, 0, &same);
    let e3 = records_spec(1 << 30, 3, &same);
    assert_eq!(digest_of(&e0, &[])["sha256"], digest_of(&e3, &[])["sha256"]);
    assert_ne!(
        digest_of(&e0, &["--with-epochs"])["sha256"],
        digest_of(&e3, &["--with-epochs"])["sha256"]
    );
    let mut other_epoch = e0.clone();
    other_epoch["ops"][2]["batches"][0]["producer_epoch"] = json!(3);
    assert_ne!(
        digest_of(&e0, &[])["sha256"],
        digest_of(&other_epoch, &[])["sha256"]
    );
}

/// The range of a whole log equals the digest of a log holding just those records (at the
/// same offsets, in other batches), and the encoding is the README's, computed here by hand.
#[test]
fn offset_ranges_and_the_documented_encoding() {
    let rec =
        |i: i64| json!({"timestamp": 1000 + i, "key": format!("k{i}"), "value": format!("v{i}")});
    let batch = |from: i64, to: i64| json!({"op": "append", "batches": [{"records": (from..to).map(rec).collect::<Vec<_>>()}]});
    let full = json!({"topic": "t", "partition": 0,
        "ops": [batch(0, 4), batch(4, 8), batch(8, 12)]});
    let part = json!({"topic": "t", "partition": 0, "start_offset": 3,
        "ops": [batch(3, 6), batch(6, 10)]});
    let ranged = digest_of(&full, &["--from-offset", "3", "--to-offset", "9"]);
    assert_eq!(ranged["recordCount"], json!(7));
    assert_eq!(ranged["firstOffset"], json!(3));
    assert_eq!(ranged["lastOffset"], json!(9));
    assert_eq!(ranged["sha256"], digest_of(&part, &[])["sha256"]);

    // By hand: the domain, then per record offset, timestamp, timestamp type (CreateTime 0),
    // producer id -1, producer epoch -1, sequence -1, transactional 0, control 0, key, value,
    // header count 0.
    let mut bytes = b"kseg/digest/1\n".to_vec();
    for i in 3i64..=9 {
        bytes.extend(i.to_be_bytes());
        bytes.extend((1000 + i).to_be_bytes());
        bytes.push(0);
        bytes.extend((-1i64).to_be_bytes());
        bytes.extend((-1i16).to_be_bytes());
        bytes.extend((-1i32).to_be_bytes());
        bytes.extend([0, 0]);
        for s in [format!("k{i}"), format!("v{i}")] {
            bytes.extend((s.len() as i32).to_be_bytes());
            bytes.extend(s.as_bytes());
        }
        bytes.extend(0i32.to_be_bytes());
    }
    let want: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(ranged["sha256"], json!(want));
}

/// A log dir: one digest per partition, each the partition directory's own, and the combined
/// one as docs/compare.md defines it, computed here from those lines; laid out in other
/// segments, the same; with a partition missing, another.
#[test]
fn log_dir_digest_per_partition_and_combined() {
    let tmp = tempfile::tempdir().unwrap();
    let write_log_dir = |name: &str, segment_bytes: u64, partitions: &[i32]| {
        let dir = tmp.path().join(name);
        for &p in partitions {
            let mut s = records_spec(segment_bytes, 0, &same);
            s["partition"] = json!(p);
            write(&s, &dir.join(format!("t-{p}")));
        }
        std::fs::write(dir.join("meta.properties"), "version=0\n").unwrap();
        dir
    };
    let one = write_log_dir("kafka-1", 1 << 30, &[0, 1, 10]);
    let many = write_log_dir("kafka-2", 200, &[0, 1, 10]);
    let fewer = write_log_dir("kafka-3", 1 << 30, &[0, 10]);
    let json_of = |d: &std::path::Path| -> Value {
        let o = kseg(&["digest", "--json", d.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let v = json_of(&one);
    common::assert_matches_schema("digestLogDirs", std::slice::from_ref(&v));
    assert_eq!(v["partitionCount"], json!(3));
    assert_eq!(v["recordCount"], json!(36));
    let mut combined = Sha256::new();
    combined.update(b"kseg/digest-logdir/1\n");
    for (i, p) in [0, 1, 10].into_iter().enumerate() {
        let entry = &v["partitions"][i];
        assert_eq!(
            (&entry["topic"], &entry["partition"]),
            (&json!("t"), &json!(p))
        );
        let own = json_of(&one.join(format!("t-{p}")));
        assert_eq!(entry["sha256"], own["sha256"]);
        combined.update(format!("t {p} {}\n", own["sha256"].as_str().unwrap()).as_bytes());
    }
    assert_eq!(v["sha256"], json!(common::hex(&combined.finalize())));
    assert_eq!(json_of(&many)["sha256"], v["sha256"]);
    assert_ne!(json_of(&fewer)["sha256"], v["sha256"]);
    let o = kseg(&["digest", one.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(text.ends_with(&format!(
        "{}  {}  combined, 3 partition(s)\n",
        v["sha256"].as_str().unwrap(),
        one.display()
    )));
    // A log dir holding no partition the broker serves: nothing hashed, exit 2.
    let bare = tmp.path().join("kafka-4");
    std::fs::create_dir_all(bare.join("t-0.0123456789abcdef0123456789abcdef-delete")).unwrap();
    std::fs::write(bare.join("meta.properties"), "version=0\n").unwrap();
    let o = kseg(&["digest", bare.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}
