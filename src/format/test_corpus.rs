//! The one rule for tests that read a corpus under `../shared` (the unit tests of the library
//! and, through `#[path]`, the integration tests): a missing corpus fails the test, since a
//! skip must never pass silently, unless `KSEG_ALLOW_SKIP` is set and `KSEG_REFERENCE` (which
//! CI sets) is not.

/// `dir` of the corpus if present; otherwise a failure, or `None` when skipping was asked for.
pub fn corpus(dir: std::path::PathBuf) -> Option<std::path::PathBuf> {
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var_os("KSEG_REFERENCE").is_some() || std::env::var_os("KSEG_ALLOW_SKIP").is_none()
    {
        panic!(
            "the corpus {} is missing (set KSEG_ALLOW_SKIP=1 to skip the tests that need it)",
            dir.display()
        );
    }
    eprintln!(
        "skipping: {} not found (KSEG_ALLOW_SKIP is set)",
        dir.display()
    );
    None
}
