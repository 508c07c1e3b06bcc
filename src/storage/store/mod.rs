//! Where the engine's bytes come from when they are not a local partition directory: a store of
//! objects (an S3 bucket, an S3-compatible server, a filesystem tree), read by key with ranged
//! reads. Local partition directories keep their own path (`std::fs` through `files`), so this
//! costs them nothing; a remote segment reaches the engine as a [`RemoteObject`] that
//! `LogReader` reads like a file.
//!
//! Two implementations: [`Local`] (a plain directory, no runtime) and [`Remote`] (the
//! `object_store` crate: `s3://`, `file://`, `memory://`), which owns a small tokio runtime so
//! the rest of kseg stays synchronous.

mod local;
mod object;
mod remote;

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};

pub use local::Local;
pub use object::RemoteObject;
pub use remote::{Remote, RemoteOptions};

/// One object of a store: its key (relative to the store's root, `/`-separated) and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    pub key: String,
    pub size: u64,
}

/// What the engine reads from a store. Keys are relative to the root the store was opened at.
pub trait Store: Send + Sync {
    /// How an object is named in messages: the URL (or path) a user can look it up by.
    fn name(&self, key: &str) -> String;
    /// The object's size in bytes; a missing object is an error naming it.
    fn len(&self, key: &str) -> Result<u64>;
    /// The bytes `range` of the object, each range fetched by its own request, several in
    /// flight; a range past the end is an error.
    fn read_ranges(&self, key: &str, ranges: &[Range<u64>]) -> Result<Vec<Vec<u8>>>;
    /// Every object under `prefix` (all depths), sorted by key.
    fn list(&self, prefix: &str) -> Result<Vec<ObjectInfo>>;
    /// Stores `bytes` as `key`, whole (what a tiered-storage plugin's copy does).
    fn put(&self, key: &str, bytes: Vec<u8>) -> Result<()>;
    /// Starts writing the object `key` from a stream of bytes of any length, sent on as they
    /// come (memory stays bounded whatever the object's size). The object appears under `key`
    /// only when [`Upload::finish`] succeeds; an upload dropped before that leaves nothing.
    fn upload(&self, key: &str) -> Result<Box<dyn Upload>>;

    /// The whole object (small ones: indexes, checkpoints, snapshots).
    fn read_all(&self, key: &str) -> Result<Vec<u8>> {
        let len = self.len(key)?;
        if len == 0 {
            // An empty range is no valid request.
            return Ok(Vec::new());
        }
        let whole = 0..len;
        Ok(self
            .read_ranges(key, std::slice::from_ref(&whole))?
            .pop()
            .unwrap_or_default())
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
/// `memory://`) or a local directory.
pub fn open(location: &str, options: &RemoteOptions) -> Result<Arc<dyn Store>> {
    if location.contains("://") {
        Ok(Arc::new(Remote::open(location, options)?))
    } else {
        let p = Path::new(location);
        if !p.is_dir() {
            return Err(Error::invalid(
                p,
                "not a directory (a remote storage root: a URL such as s3://bucket/prefix or \
                 file:///dir, or a local directory)",
            ));
        }
        Ok(Arc::new(Local::new(p)))
    }
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
pub fn output(location: &str, options: &RemoteOptions) -> Result<Arc<dyn Store>> {
    match local_dir(location) {
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            Ok(Arc::new(Local::new(&dir)))
        }
        None => Ok(Arc::new(Remote::open(location, options)?)),
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
