//! `kseg ls LOGDIR...`: one line per partition directory of each log dir, from metadata alone.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::render::line;
use super::render::opt;
use super::render::{add_row_aligned, print_json_or_text, size, table, Fit};
use super::time::TimeFormat;
use super::{exit_for_errors, fail};
use crate::ops::inspect::ls::{list_log_dirs, LogDirListing, LsOptions, PartitionListing};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SortKey {
    /// Directory name.
    Name,
    /// Largest first.
    Size,
    /// Most segments first.
    Segments,
    /// Lowest log start offset first.
    StartOffset,
    /// Highest log end offset first.
    EndOffset,
    /// Most recently modified first.
    Modified,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Reads only metadata: sizes and times, the log dir's checkpoints, partition.metadata, \
meta.properties, the KRaft metadata log when there is one, index tails, and the active segment's \
.log from its last index entry (the broker's readNextOffset). Exit status: 0 listed; 1 when an \
error was found (a name the broker rejects, a topic id the metadata does not know, a partition \
not assigned to this broker, ...); 2 on bad input."
)]
pub struct LsArgs {
    /// Log dirs (the directories named in log.dirs).
    #[arg(value_name = "LOGDIR", required = true)]
    pub log_dirs: Vec<PathBuf>,
    /// A `__cluster_metadata-0` directory, or a log dir holding one, to check topic ids and
    /// replica assignments against (default: the log dir's own, when it has one).
    #[arg(long, value_name = "DIR")]
    pub metadata: Option<PathBuf>,
    /// Order of the partitions.
    #[arg(long, value_enum, default_value = "name")]
    pub sort: SortKey,
    /// Print JSON (one document, with every log dir) instead of tables.
    #[arg(long)]
    pub json: bool,
    /// How the table shows times (JSON keeps epoch milliseconds).
    #[arg(long, value_enum, default_value_t = TimeFormat::Rfc3339)]
    pub time_format: TimeFormat,
}

fn sort(parts: &mut [PartitionListing], key: SortKey) {
    let name = |p: &PartitionListing| p.dir.file_name().map(|n| n.to_owned());
    match key {
        SortKey::Name => parts.sort_by_key(name),
        SortKey::Size => parts.sort_by_key(|p| (std::cmp::Reverse(p.size_in_bytes), name(p))),
        SortKey::Segments => parts.sort_by_key(|p| (std::cmp::Reverse(p.segments), name(p))),
        SortKey::StartOffset => parts.sort_by_key(|p| (p.log_start_offset, name(p))),
        SortKey::EndOffset => parts.sort_by_key(|p| (std::cmp::Reverse(p.log_end_offset), name(p))),
        SortKey::Modified => {
            parts.sort_by_key(|p| (std::cmp::Reverse(p.last_modified_ms), name(p)))
        }
    }
}

pub fn run(mut args: LsArgs) -> u8 {
    args.log_dirs = match super::log_dirs_named(&args.log_dirs, false) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let opts = LsOptions {
        metadata: args.metadata.clone(),
    };
    let mut listings = match list_log_dirs(&args.log_dirs, &opts) {
        Ok(l) => l,
        Err(e) => return fail(&e),
    };
    for l in &mut listings {
        sort(&mut l.partitions, args.sort);
    }
    let json = args
        .json
        .then(|| serde_json::json!({ "logDirs": listings }));
    if let Err(e) = print_json_or_text(json.as_ref(), |out| {
        listings
            .iter()
            .try_for_each(|l| print_listing(out, l, args.time_format))
    }) {
        return fail(&e);
    }
    exit_for_errors(listings.iter().flat_map(|l| l.findings()))
}

fn print_listing(out: &mut impl Write, l: &LogDirListing, tf: TimeFormat) -> std::io::Result<()> {
    writeln!(
        out,
        "{} (broker {}{})",
        l.log_dir.display(),
        opt(l.broker_id),
        l.metadata.as_ref().map_or(String::new(), |m| format!(
            ", metadata from {}",
            m.display()
        ))
    )?;
    let mut t = table([
        "directory",
        "state",
        "topic id",
        "bytes",
        "segs",
        "start",
        "end",
        "hw",
        "recovery",
        "cleaner",
        "modified",
        "max timestamp",
        "problems",
    ]);
    for p in &l.partitions {
        let name = p
            .dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let row = [
            name,
            p.state.to_owned(),
            opt(p.topic_id.as_ref()),
            size(p.size_in_bytes),
            p.segments.to_string(),
            opt(p.log_start_offset),
            opt(p.log_end_offset),
            opt(p.high_watermark),
            opt(p.recovery_point),
            opt(p.cleaner_checkpoint),
            p.last_modified_ms.map_or("-".into(), |ms| tf.show(ms)),
            p.max_timestamp.map_or("-".into(), |ms| tf.show(ms)),
            p.findings.len().to_string(),
        ];
        add_row_aligned(&mut t, row, 3);
    }
    // What matters least is left out first (--json has every field).
    t.fit(Fit::Whole, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
        .fit(Fit::Name, &[0])
        .droppable(&[2, 9, 10, 8, 7, 11, 5, 4]);
    t.print(out)?;
    for f in l.findings() {
        writeln!(out, "{}", line(f))?;
    }
    for topic in &l.topics {
        writeln!(
            out,
            "topic {}: {} partition dir(s), {} segment(s), {} bytes",
            topic.topic, topic.totals.partitions, topic.totals.segments, topic.totals.size_in_bytes
        )?;
    }
    writeln!(
        out,
        "log dir {}: {} partition dir(s), {} segment(s), {} bytes",
        l.log_dir.display(),
        l.totals.partitions,
        l.totals.segments,
        l.totals.size_in_bytes
    )
}
