//! `gs://` through a real HTTP server speaking the XML API that object_store's GCS client uses
//! (moto's S3 server, which that API matches for listing, ranged and HEAD requests, PUT and
//! multipart uploads; `moto::start_gcs`). The client reaches it as a GCS emulator: no OAuth, its
//! URL from `--remote-endpoint` or from a service-account key in `GOOGLE_SERVICE_ACCOUNT_KEY`
//! (`gcs_base_url`, `disable_oauth`). Not tested here: OAuth tokens, and what only Google's
//! service does (its JSON API, generations, its own error bodies).

mod common;
#[path = "common/moto.rs"]
mod moto;

use std::io::Write;
use std::path::Path;
use std::process::Command;

use kseg::storage::store::{self, RemoteOptions};
use serde_json::Value;

const BUCKET: &str = "gtier";

/// `kseg ARGS` with no GOOGLE_* settings but `env`: exit status, stdout, stderr.
fn run(env: &[(&str, String)], args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kseg"));
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("GOOGLE_")) {
        cmd.env_remove(k);
    }
    common::outcome(cmd.envs(env.iter().map(|(k, v)| (k, v))).args(args))
}

/// The settings object_store reads to reach the server without --remote-endpoint.
fn key_env(endpoint: &str) -> Vec<(&'static str, String)> {
    let key = serde_json::json!({
        "private_key": "", "private_key_id": "", "client_email": "",
        "gcs_base_url": endpoint, "disable_oauth": true,
    });
    vec![
        ("GOOGLE_SERVICE_ACCOUNT_KEY", key.to_string()),
        ("GOOGLE_ALLOW_HTTP", "true".into()),
    ]
}

/// `kseg CMD --json ARGS [remote] DIR`, which must exit 0, as JSON.
fn json(cmd: &str, args: &[&str], dir: &Path, remote: &[&str]) -> Value {
    let d = dir.display().to_string();
    let mut all = vec![cmd, "--json"];
    all.extend(args);
    all.extend(remote);
    all.push(&d);
    let (code, out, err) = run(&[], &all);
    assert_eq!(code, 0, "{all:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{all:?}: {e}: {out}"))
}

/// `v` without the keys that name where bytes were read.
fn without_places(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for k in ["dir", "file", "remote", "logObject"] {
                    m.remove(k);
                }
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

/// Removes segment 0's files from `dir`: local retention after tiering.
fn remove_first_segment(dir: &Path) {
    for ext in ["log", "index", "timeindex", "txnindex"] {
        let _ = std::fs::remove_file(dir.join(format!("{:020}.{ext}", 0)));
    }
}

#[test]
fn a_tier_in_gcs_reads_as_the_untiered_partition_and_as_the_same_tier_in_a_directory() {
    let Some(gcs) = moto::start_gcs_or_skip() else {
        return;
    };
    moto::create_bucket(&gcs.endpoint, BUCKET);
    moto::allow_anonymous(&gcs.endpoint, BUCKET);
    let tmp = tempfile::tempdir().unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/SPEC.json");
    let spec = spec.to_str().unwrap();
    let base = tmp.path().join("base/orders-0");
    let dir = tmp.path().join("gs/orders-0");
    let filed = tmp.path().join("file/orders-0");
    let tier = tmp.path().join("tier");
    std::fs::create_dir_all(&tier).unwrap();
    let url = format!("gs://{BUCKET}/cluster1");
    let (b, d, f, t) = (
        base.to_str().unwrap(),
        dir.to_str().unwrap(),
        filed.to_str().unwrap(),
        tier.to_str().unwrap(),
    );
    assert_eq!(run(&[], &["write", spec, b]).0, 0);
    // Written through the service-account key's URL, read through --remote-endpoint.
    let (code, _, err) = run(
        &key_env(&gcs.endpoint),
        &["write", spec, d, "--tier-to", &url],
    );
    assert_eq!(code, 0, "write --tier-to {url}: {err}");
    let (code, _, err) = run(&[], &["write", spec, f, "--tier-to", t]);
    assert_eq!(code, 0, "write --tier-to {t}: {err}");
    remove_first_segment(&dir);
    remove_first_segment(&filed);
    let gs = ["--remote", &url, "--remote-endpoint", &gcs.endpoint];
    let local = ["--remote", t];

    let tiered = json("tiered", &["--deep"], &dir, &gs);
    let segments = tiered["partitions"][0]["segments"].as_array().unwrap();
    assert_eq!(segments.len(), 1, "{tiered}");
    assert!(
        segments[0]["logObject"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{url}/")),
        "{tiered}"
    );
    assert_eq!(
        without_places(tiered.clone()),
        without_places(json("tiered", &["--deep"], &filed, &local))
    );
    let records = |dir: &Path, remote: &[&str]| -> Vec<Value> {
        let dump = json(
            "dump",
            &["--deep-iteration", "--print-data-log"],
            dir,
            remote,
        );
        let items = without_places(dump["items"].clone());
        let items = items.as_array().unwrap().iter();
        items
            .filter(|i| i["type"] == "batch" || i["type"] == "record")
            .cloned()
            .collect()
    };
    let want = records(&base, &[]);
    assert_eq!(want.iter().filter(|i| i["type"] == "record").count(), 247);
    assert!(
        want == records(&dir, &gs),
        "dump's batches and records differ"
    );
    // The partitions' findings and segments (the files counted differ: the remote indexes).
    assert_eq!(
        without_places(json("verify", &["--deep", "-q"], &base, &[])["partitions"].take()),
        without_places(json("verify", &["--deep", "-q"], &dir, &gs)["partitions"].take())
    );
    let digest = json("digest", &[], &dir, &gs);
    assert_eq!(json("digest", &[], &base, &[])["sha256"], digest["sha256"]);
    assert_eq!(digest["recordCount"], 247, "{digest}");
    // The same through the key in the environment, without --remote-endpoint.
    let (code, out, err) = run(&key_env(&gcs.endpoint), &["digest", "--remote", &url, d]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(digest["sha256"].as_str().unwrap()),
        "{out} {err}"
    );

    // The segment's .log object deleted: an error naming it.
    let log = segments[0]["logObject"].as_str().unwrap();
    let key = log.strip_prefix(&format!("gs://{BUCKET}/")).unwrap();
    let deleted = Command::new("python3")
        .args([
            "-c",
            &format!(
                "import urllib.request as u; u.urlopen(u.Request('{}/{BUCKET}/{key}', method='DELETE'))",
                gcs.endpoint
            ),
        ])
        .status()
        .unwrap();
    assert!(deleted.success());
    // verify reports it as the tier's finding, and verifies the rest.
    let mut args = vec!["verify", "--deep"];
    args.extend(gs.iter().copied());
    args.push(d);
    let (code, out, err) = run(&[], &args);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(&format!("error[tiered.object-missing] {log}")),
        "{out}"
    );
    // Found missing in the listing: the other commands refuse, naming the object by its URL.
    let mut args = vec!["digest"];
    args.extend(gs);
    args.push(d);
    let (code, _, err) = run(&[], &args);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{log}: missing: the log of remote segment")),
        "{err}"
    );
    // A bucket that does not exist: an error naming it.
    let (code, _, err) = run(
        &[],
        &[
            "digest",
            "--remote",
            "gs://nobucket/cluster1",
            "--remote-endpoint",
            &gcs.endpoint,
            d,
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("gs://nobucket/cluster1"), "{err}");
}

/// An object larger than an upload part goes up as a multipart upload and reads back with
/// ranged GETs byte for byte; `export --out gs://` writes the file `export` writes locally.
#[test]
fn uploads_in_parts_and_export_to_gcs() {
    let Some(gcs) = moto::start_gcs_or_skip() else {
        return;
    };
    moto::create_bucket(&gcs.endpoint, BUCKET);
    moto::allow_anonymous(&gcs.endpoint, BUCKET);
    let options = RemoteOptions {
        endpoint: Some(gcs.endpoint.clone()),
        ..RemoteOptions::default()
    };
    let url = format!("gs://{BUCKET}/parts");
    let bytes: Vec<u8> = (0..(20u32 << 20) + 12345)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let out = store::output(std::path::Path::new(&url), &options).unwrap();
    let mut upload = out.upload("big.bin").unwrap();
    for piece in bytes.chunks(1 << 20) {
        upload.write_all(piece).unwrap();
    }
    assert_eq!(upload.finish().unwrap(), bytes.len() as u64);
    let back = store::open(&url, &options).unwrap();
    assert_eq!(back.len("big.bin").unwrap(), bytes.len() as u64);
    for range in [
        0..10,
        8 << 20..(8 << 20) + 100,
        (bytes.len() - 7)..bytes.len(),
    ] {
        assert_eq!(
            back.read_range("big.bin", range.start as u64..range.end as u64)
                .unwrap(),
            bytes[range]
        );
    }
    assert_eq!(back.read_all("big.bin").unwrap(), bytes);
    let err = back.len("nothere.bin").unwrap_err().to_string();
    assert!(
        err.contains(&format!("{url}/nothere.bin")) && err.contains("no such object"),
        "{err}"
    );

    // export: the same Parquet file in the bucket as on disk.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/SPEC.json");
    assert_eq!(
        run(
            &[],
            &["write", spec.to_str().unwrap(), dir.to_str().unwrap()]
        )
        .0,
        0
    );
    let file = tmp.path().join("orders.parquet");
    let d = dir.to_str().unwrap();
    let (code, _, err) = run(&[], &["export", "--out", file.to_str().unwrap(), d]);
    assert_eq!(code, 0, "{err}");
    let lake = format!("gs://{BUCKET}/lake/orders.parquet");
    let (code, _, err) = run(
        &[],
        &["export", "--out", &lake, "--out-endpoint", &gcs.endpoint, d],
    );
    assert_eq!(code, 0, "{err}");
    let from_bucket = store::open(&format!("gs://{BUCKET}/lake"), &options)
        .unwrap()
        .read_all("orders.parquet")
        .unwrap();
    assert_eq!(from_bucket, std::fs::read(&file).unwrap());
}
