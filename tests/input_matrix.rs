//! Every subcommand × every shape of input: the exit status each gives and how much it examined
//! (issue #33). The tables name every subcommand clap knows, so a new command fails here until
//! it has its rows.

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::CommandFactory;

const SPEC: &str = r#"{"topic":"orders","partition":0,"ops":[
    {"op":"append","batches":[{"records":[{"key":"k1","value":"v1"},{"key":"k2","value":"v2"}]}]},
    {"op":"append","batches":[{"records":[{"key":"k3","value":"v3"}]}]}]}"#;

/// The shapes, in the order of the table's columns.
const SHAPES: [&str; 17] = [
    "log",
    "index",
    "timeindex",
    "snapshot",
    "leader-epoch-checkpoint",
    "log.deleted",
    "log.swap",
    "partition",
    "log-dir",
    "log-dir-named-kafka-1",
    "dir-of-log-dirs",
    "empty-dir",
    "etc-like",
    "missing",
    "fifo",
    "unreadable",
    "not-kafka-file",
];

/// A command's arguments (`{P}` the path, `{O}` a fresh output directory) and its exit status
/// per shape; None: the command takes no Kafka path.
type Row = (&'static str, Option<&'static [&'static str]>, [i32; 17]);

#[rustfmt::skip]
const TABLE: &[Row] = &[
    //                                                   log idx tix snp lec del swp prt ldr k-1 lds emp etc mis ffo unr nkf
    ("dump", Some(&["dump", "{P}"]),                    [0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  2,  2,  2,  2,  2,  2]),
    ("verify", Some(&["verify", "-q", "{P}"]),          [0,  0,  0,  0,  0,  2,  0,  0,  0,  0,  1,  2,  2,  2,  2,  2,  2]),
    ("write", None,                                     [0; 17]),
    ("rebuild-index", Some(&["rebuild-index", "{P}"]), [0,  0,  0,  2,  2,  2,  2,  0,  0,  0,  0,  2,  2,  2,  2,  2,  2]),
    ("recover", Some(&["recover", "{P}"]),              [2,  2,  2,  2,  2,  2,  2,  0,  0,  0,  0,  2,  2,  2,  2,  2,  2]),
    ("retention", Some(&["retention", "{P}"]),          [2,  2,  2,  2,  2,  2,  2,  1,  2,  2,  2,  2,  2,  2,  2,  2,  2]),
    ("compact", Some(&["compact", "{P}"]),              [2,  2,  2,  2,  2,  2,  2,  0,  2,  2,  2,  2,  2,  2,  2,  2,  2]),
    ("offsets", Some(&["offsets", "{P}"]),              [2,  2,  2,  2,  2,  2,  2,  0,  0,  0,  0,  2,  2,  2,  2,  2,  2]),
    ("locate", Some(&["locate", "0", "{P}"]),           [2,  2,  2,  2,  2,  2,  2,  0,  0,  0,  0,  2,  2,  2,  2,  2,  2]),
    ("stats", Some(&["stats", "{P}"]),                  [0,  2,  2,  2,  2,  2,  2,  0,  0,  0,  0,  2,  2,  2,  2,  2,  2]),
    ("txns", Some(&["txns", "{P}"]),                    [2,  2,  2,  2,  2,  2,  2,  0,  0,  0,  0,  2,  2,  2,  2,  2,  2]),
    ("salvage", Some(&["salvage", "--out", "{O}", "{P}"]), [2, 2, 2, 2,  2,  2,  2,  0,  2,  2,  2,  2,  2,  2,  2,  2,  2]),
    ("diff", Some(&["diff", "{P}", "{P}"]),             [2,  2,  2,  2,  2,  2,  2,  0,  0,  0,  2,  2,  2,  2,  2,  2,  2]),
    ("digest", Some(&["digest", "{P}"]),                [2,  2,  2,  2,  2,  2,  2,  0,  0,  0,  2,  2,  2,  2,  2,  2,  2]),
    ("coordinator", None,                               [0; 17]),
    ("ls", Some(&["ls", "{P}"]),                        [2,  2,  2,  2,  2,  2,  2,  2,  0,  0,  1,  2,  2,  2,  2,  2,  2]),
    ("groups", Some(&["groups", "{P}"]),                [2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2]),
    ("metadata", Some(&["metadata", "{P}"]),            [2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2]),
    ("checks", None,                                    [0; 17]),
    ("version", None,                                   [0; 17]),
    // An empty store: no shape has a remote tier there, so nothing is examined.
    ("tiered", Some(&["tiered", "--remote", "{O}", "{P}"]), [2; 17]),
    ("export", Some(&["export", "--out", "{O}", "{P}"]), [2, 2, 2, 2,  2,  2,  2,  0,  0,  0,  2,  2,  2,  2,  2,  2,  2]),
    // --remote naming no store: refused on every shape, never the local log read alone.
    ("dump", Some(&["dump", "--remote", "{O}", "{P}"]), [2; 17]),
    ("verify", Some(&["verify", "--remote", "{O}", "{P}"]), [2; 17]),
    ("stats", Some(&["stats", "--remote", "{O}", "{P}"]), [2; 17]),
    ("digest", Some(&["digest", "--remote", "{O}", "{P}"]), [2; 17]),
    ("offsets", Some(&["offsets", "--remote", "{O}", "{P}"]), [2; 17]),
    ("locate", Some(&["locate", "--remote", "{O}", "0", "{P}"]), [2; 17]),
    ("diff", Some(&["diff", "--remote", "{O}", "{P}", "{P}"]), [2; 17]),
    ("txns", Some(&["txns", "--remote", "{O}", "{P}"]), [2; 17]),
];

/// How a command's output says how much it examined: summed over the JSON documents on stdout,
/// the value at a JSON pointer (a number adds itself, an array its length, anything else 1;
/// `a|b`: the first present; `*` steps into each element of an array), the number of
/// documents, or the number after a marker in its text output.
#[derive(Debug, Clone, Copy)]
enum Count {
    Json(&'static str),
    Documents,
    Text(&'static str),
}

/// What each command examined per shape (0 where it exits 2: nothing), with the flags added
/// after its name so that it says: (command, flags, how it says, count per shape of [`SHAPES`]).
/// The unreadable file's column is what root reads (the three segment files of its partition
/// directory); others read nothing there.
type Counted = (&'static str, &'static [&'static str], Count, [u64; 17]);

#[rustfmt::skip]
const COUNTS: &[Counted] = &[
    // Files: the partition's six (segment, indexes, snapshot, epoch checkpoint, metadata),
    // meta.properties beside them in kafka-1, twice six in the two log dirs.
    //                                                                         log idx tix snp lec del swp prt ldr k-1 lds emp etc mis ffo unr nkf
    ("dump", &["--json"], Count::Json("/fileCount"),                          [1,  1,  1,  1,  1,  1,  1,  6,  6,  7,  12, 0,  0,  0,  0,  1,  0]),
    // verify judges a file with its partition: all six; a `.deleted` named alone is not read
    // (the loader deletes it), a `.log.swap` is read as the segment it becomes.
    ("verify", &["--json"], Count::Json("/checkedFileCount"),                 [6,  6,  6,  6,  6,  0,  1,  6,  6,  7,  12, 0,  0,  0,  0,  3,  0]),
    // Partitions: a report each.
    ("rebuild-index", &["--json"], Count::Documents,                          [1,  1,  1,  0,  0,  0,  0,  1,  1,  1,  2,  0,  0,  0,  0,  1,  0]),
    ("recover", &["--json"], Count::Json("/plans|/dir"),                      [0,  0,  0,  0,  0,  0,  0,  1,  1,  1,  2,  0,  0,  0,  0,  0,  0]),
    ("retention", &["--json"], Count::Documents,                              [0,  0,  0,  0,  0,  0,  0,  1,  0,  0,  0,  0,  0,  0,  0,  0,  0]),
    ("compact", &["--json"], Count::Documents,                                [0,  0,  0,  0,  0,  0,  0,  1,  0,  0,  0,  0,  0,  0,  0,  0,  0]),
    ("offsets", &["--json"], Count::Json("/partitions"),                      [0,  0,  0,  0,  0,  0,  0,  1,  1,  1,  2,  0,  0,  0,  0,  0,  0]),
    ("locate", &["--json"], Count::Documents,                                 [0,  0,  0,  0,  0,  0,  0,  1,  1,  1,  2,  0,  0,  0,  0,  0,  0]),
    // Segments.
    ("stats", &["--json"], Count::Json("/total/segmentCount"),                [1,  0,  0,  0,  0,  0,  0,  1,  1,  1,  2,  0,  0,  0,  0,  1,  0]),
    ("txns", &["--json"], Count::Json("/partitions"),                         [0,  0,  0,  0,  0,  0,  0,  1,  1,  1,  2,  0,  0,  0,  0,  0,  0]),
    ("salvage", &["--json"], Count::Documents,                                [0,  0,  0,  0,  0,  0,  0,  1,  0,  0,  0,  0,  0,  0,  0,  0,  0]),
    // Partitions compared (a path with itself) and hashed.
    ("diff", &["--json"], Count::Json("/partitionCount|/a"),                  [0,  0,  0,  0,  0,  0,  0,  1,  1,  1,  0,  0,  0,  0,  0,  0,  0]),
    ("digest", &["--json"], Count::Json("/partitions|/dir"),                  [0,  0,  0,  0,  0,  0,  0,  1,  1,  1,  0,  0,  0,  0,  0,  0,  0]),
    ("ls", &["--json"], Count::Json("/logDirs/*/totals/partitionCount"),      [0,  0,  0,  0,  0,  0,  0,  0,  1,  1,  2,  0,  0,  0,  0,  0,  0]),
    ("groups", &["--json"], Count::Documents,                                 [0; 17]),
    ("metadata", &["--json"], Count::Documents,                               [0; 17]),
    ("tiered", &["--json"], Count::Documents,                                 [0; 17]),
    // Records: three a partition.
    ("export", &[], Count::Text("exported "),                               [0,  0,  0,  0,  0,  0,  0,  3,  3,  3,  0,  0,  0,  0,  0,  0,  0]),
];

/// The value at `pointer` (see [`Count::Json`]) in `v`.
fn count_at(v: &serde_json::Value, pointer: &str) -> u64 {
    if let Some((head, rest)) = pointer.split_once("/*") {
        return v
            .pointer(head)
            .and_then(|a| a.as_array())
            .map_or(0, |a| a.iter().map(|e| count_at(e, rest)).sum());
    }
    match v.pointer(pointer) {
        None | Some(serde_json::Value::Null) => 0,
        Some(serde_json::Value::Number(n)) => n.as_u64().unwrap(),
        Some(serde_json::Value::Array(a)) => a.len() as u64,
        Some(_) => 1,
    }
}

/// What `count` reads in a command's output.
fn examined(count: Count, stdout: &[u8], stderr: &str) -> u64 {
    let text = String::from_utf8_lossy(stdout) + stderr;
    let docs = || {
        serde_json::Deserializer::from_slice(stdout)
            .into_iter::<serde_json::Value>()
            .map(|d| d.expect("stdout is JSON documents"))
    };
    match count {
        Count::Documents => docs().count() as u64,
        Count::Json(pointers) => docs()
            .map(|d| {
                pointers
                    .split('|')
                    .map(|p| count_at(&d, p))
                    .find(|&n| n > 0)
                    .unwrap_or(0)
            })
            .sum(),
        Count::Text(marker) => text.split_once(marker).map_or(0, |(_, after)| {
            after
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        }),
    }
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Builds every shape under `root`; the path of each, in [`SHAPES`] order.
fn shapes(root: &Path) -> Vec<PathBuf> {
    let logs = root.join("logs");
    let partition = logs.join("orders-0");
    common::kseg_write(SPEC, &partition);
    let kafka_1 = root.join("kafka-1");
    common::kseg_write(SPEC, &kafka_1.join("orders-0"));
    std::fs::write(kafka_1.join("meta.properties"), "version=0\nbroker.id=1\n").unwrap();
    let parent = root.join("var-lib-kafka");
    common::kseg_write(SPEC, &parent.join("data-1").join("orders-0"));
    // The same partition in both: the broker refuses to start.
    common::kseg_write(SPEC, &parent.join("data-2").join("orders-0"));
    let loose = root.join("loose");
    std::fs::create_dir_all(&loose).unwrap();
    let log = partition.join("00000000000000000000.log");
    for suffix in [".deleted", ".swap"] {
        std::fs::copy(
            &log,
            loose.join(format!("00000000000000000000.log{suffix}")),
        )
        .unwrap();
    }
    let empty = root.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let etc = root.join("etc");
    for d in ["dbus-1", "polkit-1"] {
        std::fs::create_dir_all(etc.join(d)).unwrap();
        std::fs::write(etc.join(d).join("system.conf"), "<busconfig/>\n").unwrap();
    }
    std::fs::write(etc.join("hosts"), "127.0.0.1 localhost\n").unwrap();
    let fifo = root.join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let unreadable = root.join("unread-0").join("00000000000000000000.log");
    std::fs::create_dir_all(unreadable.parent().unwrap()).unwrap();
    // With its indexes: read as root, it is the plain segment of the first column.
    for f in [
        "00000000000000000000.log",
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
    ] {
        std::fs::copy(partition.join(f), unreadable.with_file_name(f)).unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&unreadable, std::fs::Permissions::from_mode(0o000)).unwrap();
    let not_kafka = root.join("notes.txt");
    std::fs::write(&not_kafka, "hello\n").unwrap();
    vec![
        log,
        partition.join("00000000000000000000.index"),
        partition.join("00000000000000000000.timeindex"),
        partition.join("00000000000000000003.snapshot"),
        partition.join("leader-epoch-checkpoint"),
        loose.join("00000000000000000000.log.deleted"),
        loose.join("00000000000000000000.log.swap"),
        partition,
        logs,
        kafka_1,
        parent,
        empty,
        etc,
        root.join("missing"),
        fifo,
        unreadable,
        not_kafka,
    ]
}

#[test]
fn every_command_has_a_row() {
    let known: Vec<String> = kseg::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    let missing: Vec<&String> = known
        .iter()
        .filter(|k| !TABLE.iter().any(|(name, _, _)| name == k))
        .collect();
    assert!(
        missing.is_empty(),
        "tests/input_matrix.rs TABLE has no row for subcommand(s) {missing:?}: add `(\"NAME\", Some(&[\"NAME\", \"{{P}}\"]), [exit status per shape of {SHAPES:?}])`, or None for a command that takes no Kafka path"
    );
    let uncounted: Vec<&str> = TABLE
        .iter()
        .filter(|(name, args, _)| args.is_some() && !COUNTS.iter().any(|c| c.0 == *name))
        .map(|(name, _, _)| *name)
        .collect();
    assert!(
        uncounted.is_empty(),
        "tests/input_matrix.rs COUNTS has no row for subcommand(s) {uncounted:?}: add how many things each examines per shape"
    );
    let stale: Vec<&str> = TABLE
        .iter()
        .map(|(name, _, _)| *name)
        .chain(COUNTS.iter().map(|c| c.0))
        .filter(|n| !known.iter().any(|k| k == n))
        .collect();
    assert!(stale.is_empty(), "TABLE rows for no subcommand: {stale:?}");
}

#[test]
fn every_command_on_every_shape() {
    let dir = tempfile::tempdir().unwrap();
    let paths = shapes(dir.path());
    let root = running_as_root();
    let mut wrong = Vec::new();
    for (name, args, statuses) in TABLE {
        let Some(args) = args else { continue };
        let (_, flags, count, counts) = COUNTS.iter().find(|c| c.0 == *name).unwrap();
        for (i, path) in paths.iter().enumerate() {
            let out_dir = dir.path().join(format!("out-{name}-{i}"));
            let argv: Vec<std::ffi::OsString> = args[..1]
                .iter()
                .chain(flags.iter())
                .chain(&args[1..])
                .map(|a| match *a {
                    "{P}" => path.clone().into_os_string(),
                    "{O}" => out_dir.clone().into_os_string(),
                    a => a.into(),
                })
                .collect();
            let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
                .args(&argv)
                .output()
                .unwrap();
            let code = out.status.code().unwrap_or(-1);
            // Root reads a file without read permission: it is then the plain segment.
            let column = if SHAPES[i] == "unreadable" && root {
                0
            } else {
                i
            };
            let expected = statuses[column];
            let stderr = String::from_utf8_lossy(&out.stderr);
            if code != expected {
                wrong.push(format!(
                    "{name} on {} ({}): exit {code}, expected {expected}: {}",
                    SHAPES[i],
                    path.display(),
                    stderr.lines().last().unwrap_or("")
                ));
            }
            let count_column = if SHAPES[i] == "unreadable" && !root {
                None
            } else {
                Some(i)
            };
            // Exit 2 examines nothing, whatever the row (the `--remote` rows share their
            // command's counts).
            let expected_count = if expected == 2 {
                0
            } else {
                count_column.map_or(0, |c| counts[c])
            };
            let n = examined(*count, &out.stdout, &stderr);
            if n != expected_count {
                wrong.push(format!(
                    "{name} on {} ({}): {n} examined, expected {expected_count}",
                    SHAPES[i],
                    path.display(),
                ));
            }
            // Nothing examined is never success: a 2 says why, and so does a 1.
            if code != 0 {
                assert!(
                    !stderr.trim().is_empty(),
                    "{name} on {}: exit {code} without a reason",
                    SHAPES[i]
                );
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

fn run(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// verify of log dirs makes `ls`'s start-up checks, with its check ids: a directory the loader
/// fails the log dir on, and one partition in two of the log dirs given.
#[test]
fn verify_makes_the_start_up_checks_ls_makes() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("kafka-1"), dir.path().join("kafka-2"));
    common::kseg_write(SPEC, &a.join("orders-0"));
    common::kseg_write(SPEC, &b.join("orders-0"));
    std::fs::remove_file(a.join("SPEC.json")).unwrap();
    std::fs::remove_file(b.join("SPEC.json")).unwrap();
    let (code, _, stderr) = run(&["verify".as_ref(), "-q".as_ref(), a.as_os_str()]);
    assert_eq!(code, 0, "{stderr}");
    for stray in ["lost+found", "backup_old"] {
        std::fs::create_dir_all(a.join(stray)).unwrap();
    }
    for command in ["verify", "ls"] {
        let (code, _, stderr) = run(&[command.as_ref(), a.as_os_str()]);
        assert_eq!(code, 1, "{command}: {stderr}");
        assert!(stderr.contains("2 × ls.dir-name"), "{command}: {stderr}");
        let (code, _, stderr) = run(&[command.as_ref(), a.as_os_str(), b.as_os_str()]);
        assert_eq!(code, 1, "{command}: {stderr}");
        assert!(stderr.contains("2 × ls.duplicate"), "{command}: {stderr}");
    }
    // Their parent, a `log.dirs` layout: each log dir taken, and said so.
    let (code, _, stderr) = run(&["verify".as_ref(), "-q".as_ref(), dir.path().as_os_str()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("a directory of 2 log dir(s)"), "{stderr}");
    assert!(stderr.contains("2 × ls.duplicate"), "{stderr}");
    let (code, _, stderr) = run(&[
        "recover".as_ref(),
        "--apply".as_ref(),
        dir.path().as_os_str(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(&a.display().to_string()), "{stderr}");
}

/// Every repair refuses a directory of log dirs with the one refusal of the resolver: exit 2,
/// the log dirs listed to be named one by one, nothing changed.
#[test]
fn repairs_refuse_a_directory_of_log_dirs() {
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().join("var-lib-kafka");
    let (a, b) = (parent.join("data-1"), parent.join("data-2"));
    common::kseg_write(SPEC, &a.join("orders-0"));
    common::kseg_write(SPEC, &b.join("orders-0"));
    let before = common::dir_contents(&a.join("orders-0"));
    let out = dir.path().join("out");
    let repairs: [&[&str]; 7] = [
        &["retention"],
        &["retention", "--apply"],
        &["compact", "--apply"],
        &["compact", "--out", out.to_str().unwrap()],
        &["salvage", "--out", out.to_str().unwrap()],
        &["recover", "--apply"],
        &["rebuild-index", "--apply"],
    ];
    for args in repairs {
        let mut argv: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
        argv.push(parent.as_os_str());
        let (code, stdout, stderr) = run(&argv);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        let listed = format!(
            "a directory of log dirs ({}, {}); name them one by one",
            a.display(),
            b.display()
        );
        assert!(stderr.contains(&listed), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
    assert_eq!(common::dir_contents(&a.join("orders-0")), before);
}

/// A seek past the log end is a finding in `dump` as in `locate`; a reversed range is bad input.
#[test]
fn dump_past_the_end_and_reversed_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("orders-0");
    common::kseg_write(SPEC, &p);
    let (code, stdout, stderr) = run(&[
        "dump".as_ref(),
        "--offset".as_ref(),
        "99".as_ref(),
        p.as_os_str(),
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("offset 99 is past the log end offset 3"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["locate".as_ref(), "99".as_ref(), p.as_os_str()]);
    assert_eq!(code, 1, "{stderr}");
    let reversed = ["--from-offset", "2", "--to-offset", "1"];
    let mut args: Vec<&std::ffi::OsStr> = vec!["dump".as_ref()];
    args.extend(reversed.iter().map(std::ffi::OsStr::new));
    args.push(p.as_os_str());
    let (code, _, stderr) = run(&args);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = run(&[
        "dump".as_ref(),
        "--offset".as_ref(),
        "1".as_ref(),
        p.as_os_str(),
    ]);
    assert_eq!(code, 0, "{stderr}");
}

mod common;
