//! `kseg diff` on replica pairs written with the writer. The expected divergence point of each
//! pair is derived here by hand from the broker's rules: a follower sends its latest leader
//! epoch (`OffsetsForLeaderEpoch`), the leader answers with `LeaderEpochFileCache.endOffsetFor`
//! (storage/src/main/java/org/apache/kafka/storage/internals/epoch/LeaderEpochFileCache.java:
//! its latest epoch ends at its log end; an older epoch ends where the next larger one starts,
//! reported as the largest epoch at or below the one asked for), and the follower truncates in
//! `AbstractFetcherThread.getOffsetTruncationState` (core/src/main/scala/kafka/server/
//! AbstractFetcherThread.scala) to min(leader's end offset, its own end offset for that epoch,
//! its log end), asking again when it does not know the epoch.

mod common;

use common::{kseg, write_spec_value as write};
use serde_json::{json, Value};

/// One append per entry of `batches`: (leader epoch, record count, value seed).
fn spec(batches: &[(i32, u32, i64)], segment_bytes: u64) -> Value {
    let ops: Vec<Value> = batches
        .iter()
        .map(|&(epoch, count, seed)| {
            json!({"op": "append", "batches": [{
                "leader_epoch": epoch, "producer_id": 3, "producer_epoch": 0,
                "gen": {"count": count, "value_len": 40, "seed": seed}
            }]})
        })
        .collect();
    json!({
        "topic": "t", "partition": 0, "start_ts": 1_700_000_000_000i64,
        "config": {"segment.bytes": segment_bytes},
        "ops": ops
    })
}

/// Writes the two replicas and returns `kseg diff --json A B` and its exit status, with the
/// number of segments of each in `a.segments` and `b.segments`.
fn diff_pair(a: &Value, b: &Value) -> (Value, i32) {
    let tmp = tempfile::tempdir().unwrap();
    let (da, db) = (tmp.path().join("a/t-0"), tmp.path().join("b/t-0"));
    write(a, &da);
    write(b, &db);
    let o = kseg(&["diff", "--json", da.to_str().unwrap(), db.to_str().unwrap()]);
    let mut v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
    v["a"]["segments"] = json!(common::logs(&da).len());
    v["b"]["segments"] = json!(common::logs(&db).len());
    (v, o.status.code().unwrap())
}

/// Ten batches of ten records in epoch 0: offsets 0..=99.
fn prefix() -> Vec<(i32, u32, i64)> {
    (0..10).map(|i| (0, 10, i)).collect()
}

fn range(base: i64, last: i64, batches: u64, records: u64) -> Value {
    json!({"baseOffset": base, "lastOffset": last, "batchCount": batches, "recordCount": records})
}

#[test]
fn unclean_election_follower_tail_in_an_epoch_the_leader_never_had() {
    // A, the new leader: the prefix, then epoch 2 from offset 100 (3 batches of 5: ..=114).
    // B, the old replica: the prefix, then 2 batches of 8 in epoch 1 (100..=115), which A
    // never had.
    let mut a = prefix();
    a.extend([(2, 5, 50), (2, 5, 51), (2, 5, 52)]);
    let mut b = prefix();
    b.extend([(1, 8, 60), (1, 8, 61)]);
    let (v, code) = diff_pair(&spec(&a, 1 << 30), &spec(&b, 1 << 30));
    assert_eq!(code, 1);
    assert_eq!(v["format"], json!("kseg/3"));
    // B follows A: B sends epoch 1. A's cache is [(0,0),(2,100)]: 1 is not its latest, the
    // next larger epoch 2 starts at 100, the largest at or below 1 is 0: A answers (0, 100).
    // B knows epoch 0; its end offset for 0 is where its epoch 1 starts, 100. Truncation:
    // min(100, 100, B's log end 116) = 100, completed in one round.
    assert_eq!(
        v["bFollowingA"]["exchanges"],
        json!([{"requestedEpoch": 1, "leaderEpoch": 0, "leaderEndOffset": 100, "truncateTo": 100, "completed": true}])
    );
    // A following B: A sends 2; B's cache [(0,0),(1,100)] has nothing above 1, so 2 is
    // newer than all: B answers undefined, and the broker falls back to the high watermark.
    assert_eq!(v["aFollowingB"]["truncateTo"], Value::Null);
    assert_eq!(v["epochDivergence"], json!(100));
    // The batches: the first at 100 differ in their offsets (5 records against 8).
    assert_eq!(v["firstDifference"]["offset"], json!(100));
    assert_eq!(v["firstDifference"]["kind"], json!("offsets"));
    assert_eq!(v["rangesOnlyA"], json!([range(100, 114, 3, 15)]));
    assert_eq!(v["rangesOnlyB"], json!([range(100, 115, 2, 16)]));
    assert_eq!(v["a"]["logEndOffset"], json!(115));
    assert_eq!(v["b"]["logEndOffset"], json!(116));
}

#[test]
fn follower_merely_behind() {
    // A has three more batches of the same epoch; B is a prefix of A.
    let b = prefix();
    let mut a = prefix();
    a.extend([(0, 10, 10), (0, 10, 11), (0, 10, 12)]);
    let (v, code) = diff_pair(&spec(&a, 1 << 30), &spec(&b, 1 << 30));
    assert_eq!(code, 1);
    // B follows A: B sends 0, A's latest epoch, answered with A's log end 130; B's own end
    // for its latest epoch is its log end 100: min(100, 130, 100) = 100, nothing to truncate.
    assert_eq!(v["bFollowingA"]["truncateTo"], json!(100));
    // A following B would truncate A to 100: min(130, B's 100, 130).
    assert_eq!(v["aFollowingB"]["truncateTo"], json!(100));
    assert_eq!(v["firstDifference"]["kind"], json!("bEnds"));
    assert_eq!(v["firstDifference"]["offset"], json!(100));
    assert_eq!(v["rangesOnlyA"], json!([range(100, 129, 3, 30)]));
    assert_eq!(v["rangesOnlyB"], json!([]));
    // The producer's last batch differs with it.
    assert_eq!(v["producers"][0]["producerId"], json!(3));
    assert_eq!(v["producers"][0]["a"]["lastOffset"], json!(129));
    assert_eq!(v["producers"][0]["b"]["lastOffset"], json!(99));
}

#[test]
fn divergence_inside_one_epoch_is_seen_by_the_batches_only() {
    // Same epoch, same offsets, different values from offset 100: the epochs cannot tell
    // (both sides answer epoch 0 with their log ends, 120), the batches can.
    let mut a = prefix();
    a.extend([(0, 10, 70), (0, 10, 71)]);
    let mut b = prefix();
    b.extend([(0, 10, 80), (0, 10, 81)]);
    let (v, code) = diff_pair(&spec(&a, 1 << 30), &spec(&b, 1 << 30));
    assert_eq!(code, 1);
    assert_eq!(v["epochDivergence"], json!(120));
    assert_eq!(v["firstDifference"]["offset"], json!(100));
    assert_eq!(v["firstDifference"]["kind"], json!("content"));
    assert_eq!(v["rangesOnlyA"], json!([range(100, 119, 2, 20)]));
    assert_eq!(v["rangesOnlyB"], json!([range(100, 119, 2, 20)]));
}

#[test]
fn different_segment_sizes_do_not_matter() {
    let mut batches = prefix();
    batches.extend([(1, 10, 20), (3, 10, 21)]);
    // About two batches per segment on B, one segment on A.
    let (v, code) = diff_pair(&spec(&batches, 1 << 30), &spec(&batches, 1500));
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["identical"], json!(true));
    assert_eq!(v["a"]["segments"], json!(1));
    assert!(v["b"]["segments"].as_u64().unwrap() > 3, "{v}");
    assert_eq!(v["epochDivergence"], json!(120));

    // An unclean election with different segment sizes on each side: the same answers as
    // when both have one segment.
    let mut a = prefix();
    a.extend([(2, 5, 50), (2, 5, 51), (2, 5, 52)]);
    let mut b = prefix();
    b.extend([(1, 8, 60), (1, 8, 61)]);
    let (one, _) = diff_pair(&spec(&a, 1 << 30), &spec(&b, 1 << 30));
    let (many, code) = diff_pair(&spec(&a, 1200), &spec(&b, 2000));
    assert_eq!(code, 1);
    assert!(many["a"]["segments"].as_u64().unwrap() > 1);
    assert!(many["b"]["segments"].as_u64().unwrap() > 1);
    assert_ne!(many["a"]["segments"], many["b"]["segments"]);
    for key in [
        "epochDivergence",
        "firstDifference",
        "rangesOnlyA",
        "rangesOnlyB",
    ] {
        let strip = |v: &Value| {
            let mut v = v[key].clone();
            for side in ["a", "b"] {
                if let Some(o) = v.get_mut(side).and_then(Value::as_object_mut) {
                    o.remove("file");
                    o.remove("position");
                }
            }
            v
        };
        assert_eq!(strip(&one), strip(&many), "{key}");
    }
}

#[test]
fn diff_of_a_directory_with_itself_and_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("t-0");
    write(&spec(&prefix(), 1 << 30), &d);
    let o = kseg(&["diff", d.to_str().unwrap(), d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("identical"));
    let missing = tmp.path().join("nope-0");
    let o = kseg(&["diff", d.to_str().unwrap(), missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nope-0"));
}

/// A transaction that one replica aborted and the other committed (an unclean election
/// between the data and the marker): the batches differ at the marker, the `.txnindex` of
/// one side alone has the aborted transaction, and the producer's last batch is the same on
/// both. The entry's last stable offset is `ProducerStateManager.lastStableOffset`
/// (storage/src/main/java/org/apache/kafka/storage/internals/log/ProducerStateManager.java):
/// with no other transaction open, one past the marker, 105.
#[test]
fn aborted_on_one_side_committed_on_the_other() {
    let side = |marker: &str| {
        let mut s = spec(&prefix(), 1 << 30);
        let ops = s["ops"].as_array_mut().unwrap();
        ops.push(json!({"op": "append", "batches": [{
            "producer_id": 9, "producer_epoch": 0, "transactional": true,
            "gen": {"count": 4, "value_len": 10, "seed": 90}}]}));
        ops.push(json!({"op": "append", "batches": [{
            "producer_id": 9, "producer_epoch": 0, "transactional": true,
            "control": {"type": marker, "coordinator_epoch": 1}}]}));
        s
    };
    let (v, code) = diff_pair(&side("abort"), &side("commit"));
    assert_eq!(code, 1);
    // The prefix is 0..=99, the transaction 100..=103, the marker 104.
    assert_eq!(v["firstDifference"]["offset"], json!(104));
    assert_eq!(v["firstDifference"]["kind"], json!("content"));
    assert_eq!(v["rangesOnlyA"], json!([range(104, 104, 1, 1)]));
    assert_eq!(v["rangesOnlyB"], json!([range(104, 104, 1, 1)]));
    assert_eq!(
        v["abortedTxnsOnlyA"],
        json!([{"producerId": 9, "firstOffset": 100, "lastOffset": 104, "lastStableOffset": 105}])
    );
    assert_eq!(v["abortedTxnsOnlyB"], json!([]));
    // The marker batch carries the producer's epoch and offset on both sides alike.
    assert_eq!(v["producers"], json!([]));
}

/// B's log dir checkpoints a log start offset of 50 (retention moved it): A's batches below
/// it are only on A, the rest is the same, and the log start offsets differ.
#[test]
fn log_start_offsets_differ() {
    let tmp = tempfile::tempdir().unwrap();
    let (da, db) = (tmp.path().join("a/t-0"), tmp.path().join("b/t-0"));
    write(&spec(&prefix(), 1 << 30), &da);
    write(&spec(&prefix(), 1 << 30), &db);
    std::fs::write(
        tmp.path().join("b/log-start-offset-checkpoint"),
        "0\n1\nt 0 50\n",
    )
    .unwrap();
    let o = kseg(&["diff", "--json", da.to_str().unwrap(), db.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["a"]["logStartOffset"], json!(0));
    assert_eq!(v["b"]["logStartOffset"], json!(50));
    assert_eq!(v["rangesOnlyA"], json!([range(0, 49, 5, 50)]));
    assert_eq!(v["rangesOnlyB"], json!([]));
    assert_eq!(v["firstDifference"], Value::Null);
}

/// `spec` for partition `partition` of topic `t`.
fn partition_spec(batches: &[(i32, u32, i64)], partition: i32) -> Value {
    let mut s = spec(batches, 1 << 30);
    s["partition"] = json!(partition);
    s
}

/// Two log dirs: t-0 the same on both, t-1 diverging after the common prefix (A in epoch 2
/// from offset 100, B in epoch 1), t-2 only on A, t-3 only on B.
fn log_dir_pair(root: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (a, b) = (root.join("kafka-1"), root.join("kafka-2"));
    let mut a1 = prefix();
    a1.extend([(2, 5, 50), (2, 5, 51)]);
    let mut b1 = prefix();
    b1.extend([(1, 8, 60)]);
    write(&partition_spec(&prefix(), 0), &a.join("t-0"));
    write(&partition_spec(&prefix(), 0), &b.join("t-0"));
    write(&partition_spec(&a1, 1), &a.join("t-1"));
    write(&partition_spec(&b1, 1), &b.join("t-1"));
    write(&partition_spec(&prefix(), 2), &a.join("t-2"));
    write(&partition_spec(&prefix(), 3), &b.join("t-3"));
    for d in [&a, &b] {
        std::fs::write(d.join("meta.properties"), "version=0\nbroker.id=1\n").unwrap();
    }
    (a, b)
}

#[test]
fn log_dirs_partition_by_partition() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = log_dir_pair(tmp.path());
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = kseg(&["diff", sa, sb]);
    assert_eq!(o.status.code(), Some(1));
    // The first batch after the common prefix: A's 100..=104 against B's 100..=107 (other
    // offsets), in A's epoch 2.
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "t-0  identical\n\
         t-1  diverge at offset 100 (epoch 2): offsets\n\
         t-2  only in A\n\
         t-3  only in B\n\
         4 partition(s): 1 identical, 1 diverge, 1 only in A, 1 only in B\n"
    );
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("1 partition(s) diverge, 1 only in A, 1 only in B"));
    let o = kseg(&["diff", "--json", sa, sb]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_matches_schema("diffLogDirs", std::slice::from_ref(&v));
    assert_eq!(v["identical"], json!(false));
    let got: Vec<_> = v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["topic"].clone(),
                p["partition"].clone(),
                p["status"].clone(),
                p["offset"].clone(),
                p["leaderEpoch"].clone(),
            )
        })
        .collect();
    let row = |n: i32, s: &str, o: Value, e: Value| (json!("t"), json!(n), json!(s), o, e);
    assert_eq!(
        got,
        vec![
            row(0, "identical", Value::Null, Value::Null),
            row(1, "diverge", json!(100), json!(2)),
            row(2, "onlyInA", Value::Null, Value::Null),
            row(3, "onlyInB", Value::Null, Value::Null),
        ]
    );
    assert_eq!(v["partitions"][2]["b"], Value::Null);
    assert_eq!(
        (v["partitionCount"].clone(), v["divergeCount"].clone()),
        (json!(4), json!(1))
    );
    // The same log dir twice: every partition identical.
    let o = kseg(&["diff", sa, sa]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout)
        .ends_with("3 partition(s): 3 identical, 0 diverge, 0 only in A, 0 only in B\n"));
}

/// A partition directory against a log dir: nothing pairs them (exit 2, naming both shapes);
/// a directory of log dirs is the union of its log dirs' partitions.
#[test]
fn log_dirs_mixed_and_directories_of_log_dirs() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = log_dir_pair(tmp.path());
    let o = kseg(&["diff", a.join("t-0").to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("this is a log dir, the other path a partition directory"),
        "{err}"
    );
    // A's partitions spread over two log dirs of one parent.
    let parent = tmp.path().join("var-lib-kafka");
    for (d, parts) in [("data-1", ["t-0", "t-1"]), ("data-2", ["t-2", "t-9"])] {
        std::fs::create_dir_all(parent.join(d)).unwrap();
        for p in parts {
            if a.join(p).exists() {
                std::fs::rename(a.join(p), parent.join(d).join(p)).unwrap();
            }
        }
        std::fs::write(parent.join(d).join("meta.properties"), "version=0\n").unwrap();
    }
    let o = kseg(&[
        "diff",
        "--json",
        parent.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let statuses: Vec<_> = v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["status"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(statuses, ["identical", "diverge", "onlyInA", "onlyInB"]);
    // The same partition in two of its log dirs: the broker refuses to start (exit 2).
    write(&partition_spec(&prefix(), 0), &parent.join("data-2/t-0"));
    let o = kseg(&["diff", parent.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is in two log dirs"));
}
