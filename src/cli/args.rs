//! The flag sets several subcommands share, each defined once and flattened into them:
//! [`RepairArgs`] for every command that changes files (`rebuild-index`, `recover`,
//! `retention`, `compact`), [`OffsetArgs`] for the simulations' partition offsets; and what
//! those commands do with them (the backup, the clock, the dry run's exit status, `--jobs`,
//! the salvage `salvage` and `recover --salvage` both write).

use std::path::{Path, PathBuf};

use clap::Args;

use super::progress::{Bar, Counting};
use super::{fail, why, EXIT_FINDINGS, EXIT_OK};
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::ops::repair::apply::{ApplyOptions, Backup, PartitionLock};
use crate::ops::repair::recover::{RecoverOptions, RecoverPlan};
use crate::ops::repair::salvage::{salvage, SalvageReport};
use crate::storage::producer_state::DEFAULT_PRODUCER_ID_EXPIRATION_MS;
use crate::storage::LogConfig;

/// The largest value of an INT Kafka config.
pub const INT_MAX: i64 = i32::MAX as i64;
/// The largest value of a LONG Kafka config.
pub const LONG_MAX: i64 = i64::MAX;
/// The least `segment.bytes` Kafka accepts: the overhead of one v0 record (crc, magic,
/// attributes, key and value lengths).
pub const MIN_SEGMENT_BYTES: i64 = 4 + 1 + 1 + 4 + 4;

/// `--max-batch-bytes`, for every command that decompresses batches (`dump`, `verify`,
/// `stats`): one flag, one meaning.
#[derive(Debug, Clone, Copy, Args)]
pub struct BatchLimitArgs {
    /// The most bytes one batch may decompress to; a larger one is reported unchecked
    /// (`batch.unchecked`, a warning) and memory use is bounded by this plus a constant.
    #[arg(long, default_value_t = DEFAULT_MAX_DECOMPRESSED_BYTES, value_name = "BYTES",
          value_parser = clap::value_parser!(usize))]
    pub max_batch_bytes: usize,
}

/// What every command that changes files shares: applying, backups, the clock and topic
/// settings.
#[derive(Debug, Args)]
pub struct RepairArgs {
    /// Carry out the plan (default: only print it; nothing is written).
    #[arg(long)]
    pub apply: bool,
    /// Do not copy the affected files and the plan to a backup directory first.
    #[arg(long, conflicts_with = "backup_dir")]
    pub no_backup: bool,
    /// Backup directory (default: `<log dir>.kseg-backup/<partition>-<time>`, beside the log
    /// dir; one inside the log dir is refused: the broker would take it for a partition).
    #[arg(long, value_name = "DIR")]
    pub backup_dir: Option<PathBuf>,
    /// With --apply: wait for the partition's lock (a broker's or another kseg's) instead of
    /// refusing.
    #[arg(long)]
    pub wait: bool,
    /// Print the plan or report as JSON.
    #[arg(long)]
    pub json: bool,
    /// List every file change of a plan (by default a long plan lists 20 and counts the rest).
    #[arg(long, short)]
    pub verbose: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// The broker clock (default: now). Every command: producers idle longer than
    /// producer.id.expiration.ms at this time are dropped from the producer state it rebuilds.
    /// retention: also what retention.ms counts from; compact: also the cleaner's lags and
    /// delete horizon. Epoch ms, RFC 3339, a local date-time (`2016-11-18 08:05`, in --tz or
    /// the local zone) or relative (`-1h`, `2d ago`).
    #[arg(long, value_name = "TIME", value_parser = parse_now, allow_hyphen_values = true)]
    pub now: Option<i64>,
    /// The topic's index.interval.bytes.
    #[arg(long, default_value_t = 4096, value_name = "BYTES", allow_negative_numbers = true,
          value_parser = kafka_int::<u64>("index.interval.bytes", 0, INT_MAX))]
    pub index_interval_bytes: u64,
    /// The topic's segment.index.bytes (the most index entries a segment can have).
    #[arg(long, default_value_t = 10 << 20, value_name = "BYTES", allow_negative_numbers = true,
          value_parser = kafka_int::<u64>("segment.index.bytes", 4, INT_MAX))]
    pub segment_index_bytes: u64,
    /// The broker's producer.id.expiration.ms.
    #[arg(long, default_value_t = DEFAULT_PRODUCER_ID_EXPIRATION_MS, value_name = "MS",
          allow_negative_numbers = true,
          value_parser = kafka_int::<i64>("producer.id.expiration.ms", 1, INT_MAX))]
    pub producer_id_expiration_ms: i64,
}

impl RepairArgs {
    pub fn config(&self) -> LogConfig {
        LogConfig {
            index_interval_bytes: self.index_interval_bytes,
            segment_index_bytes: self.segment_index_bytes,
            ..LogConfig::default()
        }
    }

    /// A progress bar for `what` this command does, counting the bytes read (`--quiet` hides it).
    pub fn progress(&self, what: &'static str) -> Bar {
        Bar::new(self.quiet, what, None, Counting::Read)
    }

    pub fn now_ms(&self) -> i64 {
        self.now.unwrap_or_else(wall_clock_ms)
    }

    /// With `--apply`: the locks of the partitions at `paths` (partition directories, or
    /// files in one), taken before anything a plan depends on is read and held until the
    /// command ends. A dry run reads only and takes none.
    pub fn lock(&self, paths: &[PathBuf]) -> crate::Result<Vec<PartitionLock>> {
        if !self.apply {
            return Ok(Vec::new());
        }
        let mut locks = Vec::new();
        for p in paths {
            let dir = if p.is_dir() {
                p.as_path()
            } else {
                match p.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d,
                    _ => Path::new("."),
                }
            };
            locks.extend(crate::ops::repair::apply::lock_partition(dir, self.wait)?);
        }
        crate::ops::repair::apply::pause("locked");
        Ok(locks)
    }

    pub fn apply_options(&self, dir: &Path) -> ApplyOptions {
        ApplyOptions {
            backup: backup_for(self.no_backup, self.backup_dir.as_deref(), dir),
            fail_before_step: None,
            before_step: None,
        }
    }
}

/// `--no-backup`, `--backup-dir DIR`, or the default `<log dir>.kseg-backup/<partition>-<time>`.
fn backup_for(no_backup: bool, backup_dir: Option<&Path>, dir: &Path) -> Backup {
    if no_backup {
        Backup::None
    } else if let Some(d) = backup_dir {
        Backup::Dir(d.to_path_buf())
    } else {
        let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let log_dir = abs.parent().unwrap_or(Path::new("/")).to_path_buf();
        let mut root = log_dir.into_os_string();
        root.push(crate::ops::repair::apply::BACKUP_ROOT_SUFFIX);
        let name = format!(
            "{}-{}",
            abs.file_name().unwrap_or_default().to_string_lossy(),
            wall_clock_ms()
        );
        Backup::Dir(PathBuf::from(root).join(name))
    }
}

pub fn wall_clock_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A value parser for the integer Kafka config `config`: what its `ConfigDef` validator accepts,
/// `min..=max` (`max` is `i32::MAX` for an INT config), refused otherwise in Kafka's words.
pub fn kafka_int<T: TryFrom<i64>>(
    config: &'static str,
    min: i64,
    max: i64,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    move |s| {
        let v: i64 = s
            .parse()
            .map_err(|_| format!("Invalid value {s} for configuration {config}: not an integer"))?;
        kafka_range(config, s, v, min, max)?;
        T::try_from(v).map_err(|_| format!("Invalid value {s} for configuration {config}"))
    }
}

/// A value parser for a ratio Kafka config (`ConfigDef.Range.between(0, 1)`).
pub fn kafka_ratio(
    config: &'static str,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s| {
        let v: f64 = s
            .parse()
            .ok()
            .filter(|v: &f64| !v.is_nan())
            .ok_or_else(|| format!("Invalid value {s} for configuration {config}: not a number"))?;
        kafka_range(config, s, v, 0.0, 1.0).map(|()| v)
    }
}

/// Kafka's `ConfigException` for a value outside `ConfigDef.Range`.
fn kafka_range<N: PartialOrd + std::fmt::Display>(
    config: &str,
    text: &str,
    v: N,
    min: N,
    max: N,
) -> Result<(), String> {
    let bad = |why: String| {
        Err(format!(
            "Invalid value {text} for configuration {config}: {why}"
        ))
    };
    if v < min {
        bad(format!("Value must be at least {min}"))
    } else if v > max {
        bad(format!("Value must be no more than {max}"))
    } else {
        Ok(())
    }
}

/// A value parser for an offset: at least 0.
pub fn offset(s: &str) -> Result<i64, String> {
    match s.parse::<i64>() {
        Ok(v) if v >= 0 => Ok(v),
        Ok(_) => Err(format!("{s} is not an offset: offsets are at least 0")),
        Err(_) => Err(format!("{s} is not an offset (an integer, at least 0)")),
    }
}

/// Every time flag's parser (one place: [`super::time`]).
pub use super::time::parse_now;

/// The partition offsets a simulation starts from, where the log dir's checkpoint files are
/// not to be taken.
#[derive(Debug, Args)]
pub struct OffsetArgs {
    /// Default: the log dir's `log-start-offset-checkpoint`, else the first segment's base.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = offset)]
    pub log_start_offset: Option<i64>,
    /// Default: the log dir's `replication-offset-checkpoint`, else the log end offset.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = offset)]
    pub high_watermark: Option<i64>,
}

/// Dry run: 1 if `files` files would change, saying so on stderr. `--apply`: carries it out
/// and reports the backup.
pub fn finish(
    files: usize,
    repair: &RepairArgs,
    dir: &Path,
    apply: impl FnOnce(&ApplyOptions) -> crate::Result<Option<PathBuf>>,
) -> u8 {
    if files == 0 {
        return EXIT_OK;
    }
    if !repair.apply {
        return would_change(files, "rerun with --apply to make these changes");
    }
    report_applied(apply(&repair.apply_options(dir)))
}

/// The end of a repair over many partitions: the total line (text output), then for a dry run
/// exit status 1 if `files` files would change; with `--apply`, `apply` on each directory that
/// changes, in order. The worst status wins.
pub fn finish_many<'d>(
    code: u8,
    (partitions, changing, files): (usize, &[&'d Path], usize),
    repair: &RepairArgs,
    apply: impl Fn(&'d Path, &ApplyOptions) -> crate::Result<Option<PathBuf>>,
) -> u8 {
    if !repair.json {
        crate::cli::render::outln!(
            "total: {partitions} partition(s), {} with changes, {files} file(s) change",
            changing.len()
        );
    }
    if files == 0 {
        return code;
    }
    if !repair.apply {
        return code.max(would_change(
            files,
            "rerun with --apply to make these changes",
        ));
    }
    changing.iter().fold(code, |code, dir| {
        code.max(report_applied(apply(dir, &repair.apply_options(dir))))
    })
}

/// A dry run's statement of the disk space its `--apply` would take (the backup's bytes on
/// disk, the new files', each file system's free space), on stderr; nothing for an apply or an
/// empty plan.
pub fn note_space(repair: &RepairArgs, dir: &Path, changes: &[crate::ops::repair::apply::Change]) {
    if repair.apply || changes.is_empty() {
        return;
    }
    match crate::ops::repair::apply::space(dir, changes, &repair.apply_options(dir).backup) {
        Ok(s) => super::errln!("{}: --apply would take {s}", dir.display()),
        Err(e) => super::errln!("{}: disk space unknown: {e}", dir.display()),
    }
}

/// A dry run's exit status 1, with how many files would change and what to do next.
pub fn would_change(files: usize, next: &str) -> u8 {
    super::why(&format!(
        "{files} file(s) would change; dry run: nothing was written; {next}"
    ));
    EXIT_FINDINGS
}

/// Says where the backup went (or that there is none) after an `--apply`, or why it failed.
pub fn report_applied(result: crate::Result<Option<PathBuf>>) -> u8 {
    match result {
        Ok(Some(b)) => {
            crate::cli::errln!(
                "applied; the original files and the plan are in {}",
                b.display()
            );
            EXIT_OK
        }
        Ok(None) => {
            crate::cli::errln!("applied (no backup)");
            EXIT_OK
        }
        Err(e) => fail(&e),
    }
}

/// The number of threads `--jobs` asks for.
pub fn jobs(arg: Option<u16>) -> usize {
    arg.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    )
}

/// Writes the salvage of `plan` to `out` and says on stderr what it saved; the exit status
/// on failure.
pub fn save_salvage(
    plan: &RecoverPlan,
    opts: &RecoverOptions,
    out: &Path,
) -> Result<SalvageReport, u8> {
    let report = salvage(plan, opts.config, opts.now_ms, out).map_err(|e| fail(&e))?;
    why(&format!(
        "recovery drops {} byte(s): {} valid batch(es) saved, {} range(s) held none; report in {}",
        report.dropped_bytes,
        report.saved_batches(),
        report.unsaved.len(),
        out.join(crate::ops::repair::salvage::SALVAGE_REPORT_FILE_NAME)
            .display()
    ));
    Ok(report)
}
