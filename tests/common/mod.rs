//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};

pub mod big_segment;
pub mod json_runs;

/// The reference corpus written by Apache Kafka's own code (`../shared/reference`).
/// Missing corpus: a failure, unless `KSEG_ALLOW_SKIP` is set (then `None`) and `KSEG_REFERENCE`
/// (which CI sets) is not.
pub fn reference_dir() -> Option<PathBuf> {
    corpus("reference")
}

/// Kafka's internal topics and KRaft files (`../shared/reference-internal`), same rule.
pub fn reference_internal_dir() -> Option<PathBuf> {
    corpus("reference-internal")
}

/// Whether python3 imports `modules` (the tests' independent readers, installed by .ci/run):
/// missing is a failure under the corpus rule (unless `KSEG_ALLOW_SKIP` is set and
/// `KSEG_REFERENCE` is not, then a skip said on stderr).
pub fn python_modules(modules: &[&str]) -> bool {
    let import = format!("import {}", modules.join(", "));
    let ok = std::process::Command::new("python3")
        .args(["-c", &import])
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return true;
    }
    let wanted = modules.join(" ");
    if std::env::var_os("KSEG_REFERENCE").is_some() || std::env::var_os("KSEG_ALLOW_SKIP").is_none()
    {
        panic!("python3 with {wanted} is needed (pip install {wanted}; KSEG_ALLOW_SKIP=1 skips)");
    }
    eprintln!("skipping: python3 with {wanted} not found (KSEG_ALLOW_SKIP is set)");
    false
}

/// `python3 ARGS`' standard output; its failure fails the test, with what it printed.
pub fn python(args: &[&str]) -> String {
    let out = std::process::Command::new("python3")
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[path = "../../src/format/test_corpus.rs"]
mod test_corpus;

fn corpus(name: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("shared")
        .join(name);
    test_corpus::corpus(dir)
}

/// The scenario directories of the reference corpus, sorted by name.
pub fn scenarios(root: &std::path::Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root)
        .expect("read corpus")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.join("expected-dump.json").is_file() || p.join("SPEC.json").is_file())
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no scenarios in {}", root.display());
    out
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Bytes from hex text; whitespace is ignored.
pub fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Every file of `dir` with its bytes, sorted by name: equal lists mean byte-identical dirs.
pub fn dir_contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Copies the files of `from` into `to` (created), writable even when the source is not;
/// subdirectories are left out.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if !e.file_type().unwrap().is_file() {
            continue;
        }
        let dst = to.join(e.file_name());
        std::fs::copy(e.path(), &dst).unwrap();
        let mut perm = std::fs::metadata(&dst).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perm.set_readonly(false);
        std::fs::set_permissions(&dst, perm).unwrap();
    }
}

/// Fails with every error `kseg verify --deep` reports on `dir`, if it reports any.
pub fn assert_verifies_clean(dir: &Path) {
    let opts = kseg::ops::check::verify::VerifyOptions {
        deep: true,
        ..Default::default()
    };
    let report =
        kseg::ops::check::verify::verify_paths(&[dir.to_path_buf()], &opts, &|_| {}).unwrap();
    let errors: Vec<String> = report
        .findings()
        .filter(|f| f.severity == kseg::ops::Severity::Error)
        .map(|f| format!("{f:?}"))
        .collect();
    assert!(errors.is_empty(), "{}: {errors:#?}", dir.display());
}

/// Fails with every finding `kseg verify --deep --strict` reports on `path` (warnings too);
/// `what` names the case in the failure.
pub fn assert_verifies_strict(path: &Path, what: &str) {
    let opts = kseg::ops::check::verify::VerifyOptions {
        deep: true,
        ..Default::default()
    };
    let report =
        kseg::ops::check::verify::verify_paths(&[path.to_path_buf()], &opts, &|_| {}).unwrap();
    let findings: Vec<String> = report.findings().map(|f| format!("{f:?}")).collect();
    assert!(findings.is_empty(), "{what}: {findings:#?}");
}

/// Retention with every limit off at `now_ms`, Kafka's defaults otherwise.
pub fn retention_options(now_ms: i64) -> kseg::ops::simulate::retention::RetentionOptions {
    kseg::ops::simulate::retention::RetentionOptions {
        retention_ms: -1,
        retention_bytes: -1,
        log_start_offset: None,
        high_watermark: None,
        now_ms,
        config: kseg::storage::LogConfig::default(),
        producer_id_expiration_ms: 86_400_000,
    }
}

/// Recovery from the checkpointed recovery point at `now_ms`, Kafka's defaults otherwise.
pub fn recover_options(now_ms: i64) -> kseg::ops::repair::recover::RecoverOptions {
    kseg::ops::repair::recover::RecoverOptions {
        config: kseg::storage::LogConfig::default(),
        now_ms,
        recovery_point: None,
        producer_id_expiration_ms: 86_400_000,
    }
}

/// Positions and sizes of the batches of a segment.
pub fn batches(log: &Path) -> Vec<(u64, u64)> {
    let mut r = kseg::storage::log_reader::LogReader::open(log, None).unwrap();
    let mut out = Vec::new();
    while let kseg::storage::log_reader::Step::Entry { position, entry } = r.next_step().unwrap() {
        out.push((position, entry.size_in_bytes() as u64));
    }
    out
}

/// A legacy (v0/v1) message set of `records`, CreateTime, default compression level.
pub fn legacy_set(
    magic: i8,
    compression: kseg::format::Compression,
    records: &[kseg::format::batch::RecordSpec],
) -> Vec<u8> {
    let spec = kseg::format::legacy::LegacySetSpec {
        magic,
        compression,
        compression_level: None,
        timestamp_type: kseg::format::batch::TimestampType::CreateTime,
        log_append_time: -1,
    };
    kseg::format::legacy::build_message_set(&spec, records).unwrap()
}

/// The real-world corpus (`../shared/realworld`): log dirs real brokers wrote and client
/// libraries' test vectors, as `.tar.gz` archives. Same rule as the reference corpus.
pub fn realworld_dir() -> Option<PathBuf> {
    corpus("realworld")
}

/// Unpacks every archive of the real-world corpus into a new temporary directory (sparse, as
/// the archives hold 10 MiB zero-filled index files); returns it with the archives' names.
pub fn unpack_realworld(root: &Path) -> (tempfile::TempDir, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let mut names = Vec::new();
    for e in std::fs::read_dir(root).unwrap() {
        let p = e.unwrap().path();
        let Some(name) = p
            .file_name()
            .and_then(|n| n.to_str()?.strip_suffix(".tar.gz"))
        else {
            continue;
        };
        let dst = tmp.path().join(name);
        std::fs::create_dir(&dst).unwrap();
        let status = std::process::Command::new("tar")
            .arg("-xSzf")
            .arg(&p)
            .arg("-C")
            .arg(&dst)
            .status()
            .expect("run tar");
        assert!(status.success(), "tar -xSzf {}", p.display());
        names.push(name.to_string());
    }
    names.sort();
    assert!(!names.is_empty(), "no archives in {}", root.display());
    (tmp, names)
}

/// Directories below `root` holding a `meta.properties`: the broker log dirs.
pub fn broker_log_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        if d.join("meta.properties").is_file() {
            out.push(d);
            continue;
        }
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A JSON value read only to check that no object in it has a key twice (serde_json keeps the
/// last of duplicate keys silently; strict parsers reject the document).
struct NoDuplicateKeys;

impl<'de> serde::Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = NoDuplicateKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Self::Value, A::Error> {
                let mut seen = std::collections::HashSet::new();
                while let Some(k) = m.next_key::<String>()? {
                    if !seen.insert(k.clone()) {
                        return Err(serde::de::Error::custom(format!("duplicate key {k:?}")));
                    }
                    m.next_value::<NoDuplicateKeys>()?;
                }
                Ok(NoDuplicateKeys)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut s: A,
            ) -> Result<Self::Value, A::Error> {
                while s.next_element::<NoDuplicateKeys>()?.is_some() {}
                Ok(NoDuplicateKeys)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(NoDuplicateKeys)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(NoDuplicateKeys)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(NoDuplicateKeys)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(NoDuplicateKeys)
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(NoDuplicateKeys)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(NoDuplicateKeys)
            }
        }
        d.deserialize_any(V)
    }
}

/// Fails unless `text` is one JSON document, or JSON Lines, without a duplicate key anywhere.
pub fn assert_json_without_duplicate_keys(text: &str) {
    let stream = serde_json::Deserializer::from_str(text).into_iter::<NoDuplicateKeys>();
    for (i, doc) in stream.enumerate() {
        if let Err(e) = doc {
            panic!("JSON document {i}: {e}");
        }
    }
}

/// Runs `kseg ARGS PATH`: its exit status and stderr.
pub fn kseg_status(args: &[&str], path: &Path) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The paths in `dir`, sorted: `DIR/*` as the shell expands it.
pub fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    out.sort();
    out
}

/// Makes a FIFO at `p`.
pub fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "{}",
        p.display()
    );
}

/// `kseg ARGS`: exit status, standard output and standard error, the test failed if it has not
/// ended within a minute (for reads that must never block nor go on without end, whatever the
/// input).
pub fn kseg_within_a_minute(args: &[&str]) -> (i32, String, String) {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output().unwrap()));
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(out) => (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ),
        Err(_) => {
            // SAFETY: kill of the child this test started, which has not been waited for.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("kseg {args:?} did not end within a minute");
        }
    }
}

/// Runs `cmd` (a kseg command): its exit status, stdout and stderr.
pub fn outcome(cmd: &mut std::process::Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Runs `kseg ARGS`.
pub fn kseg(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(args)
        .output()
        .unwrap()
}

/// The `.log` segments of `dir`, in base-offset order.
pub fn logs(dir: &Path) -> Vec<PathBuf> {
    listing(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect()
}

/// Offset, key and value of one record.
pub type Rec = (i64, Option<Vec<u8>>, Option<Vec<u8>>);

/// Every record of the partition `dir`, segment by segment, in offset order.
pub fn records(dir: &Path) -> Vec<Rec> {
    use kseg::storage::log_reader::{LogReader, Step};
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    for l in logs(dir) {
        let mut reader = LogReader::open(&l, None).unwrap();
        while let Step::Entry { entry, .. } = reader.next_step().unwrap() {
            for r in entry.records(&mut scratch, usize::MAX).unwrap() {
                let r = r.unwrap();
                out.push((
                    r.offset,
                    r.key.map(<[u8]>::to_vec),
                    r.value.map(<[u8]>::to_vec),
                ));
            }
        }
    }
    out
}

/// Writes the spec `spec` (a JSON value) into the partition directory `dir` with the writer.
pub fn write_spec_value(spec: &serde_json::Value, dir: &Path) {
    let spec = kseg::ops::write::spec::Spec::from_json(&spec.to_string()).unwrap();
    kseg::ops::write::spec::write_spec(&spec, dir).unwrap();
}

/// `kseg write` of the spec `spec` (saved as `SPEC.json` beside `out`) into the partition
/// directory `out`; panics with kseg's stderr when it fails.
pub fn kseg_write(spec: &str, out: &Path) {
    let spec_path = out.parent().unwrap().join("SPEC.json");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    std::fs::write(&spec_path, spec).unwrap();
    let w = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .arg("write")
        .arg(&spec_path)
        .arg(out)
        .output()
        .unwrap();
    assert!(w.status.success(), "{}", String::from_utf8_lossy(&w.stderr));
}

/// `schemas/kseg-3.schema.json`.
pub fn schema_root() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/kseg-3.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A validator for the document `def` of the schema file (`$defs/<def>`).
pub fn validator(root: &serde_json::Value, def: &str) -> jsonschema::Validator {
    assert!(root["$defs"][def].is_object(), "no $defs/{def}");
    let mut schema = root.clone();
    schema["$ref"] = serde_json::Value::from(format!("#/$defs/{def}"));
    jsonschema::draft202012::new(&schema).unwrap()
}

/// Asserts that every one of `docs` is valid as the schema's `def`.
pub fn assert_matches_schema(def: &str, docs: &[serde_json::Value]) {
    let v = validator(&schema_root(), def);
    for (i, doc) in docs.iter().enumerate() {
        let errors = schema_errors(&v, doc);
        assert!(errors.is_empty(), "document {i} as {def}: {errors:#?}");
    }
}

/// The first few reasons `doc` is invalid, each with where in the document.
pub fn schema_errors(v: &jsonschema::Validator, doc: &serde_json::Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .take(5)
        .collect()
}

/// Writes the partition directory `<topic>-0` under `dir` with `kseg write`: one batch of a
/// record per value, each with the key "k".
pub fn write_values(dir: &Path, topic: &str, values: &[Vec<u8>]) -> PathBuf {
    let records: Vec<serde_json::Value> = values
        .iter()
        .map(|v| serde_json::json!({"key": "k", "value_hex": hex(v)}))
        .collect();
    let spec = serde_json::json!({"topic": topic, "partition": 0,
        "ops": [{"op": "append", "batches": [{"records": records}]}]});
    let part = dir.join(format!("{topic}-0"));
    kseg_write(&spec.to_string(), &part);
    part
}

/// Every file under `root`, subdirectories included, in no particular order.
pub fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// `expected-decode.json` of a reference-internal scenario, read as kafka-dump-log of the Kafka
/// our tables are pinned to (testdata/kafka-messages) prints it. The corpora were decoded by
/// trunk 1eb7644 (October 2024), which knew no `__consumer_offsets` record type above 15. Since
/// then type 16 is `ConsumerGroupRegularExpressionKey` (group id, regular expression: two
/// int16-length strings): offsets-edge's key `0010000161` holds the group id "a" and no
/// expression, so its read underflows (`BufferUnderflowException`, whose message is null) and
/// the record is an error where it was skipped.
pub fn expected_decode(scenario: &Path) -> serde_json::Value {
    let path = scenario.join("expected-decode.json");
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    if !scenario.ends_with("offsets-edge") {
        return doc;
    }
    let (old, new) = (
        "Unknown record type 16 at offset 1, skipping.",
        "Error at offset 1, skipping. Could not read record with version 16 from key's buffer due to: null.",
    );
    let files = doc["files"].as_object_mut().unwrap().values_mut();
    let batches = files.flat_map(|f| f["batches"].as_array_mut().unwrap().iter_mut());
    for r in batches.flat_map(|b| b["records"].as_array_mut().unwrap().iter_mut()) {
        if r["key"] == old {
            r["key"] = new.into();
            let line = r["line"].as_str().unwrap().replace(old, new);
            r["line"] = line.into();
        }
    }
    doc
}

/// The partition lock an `--apply` takes before it plans, held until dropped: a library caller
/// takes it before planning too, as the executor refuses a plan made without it.
pub fn lock(dir: &Path) -> Option<kseg::ops::repair::apply::PartitionLock> {
    kseg::ops::repair::apply::lock_partition(dir, false).unwrap()
}

/// `doc` without the keys that name where the bytes were read (`dir`, `file`, …) and how they
/// were found (a seek in a remote segment scans it: no local index entry led there), to set a
/// partition read across tiers against its local copy.
pub fn without_places(mut doc: serde_json::Value) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                for k in ["dir", "file", "fallbacks", "logBytesRead", "indexEntry"] {
                    m.remove(k);
                }
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut doc);
    doc
}

/// The `check` of every finding of every partition of a report (none when it has no
/// partitions), sorted.
pub fn finding_checks(report: &serde_json::Value) -> Vec<String> {
    let mut checks: Vec<String> = report["partitions"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["findings"].as_array().unwrap())
        .map(|f| f["check"].as_str().unwrap().to_string())
        .collect();
    checks.sort();
    checks
}
