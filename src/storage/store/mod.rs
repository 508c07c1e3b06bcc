//! Where the engine's bytes come from when they are not a local partition directory: a store of
//! objects (an S3 bucket, an S3-compatible server, a filesystem tree), read by key with ranged
//! reads. Local partition directories keep their own path (`std::fs` through `files`), so this
//! costs them nothing; a remote segment reaches the engine as a [`RemoteObject`] that
//! `LogReader` reads like a file.
//!
//! Two implementations: [`Local`] (a plain directory, no runtime) and [`Remote`] (the
//! `object_store` crate: `s3://`, `gs://`, `az://`, `file://`, `memory://`), which owns a
//! tokio runtime on threads of its own, so that reads started ahead progress while kseg works
//! on the bytes it has; the rest of kseg stays synchronous.

mod local;
mod object;
#[cfg(test)]
pub(crate) mod recording;
mod remote;

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::{Error, Result};

pub use local::{upload_file, Local};
pub use object::RemoteObject;
pub use remote::{Remote, RemoteOptions};

/// One object of a store: its key (relative to the store's root, `/`-separated) and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    pub key: String,
    pub size: u64,
}

/// What a store holds under a prefix: its objects, and the entries of a filesystem tree that
/// are no object (a FIFO, a socket, a device, a link to nothing), which kseg reads nothing
/// from. Those are listed so that each can be reported, never taken for an object (a FIFO's
/// read would block) nor passed over in silence. Both sorted by key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    pub objects: Vec<ObjectInfo>,
    pub not_objects: Vec<NotObject>,
}

/// An entry of a filesystem tree that is no object: its key, and what it is (`a FIFO`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotObject {
    pub key: String,
    pub what: &'static str,
}

/// What a [`NotObject`] is when it is a link that leads to no file (a dangling link, or a loop):
/// the one kind a file system says is not there at all.
pub const LINK_TO_NOTHING: &str = "a symbolic link to nothing";

/// Why an entry that is `what` (`a FIFO`) is not read, in an error about it.
pub fn not_an_object(what: &str) -> String {
    format!("{what}, not an object: kseg reads nothing from it")
}

/// How an object is read forward: ranged reads of `chunk_bytes`, `requests` of them started
/// ahead of the one being worked on (`--remote-chunk-bytes`, `--remote-requests`). An open
/// object buffers at most `chunk_bytes × (requests + 1)` bytes in flight, beside the part
/// worked on (and an Aiven object's range and decoded chunk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadAhead {
    pub chunk_bytes: u64,
    pub requests: usize,
}

impl Default for ReadAhead {
    /// Large reads, so that a request's latency is a small part of its transfer; two ahead, so
    /// one is still arriving while the next is being waited for.
    fn default() -> Self {
        ReadAhead {
            chunk_bytes: 16 << 20,
            requests: 2,
        }
    }
}

/// A read started by [`Store::start_read`]; its bytes come in order, as they arrive, with
/// [`PendingRead::next_part`] (or all at once with [`PendingRead::wait`]). Dropped before its
/// end (the reader jumped elsewhere), its request is cancelled.
pub struct PendingRead {
    /// The object's name, for a read that ends with no answer.
    name: String,
    state: Pending,
}

/// What a store's task sends: a part of the bytes, the end (None), or the error that ended it.
type Part = Result<Option<Bytes>>;

enum Pending {
    /// Sent by a task of a store's runtime, each part as the transfer delivered it.
    Task {
        parts: Receiver<Part>,
        _cancel: Option<CancelOnDrop>,
    },
    /// A read that costs nothing to start: each part read when asked for (None: the end).
    Later(Box<dyn FnMut() -> Result<Option<Vec<u8>>> + Send>),
}

/// Cancels a task when dropped (after the task ended, it does nothing).
struct CancelOnDrop(tokio::task::AbortHandle);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl PendingRead {
    fn task(name: String, parts: Receiver<Part>, task: tokio::task::AbortHandle) -> Self {
        PendingRead {
            name,
            state: Pending::Task {
                parts,
                _cancel: Some(CancelOnDrop(task)),
            },
        }
    }

    fn later(name: String, read: impl FnMut() -> Result<Option<Vec<u8>>> + Send + 'static) -> Self {
        PendingRead {
            name,
            state: Pending::Later(Box::new(read)),
        }
    }

    /// A read whose bytes have arrived already, in `parts` (tests: a transfer in parts of
    /// any size).
    #[cfg(test)]
    pub fn arrived(name: String, parts: Vec<Bytes>) -> Self {
        let (tx, rx) = std::sync::mpsc::channel();
        for part in parts {
            tx.send(Ok(Some(part))).expect("receiver held");
        }
        tx.send(Ok(None)).expect("receiver held");
        PendingRead {
            name,
            state: Pending::Task {
                parts: rx,
                _cancel: None,
            },
        }
    }

    /// The next part of the bytes, once it has arrived; None after the last. A failed request
    /// is an error naming the object.
    pub fn next_part(&mut self) -> Result<Option<Bytes>> {
        match &mut self.state {
            Pending::Task { parts, .. } => parts.recv().unwrap_or_else(|_| {
                Err(Error::invalid(
                    Path::new(&self.name),
                    "the read stopped with no answer (the store was closed)",
                ))
            }),
            Pending::Later(read) => read().map(|part| part.map(Bytes::from)),
        }
    }

    /// All the bytes, once they have arrived, into `buf` (what it held is dropped; its memory
    /// is reused).
    pub fn wait_into(&mut self, buf: &mut Vec<u8>) -> Result<()> {
        buf.clear();
        while let Some(part) = self.next_part()? {
            buf.extend_from_slice(&part);
        }
        Ok(())
    }

    /// All the bytes, once they have arrived.
    pub fn wait(mut self) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.wait_into(&mut buf)?;
        Ok(buf)
    }
}

/// What the engine reads from a store. Keys are relative to the root the store was opened at.
pub trait Store: Send + Sync {
    /// How an object is named in messages: the URL (or path) a user can look it up by.
    fn name(&self, key: &str) -> String;
    /// The object's size in bytes; a missing object is an error naming it.
    fn len(&self, key: &str) -> Result<u64>;
    /// Starts reading the bytes `range` of the object; they arrive while the caller does other
    /// work. A range past the end is an error when waited for.
    fn start_read(&self, key: &str, range: Range<u64>) -> PendingRead;
    /// How objects of this store are read forward.
    fn read_ahead(&self) -> ReadAhead;
    /// Every object under `prefix` (all depths), and the entries there that are no object.
    fn list(&self, prefix: &str) -> Result<Listing>;
    /// Stores `bytes` as `key`, whole (what a tiered-storage plugin's copy does).
    fn put(&self, key: &str, bytes: Vec<u8>) -> Result<()>;
    /// Starts writing the object `key` from a stream of bytes of any length, sent on as they
    /// come (memory stays bounded whatever the object's size). The object appears under `key`
    /// only when [`Upload::finish`] succeeds; an upload dropped before that leaves nothing.
    fn upload(&self, key: &str) -> Result<Box<dyn Upload>>;

    /// The bytes `range` of the object, read now.
    fn read_range(&self, key: &str, range: Range<u64>) -> Result<Vec<u8>> {
        self.start_read(key, range).wait()
    }

    /// The whole object (small ones: indexes, checkpoints, snapshots).
    fn read_all(&self, key: &str) -> Result<Vec<u8>> {
        let len = self.len(key)?;
        self.read_range(key, 0..len)
    }

    /// The path under which errors about `key` are reported.
    fn path_of(&self, key: &str) -> PathBuf {
        PathBuf::from(self.name(key))
    }
}

/// An object being written ([`Store::upload`]). Write errors are the cause alone: the caller
/// names the object ([`Store::name`]).
pub trait Upload: std::io::Write + Send {
    /// Completes the object under its key; returns its size in bytes.
    fn finish(self: Box<Self>) -> Result<u64>;
}

/// Opens the store a `--remote` argument names: a URL (`s3://bucket/prefix`, `file:///dir`,
/// `memory://`) or a local directory. A filesystem tree, named by a path or a `file://` URL, is
/// read by [`Local`], as kseg reads files: regular files and links to them, none opened in a
/// way that could block, and what is no object listed as such (the `object_store` crate's own
/// local store leaves FIFOs, sockets and links to nothing out of its listings, unsaid).
pub fn open(location: &str, options: &RemoteOptions) -> Result<Arc<dyn Store>> {
    let Some(dir) = local_dir(location) else {
        return Ok(Arc::new(Remote::open(location, options)?));
    };
    if !dir.is_dir() {
        let what = if dir.exists() {
            "not a directory"
        } else {
            "no such directory"
        };
        return Err(Error::invalid(
            Path::new(location),
            format!(
                "{what} (a remote storage root: a URL such as s3://bucket/prefix or \
                 file:///dir, or a local directory)"
            ),
        ));
    }
    let named = location.contains("://").then_some(location);
    Ok(Arc::new(Local::new(&dir, named, options.read_ahead)))
}

/// Opens the store `location` names to write into it, creating it first when it is a local
/// directory (a path or a `file://` URL).
pub fn create(location: &str, options: &RemoteOptions) -> Result<Arc<dyn Store>> {
    if let Some(dir) = local_dir(location) {
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    }
    open(location, options)
}

/// Opens the store of a command's output, creating it first when it is local. A `file://` URL
/// is its directory: written files are synced before their rename into place, which the
/// `object_store` crate's local store does not do.
pub fn output(location: &Path, options: &RemoteOptions) -> Result<Arc<dyn Store>> {
    let dir = match url_of(location)? {
        None => location.to_path_buf(),
        Some(url) => match local_dir(url) {
            Some(dir) => dir,
            None => return Ok(Arc::new(Remote::open(url, options)?)),
        },
    };
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    // Named by their paths: what a command wrote is a file to open, whatever bytes its path
    // holds.
    Ok(Arc::new(Local::new(&dir, None, options.read_ahead)))
}

/// The URL `location` is (it has a `://`), None for a local path. A path may be any bytes, as
/// a Unix file name is; a URL must be UTF-8, as object stores' keys are.
pub fn url_of(location: &Path) -> Result<Option<&str>> {
    let bytes = location.as_os_str().as_encoded_bytes();
    if !bytes.windows(3).any(|w| w == b"://") {
        return Ok(None);
    }
    match location.to_str() {
        Some(url) => Ok(Some(url)),
        None => Err(Error::invalid(
            location,
            "a URL must be UTF-8 (a local path may hold any bytes)",
        )),
    }
}

/// The directory a local location (a path or a `file://` URL) names.
fn local_dir(location: &str) -> Option<PathBuf> {
    match location.strip_prefix("file://") {
        Some(_) => url::Url::parse(location)
            .ok()
            .and_then(|u| u.to_file_path().ok()),
        None if !location.contains("://") => Some(PathBuf::from(location)),
        None => None,
    }
}
