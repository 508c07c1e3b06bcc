//! A store that is a filesystem tree: `--remote /path`, or `file:///path`.

use std::fs::File;
use std::io::Write;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::{Listing, NotObject, ObjectInfo, PendingRead, ReadAhead, Store, Upload};
use crate::error::{Error, Result};
use crate::storage::files;

/// The size of the parts a local range is read in.
const LOCAL_PART_BYTES: u64 = 1 << 20;

pub struct Local {
    root: PathBuf,
    /// The `file://` URL the tree was named by, which messages name its objects under.
    url: Option<String>,
    read_ahead: ReadAhead,
}

impl Local {
    pub fn new(root: &Path, url: Option<&str>, read_ahead: ReadAhead) -> Self {
        Local {
            root: root.to_path_buf(),
            // `file:///` is the filesystem's root: its objects `file:///key`.
            url: url.map(|u| {
                let u = u.trim_end_matches('/');
                if u.ends_with(':') {
                    format!("{u}//")
                } else {
                    u.to_string()
                }
            }),
            read_ahead,
        }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.root.join(key)
    }

    /// `e`, about a file of the tree, naming it as the store names its objects.
    fn named(&self, e: Error) -> Error {
        match &self.url {
            Some(url) => e.rebased(&self.root, Path::new(url)),
            None => e,
        }
    }
}

/// The file `p` opened for reading if it is an object: a regular file, or a link to one,
/// never opened in a way that blocks. Anything else is an error saying what it is; errors
/// name it `named` (the object's name).
fn open_object(p: &Path, named: &Path) -> Result<File> {
    match files::open_if_regular(p).map_err(|e| e.rebased(p, named))? {
        Ok(f) => Ok(f),
        Err(what) => Err(Error::invalid(named, super::not_an_object(what))),
    }
}

impl Store for Local {
    fn name(&self, key: &str) -> String {
        match &self.url {
            Some(url) => format!("{url}/{key}"),
            None => self.path(key).display().to_string(),
        }
    }

    /// Of a regular file only: an entry that is no object (a FIFO) is an error saying what it
    /// is, as its read would be.
    fn len(&self, key: &str) -> Result<u64> {
        let named = self.path_of(key);
        let f = open_object(&self.path(key), &named)?;
        Ok(f.metadata().map_err(|e| Error::io(&named, e))?.len())
    }

    /// Read part by part as the parts are asked for: a local read is quick, one never asked
    /// for costs nothing, and a part of [`LOCAL_PART_BYTES`] is memory malloc hands out again
    /// once the reader is past it (a whole range read at once was memory faulted in afresh
    /// for each).
    fn start_read(&self, key: &str, range: Range<u64>) -> PendingRead {
        let (p, named) = (self.path(key), self.path_of(key));
        let (mut file, mut at) = (None, range.start);
        PendingRead::later(self.name(key), move || {
            if at >= range.end {
                return Ok(None);
            }
            let f = match &file {
                Some(f) => f,
                None => file.insert(open_object(&p, &named)?),
            };
            let mut part = vec![0u8; (range.end - at).min(LOCAL_PART_BYTES) as usize];
            f.read_exact_at(&mut part, at)
                .map_err(|e| Error::io(&named, e))?;
            at += part.len() as u64;
            Ok(Some(part))
        })
    }

    fn read_ahead(&self) -> ReadAhead {
        self.read_ahead
    }

    /// A link to a file is followed, as kseg reads files; a link to a directory is not (a loop,
    /// or a tree listed twice under two names): like what is neither a directory nor a
    /// regular file, it is listed as no object.
    fn list(&self, prefix: &str) -> Result<Listing> {
        let mut listing = Listing::default();
        let mut stack = vec![self.path(prefix)];
        while let Some(dir) = stack.pop() {
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(&dir, e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| Error::io(&dir, e))?;
                let path = entry.path();
                let key = path.strip_prefix(&self.root).unwrap_or(&path);
                let key = key.to_string_lossy().into_owned();
                let own = entry.file_type().map_err(|e| Error::io(&path, e))?;
                let meta = match std::fs::metadata(&path) {
                    Ok(m) => m,
                    // Gone since the directory was read (a deletion under way).
                    Err(e) if !own.is_symlink() && e.kind() == std::io::ErrorKind::NotFound => {
                        continue
                    }
                    // A link to nothing, to itself, or through a file.
                    Err(e)
                        if own.is_symlink()
                            && (e.kind() == std::io::ErrorKind::NotFound
                                || e.raw_os_error() == Some(libc::ELOOP)
                                || e.raw_os_error() == Some(libc::ENOTDIR)) =>
                    {
                        let what = super::LINK_TO_NOTHING;
                        listing.not_objects.push(NotObject { key, what });
                        continue;
                    }
                    Err(e) => return Err(Error::io(&path, e)),
                };
                match files::not_regular(meta.file_type()) {
                    Some(_) if meta.is_dir() && own.is_symlink() => {
                        let what = "a symbolic link to a directory";
                        listing.not_objects.push(NotObject { key, what });
                    }
                    Some(_) if meta.is_dir() => stack.push(path),
                    Some(what) => listing.not_objects.push(NotObject { key, what }),
                    None => listing.objects.push(ObjectInfo {
                        key,
                        size: meta.len(),
                    }),
                }
            }
        }
        listing.objects.sort_by(|a, b| a.key.cmp(&b.key));
        listing.not_objects.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(listing)
    }

    /// Whole or not at all, as an upload: a file written beside and renamed into place
    /// (which also replaces, never opens, whatever stood there).
    fn put(&self, key: &str, bytes: Vec<u8>) -> Result<()> {
        let mut upload = self.upload(key)?;
        let written = upload.write_all(&bytes);
        written.map_err(|e| Error::io(&self.path_of(key), e))?;
        upload.finish().map(|_| ()).map_err(|e| self.named(e))
    }

    fn upload(&self, key: &str) -> Result<Box<dyn Upload>> {
        upload_file(&self.path(key)).map_err(|e| self.named(e))
    }

    /// The file itself, whatever bytes its path holds ([`Store::name`] is for messages); the
    /// object's URL in a tree named by one (a URL is UTF-8).
    fn path_of(&self, key: &str) -> PathBuf {
        match &self.url {
            Some(_) => PathBuf::from(self.name(key)),
            None => self.path(key),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree with a file, a link to it, a FIFO, a link to nothing, a link to itself and a link
    /// back up to its root: the file and the link to it are the objects, the others are listed
    /// as no objects (the link up not followed), and the FIFO's size and bytes are refused (not
    /// waited for).
    #[test]
    fn what_is_no_object_is_listed_as_such_and_never_read() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("p");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("a.log"), b"bytes").unwrap();
        let fifo =
            std::ffi::CString::new(dir.join("f.index").into_os_string().into_encoded_bytes());
        // SAFETY: mkfifo with a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.unwrap().as_ptr(), 0o644) }, 0);
        std::os::unix::fs::symlink(tmp.path().join("nothing"), dir.join("gone")).unwrap();
        std::os::unix::fs::symlink(tmp.path(), dir.join("up")).unwrap();
        std::os::unix::fs::symlink("loop", dir.join("loop")).unwrap();
        std::os::unix::fs::symlink("a.log", dir.join("b.log")).unwrap();
        let store = Local::new(tmp.path(), Some("file:///t/"), ReadAhead::default());
        let listing = store.list("").unwrap();
        let keys: Vec<&str> = listing.objects.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, ["p/a.log", "p/b.log"]);
        let not: Vec<(&str, &str)> = listing
            .not_objects
            .iter()
            .map(|n| (n.key.as_str(), n.what))
            .collect();
        assert_eq!(
            not,
            [
                ("p/f.index", "a FIFO"),
                ("p/gone", "a symbolic link to nothing"),
                ("p/loop", "a symbolic link to nothing"),
                ("p/up", "a symbolic link to a directory")
            ]
        );
        assert_eq!(store.name("p/a.log"), "file:///t/p/a.log");
        let root = Local::new(tmp.path(), Some("file:///"), ReadAhead::default());
        assert_eq!(root.name("k"), "file:///k");
        for e in [
            store.len("p/f.index").unwrap_err(),
            store.read_range("p/f.index", 0..1).unwrap_err(),
        ] {
            let named = "file:///t/p/f.index: a FIFO, not an object";
            assert!(e.to_string().contains(named), "{e}");
        }
        assert_eq!(store.read_all("p/b.log").unwrap(), b"bytes");
    }
}
