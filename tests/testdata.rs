//! The bundled `testdata/` partition directories are written by `kseg write` from the
//! `SPEC.json` next to them. This test writes each spec again and compares every file byte
//! for byte, so the fixtures never drift from the code. To regenerate after an intended
//! change: `cargo run --release -- write testdata/<name>/SPEC.json testdata/<name>` (after
//! removing the old `<topic>-<partition>` directory).

use std::path::{Path, PathBuf};

use kseg::ops::write::spec::{write_spec, Spec};

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn testdata_is_what_kseg_write_writes() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut checked = 0;
    for name in files(&root) {
        let spec_path = root.join(&name).join("SPEC.json");
        if !spec_path.is_file() {
            continue;
        }
        let spec = Spec::from_json(&std::fs::read_to_string(&spec_path).unwrap()).unwrap();
        let dir_name = format!("{}-{}", spec.topic, spec.partition);
        let committed = root.join(&name).join(&dir_name);
        let tmp = tempfile::tempdir().unwrap();
        let fresh = tmp.path().join(&dir_name);
        write_spec(&spec, &fresh).unwrap();
        assert_eq!(files(&fresh), files(&committed), "{name}: file list");
        for f in files(&fresh) {
            let (a, b) = (
                std::fs::read(fresh.join(&f)).unwrap(),
                std::fs::read(committed.join(&f)).unwrap(),
            );
            assert!(
                a == b,
                "{name}/{dir_name}/{f} differs from what kseg write produces"
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} files compared");
}
