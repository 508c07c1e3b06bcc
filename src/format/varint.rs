//! Kafka's variable-length integers: zigzag varint/varlong (record fields of magic v2) and the
//! unsigned varint of flexible message versions. Decoders follow Kafka's `ByteUtils`: at most 5
//! bytes for a varint and 10 for a varlong; a longer (overlong) encoding is rejected.

use super::error::{DecodeError, ErrorKind, Result};

pub const MAX_VARINT_BYTES: usize = 5;
pub const MAX_VARLONG_BYTES: usize = 10;

/// Decodes an unsigned varint from the start of `buf`; returns the value and the bytes used.
/// Like Kafka, bits shifted past 32 in the fifth byte are dropped, but a fifth byte with the
/// continuation bit set is an error.
#[inline]
pub fn decode_unsigned_varint(buf: &[u8]) -> Result<(u32, usize)> {
    // Most record fields (deltas, lengths, counts) fit in one or two bytes.
    match buf {
        [b, ..] if b & 0x80 == 0 => Ok((u32::from(*b), 1)),
        [b0, b1, ..] if b1 & 0x80 == 0 => Ok((u32::from(b0 & 0x7f) | (u32::from(*b1) << 7), 2)),
        _ => decode_unsigned_varint_bytes(buf),
    }
}

/// The loop of [`decode_unsigned_varint`], out of line.
#[inline(never)]
fn decode_unsigned_varint_bytes(buf: &[u8]) -> Result<(u32, usize)> {
    let mut value: u32 = 0;
    for i in 0..MAX_VARINT_BYTES {
        let Some(&b) = buf.get(i) else {
            return Err(DecodeError::new(
                ErrorKind::Truncated,
                i,
                "varint ends before its last byte",
            ));
        };
        value |= u32::from(b & 0x7f).wrapping_shl(7 * i as u32);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(DecodeError::new(
        ErrorKind::BadVarint,
        0,
        "varint is too long (more than 5 bytes)",
    ))
}

/// Decodes an unsigned varlong; at most 10 bytes.
#[inline]
pub fn decode_unsigned_varlong(buf: &[u8]) -> Result<(u64, usize)> {
    // Most record fields (deltas, lengths, counts) fit in one or two bytes.
    match buf {
        [b, ..] if b & 0x80 == 0 => Ok((u64::from(*b), 1)),
        [b0, b1, ..] if b1 & 0x80 == 0 => Ok((u64::from(b0 & 0x7f) | (u64::from(*b1) << 7), 2)),
        _ => decode_unsigned_varlong_bytes(buf),
    }
}

/// The loop of [`decode_unsigned_varlong`], out of line.
#[inline(never)]
fn decode_unsigned_varlong_bytes(buf: &[u8]) -> Result<(u64, usize)> {
    let mut value: u64 = 0;
    for i in 0..MAX_VARLONG_BYTES {
        let Some(&b) = buf.get(i) else {
            return Err(DecodeError::new(
                ErrorKind::Truncated,
                i,
                "varlong ends before its last byte",
            ));
        };
        value |= u64::from(b & 0x7f).wrapping_shl(7 * i as u32);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(DecodeError::new(
        ErrorKind::BadVarint,
        0,
        "varlong is too long (more than 10 bytes)",
    ))
}

#[inline]
pub fn decode_varint(buf: &[u8]) -> Result<(i32, usize)> {
    let (u, n) = decode_unsigned_varint(buf)?;
    Ok((((u >> 1) as i32) ^ -((u & 1) as i32), n))
}

#[inline]
pub fn decode_varlong(buf: &[u8]) -> Result<(i64, usize)> {
    let (u, n) = decode_unsigned_varlong(buf)?;
    Ok((((u >> 1) as i64) ^ -((u & 1) as i64), n))
}

pub fn write_unsigned_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub fn write_unsigned_varlong(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub fn write_varint(out: &mut Vec<u8>, v: i32) {
    write_unsigned_varint(out, ((v << 1) ^ (v >> 31)) as u32);
}

pub fn write_varlong(out: &mut Vec<u8>, v: i64) {
    write_unsigned_varlong(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// Bytes `write_varint` would use for `v`.
pub fn varint_size(v: i32) -> usize {
    let mut u = ((v << 1) ^ (v >> 31)) as u32;
    let mut n = 1;
    while u >= 0x80 {
        u >>= 7;
        n += 1;
    }
    n
}

/// Bytes `write_varlong` would use for `v`.
pub fn varlong_size(v: i64) -> usize {
    let mut u = ((v << 1) ^ (v >> 63)) as u64;
    let mut n = 1;
    while u >= 0x80 {
        u >>= 7;
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc_int(v: i32) -> Vec<u8> {
        let mut out = Vec::new();
        write_varint(&mut out, v);
        out
    }

    #[test]
    fn documented_values() {
        // formats.md §0.1
        assert_eq!(enc_int(-1), [0x01]);
        assert_eq!(enc_int(0), [0x00]);
        assert_eq!(enc_int(1), [0x02]);
        assert_eq!(enc_int(2), [0x04]);
        assert_eq!(enc_int(64), [0x80, 0x01]);
    }

    #[test]
    fn longest_encodings() {
        assert_eq!(enc_int(i32::MIN), [0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(enc_int(i32::MAX), [0xfe, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(
            decode_varint(&[0xff, 0xff, 0xff, 0xff, 0x0f]).unwrap(),
            (i32::MIN, 5)
        );
        let mut out = Vec::new();
        write_varlong(&mut out, i64::MIN);
        assert_eq!(
            out,
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
        assert_eq!(decode_varlong(&out).unwrap(), (i64::MIN, 10));
        assert_eq!(varlong_size(i64::MIN), 10);
        assert_eq!(varint_size(i32::MIN), 5);
    }

    #[test]
    fn overlong_and_truncated_are_rejected() {
        let e = decode_varint(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadVarint);
        let e = decode_varlong(&[0x80; 11]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadVarint);
        let e = decode_varint(&[0x80, 0x80]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Truncated);
        assert_eq!(e.pos, 2);
    }

    #[test]
    fn fifth_byte_high_bits_dropped_like_kafka() {
        // 0x7f in the fifth byte: bits above 32 are silently discarded.
        assert_eq!(
            decode_unsigned_varint(&[0xff, 0xff, 0xff, 0xff, 0x7f]).unwrap(),
            (u32::MAX, 5)
        );
    }

    #[test]
    fn round_trip_edges() {
        for v in [0, 1, -1, 63, 64, -64, -65, 8191, 8192, i32::MAX, i32::MIN] {
            let b = enc_int(v);
            assert_eq!(b.len(), varint_size(v));
            assert_eq!(decode_varint(&b).unwrap(), (v, b.len()));
        }
        for v in [0i64, -1, 1 << 40, -(1 << 40), i64::MAX, i64::MIN] {
            let mut b = Vec::new();
            write_varlong(&mut b, v);
            assert_eq!(b.len(), varlong_size(v));
            assert_eq!(decode_varlong(&b).unwrap(), (v, b.len()));
        }
    }
}
