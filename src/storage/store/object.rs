//! One object read like a file: positional reads served from a window of chunks fetched by
//! ranged GETs, several in flight when reading goes forward. Memory stays at most
//! `CHUNK_BYTES × IN_FLIGHT` per open object, whatever the object's size.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use super::Store;
use crate::error::{Error, Result};
use crate::format::aiven::{Chunk, SegmentReader};

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
    /// Aiven's chunked `.log` objects: the reader that maps the segment's positions to chunks
    /// and decodes them (`len` is then the segment's size). None: the object is the file.
    chunked: Option<Arc<SegmentReader>>,
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
            chunked: None,
        })
    }

    /// Opens an Aiven `.log` object read as the segment it decodes to: only the chunks a read
    /// needs are fetched (adjacent ones in requests of up to `CHUNK_BYTES`), so memory stays
    /// within `IN_FLIGHT` requests plus a chunk.
    pub fn open_chunked(
        store: Arc<dyn Store>,
        key: &str,
        reader: Arc<SegmentReader>,
    ) -> Result<Self> {
        let stored = store.len(key)?;
        let index = &reader.manifest.chunk_index;
        if stored != index.transformed_file_size() {
            return Err(Error::invalid(
                &store.path_of(key),
                format!(
                    "the object has {stored} byte(s); its manifest's chunk index says {}",
                    index.transformed_file_size()
                ),
            ));
        }
        Ok(RemoteObject {
            len: u64::from(index.original_file_size),
            store,
            key: key.to_string(),
            window: Vec::new(),
            window_pos: 0,
            chunked: Some(reader),
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
        if let Some(reader) = self.chunked.clone() {
            return self.fetch_chunks(&reader, pos, chunks);
        }
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

    /// The chunks holding `requests × CHUNK_BYTES` segment bytes from `pos`, decoded.
    fn fetch_chunks(&mut self, reader: &SegmentReader, pos: u64, requests: u64) -> Result<()> {
        let chunks: Vec<Chunk> = reader.chunks(pos, requests * CHUNK_BYTES).collect();
        // Adjacent chunks share a request up to CHUNK_BYTES: a small chunk size would otherwise
        // be a request per few bytes. A larger chunk is a request of its own.
        let mut groups: Vec<Range<usize>> = Vec::new();
        for (i, c) in chunks.iter().enumerate() {
            match groups.last_mut() {
                Some(g)
                    if c.transformed_range().end - chunks[g.start].transformed_position
                        <= CHUNK_BYTES =>
                {
                    g.end = i + 1
                }
                _ => groups.push(i..i + 1),
            }
        }
        let ranges: Vec<Range<u64>> = groups
            .iter()
            .map(|g| {
                chunks[g.start].transformed_position..chunks[g.end - 1].transformed_range().end
            })
            .collect();
        let parts = self.store.read_ranges(&self.key, &ranges)?;
        self.window.clear();
        for (g, bytes) in groups.iter().zip(parts) {
            let base = chunks[g.start].transformed_position;
            for c in &chunks[g.clone()] {
                let r = c.transformed_range();
                let plain = reader
                    .decode_chunk(
                        c,
                        &bytes[(r.start - base) as usize..(r.end - base) as usize],
                    )
                    .map_err(|e| Error::decode(&self.path(), 0, e))?;
                self.window.extend_from_slice(&plain);
            }
        }
        self.window_pos = chunks.first().map_or(pos, |c| c.original_position);
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
