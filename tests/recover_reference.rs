//! Recovery agrees with Kafka's: `LogLoader.load()` after an unclean shutdown, then a clean
//! close, on every scenario of the reference corpus.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use kseg::ops::repair::apply::{ApplyOptions, Backup, Change};
use kseg::ops::repair::recover::{plan, RecoverOptions};
use kseg::storage::{CloseMode, LoadEvent, LoadParams, Log, LogConfig};

use common::kseg;

fn expected_json(s: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(s.join("expected-recover-closed.json")).unwrap()).unwrap()
}

/// The topic settings a scenario was written with, as command-line flags.
fn config_args(expected: &serde_json::Value) -> Vec<String> {
    let p = &expected["params"];
    vec![
        "--index-interval-bytes".into(),
        p["index.interval.bytes"].to_string(),
        "--segment-index-bytes".into(),
        p["segment.index.bytes"].to_string(),
    ]
}

fn cfg_refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn options(expected: &serde_json::Value) -> RecoverOptions {
    RecoverOptions {
        config: config(expected),
        now_ms: expected["params"]["nowMs"].as_i64().unwrap(),
        recovery_point: None,
        producer_id_expiration_ms: 86_400_000,
    }
}

fn differences(got: &Path, want: &Path) -> Vec<String> {
    let names = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let (g, w) = (names(got), names(want));
    let mut out = Vec::new();
    for n in &w {
        if !g.contains(n) {
            out.push(format!("missing {n}"));
        } else if std::fs::read(got.join(n)).unwrap() != std::fs::read(want.join(n)).unwrap() {
            out.push(format!(
                "differs {n} ({} vs {} bytes)",
                std::fs::metadata(got.join(n)).unwrap().len(),
                std::fs::metadata(want.join(n)).unwrap().len()
            ));
        }
    }
    for n in &g {
        if !w.contains(n) {
            out.push(format!("extra {n}"));
        }
    }
    out
}

fn config(expected: &serde_json::Value) -> LogConfig {
    let p = &expected["params"];
    LogConfig {
        segment_bytes: p["segment.bytes"].as_u64().unwrap(),
        index_interval_bytes: p["index.interval.bytes"].as_u64().unwrap(),
        segment_index_bytes: p["segment.index.bytes"].as_u64().unwrap(),
        ..LogConfig::default()
    }
}

#[test]
fn engine_load_and_clean_close_match_kafka() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let mut failures = Vec::new();
    for s in common::scenarios(&root) {
        let expected: serde_json::Value =
            serde_json::from_slice(&std::fs::read(s.join("expected-recover-closed.json")).unwrap())
                .unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("orders-0");
        common::copy_dir(&s.join("input/orders-0"), &dir);
        let params = LoadParams {
            had_clean_shutdown: false,
            recovery_point: 0,
            log_start_offset: 0,
            now_ms: expected["params"]["nowMs"].as_i64().unwrap(),
            producer_id_expiration_ms: 86_400_000,
        };
        let (log, report) = Log::load(&dir, config(&expected), params).unwrap();
        assert_eq!(
            report.log_end_offset,
            expected["logEndOffset"].as_i64().unwrap()
        );
        log.close(CloseMode::Clean).unwrap();
        let d = differences(&dir, &s.join("expected-recovered-closed/orders-0"));
        if !d.is_empty() {
            failures.push(format!("{}: {d:?}", s.display()));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// `kseg recover --apply --now <now_ms>` on a copy of each scenario: byte-identical to Kafka's
/// recovered-and-closed directory; the plan names the same truncations and deleted segments;
/// the dry run changed nothing; a second run has nothing to do.
#[test]
fn cli_recover_apply_matches_kafka_on_every_scenario() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let mut failures = Vec::new();
    for s in common::scenarios(&root) {
        let expected = expected_json(&s);
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("orders-0");
        common::copy_dir(&s.join("input/orders-0"), &dir);
        let now = expected["params"]["nowMs"].to_string();
        let d = dir.to_str().unwrap();
        let before = common::dir_contents(&dir);
        let cfg = config_args(&expected);
        let dry = kseg(
            &[
                &["recover", "--json", "--now", &now, d][..],
                &cfg_refs(&cfg),
            ]
            .concat(),
        );
        assert_eq!(
            common::dir_contents(&dir),
            before,
            "a dry run changes no byte"
        );
        let plan: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap();
        assert_eq!(
            plan["logEndOffset"],
            expected["logEndOffset"],
            "{}",
            s.display()
        );
        // Truncations and deleted segments, as Kafka reports them.
        let mut want = Vec::new();
        for seg in expected["segments"].as_array().unwrap() {
            if seg["deleted"].as_bool().unwrap() {
                want.push(format!("delete {}", seg["baseOffset"]));
            } else if seg["bytesTruncated"].as_i64().unwrap() > 0 {
                want.push(format!(
                    "truncate {} {}",
                    seg["baseOffset"], seg["bytesTruncated"]
                ));
            }
        }
        let mut got = Vec::new();
        for e in plan["events"].as_array().unwrap() {
            match e["event"].as_str().unwrap() {
                "segmentDeleted" => got.push(format!("delete {}", e["baseOffset"])),
                "segmentRecovered" if e["truncatedBytes"].as_i64().unwrap() > 0 => got.push(
                    format!("truncate {} {}", e["baseOffset"], e["truncatedBytes"]),
                ),
                _ => {}
            }
        }
        assert_eq!(got, want, "{}", s.display());
        // What Kafka truncates or deletes is damage; a dry run exits 1 for damage only
        // (housekeeping, what every start-up does, is exit 0).
        let damage = plan["damageCount"].as_u64().unwrap() > 0;
        assert!(want.is_empty() || damage, "{}: {plan}", s.display());
        assert_eq!(
            dry.status.code(),
            Some(i32::from(damage)),
            "{}",
            s.display()
        );
        let applied = kseg(
            &[
                &["recover", "--apply", "--no-backup", "--now", &now, d][..],
                &cfg_refs(&cfg),
            ]
            .concat(),
        );
        assert_eq!(
            applied.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&applied.stderr)
        );
        let diff = differences(&dir, &s.join("expected-recovered-closed/orders-0"));
        if !diff.is_empty() {
            failures.push(format!("{}: {diff:?}", s.display()));
        }
        let again = kseg(
            &[
                &["recover", "--apply", "--no-backup", "--now", &now, d][..],
                &cfg_refs(&cfg),
            ]
            .concat(),
        );
        assert_eq!(again.status.code(), Some(0));
        assert!(String::from_utf8_lossy(&again.stdout).contains("no file changes"));
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// `rebuild-index --all --apply` on an intact partition gives exactly the `.index` and
/// `.timeindex` files of Kafka's recovery.
#[test]
fn rebuild_index_all_matches_kafka_recovery_indexes() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    for s in common::scenarios(&root) {
        let expected = expected_json(&s);
        let intact = expected["segments"]
            .as_array()
            .unwrap()
            .iter()
            .all(|seg| seg["bytesTruncated"].as_i64() == Some(0));
        if !intact {
            continue;
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("orders-0");
        common::copy_dir(&s.join("input/orders-0"), &dir);
        let now = expected["params"]["nowMs"].to_string();
        let cfg = config_args(&expected);
        let d = dir.to_str().unwrap();
        let args = [
            "rebuild-index",
            "--all",
            "--apply",
            "--no-backup",
            "--now",
            &now,
            d,
        ];
        let out = kseg(&[&args[..], &cfg_refs(&cfg)].concat());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let want = s.join("expected-recovered-closed/orders-0");
        for e in std::fs::read_dir(&want).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".index") || name.ends_with(".timeindex") {
                let got = std::fs::read(dir.join(&name)).unwrap();
                assert_eq!(
                    got,
                    std::fs::read(want.join(&name)).unwrap(),
                    "{} {name}",
                    s.display()
                );
            }
        }
    }
}

/// h-index-damage without `--all`: exactly the damaged segments are rebuilt.
#[test]
fn rebuild_index_finds_the_damaged_indexes() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&root.join("h-index-damage/input/orders-0"), &dir);
    let out = kseg(&[
        "rebuild-index",
        "--json",
        "--now",
        "1730000000000",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bases: Vec<i64> = plan["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["baseOffset"].as_i64().unwrap())
        .collect();
    assert_eq!(bases, vec![0, 317, 636]);
}

fn changes_for(s: &Path, dir: &Path) -> Vec<Change> {
    plan(dir, &options(&expected_json(s))).unwrap().changes
}

/// The executor fails before each of its steps in turn; a rerun always ends exactly where an
/// uninterrupted run does, and the backup of the failed run holds the original bytes.
#[test]
fn interrupted_apply_reruns_to_the_same_result() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    for name in ["f-crash-torn-tail", "g-corrupt-middle", "h-index-damage"] {
        let s = root.join(name);
        let expected = expected_json(&s);
        let want = s.join("expected-recovered-closed/orders-0");
        let mut step = 0;
        loop {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("logs").join("orders-0");
            common::copy_dir(&s.join("input/orders-0"), &dir);
            let original = common::dir_contents(&dir);
            let backup = tmp.path().join("backup");
            let lock = common::lock(&dir);
            let p = plan(&dir, &options(&expected)).unwrap();
            let opts = ApplyOptions {
                backup: Backup::Dir(backup.clone()),
                fail_before_step: Some(step),
                before_step: None,
            };
            let failed = p.apply(&opts).is_err();
            drop(lock);
            // The backup holds the original bytes of every file it has.
            for (n, bytes) in &original {
                if let Ok(b) = std::fs::read(backup.join(n)) {
                    assert_eq!(&b, bytes, "{name} step {step}: backup of {n}");
                }
            }
            let _lock = common::lock(&dir);
            let rerun = plan(&dir, &options(&expected)).unwrap();
            rerun
                .apply(&ApplyOptions {
                    backup: Backup::None,
                    fail_before_step: None,
                    before_step: None,
                })
                .unwrap();
            assert!(
                differences(&dir, &want).is_empty(),
                "{name} step {step}: {:?}",
                differences(&dir, &want)
            );
            assert!(changes_for(&s, &dir).is_empty());
            if !failed {
                break;
            }
            step += 1;
        }
        assert!(step > 3, "{name}: the executor has steps to interrupt");
    }
}

/// A broker's POSIX lock on the log dir's `.lock`, held by another process, makes `--apply`
/// refuse, naming that process; nothing changes.
#[test]
fn apply_refuses_a_locked_log_dir() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&root.join("f-crash-torn-tail/input/orders-0"), &dir);
    let lock = tmp.path().join(".lock");
    std::fs::write(&lock, b"").unwrap();
    // python's fcntl.lockf is a POSIX record lock, like Java's FileChannel.tryLock.
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import fcntl,sys,time; f=open(sys.argv[1],'r+'); fcntl.lockf(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(30)",
            lock.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 for the lock holder");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "locked");
    let before = common::dir_contents(&dir);
    let out = kseg(&["recover", "--apply", "--no-backup", dir.to_str().unwrap()]);
    child.kill().unwrap();
    child.wait().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("locked by a broker, pid {}", child.id())),
        "{err}"
    );
    assert_eq!(common::dir_contents(&dir), before);
}

/// The `.lock` of the log dir being repaired, and whether another process could take it
/// during the repair (set by the step hook).
static LOCK_FILE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
static OTHER_GOT_LOCK: std::sync::Mutex<Option<bool>> = std::sync::Mutex::new(None);

/// Before the executor's first step, another process tries to take the lock, as a broker
/// starting would (`FileChannel.tryLock`: a POSIX write lock, without waiting).
fn try_lock_from_another_process(step: usize) {
    if step != 0 {
        return;
    }
    let status = Command::new("python3")
        .args([
            "-c",
            "import fcntl,sys; f=open(sys.argv[1],'r+'); fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)",
            LOCK_FILE.get().unwrap().to_str().unwrap(),
        ])
        .stderr(std::process::Stdio::null())
        .status()
        .expect("python3 for the lock taker");
    *OTHER_GOT_LOCK.lock().unwrap() = Some(status.success());
}

/// `--apply` holds the log dir's lock for its whole run, and gives it back at the end.
#[test]
fn apply_holds_the_lock_while_it_runs() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let s = root.join("f-crash-torn-tail");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&s.join("input/orders-0"), &dir);
    let lock = tmp.path().join(".lock");
    std::fs::write(&lock, b"").unwrap();
    LOCK_FILE.set(lock.clone()).unwrap();
    let held = common::lock(&dir);
    plan(&dir, &options(&expected_json(&s)))
        .unwrap()
        .apply(&ApplyOptions {
            backup: Backup::None,
            fail_before_step: None,
            before_step: Some(try_lock_from_another_process),
        })
        .unwrap();
    drop(held);
    assert_eq!(
        *OTHER_GOT_LOCK.lock().unwrap(),
        Some(false),
        "taken during the repair"
    );
    assert_eq!(
        kseg::ops::repair::apply::lock_holder(tmp.path()).unwrap(),
        None
    );
    assert!(
        differences(&dir, &s.join("expected-recovered-closed/orders-0")).is_empty(),
        "the repair completed"
    );
}

fn plan_events(dir: &Path) -> Vec<LoadEvent> {
    plan(
        dir,
        &RecoverOptions {
            config: LogConfig::default(),
            now_ms: 1_730_000_000_000,
            recovery_point: None,
            producer_id_expiration_ms: 86_400_000,
        },
    )
    .unwrap()
    .report
    .events
}

/// Bad input: each gets a clear message and nothing is lost.
#[test]
fn bad_input_is_explained_and_nothing_is_lost() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let input = root.join("a-plain-v2/input/orders-0");
    // Read-only files: the dry run works, --apply refuses before changing anything.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&input, &dir);
    let ro = dir.join("00000000000000000000.index");
    let mut perm = std::fs::metadata(&ro).unwrap().permissions();
    perm.set_readonly(true);
    std::fs::set_permissions(&ro, perm).unwrap();
    let before = common::dir_contents(&dir);
    let out = kseg(&["recover", "--apply", "--no-backup", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("00000000000000000000.index: the file is read-only"),
        "{err}"
    );
    assert_eq!(common::dir_contents(&dir), before);

    // A segment with no valid batch at all: emptied, and the plan says where and why.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&input, &dir);
    std::fs::write(dir.join("00000000000000000962.log"), vec![0xab; 500]).unwrap();
    let out = kseg(&["recover", dir.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "segment 962: recovered (at or after the recovery point); first invalid data at byte 0"
        ),
        "{text}"
    );
    assert!(
        text.contains("delete   ") && text.contains("00000000000000001294.log"),
        "{text}"
    );
    assert!(text.contains("new log end offset 962"), "{text}");

    // An index without its .log, and an unknown file.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&input, &dir);
    std::fs::write(dir.join("00000000000000009999.index"), [0u8; 16]).unwrap();
    std::fs::write(dir.join("notes.txt"), b"operator notes").unwrap();
    let events = plan_events(&dir);
    assert!(events.contains(&LoadEvent::FileDeleted {
        file: "00000000000000009999.index".into(),
        why: "an index without its .log".into()
    }));
    assert!(events.contains(&LoadEvent::UnknownFileKept {
        file: "notes.txt".into()
    }));
    let out = kseg(&[
        "rebuild-index",
        dir.join("00000000000000009999.index").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("an index cannot be rebuilt without its .log"));
    // Outside the log dir `tmp`: the broker would take a directory in it for a partition.
    let backup_root = tempfile::tempdir().unwrap();
    let backup = backup_root.path().join("bk");
    let out = kseg(&[
        "recover",
        "--apply",
        "--backup-dir",
        backup.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(dir.join("notes.txt")).unwrap(),
        b"operator notes"
    );
    assert_eq!(
        std::fs::read(backup.join("00000000000000009999.index")).unwrap(),
        [0u8; 16]
    );
    assert!(backup.join("plan.json").is_file());
    let _: PathBuf = backup;
}

/// One byte of a batch's base offset flipped (outside its CRC) in a-plain-v2's last segment:
/// offsets jump to 2130707844 and then go back. Kafka's `LogSegment.recover` raises
/// InvalidOffsetException when it appends the segment's closing time-index entry, whose offset
/// is below the last one indexed (`TimeIndex.maybeAppend`), and `LogLoader.recoverLog` catches
/// it by emptying the segment; so does ours, instead of refusing to recover.
#[test]
fn offsets_going_back_empty_the_segment_as_the_loader_does() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let s = root.join("a-plain-v2");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    common::copy_dir(&s.join("input/orders-0"), &dir);
    let log = dir.join("00000000000000001294.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[23053] = 0x7f;
    std::fs::write(&log, &bytes).unwrap();
    let _lock = common::lock(&dir);
    let p = plan(&dir, &options(&expected_json(&s))).unwrap();
    let emptied = p.report.events.iter().any(|e| {
        matches!(
            e,
            LoadEvent::SegmentRecovered {
                base_offset: 1294,
                emptied: true,
                ..
            }
        )
    });
    assert!(emptied, "{:?}", p.report.events);
    assert!(p.changes.iter().any(|c| matches!(c,
        Change::Truncate { file, size_after: 0, .. } if *file == log)));
    p.apply(&ApplyOptions {
        backup: Backup::None,
        fail_before_step: None,
        before_step: None,
    })
    .unwrap();
    assert_eq!(std::fs::metadata(&log).unwrap().len(), 0);
    common::assert_verifies_clean(&dir);
}
