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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store::Remote;

    /// Reads forward and jumps over an in-memory store: every byte is the object's, across
    /// chunk boundaries, and the window never holds more than the chunks in flight.
    #[test]
    fn reads_cross_chunks_and_stay_bounded() {
        let store: Arc<dyn Store> = Arc::new(
            Remote::over(
                "memory://t",
                Arc::new(object_store::memory::InMemory::new()),
            )
            .unwrap(),
        );
        let len = (CHUNK_BYTES * 6 + 123) as usize;
        let data: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
        store.put("a/b.log", data.clone()).unwrap();
        let mut o = RemoteObject::open(Arc::clone(&store), "a/b.log").unwrap();
        assert_eq!(o.len(), len as u64);
        let (mut pos, mut buf) = (0usize, vec![0u8; 100_000]);
        while pos < len {
            let n = o.read_at(&mut buf, pos as u64).unwrap();
            assert!(n > 0);
            assert_eq!(&buf[..n], &data[pos..pos + n]);
            assert!(o.window.len() as u64 <= CHUNK_BYTES * IN_FLIGHT);
            pos += n;
        }
        assert_eq!(o.read_at(&mut buf, len as u64).unwrap(), 0);
        let at = CHUNK_BYTES as usize * 3 - 7;
        assert_eq!(o.read_at(&mut buf[..10], at as u64).unwrap(), 10);
        assert_eq!(&buf[..10], &data[at..at + 10]);
        let e = RemoteObject::open(store, "a/none.log")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("memory://t/a/none.log") && e.contains("no such object"),
            "{e}"
        );
    }
}
