//! A bounds-checked big-endian reader over a borrowed slice, shared by every decoder.
//! Every read checks what remains first, so hostile lengths become errors, never panics.

use super::error::{DecodeError, ErrorKind, Result};
use super::varint;

#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// Takes the next `n` bytes; `what` names the field for the error message.
    #[inline]
    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let Some(out) = self.buf[self.pos..].get(..n) else {
            return Err(self.truncated(n, what));
        };
        self.pos += n;
        Ok(out)
    }

    /// Moves past `n` bytes that a reader of [`Cursor::rest`] consumed (at most what remains).
    #[inline]
    pub fn skip(&mut self, n: usize) {
        self.pos += n.min(self.remaining());
    }

    /// The error of a read of `n` bytes past the end, out of the readers' way.
    #[cold]
    #[inline(never)]
    fn truncated(&self, n: usize, what: &str) -> DecodeError {
        DecodeError::truncated(self.pos, n, self.remaining(), what)
    }

    #[inline]
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    #[inline]
    pub fn i8(&mut self, what: &str) -> Result<i8> {
        Ok(self.array::<1>(what)?[0] as i8)
    }

    pub fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    pub fn i16(&mut self, what: &str) -> Result<i16> {
        Ok(i16::from_be_bytes(self.array(what)?))
    }

    pub fn u16(&mut self, what: &str) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }

    pub fn i32(&mut self, what: &str) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array(what)?))
    }

    pub fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }

    pub fn i64(&mut self, what: &str) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array(what)?))
    }

    pub fn f64(&mut self, what: &str) -> Result<f64> {
        Ok(f64::from_be_bytes(self.array(what)?))
    }

    /// Zigzag varint (32-bit), as in v2 records.
    #[inline]
    pub fn varint(&mut self, what: &str) -> Result<i32> {
        let (v, n) = varint::decode_varint(self.rest()).map_err(|e| self.field_error(e, what))?;
        self.pos += n;
        Ok(v)
    }

    /// Zigzag varlong (64-bit), as in v2 records.
    #[inline]
    pub fn varlong(&mut self, what: &str) -> Result<i64> {
        let (v, n) = varint::decode_varlong(self.rest()).map_err(|e| self.field_error(e, what))?;
        self.pos += n;
        Ok(v)
    }

    /// Unsigned varint, as in Kafka's flexible message versions.
    pub fn uvarint(&mut self, what: &str) -> Result<u32> {
        let (v, n) =
            varint::decode_unsigned_varint(self.rest()).map_err(|e| self.field_error(e, what))?;
        self.pos += n;
        Ok(v)
    }

    /// A length-prefixed byte string whose length was already read; -1 means null.
    #[inline]
    pub fn nullable_bytes(&mut self, len: i64, what: &str) -> Result<Option<&'a [u8]>> {
        if len == -1 {
            return Ok(None);
        }
        if len < 0 {
            return Err(DecodeError::new(
                ErrorKind::BadLength,
                self.pos,
                format!("{what}: invalid negative length {len}"),
            ));
        }
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        self.take(len, what).map(Some)
    }

    #[cold]
    fn field_error(&self, e: DecodeError, what: &str) -> DecodeError {
        DecodeError::new(e.kind, self.pos + e.pos, format!("{what}: {}", e.message))
    }
}
