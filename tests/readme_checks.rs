//! Check ids are an interface: scripts match on them. Every id a finding can carry is in the
//! catalog (`kseg::ops::catalog`, what `kseg checks` prints), every id there is one the code
//! emits, and docs/checks.md's table is the catalog's rendering
//! (`KSEG_REGENERATE=1 cargo test --test readme_checks` rewrites it).

use std::path::Path;

use kseg::ops::catalog;

/// Literals of the `word.word` form under `src/ops` that are not check ids.
const NOT_CHECK_IDS: &[&str] = &[
    "cleanup.policy",
    "metadata.version",
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

/// The check-id literals of every source file under `dir` but the catalog itself.
fn walk(dir: &Path, catalog: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, catalog, out);
        } else if p.extension().is_some_and(|x| x == "rs") && p != catalog {
            check_ids(&std::fs::read_to_string(&p).unwrap(), out);
        }
    }
}

#[test]
fn the_catalog_holds_exactly_the_check_ids_the_code_emits() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut emitted = Vec::new();
    // Findings are made in the operations layer only.
    walk(
        &root.join("src/ops"),
        &root.join("src/ops/catalog.rs"),
        &mut emitted,
    );
    emitted.sort();
    emitted.dedup();
    // A broken scan would pass vacuously: ids of every kind of file must be found.
    for known in [
        "batch.crc",
        "log.torn-tail",
        "txnindex.missing",
        "snapshot.content",
        "ls.duplicate",
    ] {
        assert!(
            emitted.iter().any(|i| i == known),
            "{known} not found in src/ops"
        );
    }
    let missing: Vec<&String> = emitted
        .iter()
        .filter(|id| catalog::find(id).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "emitted but not in src/ops/catalog.rs: {missing:?}"
    );
    let unused: Vec<&str> = catalog::ids()
        .filter(|id| !emitted.iter().any(|e| e == id))
        .collect();
    assert!(
        unused.is_empty(),
        "in src/ops/catalog.rs but emitted nowhere: {unused:?}"
    );
}

#[test]
fn readme_check_table_is_the_catalog() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/checks.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let table = catalog::markdown_table();
    let heading = table.lines().next().unwrap();
    let start = readme
        .find(&format!("{heading}\n"))
        .expect("docs/checks.md has the check table's heading");
    // The table runs to the first line that is not a table row.
    let len = readme[start..]
        .split_inclusive('\n')
        .take_while(|l| l.starts_with('|'))
        .map(str::len)
        .sum::<usize>();
    let shown = &readme[start..start + len];
    if std::env::var_os("KSEG_REGENERATE").is_some() {
        let updated = format!("{}{table}{}", &readme[..start], &readme[start + len..]);
        std::fs::write(&path, updated).unwrap();
    } else {
        assert!(
            shown == table,
            "docs/checks.md's check table is not src/ops/catalog.rs's; run KSEG_REGENERATE=1 cargo test --test readme_checks"
        );
    }
}
