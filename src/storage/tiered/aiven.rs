//! Aiven's tiered-storage-for-apache-kafka layout: `{prefix}{topic}-{topicId}/{partition}/
//! {startOffset:020}-{segmentId}.{log,indexes,rsm-manifest}` (`format::aiven` holds the
//! formats). A segment's log is read through its manifest: its chunks are fetched as reads reach
//! them (adjacent ones in one request, started ahead when reading forward), decrypted with the
//! data key unwrapped by the private keys given (`--remote-key`) and decompressed.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{Layout, PartitionListing, RemotePartition, RemoteSegment, SegmentFile};
use crate::error::{Error, Result};
use crate::format::aiven::crypto::{private_key_from_pem, public_key_from_pem};
use crate::format::aiven::{IndexKind, KeyRing, Manifest, SegmentKey, SegmentReader, Suffix};
use crate::format::checkpoint::uuid_to_base64;
use crate::format::error::{DecodeError, ErrorKind};
use crate::storage::log_reader::LogReader;
use crate::storage::store::{ObjectInfo, RemoteObject, Store};
use rsa::RsaPublicKey;

pub struct Aiven {
    keys: Arc<KeyRing>,
    /// Manifests read and their data keys unwrapped, by the manifest's URL and size: a
    /// segment's log and each of its five indexes are read through its manifest, which is
    /// fetched (and its key unwrapped, an RSA decryption) once.
    readers: Mutex<HashMap<(PathBuf, u64), Arc<SegmentReader>>>,
}

/// Manifests kept at most (segments are read one after another: a few are enough).
const KEPT_MANIFESTS: usize = 16;

impl Aiven {
    /// `keys`: the private keys encrypted segments' data keys are unwrapped with.
    pub fn new(keys: KeyRing) -> Aiven {
        Aiven {
            keys: Arc::new(keys),
            readers: Mutex::new(HashMap::new()),
        }
    }

    /// The key ring of `(key id, or any; PEM file)` pairs (`--remote-key [ID=]FILE.pem`).
    pub fn load_keys(files: &[(Option<String>, PathBuf)]) -> Result<KeyRing> {
        let mut ring = KeyRing::default();
        for (id, path) in files {
            let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            let key = private_key_from_pem(&text).map_err(|e| Error::invalid(path, e.message))?;
            ring.add(id.clone(), key);
        }
        Ok(ring)
    }

    /// The public key `write --encrypt-key` wraps data keys with: a public key's PEM, or a
    /// private key's (its public half).
    pub fn load_public_key(path: &Path) -> Result<RsaPublicKey> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        public_key_from_pem(&text)
            .or_else(|e| {
                private_key_from_pem(&text)
                    .map(|k| k.to_public_key())
                    .map_err(|_| e)
            })
            .map_err(|e| Error::invalid(path, e.message))
    }

    fn file_of(s: Suffix) -> SegmentFile {
        match s {
            Suffix::Log => SegmentFile::Log,
            Suffix::Indexes => SegmentFile::Indexes,
            Suffix::Manifest => SegmentFile::Manifest,
        }
    }

    /// The segment's manifest, opened with the keys given.
    fn reader(&self, store: &dyn Store, segment: &RemoteSegment) -> Result<Arc<SegmentReader>> {
        let Some(m) = segment.files.get(&SegmentFile::Manifest) else {
            return Err(segment.absent(store, SegmentFile::Manifest));
        };
        let path = store.path_of(&m.key);
        let kept_as = (path.clone(), m.size);
        let readers = || self.readers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = readers().get(&kept_as) {
            return Ok(Arc::clone(r));
        }
        // Refused by its listed size, before a read whole of what the store holds.
        Manifest::check_len(m.size).map_err(|mut e| {
            e.message.push_str(": not read");
            Error::decode(&path, 0, e)
        })?;
        let bytes = store.read_all(&m.key)?;
        let manifest = Manifest::parse(&bytes).map_err(|e| Error::decode(&path, 0, e))?;
        let reader = Arc::new(
            SegmentReader::open(manifest, &self.keys)
                .map_err(|e| Error::invalid(&path, e.message))?,
        );
        let mut kept = readers();
        if kept.len() >= KEPT_MANIFESTS {
            kept.clear();
        }
        kept.insert(kept_as, Arc::clone(&reader));
        Ok(reader)
    }
}

/// The prefix the listing's Aiven keys share (the first one found).
fn prefix_of(objects: &[ObjectInfo]) -> Option<String> {
    objects.iter().find_map(|o| {
        SegmentKey::split(&o.key)
            .ok()
            .map(|(p, _, _)| p.to_string())
    })
}

impl Layout for Aiven {
    fn name(&self) -> &'static str {
        "aiven"
    }

    /// By any key of its form, not only a manifest's: a tier whose manifests are gone is still
    /// Aiven's, and their absence its finding.
    fn recognises(&self, objects: &[ObjectInfo]) -> bool {
        objects.iter().any(|o| SegmentKey::split(&o.key).is_ok())
    }

    fn key_depth(&self) -> usize {
        3
    }

    fn partition_of(&self, key: &str) -> Option<RemotePartition> {
        let (_, k, _) = SegmentKey::split(key).ok()?;
        Some(RemotePartition {
            topic: k.topic,
            partition: k.partition,
            topic_id: Some(uuid_to_base64(&k.topic_id)),
        })
    }

    fn partition(&self, objects: &[ObjectInfo], p: &RemotePartition) -> PartitionListing {
        let mut segments: BTreeMap<(i64, String), RemoteSegment> = BTreeMap::new();
        let mut strays = Vec::new();
        let dir = |topic_id: &str| format!("{}-{topic_id}/{}/", p.topic, p.partition);
        for o in objects {
            match SegmentKey::split(&o.key) {
                Ok((_, k, suffix)) if k.topic == p.topic && k.partition == p.partition => {
                    let topic_id = uuid_to_base64(&k.topic_id);
                    if p.topic_id.as_deref().is_some_and(|id| id != topic_id) {
                        continue;
                    }
                    let id = uuid_to_base64(&k.segment_id);
                    segments
                        .entry((k.start_offset, id.clone()))
                        .or_insert_with(|| RemoteSegment {
                            segment_id: id,
                            topic_id,
                            start_offset: k.start_offset,
                            files: BTreeMap::new(),
                        })
                        .files
                        .insert(Aiven::file_of(suffix), o.clone());
                }
                Ok(_) => {}
                // Under the partition's prefix but no segment object: a stray.
                Err(_)
                    if p.topic_id
                        .as_deref()
                        .is_some_and(|id| o.key.contains(&dir(id))) =>
                {
                    strays.push(o.clone())
                }
                Err(_) => {}
            }
        }
        PartitionListing {
            segments: segments.into_values().collect(),
            strays,
        }
    }

    fn key(
        &self,
        objects: &[ObjectInfo],
        p: &RemotePartition,
        start_offset: i64,
        segment_id: &str,
        file: SegmentFile,
    ) -> String {
        let suffix = match file {
            SegmentFile::Indexes => "indexes",
            SegmentFile::Manifest => "rsm-manifest",
            _ => "log",
        };
        format!(
            "{}{}-{}/{}/{:020}-{segment_id}.{suffix}",
            prefix_of(objects).unwrap_or_default(),
            p.topic,
            p.topic_id.as_deref().unwrap_or(""),
            p.partition,
            start_offset
        )
    }

    fn required(&self) -> Vec<SegmentFile> {
        vec![
            SegmentFile::Log,
            SegmentFile::Indexes,
            SegmentFile::Manifest,
        ]
    }

    fn log_files(&self) -> &'static [SegmentFile] {
        &[SegmentFile::Log, SegmentFile::Manifest]
    }

    /// The `.log` object holds the chunks transformed: the segment's size is the manifest's.
    fn listed_log_size(&self, _: &RemoteSegment) -> Option<u64> {
        None
    }

    /// A manifest that does not parse or fit the `.log` object is the segment's damage, found
    /// where a walk of it starts; a missing object or key is an error.
    fn open_log(&self, store: Arc<dyn Store>, segment: &RemoteSegment) -> Result<LogReader> {
        let len = segment.log().map_or(0, |o| o.size);
        let reader = match self.reader(store.as_ref(), segment) {
            Ok(r) => r,
            Err(e) => return LogReader::undecodable(e, len),
        };
        let Some(log) = segment.log() else {
            return Err(segment.absent(store.as_ref(), SegmentFile::Log));
        };
        // The segment's size, as the manifest that does not fit its object says.
        let original = u64::from(reader.manifest.chunk_index.original_file_size);
        match RemoteObject::open_chunked(store, &log.key, reader) {
            Ok(object) => Ok(LogReader::open_object(object, None)),
            Err(e) => LogReader::undecodable(e, original),
        }
    }

    /// An index from its range of the `.indexes` object (the manifest's position and size),
    /// decrypted when the segment is encrypted.
    fn read_file(
        &self,
        store: &dyn Store,
        segment: &RemoteSegment,
        file: SegmentFile,
    ) -> Result<Option<(PathBuf, Vec<u8>)>> {
        let kind = match file {
            SegmentFile::OffsetIndex => IndexKind::Offset,
            SegmentFile::TimeIndex => IndexKind::Timestamp,
            SegmentFile::TxnIndex => IndexKind::Transaction,
            SegmentFile::ProducerSnapshot => IndexKind::ProducerSnapshot,
            SegmentFile::LeaderEpochCheckpoint => IndexKind::LeaderEpoch,
            _ => return Ok(None),
        };
        let Some(object) = segment.files.get(&SegmentFile::Indexes) else {
            return Ok(None);
        };
        let reader = self.reader(store, segment)?;
        let Some(range) = reader.index_range(kind) else {
            return Ok(None);
        };
        let path = store.path_of(&object.key);
        if range.end > object.size {
            return Err(Error::decode(
                &path,
                object.size,
                DecodeError::new(
                    ErrorKind::Truncated,
                    0,
                    format!(
                        "the manifest puts the {} index at bytes {}..{}, past the object's end",
                        kind.json_name(),
                        range.start,
                        range.end
                    ),
                ),
            ));
        }
        let log_size = u64::from(reader.manifest.chunk_index.original_file_size);
        // An encrypted snapshot's count is in its ciphertext: its range of the object bounds it.
        let plain = reader.manifest.encryption.is_none();
        let snapshot_at = plain.then_some((store, object.key.as_str(), range.start));
        super::refuse_oversized(&path, file, range.end - range.start, log_size, snapshot_at)?;
        // An empty index is no request.
        let bytes = if range.is_empty() {
            Vec::new()
        } else {
            store.read_range(&object.key, range)?
        };
        let index = reader
            .read_index(kind, &bytes)
            .map_err(|e| Error::decode(&path, 0, e))?;
        Ok(Some((path, index)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::aiven::segment::write_segment;
    use crate::format::aiven::{SegmentFiles, WriteOptions};
    use crate::storage::store::recording;

    /// A segment's manifest is fetched once for its log and its five indexes (and its data key
    /// unwrapped once), not once for each; an empty index is not fetched.
    #[test]
    fn a_segments_manifest_is_fetched_once() {
        let recorded = recording::store(1 << 20, 1, 1 << 20);
        let store: Arc<dyn Store> = recorded.clone();
        let log = vec![7u8; 100];
        let files = SegmentFiles {
            log: &log,
            offset_index: &[],
            time_index: &[],
            producer_snapshot: &[],
            leader_epoch: b"0\n1\n0 0\n",
            transaction: Some(&[]),
        };
        let options = WriteOptions {
            chunk_size: 40,
            compression: false,
            encryption: None,
        };
        let objects = write_segment(&files, &options, None, &mut rsa::rand_core::OsRng).unwrap();
        let key = SegmentKey {
            topic: "t".into(),
            topic_id: [1; 16],
            partition: 0,
            start_offset: 0,
            segment_id: [2; 16],
        };
        let manifest = objects.manifest.to_json_text().into_bytes();
        for (suffix, bytes) in [
            (Suffix::Log, objects.log),
            (Suffix::Indexes, objects.indexes),
            (Suffix::Manifest, manifest),
        ] {
            store.put(&key.object_key("", suffix), bytes).unwrap();
        }
        let listed = store.list("").unwrap().objects;
        let aiven = Aiven::new(KeyRing::default());
        let p = RemotePartition {
            topic: "t".into(),
            partition: 0,
            topic_id: Some(uuid_to_base64(&[1; 16])),
        };
        let listing = aiven.partition(&listed, &p);
        let seg = &listing.segments[0];
        aiven.open_log(Arc::clone(&store), seg).unwrap();
        for file in [
            SegmentFile::OffsetIndex,
            SegmentFile::TimeIndex,
            SegmentFile::TxnIndex,
            SegmentFile::ProducerSnapshot,
            SegmentFile::LeaderEpochCheckpoint,
        ] {
            aiven.read_file(store.as_ref(), seg, file).unwrap();
        }
        let keys = recorded.keys.lock().unwrap().clone();
        let manifests = keys.iter().filter(|k| k.ends_with(".rsm-manifest")).count();
        let indexes = keys.iter().filter(|k| k.ends_with(".indexes")).count();
        assert_eq!((manifests, indexes), (1, 1), "{keys:?}");
    }
}
