//! Progress bars for long work, the one facility every command uses: an indicatif bar on
//! standard error, counting the bytes the engine actually reads (or, for `write`, appends),
//! as `storage::progress` reports them.
//!
//! Shown only when standard error is a terminal and the work has lasted [`DELAY`]; never with
//! `--quiet`. `KSEG_PROGRESS=always` shows it from the start whatever standard error is (for
//! tests and for logs that want it).

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::storage::progress::{watching, Progress};

/// How long work runs before its bar appears: quick commands print no bar at all.
pub const DELAY: Duration = Duration::from_millis(300);

/// The environment variable that forces bars on (`always`) or off (`never`).
pub const FORCE_VAR: &str = "KSEG_PROGRESS";

/// What a bar counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counting {
    /// Bytes read from segment and index files.
    Read,
    /// Bytes appended to segments.
    Written,
}

/// A progress bar on standard error, hidden until it is worth showing.
pub struct Bar {
    bar: ProgressBar,
    counting: Counting,
    started: Instant,
    /// Whether it may be shown at all (a terminal or `KSEG_PROGRESS=always`, no `--quiet`).
    allowed: bool,
    forced: bool,
    shown: AtomicBool,
}

impl Bar {
    /// A bar for `what` (`recovering`, `reading`, …) of `total` bytes when known (a spinner
    /// with the count and rate otherwise). `quiet` (`--quiet`) hides it.
    pub fn new(quiet: bool, what: &'static str, total: Option<u64>, counting: Counting) -> Self {
        let forced = match std::env::var(FORCE_VAR).as_deref() {
            Ok("always") => Some(true),
            Ok("never") => Some(false),
            _ => None,
        };
        let allowed = !quiet && forced.unwrap_or_else(|| std::io::stderr().is_terminal());
        let template = match total {
            Some(_) => "{spinner} {msg} {bytes}/{total_bytes} {wide_bar} {bytes_per_sec} eta {eta}",
            None => "{spinner} {msg} {bytes} {bytes_per_sec} {elapsed}",
        };
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::hidden())
            .with_style(ProgressStyle::with_template(template).expect("valid template"))
            .with_message(what);
        Bar {
            bar,
            counting,
            started: Instant::now(),
            allowed,
            forced: forced == Some(true),
            shown: AtomicBool::new(false),
        }
    }

    /// Counts `bytes` more done, and shows the bar once the work has lasted long enough.
    pub fn inc(&self, bytes: u64) {
        self.bar.inc(bytes);
        if self.allowed
            && !self.shown.load(Ordering::Relaxed)
            && (self.forced || self.started.elapsed() >= DELAY)
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar.set_draw_target(if self.forced {
                // Drawn even where standard error is no terminal (indicatif's own stderr
                // target hides itself there).
                ProgressDrawTarget::term_like(Box::new(console::Term::buffered_stderr()))
            } else {
                ProgressDrawTarget::stderr()
            });
            self.bar.tick();
        }
    }

    /// Runs `work` with every byte the engine reads (or appends) meanwhile counted, then
    /// clears the bar.
    pub fn run<T>(self, work: impl FnOnce() -> T) -> T {
        let bar = Arc::new(self);
        let out = watching(bar.clone(), work);
        bar.finish();
        out
    }

    /// Clears the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for Bar {
    fn read(&self, bytes: u64) {
        if self.counting == Counting::Read {
            self.inc(bytes);
        }
    }

    fn wrote(&self, bytes: u64) {
        if self.counting == Counting::Written {
            self.inc(bytes);
        }
    }
}

/// The bytes of the files below `paths`: a bar's total when a command reads
/// everything it is given.
pub fn bytes_below(paths: &[impl AsRef<Path>]) -> u64 {
    fn below(p: &Path) -> u64 {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => std::fs::read_dir(p)
                .map(|d| d.flatten().map(|e| below(&e.path())).sum())
                .unwrap_or(0),
            Ok(m) => m.len(),
            Err(_) => 0,
        }
    }
    paths.iter().map(|p| below(p.as_ref())).sum()
}
