//! `--remote-segment URL`: one remote segment read alone, with no local partition directory, as
//! an operator does when a bucket is all they have. Reference scenarios tiered by `kseg write
//! --tier-to` into moto's S3 server, in Kafka's `LocalTieredStorage` layout and in Aiven's (zstd
//! chunks; zstd chunks encrypted, read with `--remote-key`): each tiered segment named alone
//! answers `dump`, `verify --deep`, `digest` and `offsets` as its local segment file does. A
//! local directory (as a path and as `file://`) works the same; a URL that names no segment, a
//! missing object and a missing bucket are errors naming the URL (exit 2).

#[path = "common/aiven_py.rs"]
mod aiven_py;
mod common;
#[path = "common/moto.rs"]
mod moto;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const BUCKET: &str = "segments";

/// `kseg ARGS` with `env`: exit status, stdout, stderr.
fn run(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    common::outcome(
        Command::new(env!("CARGO_BIN_EXE_kseg"))
            .args(args)
            .envs(env.iter().copied()),
    )
}

/// `kseg ARGS`, which must exit `want`, as JSON.
fn json(args: &[&str], env: &[(&str, &str)], want: i32) -> Value {
    let (code, out, err) = run(args, env);
    assert_eq!(code, want, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out} {err}"))
}

/// `args` followed by `more`.
fn with<'a>(args: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    [args, more].concat()
}

/// The batches and records `dump` shows, without the file they are in.
fn records(source: &[&str], env: &[(&str, &str)]) -> Vec<Value> {
    let args = ["dump", "--json", "--deep-iteration", "--print-data-log"];
    let dump = json(&with(&args, source), env, 0);
    let items: Vec<Value> = dump["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "batch" || i["type"] == "record")
        .map(|i| {
            let mut i = i.clone();
            i.as_object_mut().unwrap().remove("file");
            i
        })
        .collect();
    assert!(!items.is_empty(), "{source:?}: nothing dumped");
    items
}

/// `verify --deep`'s exit status and finding ids.
fn verify(source: &[&str], env: &[(&str, &str)]) -> (i32, Vec<String>) {
    let args = with(&["verify", "--deep", "--json", "-q"], source);
    let (code, out, err) = run(&args, env);
    let report: Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out} {err}"));
    (code, common::finding_checks(&report))
}

/// What `offsets` answers for `time`, without the directory, the bytes read and how.
fn offsets(source: &[&str], time: &str, env: &[(&str, &str)]) -> Value {
    let mut v = json(
        &with(&["offsets", "--json", "--time", time], source),
        env,
        0,
    );
    let p = v["partitions"][0].as_object_mut().unwrap();
    for k in ["dir", "logBytesRead", "fallbacks"] {
        p.remove(k);
    }
    v["partitions"][0].take()
}

/// (sha256, record count, first offset, last offset) of a digest or of one of its segments.
fn digest_of(d: &Value) -> [Value; 4] {
    ["sha256", "recordCount", "firstOffset", "lastOffset"].map(|k| d[k].clone())
}

/// The segments of `dir` tiered into `remote`, as `kseg tiered` lists them: (start offset,
/// the `.log` object's URL).
fn tiered_logs(dir: &Path, remote: &[&str], env: &[(&str, &str)]) -> Vec<(i64, String)> {
    let d = dir.display().to_string();
    let report = json(&with(&with(&["tiered", "--json"], remote), &[&d]), env, 0);
    report["partitions"][0]["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["startOffset"].as_i64().unwrap(),
                s["logObject"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Each segment of `dir` tiered into `remote`, named alone with `flags`, answers as its local
/// segment file: `dump`'s batches and records, `verify --deep`, its digest (`digest
/// --segments`' entry for the file) and `offsets` (of a partition holding that file alone).
fn assert_segments_read_alone(
    dir: &Path,
    remote: &[&str],
    flags: &[&str],
    env: &[(&str, &str)],
    what: &str,
) {
    let logs = tiered_logs(dir, remote, env);
    assert!(!logs.is_empty(), "{what}: nothing tiered");
    let d = dir.display().to_string();
    let local_digests = json(&["digest", "--json", "--segments", &d], env, 0);
    let scratch = tempfile::tempdir().unwrap();
    for (start, url) in &logs {
        let what = format!("{what}, {url}");
        let local = dir.join(format!("{start:020}.log"));
        let l = local.display().to_string();
        let named = with(&["--remote-segment", url], flags);
        assert!(
            records(&[&l], env) == records(&named, env),
            "{what}: dump's records differ"
        );
        assert_eq!(verify(&[&l], env), verify(&named, env), "{what}: verify");
        let want = local_digests["segments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["file"] == l.as_str())
            .unwrap_or_else(|| panic!("{what}: no digest of {l}"));
        let got = json(&with(&["digest", "--json"], &named), env, 0);
        assert_eq!(digest_of(want), digest_of(&got), "{what}: digest");
        // The local segment alone, with its indexes, as a partition.
        let alone = scratch.path().join(format!("{start}/orders-0"));
        std::fs::create_dir_all(&alone).unwrap();
        for ext in ["log", "index", "timeindex", "txnindex"] {
            let _ = std::fs::copy(
                dir.join(format!("{start:020}.{ext}")),
                alone.join(format!("{start:020}.{ext}")),
            );
        }
        let a = alone.display().to_string();
        for t in ["earliest", "latest", "max-timestamp"] {
            assert_eq!(
                offsets(&[&a], t, env),
                offsets(&named, t, env),
                "{what}: offsets --time {t}"
            );
        }
    }
}

#[test]
fn reference_segments_in_s3_read_alone_as_their_local_files() {
    let Some(reference) = common::reference_dir() else {
        return;
    };
    if !aiven_py::python_ready() {
        return;
    }
    let Some(moto) = moto::start_or_skip(&[]) else {
        return;
    };
    moto::create_bucket(&moto.endpoint, BUCKET);
    let env = [
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_REGION", "us-east-1"),
        // `write --tier-to` reaches moto by the environment; the reads by --remote-endpoint.
        ("AWS_ENDPOINT", moto.endpoint.as_str()),
        ("AWS_ALLOW_HTTP", "true"),
    ];
    let keys = tempfile::tempdir().unwrap();
    let (private, public) = aiven_py::key_pair(keys.path());
    let encrypt = format!("k1={}", public.display());
    let key = format!("k1={}", private.display());
    let aiven = ["--remote-layout", "aiven", "--key-prefix", "cluster-1/"];
    let compressed = [&aiven[..], &["--chunk-size", "1000", "--chunk-compression"]].concat();
    let encrypted = [&compressed[..], &["--encrypt-key", &encrypt]].concat();
    let endpoint = ["--remote-endpoint", moto.endpoint.as_str()];
    let keyed = [&endpoint[..], &["--remote-key", &key]].concat();
    let tmp = tempfile::tempdir().unwrap();
    // Several segments of every codec; transactions with their indexes.
    for name in ["b-codecs", "c-transactions"] {
        let spec = reference.join(name).join("SPEC.json");
        let spec = spec.display().to_string();
        for (layout, write, read) in [
            ("local-tiered", &[][..], &endpoint[..]),
            ("aiven-compressed", &compressed[..], &endpoint[..]),
            ("aiven-encrypted", &encrypted[..], &keyed[..]),
        ] {
            let what = format!("{name}, {layout}");
            let dir = tmp.path().join(name).join(layout).join("orders-0");
            let d = dir.display().to_string();
            let remote = format!("s3://{BUCKET}/{name}/{layout}");
            let args = with(&["write", &spec, &d, "--tier-to", &remote], write);
            let (code, out, err) = run(&args, &env);
            assert_eq!(code, 0, "{what}: {out}{err}");
            let listing = with(&["--remote", &remote], read);
            assert_segments_read_alone(&dir, &listing, read, &env, &what);
        }
    }
    let logs = tiered_logs(
        &tmp.path().join("c-transactions/local-tiered/orders-0"),
        &with(
            &[
                "--remote",
                &format!("s3://{BUCKET}/c-transactions/local-tiered"),
            ],
            &endpoint,
        ),
        &env,
    );
    // Segments of one partition named together are read as one partition: its log from the
    // first one's start, as the local partition's up to where the last one ends.
    let (first, last) = (&logs[0], &logs[logs.len() - 1]);
    let mut together = vec!["digest", "--json"];
    for (_, url) in &logs {
        together.extend(["--remote-segment", url.as_str()]);
    }
    let got = json(&with(&together, &endpoint), &env, 0);
    let ends_at = got["lastOffset"].as_i64().unwrap();
    let dir = tmp.path().join("c-transactions/local-tiered/orders-0");
    let (from, to) = (first.0.to_string(), ends_at.to_string());
    let want = json(
        &[
            "digest",
            "--json",
            "--from-offset",
            &from,
            "--to-offset",
            &to,
            &dir.display().to_string(),
        ],
        &env,
        0,
    );
    assert!(last.0 < ends_at, "{got}");
    assert_eq!(digest_of(&want), digest_of(&got), "segments together");
    // Errors about the store name the segment asked for: no such bucket, no such object.
    let log = first.1.clone();
    let no_bucket = log.replacen(BUCKET, "no-such-bucket", 1);
    let (stem, id_end) = log.rsplit_once('-').unwrap();
    let no_object = format!("{stem}-A{}", &id_end[1..]);
    for url in [&no_bucket, &no_object] {
        let (code, _, err) = run(&with(&["digest", "--remote-segment", url], &endpoint), &env);
        assert_eq!(code, 2, "{url}: {err}");
        assert!(err.contains(url.as_str()), "{url}: {err}");
    }
    drop(moto);
}

/// A tier in a local directory, named by its path or as `file://`; a URL that names no
/// segment, a missing object or directory, and `--remote` beside `--remote-segment` are
/// refused (exit 2, the URL named); a damaged object is a finding naming it and the position.
#[test]
fn a_segment_in_a_local_directory_and_what_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/SPEC.json");
    let dir = tmp.path().join("logs/orders-0");
    let tier = tmp.path().join("tier");
    let (d, t) = (dir.display().to_string(), tier.display().to_string());
    let (code, out, err) = run(
        &["write", &spec.display().to_string(), &d, "--tier-to", &t],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_segments_read_alone(&dir, &["--remote", &t], &[], &[], "a directory");
    let (_, log) = tiered_logs(&dir, &["--remote", &t], &[]).remove(0);
    let as_url = format!("file://{log}");
    assert_eq!(
        records(&["--remote-segment", &log], &[]),
        records(&["--remote-segment", &as_url], &[]),
        "file://"
    );
    // The other read-only commands answer as on the local segment alone in a partition.
    let alone = tmp.path().join("alone/orders-0");
    std::fs::create_dir_all(&alone).unwrap();
    for ext in ["log", "index", "timeindex"] {
        let name = format!("{:020}.{ext}", 0);
        std::fs::copy(dir.join(&name), alone.join(&name)).unwrap();
    }
    let a = alone.display().to_string();
    for (cmd, args) in [
        ("stats", vec!["--json", "--deep"]),
        ("txns", vec!["--json", "--now", "0"]),
        ("locate", vec!["100", "--json"]),
    ] {
        let local = json(&with(&with(&[cmd], &args), &[&a]), &[], 0);
        let remote = json(
            &with(&with(&[cmd], &args), &["--remote-segment", &log]),
            &[],
            0,
        );
        assert_eq!(
            common::without_places(local),
            common::without_places(remote),
            "{cmd}"
        );
    }
    let (code, out, err) = run(&["diff", "--remote-segment", &log, &a], &[]);
    assert_eq!(code, 0, "{out} {err}");
    assert!(out.contains("identical"), "{out}");
    // PATH and a segment are two partitions: digest reads one.
    let (code, _, err) = run(&["digest", "--remote-segment", &log, &d], &[]);
    assert_eq!(code, 2, "{err}");
    // Refused: another object of the segment, a name without `<start>-<segmentId>`, an id
    // that names nothing, a directory that is not there; and both --remote and the segment.
    let index = log.replace(".log", ".index");
    let no_stem = tier
        .join("kafka-tiered-storage/orders-0.log")
        .display()
        .to_string();
    let (stem, id_end) = log.rsplit_once('-').unwrap();
    let no_object = format!("{stem}-A{}", &id_end[1..]);
    let no_dir = format!(
        "file://{}/gone/{}",
        tmp.path().display(),
        &log[t.len() + 1..]
    );
    for url in [&index, &no_stem, &no_object, &no_dir] {
        for cmd in ["dump", "verify", "digest", "offsets"] {
            let (code, _, err) = run(&[cmd, "--remote-segment", url], &[]);
            assert_eq!(code, 2, "{cmd} {url}: {err}");
            assert!(err.contains(url.as_str()), "{cmd} {url}: {err}");
        }
    }
    // Older Kafka's unpadded start offsets: the same segment.
    let unpadded_dir = tmp.path().join("unpadded");
    let log_path = Path::new(&log);
    let stem = log_path.file_stem().unwrap().to_string_lossy().into_owned();
    let partition_dir = unpadded_dir.join(log_path.parent().unwrap().file_name().unwrap());
    std::fs::create_dir_all(&partition_dir).unwrap();
    for f in common::listing(log_path.parent().unwrap()) {
        let name = f
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replacen(&stem[..20], "0", 1);
        std::fs::copy(&f, partition_dir.join(name)).unwrap();
    }
    let unpadded = partition_dir
        .join(format!("0{}.log", &stem[20..]))
        .display()
        .to_string();
    let digest = |url: &str| {
        digest_of(&json(
            &["digest", "--json", "--remote-segment", url],
            &[],
            0,
        ))
    };
    assert_eq!(digest(&log), digest(&unpadded), "unpadded");
    // Aiven's layout without the manifest its chunks are read through.
    let aiven = tmp.path().join("aiven");
    let a_dir = tmp.path().join("aiven-logs/orders-0");
    let (code, out, err) = run(
        &[
            "write",
            &spec.display().to_string(),
            &a_dir.display().to_string(),
            "--tier-to",
            &aiven.display().to_string(),
            "--remote-layout",
            "aiven",
            "--chunk-compression",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    let a_log = common::files_under(&aiven)
        .into_iter()
        .find(|f| f.extension().is_some_and(|x| x == "log"))
        .unwrap();
    let a_url = format!("file://{}", a_log.display());
    assert_eq!(
        records(
            &[&a_dir.join(format!("{:020}.log", 0)).display().to_string()],
            &[]
        ),
        records(&["--remote-segment", &a_url], &[]),
        "aiven"
    );
    std::fs::remove_file(a_log.with_extension("rsm-manifest")).unwrap();
    let (code, _, err) = run(&["dump", "--remote-segment", &a_url], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&a_url) && err.contains(".rsm-manifest"),
        "{err}"
    );
    let (code, _, err) = run(&["dump", "--remote", &t, "--remote-segment", &log, &d], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
    let (code, _, err) = run(&["tiered", "--remote-segment", &log, &d], &[]);
    assert_eq!(code, 2, "{err}");
    // One byte flipped inside a batch: verify names the object and a position at or before it.
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[300] ^= 0xff;
    std::fs::write(&log, bytes).unwrap();
    let report = json(
        &["verify", "--json", "-q", "--remote-segment", &log],
        &[],
        1,
    );
    let finding = &report["partitions"][0]["findings"][0];
    assert_eq!(finding["check"], "batch.crc", "{report}");
    assert_eq!(finding["file"], log.as_str(), "{report}");
    assert!(finding["position"].as_u64().unwrap() <= 300, "{finding}");
}
