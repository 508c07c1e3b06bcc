//! A raw Snappy block compressor that makes the bytes of Google's C++ snappy 1.1.9, the library
//! under the reference corpus' snappy-java. Any Snappy encoder writes a valid block, but the
//! bytes depend on its hash function and match search: `snap` follows older C++ releases, whose
//! hash takes the top bits of the product, where 1.1.9 masks the bits below the top 14, so
//! blocks under 16 KiB differ. Decoding stays with `snap`.

/// The C++ library compresses its input in independent fragments of this size.
const FRAGMENT_BYTES: usize = 64 * 1024;
const MIN_TABLE_BITS: u32 = 8;
const MAX_TABLE_BITS: u32 = 14;
/// The match search stops this far from the end of a fragment; the tail is a literal.
const INPUT_MARGIN_BYTES: usize = 15;
const HASH_MULTIPLIER: u32 = 0x1e35_a7bd;

const TAG_LITERAL: u8 = 0;
const TAG_COPY_1: u8 = 1;
const TAG_COPY_2: u8 = 2;

/// The most a block of `len` input bytes can take (the C++ library's bound).
pub(super) fn max_compressed_len(len: usize) -> usize {
    32 + len + len / 6
}

/// Reusable hash table of positions within the current fragment.
#[derive(Default)]
pub(super) struct Encoder {
    table: Vec<u16>,
}

impl Encoder {
    /// Appends the raw Snappy block of `input` (varint length, then elements) to `out`.
    pub(super) fn compress(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let mut n = input.len();
        while n >= 0x80 {
            out.push(n as u8 | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
        for fragment in input.chunks(FRAGMENT_BYTES) {
            let bits = table_bits(fragment.len());
            self.table.clear();
            self.table.resize(1 << bits, 0);
            compress_fragment(fragment, &mut self.table, bits, out);
        }
    }
}

/// log2 of the table size: the smallest power of two holding the fragment, within bounds.
fn table_bits(len: usize) -> u32 {
    let need = usize::BITS - len.saturating_sub(1).leading_zeros();
    need.clamp(MIN_TABLE_BITS, MAX_TABLE_BITS)
}

fn load32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().expect("4 bytes"))
}

fn hash(bytes: u32, bits: u32) -> usize {
    ((bytes.wrapping_mul(HASH_MULTIPLIER) >> (32 - MAX_TABLE_BITS)) & ((1 << bits) - 1)) as usize
}

fn compress_fragment(src: &[u8], table: &mut [u16], bits: u32, out: &mut Vec<u8>) {
    let mut ip = 0;
    if src.len() >= INPUT_MARGIN_BYTES {
        let ip_limit = src.len() - INPUT_MARGIN_BYTES;
        'scan: loop {
            // Look for a 4-byte match from ip + 1 on, stepping further the longer none is found.
            let next_emit = ip;
            ip += 1;
            let mut skip = 32u32;
            let mut candidate;
            loop {
                let here = load32(src, ip);
                let h = hash(here, bits);
                let step = (skip >> 5) as usize;
                skip += skip >> 5;
                let next_ip = ip + step;
                if next_ip > ip_limit {
                    ip = next_emit;
                    break 'scan;
                }
                candidate = table[h] as usize;
                table[h] = ip as u16;
                if load32(src, candidate) == here {
                    break;
                }
                ip = next_ip;
            }
            emit_literal(&src[next_emit..ip], out);
            // Copies follow each other while the bytes after one start another match.
            loop {
                let start = ip;
                let matched = 4 + common_prefix(&src[candidate + 4..], &src[ip + 4..]);
                ip += matched;
                emit_copy(start - candidate, matched, out);
                if ip >= ip_limit {
                    break 'scan;
                }
                table[hash(load32(src, ip - 1), bits)] = (ip - 1) as u16;
                let here = load32(src, ip);
                let h = hash(here, bits);
                candidate = table[h] as usize;
                table[h] = ip as u16;
                if here != load32(src, candidate) {
                    break;
                }
            }
        }
    }
    if ip < src.len() {
        emit_literal(&src[ip..], out);
    }
}

/// How many leading bytes `a` and `b` share, compared 8 at a time.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("8 bytes"));
    let mut i = 0;
    while i + 8 <= n {
        let diff = word(a, i) ^ word(b, i);
        if diff != 0 {
            return i + (diff.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + a[i..n]
        .iter()
        .zip(&b[i..n])
        .take_while(|(x, y)| x == y)
        .count()
}

fn emit_literal(literal: &[u8], out: &mut Vec<u8>) {
    let n = literal.len() - 1;
    if n < 60 {
        out.push(TAG_LITERAL | (n as u8) << 2);
    } else {
        let bytes = (usize::BITS - n.leading_zeros()).div_ceil(8) as usize;
        out.push(TAG_LITERAL | ((59 + bytes) as u8) << 2);
        out.extend_from_slice(&n.to_le_bytes()[..bytes]);
    }
    out.extend_from_slice(literal);
}

/// One copy element of 4..=64 bytes: the 2-byte form where it fits, else the 3-byte one.
fn emit_short_copy(offset: usize, len: usize, out: &mut Vec<u8>) {
    if len < 12 && offset < 2048 {
        out.push(TAG_COPY_1 | ((len - 4) as u8) << 2 | ((offset >> 8) as u8) << 5);
        out.push(offset as u8);
    } else {
        out.push(TAG_COPY_2 | ((len - 1) as u8) << 2);
        out.extend_from_slice(&(offset as u16).to_le_bytes());
    }
}

fn emit_copy(offset: usize, mut len: usize, out: &mut Vec<u8>) {
    // 64-byte pieces, keeping at least 4 bytes for the last one (60 then the rest past 64).
    while len >= 68 {
        emit_short_copy(offset, 64, out);
        len -= 64;
    }
    if len > 64 {
        emit_short_copy(offset, 60, out);
        len -= 60;
    }
    emit_short_copy(offset, len, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compress(input: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        Encoder::default().compress(input, &mut out);
        out
    }

    #[test]
    fn blocks_decode_back_and_stay_within_the_bound() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for len in [0usize, 1, 14, 15, 16, 100, 4096, 70_000, 200_000] {
            for alphabet in [1u64, 4, 26, 256] {
                let input: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        (state % alphabet) as u8
                    })
                    .collect();
                let block = compress(&input);
                assert!(block.len() <= max_compressed_len(len), "{len} {alphabet}");
                let back = snap::raw::Decoder::new().decompress_vec(&block).unwrap();
                assert_eq!(back, input, "{len} {alphabet}");
            }
        }
    }

    #[test]
    fn element_forms() {
        // A 100-byte run: literal 'a', then copies at offset 1 of 64 and 35 bytes.
        assert_eq!(
            compress(&[b'a'; 100]),
            [100, 0, b'a', 2 | 63 << 2, 1, 0, 2 | 34 << 2, 1, 0]
        );
        // 61 distinct bytes find no match: one literal, its length (61 - 1) in an extra byte.
        let distinct: Vec<u8> = (0..61).collect();
        let block = compress(&distinct);
        assert_eq!(block[..3], [61, 60 << 2, 60]);
        assert_eq!(block[3..], distinct[..]);
    }
}
