//! Directory-level targets: the input becomes files of a partition directory, read through
//! the engine's own paths (`dump --deep-iteration --print-data-log --index-sanity-check` of
//! every file, then `verify --deep` of the directory), as the CLI runs them. Errors are
//! fine; panics and allocations past the bound are not.

use std::path::{Path, PathBuf};

use kseg::format::internal::Decoder;
use kseg::ops::check::verify::{verify_paths, VerifyOptions};
use kseg::ops::inspect::dump::{dump_paths, DumpOptions, Event, Sink};

use super::alloc;
use super::formats::{allocation_bound, BATCH_LIMIT};

/// Discards every event.
struct Discard;

impl Sink for Discard {
    fn event(&mut self, _: &Event<'_>) -> std::io::Result<()> {
        Ok(())
    }
}

/// A partition directory `name` holding `files` (name, bytes), in a temporary log dir.
pub fn partition(name: &str, files: &[(&str, &[u8])]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temporary directory");
    let dir = tmp.path().join(name);
    std::fs::create_dir(&dir).expect("partition directory");
    for (file, bytes) in files {
        std::fs::write(dir.join(file), bytes).expect("write a fuzz input file");
    }
    (tmp, dir)
}

/// The dump options of these targets: every record printed, internal-topic records decoded by
/// the directory's topic name, indexes sanity-checked, batches decompressed up to
/// [`BATCH_LIMIT`].
pub fn dump_options() -> DumpOptions {
    DumpOptions {
        deep: true,
        print_data: true,
        index_sanity_check: true,
        auto_decoder: true,
        max_batch_bytes: BATCH_LIMIT,
        ..DumpOptions::default()
    }
}

/// Total size of the files directly in `dir`.
pub fn dir_bytes(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.metadata().ok())
                .map(|m| m.len() as usize)
                .sum()
        })
        .unwrap_or(0)
}

/// `dump` of every file of `dir`, then `verify --deep` of it, each under the allocation bound
/// (verify decompresses up to the engine's default limit, as the CLI does).
pub fn read_everything(dir: &Path) {
    let bytes = dir_bytes(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read the fuzz directory")
        .map(|e| e.expect("directory entry").path())
        .collect();
    files.sort();
    let base = alloc::reset();
    let _ = dump_paths(&files, &dump_options(), &mut Discard);
    alloc::assert_within(
        "dump",
        alloc::usage(base),
        allocation_bound(bytes, BATCH_LIMIT),
    );
    let _ = verify(dir);
}

/// `verify --deep` of `dir`, under the allocation bound of the engine's batch limit.
pub fn verify(dir: &Path) -> kseg::Result<kseg::ops::check::verify::Report> {
    let bytes = dir_bytes(dir);
    let base = alloc::reset();
    let opts = VerifyOptions {
        deep: true,
        base_offset: None,
        max_batch_bytes: BATCH_LIMIT,
    };
    let report = verify_paths(&[dir.to_path_buf()], &opts, &|_| {});
    let limit = kseg::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
    alloc::assert_within("verify", alloc::usage(base), allocation_bound(bytes, limit));
    report
}

/// Arbitrary bytes as a `.log` segment: batch framing, CRCs, every codec, v2 records, legacy
/// message sets and their wrappers, control records.
pub fn log_segment(data: &[u8]) {
    let (_tmp, dir) = partition("t-0", &[("00000000000000000000.log", data)]);
    read_everything(&dir);
}

/// One v2 batch, offsets 0..=1, uncompressed, made by kseg's own writer.
fn valid_log() -> Vec<u8> {
    use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};
    let record = |offset: i64, k: &[u8]| RecordSpec {
        offset,
        key: Some(k.to_vec()),
        value: Some(b"v".to_vec()),
        ..RecordSpec::default()
    };
    build_batch(&BatchSpec::default(), &[record(0, b"a"), record(1, b"b")]).expect("a valid batch")
}

const PARTITION_FILES: [&str; 6] = [
    "00000000000000000000.index",
    "00000000000000000000.timeindex",
    "00000000000000000000.txnindex",
    "00000000000000000002.snapshot",
    "leader-epoch-checkpoint",
    "partition.metadata",
];

/// Arbitrary bytes cut into the other files of a partition directory (indexes, transaction
/// index, producer snapshot, leader-epoch checkpoint, partition.metadata) beside a small valid
/// segment, so that the cross-file checks run too. The first six bytes say how long each part
/// is (in units of 4 bytes; the last takes the rest).
pub fn partition_files(data: &[u8]) {
    let (lens, mut rest) = data.split_at(data.len().min(PARTITION_FILES.len()));
    let log = valid_log();
    let mut files: Vec<(&str, &[u8])> = vec![("00000000000000000000.log", &log)];
    for (i, name) in PARTITION_FILES.iter().enumerate() {
        let want = lens.get(i).map_or(rest.len(), |&l| usize::from(l) * 4);
        let (part, tail) = rest.split_at(want.min(rest.len()));
        files.push((name, part));
        rest = tail;
    }
    let (_tmp, dir) = partition("t-0", &files);
    read_everything(&dir);
}

/// The files `named_file` can be, with the partition directory each lives in: KRaft's
/// (`quorum-state`, a `.checkpoint` snapshot, `bootstrap.checkpoint`, its log with the
/// cluster-metadata decoder), the log dir's checkpoint files and `meta.properties`, and the
/// segment files of internal topics, decoded by their topic's decoder.
const NAMED: [(&str, &str); 14] = [
    ("__cluster_metadata-0", "quorum-state"),
    (
        "__cluster_metadata-0",
        "00000000000000000000-0000000000.checkpoint",
    ),
    ("__cluster_metadata-0", "bootstrap.checkpoint"),
    ("__cluster_metadata-0", "00000000000000000000.log"),
    ("t-0", "recovery-point-offset-checkpoint"),
    ("t-0", "replication-offset-checkpoint"),
    ("t-0", "log-start-offset-checkpoint"),
    ("t-0", "cleaner-offset-checkpoint"),
    ("t-0", "meta.properties"),
    ("t-0", ".kafka_cleanshutdown"),
    ("__consumer_offsets-0", "00000000000000000000.log"),
    ("__transaction_state-0", "00000000000000000000.log"),
    ("__share_group_state-0", "00000000000000000000.log"),
    ("__remote_log_metadata-0", "00000000000000000000.log"),
];

/// The first byte picks a file of [`NAMED`]; the rest is its content, dumped (with the
/// directory's decoder) and verified.
pub fn named_file(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let (dir_name, file) = NAMED[usize::from(selector) % NAMED.len()];
    let (_tmp, dir) = partition(dir_name, &[(file, bytes)]);
    read_everything(&dir);
    // The decoders also run when named explicitly, as `--cluster-metadata-decoder` does.
    let opts = DumpOptions {
        decoder: Some(Decoder::ClusterMetadata),
        ..dump_options()
    };
    let _ = dump_paths(&[dir.join(file)], &opts, &mut Discard);
}
