//! Shell completions and the man page are generated from the clap definition, never written
//! by hand. This test fails when the committed files drift from the CLI;
//! `KSEG_REGENERATE=1 cargo test --test generated_files` rewrites them.

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::Shell;

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
        clap_complete::generate(shell, &mut kseg::cli::Cli::command(), "kseg", &mut out);
        check_or_write(&root.join("completions").join(file), &out, &mut stale);
    }
    // `kseg help` stays a command, but a man page of its own it has not.
    let cmd = kseg::cli::Cli::command().disable_help_subcommand(true);
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut out).unwrap();
    check_or_write(&root.join("man").join("kseg.1"), &out, &mut stale);
    for sub in cmd.get_subcommands() {
        let mut out = Vec::new();
        // clap wants a 'static name; leaking a few bytes in a test is fine.
        let name: &'static str = Box::leak(format!("kseg-{}", sub.get_name()).into_boxed_str());
        // The page is kseg-dump(1); its synopsis is the command as typed, `kseg dump`.
        let typed = format!("kseg {}", sub.get_name());
        clap_mangen::Man::new(sub.clone().name(name).bin_name(typed))
            .render(&mut out)
            .unwrap();
        check_or_write(
            &root.join("man").join(format!("{name}.1")),
            &out,
            &mut stale,
        );
    }
    assert!(
        stale.is_empty(),
        "generated files are stale: {stale:?}; run KSEG_REGENERATE=1 cargo test --test generated_files"
    );
}
