//! Every JSON document kseg prints, over the whole reference corpus, the internal-topic corpus
//! and the real-world log dirs, is valid against `schemas/kseg-1.schema.json`, says
//! `"format": "kseg/1"` and has no key twice.

mod common;

use std::path::Path;
use std::process::Command;

use common::{schema_errors, schema_root, validator};

use serde_json::Value;

/// The documents of `text`: one JSON document, several, or JSON Lines.
fn documents(text: &str) -> Vec<Value> {
    common::assert_json_without_duplicate_keys(text);
    serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .map(Result::unwrap)
        .collect()
}

struct Checker {
    root: Value,
    documents: usize,
}

impl Checker {
    /// Runs `kseg ARGS`, and checks every document of its standard output against `def`
    /// (`dumpLine` for each line of `dump --json`).
    fn run(&mut self, def: &str, args: &[&dyn AsRef<std::ffi::OsStr>]) {
        let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
            .args(args.iter().map(|a| a.as_ref()))
            .output()
            .unwrap();
        let shown: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy()).collect();
        let text = String::from_utf8(out.stdout).unwrap();
        let docs = documents(&text);
        assert!(!docs.is_empty(), "kseg {shown:?}: no JSON on stdout");
        assert_eq!(
            docs[0]["format"], "kseg/1",
            "kseg {shown:?}: first document"
        );
        let v = validator(&self.root, def);
        for (i, doc) in docs.iter().enumerate() {
            let errors = schema_errors(&v, doc);
            assert!(
                errors.is_empty(),
                "kseg {shown:?}, document {i}: {errors:#?}"
            );
        }
        self.documents += docs.len();
    }
}

#[test]
fn every_command_matches_the_schema_on_the_reference_corpus() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut c = Checker {
        root: schema_root(),
        documents: 0,
    };
    for s in common::scenarios(&root) {
        let dir = s.join("input/orders-0");
        let files: Vec<_> = common::listing(&dir);
        let mut dump_files: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"dump", &"--json"];
        dump_files.extend(files.iter().map(|f| f as &dyn AsRef<std::ffi::OsStr>));
        c.run("dumpLine", &dump_files);
        let deep = ["dump", "--json", "--deep-iteration", "--print-data-log"];
        c.run("dumpLine", &[&deep[0], &deep[1], &deep[2], &deep[3], &dir]);
        c.run("verify", &[&"verify", &"--json", &"--deep", &dir]);
        c.run("recover", &[&"recover", &"--json", &dir]);
        c.run(
            "rebuildIndex",
            &[&"rebuild-index", &"--json", &"--all", &dir],
        );
        c.run("retention", &[&"retention", &"--json", &dir]);
        c.run("compact", &[&"compact", &"--json", &dir]);
        let out = tmp.path().join(s.file_name().unwrap());
        c.run("compact", &[&"compact", &"--json", &"--out", &out, &dir]);
        c.run("offsets", &[&"offsets", &"--json", &"--time", &"0", &dir]);
        c.run("offsets", &[&"offsets", &"--json", &dir]);
        c.run("locate", &[&"locate", &"--json", &"100", &dir]);
        c.run("stats", &[&"stats", &"--json", &"--deep", &dir]);
        c.run("txns", &[&"txns", &"--json", &dir]);
        c.run("digest", &[&"digest", &"--json", &"--segments", &dir]);
        let plain = root.join("a-plain-v2/input/orders-0");
        c.run("diff", &[&"diff", &"--json", &plain, &dir]);
        let saved = tmp
            .path()
            .join(format!("s-{}", s.file_name().unwrap().to_string_lossy()));
        c.run("salvage", &[&"salvage", &"--json", &dir, &"--out", &saved]);
        let written = tmp
            .path()
            .join(format!("w-{}", s.file_name().unwrap().to_string_lossy()));
        c.run(
            "write",
            &[&"write", &"--json", &s.join("SPEC.json"), &written],
        );
    }
    assert!(c.documents > 10_000, "only {} documents", c.documents);
}

#[test]
fn internal_topic_dumps_match_the_schema() {
    let Some(root) = common::reference_internal_dir() else {
        return;
    };
    let mut c = Checker {
        root: schema_root(),
        documents: 0,
    };
    let decoders = [
        ("offsets-classic", "--offsets-decoder"),
        ("offsets-edge", "--offsets-decoder"),
        ("offsets-modern", "--offsets-decoder"),
        ("transactions", "--transaction-log-decoder"),
        ("share-state", "--share-group-state-decoder"),
        ("cluster-metadata", "--cluster-metadata-decoder"),
    ];
    for scenario in ["offsets-classic", "offsets-edge", "offsets-modern"] {
        let dir = root.join(scenario).join("input/__consumer_offsets-0");
        c.run("groups", &[&"groups", &"--json", &dir]);
    }
    let metadata = root.join("cluster-metadata").join("input");
    for at in ["0", "60", "114", "200"] {
        c.run(
            "metadata",
            &[&"metadata", &"--json", &"--at", &at, &metadata],
        );
    }
    c.run("metadata", &[&"metadata", &"--json", &"--check", &metadata]);
    c.run(
        "metadataDiff",
        &[&"metadata", &"--json", &"--diff", &"0", &"end", &metadata],
    );
    for key in ["--group", "--transactional-id"] {
        c.run("coordinator", &[&"coordinator", &"--json", &key, &"é-ü-𝄞"]);
    }
    for (scenario, decoder) in decoders {
        for p in common::listing(&root.join(scenario).join("input")) {
            let args = [
                "dump",
                "--json",
                "--deep-iteration",
                "--print-data-log",
                decoder,
            ];
            c.run(
                "dumpLine",
                &[&args[0], &args[1], &args[2], &args[3], &args[4], &p],
            );
        }
    }
    assert!(c.documents > 1_000, "only {} documents", c.documents);
}

#[test]
fn verify_and_dump_of_real_brokers_log_dirs_match_the_schema() {
    let Some(root) = common::realworld_dir() else {
        return;
    };
    let (tmp, _) = common::unpack_realworld(&root);
    let mut c = Checker {
        root: schema_root(),
        documents: 0,
    };
    let dirs = common::broker_log_dirs(tmp.path());
    assert!(dirs.len() >= 5, "only {} broker log dirs", dirs.len());
    for dir in &dirs {
        c.run("verify", &[&"verify", &"--json", &"--deep", dir]);
        c.run("ls", &[&"ls", &"--json", dir]);
        let partitions: Vec<_> = common::listing(dir)
            .into_iter()
            .filter(|p| p.is_dir())
            .collect();
        // ListOffsets needs a segment: a KRaft log dir may hold only snapshots.
        let has_log = |p: &Path| {
            common::listing(p)
                .iter()
                .any(|f| f.extension() == Some("log".as_ref()))
        };
        for p in partitions.iter().filter(|p| has_log(p)) {
            c.run("offsets", &[&"offsets", &"--json", p]);
        }
        if partitions.iter().any(|p| has_log(p)) {
            c.run("recover", &[&"recover", &"--json", dir]);
        }
        let mut dump: Vec<&dyn AsRef<std::ffi::OsStr>> =
            vec![&"dump", &"--json", &"--deep-iteration"];
        dump.extend(partitions.iter().map(|f| f as &dyn AsRef<std::ffi::OsStr>));
        c.run("dumpLine", &dump);
    }
    assert!(c.documents > 100, "only {} documents", c.documents);
}

/// The schema is strict: an old field name, a missing format or a string where an object is
/// due (an encoded key) is rejected (so the tests above can fail).
#[test]
fn the_schema_rejects_renamed_and_retyped_fields() {
    let root = schema_root();
    let verify = validator(&root, "verify");
    let good = serde_json::json!({
        "format": "kseg/1", "partitions": [{"dir": "t-0", "topic": "t", "partition": 0,
        "segments": [], "logStartOffset": null, "logEndOffset": null, "findings": []}],
        "logDirFindings": [], "filesChecked": 0, "bytesChecked": 0, "skipped": [], "classified": []
    });
    assert!(verify.is_valid(&good));
    let mut renamed = good.clone();
    let p = renamed["partitions"][0].as_object_mut().unwrap();
    let dir = p.remove("dir").unwrap();
    p.insert("path".into(), dir);
    assert!(!verify.is_valid(&renamed));
    let mut unversioned = good.clone();
    unversioned.as_object_mut().unwrap().remove("format");
    assert!(!verify.is_valid(&unversioned));
    let line = validator(&root, "dumpLine");
    let record = serde_json::json!({"type": "record", "file": "x.log", "offset": 0,
        "timestamp": 0, "timestampType": "CreateTime", "sequence": -1, "sizeInBytes": 7,
        "keySize": -1, "valueSize": -1, "headers": [], "decodedKey": {"text": "Error"}});
    assert!(line.is_valid(&record));
    let mut as_string = record.clone();
    as_string["key"] = Value::from("k");
    assert!(!line.is_valid(&as_string));
}

#[test]
fn version_and_checks_match_the_schema() {
    let mut c = Checker {
        root: schema_root(),
        documents: 0,
    };
    c.run("version", &[&"version", &"--json"]);
    c.run("checks", &[&"checks", &"--json"]);
    c.run("checks", &[&"checks", &"--json", &"index.untrimmed"]);
    assert_eq!(c.documents, 3);
}
