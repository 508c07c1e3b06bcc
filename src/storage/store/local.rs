//! A store that is a plain local directory: `--remote /path` without a URL scheme.

use std::fs::File;
use std::io::Write;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::{ObjectInfo, PendingRead, ReadAhead, Store, Upload};
use crate::error::{Error, Result};
use crate::storage::files;

/// The size of the parts a local range is read in.
const LOCAL_PART_BYTES: u64 = 1 << 20;

pub struct Local {
    root: PathBuf,
    read_ahead: ReadAhead,
}

impl Local {
    pub fn new(root: &Path, read_ahead: ReadAhead) -> Self {
        Local {
            root: root.to_path_buf(),
            read_ahead,
        }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.root.join(key)
    }
}

impl Store for Local {
    fn name(&self, key: &str) -> String {
        self.path(key).display().to_string()
    }

    fn len(&self, key: &str) -> Result<u64> {
        let p = self.path(key);
        Ok(std::fs::metadata(&p).map_err(|e| Error::io(&p, e))?.len())
    }

    /// Read part by part as the parts are asked for: a local read is quick, one never asked
    /// for costs nothing, and a part of [`LOCAL_PART_BYTES`] is memory malloc hands out again
    /// once the reader is past it (a whole range read at once was memory faulted in afresh
    /// for each).
    fn start_read(&self, key: &str, range: Range<u64>) -> PendingRead {
        let p = self.path(key);
        let (mut file, mut at) = (None, range.start);
        PendingRead::later(self.name(key), move || {
            if at >= range.end {
                return Ok(None);
            }
            let f = match &file {
                Some(f) => f,
                None => file.insert(File::open(&p).map_err(|e| Error::io(&p, e))?),
            };
            let mut part = vec![0u8; (range.end - at).min(LOCAL_PART_BYTES) as usize];
            f.read_exact_at(&mut part, at)
                .map_err(|e| Error::io(&p, e))?;
            at += part.len() as u64;
            Ok(Some(part))
        })
    }

    fn read_ahead(&self) -> ReadAhead {
        self.read_ahead
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectInfo>> {
        let mut out = Vec::new();
        let mut stack = vec![self.path(prefix)];
        while let Some(dir) = stack.pop() {
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(&dir, e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| Error::io(&dir, e))?;
                let meta = entry.metadata().map_err(|e| Error::io(&entry.path(), e))?;
                if meta.is_dir() {
                    stack.push(entry.path());
                } else if meta.is_file() {
                    let rel = entry.path();
                    let rel = rel.strip_prefix(&self.root).unwrap_or(&rel);
                    out.push(ObjectInfo {
                        key: rel.to_string_lossy().into_owned(),
                        size: meta.len(),
                    });
                }
            }
        }
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    fn put(&self, key: &str, bytes: Vec<u8>) -> Result<()> {
        let p = self.path(key);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        std::fs::write(&p, bytes).map_err(|e| Error::io(&p, e))
    }

    fn upload(&self, key: &str) -> Result<Box<dyn Upload>> {
        upload_file(&self.path(key))
    }

    /// The file itself, whatever bytes its path holds ([`Store::name`] is for messages).
    fn path_of(&self, key: &str) -> PathBuf {
        self.path(key)
    }
}

/// Starts writing the file `path` (its directories created), as [`Store::upload`] writes an
/// object: complete under its name or not there at all.
pub fn upload_file(path: &Path) -> Result<Box<dyn Upload>> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".kseg-tmp");
    let tmp = path.with_file_name(name);
    let file = files::create_truncated(&tmp)?;
    Ok(Box::new(LocalUpload {
        file,
        tmp,
        path: path.to_path_buf(),
        done: false,
    }))
}

/// A file written under a temporary name beside its own, renamed into place once synced: a
/// reader (or a kill) never sees a partial file under the final name.
struct LocalUpload {
    file: File,
    tmp: PathBuf,
    path: PathBuf,
    done: bool,
}

impl Write for LocalUpload {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Upload for LocalUpload {
    fn finish(mut self: Box<Self>) -> Result<u64> {
        files::sync_all(&self.file, &self.tmp)?;
        files::rename(&self.tmp, &self.path)?;
        self.done = true;
        // The rename itself survives a crash once the directory is synced.
        files::sync_dir_of(&self.path)?;
        files::file_len(&self.path)
    }
}

impl Drop for LocalUpload {
    fn drop(&mut self) {
        if !self.done {
            // Unfinished: its bytes are no file of the output. The error that stopped it is
            // the one reported.
            let _ = files::remove_file(&self.tmp);
        }
    }
}
