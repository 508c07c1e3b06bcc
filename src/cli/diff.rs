//! `kseg diff A B`: where two replicas of one partition diverge, by the broker's follower
//! truncation and by their batches, and what only one of them has; for two log dirs, each
//! partition's answer on one line.

use std::path::PathBuf;

use clap::Args;

use super::{fail, notice, why, EXIT_FINDINGS, EXIT_OK};
use crate::ops::check::diff::{compare, Comparison, DiffReport, LogDirsDiff};

#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when the two are logically identical (the same batches above \
the same log start offset, the same producer state and aborted transactions; segment \
boundaries do not matter); 1 when they diverge, or reading stopped at damage (what follows \
it is not compared); 2 on errors. Two log dirs (or directories \
of log dirs) are compared partition by partition (one line each: identical, only in A, only \
in B, or where they diverge); 1 when any partition differs or is on one side only. A partition \
directory and a log dir are not compared (2)."
)]
pub struct DiffArgs {
    /// One replica's partition directory, or a broker's log dir.
    #[arg(value_name = "A", required_unless_present = "remote_segment")]
    pub a: Option<PathBuf>,
    /// The other replica's partition directory (the same topic-partition), or log dir.
    #[arg(value_name = "B", required_unless_present = "remote_segment")]
    pub b: Option<PathBuf>,
    /// The remote tier of the partitions named (tiered storage): its segments below the local
    /// log are read with it as one log, as the broker serves it.
    #[command(flatten)]
    pub remote: Option<super::args::RemoteArgs>,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: DiffArgs) -> u8 {
    let named: Vec<PathBuf> = args.a.iter().chain(&args.b).cloned().collect();
    let (a, b) = match super::args::show_remote(args.remote.as_ref(), &named).as_deref() {
        Ok([a, b]) => (a.clone(), b.clone()),
        Ok(other) => {
            return fail(&format!(
                "{} path(s) to compare: diff takes two (A and B, or a partition shown from \
                 --remote-segment URLs in the place of one)",
                other.len()
            ))
        }
        Err(code) => return *code,
    };
    match compare(&a, &b) {
        Ok(Comparison::Partition(report)) => partition(&report, args.json),
        Ok(Comparison::LogDirs(report)) => log_dirs(&report, args.json),
        Err(e) => fail(&e),
    }
}

fn stopped_notice(st: &crate::ops::check::stream::Stopped) {
    notice(&format!(
        "{}: compared up to damage at position {}: {}",
        st.file.display(),
        st.position,
        st.message
    ));
}

/// The exit status of identical sides: damage that stopped the reading is a finding, as what
/// lies after it was not compared.
fn compared_all(damaged: bool) -> u8 {
    if !damaged {
        return EXIT_OK;
    }
    why("identical up to the damage; what follows it was not compared");
    EXIT_FINDINGS
}

fn log_dirs(report: &LogDirsDiff, json: bool) -> u8 {
    for p in &report.partitions {
        p.a_stopped
            .iter()
            .chain(&p.b_stopped)
            .for_each(stopped_notice);
    }
    if json {
        crate::cli::render::outln!("{}", report.to_json());
    } else {
        crate::cli::render::out!("{}", report.render_text());
    }
    let damaged = report
        .partitions
        .iter()
        .any(|p| p.a_stopped.is_some() || p.b_stopped.is_some());
    if report.identical() {
        return compared_all(damaged);
    }
    why(&format!(
        "the log dirs differ: {} partition(s) diverge, {} only in A, {} only in B",
        report.count("diverge"),
        report.count("onlyInA"),
        report.count("onlyInB")
    ));
    EXIT_FINDINGS
}

fn partition(report: &DiffReport, json: bool) -> u8 {
    for s in [&report.a, &report.b] {
        if let Some(st) = &s.stopped {
            stopped_notice(st);
        }
    }
    if json {
        crate::cli::render::print_document(&report.to_json());
    } else {
        crate::cli::render::out!("{}", report.render_text());
    }
    if report.identical() {
        compared_all(report.a.stopped.is_some() || report.b.stopped.is_some())
    } else {
        match &report.first_difference {
            Some(d) => why(&format!(
                "the replicas diverge: batches first differ at offset {} ({})",
                d.offset, d.kind
            )),
            None => why("the replicas differ"),
        }
        EXIT_FINDINGS
    }
}
