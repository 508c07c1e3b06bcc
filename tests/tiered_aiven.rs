//! Aiven's layout end to end through the CLI: `kseg write --tier-to --remote-layout aiven` (chunk
//! size, zstd chunks, encryption with a public key) writes the objects and the
//! `__remote_log_metadata` records with the plugin's custom metadata, in the metadata partition
//! the broker's partitioner picks; `kseg tiered --deep --remote-key` reads them back (a wrong or
//! missing key is a clear error), and the independent Python reader decodes them to the local
//! segments' bytes. Planted inconsistencies in this layout are each found alone. Through moto's
//! S3 server too, with SigV4 signatures checked in moto's authenticating mode.

#[path = "common/aiven_py.rs"]
mod aiven_py;
mod common;
#[path = "common/moto.rs"]
mod moto;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

const TOPIC_ID: &str = "T1JBQ0xFAAAAAAAAAAAAAQ";
/// `__remote_log_metadata`'s partition for TOPIC_ID's partition 0 of 50, from a separate
/// Python model of `RemoteLogMetadataTopicPartitioner` (murmur2 of `Objects.hash(lsb, msb, 0)`).
const METADATA_PARTITION: i32 = 19;
const PREFIX: &str = "cluster-1/";
/// Closed segments below the last stable offset: the ones tiered.
const TIERED: usize = 4;

/// `orders-0` of four closed segments of 10 records (about 3.5 KiB each) and an active one.
fn write_spec(tmp: &Path) -> PathBuf {
    let mut ops = Vec::new();
    for _ in 0..4 {
        ops.push(json!({"op": "append", "batches": [
            {"gen": {"count": 5, "value_len": 300}}, {"gen": {"count": 5, "value_len": 300}}]}));
        ops.push(json!({"op": "roll"}));
    }
    ops.push(json!({"op": "append", "batches": [{"gen": {"count": 5, "value_len": 300}}]}));
    let spec = tmp.join("SPEC.json");
    std::fs::write(
        &spec,
        json!({"topic": "orders", "partition": 0, "ops": ops}).to_string(),
    )
    .unwrap();
    spec
}

fn run(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    common::outcome(
        Command::new(env!("CARGO_BIN_EXE_kseg"))
            .args(args)
            .envs(env.iter().copied())
            .env_remove("AWS_SESSION_TOKEN"),
    )
}

/// `kseg write SPEC logs/orders-0 --tier-to URL --remote-layout aiven EXTRA…`: the partition dir.
fn tier_to(tmp: &Path, url: &str, extra: &[&str], env: &[(&str, &str)]) -> PathBuf {
    let spec = write_spec(tmp);
    let dir = tmp.join("logs/orders-0");
    let mut args = vec![
        "write",
        spec.to_str().unwrap(),
        dir.to_str().unwrap(),
        "--tier-to",
        url,
        "--remote-layout",
        "aiven",
        "--key-prefix",
        PREFIX,
    ];
    args.extend(extra);
    let (code, out, err) = run(&args, env);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!("__remote_log_metadata-{METADATA_PARTITION}")),
        "{out}"
    );
    assert!(tmp
        .join(format!("logs/__remote_log_metadata-{METADATA_PARTITION}"))
        .is_dir());
    dir
}

/// `kseg tiered --json --deep ARGS DIR`: exit status, sorted check ids, the report.
fn tiered(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, Vec<String>, Value, String) {
    let mut all = vec!["tiered", "--json", "--deep"];
    all.extend(args);
    all.push(dir.to_str().unwrap());
    let (code, out, err) = run(&all, env);
    let report: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
    if !report.is_null() {
        common::assert_matches_schema("tiered", std::slice::from_ref(&report));
    }
    (code, common::finding_checks(&report), report, err)
}

fn url(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// The tier's segments as `kseg tiered` reports them: (id, start, end).
fn segments(report: &Value) -> Vec<(String, i64, i64)> {
    report["partitions"][0]["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["segmentId"].as_str().unwrap().to_string(),
                s["startOffset"].as_i64().unwrap(),
                s["endOffset"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn object(root: &Path, start: i64, id: &str, suffix: &str) -> PathBuf {
    root.join(format!(
        "{PREFIX}orders-{TOPIC_ID}/0/{start:020}-{id}.{suffix}"
    ))
}

/// The custom metadata of each segment's `COPY_SEGMENT_STARTED` record, decoded.
fn custom_metadata(log_dir: &Path) -> Vec<kseg::format::aiven::CustomMetadata> {
    use base64::Engine;
    let dir = log_dir.join(format!("__remote_log_metadata-{METADATA_PARTITION}"));
    let mut out = Vec::new();
    for r in kseg::storage::read::PartitionRecords::open(&dir, 0).unwrap() {
        let r = r.unwrap();
        let d = kseg::format::internal::decode_record(
            kseg::format::internal::Decoder::RemoteLogMetadata,
            r.offset,
            None,
            r.value.as_deref(),
        );
        let v = d.payload_json.unwrap();
        if v["type"] == "REMOTE_LOG_SEGMENT_METADATA_RECORD" {
            let b64 = v["data"]["customMetadata"].as_str().unwrap();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap();
            out.push(kseg::format::aiven::CustomMetadata::decode(&bytes).unwrap());
        }
    }
    out
}

#[test]
fn write_tier_to_aiven_read_back_with_keys_and_by_the_python_reader() {
    if !aiven_py::python_ready() {
        return;
    }
    let keys = tempfile::tempdir().unwrap();
    let (private, public) = aiven_py::key_pair(keys.path());
    let other = keys.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let (wrong, _) = aiven_py::key_pair(&other);
    let key_arg = format!("k1={}", private.display());
    let wrong_arg = format!("k1={}", wrong.display());
    let encrypt_arg = format!("k1={}", public.display());
    for extra in [
        vec![],
        vec!["--chunk-size", "1000", "--chunk-compression"],
        vec![
            "--chunk-size",
            "777",
            "--chunk-compression",
            "--encrypt-key",
            &encrypt_arg,
        ],
        vec!["--chunk-size", "4096", "--encrypt-key", &encrypt_arg],
    ] {
        let what = format!("{extra:?}");
        let encrypted = extra.contains(&"--encrypt-key");
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("tier");
        let dir = tier_to(tmp.path(), &url(&root), &extra, &[]);
        let keyed = ["--remote", &url(&root), "--remote-key", &key_arg];
        let (code, checks, report, err) = tiered(&dir, &keyed, &[]);
        assert_eq!((code, checks), (0, vec![]), "{what}: {err}");
        assert_eq!(report["layout"], "aiven", "{what}");
        let segs = segments(&report);
        assert_eq!(segs.len(), TIERED, "{what}");
        // The custom metadata names each segment's objects and their bytes, as the plugin's.
        let custom = custom_metadata(&tmp.path().join("logs"));
        assert_eq!(custom.len(), TIERED, "{what}");
        for ((id, start, _), c) in segs.iter().zip(&custom) {
            let size: u64 = ["log", "indexes", "rsm-manifest"]
                .iter()
                .map(|s| object(&root, *start, id, s).metadata().unwrap().len())
                .sum();
            assert_eq!(c.remote_size, Some(size as i64), "{what}");
            assert_eq!(c.object_prefix.as_deref(), Some(PREFIX), "{what}");
            assert_eq!(
                c.object_key,
                Some(format!("orders-{TOPIC_ID}/0/{start:020}-{id}")),
                "{what}"
            );
        }
        // The independent reader gives back the local segments' bytes.
        let decoded = tmp.path().join("decoded");
        let mut args = vec!["decode", root.to_str().unwrap(), decoded.to_str().unwrap()];
        if encrypted {
            args.extend(["--key", &key_arg]);
        }
        aiven_py::reader(&args);
        for (id, start, _) in &segs {
            let stem = decoded.join(format!("{PREFIX}orders-{TOPIC_ID}/0/{start:020}-{id}"));
            for (ours, theirs) in [
                ("log", "log"),
                ("index", "offset"),
                ("timeindex", "timestamp"),
            ] {
                let local = std::fs::read(dir.join(format!("{start:020}.{ours}"))).unwrap();
                let remote = std::fs::read(stem.with_extension(theirs)).unwrap();
                assert!(local == remote, "{what}: {start} .{ours} differs");
            }
        }
        if !encrypted {
            continue;
        }
        // No key, a wrong key: errors naming the manifest and the key id.
        let (code, _, _, err) = tiered(&dir, &["--remote", &url(&root)], &[]);
        assert_eq!(code, 2, "{what}");
        assert!(
            err.contains(".rsm-manifest") && err.contains("no private key") && err.contains("k1"),
            "{err}"
        );
        let wrong = ["--remote", &url(&root), "--remote-key", &wrong_arg];
        let (code, _, _, err) = tiered(&dir, &wrong, &[]);
        assert_eq!(code, 2, "{what}");
        assert!(err.contains("none of the 1 private key(s)"), "{err}");
        // A damaged .indexes object: the index it holds is a finding naming it.
        let (id, start, _) = &segs[1];
        let indexes = object(&root, *start, id, "indexes");
        let mut bytes = std::fs::read(&indexes).unwrap();
        bytes[20] ^= 1;
        std::fs::write(&indexes, bytes).unwrap();
        let (code, checks, report, err) = tiered(&dir, &keyed, &[]);
        assert_eq!(
            (code, checks),
            (1, vec!["tiered.index".to_string()]),
            "{err}"
        );
        let f = &report["partitions"][0]["findings"][0];
        assert!(f["file"].as_str().unwrap().ends_with(".indexes"), "{f}");
    }
}

/// `__remote_log_metadata-0` written anew for `segments` ((id, start, end, state)), each of
/// the size the metadata written with the tier gave the segment of its start offset (copies
/// under other ids are of the same segment).
fn rewrite_metadata(log_dir: &Path, segments: &[(String, i64, i64, u8)]) {
    let sizes: std::collections::BTreeMap<i64, i64> = kseg::ops::remote::metadata::read(log_dir)
        .unwrap()
        .segments
        .values()
        .map(|m| (m.start_offset, m.size_bytes))
        .collect();
    std::fs::remove_dir_all(log_dir.join(format!("__remote_log_metadata-{METADATA_PARTITION}")))
        .unwrap();
    let tip = json!({"name": "orders", "id": TOPIC_ID, "partition": 0});
    let mut records = Vec::new();
    for (id, start, end, state) in segments {
        let rid = json!({"topicIdPartition": tip, "id": id});
        records.push(
            json!({"remote": {"type": "REMOTE_LOG_SEGMENT_METADATA_RECORD",
            "version": 0, "data": {"remoteLogSegmentId": rid, "startOffset": start,
            "endOffset": end, "brokerId": 0, "maxTimestampMs": 0, "eventTimestampMs": 0,
            "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": start}],
            "segmentSizeInBytes": sizes[start], "remoteLogSegmentState": 0}}}),
        );
        for s in 1..=*state {
            records.push(
                json!({"remote": {"type": "REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD",
                "version": 0, "data": {"remoteLogSegmentId": rid, "brokerId": 0,
                "eventTimestampMs": 0, "remoteLogSegmentState": s}}}),
            );
        }
    }
    let spec = json!({"topic": "__remote_log_metadata", "partition": 0,
        "ops": [{"op": "append", "batches": [{"records": records}]}]});
    common::kseg_write(&spec.to_string(), &log_dir.join("__remote_log_metadata-0"));
}

/// A segment's three objects copied under another segment id.
fn copy_segment(root: &Path, start: i64, from: &str, to: &str) {
    for s in ["log", "indexes", "rsm-manifest"] {
        std::fs::copy(object(root, start, from, s), object(root, start, to, s)).unwrap();
    }
}

#[test]
fn planted_inconsistencies_in_the_aiven_layout_are_each_found_alone() {
    type Segs = Vec<(String, i64, i64, u8)>;
    type Plant = fn(&Path, &mut Segs);
    let plants: [(&str, Plant, &[&str], i32); 7] = [
        ("none", |_, _| {}, &[], 0),
        (
            "orphan",
            |root, s| copy_segment(root, s[0].1, &s[0].0, "AAAAAAAAAAAAAAAAAAAAYw"),
            &["tiered.orphan"],
            0,
        ),
        (
            "missing object",
            |root, s| std::fs::remove_file(object(root, s[1].1, &s[1].0, "indexes")).unwrap(),
            &["tiered.object-missing"],
            1,
        ),
        (
            // Its log cannot be read: the object's finding, the other segments walked.
            "missing manifest",
            |root, s| std::fs::remove_file(object(root, s[1].1, &s[1].0, "rsm-manifest")).unwrap(),
            &["tiered.object-missing"],
            1,
        ),
        (
            "unfinished copy",
            // The last: its offsets are still local, so no gap.
            |_, s| s[TIERED - 1].3 = 0,
            &["tiered.copy-unfinished"],
            0,
        ),
        (
            "gap",
            |root, s| {
                let (id, start, _, _) = s.remove(1);
                for suffix in ["log", "indexes", "rsm-manifest"] {
                    std::fs::remove_file(object(root, start, &id, suffix)).unwrap();
                }
            },
            &["tiered.gap"],
            1,
        ),
        (
            "overlap",
            |root, s| {
                let (id, start, end, _) = s[1].clone();
                copy_segment(root, start, &id, "AAAAAAAAAAAAAAAAAAAAYw");
                s.push(("AAAAAAAAAAAAAAAAAAAAYw".into(), start, end, 1));
            },
            &["tiered.overlap"],
            0,
        ),
    ];
    for (what, plant, expected, code) in plants {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("tier");
        let dir = tier_to(tmp.path(), &url(&root), &["--chunk-size", "1000"], &[]);
        let (_, _, report, _) = tiered(&dir, &["--remote", &url(&root)], &[]);
        let mut segs: Segs = segments(&report)
            .into_iter()
            .map(|(id, start, end)| (id, start, end, 1))
            .collect();
        plant(&root, &mut segs);
        rewrite_metadata(&tmp.path().join("logs"), &segs);
        let (got, checks, _, err) = tiered(&dir, &["--remote", &url(&root)], &[]);
        assert_eq!(checks, expected, "{what}: {err}");
        assert_eq!(got, code, "{what}");
    }
}

/// Python with boto3 (moto's own dependency) against moto: `code`'s output.
fn boto(endpoint: &str, code: &str) -> String {
    let script = format!(
        "import boto3\nkw = dict(endpoint_url='{endpoint}', region_name='us-east-1', \
         aws_access_key_id='testing', aws_secret_access_key='testing')\n{code}"
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn s3_aiven_tier_written_and_read_with_sigv4_checked() {
    // moto authenticates every request after the first three (a user, its policy, its key).
    let Some(moto) = moto::start_or_skip(&[("INITIAL_NO_AUTH_ACTION_COUNT", "3")]) else {
        return;
    };
    let endpoint = moto.endpoint.clone();
    let created = boto(
        &endpoint,
        "import json\niam = boto3.client('iam', **kw)\niam.create_user(UserName='kseg')\n\
         iam.put_user_policy(UserName='kseg', PolicyName='all', PolicyDocument=json.dumps(\
         {'Version': '2012-10-17', 'Statement': [{'Effect': 'Allow', 'Action': '*', \
         'Resource': '*'}]}))\n\
         k = iam.create_access_key(UserName='kseg')['AccessKey']\n\
         kw.update(aws_access_key_id=k['AccessKeyId'], aws_secret_access_key=k['SecretAccessKey'])\n\
         boto3.client('s3', **kw).create_bucket(Bucket='tier')\n\
         print(k['AccessKeyId'], k['SecretAccessKey'])",
    );
    let (key_id, secret) = created.trim().split_once(' ').unwrap();
    let env = [
        ("AWS_ACCESS_KEY_ID", key_id),
        ("AWS_SECRET_ACCESS_KEY", secret),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT", endpoint.as_str()),
        ("AWS_ALLOW_HTTP", "true"),
    ];
    let keys = tempfile::tempdir().unwrap();
    let (private, public) = aiven_py::key_pair(keys.path());
    let tmp = tempfile::tempdir().unwrap();
    let encrypt = format!("k1={}", public.display());
    // The bucket's root: moto's authenticating mode miscomputes the signature of a listing
    // whose prefix holds a `/` (boto3's fails the same way), so the keys' prefix is the
    // plugin's key prefix alone.
    let dir = tier_to(
        tmp.path(),
        "s3://tier",
        &[
            "--chunk-size",
            "1000",
            "--chunk-compression",
            "--encrypt-key",
            &encrypt,
        ],
        &env,
    );
    let key_arg = format!("k1={}", private.display());
    let args = [
        "--remote",
        "s3://tier",
        "--remote-endpoint",
        &endpoint,
        "--remote-key",
        &key_arg,
    ];
    let (code, checks, report, err) = tiered(&dir, &args, &env);
    assert_eq!((code, checks), (0, vec![]), "{err}");
    assert_eq!(segments(&report).len(), TIERED);
    // A wrong secret: moto refuses the signature; a clear error naming the store and the 403.
    let bad = [
        ("AWS_ACCESS_KEY_ID", key_id),
        ("AWS_SECRET_ACCESS_KEY", "not-the-secret"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT", endpoint.as_str()),
        ("AWS_ALLOW_HTTP", "true"),
    ];
    let (code, _, _, err) = tiered(&dir, &args, &bad);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("s3://tier") && err.contains("403") && err.contains("SignatureDoesNotMatch"),
        "{err}"
    );
}

/// Damage inside a segment's objects (a chunk whose GCM tag fails, a chunk that is no zstd
/// frame, a manifest that is no JSON, a chunk index that does not fit the `.log`) is damage of
/// that segment, where the broker's fetches from it fail: `tiered --deep` reports it once, on
/// that segment alone, and reads the others; `verify --deep --remote` reports it as damage at
/// the segment's byte it starts at (exit 1), not as an input it cannot read (exit 2).
#[test]
fn damage_inside_aiven_objects_is_a_finding_of_its_segment_alone() {
    if !aiven_py::python_ready() {
        return;
    }
    let keys = tempfile::tempdir().unwrap();
    let (private, public) = aiven_py::key_pair(keys.path());
    let key_arg = format!("k1={}", private.display());
    let encrypt_arg = format!("k1={}", public.display());
    type Damage = fn(&Path, &str, i64);
    // (what, options, damage to the second segment, the byte of that segment reading fails at)
    let cases: [(&str, &[&str], Damage, u64); 5] = [
        (
            "a chunk's GCM tag",
            &["--chunk-size", "1000", "--encrypt-key", "ENCRYPT"],
            // The third chunk (segment bytes 2000..3000) of 1028 bytes each.
            |root, id, start| {
                let p = object(root, start, id, "log");
                let mut b = std::fs::read(&p).unwrap();
                b[2 * 1028 + 500] ^= 0x40;
                std::fs::write(p, b).unwrap();
            },
            2000,
        ),
        (
            "a zstd frame",
            &["--chunk-size", "1000", "--chunk-compression"],
            // The first chunk's frame magic.
            |root, id, start| {
                let p = object(root, start, id, "log");
                let mut b = std::fs::read(&p).unwrap();
                b[0] ^= 0x40;
                std::fs::write(p, b).unwrap();
            },
            0,
        ),
        (
            "a manifest",
            &[],
            |root, id, start| std::fs::write(object(root, start, id, "rsm-manifest"), "{").unwrap(),
            0,
        ),
        (
            "an empty .log (an upload that left nothing)",
            &["--chunk-size", "1000"],
            |root, id, start| std::fs::write(object(root, start, id, "log"), "").unwrap(),
            0,
        ),
        (
            "a chunk index",
            &["--chunk-size", "1000"],
            |root, id, start| {
                let p = object(root, start, id, "log");
                let b = std::fs::read(&p).unwrap();
                std::fs::write(p, &b[..b.len() - 1]).unwrap();
            },
            0,
        ),
    ];
    for (what, options, damage, failing_at) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("tier");
        let options: Vec<&str> = options
            .iter()
            .map(|o| if *o == "ENCRYPT" { &encrypt_arg[..] } else { o })
            .collect();
        let dir = tier_to(tmp.path(), &url(&root), &options, &[]);
        let keyed = ["--remote", &url(&root), "--remote-key", &key_arg];
        let (_, _, report, _) = tiered(&dir, &keyed, &[]);
        let segs = segments(&report);
        let (id, start, _) = &segs[1];
        damage(&root, id, *start);

        let (code, checks, report, err) = tiered(&dir, &keyed, &[]);
        assert_eq!(
            (code, checks),
            (1, vec!["tiered.log-damaged".to_string()]),
            "{what}: {err}"
        );
        let finding = &report["partitions"][0]["findings"][0];
        let file = finding["file"].as_str().unwrap();
        assert!(file.contains(id.as_str()), "{what}: {finding}");
        // All segments were still walked: the ones after the damaged one too.
        assert_eq!(segments(&report).len(), TIERED, "{what}");

        // Local copies gone, as retention deletes them: the remote tier is read for them.
        for log in common::logs(&dir).iter().take(TIERED) {
            for ext in ["log", "index", "timeindex", "snapshot"] {
                let _ = std::fs::remove_file(log.with_extension(ext));
            }
        }
        let (code, out, err) = run(
            &[
                &["verify", "--deep", "--json", "-q"][..],
                &keyed,
                &[dir.to_str().unwrap()],
            ]
            .concat(),
            &[],
        );
        assert_eq!(code, 1, "{what}: {out}{err}");
        let report: Value = serde_json::from_str(&out).unwrap();
        let findings: Vec<&Value> = report["partitions"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(findings.len(), 1, "{what}: {out}");
        assert_eq!(findings[0]["check"], "log.bad-entry", "{what}: {out}");
        assert!(
            findings[0]["file"].as_str().unwrap().contains(id.as_str()),
            "{what}: {out}"
        );
        let message = findings[0]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("(at byte {failing_at})")),
            "{what}: {message}"
        );
        // Where nothing can be decoded, no span is made up from an object's size.
        let whole = !what.contains("chunk's") && !what.contains("frame");
        assert_eq!(
            message.contains("none of the segment can be decoded"),
            whole,
            "{what}: {message}"
        );
        // Past the first chunk's damaged frame reading resumes at the next valid batch, as a
        // fetch from there is served; no batch starts after the third chunk (the GCM case),
        // nor in a segment that cannot be decoded at all.
        let resumes = what.contains("frame");
        assert_eq!(
            message.contains("to the next valid batch at position"),
            resumes,
            "{what}: {message}"
        );
        assert_eq!(
            message.contains("no valid batch in the remaining"),
            !resumes,
            "{what}: {message}"
        );
    }
}

/// `testdata/orders` written with its closed segment tiered in Aiven's layout into a `file://`
/// tier, with `options`: the partition directory, the tier's URL and the tier's directory.
fn orders_in_aiven_tier(tmp: &Path, options: &[&str]) -> (PathBuf, String, PathBuf) {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/SPEC.json");
    let dir = tmp.join("logs/orders-0");
    let root = tmp.join("tier");
    let r = url(&root);
    let write = [
        "write",
        spec.to_str().unwrap(),
        dir.to_str().unwrap(),
        "--tier-to",
        &r,
        "--remote-layout",
        "aiven",
    ];
    let (code, out, err) = run(&[&write[..], options].concat(), &[]);
    assert_eq!(code, 0, "{out}{err}");
    (dir, r, root)
}

/// `verify --json --remote R D`, which must exit 1: its report, stdout and stderr.
fn verify_remote_fails(r: &str, d: &str) -> (Value, String, String) {
    let (code, out, err) = run(&["verify", "--json", "-q", "--remote", r, d], &[]);
    assert_eq!(code, 1, "{out}{err}");
    (serde_json::from_str(&out).unwrap(), out, err)
}

/// The tier's (first) object of the kind `ext` names under `root`.
fn first_object(root: &Path, ext: &str) -> PathBuf {
    common::files_under(root)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == ext))
        .unwrap()
}

/// Two damaged chunks far apart in one segment (their zstd frames' magic): `tiered --deep` and
/// `verify --deep` each report both, reading on between and after them as a fetch from there is
/// served, and the offset index's entries into the damage are not judged.
#[test]
fn each_damaged_stretch_of_a_segment_is_a_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let options = ["--chunk-size", "1000", "--chunk-compression"];
    let (dir, r, root) = orders_in_aiven_tier(tmp.path(), &options);
    let d = dir.to_str().unwrap();
    let log = first_object(&root, "log");
    let mut bytes = std::fs::read(&log).unwrap();
    // Each chunk a zstd frame, in order: the third and the eleventh (segment bytes 2000..3000
    // and 10000..11000).
    let frames: Vec<usize> = bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == [0x28, 0xb5, 0x2f, 0xfd])
        .map(|(i, _)| i)
        .collect();
    assert!(frames.len() > 11, "{frames:?}");
    for chunk in [2, 10] {
        bytes[frames[chunk]] ^= 0xff;
    }
    std::fs::write(&log, bytes).unwrap();
    let remote = ["--remote", &r];
    let (code, checks, report, err) = tiered(&dir, &remote, &[]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        checks,
        ["tiered.log-damaged", "tiered.log-damaged"],
        "{report}"
    );
    let found = report["partitions"][0]["findings"]
        .as_array()
        .unwrap()
        .clone();
    let at = |f: &Value| f["position"].as_u64().unwrap();
    assert!(
        at(&found[0]) < 2000 && (2000..10000).contains(&at(&found[1])),
        "{report}"
    );
    for (f, chunk) in found.iter().zip([2, 10]) {
        let message = f["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("chunk {chunk}: zstd")),
            "{message}"
        );
    }
    // The local copy gone, as retention deletes it: the remote tier is read for it.
    for ext in ["log", "index", "timeindex", "snapshot"] {
        let _ = std::fs::remove_file(dir.join(format!("{:020}.{ext}", 0)));
    }
    let args = [&["verify", "--deep", "--json", "-q"][..], &remote, &[d]];
    let (code, out, err) = run(&args.concat(), &[]);
    assert_eq!(code, 1, "{out}{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let found = report["partitions"][0]["findings"].as_array().unwrap();
    assert_eq!(found.len(), 2, "{out}");
    for f in found {
        assert_eq!(f["check"], "log.bad-entry", "{out}");
        let message = f["message"].as_str().unwrap();
        assert!(
            message.contains("to the next valid batch at position"),
            "{message}"
        );
    }
    assert!(at(&found[0]) < at(&found[1]), "{out}");
}

/// A manifest that cuts its segment into a chunk per byte, every one of them damaged: each
/// chunk costs its walk a search, not a scan of all the damage found before it (which took
/// the walk quadratic time, minutes at this size), and a manifest whose chunks hold bytes in
/// no stored byte is refused, whatever count of them it claims.
#[test]
fn a_chunk_per_byte_all_damaged_is_walked_past_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, r, root) = orders_in_aiven_tier(tmp.path(), &["--chunk-compression"]);
    let d = dir.to_str().unwrap();
    let (log, manifest) = (
        first_object(&root, "log"),
        first_object(&root, "rsm-manifest"),
    );
    let mut m: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    let size: u32 = 400_000;
    let chunks = kseg::format::aiven::chunk_index::encode_sizes(&vec![1; size as usize]);
    m["chunkIndex"] = json!({"type": "variable", "originalChunkSize": 1,
        "originalFileSize": size, "transformedChunks": chunks});
    std::fs::write(&manifest, m.to_string()).unwrap();
    std::fs::write(&log, vec![0u8; size as usize]).unwrap();
    let tiered = ["tiered", "--deep", "--json", "--remote", &r, d];
    let (code, out, err) = common::kseg_within_a_minute(&tiered);
    assert_eq!(code, 1, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    // The manifest's size is not the one the metadata gives the segment copied, either.
    assert_eq!(
        common::finding_checks(&report),
        ["tiered.log-damaged", "tiered.size-mismatch"],
        "{out}"
    );
    let found = report["partitions"][0]["findings"].as_array().unwrap();
    let found: Vec<&Value> = found
        .iter()
        .filter(|f| f["check"] == "tiered.log-damaged")
        .collect();
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains("the segment's bytes 0..") && message.contains("cannot be decoded"),
        "{message}"
    );
    // Chunks of no stored bytes: two billion of them over a 1030-byte object.
    m["chunkIndex"] = json!({"type": "fixed", "originalChunkSize": 1,
        "originalFileSize": i32::MAX, "transformedChunkSize": 0, "finalTransformedChunkSize": 1030});
    std::fs::write(&manifest, m.to_string()).unwrap();
    std::fs::write(&log, vec![0u8; 1030]).unwrap();
    let (code, out, err) = common::kseg_within_a_minute(&tiered);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("holds original bytes in no stored byte"),
        "{out}"
    );
    // A manifest longer than any is refused before it is read (sparse: 65 MiB of nothing).
    std::fs::OpenOptions::new()
        .write(true)
        .open(&manifest)
        .unwrap()
        .set_len(65 << 20)
        .unwrap();
    let (code, out, err) = common::kseg_within_a_minute(&tiered);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("68157440 bytes is no manifest (at most 67108864): not read"),
        "{out}"
    );
}

/// A segment cut at a batch boundary, its manifest made to fit (every chunk and index whole,
/// every offset within the metadata's): only its size, which the manifest holds, tells that
/// the last batches are gone. `verify --remote` reads the manifest to show the log, and reports
/// it without `--deep`, as it does for Kafka's layout, whose size the listing gives.
#[test]
fn a_cut_segment_whose_manifest_fits_is_a_size_mismatch_in_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, r, root) = orders_in_aiven_tier(tmp.path(), &["--chunk-size", "1000"]);
    let d = dir.to_str().unwrap();
    let local = dir.join("00000000000000000000.log");
    let (last, _) = *common::batches(&local).last().unwrap();
    // Tiered and gone locally, as retention leaves it.
    for ext in ["log", "index", "timeindex"] {
        std::fs::remove_file(dir.join(format!("00000000000000000000.{ext}"))).unwrap();
    }
    let (code, out, err) = run(&["verify", "--remote", &r, d], &[]);
    assert_eq!(code, 0, "{out}{err}");
    let (log, manifest) = (
        first_object(&root, "log"),
        first_object(&root, "rsm-manifest"),
    );
    let bytes = std::fs::read(&log).unwrap();
    std::fs::write(&log, &bytes[..last as usize]).unwrap();
    let mut m: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    let last_chunk = (last - 1) % 1000 + 1;
    m["chunkIndex"]["originalFileSize"] = json!(last);
    m["chunkIndex"]["finalTransformedChunkSize"] = json!(last_chunk);
    std::fs::write(&manifest, m.to_string()).unwrap();
    let (report, out, _) = verify_remote_fails(&r, d);
    assert_eq!(
        common::finding_checks(&report),
        ["tiered.size-mismatch"],
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "holds {last} bytes but __remote_log_metadata says"
        )),
        "{out}"
    );
    // `tiered` without --deep reads listings and metadata alone: it cannot tell.
    let (code, out, err) = run(&["tiered", "--remote", &r, d], &[]);
    assert_eq!(code, 0, "{out}{err}");
}

/// A served segment's manifest gone, the only one of the tier: the layout is still told from
/// the other keys' form; `verify --remote` reports the object missing and verifies the rest,
/// the other commands refuse to read a log without those offsets, naming the manifest.
#[test]
fn a_served_segment_without_its_manifest_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, r, root) = orders_in_aiven_tier(tmp.path(), &[]);
    let d = dir.to_str().unwrap();
    for ext in ["log", "index", "timeindex"] {
        std::fs::remove_file(dir.join(format!("00000000000000000000.{ext}"))).unwrap();
    }
    let manifest = first_object(&root, "rsm-manifest");
    std::fs::remove_file(&manifest).unwrap();
    let named = url(&manifest);
    let (report, out, err) = verify_remote_fails(&r, d);
    assert_eq!(
        common::finding_checks(&report),
        ["tiered.object-missing"],
        "{out}"
    );
    assert!(out.contains(&named), "{out}");
    assert_eq!(report["partitions"][0]["logEndOffset"], 247, "{out}");
    assert!(!err.contains("the local log alone"), "{err}");
    let (code, _, err) = run(&["dump", "--remote", &r, d], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{named}: missing: the log of remote segment"))
            && err.contains("(offsets 0..174, which __remote_log_metadata says was copied)"),
        "{err}"
    );
}
