//! The structured target: a small partition directory built from the input by kseg's own
//! writer (`ops::write::spec`: records, codecs, magics, producers, transactions, segment
//! rolls, a clean or crashed close, tail garbage) and damaged by its damage layer
//! (`ops::write::damage`: byte flips, truncations, deleted files, swapped and preallocated
//! index entries, leftover copies), then read and repaired as an operator would:
//! `verify --deep`, `dump`, `recover` (dry run, then `--apply` on the directory, which is a
//! scratch copy), `verify --deep` again and a second `recover`.
//!
//! Asserted: no panic; allocations within the bound ([`super::alloc`]); the dry run changes
//! nothing; after the apply, verify reports none of the errors the broker's recovery removes
//! (torn tails, bad framing and checksums — recovery truncates there —, index, time-index,
//! transaction-index and snapshot errors — it rebuilds them —, leftovers — it resolves
//! them); and a second recover has nothing left to do.

use std::collections::BTreeMap;
use std::path::Path;

use arbitrary::{Arbitrary, Unstructured};
use serde_json::{json, Value};

use kseg::format::names::{
    snapshot_file_name, LEADER_EPOCH_CHECKPOINT_FILE_NAME, PRODUCER_SNAPSHOT_FILE_SUFFIX,
    SWAP_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX,
};
use kseg::ops::repair::apply::{lock_partition, ApplyOptions, Backup, Change};
use kseg::ops::repair::recover::{plan, RecoverOptions};
use kseg::ops::write::damage::{apply_all, Damage};
use kseg::ops::write::spec::{write_spec, Spec};
use kseg::ops::Severity;
use kseg::storage::LogConfig;

use super::files;

const NOW_MS: i64 = 1_730_000_000_000;
const SEGMENT_INDEX_BYTES: u64 = 1024;
const MAX_OPS: usize = 12;
const MAX_BATCHES: usize = 4;
const MAX_RECORDS: usize = 6;
const MAX_DAMAGE: usize = 4;

/// Errors `verify` reports that the broker's recovery (`LogLoader` → `LogSegment.recover`,
/// which truncates at the first batch that fails `ensureValid` and rebuilds the indexes, the
/// transaction index and the producer snapshots; leftovers are resolved before) leaves none
/// of: they must be gone after `recover --apply`.
pub const RECOVERY_REMOVES: [&str; 22] = [
    "log.size-too-small",
    "log.bad-entry",
    "log.entry-too-large",
    "log.torn-tail",
    "batch.crc",
    "index.partial-entry",
    "index.untrimmed",
    "index.order",
    "index.position",
    "index.offset-hidden",
    "timeindex.offset",
    "timeindex.timestamp",
    "timeindex.order",
    "txnindex.missing",
    "txnindex.marker",
    "txnindex.entry",
    "txnindex.order",
    "txnindex.partial-entry",
    "txnindex.decode",
    "snapshot.content",
    "leftover.file",
    "leftover.kseg-tmp",
];

/// Of those, the checks that judge an index entry by the batch a forward search for its
/// offset lands on.
const LOOKUP_CHECKS: [&str; 3] = [
    "index.offset-hidden",
    "timeindex.offset",
    "timeindex.timestamp",
];

#[derive(Debug, Arbitrary)]
struct Input {
    /// The default magic (mod 3).
    magic: u8,
    /// `segment.bytes`: 256 + this, so that segments roll.
    segment_bytes: u16,
    /// `index.interval.bytes`: 1 + this.
    index_interval: u8,
    ops: Vec<OpIn>,
    clean_close: bool,
    tail_garbage: Option<Vec<u8>>,
    damage: Vec<DamageIn>,
}

#[derive(Debug, Arbitrary)]
enum OpIn {
    Append(Vec<BatchIn>),
    Roll,
    AdvanceClock(u16),
}

#[derive(Debug, Arbitrary)]
struct BatchIn {
    /// The batch's own magic (mod 3), else the default.
    magic: Option<u8>,
    /// Codec id (mod 5).
    codec: u8,
    log_append_time: bool,
    leader_epoch: u8,
    /// Producer id and epoch (v2 only).
    producer: Option<(u8, u8)>,
    transactional: bool,
    /// A transaction marker (commit when true) instead of records.
    control: Option<bool>,
    records: Vec<RecordIn>,
}

#[derive(Debug, Arbitrary)]
struct RecordIn {
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    /// Timestamp step from the clock (may go backwards).
    ts_delta: i8,
    header: Option<(u8, Vec<u8>)>,
}

#[derive(Debug, Arbitrary)]
enum DamageIn {
    /// A byte of a file changed (to `new`, else all bits flipped).
    Flip {
        file: u8,
        position: u32,
        new: Option<u8>,
    },
    /// A file cut short.
    Truncate { file: u8, to: u32 },
    /// A file removed.
    Delete { file: u8 },
    /// Two entries of an index exchanged.
    SwapEntries { file: u8, i: u8, j: u8 },
    /// An index grown back to its preallocated size, as a crashed broker leaves it.
    Preallocate { file: u8 },
    /// A `.swap`, `.cleaned` or `.deleted` copy (or rename) of a file.
    Leftover { file: u8, suffix: u8, rename: bool },
}

const CODECS: [&str; 5] = ["none", "gzip", "snappy", "lz4", "zstd"];

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl BatchIn {
    fn to_json(&self, default_magic: i8) -> Value {
        let magic = self.magic.map_or(default_magic, |m| (m % 3) as i8);
        let mut codec = CODECS[usize::from(self.codec) % CODECS.len()];
        if magic < 2 && codec == "zstd" {
            codec = "lz4"; // zstd needs magic 2
        }
        let mut b = json!({
            "magic": magic,
            "compression": codec,
            "leader_epoch": i32::from(self.leader_epoch % 4),
        });
        if magic > 0 && self.log_append_time {
            b["timestamp_type"] = json!("LogAppendTime");
        }
        if magic == 2 {
            if let Some((pid, epoch)) = self.producer {
                b["producer_id"] = json!(i64::from(pid % 4) + 1000);
                b["producer_epoch"] = json!(i16::from(epoch % 3));
                b["transactional"] = json!(self.transactional);
                if let Some(commit) = self.control {
                    b["control"] = json!({"type": if commit { "commit" } else { "abort" }});
                    b["transactional"] = json!(true);
                    return b;
                }
            }
        }
        let records: Vec<Value> = self
            .records
            .iter()
            .take(MAX_RECORDS)
            .map(|r| {
                let mut rec = json!({});
                if let Some(k) = &r.key {
                    rec["key_hex"] = json!(hex(&k[..k.len().min(64)]));
                }
                if let Some(v) = &r.value {
                    rec["value_hex"] = json!(hex(&v[..v.len().min(256)]));
                }
                rec["timestamp"] = json!(NOW_MS - 3_600_000 + i64::from(r.ts_delta) * 1000);
                if let Some((k, v)) = &r.header {
                    if magic == 2 {
                        rec["headers"] = json!([{"key": format!("h{k}"), "value_hex": hex(v)}]);
                    }
                }
                rec
            })
            .collect();
        if records.is_empty() {
            b["records"] = json!([{"value": "x"}]);
        } else {
            b["records"] = Value::Array(records);
        }
        b
    }
}

impl Input {
    fn spec(&self) -> Value {
        let default_magic = (self.magic % 3) as i8;
        let ops: Vec<Value> = self
            .ops
            .iter()
            .take(MAX_OPS)
            .map(|op| match op {
                OpIn::Append(batches) => json!({
                    "op": "append",
                    "batches": batches
                        .iter()
                        .take(MAX_BATCHES)
                        .map(|b| b.to_json(default_magic))
                        .collect::<Vec<_>>(),
                }),
                OpIn::Roll => json!({"op": "roll"}),
                OpIn::AdvanceClock(ms) => json!({"op": "advance_clock", "ms": ms}),
            })
            .collect();
        let mut spec = json!({
            "topic": "fuzz",
            "partition": 0,
            "now_ms": NOW_MS,
            "config": {
                "segment.bytes": 256 + u64::from(self.segment_bytes),
                "index.interval.bytes": 1 + u64::from(self.index_interval),
                "segment.index.bytes": SEGMENT_INDEX_BYTES,
                "magic": default_magic,
            },
            "close": if self.clean_close { "clean" } else { "crash" },
            "ops": ops,
        });
        if let Some(g) = &self.tail_garbage {
            spec["tail_garbage"] = json!({"type": "hex", "hex": hex(&g[..g.len().min(64)])});
        }
        spec
    }

    /// The damage as the damage layer takes it, aimed at the files `dir` now holds.
    fn damage(&self, dir: &Path) -> Vec<Damage> {
        let names = file_names(dir);
        if names.is_empty() {
            return Vec::new();
        }
        let pick = |f: u8| &names[usize::from(f) % names.len()];
        let size = |name: &str| std::fs::metadata(dir.join(name)).map_or(0, |m| m.len());
        self.damage
            .iter()
            .take(MAX_DAMAGE)
            .map(|d| match d {
                DamageIn::Flip { file, position, new } => {
                    let f = pick(*file);
                    let position = u64::from(*position) % size(f).max(1);
                    let mut v = json!({"kind": "flip_byte", "file": f, "position": position});
                    if let Some(n) = new {
                        v["new"] = json!(n);
                    }
                    v
                }
                DamageIn::Truncate { file, to } => {
                    let f = pick(*file);
                    let to = u64::from(*to) % (size(f) + 1);
                    json!({"kind": "truncate", "file": f, "to": to})
                }
                DamageIn::Delete { file } => json!({"kind": "delete", "file": pick(*file)}),
                DamageIn::SwapEntries { file, i, j } => {
                    json!({"kind": "swap_entries", "file": pick(*file), "entries": [i, j]})
                }
                DamageIn::Preallocate { file } => {
                    json!({"kind": "preallocate", "file": pick(*file)})
                }
                DamageIn::Leftover {
                    file,
                    suffix,
                    rename,
                } => {
                    let suffix = ["swap", "cleaned", "deleted"][usize::from(*suffix) % 3];
                    json!({"kind": "leftover", "file": pick(*file), "suffix": suffix, "rename": rename})
                }
            })
            .filter_map(|v| serde_json::from_value(v).ok())
            .collect()
    }
}

/// The names of the files in `dir`, sorted.
fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Every file of `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    file_names(dir)
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap_or_default();
            (n, bytes)
        })
        .collect()
}

fn recover_options() -> RecoverOptions {
    RecoverOptions {
        config: LogConfig {
            segment_index_bytes: SEGMENT_INDEX_BYTES,
            ..LogConfig::default()
        },
        now_ms: NOW_MS,
        recovery_point: None,
        producer_id_expiration_ms: 86_400_000,
    }
}

/// The structured target's body.
pub fn partition(data: &[u8]) {
    let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let Ok(spec) = Spec::from_json(&input.spec().to_string()) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("temporary directory");
    let dir = tmp.path().join("fuzz-0");
    if write_spec(&spec, &dir).is_err() {
        return;
    }
    for d in input.damage(&dir) {
        // A damage that does not apply (no such entry, not an index) is left out.
        let _ = apply_all(&dir, std::slice::from_ref(&d), SEGMENT_INDEX_BYTES);
    }
    check(&dir);
}

/// Reads, dumps and recovers the damaged partition directory `dir` (a scratch copy), with
/// the module's assertions.
pub fn check(dir: &Path) {
    files::read_everything(dir);
    let before = snapshot(dir);
    // A plan is applied only under the lock it was made under; each run takes its own, as
    // separate commands would.
    let lock = lock_partition(dir, false).expect("lock a scratch copy");
    let Ok(dry) = plan(dir, &recover_options()) else {
        // Refused (bad input, exit 2): it must have left the directory as it was.
        assert!(snapshot(dir) == before, "a refused recover changed files");
        return;
    };
    let _ = (dry.render_text(true), dry.to_json());
    let dry_log_start = dry.report.log_start_offset;
    assert!(snapshot(dir) == before, "recover's dry run changed files");
    let apply = ApplyOptions {
        backup: Backup::None,
        fail_before_step: None,
        before_step: None,
    };
    dry.apply(&apply)
        .expect("recover --apply on a scratch copy");
    drop(dry);
    drop(lock);
    let report = files::verify(dir).expect("verify after recover --apply");
    // Segments whose offsets go back, which recovery keeps (it meets the order only where it
    // appends an index entry: InvalidOffsetException).
    let disordered: Vec<_> = report
        .findings()
        .filter(|f| f.check == "log.offset-order")
        .map(|f| f.file.with_extension(""))
        .collect();
    let overlapping = report.findings().any(|f| f.check == "segment.overlap");
    let left: Vec<String> = report
        .findings()
        .filter(|f| f.severity == Severity::Error && RECOVERY_REMOVES.contains(&f.check))
        .filter(|f| {
            // Those checks find an entry's batch by a forward search for its offset, which a
            // jump ahead in a disordered segment misleads: the entries recovery rebuilt there
            // are Kafka's own, right for the batch that ends at their offset.
            !(LOOKUP_CHECKS.contains(&f.check) && disordered.contains(&f.file.with_extension("")))
        })
        .filter(|f| {
            // Producer state takes each batch's offsets as they are: a batch that jumped ahead
            // (within its segment, or past the next segment's base) leaves its producer's last
            // offset past the log end, where recovery writes the snapshot, as the broker's does.
            f.check != "snapshot.content" || (disordered.is_empty() && !overlapping)
        })
        .map(|f| format!("{} {}", f.check, f.message))
        .collect();
    assert!(
        left.is_empty(),
        "after recover --apply, verify still reports what recovery removes: {left:#?}"
    );
    let lock = lock_partition(dir, false).expect("lock a scratch copy");
    let again = plan(dir, &recover_options()).expect("recover after recover --apply");
    if again.is_empty() {
        return;
    }
    // Kafka's recovery is not idempotent in two respects, both because no recovery point is
    // recorded outside a log dir, so the next recovery starts from the same point:
    // - `LogSegment.recover` assigns a batch's epoch only when it is above the cache's latest,
    //   and the loader truncates the cache to the new log end only after the walk. A
    //   checkpoint whose later epochs lie past the torn tail thus blocks the earlier batches'
    //   epochs once; the next recovery assigns them.
    // - Each recovered segment's producer state is rebuilt from the snapshots up to its base
    //   (`truncateAndReload` from the log-start checkpoint), but the final rebuild deletes
    //   every snapshot at or below the log start offset. State carried in by a snapshot at
    //   the log start (the earlier segments gone) is in the first recovery's snapshots and
    //   not in the next one's, which replays the log from nothing: its snapshots, and the
    //   transaction indexes whose entries start where that state said an open transaction
    //   did, are written again. That snapshot may have been a leftover `.swap`, which the
    //   loader renames to it before anything else.
    // Only those rewrites may follow, and nothing after them.
    let first_segment_snapshot = snapshot_file_name(dry_log_start);
    let snapshot_at_log_start = before.contains_key(&first_segment_snapshot)
        || before.contains_key(&format!("{first_segment_snapshot}{SWAP_FILE_SUFFIX}"));
    let kafkas_reruns = again.changes.iter().all(|c| {
        matches!(c, Change::Write { file, .. }
            if file.file_name().is_some_and(|n| n == LEADER_EPOCH_CHECKPOINT_FILE_NAME
                || (snapshot_at_log_start
                    && [PRODUCER_SNAPSHOT_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX]
                        .iter()
                        .any(|suffix| n.to_string_lossy().ends_with(suffix)))))
    });
    assert!(
        kafkas_reruns,
        "a second recover still plans more than Kafka's own reruns change: {}",
        again.render_text(true)
    );
    again
        .apply(&apply)
        .expect("the second recover --apply on a scratch copy");
    drop(again);
    drop(lock);
    let third = plan(dir, &recover_options()).expect("a third recover");
    assert!(
        third.is_empty(),
        "a third recover still plans: {}",
        third.render_text(true)
    );
}
