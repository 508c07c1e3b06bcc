//! Layer 1: Kafka's on-disk byte formats, both directions, with no I/O.
//!
//! Decoders borrow the bytes they are given and never panic on them: every length is checked
//! against what remains, and failures are [`DecodeError`]s with the position in the slice.

pub mod aiven;
pub mod batch;
pub mod checkpoint;
pub mod codec;
pub mod control;
pub mod cursor;
pub mod entry;
pub mod error;
pub mod index;
pub mod internal;
pub mod java_utf8;
pub mod legacy;
pub mod names;
pub mod os_path;
pub mod partition_for;
pub mod payload;
pub mod snapshot;
#[cfg(test)]
mod test_corpus;
#[cfg(test)]
pub(crate) mod test_util;
pub mod varint;

pub use codec::Compression;
pub use error::{DecodeError, ErrorKind};

/// Bytes from hex digits (two per byte, either case).
pub fn decode_hex(h: &str) -> Result<Vec<u8>, String> {
    let bad = || format!("expected an even number of hex digits, got {h:?}");
    if h.len() % 2 != 0 || !h.is_ascii() {
        return Err(bad());
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).map_err(|_| bad()))
        .collect()
}
