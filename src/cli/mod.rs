//! Layer 4: the command line. Argument parsing, rendering and exit codes only; everything
//! about Kafka's formats lives in the layers below.

mod args;
pub mod checks;
pub mod compact;
pub mod coordinator;
pub mod diff;
pub mod digest;
pub mod dump;
pub mod export;
pub mod groups;
pub mod locate;
pub mod ls;
pub mod manual;
pub mod metadata;
pub mod offsets;
mod progress;
pub mod rebuild_index;
pub mod recover;
pub mod render;
pub mod retention;
pub mod salvage;
pub mod stats;
pub mod tiered;
pub mod time;
pub mod txns;
pub mod verify;
pub mod version;
pub mod write;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use manual::command;

/// Exit status: everything checked out.
pub const EXIT_OK: u8 = 0;
/// Exit status: damage or findings were reported (after printing all that could be printed).
pub const EXIT_FINDINGS: u8 = 1;
/// Exit status: a file could not be read or the command line was wrong.
pub const EXIT_FAILURE: u8 = 2;

/// Offline tool for Apache Kafka partition directories: dump, verify, repair and write
/// `.log` segments, indexes, producer snapshots and checkpoint files.
#[derive(Debug, Parser)]
#[command(name = "kseg", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub output: render::OutputArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the contents of segment, index, snapshot and checkpoint files (a drop-in for
    /// kafka-dump-log.sh --files, with JSON output and damage reports).
    // Boxed: dump's many filters make its arguments several times larger than the others'.
    Dump(Box<dump::DumpArgs>),
    /// Check segments, partitions and log dirs for damage (exit status 1 when errors are found).
    Verify(verify::VerifyArgs),
    /// Build a partition directory from a spec, byte for byte as the broker writes it.
    Write(write::WriteArgs),
    /// Rebuild segment indexes from the .log as the broker's recovery does (dry run unless --apply).
    RebuildIndex(rebuild_index::RebuildIndexArgs),
    /// Repair a partition directory offline exactly as the broker's unclean-restart recovery
    /// plus a clean shutdown would (dry run unless --apply).
    Recover(recover::RecoverArgs),
    /// Which segments the broker's retention would delete and why, and when the rest goes.
    Retention(retention::RetentionArgs),
    /// One round of the broker's log cleaner, written to a new log dir (--out) or carried out
    /// in place (--apply; dry run otherwise), with a report.
    Compact(compact::CompactArgs),
    /// The offset, timestamp and leader epoch ListOffsets would answer (earliest, latest,
    /// max-timestamp or a time), found through the indexes as the broker finds it.
    Offsets(offsets::OffsetsArgs),
    /// Which segment file, byte position and batch hold an offset, and the index entry that
    /// led there.
    Locate(locate::LocateArgs),
    /// What segments, partitions and log dirs hold: batches, records and bytes by codec,
    /// format and kind, size histograms, timestamps, producers, keys (--deep).
    Stats(stats::StatsArgs),
    /// Transactions per partition: last stable offset, open and hanging transactions,
    /// committed and aborted ones, each producer's state.
    Txns(txns::TxnsArgs),
    /// Save the valid batches a recovery would drop (those after the first damage) into a
    /// partition directory of their own, with a report; the source is only read.
    Salvage(salvage::SalvageArgs),
    /// Where two replicas of one partition diverge (by the broker's leader-epoch truncation
    /// and by their batches), and what only one of them has.
    Diff(diff::DiffArgs),
    /// A SHA-256 of a partition's record stream (not its segment boundaries), to compare
    /// replicas by exchanging one line.
    Digest(digest::DigestArgs),
    /// Which __consumer_offsets or __transaction_state partition holds a group or a
    /// transactional id (Kafka's abs(hashCode) % partitions).
    Coordinator(coordinator::CoordinatorArgs),
    /// One line per partition directory of a log dir from metadata alone: sizes, offsets,
    /// checkpoints, topic ids, directory states and the problems they show.
    Ls(ls::LsArgs),
    /// Consumer groups from __consumer_offsets on disk: committed offsets (replayed as the
    /// group coordinator does), state, members and lag.
    Groups(groups::GroupsArgs),
    /// The KRaft metadata image (features, brokers, topics and partitions, configs, quotas,
    /// ACLs, …) at the log end, an offset or a time, rebuilt from __cluster_metadata as the
    /// controller does; what changed between two points (--diff).
    Metadata(metadata::MetadataArgs),
    /// Every finding id (`batch.crc`, `index.untrimmed`, …): its severity, what it means and
    /// what the broker does about it.
    Checks(checks::ChecksArgs),
    /// The version, git commit, build date, the Kafka release kseg follows, and features.
    Version(version::VersionArgs),
    /// A partition's remote tier (tiered storage) reconciled with __remote_log_metadata and
    /// the local log: unfinished copies and deletes, orphans, missing objects, gaps, overlaps.
    Tiered(tiered::TieredArgs),
    /// The records of partitions as a Parquet, Arrow, CSV or JSON Lines table for SQL engines
    /// (DuckDB, Spark, Trino): one file, or a Hive-style tree with a file per partition.
    // Boxed: it carries dump's selection flags.
    Export(Box<export::ExportArgs>),
}

/// The subcommand being run, for the errors [`fail`] prints.
static SUBCOMMAND: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Runs the command line and returns the process exit status.
pub fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    time::preset_zone(&args);
    let matches = command().version(version::text()).get_matches_from(args);
    if let Some(name) = matches.subcommand_name() {
        let _ = SUBCOMMAND.set(name.to_owned());
    }
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    render::set_output(&cli.output);
    let code = match cli.command {
        Command::Dump(args) => dump::run(*args),
        Command::Verify(args) => verify::run(args),
        Command::Write(args) => write::run(args),
        Command::RebuildIndex(args) => rebuild_index::run(args),
        Command::Recover(args) => recover::run(args),
        Command::Retention(args) => retention::run(args),
        Command::Compact(args) => compact::run(args),
        Command::Offsets(args) => offsets::run(args),
        Command::Locate(args) => locate::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Txns(args) => txns::run(args),
        Command::Salvage(args) => salvage::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Digest(args) => digest::run(args),
        Command::Coordinator(args) => coordinator::run(args),
        Command::Ls(args) => ls::run(args),
        Command::Groups(args) => groups::run(args),
        Command::Metadata(args) => metadata::run(args),
        Command::Checks(args) => checks::run(args),
        Command::Version(args) => version::run(args),
        Command::Tiered(args) => tiered::run(args),
        Command::Export(args) => export::run(*args),
    };
    ExitCode::from(finish(code))
}

/// The exit status once the command is done: 1 when a file changed while it was read (the
/// output holds what was read; said here, after it) or when an entry named like a Kafka file
/// was not a file (a command other than `verify`, which reports it, went on without it), 2
/// when standard error could not be written (what it should have said is lost).
fn finish(code: u8) -> u8 {
    let changed = crate::storage::live::changed();
    for p in &changed {
        why(&format!(
            "{}: {}; what is shown is what was read",
            p.display(),
            crate::storage::live::CHANGED_MESSAGE
        ));
    }
    let not_regular = crate::ops::finding::not_regular_findings();
    for f in &not_regular {
        eprint_fmt(format_args!("{}\n", render::line(f)));
    }
    if STDERR_FAILED.load(std::sync::atomic::Ordering::Relaxed) {
        EXIT_FAILURE
    } else if !changed.is_empty()
        || (code == EXIT_OK
            && not_regular
                .iter()
                .any(|f| f.severity == crate::ops::Severity::Error))
    {
        EXIT_FINDINGS
    } else {
        code
    }
}

/// Whether a write to standard error failed (a full disk, a closed pipe).
static STDERR_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes to standard error as `eprint!` does, without its panic on a failed write: the
/// failure is remembered and makes the exit status 2 at the end ([`finish`]), once the work
/// is done and safe. Used through [`errln!`].
pub(crate) fn eprint_fmt(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    if std::io::stderr().lock().write_fmt(args).is_err() {
        STDERR_FAILED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// `eprintln!` through [`eprint_fmt`].
macro_rules! errln {
    ($($t:tt)*) => {
        $crate::cli::eprint_fmt(format_args!("{}\n", format_args!($($t)*)))
    };
}
pub(crate) use errln;

/// Prints a notice on standard error (`kseg offsets: notice: …`): something the output does
/// not show but the user should know, such as an index that could not be used.
pub(crate) fn notice(n: &dyn std::fmt::Display) {
    match SUBCOMMAND.get() {
        Some(name) => errln!("kseg {name}: notice: {n}"),
        None => errln!("kseg: notice: {n}"),
    }
}

/// Prints an error the way every subcommand does (`kseg verify: error: …`), and returns the
/// failure status.
/// Says on stderr why the exit status is 1, whatever stdout is redirected to.
pub(crate) fn why(summary: &str) {
    match SUBCOMMAND.get() {
        Some(name) => errln!("kseg {name}: {summary}"),
        None => errln!("kseg: {summary}"),
    }
}

/// The paths to work on ([`crate::ops::input::expand_log_dirs`]): a directory of log dirs
/// becomes its log dirs, said on stderr; with `apply` (changing files) it is refused (exit 2).
pub(crate) fn log_dirs_named(
    paths: &[std::path::PathBuf],
    apply: bool,
) -> Result<Vec<std::path::PathBuf>, u8> {
    let change = apply.then_some(crate::error::Expected::PartitionOrLogDir);
    let expanded = crate::ops::input::expand_log_dirs(paths, change).map_err(|e| fail(&e))?;
    for (p, inside) in &expanded.taken {
        let list: Vec<String> = inside.iter().map(|d| d.display().to_string()).collect();
        notice(&format!(
            "{}: a directory of {} log dir(s), each taken: {}",
            p.display(),
            inside.len(),
            list.join(", ")
        ));
    }
    for (p, reader) in &expanded.repeated {
        notice(&format!("{p}: read once, with {reader} (also named)"));
    }
    Ok(expanded.paths)
}

/// The per-partition answers of a read-only command that takes one path (a partition, a log
/// dir or a directory of log dirs, or `--remote-segment`s of one partition) and `--remote`:
/// `each` run on every log dir the path names, in order. Err is the exit status, its reason
/// said.
pub(crate) fn per_partition<T>(
    path: Option<&std::path::Path>,
    remote: Option<&args::RemoteArgs>,
    each: impl Fn(&std::path::Path) -> crate::error::Result<Vec<T>>,
) -> Result<Vec<T>, u8> {
    let named = [args::one_path(remote, path)?];
    let mut all = Vec::new();
    for p in log_dirs_named(&named, false)? {
        all.extend(each(&p).map_err(|e| fail(&e))?);
    }
    Ok(all)
}

/// Counts on stderr the files kseg could not classify, so did not read; true when the user
/// named one of them (exit status 2).
pub(crate) fn skipped(named: &[std::path::PathBuf], skipped: &[std::path::PathBuf]) -> bool {
    if skipped.is_empty() {
        return false;
    }
    why(&format!(
        "{} file(s) skipped: not a Kafka file kseg can read",
        skipped.len()
    ));
    let named: Vec<&std::path::PathBuf> = skipped.iter().filter(|s| named.contains(s)).collect();
    for p in &named {
        fail(&format!(
            "{}: named on the command line but not a Kafka file kseg can read",
            p.display()
        ));
    }
    !named.is_empty()
}

/// Exit status 1, with the reason on stderr, when `findings` hold an error; else 0.
pub(crate) fn exit_for_errors<'a>(findings: impl Iterator<Item = &'a crate::ops::Finding>) -> u8 {
    let errors: Vec<&'static str> = findings
        .filter(|f| f.severity == crate::ops::Severity::Error)
        .map(|f| f.check)
        .collect();
    if errors.is_empty() {
        EXIT_OK
    } else {
        why(&format!(
            "error(s) found: {}",
            crate::ops::finding::count_by_check(errors)
        ));
        EXIT_FINDINGS
    }
}

pub(crate) fn fail(e: &dyn std::fmt::Display) -> u8 {
    let error = render::paint(
        "error:",
        crate::ops::Severity::Error,
        render::Stream::Stderr,
    );
    match SUBCOMMAND.get() {
        Some(name) => errln!("kseg {name}: {error} {e}"),
        None => errln!("kseg: {error} {e}"),
    }
    EXIT_FAILURE
}
