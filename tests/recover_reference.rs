//! Recovery agrees with Kafka's: `LogLoader.load()` after an unclean shutdown, then a clean
//! close, on every scenario of the reference corpus.

mod common;

use std::path::Path;

use kseg::storage::{CloseMode, LoadParams, Log, LogConfig};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        std::fs::copy(e.path(), &dst).unwrap();
        let mut perm = std::fs::metadata(&dst).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perm.set_readonly(false);
        std::fs::set_permissions(&dst, perm).unwrap();
    }
}

fn differences(got: &Path, want: &Path) -> Vec<String> {
    let names = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let (g, w) = (names(got), names(want));
    let mut out = Vec::new();
    for n in &w {
        if !g.contains(n) {
            out.push(format!("missing {n}"));
        } else if std::fs::read(got.join(n)).unwrap() != std::fs::read(want.join(n)).unwrap() {
            out.push(format!(
                "differs {n} ({} vs {} bytes)",
                std::fs::metadata(got.join(n)).unwrap().len(),
                std::fs::metadata(want.join(n)).unwrap().len()
            ));
        }
    }
    for n in &g {
        if !w.contains(n) {
            out.push(format!("extra {n}"));
        }
    }
    out
}

fn config(expected: &serde_json::Value) -> LogConfig {
    let p = &expected["params"];
    LogConfig {
        segment_bytes: p["segment.bytes"].as_u64().unwrap(),
        index_interval_bytes: p["index.interval.bytes"].as_u64().unwrap(),
        segment_index_bytes: p["segment.index.bytes"].as_u64().unwrap(),
        ..LogConfig::default()
    }
}

#[test]
fn engine_load_and_clean_close_match_kafka() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let mut failures = Vec::new();
    for s in common::scenarios(&root) {
        let expected: serde_json::Value =
            serde_json::from_slice(&std::fs::read(s.join("expected-recover-closed.json")).unwrap())
                .unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("orders-0");
        copy_dir(&s.join("input/orders-0"), &dir);
        let params = LoadParams {
            had_clean_shutdown: false,
            recovery_point: 0,
            log_start_offset: 0,
            now_ms: expected["params"]["nowMs"].as_i64().unwrap(),
            producer_id_expiration_ms: 86_400_000,
        };
        let (log, report) = Log::load(&dir, config(&expected), params).unwrap();
        assert_eq!(
            report.log_end_offset,
            expected["logEndOffset"].as_i64().unwrap()
        );
        log.close(CloseMode::Clean).unwrap();
        let d = differences(&dir, &s.join("expected-recovered-closed/orders-0"));
        if !d.is_empty() {
            failures.push(format!("{}: {d:?}", s.display()));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
