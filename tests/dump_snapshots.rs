//! Snapshot tests of kseg's text output: `kseg dump` for every kind of file, and the tables
//! and repair reports at 80 columns, over the bundled fixtures and the reference corpus'
//! `g-corrupt-middle`. A change in output shows up as a diff against `tests/snapshots/`;
//! `KSEG_REGENERATE=1 cargo test --test dump_snapshots` rewrites them after an intended change.

use std::path::PathBuf;
use std::process::Command;

fn check(name: &str, args: &[&str]) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .current_dir(&root)
        // Tables fit $COLUMNS: fixed here, so that the caller's terminal does not matter.
        .env("COLUMNS", "80")
        // A repair's dry run states the free space: fixed here (the test hook), as the machine's varies.
        .env("KSEG_TEST_FREE_BYTES", "1000000000000")
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "$ kseg {}\n--- stdout\n{}--- stderr\n{}--- exit status {}\n",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        out.status.code().unwrap()
    );
    let path = root.join("tests/snapshots").join(format!("{name}.txt"));
    if std::env::var_os("KSEG_REGENERATE").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        want == text,
        "{name}: output differs from {}:\n{text}",
        path.display()
    );
}

#[test]
fn every_file_kind() {
    // .log (with records, control batches, four codecs), .index, .timeindex, .txnindex,
    // .snapshot, leader-epoch-checkpoint, partition.metadata.
    check(
        "payments-deep",
        &["dump", "--deep-iteration", "testdata/payments/payments-0"],
    );
    // Legacy v0/v1 message sets and compressed wrappers, with data.
    check(
        "legacy-print-data",
        &["dump", "--print-data-log", "testdata/legacy/legacy-0"],
    );
    // A crashed broker's partition: torn tail, zero-filled index tails.
    check("crashed", &["dump", "testdata/crashed/crashed-0"]);
    check(
        "crashed-sanity",
        &[
            "dump",
            "--index-sanity-check",
            "testdata/crashed/crashed-0/00000000000000000054.index",
            "testdata/crashed/crashed-0/00000000000000000054.timeindex",
        ],
    );
    check(
        "orders-json",
        &[
            "dump",
            "--jsonl",
            "--print-data-log",
            "--value-format",
            "hex",
            "testdata/orders/orders-0/00000000000000000175.log",
        ],
    );
}

#[test]
fn tables_and_reports_at_80_columns() {
    // kafka-dump-log's lines with readable times instead of epoch milliseconds.
    check(
        "orders-rfc3339",
        &[
            "dump",
            "--deep-iteration",
            "--time-format",
            "rfc3339",
            "testdata/orders/orders-0/00000000000000000175.log",
        ],
    );
    check(
        "retention-80",
        &[
            "retention",
            "--now",
            "2026-01-05T00:00:00Z",
            "--retention-ms",
            "345600000",
            "testdata/orders/orders-0",
        ],
    );
    check("verify-80", &["verify", "--deep", "testdata/crashed"]);
    check(
        "compact-80",
        &[
            "compact",
            "--now",
            "2026-01-05T00:00:00Z",
            "testdata/orders/orders-0",
        ],
    );
    check(
        "recover-g-corrupt-middle",
        &[
            "recover",
            "--remains",
            "../shared/reference/g-corrupt-middle/input/orders-0",
        ],
    );
}
