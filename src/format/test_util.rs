//! Helpers for the unit tests of the format layer.

/// Bytes from hex text; whitespace is ignored (so layouts can be written field by field).
pub fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The reference corpus partition directory of `scenario`, by the rule of [`corpus`].
pub fn reference_dir(scenario: &str) -> Option<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/reference")
        .join(scenario)
        .join("input/orders-0");
    corpus(dir)
}

/// `dir` of the corpus if present. Missing, it fails the test (a skip must never pass
/// silently) unless `KSEG_ALLOW_SKIP` is set and `KSEG_REFERENCE` (which CI sets) is not.
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
