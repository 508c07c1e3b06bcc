//! `recover` tells damage from housekeeping (issue 34, item 5): what the broker's recovery
//! loses or rebuilds (a `.log` cut, a segment whose sanity check fails on a corrupt file) is
//! damage and makes a dry run exit 1; what every start-up of the broker does on a healthy log
//! (indexes rebuilt from an intact `.log`, epoch entries past the log end dropped, stray
//! snapshots removed) is housekeeping: listed, made by `--apply`, exit 0.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn fixture(tmp: &Path, name: &str) -> PathBuf {
    let topic = name.rsplit_once('-').unwrap().0;
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(topic)
        .join(name);
    let dir = tmp.join(name);
    common::copy_dir(&src, &dir);
    dir
}

/// `recover --json` of `dir` (a dry run): the plan and the exit status.
fn plan(dir: &Path) -> (Value, i32) {
    let o = common::kseg(&[
        "recover",
        "--json",
        "--now",
        "1730000000000",
        dir.to_str().unwrap(),
    ]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&o.stderr));
    });
    common::assert_matches_schema("recover", std::slice::from_ref(&doc));
    (doc, o.status.code().unwrap())
}

/// The class of each change, by file name.
fn classes(plan: &Value) -> Vec<(String, String)> {
    plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let f = c["file"].as_str().or(c["from"].as_str()).unwrap();
            let name = Path::new(f).file_name().unwrap().to_str().unwrap();
            (name.to_string(), c["class"].as_str().unwrap().to_string())
        })
        .collect()
}

fn count(plan: &Value, class: &str) -> usize {
    classes(plan).iter().filter(|(_, c)| c == class).count()
}

fn assert_counts_agree(plan: &Value) {
    assert_eq!(plan["damageCount"], count(plan, "damage"), "{plan}");
    assert_eq!(
        plan["housekeepingCount"],
        count(plan, "housekeeping"),
        "{plan}"
    );
}

#[test]
fn a_healthy_partition_has_housekeeping_only() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path(), "orders-0");
    // An epoch entry past the log end (247) and a snapshot no segment holds: the loader drops
    // both at every start (`truncateFromEnd`, `removeStraySnapshots`).
    std::fs::write(
        dir.join("leader-epoch-checkpoint"),
        "0\n3\n0 0\n3 180\n9 5000\n",
    )
    .unwrap();
    std::fs::copy(
        dir.join("00000000000000000247.snapshot"),
        dir.join("00000000000000009999.snapshot"),
    )
    .unwrap();
    let (doc, code) = plan(&dir);
    assert_counts_agree(&doc);
    assert_eq!(doc["damageCount"], 0, "{doc}");
    let cs = classes(&doc);
    for name in ["leader-epoch-checkpoint", "00000000000000009999.snapshot"] {
        assert!(
            cs.contains(&(name.to_string(), "housekeeping".to_string())),
            "{name}: {cs:?}"
        );
    }
    assert_eq!(code, 0, "nothing damaged: {doc}");
    // The text lists it under its own heading, and says why the status is 0.
    let o = common::kseg(&["recover", "--now", "1730000000000", dir.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("no damage to repair"), "{text}");
    assert!(text.contains("housekeeping ("), "{text}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("nothing damaged"),
        "{o:?}"
    );
    assert_eq!(o.status.code(), Some(0));
    // `--apply` makes the housekeeping; after it, nothing is left, not even a rewrite to the
    // same bytes.
    let (code, err) = common::kseg_status(
        &[
            "recover",
            "--apply",
            "--no-backup",
            "--now",
            "1730000000000",
        ],
        &dir,
    );
    assert_eq!(code, 0, "{err}");
    assert!(!dir.join("00000000000000009999.snapshot").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("leader-epoch-checkpoint")).unwrap(),
        "0\n2\n0 0\n3 180\n"
    );
    let (doc, code) = plan(&dir);
    assert_eq!(doc["changes"], serde_json::json!([]), "{doc}");
    assert_eq!((doc["damageCount"].clone(), code), (0.into(), 0));
}

#[test]
fn a_cut_log_is_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path(), "orders-0");
    let log = dir.join("00000000000000000175.log");
    let len = std::fs::metadata(&log).unwrap().len();
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(b"a torn write");
    std::fs::write(&log, bytes).unwrap();
    let (doc, code) = plan(&dir);
    assert_counts_agree(&doc);
    assert_eq!(code, 1, "{doc}");
    let cs = classes(&doc);
    assert!(
        cs.contains(&("00000000000000000175.log".into(), "damage".into())),
        "{cs:?}"
    );
    // The cut segment's indexes are rebuilt with it: part of the damage.
    assert!(cs
        .iter()
        .filter(|(n, _)| n.starts_with("00000000000000000175."))
        .all(|(_, c)| c == "damage"));
    // Segment 0 is intact: its indexes rebuilt by recovery are housekeeping.
    assert!(cs
        .iter()
        .filter(|(n, _)| n.starts_with("00000000000000000000."))
        .all(|(_, c)| c == "housekeeping"));
    let (code, err) = common::kseg_status(
        &[
            "recover",
            "--apply",
            "--no-backup",
            "--now",
            "1730000000000",
        ],
        &dir,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::metadata(&log).unwrap().len(), len);
    let (doc, code) = plan(&dir);
    assert_eq!((doc["changes"].clone(), code), (serde_json::json!([]), 0));
}

#[test]
fn a_corrupt_txnindex_is_damage_a_missing_index_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture(tmp.path(), "orders-0");
    // Not a whole number of 34-byte entries: `TransactionIndex.sanityCheck` fails and the
    // loader rebuilds the segment.
    std::fs::write(dir.join("00000000000000000175.txnindex"), [1u8; 5]).unwrap();
    // A missing offset index: created by the loader, as Kafka creates index files lazily.
    std::fs::remove_file(dir.join("00000000000000000000.index")).unwrap();
    let (doc, code) = plan(&dir);
    assert_counts_agree(&doc);
    let cs = classes(&doc);
    assert!(
        cs.contains(&("00000000000000000175.txnindex".into(), "damage".into())),
        "{cs:?}"
    );
    assert!(
        cs.contains(&("00000000000000000000.index".into(), "housekeeping".into())),
        "{cs:?}"
    );
    assert_eq!(code, 1, "{doc}");
}

/// A log dir: the partitions' plans together; housekeeping only is exit status 0, one
/// damaged partition makes it 1.
#[test]
fn log_dir_wide_status_follows_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let orders = fixture(tmp.path(), "orders-0");
    fixture(tmp.path(), "payments-0");
    std::fs::write(
        tmp.path().join("meta.properties"),
        "version=0\nbroker.id=0\n",
    )
    .unwrap();
    let run = || {
        let o = common::kseg(&[
            "recover",
            "--json",
            "--now",
            "1730000000000",
            tmp.path().to_str().unwrap(),
        ]);
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        common::assert_matches_schema("recover", std::slice::from_ref(&doc));
        (doc, o.status.code().unwrap())
    };
    let (doc, code) = run();
    let plans = doc["plans"].as_array().unwrap();
    assert_eq!(plans.len(), 2, "{doc}");
    assert!(plans.iter().all(|p| p["damageCount"] == 0), "{doc}");
    assert!(plans.iter().any(|p| p["housekeepingCount"] != 0), "{doc}");
    assert_eq!(code, 0);
    let log = orders.join("00000000000000000175.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(b"a torn write");
    std::fs::write(&log, bytes).unwrap();
    let (doc, code) = run();
    assert_eq!(code, 1, "{doc}");
}
