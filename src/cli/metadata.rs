//! `kseg metadata PATH`: the KRaft metadata image at the log end, an offset or a time, as a
//! tree or JSON; `--diff A B` between two points; `--check` for records the controller refuses.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::render::line;
use super::render::print_json_or_text;
use super::time::{parse_now, TimeArgs, TimeFormat};
use super::{exit_for_errors, fail, notice};
use crate::ops::inspect::metadata::{diff, load, replayed, Change, Entry, MetadataReport, Point};

#[derive(Debug, Args)]
#[command(
    after_help = "The image is built as the controller builds it: the newest snapshot \
(.checkpoint) at or before the point, then the log's records from the snapshot's end up to the \
point; records of a metadata transaction count once it ends. An offset N means the records with \
offsets below N (what a snapshot named N-….checkpoint holds); a time T, those written at or \
before T. Exit status: 0; 1 with --check when a record is one the controller refuses on replay \
(or the log has damage); 2 on bad input."
)]
pub struct MetadataArgs {
    /// A KRaft log dir, or its `__cluster_metadata-0` directory.
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
    /// The image after the records with offsets below OFFSET (default: the log end).
    #[arg(long, value_name = "OFFSET", conflicts_with_all = ["time", "diff"])]
    pub at: Option<i64>,
    /// The image after the records written at or before T: epoch ms, RFC 3339, a local
    /// date-time or relative (`-1h`).
    #[arg(long, value_name = "T", value_parser = parse_now, allow_hyphen_values = true,
          conflicts_with = "diff")]
    pub time: Option<i64>,
    /// What changed between two points, each an offset, `end`, or a time (RFC 3339, a local
    /// date-time, relative; a bare number is an offset).
    #[arg(long, num_args = 2, value_names = ["A", "B"], value_parser = parse_point,
          allow_hyphen_values = true)]
    pub diff: Option<Vec<Point>>,
    /// Report the records the controller refuses on replay (unknown topic ids, unregistered
    /// brokers, mismatched broker epochs) and references to brokers never registered; exit
    /// status 1 on the refused ones.
    #[arg(long)]
    pub check: bool,
    /// Print JSON instead of the tree (with every finding, whether --check is given or not).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub time_format: TimeArgs,
}

fn parse_point(s: &str) -> Result<Point, String> {
    if s == "end" {
        return Ok(Point::End);
    }
    if let Ok(n) = s.parse::<i64>() {
        return if n >= 0 {
            Ok(Point::Offset(n))
        } else {
            Err(format!("`{s}`: an offset is 0 or more"))
        };
    }
    parse_now(s).map(Point::Time)
}

pub fn run(args: MetadataArgs) -> u8 {
    if args.at.is_some_and(|n| n < 0) {
        return fail(&"--at: an offset is 0 or more");
    }
    let tf = args.time_format.time_format;
    if let Some(points) = &args.diff {
        let (a, b) = match (load(&args.path, points[0]), load(&args.path, points[1])) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => return fail(&e),
        };
        let changes = diff(&a.image, &b.image);
        let json = args.json.then(|| {
            serde_json::json!({
                "dir": crate::format::os_path::escaped(&b.dir),
                "fromOffset": a.offset,
                "toOffset": b.offset,
                "changes": changes,
                "findings": a.findings.iter().chain(&b.findings).collect::<Vec<_>>(),
            })
        });
        if let Err(e) = print_json_or_text(json.as_ref(), |out| print_diff(out, &a, &b, &changes)) {
            return fail(&e);
        }
        return finish(&args, &[&a, &b]);
    }
    let point = match (args.at, args.time) {
        (Some(n), _) => Point::Offset(n),
        (None, Some(t)) => Point::Time(t),
        (None, None) => Point::End,
    };
    let report = match load(&args.path, point) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let json = args.json.then_some(&report);
    if let Err(e) = print_json_or_text(json.as_ref(), |out| {
        print_source(out, &report, tf)?;
        print_tree(out, &report.image.entries())?;
        if args.check {
            for f in &report.findings {
                writeln!(out, "{}", line(f))?;
            }
        }
        Ok(())
    }) {
        return fail(&e);
    }
    finish(&args, &[&report])
}

/// What the image leaves out whatever the mode: records missing from disk, a transaction
/// still open at the point, a time only the snapshots place.
const ALWAYS_SAID: [&str; 3] = [
    "metadata.gap",
    "metadata.open-transaction",
    "metadata.time-approximate",
];

/// Damage met on the walk and [`ALWAYS_SAID`] are said on stderr whatever the mode; with
/// --check every finding is printed and decides the exit status.
fn finish(args: &MetadataArgs, reports: &[&MetadataReport]) -> u8 {
    let all = || reports.iter().flat_map(|r| &r.findings);
    if args.check {
        return exit_for_errors(all());
    }
    for f in all().filter(|f| !replayed(f) || ALWAYS_SAID.contains(&f.check)) {
        notice(&line(f));
    }
    exit_for_errors(all().filter(|f| !replayed(f)))
}

fn print_source(out: &mut impl Write, r: &MetadataReport, tf: TimeFormat) -> std::io::Result<()> {
    let snapshot = r.snapshot.as_ref().map_or("no snapshot".to_owned(), |s| {
        format!(
            "snapshot {}",
            s.file_name().unwrap_or_default().to_string_lossy()
        )
    });
    let last = r.last_record_timestamp.map_or(String::new(), |t| {
        format!(", last record written {}", tf.show(t))
    });
    writeln!(
        out,
        "{} before offset {} ({snapshot}{last})",
        r.dir.display(),
        r.offset
    )
}

/// The leaves as an indented tree: a path component is printed once, where it starts.
fn print_tree(out: &mut impl Write, entries: &[Entry]) -> std::io::Result<()> {
    let mut prev: &[String] = &[];
    for (path, value) in entries {
        let (leaf, parents) = path.split_last().expect("a path has a leaf");
        let shared = parents.iter().zip(prev).take_while(|(a, b)| a == b).count();
        for (depth, p) in parents.iter().enumerate().skip(shared) {
            writeln!(out, "{:width$}{p}", "", width = 2 * depth)?;
        }
        let indent = 2 * parents.len();
        if value.is_empty() {
            writeln!(out, "{:indent$}{leaf}", "")?;
        } else {
            writeln!(out, "{:indent$}{leaf}: {value}", "")?;
        }
        prev = parents;
    }
    Ok(())
}

fn print_diff(
    out: &mut impl Write,
    a: &MetadataReport,
    b: &MetadataReport,
    changes: &[Change],
) -> std::io::Result<()> {
    writeln!(
        out,
        "{}: from before offset {} to before offset {}",
        b.dir.display(),
        a.offset,
        b.offset
    )?;
    let leaf = |path: &str, v: &str| {
        if v.is_empty() {
            path.to_owned()
        } else {
            format!("{path}: {v}")
        }
    };
    for c in changes {
        match (&c.before, &c.after) {
            (None, Some(v)) => writeln!(out, "+ {}", leaf(&c.path, v))?,
            (Some(v), None) => writeln!(out, "- {}", leaf(&c.path, v))?,
            (Some(old), Some(new)) => writeln!(out, "~ {}: {old} -> {new}", c.path)?,
            (None, None) => {}
        }
    }
    writeln!(out, "{} change(s)", changes.len())
}
