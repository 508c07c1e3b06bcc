//! Fault injection over the fixtures `kseg write` produced (`testdata/`): every kind of damage
//! is found with the right check id, and nothing panics.

use std::path::{Path, PathBuf};

use kseg::ops::check::verify::{verify_paths, Report, VerifyOptions};
use kseg::ops::Severity;

mod common;

fn fixture(name: &str, partition: &str) -> (tempfile::TempDir, PathBuf) {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
        .join(partition);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join(partition);
    std::fs::create_dir(&dst).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
    }
    (tmp, dst)
}

fn verify(dir: &Path) -> Report {
    verify_paths(
        &[dir.to_path_buf()],
        &VerifyOptions {
            deep: true,
            ..Default::default()
        },
        &|_| {},
    )
    .unwrap()
}

fn error_checks(r: &Report) -> Vec<(&'static str, String)> {
    r.findings()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| {
            (
                f.check,
                f.file.file_name().unwrap().to_string_lossy().into_owned(),
            )
        })
        .collect()
}

/// A warning: what the broker repairs at start-up or tolerates.
fn assert_warned(r: &Report, check: &str, file: &str) {
    let found = r.findings().any(|f| {
        f.severity == Severity::Warning
            && f.check == check
            && f.file.file_name().is_some_and(|n| n == file)
    });
    assert!(
        found,
        "no {check} warning on {file}: {:?}",
        r.findings().collect::<Vec<_>>()
    );
}

fn assert_found(r: &Report, check: &str, file: &str) {
    let errs = error_checks(r);
    assert!(
        errs.iter().any(|(c, f)| *c == check && f == file),
        "{check} on {file} not in {errs:?}"
    );
}

#[test]
fn fixtures_verify_clean() {
    for (name, part) in [
        ("orders", "orders-0"),
        ("payments", "payments-0"),
        ("legacy", "legacy-0"),
    ] {
        let (_t, dir) = fixture(name, part);
        let r = verify(&dir);
        assert_eq!(
            r.findings().count(),
            0,
            "{name}: {:#?}",
            r.findings().collect::<Vec<_>>()
        );
    }
}

#[test]
fn truncation_at_every_byte_of_the_active_segment() {
    let (_t, dir) = fixture("orders", "orders-0");
    let log = dir.join("00000000000000000175.log");
    let bytes = std::fs::read(&log).unwrap();
    let bounds: Vec<u64> = std::iter::once(0)
        .chain(common::batches(&log).iter().map(|(p, s)| p + s))
        .collect();
    for n in 0..bytes.len() as u64 {
        std::fs::write(&log, &bytes[..n as usize]).unwrap();
        let r = verify(&log);
        let last = *bounds.iter().filter(|&&b| b <= n).max().unwrap();
        let torn: Vec<_> = r
            .findings()
            .filter(|f| f.check == "log.torn-tail")
            .collect();
        // Every byte past the last whole batch is reported, even fewer than a header.
        if n > last {
            assert_eq!(torn.len(), 1, "cut at {n}");
            assert_eq!(torn[0].position, Some(last), "cut at {n}");
        } else {
            assert!(torn.is_empty(), "cut at {n}: {torn:?}");
        }
    }
}

#[test]
fn a_flipped_byte_in_each_batch() {
    let (_t, dir) = fixture("payments", "payments-0");
    let log = dir.join("00000000000000000000.log");
    let original = std::fs::read(&log).unwrap();
    for (pos, size) in common::batches(&log) {
        let mut b = original.clone();
        b[(pos + size - 1) as usize] ^= 0x40; // the last byte: inside every checksum
        std::fs::write(&log, &b).unwrap();
        let r = verify(&dir);
        let crc: Vec<_> = r.findings().filter(|f| f.check == "batch.crc").collect();
        assert_eq!(crc.len(), 1, "batch at {pos}");
        assert_eq!(crc[0].position, Some(pos));
    }
    std::fs::write(&log, &original).unwrap();
}

#[test]
fn each_kind_of_index_damage() {
    let (_t, dir) = fixture("orders", "orders-0");
    let index = dir.join("00000000000000000000.index");
    let timeindex = dir.join("00000000000000000000.timeindex");
    let idx = std::fs::read(&index).unwrap();
    let tidx = std::fs::read(&timeindex).unwrap();
    assert!(
        idx.len() >= 16 && tidx.len() >= 24,
        "fixture indexes too small"
    );

    // The loader rebuilds a missing offset index and ignores a partial entry.
    std::fs::remove_file(&index).unwrap();
    assert_warned(&verify(&dir), "index.missing", "00000000000000000000.index");
    std::fs::write(&index, &idx[..idx.len() - 3]).unwrap();
    assert_warned(
        &verify(&dir),
        "index.partial-entry",
        "00000000000000000000.index",
    );
    let mut swapped = idx.clone();
    swapped[..16].rotate_left(8);
    std::fs::write(&index, &swapped).unwrap();
    assert_found(&verify(&dir), "index.order", "00000000000000000000.index");
    let mut shifted = idx.clone();
    shifted[7] = shifted[7].wrapping_add(1); // position of entry 0 moves off a batch boundary
    std::fs::write(&index, &shifted).unwrap();
    assert_found(
        &verify(&dir),
        "index.position",
        "00000000000000000000.index",
    );
    // Zero slots of a closed segment's offset index only slow lookups down; in its time index
    // they make timestamp 0 the segment's largest.
    let mut grown = idx.clone();
    grown.resize(4096, 0);
    std::fs::write(&index, &grown).unwrap();
    assert_warned(
        &verify(&dir),
        "index.untrimmed",
        "00000000000000000000.index",
    );
    std::fs::write(&index, &idx).unwrap();
    let mut grown = tidx.clone();
    grown.resize(4092, 0);
    std::fs::write(&timeindex, &grown).unwrap();
    assert_found(
        &verify(&dir),
        "index.untrimmed",
        "00000000000000000000.timeindex",
    );

    std::fs::remove_file(&timeindex).unwrap();
    assert_warned(
        &verify(&dir),
        "timeindex.missing",
        "00000000000000000000.timeindex",
    );
    let mut t = tidx.clone();
    t[7] ^= 1; // first entry's timestamp no longer the batch's max
    std::fs::write(&timeindex, &t).unwrap();
    assert_found(
        &verify(&dir),
        "timeindex.timestamp",
        "00000000000000000000.timeindex",
    );
    // The first entry's offset moved into the next batch: a lookup lands there, on a batch
    // whose largest timestamp is not the entry's.
    let mut t = tidx.clone();
    t[11] = t[11].wrapping_add(1);
    std::fs::write(&timeindex, &t).unwrap();
    assert_found(
        &verify(&dir),
        "timeindex.timestamp",
        "00000000000000000000.timeindex",
    );
    // Moved inside its own batch, as brokers up to 3.7 wrote it (the record with the largest
    // timestamp, KAFKA-16310): a lookup still lands on that batch, so nothing is wrong.
    let first_batch = common::batches(&dir.join("00000000000000000000.log"))[0];
    let first_count = {
        let log = std::fs::read(dir.join("00000000000000000000.log")).unwrap();
        let at = first_batch.0 as usize + 57;
        i32::from_be_bytes(log[at..at + 4].try_into().unwrap())
    };
    assert!(first_count > 1, "the fixture's first batch has one record");
    let mut t = tidx.clone();
    t[11] = t[11].wrapping_sub(1);
    std::fs::write(&timeindex, &t).unwrap();
    assert_eq!(error_checks(&verify(&dir)), vec![]);
    // Past the log's last offset: a time lookup through it finds nothing.
    let mut t = tidx.clone();
    let last = t.len() - 4;
    t[last..].copy_from_slice(&i32::MAX.to_be_bytes());
    std::fs::write(&timeindex, &t).unwrap();
    assert_found(
        &verify(&dir),
        "timeindex.offset",
        "00000000000000000000.timeindex",
    );
    std::fs::write(&timeindex, &tidx).unwrap();
    assert_eq!(error_checks(&verify(&dir)), vec![]);
}

#[test]
fn each_kind_of_state_file_damage() {
    let (_t, dir) = fixture("payments", "payments-0");
    let check = |file: &str, bytes: &[u8], id: &str| {
        let p = dir.join(file);
        let orig = std::fs::read(&p).unwrap();
        std::fs::write(&p, bytes).unwrap();
        assert_found(&verify(&dir), id, file);
        std::fs::write(&p, orig).unwrap();
    };
    // The loader deletes a snapshot it cannot read and rebuilds producer state.
    let snapshot = dir.join("00000000000000000047.snapshot");
    let snap = std::fs::read(&snapshot).unwrap();
    let mut bad = snap.clone();
    *bad.last_mut().unwrap() ^= 1;
    std::fs::write(&snapshot, &bad).unwrap();
    assert_warned(
        &verify(&dir),
        "snapshot.decode",
        "00000000000000000047.snapshot",
    );
    std::fs::write(&snapshot, &snap).unwrap();
    check(
        "leader-epoch-checkpoint",
        b"0\n2\n0 0\n",
        "leader-epoch.decode",
    );
    check(
        "leader-epoch-checkpoint",
        b"0\n1\n5 0\n",
        "leader-epoch.coverage",
    );
    check(
        "leader-epoch-checkpoint",
        b"0\n2\n3 0\n1 5\n",
        "leader-epoch.order",
    );
    check(
        "partition.metadata",
        b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",
        "partition-metadata.decode",
    );
    let txn = std::fs::read(dir.join("00000000000000000000.txnindex")).unwrap();
    let mut moved = txn.clone();
    moved[25] ^= 1; // the aborted transaction's last offset no longer names the marker
    check("00000000000000000000.txnindex", &moved, "txnindex.marker");
    check(
        "00000000000000000000.txnindex",
        &txn[..20],
        "txnindex.partial-entry",
    );
    // The replay of producer state: the broker's entry for the abort is gone, or says a
    // different last stable offset (its last byte, bytes 26..34 of the entry).
    check("00000000000000000000.txnindex", &[], "txnindex.missing");
    let mut lso = txn.clone();
    lso[33] ^= 1;
    check("00000000000000000000.txnindex", &lso, "txnindex.entry");
    let txn_path = dir.join("00000000000000000000.txnindex");
    std::fs::remove_file(&txn_path).unwrap();
    assert_found(
        &verify(&dir),
        "txnindex.missing",
        "00000000000000000000.txnindex",
    );
    std::fs::write(&txn_path, &txn).unwrap();
    // A snapshot whose producer disagrees with the log's batches (its CRC recomputed).
    let shutdown = std::fs::read(dir.join("00000000000000000086.snapshot")).unwrap();
    let mut entries = kseg::format::snapshot::decode(&shutdown).unwrap().entries;
    assert!(!entries.is_empty(), "fixture snapshot has producers");
    entries[0].last_sequence += 1;
    check(
        "00000000000000000086.snapshot",
        &kseg::format::snapshot::encode(&entries),
        "snapshot.content",
    );

    std::fs::copy(
        dir.join("00000000000000000047.log"),
        dir.join("00000000000000000047.log.swap"),
    )
    .unwrap();
    let r = verify(&dir);
    assert!(r
        .findings()
        .any(|f| f.check == "leftover.file" && f.severity == Severity::Warning));
    assert_eq!(error_checks(&r), vec![]);
}

#[test]
fn a_temporary_file_of_an_interrupted_apply_is_reported() {
    let (_t, dir) = fixture("orders", "orders-0");
    let tmp = dir.join("00000000000000000000.index.kseg-tmp");
    std::fs::copy(dir.join("00000000000000000000.index"), &tmp).unwrap();
    let r = verify(&dir);
    assert_warned(
        &r,
        "leftover.kseg-tmp",
        "00000000000000000000.index.kseg-tmp",
    );
    assert_eq!(r.findings().count(), 1);
}

/// A real backup of a repair (the executor's copies and its `plan.json`, in the default root
/// `<log dir>.kseg-backup`), moved into the partition directory and then the root moved into
/// the log dir: the first is a warning (the loader reads files only), the second an error (the
/// broker takes every directory of a log dir for a partition's and fails the log dir).
#[test]
fn a_kseg_backup_moved_into_the_partition_or_the_log_dir_is_reported() {
    use kseg::ops::repair::apply::{ApplyOptions, Backup};
    use kseg::ops::repair::recover::{plan, RecoverOptions};
    let (tmp, fixture_dir) = fixture("orders", "orders-0");
    let log_dir = tmp.path().join("logs");
    std::fs::create_dir(&log_dir).unwrap();
    let dir = log_dir.join("orders-0");
    std::fs::rename(&fixture_dir, &dir).unwrap();
    // A torn tail for recovery to cut: a change, so a backup.
    let active = dir.join("00000000000000000175.log");
    let mut bytes = std::fs::read(&active).unwrap();
    bytes.extend_from_slice(&[0, 0, 0]);
    std::fs::write(&active, bytes).unwrap();
    let opts = RecoverOptions {
        config: kseg::storage::LogConfig::default(),
        now_ms: 1_700_000_000_000,
        recovery_point: None,
        producer_id_expiration_ms: 86_400_000,
    };
    let root = tmp.path().join("logs.kseg-backup");
    let backup = root.join("orders-0-1700000000000");
    let _lock = common::lock(&dir);
    let p = plan(&dir, &opts).unwrap();
    assert!(!p.is_empty());
    p.apply(&ApplyOptions {
        backup: Backup::Dir(backup.clone()),
        fail_before_step: None,
        before_step: None,
    })
    .unwrap();
    assert!(backup.join("plan.json").is_file());
    let stray = |r: &Report| {
        r.findings()
            .filter(|f| f.check == "leftover.kseg-backup")
            .map(|f| (f.severity, f.file.clone()))
            .collect::<Vec<_>>()
    };
    // Beside the log dir, where kseg puts it: nothing to say.
    assert_eq!(stray(&verify(&log_dir)), vec![]);

    let moved = dir.join("orders-0-1700000000000");
    std::fs::rename(&backup, &moved).unwrap();
    for r in [verify(&dir), verify(&log_dir)] {
        assert_eq!(stray(&r), vec![(Severity::Warning, moved.clone())]);
        assert_eq!(error_checks(&r), vec![]);
    }
    std::fs::rename(&moved, &backup).unwrap();

    let moved_root = log_dir.join("logs.kseg-backup");
    std::fs::rename(&root, &moved_root).unwrap();
    let r = verify(&log_dir);
    assert_eq!(stray(&r), vec![(Severity::Error, moved_root)]);
}
