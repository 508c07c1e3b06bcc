//! Every example `--help` and the man pages show (`kseg::cli::manual::PAGES`) runs: those on
//! testdata/ are run from a copy of the repository's testdata/ and must end with the exit
//! status the table gives; those naming a broker's paths are only shown, and must say so by
//! having no status. Every subcommand has 2 to 4 examples, and its `--help` ends with them.

use std::path::Path;
use std::process::Command;

use kseg::cli::manual::PAGES;

#[test]
fn every_runnable_example_exits_as_its_table_says() {
    let tmp = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut ran = 0;
    let mut wrong = Vec::new();
    for p in PAGES {
        for e in p.examples {
            let words: Vec<&str> = e.line.split(' ').collect();
            assert_eq!(words[0], "kseg", "{}", e.line);
            let Some(status) = e.status else {
                assert!(
                    !e.line.contains("testdata/"),
                    "{}: an example on testdata/ is run",
                    e.line
                );
                continue;
            };
            // A fresh copy for each: examples that write must not see each other's output.
            let cwd = tmp.path().join(format!("{ran}"));
            std::fs::create_dir_all(&cwd).unwrap();
            let copied = Command::new("cp")
                .args(["-r", "--"])
                .arg(root.join("testdata"))
                .arg(&cwd)
                .status()
                .unwrap();
            assert!(copied.success(), "cp -r testdata");
            let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
                .args(&words[1..])
                .current_dir(&cwd)
                .output()
                .unwrap();
            if out.status.code() != Some(i32::from(status)) {
                wrong.push(format!(
                    "{}: exit status {:?}, not {status}: {}",
                    e.line,
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            ran += 1;
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // Most examples run: a table of unrunnable ones would pass vacuously.
    assert!(ran >= 35, "only {ran} examples ran");
}

#[test]
fn every_subcommand_ends_its_help_with_examples() {
    let cmd = kseg::cli::command();
    for sub in cmd.get_subcommands() {
        let page = PAGES
            .iter()
            .find(|p| p.name == sub.get_name())
            .unwrap_or_else(|| panic!("{}: no examples", sub.get_name()));
        assert!(
            (2..=4).contains(&page.examples.len()),
            "{}: {} examples",
            sub.get_name(),
            page.examples.len()
        );
        let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
            .args([sub.get_name(), "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        let last = page.examples.last().unwrap().line;
        assert!(
            help.trim_end().ends_with(last),
            "{} --help does not end with its examples",
            sub.get_name()
        );
    }
}
