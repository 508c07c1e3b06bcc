//! tests/aiven_reader.py, the independent reader of Aiven's objects, run from the tests that
//! check kseg's against it (tests/aiven_format.rs, tests/tiered_aiven.rs).

use std::path::{Path, PathBuf};

/// The Python reader's packages: missing is a failure under the same rule as a missing corpus.
pub fn python_ready() -> bool {
    super::common::python_modules(&["zstandard", "cryptography"])
}

pub fn reader(args: &[&str]) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/aiven_reader.py");
    super::common::python(&[&[script], args].concat())
}

/// An RSA key pair made by the Python side (PKCS#8 private, SubjectPublicKeyInfo public).
pub fn key_pair(dir: &Path) -> (PathBuf, PathBuf) {
    let (private, public) = (dir.join("private.pem"), dir.join("public.pem"));
    reader(&[
        "keygen",
        private.to_str().unwrap(),
        public.to_str().unwrap(),
    ]);
    (private, public)
}
