//! What a path named on the command line holds, judged once for every operation before any
//! work starts. A path that does not exist, an empty directory, or a directory with neither a
//! Kafka file nor a partition directory is an [`Error::Unusable`] naming what was expected:
//! nothing to do is never reported as success. In-place work is refused ([`repair_target`])
//! where the broker would not do it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::{Error, Expected, Result, Unusable, Work};
use crate::format::names::{
    classify, parse_partition_dir, FileKind, PartitionDir, PartitionDirState,
};

/// What a directory holds, judged by its content (never by its own name): a log dir named
/// `kafka-1` is a log dir, and `/etc`'s `dbus-1/` is no partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// A single file (a Kafka file, or one whose content tells what it is: [`kind_of`]).
    File,
    /// Segment or state files of one partition.
    Partition,
    /// A broker's log dir: its own files (`meta.properties`, checkpoints, `.lock`,
    /// `.kafka_cleanshutdown`) or partition directories holding Kafka files.
    LogDir,
    /// A directory whose sub-directories are log dirs (a `log.dirs` parent), sorted.
    LogDirs(Vec<PathBuf>),
}

impl Shape {
    /// The shape's name, as errors and notices use it.
    pub fn describe(&self) -> &'static str {
        match self {
            Shape::File => "a file",
            Shape::Partition => "a partition directory",
            Shape::LogDir => "a log dir",
            Shape::LogDirs(_) => "a directory of log dirs",
        }
    }
}

impl Expected {
    /// Whether an operation declared to take `self` works on `shape`. A directory of log dirs
    /// is taken by none directly: read-only commands name its log dirs one by one
    /// ([`log_dirs_inside`]).
    pub fn accepts(self, shape: &Shape) -> bool {
        match self {
            Expected::AnyInput => !matches!(shape, Shape::LogDirs(_)),
            Expected::SegmentOrPartition => matches!(shape, Shape::File | Shape::Partition),
            Expected::PartitionOrLogDir => matches!(shape, Shape::Partition | Shape::LogDir),
            Expected::LogDir => matches!(shape, Shape::LogDir),
            Expected::Partition => matches!(shape, Shape::Partition),
            Expected::PartitionOrLogDirs | Expected::PartitionsOrLogDirs => {
                !matches!(shape, Shape::File)
            }
        }
    }
}

/// A path that passed [`examine`].
#[derive(Debug)]
pub enum Input {
    File,
    /// A directory's files (in [`crate::storage::files::list_dir`] order) and subdirectories;
    /// `shape` is [`Shape::Partition`] or [`Shape::LogDir`].
    Dir {
        files: Vec<PathBuf>,
        dirs: Vec<PathBuf>,
        shape: Shape,
    },
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn is_kafka_file(p: &Path) -> bool {
    classify(&name_of(p)) != FileKind::Unknown
}

/// A file the broker keeps in a log dir itself, not in a partition directory.
fn is_log_dir_file(p: &Path) -> bool {
    matches!(
        classify(&name_of(p)),
        FileKind::MetaProperties
            | FileKind::CleanShutdown
            | FileKind::Lock
            | FileKind::RecoveryPointCheckpoint
            | FileKind::ReplicationOffsetCheckpoint
            | FileKind::LogStartOffsetCheckpoint
            | FileKind::CleanerOffsetCheckpoint
            | FileKind::BootstrapCheckpoint
    )
}

/// A file of a partition directory: segment files, snapshots, epoch and partition metadata,
/// KRaft files, and their `.deleted`/`.cleaned`/`.swap` forms.
fn is_partition_file(p: &Path) -> bool {
    is_kafka_file(p) && !is_log_dir_file(p)
}

/// Whether `dir` is named as a partition directory and holds a partition file.
fn holds_partition(dir: &Path) -> bool {
    parse_partition_dir(&name_of(dir)).is_some()
        && crate::storage::files::regular_files(dir)
            .is_ok_and(|files| files.iter().any(|f| is_partition_file(f)))
}

/// The shape of a directory whose listing is `files` and `dirs`; None when it holds nothing
/// Kafka wrote.
fn dir_shape(files: &[PathBuf], dirs: &[PathBuf]) -> Option<Shape> {
    if files.iter().any(|f| is_partition_file(f)) {
        return Some(Shape::Partition);
    }
    if files.iter().any(|f| is_log_dir_file(f)) || dirs.iter().any(|d| holds_partition(d)) {
        return Some(Shape::LogDir);
    }
    let log_dirs: Vec<PathBuf> = dirs
        .iter()
        .filter(|d| {
            crate::storage::files::list_dir(d).is_ok_and(|listed| {
                let (dirs, files): (Vec<PathBuf>, Vec<PathBuf>) =
                    listed.into_iter().partition(|p| p.is_dir());
                !files.iter().any(|f| is_partition_file(f))
                    && (files.iter().any(|f| is_log_dir_file(f))
                        || dirs.iter().any(|d| holds_partition(d)))
            })
        })
        .cloned()
        .collect();
    (!log_dirs.is_empty()).then_some(Shape::LogDirs(log_dirs))
}

/// Judges what `path` holds by its content. A path that is missing, neither a regular file
/// nor a directory (a FIFO would block the first read), unreadable, empty, or without anything
/// Kafka wrote is an error naming it and `expected`.
pub fn resolve(path: &Path, expected: Expected) -> Result<(Shape, Input)> {
    use crate::storage::{files, tiered};
    let unusable = |problem| Err(Error::unusable(path, problem, expected));
    // A remote segment shown as a file (`--remote`, `--remote-segment`) is one, opened when
    // shown; a directory showing one need not be on disk.
    if tiered::shown_as(path).is_some() {
        return Ok((Shape::File, Input::File));
    }
    if !files::is_dir(path) {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return unusable(Unusable::Missing)
            }
            Err(e) => return Err(Error::io(path, e)),
        };
        if meta.is_file() {
            // Refused now, not after other paths were worked on.
            std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
            return Ok((Shape::File, Input::File));
        }
        if !meta.is_dir() {
            // Not a regular file either (returned above): say what it is.
            let what = files::not_regular(meta.file_type()).unwrap_or("something else");
            return unusable(Unusable::NotAFile(what));
        }
    }
    let (dirs, files): (Vec<PathBuf>, Vec<PathBuf>) = files::list_dir(path)?
        .into_iter()
        .partition(|p| files::is_dir(p));
    if files.is_empty() && dirs.is_empty() {
        return unusable(Unusable::EmptyDirectory);
    }
    let Some(shape) = dir_shape(&files, &dirs) else {
        return unusable(Unusable::NoKafkaFiles);
    };
    let input = Input::Dir {
        files,
        dirs,
        shape: shape.clone(),
    };
    Ok((shape, input))
}

/// The log dirs inside `path` when it is a directory of log dirs (none else, nor on error:
/// [`examine`] reports those).
pub fn log_dirs_inside(path: &Path) -> Vec<PathBuf> {
    match resolve(path, Expected::AnyInput) {
        Ok((Shape::LogDirs(dirs), _)) => dirs,
        _ => Vec::new(),
    }
}

/// The paths a command works on ([`expand_log_dirs`]).
#[derive(Debug, Default)]
pub struct Expanded {
    /// Each path as named, a directory of log dirs replaced by its log dirs.
    pub paths: Vec<PathBuf>,
    /// Each directory of log dirs replaced, with its log dirs (to be said on stderr).
    pub taken: Vec<(PathBuf, Vec<PathBuf>)>,
    /// Each path left out because another path named reads it ([`read_inside`]), with that
    /// path, as they are to be said on stderr.
    pub repeated: Vec<(String, String)>,
}

/// The paths to work on: each as named, but a directory of log dirs (a `log.dirs` parent)
/// becomes its log dirs. A command that changes files (`change`: what it takes) is refused
/// there, as [`examine`] refuses it, so that each log dir is named on purpose.
pub fn expand_log_dirs(paths: &[PathBuf], change: Option<Expected>) -> Result<Expanded> {
    let mut out = Expanded::default();
    // As named first, by place alone (what each reads inside is the second pass's): a
    // directory of log dirs named twice is said once, not for each log dir.
    let (paths, mut repeated) = read_once(paths.to_vec(), paths, |_| BTreeSet::new());
    let mut named = Vec::new();
    for p in &paths {
        let inside = log_dirs_inside(p);
        if inside.is_empty() {
            out.paths.push(p.clone());
            named.push(p.clone());
            continue;
        }
        if let Some(expected) = change {
            return Err(log_dirs_refused(p, &inside, expected));
        }
        out.paths.extend(inside.iter().cloned());
        named.extend(inside.iter().map(|_| p.clone()));
        out.taken.push((p.clone(), inside));
    }
    let (paths, again) = read_once(std::mem::take(&mut out.paths), &named, read_inside);
    repeated.extend(again);
    out.paths = paths;
    out.repeated = repeated;
    Ok(out)
}

/// The paths with each one that another reads left out, and those left out with the path that
/// reads them, each said as named (`named`: what each path was named as, a directory of log
/// dirs for its log dirs). Without this, a partition named twice (as `D/orders-0` and `D`, or
/// through a symbolic link) is read and reported twice, and judged the same partition in two
/// log dirs, which the broker refuses to start with. Of paths naming the same place the first
/// stays. `inside`: the places a path reads inside it ([`read_inside`]).
fn read_once(
    paths: Vec<PathBuf>,
    named: &[PathBuf],
    inside: fn(&Path) -> BTreeSet<PathBuf>,
) -> (Vec<PathBuf>, Vec<(String, String)>) {
    if paths.len() < 2 {
        return (paths, Vec::new());
    }
    let places: Vec<PathBuf> = paths.iter().map(|p| place(p)).collect();
    let reads: Vec<BTreeSet<PathBuf>> = paths.iter().map(|p| inside(p)).collect();
    let reader = |i: usize| {
        (0..paths.len()).find(|&j| {
            (places[j] == places[i] && j < i)
                || (places[j] != places[i] && reads[j].contains(&places[i]))
        })
    };
    // A path that reads another is itself left out only for one that reads both.
    let outermost = |mut j: usize| {
        for _ in 0..paths.len() {
            match reader(j) {
                Some(k) => j = k,
                None => break,
            }
        }
        j
    };
    let said = |i: usize| match named[i] == paths[i] {
        true => paths[i].display().to_string(),
        false => format!("{} (in {})", paths[i].display(), named[i].display()),
    };
    let mut kept = Vec::new();
    let mut repeated = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        match reader(i) {
            Some(j) => repeated.push((said(i), said(outermost(j)))),
            None => kept.push(p.clone()),
        }
    }
    (kept, repeated)
}

/// Where `p` is, resolved (links, `.`, `..`) to tell one place under two names; as named when
/// it cannot be (a missing path is reported when examined).
pub fn place(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The places every command that works on `path` reads inside it: in a partition directory
/// the files its walk reads (named as Kafka names them; of leftovers, only a `.swap`, which
/// the broker completes), in a log dir its live partition directories and theirs. A file Kafka
/// would not name so, a `.deleted` or `.cleaned` one, is skipped in a directory but read when
/// named; a `-delete`, `-future` or `-stray` directory is not read by all.
fn read_inside(path: &Path) -> BTreeSet<PathBuf> {
    let walked = |f: &Path| match classify(&name_of(f)) {
        FileKind::Unknown => false,
        FileKind::Leftover { suffix, .. } => suffix == crate::format::names::LeftoverSuffix::Swap,
        _ => true,
    };
    let files = |dir: &Path| {
        crate::storage::files::regular_files(dir)
            .unwrap_or_default()
            .into_iter()
            .filter(|f| walked(f))
            .map(|f| place(&f))
    };
    let live = |d: &Path| {
        parse_partition_dir(&name_of(d)).is_some_and(|p| p.state == PartitionDirState::Live)
            && holds_partition(d)
    };
    let mut out = BTreeSet::new();
    match resolve(path, Expected::AnyInput) {
        Ok((Shape::Partition, _)) => out.extend(files(path)),
        Ok((Shape::LogDir, Input::Dir { dirs, .. })) => {
            for d in dirs.iter().filter(|d| live(d)) {
                out.insert(place(d));
                out.extend(files(d));
            }
        }
        _ => {}
    }
    out
}

/// The one refusal of a directory of log dirs where a command needs one of them: it lists
/// them, to be named one by one.
fn log_dirs_refused(path: &Path, dirs: &[PathBuf], expected: Expected) -> Error {
    let list: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    Error::unusable(path, Unusable::LogDirs(list.join(", ")), expected)
}

/// [`resolve`]s `path` and checks that the operation, which takes `expected`, works on what it
/// holds.
pub fn examine(path: &Path, expected: Expected) -> Result<Input> {
    let (shape, input) = resolve(path, expected)?;
    if expected.accepts(&shape) {
        return Ok(input);
    }
    let problem = match shape {
        Shape::File => Unusable::NotADirectory,
        Shape::LogDirs(dirs) => return Err(log_dirs_refused(path, &dirs, expected)),
        other => Unusable::Shape(other.describe()),
    };
    Err(Error::unusable(path, problem, expected))
}

/// What the broker does at start-up with a file left with `suffix` (`LogLoader`'s
/// `removeTempFilesAndCollectSwapFiles`): said wherever such a file is met, and whether it
/// was `read` as the file it was.
pub fn leftover_note(suffix: crate::format::names::LeftoverSuffix, read: bool) -> String {
    use crate::format::names::LeftoverSuffix;
    let what = match suffix {
        LeftoverSuffix::Deleted => "the broker deletes it at start-up",
        LeftoverSuffix::Cleaned => "the broker deletes it at start-up (an interrupted cleaning)",
        LeftoverSuffix::Swap => {
            "the broker completes the swap at start-up: a .log.swap replaces the files of the offsets it covers, and each .swap is renamed to its name (a .swap at or above a .cleaned file's offset, of an unfinished split, is deleted)"
        }
        LeftoverSuffix::Tmp => "the broker deletes it at start-up",
    };
    format!(
        "leftover {} file, {}: {what} (recover does it offline)",
        suffix.as_str(),
        if read {
            "read as the file it was"
        } else {
            "not read"
        }
    )
}

/// What is said of a file that a `.log.swap` of the offsets it holds replaces
/// (`storage::loader::plan_leftovers`), not read.
pub const REPLACED_NOTE: &str = "replaced by a .log.swap of the offsets it holds (an interrupted swap): the broker deletes it at start-up and serves the swap's records instead (recover does it offline); not read";

/// Checks that `work` may be done in place in `dir`: a directory holding Kafka files, named as
/// a partition directory the broker does that work in. The broker deletes a `-delete`
/// directory without recovering it, recovers a `-stray` one at load but then leaves it alone
/// (no retention, no cleaning), and runs retention but not the cleaner on a `-future` one.
pub fn repair_target(dir: &Path, work: Work) -> Result<PartitionDir> {
    let unusable = |problem| Err(Error::unusable(dir, problem, Expected::Partition));
    let Input::Dir { files, .. } = examine(dir, Expected::Partition)? else {
        return unusable(Unusable::NotADirectory);
    };
    if !files.iter().any(|f| is_kafka_file(f)) {
        return unusable(Unusable::NothingToRepair);
    }
    // Listed above: an entry named like a Kafka file that is not one stops a repair, which
    // would act as if it were absent (the broker's load skips a `.log` that is not a file and
    // deletes its indexes as orphans: an active segment on an unmounted disk is lost), so what
    // it stands for is the operator's to decide first.
    if let Some((p, what)) = crate::storage::files::not_regular_in(dir)
        .into_iter()
        .next()
    {
        return Err(Error::invalid(
            &p,
            format!(
                "named like a Kafka file but {what}: a repair does not act around it; restore \
                 the file it stands for or move it out of the directory"
            ),
        ));
    }
    // `.` or `..` name no directory: the name is the resolved directory's.
    let resolved = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, e))?;
    let name = name_of(&resolved);
    let Some(partition) = parse_partition_dir(&name) else {
        return unusable(Unusable::NotPartitionName(name));
    };
    match (&partition.state, work) {
        (PartitionDirState::Delete { .. }, _) => unusable(Unusable::ScheduledForDeletion),
        (PartitionDirState::Stray { .. }, Work::Retention | Work::Cleaning) => {
            unusable(Unusable::Stray(work))
        }
        (PartitionDirState::Future { .. }, Work::Cleaning) => unusable(Unusable::Future),
        _ => Ok(partition),
    }
}

/// What a file named by the user is, when its name does not say it all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    pub kind: FileKind,
    /// Why the name is not one the broker loads, with where the offset came from; None when
    /// the name is Kafka's own.
    pub renamed: Option<String>,
}

const OFFSET_SUFFIXES: [&str; 5] = [
    crate::format::names::LOG_FILE_SUFFIX,
    crate::format::names::INDEX_FILE_SUFFIX,
    crate::format::names::TIME_INDEX_FILE_SUFFIX,
    crate::format::names::TXN_INDEX_FILE_SUFFIX,
    crate::format::names::PRODUCER_SNAPSHOT_FILE_SUFFIX,
];

/// The offset field of a log's first entry: a v2 batch's base offset, a legacy message's offset.
fn first_entry_offset(log: &Path) -> Option<i64> {
    use std::io::Read;
    let mut head = [0u8; 8];
    std::fs::File::open(log).ok()?.read_exact(&mut head).ok()?;
    Some(i64::from_be_bytes(head))
}

/// The offset a renamed producer snapshot is read with when none is given. The format holds
/// no offset (`ProducerStateManager` takes it from the name only): the lowest its entries
/// allow is one past the highest `lastOffset` among them (a snapshot at offset N holds the
/// state of the offsets below N); 0 when it has none or does not decode, which its read
/// then reports.
fn snapshot_offset_bound(path: &Path) -> (i64, String) {
    let entries = std::fs::read(path)
        .ok()
        .and_then(|b| crate::format::snapshot::decode(&b).ok())
        .map(|s| s.entries);
    let why = "its name; give --base-offset for the offset it was taken at";
    match entries {
        Some(e) => {
            let bound = e
                .iter()
                .map(|e| e.last_offset.saturating_add(1))
                .max()
                .unwrap_or(0)
                .max(0);
            let from = format!(
                "its entries (the lowest they allow: one past their highest lastOffset), as the snapshot format holds no offset but {why}"
            );
            (bound, from)
        }
        None => (
            0,
            format!("nowhere (its content does not decode), as the snapshot format holds no offset but {why}"),
        ),
    }
}

/// Classifies `path` by its name and, for a segment file (`.log`, `.index`, `.timeindex`,
/// `.txnindex`, `.snapshot`) whose name carries no offset, by its content: a log's offset is
/// its first batch's, an index's that of the log of the same stem beside it, a snapshot's the
/// lowest its entries allow ([`snapshot_offset_bound`]), or `base_offset` (`--base-offset`)
/// when given. Only a file none of this classifies is [`FileKind::Unknown`].
pub fn kind_of(path: &Path, base_offset: Option<i64>) -> Kind {
    let name = name_of(path);
    let kind = classify(&name);
    if kind != FileKind::Unknown {
        let kafka_name = kind
            .offset()
            .filter(|_| matches!(kind, FileKind::Log { .. }))
            .map(crate::format::names::log_file_name);
        let renamed = kafka_name
            .filter(|k| *k != name)
            .map(|k| format!("segment file name is not the 20-digit form Kafka writes ({k})"));
        return Kind { kind, renamed };
    }
    let unknown = Kind {
        kind: FileKind::Unknown,
        renamed: None,
    };
    let Some((stem, suffix)) = OFFSET_SUFFIXES
        .iter()
        .find_map(|s| name.strip_suffix(s).map(|stem| (stem, *s)))
    else {
        return unknown;
    };
    let log = path.with_file_name(format!("{stem}{}", crate::format::names::LOG_FILE_SUFFIX));
    let (offset, from) = match base_offset {
        Some(o) => (o, "--base-offset".to_owned()),
        None if suffix == crate::format::names::PRODUCER_SNAPSHOT_FILE_SUFFIX => {
            snapshot_offset_bound(path)
        }
        None => match first_entry_offset(&log) {
            Some(o) if log == path => (o, "its first batch".to_owned()),
            Some(o) => (o, format!("the first batch of {}", log.display())),
            None => return unknown,
        },
    };
    let kafka_name = crate::format::names::format_offset(offset) + suffix;
    Kind {
        kind: classify(&kafka_name),
        renamed: Some(format!(
            "a broker would not load this file under this name (it takes the offset from a 20-digit name such as {kafka_name}); read with offset {offset} from {from}"
        )),
    }
}

/// The file with `suffix` of the segment `path` belongs to: the one of the same stem (a renamed
/// segment's files keep their common stem; Kafka's names are the 20-digit offset).
pub fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let name = name_of(path);
    let stem = OFFSET_SUFFIXES
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(&name);
    path.with_file_name(format!("{stem}{suffix}"))
}

/// Why a log dir without a [`live_partitions`] entry gives nothing to compare or hash.
pub const NO_LIVE_PARTITION: &str =
    "no partition directory the broker serves here (only its own files, or -delete, -future, -stray directories)";

/// The live partition directories (`<topic>-<partition>` holding partition files) of a log dir,
/// or of every log dir of a directory of log dirs, by topic and partition. `-delete`,
/// `-future` and `-stray` directories are left out: the broker serves none of them. The same
/// partition in two log dirs is an error: the broker refuses to start, and which copy is
/// meant is unknown.
pub fn live_partitions(
    path: &Path,
    shape: &Shape,
) -> Result<std::collections::BTreeMap<(String, i32), PathBuf>> {
    let log_dirs = match shape {
        Shape::LogDir => vec![path.to_path_buf()],
        Shape::LogDirs(dirs) => dirs.clone(),
        other => {
            return Err(Error::unusable(
                path,
                Unusable::Shape(other.describe()),
                Expected::LogDir,
            ))
        }
    };
    let mut out = std::collections::BTreeMap::new();
    for log_dir in log_dirs {
        for d in crate::storage::files::list_dir(&log_dir)? {
            let Some(p) = parse_partition_dir(&name_of(&d)) else {
                continue;
            };
            if p.state != PartitionDirState::Live || !d.is_dir() || !holds_partition(&d) {
                continue;
            }
            if let Some(first) = out.insert((p.topic, p.partition), d.clone()) {
                return Err(Error::invalid(
                    path,
                    format!(
                        "partition {} is in two log dirs ({} and {}): the broker refuses to start; name one log dir",
                        name_of(&d),
                        first.display(),
                        d.display()
                    ),
                ));
            }
        }
    }
    Ok(out)
}
