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
                let records = entry
                    .records(&mut scratch, usize::MAX)
                    .unwrap()
                    .map(|r| r.map(|r| (r.offset, r.timestamp)).unwrap())
                    .collect();
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

/// First, last, every index entry's offset and its neighbours, every batch's first and last
/// offset, gaps (offsets no record has) and past the end: or simply every offset when few.
fn sample_offsets(log: &[(i64, Vec<Batch>)]) -> BTreeSet<i64> {
    let end = log
        .iter()
        .flat_map(|(_, bs)| bs)
        .map(|b| b.last_offset + 1)
        .max()
        .unwrap_or(0);
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
        let log = read_all(&dir);
        for offset in sample_offsets(&log) {
            let got = locate(&dir, offset).unwrap();
            let want = expected_batch(&log, offset);
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
        let start = log[0].0;
        for t in sample_times(&log) {
            let got = list_offsets(&dir, OffsetQuery::Timestamp(t)).unwrap();
            let want = expected_for_time(&dir, &log, t, start);
            assert_eq!(
                got.offset.map(|o| (o, got.timestamp, got.leader_epoch)),
                want,
                "{} time {t}",
                dir.display()
            );
        }
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

#[test]
fn damaged_indexes_give_the_intact_answers_with_a_notice() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let intact = root.join("a-plain-v2/input/orders-0");
    let damaged = root.join("h-index-damage/input/orders-0");
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
}

impl Sink for Shown {
    fn event(&mut self, event: &Event<'_>) -> std::io::Result<()> {
        match event {
            Event::LogHeader(LogHeader::Segment { base_offset }) => self.segment = *base_offset,
            Event::Batch { info, .. } => {
                self.batches
                    .push((self.segment, info.position, info.last_offset))
            }
            Event::Record(r) => self.records.push(r.view.offset),
            _ => {}
        }
        Ok(())
    }
}

fn dump_range(dir: &Path, range: OffsetRange, deep: bool) -> Shown {
    let opts = DumpOptions {
        deep,
        range: Some(range),
        ..DumpOptions::default()
    };
    let mut shown = Shown::default();
    dump_paths(&[dir.to_path_buf()], &opts, &mut shown).unwrap();
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
