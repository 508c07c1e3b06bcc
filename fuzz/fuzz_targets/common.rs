//! Shared by the fuzz targets: a partition directory made of the input, and the engine's
//! readers run over it. Any panic (or an allocation past libFuzzer's -rss_limit_mb) is a bug:
//! bad input must give an error that names the file and the byte position.

use std::path::{Path, PathBuf};

use kseg::ops::check::verify::{verify_paths, VerifyOptions};
use kseg::ops::inspect::dump::{dump_paths, DumpOptions, Event, Sink};

/// Discards every event.
struct Discard;

impl Sink for Discard {
    fn event(&mut self, _: &Event<'_>) -> std::io::Result<()> {
        Ok(())
    }
}

/// A partition directory `t-0` holding `files` (name, bytes).
pub fn partition(files: &[(&str, &[u8])]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t-0");
    std::fs::create_dir(&dir).unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    (tmp, dir)
}

/// `kseg dump --deep-iteration --print-data-log` of every file of `dir` (with a 1 MiB cap on
/// what one batch may decompress to), then `kseg verify --deep` of the directory. Errors are
/// fine; panics are not.
pub fn read_everything(dir: &Path) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let opts = DumpOptions {
        deep: true,
        print_data: true,
        index_sanity_check: true,
        max_decompressed_bytes: 1 << 20,
        ..DumpOptions::default()
    };
    let _ = dump_paths(&files, &opts, &mut Discard);
    let verify = VerifyOptions {
        deep: true,
        base_offset: None,
    };
    let _ = verify_paths(&[dir.to_path_buf()], &verify, &|_| {});
}
