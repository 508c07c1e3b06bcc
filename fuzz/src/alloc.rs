//! A counting global allocator: the fuzz targets assert that no single allocation (and no
//! peak of live bytes) goes past a bound derived from the input's size and the batch limit, so
//! a length read from a hostile file can never size an allocation by itself.
//!
//! Installed with `#[global_allocator]` by each fuzz binary and by `tests/fuzz_regressions.rs`;
//! the counters are process-wide (libFuzzer runs one input at a time; the regression test
//! replays its inputs from one thread).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The system allocator, counting.
pub struct Counting;

static LARGEST: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    LARGEST.fetch_max(size, Relaxed);
    let live = LIVE.fetch_add(size, Relaxed) + size;
    PEAK.fetch_max(live, Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; the counters do not allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_sub(layout.size(), Relaxed);
        grew(new_size);
        System.realloc(ptr, layout, new_size)
    }
}

/// What was allocated since the last [`reset`].
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// The largest single allocation, in bytes.
    pub largest: usize,
    /// The largest number of bytes live at once above what was live at the reset.
    pub peak: usize,
}

/// Starts a measurement; returns the bytes live now (the baseline of the peak).
pub fn reset() -> usize {
    LARGEST.store(0, Relaxed);
    let live = LIVE.load(Relaxed);
    PEAK.store(live, Relaxed);
    live
}

/// The usage since the [`reset`] that returned `baseline`.
pub fn usage(baseline: usize) -> Usage {
    Usage {
        largest: LARGEST.load(Relaxed),
        peak: PEAK.load(Relaxed).saturating_sub(baseline),
    }
}

/// Whether [`Counting`] is the global allocator of this process (else nothing is counted and
/// the bounds hold trivially; the regression test checks it is).
pub fn is_counting() -> bool {
    let base = reset();
    let v = std::hint::black_box(vec![0u8; 4096]);
    drop(v);
    usage(base).largest >= 4096
}

/// Panics when `usage` of `what` goes past `bound` bytes.
pub fn assert_within(what: &str, usage: Usage, bound: usize) {
    assert!(
        usage.largest <= bound,
        "{what}: one allocation of {} bytes, above the bound of {bound}",
        usage.largest
    );
    assert!(
        usage.peak <= bound.saturating_mul(2),
        "{what}: {} bytes live at once, above twice the bound of {bound}",
        usage.peak
    );
}
