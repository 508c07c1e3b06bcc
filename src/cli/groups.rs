//! `kseg groups PATH...`: consumer groups, their committed offsets and lag, from
//! `__consumer_offsets` partitions on disk.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::render::line;
use super::render::opt;
use super::render::{add_row_aligned, print_json_or_text, table, Fit};
use super::time::{TimeArgs, TimeFormat};
use super::{exit_for_errors, fail};
use crate::ops::inspect::groups::{
    describe_groups, Group, GroupsReport, SubtopologyTasks, LOG_END_SOURCE,
};

#[derive(Debug, Args)]
#[command(
    after_help = "Offsets are replayed as the group coordinator loads them: in offset order, \
tombstones deleting, transactional commits applied at their COMMIT marker and dropped at ABORT. \
Where the log dir holds the partition, LOG-END-OFFSET and LAG are what kafka-consumer-groups.sh \
--describe shows: the high watermark (ListOffsets latest at READ_UNCOMMITTED), here from \
replication-offset-checkpoint, or the log end offset (marked *) when it has no entry. \
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
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the committed offsets as the CSV `kafka-consumer-groups.sh --reset-offsets
    /// --from-file` reads, no header: `topic,partition,offset` with --group, else
    /// `group,topic,partition,offset` (for --all-groups or several --group).
    #[arg(long)]
    pub csv: bool,
    #[command(flatten)]
    pub time: TimeArgs,
}

pub fn run(mut args: GroupsArgs) -> u8 {
    args.paths = match super::log_dirs_named(&args.paths, false) {
        Ok(p) => p,
        Err(code) => return code,
    };
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
        if args.csv {
            print_reset_plan(out, &report, args.group.is_some())
        } else {
            print_report(out, &report, args.time.time_format)
        }
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
            "  member {} client {} host {}{}{}",
            m.member_id,
            opt(m.client_id.as_ref()),
            opt(m.client_host.as_ref()),
            m.member_epoch
                .map_or(String::new(), |e| format!(" epoch {e}")),
            m.process_id
                .as_ref()
                .map_or(String::new(), |p| format!(" process {p}"))
        )?;
        if let Some(t) = &m.current_assignment {
            for (kind, tasks) in [
                ("active", &t.active_tasks),
                ("standby", &t.standby_tasks),
                ("warmup", &t.warmup_tasks),
            ] {
                if !tasks.is_empty() {
                    writeln!(out, "    {kind} tasks: {}", task_list(tasks))?;
                }
            }
        }
    }
    for r in &g.regular_expressions {
        writeln!(
            out,
            "  regex {:?}: {} topic(s) [{}], resolved at {} (metadata version {})",
            r.regular_expression,
            r.topics.len(),
            r.topics.join(", "),
            tf.show(r.resolved_timestamp),
            r.metadata_image_version
        )?;
    }
    if let Some(t) = &g.topology {
        writeln!(
            out,
            "  topology epoch {}, {} subtopology(ies)",
            t.topology_epoch,
            t.subtopologies.len()
        )?;
        for st in &t.subtopologies {
            writeln!(out, "    subtopology {}", st.subtopology_id)?;
            for (what, topics) in [
                ("source topics", &st.source_topics),
                ("source topic regexes", &st.source_topic_regexes),
                ("repartition source topics", &st.repartition_source_topics),
                ("repartition sink topics", &st.repartition_sink_topics),
                ("state changelog topics", &st.state_changelog_topics),
            ] {
                if !topics.is_empty() {
                    writeln!(out, "      {what}: {}", topics.join(", "))?;
                }
            }
        }
    }
    if !g.offsets.is_empty() {
        // The columns kafka-consumer-groups.sh --describe prints, then the commit's own.
        let mut t = table([
            "TOPIC",
            "PARTITION",
            "CURRENT-OFFSET",
            "LOG-END-OFFSET",
            "LAG",
            "LEADER-EPOCH",
            "COMMITTED-AT",
        ]);
        let mut sources = std::collections::BTreeSet::new();
        for o in &g.offsets {
            // Marked: the log end offset, where the tool would show the high watermark.
            let end = o.lag_against.as_ref().map(|a| {
                sources.insert(&a.source);
                let from_log_end = a.source.starts_with(LOG_END_SOURCE);
                format!("{}{}", a.value, if from_log_end { "*" } else { "" })
            });
            let row = [
                o.topic.clone(),
                o.partition.to_string(),
                o.offset.to_string(),
                opt(end),
                opt(o.lag),
                o.leader_epoch.to_string(),
                tf.show(o.commit_timestamp),
            ];
            add_row_aligned(&mut t, row, 1);
        }
        t.fit(Fit::Whole, &[1, 2, 3, 4, 5, 6])
            .fit(Fit::Name, &[0])
            .droppable(&[5, 6, 3]);
        t.print(out)?;
        for s in sources {
            writeln!(out, "  LOG-END-OFFSET: {s}")?;
        }
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

/// Tasks as Kafka Streams names them: `subtopology_partition`.
fn task_list(tasks: &[SubtopologyTasks]) -> String {
    let ids = tasks.iter().flat_map(|t| {
        t.partitions
            .iter()
            .map(move |p| format!("{}_{p}", t.subtopology_id))
    });
    ids.collect::<Vec<_>>().join(", ")
}

/// The reset plan `--reset-offsets --from-file` reads (its parser takes three fields for one
/// group, four with the group first otherwise). Topic and group names cannot hold a comma
/// (Kafka's legal characters are letters, digits, `.`, `_`, `-`), but group ids can: such a
/// group is left out, said on stderr, as the tool would misread it.
fn print_reset_plan(
    out: &mut impl Write,
    r: &GroupsReport,
    one_group: bool,
) -> std::io::Result<()> {
    for g in &r.groups {
        if !one_group && g.group.contains([',', '\n', '\r']) {
            super::notice(&format!(
                "group {:?} left out of the CSV: its name holds a comma or a line break",
                g.group
            ));
            continue;
        }
        for o in &g.offsets {
            if one_group {
                writeln!(out, "{},{},{}", o.topic, o.partition, o.offset)?;
            } else {
                writeln!(out, "{},{},{},{}", g.group, o.topic, o.partition, o.offset)?;
            }
        }
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
