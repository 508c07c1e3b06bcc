//! `verify` on the reference corpus: no finding at all on what Kafka wrote intact, and each
//! damage of the damaged scenarios found with the right check id, file and position (derived
//! from the scenario's DAMAGE.json and Kafka's own findings in expected-dump.json).

mod common;

use std::path::Path;

use kseg::ops::check::verify::{verify_paths, Report, VerifyOptions};
use kseg::ops::{Finding, Severity};
use serde_json::Value;

fn verify(dir: &Path, deep: bool) -> Report {
    verify_paths(
        &[dir.to_path_buf()],
        &VerifyOptions {
            deep,
            ..Default::default()
        },
        &|_| {},
    )
    .expect("verify runs")
}

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn name(f: &Finding) -> String {
    f.file.file_name().unwrap().to_string_lossy().into_owned()
}

/// (check, file name, position) of every error.
/// Every finding as (check, file name, position, severity), sorted.
fn findings(r: &Report) -> Vec<(String, String, Option<u64>, Severity)> {
    let mut v: Vec<_> = r
        .findings()
        .map(|f| (f.check.to_owned(), name(f), f.position, f.severity))
        .collect();
    v.sort();
    v
}

fn errors(r: &Report) -> Vec<(String, String, Option<u64>)> {
    let mut v: Vec<_> = r
        .findings()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.check.to_owned(), name(f), f.position))
        .collect();
    v.sort();
    v
}

#[test]
fn intact_scenarios_have_no_findings() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    for scenario in common::scenarios(&root) {
        if scenario.join("DAMAGE.json").exists() || scenario.ends_with("f-crash-torn-tail") {
            continue;
        }
        for deep in [false, true] {
            let r = verify(&scenario.join("input/orders-0"), deep);
            let all: Vec<_> = r.findings().collect();
            assert!(all.is_empty(), "{}: {all:#?}", scenario.display());
            assert!(r.partitions[0].segments.iter().all(|s| s.batches > 0));
        }
    }
}

/// The records of a scenario the broker's loader rejects or skips, as (check, offset): those
/// kafka-dump-log of the same Kafka could not decode (`Error at …`, or it died on them) and
/// those it skipped as of an unknown type or key version, since its decoders read records
/// with the loaders' own deserializers.
fn loader_findings(scenario: &Path) -> Vec<(&'static str, i64)> {
    let decode = common::expected_decode(scenario);
    let mut out = Vec::new();
    for file in decode["files"].as_object().unwrap().values() {
        for b in file["batches"].as_array().unwrap() {
            for r in b["records"].as_array().into_iter().flatten() {
                let text = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
                let (key, payload) = (text("key"), text("payload"));
                let offset = r["offset"].as_i64().unwrap();
                if key.starts_with("Unknown record type") || key.starts_with("unknown::version") {
                    out.push(("record.loader-skips", offset));
                } else if r["fatal"].is_string()
                    || key.starts_with("Error at")
                    || payload.starts_with("Error at")
                {
                    out.push(("record.loader-rejects", offset));
                }
            }
        }
    }
    out.sort();
    out
}

/// Kafka's internal topics and KRaft metadata log (transactional offset commits with their
/// `.txnindex`, KRaft snapshots, `quorum-state`): no finding either, but, with `--deep`, for
/// the records their loaders reject or skip.
#[test]
fn internal_topics_have_no_findings() {
    let Some(root) = common::reference_internal_dir() else {
        return;
    };
    for scenario in common::scenarios(&root) {
        // The partition directory, and `bootstrap.checkpoint` where there is one.
        let inputs: Vec<_> = std::fs::read_dir(scenario.join("input"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(inputs.iter().any(|p| p.is_dir()), "{}", scenario.display());
        for deep in [false, true] {
            let r = verify_paths(
                &inputs,
                &VerifyOptions {
                    deep,
                    ..Default::default()
                },
                &|_| {},
            )
            .unwrap();
            let mut all: Vec<(&str, i64)> =
                r.findings().map(|f| (f.check, f.offset.unwrap())).collect();
            all.sort();
            let expected = if deep {
                loader_findings(&scenario)
            } else {
                Vec::new()
            };
            assert_eq!(all, expected, "{} (deep: {deep})", scenario.display());
            let partition = r.partitions.iter().find(|p| p.partition.is_some()).unwrap();
            assert!(partition.segments.iter().all(|s| s.batches > 0));
            assert_eq!(r.files_checked, file_count(&inputs));
        }
    }
}

fn file_count(paths: &[std::path::PathBuf]) -> usize {
    paths
        .iter()
        .map(|p| match std::fs::read_dir(p) {
            Ok(d) => d.count(),
            Err(_) => 1,
        })
        .sum()
}

#[test]
fn torn_tail_is_found_where_kafka_stopped_reading() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let s = root.join("f-crash-torn-tail");
    let dump = json(&s.join("expected-dump.json"));
    let (file, log) = dump["files"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(_, f)| f["type"] == "log" && f["trailingBytes"].as_u64() > Some(0))
        .unwrap();
    let r = verify(&s.join("input/orders-0"), true);
    let end = log["endOfLastBatch"].as_u64().unwrap();
    assert_eq!(
        errors(&r),
        vec![("log.torn-tail".to_owned(), file.clone(), Some(end))]
    );
    let torn = r.findings().find(|f| f.check == "log.torn-tail").unwrap();
    assert!(
        torn.message
            .contains(&format!("only {} remain", log["trailingBytes"])),
        "{}",
        torn.message
    );
    // The crashed active segment's indexes are still preallocated: a warning, not an error.
    let warnings: Vec<_> = r
        .findings()
        .filter(|f| f.severity == Severity::Warning)
        .map(|f| f.check)
        .collect();
    assert_eq!(warnings, vec!["index.untrimmed", "index.untrimmed"]);
}

#[test]
fn damage_of_each_damaged_scenario_is_found() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let mut seen = 0;
    for scenario in common::scenarios(&root) {
        let Ok(text) = std::fs::read(scenario.join("DAMAGE.json")) else {
            continue;
        };
        let damage: Value = serde_json::from_slice(&text).unwrap();
        let items = match damage {
            Value::Array(a) => a,
            one => vec![one],
        };
        let mut want = Vec::new();
        for d in &items {
            let file = d["file"].as_str().unwrap().to_owned();
            let entry = if file.ends_with(".timeindex") { 12 } else { 8 };
            let prefix = if file.ends_with(".timeindex") {
                "timeindex"
            } else {
                "index"
            };
            match d["kind"].as_str().unwrap() {
                "flip_byte" => want.push((
                    "batch.crc".to_owned(),
                    file,
                    d["batchPosition"].as_u64(),
                    Severity::Error,
                )),
                // The loader rebuilds a missing index and ignores a partial entry: warnings.
                "delete" => want.push((format!("{prefix}.missing"), file, None, Severity::Warning)),
                "truncate" => {
                    let to = d["to"].as_u64().unwrap();
                    want.push((
                        "index.partial-entry".to_owned(),
                        file,
                        Some(to - to % entry),
                        Severity::Warning,
                    ));
                }
                "swap_entries" => {
                    let later = d["entries"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|e| e.as_u64().unwrap())
                        .max()
                        .unwrap();
                    want.push((
                        "index.order".to_owned(),
                        file,
                        Some(later * entry),
                        Severity::Error,
                    ));
                }
                other => panic!("unknown damage kind {other}"),
            }
        }
        want.sort();
        let r = verify(&scenario.join("input/orders-0"), true);
        assert_eq!(findings(&r), want, "{}", scenario.display());
        seen += 1;
    }
    assert!(seen >= 2, "damaged scenarios checked: {seen}");
}

/// a-plain-v2 in a log dir, with the epoch cache as the broker leaves it once the log start
/// moved to 600 (the log-start checkpoint itself is left to the test).
fn log_start_moved_to_600() -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    let root = common::reference_dir()?;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&root.join("a-plain-v2/input/orders-0"), &dir);
    std::fs::write(dir.join("leader-epoch-checkpoint"), "0\n2\n2 600\n5 959\n").unwrap();
    Some((tmp, dir))
}

/// After retention or DeleteRecords moves the log start to 600 inside a-plain-v2's first
/// segment, the broker truncates its epoch cache from the start (`LeaderEpochFileCache
/// .truncateFromStart`): epoch 0, wholly below 600, goes, and epoch 2 starts at 600. The
/// log start is in the log dir's `log-start-offset-checkpoint`; with it, the checkpoint covers
/// every visible batch.
#[test]
fn an_epoch_cache_truncated_from_the_log_start_is_accepted() {
    let Some((tmp, dir)) = log_start_moved_to_600() else {
        return;
    };
    let coverage = |r: &Report| {
        r.findings()
            .filter(|f| f.check.starts_with("leader-epoch."))
            .map(|f| (f.check, f.severity, f.offset))
            .collect::<Vec<_>>()
    };
    // Without the log start, batches 0..477 of epoch 0 and 477..600 of epoch 2 are not covered.
    assert_eq!(
        coverage(&verify(&dir, false)),
        vec![
            ("leader-epoch.coverage", Severity::Error, Some(0)),
            ("leader-epoch.coverage", Severity::Error, Some(477)),
        ]
    );
    std::fs::write(
        tmp.path().join("log-start-offset-checkpoint"),
        "0\n1\norders 0 600\n",
    )
    .unwrap();
    for path in [dir.clone(), tmp.path().to_path_buf()] {
        let r = verify(&path, false);
        assert_eq!(coverage(&r), vec![], "{}", path.display());
        assert_eq!(r.partitions[0].log_start_offset, Some(600));
    }
}

/// The cleaner's checkpoint below a log start that retention moved is what the broker leaves
/// (only cleaning writes it; `LogCleanerManager.cleanableOffsets` resets it): not reported.
/// Past the log end it is a warning (the cleaner starts over from the log start).
#[test]
fn a_cleaner_offset_below_the_log_start_is_normal() {
    let Some((tmp, dir)) = log_start_moved_to_600() else {
        return;
    };
    std::fs::write(
        tmp.path().join("log-start-offset-checkpoint"),
        "0\n1\norders 0 600\n",
    )
    .unwrap();
    // The snapshot below the new log start goes with it, as the broker deletes it.
    std::fs::remove_file(dir.join("00000000000000000317.snapshot")).unwrap();
    let cleaner = tmp.path().join("cleaner-offset-checkpoint");
    std::fs::write(&cleaner, "0\n1\norders 0 0\n").unwrap();
    let r = verify(tmp.path(), false);
    assert_eq!(
        r.findings().count(),
        0,
        "{:?}",
        r.findings().collect::<Vec<_>>()
    );
    std::fs::write(&cleaner, "0\n1\norders 0 5000\n").unwrap();
    let r = verify(tmp.path(), false);
    let got: Vec<_> = r.findings().map(|f| (f.check, f.severity)).collect();
    assert_eq!(got, vec![("checkpoint.cleaner-offset", Severity::Warning)]);
}
