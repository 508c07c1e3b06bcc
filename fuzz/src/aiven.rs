//! Aiven's tiered-storage objects (`kseg::format::aiven`): manifests, chunked `.log` and
//! `.indexes` objects, object keys and the custom metadata of `__remote_log_metadata`, as a
//! bucket may hold them after any damage. Two bits of the first byte pick what the rest is.
//!
//! Encryption is driven with a fixed data key, not an RSA-wrapped one: unwrapping is the `rsa`
//! crate's, and costs milliseconds an input; what kseg decodes after it is exercised whole.

use kseg::format::aiven::manifest::Encryption;
use kseg::format::aiven::segment::{write_segment_with, Transform};
use kseg::format::aiven::{
    CustomMetadata, DataKey, IndexKind, KeyRing, Manifest, SegmentFiles, SegmentKey,
    SegmentObjects, SegmentReader, WrappedKey,
};
use rsa::rand_core::{CryptoRng, RngCore};

use super::alloc;
use super::formats::{allocation_bound, BATCH_LIMIT};

/// The data key every encrypted input is read (and written) with.
const KEY: [u8; 32] = [0x5a; 32];

pub fn aiven(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let base = alloc::reset();
    match selector & 0x03 {
        0 => objects(rest),
        1 => custom_metadata(rest),
        2 => object_key(rest),
        _ => round_trip(selector, rest),
    }
    alloc::assert_within(
        "aiven",
        alloc::usage(base),
        allocation_bound(data.len(), BATCH_LIMIT),
    );
}

/// A manifest (its length in the first two bytes, little-endian) and, after it, the bytes
/// taken as both the `.log` and the `.indexes` object.
fn objects(data: &[u8]) {
    let Some((len, rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let (manifest, object) = rest.split_at(usize::from(u16::from_le_bytes(*len)).min(rest.len()));
    if let Ok(m) = Manifest::parse(manifest) {
        let again = Manifest::parse(m.to_json_text().as_bytes())
            .unwrap_or_else(|e| panic!("own manifest fails to parse: {e:?}"));
        assert_eq!(again, m, "manifest round trip");
        read_all(m, object, object);
    }
}

/// Everything a reader of the segment does with its two objects (none of which may panic),
/// with the fixed key standing for the unwrapped one. Returns the log and the indexes when
/// they decode.
fn read_all(m: Manifest, log: &[u8], indexes: &[u8]) -> (Option<Vec<u8>>, Vec<Option<Vec<u8>>>) {
    // No key given: an encrypted segment is refused (without RSA work).
    if SegmentReader::open(m.clone(), &KeyRing::default()).is_ok() {
        assert!(
            m.encryption.is_none(),
            "an encrypted segment opened with no key"
        );
    }
    let reader = SegmentReader {
        transform: Transform {
            compression: m.compression,
            key: m.encryption.as_ref().map(|e| DataKey {
                key: KEY,
                aad: e.aad.clone(),
            }),
        },
        manifest: m,
    };
    let index_bytes = IndexKind::ALL
        .iter()
        .map(|&kind| {
            let _ = reader.index_range(kind);
            reader.read_index_from_object(kind, indexes).ok()
        })
        .collect();
    // A chunk decodes to as many bytes as the manifest declares: up to 2 GiB, which the
    // engine's readers hold for a segment written so. Here the declared size is kept to the
    // targets' batch limit.
    let index = &reader.manifest.chunk_index;
    if index.original_chunk_size as usize > BATCH_LIMIT {
        return (None, index_bytes);
    }
    let _ = index.transformed_file_size();
    let total = u64::from(index.original_file_size);
    for chunk in reader.chunks(0, total).take(64) {
        let r = chunk.transformed_range();
        if let Some(bytes) = log.get(r.start as usize..r.end.min(log.len() as u64) as usize) {
            let _ = reader.decode_chunk(&chunk, bytes);
        }
        let _ = reader.chunks(chunk.original_position, 1).count();
    }
    // The whole object, when the segment it decodes to is within the batch limit (it is held
    // whole) and the chunk index small enough to walk quickly.
    let log_bytes = (index.original_file_size as usize <= BATCH_LIMIT
        && index.chunk_count() <= 4096)
        .then(|| reader.read_log(log).ok())
        .flatten();
    (log_bytes, index_bytes)
}

/// Custom metadata: what decodes encodes to bytes that decode the same.
fn custom_metadata(data: &[u8]) {
    if let Ok(c) = CustomMetadata::decode(data) {
        let again = CustomMetadata::decode(&c.encode())
            .unwrap_or_else(|e| panic!("own custom metadata fails to decode: {e:?}"));
        assert_eq!(again, c, "custom metadata round trip");
    }
}

/// An object key: a key that parses names the same segment when written back.
fn object_key(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = WrappedKey::parse(&text);
    if let Ok((prefix, key, suffix)) = SegmentKey::split(&text) {
        let written = key.object_key(prefix, suffix);
        let (again, again_suffix) = SegmentKey::parse(prefix, &written)
            .unwrap_or_else(|e| panic!("own key {written:?} fails to parse: {e:?}"));
        assert!(again == key && again_suffix == suffix, "key round trip");
        let custom = CustomMetadata {
            object_key: Some(key.main_path()),
            ..CustomMetadata::default()
        };
        assert_eq!(key.resolve(Some(&custom), prefix, suffix), written);
    }
}

/// Bits 2–3 of the selector: compression, encryption. Then a byte for the chunk size, four for
/// where a byte is damaged (in the manifest's text, the `.log` or the `.indexes` object) and
/// one it is XORed with; the rest is the segment, its indexes cut from it. What is written
/// reads back exactly; once damaged it is read without a panic, and encrypted bytes damaged
/// anywhere are refused.
fn round_trip(selector: u8, data: &[u8]) {
    let Some((head, plain)) = data.split_first_chunk::<6>() else {
        return;
    };
    let (compression, encrypted) = (selector & 0x04 != 0, selector & 0x08 != 0);
    let chunk_size = 1 + u32::from(head[0]) * 7;
    let flip_at = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
    let flip = head[5];
    let third = plain.len() / 3;
    let files = SegmentFiles {
        log: plain,
        offset_index: &plain[..third],
        time_index: &plain[third..2 * third],
        producer_snapshot: &plain[2 * third..],
        leader_epoch: &[],
        transaction: (selector & 0x10 != 0).then_some(&plain[..third / 2]),
    };
    let aad = vec![0xa5; 32];
    let transform = Transform {
        compression,
        key: encrypted.then(|| DataKey {
            key: KEY,
            aad: aad.clone(),
        }),
    };
    let encryption = encrypted.then(|| Encryption {
        data_key: WrappedKey {
            key_id: "fuzz".into(),
            wrapped: vec![1; 256],
        },
        aad,
    });
    let mut rng = Counter(u64::from(selector));
    let SegmentObjects {
        mut log,
        mut indexes,
        manifest,
    } = write_segment_with(&files, transform, encryption, chunk_size, None, &mut rng)
        .expect("a segment under 2 GiB, in chunks of 1 byte or more");
    let mut text = manifest.to_json_text().into_bytes();
    let parsed = Manifest::parse(&text).expect("own manifest parses");
    assert_eq!(parsed, manifest, "manifest round trip");
    let (read_log, read_indexes) = read_all(parsed, &log, &indexes);
    if plain.len() <= BATCH_LIMIT && plain.len().div_ceil(chunk_size as usize) <= 4096 {
        assert_eq!(read_log.as_deref(), Some(plain), "the log reads back");
    }
    for (kind, got) in IndexKind::ALL.iter().zip(&read_indexes) {
        let want = files.index(*kind).unwrap_or_default();
        assert_eq!(got.as_deref(), Some(want), "{kind:?} reads back");
    }

    let total = text.len() + log.len() + indexes.len();
    if flip == 0 || total == 0 {
        return;
    }
    let at = flip_at % total;
    let in_log = (text.len()..text.len() + log.len()).contains(&at);
    if at < text.len() {
        text[at] ^= flip;
    } else if in_log {
        log[at - text.len()] ^= flip;
    } else {
        indexes[at - text.len() - log.len()] ^= flip;
    }
    let Ok(damaged) = Manifest::parse(&text) else {
        return;
    };
    let unchanged = damaged == manifest;
    let (read_log, _) = read_all(damaged, &log, &indexes);
    if encrypted && in_log && unchanged {
        assert!(read_log.is_none(), "a damaged encrypted chunk decoded");
    }
}

/// IVs from a counter: inputs replay the same (the target's outcome does not depend on them).
struct Counter(u64);

impl RngCore for Counter {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        self.0
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for b in dest {
            *b = self.next_u64() as u8;
        }
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rsa::rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl CryptoRng for Counter {}
