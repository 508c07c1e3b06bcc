//! The bodies of kseg's fuzz targets, shared by the cargo-fuzz binaries (`fuzz_targets/`) and
//! the stable regression test (`tests/fuzz_regressions.rs`, which replays
//! `fuzz/regressions/<target>/*` through the same functions). Each takes the fuzzer's bytes
//! and panics only on a bug: bad input must give an error, never a panic, and stay within the
//! allocation bound of [`alloc`].

pub mod aiven;
pub mod alloc;
pub mod files;
pub mod formats;
pub mod partition;

/// A target's body: the fuzzer's bytes in, a panic on a bug.
pub type Target = fn(&[u8]);

/// Every target by name, as `fuzz_targets/<name>.rs` runs it.
pub const TARGETS: [(&str, Target); 9] = [
    ("batch", formats::batch),
    ("codec", formats::codec),
    ("state_files", formats::state_files),
    ("internal_records", formats::internal_records),
    ("aiven", aiven::aiven),
    ("log_segment", files::log_segment),
    ("partition_files", files::partition_files),
    ("named_file", files::named_file),
    ("partition", partition::partition),
];
