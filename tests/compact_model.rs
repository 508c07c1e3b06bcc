//! `compact --out` against a simple model of the cleaner, on generated logs (proptest) and on
//! every reference scenario: below the map's end exactly the latest record per key survives
//! (tombstones inside their horizon included), keyless and aborted records go, transaction
//! markers stay on the first pass, everything else is untouched, offsets keep increasing, the
//! output passes `verify --deep`, and a second round changes no record.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
use kseg::format::control::{encode_control_key, ControlRecordType, EndTxnMarker};
use kseg::format::index::decode_txn_index;
use kseg::format::names::{log_file_name, txn_index_file_name};
use kseg::ops::simulate::compact::{compact_to, CompactOptions, CompactReport};
use kseg::storage::log_reader::{LogReader, Step};
use kseg::storage::{CloseMode, Log, LogConfig};
use proptest::prelude::*;

/// One record as read back: offset, key, value, and what its batch was.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rec {
    offset: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    control: bool,
    producer_id: i64,
    transactional: bool,
    /// The batch's delete horizon, if it has one.
    horizon: Option<i64>,
}

/// A batch as read back: its last offset, whether it is a control batch, its bytes.
type BatchRead = (i64, bool, Vec<u8>);
/// A record without its batch's horizon: offset, key, value, control.
type PlainRec = (i64, Option<Vec<u8>>, Option<Vec<u8>>, bool);

/// Every batch and record of a partition dir.
fn read_dir(dir: &Path) -> (Vec<BatchRead>, Vec<Rec>) {
    let mut bases: Vec<i64> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            n.strip_suffix(".log").and_then(|b| b.parse().ok())
        })
        .collect();
    bases.sort();
    let mut batches = Vec::new();
    let mut recs = Vec::new();
    let mut scratch = Vec::new();
    for b in bases {
        let mut reader = LogReader::open(&dir.join(log_file_name(b)), None).unwrap();
        while let Step::Entry { entry, .. } = reader.next_step().unwrap() {
            let (pid, horizon) = match &entry {
                kseg::format::entry::Entry::V2(b) => {
                    (b.header.producer_id, b.header.delete_horizon_ms())
                }
                _ => (-1, None),
            };
            batches.push((
                entry.last_offset(),
                entry.is_control(),
                entry.bytes().to_vec(),
            ));
            for r in entry.records(&mut scratch, usize::MAX).unwrap() {
                let r = r.unwrap();
                recs.push(Rec {
                    offset: r.offset,
                    key: r.key.map(<[u8]>::to_vec),
                    value: r.value.map(<[u8]>::to_vec),
                    control: entry.is_control(),
                    producer_id: pid,
                    transactional: entry.is_transactional(),
                    horizon,
                });
            }
        }
    }
    (batches, recs)
}

/// Offsets of records in aborted transactions, from the source's `.txnindex` files.
fn aborted(dir: &Path, recs: &[Rec]) -> HashSet<i64> {
    let mut txns = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "txnindex") {
            txns.extend(decode_txn_index(&std::fs::read(&p).unwrap()).unwrap());
        }
    }
    recs.iter()
        .filter(|r| {
            r.transactional
                && !r.control
                && txns.iter().any(|t| {
                    t.producer_id == r.producer_id
                        && (t.first_offset..=t.last_offset).contains(&r.offset)
                })
        })
        .map(|r| r.offset)
        .collect()
}

/// The model: what a first cleaning round keeps below `end`, and everything from `end` on.
fn model(src: &[Rec], aborted: &HashSet<i64>, end: i64, now: i64) -> Vec<Rec> {
    let mut latest: BTreeMap<&[u8], i64> = BTreeMap::new();
    for r in src {
        if r.offset < end && !r.control && !aborted.contains(&r.offset) {
            if let Some(k) = &r.key {
                latest.insert(k, r.offset);
            }
        }
    }
    src.iter()
        .filter(|r| {
            if r.offset >= end || r.control {
                return true;
            }
            if aborted.contains(&r.offset) {
                return false;
            }
            let Some(k) = &r.key else { return false };
            let expired_tombstone = r.value.is_none() && r.horizon.is_some_and(|h| h <= now);
            latest.get(k.as_slice()) == Some(&r.offset) && !expired_tombstone
        })
        .cloned()
        .collect()
}

/// Records compared without the batch's horizon (rewritten batches may gain one).
fn plain(recs: &[Rec]) -> Vec<PlainRec> {
    recs.iter()
        .map(|r| (r.offset, r.key.clone(), r.value.clone(), r.control))
        .collect()
}

/// Compacts `src` into a fresh log dir under `tmp` and checks the model; returns the report
/// and the output partition dir.
fn check(src: &Path, tmp: &Path, name: &str, opts: &CompactOptions) -> (CompactReport, PathBuf) {
    let report = compact_to(src, &tmp.join(name), opts).unwrap();
    let out = report.out.clone().unwrap();
    let (_, before) = read_dir(src);
    let (batches, after) = read_dir(&out);
    let expected = model(
        &before,
        &aborted(src, &before),
        report.end_offset,
        opts.now_ms,
    );
    assert_eq!(plain(&after), plain(&expected), "{}", src.display());
    assert!(
        batches.windows(2).all(|w| w[0].0 < w[1].0),
        "batch last offsets increase"
    );
    assert!(after.windows(2).all(|w| w[0].offset < w[1].offset));
    common::assert_verifies_clean(&out);
    // The active segment is untouched.
    let active = |d: &Path| {
        let mut logs: Vec<PathBuf> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        logs.sort();
        std::fs::read(logs.last().unwrap()).unwrap()
    };
    assert_eq!(active(src), active(&out));
    (report, out)
}

/// A second round over the output changes no record: with the checkpoint it has nothing to
/// do; forced from the log start it rewrites only batch headers (horizons of removable
/// markers).
fn check_second_round(out: &Path, tmp: &Path, opts: &CompactOptions) {
    let again = compact_to(out, &tmp.join("again"), opts).unwrap();
    assert!(!again.cleaned, "the checkpoint leaves nothing dirty");
    let forced = compact_to(
        out,
        &tmp.join("forced"),
        &CompactOptions {
            first_dirty_offset: Some(0),
            log_start_offset: None,
            ..*opts
        },
    )
    .unwrap();
    let (_, a) = read_dir(out);
    let (_, b) = read_dir(forced.out.as_ref().unwrap());
    assert_eq!(plain(&a), plain(&b));
    common::assert_verifies_clean(forced.out.as_ref().unwrap());
}

fn options(now_ms: i64) -> CompactOptions {
    CompactOptions {
        min_cleanable_dirty_ratio: 0.0,
        ..CompactOptions::new(now_ms)
    }
}

#[test]
fn reference_scenarios() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    for scenario in common::scenarios(&root) {
        let src = scenario.join("input/orders-0");
        // Damaged inputs are for recover; the cleaner refuses what it cannot read.
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        if ["f-", "g-", "h-"].iter().any(|p| name.starts_with(p)) {
            continue;
        }
        let spec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(scenario.join("SPEC.json")).unwrap())
                .unwrap();
        let now = spec["now_ms"].as_i64().unwrap_or(1_730_000_000_000);
        let tmp = tempfile::tempdir().unwrap();
        let opts = options(now);
        let (report, out) = check(&src, tmp.path(), "out", &opts);
        assert!(report.cleaned, "{name}");
        if name.starts_with("i-") {
            assert_eq!(report.total.keys, 40);
            assert!(report.total.keyless_removed > 0);
            assert!(report.total.tombstones_kept > 0);
            assert!(
                report.segments.len() == 1,
                "small segments merge into one group"
            );
        }
        check_second_round(&out, tmp.path(), &opts);
    }
}

/// One generated append: plain records, or a transaction of one producer and its marker.
#[derive(Debug, Clone)]
enum Op {
    Data(Vec<(Option<u8>, bool)>),
    Txn {
        pid: i64,
        keys: Vec<u8>,
        commit: bool,
    },
    Roll,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => prop::collection::vec((prop::option::weighted(0.9, 0u8..8), prop::bool::weighted(0.2)), 1..6)
            .prop_map(Op::Data),
        1 => (1i64..3, prop::collection::vec(0u8..8, 1..4), any::<bool>())
            .prop_map(|(pid, keys, commit)| Op::Txn { pid, keys, commit }),
        1 => Just(Op::Roll),
    ]
}

const NOW: i64 = 1_000_000;

/// Writes the ops as a broker would have (follower appends, rolls, clean close).
fn write_ops(dir: &Path, ops: &[Op]) {
    let mut log = Log::create(dir, LogConfig::default(), 0, [3; 16], NOW).unwrap();
    let mut offset = 0i64;
    let mut epochs = [0i16; 3];
    let rec = |offset: i64, key: Option<u8>, tombstone: bool| RecordSpec {
        offset,
        timestamp: NOW - 1000 + offset,
        key: key.map(|k| vec![b'k', k]),
        value: (!tombstone).then(|| format!("v{offset}").into_bytes()),
        headers: vec![],
    };
    for op in ops {
        match op {
            Op::Roll => {
                if log.active_segment().size() > 0 {
                    log.roll().unwrap();
                }
            }
            Op::Data(records) => {
                let recs: Vec<RecordSpec> = records
                    .iter()
                    .enumerate()
                    .map(|(i, &(k, t))| rec(offset + i as i64, k, t))
                    .collect();
                let spec = BatchSpec {
                    base_offset: offset,
                    ..Default::default()
                };
                log.append_as_follower(&build_batch(&spec, &recs).unwrap())
                    .unwrap();
                offset += recs.len() as i64;
            }
            Op::Txn { pid, keys, commit } => {
                let recs: Vec<RecordSpec> = keys
                    .iter()
                    .enumerate()
                    .map(|(i, &k)| rec(offset + i as i64, Some(k), false))
                    .collect();
                let spec = BatchSpec {
                    base_offset: offset,
                    producer_id: *pid,
                    producer_epoch: epochs[*pid as usize],
                    base_sequence: 0,
                    is_transactional: true,
                    ..Default::default()
                };
                log.append_as_follower(&build_batch(&spec, &recs).unwrap())
                    .unwrap();
                offset += recs.len() as i64;
                let kind = if *commit {
                    ControlRecordType::Commit
                } else {
                    ControlRecordType::Abort
                };
                let marker = RecordSpec {
                    offset,
                    timestamp: NOW - 1000 + offset,
                    key: Some(encode_control_key(kind).to_vec()),
                    value: Some(EndTxnMarker::encode(0).to_vec()),
                    headers: vec![],
                };
                let spec = BatchSpec {
                    base_offset: offset,
                    is_control: true,
                    ..spec
                };
                log.append_as_follower(&build_batch(&spec, &[marker]).unwrap())
                    .unwrap();
                offset += 1;
                epochs[*pid as usize] += 1;
            }
        }
    }
    log.close(CloseMode::Clean).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn generated_logs_follow_the_model(ops in prop::collection::vec(op(), 1..30), group_bytes in prop_oneof![Just(1u64 << 30), 200u64..2000]) {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src").join("t-0");
        // The active segment gets an append (an empty one rolled last would have no indexes).
        let mut ops = ops;
        ops.push(Op::Data(vec![(Some(0), false)]));
        write_ops(&src, &ops);
        let opts = CompactOptions { segment_bytes: group_bytes, ..options(NOW) };
        let (report, out) = check(&src, tmp.path(), "out", &opts);
        // Every marker survives the first round; no aborted record does.
        let (_, before) = read_dir(&src);
        let (_, after) = read_dir(&out);
        let markers = |r: &[Rec]| r.iter().filter(|r| r.control).map(|r| r.offset).collect::<Vec<_>>();
        prop_assert_eq!(markers(&before), markers(&after));
        let gone = aborted(&src, &before);
        prop_assert!(after.iter().all(|r| !gone.contains(&r.offset) || r.offset >= report.end_offset));
        // Each group fits the size limit, or is a single segment.
        for s in &report.segments {
            prop_assert!(s.sources.len() == 1 || s.stats.bytes_before <= group_bytes);
        }
        check_second_round(&out, tmp.path(), &opts);
    }
}

#[test]
fn tombstones_go_in_a_later_round_after_the_horizon() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src").join("t-0");
    write_ops(
        &src,
        &[
            Op::Data(vec![(Some(1), false), (Some(2), false)]),
            Op::Data(vec![(Some(1), true)]),
            Op::Roll,
            Op::Data(vec![(Some(3), false)]),
        ],
    );
    let opts = options(NOW);
    let (r1, out1) = check(&src, tmp.path(), "one", &opts);
    assert_eq!(r1.total.tombstones_kept, 1);
    assert_eq!(r1.total.horizons_stamped, 1);
    let (_, recs) = read_dir(&out1);
    let tomb = recs.iter().find(|r| r.value.is_none()).unwrap();
    assert_eq!(tomb.horizon, Some(NOW + 86_400_000));
    // Before the horizon the tombstone stays; at it, it goes.
    for (now, kept) in [(NOW + 86_399_999, true), (NOW + 86_400_000, false)] {
        let r = compact_to(
            &out1,
            &tmp.path().join(format!("at-{now}")),
            &CompactOptions {
                first_dirty_offset: Some(0),
                ..options(now)
            },
        )
        .unwrap();
        let (_, recs) = read_dir(r.out.as_ref().unwrap());
        assert_eq!(recs.iter().any(|r| r.value.is_none()), kept, "now {now}");
        common::assert_verifies_clean(r.out.as_ref().unwrap());
    }
    assert!(!tmp
        .path()
        .join("one/t-0")
        .join(txn_index_file_name(0))
        .exists());
}
