//! Aiven's tiered-storage objects (`kseg::format::aiven`): every segment of the reference
//! corpus written by kseg in several chunk sizes, with and without compression and encryption,
//! then read back by kseg and by an independent Python reader written from the plugin's source
//! (`tests/aiven_reader.py`); and objects the Python side writes by the plugin's rules, read by
//! kseg. Each must give back the segment's and its indexes' exact bytes.

#[path = "common/aiven_py.rs"]
mod aiven_py;
mod common;

use std::path::{Path, PathBuf};

use aiven_py::{key_pair, python_ready, reader};
use kseg::format::aiven::crypto::{private_key_from_pem, public_key_from_pem};
use kseg::format::aiven::segment::{write_segment, DEFAULT_CHUNK_SIZE};
use kseg::format::aiven::{
    IndexKind, KeyRing, Manifest, SegmentFiles, SegmentKey, SegmentMetadata, SegmentReader, Suffix,
    WriteOptions,
};
use kseg::format::ErrorKind;
use rsa::rand_core::OsRng;

const PREFIX: &str = "tiered/";
const KEY_ID: &str = "key-1";

/// One segment of the corpus with what the broker would tier with it.
struct Segment {
    key: SegmentKey,
    end_offset: i64,
    log: Vec<u8>,
    indexes: [Option<Vec<u8>>; 5],
    /// The index files as paths ("-" for none), for the Python writer.
    paths: Vec<String>,
}

fn read_or_empty(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_default()
}

/// Every segment of every partition directory under the scenarios' `input/`.
fn corpus_segments(root: &Path) -> Vec<Segment> {
    let mut out = Vec::new();
    for (s, scenario) in common::scenarios(root).iter().enumerate() {
        let Ok(parts) = std::fs::read_dir(scenario.join("input")) else {
            continue;
        };
        let mut parts: Vec<PathBuf> = parts
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        parts.sort();
        for dir in parts {
            let logs = common::logs(&dir);
            let name = dir.file_name().unwrap().to_str().unwrap().to_string();
            let (topic, partition) = name.rsplit_once('-').unwrap();
            let bases: Vec<i64> = logs
                .iter()
                .map(|l| l.file_stem().unwrap().to_str().unwrap().parse().unwrap())
                .collect();
            let epoch_path = dir.join("leader-epoch-checkpoint");
            for (i, log) in logs.iter().enumerate() {
                let stem = log.with_extension("");
                let next = bases.get(i + 1).copied();
                // The producer state at the segment's end: the snapshot named by the next
                // segment's base offset (the last segment: the latest snapshot, if any).
                let snapshot = Some(match next {
                    Some(n) => dir.join(format!("{n:020}.snapshot")),
                    None => common::listing(&dir)
                        .into_iter()
                        .rfind(|p| p.extension().is_some_and(|x| x == "snapshot"))
                        .unwrap_or_else(|| dir.join("none.snapshot")),
                });
                let txn = stem.with_extension("txnindex");
                let files: [Option<PathBuf>; 5] = [
                    Some(stem.with_extension("index")),
                    Some(stem.with_extension("timeindex")),
                    snapshot,
                    Some(epoch_path.clone()),
                    txn.exists().then_some(txn),
                ];
                let indexes = files.clone().map(|f| f.map(|p| read_or_empty(&p)));
                let paths = files
                    .iter()
                    .map(|f| match f {
                        Some(p) if p.exists() => p.to_str().unwrap().to_string(),
                        // An index the broker gives empty: an empty file for the Python writer.
                        Some(_) => empty_file(),
                        None => "-".to_string(),
                    })
                    .collect();
                let mut segment_id = [0u8; 16];
                segment_id[..8].copy_from_slice(&(out.len() as u64).to_be_bytes());
                out.push(Segment {
                    key: SegmentKey {
                        topic: topic.to_string(),
                        topic_id: [s as u8 + 1; 16],
                        partition: partition.parse().unwrap(),
                        start_offset: bases[i],
                        segment_id,
                    },
                    end_offset: next.map_or(bases[i], |n| n - 1),
                    log: std::fs::read(log).unwrap(),
                    indexes,
                    paths,
                });
            }
        }
    }
    assert!(out.len() > 20, "the corpus has segments");
    out
}

fn empty_file() -> String {
    let p = std::env::temp_dir().join("kseg-aiven-empty-index");
    std::fs::write(&p, b"").unwrap();
    p.to_str().unwrap().to_string()
}

fn files(s: &Segment) -> SegmentFiles<'_> {
    let e: &[u8] = &[];
    SegmentFiles {
        log: &s.log,
        offset_index: s.indexes[0].as_deref().unwrap_or(e),
        time_index: s.indexes[1].as_deref().unwrap_or(e),
        producer_snapshot: s.indexes[2].as_deref().unwrap_or(e),
        leader_epoch: s.indexes[3].as_deref().unwrap_or(e),
        transaction: s.indexes[4].as_deref(),
    }
}

fn object_path(bucket: &Path, key: &SegmentKey, suffix: Suffix) -> PathBuf {
    bucket.join(key.object_key(PREFIX, suffix))
}

/// kseg's reader on a bucket: each segment's bytes and indexes, exactly.
fn assert_kseg_reads_back(bucket: &Path, segments: &[Segment], keys: &KeyRing, what: &str) {
    for s in segments {
        let manifest = std::fs::read(object_path(bucket, &s.key, Suffix::Manifest)).unwrap();
        let manifest = Manifest::parse(&manifest).unwrap_or_else(|e| panic!("{what}: {e}"));
        let r = SegmentReader::open(manifest, keys).unwrap();
        let log = std::fs::read(object_path(bucket, &s.key, Suffix::Log)).unwrap();
        assert!(
            r.read_log(&log).unwrap() == s.log,
            "{what}: log of {:?}",
            s.key
        );
        // Ranged reads: only the chunks holding the range, each from its own bytes.
        let n = s.log.len() as u64;
        for (start, len) in [
            (0, 1),
            (n / 3, n / 5 + 1),
            (n.saturating_sub(7), 100),
            (n / 2, 0),
        ] {
            let mut got = Vec::new();
            for c in r.chunks(start, len) {
                let t = c.transformed_range();
                let plain = r
                    .decode_chunk(&c, &log[t.start as usize..t.end as usize])
                    .unwrap();
                let o = c.original_range();
                let from = start.max(o.start) - o.start;
                let to = (start + len).min(o.end) - o.start;
                got.extend_from_slice(&plain[from as usize..to as usize]);
            }
            let want = &s.log[start.min(n) as usize..(start + len).min(n) as usize];
            assert!(got == want, "{what}: range {start}+{len} of {:?}", s.key);
        }
        let indexes = std::fs::read(object_path(bucket, &s.key, Suffix::Indexes)).unwrap();
        for (k, kind) in IndexKind::ALL.into_iter().enumerate() {
            let want = s.indexes[k].clone().unwrap_or_default();
            assert_eq!(
                r.index_range(kind).is_some(),
                s.indexes[k].is_some(),
                "{what}: {kind:?}"
            );
            assert!(
                r.read_index_from_object(kind, &indexes).unwrap() == want,
                "{what}: {kind:?} of {:?}",
                s.key
            );
        }
    }
}

/// The Python reader on a bucket: the same bytes, file by file.
fn assert_python_reads_back(bucket: &Path, segments: &[Segment], private: &Path, what: &str) {
    let out = tempfile::tempdir().unwrap();
    let key_arg = format!("{KEY_ID}={}", private.display());
    let count = reader(&[
        "decode",
        bucket.to_str().unwrap(),
        out.path().to_str().unwrap(),
        "--key",
        &key_arg,
    ]);
    assert_eq!(count.trim(), segments.len().to_string(), "{what}");
    for s in segments {
        let base = out.path().join(format!("{PREFIX}{}", s.key.main_path()));
        let got = |ext: &str| std::fs::read(format!("{}.{ext}", base.display())).ok();
        assert!(
            got("log").as_deref() == Some(&s.log[..]),
            "{what}: log of {:?}",
            s.key
        );
        for (k, kind) in IndexKind::ALL.into_iter().enumerate() {
            assert!(
                got(kind.json_name()) == s.indexes[k],
                "{what}: {kind:?} of {:?}",
                s.key
            );
        }
    }
}

#[test]
fn kseg_writes_what_kseg_and_the_python_reader_read_back() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    if !python_ready() {
        return;
    }
    let segments = corpus_segments(&root);
    let tmp = tempfile::tempdir().unwrap();
    let (private, public) = key_pair(tmp.path());
    let public = public_key_from_pem(&std::fs::read_to_string(&public).unwrap()).unwrap();
    let mut keys = KeyRing::default();
    keys.add(
        Some(KEY_ID.into()),
        private_key_from_pem(&std::fs::read_to_string(&private).unwrap()).unwrap(),
    );
    let configs = [
        (DEFAULT_CHUNK_SIZE, false, false),
        (4096, false, false),
        (100, true, false),
        (4096, false, true),
        (100, true, true),
        (65536, true, true),
    ];
    for (chunk_size, compression, encrypt) in configs {
        let what =
            format!("chunk size {chunk_size}, compression {compression}, encryption {encrypt}");
        let options = WriteOptions {
            chunk_size,
            compression,
            encryption: encrypt.then(|| (KEY_ID.to_string(), public.clone())),
        };
        let bucket = tmp
            .path()
            .join(format!("bucket-{chunk_size}-{compression}-{encrypt}"));
        for s in &segments {
            let meta = SegmentMetadata {
                key: s.key.clone(),
                end_offset: s.end_offset,
                max_timestamp_ms: 0,
                broker_id: 1,
                event_timestamp_ms: 0,
                segment_leader_epochs: vec![(0, s.key.start_offset)],
            };
            let objects = write_segment(&files(s), &options, Some(meta), &mut OsRng).unwrap();
            let m = &objects.manifest;
            assert_eq!(m.compression, compression);
            assert_eq!(m.encryption.is_some(), encrypt);
            if !compression {
                // Without compression the index is fixed and the object's size is known ahead.
                let overhead = if encrypt { 28 } else { 0 };
                let chunks = s.log.len().div_ceil(chunk_size as usize);
                assert_eq!(objects.log.len(), s.log.len() + chunks * overhead, "{what}");
            }
            let text = m.to_json_text();
            assert_eq!(
                Manifest::parse(text.as_bytes()).unwrap(),
                *m,
                "{what}: manifest round trip"
            );
            for (suffix, bytes) in [
                (Suffix::Log, &objects.log[..]),
                (Suffix::Indexes, &objects.indexes[..]),
                (Suffix::Manifest, text.as_bytes()),
            ] {
                let p = object_path(&bucket, &s.key, suffix);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, bytes).unwrap();
            }
        }
        assert_kseg_reads_back(&bucket, &segments, &keys, &what);
        assert_python_reads_back(&bucket, &segments, &private, &what);
    }
}

#[test]
fn kseg_reads_what_the_python_side_writes_by_the_plugin_rules() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    if !python_ready() {
        return;
    }
    // A few segments are enough here: one per scenario with a transaction index and without.
    let segments: Vec<Segment> = corpus_segments(&root).into_iter().step_by(7).collect();
    let tmp = tempfile::tempdir().unwrap();
    let (private, public) = key_pair(tmp.path());
    let mut keys = KeyRing::default();
    // No key id: the one key given answers for any id.
    keys.add(
        None,
        private_key_from_pem(&std::fs::read_to_string(&private).unwrap()).unwrap(),
    );
    for (chunk_size, compression, encrypt) in
        [(1000, true, true), (4096, false, true), (333, true, false)]
    {
        let what = format!(
            "python: chunk size {chunk_size}, compression {compression}, encryption {encrypt}"
        );
        let bucket = tmp.path().join(format!("py-{chunk_size}"));
        for s in &segments {
            let key = format!("{PREFIX}{}", s.key.main_path());
            let mut args = vec!["encode".to_string(), bucket.to_str().unwrap().into(), key];
            let log = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(log.path(), &s.log).unwrap();
            args.push(log.path().to_str().unwrap().into());
            args.extend(s.paths.iter().cloned());
            args.extend(["--chunk-size".to_string(), chunk_size.to_string()]);
            if compression {
                args.push("--compression".into());
            }
            if encrypt {
                args.extend([
                    "--encrypt".to_string(),
                    format!("{KEY_ID}={}", public.display()),
                ]);
            }
            reader(&args.iter().map(String::as_str).collect::<Vec<_>>());
        }
        assert_kseg_reads_back(&bucket, &segments, &keys, &what);
    }
}

#[test]
fn wrong_keys_and_damaged_chunks_are_errors_that_say_where() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    if !python_ready() {
        return;
    }
    let segments = corpus_segments(&root);
    let s = segments.iter().max_by_key(|s| s.log.len()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (private, public) = key_pair(tmp.path());
    let (other, _) = {
        let d = tmp.path().join("other");
        std::fs::create_dir(&d).unwrap();
        key_pair(&d)
    };
    let public = public_key_from_pem(&std::fs::read_to_string(&public).unwrap()).unwrap();
    let options = WriteOptions {
        chunk_size: 4096,
        compression: true,
        encryption: Some((KEY_ID.into(), public)),
    };
    let objects = write_segment(&files(s), &options, None, &mut OsRng).unwrap();
    let manifest = Manifest::parse(objects.manifest.to_json_text().as_bytes()).unwrap();

    let e = SegmentReader::open(manifest.clone(), &KeyRing::default()).unwrap_err();
    assert!(
        e.message.contains("no private key was given") && e.message.contains(KEY_ID),
        "{e}"
    );
    let mut wrong = KeyRing::default();
    wrong.add(
        Some(KEY_ID.into()),
        private_key_from_pem(&std::fs::read_to_string(&other).unwrap()).unwrap(),
    );
    let e = SegmentReader::open(manifest.clone(), &wrong).unwrap_err();
    assert!(e.message.contains("unwraps"), "{e}");

    let mut keys = KeyRing::default();
    keys.add(
        Some(KEY_ID.into()),
        private_key_from_pem(&std::fs::read_to_string(&private).unwrap()).unwrap(),
    );
    let r = SegmentReader::open(manifest, &keys).unwrap();
    let third = r.manifest.chunk_index.chunk(2);
    let mut damaged = objects.log.clone();
    damaged[third.transformed_position as usize + 20] ^= 1;
    let e = r.read_log(&damaged).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BadChecksum);
    assert!(e.message.starts_with("chunk 2:"), "{e}");
    let end = third.transformed_position + u64::from(third.transformed_size);
    assert_eq!(
        e.pos as u64,
        end - 16,
        "the tag's position in the .log object"
    );
    let e = r
        .read_log(&objects.log[..objects.log.len() - 1])
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::BadLength);
}
