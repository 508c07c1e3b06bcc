//! The owner, group and mode of the files a repair writes: those of the files they replace, or
//! of the directory.

use super::*;

/// The owner, group and permission bits a file the executor writes must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Owner {
    uid: u32,
    gid: u32,
    mode: u32,
}

impl Owner {
    pub(super) fn of(m: &std::fs::Metadata) -> Owner {
        use std::os::unix::fs::MetadataExt;
        Owner {
            uid: m.uid(),
            gid: m.gid(),
            mode: m.mode() & 0o7777,
        }
    }
}

/// What each written file must be owned by: a rewritten file keeps its own owner, group and
/// mode (a broker running as `kafka` opens its indexes read-write, so a repair run with sudo
/// must not leave them root's); a new file takes those of its directory's Kafka files, or the
/// directory's owner with its permission bits minus execute. One answer per directory,
/// looked up once.
#[derive(Default)]
pub(super) struct Owners {
    by_dir: std::collections::HashMap<PathBuf, Owner>,
}

impl Owners {
    pub(super) fn for_file(&mut self, file: &Path) -> Result<Owner> {
        match std::fs::symlink_metadata(file) {
            Ok(m) => return Ok(Owner::of(&m)),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(file, e)),
            Err(_) => {}
        }
        let dir = parent(file);
        if let Some(o) = self.by_dir.get(dir) {
            return Ok(*o);
        }
        let mut found = None;
        for e in crate::storage::files::read_dir(dir)? {
            let e = e.map_err(|e| Error::io(dir, e))?;
            let kafka = crate::format::names::classify(&e.file_name().to_string_lossy())
                != crate::format::names::FileKind::Unknown;
            if kafka
                && e.file_type()
                    .map_err(|err| Error::io(&e.path(), err))?
                    .is_file()
            {
                found = Some(Owner::of(
                    &e.metadata().map_err(|err| Error::io(&e.path(), err))?,
                ));
                break;
            }
        }
        let owner = match found {
            Some(o) => o,
            None => {
                let m = std::fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
                let o = Owner::of(&m);
                Owner {
                    mode: o.mode & 0o666,
                    ..o
                }
            }
        };
        self.by_dir.insert(dir.to_path_buf(), owner);
        Ok(owner)
    }

    /// Refuses, before anything changes, a plan whose written files this process could not
    /// give their owner: only root can give a file to another user, or to a group it is not in.
    pub(super) fn check(&mut self, changes: &[Change]) -> Result<()> {
        // SAFETY: plain system calls without arguments.
        let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        if euid == 0 {
            return Ok(());
        }
        let groups = own_groups();
        for c in changes {
            if let Change::Write { file, .. } = c {
                let o = self.for_file(file)?;
                if o.uid != euid || (o.gid != egid && !groups.contains(&o.gid)) {
                    return Err(Error::invalid(
                        file,
                        format!(
                            "the file must stay owned by {} (group {}), which this user (uid \
                             {euid}) cannot give it; run as that user or as root; nothing was \
                             changed",
                            user_name(o.uid),
                            o.gid
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// This process's supplementary groups.
pub(super) fn own_groups() -> Vec<u32> {
    // SAFETY: a size query, then a buffer of that size.
    let n = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
    let mut g = vec![0; n.max(0) as usize];
    let n = unsafe { libc::getgroups(n, g.as_mut_ptr()) };
    g.truncate(n.max(0) as usize);
    g
}

/// `uid`'s user name from the password database, else the number.
pub(super) fn user_name(uid: u32) -> String {
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut out = std::ptr::null_mut();
    // SAFETY: getpwuid_r writes into `pwd` and `buf`, both ours and of the sizes given.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc == 0 && !out.is_null() {
        // SAFETY: on success `pw_name` points at a NUL-terminated name inside `buf`.
        let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) };
        return format!("{} (uid {uid})", name.to_string_lossy());
    }
    format!("uid {uid}")
}

/// Gives the open file `f` (at `path`) the owner, group and mode `o`.
pub(super) fn set_owner(f: &File, path: &Path, o: Owner) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let cur = Owner::of(&f.metadata().map_err(|e| Error::io(path, e))?);
    if (cur.uid, cur.gid) != (o.uid, o.gid) {
        std::os::unix::fs::fchown(f, Some(o.uid), Some(o.gid)).map_err(|e| Error::io(path, e))?;
    }
    // After the chown, which clears set-id bits.
    f.set_permissions(std::fs::Permissions::from_mode(o.mode))
        .map_err(|e| Error::io(path, e))
}
