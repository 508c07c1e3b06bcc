//! Files are judged with their segment (issue 12, item 2): for partition directories the
//! writer makes, damaged or not, `verify DIR`, `verify DIR/*` and `verify` of each segment's
//! files (with, for the rest, the files of no segment) give the same findings.

mod common;

use std::path::{Path, PathBuf};

use kseg::ops::check::verify::{verify_paths, VerifyOptions};
use kseg::ops::write::spec::{write_spec, Spec};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Every finding of a run, as text, sorted: a set to compare.
fn findings(paths: &[PathBuf]) -> Vec<String> {
    let r = verify_paths(paths, &VerifyOptions::default(), &|_| {}).unwrap();
    let mut out: Vec<String> = r.findings().map(|f| format!("{f:?}")).collect();
    out.sort();
    out
}

fn stem(p: &Path) -> String {
    let name = p.file_name().unwrap().to_string_lossy().into_owned();
    name.split('.').next().unwrap().to_owned()
}

/// `segments` segments of `appends` appends each, with `damage` applied.
fn spec(segments: usize, appends: usize, damage: Value) -> Value {
    let mut ops = Vec::new();
    for s in 0..segments {
        if s > 0 {
            ops.push(json!({"op": "roll"}));
        }
        for a in 0..appends {
            let seed = (s * 10 + a) as u64;
            ops.push(json!({"op": "append", "batches": [{"gen": {"count": 2, "value_len": 16, "seed": seed}}]}));
        }
    }
    json!({
        "topic": "t", "partition": 0, "start_ts": 1000,
        "config": {"index.interval.bytes": 1, "segment.index.bytes": 1000},
        "ops": ops,
        "damage": damage
    })
}

/// A damage of segment `segment` (an index into the segments, -1 the last).
fn damage(kind: usize, segment: i64) -> Value {
    match kind {
        0 => json!([]),
        1 => json!([{"kind": "flip_byte", "segment_index": segment, "batch": 0, "at": 20}]),
        2 => json!([{"kind": "delete", "segment_index": segment, "ext": "index"}]),
        3 => json!([{"kind": "delete", "segment_index": segment, "ext": "timeindex"}]),
        4 => json!([{"kind": "preallocate", "segment_index": segment, "ext": "index"}]),
        5 => json!([{"kind": "delete", "segment_index": segment, "ext": "log"}]),
        _ => {
            json!([{"kind": "swap_entries", "segment_index": segment, "ext": "index", "entries": [0, 1]}])
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn a_directory_its_glob_and_its_segments_give_the_same_findings(
        segments in 1usize..4,
        appends in 3usize..5,
        kind in 0usize..7,
        segment in -1i64..1,
    ) {
        let spec = Spec::from_json(&spec(segments, appends, damage(kind, segment)).to_string()).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t-0");
        write_spec(&spec, &dir).unwrap();
        let whole = findings(std::slice::from_ref(&dir));
        let all = common::listing(&dir);
        prop_assert_eq!(&findings(&all), &whole);
        // Each segment's files: those of its base offset's stem; the rest together.
        let mut stems: Vec<String> = all
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e != "snapshot"))
            .map(|f| stem(f))
            .filter(|s| s.len() == 20)
            .collect();
        stems.dedup();
        let mut union = Vec::new();
        for s in &stems {
            let group: Vec<PathBuf> = all.iter().filter(|f| stem(f) == *s).cloned().collect();
            union.extend(findings(&group));
        }
        let rest: Vec<PathBuf> = all.iter().filter(|f| !stems.contains(&stem(f))).cloned().collect();
        if !rest.is_empty() {
            union.extend(findings(&rest));
        }
        union.sort();
        prop_assert_eq!(union, whole);
    }
}
