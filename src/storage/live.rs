//! Files that change while kseg reads them: a broker writing the partition (operators run
//! `dump` on live brokers). A mapped index the broker cuts short faults (SIGBUS) on its lost
//! pages, which would kill the process without a word; a file read whole can end early or go
//! on. Both are recorded here as changed during the read ([`changed`]); the command shows what
//! it read and then reports them (exit status 1).
//!
//! A fault in a guarded mapping ([`MapGuard`]) is answered by mapping zeros over the lost
//! pages (from the faulting page to the mapping's end), so the read goes on over zeros, which
//! every index reader already takes as the end of the entries; the mapping is marked changed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Mappings guarded at once: the indexes a command has mapped together (a few); past it, a
/// mapping is unguarded (as before this module).
const SLOTS: usize = 1024;

struct Slot {
    busy: AtomicBool,
    start: AtomicUsize,
    len: AtomicUsize,
    faulted: AtomicBool,
}

// Read by the signal handler: atomics only, no allocation, no lock.
static MAPPED: [Slot; SLOTS] = [const {
    Slot {
        busy: AtomicBool::new(false),
        start: AtomicUsize::new(0),
        len: AtomicUsize::new(0),
        faulted: AtomicBool::new(false),
    }
}; SLOTS];

static PAGE: AtomicUsize = AtomicUsize::new(4096);
static INSTALL: std::sync::Once = std::sync::Once::new();

/// The files found changed during a read, in the order found.
static CHANGED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Records that `p` changed while it was read (once per file).
pub fn note_changed(p: &Path) {
    let mut changed = CHANGED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !changed.iter().any(|c| c == p) {
        changed.push(p.to_path_buf());
    }
}

/// The files found changed during a read so far.
pub fn changed() -> Vec<PathBuf> {
    CHANGED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// What a command says of a file that changed while it read it.
pub const CHANGED_MESSAGE: &str = "changed during the read (is a broker writing it?)";

extern "C" fn on_sigbus(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for s in &MAPPED {
        let start = s.start.load(Ordering::Acquire);
        let len = s.len.load(Ordering::Acquire);
        if start == 0 || addr < start || addr >= start + len {
            continue;
        }
        let from = addr - (addr - start) % page;
        let end = start + len.div_ceil(page) * page;
        // SAFETY: replaces pages of our own read-only mapping (nothing else lives there) with
        // anonymous zeros; mmap is a plain system call, safe in a handler on Linux.
        let r = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                end - from,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if r != libc::MAP_FAILED {
            s.faulted.store(true, Ordering::Release);
            return;
        }
    }
    // Not a guarded mapping: the default action (the faulting access runs again and kills).
    // SAFETY: resetting a disposition is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGBUS, libc::SIG_DFL);
    }
}

fn install() {
    INSTALL.call_once(|| {
        // SAFETY: sysconf and sigaction with a handler that only touches atomics and mmap.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
        }
    });
}

/// Test hook: with this variable set to a file's name, the file of that name is cut to zero
/// bytes as soon as it is mapped and guarded, before anything reads the mapping: the broker
/// trimming an index under a read, made deterministic (tests/hostile_files.rs).
pub const CUT_AFTER_MAP_VAR: &str = "KSEG_TEST_CUT_AFTER_MAP";

/// The [`CUT_AFTER_MAP_VAR`] hook, for the mapping of `path` just guarded.
pub(crate) fn cut_after_map(path: &Path) {
    if std::env::var_os(CUT_AFTER_MAP_VAR).is_some_and(|n| path.file_name() == Some(&n)) {
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(0));
    }
}

/// A mapping of the file `path` guarded against the file shrinking under it: dropped before
/// the mapping is unmapped; records the file as changed if a fault was answered.
#[derive(Debug)]
pub struct MapGuard {
    slot: Option<usize>,
    path: PathBuf,
}

impl MapGuard {
    /// Guards the `len` bytes mapped at `start` (page-aligned) from the file `path`.
    pub fn new(start: *const u8, len: usize, path: &Path) -> Self {
        install();
        let slot = MAPPED.iter().position(|s| {
            s.busy
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        });
        if let Some(i) = slot {
            let s = &MAPPED[i];
            s.faulted.store(false, Ordering::Relaxed);
            s.len.store(len, Ordering::Release);
            s.start.store(start as usize, Ordering::Release);
        }
        MapGuard {
            slot,
            path: path.to_path_buf(),
        }
    }

    /// Whether the file shrank under the mapping (the bytes past its new end read as zeros).
    pub fn faulted(&self) -> bool {
        self.slot
            .is_some_and(|i| MAPPED[i].faulted.load(Ordering::Acquire))
    }
}

impl Drop for MapGuard {
    fn drop(&mut self) {
        if self.faulted() {
            note_changed(&self.path);
        }
        if let Some(i) = self.slot {
            let s = &MAPPED[i];
            s.start.store(0, Ordering::Release);
            s.len.store(0, Ordering::Release);
            s.busy.store(false, Ordering::Release);
        }
    }
}
