//! Every check id a finding can carry is documented in docs/checks.md's table: scripts match
//! on these ids, so an undocumented one is an interface nobody can rely on.

use std::path::Path;

/// Literals of the `word.word` form under `src/ops` that are not check ids.
const NOT_CHECK_IDS: &[&str] = &[
    "cleanup.policy",
    "plan.json",
    "salvage.json",
    "retention.bytes",
    "retention.ms",
    "segment.bytes",
    "segment.ms",
];

/// String literals of `source` that look like check ids (`area.what`, lowercase, dashes).
fn check_ids(source: &str, out: &mut Vec<String>) {
    for (i, literal) in source.split('"').enumerate() {
        // Odd pieces are inside quotes (our sources have no escaped quotes around ids).
        let looks_like_id = i % 2 == 1
            && literal.split_once('.').is_some_and(|(area, what)| {
                let part = |s: &str| {
                    s.starts_with(|c: char| c.is_ascii_lowercase())
                        && s.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                };
                part(area) && part(what)
            });
        if looks_like_id && !NOT_CHECK_IDS.contains(&literal) {
            out.push(literal.to_string());
        }
    }
}

fn walk(dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            check_ids(&std::fs::read_to_string(&p).unwrap(), out);
        }
    }
}

#[test]
fn every_check_id_is_in_the_readme_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("docs/checks.md")).unwrap();
    let mut ids = Vec::new();
    walk(&root.join("src/ops"), &mut ids);
    ids.sort();
    ids.dedup();
    // The ids of the verify table must be found at all: a broken scan passes vacuously.
    for known in [
        "batch.crc",
        "log.torn-tail",
        "txnindex.missing",
        "snapshot.content",
    ] {
        assert!(
            ids.iter().any(|i| i == known),
            "{known} not found in src/ops"
        );
    }
    let table_rows: Vec<&str> = readme.lines().filter(|l| l.starts_with("| `")).collect();
    let missing: Vec<&String> = ids
        .iter()
        .filter(|id| {
            !table_rows
                .iter()
                .any(|row| row.contains(&format!("`{id}`")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "not in docs/checks.md's table: {missing:?}"
    );
}
