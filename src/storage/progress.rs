//! Progress of long work, in bytes: every segment and index byte the engine reads from a
//! file (and every segment byte it appends) is reported to the [`Progress`] sink the caller
//! installed with [`watching`], wherever in the engine the reading happens. The library only
//! counts; the command line draws (`cli::progress`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// Where the engine reports the bytes it moves.
pub trait Progress: Send + Sync {
    /// `bytes` more were read from a segment or index file.
    fn read(&self, bytes: u64);
    /// `bytes` more were appended to a segment.
    fn wrote(&self, bytes: u64);
}

/// Whether a sink is installed: the engine's reads test this alone when none is.
static WATCHED: AtomicBool = AtomicBool::new(false);
static SINK: RwLock<Option<Arc<dyn Progress>>> = RwLock::new(None);

/// Runs `work` with `sink` told of every byte the engine reads or appends meanwhile (on any
/// thread), then uninstalls it, also when `work` panics.
pub fn watching<T>(sink: Arc<dyn Progress>, work: impl FnOnce() -> T) -> T {
    struct Uninstall;
    impl Drop for Uninstall {
        fn drop(&mut self) {
            WATCHED.store(false, Ordering::Release);
            *SINK.write().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }
    *SINK.write().unwrap_or_else(|e| e.into_inner()) = Some(sink);
    WATCHED.store(true, Ordering::Release);
    let _uninstall = Uninstall;
    work()
}

fn with_sink(f: impl FnOnce(&dyn Progress)) {
    if WATCHED.load(Ordering::Acquire) {
        if let Some(s) = SINK.read().unwrap_or_else(|e| e.into_inner()).as_deref() {
            f(s);
        }
    }
}

/// Reports `bytes` read from a file.
pub(crate) fn read(bytes: u64) {
    with_sink(|s| s.read(bytes));
}

/// Reports `bytes` appended to a segment.
pub(crate) fn wrote(bytes: u64) {
    with_sink(|s| s.wrote(bytes));
}
