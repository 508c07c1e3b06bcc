//! Seeks by offset and by time (`kseg locate`, `kseg offsets`, `dump --offset`) against brute-force answers
//! computed here from a full read of every segment, on every reference scenario.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use kseg::format::entry::Entry;
use kseg::ops::inspect::dump::{dump_paths, DumpOptions, Event, LogHeader, OffsetRange, Sink};
use kseg::ops::inspect::seek::{list_offsets, locate, OffsetQuery};
use kseg::storage::log_reader::{LogReader, Step};
use kseg::storage::seek::SEEK_READ_CHUNK_BYTES;

#[derive(Debug, Clone)]
struct Batch {
    segment: i64,
    position: u64,
    size: u64,
    last_offset: i64,
    max_timestamp: i64,
    epoch: Option<i32>,
    /// (offset, timestamp) of every record.
    records: Vec<(i64, i64)>,
    /// What filters look at: the batch's producer id and epoch, transactional and control
    /// flags (legacy entries: -1, false), and each record's key, value presence and headers.
    producer: (i64, i16, bool, bool),
    details: Vec<Rec>,
}

#[derive(Debug, Clone)]
struct Rec {
    key: Option<Vec<u8>>,
    tombstone: bool,
    headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

/// Every segment's base and its batches, in file order, read from position 0 to the end of the
/// valid data (as a fetch from the index would see it, damage stops a segment).
fn read_all(dir: &Path) -> Vec<(i64, Vec<Batch>)> {
    let mut bases: Vec<i64> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".log")?.parse().ok()
        })
        .collect();
    bases.sort_unstable();
    bases
        .into_iter()
        .map(|base| {
            let mut r = LogReader::open(&dir.join(format!("{base:020}.log")), None).unwrap();
            let mut batches = Vec::new();
            let mut scratch = Vec::new();
            while let Step::Entry { position, entry } = r.next_step().unwrap() {
                let views: Vec<_> = entry
                    .records(&mut scratch, usize::MAX)
                    .unwrap()
                    .map(|r| r.unwrap())
                    .collect();
                let records = views.iter().map(|r| (r.offset, r.timestamp)).collect();
                let details = views
                    .iter()
                    .map(|r| Rec {
                        key: r.key.map(<[u8]>::to_vec),
                        tombstone: r.value.is_none(),
                        headers: r
                            .headers
                            .iter()
                            .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                            .collect(),
                    })
                    .collect();
                let producer = match &entry {
                    Entry::V2(b) => (
                        b.header.producer_id,
                        b.header.producer_epoch,
                        b.header.is_transactional(),
                        b.header.is_control(),
                    ),
                    _ => (-1, -1, false, false),
                };
                let epoch = match &entry {
                    Entry::V2(b) if b.header.partition_leader_epoch >= 0 => {
                        Some(b.header.partition_leader_epoch)
                    }
                    _ => None,
                };
                batches.push(Batch {
                    segment: base,
                    position,
                    size: entry.size_in_bytes() as u64,
                    last_offset: entry.last_offset(),
                    max_timestamp: entry.max_timestamp(),
                    epoch,
                    records,
                    producer,
                    details,
                });
            }
            (base, batches)
        })
        .collect()
}

/// The broker's fetch start: from the segment with the largest base `<= offset` on, the first
/// batch whose last offset reaches it.
fn expected_batch(log: &[(i64, Vec<Batch>)], offset: i64) -> Option<&Batch> {
    let floor = log.iter().rposition(|(b, _)| *b <= offset)?;
    log[floor..]
        .iter()
        .flat_map(|(_, bs)| bs)
        .find(|b| b.last_offset >= offset)
}

/// ListOffsets for a time, from the rule: the first segment whose largest record timestamp
/// (else its mtime) reaches `t`, then in it alone the first record (from its start) with `ts >= t` and
/// `offset >= start`.
fn expected_for_time(
    dir: &Path,
    log: &[(i64, Vec<Batch>)],
    t: i64,
    start: i64,
) -> Option<(i64, i64, Option<i32>)> {
    // A segment without timestamps (v0 messages) counts with its `.log` file's mtime.
    let largest = |base: i64, bs: &[Batch]| match bs.iter().map(|b| b.max_timestamp).max() {
        Some(m) if m >= 0 => m,
        _ => std::fs::metadata(dir.join(format!("{base:020}.log")))
            .unwrap()
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64,
    };
    let (_, seg) = log.iter().find(|(base, bs)| largest(*base, bs) >= t)?;
    seg.iter().filter(|b| b.max_timestamp >= t).find_map(|b| {
        b.records
            .iter()
            .find(|(o, ts)| *ts >= t && *o >= start)
            .map(|&(o, ts)| (o, ts, b.epoch))
    })
}

fn partitions() -> Vec<PathBuf> {
    let Some(root) = common::reference_dir() else {
        return Vec::new();
    };
    common::scenarios(&root)
        .into_iter()
        .map(|s| s.join("input").join("orders-0"))
        .filter(|p| p.is_dir())
        .collect()
}

/// One past the last offset of any batch: the log end the brute-force models stop at.
fn log_end(log: &[(i64, Vec<Batch>)]) -> i64 {
    log.iter()
        .flat_map(|(_, bs)| bs)
        .map(|b| b.last_offset + 1)
        .max()
        .unwrap_or(0)
}

/// First, last, every index entry's offset and its neighbours, every batch's first and last
/// offset, gaps (offsets no record has) and past the end: or simply every offset when few.
fn sample_offsets(log: &[(i64, Vec<Batch>)]) -> BTreeSet<i64> {
    let end = log_end(log);
    if end <= 3000 {
        return (0..=end + 1).collect();
    }
    let mut out = BTreeSet::new();
    for (base, bs) in log {
        out.insert(*base);
        for b in bs {
            for o in [b.records[0].0, b.last_offset, b.last_offset + 1] {
                out.extend([o - 1, o, o + 1]);
            }
        }
    }
    out.extend((0..end).step_by(97));
    out.insert(end);
    out.into_iter().filter(|&o| o >= 0).collect()
}

#[test]
fn every_offset_finds_the_batch_a_fetch_starts_at() {
    for dir in partitions() {
        check_offsets(&dir, &read_all(&dir), usize::MAX);
    }
}

/// At most about `most` of the items of `set`, spread over it.
fn spread<T: Copy>(set: BTreeSet<T>, most: usize) -> Vec<T> {
    let step = set.len().div_ceil(most.max(1)).max(1);
    set.into_iter().step_by(step).collect()
}

/// `locate` of (about `most` of) the sampled offsets against the brute-force fetch start.
fn check_offsets(dir: &Path, log: &[(i64, Vec<Batch>)], most: usize) {
    for offset in spread(sample_offsets(log), most) {
        let got = locate(dir, offset).unwrap();
        let want = expected_batch(log, offset);
        let got_pos = got
            .batch
            .as_ref()
            .map(|b| (b.segment_base, b.position, b.last_offset));
        let want_pos = want.map(|b| (b.segment, b.position, b.last_offset));
        assert_eq!(got_pos, want_pos, "{} offset {offset}", dir.display());
        let (Some(hit), Some(want)) = (&got.batch, want) else {
            continue;
        };
        assert_eq!(hit.size, want.size);
        assert_eq!(
            hit.first_offset,
            want.records.first().map_or(want.last_offset, |r| r.0)
        );
        // With an index: no more log bytes than from the index entry to the batch's end,
        // plus one read.
        if let (Some(e), true) = (hit.index_entry, hit.segment_base <= offset) {
            let span = hit.position + hit.size - e.position as u64;
            assert!(
                got.log_bytes_read <= span + SEEK_READ_CHUNK_BYTES as u64,
                "{} offset {offset}: read {} bytes for a {span}-byte span",
                dir.display(),
                got.log_bytes_read
            );
        }
    }
}

fn sample_times(log: &[(i64, Vec<Batch>)]) -> BTreeSet<i64> {
    let ts: BTreeSet<i64> = log
        .iter()
        .flat_map(|(_, bs)| bs)
        .flat_map(|b| b.records.iter().map(|r| r.1))
        .collect();
    let step = (ts.len() / 1500).max(1);
    let mut out: BTreeSet<i64> = ts
        .iter()
        .step_by(step)
        .flat_map(|&t| [t - 1, t, t + 1])
        .collect();
    if let (Some(&lo), Some(&hi)) = (ts.first(), ts.last()) {
        out.extend([lo - 1000, hi, hi + 1]);
    }
    out
}

#[test]
fn offsets_for_a_time_follow_the_brokers_rule() {
    for dir in partitions() {
        let log = read_all(&dir);
        check_times(&dir, &log, log[0].0, usize::MAX);
    }
}

/// `offsets --time T` for (about `most` of) the sampled times against the rule, with the log
/// start offset `start`.
fn check_times(dir: &Path, log: &[(i64, Vec<Batch>)], start: i64, most: usize) {
    for t in spread(sample_times(log), most) {
        let got = list_offsets(dir, OffsetQuery::Timestamp(t)).unwrap();
        let want = expected_for_time(dir, log, t, start);
        assert_eq!(
            got.offset.map(|o| (o, got.timestamp, got.leader_epoch)),
            want,
            "{} time {t}",
            dir.display()
        );
    }
}

/// `leader-epoch-checkpoint`: `0`, the count, then `epoch startOffset` lines.
fn epochs(dir: &Path) -> Vec<(i32, i64)> {
    let text = std::fs::read_to_string(dir.join("leader-epoch-checkpoint")).unwrap_or_default();
    text.lines()
        .skip(2)
        .map(|l| {
            let mut it = l.split_whitespace();
            (
                it.next().unwrap().parse().unwrap(),
                it.next().unwrap().parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn earliest_latest_and_max_timestamp() {
    for dir in partitions() {
        let log = read_all(&dir);
        let epochs = epochs(&dir);
        let start = log[0].0;
        let end = log
            .last()
            .unwrap()
            .1
            .last()
            .map_or(log.last().unwrap().0, |b| b.last_offset + 1);
        let epoch_at = |o: i64, strict: bool| {
            epochs
                .iter()
                .rev()
                .find(|(_, s)| if strict { *s < o } else { *s <= o })
                .map(|e| e.0)
        };
        let earliest = list_offsets(&dir, OffsetQuery::Earliest).unwrap();
        assert_eq!(
            (earliest.offset, earliest.timestamp, earliest.leader_epoch),
            (Some(start), -1, epoch_at(start, false)),
            "{}",
            dir.display()
        );
        let latest = list_offsets(&dir, OffsetQuery::Latest).unwrap();
        assert_eq!(
            (latest.offset, latest.timestamp, latest.leader_epoch),
            (Some(end), -1, epoch_at(end, true)),
            "{}",
            dir.display()
        );
        // The first record carrying the largest timestamp, in the first segment holding it.
        let all = log.iter().flat_map(|(_, bs)| bs);
        let max = all.clone().map(|b| b.max_timestamp).max().unwrap();
        let batch = all.clone().find(|b| b.max_timestamp == max).unwrap();
        let offset = batch.records.iter().find(|r| r.1 == max).unwrap().0;
        let got = list_offsets(&dir, OffsetQuery::MaxTimestamp).unwrap();
        assert_eq!(
            (got.offset, got.timestamp, got.leader_epoch),
            (Some(offset), max, batch.epoch),
            "{}",
            dir.display()
        );
    }
}

/// `a-plain-v2`'s partition and `h-index-damage`'s, the same log with damaged indexes.
fn intact_and_damaged() -> Option<(PathBuf, PathBuf)> {
    let root = common::reference_dir()?;
    Some((
        root.join("a-plain-v2/input/orders-0"),
        root.join("h-index-damage/input/orders-0"),
    ))
}

#[test]
fn damaged_indexes_give_the_intact_answers_with_a_notice() {
    let Some((intact, damaged)) = intact_and_damaged() else {
        return;
    };
    let log = read_all(&intact);
    let mut noticed = BTreeSet::new();
    for offset in sample_offsets(&log) {
        let (a, b) = (
            locate(&intact, offset).unwrap(),
            locate(&damaged, offset).unwrap(),
        );
        let strip = |h: &kseg::storage::seek::BatchHit| {
            (
                h.segment_base,
                h.position,
                h.size,
                h.first_offset,
                h.last_offset,
            )
        };
        assert_eq!(
            a.batch.as_ref().map(strip),
            b.batch.as_ref().map(strip),
            "offset {offset}"
        );
        assert!(a.fallbacks.is_empty());
        noticed.extend(
            b.fallbacks
                .iter()
                .map(|f| f.index.file_name().unwrap().to_owned()),
        );
    }
    for t in sample_times(&log) {
        let q = OffsetQuery::Timestamp(t);
        let (a, b) = (
            list_offsets(&intact, q).unwrap(),
            list_offsets(&damaged, q).unwrap(),
        );
        assert_eq!(
            (a.offset, a.timestamp, a.leader_epoch),
            (b.offset, b.timestamp, b.leader_epoch),
            "time {t}"
        );
        noticed.extend(
            b.fallbacks
                .iter()
                .map(|f| f.index.file_name().unwrap().to_owned()),
        );
    }
    let names: BTreeSet<String> = noticed
        .iter()
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    for damaged_file in [
        "00000000000000000000.index",
        "00000000000000000317.timeindex",
        "00000000000000000636.index",
    ] {
        assert!(
            names.contains(damaged_file),
            "no fallback for {damaged_file}: {names:?}"
        );
    }
    for n in &names {
        assert!(
            [
                "00000000000000000000.index",
                "00000000000000000317.timeindex",
                "00000000000000000636.index"
            ]
            .contains(&n.as_str()),
            "an intact index was refused: {n}"
        );
    }

    // The CLI says so on stderr, and prints the intact answer.
    let run = |dir: &Path| {
        Command::new(env!("CARGO_BIN_EXE_kseg"))
            .args(["locate", "100"])
            .arg(dir)
            .output()
            .unwrap()
    };
    let (a, b) = (run(&intact), run(&damaged));
    assert!(a.status.success() && b.status.success());
    let stderr = String::from_utf8_lossy(&b.stderr);
    assert!(
        stderr.contains("kseg locate: notice:")
            && stderr.contains("00000000000000000000.index is missing"),
        "{stderr}"
    );
    assert!(a.stderr.is_empty());
    let line = |o: &[u8]| {
        String::from_utf8_lossy(o)
            .split(" via ")
            .next()
            .unwrap()
            .to_owned()
    };
    assert_eq!(line(&a.stdout), line(&b.stdout));
}

/// What a ranged dump shows: (segment of the file, batch position, batch last offset) per batch,
/// and the record offsets.
#[derive(Default)]
struct Shown {
    segment: i64,
    batches: Vec<(i64, u64, i64)>,
    records: Vec<i64>,
    keys: Vec<Option<Vec<u8>>>,
    /// The dump's outcome: damaged places found, indexes the seek could not use.
    damage: usize,
    fallbacks: usize,
}

impl Sink for Shown {
    fn event(&mut self, event: &Event<'_>) -> std::io::Result<()> {
        match event {
            Event::LogHeader(LogHeader::Segment { base_offset }) => self.segment = *base_offset,
            Event::Batch { info, .. } => {
                self.batches
                    .push((self.segment, info.position, info.last_offset))
            }
            Event::Record(r) => {
                self.records.push(r.view.offset);
                self.keys.push(r.view.key.map(<[u8]>::to_vec));
            }
            _ => {}
        }
        Ok(())
    }
}

fn dump_range(dir: &Path, range: OffsetRange, deep: bool) -> Shown {
    dump_with(
        dir,
        DumpOptions {
            deep,
            range: Some(range),
            ..DumpOptions::default()
        },
    )
}

fn dump_with(dir: &Path, opts: DumpOptions) -> Shown {
    let mut shown = Shown::default();
    let outcome = dump_paths(&[dir.to_path_buf()], &opts, &mut shown).unwrap();
    shown.damage = outcome.damage;
    shown.fallbacks = outcome.fallbacks.len();
    shown
}

#[test]
fn dump_ranges_start_at_the_fetch_batch() {
    for dir in partitions() {
        let log = read_all(&dir);
        let all: Vec<&Batch> = log.iter().flat_map(|(_, bs)| bs).collect();
        let key = |b: &Batch| (b.segment, b.position, b.last_offset);
        let offsets: Vec<i64> = sample_offsets(&log).into_iter().step_by(7).collect();
        for &n in &offsets {
            let want = expected_batch(&log, n);
            // --offset N: that batch alone, and with --deep-iteration its record N.
            let one = range(n, Some(n), None);
            let shown = dump_range(&dir, one, false);
            assert_eq!(
                shown.batches,
                want.map(key).into_iter().collect::<Vec<_>>(),
                "{} --offset {n}",
                dir.display()
            );
            let deep = dump_range(&dir, one, true);
            let has_n = want.is_some_and(|b| b.records.iter().any(|r| r.0 == n));
            assert_eq!(
                deep.records,
                if has_n { vec![n] } else { vec![] },
                "{} --offset {n} deep",
                dir.display()
            );

            // --from-offset N --to-offset N+40 --count 25, deep: the records in that range, in
            // log order, at most 25.
            let Some(first) = want else { continue };
            let start = all.iter().position(|b| key(b) == key(first)).unwrap();
            let records: Vec<i64> = all[start..]
                .iter()
                .flat_map(|b| b.records.iter().map(|r| r.0))
                .filter(|&o| o >= n && o <= n + 40)
                .take(25)
                .collect();
            let deep = dump_range(&dir, range(n, Some(n + 40), Some(25)), true);
            assert_eq!(deep.records, records, "{} --from-offset {n}", dir.display());
            // --from-offset N --count 3: three batches from the fetch's.
            let batches: Vec<_> = all[start..].iter().take(3).map(|b| key(b)).collect();
            assert_eq!(
                dump_range(&dir, range(n, None, Some(3)), false).batches,
                batches
            );
        }
    }
}

fn range(from: i64, to: Option<i64>, count: Option<u64>) -> OffsetRange {
    OffsetRange {
        from,
        to,
        count,
        ..OffsetRange::default()
    }
}

/// `--from-time T --to-time T2 --count 30` (deep) against a brute-force scan: from the record
/// the broker's rule (the independent implementation above) names for T, every record in log
/// order up to the one before the record it names for T2 + 1.
#[test]
fn from_time_and_to_time_agree_with_a_brute_force_scan() {
    for dir in partitions() {
        let log = read_all(&dir);
        check_time_windows(&dir, &log, log[0].0, usize::MAX);
    }
}

/// `--from-time T --to-time T2 --count 30` for (about `most` of) the sampled times T, T2 five
/// samples on.
fn check_time_windows(dir: &Path, log: &[(i64, Vec<Batch>)], start: i64, most: usize) {
    let all: Vec<&Batch> = log.iter().flat_map(|(_, bs)| bs).collect();
    let times: Vec<i64> = sample_times(log).into_iter().step_by(13).collect();
    let times = spread(times.into_iter().collect(), most);
    for (i, &t) in times.iter().enumerate() {
        let t2 = times[(i + 5).min(times.len() - 1)];
        let want: Vec<i64> = match expected_for_time(dir, log, t, start) {
            None => Vec::new(),
            Some((from, _, _)) => {
                let to =
                    expected_for_time(dir, log, t2 + 1, start).map_or(i64::MAX, |(o, _, _)| o - 1);
                let first = expected_batch(log, from).unwrap();
                let at = all
                    .iter()
                    .position(|b| (b.segment, b.position) == (first.segment, first.position))
                    .unwrap();
                all[at..]
                    .iter()
                    .flat_map(|b| b.records.iter().map(|r| r.0))
                    .filter(|&o| o >= from && o <= to)
                    .take(30)
                    .collect()
            }
        };
        let window = OffsetRange {
            from_time: Some(t),
            to_time: Some(t2),
            count: Some(30),
            ..OffsetRange::default()
        };
        assert_eq!(
            dump_range(dir, window, true).records,
            want,
            "{} --from-time {t} --to-time {t2}",
            dir.display()
        );
    }
}

#[test]
fn from_time_on_damaged_indexes_equals_the_intact_partition() {
    let Some((intact, damaged)) = intact_and_damaged() else {
        return;
    };
    for t in sample_times(&read_all(&intact)).into_iter().step_by(17) {
        let window = OffsetRange {
            from_time: Some(t),
            count: Some(20),
            ..OffsetRange::default()
        };
        let (a, b) = (
            dump_range(&intact, window, true),
            dump_range(&damaged, window, true),
        );
        assert_eq!(a.records, b.records, "--from-time {t}");
        assert_eq!(a.fallbacks, 0);
        assert!(b.fallbacks > 0, "--from-time {t}: no fallback notice");
    }
}

/// `--isolation read_committed` on c-transactions shows exactly what its SPEC commits: offsets
/// as the writer assigns them (one per record and per marker, from 0), the records of
/// non-transactional batches and of transactions whose marker is COMMIT, below the first
/// offset of the transaction still open at shutdown (the last stable offset: no
/// replication-offset-checkpoint, so the high watermark is the log end). From any start
/// offset, the same records from there on.
#[test]
fn read_committed_shows_exactly_the_committed_records() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let scenario = root.join("c-transactions");
    let spec: serde_json::Value =
        serde_json::from_slice(&std::fs::read(scenario.join("SPEC.json")).unwrap()).unwrap();
    let mut next = 0i64;
    let mut open: std::collections::HashMap<i64, Vec<(i64, String)>> = Default::default();
    let mut visible: Vec<(i64, String)> = Vec::new();
    let mut aborted = 0;
    for op in spec["ops"].as_array().unwrap() {
        assert_eq!(op["op"], "append");
        for b in op["batches"].as_array().unwrap() {
            let pid = b["producer_id"].as_i64().unwrap_or(-1);
            if let Some(c) = b.get("control") {
                let txn = open.remove(&pid).unwrap_or_default();
                match c["type"].as_str().unwrap() {
                    "commit" => visible.extend(txn),
                    "abort" => aborted += txn.len(),
                    other => panic!("marker {other}"),
                }
                next += 1;
                continue;
            }
            let transactional = b["transactional"].as_bool().unwrap_or(false);
            for r in b["records"].as_array().unwrap() {
                let rec = (next, r["key"].as_str().unwrap().to_owned());
                next += 1;
                if transactional {
                    open.entry(pid).or_default().push(rec);
                } else {
                    visible.push(rec);
                }
            }
        }
    }
    assert!(
        aborted > 0 && !open.is_empty(),
        "the scenario aborts and leaves one open"
    );
    let lso = open
        .values()
        .filter_map(|t| t.first())
        .map(|r| r.0)
        .min()
        .unwrap();
    visible.retain(|r| r.0 < lso);
    visible.sort();
    let dir = scenario.join("input/orders-0");
    for from in [
        0,
        3,
        13,
        46,
        47,
        57,
        100,
        127,
        201,
        302,
        350,
        lso - 1,
        lso,
        next,
    ] {
        let shown = dump_range(
            &dir,
            OffsetRange {
                from,
                read_committed: true,
                ..OffsetRange::default()
            },
            true,
        );
        let got: Vec<(i64, String)> = shown
            .records
            .iter()
            .zip(&shown.keys)
            .map(|(&o, k)| (o, String::from_utf8(k.clone().unwrap()).unwrap()))
            .collect();
        let want: Vec<_> = visible.iter().filter(|r| r.0 >= from).cloned().collect();
        assert_eq!(got, want, "read_committed from {from}");
        // The library's iterator reads the same, through the same isolation view.
        let mut records = kseg::ops::inspect::seek::read_committed(&dir, from).unwrap();
        let read: Vec<(i64, String)> = records
            .by_ref()
            .map(|r| r.unwrap())
            .map(|r| (r.offset, String::from_utf8(r.key.unwrap()).unwrap()))
            .collect();
        assert_eq!(read, want, "read_committed iterator from {from}");
    }
    // read_uncommitted: every record below the log end, markers included.
    let all = dump_range(&dir, range(0, None, None), true);
    assert_eq!(all.records, (0..next).collect::<Vec<_>>());
}

/// Each filter against the same predicate applied to a full read: the records it keeps, and
/// the batches shown (those with a kept record; every batch with `--batches`; without deep
/// iteration the same batch lines and no record). Partitions whose dump finds damage are
/// left out (the dump resumes after damage, the brute-force read stops there).
#[test]
fn record_filters_agree_with_a_brute_force_scan() {
    use kseg::storage::read::{HeaderMatch, RecordFilter};
    type Pred = Box<dyn Fn(&Batch, &Rec) -> bool>;
    for dir in partitions() {
        let log = read_all(&dir);
        let all: Vec<&Batch> = log.iter().flat_map(|(_, bs)| bs).collect();
        let whole = dump_with(&dir, DumpOptions::default());
        if whole.damage > 0 {
            continue;
        }
        let recs: Vec<(&Batch, &Rec)> = all
            .iter()
            .flat_map(|b| b.details.iter().map(move |r| (*b, r)))
            .collect();
        let (mid_batch, mid) = recs[recs.len() / 2];
        let mut cases: Vec<(RecordFilter, Pred)> = Vec::new();
        if let Some(k) = mid.key.clone() {
            let kk = k.clone();
            cases.push((
                RecordFilter {
                    key: Some(k),
                    ..Default::default()
                },
                Box::new(move |_, r| r.key.as_deref() == Some(&kk[..])),
            ));
            if let Ok(text) = std::str::from_utf8(&mid.key.as_ref().unwrap()[..]) {
                let prefix: String = text.chars().take(3).collect();
                let p = prefix.clone().into_bytes();
                cases.push((
                    RecordFilter {
                        key_regex: Some(
                            regex::bytes::Regex::new(&format!("^{}", regex::escape(&prefix)))
                                .unwrap(),
                        ),
                        ..Default::default()
                    },
                    Box::new(move |_, r| r.key.as_ref().is_some_and(|k| k.starts_with(&p))),
                ));
            }
        }
        if let Some((name, value)) = recs.iter().find_map(|(_, r)| r.headers.first().cloned()) {
            let n = name.clone();
            cases.push((
                RecordFilter {
                    headers: vec![HeaderMatch {
                        name: String::from_utf8(name.clone()).unwrap(),
                        value: None,
                    }],
                    ..Default::default()
                },
                Box::new(move |_, r| r.headers.iter().any(|h| h.0 == n)),
            ));
            let (n, v) = (name.clone(), value.clone());
            cases.push((
                RecordFilter {
                    headers: vec![HeaderMatch {
                        name: String::from_utf8(name).unwrap(),
                        value: Some(value.clone().unwrap_or_default()),
                    }],
                    ..Default::default()
                },
                Box::new(move |_, r| {
                    r.headers
                        .iter()
                        .any(|h| h.0 == n && h.1.as_ref() == Some(v.as_ref().unwrap_or(&vec![])))
                }),
            ));
        }
        let (pid, epoch, _, _) = mid_batch.producer;
        cases.push((
            RecordFilter {
                producer_id: Some(pid),
                producer_epoch: Some(epoch),
                ..Default::default()
            },
            Box::new(move |b, _| b.producer.0 == pid && b.producer.1 == epoch),
        ));
        let le = mid_batch.epoch.unwrap_or(-1);
        cases.push((
            RecordFilter {
                leader_epoch: Some(le),
                ..Default::default()
            },
            Box::new(move |b, _| b.epoch.unwrap_or(-1) == le),
        ));
        cases.push((
            RecordFilter {
                tombstones: true,
                ..Default::default()
            },
            Box::new(|_, r| r.tombstone),
        ));
        cases.push((
            RecordFilter {
                transactional: true,
                ..Default::default()
            },
            Box::new(|b, _| b.producer.2),
        ));
        cases.push((
            RecordFilter {
                control: true,
                tombstones: true,
                ..Default::default()
            },
            Box::new(|b, r| b.producer.3 && r.tombstone),
        ));
        let key = |b: &Batch| (b.segment, b.position, b.last_offset);
        for (filter, pred) in cases {
            let records: Vec<i64> = all
                .iter()
                .flat_map(|b| {
                    b.records
                        .iter()
                        .zip(&b.details)
                        .filter(|(_, r)| pred(b, r))
                        .map(|(o, _)| o.0)
                })
                .collect();
            let batches: Vec<_> = all
                .iter()
                .filter(|b| b.details.iter().any(|r| pred(b, r)))
                .map(|b| key(b))
                .collect();
            let what = format!("{} {filter:?}", dir.display());
            let opts = |deep, all_batches| DumpOptions {
                deep,
                filter: filter.clone(),
                all_batches,
                range: Some(range(0, None, None)),
                ..DumpOptions::default()
            };
            let deep = dump_with(&dir, opts(true, false));
            assert_eq!(deep.records, records, "{what}");
            assert_eq!(deep.batches, batches, "{what}");
            let shallow = dump_with(&dir, opts(false, false));
            assert_eq!(shallow.batches, batches, "{what} shallow");
            assert!(shallow.records.is_empty());
            let context = dump_with(&dir, opts(true, true));
            assert_eq!(context.records, records, "{what} --batches");
            assert_eq!(
                context.batches,
                all.iter().map(|b| key(b)).collect::<Vec<_>>(),
                "{what} --batches"
            );
        }
    }
}

/// The library's reader (`PartitionRecords`, what `Log::read_from` returns) from sample offsets:
/// the records a brute-force read has from that offset on, in order.
#[test]
fn the_record_iterator_reads_from_an_offset() {
    use kseg::storage::read::{PartitionRecords, RecordFilter};
    for dir in partitions() {
        let log = read_all(&dir);
        if dump_with(&dir, DumpOptions::default()).damage > 0 {
            continue;
        }
        let all: Vec<&Batch> = log.iter().flat_map(|(_, bs)| bs).collect();
        for n in sample_offsets(&log).into_iter().step_by(11) {
            let want: Vec<i64> = match expected_batch(&log, n) {
                None => Vec::new(),
                Some(first) => {
                    let at = all
                        .iter()
                        .position(|b| (b.segment, b.position) == (first.segment, first.position))
                        .unwrap();
                    all[at..]
                        .iter()
                        .flat_map(|b| b.records.iter().map(|r| r.0))
                        .filter(|&o| o >= n)
                        .take(40)
                        .collect()
                }
            };
            let got: Vec<i64> = PartitionRecords::open(&dir, n)
                .unwrap()
                .with_filter(RecordFilter::default())
                .take(40)
                .map(|r| r.unwrap().offset)
                .collect();
            assert_eq!(got, want, "{} from {n}", dir.display());
        }
    }
}

/// `Log::read_from` and `Log::seek_time` on a log the engine wrote: keys `k{offset % 3}`,
/// timestamps 1000 + 10 × offset, 4 records a batch, a roll after offset 11.
#[test]
fn log_reads_from_an_offset_and_seeks_a_time() {
    use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
    use kseg::storage::read::RecordFilter;
    use kseg::storage::{CloseMode, Log, LogConfig};
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("t-0");
    let mut log = Log::create(&part, LogConfig::default(), 0, *b"kseg-seek-test!!", 0).unwrap();
    for base in (0..24).step_by(4) {
        if base == 12 {
            log.roll().unwrap();
        }
        let recs: Vec<RecordSpec> = (base..base + 4)
            .map(|o| RecordSpec {
                offset: o,
                timestamp: 1000 + 10 * o,
                key: Some(format!("k{}", o % 3).into_bytes()),
                value: Some(b"v".to_vec()),
                headers: vec![],
            })
            .collect();
        let spec = BatchSpec {
            base_offset: base,
            ..Default::default()
        };
        log.append_as_follower(&build_batch(&spec, &recs).unwrap())
            .unwrap();
    }
    // The first record stamped at or after 1095 is offset 10 (1100); past the end, none.
    let hit = log.seek_time(1095).unwrap().unwrap();
    assert_eq!((hit.offset, hit.timestamp), (10, 1100));
    assert!(log.seek_time(1000 + 10 * 24).unwrap().is_none());
    let k1 = RecordFilter {
        key: Some(b"k1".to_vec()),
        ..Default::default()
    };
    let got: Vec<i64> = log
        .read_from(9)
        .unwrap()
        .with_filter(k1)
        .map(|r| r.unwrap().offset)
        .collect();
    assert_eq!(got, vec![10, 13, 16, 19, 22]);
    let from_roll: Vec<i64> = log
        .read_from(12)
        .unwrap()
        .map(|r| r.unwrap().offset)
        .collect();
    assert_eq!(from_roll, (12..24).collect::<Vec<_>>());
    log.close(CloseMode::Clean).unwrap();
}

/// The log start offset the log dir's `log-start-offset-checkpoint` gives a partition (its
/// `topic partition offset` line), never below the first segment.
fn checkpointed_log_start(dir: &Path, first_base: i64) -> i64 {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let (topic, partition) = name.rsplit_once('-').unwrap();
    let text = std::fs::read_to_string(dir.parent().unwrap().join("log-start-offset-checkpoint"))
        .unwrap_or_default();
    text.lines()
        .skip(2)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() == 3 && f[0] == topic && f[1] == partition).then(|| f[2].parse().unwrap())
        })
        .next()
        .map_or(first_base, |o: i64| o.max(first_base))
}

/// Every partition of every real-world broker log dir: offsets, times and time windows as on
/// the reference scenarios, and `read_committed` shows no control batch and nothing at or
/// past the last stable offset, which is at most the log end.
/// The last stable offset's replay reads every batch from the latest producer snapshot (at or
/// below the log end; the first segment's base without one) on, and the bytes it reads are in
/// the seek's count: at least those batches' sizes. (Damage stops the replay: partitions whose
/// dump finds some are left out.)
fn assert_replay_counted(dir: &Path, log: &[(i64, Vec<Batch>)], bytes_read: u64) {
    if dump_with(dir, DumpOptions::default()).damage > 0 {
        return;
    }
    let end = log_end(log);
    let snapshot = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".snapshot")?.parse::<i64>().ok()
        })
        .filter(|&o| o <= end)
        .max()
        .unwrap_or(0);
    let tail: u64 = log
        .iter()
        .flat_map(|(_, bs)| bs)
        .filter(|b| b.last_offset >= snapshot)
        .map(|b| b.size)
        .sum();
    assert!(
        bytes_read >= tail,
        "{}: the replay from {snapshot} spans {tail} bytes, {bytes_read} counted",
        dir.display()
    );
}

/// On every reference scenario, the stable-offset replay's bytes are counted.
#[test]
fn stable_offsets_count_the_replay() {
    for dir in partitions() {
        let log = read_all(&dir);
        let mut seeker = kseg::storage::seek::Seeker::open(&dir).unwrap();
        kseg::ops::inspect::seek::stable_offsets(&dir, &mut seeker).unwrap();
        assert_replay_counted(&dir, &log, seeker.log_bytes_read());
    }
}

#[test]
fn real_world_log_dirs_seek_as_the_broker_does() {
    let Some(root) = common::realworld_dir() else {
        return;
    };
    let (tmp, _) = common::unpack_realworld(&root);
    let mut partitions = 0;
    for log_dir in common::broker_log_dirs(tmp.path()) {
        // A log dir whose partitions hold no segment has nothing to seek in.
        let Ok(dirs) = kseg::ops::inspect::seek::partition_dirs(&log_dir) else {
            continue;
        };
        for dir in dirs {
            partitions += 1;
            let log = read_all(&dir);
            let start = checkpointed_log_start(&dir, log[0].0);
            check_offsets(&dir, &log, 60);
            check_times(&dir, &log, start, 60);
            check_time_windows(&dir, &log, start, 20);
            let mut seeker = kseg::storage::seek::Seeker::open(&dir).unwrap();
            let stable = kseg::ops::inspect::seek::stable_offsets(&dir, &mut seeker).unwrap();
            assert!(stable.last_stable_offset <= stable.log_end_offset);
            assert_replay_counted(&dir, &log, seeker.log_bytes_read());
            let committed = DumpOptions {
                deep: true,
                range: Some(OffsetRange {
                    read_committed: true,
                    ..OffsetRange::default()
                }),
                ..DumpOptions::default()
            };
            let shown = dump_with(&dir, committed);
            let control: BTreeSet<(i64, u64)> = log
                .iter()
                .flat_map(|(_, bs)| bs)
                .filter(|b| b.producer.3)
                .map(|b| (b.segment, b.position))
                .collect();
            assert!(
                shown.batches.iter().all(|b| !control.contains(&(b.0, b.1))),
                "{}: a control batch under read_committed",
                dir.display()
            );
            assert!(
                shown.records.iter().all(|&o| o < stable.last_stable_offset),
                "{}",
                dir.display()
            );
        }
    }
    assert!(partitions > 0);
}

/// With a record filter, a directory's files without records are left out and stderr names
/// each of them; a file named on the command line is dumped all the same.
#[test]
fn filters_leave_out_files_without_records_and_say_which() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let dir = root.join("c-transactions/input/orders-0");
    let run = |path: &Path| {
        Command::new(env!("CARGO_BIN_EXE_kseg"))
            .args(["dump", "--transactional"])
            .arg(path)
            .output()
            .unwrap()
    };
    let out = run(&dir);
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let (logs, others): (Vec<_>, Vec<_>) = files
        .iter()
        .partition(|p| p.extension().is_some_and(|e| e == "log"));
    assert!(!others.is_empty());
    for p in &logs {
        assert!(stdout.contains(&format!("Dumping {}\n", p.display())));
    }
    let notice = stderr
        .lines()
        .find(|l| l.contains("without any left out"))
        .unwrap_or_else(|| panic!("no notice: {stderr}"));
    assert!(
        notice.contains(&format!("{} file(s)", others.len())),
        "{notice}"
    );
    for p in &others {
        assert!(!stdout.contains(&format!("Dumping {}\n", p.display())));
        assert!(notice.contains(&p.display().to_string()), "{p:?}: {notice}");
    }
    // Named on the command line, an index is dumped (it has no records to filter).
    let index = others
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "index"))
        .unwrap();
    let out = run(index);
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains(&format!("Dumping {}\n", index.display())));
    assert!(stdout.contains("offset:"), "{stdout}");
    assert!(!String::from_utf8(out.stderr).unwrap().contains("left out"));
}

/// A directory of log dirs (a `log.dirs` parent): `offsets` answers for the partitions of each
/// log dir, and says on stderr that it took them.
#[test]
fn offsets_takes_each_log_dir_of_a_directory_of_log_dirs() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = |p: i32| {
        format!(
            r#"{{"topic":"t","partition":{p},"ops":[{{"op":"append","batches":[{{"records":[{{"key":"a"}},{{"key":"b"}}]}}]}}]}}"#
        )
    };
    common::kseg_write(&spec(0), &tmp.path().join("data-1/t-0"));
    common::kseg_write(&spec(1), &tmp.path().join("data-2/t-1"));
    let o = common::kseg(&["offsets", "--json", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let answered: Vec<(String, i64)> = v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let dir = std::path::Path::new(a["dir"].as_str().unwrap());
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            (name, a["offset"].as_i64().unwrap())
        })
        .collect();
    assert_eq!(answered, [("t-0".to_owned(), 2), ("t-1".to_owned(), 2)]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("a directory of 2 log dir(s), each taken"));
}
