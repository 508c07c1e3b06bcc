//! A segment's three objects, both directions (`transform/*.java`, `KafkaRemoteStorageManager`).
//! The `.log` object: the segment cut into chunks of `originalChunkSize` bytes; each chunk, when
//! compression is on, becomes one zstd frame (content size in its header), then, when
//! encryption is on, IV + AES-GCM + tag. Compression makes the index "variable", otherwise it is
//! "fixed". The `.indexes` object: offset, timestamp, producer snapshot, leader epoch and
//! (optional) transaction index one after the other, each encrypted whole as one chunk when
//! encryption is on, never compressed; an empty index takes no bytes (and is not encrypted).

use rsa::rand_core::CryptoRngCore;
use rsa::RsaPublicKey;

use super::chunk_index::{Chunk, ChunkIndex};
use super::crypto::{DataKey, KeyRing, WrappedKey, OVERHEAD};
use super::manifest::{
    Encryption, IndexKind, IndexRange, Manifest, SegmentIndexes, SegmentMetadata,
};
use crate::format::codec::{self, Compression, ZstdDecoder};
use crate::format::error::{DecodeError, ErrorKind, Result};

/// The plugin's default `chunk.size` (4 MiB).
pub const DEFAULT_CHUNK_SIZE: u32 = 4 * 1024 * 1024;
/// zstd-jni's default level, which the plugin compresses with.
const ZSTD_LEVEL: i32 = 3;

/// What is done to each chunk.
#[derive(Debug, Clone)]
pub struct Transform {
    pub compression: bool,
    pub key: Option<DataKey>,
}

impl Transform {
    fn apply(&self, plain: &[u8], compress: bool, rng: &mut impl CryptoRngCore) -> Vec<u8> {
        let compressed;
        let bytes = if compress {
            compressed = zstd::bulk::compress(plain, ZSTD_LEVEL)
                .expect("zstd compresses an in-memory chunk");
            &compressed[..]
        } else {
            plain
        };
        match &self.key {
            Some(k) => k.encrypt_random_iv(rng, bytes),
            None => bytes.to_vec(),
        }
    }

    /// The original bytes of `chunk` from its transformed bytes; errors are positioned in the
    /// `.log` object.
    fn revert(&self, chunk: &Chunk, bytes: &[u8]) -> Result<Vec<u8>> {
        let decrypted = self.decrypt(chunk, bytes)?;
        let out = if self.compression {
            let input = decrypted.as_deref().unwrap_or(bytes);
            let mut out = Vec::new();
            let want = chunk.original_size as usize;
            codec::decompress(Compression::Zstd, 2, input, want, &mut out)
                .map_err(|e| inflate_error(chunk, self.key.is_some(), e))?;
            out
        } else {
            decrypted.unwrap_or_else(|| bytes.to_vec())
        };
        check_original_len(chunk, out.len())?;
        Ok(out)
    }

    /// [`Transform::revert`] a little at a time, for a compressed chunk.
    fn stream(&self, chunk: &Chunk, bytes: &[u8]) -> Result<ChunkStream> {
        assert!(
            self.compression,
            "only compressed chunks decode to more than they store"
        );
        let decrypted = self.decrypt(chunk, bytes)?;
        let encrypted = self.key.is_some();
        let decoder = ZstdDecoder::new(chunk.original_size as usize)
            .map_err(|e| inflate_error(chunk, encrypted, e))?;
        Ok(ChunkStream {
            chunk: *chunk,
            encrypted,
            decrypted,
            decoder,
            ended: false,
        })
    }

    /// `chunk`'s stored `bytes` checked for length and, when encrypted, decrypted (None when
    /// they are not encrypted).
    fn decrypt(&self, chunk: &Chunk, bytes: &[u8]) -> Result<Option<Vec<u8>>> {
        if bytes.len() != chunk.transformed_size as usize {
            return Err(chunk_error(
                chunk,
                DecodeError::new(
                    ErrorKind::Truncated,
                    bytes.len(),
                    format!(
                        "{} byte(s), the chunk index says {}",
                        bytes.len(),
                        chunk.transformed_size
                    ),
                ),
            ));
        }
        match &self.key {
            Some(k) => Ok(Some(k.decrypt(bytes).map_err(|e| chunk_error(chunk, e))?)),
            None => Ok(None),
        }
    }
}

/// An error about `chunk`, positioned in the `.log` object.
fn chunk_error(chunk: &Chunk, e: DecodeError) -> DecodeError {
    let m = format!("chunk {}: {}", chunk.id, e.message);
    DecodeError::new(e.kind, e.pos + chunk.transformed_position as usize, m)
}

/// A zstd error about `chunk`'s bytes.
fn inflate_error(chunk: &Chunk, encrypted: bool, e: DecodeError) -> DecodeError {
    // Inside an encrypted chunk there is no object position to give.
    let pos = if encrypted { 0 } else { e.pos };
    chunk_error(chunk, DecodeError::new(e.kind, pos, e.message))
}

/// Whether `chunk` decoded to `len` bytes, as its index says.
fn check_original_len(chunk: &Chunk, len: usize) -> Result<()> {
    let want = chunk.original_size as usize;
    if len == want {
        return Ok(());
    }
    Err(chunk_error(
        chunk,
        DecodeError::new(
            ErrorKind::BadLength,
            0,
            format!("{len} original byte(s), the chunk index says {want}"),
        ),
    ))
}

/// A compressed chunk decoded a little at a time, for one too large to hold decoded whole
/// (`originalChunkSize` may say up to ~1 GiB): the errors are
/// [`SegmentReader::decode_chunk`]'s, the last (a length that is not the index's) once the
/// chunk is decoded to its end.
pub struct ChunkStream {
    chunk: Chunk,
    encrypted: bool,
    /// The chunk's compressed bytes when decrypting made them; otherwise its stored bytes
    /// are, which each read is given.
    decrypted: Option<Vec<u8>>,
    decoder: ZstdDecoder,
    ended: bool,
}

impl ChunkStream {
    pub fn chunk(&self) -> &Chunk {
        &self.chunk
    }

    /// The position in the segment of the next byte to decode.
    pub fn position(&self) -> u64 {
        self.chunk.original_position + self.decoder.decoded() as u64
    }

    /// Back to the chunk's first byte.
    pub fn restart(&mut self) -> Result<()> {
        self.ended = false;
        self.decoder
            .restart()
            .map_err(|e| inflate_error(&self.chunk, self.encrypted, e))
    }

    /// Decodes the next bytes into the spare capacity of `out` (which must have some), given
    /// the chunk's stored `bytes` (those it was started with): false at the chunk's end.
    pub fn read(&mut self, bytes: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        if self.ended {
            return Ok(false);
        }
        let input = self.decrypted.as_deref().unwrap_or(bytes);
        let more = self
            .decoder
            .decode(input, out)
            .map_err(|e| inflate_error(&self.chunk, self.encrypted, e))?;
        if !more {
            check_original_len(&self.chunk, self.decoder.decoded())?;
            self.ended = true;
        }
        Ok(more)
    }
}

/// How segments are written.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    pub chunk_size: u32,
    pub compression: bool,
    /// The id and public half of the RSA key pair that wraps each segment's data key.
    pub encryption: Option<(String, RsaPublicKey)>,
}

/// Builds the `.log` object one chunk at a time, so a writer holds one chunk at once.
pub struct LogObjectWriter {
    transform: Transform,
    chunk_size: u32,
    file_size: u32,
    pushed: u64,
    sizes: Vec<u32>,
}

impl LogObjectWriter {
    pub fn new(transform: Transform, chunk_size: u32, file_size: u32) -> Result<Self> {
        // Checked here so that a bad option is an error before any object is written.
        ChunkIndex::fixed(chunk_size, file_size, chunk_size, chunk_size)?;
        Ok(LogObjectWriter {
            transform,
            chunk_size,
            file_size,
            pushed: 0,
            sizes: Vec::new(),
        })
    }

    /// The next chunk: `chunk_size` bytes, or what is left for the last. Returns its object bytes.
    pub fn push(&mut self, plain: &[u8], rng: &mut impl CryptoRngCore) -> Vec<u8> {
        let left = u64::from(self.file_size) - self.pushed;
        assert_eq!(
            plain.len() as u64,
            left.min(u64::from(self.chunk_size)),
            "chunks are cut at the chunk size"
        );
        self.pushed += plain.len() as u64;
        let out = self.transform.apply(plain, self.transform.compression, rng);
        self.sizes.push(out.len() as u32);
        out
    }

    pub fn finish(self) -> Result<ChunkIndex> {
        assert_eq!(self.pushed, u64::from(self.file_size), "every chunk pushed");
        if self.transform.compression {
            return ChunkIndex::variable(self.chunk_size, self.file_size, self.sizes);
        }
        let overhead = if self.transform.key.is_some() {
            OVERHEAD as u32
        } else {
            0
        };
        let last = self.sizes.last().copied().unwrap_or(0);
        ChunkIndex::fixed(
            self.chunk_size,
            self.file_size,
            self.chunk_size + overhead,
            last,
        )
    }
}

/// The bytes a segment is tiered with (as the broker's `LogSegmentData` gives them).
#[derive(Debug, Clone, Copy)]
pub struct SegmentFiles<'a> {
    pub log: &'a [u8],
    pub offset_index: &'a [u8],
    pub time_index: &'a [u8],
    pub producer_snapshot: &'a [u8],
    pub leader_epoch: &'a [u8],
    pub transaction: Option<&'a [u8]>,
}

impl<'a> SegmentFiles<'a> {
    /// The bytes of one index; None for a transaction index the segment does not have.
    pub fn index(&self, kind: IndexKind) -> Option<&'a [u8]> {
        match kind {
            IndexKind::Offset => Some(self.offset_index),
            IndexKind::Timestamp => Some(self.time_index),
            IndexKind::ProducerSnapshot => Some(self.producer_snapshot),
            IndexKind::LeaderEpoch => Some(self.leader_epoch),
            IndexKind::Transaction => self.transaction,
        }
    }
}

#[derive(Debug, Clone)]
pub struct SegmentObjects {
    pub log: Vec<u8>,
    pub indexes: Vec<u8>,
    pub manifest: Manifest,
}

/// A new transform for one segment (with a new data key when encrypting) and its manifest
/// encryption entry.
pub fn new_transform(
    options: &WriteOptions,
    rng: &mut impl CryptoRngCore,
) -> Result<(Transform, Option<Encryption>)> {
    let Some((key_id, public)) = &options.encryption else {
        return Ok((
            Transform {
                compression: options.compression,
                key: None,
            },
            None,
        ));
    };
    let key = DataKey::random(rng);
    let data_key = WrappedKey::wrap(key_id, public, &key.key, rng)?;
    let encryption = Encryption {
        data_key,
        aad: key.aad.clone(),
    };
    Ok((
        Transform {
            compression: options.compression,
            key: Some(key),
        },
        Some(encryption),
    ))
}

/// The `.indexes` object and the ranges of the manifest.
pub fn write_indexes(
    files: &SegmentFiles<'_>,
    transform: &Transform,
    rng: &mut impl CryptoRngCore,
) -> (Vec<u8>, SegmentIndexes) {
    let mut out = Vec::new();
    let mut ranges = [None; 5];
    for kind in IndexKind::ALL {
        let Some(bytes) = files.index(kind) else {
            continue;
        };
        let position = out.len() as u32;
        if !bytes.is_empty() {
            out.extend_from_slice(&transform.apply(bytes, false, rng));
        }
        ranges[kind as usize] = Some(IndexRange {
            position,
            size: out.len() as u32 - position,
        });
    }
    (out, SegmentIndexes { ranges })
}

/// All three objects of a segment, in memory.
pub fn write_segment(
    files: &SegmentFiles<'_>,
    options: &WriteOptions,
    segment: Option<SegmentMetadata>,
    rng: &mut impl CryptoRngCore,
) -> Result<SegmentObjects> {
    let (transform, encryption) = new_transform(options, rng)?;
    write_segment_with(
        files,
        transform,
        encryption,
        options.chunk_size,
        segment,
        rng,
    )
}

/// [`write_segment`] with the transform (its data key) and the manifest's encryption entry
/// given, not made from options: for a key wrapped elsewhere, or none at all.
pub fn write_segment_with(
    files: &SegmentFiles<'_>,
    transform: Transform,
    encryption: Option<Encryption>,
    chunk_size: u32,
    segment: Option<SegmentMetadata>,
    rng: &mut impl CryptoRngCore,
) -> Result<SegmentObjects> {
    let file_size = u32::try_from(files.log.len())
        .ok()
        .filter(|s| *s <= i32::MAX as u32)
        .ok_or_else(|| DecodeError::new(ErrorKind::TooLarge, 0, "a segment is at most 2 GiB"))?;
    let mut writer = LogObjectWriter::new(transform.clone(), chunk_size, file_size)?;
    let mut log = Vec::new();
    for chunk in files.log.chunks(chunk_size as usize) {
        log.extend_from_slice(&writer.push(chunk, rng));
    }
    let chunk_index = writer.finish()?;
    let (indexes, segment_indexes) = write_indexes(files, &transform, rng);
    let manifest = Manifest {
        chunk_index,
        segment_indexes,
        compression: transform.compression,
        encryption,
        segment,
    };
    Ok(SegmentObjects {
        log,
        indexes,
        manifest,
    })
}

/// Reads a segment's objects back, given its manifest and the private keys.
#[derive(Debug, Clone)]
pub struct SegmentReader {
    pub manifest: Manifest,
    pub transform: Transform,
}

impl SegmentReader {
    pub fn open(manifest: Manifest, keys: &KeyRing) -> Result<SegmentReader> {
        let key = match &manifest.encryption {
            None => None,
            Some(e) => Some(keys.unwrap(&e.data_key, e.aad.clone())?),
        };
        let transform = Transform {
            compression: manifest.compression,
            key,
        };
        Ok(SegmentReader {
            manifest,
            transform,
        })
    }

    /// The whole segment from the whole `.log` object.
    pub fn read_log(&self, object: &[u8]) -> Result<Vec<u8>> {
        let index = &self.manifest.chunk_index;
        let want = index.transformed_file_size();
        if object.len() as u64 != want {
            return Err(DecodeError::new(
                ErrorKind::BadLength,
                object.len().min(want as usize),
                format!(
                    "the .log object has {} byte(s), its chunk index says {want}",
                    object.len()
                ),
            ));
        }
        // Grown as chunks decode, not sized from the manifest: a bad size there costs nothing.
        let mut out = Vec::new();
        for c in self.chunks(0, u64::from(index.original_file_size)) {
            let r = c.transformed_range();
            out.extend_from_slice(
                &self.decode_chunk(&c, &object[r.start as usize..r.end as usize])?,
            );
        }
        Ok(out)
    }

    /// The chunks that hold original bytes `[start, start + len)`: a ranged read fetches
    /// their `transformed_range()`s of the `.log` object, and each is reverted with
    /// [`SegmentReader::decode_chunk`].
    pub fn chunks(&self, start: u64, len: u64) -> impl Iterator<Item = Chunk> + '_ {
        let index = &self.manifest.chunk_index;
        index.chunks_for_range(start, len).map(|i| index.chunk(i))
    }

    /// A chunk's original bytes from its bytes in the `.log` object.
    pub fn decode_chunk(&self, chunk: &Chunk, bytes: &[u8]) -> Result<Vec<u8>> {
        self.transform.revert(chunk, bytes)
    }

    /// Starts decoding a compressed `chunk` a little at a time from its bytes in the `.log`
    /// object (decrypted here, and kept: they are the object's bytes, no more).
    pub fn stream_chunk(&self, chunk: &Chunk, bytes: &[u8]) -> Result<ChunkStream> {
        self.transform.stream(chunk, bytes)
    }

    /// The byte range of an index inside the `.indexes` object; `None` when the segment has
    /// no such index.
    pub fn index_range(&self, kind: IndexKind) -> Option<std::ops::Range<u64>> {
        self.manifest
            .segment_indexes
            .get(kind)
            .map(|r| u64::from(r.position)..u64::from(r.position) + u64::from(r.size))
    }

    /// One index from its bytes in the `.indexes` object (`index_range`); positions in errors
    /// are in that object.
    pub fn read_index(&self, kind: IndexKind, bytes: &[u8]) -> Result<Vec<u8>> {
        let Some(range) = self.index_range(kind) else {
            return Ok(Vec::new());
        };
        let at = |e: DecodeError| {
            let m = format!("{} index: {}", kind.json_name(), e.message);
            DecodeError::new(e.kind, e.pos + range.start as usize, m)
        };
        if bytes.len() as u64 != range.end - range.start {
            return Err(at(DecodeError::new(
                ErrorKind::Truncated,
                bytes.len(),
                format!(
                    "{} byte(s), the manifest says {}",
                    bytes.len(),
                    range.end - range.start
                ),
            )));
        }
        match (&self.transform.key, bytes.is_empty()) {
            (Some(k), false) => k.decrypt(bytes).map_err(at),
            _ => Ok(bytes.to_vec()),
        }
    }

    /// `read_index` given the whole `.indexes` object.
    pub fn read_index_from_object(&self, kind: IndexKind, object: &[u8]) -> Result<Vec<u8>> {
        let Some(range) = self.index_range(kind) else {
            return Ok(Vec::new());
        };
        let slice = object
            .get(range.start as usize..range.end as usize)
            .ok_or_else(|| {
                DecodeError::new(
                    ErrorKind::Truncated,
                    object.len(),
                    format!(
                        "the .indexes object has {} byte(s); the {} index ends at {}",
                        object.len(),
                        kind.json_name(),
                        range.end
                    ),
                )
            })?;
        self.read_index(kind, slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever a compressed chunk's bytes (damaged anywhere, cut short, or decoding to more or
    /// fewer bytes than its index says), encrypted or not, decoded a little at a time it gives
    /// the bytes the whole decode gives, or its error: same kind, position and message, but
    /// where zstd decoded the whole frame in one pass.
    #[test]
    fn a_chunk_streamed_is_the_chunk_decoded_whole() {
        let mut rng = rsa::rand_core::OsRng;
        let plain: Vec<u8> = (0..300_000u32)
            .map(|i| (i / 7 % 13) as u8 ^ (i >> 12) as u8)
            .collect();
        for key in [None, Some(DataKey::random(&mut rng))] {
            let encrypted = key.is_some();
            let t = Transform {
                compression: true,
                key,
            };
            let frame = t.apply(&plain, true, &mut rng);
            let mut cases: Vec<(Vec<u8>, u32)> = Vec::new();
            for size in [plain.len() - 1, plain.len(), plain.len() + 1, 0] {
                cases.push((frame.clone(), size as u32));
            }
            for at in (0..16).chain((16..frame.len()).step_by(frame.len() / 40)) {
                let mut damaged = frame.clone();
                damaged[at] ^= 0x5a;
                cases.push((damaged, plain.len() as u32));
            }
            for cut in [1, 7, frame.len() / 2, frame.len() - 1, frame.len()] {
                cases.push((frame[..frame.len() - cut].to_vec(), plain.len() as u32));
            }
            for (bytes, original_size) in cases {
                let chunk = Chunk {
                    id: 3,
                    original_position: 1000,
                    original_size,
                    transformed_position: 5000,
                    transformed_size: bytes.len() as u32,
                };
                let whole = t.revert(&chunk, &bytes);
                let streamed = t.stream(&chunk, &bytes).and_then(|mut s| {
                    let (mut out, mut window) = (Vec::new(), Vec::with_capacity(4096));
                    loop {
                        window.clear();
                        let more = s.read(&bytes, &mut window)?;
                        out.extend_from_slice(&window);
                        if !more {
                            return Ok(out);
                        }
                    }
                });
                let what = format!(
                    "encrypted {encrypted}, {} byte(s), {original_size}",
                    bytes.len()
                );
                match (whole, streamed) {
                    (Ok(a), Ok(b)) => assert!(a == b, "{what}"),
                    // A whole decode with room for a frame's content size has zstd decode
                    // it in one pass, whose errors name the frame's start (and may word a
                    // damaged block otherwise): the same kind then, the position at or before.
                    (Err(a), Err(b)) if a.kind == ErrorKind::Decompress && a.pos == 5000 => {
                        assert_eq!(b.kind, a.kind, "{what}: {b}");
                        assert!(b.pos >= a.pos && b.message.starts_with("chunk 3: zstd: "));
                    }
                    (Err(a), Err(b)) => assert_eq!(
                        (a.kind, a.pos, &a.message),
                        (b.kind, b.pos, &b.message),
                        "{what}"
                    ),
                    (a, b) => panic!("{what}: {:?} / {:?}", a.err(), b.err()),
                }
            }
        }
    }
}
