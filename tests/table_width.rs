//! Tables within the width (issue 37): every command's table over testdata, fitted to 60, 80,
//! 100 and 200 columns through the one renderer: no table line wider than asked, every
//! number, range and timestamp of the full table (`--tsv`) shown whole, and every column left
//! out named on stderr.

mod common;

use std::path::Path;

/// The commands that print tables, over testdata (relative to the crate root).
const COMMANDS: &[&[&str]] = &[
    &["verify", "--deep", "testdata/crashed"],
    &[
        "verify",
        "testdata/orders",
        "testdata/payments",
        "testdata/legacy",
    ],
    &["ls", "testdata/orders"],
    &["ls", "testdata/payments"],
    &[
        "stats",
        "--now",
        "2026-01-05T00:00:00Z",
        "testdata/orders/orders-0",
    ],
    &[
        "compact",
        "--now",
        "2026-01-05T00:00:00Z",
        "testdata/orders/orders-0",
    ],
    &[
        "retention",
        "--now",
        "2026-01-05T00:00:00Z",
        "--retention-ms",
        "86400000",
        "testdata/orders/orders-0",
    ],
    &[
        "txns",
        "--now",
        "2026-01-05T00:00:00Z",
        "testdata/payments/payments-0",
    ],
];

fn run(args: &[&str], extra: &[&str]) -> (String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("COLUMNS")
        .args(args)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.code().unwrap_or(9) < 2,
        "{args:?} {extra:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A table line: one drawn by the renderer (box characters) or a block's `header: value`.
fn is_table_line(l: &str) -> bool {
    l.starts_with(['┌', '│', '╞', '└'])
}

#[test]
fn every_table_fits_the_width_without_breaking_values() {
    assert!(Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/payments/payments-0")
        .is_dir());
    for args in COMMANDS {
        let (tsv, _) = run(args, &["--tsv"]);
        let tables: Vec<Vec<Vec<String>>> = tsv.lines().filter(|l| l.contains('\t')).fold(
            Vec::new(),
            |mut acc: Vec<Vec<Vec<String>>>, l| {
                let cells: Vec<String> = l.split('\t').map(str::to_owned).collect();
                // A new table starts where the column count changes or a header repeats.
                match acc.last_mut() {
                    Some(t) if t[0].len() == cells.len() && t[0] != cells => t.push(cells),
                    _ => acc.push(vec![cells]),
                }
                acc
            },
        );
        assert!(!tables.is_empty(), "{args:?} printed no table");
        for width in [60usize, 80, 100, 200] {
            let (text, err) = run(args, &["--width", &width.to_string()]);
            for l in text.lines().filter(|l| is_table_line(l)) {
                assert!(l.chars().count() <= width, "{args:?} at {width}: {l}");
            }
            for t in &tables {
                let header = &t[0];
                for (i, h) in header.iter().enumerate() {
                    // Shown: in a drawn header row, or as a block's `header:` label.
                    let shown = text.lines().any(|l| {
                        l.starts_with(&format!("{h}:"))
                            || (l.starts_with('│') && l.split(['│', '┆']).any(|c| c.trim() == h))
                    });
                    if !shown {
                        assert!(
                            err.contains("left out to fit") && err.contains(h.as_str()),
                            "{args:?} at {width}: column {h:?} neither shown nor announced: {err}"
                        );
                        continue;
                    }
                    // Numbers, ranges and timestamps whole: every value with a digit and no
                    // path in it appears as it is in the full table.
                    for row in &t[1..] {
                        let v = &row[i];
                        if v.contains(" -> ") {
                            assert!(
                                text.contains(v.as_str()),
                                "{args:?} at {width}: {v:?} broken\n{text}"
                            );
                        }
                        let values = v
                            .split(' ')
                            .map(|w| w.trim_matches(|c| "(),;".contains(c)))
                            .filter(|w| {
                                w.contains(|c: char| c.is_ascii_digit()) && !w.contains('/')
                            });
                        for w in values {
                            assert!(
                                text.contains(w),
                                "{args:?} at {width}: {w:?} of {v:?} broken\n{text}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn names_shorten_in_the_middle_and_wide_keeps_every_column() {
    let (tsv, _) = run(&["ls", "testdata/orders"], &["--tsv"]);
    let header: Vec<&str> = tsv
        .lines()
        .find(|l| l.starts_with("directory\t"))
        .unwrap()
        .split('\t')
        .collect();
    assert_eq!(header.len(), 13, "{tsv}");
    let (text, err) = run(&["ls", "testdata/orders"], &["--width", "60", "--wide"]);
    assert!(!err.contains("left out"), "{err}");
    for h in header {
        assert!(text.contains(h), "{h} missing with --wide:\n{text}");
    }
    use kseg::cli::render::{table, Fit};
    let mut t = table(["partition", "records"]);
    t.add_row(["very-long-topic-name-for-the-partition-12", "12345"]);
    t.fit(Fit::Name, &[0]).fit(Fit::Whole, &[1]);
    let l = t.lay_out(Some(30), false);
    assert!(l.dropped.is_empty());
    assert!(
        l.lines.iter().all(|l| l.chars().count() <= 30),
        "{:?}",
        l.lines
    );
    assert!(
        l.lines
            .iter()
            .any(|l| l.contains("very-lon") && l.contains("…") && l.contains("tion-12")),
        "{:?}",
        l.lines
    );
    assert!(l.lines.iter().any(|l| l.contains("12345")));
    // Below what the columns need, one block of `header: value` lines per row.
    let l = t.lay_out(Some(20), false);
    assert!(
        l.lines
            .iter()
            .any(|l| l.starts_with("records:") && l.ends_with("12345")),
        "{:?}",
        l.lines
    );
}
