//! The partition lock: the broker's `.lock` file held with `fcntl` while a repair runs, and who
//! holds it when a repair is refused.

use super::*;

/// A whole-file write lock request on `file` for `fcntl`.
pub(super) fn write_lock_request() -> libc::flock {
    // SAFETY: a zeroed flock is a valid value: whole file, from the start.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock
}

/// The process holding a POSIX (fcntl) lock on `log_dir/.lock`, as a running broker does.
/// `flock` locks are not seen by the broker and are not reported.
pub fn lock_holder(log_dir: &Path) -> Result<Option<i32>> {
    let path = log_dir.join(LOCK_FILE_NAME);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let mut lock = write_lock_request();
    // SAFETY: the descriptor is open for the duration of the call; `lock` is a valid flock.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut lock) };
    if rc != 0 {
        return Err(Error::io(&path, std::io::Error::last_os_error()));
    }
    Ok((lock.l_type != libc::F_UNLCK as libc::c_short).then_some(lock.l_pid))
}

/// What a process holding a lock is, for the refusal: another kseg, a broker, or (an OFD
/// lock, which reports no pid) some process.
pub(super) fn holder_name(pid: i32) -> String {
    if pid <= 0 {
        return "a process (OFD lock)".to_string();
    }
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if comm.trim() == "kseg" {
        format!("another kseg, pid {pid}")
    } else {
        format!("a broker, pid {pid}")
    }
}

/// The pid holding a `flock` on the inode of `f`, from `/proc/locks`.
pub(super) fn flock_holder(f: &File) -> Option<i32> {
    use std::os::unix::fs::MetadataExt;
    let m = f.metadata().ok()?;
    let (major, minor) = (libc::major(m.dev()), libc::minor(m.dev()));
    let id = format!("{major:02x}:{minor:02x}:{}", m.ino());
    std::fs::read_to_string("/proc/locks")
        .ok()?
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.len() > 5 && w[1] == "FLOCK" && w[5] == id)
        .and_then(|w| w[4].parse().ok())
}

/// The locks this process holds, by what is locked: a POSIX lock is the process's, and closing
/// any descriptor of its file drops it, so a lock held is never taken (nor probed) again.
pub(super) static HELD: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// A partition's lock for an `--apply`, held from before its plan is read to after the last
/// rename and directory fsync (until dropped).
#[derive(Debug)]
pub struct PartitionLock {
    key: PathBuf,
    _file: File,
}

impl Drop for PartitionLock {
    fn drop(&mut self) {
        if let Ok(mut held) = HELD.lock() {
            held.retain(|k| *k != self.key);
            if held.is_empty() {
                crate::storage::files::stop_remembering_reads();
            }
        }
    }
}

/// Takes the lock an `--apply` on the partition directory `dir` holds: its log dir's `.lock`
/// as the broker takes it (a POSIX write lock, `FileChannel.tryLock`), so a broker starting
/// meanwhile fails as against another broker; where there is no `.lock` (a copy, or no log
/// dir), a `flock` on the partition directory itself, which the broker ignores and which
/// leaves no file behind. Taken again in this process, it is the lock held already. Another
/// holder: refused naming it, or waited for (`wait`).
pub fn lock_partition(dir: &Path, wait: bool) -> Result<Option<PartitionLock>> {
    let dir_real = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, e))?;
    let lock_path = parent(&dir_real).join(LOCK_FILE_NAME);
    // The registry first: opening and closing the held `.lock` again would drop its lock.
    let mut held = HELD
        .lock()
        .map_err(|_| Error::invalid(dir, "lock registry poisoned"))?;
    if held.contains(&lock_path) || held.contains(&dir_real) {
        return Ok(None);
    }
    let file = match OpenOptions::new().read(true).write(true).open(&lock_path) {
        Ok(f) => Some(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(&lock_path, e)),
    };
    let key = if file.is_some() {
        lock_path.clone()
    } else {
        dir_real.clone()
    };
    // A holder gone between the refused attempt and the look for it (a short apply ending
    // just then) is no holder: the lock is tried again, a few times, before "another process".
    // Tries are spaced (10, 20, 40, 80 ms): a lock can outlive its holder's release for a
    // moment, as a `flock` does while a child forked by another thread of the holder has not
    // yet exec'd (it shares the open file until then).
    const TRIES: u32 = 5;
    let pause = |try_: u32| {
        if try_ + 1 < TRIES {
            std::thread::sleep(std::time::Duration::from_millis(10 << try_));
        }
    };
    let (file, refused) = match file {
        Some(f) => {
            let lock = write_lock_request();
            let cmd = if wait { libc::F_SETLKW } else { libc::F_SETLK };
            let mut refused = None;
            for try_ in 0..TRIES {
                // SAFETY: the descriptor is open; `lock` is a valid flock.
                if unsafe { libc::fcntl(f.as_raw_fd(), cmd, &lock) } == 0 {
                    refused = None;
                    break;
                }
                // The last holder seen is named: one met on any try is the one refused.
                if let Some(pid) = lock_holder(parent(&dir_real))? {
                    refused = Some(holder_name(pid));
                }
                refused.get_or_insert_with(|| "another process".to_string());
                pause(try_);
            }
            (f, refused)
        }
        None => {
            let d = File::open(&dir_real).map_err(|e| Error::io(dir, e))?;
            let op = libc::LOCK_EX | if wait { 0 } else { libc::LOCK_NB };
            let mut refused = None;
            for try_ in 0..TRIES {
                // SAFETY: flock on a descriptor we own.
                if unsafe { libc::flock(d.as_raw_fd(), op) } == 0 {
                    refused = None;
                    break;
                }
                // The last holder seen is named: one met on any try is the one refused.
                if let Some(pid) = flock_holder(&d) {
                    refused = Some(holder_name(pid));
                }
                refused.get_or_insert_with(|| "another process".to_string());
                pause(try_);
            }
            (d, refused)
        }
    };
    if let Some(who) = refused {
        return Err(Error::invalid(
            &key,
            format!(
                "locked by {who}; stop it or rerun with --wait; kseg works on a partition \
                 only while nothing else does; nothing was changed"
            ),
        ));
    }
    // What the plan made under this lock reads is what the executor checks each file against;
    // the first lock starts the record, and the last one released ends it (another thread's
    // plan under its own lock keeps what it read).
    if held.is_empty() {
        crate::storage::files::remember_reads();
    } else {
        crate::storage::files::forget_reads_in(&dir_real);
    }
    held.push(key.clone());
    Ok(Some(PartitionLock { key, _file: file }))
}
