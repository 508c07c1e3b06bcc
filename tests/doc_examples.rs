//! Every command README.md and docs/ show in a `console` block runs here, and what it prints
//! (standard output, then standard error) must be what the page shows, so no example
//! can go stale or name a path that does not exist. A page's examples run in a scratch directory where
//! `testdata/` is the bundled fixtures and `reference/` the reference corpus
//! (`../shared/reference`). `KSEG_REGENERATE=1 cargo test --test doc_examples` rewrites the
//! pages' outputs after an intended change; review the diff.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// One `$ command` of a page and the lines the page shows after it.
struct Example {
    /// Line number (0-based) of the command's first line in the page.
    line: usize,
    /// The command, continuation lines joined as the shell reads them.
    command: String,
    /// Where the shown output starts and ends (0-based, end exclusive).
    output: std::ops::Range<usize>,
}

/// A fenced `console` block.
struct Block {
    examples: Vec<Example>,
}

fn blocks(lines: &[&str]) -> Vec<Block> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() != "```console" {
            i += 1;
            continue;
        }
        i += 1;
        let mut examples: Vec<Example> = Vec::new();
        while i < lines.len() && !lines[i].starts_with("```") {
            if let Some(first) = lines[i].strip_prefix("$ ") {
                let line = i;
                let mut command = first.to_string();
                // A line ending in `\` or a pipe goes on on the next one, as in the shell.
                while (command.ends_with('\\') || command.ends_with('|')) && i + 1 < lines.len() {
                    i += 1;
                    command.push('\n');
                    command.push_str(lines[i]);
                }
                // A here-document (`<<'EOF'`) is part of the command, up to its `EOF` line.
                if command.contains("<<'EOF'") {
                    while i + 1 < lines.len() && lines[i] != "EOF" {
                        i += 1;
                        command.push('\n');
                        command.push_str(lines[i]);
                    }
                }
                examples.push(Example {
                    line,
                    command,
                    output: i + 1..i + 1,
                });
            } else if let Some(last) = examples.last_mut() {
                last.output.end = i + 1;
            } else {
                panic!("line {}: output before any `$ ` command", i + 1);
            }
            i += 1;
        }
        assert!(
            !examples.is_empty(),
            "a console block without a `$ ` command"
        );
        out.push(Block { examples });
        i += 1;
    }
    out
}

/// README.md and every page of docs/.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    pages.insert(0, root.join("README.md"));
    pages
}

/// The exit status an example declares with a trailing `# exit N`; 0 or 1 otherwise (an example
/// exiting 2 names something that is not there).
fn declared_status(command: &str) -> Option<i32> {
    command
        .rsplit_once("# exit ")
        .and_then(|(_, n)| n.trim().parse().ok())
}

/// A scratch directory where the pages' relative paths resolve.
fn scratch(root: &Path, corpus: Option<&Path>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root.join("testdata"), dir.path().join("testdata")).unwrap();
    if let Some(reference) = corpus {
        std::os::unix::fs::symlink(reference, dir.path().join("reference")).unwrap();
    }
    dir
}

fn run(example: &Example, cwd: &Path) -> (Option<i32>, String) {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_kseg"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(&example.command)
        .current_dir(cwd)
        .env("PATH", path)
        .env("TZ", "UTC")
        .env("NO_COLOR", "1")
        // A repair's dry run states the free space: fixed (the test hook), as the machine's varies.
        .env("KSEG_TEST_FREE_BYTES", "1000000000000")
        .env_remove("COLUMNS")
        .env_remove("KSEG_PROGRESS")
        .output()
        .unwrap();
    // Standard error after standard output: interleaving them is not deterministic where a
    // pipe (`| head`) stands between kseg and the page.
    let mut printed = String::from_utf8_lossy(&out.stdout).into_owned();
    printed.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code(), printed)
}

#[test]
fn every_example_of_the_pages_runs_and_prints_what_the_page_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let regenerate = std::env::var_os("KSEG_REGENERATE").is_some();
    let mut failures = Vec::new();
    let mut ran = 0;
    for page in pages(root) {
        let text = std::fs::read_to_string(&page).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let name = page.strip_prefix(root).unwrap().display().to_string();
        let mut rewritten: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        // Replacements of output ranges, applied from the last so earlier ranges stay valid.
        let mut replacements: Vec<(std::ops::Range<usize>, Vec<String>)> = Vec::new();
        // The page's examples run in order in one scratch directory: a later block may use
        // what an earlier one wrote.
        let examples: Vec<Example> = blocks(&lines)
            .into_iter()
            .flat_map(|b| b.examples)
            .collect();
        let corpus = if examples.iter().any(|e| e.command.contains("reference/")) {
            match common::reference_dir() {
                Some(c) => Some(c),
                None => continue,
            }
        } else {
            None
        };
        let dir = scratch(root, corpus.as_deref());
        {
            for example in &examples {
                ran += 1;
                let (status, printed) = run(example, dir.path());
                let at = format!("{name}:{}: `{}`", example.line + 1, example.command);
                let status_ok = match declared_status(&example.command) {
                    Some(n) => status == Some(n),
                    None => matches!(status, Some(0 | 1)),
                };
                if !status_ok {
                    failures.push(format!("{at}: exit status {status:?}\n{printed}"));
                    continue;
                }
                let shown = lines[example.output.clone()].join("\n");
                let printed = printed.trim_end_matches('\n');
                if shown != printed {
                    if regenerate {
                        replacements.push((
                            example.output.clone(),
                            printed.lines().map(str::to_string).collect(),
                        ));
                    } else {
                        failures.push(format!(
                            "{at}: the page shows\n{shown}\n--- but it prints\n{printed}"
                        ));
                    }
                }
            }
        }
        if !replacements.is_empty() {
            for (range, new) in replacements.into_iter().rev() {
                rewritten.splice(range, new);
            }
            std::fs::write(&page, rewritten.join("\n") + "\n").unwrap();
        }
    }
    // The README alone shows a dozen: a broken parser must not pass vacuously.
    assert!(ran >= 12, "only {ran} example(s) found");
    assert!(
        failures.is_empty(),
        "{} of {ran} example(s) failed (KSEG_REGENERATE=1 rewrites the outputs):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_readme_is_short_and_every_fence_is_closed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for page in pages(root) {
        let text = std::fs::read_to_string(&page).unwrap();
        let fences = text.lines().filter(|l| l.starts_with("```")).count();
        assert_eq!(
            fences % 2,
            0,
            "{}: a code fence is never closed",
            page.display()
        );
    }
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 300, "README.md has {lines} lines, at most 300");
}
