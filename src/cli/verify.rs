//! `kseg verify`: a table per partition (or `--json`, or GitHub Actions annotations), exit
//! status 0 when no error was found, 1 when errors were (warnings too with `--strict`), 2 when
//! it could not run.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::args::BatchLimitArgs;
use super::progress::{bytes_below, Bar, Counting};
use super::render::{line, opt, quiet_broken_pipe, severity, size, table, write_document, Fit};
use super::{fail, EXIT_FAILURE, EXIT_FINDINGS, EXIT_OK};
use crate::ops::check::verify::{verify_paths, Report, VerifyOptions};
use crate::ops::finding::count_by_check;
use crate::ops::finding::{Finding, Severity};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// A summary table per partition, then each finding.
    Table,
    /// The same with the table as tab-separated values and a header line (what `--tsv`
    /// gives).
    Tsv,
    /// The full report as one JSON document (schema in schemas/, keys in docs/json.md).
    Json,
    /// GitHub Actions workflow commands (`::error file=…::…`), one per finding.
    Github,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Segment files, partition directories, or log dirs (directories of partitions).
    #[arg(value_name = "PATH", required_unless_present = "remote_segment")]
    pub paths: Vec<PathBuf>,
    /// The remote tier of the partitions named (tiered storage): its segments below the local
    /// log are read with it as one log, as the broker serves it.
    #[command(flatten)]
    pub remote: Option<super::args::RemoteArgs>,
    /// Decode every record (decompressing), not only batch headers.
    #[arg(long)]
    pub deep: bool,
    /// Short for --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Warnings make the exit status 1 too.
    #[arg(long)]
    pub strict: bool,
    /// The offset of a segment file whose name carries none (an index renamed without its
    /// log); a renamed log's is its first batch's.
    #[arg(long, value_name = "OFFSET")]
    pub base_offset: Option<i64>,
    #[command(flatten)]
    pub batch_limit: BatchLimitArgs,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(mut args: VerifyArgs) -> u8 {
    args.paths = match super::log_dirs_named(&args.paths, false) {
        Ok(p) => p,
        Err(code) => return code,
    };
    // What reconciling the remote tier finds is part of the report: a gap or a segment cut
    // short is in no batch read.
    let tier = match super::args::show_remote_checked(args.remote.as_ref(), &args.paths) {
        Ok((paths, shown)) => {
            args.paths = paths;
            shown
        }
        Err(code) => return code,
    };
    let bar = Bar::new(
        args.quiet,
        "verifying",
        Some(bytes_below(&args.paths)),
        Counting::Read,
    );
    let opts = VerifyOptions {
        deep: args.deep,
        base_offset: args.base_offset,
        max_batch_bytes: args.batch_limit.max_batch_bytes,
    };
    // Verify counts each file as it finishes checking it (the bytes the report counts).
    let report = verify_paths(&args.paths, &opts, &|n| bar.inc(n));
    bar.finish();
    let mut report = match report {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    for (dir, findings) in tier.into_iter().flat_map(|s| s.tier_findings) {
        report.findings_of(Some(&dir)).extend(findings);
    }
    let format = if args.json {
        OutputFormat::Json
    } else {
        args.format
    };
    let mut out = std::io::stdout().lock();
    let written = match format {
        OutputFormat::Table => print_table(&mut out, &report, false),
        OutputFormat::Tsv => print_table(&mut out, &report, true),
        OutputFormat::Json => write_document(&mut out, &report),
        OutputFormat::Github => report
            .findings()
            .try_for_each(|f| writeln!(out, "{}", github(f))),
    };
    if let Err(e) = quiet_broken_pipe(written) {
        return fail(&e);
    }
    let errors = report.count(Severity::Error);
    let warnings = report.count(Severity::Warning);
    if super::skipped(&args.paths, &report.skipped) {
        EXIT_FAILURE
    } else if errors > 0 || (args.strict && warnings > 0) {
        let counted = |s: Severity| {
            count_by_check(
                report
                    .findings()
                    .filter(|f| f.severity == s)
                    .map(|f| f.check),
            )
        };
        let mut why = format!("{errors} error(s)");
        if errors > 0 {
            why += &format!(": {}", counted(Severity::Error));
        }
        if args.strict && warnings > 0 {
            why += &format!(
                "; {warnings} warning(s) (--strict): {}",
                counted(Severity::Warning)
            );
        }
        super::why(&why);
        EXIT_FINDINGS
    } else if report.files_checked == 0 {
        // Only files known by name (leftovers, markers): nothing examined is no success.
        fail(&format!(
            "no file read: {} known by name only (leftovers and markers are not checked; `kseg dump` reads a leftover as the file it was)",
            report.classified.len()
        ))
    } else {
        EXIT_OK
    }
}

/// The summary table (tab-separated with `tsv`, else as `--tsv` and the width say), the
/// findings, the skipped paths and the totals.
fn print_table(out: &mut impl Write, report: &Report, tsv: bool) -> std::io::Result<()> {
    let mut t = table([
        "partition",
        "segs",
        "batches",
        "records",
        "bytes",
        "start",
        "end",
        "errors",
        "warns",
    ]);
    for p in &report.partitions {
        let batches: u64 = p.segments.iter().map(|s| s.batches).sum();
        let records: Option<u64> = p.segments.iter().map(|s| s.records).sum();
        let bytes: u64 = p.segments.iter().map(|s| s.bytes).sum();
        let row = [
            p.name(),
            p.segments.len().to_string(),
            batches.to_string(),
            opt(records),
            size(bytes),
            opt(p.log_start_offset),
            opt(p.log_end_offset),
            p.count(Severity::Error).to_string(),
            p.count(Severity::Warning).to_string(),
        ];
        super::render::add_row_aligned(&mut t, row, 1);
    }
    t.fit(Fit::Whole, &[1, 2, 3, 4, 5, 6, 7, 8])
        .fit(Fit::Name, &[0])
        .droppable(&[2, 1, 4, 3]);
    if tsv {
        for l in t.tsv().lines {
            writeln!(out, "{l}")?;
        }
    } else {
        t.print(out)?;
    }
    for f in report.findings() {
        writeln!(out, "{}", line(f))?;
    }
    for p in &report.skipped {
        writeln!(
            out,
            "skipped {}: not a Kafka file kseg can read",
            p.display()
        )?;
    }
    let (e, w) = (
        report.count(Severity::Error),
        report.count(Severity::Warning),
    );
    let classified = match report.classified.len() {
        0 => String::new(),
        n => format!(", {n} known by name only (not read)"),
    };
    writeln!(
        out,
        "{} file(s), {} checked, {} skipped{classified}: {e} error(s), {w} warning(s)",
        report.files_checked,
        size(report.bytes_checked),
        report.skipped.len()
    )
}

/// A GitHub Actions workflow command; properties and message escaped as Actions expects.
fn github(f: &Finding) -> String {
    let esc = |s: &str, prop: bool| {
        let s = s
            .replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A");
        if prop {
            s.replace(':', "%3A").replace(',', "%2C")
        } else {
            s
        }
    };
    let mut msg = f.message.clone();
    if let Some(p) = f.position {
        msg += &format!(" (byte {p})");
    }
    format!(
        "::{} file={},title={}::{}",
        severity(f),
        esc(&f.file.display().to_string(), true),
        esc(f.check, true),
        esc(&msg, false)
    )
}
