//! Compression codecs framed exactly as Kafka frames them (formats.md §5): the JDK gzip stream,
//! snappy-java's stream framing, Kafka's own LZ4 frame (with the magic-v0 header-checksum quirk)
//! and plain zstd frames. This module owns only the compressed region's bytes; which region of a
//! batch or wrapper message is compressed is the batch layer's business.
//!
//! Compressing reproduces the bytes of the native code under Kafka's Java codecs as the
//! reference corpus ran them (zlib, C++ snappy 1.1.9, liblz4 1.9.4, zstd 1.5.4), so that a written
//! batch is the broker's, byte for byte; decoding uses whichever decoder is fastest.
//!
//! Every decoder works on an in-memory slice and writes into a caller-owned `Vec` whose
//! capacity is reused; none of them lets that `Vec` grow past the caller's `limit`, whatever
//! sizes a hostile stream declares.

mod deflate;
mod snappy;

use std::cell::RefCell;

use flate2::{FlushDecompress, Status};
use zstd::zstd_safe::{self, CParameter, DCtx, DParameter, InBuffer, OutBuffer, ResetDirective};
use zstd::zstd_safe::{zstd_sys::ZSTD_EndDirective, CCtx};

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

impl Compression {
    /// Kafka's default level for the codec (`compression.<codec>.level`); None for codecs
    /// without levels.
    pub fn default_level(self) -> Option<i32> {
        match self {
            Compression::Gzip => Some(GZIP_DEFAULT_LEVEL),
            Compression::Lz4 => Some(LZ4_DEFAULT_LEVEL),
            Compression::Zstd => Some(ZSTD_DEFAULT_LEVEL),
            Compression::None | Compression::Snappy => None,
        }
    }

    /// The levels Kafka accepts for the codec (inclusive); gzip also accepts -1 (its default).
    /// None for codecs without levels.
    pub fn level_range(self) -> Option<(i32, i32)> {
        match self {
            Compression::Gzip => Some((1, 9)),
            Compression::Lz4 => Some((1, 17)),
            Compression::Zstd => Some((ZSTD_MIN_LEVEL, ZSTD_MAX_LEVEL)),
            Compression::None | Compression::Snappy => None,
        }
    }

    /// Checks `level` the way Kafka's `CompressionType` builders do. Codecs without levels
    /// ignore it (Kafka has no level setting for them).
    pub fn validate_level(self, level: i32) -> Result<()> {
        let Some((min, max)) = self.level_range() else {
            return Ok(());
        };
        if (min..=max).contains(&level) || (self == Compression::Gzip && level == -1) {
            return Ok(());
        }
        Err(DecodeError::new(
            ErrorKind::BadValue,
            0,
            format!(
                "{} compression level {level} is out of range [{min}, {max}]",
                self.name()
            ),
        ))
    }
}

/// Kafka's `GzipCompression.DEFAULT_LEVEL` is `Deflater.DEFAULT_COMPRESSION` (-1), which zlib
/// maps to 6.
pub const GZIP_DEFAULT_LEVEL: i32 = -1;
/// `Lz4Compression.DEFAULT_LEVEL`.
pub const LZ4_DEFAULT_LEVEL: i32 = 9;
/// `ZstdCompression.DEFAULT_LEVEL` (zstd's `ZSTD_CLEVEL_DEFAULT`).
pub const ZSTD_DEFAULT_LEVEL: i32 = 3;
/// Kafka's `ZstdCompression.MIN_LEVEL` (`Zstd.minCompressionLevel()`, i.e. `-(1 << 17)`).
pub const ZSTD_MIN_LEVEL: i32 = -131072;
/// Kafka's `ZstdCompression.MAX_LEVEL`.
pub const ZSTD_MAX_LEVEL: i32 = 22;

/// What `java.util.zip.GZIPOutputStream` writes before the deflate data: magic, CM = deflate,
/// no flags, MTIME 0, XFL 0, OS 255 ("unknown"; JDK 16+ — older JDKs wrote 0).
pub const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff];
const GZIP_HEADER_BYTES: usize = 10;
const GZIP_TRAILER_BYTES: usize = 8;
/// Deflate cannot expand by more than about 1032:1 (a 258-byte match costs at least 2 bits).
const DEFLATE_MAX_RATIO: usize = 1032;
const GZIP_FLAG_FHCRC: u8 = 0x02;
const GZIP_FLAG_FEXTRA: u8 = 0x04;
const GZIP_FLAG_FNAME: u8 = 0x08;
const GZIP_FLAG_FCOMMENT: u8 = 0x10;
/// `GZIPInputStream.readTrailer` only looks for another member when the underlying stream still
/// has bytes or more than 26 bytes (trailer included) are left in the inflater's buffer; for an
/// in-memory input that means at most 18 trailing bytes after a member are silently ignored.
const GZIP_IGNORED_TAIL_BYTES: usize = 26 - GZIP_TRAILER_BYTES;

/// snappy-java's stream magic: byte -126, "SNAPPY", 0.
pub const SNAPPY_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
/// snappy-java's stream header: magic, version 1, minimum compatible version 1 (int32 BE each).
pub const SNAPPY_HEADER: [u8; 16] = [
    0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1,
];
/// `SnappyOutputStream`'s default block size: each chunk compresses this much input.
pub const SNAPPY_BLOCK_BYTES: usize = 32 * 1024;
/// `SnappyInputStream`'s default maximum chunk size.
pub const SNAPPY_MAX_CHUNK_BYTES: usize = 512 << 20;
const SNAPPY_MIN_COMPATIBLE_VERSION: i32 = 1;
/// No snappy element expands more than 64/3 times (a 3-byte copy of 64 bytes), so a block
/// declaring more than this many bytes per input byte is corrupt; rejecting it up front keeps a
/// forged length from allocating anything.
const SNAPPY_MAX_RATIO: usize = 22;

/// The LZ4 frame magic 0x184D2204, little-endian.
pub const LZ4_MAGIC: [u8; 4] = [0x04, 0x22, 0x4d, 0x18];
/// FLG written by Kafka: version 01, independent blocks, no checksums, no content size.
pub const LZ4_WRITTEN_FLG: u8 = 0x60;
/// BD written by Kafka: block maximum size code 4 (64 KiB).
pub const LZ4_WRITTEN_BD: u8 = 0x40;
/// Kafka's LZ4 block size (BD code 4).
pub const LZ4_BLOCK_BYTES: usize = 64 * 1024;
const LZ4_FLG_VERSION_SHIFT: u32 = 6;
const LZ4_FLG_SUPPORTED_VERSION: u8 = 1;
const LZ4_FLG_BLOCK_INDEPENDENCE: u8 = 0x20;
const LZ4_FLG_BLOCK_CHECKSUM: u8 = 0x10;
const LZ4_FLG_CONTENT_SIZE: u8 = 0x08;
const LZ4_FLG_CONTENT_CHECKSUM: u8 = 0x04;
const LZ4_FLG_RESERVED: u8 = 0x03;
const LZ4_BD_RESERVED: u8 = 0x8f;
const LZ4_CONTENT_SIZE_BYTES: usize = 8;
/// Bit 31 of a block size word: the block is stored uncompressed.
const LZ4_BLOCK_UNCOMPRESSED: u32 = 0x8000_0000;

/// Smallest step by which a streaming decoder's output grows.
const MIN_GROW_BYTES: usize = 64 * 1024;

/// Decompresses `input` (a v2 records area, or a legacy wrapper's value) into `out`
/// (cleared first). `magic` matters for LZ4 only. Fails rather than grow `out` past `limit`.
pub fn decompress(
    codec: Compression,
    magic: i8,
    input: &[u8],
    limit: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    out.clear();
    match codec {
        Compression::None => {
            if input.len() > limit {
                return Err(too_large(0, limit));
            }
            out.extend_from_slice(input);
            Ok(())
        }
        Compression::Gzip => gzip_decompress(input, limit, out),
        Compression::Snappy => snappy_decompress(input, limit, out),
        Compression::Lz4 => lz4_decompress(magic, input, limit, out),
        Compression::Zstd => {
            reject_zstd_for_legacy(magic)?;
            zstd_decompress(input, limit, out)
        }
    }
}

/// Compresses `input` into `out` (cleared first) with Kafka's framing; `level` None = Kafka's default.
/// The one-piece case of [`Compressor`].
pub fn compress(
    codec: Compression,
    level: Option<i32>,
    magic: i8,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    out.clear();
    let mut compressor = Compressor::new(codec, level, magic, out)?;
    compressor.write(input, out)?;
    compressor.finish(out)
}

/// An incremental [`compress`]: the input arrives in pieces of any size and the compressed
/// bytes are appended to the caller's `out` as they come, the same bytes as compressing the
/// whole input at once. Each codec holds back at most one block of input (lz4 64 KiB, snappy
/// 32 KiB; zlib and zstd buffer their own window), so a large input never needs to be in
/// memory whole. The thread's deflate or zstd state is borrowed for the compressor's life.
pub struct Compressor {
    state: CompressorState,
}

enum CompressorState {
    None,
    Gzip {
        deflater: Option<deflate::Deflater>,
        crc: crc32fast::Hasher,
        len: u32,
    },
    Snappy {
        encoder: snappy::Encoder,
        pending: Vec<u8>,
    },
    Lz4 {
        mode: lz4::block::CompressionMode,
        pending: Vec<u8>,
        done: usize,
    },
    /// The context is taken at the first byte of input: no input is no frame.
    Zstd {
        cctx: Option<CCtx<'static>>,
        level: i32,
    },
}

impl Compressor {
    /// Starts a compressed region at the end of `out` (its framing header goes there now);
    /// `level` None = Kafka's default.
    pub fn new(
        codec: Compression,
        level: Option<i32>,
        magic: i8,
        out: &mut Vec<u8>,
    ) -> Result<Self> {
        if let Some(level) = level {
            codec.validate_level(level)?;
        }
        let state = match codec {
            Compression::None => CompressorState::None,
            Compression::Gzip => {
                let deflater = gzip_deflater(level.unwrap_or(GZIP_DEFAULT_LEVEL))?;
                out.extend_from_slice(&GZIP_HEADER);
                CompressorState::Gzip {
                    deflater: Some(deflater),
                    crc: crc32fast::Hasher::new(),
                    len: 0,
                }
            }
            Compression::Snappy => {
                out.extend_from_slice(&SNAPPY_HEADER);
                CompressorState::Snappy {
                    encoder: snappy::Encoder::default(),
                    pending: Vec::new(),
                }
            }
            Compression::Lz4 => {
                let level = level.unwrap_or(LZ4_DEFAULT_LEVEL);
                lz4_header(magic, out);
                CompressorState::Lz4 {
                    mode: lz4_mode(level),
                    pending: Vec::new(),
                    done: 0,
                }
            }
            Compression::Zstd => {
                reject_zstd_for_legacy(magic)?;
                let level = level.unwrap_or(ZSTD_DEFAULT_LEVEL);
                CompressorState::Zstd {
                    cctx: None,
                    level: level.clamp(zstd_safe::min_c_level(), zstd_safe::max_c_level()),
                }
            }
        };
        Ok(Compressor { state })
    }

    /// Compresses `input`, the next piece, appending what is ready to `out`.
    pub fn write(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        match &mut self.state {
            CompressorState::None => out.extend_from_slice(input),
            CompressorState::Gzip { deflater, crc, len } => {
                crc.update(input);
                // ISIZE is the length modulo 2^32.
                *len = len.wrapping_add(input.len() as u32);
                deflater
                    .as_mut()
                    .expect("present until dropped")
                    .feed(input, false, out)
                    .map_err(gzip_failed)?;
            }
            CompressorState::Snappy { encoder, pending } => {
                in_blocks(pending, SNAPPY_BLOCK_BYTES, input, |block| {
                    snappy_block_out(encoder, block, out);
                    Ok(())
                })?;
            }
            CompressorState::Lz4 {
                mode,
                pending,
                done,
            } => {
                let mode = *mode;
                in_blocks(pending, LZ4_BLOCK_BYTES, input, |block| {
                    lz4_block_out(mode, block, *done, out)?;
                    *done += block.len();
                    Ok(())
                })?;
            }
            CompressorState::Zstd { cctx, level } => {
                if input.is_empty() {
                    return Ok(());
                }
                if cctx.is_none() {
                    *cctx = Some(zstd_cctx(*level)?);
                }
                let cctx = cctx.as_mut().expect("set above");
                let mut src = InBuffer::around(input);
                while src.pos < input.len() {
                    zstd_make_room(out);
                    let len = out.len();
                    cctx.compress_stream2(
                        &mut OutBuffer::around_pos(out, len),
                        &mut src,
                        ZSTD_EndDirective::ZSTD_e_continue,
                    )
                    .map_err(|code| zstd_error(src.pos, code))?;
                }
            }
        }
        Ok(())
    }

    /// Compresses what is held back and appends the framing's end to `out`.
    pub fn finish(mut self, out: &mut Vec<u8>) -> Result<()> {
        match &mut self.state {
            CompressorState::None => {}
            CompressorState::Gzip { deflater, crc, len } => {
                deflater
                    .as_mut()
                    .expect("present until dropped")
                    .feed(&[], true, out)
                    .map_err(gzip_failed)?;
                out.extend_from_slice(&crc.clone().finalize().to_le_bytes());
                out.extend_from_slice(&len.to_le_bytes());
            }
            CompressorState::Snappy { encoder, pending } => {
                if !pending.is_empty() {
                    snappy_block_out(encoder, pending, out);
                }
            }
            CompressorState::Lz4 {
                mode,
                pending,
                done,
            } => {
                if !pending.is_empty() {
                    lz4_block_out(*mode, pending, *done, out)?;
                }
                out.extend_from_slice(&0u32.to_le_bytes());
            }
            CompressorState::Zstd { cctx, .. } => {
                if let Some(cctx) = cctx {
                    zstd_end(cctx, out)?;
                }
            }
        }
        Ok(())
    }
}

impl Drop for Compressor {
    fn drop(&mut self) {
        // The borrowed codec state goes back to the thread for the next compressor.
        match &mut self.state {
            CompressorState::Gzip { deflater, .. } => {
                if let Some(d) = deflater.take() {
                    DEFLATER.with(|cell| *cell.borrow_mut() = Some(d));
                }
            }
            CompressorState::Zstd { cctx, .. } => {
                if let Some(c) = cctx.take() {
                    ZSTD_CCTX.with(|cell| *cell.borrow_mut() = Some(c));
                }
            }
            _ => {}
        }
    }
}

/// Cuts the stream `pending` + `input` into `block`-byte blocks for `each`, keeping the last
/// partial block in `pending`; whole blocks of `input` go to `each` without being copied.
fn in_blocks(
    pending: &mut Vec<u8>,
    block: usize,
    mut input: &[u8],
    mut each: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    if !pending.is_empty() {
        let take = (block - pending.len()).min(input.len());
        pending.extend_from_slice(&input[..take]);
        input = &input[take..];
        if pending.len() < block {
            return Ok(());
        }
        each(pending)?;
        pending.clear();
    }
    let mut blocks = input.chunks_exact(block);
    for b in &mut blocks {
        each(b)?;
    }
    pending.extend_from_slice(blocks.remainder());
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

fn too_large(pos: usize, limit: usize) -> DecodeError {
    DecodeError::new(
        ErrorKind::TooLarge,
        pos,
        format!("decompressed size exceeds {limit} bytes"),
    )
}

fn corrupt(pos: usize, message: impl Into<String>) -> DecodeError {
    DecodeError::new(ErrorKind::Decompress, pos, message)
}

fn reject_zstd_for_legacy(magic: i8) -> Result<()> {
    if magic < 2 {
        return Err(DecodeError::new(
            ErrorKind::BadValue,
            0,
            format!("zstd compression is not supported for magic {magic} (needs magic 2)"),
        ));
    }
    Ok(())
}

/// Makes sure `out` has spare capacity for a streaming decoder to write into, growing it
/// geometrically but never past `limit + 1` bytes (one byte over the limit is how the decoders
/// notice that the output is too large). `pos` is the input position for the error.
fn reserve_spare(out: &mut Vec<u8>, limit: usize, pos: usize) -> Result<()> {
    if out.len() > limit {
        return Err(too_large(pos, limit));
    }
    if out.len() < out.capacity() {
        return Ok(());
    }
    let len = out.len();
    let cap_max = limit.saturating_add(1);
    let target = len
        .saturating_mul(2)
        .max(len.saturating_add(MIN_GROW_BYTES))
        .min(cap_max);
    out.reserve_exact(target - len);
    Ok(())
}

/// Makes sure `out.capacity() >= needed` (with `needed <= limit + 1`), growing geometrically
/// but never past `limit + 1`.
fn reserve_total(out: &mut Vec<u8>, needed: usize, limit: usize) {
    if needed <= out.capacity() {
        return;
    }
    let target = needed.max(
        out.capacity()
            .saturating_mul(2)
            .min(limit.saturating_add(1)),
    );
    out.reserve_exact(target - out.len());
}

fn read_u32_le(buf: &[u8], pos: usize) -> u32 {
    u32::from_le_bytes([buf[pos], buf[pos + 1], buf[pos + 2], buf[pos + 3]])
}

fn read_i32_be(buf: &[u8], pos: usize) -> i32 {
    i32::from_be_bytes([buf[pos], buf[pos + 1], buf[pos + 2], buf[pos + 3]])
}

// ---------------------------------------------------------------------------------------------
// gzip (java.util.zip.GZIPInputStream / GZIPOutputStream)

/// Decodes gzip members back to back like `GZIPInputStream`: the first header must be valid;
/// after a complete member, bytes that do not start a valid header are ignored (Java swallows
/// that error), but a member whose header parses must decode completely.
fn gzip_decompress(input: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
    // ISIZE of the last member is the exact output size of the common single-member stream.
    // (Capped by deflate's best ratio, so a forged ISIZE cannot make us reserve much.)
    if input.len() >= GZIP_HEADER_BYTES + GZIP_TRAILER_BYTES {
        let isize = read_u32_le(input, input.len() - 4) as usize;
        // +1: room to see the end of the stream without growing the buffer.
        let hint = isize
            .saturating_add(1)
            .min(input.len().saturating_mul(DEFLATE_MAX_RATIO))
            .min(limit.saturating_add(1));
        reserve_total(out, hint, limit);
    }
    INFLATER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let inflater = slot.get_or_insert_with(|| flate2::Decompress::new(false));
        let mut pos = 0;
        let mut first = true;
        loop {
            let header_len = match gzip_header_len(&input[pos..]) {
                Ok(n) => n,
                Err(e) if first => return Err(e.shifted(pos)),
                Err(_) => break,
            };
            pos += header_len;
            inflater.reset(false);
            let member_start = out.len();
            let data_start = pos;
            loop {
                reserve_spare(out, limit, pos)?;
                let out_before = out.len();
                let status = inflater
                    .decompress_vec(&input[pos..], out, FlushDecompress::None)
                    .map_err(|e| corrupt(pos, format!("gzip: invalid deflate data: {e}")))?;
                let new_pos = data_start + inflater.total_in() as usize;
                let progressed = new_pos != pos || out.len() != out_before;
                pos = new_pos;
                if out.len() > limit {
                    return Err(too_large(pos, limit));
                }
                if status == Status::StreamEnd {
                    break;
                }
                if !progressed && out.len() < out.capacity() {
                    return Err(corrupt(
                        pos,
                        "gzip: Unexpected end of ZLIB input stream (deflate data truncated)",
                    ));
                }
            }
            if input.len() - pos < GZIP_TRAILER_BYTES {
                return Err(corrupt(
                    pos,
                    format!(
                        "gzip: Unexpected end of input: trailer needs {GZIP_TRAILER_BYTES} bytes, only {} available",
                        input.len() - pos
                    ),
                ));
            }
            let crc = read_u32_le(input, pos);
            let isize = read_u32_le(input, pos + 4);
            let member = &out[member_start..];
            if crc != crc32fast::hash(member) || isize != member.len() as u32 {
                return Err(DecodeError::new(
                    ErrorKind::BadChecksum,
                    pos,
                    "gzip: Corrupt GZIP trailer (CRC-32 or size does not match the data)",
                ));
            }
            pos += GZIP_TRAILER_BYTES;
            first = false;
            if input.len() - pos <= GZIP_IGNORED_TAIL_BYTES {
                break;
            }
        }
        Ok(())
    })
}

/// Parses a gzip member header the way `GZIPInputStream.readHeader` does and returns its length.
fn gzip_header_len(buf: &[u8]) -> Result<usize> {
    let eof = |at: usize| corrupt(at.min(buf.len()), "gzip: Unexpected end of input in header");
    if buf.len() < GZIP_HEADER_BYTES {
        if buf.len() >= 2 && buf[..2] != GZIP_HEADER[..2] {
            return Err(corrupt(0, "gzip: Not in GZIP format"));
        }
        return Err(eof(buf.len()));
    }
    if buf[..2] != GZIP_HEADER[..2] {
        return Err(corrupt(0, "gzip: Not in GZIP format"));
    }
    if buf[2] != 8 {
        return Err(corrupt(2, "gzip: Unsupported compression method"));
    }
    let flags = buf[3];
    let mut pos = GZIP_HEADER_BYTES;
    if flags & GZIP_FLAG_FEXTRA != 0 {
        if buf.len() - pos < 2 {
            return Err(eof(buf.len()));
        }
        let xlen = u16::from_le_bytes([buf[pos], buf[pos + 1]]) as usize;
        pos += 2;
        if buf.len() - pos < xlen {
            return Err(eof(buf.len()));
        }
        pos += xlen;
    }
    for flag in [GZIP_FLAG_FNAME, GZIP_FLAG_FCOMMENT] {
        if flags & flag != 0 {
            match buf[pos..].iter().position(|&b| b == 0) {
                Some(nul) => pos += nul + 1,
                None => return Err(eof(buf.len())),
            }
        }
    }
    if flags & GZIP_FLAG_FHCRC != 0 {
        if buf.len() - pos < 2 {
            return Err(eof(buf.len()));
        }
        let expected = (crc32fast::hash(&buf[..pos]) & 0xffff) as u16;
        if u16::from_le_bytes([buf[pos], buf[pos + 1]]) != expected {
            return Err(DecodeError::new(
                ErrorKind::BadChecksum,
                pos,
                "gzip: Corrupt GZIP header (header CRC mismatch)",
            ));
        }
        pos += 2;
    }
    Ok(pos)
}

/// What writes one member like `GZIPOutputStream`: fixed 10-byte header, raw deflate, CRC-32
/// and ISIZE little-endian. Kafka's `Deflater` is created at zlib's default and then set to
/// `level` before any input, which zlib treats exactly like a stream initialised at `level`;
/// its buffered wrappers only change how the input is fed, never the bytes (no sync flush).
/// -1 is zlib's own default. This takes the thread's deflater (made anew on a level change),
/// reset; [`Compressor`]'s drop gives it back.
fn gzip_deflater(level: i32) -> Result<deflate::Deflater> {
    let taken = DEFLATER.with(|cell| cell.borrow_mut().take());
    let mut deflater = match taken {
        Some(d) if d.level() == level => d,
        other => {
            // The old state is freed before the new one is allocated.
            drop(other);
            deflate::Deflater::new(level).map_err(gzip_failed)?
        }
    };
    deflater.reset().map_err(gzip_failed)?;
    Ok(deflater)
}

fn gzip_failed(e: String) -> DecodeError {
    corrupt(0, format!("gzip: {e}"))
}

// ---------------------------------------------------------------------------------------------
// snappy (xerial snappy-java SnappyInputStream / SnappyOutputStream)

fn snappy_decompress(input: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
    if input.is_empty() {
        return Err(corrupt(0, "snappy: Cannot decompress empty stream"));
    }
    let mut decoder = snap::raw::Decoder::new();
    if input.len() < SNAPPY_HEADER.len() || input[..SNAPPY_MAGIC.len()] != SNAPPY_MAGIC {
        // snappy-java falls back to reading the whole input as one plain `Snappy.compress` block.
        return snappy_block(&mut decoder, input, 0, limit, out);
    }
    // The first header's version fields are not checked (snappy-java does not either).
    let mut pos = SNAPPY_HEADER.len();
    while input.len() - pos >= 4 {
        if input[pos..pos + 4] == SNAPPY_MAGIC[..4] {
            // Another stream's header, from concatenating SnappyOutputStream outputs.
            if input.len() - pos < SNAPPY_HEADER.len() {
                return Err(corrupt(
                    pos,
                    "snappy: Insufficient header size in a concatenated block",
                ));
            }
            if input[pos..pos + SNAPPY_MAGIC.len()] != SNAPPY_MAGIC {
                // SnappyInputStream ends the stream here and ignores the rest.
                break;
            }
            let version = read_i32_be(input, pos + SNAPPY_MAGIC.len());
            if version < SNAPPY_MIN_COMPATIBLE_VERSION {
                return Err(corrupt(
                    pos + SNAPPY_MAGIC.len(),
                    format!(
                        "snappy: Compressed with an incompatible codec version {version}. At least version {SNAPPY_MIN_COMPATIBLE_VERSION} is required"
                    ),
                ));
            }
            pos += SNAPPY_HEADER.len();
            continue;
        }
        let chunk_len = read_i32_be(input, pos);
        if chunk_len < 0 {
            return Err(corrupt(
                pos,
                format!("snappy: chunkSize is too big or negative: {chunk_len}"),
            ));
        }
        let chunk_len = chunk_len as usize;
        if chunk_len > SNAPPY_MAX_CHUNK_BYTES {
            return Err(corrupt(
                pos,
                format!(
                    "snappy: chunk size {chunk_len} is greater than the maximum chunk size {SNAPPY_MAX_CHUNK_BYTES}"
                ),
            ));
        }
        let data = pos + 4;
        if input.len() - data < chunk_len {
            return Err(corrupt(
                pos,
                format!(
                    "snappy: failed to read chunk: needs {chunk_len} bytes, only {} available",
                    input.len() - data
                ),
            ));
        }
        snappy_block(
            &mut decoder,
            &input[data..data + chunk_len],
            data,
            limit,
            out,
        )?;
        pos = data + chunk_len;
    }
    Ok(())
}

/// Appends the decompression of one raw snappy block; `pos` is the block's position in the
/// stream. The declared length is checked against `limit` before anything is allocated.
fn snappy_block(
    decoder: &mut snap::raw::Decoder,
    block: &[u8],
    pos: usize,
    limit: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    if block.is_empty() {
        return Err(corrupt(
            pos,
            "snappy: failed to uncompress the chunk: empty chunk",
        ));
    }
    let len = snap::raw::decompress_len(block)
        .map_err(|e| corrupt(pos, format!("snappy: failed to uncompress the chunk: {e}")))?;
    if len > block.len().saturating_mul(SNAPPY_MAX_RATIO) {
        return Err(corrupt(
            pos,
            format!(
                "snappy: failed to uncompress the chunk: declared length {len} is impossible for a {}-byte block",
                block.len()
            ),
        ));
    }
    let start = out.len();
    if len > limit - start {
        return Err(too_large(pos, limit));
    }
    reserve_total(out, start + len, limit);
    out.resize(start + len, 0);
    match decoder.decompress(block, &mut out[start..]) {
        Ok(n) if n == len => Ok(()),
        Ok(n) => {
            out.truncate(start);
            Err(corrupt(
                pos,
                format!("snappy: expected {len} bytes, but decompressed chunk has {n} bytes"),
            ))
        }
        Err(e) => {
            out.truncate(start);
            Err(corrupt(
                pos,
                format!("snappy: failed to uncompress the chunk: {e}"),
            ))
        }
    }
}

/// One chunk as `SnappyOutputStream` writes it (after its header, once per 32 KiB of input):
/// the length, then a raw block as the C++ library behind snappy-java writes it.
fn snappy_block_out(encoder: &mut snappy::Encoder, block: &[u8], out: &mut Vec<u8>) {
    let len_pos = out.len();
    out.reserve(4 + snappy::max_compressed_len(block.len()));
    out.extend_from_slice(&[0; 4]);
    encoder.compress(block, out);
    let n = (out.len() - len_pos - 4) as i32;
    out[len_pos..len_pos + 4].copy_from_slice(&n.to_be_bytes());
}

// ---------------------------------------------------------------------------------------------
// LZ4 (Kafka's Lz4BlockInputStream / Lz4BlockOutputStream)

/// The header checksum byte: the second byte of XXH32 over `descriptor`.
fn lz4_header_checksum(descriptor: &[u8]) -> u8 {
    (xxhash_rust::xxh32::xxh32(descriptor, 0) >> 8) as u8
}

fn lz4_premature(pos: usize) -> DecodeError {
    corrupt(pos, "lz4: Stream ended prematurely")
}

fn lz4_decompress(magic: i8, input: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
    if input.len() < 6 {
        return Err(lz4_premature(input.len()));
    }
    if input[..4] != LZ4_MAGIC {
        return Err(corrupt(0, "lz4: Stream unsupported (invalid magic bytes)"));
    }
    let flg = input[4];
    if flg & LZ4_FLG_RESERVED != 0 {
        return Err(corrupt(4, "lz4: FLG reserved bits must be 0"));
    }
    if flg & LZ4_FLG_BLOCK_INDEPENDENCE == 0 {
        return Err(corrupt(
            4,
            "lz4: Dependent block stream is unsupported (BLOCK_INDEPENDENCE must be set)",
        ));
    }
    let version = flg >> LZ4_FLG_VERSION_SHIFT;
    if version != LZ4_FLG_SUPPORTED_VERSION {
        return Err(corrupt(4, format!("lz4: Version {version} is unsupported")));
    }
    let bd = input[5];
    if bd & LZ4_BD_RESERVED != 0 {
        return Err(corrupt(5, "lz4: BD reserved bits must be 0"));
    }
    let size_code = (bd >> 4) & 0x07;
    if !(4..=7).contains(&size_code) {
        return Err(corrupt(
            5,
            format!("lz4: Block size value {size_code} must be between 4 and 7"),
        ));
    }
    let max_block = 1usize << (2 * size_code as usize + 8);
    let mut pos = 6;
    if flg & LZ4_FLG_CONTENT_SIZE != 0 {
        // Kafka skips the content size without using it.
        if input.len() - pos < LZ4_CONTENT_SIZE_BYTES {
            return Err(lz4_premature(input.len()));
        }
        pos += LZ4_CONTENT_SIZE_BYTES;
    }
    if pos >= input.len() {
        return Err(lz4_premature(input.len()));
    }
    // Kafka's magic-v0 writer hashed the magic bytes too, so its reader never checks v0's HC.
    if magic != 0 && input[pos] != lz4_header_checksum(&input[4..pos]) {
        return Err(DecodeError::new(
            ErrorKind::BadChecksum,
            pos,
            "lz4: Stream frame descriptor corrupted",
        ));
    }
    pos += 1;

    // `out.len()` is a high-water mark of zero-initialised scratch space; `filled` is the real
    // output. Each block decompresses straight into the scratch, which is zeroed only once.
    let mut filled = 0;
    let result = lz4_blocks(flg, max_block, input, pos, limit, out, &mut filled);
    out.truncate(filled);
    result
}

fn lz4_blocks(
    flg: u8,
    max_block: usize,
    input: &[u8],
    mut pos: usize,
    limit: usize,
    out: &mut Vec<u8>,
    filled: &mut usize,
) -> Result<()> {
    let block_checksum = flg & LZ4_FLG_BLOCK_CHECKSUM != 0;
    loop {
        if input.len() - pos < 4 {
            return Err(lz4_premature(pos));
        }
        let word = read_u32_le(input, pos);
        let size = (word & !LZ4_BLOCK_UNCOMPRESSED) as usize;
        let size_pos = pos;
        pos += 4;
        if size == 0 {
            // EndMark. Kafka skips the content checksum without verifying it, and ignores
            // anything after it.
            if flg & LZ4_FLG_CONTENT_CHECKSUM != 0 && input.len() - pos < 4 {
                return Err(lz4_premature(pos));
            }
            return Ok(());
        }
        if size > max_block {
            return Err(corrupt(
                size_pos,
                format!("lz4: Block size {size} exceeded max: {max_block}"),
            ));
        }
        if input.len() - pos < size {
            return Err(lz4_premature(pos));
        }
        let block = &input[pos..pos + size];
        if word & LZ4_BLOCK_UNCOMPRESSED == 0 {
            let room = limit.saturating_sub(*filled).saturating_add(1);
            let dest_len = max_block.min(room);
            let end = *filled + dest_len;
            if out.len() < end {
                reserve_total(out, end, limit);
                out.resize(end, 0);
            }
            match lz4_flex::block::decompress_into(block, &mut out[*filled..end]) {
                Ok(n) => *filled += n,
                Err(lz4_flex::block::DecompressError::OutputTooSmall { .. })
                    if dest_len < max_block =>
                {
                    return Err(too_large(pos, limit));
                }
                Err(e) => return Err(corrupt(pos, format!("lz4: invalid block: {e}"))),
            }
            if *filled > limit {
                return Err(too_large(pos, limit));
            }
        } else {
            if size > limit - *filled {
                return Err(too_large(pos, limit));
            }
            let end = *filled + size;
            if out.len() < end {
                reserve_total(out, end, limit);
                out.resize(end, 0);
            }
            out[*filled..end].copy_from_slice(block);
            *filled = end;
        }
        pos += size;
        if block_checksum {
            if input.len() - pos < 4 {
                return Err(lz4_premature(pos));
            }
            if read_u32_le(input, pos) != xxhash_rust::xxh32::xxh32(block, 0) {
                return Err(DecodeError::new(
                    ErrorKind::BadChecksum,
                    pos,
                    "lz4: Block checksum mismatch",
                ));
            }
            pos += 4;
        }
    }
}

/// The frame `Lz4BlockOutputStream` writes is FLG 0x60, BD 0x40, the header checksum (over the
/// magic too for magic v0), 64 KiB blocks (stored when compression does not shrink them),
/// EndMark. This writes the header.
fn lz4_header(magic: i8, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&LZ4_MAGIC);
    out.push(LZ4_WRITTEN_FLG);
    out.push(LZ4_WRITTEN_BD);
    let descriptor = if magic == 0 {
        &out[start..start + 6]
    } else {
        &out[start + 4..start + 6]
    };
    let checksum = lz4_header_checksum(descriptor);
    out.push(checksum);
}

/// The blocks are liblz4's, as lz4-java's JNI compressors make them: Kafka's default level
/// takes `LZ4_compress_default`, every other level `LZ4_compress_HC` at that level (liblz4
/// caps it at its own maximum, 12).
fn lz4_mode(level: i32) -> lz4::block::CompressionMode {
    if level == LZ4_DEFAULT_LEVEL {
        lz4::block::CompressionMode::DEFAULT
    } else {
        lz4::block::CompressionMode::HIGHCOMPRESSION(level)
    }
}

/// One block of the frame: its size word, then the block compressed, or stored when that
/// does not shrink it. `at` is the block's input position, for the error.
fn lz4_block_out(
    mode: lz4::block::CompressionMode,
    block: &[u8],
    at: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    let failed = |e: std::io::Error| corrupt(at, format!("lz4: compress failed: {e}"));
    let block_bound = lz4::block::compress_bound(block.len()).map_err(failed)?;
    let size_pos = out.len();
    let data = size_pos + 4;
    out.resize(data + block_bound, 0);
    let n = lz4::block::compress_to_buffer(block, Some(mode), false, &mut out[data..])
        .map_err(failed)?;
    let word = if n >= block.len() {
        out.truncate(data);
        out.extend_from_slice(block);
        block.len() as u32 | LZ4_BLOCK_UNCOMPRESSED
    } else {
        out.truncate(data + n);
        n as u32
    };
    out[size_pos..data].copy_from_slice(&word.to_le_bytes());
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// zstd (zstd-jni ZstdInputStreamNoFinalizer / ZstdOutputStreamNoFinalizer)

thread_local! {
    // An inflate state is tens of KiB; one per thread is reused (reset per gzip member).
    static INFLATER: RefCell<Option<flate2::Decompress>> = const { RefCell::new(None) };
    // A deflate state is a few hundred KiB; one per thread is reused (made anew on a level change).
    static DEFLATER: RefCell<Option<deflate::Deflater>> = const { RefCell::new(None) };
    // zstd contexts are costly to create (hundreds of KiB); one per thread is reused.
    static ZSTD_DCTX: RefCell<Option<DCtx<'static>>> = const { RefCell::new(None) };
    static ZSTD_CCTX: RefCell<Option<CCtx<'static>>> = const { RefCell::new(None) };
}

fn zstd_error(pos: usize, code: usize) -> DecodeError {
    corrupt(pos, format!("zstd: {}", zstd_safe::get_error_name(code)))
}

fn zstd_decompress(input: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
    // Like zstd-jni: no input is no frame, hence no output.
    if input.is_empty() {
        return Ok(());
    }
    if let Ok(Some(size)) = zstd_safe::get_frame_content_size(input) {
        // A hint only: capped so that a forged content size reserves little.
        let hint = usize::try_from(size)
            .unwrap_or(usize::MAX)
            .min(input.len().saturating_mul(DEFLATE_MAX_RATIO))
            .min(limit.saturating_add(1));
        reserve_total(out, hint, limit);
    }
    ZSTD_DCTX.with(|cell| {
        let mut slot = cell.borrow_mut();
        let dctx = match &mut *slot {
            Some(dctx) => dctx,
            None => slot.insert(zstd_dctx()?),
        };
        // Also clears a previous call's error state.
        dctx.reset(ResetDirective::SessionOnly)
            .map_err(|code| zstd_error(0, code))?;
        let mut progress = ZstdProgress::new(limit);
        loop {
            reserve_spare(out, limit, progress.pos)?;
            if !progress.step(dctx, input, out)? {
                return Ok(());
            }
        }
    })
}

/// A decompression context that refuses a frame whose window is larger than 2^27 = 128 MiB
/// (zstd's default limit, said here so that the bound does not hang on a library's default):
/// the most a frame can make a decoder hold, whatever it decodes to.
fn zstd_dctx() -> Result<DCtx<'static>> {
    let mut dctx = DCtx::create();
    dctx.set_parameter(DParameter::WindowLogMax(ZSTD_WINDOW_LOG_MAX))
        .map_err(|code| zstd_error(0, code))?;
    Ok(dctx)
}

const ZSTD_WINDOW_LOG_MAX: u32 = 27;

/// Where a decode of zstd frames is: the input consumed, and the bytes decoded against the
/// most there may be.
struct ZstdProgress {
    pos: usize,
    decoded: usize,
    limit: usize,
}

impl ZstdProgress {
    fn new(limit: usize) -> Self {
        ZstdProgress {
            pos: 0,
            decoded: 0,
            limit,
        }
    }

    /// Decodes more of `input` (the same bytes at every step) into the spare capacity of
    /// `out` (not full); false once the input is decoded whole, every frame complete.
    fn step(&mut self, dctx: &mut DCtx<'static>, input: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        // Like zstd-jni: no input is no frame, hence no output.
        if input.is_empty() {
            return Ok(false);
        }
        let (pos_before, len_before) = (self.pos, out.len());
        let mut src = InBuffer::around(input);
        src.set_pos(self.pos);
        let hint = dctx
            .decompress_stream(&mut OutBuffer::around_pos(out, len_before), &mut src)
            .map_err(|code| zstd_error(src.pos, code))?;
        self.pos = src.pos;
        self.decoded += out.len() - len_before;
        if self.decoded > self.limit {
            return Err(too_large(self.pos, self.limit));
        }
        let output_full = out.len() == out.capacity();
        if hint == 0 {
            // A frame is complete and flushed; zstd starts the next one on more input.
            return Ok(self.pos < input.len());
        }
        if self.pos == input.len() && !output_full {
            return Err(corrupt(
                input.len(),
                "zstd: Truncated source (input ends inside a frame)",
            ));
        }
        if self.pos == pos_before && out.len() == len_before && !output_full {
            return Err(corrupt(self.pos, "zstd: decoder made no progress"));
        }
        Ok(true)
    }
}

/// zstd frames decoded a little at a time, into buffers the caller gives (and empties): what
/// [`decompress`] does, for output too large to hold whole. It has a context of its own (the
/// thread's serves the whole decodes that go on while this one waits).
pub struct ZstdDecoder {
    dctx: DCtx<'static>,
    progress: ZstdProgress,
}

impl ZstdDecoder {
    /// A decoder of frames that decode to at most `limit` bytes.
    pub fn new(limit: usize) -> Result<Self> {
        Ok(ZstdDecoder {
            dctx: zstd_dctx()?,
            progress: ZstdProgress::new(limit),
        })
    }

    /// Back to the first byte of the input.
    pub fn restart(&mut self) -> Result<()> {
        self.dctx
            .reset(ResetDirective::SessionOnly)
            .map_err(|code| zstd_error(0, code))?;
        self.progress = ZstdProgress::new(self.progress.limit);
        Ok(())
    }

    /// The bytes decoded so far.
    pub fn decoded(&self) -> usize {
        self.progress.decoded
    }

    /// Decodes more of `input` (the same bytes at every call) into the spare capacity of `out`,
    /// which must have some: false once the input is decoded whole. Errors are [`decompress`]'s.
    pub fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        assert!(out.len() < out.capacity(), "room to decode into");
        self.progress.step(&mut self.dctx, input, out)
    }
}

/// A frame like zstd-jni's output stream writes under Kafka: everything fed with
/// `ZSTD_e_continue` (so the frame header carries no content size), a flush (Kafka's stream
/// close flushes first), then the frame end. No checksum. No input is no frame at all: zstd-jni
/// starts one only when data is written (and its reader takes no input as no data). This takes
/// the thread's context, reset to `level`; [`Compressor`]'s drop gives it back.
fn zstd_cctx(level: i32) -> Result<CCtx<'static>> {
    let taken = ZSTD_CCTX.with(|cell| cell.borrow_mut().take());
    let mut cctx = taken.unwrap_or_else(CCtx::create);
    cctx.reset(ResetDirective::SessionAndParameters)
        .map_err(|code| zstd_error(0, code))?;
    cctx.set_parameter(CParameter::CompressionLevel(level))
        .map_err(|code| zstd_error(0, code))?;
    Ok(cctx)
}

/// The flush and the frame end.
fn zstd_end(cctx: &mut CCtx<'static>, out: &mut Vec<u8>) -> Result<()> {
    loop {
        zstd_make_room(out);
        let len = out.len();
        let left = cctx
            .flush_stream(&mut OutBuffer::around_pos(out, len))
            .map_err(|code| zstd_error(0, code))?;
        if left == 0 {
            break;
        }
    }
    loop {
        zstd_make_room(out);
        let len = out.len();
        let left = cctx
            .end_stream(&mut OutBuffer::around_pos(out, len))
            .map_err(|code| zstd_error(0, code))?;
        if left == 0 {
            return Ok(());
        }
    }
}

fn zstd_make_room(out: &mut Vec<u8>) {
    if out.capacity() - out.len() < 1024 {
        out.reserve(out.len() / 2 + MIN_GROW_BYTES);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic mix of text runs and pseudo-random binary runs.
    fn mixed(len: usize, seed: u64) -> Vec<u8> {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        const WORDS: [&str; 8] = [
            "order ",
            "sku-4711 ",
            "quantity=3 ",
            "{\"customer\":",
            "\"EUR\",",
            "kafka ",
            "\n",
            "0000 ",
        ];
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            let run = 16 + (next() % 200) as usize;
            if next() % 3 == 0 {
                for _ in 0..run {
                    out.push(next() as u8);
                }
            } else {
                while out.len() < len && run > 0 {
                    out.extend_from_slice(WORDS[(next() % 8) as usize].as_bytes());
                    if next() % 4 == 0 {
                        break;
                    }
                }
            }
        }
        out.truncate(len);
        out
    }

    fn comp(codec: Compression, level: Option<i32>, magic: i8, input: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        compress(codec, level, magic, input, &mut out).unwrap();
        out
    }

    fn decomp(codec: Compression, magic: i8, input: &[u8], limit: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        decompress(codec, magic, input, limit, &mut out)?;
        assert!(out.len() <= limit);
        Ok(out)
    }

    fn decomp_ok(codec: Compression, magic: i8, input: &[u8]) -> Vec<u8> {
        decomp(codec, magic, input, DEFAULT_MAX_DECOMPRESSED_BYTES).unwrap()
    }

    const SIZES: [usize; 5] = [0, 1, 100, 70_000, 300_000];

    #[test]
    fn round_trip_every_codec_magic_and_size() {
        let mut compressed = Vec::new();
        let mut restored = vec![0xaa; 7]; // reused buffers must be cleared by the codec
        for codec in Compression::ALL {
            for magic in 0..=2i8 {
                for (i, &size) in SIZES.iter().enumerate() {
                    let input = mixed(size, i as u64 + 1);
                    let res = compress(codec, None, magic, &input, &mut compressed);
                    if codec == Compression::Zstd && magic < 2 {
                        assert_eq!(res.unwrap_err().kind, ErrorKind::BadValue);
                        continue;
                    }
                    res.unwrap();
                    decompress(
                        codec,
                        magic,
                        &compressed,
                        DEFAULT_MAX_DECOMPRESSED_BYTES,
                        &mut restored,
                    )
                    .unwrap_or_else(|e| panic!("{codec:?} magic {magic} size {size}: {e}"));
                    assert!(restored == input, "{codec:?} magic {magic} size {size}");
                    // An exact limit is enough; one byte less is not (unless nothing to decode).
                    let exact = decomp(codec, magic, &compressed, size).unwrap();
                    assert_eq!(exact.len(), size);
                    if size > 0 {
                        let err = decomp(codec, magic, &compressed, size - 1).unwrap_err();
                        assert_eq!(err.kind, ErrorKind::TooLarge, "{codec:?} {magic} {size}");
                        assert!(err.message.contains(&format!("exceeds {} bytes", size - 1)));
                    }
                }
            }
        }
    }

    #[test]
    fn levels_round_trip_and_out_of_range_levels_are_rejected() {
        let input = mixed(30_000, 9);
        let cases: [(Compression, &[i32], &[i32]); 3] = [
            (Compression::Gzip, &[-1, 1, 5, 9], &[0, 10, -2]),
            (Compression::Lz4, &[1, 9, 17], &[0, 18]),
            (
                Compression::Zstd,
                &[-131072, -5, 1, 3, 10, 22],
                &[23, -131073],
            ),
        ];
        for (codec, good, bad) in cases {
            for &level in good {
                let c = comp(codec, Some(level), 2, &input);
                assert_eq!(decomp_ok(codec, 2, &c), input, "{codec:?} level {level}");
            }
            for &level in bad {
                let err = compress(codec, Some(level), 2, &input, &mut Vec::new()).unwrap_err();
                assert_eq!(err.kind, ErrorKind::BadValue, "{codec:?} level {level}");
            }
        }
        // Codecs without levels ignore them.
        for codec in [Compression::None, Compression::Snappy] {
            assert_eq!(
                comp(codec, Some(42), 2, &input),
                comp(codec, None, 2, &input)
            );
        }
        assert_eq!(
            comp(Compression::Gzip, Some(-1), 2, &input),
            comp(Compression::Gzip, Some(6), 2, &input)
        );
        assert_eq!(
            comp(Compression::Zstd, None, 2, &input),
            comp(Compression::Zstd, Some(3), 2, &input)
        );
    }

    #[test]
    fn codec_ids_names_and_levels() {
        for codec in Compression::ALL {
            assert_eq!(Compression::from_id(codec.id()).unwrap(), codec);
            assert_eq!(Compression::from_name(codec.name()), Some(codec));
        }
        assert_eq!(
            Compression::from_id(5).unwrap_err().kind,
            ErrorKind::BadValue
        );
        assert_eq!(Compression::Gzip.default_level(), Some(-1));
        assert_eq!(Compression::Lz4.default_level(), Some(9));
        assert_eq!(Compression::Zstd.default_level(), Some(3));
        assert_eq!(Compression::Snappy.level_range(), None);
    }

    #[test]
    fn none_copies_and_respects_the_limit() {
        let input = mixed(1000, 3);
        assert_eq!(comp(Compression::None, None, 0, &input), input);
        assert_eq!(decomp_ok(Compression::None, 0, &input), input);
        let err = decomp(Compression::None, 2, &input, 999).unwrap_err();
        assert_eq!(err.kind, ErrorKind::TooLarge);
    }

    // --- gzip -----------------------------------------------------------------------------

    #[test]
    fn gzip_writes_the_jdk_header_and_trailer() {
        let out = comp(Compression::Gzip, None, 2, b"");
        // header, empty final fixed block (03 00), CRC 0, ISIZE 0
        let mut expected = GZIP_HEADER.to_vec();
        expected.extend_from_slice(&[0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(out, expected);
        let input = b"hello kafka".repeat(10);
        let out = comp(Compression::Gzip, Some(9), 2, &input);
        assert_eq!(out[..10], GZIP_HEADER);
        let n = out.len();
        assert_eq!(out[n - 8..n - 4], crc32fast::hash(&input).to_le_bytes());
        assert_eq!(out[n - 4..], (input.len() as u32).to_le_bytes());
    }

    #[test]
    fn gzip_concatenated_members_decode_to_both() {
        let a = mixed(5000, 1);
        let b = mixed(70_000, 2);
        let mut stream = comp(Compression::Gzip, None, 2, &a);
        stream.extend_from_slice(&comp(Compression::Gzip, Some(1), 2, &b));
        assert_eq!(
            decomp_ok(Compression::Gzip, 2, &stream),
            [a.clone(), b].concat()
        );
        // Empty members count too.
        let mut stream = comp(Compression::Gzip, None, 2, b"");
        stream.extend_from_slice(&comp(Compression::Gzip, None, 2, &a));
        assert_eq!(decomp_ok(Compression::Gzip, 2, &stream), a);
    }

    #[test]
    fn gzip_reads_optional_header_fields_and_ignores_trailing_garbage() {
        use std::io::Write;
        let input = mixed(3000, 4);
        let mut enc = flate2::GzBuilder::new()
            .filename("records.bin")
            .comment("a comment")
            .extra(vec![1, 2, 3, 4])
            .mtime(1_700_000_000)
            .write(Vec::new(), flate2::Compression::default());
        enc.write_all(&input).unwrap();
        let mut stream = enc.finish().unwrap();
        assert_eq!(decomp_ok(Compression::Gzip, 2, &stream), input);
        // GZIPInputStream ignores what follows a member when it is not a gzip header.
        stream.extend_from_slice(&[0x55; 40]);
        assert_eq!(decomp_ok(Compression::Gzip, 2, &stream), input);
        // But a parseable header must be followed by a complete member.
        let mut stream2 = comp(Compression::Gzip, None, 2, &input);
        let second = comp(Compression::Gzip, None, 2, &input);
        stream2.extend_from_slice(&second[..second.len() - 3]);
        assert!(decomp(Compression::Gzip, 2, &stream2, usize::MAX).is_err());
    }

    #[test]
    fn gzip_rejects_bad_headers_and_corrupt_trailers() {
        assert_eq!(
            decomp(Compression::Gzip, 2, b"", 100).unwrap_err().kind,
            ErrorKind::Decompress
        );
        let err = decomp(Compression::Gzip, 2, b"not gzip at all, really", 100).unwrap_err();
        assert!(err.message.contains("Not in GZIP format"), "{err}");
        let mut stream = comp(Compression::Gzip, None, 2, b"some bytes to protect");
        let n = stream.len();
        stream[n - 6] ^= 1; // CRC
        let err = decomp(Compression::Gzip, 2, &stream, 100).unwrap_err();
        assert_eq!(err.kind, ErrorKind::BadChecksum);
        assert_eq!(err.pos, n - 8);
        let mut stream = comp(Compression::Gzip, None, 2, b"x");
        stream[2] = 7;
        assert!(decomp(Compression::Gzip, 2, &stream, 100)
            .unwrap_err()
            .message
            .contains("method"));
    }

    // --- snappy ---------------------------------------------------------------------------

    #[test]
    fn snappy_writes_snappy_java_framing() {
        assert_eq!(
            SNAPPY_HEADER,
            [0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0, 0, 0, 1, 0, 0, 0, 1]
        );
        assert_eq!(comp(Compression::Snappy, None, 2, b""), SNAPPY_HEADER);
        let input = mixed(70_000, 5);
        let out = comp(Compression::Snappy, None, 1, &input);
        assert_eq!(out[..16], SNAPPY_HEADER);
        // Chunks of 32 KiB, 32 KiB and the rest, each a length-prefixed raw snappy block.
        let mut pos = 16;
        let mut sizes = Vec::new();
        let mut joined = Vec::new();
        while pos < out.len() {
            let len = i32::from_be_bytes(out[pos..pos + 4].try_into().unwrap()) as usize;
            let block = snap::raw::Decoder::new()
                .decompress_vec(&out[pos + 4..pos + 4 + len])
                .unwrap();
            sizes.push(block.len());
            joined.extend_from_slice(&block);
            pos += 4 + len;
        }
        assert_eq!(pos, out.len());
        assert_eq!(sizes, [32768, 32768, 70_000 - 65536]);
        assert_eq!(joined, input);
    }

    #[test]
    fn snappy_falls_back_to_one_raw_block() {
        for size in [0, 5, 100, 100_000] {
            let input = mixed(size, 6);
            let raw = snap::raw::Encoder::new().compress_vec(&input).unwrap();
            assert_eq!(
                decomp_ok(Compression::Snappy, 2, &raw),
                input,
                "size {size}"
            );
        }
        assert!(decomp(Compression::Snappy, 2, b"", 10)
            .unwrap_err()
            .message
            .contains("empty"));
    }

    #[test]
    fn snappy_concatenated_streams() {
        let a = mixed(40_000, 7);
        let b = mixed(1000, 8);
        let mut stream = comp(Compression::Snappy, None, 2, &a);
        stream.extend_from_slice(&comp(Compression::Snappy, None, 2, b""));
        stream.extend_from_slice(&comp(Compression::Snappy, None, 2, &b));
        assert_eq!(
            decomp_ok(Compression::Snappy, 2, &stream),
            [a.clone(), b.clone()].concat()
        );

        // A concatenated header whose magic does not match ends the stream (snappy-java).
        let mut bad_magic = comp(Compression::Snappy, None, 2, &a);
        let mut tail = comp(Compression::Snappy, None, 2, &b);
        tail[6] = b'X';
        bad_magic.extend_from_slice(&tail);
        assert_eq!(decomp_ok(Compression::Snappy, 2, &bad_magic), a);

        // Version below 1 in a concatenated header is an error; the first header is not checked.
        let mut old = comp(Compression::Snappy, None, 2, &a);
        let mut tail = comp(Compression::Snappy, None, 2, &b);
        tail[11] = 0;
        old.extend_from_slice(&tail);
        let err = decomp(Compression::Snappy, 2, &old, usize::MAX).unwrap_err();
        assert!(
            err.message.contains("incompatible codec version 0"),
            "{err}"
        );
        let mut first = comp(Compression::Snappy, None, 2, &b);
        first[11] = 0;
        assert_eq!(decomp_ok(Compression::Snappy, 2, &first), b);

        // A concatenated header cut short is an error.
        let mut short = comp(Compression::Snappy, None, 2, &b);
        short.extend_from_slice(&SNAPPY_HEADER[..10]);
        assert!(decomp(Compression::Snappy, 2, &short, usize::MAX)
            .unwrap_err()
            .message
            .contains("Insufficient header"));

        // Fewer than 4 bytes after the last chunk: end of stream.
        let mut tail3 = comp(Compression::Snappy, None, 2, &b);
        tail3.extend_from_slice(&[0, 0, 1]);
        assert_eq!(decomp_ok(Compression::Snappy, 2, &tail3), b);
    }

    #[test]
    fn snappy_rejects_hostile_chunk_lengths() {
        let mut stream = SNAPPY_HEADER.to_vec();
        stream.extend_from_slice(&0x8000_0000u32.to_be_bytes()); // 2^31: negative int32
        stream.extend_from_slice(&[0; 16]);
        let err = decomp(Compression::Snappy, 2, &stream, usize::MAX).unwrap_err();
        assert_eq!((err.kind, err.pos), (ErrorKind::Decompress, 16));
        assert!(err.message.contains("negative"), "{err}");

        let mut stream = SNAPPY_HEADER.to_vec();
        stream.extend_from_slice(&(512u32 << 20 | 1).to_be_bytes());
        let err = decomp(Compression::Snappy, 2, &stream, usize::MAX).unwrap_err();
        assert!(err.message.contains("maximum chunk size"), "{err}");

        let mut stream = SNAPPY_HEADER.to_vec();
        stream.extend_from_slice(&100u32.to_be_bytes());
        stream.extend_from_slice(&[0; 50]);
        let err = decomp(Compression::Snappy, 2, &stream, usize::MAX).unwrap_err();
        assert!(err.message.contains("failed to read chunk"), "{err}");

        // A raw block declaring 2^31 uncompressed bytes in a handful of input bytes.
        let raw = [0x80, 0x80, 0x80, 0x80, 0x08, 0x00, 0x61];
        let mut out = Vec::new();
        let err = decompress(Compression::Snappy, 2, &raw, usize::MAX, &mut out).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Decompress);
        assert!(out.capacity() < 1 << 20);
        let mut framed = SNAPPY_HEADER.to_vec();
        framed.extend_from_slice(&(raw.len() as u32).to_be_bytes());
        framed.extend_from_slice(&raw);
        assert!(decompress(Compression::Snappy, 2, &framed, usize::MAX, &mut out).is_err());
        assert!(out.capacity() < 1 << 20);
    }

    // --- incremental compression -----------------------------------------------------------

    /// A level for `codec` from its whole range (extremes included), or None for the default.
    fn any_level(codec: Compression, pick: u32) -> Option<i32> {
        let levels: &[i32] = match codec {
            Compression::Gzip => &[-1, 1, 2, 5, 6, 9],
            Compression::Lz4 => &[1, 3, 9, 10, 12, 17],
            Compression::Zstd => &[ZSTD_MIN_LEVEL, -5, -1, 1, 3, 7, 12, 19],
            Compression::None | Compression::Snappy => &[],
        };
        match pick as usize % (levels.len() + 1) {
            0 => None,
            n => Some(levels[n - 1]),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// Feeding the compressor in pieces of any sizes (empty ones too) makes exactly the
        /// bytes of compressing the input at once, for every codec, level and magic.
        #[test]
        fn pieces_make_the_one_shot_bytes(
            codec in proptest::sample::select(Compression::ALL.to_vec()),
            pick in 0u32..64,
            magic in 0i8..=2,
            len in proptest::prop_oneof![0usize..2_000, 0usize..400_000],
            seed in 0u64..1000,
            cuts in proptest::collection::vec(
                proptest::prop_oneof![0usize..16, 0usize..70_000, 60_000usize..140_000],
                0..24,
            ),
        ) {
            let magic = if codec == Compression::Zstd { 2 } else { magic };
            let level = any_level(codec, pick);
            let input = mixed(len, seed);
            let whole = comp(codec, level, magic, &input);
            // Something before the region, as a batch's header slot is.
            let mut out = vec![7u8; 61];
            let mut compressor = Compressor::new(codec, level, magic, &mut out).unwrap();
            let mut rest = &input[..];
            for cut in cuts.iter().copied().chain(std::iter::repeat(usize::MAX)) {
                if rest.is_empty() {
                    break;
                }
                let (piece, tail) = rest.split_at(cut.min(rest.len()));
                compressor.write(piece, &mut out).unwrap();
                rest = tail;
            }
            compressor.finish(&mut out).unwrap();
            proptest::prop_assert_eq!(&out[..61], &[7u8; 61][..]);
            proptest::prop_assert!(out[61..] == whole[..], "{:?} {:?} magic {} len {}", codec, level, magic, len);
        }
    }

    // --- LZ4 ------------------------------------------------------------------------------

    #[test]
    fn lz4_header_bytes_per_magic() {
        let empty_v0 = comp(Compression::Lz4, None, 0, b"");
        assert_eq!(
            empty_v0,
            [0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x1a, 0, 0, 0, 0]
        );
        for magic in [1, 2] {
            let empty = comp(Compression::Lz4, Some(17), magic, b"");
            assert_eq!(
                empty,
                [0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82, 0, 0, 0, 0]
            );
        }
        // The two header checksums, computed from their definitions.
        assert_eq!(lz4_header_checksum(&[0x60, 0x40]), 0x82);
        assert_eq!(
            lz4_header_checksum(&[0x04, 0x22, 0x4d, 0x18, 0x60, 0x40]),
            0x1a
        );
    }

    #[test]
    fn lz4_blocks_are_64k_and_incompressible_blocks_are_stored() {
        let input = b"abcdefgh".repeat(20_000); // 160_000 bytes: 3 blocks
        let out = comp(Compression::Lz4, None, 2, &input);
        let mut pos = 7;
        let mut blocks = 0;
        loop {
            let word = u32::from_le_bytes(out[pos..pos + 4].try_into().unwrap());
            pos += 4;
            if word == 0 {
                break;
            }
            assert_eq!(word & LZ4_BLOCK_UNCOMPRESSED, 0);
            let n = word as usize;
            let block = lz4_flex::block::decompress(&out[pos..pos + n], LZ4_BLOCK_BYTES).unwrap();
            assert_eq!(
                block.len(),
                if blocks < 2 { 65536 } else { 160_000 - 131072 }
            );
            pos += n;
            blocks += 1;
        }
        assert_eq!((blocks, pos), (3, out.len()));

        let noise: Vec<u8> = (0..100u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let out = comp(Compression::Lz4, None, 2, &noise);
        assert_eq!(out[7..11], (100u32 | LZ4_BLOCK_UNCOMPRESSED).to_le_bytes());
        assert_eq!(out[11..111], noise[..]);
        assert_eq!(out[111..], [0, 0, 0, 0]);
        assert_eq!(decomp_ok(Compression::Lz4, 2, &out), noise);
    }

    #[test]
    fn lz4_magic_v0_header_checksum_quirk() {
        let input = mixed(5000, 10);
        let v0 = comp(Compression::Lz4, None, 0, &input);
        assert_eq!(v0[6], 0x1a);
        assert_eq!(decomp_ok(Compression::Lz4, 0, &v0), input);
        let err = decomp(Compression::Lz4, 2, &v0, usize::MAX).unwrap_err();
        assert_eq!((err.kind, err.pos), (ErrorKind::BadChecksum, 6));
        assert!(err.message.contains("Stream frame descriptor corrupted"));
        let err = decomp(Compression::Lz4, 1, &v0, usize::MAX).unwrap_err();
        assert_eq!(err.kind, ErrorKind::BadChecksum);

        let mut v2 = comp(Compression::Lz4, None, 2, &input);
        assert_eq!(decomp_ok(Compression::Lz4, 1, &v2), input);
        v2[6] ^= 0x10;
        let err = decomp(Compression::Lz4, 2, &v2, usize::MAX).unwrap_err();
        assert_eq!((err.kind, err.pos), (ErrorKind::BadChecksum, 6));
        // Magic v0 never looks at the byte.
        assert_eq!(decomp_ok(Compression::Lz4, 0, &v2), input);
    }

    /// Builds a frame by hand: `flg`, `bd`, optional content size, then `blocks` as given
    /// (compressed unless `stored`), with block checksums when FLG asks for them.
    fn lz4_frame(flg: u8, bd: u8, blocks: &[(&[u8], bool)], trailer: &[u8]) -> Vec<u8> {
        let mut f = LZ4_MAGIC.to_vec();
        f.extend_from_slice(&[flg, bd]);
        if flg & LZ4_FLG_CONTENT_SIZE != 0 {
            f.extend_from_slice(&12345u64.to_le_bytes());
        }
        let hc = lz4_header_checksum(&f[4..]);
        f.push(hc);
        for &(data, stored) in blocks {
            let body = if stored {
                data.to_vec()
            } else {
                lz4_flex::block::compress(data)
            };
            let word = body.len() as u32 | if stored { LZ4_BLOCK_UNCOMPRESSED } else { 0 };
            f.extend_from_slice(&word.to_le_bytes());
            f.extend_from_slice(&body);
            if flg & LZ4_FLG_BLOCK_CHECKSUM != 0 {
                f.extend_from_slice(&xxhash_rust::xxh32::xxh32(&body, 0).to_le_bytes());
            }
        }
        f.extend_from_slice(&[0, 0, 0, 0]);
        f.extend_from_slice(trailer);
        f
    }

    #[test]
    fn lz4_frame_options_kafka_reads() {
        let a = mixed(3000, 11);
        let b = mixed(200, 12);
        let expected = [a.clone(), b.clone()].concat();
        let blocks: &[(&[u8], bool)] = &[(&a, false), (&b, true)];
        // Block checksums (verified), content checksum (skipped), content size (skipped),
        // bigger block sizes, and bytes after the end mark (ignored).
        for (flg, bd) in [
            (0x60, 0x40),
            (0x70, 0x50),
            (0x64, 0x60),
            (0x68, 0x70),
            (0x7c, 0x40),
        ] {
            let frame = lz4_frame(flg, bd, blocks, &[0xde, 0xad, 0xbe, 0xef, 1, 2, 3]);
            assert_eq!(
                decomp_ok(Compression::Lz4, 2, &frame),
                expected,
                "flg {flg:#x}"
            );
        }
        let mut frame = lz4_frame(0x70, 0x40, blocks, &[]);
        let n = frame.len();
        frame[n - 5] ^= 1; // last block's checksum
        let err = decomp(Compression::Lz4, 2, &frame, usize::MAX).unwrap_err();
        assert_eq!(err.kind, ErrorKind::BadChecksum);
        assert!(err.message.contains("Block checksum mismatch"));
        // A content checksum announced but missing.
        let frame = lz4_frame(0x64, 0x40, blocks, &[1, 2]);
        assert!(decomp(Compression::Lz4, 2, &frame, usize::MAX).is_err());
        // An end mark with the "uncompressed" bit set still ends the frame.
        let mut frame = lz4_frame(0x60, 0x40, blocks, &[]);
        let n = frame.len();
        frame[n - 1] = 0x80;
        assert_eq!(decomp_ok(Compression::Lz4, 2, &frame), expected);
    }

    #[test]
    fn lz4_rejects_what_kafka_rejects() {
        let data = mixed(500, 13);
        let blocks: &[(&[u8], bool)] = &[(&data, false)];
        let cases: [(u8, u8, &str); 6] = [
            (0x40, 0x40, "Dependent block"),
            (0x20, 0x40, "Version 0"),
            (0xa0, 0x40, "Version 2"),
            (0x61, 0x40, "reserved"),
            (0x60, 0x30, "between 4 and 7"),
            (0x60, 0x41, "reserved"),
        ];
        for (flg, bd, msg) in cases {
            let frame = lz4_frame(flg, bd, blocks, &[]);
            let err = decomp(Compression::Lz4, 2, &frame, usize::MAX).unwrap_err();
            assert!(err.message.contains(msg), "flg {flg:#x} bd {bd:#x}: {err}");
        }
        let mut frame = lz4_frame(0x60, 0x40, blocks, &[]);
        frame[0] = 0x05;
        assert!(decomp(Compression::Lz4, 2, &frame, usize::MAX)
            .unwrap_err()
            .message
            .contains("magic"));
        assert!(decomp(Compression::Lz4, 2, &frame[..5], usize::MAX)
            .unwrap_err()
            .message
            .contains("prematurely"));
        // A block larger than the declared maximum.
        let mut frame = lz4_frame(0x60, 0x40, &[], &[]);
        frame.truncate(7);
        frame.extend_from_slice(&(65537u32 | LZ4_BLOCK_UNCOMPRESSED).to_le_bytes());
        frame.extend_from_slice(&[0; 65537]);
        let err = decomp(Compression::Lz4, 2, &frame, usize::MAX).unwrap_err();
        assert_eq!(
            (err.pos, err.message.as_str()),
            (7, "lz4: Block size 65537 exceeded max: 65536")
        );
        // Missing end mark.
        let frame = lz4_frame(0x60, 0x40, blocks, &[]);
        assert!(decomp(Compression::Lz4, 2, &frame[..frame.len() - 4], usize::MAX).is_err());
    }

    // --- zstd -----------------------------------------------------------------------------

    /// A frame of 1000 sevens whose header asks for a window of `2^log` bytes: fed before
    /// the end, so that zstd does not size the window down to the input.
    fn zstd_frame_with_window(log: u32) -> Vec<u8> {
        let mut cctx = CCtx::create();
        cctx.set_parameter(CParameter::WindowLog(log)).unwrap();
        let mut frame = Vec::with_capacity(1 << 16);
        let mut dst = OutBuffer::around(&mut frame);
        let (mut src, mut end) = (InBuffer::around(&[7u8; 1000]), InBuffer::around(&[]));
        cctx.compress_stream2(&mut dst, &mut src, ZSTD_EndDirective::ZSTD_e_continue)
            .unwrap();
        while cctx
            .compress_stream2(&mut dst, &mut end, ZSTD_EndDirective::ZSTD_e_end)
            .unwrap()
            > 0
        {}
        frame
    }

    /// A frame that asks for a window past 128 MiB is a decode error, whole or a little at a
    /// time: what a decoder holds does not follow a frame's header. Within it, a frame decodes
    /// into pieces of any size.
    #[test]
    fn zstd_windows_past_128_mib_are_refused() {
        let frame = zstd_frame_with_window(28);
        let err = decomp(Compression::Zstd, 2, &frame, 1 << 20).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Decompress, "{err}");
        assert!(err.message.contains("too much memory"), "{err}");
        let mut d = ZstdDecoder::new(1 << 20).unwrap();
        let mut out = Vec::with_capacity(1 << 20);
        assert_eq!(d.decode(&frame, &mut out).unwrap_err(), err);
        let frame = zstd_frame_with_window(27);
        assert_eq!(
            decomp(Compression::Zstd, 2, &frame, 1000).unwrap(),
            [7u8; 1000]
        );
        let (mut d, mut all) = (ZstdDecoder::new(1000).unwrap(), Vec::new());
        loop {
            let mut out = Vec::with_capacity(33);
            let more = d.decode(&frame, &mut out).unwrap();
            all.extend_from_slice(&out);
            if !more {
                break;
            }
        }
        assert_eq!((all, d.decoded()), (vec![7u8; 1000], 1000));
    }

    #[test]
    fn zstd_concatenated_frames_decode_to_both() {
        let a = mixed(70_000, 14);
        let b = mixed(3000, 15);
        let mut stream = comp(Compression::Zstd, None, 2, &a);
        stream.extend_from_slice(&comp(Compression::Zstd, Some(19), 2, &b));
        // A frame with its content size (one-shot API) and a skippable frame mix in too.
        stream.extend_from_slice(&zstd::bulk::compress(&a, 1).unwrap());
        stream.extend_from_slice(&[0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
        assert_eq!(
            decomp_ok(Compression::Zstd, 2, &stream),
            [a.clone(), b, a].concat()
        );
        assert_eq!(decomp_ok(Compression::Zstd, 2, b""), b"");
    }

    #[test]
    fn zstd_frames_carry_no_content_size_and_no_checksum() {
        let out = comp(Compression::Zstd, None, 2, &mixed(1000, 16));
        assert_eq!(out[..4], [0x28, 0xb5, 0x2f, 0xfd]);
        let descriptor = out[4];
        assert_eq!(descriptor & 0xc0, 0, "frame content size flag");
        assert_eq!(descriptor & 0x04, 0, "content checksum flag");
        assert_eq!(zstd_safe::get_frame_content_size(&out).unwrap(), None);
        assert!(
            comp(Compression::Zstd, None, 2, b"").is_empty(),
            "no input, no frame"
        );
    }

    #[test]
    fn zstd_is_rejected_below_magic_2() {
        let frame = comp(Compression::Zstd, None, 2, b"data");
        for magic in [0, 1] {
            let err =
                compress(Compression::Zstd, None, magic, b"data", &mut Vec::new()).unwrap_err();
            assert_eq!(err.kind, ErrorKind::BadValue);
            assert!(err.message.contains("zstd"), "{err}");
            let err = decomp(Compression::Zstd, magic, &frame, usize::MAX).unwrap_err();
            assert_eq!(err.kind, ErrorKind::BadValue);
        }
    }

    #[test]
    fn zstd_garbage_and_trailing_bytes_are_errors() {
        assert!(decomp(Compression::Zstd, 2, b"definitely not zstd", usize::MAX).is_err());
        let mut frame = comp(Compression::Zstd, None, 2, b"data");
        frame.extend_from_slice(&[1, 2, 3]);
        let err = decomp(Compression::Zstd, 2, &frame, usize::MAX).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Decompress);
        // The thread's context recovers after an error.
        assert_eq!(
            decomp_ok(Compression::Zstd, 2, &frame[..frame.len() - 3]),
            b"data"
        );
    }

    // --- bombs and truncation ---------------------------------------------------------------

    #[test]
    fn bombs_stop_at_the_limit_without_allocating() {
        let zeros = vec![0u8; 4 << 20];
        let limit = 256 << 10;
        for codec in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let bomb = comp(codec, None, 2, &zeros);
            assert!(bomb.len() < limit, "{codec:?} {}", bomb.len());
            let mut out = Vec::new();
            let err = decompress(codec, 2, &bomb, limit, &mut out).unwrap_err();
            assert_eq!(err.kind, ErrorKind::TooLarge, "{codec:?}");
            assert!(
                out.capacity() <= limit + 1,
                "{codec:?} grew to {}",
                out.capacity()
            );
        }
        // One raw snappy block declaring 4 MiB.
        let raw = snap::raw::Encoder::new().compress_vec(&zeros).unwrap();
        let mut out = Vec::new();
        let err = decompress(Compression::Snappy, 2, &raw, limit, &mut out).unwrap_err();
        assert_eq!(err.kind, ErrorKind::TooLarge);
        assert_eq!(out.capacity(), 0);
        // Stored LZ4 blocks past the limit.
        let mut out = Vec::new();
        let frame = lz4_frame(0x60, 0x70, &[(&zeros[..1 << 20], true)], &[]);
        let err = decompress(Compression::Lz4, 2, &frame, limit, &mut out).unwrap_err();
        assert_eq!(err.kind, ErrorKind::TooLarge);
        assert!(out.capacity() <= limit + 1);
    }

    #[test]
    fn gzip_forged_isize_does_not_reserve() {
        let mut stream = comp(Compression::Gzip, None, 2, b"tiny");
        let n = stream.len();
        stream[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut out = Vec::new();
        let err = decompress(Compression::Gzip, 2, &stream, usize::MAX, &mut out).unwrap_err();
        assert_eq!(err.kind, ErrorKind::BadChecksum);
        assert!(out.capacity() < 1 << 20);
    }

    #[test]
    fn truncation_at_every_byte_never_panics() {
        let input = mixed(4000, 17);
        let mut out = Vec::new();
        for codec in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            for magic in [0i8, 2] {
                if codec == Compression::Zstd && magic == 0 {
                    continue;
                }
                let full = comp(codec, None, magic, &input);
                for cut in 0..full.len() {
                    let res = decompress(codec, magic, &full[..cut], usize::MAX, &mut out);
                    match codec {
                        // Every strict prefix lacks an end mark / trailer / frame end.
                        Compression::Gzip | Compression::Lz4 => {
                            assert!(res.is_err(), "{codec:?} {cut}")
                        }
                        Compression::Zstd if cut > 0 => {
                            let err = res.unwrap_err();
                            assert_eq!(err.kind, ErrorKind::Decompress, "{cut}");
                        }
                        _ => {
                            if res.is_ok() {
                                assert!(out.len() < input.len() && input.starts_with(&out));
                            }
                        }
                    }
                }
            }
        }
        // zstd cut inside a frame says so.
        let full = comp(Compression::Zstd, None, 2, &input);
        let err = decomp(Compression::Zstd, 2, &full[..full.len() - 1], usize::MAX).unwrap_err();
        assert!(err.message.contains("Truncated source"), "{err}");
    }

    #[test]
    fn flipping_bytes_never_panics() {
        let input = mixed(3000, 18);
        let mut out = Vec::new();
        for codec in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let full = comp(codec, None, 2, &input);
            for i in 0..full.len() {
                let mut damaged = full.clone();
                damaged[i] ^= 0xa5;
                let _ = decompress(codec, 2, &damaged, 1 << 20, &mut out);
                assert!(out.len() <= 1 << 20);
            }
        }
    }
}
