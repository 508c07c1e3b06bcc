//! The internal-topic decoders against kafka-dump-log: for every record of every `.log` and
//! `.checkpoint` file of every scenario in `../shared/reference-internal`, the key, payload and
//! control texts must be character for character what kafka-dump-log printed, and the record
//! where it died must be the one we mark fatal.

mod common;

use std::path::Path;

use kseg::format::internal::{control_record_text, decode_record, Decoder};
use kseg::storage::log_reader::{LogReader, Step};
use serde_json::Value;

const MAX_RECORDS_BYTES: usize = 64 << 20;

fn decoder(option: &str) -> Decoder {
    match option {
        "--offsets-decoder" => Decoder::Offsets,
        "--transaction-log-decoder" => Decoder::TransactionLog,
        "--cluster-metadata-decoder" => Decoder::ClusterMetadata,
        "--share-group-state-decoder" => Decoder::ShareGroupState,
        other => panic!("unknown decoder option {other}"),
    }
}

/// What we produce for one record, in the shape of an expected record.
struct Got {
    offset: i64,
    key: Option<String>,
    payload: Option<String>,
    control: Option<String>,
    /// The structured forms: key, payload, control.
    json: [Option<Value>; 3],
    fatal: bool,
}

/// Every record of the file, decoded; stops after the first fatal record, as the tool does.
fn decode_file(path: &Path, decoder: Decoder) -> Vec<Got> {
    let mut reader = LogReader::open(path, None).expect("open");
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    while let Step::Entry { entry, .. } = reader.next_step().expect("read") {
        let control = entry.is_control();
        let records = entry
            .records(&mut scratch, MAX_RECORDS_BYTES)
            .expect("records");
        for r in records {
            let r = r.expect("record");
            let got = if control {
                match control_record_text(r.key, r.value) {
                    Ok((text, json)) => Got {
                        offset: r.offset,
                        key: None,
                        payload: None,
                        control: Some(text.strip_prefix(' ').unwrap_or(&text).to_string()),
                        json: [None, None, json],
                        fatal: false,
                    },
                    Err(_) => Got {
                        offset: r.offset,
                        key: None,
                        payload: None,
                        control: None,
                        json: [None, None, None],
                        fatal: true,
                    },
                }
            } else {
                let d = decode_record(decoder, r.offset, r.key, r.value);
                Got {
                    offset: r.offset,
                    key: d.key,
                    payload: d.payload,
                    control: None,
                    json: [d.key_json, d.payload_json, None],
                    fatal: d.fatal.is_some(),
                }
            };
            let fatal = got.fatal;
            out.push(got);
            if fatal {
                return out;
            }
        }
    }
    out
}

#[derive(Default)]
struct Tally {
    records: usize,
    matched: usize,
    files: usize,
    failures: Vec<String>,
}

fn check_expected(expected: Value, input: &Path, tally: &mut Tally) {
    let decoder = decoder(expected["decoderOption"].as_str().expect("decoderOption"));
    let files = expected["files"].as_object().expect("files");
    for (name, file) in files {
        let path = if input.is_dir() {
            input.join(name)
        } else {
            input.to_path_buf()
        };
        tally.files += 1;
        let want: Vec<&Value> = file["batches"]
            .as_array()
            .expect("batches")
            .iter()
            .flat_map(|b| b["records"].as_array().expect("records").iter())
            .collect();
        let got = decode_file(&path, decoder);
        let label = format!("{}", path.display());
        if got.len() != want.len() {
            tally.failures.push(format!(
                "{label}: {} records decoded, {} expected",
                got.len(),
                want.len()
            ));
        }
        for (g, w) in got.iter().zip(&want) {
            tally.records += 1;
            let text = |v: &Value| v.as_str().map(str::to_string);
            let want_fatal = w.get("fatal").is_some_and(|f| !f.is_null());
            let mut problems = Vec::new();
            if w["offset"].as_i64() != Some(g.offset) {
                problems.push(format!("offset {} vs {}", g.offset, w["offset"]));
            }
            if want_fatal != g.fatal {
                problems.push(format!("fatal: got {}, want {want_fatal}", g.fatal));
            }
            if !want_fatal {
                for (what, mine, theirs) in [
                    ("key", &g.key, text(&w["key"])),
                    ("payload", &g.payload, text(&w["payload"])),
                    ("control", &g.control, w.get("control").and_then(text)),
                ] {
                    if *mine != theirs {
                        problems.push(format!("{what}:\n   got  {mine:?}\n   want {theirs:?}"));
                    }
                }
            }
            // The structured forms equal the printed JSON (parsed); the transaction log's
            // text is not JSON, and our JSON form of it has no counterpart there.
            let control_json =
                if w.get("controlType").and_then(Value::as_str) == Some("LEADER_CHANGE") {
                    &w["leaderChangeJson"]
                } else {
                    w.get("controlJson").unwrap_or(&Value::Null)
                };
            for (i, (what, theirs)) in [
                ("keyJson", &w["keyJson"]),
                ("payloadJson", &w["payloadJson"]),
                ("controlJson", control_json),
            ]
            .into_iter()
            .enumerate()
            {
                let mine = g.json[i].as_ref();
                let agree = if theirs.is_null() {
                    mine.is_none() || decoder == Decoder::TransactionLog || what == "controlJson"
                } else {
                    mine == Some(theirs)
                };
                if !agree && !want_fatal {
                    problems.push(format!("{what}: got {mine:?}, want {theirs}"));
                }
            }
            if problems.is_empty() {
                tally.matched += 1;
            } else {
                tally.failures.push(format!(
                    "{label} offset {}: {}",
                    g.offset,
                    problems.join("; ")
                ));
            }
        }
        let aborted = file["aborted"]["offset"].as_i64();
        let our_fatal = got.iter().find(|g| g.fatal).map(|g| g.offset);
        if aborted != our_fatal {
            tally.failures.push(format!(
                "{label}: kafka-dump-log died at {aborted:?}, we mark {our_fatal:?}"
            ));
        }
    }
}

#[test]
fn every_record_decodes_like_kafka_dump_log() {
    let Some(root) = common::reference_internal_dir() else {
        return;
    };
    let mut tally = Tally::default();
    for scenario in common::scenarios(&root) {
        if !scenario.join("expected-decode.json").is_file() {
            continue;
        }
        let expected = common::expected_decode(&scenario);
        let dir = expected["directory"]
            .as_str()
            .expect("directory")
            .to_owned();
        let before = (tally.records, tally.matched);
        check_expected(expected, &scenario.join("input").join(dir), &mut tally);
        let bootstrap = scenario.join("expected-decode-bootstrap.json");
        if bootstrap.is_file() {
            let text = std::fs::read_to_string(&bootstrap).unwrap();
            check_expected(
                serde_json::from_str(&text).unwrap(),
                &scenario.join("input").join("bootstrap.checkpoint"),
                &mut tally,
            );
        }
        eprintln!(
            "{}: {}/{} records match",
            scenario.file_name().unwrap().to_string_lossy(),
            tally.matched - before.1,
            tally.records - before.0
        );
    }
    eprintln!(
        "total: {}/{} records of {} files match",
        tally.matched, tally.records, tally.files
    );
    assert!(
        tally.failures.is_empty(),
        "{} mismatches:\n{}",
        tally.failures.len(),
        tally
            .failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
