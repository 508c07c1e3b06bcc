//! Issue 15: every input a fuzz campaign found a bug with, replayed on stable through the
//! same target bodies the cargo-fuzz binaries run (`fuzz/src/`, compiled into this test too),
//! under the same counting allocator and allocation bounds. `fuzz/regressions/<target>/`
//! holds the inputs (crashes, minimised, and a few seeds that reach each target's deep paths);
//! a fixed bug that comes back fails here.

#[path = "../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod kseg_fuzz;

use std::path::Path;
use std::sync::Mutex;

#[global_allocator]
static ALLOC: kseg_fuzz::alloc::Counting = kseg_fuzz::alloc::Counting;

/// The allocation counters are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

#[test]
fn every_regression_input_replays_cleanly() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    assert!(
        kseg_fuzz::alloc::is_counting(),
        "the counting allocator is installed"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut replayed = 0;
    for (name, body) in kseg_fuzz::TARGETS {
        let dir = root.join(name);
        assert!(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("fuzz/fuzz_targets/{name}.rs"))
                .is_file(),
            "{name}: no fuzz target of that name"
        );
        let mut inputs: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        inputs.sort();
        assert!(!inputs.is_empty(), "{name}: no regression input");
        for input in inputs {
            let data = std::fs::read(&input).unwrap();
            let outcome = std::panic::catch_unwind(|| body(&data));
            assert!(outcome.is_ok(), "{}: the target panicked", input.display());
            replayed += 1;
        }
    }
    assert!(replayed >= kseg_fuzz::TARGETS.len());
}

/// The bound is a bound: a target that allocates past it fails (the allocator counts, and
/// `assert_within` looks at what it counted).
#[test]
fn an_allocation_past_the_bound_is_caught() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let base = kseg_fuzz::alloc::reset();
    let big = std::hint::black_box(vec![1u8; 3 << 20]);
    drop(big);
    let usage = kseg_fuzz::alloc::usage(base);
    let bound = kseg_fuzz::formats::allocation_bound(0, 0);
    let caught = std::panic::catch_unwind(|| kseg_fuzz::alloc::assert_within("test", usage, bound));
    assert!(caught.is_err(), "{usage:?} within {bound}");
}
