//! Output polish (issue #37): `--format tsv` as the long form of `--tsv`, sizes in binary
//! units or exact with `--bytes`, and colour on a real terminal (run under `script`, a
//! pseudo-terminal from util-linux) but not in a pipe, `NO_COLOR` or `--color never`.

mod common;

use std::path::Path;
use std::process::Command;

const KSEG: &str = env!("CARGO_BIN_EXE_kseg");
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";

fn stdout(args: &[&str]) -> (i32, String) {
    let out = common::kseg(args);
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn format_tsv_is_the_tsv_flag() {
    let dir = "testdata/orders/orders-0";
    let (code, long) = stdout(&["verify", "--format", "tsv", dir]);
    assert_eq!(code, 0, "{long}");
    let (code, short) = stdout(&["verify", "--tsv", dir]);
    assert_eq!(code, 0, "{short}");
    assert_eq!(long, short);
    let lines: Vec<&str> = long.lines().collect();
    assert_eq!(
        lines[0].split('\t').collect::<Vec<_>>(),
        [
            "partition",
            "segs",
            "batches",
            "records",
            "bytes",
            "start",
            "end",
            "errors",
            "warns"
        ]
    );
    let row: Vec<&str> = lines[1].split('\t').collect();
    assert_eq!(row.len(), 9, "{long}");
    assert_eq!(row[0], "orders-0");
    assert!(!long.contains('│'), "no box in TSV: {long}");
    // The table form differs: boxed.
    let (_, table) = stdout(&["verify", "--format", "table", dir]);
    assert!(table.contains('│'), "{table}");
    let out = common::kseg(&["verify", "--format", "tsv", "--json", dir]);
    assert_eq!(out.status.code(), Some(2), "--json conflicts with --format");
}

#[test]
fn sizes_are_binary_units_or_exact_with_bytes() {
    let dir = Path::new("testdata/orders/orders-0");
    // A second reader of the size checked: the files themselves.
    let total: u64 = common::files_under(dir)
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    assert!(total > 1024, "{total}");
    let (_, human) = stdout(&["verify", dir.to_str().unwrap()]);
    let kib = format!("{:.1} KiB checked", total as f64 / 1024.0);
    assert!(human.contains(&kib), "{kib} in {human}");
    let (_, exact) = stdout(&["verify", "--bytes", dir.to_str().unwrap()]);
    assert!(exact.contains(&format!(" {total} checked")), "{exact}");
    let (_, ls) = stdout(&["ls", "--bytes", dir.to_str().unwrap()]);
    assert!(!ls.contains("KiB"), "--bytes: no binary units: {ls}");
    // A dry run's change list follows the same flag: the torn segment's sizes, read from
    // the file itself, in both forms.
    let log = Path::new("testdata/crashed/crashed-0/00000000000000000054.log");
    let len = std::fs::metadata(log).unwrap().len();
    let (_, plan) = stdout(&["recover", "testdata/crashed"]);
    let human = format!("({:.1} KiB -> ", len as f64 / 1024.0);
    assert!(plan.contains(&human), "{human} in {plan}");
    let (_, plan) = stdout(&["recover", "--bytes", "testdata/crashed"]);
    assert!(plan.contains(&format!("({len} -> ")), "{len} in {plan}");
    assert!(!plan.contains("KiB"), "--bytes: no binary units: {plan}");
}

/// `kseg ARGS` on a pseudo-terminal (stdout and stderr both), with `env` set: all it wrote.
fn on_terminal(args: &str, env: &[(&str, &str)]) -> String {
    let out = Command::new("script")
        .args(["-qec", &format!("'{KSEG}' {args}"), "/dev/null"])
        .env_remove("NO_COLOR")
        .envs(env.iter().copied())
        .output()
        .expect("`script` (util-linux) runs kseg on a pseudo-terminal");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn colour_on_a_terminal_only() {
    let crashed = "verify testdata/crashed";
    let tty = on_terminal(crashed, &[]);
    assert!(
        tty.contains(&format!("{RED}error[log.torn-tail]")),
        "{tty:?}"
    );
    assert!(
        tty.contains(&format!("{YELLOW}warning[index.untrimmed]")),
        "{tty:?}"
    );
    let missing = on_terminal("verify /nonexistent-kseg-path", &[]);
    assert!(missing.contains(&format!("{RED}error:")), "{missing:?}");

    for (what, text) in [
        ("NO_COLOR=1", on_terminal(crashed, &[("NO_COLOR", "1")])),
        (
            "--color never",
            on_terminal("verify --color never testdata/crashed", &[]),
        ),
        (
            "--color never, error",
            on_terminal("verify --color never /nonexistent-kseg-path", &[]),
        ),
    ] {
        assert!(!text.contains('\x1b'), "{what}: {text:?}");
        assert!(text.contains("error"), "{what}: {text:?}");
    }

    let pipe = common::kseg(&["verify", "testdata/crashed"]);
    let text = String::from_utf8(pipe.stdout).unwrap() + &String::from_utf8(pipe.stderr).unwrap();
    assert!(text.contains("error[log.torn-tail]"), "{text}");
    assert!(!text.contains('\x1b'), "a pipe: {text:?}");

    let always = common::kseg(&["verify", "--color", "always", "testdata/crashed"]);
    let text = String::from_utf8(always.stdout).unwrap();
    assert!(
        text.contains(&format!("{RED}error[log.torn-tail]")),
        "{text:?}"
    );
    assert!(
        text.contains(&format!("{YELLOW}warning[index.untrimmed]")),
        "{text:?}"
    );
    let always = common::kseg(&["verify", "--color", "always", "/nonexistent-kseg-path"]);
    let text = String::from_utf8(always.stderr).unwrap();
    assert!(text.contains(&format!("{RED}error:\x1b[0m")), "{text:?}");
}
