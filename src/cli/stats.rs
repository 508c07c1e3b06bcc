//! `kseg stats`: the counts of [`crate::ops::inspect::stats`] as tables (histograms drawn as
//! bars of Unicode block characters) or `--json`.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::args::{parse_now, wall_clock_ms, BatchLimitArgs};
use super::render::{opt, print_json_or_text, right, size, table, Cell, Fit};
use super::time::{TimeArgs, TimeFormat};
use super::{fail, skipped, EXIT_FAILURE, EXIT_FINDINGS, EXIT_OK};
use crate::ops::inspect::stats::histogram::Histogram;
use crate::ops::inspect::stats::{stats, GroupBy, GroupName, Report, Stats, StatsOptions};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum By {
    Segment,
    Partition,
    Topic,
    Producer,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Segment files (`.log`), partition directories, or log dirs.
    #[arg(value_name = "PATH", required_unless_present = "remote_segment")]
    pub paths: Vec<PathBuf>,
    /// The remote tier of the partitions named (tiered storage): its segments below the local
    /// log are read with it as one log, as the broker serves it.
    #[command(flatten)]
    pub remote: Option<super::args::RemoteArgs>,
    /// Decode every record: record, key, value and header sizes, uncompressed bytes per codec,
    /// record timestamps, and keys (distinct keys estimated, null keys, tombstones).
    #[arg(long)]
    pub deep: bool,
    /// What to count separately (a table each); a total follows when there is more than one.
    #[arg(long, value_enum, default_value_t = By::Partition)]
    pub by: By,
    /// Timestamps after this count as in the future; default: now. Any time form (epoch ms,
    /// RFC 3339, `2016-11-18 08:05` local, `-1h`).
    #[arg(long, value_name = "TIME", value_parser = parse_now, allow_hyphen_values = true)]
    pub now: Option<i64>,
    /// How many producers the top lists name.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,
    /// Print the report as one JSON document.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub batch_limit: BatchLimitArgs,
    #[command(flatten)]
    pub time: TimeArgs,
}

pub fn run(mut args: StatsArgs) -> u8 {
    args.paths = match super::log_dirs_named(&args.paths, false) {
        Ok(p) => p,
        Err(code) => return code,
    };
    args.paths = match super::args::show_remote(args.remote.as_ref(), &args.paths) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let now_ms = args.now.unwrap_or_else(wall_clock_ms);
    let clock = (args.time.time_format, now_ms);
    let opts = StatsOptions {
        deep: args.deep,
        by: match args.by {
            By::Segment => GroupBy::Segment,
            By::Partition => GroupBy::Partition,
            By::Topic => GroupBy::Topic,
            By::Producer => GroupBy::Producer,
        },
        now_ms,
        top: args.top,
        max_batch_bytes: args.batch_limit.max_batch_bytes,
    };
    let report = match stats(&args.paths, &opts) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let named_skipped = skipped(&args.paths, &report.skipped);
    let json = args.json.then_some(&report);
    if let Err(e) = print_json_or_text(json, |out| print_report(out, &report, clock)) {
        return fail(&e);
    }
    let t = &report.total;
    if named_skipped {
        EXIT_FAILURE
    } else if t.invalid_batches > 0 || t.damaged_bytes > 0 {
        super::why(&format!(
            "damage skipped: {} invalid batch(es), {} damaged byte(s)",
            t.invalid_batches, t.damaged_bytes
        ));
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

fn title(g: &GroupName) -> String {
    if let Some(f) = &g.file {
        return f.display().to_string();
    }
    if let Some(d) = &g.dir {
        return d.display().to_string();
    }
    if let Some(t) = &g.topic {
        return format!("topic {t}");
    }
    match g.producer_id {
        Some(-1) => "batches without a producer id".to_owned(),
        Some(p) => format!("producer {p}"),
        None => "all".to_owned(),
    }
}

/// How times are shown, and the clock their ages are taken at.
type Clock = (TimeFormat, i64);

fn print_report(out: &mut impl Write, r: &Report, clock: Clock) -> std::io::Result<()> {
    for g in &r.groups {
        print_stats(out, &title(&g.group), &g.stats, r.deep, clock)?;
    }
    if r.groups.len() > 1 {
        print_stats(out, "total", &r.total, r.deep, clock)?;
    }
    Ok(())
}

fn print_stats(
    out: &mut impl Write,
    name: &str,
    s: &Stats,
    deep: bool,
    (tf, now_ms): Clock,
) -> std::io::Result<()> {
    writeln!(out, "== {name}")?;
    writeln!(
        out,
        "{} segment(s), {} batch(es), {} record(s), {} byte(s); {} control, {} transactional, {} with a producer id{}{}{}",
        s.segments,
        s.batches,
        s.records,
        s.bytes,
        s.control_batches,
        s.transactional_batches,
        s.idempotent_batches,
        if s.unopened_wrappers > 0 {
            format!("; {} v0/v1 compressed wrapper(s) not opened (records counted with --deep)", s.unopened_wrappers)
        } else {
            String::new()
        },
        if s.invalid_batches > 0 {
            format!("; {} invalid batch(es) skipped", s.invalid_batches)
        } else {
            String::new()
        },
        if s.damaged_bytes > 0 {
            format!("; {} damaged skipped", size(s.damaged_bytes))
        } else {
            String::new()
        },
    )?;
    let formats: Vec<String> = s.formats.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let types: Vec<String> = s
        .timestamp_types
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    writeln!(
        out,
        "formats: {}; timestamp types: {}",
        formats.join(", "),
        types.join(", ")
    )?;
    let mut t = table([
        "codec",
        "batches",
        "records",
        "bytes",
        "uncompressed",
        "ratio",
    ]);
    for c in &s.codecs {
        t.add_row(vec![
            Cell::from(c.codec.as_str()),
            right(c.batches),
            right(c.records),
            right(size(c.bytes)),
            right(opt(c.uncompressed_bytes.map(size))),
            right(opt(c.ratio.map(|r| format!("{r:.2}")))),
        ]);
    }
    t.fit(Fit::Whole, &[0, 1, 2, 3, 4, 5]).droppable(&[5, 4]);
    t.print(out)?;
    let h = &s.histograms;
    for (label, hist) in [
        ("batch size (bytes)", &h.batch_size),
        ("records per batch", &h.records_per_batch),
        ("batch time span (ms)", &h.batch_time_span_ms),
        ("record size (bytes)", &h.record_size),
        ("key size (bytes)", &h.key_size),
        ("value size (bytes)", &h.value_size),
        ("headers per record", &h.headers_per_record),
    ] {
        if let Some(hist) = hist {
            print_histogram(out, label, hist)?;
        }
    }
    let tm = &s.time;
    writeln!(
        out,
        "time ({}): min {} max {}; {} out of order (worst step back {}); {} in the future",
        tm.unit,
        opt(tm.min_timestamp.map(|t| tf.with_age(t, now_ms))),
        opt(tm.max_timestamp.map(|t| tf.with_age(t, now_ms))),
        tm.out_of_order,
        tf.exact_span(tm.worst_step_back_ms),
        tm.future
    )?;
    if tm.segments.len() > 1 {
        let mut t = table(["segment", "min timestamp", "max timestamp"]);
        for seg in &tm.segments {
            t.add_row(vec![
                right(seg.base_offset),
                right(opt(seg.min_timestamp.map(|t| tf.show(t)))),
                right(opt(seg.max_timestamp.map(|t| tf.show(t)))),
            ]);
        }
        t.fit(Fit::Whole, &[0, 1, 2]);
        t.print(out)?;
    }
    let p = &s.producers;
    writeln!(
        out,
        "producers: {}, epochs seen {}, sequence gaps {}",
        p.count, p.epochs_seen, p.sequence_gaps
    )?;
    if !p.top_by_bytes.is_empty() {
        for (label, list) in [
            ("by bytes", &p.top_by_bytes),
            ("by batches", &p.top_by_batches),
        ] {
            let head = format!("top producers {label}");
            let mut t = table([
                &head,
                "batches",
                "records",
                "bytes",
                "epochs",
                "sequence gaps",
            ]);
            for e in list {
                let epochs: Vec<String> = e.epochs.iter().map(i16::to_string).collect();
                t.add_row(vec![
                    right(e.producer_id),
                    right(e.batches),
                    right(e.records),
                    right(size(e.bytes)),
                    Cell::from(epochs.join(", ")),
                    right(e.sequence_gaps),
                ]);
            }
            t.fit(Fit::Whole, &[0, 1, 2, 3, 5]).droppable(&[5, 4]);
            t.print(out)?;
        }
    }
    if let (true, Some(k)) = (deep, &s.keys) {
        writeln!(
            out,
            "keys: ~{} distinct (±{:.1}% standard error) among {} keyed record(s); {} null key(s), {} tombstone(s); ~{} record(s) superseded by a later one of the same key{}",
            k.distinct_keys_estimate,
            k.distinct_keys_relative_error * 100.0,
            k.keyed_records,
            k.null_keys,
            k.tombstones,
            k.superseded_estimate,
            k.superseded_share
                .map_or(String::new(), |s| format!(" ({:.1}%)", s * 100.0))
        )?;
    }
    writeln!(out)
}

/// Eighths of a block, for bars drawn at a resolution finer than a character.
const BLOCKS: [char; 8] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉', '█'];
const BAR_WIDTH: usize = 40;

/// A bar `count / max` of [`BAR_WIDTH`] characters at most, at least a sliver when not zero.
fn bar(count: u64, max: u64) -> String {
    if count == 0 || max == 0 {
        return String::new();
    }
    let eighths = ((count as u128 * (BAR_WIDTH as u128 * 8)) / max as u128).max(1) as usize;
    let mut s = "█".repeat(eighths / 8);
    if eighths % 8 > 0 {
        s.push(BLOCKS[eighths % 8 - 1]);
    }
    s
}

fn print_histogram(out: &mut impl Write, label: &str, h: &Histogram) -> std::io::Result<()> {
    let max = h.buckets.iter().map(|b| b.count).max().unwrap_or(0);
    let mean = if h.count > 0 {
        h.sum as f64 / h.count as f64
    } else {
        0.0
    };
    writeln!(
        out,
        "{label}: {} value(s), mean {mean:.1}, max {}",
        h.count, h.max
    )?;
    for b in &h.buckets {
        let range = if b.low == b.high {
            b.low.to_string()
        } else {
            format!("{}-{}", b.low, b.high)
        };
        writeln!(out, "  {range:>21} {:>10} {}", b.count, bar(b.count, max))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::bar;

    #[test]
    fn bars_scale_to_the_largest_bucket() {
        assert_eq!(bar(0, 10), "");
        assert_eq!(bar(10, 10).chars().count(), 40);
        assert_eq!(bar(5, 10), "█".repeat(20));
        assert_eq!(bar(1, 1_000_000), "▏", "a non-empty bucket always shows");
        assert_eq!(bar(1, 320), "▏");
        assert_eq!(bar(3, 320), "▍");
    }
}
