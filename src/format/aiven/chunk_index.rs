//! The chunk index of a manifest: where each chunk of the original segment lies in the `.log`
//! object (`manifest/index/*ChunkIndex*.java`). Every chunk but the last holds
//! `originalChunkSize` original bytes. "fixed": every transformed chunk but the last has the
//! same size (no compression); "variable": one size per chunk, stored as the base64 of a zstd
//! frame of a small binary list (`ChunkSizesBinaryCodec`): count (i32), and unless the count is
//! 0 or 1, base (i32, the smallest value but the last), bytes per value (i8), then each value but
//! the last minus the base in that many big-endian bytes; finally the last value in full (i32).

use base64::Engine;

use crate::format::codec::{self, Compression};
use crate::format::error::{DecodeError, ErrorKind, Result};

/// The plugin's limit on the decompressed size of the encoded sizes (a sanity bound).
pub const MAX_ENCODED_SIZES: usize = 10 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkIndex {
    pub original_chunk_size: u32,
    pub original_file_size: u32,
    pub sizes: TransformedSizes,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransformedSizes {
    Fixed {
        chunk: u32,
        last: u32,
    },
    /// One size per chunk, with each chunk's start in the object (computed, not stored).
    Variable {
        sizes: Vec<u32>,
        starts: Vec<u64>,
    },
}

/// One chunk: its place in the original segment and in the `.log` object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    pub id: usize,
    pub original_position: u64,
    pub original_size: u32,
    pub transformed_position: u64,
    pub transformed_size: u32,
}

impl Chunk {
    /// Its bytes in the `.log` object.
    pub fn transformed_range(&self) -> std::ops::Range<u64> {
        self.transformed_position..self.transformed_position + u64::from(self.transformed_size)
    }

    /// Its bytes in the original segment.
    pub fn original_range(&self) -> std::ops::Range<u64> {
        self.original_position..self.original_position + u64::from(self.original_size)
    }
}

impl ChunkIndex {
    pub fn fixed(
        original_chunk_size: u32,
        original_file_size: u32,
        chunk: u32,
        last: u32,
    ) -> Result<Self> {
        let i = ChunkIndex {
            original_chunk_size,
            original_file_size,
            sizes: TransformedSizes::Fixed { chunk, last },
        };
        i.check()?;
        Ok(i)
    }

    pub fn variable(
        original_chunk_size: u32,
        original_file_size: u32,
        sizes: Vec<u32>,
    ) -> Result<Self> {
        let mut starts = Vec::with_capacity(sizes.len());
        let mut at = 0u64;
        for s in &sizes {
            starts.push(at);
            at += u64::from(*s);
        }
        let i = ChunkIndex {
            original_chunk_size,
            original_file_size,
            sizes: TransformedSizes::Variable { sizes, starts },
        };
        i.check()?;
        Ok(i)
    }

    /// The number of chunks the original size needs (`ceil(file / chunk)`).
    fn needed_chunks(&self) -> usize {
        (self.original_file_size as usize).div_ceil(self.original_chunk_size.max(1) as usize)
    }

    fn check(&self) -> Result<()> {
        let bad = |m: String| DecodeError::new(ErrorKind::BadValue, 0, m);
        if self.original_chunk_size == 0 || self.original_chunk_size > i32::MAX as u32 {
            return Err(bad(format!(
                "originalChunkSize {} is not a positive int",
                self.original_chunk_size
            )));
        }
        if self.original_file_size > i32::MAX as u32 {
            return Err(bad(format!(
                "originalFileSize {} is past an int",
                self.original_file_size
            )));
        }
        if let TransformedSizes::Variable { sizes, .. } = &self.sizes {
            // An index for another size would give chunks of negative or oversized lengths.
            if sizes.len() != self.needed_chunks()
                && !(sizes.len() == 1 && self.original_file_size == 0)
            {
                return Err(bad(format!(
                    "transformedChunks has {} size(s); {} original byte(s) in chunks of {} need {}",
                    sizes.len(),
                    self.original_file_size,
                    self.original_chunk_size,
                    self.needed_chunks()
                )));
            }
        }
        // Every transform the plugin applies (none, zstd, AES-GCM) leaves at least a byte of
        // a chunk that holds one: an empty one means a manifest made up, and allowing them
        // would let a manifest count chunks by the billion over a small object.
        let n = self.chunk_count();
        let empty = match &self.sizes {
            // Every chunk but the last has the first size.
            TransformedSizes::Fixed { chunk, last } => match (*chunk, *last) {
                (0, _) if n > 1 => Some(0),
                (_, 0) if self.original_file_size > 0 => Some(n - 1),
                _ => None,
            },
            TransformedSizes::Variable { sizes, .. } => sizes
                .iter()
                .position(|&s| s == 0)
                .filter(|_| self.original_file_size > 0),
        };
        if let Some(empty) = empty {
            return Err(bad(format!(
                "chunk {empty} of {n} holds original bytes in no stored byte"
            )));
        }
        Ok(())
    }

    pub fn chunk_count(&self) -> usize {
        self.needed_chunks()
    }

    /// Chunk `i` (`i < chunk_count()`).
    pub fn chunk(&self, i: usize) -> Chunk {
        let n = self.chunk_count();
        let cs = u64::from(self.original_chunk_size);
        let original_position = i as u64 * cs;
        let original_size = if i + 1 == n {
            (u64::from(self.original_file_size) - original_position) as u32
        } else {
            self.original_chunk_size
        };
        let (transformed_position, transformed_size) = match &self.sizes {
            TransformedSizes::Fixed { chunk, last } => (
                i as u64 * u64::from(*chunk),
                if i + 1 == n { *last } else { *chunk },
            ),
            TransformedSizes::Variable { sizes, starts } => (starts[i], sizes[i]),
        };
        Chunk {
            id: i,
            original_position,
            original_size,
            transformed_position,
            transformed_size,
        }
    }

    /// The chunks holding original bytes `[start, start + len)` (clipped to the file).
    pub fn chunks_for_range(&self, start: u64, len: u64) -> std::ops::Range<usize> {
        let end = start
            .saturating_add(len)
            .min(u64::from(self.original_file_size));
        if start >= end {
            return 0..0;
        }
        let cs = u64::from(self.original_chunk_size);
        (start / cs) as usize..end.div_ceil(cs) as usize
    }

    /// The size the `.log` object has when it matches this index.
    pub fn transformed_file_size(&self) -> u64 {
        let n = self.chunk_count() as u64;
        match &self.sizes {
            TransformedSizes::Fixed { chunk, last } => match n {
                0 => 0,
                n => (n - 1) * u64::from(*chunk) + u64::from(*last),
            },
            TransformedSizes::Variable { sizes, .. } => sizes.iter().map(|s| u64::from(*s)).sum(),
        }
    }

    /// The JSON object, fields in the order the plugin's Jackson mapper writes them.
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        let kind = match self.sizes {
            TransformedSizes::Fixed { .. } => "fixed",
            TransformedSizes::Variable { .. } => "variable",
        };
        m.insert("type".into(), kind.into());
        m.insert("originalChunkSize".into(), self.original_chunk_size.into());
        m.insert("originalFileSize".into(), self.original_file_size.into());
        match &self.sizes {
            TransformedSizes::Fixed { chunk, last } => {
                m.insert("transformedChunkSize".into(), (*chunk).into());
                m.insert("finalTransformedChunkSize".into(), (*last).into());
            }
            TransformedSizes::Variable { sizes, .. } => {
                m.insert("transformedChunks".into(), encode_sizes(sizes).into());
            }
        }
        serde_json::Value::Object(m)
    }

    pub fn from_json(v: &serde_json::Value) -> Result<Self> {
        let kind = str_field(v, "type", "chunkIndex")?;
        let ocs = int_field(v, "originalChunkSize", "chunkIndex")?;
        let ofs = int_field(v, "originalFileSize", "chunkIndex")?;
        match kind {
            "fixed" => ChunkIndex::fixed(
                ocs,
                ofs,
                int_field(v, "transformedChunkSize", "chunkIndex")?,
                int_field(v, "finalTransformedChunkSize", "chunkIndex")?,
            ),
            "variable" => {
                let text = str_field(v, "transformedChunks", "chunkIndex")?;
                ChunkIndex::variable(ocs, ofs, decode_sizes(text)?)
            }
            other => Err(DecodeError::new(
                ErrorKind::BadValue,
                0,
                format!("chunkIndex.type {other:?}: expected \"fixed\" or \"variable\""),
            )),
        }
    }
}

pub(super) fn str_field<'a>(v: &'a serde_json::Value, name: &str, within: &str) -> Result<&'a str> {
    v.get(name)
        .and_then(|x| x.as_str())
        .ok_or_else(|| missing(name, within, "a string"))
}

/// A non-negative Java int.
pub(super) fn int_field(v: &serde_json::Value, name: &str, within: &str) -> Result<u32> {
    v.get(name)
        .and_then(|x| x.as_u64())
        .filter(|x| *x <= i32::MAX as u64)
        .map(|x| x as u32)
        .ok_or_else(|| missing(name, within, "a non-negative int"))
}

pub(super) fn missing(name: &str, within: &str, what: &str) -> DecodeError {
    DecodeError::new(
        ErrorKind::Malformed,
        0,
        format!("{within}.{name}: expected {what}"),
    )
}

/// `ChunkSizesBinaryCodec.encode`, zstd (content size in the frame header), base64.
pub fn encode_sizes(values: &[u32]) -> String {
    let mut b = Vec::new();
    b.extend_from_slice(&(values.len() as i32).to_be_bytes());
    if let Some((last, rest)) = values.split_last() {
        if let Some(base) = rest.iter().min().copied() {
            let width = rest
                .iter()
                .map(|v| bytes_needed(v - base))
                .max()
                .unwrap_or(1);
            b.extend_from_slice(&base.to_be_bytes());
            b.push(width as u8);
            for v in rest {
                b.extend_from_slice(&(v - base).to_be_bytes()[4 - width..]);
            }
        }
        b.extend_from_slice(&last.to_be_bytes());
    }
    let compressed = zstd::bulk::compress(&b, zstd::DEFAULT_COMPRESSION_LEVEL)
        .expect("zstd compresses an in-memory buffer");
    base64::engine::general_purpose::STANDARD.encode(compressed)
}

fn bytes_needed(v: u32) -> usize {
    match v {
        0..=0xFF => 1,
        0x100..=0xFFFF => 2,
        0x1_0000..=0xFF_FFFF => 3,
        _ => 4,
    }
}

/// The inverse of [`encode_sizes`]; positions in errors are within the decompressed list.
pub fn decode_sizes(text: &str) -> Result<Vec<u32>> {
    let compressed = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| {
            DecodeError::new(
                ErrorKind::Malformed,
                0,
                format!("transformedChunks is not base64: {e}"),
            )
        })?;
    let mut b = Vec::new();
    codec::decompress(Compression::Zstd, 2, &compressed, MAX_ENCODED_SIZES, &mut b).map_err(
        |e| DecodeError::new(e.kind, e.pos, format!("transformedChunks: {}", e.message)),
    )?;
    let mut c = crate::format::cursor::Cursor::new(&b);
    let count = c.i32("transformedChunks count")?;
    let negative = |pos: usize, what: &str| {
        DecodeError::new(
            ErrorKind::BadValue,
            pos,
            format!("transformedChunks: negative {what}"),
        )
    };
    if count < 0 {
        return Err(negative(0, "count"));
    }
    let count = count as usize;
    let mut out = Vec::new();
    if count >= 2 {
        let base = c.i32("transformedChunks base")?;
        let width_at = c.position();
        let width = c.u8("transformedChunks bytes per value")? as usize;
        if !(1..=4).contains(&width) {
            return Err(DecodeError::new(
                ErrorKind::BadValue,
                width_at,
                format!("transformedChunks: {width} bytes per value, expected 1 to 4"),
            ));
        }
        // Checked before allocating: the count is a length field like any other.
        let packed = (count - 1).saturating_mul(width);
        let values = c.take(packed, "transformedChunks values")?;
        out.reserve_exact(count);
        for (k, v) in values.chunks_exact(width).enumerate() {
            let mut full = [0u8; 4];
            full[4 - width..].copy_from_slice(v);
            let value = i32::from_be_bytes(full).wrapping_add(base);
            if value < 0 {
                return Err(negative(width_at + 1 + k * width, "size"));
            }
            out.push(value as u32);
        }
    }
    if count >= 1 {
        let at = c.position();
        let last = c.i32("transformedChunks last value")?;
        if last < 0 {
            return Err(negative(at, "size"));
        }
        out.push(last as u32);
    }
    if !c.is_empty() {
        return Err(DecodeError::new(
            ErrorKind::BadLength,
            c.position(),
            format!(
                "transformedChunks: {} byte(s) after the last value",
                c.remaining()
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // ChunkIndexSerializationTest's encoded sizes 10, 20, 30 (from zstd-jni).
    const PLUGIN_SIZES: &str = "KLUv/SAPeQAAAAAAAwAAAAoBAAoAAAAe";

    #[test]
    fn sizes_from_the_plugin_decode() {
        assert_eq!(decode_sizes(PLUGIN_SIZES).unwrap(), [10, 20, 30]);
        let json: serde_json::Value = serde_json::from_str(&format!(
            r#"{{"type":"variable","originalChunkSize":100,"originalFileSize":250,"transformedChunks":"{PLUGIN_SIZES}"}}"#
        ))
        .unwrap();
        let i = ChunkIndex::from_json(&json).unwrap();
        let chunks: Vec<Chunk> = (0..i.chunk_count()).map(|k| i.chunk(k)).collect();
        let spans: Vec<_> = chunks
            .iter()
            .map(|c| {
                (
                    c.original_position,
                    c.original_size,
                    c.transformed_position,
                    c.transformed_size,
                )
            })
            .collect();
        assert_eq!(
            spans,
            [(0, 100, 0, 10), (100, 100, 10, 20), (200, 50, 30, 30)]
        );
    }

    #[test]
    fn fixed_index_of_the_plugin_test() {
        let json: serde_json::Value = serde_json::from_str(
            r#"{"type":"fixed","originalChunkSize":100,"originalFileSize":250,"transformedChunkSize":110,"finalTransformedChunkSize":30}"#,
        )
        .unwrap();
        let i = ChunkIndex::from_json(&json).unwrap();
        assert_eq!(i.to_json(), json);
        assert_eq!(
            serde_json::to_string(&i.to_json()).unwrap(),
            serde_json::to_string(&json).unwrap()
        );
        let last = i.chunk(2);
        assert_eq!(
            (
                last.original_position,
                last.original_size,
                last.transformed_position,
                last.transformed_size
            ),
            (200, 50, 220, 30)
        );
        assert_eq!(i.chunks_for_range(99, 2), 0..2);
        assert_eq!(i.chunks_for_range(200, 1000), 2..3);
        assert_eq!(i.chunks_for_range(250, 1), 0..0);
        assert_eq!(i.transformed_file_size(), 250);
    }

    #[test]
    fn sizes_round_trip_in_every_width() {
        for values in [
            vec![],
            vec![7],
            vec![5, 5],
            vec![1, 300, 2],
            vec![0, 70_000, 9],
            vec![3, 20_000_000, 1],
            vec![0, u32::MAX >> 1, 4],
        ] {
            assert_eq!(
                decode_sizes(&encode_sizes(&values)).unwrap(),
                values,
                "{values:?}"
            );
        }
    }

    #[test]
    fn inconsistent_or_hostile_indexes_are_errors() {
        let sizes = encode_sizes(&[1, 2]);
        let json = serde_json::json!({"type":"variable","originalChunkSize":100,"originalFileSize":250,"transformedChunks":sizes});
        assert!(ChunkIndex::from_json(&json)
            .unwrap_err()
            .message
            .contains("need 3"));
        // A count of 2^31-1 with no values behind it.
        let mut b = i32::MAX.to_be_bytes().to_vec();
        b.extend_from_slice(&[0, 0, 0, 0, 4]);
        let text =
            base64::engine::general_purpose::STANDARD.encode(zstd::bulk::compress(&b, 3).unwrap());
        assert_eq!(decode_sizes(&text).unwrap_err().kind, ErrorKind::Truncated);
        let json = serde_json::json!({"type":"fixed","originalChunkSize":0,"originalFileSize":1,"transformedChunkSize":1,"finalTransformedChunkSize":1});
        assert!(ChunkIndex::from_json(&json).is_err());
        // Chunks of no stored bytes: 2^31 - 1 of them in a 1030-byte object.
        let json = serde_json::json!({"type":"fixed","originalChunkSize":1,"originalFileSize":i32::MAX,"transformedChunkSize":0,"finalTransformedChunkSize":1030});
        assert!(ChunkIndex::from_json(&json)
            .unwrap_err()
            .message
            .contains("chunk 0 of 2147483647 holds original bytes in no stored byte"));
        let json = serde_json::json!({"type":"variable","originalChunkSize":2,"originalFileSize":4,"transformedChunks":encode_sizes(&[3, 0])});
        assert!(ChunkIndex::from_json(&json)
            .unwrap_err()
            .message
            .contains("chunk 1 of 2"));
        let json = serde_json::json!({"type":"other","originalChunkSize":1,"originalFileSize":1});
        assert!(ChunkIndex::from_json(&json).is_err());
    }
}
