//! `verify` checks a segment's indexes against the batches recorded by the walk of its log
//! that checks the log itself; `dump` of an index file alone walks the log for it. Both entry
//! points must reach the same findings, on Kafka's own segments and on every kind of index
//! (and some log) damage.

use std::path::{Path, PathBuf};

use kseg::format::names::{index_file_name, log_file_name, time_index_file_name};
use kseg::ops::inspect::dump::{dump_paths, dump_segment, DumpOptions, Event, Sink};
use kseg::ops::Finding;

mod common;

#[derive(Default)]
struct Findings(Vec<Finding>);

impl Sink for Findings {
    fn event(&mut self, e: &Event<'_>) -> std::io::Result<()> {
        if let Event::Finding(f) = e {
            self.0.push((*f).clone());
        }
        Ok(())
    }
}

/// What a finding says, without its message: where the disk search gives up, its message
/// can name a different nearest batch.
type Key = (&'static str, PathBuf, Option<u64>, Option<i64>);

fn keys(findings: Vec<Finding>, of: &[PathBuf]) -> Vec<Key> {
    findings
        .into_iter()
        .filter(|f| of.contains(&f.file))
        .map(|f| (f.check, f.file, f.position, f.offset))
        .collect()
}

fn assert_same_findings(dir: &Path, base: i64, what: &str) {
    let log = dir.join(log_file_name(base));
    let indexes = vec![
        dir.join(index_file_name(base)),
        dir.join(time_index_file_name(base)),
    ];
    for deep in [false, true] {
        let opts = DumpOptions {
            deep,
            exact_time_index: deep,
            ..DumpOptions::default()
        };
        let mut disk = Findings::default();
        dump_paths(&indexes, &opts, &mut disk).unwrap();
        let mut walked = Findings::default();
        dump_segment(&log, &indexes, &opts, &mut walked).unwrap();
        assert_eq!(
            keys(walked.0, &indexes),
            keys(disk.0, &indexes),
            "{what}, deep {deep}: {}",
            log.display()
        );
    }
}

type Damage = fn(&Path, i64);

fn rewrite(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut b = std::fs::read(path).unwrap();
    f(&mut b);
    std::fs::write(path, b).unwrap();
}

fn swap_first_two(entry_bytes: usize) -> impl FnOnce(&mut Vec<u8>) {
    move |b| {
        if b.len() >= 2 * entry_bytes {
            b[..2 * entry_bytes].rotate_left(entry_bytes);
        }
    }
}

/// Adds `by` to the big-endian 32-bit field at `at`, if the file is that long.
fn bump(at: usize, by: i32) -> impl FnOnce(&mut Vec<u8>) {
    move |b| {
        if let Some(field) = b.get_mut(at..at + 4) {
            let v = i32::from_be_bytes(field.try_into().unwrap()).wrapping_add(by);
            field.copy_from_slice(&v.to_be_bytes());
        }
    }
}

const DAMAGES: &[(&str, Damage)] = &[
    ("intact", |_, _| {}),
    ("index entries 0 and 1 swapped", |d, b| {
        rewrite(&d.join(index_file_name(b)), swap_first_two(8))
    }),
    ("index entry 0 off a boundary", |d, b| {
        rewrite(&d.join(index_file_name(b)), bump(4, 1))
    }),
    ("index entry 0 past the log end", |d, b| {
        rewrite(&d.join(index_file_name(b)), bump(4, 1 << 30))
    }),
    ("index entry 0 one offset on", |d, b| {
        rewrite(&d.join(index_file_name(b)), bump(0, 1))
    }),
    ("time entries 0 and 1 swapped", |d, b| {
        rewrite(&d.join(time_index_file_name(b)), swap_first_two(12))
    }),
    ("time entry 0 timestamp", |d, b| {
        rewrite(&d.join(time_index_file_name(b)), bump(4, 1))
    }),
    ("time entry 0 offset", |d, b| {
        rewrite(&d.join(time_index_file_name(b)), bump(8, 1))
    }),
    ("time entry 0 past the log end", |d, b| {
        rewrite(&d.join(time_index_file_name(b)), bump(8, 1 << 30))
    }),
    ("a record byte of the middle batch flipped", |d, b| {
        let log = d.join(log_file_name(b));
        let batches = common::batches(&log);
        let (position, size) = batches[batches.len() / 2];
        // The last byte is record data (a v2 record or a legacy value), under the CRC.
        let at = (position + size - 1) as usize;
        rewrite(&log, |bytes| bytes[at] ^= 0x40);
    }),
    ("log cut in the middle batch", |d, b| {
        let log = d.join(log_file_name(b));
        let batches = common::batches(&log);
        let at = batches[batches.len() / 2].0 + 30;
        std::fs::OpenOptions::new()
            .write(true)
            .open(&log)
            .unwrap()
            .set_len(at)
            .unwrap();
    }),
];

/// Every segment of `dir` that has both indexes, by base offset.
fn indexed_segments(dir: &Path) -> Vec<i64> {
    let mut out: Vec<i64> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".log")?.parse().ok()
        })
        .filter(|&b| {
            dir.join(index_file_name(b)).is_file() && dir.join(time_index_file_name(b)).is_file()
        })
        .collect();
    out.sort();
    out
}

fn check_dir(src: &Path) {
    let segments = indexed_segments(src);
    assert!(
        !segments.is_empty(),
        "no indexed segment in {}",
        src.display()
    );
    for &base in &segments {
        for (what, damage) in DAMAGES {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join(src.file_name().unwrap());
            common::copy_dir(src, &dir);
            damage(&dir, base);
            assert_same_findings(&dir, base, what);
        }
    }
}

#[test]
fn walked_and_disk_lookups_agree_on_kafkas_segments() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    for s in common::scenarios(&root) {
        check_dir(&s.join("input").join("orders-0"));
    }
}

#[test]
fn walked_and_disk_lookups_agree_on_the_fixtures() {
    let testdata = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata");
    for (name, partition) in [
        ("orders", "orders-0"),
        ("payments", "payments-0"),
        ("legacy", "legacy-0"),
    ] {
        check_dir(&testdata.join(name).join(partition));
    }
}
