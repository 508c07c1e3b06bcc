//! Aiven's layout plugged into the engine's store (`storage::tiered::Aiven`): partitions of the
//! reference corpus tiered as the plugin lays them out (with and without compression and
//! encryption, small chunks so that reads cross many), then listed, recognised and read back
//! through the store: every entry at the same position with the same bytes as the local
//! segment, and the same end.

mod common;

use std::path::Path;
use std::sync::Arc;

use kseg::format::aiven::segment::write_segment;
use kseg::format::aiven::{SegmentFiles, SegmentKey, Suffix, WriteOptions};
use kseg::format::checkpoint::uuid_to_base64;
use kseg::storage::log_reader::{LogReader, Step};
use kseg::storage::store::{self, ReadAhead, RemoteOptions};
use kseg::storage::tiered::{self, Aiven, Layout, RemotePartition};
use rsa::rand_core::OsRng;

const PREFIX: &str = "cluster-1/";

/// Every entry (position, bytes) and where and how reading ends.
fn walk(mut r: LogReader) -> (Vec<(u64, Vec<u8>)>, String) {
    let mut entries = Vec::new();
    loop {
        match r.next_step().unwrap() {
            Step::Entry { position, entry } => entries.push((position, entry.bytes().to_vec())),
            other => return (entries, format!("{other:?}")),
        }
    }
}

fn tier(dir: &Path, root: &Path, options: &WriteOptions, topic_id: [u8; 16]) -> usize {
    let name = dir.file_name().unwrap().to_str().unwrap();
    let (topic, partition) = name.rsplit_once('-').unwrap();
    let logs = common::logs(dir);
    for (i, log) in logs.iter().enumerate() {
        let bytes = std::fs::read(log).unwrap();
        let stem = log.with_extension("");
        let index = std::fs::read(stem.with_extension("index")).unwrap_or_default();
        let time = std::fs::read(stem.with_extension("timeindex")).unwrap_or_default();
        let files = SegmentFiles {
            log: &bytes,
            offset_index: &index,
            time_index: &time,
            producer_snapshot: &[],
            leader_epoch: &[],
            transaction: None,
        };
        let key = SegmentKey {
            topic: topic.to_string(),
            topic_id,
            partition: partition.parse().unwrap(),
            start_offset: stem.file_name().unwrap().to_str().unwrap().parse().unwrap(),
            segment_id: [i as u8 + 1; 16],
        };
        let objects = write_segment(&files, options, None, &mut OsRng).unwrap();
        for (suffix, data) in [
            (Suffix::Log, objects.log),
            (Suffix::Indexes, objects.indexes),
            (
                Suffix::Manifest,
                objects.manifest.to_json_text().into_bytes(),
            ),
        ] {
            let p = root.join(key.object_key(PREFIX, suffix));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, data).unwrap();
        }
    }
    logs.len()
}

#[test]
fn tiered_partitions_read_back_through_the_store_entry_for_entry() {
    let Some(reference) = common::reference_dir() else {
        return;
    };
    let key = rsa::RsaPrivateKey::new(&mut OsRng, 2048).unwrap();
    let pem = rsa::pkcs8::EncodePrivateKey::to_pkcs8_pem(&key, Default::default()).unwrap();
    // `--remote-key k1=FILE.pem`'s key ring, read from a file as the CLI gives it.
    let pem_dir = tempfile::tempdir().unwrap();
    let pem_file = pem_dir.path().join("k1.pem");
    std::fs::write(&pem_file, pem.as_bytes()).unwrap();
    let keys = Aiven::load_keys(&[(Some("k1".into()), pem_file)]).unwrap();
    assert!(!keys.is_empty());
    let aiven = Aiven::new(keys);
    for scenario in ["a-plain-v2", "b-codecs", "c-transactions"] {
        let input = reference.join(scenario).join("input");
        let dir = common::listing(&input)
            .into_iter()
            .find(|p| p.is_dir())
            .unwrap();
        for (chunk_size, compression, encrypt) in
            [(1000, false, false), (777, true, true), (4096, false, true)]
        {
            let what = format!("{scenario}: chunk size {chunk_size}, compression {compression}, encryption {encrypt}");
            let root = tempfile::tempdir().unwrap();
            let options = WriteOptions {
                chunk_size,
                compression,
                encryption: encrypt.then(|| ("k1".to_string(), key.to_public_key())),
            };
            let topic_id = [7u8; 16];
            let count = tier(&dir, root.path(), &options, topic_id);
            // Ranged reads of a few chunks, started ahead, from the directory (named by its
            // file:// URL for the encrypted ones). A 4096-byte chunk is a read alone.
            let read_ahead = ReadAhead {
                chunk_bytes: 3000,
                requests: 2,
            };
            let location = if encrypt {
                format!("file://{}", root.path().display())
            } else {
                root.path().display().to_string()
            };
            let remote_options = RemoteOptions {
                read_ahead,
                ..RemoteOptions::default()
            };
            let store = store::open(&location, &remote_options).unwrap();
            let objects = store.list("").unwrap().objects;
            let detected =
                tiered::detect(store.as_ref(), &objects, None, &Default::default()).unwrap();
            assert_eq!(detected.name(), "aiven", "{what}");
            let name = dir.file_name().unwrap().to_str().unwrap();
            let (topic, partition) = name.rsplit_once('-').unwrap();
            let p = RemotePartition {
                topic: topic.to_string(),
                partition: partition.parse().unwrap(),
                topic_id: Some(uuid_to_base64(&topic_id)),
            };
            let listing = aiven.partition(&objects, &p);
            assert_eq!(listing.segments.len(), count, "{what}");
            assert!(listing.strays.is_empty(), "{what}: {:?}", listing.strays);
            for (seg, log) in listing.segments.iter().zip(common::logs(&dir)) {
                for f in aiven.required() {
                    let want = aiven.key(&objects, &p, seg.start_offset, &seg.segment_id, f);
                    assert_eq!(
                        seg.files.get(&f).map(|o| o.key.clone()),
                        Some(want),
                        "{what}: {f:?}"
                    );
                }
                let remote = walk(aiven.open_log(Arc::clone(&store), seg).unwrap());
                let local = walk(LogReader::open(&log, None).unwrap());
                assert!(
                    remote == local,
                    "{what}: {} read through the store differs",
                    log.display()
                );
            }
            // Without the key an encrypted segment is an error naming its manifest.
            if encrypt {
                let keyless = tiered::layout_named("aiven", &Default::default()).unwrap();
                let e = keyless
                    .open_log(Arc::clone(&store), &listing.segments[0])
                    .err()
                    .unwrap()
                    .to_string();
                assert!(
                    e.contains(".rsm-manifest") && e.contains("no private key"),
                    "{e}"
                );
            }
        }
    }
}
