//! The flag sets several subcommands share, each defined once and flattened into them:
//! [`RepairArgs`] for every command that changes files (`rebuild-index`, `recover`,
//! `retention`, `compact`), [`OffsetArgs`] for the simulations' partition offsets,
//! [`SelectArgs`] for the records `dump` and `export` take; and what
//! those commands do with them (the backup, the clock, the dry run's exit status, `--jobs`,
//! the salvage `salvage` and `recover --salvage` both write).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use super::progress::{Bar, Counting};
use super::{fail, why, EXIT_FINDINGS, EXIT_OK};
use crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::format::payload::{AvroSchemas, PayloadDecoder, ProtoSchemas};
use crate::ops::finding::{count_by_check, Severity};
use crate::ops::inspect::dump::OffsetRange;
use crate::ops::inspect::dump::{load_avro_schemas, load_proto_schemas};
use crate::ops::remote::RemoteShown;
use crate::ops::repair::apply::{ApplyOptions, Backup, PartitionLock};
use crate::ops::repair::recover::{RecoverOptions, RecoverPlan};
use crate::ops::repair::salvage::{salvage, SalvageReport};
use crate::storage::producer_state::DEFAULT_PRODUCER_ID_EXPIRATION_MS;
use crate::storage::read::{HeaderMatch, RecordFilter};
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

/// A dry run's statement of the disk space its `--apply` would take, on stderr: one line per
/// file system touched (the backups' bytes on disk and the new files' there, summed over the
/// partitions, and its free space); nothing for an apply or empty plans.
pub fn note_space(repair: &RepairArgs, applies: &[(&Path, &[crate::ops::repair::apply::Change])]) {
    if repair.apply || applies.iter().all(|(_, changes)| changes.is_empty()) {
        return;
    }
    let backups: Vec<_> = applies
        .iter()
        .map(|(dir, _)| repair.apply_options(dir).backup)
        .collect();
    let all = applies
        .iter()
        .zip(&backups)
        .map(|((dir, changes), backup)| (*dir, *changes, backup));
    match crate::ops::repair::apply::space(all) {
        Ok(filesystems) => {
            let size = super::render::size;
            for fs in &filesystems {
                super::errln!(
                    "{}: --apply would take {} on this file system (backup {} on disk, new files {}), {} free",
                    fs.dir.display(),
                    size(fs.needed()),
                    size(fs.backup_bytes),
                    size(fs.new_bytes),
                    size(fs.free)
                );
            }
        }
        Err(e) => super::errln!("disk space --apply would take unknown: {e}"),
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

/// Where a partition's remote tier is (tiered storage): `--remote` (or, on the read-only
/// commands, `--remote-segment`), `--remote-endpoint`, `--remote-layout`, one meaning for every
/// command that takes them.
#[derive(Debug, Clone, Args)]
#[command(group = clap::ArgGroup::new("remote_source").args(["remote", "remote_segment"]).multiple(false))]
pub struct RemoteArgs {
    /// The remote storage root holding the topic-partition directories or prefixes:
    /// s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX], file:///DIR or a
    /// local directory (for Kafka's LocalTieredStorage its kafka-tiered-storage directory, or
    /// its parent). Credentials come from the standard AWS_*, GOOGLE_* and AZURE_* environment
    /// variables.
    // Optional here, so that the read-only commands can flatten `Option<RemoteArgs>` (clap
    // would require it of them too); `tiered` makes it required (`manual::command`).
    #[arg(long, value_name = "URL")]
    pub remote: Option<String>,
    /// One remote segment, read alone with no local partition directory (PATH not needed): the
    /// URL (or local path) of its .log object, in Kafka's LocalTieredStorage layout
    /// (…/TOPIC-PARTITION-TOPICID/START-SEGMENTID.log) or Aiven's
    /// (…/TOPIC-TOPICID/PARTITION/START-SEGMENTID.log); its other objects (indexes, manifest)
    /// are those of the same START-SEGMENTID beside it. It is read as the .log of its start
    /// offset in a partition directory named TOPIC-PARTITION. Repeat for more segments.
    #[arg(long, value_name = "URL")]
    pub remote_segment: Vec<String>,
    /// The URL of an S3-compatible server (http:// allowed), instead of AWS's; with gs://, of
    /// a GCS-compatible server, reached without OAuth.
    #[arg(long, value_name = "URL", requires = "remote_source")]
    pub remote_endpoint: Option<String>,
    /// How the objects are laid out (default: detected from the objects' names).
    #[arg(long, value_name = "LAYOUT", requires = "remote_source", value_parser = clap::builder::PossibleValuesParser::new(crate::storage::tiered::LAYOUTS))]
    pub remote_layout: Option<String>,
    /// A private key (PEM, PKCS#8 or PKCS#1) that unwraps encrypted Aiven segments' data keys;
    /// repeat for a key ring. ID= names the key pair id it answers to (the plugin's
    /// encryption.key.pairs.ID); without it the key is tried for any id.
    #[arg(long, value_name = "[ID=]FILE.pem", value_parser = key_file)]
    pub remote_key: Vec<(Option<String>, PathBuf)>,
    /// Bytes per ranged read of a remote object [default: 16777216]. Memory per object read:
    /// at most this times (--remote-requests + 1).
    #[arg(long, value_name = "BYTES", requires = "remote_source",
          value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    pub remote_chunk_bytes: Option<u64>,
    /// Ranged reads started ahead of the one being worked on, reading an object forward
    /// [default: 2]; 0 reads one range at a time.
    #[arg(long, value_name = "N", requires = "remote_source",
          value_parser = clap::value_parser!(u64).range(0..=64))]
    pub remote_requests: Option<u64>,
}

/// `[ID=]FILE.pem`: a key file and the key pair id it is configured under (the text before the
/// first `=`, when it holds no `/`).
pub fn key_file(s: &str) -> Result<(Option<String>, PathBuf), String> {
    let (id, file) = match s.split_once('=') {
        Some((id, file)) if !id.is_empty() && !id.contains('/') => (Some(id.to_string()), file),
        _ => (None, s),
    };
    if file.is_empty() {
        return Err(format!("{s:?}: expected [ID=]FILE.pem"));
    }
    Ok((id, PathBuf::from(file)))
}

impl RemoteArgs {
    pub fn options(&self) -> crate::storage::store::RemoteOptions {
        let default = crate::storage::store::ReadAhead::default();
        crate::storage::store::RemoteOptions {
            endpoint: self.remote_endpoint.clone(),
            read_ahead: crate::storage::store::ReadAhead {
                chunk_bytes: self.remote_chunk_bytes.unwrap_or(default.chunk_bytes),
                requests: self
                    .remote_requests
                    .map_or(default.requests, |n| n as usize),
            },
        }
    }

    /// What the library is asked about the store.
    pub fn tiered_options(&self, deep: bool) -> crate::ops::remote::TieredOptions {
        crate::ops::remote::TieredOptions {
            remote: self.remote.clone().unwrap_or_default(),
            store: self.options(),
            layout: self.remote_layout.clone(),
            deep,
            keys: self.remote_key.clone(),
        }
    }
}

/// The paths a read-only command reads, its remote tier shown in them first (flattened as
/// `Option<RemoteArgs>`): with `--remote`, the remote segments of the partitions `paths` name,
/// shown under their local logs (one log, as the broker serves it); with `--remote-segment`,
/// `paths` followed by the directory each named segment is shown in (one per partition).
/// The errors reconciling the tier finds are counted in a notice (`verify` reports each:
/// [`show_remote_checked`]). Err: the exit status, the error printed.
pub fn show_remote(remote: Option<&RemoteArgs>, paths: &[PathBuf]) -> Result<Vec<PathBuf>, u8> {
    let (paths, shown) = shown(remote, paths, false)?;
    let url = remote.and_then(|r| r.remote.as_deref()).unwrap_or_default();
    for (dir, findings) in shown.iter().flat_map(|s| &s.tier_findings) {
        let errors: Vec<&'static str> = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.check)
            .collect();
        if !errors.is_empty() {
            super::notice(&format!(
                "{}: the remote tier in {url} has {} error(s) ({}), which `kseg verify --remote` \
                 and `kseg tiered --deep` report",
                dir.display(),
                errors.len(),
                count_by_check(errors)
            ));
        }
    }
    Ok(paths)
}

/// [`show_remote`] for a command that reports what reconciling each partition's tier finds:
/// returned, not counted, and a segment the broker serves whose objects are gone is one of
/// those findings, not an error.
pub fn show_remote_checked(
    remote: Option<&RemoteArgs>,
    paths: &[PathBuf],
) -> Result<(Vec<PathBuf>, Vec<RemoteShown>), u8> {
    shown(remote, paths, true)
}

/// [`show_remote`]'s showing, and the notices every command gives.
fn shown(
    remote: Option<&RemoteArgs>,
    paths: &[PathBuf],
    checked: bool,
) -> Result<(Vec<PathBuf>, Vec<RemoteShown>), u8> {
    let mut paths = paths.to_vec();
    let Some(remote) = remote else {
        return Ok((paths, Vec::new()));
    };
    let opts = remote.tiered_options(false);
    let mut all = Vec::new();
    if let Some(url) = &remote.remote {
        for path in &paths {
            let shown =
                crate::ops::remote::show_remote(path, &opts, checked).map_err(|e| fail(&e))?;
            for (dir, why) in &shown.listed_alone {
                super::notice(&format!(
                    "{}: {why}: its remote segments are those {url} lists, each read as served",
                    dir.display()
                ));
            }
            if shown.segments == 0 && shown.unread == 0 {
                super::notice(&format!(
                    "{}: no remote segment in {url} below the local log: the local log alone is \
                     read",
                    path.display(),
                ));
            }
            all.push(shown);
        }
    }
    for url in &remote.remote_segment {
        let dir = crate::ops::remote::show_segment(url, &opts).map_err(|e| fail(&e))?;
        if !paths.contains(&dir) {
            paths.push(dir);
        }
    }
    Ok((paths, all))
}

/// The one path of a command that reads one partition or log dir: PATH, or the directory the
/// `--remote-segment`s are shown in ([`show_remote`]). Err: the exit status, the error printed.
pub fn one_path(remote: Option<&RemoteArgs>, path: Option<&Path>) -> Result<PathBuf, u8> {
    let named: Vec<PathBuf> = path.map(Path::to_path_buf).into_iter().collect();
    match &show_remote(remote, &named)?[..] {
        [one] => Ok(one.clone()),
        [] => Err(fail(
            &"no PATH given (a partition directory or a log dir, or --remote-segment)",
        )),
        more => Err(fail(&format!(
            "{} partitions named ({}): this command reads one (--remote-segment URLs of one \
             partition, or PATH)",
            more.len(),
            more.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Which records `dump` and `export` take: offset and time ranges, isolation, key, header and
/// batch filters. Range flags work on partition directories and log dirs (they seek through
/// the indexes).
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// Partition directories or log dirs: only the batch holding offset N (the next batch
    /// after a gap, as a fetch), found through the indexes; with --deep-iteration, its record N.
    #[arg(long, value_name = "N", value_parser = offset,
          conflicts_with_all = ["from_offset", "to_offset"])]
    pub offset: Option<i64>,
    /// Partition directories or log dirs: start at the batch holding offset A, found through
    /// the indexes (records below A are not shown).
    #[arg(long, value_name = "A", value_parser = offset)]
    pub from_offset: Option<i64>,
    /// Partition directories or log dirs: stop after offset B.
    #[arg(long, value_name = "B", value_parser = offset)]
    pub to_offset: Option<i64>,
    /// Partition directories or log dirs: show at most N records (with --deep-iteration) or
    /// batches.
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// Partition directories or log dirs: start at the offset ListOffsets returns for time T
    /// (epoch ms, RFC 3339, local `2016-11-18 08:05`, `-1h`): the first record stamped at or
    /// after T, as the broker searches.
    #[arg(long, value_name = "T", value_parser = parse_now, allow_hyphen_values = true)]
    pub from_time: Option<i64>,
    /// Partition directories or log dirs: stop before the first record stamped after T2 (as
    /// the broker's search for T2 + 1 finds it); later records with earlier stamps are not shown.
    #[arg(long, value_name = "T2", value_parser = parse_now, allow_hyphen_values = true)]
    pub to_time: Option<i64>,
    /// `read_committed`: partition directories or log dirs, only what such a consumer gets
    /// (below the last stable offset; aborted transactions, from the `.txnindex` files, and
    /// control batches left out). `read_uncommitted` (the default): everything.
    #[arg(long, value_enum, value_name = "LEVEL", default_value_t = Isolation::ReadUncommitted)]
    pub isolation: Isolation,
    /// Only records with this key (UTF-8 text; hex with --key-hex).
    #[arg(long, value_name = "K")]
    pub key: Option<String>,
    /// --key is hex (`00ff…`), for binary keys.
    #[arg(long, requires = "key")]
    pub key_hex: bool,
    /// Only records whose key matches this regular expression (on the key's bytes; anchor it
    /// with ^…$ to match the whole key).
    #[arg(long, value_name = "RE", value_parser = key_regex)]
    pub key_regex: Option<regex::bytes::Regex>,
    /// Only records with this header (and this value); repeat for several (all must be there).
    #[arg(long, value_name = "NAME[=VALUE]", value_parser = header_match)]
    pub header: Vec<HeaderMatch>,
    /// Only records of batches from this producer id.
    #[arg(long, value_name = "ID")]
    pub producer_id: Option<i64>,
    /// Only records of batches with this producer epoch.
    #[arg(long, value_name = "EPOCH")]
    pub producer_epoch: Option<i16>,
    /// Only records of batches with this partition leader epoch.
    #[arg(long, value_name = "EPOCH")]
    pub leader_epoch: Option<i32>,
    /// Only records of transactional batches.
    #[arg(long)]
    pub transactional: bool,
    /// Only control records (transaction markers).
    #[arg(long)]
    pub control: bool,
    /// Only tombstones (records without a value).
    #[arg(long)]
    pub tombstones: bool,
}

/// `--isolation`, as the consumer's `isolation.level` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Isolation {
    #[value(name = "read_uncommitted")]
    ReadUncommitted,
    #[value(name = "read_committed")]
    ReadCommitted,
}

fn key_regex(s: &str) -> Result<regex::bytes::Regex, String> {
    regex::bytes::Regex::new(s).map_err(|e| e.to_string())
}

fn header_match(s: &str) -> Result<HeaderMatch, String> {
    let (name, value) = match s.split_once('=') {
        Some((n, v)) => (n, Some(v.as_bytes().to_vec())),
        None => (s, None),
    };
    if name.is_empty() {
        return Err(format!("`{s}`: a header name is needed before `=`"));
    }
    Ok(HeaderMatch {
        name: name.to_owned(),
        value,
    })
}

impl SelectArgs {
    /// The offset range the seek flags ask for, if any.
    pub fn range(&self) -> Option<OffsetRange> {
        let read_committed = self.isolation == Isolation::ReadCommitted;
        if self.offset.is_none()
            && self.from_offset.is_none()
            && self.to_offset.is_none()
            && self.count.is_none()
            && self.from_time.is_none()
            && self.to_time.is_none()
            && !read_committed
        {
            return None;
        }
        Some(OffsetRange {
            from: self.offset.or(self.from_offset).unwrap_or(0),
            to: self.offset.or(self.to_offset),
            count: self.count,
            from_time: self.from_time,
            to_time: self.to_time,
            read_committed,
        })
    }

    /// The record filters the flags ask for.
    pub fn filter(&self) -> Result<RecordFilter, String> {
        let key = match (&self.key, self.key_hex) {
            (None, _) => None,
            (Some(k), false) => Some(k.as_bytes().to_vec()),
            (Some(k), true) => {
                Some(crate::format::decode_hex(k).map_err(|e| format!("--key {k}: {e}"))?)
            }
        };
        Ok(RecordFilter {
            key,
            key_regex: self.key_regex.clone(),
            headers: self.header.clone(),
            producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            leader_epoch: self.leader_epoch,
            transactional: self.transactional,
            control: self.control,
            tombstones: self.tombstones,
        })
    }

    /// A reversed range asks for nothing: bad input, not an empty success.
    pub fn check_order(&self) -> Result<(), String> {
        let bounds = [
            ("offset", self.from_offset, self.to_offset),
            ("time", self.from_time, self.to_time),
        ];
        for (what, from, to) in bounds {
            if let (Some(from), Some(to)) = (from, to) {
                if from > to {
                    return Err(format!(
                        "--from-{what} {from} is after --to-{what} {to}: the range is empty"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The key and value decoders `dump` prints with and `export` turns into typed columns, and
/// the local schemas of the avro and protobuf ones.
#[derive(Debug, Clone, Args)]
pub struct PayloadArgs {
    /// Decode keys: dump prints them decoded (implies --print-data-log; a key that does not
    /// decode prints as hex with the reason), export adds the decodedKey column
    #[arg(long, value_enum, value_name = "DECODER")]
    pub key_decoder: Option<DecoderName>,
    /// Decode values (dump: implies --print-data-log; export: the decodedValue column); as
    /// --key-decoder
    #[arg(long, value_enum, value_name = "DECODER")]
    pub value_decoder: Option<DecoderName>,
    /// For the avro and protobuf decoders: a directory of the writer schemas of the Confluent
    /// wire format's schema ids, `<id>.avsc` (Avro), `<id>.desc` (a Protobuf descriptor set,
    /// `protoc --include_imports --descriptor_set_out`) or `<id>.proto` (imports resolved in
    /// the directory); other files are ignored
    #[arg(long, value_name = "DIR", conflicts_with = "avro_schema")]
    pub schema_dir: Option<PathBuf>,
    /// For the avro decoder: one writer schema (`.avsc`) for plain Avro, without the prefix
    #[arg(long, value_name = "FILE")]
    pub avro_schema: Option<PathBuf>,
    /// For the protobuf decoder: the schema of plain Protobuf values, without the prefix (a
    /// descriptor set or a `.proto` file), with --proto-message
    #[arg(long, value_name = "FILE", requires = "proto_message")]
    pub proto_descriptor: Option<PathBuf>,
    /// For the protobuf decoder: the message type of plain values (`package.Message`)
    #[arg(long, value_name = "NAME", requires = "proto_descriptor")]
    pub proto_message: Option<String>,
}

/// kseg's own key and value decoders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DecoderName {
    /// UTF-8 text, malformed sequences replaced (kafka-dump-log's StringDecoder)
    String,
    /// Big-endian int32 of the first 4 bytes (IntegerDecoder)
    Int,
    /// Big-endian int64 of the first 8 bytes (LongDecoder)
    Long,
    Hex,
    Base64,
    /// A JSON document, printed compactly (nested as JSON in --json output)
    Json,
    /// Avro in the Confluent wire format (magic byte 0, 4-byte schema id) against the
    /// `<id>.avsc` files of --schema-dir, or plain Avro with --avro-schema
    Avro,
    /// Protobuf in the Confluent wire format (magic byte 0, 4-byte schema id, message indexes)
    /// against the `<id>.desc` / `<id>.proto` files of --schema-dir, or plain Protobuf with
    /// --proto-descriptor and --proto-message; printed as protobuf's canonical JSON
    Protobuf,
}

/// The local schemas the avro and protobuf decoders read, loaded when a side uses them.
#[derive(Default)]
pub struct Schemas {
    avro: Option<Arc<AvroSchemas>>,
    proto: Option<Arc<ProtoSchemas>>,
}

impl PayloadArgs {
    pub fn schemas(&self) -> crate::error::Result<Schemas> {
        let uses = |d| self.key_decoder == Some(d) || self.value_decoder == Some(d);
        let dir = self.schema_dir.as_deref();
        let mut out = Schemas::default();
        if uses(DecoderName::Avro) && (dir.is_some() || self.avro_schema.is_some()) {
            out.avro = Some(Arc::new(load_avro_schemas(
                dir,
                self.avro_schema.as_deref(),
            )?));
        }
        if uses(DecoderName::Protobuf) && (dir.is_some() || self.proto_descriptor.is_some()) {
            let proto = load_proto_schemas(
                dir,
                self.proto_descriptor.as_deref(),
                self.proto_message.as_deref(),
            )?;
            out.proto = Some(Arc::new(proto));
        }
        Ok(out)
    }
}

impl DecoderName {
    pub fn decoder(self, schemas: &Schemas) -> Result<PayloadDecoder, String> {
        Ok(match self {
            DecoderName::String => PayloadDecoder::String,
            DecoderName::Int => PayloadDecoder::Int,
            DecoderName::Long => PayloadDecoder::Long,
            DecoderName::Hex => PayloadDecoder::Hex,
            DecoderName::Base64 => PayloadDecoder::Base64,
            DecoderName::Json => PayloadDecoder::Json,
            DecoderName::Avro => PayloadDecoder::Avro(
                schemas
                    .avro
                    .clone()
                    .ok_or("the avro decoder needs --schema-dir or --avro-schema")?,
            ),
            DecoderName::Protobuf => PayloadDecoder::Protobuf(schemas.proto.clone().ok_or(
                "the protobuf decoder needs --schema-dir, or --proto-descriptor with --proto-message",
            )?),
        })
    }
}
