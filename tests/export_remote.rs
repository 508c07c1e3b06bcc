//! `kseg export --out URL`: the tables written to real object stores started here on
//! 127.0.0.1, moto (S3) and Azurite (Azure Blob), read back by pyarrow's own S3 and Azure
//! clients: each object holds the bytes of the same export to a local directory (so the row
//! counts and sums of offsets, checked here too, are the local export's), a file over 8 MiB
//! is a multipart upload of 8 MiB parts, and a failed upload is an error naming the object
//! that leaves nothing under its key and no upload behind. Local outputs (`file://` included)
//! appear only under their final name.

#[path = "common/azurite.rs"]
mod azurite;
mod common;
#[path = "common/moto.rs"]
mod moto;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

/// Reads files through a pyarrow filesystem (argv: its kind and arguments as JSON, then the
/// paths) and prints, per file, its row count, the sum of its offsets and its SHA-256.
const READER: &str = r#"
import hashlib, json, os, sys
import pyarrow as pa, pyarrow.compute as pc, pyarrow.fs as pf, pyarrow.parquet as pq
spec = json.loads(sys.argv[1])
kind = spec.pop("kind")
fs = {"s3": pf.S3FileSystem, "azure": pf.AzureFileSystem, "local": pf.LocalFileSystem}[kind](**spec)
out = []
for p in sys.argv[2:]:
    with fs.open_input_file(p) as f:
        data = f.read()
    t = pq.read_table(pa.BufferReader(data))
    out.append([t.num_rows, pc.sum(t["offset"]).as_py() or 0, hashlib.sha256(data).hexdigest()])
print(json.dumps(out), flush=True)
# pyarrow's S3 client may abort the interpreter in its teardown at exit: none is needed.
os._exit(0)
"#;

/// Records of the large partition: 26 MiB of values, a Parquet file of four 8 MiB parts.
const BIG_RECORDS: i64 = 26 * 16;

/// A log dir of two partitions: the bundled `orders-0` (247 records) and `big-0`, whose
/// 64 KiB values make a Parquet file of several upload parts.
fn log_dir(tmp: &Path) -> PathBuf {
    let logs = tmp.join("logs");
    common::copy_dir(
        Path::new("testdata/orders/orders-0"),
        &logs.join("orders-0"),
    );
    let spec = json!({"topic": "big", "partition": 0, "ops": [{"op": "repeat", "times": 26,
        "ops": [{"op": "append", "batches": [{"compression": "none",
            "gen": {"count": 16, "key_len": 8, "value_len": 65536, "seed": 3}}]}]}]});
    common::kseg_write(&spec.to_string(), &logs.join("big-0"));
    logs
}

/// `kseg export --json --compression none --row-group-bytes 4 MiB ARGS` with `env`: its
/// exit status, report and stderr.
fn export(env: &[(&str, &str)], args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .env_remove("AWS_ENDPOINT")
        .env_remove("AWS_SESSION_TOKEN")
        .envs(env.iter().copied())
        .args([
            "export",
            "--json",
            "--compression",
            "none",
            "--row-group-bytes",
            "4194304",
        ])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    (
        out.status.code().unwrap(),
        serde_json::from_str(&stdout).unwrap_or(Value::Null),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The report's files, sorted by name, with their sizes.
fn files(report: &Value) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["size"].as_u64().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Rows, offset sum and SHA-256 of each file, read through the pyarrow filesystem `fs`.
fn read_back(fs: &Value, paths: &[String]) -> Vec<Value> {
    let mut args = vec!["-c", READER];
    let fs = fs.to_string();
    args.push(&fs);
    args.extend(paths.iter().map(String::as_str));
    serde_json::from_str::<Value>(&common::python(&args))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The local export of `logs` to `DIR/local`: its files' names under the tree and what
/// pyarrow reads in them, which every remote export must equal.
fn local_export(tmp: &Path, logs: &Path) -> (Vec<String>, Vec<Value>) {
    let out = tmp.join("local");
    let (code, report, err) = export(
        &[],
        &["--out", out.to_str().unwrap(), logs.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    let paths: Vec<String> = files(&report).into_iter().map(|(f, _)| f).collect();
    let read = read_back(&json!({"kind": "local"}), &paths);
    // The rows are the partitions' records: orders' 247 and the large partition's.
    let counts: Vec<(i64, i64)> = read
        .iter()
        .map(|r| (r[0].as_i64().unwrap(), r[1].as_i64().unwrap()))
        .collect();
    let n = BIG_RECORDS;
    assert_eq!(counts, [(n, n * (n - 1) / 2), (247, 247 * 246 / 2)]);
    let prefix = format!("{}/", out.display());
    let names = paths
        .iter()
        .map(|p| p.strip_prefix(&prefix).unwrap().to_string())
        .collect();
    (names, read)
}

/// moto's answer about the object `key` of bucket `lake` (its ETag, or None when there is no
/// such object) and the multipart uploads in progress there, asked by boto3 (installed with
/// moto).
fn moto_state(endpoint: &str, key: &str) -> (Option<String>, Vec<Value>) {
    let script = format!(
        "import boto3, json\n\
         s3 = boto3.client('s3', endpoint_url='{endpoint}', region_name='us-east-1', \
         aws_access_key_id='testing', aws_secret_access_key='testing')\n\
         try:\n    etag = s3.head_object(Bucket='lake', Key='{key}')['ETag'].strip('\"')\n\
         except s3.exceptions.ClientError as e:\n    \
         assert e.response['Error']['Code'] == '404', e\n    etag = None\n\
         uploads = s3.list_multipart_uploads(Bucket='lake').get('Uploads', [])\n\
         print(json.dumps([etag, [u['Key'] for u in uploads]]))"
    );
    let v: Value = serde_json::from_str(&common::python(&["-c", &script])).unwrap();
    (
        v[0].as_str().map(str::to_string),
        v[1].as_array().unwrap().clone(),
    )
}

const S3_ENV: [(&str, &str); 3] = [
    ("AWS_ACCESS_KEY_ID", "testing"),
    ("AWS_SECRET_ACCESS_KEY", "testing"),
    ("AWS_REGION", "us-east-1"),
];

#[test]
fn an_export_to_s3_is_the_local_export_in_multipart_objects() {
    if !common::python_modules(&["pyarrow.fs"]) {
        return;
    }
    let Some(moto) = moto::start_or_skip(&[]) else {
        return;
    };
    moto::create_bucket(&moto.endpoint, "lake");
    let tmp = tempfile::tempdir().unwrap();
    let logs = log_dir(tmp.path());
    let (names, local) = local_export(tmp.path(), &logs);
    let (code, report, err) = export(
        &S3_ENV,
        &[
            "--out",
            "s3://lake/kafka/",
            "--out-endpoint",
            &moto.endpoint,
            logs.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    common::assert_matches_schema("export", std::slice::from_ref(&report));
    let written = files(&report);
    let urls: Vec<String> = names
        .iter()
        .map(|n| format!("s3://lake/kafka/{n}"))
        .collect();
    assert_eq!(
        written.iter().map(|(f, _)| f).collect::<Vec<_>>(),
        urls.iter().collect::<Vec<_>>()
    );
    let host = moto.endpoint.strip_prefix("http://").unwrap();
    let fs = json!({"kind": "s3", "endpoint_override": host, "scheme": "http",
        "access_key": "testing", "secret_key": "testing", "region": "us-east-1"});
    let keys: Vec<String> = names.iter().map(|n| format!("lake/kafka/{n}")).collect();
    assert_eq!(read_back(&fs, &keys), local);
    // The large file went up in 8 MiB parts (a multipart ETag ends in `-PARTS`), the small one
    // in one PUT.
    for (name, (_, size)) in names.iter().zip(&written) {
        let (etag, uploads) = moto_state(&moto.endpoint, &format!("kafka/{name}"));
        let etag = etag.expect("the object exists");
        assert!(uploads.is_empty(), "{uploads:?}");
        let parts = size.div_ceil(8 << 20);
        if parts > 1 {
            assert!(
                etag.ends_with(&format!("-{parts}")),
                "{name}: {etag}, {size} bytes"
            );
        } else {
            assert!(!etag.contains('-'), "{name}: {etag}");
        }
    }
    assert!(written[0].1 > 3 * (8 << 20), "{written:?}");
    // One file: its object, named by the URL.
    let (code, report, err) = export(
        &S3_ENV,
        &[
            "--out",
            "s3://lake/one/orders.parquet",
            "--out-endpoint",
            &moto.endpoint,
            logs.join("orders-0").to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(report["files"][0]["file"], "s3://lake/one/orders.parquet");
    let one = read_back(&fs, &["lake/one/orders.parquet".to_string()]);
    assert_eq!(
        one[0].as_array().unwrap()[..2],
        local[1].as_array().unwrap()[..2]
    );
}

#[test]
fn a_failed_s3_upload_names_the_object_and_leaves_nothing() {
    // moto refuses to complete an upload of parts under 16 MiB (as S3 does under 5 MiB): the
    // failure comes after every part was sent, and kseg must abort the upload.
    let Some(moto) = moto::start_or_skip(&[("S3_UPLOAD_PART_MIN_SIZE", "16777216")]) else {
        return;
    };
    moto::create_bucket(&moto.endpoint, "lake");
    let tmp = tempfile::tempdir().unwrap();
    let logs = log_dir(tmp.path());
    let big = logs.join("big-0");
    let run = |out: &str| {
        export(
            &S3_ENV,
            &[
                "--out",
                out,
                "--out-endpoint",
                &moto.endpoint,
                big.to_str().unwrap(),
            ],
        )
    };
    let (code, _, err) = run("s3://lake/t");
    let object = "s3://lake/t/topic=big/partition=0/part-00000.parquet";
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(object) && err.contains("EntityTooSmall"),
        "{err}"
    );
    let (etag, uploads) = moto_state(&moto.endpoint, "t/topic=big/partition=0/part-00000.parquet");
    assert_eq!(etag, None);
    assert!(uploads.is_empty(), "an upload left behind: {uploads:?}");
    // A bucket that does not exist: the object is named, nothing is written.
    let (code, _, err) = run("s3://nobucket/t");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("s3://nobucket/t/topic=big/partition=0/part-00000.parquet")
            && err.contains("NoSuchBucket"),
        "{err}"
    );
}

#[test]
fn an_export_to_azure_blob_is_the_local_export() {
    if !common::python_modules(&["pyarrow.fs"]) {
        return;
    }
    let Some(az) = azurite::start_or_skip() else {
        return;
    };
    az.create_container("lake");
    let tmp = tempfile::tempdir().unwrap();
    let logs = log_dir(tmp.path());
    let (names, local) = local_export(tmp.path(), &logs);
    let mut cmd = Command::new("true");
    az.env(&mut cmd);
    let env: Vec<(String, String)> = cmd
        .get_envs()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.unwrap().to_string_lossy().into_owned(),
            )
        })
        .collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (code, report, err) = export(&env, &["--out", "az://lake/kafka", logs.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let urls: Vec<String> = names
        .iter()
        .map(|n| format!("az://lake/kafka/{n}"))
        .collect();
    assert_eq!(
        files(&report)
            .into_iter()
            .map(|(f, _)| f)
            .collect::<Vec<_>>(),
        urls
    );
    let host = az.url.strip_prefix("http://").unwrap();
    let fs = json!({"kind": "azure", "account_name": azurite::ACCOUNT, "account_key": azurite::KEY,
        "blob_storage_authority": host, "blob_storage_scheme": "http",
        "dfs_storage_authority": host, "dfs_storage_scheme": "http"});
    let keys: Vec<String> = names.iter().map(|n| format!("lake/kafka/{n}")).collect();
    assert_eq!(read_back(&fs, &keys), local);
    // A container that does not exist: an error naming the object.
    let (code, _, err) = export(&env, &["--out", "az://nothere/t", logs.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("az://nothere/t/topic=big/partition=0/part-00000.parquet"),
        "{err}"
    );
}

/// The files under `dir`, by relative name, with their bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = common::files_under(dir)
        .into_iter()
        .map(|f| {
            (
                f.strip_prefix(dir).unwrap().to_path_buf(),
                std::fs::read(&f).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn local_files_appear_only_whole_under_their_names() {
    let tmp = tempfile::tempdir().unwrap();
    let orders = Path::new("testdata/orders/orders-0");
    // file:// is the directory: the same files as the path.
    let by_path = tmp.path().join("by-path");
    let by_url = tmp.path().join("by-url");
    let url = format!("file://{}", by_url.display());
    for out in [by_path.to_str().unwrap(), &url] {
        let (code, _, err) = export(&[], &["--out", out, orders.to_str().unwrap()]);
        assert_eq!(code, 0, "{out}: {err}");
    }
    assert_eq!(tree(&by_path), tree(&by_url));
    assert_eq!(tree(&by_path).len(), 1);
    let file = "topic=orders/partition=0/part-00000.parquet";
    let (code, report, err) = export(&[], &["--out", &url, orders.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        report["files"][0]["file"],
        format!("{}/{file}", by_url.display())
    );
    // A file that cannot take its final name (a directory holds it): an error, and its
    // temporary file is gone.
    let blocked = tmp.path().join("blocked");
    std::fs::create_dir_all(blocked.join(file)).unwrap();
    std::fs::write(blocked.join(file).join("x"), b"x").unwrap();
    let (code, _, err) = export(
        &[],
        &["--out", blocked.to_str().unwrap(), orders.to_str().unwrap()],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(file), "{err}");
    let left: Vec<PathBuf> = common::files_under(&blocked);
    assert_eq!(left, [blocked.join(file).join("x")], "{left:?}");
}
