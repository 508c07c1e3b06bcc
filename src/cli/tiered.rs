//! `kseg tiered PATH --remote URL`: a partition's (or a log dir's) remote tier reconciled with
//! `__remote_log_metadata` and the local log ([`crate::ops::remote`]).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::args::RemoteArgs;
use super::render::{line, print_json_or_text, size};
use super::{exit_for_errors, fail};
use crate::ops::remote::{reconcile, TieredReport};

#[derive(Debug, Args)]
#[command(
    after_help = "Segments come from __remote_log_metadata in the log dir when it holds the \
partition's metadata partition (of the default 50), else from the listing alone. Exit status: 0 \
when nothing is wrong or only warnings (unfinished copies or deletes, orphans, overlaps) were \
found; 1 when errors were (objects the broker would serve are missing or damaged, offsets no tier \
holds); 2 on errors reading the input or the store."
)]
pub struct TieredArgs {
    /// The partition directory or log dir whose remote tier is checked.
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// Also read every remote segment: batch CRCs and framing, offsets against the metadata,
    /// and the offset index's entries.
    #[arg(long)]
    pub deep: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: TieredArgs) -> u8 {
    // Flattened with the read-only commands' flags, hidden here: clap waives a required
    // argument when one it conflicts with is given, so --remote-segment is refused here.
    if !args.remote.remote_segment.is_empty() {
        return fail(
            &"--remote-segment reads a segment alone (dump, verify, …); tiered reconciles a \
              partition's whole remote tier: give --remote",
        );
    }
    let opts = args.remote.tiered_options(args.deep);
    let report = match reconcile(&args.path, &opts) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    if report.partitions.is_empty() {
        return fail(&format!(
            "{}: no partition with a remote tier in {} (nothing to check)",
            args.path.display(),
            report.remote
        ));
    }
    let json = args.json.then_some(&report);
    if let Err(e) = print_json_or_text(json, |out| print_report(out, &report)) {
        return fail(&e);
    }
    exit_for_errors(report.partitions.iter().flat_map(|p| &p.findings))
}

fn print_report(out: &mut impl Write, r: &TieredReport) -> std::io::Result<()> {
    for p in &r.partitions {
        // The offsets the broker serves from the tier: those of segments it does not serve
        // are no part of the log (their gap, if any, is a finding).
        let served: Vec<_> = p.segments.iter().filter(|s| s.served).collect();
        let ends = served.iter().filter_map(|s| s.end_offset).max();
        writeln!(
            out,
            "{}-{}: {} remote segment(s) ({} served), offsets {}..{}, local log start {}, \
             {} orphan object(s) ({}), layout {}",
            p.topic,
            p.partition,
            p.segments.len(),
            served.len(),
            served
                .first()
                .map_or("-".into(), |s| s.start_offset.to_string()),
            ends.map_or("-".into(), |e| e.to_string()),
            p.local_log_start_offset
                .map_or("-".into(), |o| o.to_string()),
            p.orphans.len(),
            size(p.orphan_size),
            r.layout
        )?;
        for f in &p.findings {
            writeln!(out, "  {}", line(f))?;
        }
    }
    Ok(())
}
