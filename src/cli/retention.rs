//! `kseg retention PATH`: what the broker's retention would delete now, and when the rest goes.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};

use super::{fail, EXIT_OK};
use crate::ops::retention::{
    plan_retention, RetentionOptions, RetentionReport, DEFAULT_RETENTION_BYTES,
    DEFAULT_RETENTION_MS,
};

#[derive(Debug, Args)]
pub struct RetentionArgs {
    /// The partition directory (`<topic>-<partition>`).
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
    /// `retention.ms`; -1 = unlimited.
    #[arg(long, default_value_t = DEFAULT_RETENTION_MS, allow_negative_numbers = true)]
    pub retention_ms: i64,
    /// `retention.bytes`; -1 = unlimited.
    #[arg(long, default_value_t = DEFAULT_RETENTION_BYTES, allow_negative_numbers = true)]
    pub retention_bytes: i64,
    /// Default: the log dir's `log-start-offset-checkpoint`, else the first segment's base.
    #[arg(long)]
    pub log_start_offset: Option<i64>,
    /// Default: the log dir's `replication-offset-checkpoint`, else the log end offset.
    #[arg(long)]
    pub high_watermark: Option<i64>,
    /// The broker clock: milliseconds since the epoch or RFC 3339 (default: now).
    #[arg(long, value_parser = parse_time)]
    pub now: Option<i64>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The current time in milliseconds since the epoch.
pub(super) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Milliseconds since the epoch, or an RFC 3339 time (`2024-10-27T03:33:20.5Z`, `…+02:00`).
pub(super) fn parse_time(s: &str) -> Result<i64, String> {
    if let Ok(ms) = s.parse::<i64>() {
        return Ok(ms);
    }
    parse_rfc3339(s).ok_or_else(|| {
        format!("`{s}` is neither milliseconds since the epoch nor an RFC 3339 time")
    })
}

fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac_ms = 0i64;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
        let digits = &s[start..i.min(start + 3)];
        frac_ms = digits.parse::<i64>().ok()? * 10i64.pow(3 - digits.len() as u32);
    }
    let offset_min = match b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        c @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
            let m = num(i + 1..i + 3)? * 60 + num(i + 4..i + 6)?;
            if *c == b'-' {
                -m
            } else {
                m
            }
        }
        _ => return None,
    };
    // Days from the civil date (proleptic Gregorian), Howard Hinnant's algorithm.
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some(secs * 1000 + frac_ms)
}

pub fn run(args: RetentionArgs) -> u8 {
    let opts = RetentionOptions {
        retention_ms: args.retention_ms,
        retention_bytes: args.retention_bytes,
        log_start_offset: args.log_start_offset,
        high_watermark: args.high_watermark,
        now_ms: args.now.unwrap_or_else(now_ms),
    };
    let report = match plan_retention(&args.path, &opts) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        serde_json::to_writer_pretty(&mut out, &report)
            .map_err(std::io::Error::other)
            .and_then(|_| writeln!(out))
    } else {
        print_report(&mut out, &report)
    };
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => fail(&e),
        _ => EXIT_OK,
    }
}

fn print_report(out: &mut impl Write, r: &RetentionReport) -> std::io::Result<()> {
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
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(["segment", "bytes", "largest timestamp", "delete?", "why"]);
    for d in &r.deleted {
        t.add_row([
            d.base_offset.to_string(),
            d.size.to_string(),
            format!("{} ({})", d.largest_timestamp, d.timestamp_source),
            format!("yes: {}", d.reason.name()),
            d.detail.clone(),
        ]);
    }
    for s in &r.remaining {
        let when = match s.eligible_at_ms {
            Some(ms) if ms <= r.now_ms => "now".to_string(),
            Some(ms) => format!("by time at {ms} (in {} ms)", ms - r.now_ms),
            None => "not by time".to_string(),
        };
        t.add_row([
            format!(
                "{}{}",
                s.base_offset,
                if s.active { " (active)" } else { "" }
            ),
            s.size.to_string(),
            format!("{} ({})", s.largest_timestamp, s.timestamp_source),
            format!("no; {when}"),
            s.note.clone(),
        ]);
    }
    writeln!(out, "{t}")?;
    for c in &r.checkpoint_updates {
        writeln!(
            out,
            "{}: {} -> {}",
            c.file.display(),
            c.before.map_or("-".into(), |o| o.to_string()),
            c.after.map_or("(entry removed)".into(), |o| o.to_string())
        )?;
    }
    writeln!(
        out,
        "{} segment(s) deleted, {} of {} bytes freed; log start offset {} -> {} (dry run)",
        r.deleted.len(),
        r.bytes_freed,
        r.size_before,
        r.log_start_offset.value,
        r.new_log_start_offset
    )
}

#[cfg(test)]
mod tests {
    use super::parse_time;

    #[test]
    fn times_parse_as_millis_or_rfc3339() {
        assert_eq!(parse_time("1730000000000"), Ok(1_730_000_000_000));
        assert_eq!(parse_time("2024-10-27T03:33:20Z"), Ok(1_730_000_000_000));
        assert_eq!(
            parse_time("2024-10-27T05:33:20.25+02:00"),
            Ok(1_730_000_000_250)
        );
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(parse_time("1969-12-31T23:59:59.9Z"), Ok(-100));
        for bad in [
            "",
            "2024-13-01T00:00:00Z",
            "2024-10-27T03:33:20",
            "yesterday",
            "2024-10-27T03:33:20.Z",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }
}
