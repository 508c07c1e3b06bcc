//! Aborted transactions in the remote tier: a `read_committed` read through `--remote` (or
//! `--remote-segment`) takes a remote segment's aborted transactions from its transaction
//! index in the store, as the broker's remote fetches do (`RemoteLogManager.read`), in both
//! layouts: `dump --isolation read_committed` shows what it shows on the untiered partition,
//! and `diff --remote` finds the untiered and the tiered replica the same. A remote index
//! larger than its segment has room for is an error naming it, not read. A log that starts
//! above offset 0 (one remote segment named alone, or a local log after retention) has its
//! first segment's aborted transactions fetched too.

mod common;

use std::path::{Path, PathBuf};

use serde_json::json;

/// `orders-0`: 100 records of producer 7, a transaction of producer 9 aborted at offsets
/// 100-101, 100 more records; segments of 4 KiB, so the abort lies in a closed, tiered one.
fn write_spec(tmp: &Path) -> PathBuf {
    let appends = |seed| {
        json!({"op": "repeat", "times": 20, "ops": [{"op": "append", "batches": [
            {"producer_id": 7, "gen": {"count": 5, "key_len": 8, "value_len": 40, "seed": seed}}]}]})
    };
    let spec = json!({
        "topic": "orders", "partition": 0, "topic_id": "b3JkZXJzAAAAAAAAAAAAAQ",
        "config": {"segment.bytes": 4096},
        "ops": [
            appends(1),
            {"op": "append", "batches": [{"producer_id": 9, "transactional": true,
                "compression": "none", "records": [{"value": "pending"}]}]},
            {"op": "append", "batches": [{"producer_id": 9, "transactional": true,
                "control": {"type": "abort"}}]},
            appends(2),
        ]
    });
    let path = tmp.join("SPEC.json");
    std::fs::write(&path, spec.to_string()).unwrap();
    path
}

/// `kseg ARGS`: exit status, standard output and error.
fn run(args: &[&str]) -> (i32, String, String) {
    common::outcome(std::process::Command::new(env!("CARGO_BIN_EXE_kseg")).args(args))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The partition written at `dir` and tiered to `tier` (`write ARGS`), each tiered segment
/// then deleted locally, as retention does; the start offsets tiered.
fn tiered(spec: &Path, dir: &Path, tier: &Path, args: &[&str]) -> Vec<i64> {
    let mut all = vec!["write", s(spec), s(dir), "--tier-to", s(tier)];
    all.extend(args);
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "{out}{err}");
    let starts = out.split("start offsets [").nth(1).unwrap();
    let starts: Vec<i64> = starts[..starts.find(']').unwrap()]
        .split(", ")
        .map(|o| o.parse().unwrap())
        .collect();
    for p in common::listing(dir) {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let base = name.split('.').next().unwrap().parse::<i64>();
        if base.is_ok_and(|b| starts.contains(&b)) {
            std::fs::remove_file(p).unwrap();
        }
    }
    starts
}

/// `dump --isolation read_committed --print-data-log ARGS` (exit 0), the partition directory's
/// path taken out.
fn committed(args: &[&str], dir: &Path) -> String {
    let mut all = vec!["dump", "--isolation", "read_committed", "--print-data-log"];
    all.extend(args);
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "{args:?}: {out}{err}");
    out.replace(s(dir), "DIR")
}

#[test]
fn remote_aborted_transactions_are_read_from_the_remote_transaction_index() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path());
    let local = tmp.path().join("local/orders-0");
    let (code, out, err) = run(&["write", s(&spec), s(&local)]);
    assert_eq!(code, 0, "{out}{err}");
    let want = committed(&[s(&local)], &local);
    assert!(!want.contains("payload: pending"), "{want}");
    assert_eq!(want.matches("| offset: ").count(), 200, "{want}");
    for (layout, extra) in [
        ("local-tiered", &[][..]),
        ("aiven", &["--remote-layout", "aiven"][..]),
        (
            "aiven-zstd",
            &[
                "--remote-layout",
                "aiven",
                "--chunk-size",
                "1000",
                "--chunk-compression",
            ][..],
        ),
    ] {
        let dir = tmp.path().join(layout).join("orders-0");
        let tier = tmp.path().join(format!("{layout}-tier"));
        let starts = tiered(&spec, &dir, &tier, extra);
        assert_eq!(starts, [0, 60, 117], "{layout}");
        let remote = ["--remote", s(&tier)];
        let got = committed(&[&remote[..], &[s(&dir)]].concat(), &dir);
        assert_eq!(got, want, "{layout}");
        let (code, out, err) = run(&[&["diff"], &remote[..], &[s(&local), s(&dir)]].concat());
        assert_eq!(code, 0, "{layout}: {out}{err}");
        assert!(out.contains("identical"), "{layout}: {out}");
        // The segment holding the abort, named alone: offsets 60-116 but the aborted record
        // and the marker.
        let log = walk(&tier)
            .into_iter()
            .find(|p| {
                let n = p.file_name().unwrap().to_string_lossy();
                n.starts_with("00000000000000000060-") && n.ends_with(".log")
            })
            .unwrap();
        let alone = committed(&["--remote-segment", s(&log)], &dir);
        assert!(!alone.contains("payload: pending"), "{layout}: {alone}");
        assert_eq!(alone.matches("| offset: ").count(), 55, "{layout}: {alone}");
    }
}

/// The files under `root`, at any depth.
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(root).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_local_log_starting_above_the_range_fetches_its_first_segments_aborts() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path());
    let dir = tmp.path().join("orders-0");
    let (code, out, err) = run(&["write", s(&spec), s(&dir)]);
    assert_eq!(code, 0, "{out}{err}");
    for p in common::listing(&dir) {
        if p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("00000000000000000000.")
        {
            std::fs::remove_file(p).unwrap();
        }
    }
    let got = committed(&[s(&dir)], &dir);
    assert!(!got.contains("payload: pending"), "{got}");
    assert_eq!(got.matches("| offset: ").count(), 140, "{got}");
}

#[test]
fn a_remote_transaction_index_larger_than_its_segment_has_room_for_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path());
    let dir = tmp.path().join("orders-0");
    let tier = tmp.path().join("tier");
    tiered(&spec, &dir, &tier, &[]);
    let index = walk(&tier)
        .into_iter()
        .find(|p| p.extension().is_some_and(|x| x == "txnindex"))
        .unwrap();
    let log = index.with_extension("log");
    // One entry more than a 61-byte batch each leaves room for.
    let room = std::fs::metadata(&log).unwrap().len() / 61;
    std::fs::write(&index, vec![0u8; (room as usize + 1) * 34]).unwrap();
    let (code, out, err) = run(&[
        "dump",
        "--isolation",
        "read_committed",
        "--remote",
        s(&tier),
        s(&dir),
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains(s(&index)) && err.contains("more than its segment has room for"),
        "{err}"
    );
}
