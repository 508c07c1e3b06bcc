//! Compression codecs framed exactly as Kafka frames them (formats.md §5).
//! SKELETON: the public API below is fixed; bodies are being written.

use super::error::{DecodeError, ErrorKind, Result};

/// The codec id of attribute bits 0–2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
}

/// Upper bound on what one batch may decompress to unless the caller says otherwise.
pub const DEFAULT_MAX_DECOMPRESSED_BYTES: usize = 256 << 20;

impl Compression {
    pub const ALL: [Compression; 5] = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    pub fn from_id(id: u8) -> Result<Self> {
        match id {
            0 => Ok(Compression::None),
            1 => Ok(Compression::Gzip),
            2 => Ok(Compression::Snappy),
            3 => Ok(Compression::Lz4),
            4 => Ok(Compression::Zstd),
            _ => Err(DecodeError::new(
                ErrorKind::BadValue,
                0,
                format!("Unknown compression type id: {id}"),
            )),
        }
    }

    pub fn id(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
            Compression::Snappy => 2,
            Compression::Lz4 => 3,
            Compression::Zstd => 4,
        }
    }

    /// Kafka's `CompressionType.name`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Compression::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Decompresses `input` (a v2 records area, or a legacy wrapper's value) into `out`
/// (cleared first). `magic` matters for LZ4 only. Fails rather than grow `out` past `limit`.
pub fn decompress(
    codec: Compression,
    magic: i8,
    input: &[u8],
    limit: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    let _ = (codec, magic, input, limit, out);
    Err(DecodeError::new(
        ErrorKind::Decompress,
        0,
        "not implemented yet",
    ))
}

/// Compresses `input` into `out` (cleared first) with Kafka's framing; `level` None = Kafka's default.
pub fn compress(
    codec: Compression,
    level: Option<i32>,
    magic: i8,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    let _ = (codec, level, magic, input, out);
    Err(DecodeError::new(
        ErrorKind::Decompress,
        0,
        "not implemented yet",
    ))
}
