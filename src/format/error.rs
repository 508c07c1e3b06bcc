//! The error every decoder of the format layer returns.
//!
//! The format layer sees only byte slices, so a position here is relative to the slice the
//! caller handed in; the storage layer adds the file name and the absolute file position.

use std::fmt;

/// What kind of problem a decoder found. Upper layers map these onto stable check ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Fewer bytes than the layout needs.
    Truncated,
    /// A varint longer than its maximum encoding (or not terminated).
    BadVarint,
    /// A length or count field that is negative, too large or inconsistent with its container.
    BadLength,
    /// An attribute, magic, version or type value the format does not allow.
    BadValue,
    /// A checksum that does not match the bytes it covers.
    BadChecksum,
    /// A compressed payload that does not decompress.
    Decompress,
    /// A decompressed payload larger than the caller allows (hostile length, decompression bomb).
    TooLarge,
    /// Text files (checkpoints, properties) that do not follow their grammar.
    Malformed,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Truncated => "truncated",
            ErrorKind::BadVarint => "bad-varint",
            ErrorKind::BadLength => "bad-length",
            ErrorKind::BadValue => "bad-value",
            ErrorKind::BadChecksum => "bad-checksum",
            ErrorKind::Decompress => "decompress",
            ErrorKind::TooLarge => "too-large",
            ErrorKind::Malformed => "malformed",
        }
    }
}

/// A decoding failure: where (byte position within the decoded slice) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub kind: ErrorKind,
    /// Byte position relative to the start of the slice given to the decoder.
    pub pos: usize,
    pub message: String,
}

impl DecodeError {
    pub fn new(kind: ErrorKind, pos: usize, message: impl Into<String>) -> Self {
        DecodeError {
            kind,
            pos,
            message: message.into(),
        }
    }

    pub fn truncated(pos: usize, needed: usize, available: usize, what: &str) -> Self {
        DecodeError::new(
            ErrorKind::Truncated,
            pos,
            format!("{what}: needs {needed} byte(s), only {available} available"),
        )
    }

    /// The same error seen from a slice that starts `base` bytes earlier.
    pub fn shifted(mut self, base: usize) -> Self {
        self.pos += base;
        self
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.pos)
    }
}

impl std::error::Error for DecodeError {}

pub type Result<T, E = DecodeError> = std::result::Result<T, E>;
