//! Convergent repairs (#15 item 4): every `--apply` is interrupted at each of its steps in turn
//! (the executor's fault injection: a crash before a step, a crash halfway through a file
//! write, the disk running full in a write, a crash with the temporary file complete but not
//! renamed), then the same command is run again, as an operator would; the whole log dir
//! (names and bytes) must then be what one uninterrupted run leaves, with no `.kseg-tmp`
//! anywhere. The plans are derived from the directory each time, so the rerun is the real
//! command (`kseg ... --apply`) planning from what the interrupted run left.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kseg::ops::repair::apply::{ApplyOptions, Backup};

const NOW: i64 = 1_730_100_000_000;

/// Every file under `root` (relative path → bytes).
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    common::files_under(root)
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            (rel, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// Names that differ between two trees, for the failure message.
fn differences(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            format!(
                "{k}: {:?} vs {:?} bytes",
                a.get(k).map(Vec::len),
                b.get(k).map(Vec::len)
            )
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// A log dir `<tmp>/logs` (with `meta.properties`, so the offset checkpoints are kseg's to
/// update) holding reference scenario inputs under the partition names given.
fn log_dir(tmp: &Path, root: &Path, partitions: &[(&str, &str)]) -> PathBuf {
    let logs = tmp.join("logs");
    for (scenario, name) in partitions {
        common::copy_dir(
            &root.join(scenario).join("input/orders-0"),
            &logs.join(name),
        );
    }
    std::fs::write(logs.join("meta.properties"), "#\nversion=0\nbroker.id=0\n").unwrap();
    logs
}

/// The backup's own steps (copies made before anything changes) are interrupted by the
/// executor tests of each command (`recover_reference`, `compact_apply`); here they would only
/// repeat the same start, so the runs take none.
fn faulty(step: Option<usize>) -> ApplyOptions {
    ApplyOptions {
        backup: Backup::None,
        fail_before_step: step,
        before_step: None,
    }
}

/// One `--apply` command: how to build its input, the library run that can be interrupted
/// (returns whether the injected fault stopped it), and the command line of its rerun.
struct Case {
    name: &'static str,
    setup: fn(&Path, &Path) -> PathBuf,
    run: fn(&Path, &ApplyOptions) -> bool,
    args: &'static [&'static str],
    /// Paths the command line names, relative to the log dir.
    paths: &'static [&'static str],
}

fn rerun(case: &Case, logs: &Path) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(case.args)
        .args([
            "--apply",
            "--no-backup",
            "--quiet",
            "--now",
            &NOW.to_string(),
        ])
        .args(case.paths.iter().map(|p| logs.join(p)))
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}: {}",
        case.name,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The library run of `case`, under the locks of the partitions it names (each of the log
/// dir's, for the log dir itself), taken before it plans as the command line takes them.
fn run_locked(case: &Case, logs: &Path, o: &ApplyOptions) -> bool {
    let mut partitions = Vec::new();
    for p in case.paths {
        if *p == "." {
            for e in std::fs::read_dir(logs).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    partitions.push(path);
                }
            }
        } else {
            partitions.push(logs.join(p));
        }
    }
    let _locks: Vec<_> = partitions.iter().map(|d| common::lock(d)).collect();
    (case.run)(logs, o)
}

fn check(case: &Case, root: &Path) {
    // The uninterrupted run, by the library and by the command line: the same result.
    let want = {
        let tmp = tempfile::tempdir().unwrap();
        let logs = (case.setup)(tmp.path(), root);
        assert!(!run_locked(case, &logs, &faulty(None)));
        tree(&logs)
    };
    {
        let tmp = tempfile::tempdir().unwrap();
        let logs = (case.setup)(tmp.path(), root);
        let before = tree(&logs);
        rerun(case, &logs);
        let got = tree(&logs);
        assert_ne!(got, before, "{}: the command changes something", case.name);
        assert_eq!(
            differences(&got, &want),
            Vec::<String>::new(),
            "{}",
            case.name
        );
    }
    let mut step = 0;
    loop {
        let tmp = tempfile::tempdir().unwrap();
        let logs = (case.setup)(tmp.path(), root);
        let failed = run_locked(case, &logs, &faulty(Some(step)));
        rerun(case, &logs);
        let got = tree(&logs);
        assert!(
            !got.keys().any(|k| k.ends_with(".kseg-tmp")),
            "{} step {step}: {:?}",
            case.name,
            got.keys().collect::<Vec<_>>()
        );
        assert_eq!(
            differences(&got, &want),
            Vec::<String>::new(),
            "{} interrupted at step {step}",
            case.name
        );
        if !failed {
            break;
        }
        step += 1;
    }
    assert!(step > 3, "{}: only {step} steps", case.name);
}

thread_local! {
    /// The number of steps the last executor run of this thread began.
    static STEPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn count_step(n: usize) {
    STEPS.with(|s| s.set(n + 1));
}

fn recover_run(dirs: &[PathBuf], o: &ApplyOptions) -> bool {
    let opts = kseg::ops::repair::recover::RecoverOptions {
        config: kseg::storage::LogConfig::default(),
        now_ms: NOW,
        recovery_point: None,
        producer_id_expiration_ms: 86_400_000,
    };
    // As `recover` over a log dir: partition by partition, each planned just before it is
    // applied; a fault stops the whole run. The step count runs on across partitions.
    let mut offset = 0;
    for d in dirs {
        let plan = kseg::ops::repair::recover::plan(d, &opts).unwrap();
        if plan.is_empty() {
            continue;
        }
        STEPS.with(|s| s.set(0));
        // Reached only while the fault lies at or after this partition's first step.
        let local = ApplyOptions {
            fail_before_step: o.fail_before_step.map(|s| s - offset),
            before_step: Some(count_step),
            ..o.clone()
        };
        if plan.apply(&local).is_err() {
            return true;
        }
        offset += STEPS.with(std::cell::Cell::get);
    }
    false
}

const CASES: &[Case] = &[
    Case {
        name: "recover (torn tail, in a log dir)",
        setup: |tmp, root| log_dir(tmp, root, &[("f-crash-torn-tail", "orders-0")]),
        run: |logs, o| recover_run(&[logs.join("orders-0")], o),
        args: &["recover"],
        paths: &["orders-0"],
    },
    Case {
        name: "recover of a log dir (two partitions)",
        setup: |tmp, root| {
            log_dir(
                tmp,
                root,
                &[
                    ("f-crash-torn-tail", "orders-0"),
                    ("h-index-damage", "orders-1"),
                ],
            )
        },
        run: |logs, o| recover_run(&[logs.join("orders-0"), logs.join("orders-1")], o),
        args: &["recover", "--jobs", "1"],
        paths: &["."],
    },
    Case {
        name: "rebuild-index (an .index missing, its .timeindex short of an entry)",
        setup: |tmp, root| {
            let logs = log_dir(tmp, root, &[("a-plain-v2", "orders-0")]);
            let seg = logs.join("orders-0/00000000000000000317");
            std::fs::remove_file(seg.with_extension("index")).unwrap();
            let time = seg.with_extension("timeindex");
            let len = std::fs::metadata(&time).unwrap().len();
            std::fs::OpenOptions::new()
                .write(true)
                .open(&time)
                .unwrap()
                .set_len(len - 12)
                .unwrap();
            logs
        },
        run: |logs, o| {
            let opts = kseg::ops::repair::rebuild_index::RebuildOptions {
                config: kseg::storage::LogConfig::default(),
                all: false,
                now_ms: NOW,
                producer_id_expiration_ms: 86_400_000,
            };
            let plans =
                kseg::ops::repair::rebuild_index::plan(&[logs.join("orders-0")], &opts).unwrap();
            plans.iter().any(|p| p.apply(o).is_err())
        },
        args: &["rebuild-index"],
        paths: &["orders-0"],
    },
    Case {
        name: "retention by time (every segment, a roll)",
        setup: |tmp, root| log_dir(tmp, root, &[("a-plain-v2", "orders-0")]),
        run: |logs, o| {
            let opts = kseg::ops::simulate::retention::RetentionOptions {
                retention_ms: 86_400_000,
                ..common::retention_options(NOW)
            };
            let r = kseg::ops::simulate::retention::plan_retention(&logs.join("orders-0"), &opts)
                .unwrap();
            r.apply(o).is_err()
        },
        args: &["retention", "--retention-ms", "86400000"],
        paths: &["orders-0"],
    },
    Case {
        name: "retention to a log start offset inside a segment",
        setup: |tmp, root| log_dir(tmp, root, &[("a-plain-v2", "orders-0")]),
        run: |logs, o| {
            let opts = kseg::ops::simulate::retention::RetentionOptions {
                log_start_offset: Some(800),
                ..common::retention_options(NOW)
            };
            let r = kseg::ops::simulate::retention::plan_retention(&logs.join("orders-0"), &opts)
                .unwrap();
            r.apply(o).is_err()
        },
        args: &["retention", "--log-start-offset", "800"],
        paths: &["orders-0"],
    },
    Case {
        name: "compact",
        setup: |tmp, root| log_dir(tmp, root, &[("i-compaction", "orders-0")]),
        run: |logs, o| {
            let opts = kseg::ops::simulate::compact::CompactOptions {
                min_cleanable_dirty_ratio: 0.0,
                ..kseg::ops::simulate::compact::CompactOptions::new(NOW)
            };
            let p = kseg::ops::simulate::compact::plan::plan_apply(&logs.join("orders-0"), &opts)
                .unwrap();
            p.apply(o).is_err()
        },
        args: &["compact", "--min-cleanable-dirty-ratio", "0"],
        paths: &["orders-0"],
    },
];

#[test]
fn recover_converges_after_a_fault_at_any_step() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    check(&CASES[0], &root);
}

#[test]
fn recover_of_a_log_dir_converges_after_a_fault_at_any_step() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    check(&CASES[1], &root);
}

#[test]
fn rebuild_index_converges_after_a_fault_at_any_step() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    check(&CASES[2], &root);
}

#[test]
fn retention_by_time_converges_after_a_fault_at_any_step() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    check(&CASES[3], &root);
}

#[test]
fn retention_to_a_log_start_converges_after_a_fault_at_any_step() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    check(&CASES[4], &root);
}

#[test]
fn compact_converges_after_a_fault_at_any_step() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    check(&CASES[5], &root);
}
