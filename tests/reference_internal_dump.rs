//! `kseg dump` with the internal-topic decoders against what kafka-dump-log of Kafka 4.0
//! printed for every file of `../shared/reference-internal`: every batch line, record line,
//! key and payload, character for character, up to the record where kafka-dump-log dies; there
//! kseg prints its error line instead and goes on.

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn kseg_dump(option: &str, file: &Path) -> (Vec<String>, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["dump", option])
        .arg(file)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    (
        text.lines().skip(1).map(str::to_owned).collect(),
        out.status.code().unwrap(),
    )
}

/// Kafka's stdout for one file (minus `Dumping …`), and the index of the line where it died.
fn expected_lines(f: &Value) -> (Vec<String>, Option<usize>) {
    let mut lines = vec![f["header"].as_str().unwrap().to_owned()];
    let mut died = None;
    for b in f["batches"].as_array().unwrap() {
        lines.push(b["line"].as_str().unwrap().to_owned());
        for r in b["records"].as_array().unwrap() {
            if r.get("fatal").is_some_and(|x| !x.is_null()) {
                died = Some(lines.len());
                return (lines, died);
            }
            lines.push(r["line"].as_str().unwrap().to_owned());
        }
    }
    if let Some(footer) = f["footer"].as_str() {
        lines.push(footer.to_owned());
    }
    (lines, died)
}

fn check(dir: &Path, option: &str, files: &serde_json::Map<String, Value>) -> usize {
    let mut lines_checked = 0;
    for (name, f) in files {
        let path = dir.join(name);
        let (got, code) = kseg_dump(option, &path);
        let (want, died) = expected_lines(f);
        for (i, w) in want.iter().enumerate() {
            assert_eq!(got.get(i), Some(w), "{}: line {}", path.display(), i + 2);
        }
        lines_checked += want.len();
        match died {
            Some(i) => {
                let err = &got[i];
                assert!(
                    err.starts_with("Error decoding the record at offset"),
                    "{}: {err}",
                    path.display()
                );
                let fatal = f["aborted"]["error"].as_str().unwrap();
                assert!(
                    err.contains(fatal),
                    "{}: {err} lacks {fatal}",
                    path.display()
                );
                assert_eq!(
                    code,
                    1,
                    "{}: a record kafka-dump-log dies on is damage",
                    path.display()
                );
            }
            None => assert_eq!(
                got.len(),
                want.len(),
                "{}: extra lines {:?}",
                path.display(),
                &got[want.len()..]
            ),
        }
    }
    lines_checked
}

#[test]
fn decoded_text_matches_kafka_dump_log() {
    let Some(root) = common::reference_internal_dir() else {
        return;
    };
    let mut total = 0;
    let mut scenarios = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let scenario = entry.unwrap().path();
        if !scenario.join("expected-decode.json").is_file() {
            continue;
        }
        let expected = common::expected_decode(&scenario);
        let option = expected["decoderOption"].as_str().unwrap();
        let dir = scenario
            .join("input")
            .join(expected["directory"].as_str().unwrap());
        total += check(&dir, option, expected["files"].as_object().unwrap());
        if let Ok(text) = std::fs::read(scenario.join("expected-decode-bootstrap.json")) {
            let boot: Value = serde_json::from_slice(&text).unwrap();
            let files = boot["files"].as_object().cloned().unwrap_or_else(|| {
                serde_json::Map::from_iter([("bootstrap.checkpoint".to_owned(), boot.clone())])
            });
            total += check(&scenario.join("input"), option, &files);
        }
        scenarios += 1;
    }
    assert!(scenarios >= 6, "{scenarios} scenarios");
    assert!(total > 1000, "{total} lines");
}
