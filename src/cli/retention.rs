//! `kseg retention PATH`: what the broker's retention would delete now, and when the rest goes.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::args::{finish, kafka_int, OffsetArgs, RepairArgs, LONG_MAX};
use super::render::{print_json_or_text, right, size, table, Cell, Fit};
use super::time::{relative, TimeFormat};
use super::{fail, notice};
use crate::ops::repair::apply::interrupted_leftovers;
use crate::ops::repair::log_dir::{unrecorded_log_start, ShutdownOffsets};
use crate::ops::simulate::retention::{
    plan_retention, RetentionOptions, RetentionReport, DEFAULT_RETENTION_BYTES,
    DEFAULT_RETENTION_MS,
};

#[derive(Debug, Args)]
pub struct RetentionArgs {
    /// The partition directory (`<topic>-<partition>`).
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
    /// `retention.ms`; -1 = unlimited.
    #[arg(long, default_value_t = DEFAULT_RETENTION_MS, allow_negative_numbers = true,
          value_parser = kafka_int::<i64>("retention.ms", -1, LONG_MAX))]
    pub retention_ms: i64,
    /// `retention.bytes`; -1 = unlimited.
    #[arg(long, default_value_t = DEFAULT_RETENTION_BYTES, allow_negative_numbers = true)]
    pub retention_bytes: i64,
    #[command(flatten)]
    pub offsets: OffsetArgs,
    /// How the table shows times (ages are durations either way).
    #[arg(long, value_enum, default_value_t = TimeFormat::Rfc3339)]
    pub time_format: TimeFormat,
    /// `--apply` (deletes the segments, rolls, updates the checkpoints), backups, `--now`.
    #[command(flatten)]
    pub repair: RepairArgs,
}

pub fn run(args: RetentionArgs) -> u8 {
    let opts = RetentionOptions {
        retention_ms: args.retention_ms,
        retention_bytes: args.retention_bytes,
        log_start_offset: args.offsets.log_start_offset,
        high_watermark: args.offsets.high_watermark,
        now_ms: args.repair.now_ms(),
        config: args.repair.config(),
        producer_id_expiration_ms: args.repair.producer_id_expiration_ms,
    };
    // Before anything the plan depends on is read; held until the command ends.
    let _locks = match args.repair.lock(std::slice::from_ref(&args.path)) {
        Ok(l) => l,
        Err(e) => return fail(&e),
    };
    let planned = args
        .repair
        .progress("reading")
        .run(|| plan_retention(&args.path, &opts));
    let report = match planned {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let json = args.repair.json.then_some(&report);
    if let Err(e) = print_json_or_text(json, |out| print_report(out, &report, args.time_format)) {
        return fail(&e);
    }
    if let Some(note) = report.remaining.first().and_then(|first| {
        let offsets = ShutdownOffsets {
            log_start_offset: report.new_log_start_offset,
            first_segment_base: first.base_offset,
            log_end_offset: report.log_end_offset,
        };
        unrecorded_log_start(&report.dir, &offsets)
    }) {
        notice(&note);
    }
    // Leftovers of an interrupted run (`.deleted` files, indexes whose `.log` went, temporary
    // files) go as the broker's loader removes them, with or without segments to delete.
    let leftovers = match interrupted_leftovers(&report.dir) {
        Ok(l) => l,
        Err(e) => return fail(&e),
    };
    if !leftovers.is_empty() {
        let names: Vec<String> = leftovers
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        notice(&format!(
            "{}: leftovers of an interrupted run, removed as the broker's loader removes them: {}",
            report.dir.display(),
            names.join(", ")
        ));
    }
    // Deleting no segment, retention changes nothing else (the checkpoints follow the
    // deletions) but what an interrupted deletion left undone: epochs below the log start.
    let stale_epochs = match report.stale_epochs() {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    if stale_epochs && report.deleted.is_empty() {
        notice(&format!(
            "{}: the leader-epoch-checkpoint lists epochs below the log start offset {} (a deletion was interrupted): it is truncated from the start, as the broker does",
            report.dir.display(),
            report.new_log_start_offset
        ));
    }
    let files = leftovers.len()
        + match report.deleted.iter().map(|d| d.files.len()).sum::<usize>() {
            0 => usize::from(stale_epochs),
            n => n + report.checkpoint_updates.len(),
        };
    if files > 0 && !args.repair.apply {
        match report.planned_changes() {
            Ok((_scratch, changes)) => {
                super::args::note_space(&args.repair, &[(&report.dir, &changes)])
            }
            Err(e) => return fail(&e),
        }
    }
    finish(files, &args.repair, &args.path, |o| report.apply(o))
}

fn print_report(out: &mut impl Write, r: &RetentionReport, tf: TimeFormat) -> std::io::Result<()> {
    let time = |ms: i64, source: &dyn std::fmt::Display| {
        format!("{} ({source}, {})", tf.show(ms), relative(ms, r.now_ms))
    };
    writeln!(
        out,
        "{}: log end offset {}, high watermark {} ({}), log start offset {} ({})",
        r.dir.display(),
        r.log_end_offset,
        r.high_watermark.value,
        r.high_watermark.source,
        r.log_start_offset.value,
        r.log_start_offset.source
    )?;
    if let Some(at) = r.rolled_at {
        writeln!(
            out,
            "every segment goes: the broker first rolls an empty segment at {at}"
        )?;
    }
    let mut t = table(["segment", "bytes", "largest timestamp", "delete?", "why"]);
    for d in &r.deleted {
        t.add_row([
            right(d.base_offset),
            right(size(d.size)),
            Cell::from(time(d.largest_timestamp, &d.timestamp_source)),
            Cell::from(format!("yes: {}", d.reason.name())),
            Cell::from(d.detail.clone()),
        ]);
    }
    for s in &r.remaining {
        let when = match s.eligible_at_ms {
            Some(ms) if ms <= r.now_ms => "now".to_string(),
            Some(ms) => format!("by time at {} ({})", tf.show(ms), relative(ms, r.now_ms)),
            None => "not by time".to_string(),
        };
        t.add_row([
            right(format!(
                "{}{}",
                s.base_offset,
                if s.active { " (active)" } else { "" }
            )),
            right(size(s.size)),
            Cell::from(time(s.largest_timestamp, &s.timestamp_source)),
            Cell::from(format!("no; {when}")),
            Cell::from(s.note.clone()),
        ]);
    }
    t.fit(Fit::Whole, &[0, 1]);
    t.print(out)?;
    for c in &r.checkpoint_updates {
        let after = match (c.after, c.created) {
            (Some(o), _) => o.to_string(),
            (None, true) => "(no entry; the file is created)".into(),
            (None, false) => "(entry removed)".into(),
        };
        writeln!(
            out,
            "{}: {} -> {after}",
            c.file.display(),
            c.before.map_or("-".into(), |o| o.to_string()),
        )?;
    }
    writeln!(
        out,
        "{} segment(s) to delete, {} of {} freed; log start offset {} -> {}",
        r.deleted.len(),
        size(r.bytes_freed),
        size(r.size_before),
        r.log_start_offset.value,
        r.new_log_start_offset
    )
}
