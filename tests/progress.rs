//! Progress bars (issue 17, item 5): the engine reports the bytes it really reads and appends,
//! and every long command draws them on stderr when asked (`KSEG_PROGRESS=always` stands in
//! for a terminal), never on a plain pipe, never with `--quiet`.
//!
//! Only one test here runs kseg in-process (the progress sink is process-wide); the others
//! run the binary.

mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kseg::storage::log_reader::{LogReader, Step};
use kseg::storage::progress::{watching, Progress};

#[derive(Default)]
struct Count {
    read: AtomicU64,
    wrote: AtomicU64,
}

impl Progress for Count {
    fn read(&self, n: u64) {
        self.read.fetch_add(n, Ordering::Relaxed);
    }
    fn wrote(&self, n: u64) {
        self.wrote.fetch_add(n, Ordering::Relaxed);
    }
}

fn log_bytes(dir: &Path) -> u64 {
    common::logs(dir)
        .iter()
        .map(|l| std::fs::metadata(l).unwrap().len())
        .sum()
}

#[test]
fn the_engine_counts_the_bytes_it_reads_and_appends() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let scenario = root.join("a-plain-v2");
    let input = scenario.join("input/orders-0");
    let count = Arc::new(Count::default());
    // Reading every segment through once: the sink hears of each byte of them, once.
    let entries = watching(count.clone(), || {
        let mut n = 0;
        for log in common::logs(&input) {
            let mut r = LogReader::open(&log, None).unwrap();
            while let Step::Entry { .. } = r.next_step().unwrap() {
                n += 1;
            }
        }
        n
    });
    assert!(entries > 0);
    assert_eq!(count.read.load(Ordering::Relaxed), log_bytes(&input));
    // Writing the scenario's spec: what was appended is what its segments hold.
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("orders-0");
    let text = std::fs::read_to_string(scenario.join("SPEC.json")).unwrap();
    let spec = kseg::ops::write::spec::Spec::from_json(&text).unwrap();
    let before = count.wrote.load(Ordering::Relaxed);
    watching(count.clone(), || {
        kseg::ops::write::spec::write_spec(&spec, &dir).unwrap();
    });
    assert_eq!(
        count.wrote.load(Ordering::Relaxed) - before,
        log_bytes(&dir)
    );
    // Uninstalled once the work is done: reads after it are not counted.
    let read = count.read.load(Ordering::Relaxed);
    let mut r = LogReader::open(&common::logs(&input)[0], None).unwrap();
    r.next_step().unwrap();
    assert_eq!(count.read.load(Ordering::Relaxed), read);
}

/// Runs kseg with `KSEG_PROGRESS` set to `force` (or unset), stdout and stderr piped.
fn run(args: &[&str], paths: &[&Path], force: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kseg"));
    c.args(args).args(paths).env_remove("KSEG_PROGRESS");
    if let Some(f) = force {
        c.env("KSEG_PROGRESS", f);
    }
    c.output().unwrap()
}

/// The byte counts a bar labelled `what` drew on `stderr` (`recovering 61.52 KiB …`), in
/// bytes, in the order drawn.
fn drawn(stderr: &str, what: &str) -> Vec<f64> {
    let label = format!("{what} ");
    stderr
        .match_indices(&label)
        .filter_map(|(i, _)| {
            let mut words = stderr[i + label.len()..].split([' ', '/']);
            let n: f64 = words.next()?.parse().ok()?;
            let unit = match words.next()? {
                "B" => 1.0,
                "KiB" => 1024.0,
                "MiB" => 1024.0 * 1024.0,
                _ => return None,
            };
            Some(n * unit)
        })
        .collect()
}

#[test]
fn every_long_command_draws_a_bar_only_when_asked() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let plain = root.join("a-plain-v2/input/orders-0");
    // Writable copies for the commands that lock or may change their partition.
    let copy = |scenario: &str| {
        let to = tmp.path().join(scenario).join("orders-0");
        common::copy_dir(&root.join(scenario).join("input/orders-0"), &to);
        to
    };
    let corrupt = copy("g-corrupt-middle");
    let damaged = copy("h-index-damage");
    let compaction = copy("i-compaction");
    let retained = copy("a-plain-v2");
    let spec = root.join("a-plain-v2/SPEC.json");
    let out = tmp.path().join("written");
    let size = log_bytes(&plain) as f64;
    let cases: Vec<(&str, Vec<&str>, Vec<&Path>, &str)> = vec![
        ("dump", vec!["dump"], vec![&plain], "dumping"),
        ("verify", vec!["verify"], vec![&plain], "verifying"),
        ("recover", vec!["recover"], vec![&corrupt], "recovering"),
        (
            "rebuild-index",
            vec!["rebuild-index"],
            vec![&damaged],
            "reading",
        ),
        (
            "retention",
            vec!["retention", "--retention-ms", "1", "--now", "1730000000000"],
            vec![&retained],
            "reading",
        ),
        // A fixed clock: a cleaned tombstone's delete horizon (now + delete.retention.ms) becomes
        // its batch's base timestamp, so the cleaned bytes depend on it.
        (
            "compact",
            vec!["compact", "--now", "1730000000000"],
            vec![&compaction],
            "cleaning",
        ),
        ("write", vec!["write"], vec![&spec, &out], "writing"),
    ];
    for (name, args, paths, what) in cases {
        let _ = std::fs::remove_dir_all(&out);
        let forced = run(&args, &paths, Some("always"));
        let stderr = String::from_utf8_lossy(&forced.stderr);
        let counts = drawn(&stderr, what);
        assert!(
            counts.iter().any(|&n| n > 0.0),
            "{name}: no bar counting bytes on stderr:\n{stderr}"
        );
        // Counts only grow, and the whole-file commands never count more than they can read
        // (verify counts each file once; dump reads each segment once, and index checks a
        // header per entry).
        assert!(
            counts.windows(2).all(|w| w[0] <= w[1]),
            "{name}: {counts:?}"
        );
        if name == "verify" {
            assert!(
                counts.iter().all(|&n| n <= size * 1.01),
                "{name}: {counts:?}"
            );
        }
        // The same run on a pipe: the same stdout, and no bar.
        let _ = std::fs::remove_dir_all(&out);
        let piped = run(&args, &paths, None);
        let piped_err = String::from_utf8_lossy(&piped.stderr);
        assert!(
            drawn(&piped_err, what).is_empty() && !piped_err.contains('\r'),
            "{name}: a bar on a pipe:\n{piped_err}"
        );
        assert_eq!(piped.status.code(), forced.status.code(), "{name}");
        if name != "write" {
            assert_eq!(
                String::from_utf8_lossy(&piped.stdout),
                String::from_utf8_lossy(&forced.stdout),
                "{name}: the bar changed stdout"
            );
        }
        // --quiet silences it even when forced.
        let _ = std::fs::remove_dir_all(&out);
        let mut quiet_args = args.clone();
        quiet_args.push("--quiet");
        let quiet = run(&quiet_args, &paths, Some("always"));
        let quiet_err = String::from_utf8_lossy(&quiet.stderr);
        assert!(
            drawn(&quiet_err, what).is_empty(),
            "{name} --quiet: a bar:\n{quiet_err}"
        );
    }
}
