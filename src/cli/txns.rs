//! `kseg txns`: [`crate::ops::inspect::txns`] per partition, as text and tables or `--json`.
//! Exit status 1 when a transaction hangs.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::args::{kafka_int, parse_now, wall_clock_ms};
use super::render::{opt, print_json_or_text, right, size, table, Cell, Fit};
use super::time::{TimeArgs, TimeFormat};
use super::{fail, why, EXIT_FINDINGS, EXIT_OK};
use crate::ops::inspect::txns::{
    txns, OutcomeTotals, PartitionTxns, TxnsOptions, TxnsReport, DEFAULT_TRANSACTION_MAX_TIMEOUT_MS,
};

#[derive(Debug, Args)]
pub struct TxnsArgs {
    /// A partition directory, a log dir (every partition in it), or a directory of log dirs
    /// (each of them).
    #[arg(value_name = "PATH", required_unless_present = "remote_segment")]
    pub path: Option<PathBuf>,
    /// The remote tier of the partitions named (tiered storage): its segments below the local
    /// log are read with it as one log, as the broker serves it.
    #[command(flatten)]
    pub remote: Option<super::args::RemoteArgs>,
    /// The time open transactions are aged at; default: now. Any time form (epoch ms,
    /// RFC 3339, `2016-11-18 08:05` local, `-1h`).
    #[arg(long, value_name = "TIME", value_parser = parse_now, allow_hyphen_values = true)]
    pub now: Option<i64>,
    /// `transaction.max.timeout.ms`: an open transaction whose producer wrote nothing for
    /// longer hangs (as `kafka-transactions.sh find-hanging` judges).
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_TRANSACTION_MAX_TIMEOUT_MS,
          allow_negative_numbers = true,
          value_parser = kafka_int::<i64>("transaction.max.timeout.ms", 1, i64::from(i32::MAX)))]
    pub transaction_max_timeout_ms: i64,
    /// A `__transaction_state` partition directory: each producer's transactional id and the
    /// coordinator's state of it, and where the two sides disagree (exit status 1).
    #[arg(long, value_name = "DIR")]
    pub txn_log: Option<PathBuf>,
    /// Print the report as one JSON document.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub time: TimeArgs,
}

pub fn run(args: TxnsArgs) -> u8 {
    let path = match super::args::one_path(args.remote.as_ref(), args.path.as_deref()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let opts = TxnsOptions {
        now_ms: args.now.unwrap_or_else(wall_clock_ms),
        transaction_max_timeout_ms: args.transaction_max_timeout_ms,
    };
    // A directory of log dirs: each of them, said on stderr.
    let paths = match super::log_dirs_named(std::slice::from_ref(&path), false) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let report = match txns(&paths, &opts, args.txn_log.as_deref()) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let json = args.json.then_some(&report);
    if let Err(e) = print_json_or_text(json, |out| {
        print_report(out, &report, args.time.time_format)
    }) {
        return fail(&e);
    }
    let hanging: u64 = report.partitions.iter().map(|p| p.hanging).sum();
    let disagreements = report
        .partitions
        .iter()
        .flat_map(|p| p.coordinator.iter().flatten())
        .filter(|v| v.disagreement.is_some())
        .count();
    let mut reasons = Vec::new();
    if hanging > 0 {
        reasons.push(format!(
            "{hanging} hanging transaction(s): open longer than transaction.max.timeout.ms {}",
            opts.transaction_max_timeout_ms
        ));
    }
    for p in &report.partitions {
        if let Some(s) = &p.stopped {
            reasons.push(format!(
                "{}: stopped at byte {} of {}: {}",
                p.dir.display(),
                s.position,
                s.file.display(),
                s.message
            ));
        }
    }
    if disagreements > 0 {
        reasons.push(format!(
            "{disagreements} disagreement(s) with the transaction coordinator's state"
        ));
    }
    if reasons.is_empty() {
        return EXIT_OK;
    }
    why(&reasons.join("; "));
    EXIT_FINDINGS
}

fn print_report(out: &mut impl Write, r: &TxnsReport, tf: TimeFormat) -> std::io::Result<()> {
    r.partitions
        .iter()
        .try_for_each(|p| print_partition(out, p, tf))
}

fn outcome(name: &str, t: &OutcomeTotals, tf: TimeFormat) -> String {
    let ms = |v: i64| tf.exact_span(v);
    let durations = t.duration_ms.as_ref().map_or(String::new(), |h| {
        format!(
            ", duration mean {} max {}",
            ms((h.sum as f64 / h.count.max(1) as f64).round() as i64),
            ms(h.max as i64)
        )
    });
    format!(
        "{name}: {} ({} record(s), {}){durations}; {} empty; {} after an epoch bump",
        t.count,
        t.records,
        size(t.bytes),
        t.empty,
        t.after_epoch_bump
    )
}

fn print_partition(out: &mut impl Write, p: &PartitionTxns, tf: TimeFormat) -> std::io::Result<()> {
    writeln!(
        out,
        "{}: log start offset {}, log end offset {}, high watermark {} ({}), last stable offset {}, first unstable offset {}",
        p.dir.display(),
        p.log_start_offset,
        p.log_end_offset,
        p.high_watermark.value,
        p.high_watermark.source,
        p.last_stable_offset,
        opt(p.first_unstable_offset)
    )?;
    if let Some(s) = &p.stopped {
        writeln!(
            out,
            "  read up to {} byte {}: {} (recovery truncates there; later batches are not counted)",
            s.file.display(),
            s.position,
            s.message
        )?;
    }
    writeln!(out, "  {}", outcome("committed", &p.committed, tf))?;
    writeln!(out, "  {}", outcome("aborted", &p.aborted, tf))?;
    if p.open.is_empty() {
        writeln!(out, "  no open transaction")?;
    } else {
        let mut t = table([
            "open: producer",
            "epoch",
            "first offset",
            "last offset",
            "records",
            "bytes",
            "last timestamp",
            &tf.span_heading("age"),
            "hanging",
        ]);
        for o in &p.open {
            t.add_row(vec![
                right(o.producer_id),
                right(o.producer_epoch),
                right(o.first_offset),
                right(opt(o.last_offset)),
                right(o.records),
                right(size(o.bytes)),
                right(tf.show(o.last_timestamp)),
                right(tf.span(o.age_ms)),
                Cell::from(if o.hanging { "HANGING" } else { "no" }),
            ]);
        }
        t.fit(Fit::Whole, &[0, 1, 2, 3, 4, 5, 6, 7, 8])
            .droppable(&[5, 4, 1, 3, 6]);
        t.print(out)?;
    }
    if !p.aborted_transactions.is_empty() {
        let mut t = table([
            "aborted: producer",
            "epoch",
            "first offset",
            "marker offset",
            "records",
            "bytes",
            &tf.span_heading("duration"),
            "epoch bump",
            "last stable offset",
        ]);
        for a in &p.aborted_transactions {
            t.add_row(vec![
                right(a.producer_id),
                right(a.producer_epoch),
                right(a.first_offset),
                right(a.marker_offset),
                right(a.records),
                right(size(a.bytes)),
                right(opt(a.duration_ms.map(|d| tf.exact_span(d)))),
                Cell::from(if a.after_epoch_bump { "yes" } else { "no" }),
                right(opt(a.last_stable_offset)),
            ]);
        }
        t.fit(Fit::Whole, &[0, 1, 2, 3, 4, 5, 6, 7, 8])
            .droppable(&[5, 4, 7, 1, 8, 6]);
        t.print(out)?;
    }
    if !p.producers.is_empty() {
        let mut t = table([
            "producer",
            "epoch",
            "last sequence",
            "last offset",
            "coordinator epoch",
            "open txn from",
            "last timestamp",
        ]);
        for e in &p.producers {
            t.add_row(vec![
                right(e.producer_id),
                right(e.producer_epoch),
                right(e.last_sequence),
                right(e.last_offset),
                right(e.coordinator_epoch),
                right(opt(e.current_txn_first_offset)),
                right(tf.show(e.last_timestamp)),
            ]);
        }
        t.fit(Fit::Whole, &[0, 1, 2, 3, 4, 5, 6])
            .droppable(&[4, 2, 1, 5, 3]);
        t.print(out)?;
    }
    if let Some(views) = &p.coordinator {
        let mut t = table([
            "producer",
            "transactional id",
            "coordinator state",
            "epoch",
            "includes partition",
            "disagreement",
        ]);
        for v in views {
            t.add_row(vec![
                right(v.producer_id),
                Cell::from(opt(v.transactional_id.as_deref())),
                Cell::from(opt(v.state.as_deref())),
                right(opt(v.producer_epoch)),
                Cell::from(if v.includes_partition { "yes" } else { "no" }),
                Cell::from(v.disagreement.as_deref().unwrap_or("-")),
            ]);
        }
        t.fit(Fit::Whole, &[0, 2, 3, 4])
            .fit(Fit::Name, &[1])
            .droppable(&[3, 4]);
        t.print(out)?;
    }
    writeln!(out)
}
