//! The flag sets several subcommands share, each defined once and flattened into them:
//! [`RepairArgs`] for every command that changes files (`rebuild-index`, `recover`,
//! `retention`, `compact`), [`OffsetArgs`] for the simulations' partition offsets; and what
//! those commands do with them (the backup, the clock, the dry run's exit status).

use std::path::{Path, PathBuf};

use clap::Args;

use super::progress::{Bar, Counting};
use super::{fail, EXIT_FINDINGS, EXIT_OK};
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::ops::repair::apply::{ApplyOptions, Backup};
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
    /// Print the plan or report as JSON.
    #[arg(long)]
    pub json: bool,
    /// List every file change of a plan (by default a long plan lists 20 and counts the rest).
    #[arg(long, short)]
    pub verbose: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// The broker clock, in epoch milliseconds or RFC 3339: what retention.ms, the cleaner's
    /// lags and delete horizon and producer.id.expiration.ms (producers idle that long are
    /// dropped) are measured against. Default: now.
    #[arg(long, value_name = "MS|RFC3339", value_parser = parse_now)]
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

/// Epoch milliseconds, or RFC 3339 (`2024-10-27T03:33:20Z`, `…20.5+02:00`).
pub fn parse_now(s: &str) -> Result<i64, String> {
    if let Ok(ms) = s.parse::<i64>() {
        return Ok(ms);
    }
    let bad = || format!("`{s}` is neither epoch milliseconds nor an RFC 3339 time");
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return Err(bad());
    }
    let num =
        |r: std::ops::Range<usize>| s.get(r).and_then(|t| t.parse::<i64>().ok()).ok_or_else(bad);
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &s[19..];
    let mut millis = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        let f = &frac[..digits];
        millis = format!("{f:0<3}")[..3].parse::<i64>().map_err(|_| bad())?;
        rest = &frac[digits..];
    }
    let offset_min = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && matches!(&rest[..1], "+" | "-") && &rest[3..4] == ":" => {
            let m = rest[1..3].parse::<i64>().map_err(|_| bad())? * 60
                + rest[4..6].parse::<i64>().map_err(|_| bad())?;
            if rest.starts_with('-') {
                -m
            } else {
                m
            }
        }
        _ => return Err(bad()),
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return Err(bad());
    }
    // Days from the civil date (proleptic Gregorian), Howard Hinnant's algorithm.
    let y2 = if mo <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * ((mo + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Ok(((days * 24 + h) * 60 + mi - offset_min) * 60_000 + sec * 1000 + millis)
}

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

#[cfg(test)]
mod tests {
    use super::parse_now;

    #[test]
    fn now_in_millis_or_rfc3339() {
        assert_eq!(parse_now("1730000000000"), Ok(1_730_000_000_000));
        assert_eq!(parse_now("2024-10-27T03:33:20Z"), Ok(1_730_000_000_000));
        assert_eq!(
            parse_now("2024-10-27T05:33:20.5+02:00"),
            Ok(1_730_000_000_500)
        );
        assert!(parse_now("yesterday").is_err());
    }
}
