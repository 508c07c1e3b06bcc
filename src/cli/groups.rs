//! `kseg groups PATH...`: consumer groups, their committed offsets and lag, from
//! `__consumer_offsets` partitions on disk.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::render::opt;
use super::render::{add_row_aligned, print_json_or_text, table};
use super::time::{TimeArgs, TimeFormat};
use super::verify::line;
use super::{exit_for_errors, fail};
use crate::ops::inspect::groups::{describe_groups, Group, GroupsReport};

#[derive(Debug, Args)]
#[command(
    after_help = "Offsets are replayed as the group coordinator loads them: in offset order, \
tombstones deleting, transactional commits applied at their COMMIT marker and dropped at ABORT. \
Lag is the partition's log end offset (when the log dir holds it) minus the committed offset. \
Exit status: 0; 1 when the offsets partitions have damage or undecodable records (what could \
be replayed is printed); 2 on bad input or an unknown --group."
)]
pub struct GroupsArgs {
    /// `__consumer_offsets-N` directories, or log dirs (every `__consumer_offsets-N` in them).
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Only this group.
    #[arg(long, value_name = "G")]
    pub group: Option<String>,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub time: TimeArgs,
}

pub fn run(args: GroupsArgs) -> u8 {
    let report = match describe_groups(&args.paths, args.group.as_deref()) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    if let Some(g) = &args.group {
        if report.groups.is_empty() {
            return fail(&format!("no group {g:?} in these partitions"));
        }
    }
    let json = args.json.then_some(&report);
    if let Err(e) = print_json_or_text(json.as_ref(), |out| {
        print_report(out, &report, args.time.time_format)
    }) {
        return fail(&e);
    }
    exit_for_errors(report.findings.iter())
}

fn print_group(out: &mut impl Write, g: &Group, tf: TimeFormat) -> std::io::Result<()> {
    writeln!(
        out,
        "group {} ({}, {}): protocol {} {}, generation {}, {} member(s){}",
        g.group,
        g.group_type,
        g.state,
        opt(g.protocol_type.as_ref()),
        opt(g.protocol.as_ref()),
        opt(g.generation),
        g.members.len(),
        g.assignment_epoch
            .map_or(String::new(), |e| format!(", assignment epoch {e}"))
    )?;
    for m in &g.members {
        writeln!(
            out,
            "  member {} client {} host {}{}",
            m.member_id,
            opt(m.client_id.as_ref()),
            opt(m.client_host.as_ref()),
            m.member_epoch
                .map_or(String::new(), |e| format!(" epoch {e}"))
        )?;
    }
    if !g.offsets.is_empty() {
        let mut t = table([
            "topic",
            "partition",
            "offset",
            "log end",
            "lag",
            "leader epoch",
            "committed at",
        ]);
        for o in &g.offsets {
            let row = [
                o.topic.clone(),
                o.partition.to_string(),
                o.offset.to_string(),
                opt(o.log_end_offset),
                opt(o.lag),
                o.leader_epoch.to_string(),
                tf.show(o.commit_timestamp),
            ];
            add_row_aligned(&mut t, row, 1);
        }
        writeln!(out, "{t}")?;
    }
    for p in &g.pending_transactional_offsets {
        writeln!(
            out,
            "  pending (transaction of producer {} not ended): {}-{} offset {}",
            p.producer_id, p.offset.topic, p.offset.partition, p.offset.offset
        )?;
    }
    Ok(())
}

fn print_report(out: &mut impl Write, r: &GroupsReport, tf: TimeFormat) -> std::io::Result<()> {
    for g in &r.groups {
        print_group(out, g, tf)?;
    }
    for f in &r.findings {
        writeln!(out, "{}", line(f))?;
    }
    writeln!(
        out,
        "{} group(s) in {} partition(s)",
        r.groups.len(),
        r.dirs.len()
    )
}
