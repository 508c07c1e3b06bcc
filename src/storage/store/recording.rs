//! A store for tests: an in-memory one that records what it is asked to read and delivers each
//! range in parts, as a transfer does.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::{Listing, PendingRead, ReadAhead, Remote, Store, Upload};
use crate::error::Result;

/// A store that records the ranges it is asked to read, and delivers each in parts of
/// `part_bytes`, as a transfer does, with an empty part after each.
pub struct Recording {
    inner: Remote,
    /// The ranges asked for, in order.
    pub reads: Mutex<Vec<Range<u64>>>,
    /// The keys of the reads, in the same order.
    pub keys: Mutex<Vec<String>>,
    part_bytes: usize,
}

impl Store for Recording {
    fn name(&self, key: &str) -> String {
        self.inner.name(key)
    }
    fn len(&self, key: &str) -> Result<u64> {
        self.inner.len(key)
    }
    fn start_read(&self, key: &str, range: Range<u64>) -> PendingRead {
        self.reads.lock().unwrap().push(range.clone());
        self.keys.lock().unwrap().push(key.to_string());
        let bytes = Bytes::from(self.inner.read_range(key, range).unwrap());
        let parts = (0..bytes.len())
            .step_by(self.part_bytes)
            .flat_map(|i| {
                let part = bytes.slice(i..(i + self.part_bytes).min(bytes.len()));
                [part, Bytes::new()]
            })
            .collect();
        PendingRead::arrived(self.name(key), parts)
    }
    fn read_ahead(&self) -> ReadAhead {
        self.inner.read_ahead()
    }
    fn list(&self, prefix: &str) -> Result<Listing> {
        self.inner.list(prefix)
    }
    fn put(&self, key: &str, bytes: Vec<u8>) -> Result<()> {
        self.inner.put(key, bytes)
    }
    fn upload(&self, key: &str) -> Result<Box<dyn Upload>> {
        self.inner.upload(key)
    }
}

pub fn store(chunk_bytes: u64, requests: usize, part_bytes: usize) -> Arc<Recording> {
    let memory = Arc::new(object_store::memory::InMemory::new());
    let read_ahead = ReadAhead {
        chunk_bytes,
        requests,
    };
    Arc::new(Recording {
        inner: Remote::over("memory://t", memory, read_ahead).unwrap(),
        reads: Mutex::new(Vec::new()),
        keys: Mutex::new(Vec::new()),
        part_bytes,
    })
}
