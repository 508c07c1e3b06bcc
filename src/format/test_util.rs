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

pub use super::test_corpus::corpus;
