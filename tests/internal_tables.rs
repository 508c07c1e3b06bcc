//! The internal-record schema tables are generated from Kafka's message definitions
//! (testdata/kafka-messages/, pinned by MANIFEST). This test reruns the generator and fails on
//! any difference from the committed src/format/internal/tables.rs (or a changed definition).

use std::process::Command;

#[test]
fn generated_tables_match_the_pinned_definitions() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/scripts/gen_internal_tables.py"))
        .arg("--check")
        .output()
        .expect("python3 runs the table generator");
    assert!(
        out.status.success(),
        "generator: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
