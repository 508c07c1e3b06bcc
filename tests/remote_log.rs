//! One log across tiers (`--remote` on the read-only commands). Every scenario of the reference
//! corpus, as the broker has it after start-up (`expected-recovered`: the partition its remote
//! log manager tiers), is tiered as that manager does (`ops::remote::tier`: Kafka's
//! `LocalTieredStorage` layout, `__remote_log_metadata` beside it) into moto's S3 server, and
//! in Aiven's layout (small chunks, with and without compression) into a directory read through
//! `file://`; then the tiered segments but the last are removed locally, as local retention
//! does (the last stays in both tiers: the broker serves it locally). `dump`, `verify --deep`,
//! `digest` and `offsets` through `--remote` must answer what they answer on the untiered
//! partition.

mod common;
#[path = "common/moto.rs"]
mod moto;

use std::path::Path;
use std::process::Command;

use kseg::format::aiven::segment::write_segment;
use kseg::format::aiven::{SegmentFiles, SegmentKey, Suffix, WriteOptions};
use kseg::format::checkpoint::{uuid_to_base64, PartitionMetadata};
use kseg::storage::store::RemoteOptions;
use serde_json::Value;

const BUCKET: &str = "onelog";
const AIVEN_PREFIX: &str = "cluster-1/";

/// The topic id of `partition.metadata` in `dir`.
fn topic_id(dir: &Path) -> [u8; 16] {
    let bytes = std::fs::read(dir.join("partition.metadata")).unwrap();
    PartitionMetadata::decode(&bytes, "partition.metadata")
        .unwrap()
        .topic_id
}

/// `kseg ARGS`: exit status, stdout, stderr (S3 credentials from the environment set below).
fn run(args: &[&str]) -> (i32, String, String) {
    common::outcome(Command::new(env!("CARGO_BIN_EXE_kseg")).args(args))
}

/// `kseg CMD [remote flags] ARGS DIR`, which must succeed (exit `want`), as JSON.
fn json(cmd: &str, args: &[&str], dir: &Path, remote: &[&str], want: i32) -> Value {
    let d = dir.display().to_string();
    let mut all = vec![cmd];
    all.extend(args);
    all.extend(remote);
    all.push(&d);
    let (code, out, err) = run(&all);
    assert_eq!(code, want, "{all:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{all:?}: {e}: {out}"))
}

/// The batches and records of the partition's `.log` files as `dump` prints them, without the
/// file they are in (a segment's position is the same in either tier).
fn records(dir: &Path, remote: &[&str]) -> Vec<Value> {
    let args = ["--json", "--deep-iteration", "--print-data-log"];
    let dump = json("dump", &args, dir, remote, 0);
    let items = dump["items"].as_array().unwrap();
    items
        .iter()
        .filter(|i| i["type"] == "batch" || i["type"] == "record")
        .map(|i| {
            let mut i = i.clone();
            i.as_object_mut().unwrap().remove("file");
            i
        })
        .collect()
}

/// `verify --deep`'s exit status and finding ids.
fn verify(dir: &Path, remote: &[&str]) -> (i32, Vec<String>) {
    let d = dir.display().to_string();
    let mut args = vec!["verify", "--deep", "--json", "-q"];
    args.extend(remote);
    args.push(&d);
    let (code, out, err) = run(&args);
    let report: Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out} {err}"));
    (code, common::finding_checks(&report))
}

/// What `offsets` answers for `time`, without the directory and the bytes read.
fn offsets(dir: &Path, time: &str, remote: &[&str]) -> Value {
    let mut v = json("offsets", &["--json", "--time", time], dir, remote, 0);
    let p = v["partitions"][0].as_object_mut().unwrap();
    for k in ["dir", "logBytesRead", "fallbacks"] {
        p.remove(k);
    }
    v["partitions"][0].take()
}

/// The untiered partition `base` and the one whose remote tier `remote` names answer the same.
fn assert_same(base: &Path, tiered: &Path, remote: &[&str], what: &str) {
    let digest = |dir: &Path, remote: &[&str]| {
        let d = json("digest", &["--json"], dir, remote, 0);
        (
            d["sha256"].clone(),
            d["recordCount"].clone(),
            d["lastOffset"].clone(),
        )
    };
    assert_eq!(digest(base, &[]), digest(tiered, remote), "{what}: digest");
    let want = records(base, &[]);
    assert!(!want.is_empty(), "{what}");
    assert!(
        want == records(tiered, remote),
        "{what}: dump's records differ"
    );
    // The first batch's time of each segment: a time lookup in each tier. Not with legacy
    // message sets: a segment without timestamps has its file's mtime as largest timestamp
    // locally (`LogSegment.largestTimestamp`), and the remote tier has no mtime to give.
    let legacy = want.iter().any(|i| i["type"] == "batch" && i["magic"] != 2);
    let mut times = vec![
        "earliest".to_string(),
        "latest".into(),
        "max-timestamp".into(),
    ];
    times.extend(
        want.iter()
            .filter(|i| !legacy && i["type"] == "batch" && i["position"] == 0)
            .filter_map(|i| i["maxTimestamp"].as_i64())
            .map(|t| t.to_string()),
    );
    for t in &times {
        assert_eq!(
            offsets(base, t, &[]),
            offsets(tiered, t, remote),
            "{what}: offsets --time {t}"
        );
    }
    assert_eq!(verify(base, &[]), verify(tiered, remote), "{what}: verify");
    // Without --remote the local log alone is read: the tiered offsets are gone.
    let (local_digest, ..) = digest(tiered, &[]);
    assert_ne!(
        local_digest,
        digest(base, &[]).0,
        "{what}: nothing was removed"
    );
}

/// Removes the files of the segments starting at `bases` from `dir`.
fn remove_segments(dir: &Path, bases: &[i64]) {
    for b in bases {
        for ext in ["log", "index", "timeindex", "txnindex"] {
            let _ = std::fs::remove_file(dir.join(format!("{b:020}.{ext}")));
        }
    }
}

/// The segments starting at `bases` of `dir` written in Aiven's layout under `root`.
fn tier_aiven(dir: &Path, root: &Path, bases: &[i64], options: &WriteOptions) {
    let topic_id = topic_id(dir);
    for (i, base) in bases.iter().enumerate() {
        let stem = dir.join(format!("{base:020}"));
        let read = |ext: &str| std::fs::read(stem.with_extension(ext)).unwrap_or_default();
        let (log, index, time) = (read("log"), read("index"), read("timeindex"));
        let files = SegmentFiles {
            log: &log,
            offset_index: &index,
            time_index: &time,
            producer_snapshot: &[],
            leader_epoch: &[],
            transaction: None,
        };
        let key = SegmentKey {
            topic: "orders".into(),
            topic_id,
            partition: 0,
            start_offset: *base,
            segment_id: [i as u8 + 1; 16],
        };
        let objects = write_segment(&files, options, None, &mut rsa::rand_core::OsRng).unwrap();
        let manifest = objects.manifest.to_json_text().into_bytes();
        for (suffix, data) in [
            (Suffix::Log, objects.log),
            (Suffix::Indexes, objects.indexes),
            (Suffix::Manifest, manifest),
        ] {
            let p = root.join(key.object_key(AIVEN_PREFIX, suffix));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, data).unwrap();
        }
    }
}

#[test]
fn every_reference_scenario_reads_the_same_across_tiers() {
    let Some(reference) = common::reference_dir() else {
        return;
    };
    let Some(moto) = moto::start_or_skip(&[]) else {
        return;
    };
    // The tiering library, in this process, reads S3 credentials as kseg does.
    for (k, v) in [
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_REGION", "us-east-1"),
    ] {
        std::env::set_var(k, v);
    }
    std::env::remove_var("AWS_ENDPOINT");
    moto::create_bucket(&moto.endpoint, BUCKET);
    let options = RemoteOptions {
        endpoint: Some(moto.endpoint.clone()),
        ..RemoteOptions::default()
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut tiered_count = 0;
    for scenario in common::scenarios(&reference) {
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        let recovered = scenario.join("expected-recovered/orders-0");
        let base = tmp.path().join(&name).join("base/orders-0");
        let dir = tmp.path().join(&name).join("logs/orders-0");
        common::copy_dir(&recovered, &base);
        common::copy_dir(&recovered, &dir);
        let remote = format!("s3://{BUCKET}/{name}");
        let summary = kseg::ops::remote::tier::tier(
            &dir,
            &remote,
            &options,
            &uuid_to_base64(&topic_id(&dir)),
        )
        .unwrap();
        let bases: Vec<i64> = summary.segments.iter().map(|s| s.start_offset).collect();
        assert!(!bases.is_empty(), "{name}: nothing tiered");
        tiered_count += bases.len();
        // Local retention removes tiered segments; the last stays in both tiers.
        let removed = &bases[..bases.len().saturating_sub(1).max(1)];
        remove_segments(&dir, removed);
        let s3 = [
            "--remote",
            remote.as_str(),
            "--remote-endpoint",
            moto.endpoint.as_str(),
        ];
        // The metadata names the segments it can (Kafka's tiered storage takes no segment
        // without leader epochs: legacy message sets); where it names not all, the listing is
        // the tier, as for a broker that has no metadata partition in this log dir.
        let reconciled = json("tiered", &["--json"], &dir, &s3, 0);
        if !reconciled["partitions"][0]["orphans"]
            .as_array()
            .unwrap()
            .is_empty()
        {
            // The metadata partition is the one Kafka's partitioner picks for the topic id.
            for d in common::listing(dir.parent().unwrap()) {
                if d.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("__remote_log_metadata-")
                {
                    std::fs::remove_dir_all(d).unwrap();
                }
            }
        }
        assert_same(&base, &dir, &s3, &format!("{name}, local-tiered in S3"));
        // Aiven's layout, without metadata: the listing is the tier.
        for compression in [false, true] {
            let what = format!("{name}, aiven, compression {compression}");
            let root = tmp.path().join(&name).join(format!("aiven-{compression}"));
            let aiven_dir = root.join("logs/orders-0");
            common::copy_dir(&recovered, &aiven_dir);
            let store = root.join("store");
            let write = WriteOptions {
                chunk_size: 1000,
                compression,
                encryption: None,
            };
            tier_aiven(&aiven_dir, &store, &bases, &write);
            remove_segments(&aiven_dir, removed);
            let url = format!("file://{}", store.display());
            let flags = ["--remote", url.as_str(), "--remote-layout", "aiven"];
            assert_same(&base, &aiven_dir, &flags, &what);
        }
    }
    assert!(tiered_count > 0);
    drop(moto);
}

/// A remote tier that holds nothing for the partition, a store that is not there, and
/// --remote-endpoint without --remote: clear errors or a notice, never a silent success.
#[test]
fn remote_flags_refuse_what_they_cannot_use() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::kseg_write(
        r#"{"topic": "orders", "partition": 0, "ops": [{"op": "append", "batches": [{"gen": {"count": 3}}]}]}"#,
        &dir,
    );
    let d = dir.display().to_string();
    let missing = tmp.path().join("no-such-store").display().to_string();
    let (code, _, err) = run(&["digest", "--remote", &missing, &d]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&missing), "{err}");
    let (code, _, err) = run(&["digest", "--remote-endpoint", "http://127.0.0.1:1", &d]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--remote"), "{err}");
    // An empty store: no layout to recognise.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (code, _, err) = run(&["offsets", "--remote", &empty.display().to_string(), &d]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no tiered-storage layout recognised"), "{err}");
}

/// `stats`, `txns`, `locate` and `diff` read the remote tier with the local log too (through a
/// directory store, `write --tier-to`'s); a damaged remote object is a finding naming the
/// object and the byte position.
#[test]
fn the_other_read_only_commands_and_damage_in_the_remote_tier() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/SPEC.json");
    let spec = spec.display().to_string();
    let base = tmp.path().join("base/orders-0");
    let dir = tmp.path().join("logs/orders-0");
    let tier = tmp.path().join("tier");
    let (t, b, d) = (
        tier.display().to_string(),
        base.display().to_string(),
        dir.display().to_string(),
    );
    assert_eq!(run(&["write", &spec, &b]).0, 0);
    let (code, _, err) = run(&["write", &spec, &d, "--tier-to", &t]);
    assert_eq!(code, 0, "{err}");
    remove_segments(&dir, &[0]);
    let remote = ["--remote", t.as_str()];
    for (cmd, args) in [
        ("stats", vec!["--json", "--deep"]),
        ("txns", vec!["--json", "--now", "0"]),
        ("locate", vec!["100", "--json"]),
    ] {
        let want = common::without_places(json(cmd, &args, &base, &[], 0));
        assert_eq!(
            want,
            common::without_places(json(cmd, &args, &dir, &remote, 0)),
            "{cmd}"
        );
    }
    let (code, out, err) = run(&["diff", "--remote", &t, &b, &d]);
    assert_eq!(code, 0, "{out} {err}");
    assert!(out.contains("identical"), "{out}");
    // One byte flipped inside a batch of the remote segment: verify names the object.
    let object = common::files_under(&tier)
        .into_iter()
        .find(|f| f.extension().is_some_and(|x| x == "log"))
        .unwrap();
    let mut bytes = std::fs::read(&object).unwrap();
    bytes[300] ^= 0xff;
    std::fs::write(&object, bytes).unwrap();
    let (code, checks) = verify(&dir, &remote);
    assert_eq!((code, checks), (1, vec!["batch.crc".to_string()]));
    let report = json("verify", &["--json", "-q"], &dir, &remote, 1);
    let finding = &report["partitions"][0]["findings"][0];
    assert_eq!(finding["file"], object.display().to_string());
    assert!(finding["position"].as_u64().unwrap() <= 300, "{finding}");
}
