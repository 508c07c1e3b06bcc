//! One object read like a file: positional reads served from a window of chunks fetched by
//! ranged GETs, several in flight when reading goes forward. Memory stays at most
//! `CHUNK_BYTES × IN_FLIGHT` per open object, whatever the object's size.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use super::Store;
use crate::error::Result;

/// Bytes per ranged GET: large enough that request latency is a small part of a walk.
pub const CHUNK_BYTES: u64 = 4 << 20;
/// Ranged GETs in flight while reading forward.
pub const IN_FLIGHT: u64 = 4;

pub struct RemoteObject {
    store: Arc<dyn Store>,
    key: String,
    len: u64,
    /// Object bytes `[window_pos, window_pos + window.len())`.
    window: Vec<u8>,
    window_pos: u64,
}

impl RemoteObject {
    /// Opens `key` (one HEAD request: its size; a missing object is an error naming it).
    pub fn open(store: Arc<dyn Store>, key: &str) -> Result<Self> {
        let len = store.len(key)?;
        Ok(RemoteObject {
            store,
            key: key.to_string(),
            len,
            window: Vec::new(),
            window_pos: 0,
        })
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The path errors about this object name: its URL.
    pub fn path(&self) -> PathBuf {
        self.store.path_of(&self.key)
    }

    /// Copies bytes from `pos` into `buf`; returns how many (0 at the end of the object).
    pub fn read_at(&mut self, buf: &mut [u8], pos: u64) -> Result<usize> {
        if pos >= self.len || buf.is_empty() {
            return Ok(0);
        }
        let window_end = self.window_pos + self.window.len() as u64;
        if pos < self.window_pos || pos >= window_end {
            // Reading on from the window's end fetches ahead; a jump fetches one chunk.
            let ahead = if pos == window_end && !self.window.is_empty() {
                IN_FLIGHT
            } else {
                1
            };
            self.fetch(pos, ahead)?;
        }
        let start = (pos - self.window_pos) as usize;
        let n = buf.len().min(self.window.len() - start);
        buf[..n].copy_from_slice(&self.window[start..start + n]);
        Ok(n)
    }

    fn fetch(&mut self, pos: u64, chunks: u64) -> Result<()> {
        let ranges: Vec<Range<u64>> = (0..chunks)
            .map(|i| pos + i * CHUNK_BYTES)
            .take_while(|&s| s < self.len)
            .map(|s| s..(s + CHUNK_BYTES).min(self.len))
            .collect();
        self.window.clear();
        for part in self.store.read_ranges(&self.key, &ranges)? {
            self.window.extend_from_slice(&part);
        }
        self.window_pos = pos;
        Ok(())
    }
}
