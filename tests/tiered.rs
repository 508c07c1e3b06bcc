//! `kseg tiered` against a remote tier laid out by hand here, as Kafka's `LocalTieredStorage`
//! lays it out (`RemoteLogSegmentFileset`: `<topic>-<partition>-<topicId>/<20-digit start
//! offset>-<segmentId><suffix>`), with `__remote_log_metadata` records written in the
//! remote-log-metadata decoder's JSON form: a consistent tier reports nothing, and each planted
//! inconsistency is found, alone. The same tier is then served by an S3 server (moto) started
//! here, through listing, ranged GETs and SigV4.

mod common;
#[path = "common/moto.rs"]
mod moto;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

const TOPIC_ID: &str = "T1JBQ0xFAAAAAAAAAAAAAQ";

/// A segment id: 16 bytes of `n`, Kafka's base64 form.
fn segment_id(n: u8) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode([n; 16])
}

/// A partition `orders-0` of `segments` closed segments of 10 records each plus an active one,
/// in `log_dir`; returns the partition directory.
fn partition(log_dir: &Path, segments: usize) -> PathBuf {
    let mut ops = Vec::new();
    for _ in 0..segments {
        ops.push(json!({"op": "append", "batches": [
            {"gen": {"count": 5, "value_len": 50}}, {"gen": {"count": 5, "value_len": 50}}]}));
        ops.push(json!({"op": "roll"}));
    }
    ops.push(json!({"op": "append", "batches": [{"gen": {"count": 5, "value_len": 50}}]}));
    let dir = log_dir.join("orders-0");
    common::kseg_write(
        &json!({"topic": "orders", "partition": 0, "ops": ops}).to_string(),
        &dir,
    );
    dir
}

/// One remote segment: its id, offsets, and whether its copy finished.
struct Tiered {
    id: String,
    start: i64,
    end: i64,
    state: u8,
    /// The `.log`'s bytes (`segmentSizeInBytes`).
    size: u64,
}

fn metadata_record(t: &Tiered) -> Value {
    let tip = json!({"name": "orders", "id": TOPIC_ID, "partition": 0});
    json!({"remote": {"type": "REMOTE_LOG_SEGMENT_METADATA_RECORD", "version": 0, "data": {
        "remoteLogSegmentId": {"topicIdPartition": tip, "id": t.id},
        "startOffset": t.start, "endOffset": t.end, "brokerId": 1, "maxTimestampMs": 0,
        "eventTimestampMs": 0, "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": t.start}],
        "segmentSizeInBytes": t.size, "remoteLogSegmentState": 0}}})
}

fn update_record(t: &Tiered, state: u8) -> Value {
    let tip = json!({"name": "orders", "id": TOPIC_ID, "partition": 0});
    json!({"remote": {"type": "REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD", "version": 0, "data": {
        "remoteLogSegmentId": {"topicIdPartition": tip, "id": t.id},
        "brokerId": 1, "eventTimestampMs": 0, "remoteLogSegmentState": state}}})
}

/// Writes `__remote_log_metadata-0` in `log_dir` for `segments`.
fn write_metadata(log_dir: &Path, segments: &[Tiered]) {
    let mut records = Vec::new();
    for t in segments {
        records.push(metadata_record(t));
        for s in 1..=t.state {
            records.push(update_record(t, s));
        }
    }
    let spec = json!({"topic": "__remote_log_metadata", "partition": 0,
        "ops": [{"op": "append", "batches": [{"records": records}]}]});
    common::kseg_write(&spec.to_string(), &log_dir.join("__remote_log_metadata-0"));
}

/// The file name `LocalTieredStorage` gives `suffix` of segment `id` starting at `start`.
fn remote_name(start: i64, id: &str, suffix: &str) -> String {
    format!("orders-0-{TOPIC_ID}/{start:020}-{id}{suffix}")
}

/// Copies the first `count` closed segments of `dir` into the tier under `root`
/// (`kafka-tiered-storage/`), each with a fresh id, and returns them (copy finished).
fn tier(dir: &Path, root: &Path, count: usize) -> Vec<Tiered> {
    let logs = common::logs(dir);
    let mut out = Vec::new();
    for (i, log) in logs.iter().take(count).enumerate() {
        let base: i64 = log.file_stem().unwrap().to_str().unwrap().parse().unwrap();
        let next: i64 = logs[i + 1]
            .file_stem()
            .unwrap()
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        let id = segment_id(i as u8 + 1);
        let stem = log.with_extension("");
        for (suffix, from) in [
            (".log", log.clone()),
            (".index", stem.with_extension("index")),
            (".timeindex", stem.with_extension("timeindex")),
            (".snapshot", stem.with_extension("snapshot")),
        ] {
            let to = root.join(remote_name(base, &id, suffix));
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            let bytes = std::fs::read(&from).unwrap_or_default();
            std::fs::write(&to, bytes).unwrap();
        }
        let epochs = root.join(remote_name(base, &id, ".leader_epoch_checkpoint"));
        std::fs::write(epochs, format!("0\n1\n0 {base}\n")).unwrap();
        out.push(Tiered {
            id,
            start: base,
            end: next - 1,
            state: 1,
            size: std::fs::metadata(log).unwrap().len(),
        });
    }
    out
}

/// `kseg tiered --json ARGS PATH`: exit status and the findings' check ids, sorted.
fn tiered(path: &Path, args: &[&str]) -> (i32, Vec<String>, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .arg("tiered")
        .arg("--json")
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout} / {}", String::from_utf8_lossy(&out.stderr)));
    common::assert_matches_schema("tiered", std::slice::from_ref(&report));
    (code, common::finding_checks(&report), report)
}

/// A log dir with `orders-0` of five closed segments, the first three tiered under `root`
/// and deleted locally as the broker's local retention does.
fn setup(tmp: &Path) -> (PathBuf, PathBuf, Vec<Tiered>) {
    let log_dir = tmp.join("logs");
    let root = tmp.join("tier/kafka-tiered-storage");
    let dir = partition(&log_dir, 5);
    let segments = tier(&dir, &root, 3);
    for t in &segments[..2] {
        for ext in ["log", "index", "timeindex", "snapshot"] {
            let _ = std::fs::remove_file(dir.join(format!("{:020}.{ext}", t.start)));
        }
    }
    (log_dir, root, segments)
}

fn url(root: &Path) -> String {
    format!("file://{}", root.display())
}

#[test]
fn consistent_tier_reports_nothing_on_file_urls_and_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let (log_dir, root, segments) = setup(tmp.path());
    write_metadata(&log_dir, &segments);
    let dir = log_dir.join("orders-0");
    for remote in [
        url(&root),
        url(root.parent().unwrap()),
        root.display().to_string(),
    ] {
        for path in [&dir, &log_dir] {
            let (code, checks, report) = tiered(path, &["--deep", "--remote", &remote]);
            assert_eq!((code, checks), (0, vec![]), "{remote} {}", path.display());
            let p = &report["partitions"][0];
            assert_eq!(p["segments"].as_array().unwrap().len(), 3);
            assert_eq!(p["segments"][2]["endOffset"], segments[2].end);
            assert_eq!(p["localLogStartOffset"], segments[2].start);
            assert_eq!(p["localLogStartOffsetSource"], "first segment base offset");
            assert_eq!(report["layout"], "local-tiered");
        }
    }
    // The partition against itself, named twice: one log, shown once, and no notice that a
    // second showing found none below the local log.
    let d = dir.display().to_string();
    let again = format!("{}/./orders-0", log_dir.display());
    let (code, out, err) =
        common::kseg_within_a_minute(&["diff", "--remote", &url(&root), &d, &again]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("identical") && err.is_empty(), "{out}{err}");
    // A seek into a remote segment scans it, which has no local index to miss: nothing to say.
    let (code, out, err) =
        common::kseg_within_a_minute(&["locate", "--remote", &url(&root), "5", &d]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("via a scan of the segment") && err.is_empty(),
        "{out}{err}"
    );
    // Without metadata the listing alone is the tier; --deep reads each segment's offsets.
    std::fs::remove_dir_all(log_dir.join("__remote_log_metadata-0")).unwrap();
    let (code, checks, report) = tiered(&dir, &["--deep", "--remote", &url(&root)]);
    assert_eq!((code, checks), (0, vec![]));
    assert_eq!(report["metadataRecordCount"], 0);
    assert_eq!(
        report["partitions"][0]["segments"][1]["endOffset"],
        segments[1].end
    );
}

#[test]
fn each_planted_inconsistency_is_found_alone() {
    type Plant = fn(&Path, &Path, &mut Vec<Tiered>);
    let plants: [(&str, Plant, &[&str], i32); 9] = [
        (
            "orphan",
            |_, root, _| {
                let stray = root.join(remote_name(0, &segment_id(99), ".log"));
                std::fs::write(stray, b"orphan bytes").unwrap();
            },
            &["tiered.orphan"],
            0,
        ),
        (
            "missing object",
            |_, root, s| {
                std::fs::remove_file(root.join(remote_name(s[1].start, &s[1].id, ".index")))
                    .unwrap();
            },
            &["tiered.object-missing"],
            1,
        ),
        (
            "missing segment",
            |_, root, s| {
                for suffix in [
                    ".log",
                    ".index",
                    ".timeindex",
                    ".snapshot",
                    ".leader_epoch_checkpoint",
                ] {
                    std::fs::remove_file(root.join(remote_name(s[0].start, &s[0].id, suffix)))
                        .unwrap();
                }
            },
            &["tiered.object-missing"],
            1,
        ),
        (
            "unfinished copy",
            |_, _, s| s[2].state = 0,
            // Its offsets are still local: no gap.
            &["tiered.copy-unfinished"],
            0,
        ),
        (
            "gap",
            |_, root, s| {
                let gone = s.remove(1);
                for suffix in [
                    ".log",
                    ".index",
                    ".timeindex",
                    ".snapshot",
                    ".leader_epoch_checkpoint",
                ] {
                    std::fs::remove_file(root.join(remote_name(gone.start, &gone.id, suffix)))
                        .unwrap();
                }
            },
            &["tiered.gap"],
            1,
        ),
        (
            "overlap",
            |_, root, s| {
                // Segment 1's objects again under another id, its metadata claiming one more offset.
                let id = segment_id(50);
                for suffix in [
                    ".log",
                    ".index",
                    ".timeindex",
                    ".snapshot",
                    ".leader_epoch_checkpoint",
                ] {
                    let from = root.join(remote_name(s[1].start, &s[1].id, suffix));
                    std::fs::copy(from, root.join(remote_name(s[1].start, &id, suffix))).unwrap();
                }
                s.push(Tiered {
                    id,
                    start: s[1].start,
                    end: s[1].end,
                    state: 1,
                    size: s[1].size,
                });
            },
            &["tiered.overlap"],
            0,
        ),
        (
            "damaged log",
            |_, root, s| {
                let log = root.join(remote_name(s[0].start, &s[0].id, ".log"));
                let mut bytes = std::fs::read(&log).unwrap();
                let n = bytes.len();
                bytes[n - 3] ^= 0xff;
                std::fs::write(&log, bytes).unwrap();
            },
            &["tiered.log-damaged"],
            1,
        ),
        (
            "log cut at a batch",
            // Whole batches, every offset within the metadata's: only the size tells that
            // the last batch's offsets are gone.
            |_, root, s| {
                let log = root.join(remote_name(s[0].start, &s[0].id, ".log"));
                let (last, _) = *common::batches(&log).last().unwrap();
                let bytes = std::fs::read(&log).unwrap();
                std::fs::write(&log, &bytes[..last as usize]).unwrap();
            },
            &["tiered.size-mismatch"],
            1,
        ),
        (
            "indexes grown without bound",
            // A GiB each (sparse): refused unread, as no index of the segment can be so long,
            // nor a snapshot longer than its count of entries.
            |_, root, s| {
                for suffix in [".index", ".leader_epoch_checkpoint", ".snapshot"] {
                    let f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(root.join(remote_name(s[0].start, &s[0].id, suffix)))
                        .unwrap();
                    f.set_len(1 << 30).unwrap();
                }
            },
            &["tiered.index", "tiered.index", "tiered.index"],
            1,
        ),
    ];
    for (what, plant, expected, code) in plants {
        let tmp = tempfile::tempdir().unwrap();
        let (log_dir, root, mut segments) = setup(tmp.path());
        plant(&log_dir, &root, &mut segments);
        write_metadata(&log_dir, &segments);
        let (got_code, checks, report) = tiered(
            &log_dir.join("orders-0"),
            &["--deep", "--remote", &url(&root)],
        );
        assert_eq!(checks, expected, "{what}");
        assert_eq!(got_code, code, "{what}");
        if what == "indexes grown without bound" {
            for f in report["partitions"][0]["findings"].as_array().unwrap() {
                let m = f["message"].as_str().unwrap();
                assert!(
                    m.contains("stored in 1073741824 bytes, more than its segment has room")
                        || m.contains("stored in 1073741824 bytes, more than the entries its header counts fill"),
                    "{m}"
                );
                assert!(m.contains("not read"), "{m}");
            }
        }
        // A copy not finished is not served: its offsets are not the tier's.
        if what == "unfinished copy" {
            let unserved = &report["partitions"][0]["segments"][2];
            assert_eq!(unserved["served"], false, "{unserved}");
            let out = common::kseg(&[
                "tiered",
                "--remote",
                &url(&root),
                log_dir.join("orders-0").to_str().unwrap(),
            ]);
            let text = String::from_utf8_lossy(&out.stdout);
            let served = format!(
                "3 remote segment(s) (2 served), offsets {}..{},",
                segments[0].start, segments[1].end
            );
            assert!(text.contains(&served), "{text}");
        }
        // The listing alone tells a segment's size in this layout.
        let (_, shallow, _) = tiered(&log_dir.join("orders-0"), &["--remote", &url(&root)]);
        if what == "log cut at a batch" {
            assert_eq!(shallow, expected, "{what}, not deep");
        }
        // `verify --remote` reports what reconciling finds beside what its own reading finds:
        // a gap or a segment cut short is in no batch it reads, nor a served segment with no
        // object (the other commands refuse to read the log without it).
        let out = common::kseg(&[
            "verify",
            "--json",
            "--remote",
            &url(&root),
            log_dir.join("orders-0").to_str().unwrap(),
        ]);
        let verify_code = out.status.code().unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let verified = common::finding_checks(&report);
        assert!(
            shallow.iter().all(|c| verified.contains(c)),
            "{what}: tiered {shallow:?}, verify {verified:?}"
        );
        let errors = report["partitions"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["severity"] == "error");
        assert_eq!(verify_code, i32::from(errors), "{what}: {report}");
        if what == "missing segment" {
            assert_eq!(verify_code, 1, "{what}: {report}");
            let (code, err) = common::kseg_status(
                &["digest", "--remote", &url(&root)],
                &log_dir.join("orders-0"),
            );
            assert_eq!(code, 2, "{what}: {err}");
            assert!(
                err.contains("the store holds no object of remote segment"),
                "{err}"
            );
        }
        if ["gap", "log cut at a batch"].contains(&what) {
            assert_eq!(verify_code, 1, "{what}: {report}");
            // The partition named relatively, by its name or as `.`: its log dir (the
            // metadata's) is found all the same.
            for (cwd, path) in [
                (log_dir.clone(), "orders-0"),
                (log_dir.join("orders-0"), "."),
            ] {
                let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
                    .args(["verify", "--json", "--remote", &url(&root), path])
                    .current_dir(&cwd)
                    .output()
                    .unwrap();
                let report: Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(
                    common::finding_checks(&report),
                    verified,
                    "{what}, {path} in {}",
                    cwd.display()
                );
            }
            // The other commands read what is there, and say the tier's errors.
            let out = common::kseg(&[
                "digest",
                "--remote",
                &url(&root),
                log_dir.join("orders-0").to_str().unwrap(),
            ]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{what}: {err}");
            assert!(
                err.contains(&format!("has 1 error(s) (1 × {}), which", expected[0])),
                "{what}: {err}"
            );
        }
    }
}

#[test]
fn bad_remotes_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let (log_dir, root, segments) = setup(tmp.path());
    write_metadata(&log_dir, &segments);
    let dir = log_dir.join("orders-0");
    let missing = tmp.path().join("nowhere");
    let (code, err) = common::kseg_status(&["tiered", "--remote", &url(&missing)], &dir);
    assert_eq!(code, 2);
    assert!(
        err.contains("nowhere") && err.contains("no such directory"),
        "{err}"
    );
    let (code, err) = common::kseg_status(&["tiered", "--remote", "gopher://x"], &dir);
    assert_eq!(code, 2);
    assert!(err.contains("not supported"), "{err}");
    // A place that holds nothing (a prefix mistyped): every segment the metadata names is
    // missing, and the findings say the store lists nothing at all.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (code, checks, report) = tiered(&dir, &["--remote", &url(&empty)]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(checks.len(), 3, "{report}");
    for f in report["partitions"][0]["findings"].as_array().unwrap() {
        assert_eq!(f["check"], "tiered.object-missing", "{f}");
        assert!(
            f["message"]
                .as_str()
                .unwrap()
                .contains("the store lists no object at all"),
            "{f}"
        );
    }
    // A partition no tier knows: nothing examined.
    let other = log_dir.join("other-0");
    common::kseg_write(
        &json!({"topic": "other", "partition": 0, "ops": []}).to_string(),
        &other,
    );
    let (code, err) = common::kseg_status(&["tiered", "--remote", &url(&root)], &other);
    assert_eq!(code, 2, "{err}");
}

/// Uploads every file under `root` to `s3://bucket/prefix/…` through object_store.
fn upload(endpoint: &str, bucket: &str, prefix: &str, root: &Path) {
    use object_store::ObjectStore;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let s3 = object_store::aws::AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_allow_http(true)
        .with_bucket_name(bucket)
        .with_region("us-east-1")
        .with_access_key_id("testing")
        .with_secret_access_key("testing")
        .build()
        .unwrap();
    moto::create_bucket(endpoint, bucket);
    for f in common::files_under(root) {
        let key = format!(
            "{prefix}/{}",
            f.strip_prefix(root).unwrap().to_string_lossy()
        );
        let bytes = std::fs::read(&f).unwrap();
        rt.block_on(s3.put(&object_store::path::Path::from(key), bytes.into()))
            .unwrap();
    }
}

fn s3_env(cmd: &mut Command) -> &mut Command {
    cmd.env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .env_remove("AWS_ENDPOINT")
        .env_remove("AWS_SESSION_TOKEN")
}

fn kseg_s3(args: &[&str]) -> (i32, String, String) {
    common::outcome(s3_env(&mut Command::new(env!("CARGO_BIN_EXE_kseg"))).args(args))
}

#[test]
fn s3_server_listing_ranged_reads_and_failures() {
    let Some(moto) = moto::start_or_skip(&[]) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (log_dir, root, segments) = setup(tmp.path());
    write_metadata(&log_dir, &segments);
    upload(&moto.endpoint, "tier", "cluster1", root.parent().unwrap());
    let dir = log_dir.join("orders-0");
    let dir_s = dir.display().to_string();
    let endpoint = moto.endpoint.clone();
    let base = ["tiered", "--json", "--deep", "--remote-endpoint", &endpoint];
    let run_with = |options: &[&str], remote: &str| {
        let mut args = base.to_vec();
        args.extend(options);
        args.extend(["--remote", remote, &dir_s]);
        kseg_s3(&args)
    };
    let run = |remote: &str| run_with(&[], remote);
    let (code, out, err) = run("s3://tier/cluster1");
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        report["partitions"][0]["segments"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert!(report["partitions"][0]["findings"]
        .as_array()
        .unwrap()
        .is_empty());
    // Same answers as the same tier on the filesystem.
    let (_, local, _) = kseg_s3(&[
        "tiered",
        "--json",
        "--deep",
        "--remote",
        &url(&root),
        &dir_s,
    ]);
    let strip = |v: &Value| {
        let mut v = v.clone();
        v["remote"] = Value::Null;
        for s in v["partitions"][0]["segments"].as_array_mut().unwrap() {
            s["logObject"] = Value::Null;
        }
        v
    };
    assert_eq!(
        strip(&report),
        strip(&serde_json::from_str(&local).unwrap())
    );
    // Ranged GETs of 100 bytes, three ahead: the same answers.
    let (code, small, err) = run_with(
        &["--remote-chunk-bytes", "100", "--remote-requests", "3"],
        "s3://tier/cluster1",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(report, serde_json::from_str::<Value>(&small).unwrap());
    // A bucket that does not exist: an error naming it.
    let (code, _, err) = run("s3://nobucket/cluster1");
    assert_eq!(code, 2);
    assert!(err.contains("s3://nobucket/cluster1"), "{err}");
    // A server that is gone: an error naming it within the retry budget, no hang.
    drop(moto);
    let started = std::time::Instant::now();
    let (code, _, err) = run("s3://tier/cluster1");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("s3://tier/cluster1"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

/// A TCP relay on 127.0.0.1 in front of the server on `upstream`, which stops as a server that
/// goes down does: part way through the answer to the first ranged GET of a `.log` object (its
/// headers and one byte of its body pass), every connection closes and no more are accepted.
/// Returns its endpoint.
fn failing_relay(upstream: u16) -> String {
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpListener, TcpStream};
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::{Arc, Mutex};

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    let stopped = Arc::new(AtomicBool::new(false));
    let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
    let stop = {
        let (stopped, open) = (Arc::clone(&stopped), Arc::clone(&open));
        move || {
            stopped.store(true, SeqCst);
            for s in open.lock().unwrap().iter() {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
    };
    std::thread::spawn(move || {
        while !stopped.load(SeqCst) {
            let client = match listener.accept() {
                Ok((c, _)) => c,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    continue;
                }
                Err(e) => panic!("{e}"),
            };
            client.set_nonblocking(false).unwrap();
            let server = TcpStream::connect(("127.0.0.1", upstream)).unwrap();
            open.lock()
                .unwrap()
                .extend([client.try_clone().unwrap(), server.try_clone().unwrap()]);
            // Whether this connection carries a ranged GET of a .log object.
            let log_get = Arc::new(AtomicBool::new(false));
            let (mut from_client, mut to_server) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (asked, done) = (Arc::clone(&log_get), Arc::clone(&stopped));
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 1 << 16];
                while let Ok(n @ 1..) = from_client.read(&mut buf) {
                    let text = String::from_utf8_lossy(&buf[..n]).to_lowercase();
                    if text.contains(".log http/1.1") && text.contains("\r\nrange:") {
                        asked.store(true, SeqCst);
                    }
                    if done.load(SeqCst) || to_server.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = to_server.shutdown(Shutdown::Write);
            });
            let (mut from_server, mut to_client) = (server, client);
            let stop = stop.clone();
            std::thread::spawn(move || {
                let (mut buf, mut answer) = (vec![0u8; 1 << 16], Vec::new());
                while let Ok(n @ 1..) = from_server.read(&mut buf) {
                    if !log_get.load(SeqCst) {
                        if to_client.write_all(&buf[..n]).is_err() {
                            break;
                        }
                        continue;
                    }
                    answer.extend_from_slice(&buf[..n]);
                    if let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
                        if answer.len() > end + 4 {
                            let _ = to_client.write_all(&answer[..end + 5]);
                            stop();
                            break;
                        }
                    }
                }
                let _ = to_client.shutdown(Shutdown::Write);
            });
        }
    });
    endpoint
}

#[test]
fn s3_server_stopped_mid_read_is_an_error_naming_the_object() {
    let Some(moto) = moto::start_or_skip(&[]) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (log_dir, root, segments) = setup(tmp.path());
    write_metadata(&log_dir, &segments);
    upload(&moto.endpoint, "tier", "cluster1", root.parent().unwrap());
    let port = moto.endpoint.rsplit(':').next().unwrap().parse().unwrap();
    let relay = failing_relay(port);
    let dir = log_dir.join("orders-0").display().to_string();
    let (code, _, err) = kseg_s3(&[
        "tiered",
        "--deep",
        "--remote-endpoint",
        &relay,
        "--remote",
        "s3://tier/cluster1",
        &dir,
    ]);
    assert_eq!(code, 2, "{err}");
    // A segment's log, by its URL: the object whose read was cut.
    let named = segments.iter().any(|t| {
        err.contains(&format!(
            "s3://tier/cluster1/kafka-tiered-storage/{}",
            remote_name(t.start, &t.id, ".log")
        ))
    });
    assert!(named, "{err}");
    // And where in it: the byte the transfer stopped at, within the range asked for.
    assert!(
        err.contains(": at byte ") && err.contains("(reading bytes "),
        "{err}"
    );
}

/// Entries of a tier in a filesystem that are no object (a FIFO, a socket, a device, a link to
/// nothing or to itself, a link to a directory), named by a path or a `file://` URL: each
/// reported by `tiered` (an error where it stands for an object of a segment the broker serves
/// and fails on; a link to nothing as an optional index is none to the broker), none read; a
/// segment's `.log` that is a FIFO, and a copied segment of which nothing is left, are errors
/// of the one-log commands naming the object (exit 2), never a hang nor a log read without
/// them.
#[test]
fn entries_that_are_no_objects_are_reported_never_read() {
    let tmp = tempfile::tempdir().unwrap();
    let (log_dir, root, s) = setup(tmp.path());
    write_metadata(&log_dir, &s);
    let dir = log_dir.join("orders-0");
    let fifo = |p: &Path| {
        let _ = std::fs::remove_file(p);
        common::mkfifo(p);
    };
    let at = |i: usize, suffix: &str| root.join(remote_name(s[i].start, &s[i].id, suffix));
    let partition = root.join(format!("orders-0-{TOPIC_ID}"));
    fifo(&at(1, ".index"));
    std::fs::remove_file(at(0, ".snapshot")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", at(0, ".snapshot")).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("nothing"), at(2, ".txnindex")).unwrap();
    fifo(&partition.join("stray"));
    let _socket = std::os::unix::net::UnixListener::bind(partition.join("socket")).unwrap();
    std::os::unix::fs::symlink("loop", partition.join("loop")).unwrap();
    std::os::unix::fs::symlink(&partition, partition.join("up")).unwrap();
    for remote in [url(&root), root.display().to_string()] {
        let (code, checks, report) = tiered(&dir, &["--deep", "--remote", &remote]);
        assert_eq!(code, 1, "{remote}");
        assert_eq!(
            checks,
            [
                "tiered.not-an-object",
                "tiered.not-an-object",
                "tiered.not-an-object",
                "tiered.not-an-object",
                "tiered.not-an-object",
                "tiered.object-missing",
                "tiered.object-missing"
            ],
            "{remote}"
        );
        let findings = report["partitions"][0]["findings"].as_array().unwrap();
        let about = |name: &str| {
            findings
                .iter()
                .find(|f| f["file"].as_str().unwrap().ends_with(name))
                .unwrap_or_else(|| panic!("{remote}: nothing about {name}: {findings:?}"))
        };
        for (name, severity, says) in [
            (
                remote_name(s[1].start, &s[1].id, ".index"),
                "error",
                "is a FIFO, not an object",
            ),
            (
                remote_name(s[0].start, &s[0].id, ".snapshot"),
                "error",
                "is a character device, not an object",
            ),
            (
                remote_name(s[2].start, &s[2].id, ".txnindex"),
                "warning",
                "the broker takes the segment as having none",
            ),
            (format!("orders-0-{TOPIC_ID}/stray"), "warning", "a FIFO"),
            (format!("orders-0-{TOPIC_ID}/socket"), "warning", "a socket"),
            (
                format!("orders-0-{TOPIC_ID}/loop"),
                "warning",
                "a symbolic link to nothing",
            ),
            (
                format!("orders-0-{TOPIC_ID}/up"),
                "warning",
                "a symbolic link to a directory",
            ),
        ] {
            let f = about(&name);
            assert_eq!(f["severity"], severity, "{remote}: {f}");
            assert!(
                f["message"].as_str().unwrap().contains(says),
                "{remote}: {f}"
            );
        }
    }
    // The one-log commands: the FIFO that stands for a served segment's .log is named.
    fifo(&at(0, ".log"));
    let log_key = remote_name(s[0].start, &s[0].id, ".log");
    for remote in [url(&root), root.display().to_string()] {
        let d = dir.display().to_string();
        for cmd in [&["digest"][..], &["dump"]] {
            let args = [cmd, &["--remote", &remote, &d]].concat();
            let (code, _, err) = common::kseg_within_a_minute(&args);
            assert_eq!(code, 2, "{args:?}: {err}");
            // Named as the store names it: the URL, or the path.
            let named = format!("{remote}/{log_key}: a FIFO, not an object");
            assert!(err.contains(&named), "{args:?}: {err}");
        }
        // verify reports it as the tier's finding, and verifies the rest.
        let args = ["verify", "--deep", "--remote", &remote, &d];
        let (code, out, err) = common::kseg_within_a_minute(&args);
        assert_eq!(code, 1, "{args:?}: {err}");
        let named = format!("{remote}/{log_key} (offset 0): the .log object of remote segment");
        assert!(
            out.contains(&named) && out.contains("is a FIFO, not an object"),
            "{args:?}: {out}"
        );
        assert!(!err.contains("the local log alone is read"), "{err}");
        // The FIFO named alone.
        let alone = format!("{remote}/{log_key}");
        let (code, _, err) = common::kseg_within_a_minute(&["dump", "--remote-segment", &alone]);
        assert_eq!(code, 2, "{alone}: {err}");
        assert!(
            err.contains(&format!("{alone}: a FIFO, not an object")),
            "{err}"
        );
    }
    // Nothing left of a segment the metadata says was copied: not a shorter log, an error.
    for e in std::fs::read_dir(&partition).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().unwrap().to_string_lossy().contains(&s[0].id) {
            std::fs::remove_file(p).unwrap();
        }
    }
    let d = dir.display().to_string();
    let (code, _, err) = common::kseg_within_a_minute(&["digest", "--remote", &url(&root), &d]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&log_key) && err.contains("says was copied"),
        "{err}"
    );
}

/// A folder where a served segment's object should be (a directory in a filesystem tree;
/// objects whose keys go on past the object's, in a bucket): the object is said to be one,
/// its objects are orphans, and the one-log commands refuse to read it as the segment.
#[test]
fn a_folder_at_an_objects_key_is_said_to_be_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (log_dir, root, s) = setup(tmp.path());
    write_metadata(&log_dir, &s);
    let dir = log_dir.join("orders-0");
    let log_key = remote_name(s[0].start, &s[0].id, ".log");
    let index = root.join(remote_name(s[1].start, &s[1].id, ".index"));
    for folder in [root.join(&log_key), index] {
        std::fs::remove_file(&folder).unwrap();
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("part-1"), b"12345").unwrap();
        std::fs::write(folder.join("part-2"), b"678").unwrap();
    }
    for remote in [url(&root), root.display().to_string()] {
        let (code, checks, report) = tiered(&dir, &["--remote", &remote]);
        assert_eq!(code, 1, "{remote}");
        // The folders' objects are no segment's: orphans, each.
        assert_eq!(
            checks,
            [
                "tiered.object-missing",
                "tiered.object-missing",
                "tiered.orphan",
                "tiered.orphan",
                "tiered.orphan",
                "tiered.orphan"
            ],
            "{remote}"
        );
        let p = &report["partitions"][0];
        let findings = p["findings"].as_array().unwrap();
        for f in findings
            .iter()
            .filter(|f| f["check"] == "tiered.object-missing")
        {
            assert_eq!(f["severity"], "error", "{f}");
            assert!(
                f["message"]
                    .as_str()
                    .unwrap()
                    .contains("is a folder holding 2 object(s), not an object"),
                "{f}"
            );
        }
        assert_eq!(p["orphans"].as_array().unwrap().len(), 4, "{p}");
        assert_eq!(p["orphanSize"], 16, "{p}");
        let d = dir.display().to_string();
        let (code, _, err) = common::kseg_within_a_minute(&["digest", "--remote", &remote, &d]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains(&format!(
                "{remote}/{log_key}: a folder holding 2 object(s), not an object"
            )),
            "{err}"
        );
    }
}

/// `tiered --deep` judges the offset index's entries as its walk passes them, damage or not:
/// an entry inside the batch before the damage is wrong, one into the damage is not judged,
/// and one past the last batch is wrong though the walk met damage before it.
#[test]
fn index_entries_around_damage_are_judged_as_the_walk_passes_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (log_dir, root, s) = setup(tmp.path());
    write_metadata(&log_dir, &s);
    let log = root.join(remote_name(s[0].start, &s[0].id, ".log"));
    let batches = common::batches(&log);
    assert_eq!(batches.len(), 2);
    let len = std::fs::metadata(&log).unwrap().len();
    // The second (last) batch's checksum broken.
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[len as usize - 3] ^= 0xff;
    std::fs::write(&log, bytes).unwrap();
    // (relative offset, position): inside the first batch, at the damaged one, past the end.
    let entries = [(0u32, batches[0].0 + 5), (5, batches[1].0), (9, len + 100)];
    let index: Vec<u8> = entries
        .iter()
        .flat_map(|(o, p)| [o.to_be_bytes(), (*p as u32).to_be_bytes()].concat())
        .collect();
    std::fs::write(
        root.join(remote_name(s[0].start, &s[0].id, ".index")),
        index,
    )
    .unwrap();
    let dir = log_dir.join("orders-0");
    let (code, checks, report) = tiered(&dir, &["--deep", "--remote", &url(&root)]);
    assert_eq!(code, 1);
    let messages: Vec<&str> = report["partitions"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        checks,
        ["tiered.index", "tiered.index", "tiered.log-damaged"],
        "{messages:?}"
    );
    let inside = format!("position {}) does not point at a batch", batches[0].0 + 5);
    let past = format!("position {}) lies past the segment's last batch", len + 100);
    for says in [inside, past] {
        assert!(
            messages.iter().any(|m| m.contains(&says)),
            "{says}: {messages:?}"
        );
    }
}

/// A log dir that holds `__remote_log_metadata` partitions, but not the one a partition's
/// records go to (each broker hosts a few of the 50): that partition's remote segments are
/// taken from the listing, each as served, as with no metadata at all, never called orphans
/// (which the broker "never reads", and an operator would delete); `tiered` says why, and
/// the one-log commands read them, with a notice.
#[test]
fn a_partition_whose_metadata_is_on_another_broker_is_read_from_the_listing() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/SPEC.json"),
    )
    .unwrap();
    let alpha = spec
        .replace("\"orders\"", "\"alpha\"")
        .replace("b3JkZXJzAAAAAAAAAAAAAQ", "YWxwaGEAAAAAAAAAAAAAAQ");
    let (logs, tier) = (tmp.path().join("logs"), tmp.path().join("tier"));
    for (spec, name) in [(&spec, "orders-0"), (&alpha, "alpha-0")] {
        let spec_file = tmp.path().join(format!("{name}.json"));
        std::fs::write(&spec_file, spec).unwrap();
        let out = common::kseg(&[
            "write",
            spec_file.to_str().unwrap(),
            logs.join(name).to_str().unwrap(),
            "--tier-to",
            tier.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{out:?}");
    }
    let untiered = tmp.path().join("untiered/orders-0");
    common::kseg_write(&spec, &untiered);
    // orders-0's records are in partition 0 of the metadata, alpha-0's in 18: this log dir
    // has only alpha's; and orders-0's tiered segment is gone locally, as retention leaves it.
    std::fs::remove_dir_all(logs.join("__remote_log_metadata-0")).unwrap();
    assert!(logs.join("__remote_log_metadata-18").is_dir());
    let dir = logs.join("orders-0");
    for ext in ["log", "index", "timeindex", "snapshot", "txnindex"] {
        let _ = std::fs::remove_file(dir.join(format!("{:020}.{ext}", 0)));
    }
    let (code, checks, report) = tiered(&dir, &["--remote", tier.to_str().unwrap()]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(checks, ["tiered.metadata-elsewhere"], "{report}");
    let p = &report["partitions"][0];
    assert!(
        p["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("the log dir holds no __remote_log_metadata-0"),
        "{p}"
    );
    assert_eq!(p["orphans"].as_array().unwrap().len(), 0, "{p}");
    assert_eq!(p["segments"].as_array().unwrap().len(), 1, "{p}");
    // alpha-0's metadata is here: nothing to say of it.
    let (code, checks, report) =
        tiered(&logs.join("alpha-0"), &["--remote", tier.to_str().unwrap()]);
    assert_eq!((code, checks.len()), (0, 0), "{report}");
    let digest = |args: &[&str]| {
        let out = common::kseg(&[&["digest"], args].concat());
        assert!(out.status.success(), "{out:?}");
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (remote, notice) = digest(&["--remote", tier.to_str().unwrap(), dir.to_str().unwrap()]);
    let (local, _) = digest(&[untiered.to_str().unwrap()]);
    // The digest and what it covers, without the path.
    let body = |s: &str| {
        let words: Vec<&str> = s.split_whitespace().collect();
        [&words[..1], &words[2..]].concat().join(" ")
    };
    assert_eq!(body(&remote), body(&local), "{notice}");
    assert!(local.contains("247 record(s), offsets 0..=246"), "{local}");
    assert!(
        notice.contains("the log dir holds no __remote_log_metadata-0")
            && notice.contains("each read as served"),
        "{notice}"
    );
}

/// The partitions of one topic, tiered by `write --tier-to` into one tier (their offsets the
/// same): each has segment ids of its own, and the metadata of each is its own, as the
/// broker's cache keeps it per partition; where the ids were shared, the last partition's
/// records took the others' segments, which were then called orphans.
#[test]
fn partitions_of_one_topic_are_tiered_and_reconciled_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/SPEC.json"),
    )
    .unwrap();
    let (logs, tier) = (tmp.path().join("logs"), tmp.path().join("tier"));
    for partition in 0..4 {
        let spec = spec.replace("\"partition\": 0", &format!("\"partition\": {partition}"));
        let spec_file = tmp.path().join(format!("{partition}.json"));
        std::fs::write(&spec_file, spec).unwrap();
        let out = common::kseg(&[
            "write",
            spec_file.to_str().unwrap(),
            logs.join(format!("orders-{partition}")).to_str().unwrap(),
            "--tier-to",
            tier.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{out:?}");
    }
    let (code, checks, report) = tiered(&logs, &["--deep", "--remote", tier.to_str().unwrap()]);
    assert_eq!((code, checks.len()), (0, 0), "{report}");
    let partitions = report["partitions"].as_array().unwrap();
    assert_eq!(partitions.len(), 4, "{report}");
    let mut ids = std::collections::BTreeSet::new();
    for p in partitions {
        let segments = p["segments"].as_array().unwrap();
        assert_eq!(segments.len(), 1, "{p}");
        assert_eq!(segments[0]["state"], "COPY_SEGMENT_FINISHED", "{p}");
        assert_eq!(p["orphans"].as_array().unwrap().len(), 0, "{p}");
        ids.insert(segments[0]["segmentId"].as_str().unwrap().to_string());
    }
    assert_eq!(ids.len(), 4, "{report}");
}
