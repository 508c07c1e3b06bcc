//! Opening the files the commands read: regular files only (or links to them), named for what
//! they are otherwise ([`not_regular`]), read whole under a cap ([`read_capped`], [`read_state`]),
//! segment data through its placeholder ([`open_data`]).

use super::*;

/// What a file of type `t` is, in words, when it is not a regular file.
pub fn not_regular(t: std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    Some(if t.is_file() {
        return None;
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_dir() {
        "a directory"
    } else {
        "something else"
    })
}

/// The error of a read of `p`, which is `what` and not a regular file. Inside a directory a
/// file named like a Kafka file is recorded ([`note_not_regular`]) and the error is "not
/// found", so the read takes it as absent and the command goes on with what is there; a path
/// named on the command line never gets here (`ops::input` refuses it, exit 2).
pub(super) fn not_regular_error(p: &Path, what: &str) -> Error {
    note_not_regular(p, what);
    Error::io(
        p,
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{what}, not a regular file: only regular files (or links to them) are read as Kafka files"),
        ),
    )
}

/// Entries named like Kafka files that are not regular files (a FIFO, a socket, a device, a
/// directory, a link to one), as met inside directories, with what each is, in the order met.
static NOT_REGULAR: std::sync::Mutex<Vec<(PathBuf, String)>> = std::sync::Mutex::new(Vec::new());

/// Whether the broker reads an entry of this name as a Kafka file (markers such as `.lock`
/// are only created or tested for existence).
fn read_as_kafka_file(name: &std::ffi::OsStr) -> bool {
    use crate::format::names::FileKind;
    !matches!(
        crate::format::names::classify(&name.to_string_lossy()),
        FileKind::Unknown | FileKind::Lock | FileKind::CleanShutdown
    )
}

/// Records that `p`, named like a Kafka file, is `what` and not a regular file (once per path).
fn note_not_regular(p: &Path, what: &str) {
    if !p.file_name().is_some_and(read_as_kafka_file) {
        return;
    }
    let mut seen = NOT_REGULAR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !seen.iter().any(|(q, _)| q == p) {
        seen.push((p.to_path_buf(), what.to_owned()));
    }
}

/// The entries of the directory `dir` recorded by [`note_not_regular`], left recorded.
pub fn not_regular_in(dir: &Path) -> Vec<(PathBuf, String)> {
    NOT_REGULAR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .filter(|(p, _)| p.parent() == Some(dir))
        .cloned()
        .collect()
}

/// The entries recorded by [`note_not_regular`] since the last take (each reported once).
pub fn take_not_regular() -> Vec<(PathBuf, String)> {
    std::mem::take(
        &mut NOT_REGULAR
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
}

/// Opens the file `p` for reading (links followed; a staged file not yet made is its original,
/// [`resolve`]) if it is a regular file, else an error naming what it is: the one way the
/// engine opens a file to read it. A FIFO would block the open and the reads forever, a device
/// never ends: the type is checked before the open, the open does not block (`O_NONBLOCK`),
/// and the type is checked again on the descriptor (the name may have been replaced between).
pub fn open_regular(p: &Path) -> Result<std::fs::File> {
    open_regular_at(p, &resolve(p))
}

/// Opens the `.txnindex` `p` for reading ([`open_regular`]), with the name its reads' errors go
/// by. Beside a remote segment's shown `.log` ([`shown_as`]) it is that segment's own, read
/// through its layout and named by its object; one it lacks is not found, as a missing local
/// one is.
pub fn open_txn_index(p: &Path) -> Result<(std::fs::File, PathBuf)> {
    let Some(remote) = crate::storage::tiered::shown_txn_index(p) else {
        return Ok((open_regular(p)?, p.to_path_buf()));
    };
    remote.txn_index()?.ok_or_else(|| {
        let m = "the remote segment has no transaction index";
        Error::io(p, std::io::Error::new(std::io::ErrorKind::NotFound, m))
    })
}

/// [`open_regular`] of the file at `at`, errors naming `p`.
pub(super) fn open_regular_at(p: &Path, at: &Path) -> Result<std::fs::File> {
    open_if_regular_at(p, at)?.map_err(|what| not_regular_error(p, what))
}

/// [`open_regular`], what the file is when it is not a regular file given back as such
/// (`Ok(Err("a FIFO"))`), for a caller that reports it in words of its own; nothing is
/// recorded.
pub fn open_if_regular(p: &Path) -> Result<std::result::Result<std::fs::File, &'static str>> {
    open_if_regular_at(p, &resolve(p))
}

fn open_if_regular_at(
    p: &Path,
    at: &Path,
) -> Result<std::result::Result<std::fs::File, &'static str>> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let before = stat(at).map_err(|e| Error::io(p, e))?;
    if let Some(what) = not_regular(before.file_type()) {
        return Ok(Err(what));
    }
    injected(at, FsOp::Open).map_err(|e| Error::io(p, e))?;
    let read_from = match injected(at, FsOp::Read) {
        Ok(()) => at,
        Err(_) => Path::new(FAILING_READS),
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(read_from)
        .map_err(|e| Error::io(p, e))?;
    let after = f.metadata().map_err(|e| Error::io(p, e))?;
    if let Some(what) = not_regular(after.file_type()) {
        return Ok(Err(what));
    }
    if read_from == at {
        note_read(at, &after);
    }
    // Regular-file reads ignore the flag; cleared so the descriptor is an ordinary one.
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(Ok(f))
}

/// The whole regular file `p` ([`open_regular`]; a held one's from its record), refused
/// unread when longer than `cap` bytes, the most a `what` can hold: a state file linked to
/// `/dev/zero` or grown without bound is an error, not an allocation. A file whose length
/// changes while read is recorded as changed ([`super::super::live`]) and is an error.
pub fn read_capped(p: &Path, cap: u64, what: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    if let Some(h) = held().get(p) {
        let mut out = h.data.clone();
        out.resize(h.len as usize, 0);
        return Ok(out);
    }
    let f = open_regular(p)?;
    let len = f.metadata().map_err(|e| Error::io(p, e))?.len();
    if len > cap {
        return Err(Error::invalid(
            p,
            format!("{len} bytes, more than a {what} can hold ({cap} bytes at most): not read"),
        ));
    }
    let mut out = Vec::with_capacity(len as usize);
    (&f).take(cap.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| Error::io(p, e))?;
    if out.len() as u64 != len {
        super::super::live::note_changed(p);
        return Err(Error::invalid(
            p,
            format!(
                "{}: {len} bytes when opened, {} read",
                super::super::live::CHANGED_MESSAGE,
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// The small state files read whole, each with the most its format lets it hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateFile {
    /// `leader-epoch-checkpoint` and the log dir's offset checkpoints: a line per epoch or
    /// partition (a partition's at most ~290 bytes: a 249-character topic and two numbers), so
    /// 64 MiB is over 200 k partitions.
    Checkpoint,
    /// `partition.metadata`, `meta.properties`, `quorum-state`: a few short lines.
    Properties,
    /// A producer `.snapshot`: as many entries as its count says ([`snapshot::max_len`]).
    ///
    /// [`snapshot::max_len`]: crate::format::snapshot::max_len
    ProducerSnapshot,
}

/// The most bytes a checkpoint file is read in ([`StateFile::Checkpoint`]).
pub const CHECKPOINT_MAX_BYTES: u64 = 64 << 20;

/// The whole state file `p` of kind `kind`, read with its format's cap ([`read_capped`]).
pub fn read_state(p: &Path, kind: StateFile) -> Result<Vec<u8>> {
    use crate::format::snapshot;
    let (cap, what) = match kind {
        StateFile::Checkpoint => (CHECKPOINT_MAX_BYTES, "checkpoint file"),
        StateFile::Properties => (1 << 20, "properties file"),
        StateFile::ProducerSnapshot => {
            let mut head = [0u8; snapshot::PRODUCER_SNAPSHOT_HEADER_BYTES];
            let n = open_bytes(p)?
                .read_at(&mut head, 0)
                .map_err(|e| Error::io(p, e))?;
            (snapshot::max_len(&head[..n]), "producer snapshot")
        }
    };
    read_capped(p, cap, what)
}

/// Opens the bytes of the data file `p` for reading, with their length: the file itself, or,
/// for a placeholder, the original it stands for, cut to the placeholder's length.
pub fn open_data(p: &Path) -> Result<(std::fs::File, u64)> {
    let origin = placeholder_origin(p);
    let len = file_len(p)?;
    let Some(origin) = origin else {
        return Ok((open_regular(p)?, len));
    };
    let f = open_regular_at(&origin, &origin)?;
    let origin_len = f.metadata().map_err(|e| Error::io(&origin, e))?.len();
    if len > origin_len {
        // Planning never appends to an existing segment; a longer placeholder would read
        // bytes nobody wrote.
        return Err(Error::invalid(
            p,
            format!(
                "a planned file grew past its original {} ({len} > {origin_len} bytes)",
                origin.display()
            ),
        ));
    }
    Ok((f, len))
}

/// Whether the directory entry `e` of a partition directory is a file the commands read: a
/// regular file or a symbolic link to one. Every command reads a link as the file it names, as
/// the broker's `File.isFile` does (repairs refuse to change one: `ops::repair::apply`).
///
/// A directory, a link to one, a link leading nowhere or any other entry is not a file; one
/// named like a Kafka file is recorded with what it is ([`note_not_regular`]) and reported as
/// a finding (`ops::finding::not_regular_findings`), never read.
pub fn is_regular_file(e: &std::fs::DirEntry) -> Result<bool> {
    let p = e.path();
    let t = e.file_type().map_err(|err| Error::io(&p, err))?;
    if t.is_file() {
        return Ok(true);
    }
    let what = if t.is_symlink() {
        let to = std::fs::read_link(&p).map_err(|err| Error::io(&p, err))?;
        match std::fs::metadata(&p) {
            Ok(m) if m.is_file() => return Ok(true),
            Ok(m) if m.is_dir() => format!("a symbolic link to a directory ({})", to.display()),
            Ok(_) => format!(
                "a symbolic link to something not a regular file ({})",
                to.display()
            ),
            Err(err) => format!(
                "a symbolic link that leads to no file ({}: {err})",
                to.display()
            ),
        }
    } else if t.is_dir() {
        "a directory".to_string()
    } else {
        not_regular(t).unwrap_or("something else").to_string()
    };
    note_not_regular(&p, &what);
    Ok(false)
}

/// Whether the entry `e`, not a regular file, is named like a Kafka file: recorded, never
/// listed as a file or a sub-directory.
pub(super) fn kafka_named(e: &std::fs::DirEntry) -> bool {
    read_as_kafka_file(&e.file_name())
}
