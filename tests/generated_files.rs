//! Shell completions and the man page are generated from the clap definition, never written
//! by hand. This test fails when the committed files drift from the CLI;
//! `KSEG_REGENERATE=1 cargo test --test generated_files` rewrites them.

use std::path::{Path, PathBuf};

use clap_complete::Shell;
use kseg::cli::manual::{page, ENVIRONMENT, EXIT_STATUSES};

fn check_or_write(path: &Path, content: &[u8], stale: &mut Vec<PathBuf>) {
    if std::env::var_os("KSEG_REGENERATE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    } else if std::fs::read(path).ok().as_deref() != Some(content) {
        stale.push(path.to_path_buf());
    }
}

#[test]
fn completions_and_man_pages_match_the_cli() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut stale = Vec::new();
    for (shell, file) in [
        (Shell::Bash, "kseg.bash"),
        (Shell::Zsh, "_kseg"),
        (Shell::Fish, "kseg.fish"),
    ] {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut kseg::cli::command(), "kseg", &mut out);
        check_or_write(&root.join("completions").join(file), &out, &mut stale);
    }
    // `kseg help` stays a command, but a man page of its own it has not.
    let cmd = kseg::cli::command().disable_help_subcommand(true);
    check_or_write(
        &root.join("man").join("kseg.1"),
        &man_page(cmd.clone(), ""),
        &mut stale,
    );
    for sub in cmd.get_subcommands() {
        // clap wants a 'static name; leaking a few bytes in a test is fine.
        let name: &'static str = Box::leak(format!("kseg-{}", sub.get_name()).into_boxed_str());
        // The page is kseg-dump(1); its synopsis is the command as typed, `kseg dump`.
        let typed = format!("kseg {}", sub.get_name());
        check_or_write(
            &root.join("man").join(format!("{name}.1")),
            &man_page(sub.clone().name(name).bin_name(typed), sub.get_name()),
            &mut stale,
        );
    }
    assert!(
        stale.is_empty(),
        "generated files are stale: {stale:?}; run KSEG_REGENERATE=1 cargo test --test generated_files"
    );
}

/// `text` escaped for roff: backslashes and dashes, and a leading dot or quote.
fn roff(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    match t.starts_with(['.', '\'']) {
        true => format!("\\&{t}"),
        false => t,
    }
}

/// The page of `cmd` (`page_name` its subcommand, "" for kseg): clap_mangen's sections, its
/// notes (`after_help`) as NOTES, then EXAMPLES, EXIT STATUS, ENVIRONMENT and SEE ALSO from
/// `kseg::cli::manual`, the tables `--help` shows too.
fn man_page(cmd: clap::Command, page_name: &str) -> Vec<u8> {
    let p = page(page_name).unwrap_or_else(|| panic!("no examples for `{page_name}`"));
    // The examples have a section of their own here, not the end of the help text.
    let notes = cmd.get_after_help().is_some();
    let cmd = cmd.after_long_help(None::<&str>);
    let man = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    man.render_title(&mut out).unwrap();
    man.render_name_section(&mut out).unwrap();
    man.render_synopsis_section(&mut out).unwrap();
    man.render_description_section(&mut out).unwrap();
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out).unwrap();
    }
    if cmd.has_subcommands() {
        man.render_subcommands_section(&mut out).unwrap();
    }
    if notes {
        let mut extra = Vec::new();
        man.render_extra_section(&mut extra).unwrap();
        out.extend(
            String::from_utf8(extra)
                .unwrap()
                .replacen(".SH EXTRA", ".SH NOTES", 1)
                .bytes(),
        );
    }
    let mut t = String::from(".SH EXAMPLES\n");
    for e in p.examples {
        t += &format!(".TP\n\\fB{}\\fR\n{}\n", roff(e.line), roff(e.task));
    }
    t += ".SH \"EXIT STATUS\"\n";
    for (code, meaning) in EXIT_STATUSES {
        t += &format!(".TP\n\\fB{code}\\fR\n{}\n", roff(meaning));
    }
    t += ".SH ENVIRONMENT\n";
    for (var, meaning) in ENVIRONMENT {
        t += &format!(".TP\n\\fB{var}\\fR\n{}\n", roff(meaning));
    }
    let see: Vec<String> = p
        .see_also
        .iter()
        .map(|s| format!("\\fB{}\\fR(1)", roff(s)))
        .collect();
    t += &format!(".SH \"SEE ALSO\"\n{}\n", see.join(", "));
    out.extend(t.bytes());
    if cmd.get_version().is_some() {
        man.render_version_section(&mut out).unwrap();
    }
    out
}
