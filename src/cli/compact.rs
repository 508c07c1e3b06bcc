//! `kseg compact PATH --out DIR | --apply`: one round of the broker's log cleaner, written to a
//! new log dir or carried out in place through the broker's `.cleaned` -> `.swap` -> swap file
//! dance (a dry run without either), with what it kept and removed per cleaned segment.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::args::{
    kafka_int, kafka_ratio, offset, report_applied, would_change, OffsetArgs, RepairArgs, INT_MAX,
    LONG_MAX, MIN_SEGMENT_BYTES,
};
use super::render::{print_json_or_text, size, table, Fit};
use super::{fail, notice, EXIT_OK};
use crate::ops::repair::apply::files_changed;
use crate::ops::repair::recover::render_changes;
use crate::ops::simulate::compact::plan::{
    interrupted_journal, plan_apply, plan_resolve_leftovers,
};
use crate::ops::simulate::compact::{compact_to, CompactOptions, CompactReport};

#[derive(Debug, Args)]
#[command(
    after_help = "Without --out or --apply this is a dry run: the report and the in-place plan are \
printed and nothing is written. --apply cleans in place as the broker does: cleaned segments \
written as `.cleaned`, renamed to `.swap`, the replaced files renamed to `.deleted` and deleted, \
the `.swap` files renamed into place, the log dir's cleaner-offset-checkpoint updated; it \
refuses a log dir locked by a running broker. Killed mid-swap, a rerun of --apply first resolves the leftovers (`.cleaned`, `.swap`, `.deleted`) as \
the broker's loader does at start-up (what `kseg recover --apply` does), then cleans.\n\n\
Exit status: 0 when --out or --apply succeeded or there is nothing to clean; 1 when a dry run \
found cleaning to do; 2 on errors."
)]
pub struct CompactArgs {
    /// The partition directory (`<topic>-<partition>`).
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
    /// A new log dir to write the cleaned partition into (with its cleaner-offset-checkpoint).
    #[arg(long, value_name = "DIR", conflicts_with = "apply")]
    pub out: Option<PathBuf>,
    /// `delete.retention.ms`: how long tombstones and removable markers stay after stamping.
    #[arg(long, default_value_t = 86_400_000, value_name = "MS", allow_negative_numbers = true,
          value_parser = kafka_int::<i64>("delete.retention.ms", 0, LONG_MAX))]
    pub delete_retention_ms: i64,
    /// `min.compaction.lag.ms`.
    #[arg(long, default_value_t = 0, value_name = "MS", allow_negative_numbers = true,
          value_parser = kafka_int::<i64>("min.compaction.lag.ms", 0, LONG_MAX))]
    pub min_compaction_lag_ms: i64,
    /// `max.compaction.lag.ms`.
    #[arg(long, default_value_t = i64::MAX, value_name = "MS", allow_negative_numbers = true,
          value_parser = kafka_int::<i64>("max.compaction.lag.ms", 1, LONG_MAX))]
    pub max_compaction_lag_ms: i64,
    /// `min.cleanable.dirty.ratio`: the log is cleaned only above it (or when the max lag forces it).
    #[arg(long, default_value_t = 0.5, value_name = "RATIO", allow_negative_numbers = true,
          value_parser = kafka_ratio("min.cleanable.dirty.ratio"))]
    pub min_cleanable_dirty_ratio: f64,
    /// `segment.bytes`: the most log bytes one cleaned segment gathers.
    #[arg(long, default_value_t = 1 << 30, value_name = "BYTES", allow_negative_numbers = true,
          value_parser = kafka_int::<u64>("segment.bytes", MIN_SEGMENT_BYTES, INT_MAX))]
    pub segment_bytes: u64,
    /// `log.cleaner.dedupe.buffer.size` (24 bytes per key; the map holds 90% of the slots).
    #[arg(long, default_value_t = crate::ops::simulate::compact::DEFAULT_DEDUPE_BUFFER_BYTES, value_name = "BYTES")]
    pub dedupe_buffer_bytes: u64,
    /// Default: the log dir's cleaner-offset-checkpoint, else the log start offset.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = offset)]
    pub first_dirty_offset: Option<i64>,
    #[command(flatten)]
    pub offsets: OffsetArgs,
    /// `--apply` (cleans in place), backups, `--now`, `--json`, and the index and producer
    /// settings of the cleaned segments.
    #[command(flatten)]
    pub repair: RepairArgs,
}

pub fn run(args: CompactArgs) -> u8 {
    let opts = CompactOptions {
        delete_retention_ms: args.delete_retention_ms,
        min_compaction_lag_ms: args.min_compaction_lag_ms,
        max_compaction_lag_ms: args.max_compaction_lag_ms,
        min_cleanable_dirty_ratio: args.min_cleanable_dirty_ratio,
        segment_bytes: args.segment_bytes,
        segment_index_bytes: args.repair.segment_index_bytes,
        index_interval_bytes: args.repair.index_interval_bytes,
        dedupe_buffer_bytes: args.dedupe_buffer_bytes,
        first_dirty_offset: args.first_dirty_offset,
        high_watermark: args.offsets.high_watermark,
        log_start_offset: args.offsets.log_start_offset,
        producer_id_expiration_ms: args.repair.producer_id_expiration_ms,
        ..CompactOptions::new(args.repair.now_ms())
    };
    // Before anything the plan depends on is read; held until the command ends.
    let _locks = match args.repair.lock(std::slice::from_ref(&args.path)) {
        Ok(l) => l,
        Err(e) => return fail(&e),
    };
    if let Some(out_dir) = &args.out {
        // The broker fails a whole log dir over a directory it cannot take for a partition.
        let in_log_dir = match crate::ops::repair::log_dir::log_dir_of(&args.path) {
            Ok(d) => d.is_some(),
            Err(e) => return fail(&e),
        };
        if in_log_dir {
            if let Err(e) = crate::ops::repair::apply::refuse_inside_log_dir(
                out_dir,
                &args.path,
                "output directory",
            ) {
                return fail(&e);
            }
        }
        let cleaned = args
            .repair
            .progress("cleaning")
            .run(|| compact_to(&args.path, out_dir, &opts));
        let report = match cleaned {
            Ok(r) => r,
            Err(e) => return fail(&e),
        };
        let json = args.repair.json.then_some(&report);
        return match print_json_or_text(json, |out| print_report(out, &report)) {
            Err(e) => fail(&e),
            Ok(()) => EXIT_OK,
        };
    }
    let apply_opts = args.repair.apply_options(&args.path);
    // An interrupted run's plan, kept until its last change: finished as planned then.
    match interrupted_journal(&args.path) {
        Ok(None) => {}
        Ok(Some(journal)) => {
            crate::cli::render::outln!(
                "an interrupted `compact --apply` left its plan in {}: it is finished as planned, not cleaned again",
                journal.path().display()
            );
            crate::cli::render::out!("{}", render_changes(&journal.changes, args.repair.verbose));
            if !args.repair.apply {
                return would_change(
                    files_changed(&journal.changes),
                    "--apply finishes the interrupted run",
                );
            }
            return report_applied(journal.apply(&args.path, &apply_opts));
        }
        Err(e) => return fail(&e),
    }
    // Leftovers of an interrupted run: resolved first as the broker's loader would at start-up,
    // so that a rerun of `compact --apply` finishes the job.
    match plan_resolve_leftovers(&args.path, &opts) {
        Ok(None) => {}
        Ok(Some(recovery)) => {
            crate::cli::render::outln!(
                "leftovers of an interrupted swap are resolved first, as the broker's loader does:"
            );
            crate::cli::render::out!("{}", recovery.render_text(args.repair.verbose));
            if !args.repair.apply {
                return would_change(
                    files_changed(&recovery.changes),
                    "--apply resolves the leftovers, then cleans",
                );
            }
            if let Err(e) = recovery.apply(&apply_opts) {
                return fail(&e);
            }
        }
        Err(e) => return fail(&e),
    }
    let planned = args
        .repair
        .progress("cleaning")
        .run(|| plan_apply(&args.path, &opts));
    let plan = match planned {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let json = args.repair.json.then(|| {
        let mut doc = serde_json::to_value(&plan.report).expect("a report serializes");
        doc["changes"] = serde_json::to_value(&plan.changes).expect("changes serialize");
        doc
    });
    let written = print_json_or_text(json.as_ref(), |out| {
        print_report(out, &plan.report)?;
        write!(
            out,
            "{}",
            render_changes(&plan.changes, args.repair.verbose)
        )
    });
    if let Err(e) = written {
        return fail(&e);
    }
    if plan.changes.is_empty() {
        return EXIT_OK;
    }
    if let Some(note) = plan.unrecorded_clean_offset() {
        notice(&note);
    }
    super::args::note_space(&args.repair, &[(&args.path, &plan.changes)]);
    if !args.repair.apply {
        return would_change(
            files_changed(&plan.changes),
            "rerun with --apply to clean in place, or --out DIR to write a copy",
        );
    }
    report_applied(plan.apply(&apply_opts))
}

fn print_report(out: &mut impl Write, r: &CompactReport) -> std::io::Result<()> {
    writeln!(
        out,
        "{}: log start {} ({}), high watermark {} ({}), last stable offset {}, log end {}",
        r.dir.display(),
        r.log_start_offset.value,
        r.log_start_offset.source,
        r.high_watermark.value,
        r.high_watermark.source,
        r.last_stable_offset,
        r.log_end_offset
    )?;
    writeln!(
        out,
        "cleanable range [{}, {}) (first dirty offset from {}); dirty ratio {:.3}{}",
        r.first_dirty_offset.value,
        r.first_uncleanable_offset,
        r.first_dirty_offset.source,
        r.dirty_ratio_before,
        if r.needs_compaction_now {
            "; max.compaction.lag.ms forces a clean"
        } else {
            ""
        }
    )?;
    if !r.cleaned {
        writeln!(
            out,
            "the broker would not clean this log now; the copy is unchanged"
        )?;
    }
    let mut t = table([
        "segment",
        "sources",
        "records",
        "bytes",
        "keys",
        "tombstones removed/kept",
        "aborted removed",
        "markers removed",
        "keyless removed",
        "empty batches",
    ]);
    let row = |name: String, sources: String, s: &crate::ops::simulate::compact::CleanStats| {
        [
            name,
            sources,
            format!("{} -> {}", s.records_before, s.records_after),
            format!("{} -> {}", size(s.bytes_before), size(s.bytes_after)),
            s.keys.to_string(),
            format!("{}/{}", s.tombstones_removed, s.tombstones_kept),
            s.aborted_records_removed.to_string(),
            s.markers_removed.to_string(),
            s.keyless_removed.to_string(),
            s.empty_batches_kept.to_string(),
        ]
    };
    for s in &r.segments {
        let sources: Vec<String> = s.sources.iter().map(i64::to_string).collect();
        t.add_row(row(s.base_offset.to_string(), sources.join(" "), &s.stats));
    }
    t.add_row(row("total".into(), String::new(), &r.total));
    // Sources is a list of offsets: prose that wraps between them.
    t.fit(Fit::Whole, &[0, 2, 3, 4, 5, 6, 7, 8, 9])
        .droppable(&[9, 8, 7, 6, 1, 5]);
    t.print(out)?;
    writeln!(
        out,
        "map: {} keys{}, cleaned up to offset {}; dirty ratio {:.3} -> {:.3}{}",
        r.keys_in_map,
        if r.map_full { " (full)" } else { "" },
        r.end_offset,
        r.dirty_ratio_before,
        r.dirty_ratio_after,
        r.out
            .as_ref()
            .map_or(String::new(), |p| format!("; written to {}", p.display()))
    )
}
