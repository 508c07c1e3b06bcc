//! `kseg ls`: on the real-world log dirs and the reference corpus, sizes, segment counts and log
//! end offsets equal `verify`'s (which reads every batch), and the checkpoint columns equal the
//! checkpoint files' entries as parsed here; on log dirs written by the tests, the directory
//! states of Kafka's loader (`LogManager.loadLog`: `-delete`, `-future`, `-stray`, names that do
//! not parse) and the problems metadata shows (`LogManager.isStrayKraftReplica`).

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use kseg::ops::check::verify::{verify_paths, VerifyOptions};
use kseg::ops::inspect::ls::{list_log_dir, list_log_dirs, LogDirListing, LsOptions};

/// An offset checkpoint file as its format says: version line, count line, then
/// `topic partition offset` lines.
fn parse_checkpoint(path: &Path) -> HashMap<(String, i32), i64> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return HashMap::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    // An empty file (a broker killed while creating it) reads as no entries (CheckpointFile).
    if lines.is_empty() {
        return HashMap::new();
    }
    assert_eq!(lines[0].trim(), "0", "{}", path.display());
    let n: usize = lines[1].trim().parse().unwrap();
    lines[2..2 + n]
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                (f[0].to_string(), f[1].parse().unwrap()),
                f[2].parse().unwrap(),
            )
        })
        .collect()
}

/// The base offsets of a partition directory's `.log` files, from their 20-digit names.
fn segment_bases(dir: &Path) -> Vec<i64> {
    let mut v: Vec<i64> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".log")?;
            (stem.len() == 20).then(|| stem.parse().ok())?
        })
        .collect();
    v.sort();
    v
}

/// Every directory under `root` that has a partition directory (`<name>-<digits>`) in it.
fn log_dirs_under(root: &Path, out: &mut Vec<PathBuf>) {
    let mut has_partition = false;
    for e in std::fs::read_dir(root).unwrap() {
        let p = e.unwrap().path();
        if !p.is_dir() {
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name
            .rsplit_once('-')
            .is_some_and(|(_, n)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        {
            has_partition = true;
        } else {
            log_dirs_under(&p, out);
        }
    }
    if has_partition {
        out.push(root.to_path_buf());
    }
}

/// ls against verify and the checkpoint files, partition by partition.
fn assert_agrees(log_dir: &Path) -> usize {
    let listing = list_log_dir(log_dir, &LsOptions::default()).unwrap();
    let report =
        verify_paths(&[log_dir.to_path_buf()], &VerifyOptions::default(), &|_| {}).unwrap();
    let checkpoint = |name: &str| parse_checkpoint(&log_dir.join(name));
    let recovery = checkpoint("recovery-point-offset-checkpoint");
    let replication = checkpoint("replication-offset-checkpoint");
    let log_start = checkpoint("log-start-offset-checkpoint");
    let cleaner = checkpoint("cleaner-offset-checkpoint");
    let mut compared = 0;
    for p in &listing.partitions {
        let v = report
            .partitions
            .iter()
            .find(|v| v.path == p.dir)
            .unwrap_or_else(|| panic!("verify has no {}", p.dir.display()));
        let bytes: u64 = v.segments.iter().map(|s| s.bytes).sum();
        assert_eq!(p.size_in_bytes, bytes, "{}", p.dir.display());
        assert_eq!(p.segments, v.segments.len(), "{}", p.dir.display());
        assert_eq!(p.log_end_offset, v.log_end_offset, "{}", p.dir.display());
        let key = (p.topic.clone().unwrap(), p.partition.unwrap());
        assert_eq!(p.recovery_point, recovery.get(&key).copied());
        assert_eq!(p.high_watermark, replication.get(&key).copied());
        assert_eq!(p.cleaner_checkpoint, cleaner.get(&key).copied());
        // The loader's log start: the checkpoint's, never below the first segment.
        let first = segment_bases(&p.dir).first().copied();
        let expected_start = match (log_start.get(&key), first) {
            (Some(&c), Some(f)) => Some(c.max(f)),
            (_, f) => f,
        };
        assert_eq!(p.log_start_offset, expected_start, "{}", p.dir.display());
        // Metadata only: at most the active segment, from its last index entry.
        let active = segment_bases(&p.dir).last().map_or(0, |b| {
            std::fs::metadata(p.dir.join(format!("{b:020}.log")))
                .unwrap()
                .len()
        });
        assert!(p.log_bytes_read <= active, "{}", p.dir.display());
        compared += 1;
    }
    compared
}

#[test]
fn realworld_log_dirs_agree_with_verify_and_checkpoints() {
    let Some(root) = common::realworld_dir() else {
        return;
    };
    let (tmp, _) = common::unpack_realworld(&root);
    let mut dirs = Vec::new();
    log_dirs_under(tmp.path(), &mut dirs);
    assert!(dirs.len() >= 8, "{dirs:?}");
    let compared: usize = dirs.iter().map(|d| assert_agrees(d)).sum();
    assert!(compared > 250, "{compared}");
}

#[test]
fn reference_log_dirs_agree_with_verify() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    for s in common::scenarios(&root) {
        assert_eq!(assert_agrees(&s.join("input")), 1, "{}", s.display());
    }
}

/// A partition directory with the segments of the reference corpus' plain partition.
fn partition(log_dir: &Path, name: &str, topic_id: Option<&str>) -> PathBuf {
    let src = common::reference_dir()
        .expect("reference corpus")
        .join("a-plain-v2/input/orders-0");
    let dir = log_dir.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let n = p.file_name().unwrap().to_string_lossy().into_owned();
        if n.ends_with(".log") || n.ends_with(".index") || n.ends_with(".timeindex") {
            std::fs::copy(&p, dir.join(&n)).unwrap();
        }
    }
    if let Some(id) = topic_id {
        std::fs::write(
            dir.join("partition.metadata"),
            format!("version: 0\ntopic_id: {id}\n"),
        )
        .unwrap();
    }
    dir
}

fn write_checkpoint(path: &Path, entries: &[(&str, i32, i64)]) {
    let mut s = format!("0\n{}\n", entries.len());
    for (t, p, o) in entries {
        s += &format!("{t} {p} {o}\n");
    }
    std::fs::write(path, s).unwrap();
}

const PAYMENTS_ID: &str = "4Tnf2L1jiTjQuiL_2yqRAA";
const UNKNOWN_ID: &str = "AAAAAAAAAAAAAAAAAAAABw";
const UNIQUE_ID: &str = "5f1e0c6a8b9d4e2f8a7b6c5d4e3f2a1b";

/// The KRaft image the reference `__cluster_metadata` log builds, replayed here from
/// kafka-dump-log's own decoding of it (expected-decode.json): topic id → name, and
/// (topic id, partition) → replicas.
type Replicas = HashMap<(String, i64), Vec<i64>>;

fn reference_image() -> (HashMap<String, String>, Replicas) {
    let root = common::reference_internal_dir().expect("reference-internal corpus");
    let text = std::fs::read_to_string(root.join("cluster-metadata/expected-decode.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut topics = HashMap::new();
    let mut partitions = HashMap::new();
    let files = doc["files"].as_object().unwrap();
    let mut logs: Vec<&String> = files.keys().filter(|k| k.ends_with(".log")).collect();
    logs.sort();
    for f in logs {
        for b in files[f]["batches"].as_array().unwrap() {
            for r in b["records"].as_array().into_iter().flatten() {
                let v = &r["payloadJson"];
                let d = &v["data"];
                let id = d["topicId"].as_str().unwrap_or_default().to_string();
                match v["type"].as_str() {
                    Some("TOPIC_RECORD") => {
                        topics.insert(id, d["name"].as_str().unwrap().to_string());
                    }
                    Some("PARTITION_RECORD") | Some("PARTITION_CHANGE_RECORD")
                        if d["replicas"].is_array() =>
                    {
                        let replicas = d["replicas"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|r| r.as_i64().unwrap())
                            .collect();
                        partitions.insert((id, d["partitionId"].as_i64().unwrap()), replicas);
                    }
                    Some("REMOVE_TOPIC_RECORD") => {
                        topics.remove(&id);
                        partitions.retain(|(t, _), _| *t != id);
                    }
                    _ => {}
                }
            }
        }
    }
    (topics, partitions)
}

/// A log dir with every directory state and the metadata problems, broker `node_id`.
fn fixture(log_dir: &Path, node_id: i32, with_metadata: bool) {
    std::fs::create_dir_all(log_dir).unwrap();
    std::fs::write(
        log_dir.join("meta.properties"),
        format!("version=1\nnode.id={node_id}\ncluster.id=Xr9rLhGOQ5a0Nq9jYzbJBw\n"),
    )
    .unwrap();
    partition(log_dir, "payments-0", Some(PAYMENTS_ID));
    partition(log_dir, "payments-1", None);
    partition(log_dir, "payments-9", Some(PAYMENTS_ID));
    partition(log_dir, "customers-0", Some(PAYMENTS_ID));
    partition(log_dir, "gone-0", Some(UNKNOWN_ID));
    partition(
        log_dir,
        &format!("payments-2.{UNIQUE_ID}-delete"),
        Some(PAYMENTS_ID),
    );
    partition(
        log_dir,
        &format!("payments-3.{UNIQUE_ID}-future"),
        Some(PAYMENTS_ID),
    );
    partition(
        log_dir,
        &format!("payments-4.{UNIQUE_ID}-stray"),
        Some(PAYMENTS_ID),
    );
    partition(log_dir, "notapartition", None);
    std::fs::create_dir_all(log_dir.join("remote-log-index-cache")).unwrap();
    write_checkpoint(
        &log_dir.join("recovery-point-offset-checkpoint"),
        &[("payments", 0, 1294), ("vanished", 0, 5)],
    );
    write_checkpoint(
        &log_dir.join("replication-offset-checkpoint"),
        &[("payments", 0, 1400)],
    );
    if with_metadata {
        let src = common::reference_internal_dir()
            .unwrap()
            .join("cluster-metadata/input/__cluster_metadata-0");
        common::copy_dir(&src, &log_dir.join("__cluster_metadata-0"));
    }
}

fn checks(l: &LogDirListing, name: &str) -> Vec<&'static str> {
    let p = l
        .partitions
        .iter()
        .find(|p| p.dir.file_name().unwrap() == name)
        .unwrap_or_else(|| panic!("no {name}"));
    let mut c: Vec<&'static str> = p.findings.iter().map(|f| f.check).collect();
    c.sort();
    c
}

fn state(l: &LogDirListing, name: &str) -> &'static str {
    l.partitions
        .iter()
        .find(|p| p.dir.file_name().unwrap() == name)
        .unwrap()
        .state
}

#[test]
fn directory_states_and_metadata_problems() {
    if common::reference_dir().is_none() || common::reference_internal_dir().is_none() {
        return;
    }
    let (topics, partitions) = reference_image();
    // The fixture's expectations rest on these facts of the reference metadata log.
    assert_eq!(
        topics.get(PAYMENTS_ID).map(String::as_str),
        Some("payments")
    );
    assert!(!topics.contains_key(UNKNOWN_ID));
    assert!(!topics.values().any(|n| n == "gone"));
    assert!(!partitions.contains_key(&(PAYMENTS_ID.to_string(), 9)));
    let replicas = &partitions[&(PAYMENTS_ID.to_string(), 0)];
    let hosting = replicas[0] as i32;
    let not_hosting = (1..10)
        .find(|b| !replicas.contains(&i64::from(*b)))
        .unwrap();

    let tmp = tempfile::tempdir().unwrap();
    let log_dir = tmp.path().join("kafka-logs");
    fixture(&log_dir, hosting, true);
    let l = list_log_dir(&log_dir, &LsOptions::default()).unwrap();
    assert_eq!(l.broker_id, Some(hosting));
    assert_eq!(l.metadata, Some(log_dir.join("__cluster_metadata-0")));
    // remote-log-index-cache is not a partition (LogManager.loadLogs skips it).
    assert!(!l
        .partitions
        .iter()
        .any(|p| p.dir.ends_with("remote-log-index-cache")));
    assert_eq!(state(&l, "payments-0"), "live");
    assert_eq!(
        state(&l, &format!("payments-2.{UNIQUE_ID}-delete")),
        "delete"
    );
    assert_eq!(
        state(&l, &format!("payments-3.{UNIQUE_ID}-future")),
        "future"
    );
    assert_eq!(state(&l, &format!("payments-4.{UNIQUE_ID}-stray")), "stray");
    assert_eq!(state(&l, "notapartition"), "unparseable");
    assert_eq!(checks(&l, "payments-0"), Vec::<&str>::new());
    assert_eq!(checks(&l, "payments-1"), ["ls.partition-metadata-missing"]);
    assert_eq!(checks(&l, "payments-9"), ["ls.not-hosted"]);
    assert_eq!(checks(&l, "customers-0"), ["ls.topic-id"]);
    assert_eq!(checks(&l, "gone-0"), ["ls.topic-id"]);
    assert_eq!(checks(&l, "notapartition"), ["ls.dir-name"]);
    for (p, s) in [(2, "delete"), (3, "future"), (4, "stray")] {
        let n = format!("payments-{p}.{UNIQUE_ID}-{s}");
        assert_eq!(checks(&l, &n), Vec::<&str>::new(), "{n}");
    }
    let p0 = l
        .partitions
        .iter()
        .find(|p| p.dir.ends_with("payments-0"))
        .unwrap();
    assert_eq!(p0.recovery_point, Some(1294));
    assert_eq!(p0.high_watermark, Some(1400));
    assert_eq!(p0.topic_id.as_deref(), Some(PAYMENTS_ID));
    assert_eq!(p0.log_end_offset, Some(1443));
    let unknown: Vec<&str> = l
        .findings
        .iter()
        .filter(|f| f.check == "checkpoint.unknown-partition")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert!(unknown[0].contains("vanished-0"));
    // Totals: nine partition directories of the reference partition plus the metadata log.
    let log_bytes = |dir: &Path| -> u64 {
        segment_bases(dir)
            .iter()
            .map(|b| {
                std::fs::metadata(dir.join(format!("{b:020}.log")))
                    .unwrap()
                    .len()
            })
            .sum()
    };
    let plain = log_bytes(&log_dir.join("payments-0"));
    let metadata_bytes = log_bytes(&log_dir.join("__cluster_metadata-0"));
    assert_eq!(l.totals.partitions, 10);
    assert_eq!(l.totals.size_in_bytes, 9 * plain + metadata_bytes);
    let payments = l.topics.iter().find(|t| t.topic == "payments").unwrap();
    assert_eq!(payments.totals.partitions, 6);
    assert_eq!(payments.totals.size_in_bytes, 6 * plain);

    // Another broker: every assigned partition is now not hosted here.
    let other = tmp.path().join("other");
    fixture(&other, not_hosting, true);
    let l = list_log_dir(&other, &LsOptions::default()).unwrap();
    assert_eq!(checks(&l, "payments-0"), ["ls.not-hosted"]);

    // Without metadata: only what the directory itself shows.
    let zk = tmp.path().join("zk");
    fixture(&zk, hosting, false);
    let l = list_log_dir(&zk, &LsOptions::default()).unwrap();
    assert_eq!(l.metadata, None);
    assert_eq!(checks(&l, "payments-0"), Vec::<&str>::new());
    assert_eq!(checks(&l, "payments-9"), Vec::<&str>::new());
    assert_eq!(checks(&l, "customers-0"), Vec::<&str>::new());
    assert_eq!(checks(&l, "payments-1"), ["ls.partition-metadata-missing"]);
    let missing = l
        .partitions
        .iter()
        .flat_map(|p| &p.findings)
        .find(|f| f.check == "ls.partition-metadata-missing")
        .unwrap();
    assert_eq!(missing.severity, kseg::ops::Severity::Warning);
    // --metadata names another log dir's metadata log.
    let opts = LsOptions {
        metadata: Some(log_dir.clone()),
    };
    let l = list_log_dir(&zk, &opts).unwrap();
    assert_eq!(checks(&l, "payments-9"), ["ls.not-hosted"]);
    assert_eq!(checks(&l, "customers-0"), ["ls.topic-id"]);

    // The same partition in two log dirs: the broker refuses to start.
    let both = list_log_dirs(&[log_dir.clone(), zk.clone()], &LsOptions::default()).unwrap();
    assert!(checks(&both[0], "payments-0").contains(&"ls.duplicate"));
    assert!(checks(&both[1], "payments-0").contains(&"ls.duplicate"));
    assert!(!checks(&both[0], &format!("payments-2.{UNIQUE_ID}-delete")).contains(&"ls.duplicate"));

    // The command: JSON with the format marker, exit 1 on the errors above, 0 without them.
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["ls", "--json", "--sort", "size"])
        .arg(&log_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    common::assert_json_without_duplicate_keys(&text);
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc.as_object().unwrap().keys().next().unwrap(), "format");
    assert_eq!(doc["format"], "kseg/3");
    let parts = doc["logDirs"][0]["partitions"].as_array().unwrap();
    let sizes: Vec<u64> = parts.iter().map(|p| p["size"].as_u64().unwrap()).collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
    assert_eq!(parts.len(), 10);
    let clean = tmp.path().join("clean");
    partition(&clean, "payments-0", Some(PAYMENTS_ID));
    let (code, _) = common::kseg_status(&["ls"], &clean);
    assert_eq!(code, 0);
    let (code, _) = common::kseg_status(&["ls"], &tmp.path().join("missing"));
    assert_eq!(code, 2);
    let (code, stderr) = common::kseg_status(&["ls"], &clean.join("payments-0"));
    assert_eq!(code, 2);
    assert!(stderr.contains("a partition directory"), "{stderr}");
}

/// A partition written by the engine with an offset-index entry every few batches: batch `i`
/// (one record, offset `i`) has timestamp `T0 + i`, except batch 100, which has `T0 + 10^8` (within `segment.ms`: one segment).
/// Returns the directory, the `.timeindex` path and the `.log` size.
fn timestamped_partition(log_dir: &Path) -> (PathBuf, PathBuf, u64) {
    use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
    use kseg::storage::{CloseMode, Log, LogConfig};
    const T0: i64 = 1_700_000_000_000;
    let dir = log_dir.join("clicks-0");
    let config = LogConfig {
        index_interval_bytes: 1000,
        ..LogConfig::default()
    };
    let mut log = Log::create(&dir, config, 0, *b"kseg-test-topic!", T0).unwrap();
    for i in 0..200i64 {
        let timestamp = if i == 100 { T0 + 100_000_000 } else { T0 + i };
        let spec = BatchSpec {
            base_offset: i,
            ..BatchSpec::default()
        };
        let record = RecordSpec {
            offset: i,
            timestamp,
            value: Some(vec![b'v'; 100]),
            ..RecordSpec::default()
        };
        log.append_as_follower(&build_batch(&spec, &[record]).unwrap())
            .unwrap();
    }
    log.close(CloseMode::Clean).unwrap();
    let log_len = std::fs::metadata(dir.join("00000000000000000000.log"))
        .unwrap()
        .len();
    (
        dir.clone(),
        dir.join("00000000000000000000.timeindex"),
        log_len,
    )
}

/// The largest timestamp after a crash that lost the time index's last entry: the broker's
/// `LogSegment.append` records `maxTimestampSoFar` at the offset of the batch that carries it
/// (`timeIndex.maybeAppend`, only when it grew), so from the batch of the time index's last
/// offset on any batch may be larger; ls reads from there, not only after the offset index's
/// last entry, and still not the whole log.
#[test]
fn largest_timestamp_is_exact_when_the_time_index_lags() {
    const BIG: i64 = 1_700_000_000_000 + 100_000_000;
    let tmp = tempfile::tempdir().unwrap();
    let log_dir = tmp.path().join("data");
    let (dir, time_index, log_len) = timestamped_partition(&log_dir);
    let listing = |l: &LogDirListing| {
        let p = l.partitions.iter().find(|p| p.dir == dir).unwrap().clone();
        (p.max_timestamp, p.log_end_offset, p.log_bytes_read)
    };
    // As written: the time index's last entry is batch 100's, the offset index goes on past it.
    let entries = std::fs::read(&time_index).unwrap();
    let slots: Vec<&[u8]> = entries
        .chunks_exact(12)
        .filter(|c| c.iter().any(|&b| b != 0))
        .collect();
    let last_ts = i64::from_be_bytes(slots.last().unwrap()[..8].try_into().unwrap());
    let last_rel = i32::from_be_bytes(slots.last().unwrap()[8..].try_into().unwrap());
    assert_eq!((last_ts, last_rel), (BIG, 100), "the fixture's time index");
    let (max, end, read) = listing(&list_log_dir(&log_dir, &LsOptions::default()).unwrap());
    assert_eq!((max, end), (Some(BIG), Some(200)));
    // From the batch holding offset 100 (its floor index entry) on, not the whole log.
    assert!(read < log_len * 3 / 5, "{read} of {log_len} bytes read");
    let clean_read = read;

    // The crash: the time index's last three entries (batch 100's maximum among them) never
    // reached the disk.
    let kept = slots.len() - 3;
    std::fs::write(&time_index, &entries[..kept * 12]).unwrap();
    let (max, end, read) = listing(&list_log_dir(&log_dir, &LsOptions::default()).unwrap());
    assert_eq!((max, end), (Some(BIG), Some(200)));
    assert!(read < log_len, "{read} of {log_len} bytes read");
    assert!(read > clean_read, "{read} vs {clean_read}");

    // No time index at all: every batch of the active segment may hold the maximum.
    std::fs::remove_file(&time_index).unwrap();
    let (max, end, read) = listing(&list_log_dir(&log_dir, &LsOptions::default()).unwrap());
    assert_eq!((max, end, read), (Some(BIG), Some(200), log_len));
}

/// The table fits the width asked for (`$COLUMNS`, as a terminal's): numbers whole, the least
/// needed columns left out and named on stderr; a pipe without a width gets every column.
#[test]
fn the_table_fits_the_width() {
    let tmp = tempfile::tempdir().unwrap();
    let log_dir = tmp.path().join("data");
    timestamped_partition(&log_dir);
    let run = |columns: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kseg"));
        c.arg("ls").arg(&log_dir).env_remove("COLUMNS");
        if let Some(w) = columns {
            c.env("COLUMNS", w);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap()
    };
    let table_width = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with(['┌', '│', '╞', '└']))
            .map(|l| l.chars().count())
            .max()
            .unwrap()
    };
    let narrow = run(Some("80"));
    assert!(table_width(&narrow) <= 80, "{narrow}");
    assert!(
        narrow.contains("left out to fit 80 columns: topic id"),
        "{narrow}"
    );
    // The log end offset, whole.
    assert!(narrow.contains(" 200 "), "{narrow}");
    let piped = run(None);
    assert!(!piped.contains("left out"), "{piped}");
    assert!(piped.contains("max timestamp"), "{piped}");
    assert!(table_width(&piped) > 80);
    let wide = run(Some("400"));
    assert!(!wide.contains("left out"), "{wide}");
}
