//! Times as people write and read them: the time flags' parser (epoch ms, RFC 3339, local
//! date-times in `--tz` or the local zone, relative times), `--time-format ms|rfc3339|local`
//! and `--local` for printing, and ages and spans as durations.

use std::sync::OnceLock;

use clap::ValueEnum;
use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, Offset, TimeZone};
use jiff::Timestamp;

use crate::ops::human::{duration, exact_duration, offset_text, rfc3339};

/// The zone local date-times are read in and `--local` prints in: `--tz`, else `TZ` or the
/// system's.
static ZONE: OnceLock<TimeZone> = OnceLock::new();
/// `--local`: RFC 3339 times are printed in [`zone`] rather than UTC.
static PRINT_LOCAL: OnceLock<bool> = OnceLock::new();

/// The zone named by `--tz`, else the system's (`TZ`, `/etc/localtime`; UTC when neither is
/// readable).
pub fn zone() -> &'static TimeZone {
    ZONE.get_or_init(TimeZone::system)
}

/// A value parser for `--tz`: an IANA zone name (`Europe/Paris`) or `UTC`.
pub fn parse_zone(s: &str) -> Result<TimeZone, String> {
    TimeZone::get(s).map_err(|e| format!("`{s}` is not a time zone kseg knows ({e})"))
}

/// Sets the zone from `--tz` before any time flag is parsed: clap parses flags in the order
/// given, and `--time '2016-11-18 08:05' --tz Asia/Tokyo` must read the time in Tokyo. An
/// unknown zone is left for clap's own parsing of `--tz` to refuse.
pub fn preset_zone(args: &[std::ffi::OsString]) {
    let mut it = args.iter().map(|a| a.to_string_lossy());
    while let Some(a) = it.next() {
        let name = match a.strip_prefix("--tz") {
            _ if a == "--" => return,
            Some("") => it.next().map(|v| v.into_owned()),
            Some(v) => v.strip_prefix('=').map(str::to_owned),
            None => None,
        };
        if let Some(tz) = name.and_then(|n| parse_zone(&n).ok()) {
            let _ = ZONE.set(tz);
            return;
        }
    }
}

/// `--local`: print RFC 3339 times in [`zone`] (set once, at start).
pub fn set_print_local(local: bool) {
    let _ = PRINT_LOCAL.set(local);
}

/// A value parser for every time flag: [`parse_time_in`] in [`zone`] at the wall clock.
pub fn parse_now(s: &str) -> Result<i64, String> {
    parse_time_in(s, zone(), super::args::wall_clock_ms())
}

const FORMS: &str = "epoch milliseconds (1730000000000), RFC 3339 (2024-10-27T03:33:20Z), \
    a local date-time (2024-10-27 03:33[:20[.5]], 2024-10-27T03:33, 2024-10-27) \
    or a relative time (now, -1h, +30m, 2d ago)";

/// The epoch milliseconds `s` names: epoch ms, RFC 3339 with an offset, a local date-time in
/// `tz` (refused when the clocks skipped it or showed it twice), or a time relative to `now_ms`.
pub fn parse_time_in(s: &str, tz: &TimeZone, now_ms: i64) -> Result<i64, String> {
    let t = s.trim();
    if let Ok(ms) = t.parse::<i64>() {
        return Ok(ms);
    }
    if let Some(ms) = relative_time(t, now_ms) {
        return ms;
    }
    if let Ok(ts) = t.parse::<Timestamp>() {
        return Ok(ts.as_millisecond());
    }
    let dt: DateTime = t
        .parse()
        .map_err(|_| format!("`{s}` is not a time: give {FORMS}"))?;
    local_instant(s, dt, tz)
}

/// `dt` in `tz`, or why it names no single instant there.
fn local_instant(s: &str, dt: DateTime, tz: &TimeZone) -> Result<i64, String> {
    let name = tz.iana_name().unwrap_or("the local time zone");
    let at = |o: Offset| {
        o.to_timestamp(dt)
            .map_err(|e| format!("`{s}`: {e}"))
            .map(|t| t.as_millisecond())
    };
    match tz.to_ambiguous_timestamp(dt).offset() {
        AmbiguousOffset::Unambiguous { offset } => at(offset),
        AmbiguousOffset::Fold { before, after } => Err(format!(
            "`{s}` happened twice in {name} (the clocks went back from {} to {}): \
             {} or {}; give the offset, as in {dt}{}",
            offset_text(before),
            offset_text(after),
            rfc3339(at(before)?, before),
            rfc3339(at(after)?, after),
            offset_text(before),
        )),
        AmbiguousOffset::Gap { before, after } => {
            // The transition is the first one after the earlier of the two readings.
            let from = Timestamp::from_millisecond(at(after)?.min(at(before)?))
                .map_err(|e| e.to_string())?;
            let change = tz.following(from).next().map_or(String::new(), |tr| {
                let ms = tr.timestamp().as_millisecond();
                format!(
                    ": at {} the clocks jumped from {} to {}",
                    rfc3339(ms, Offset::UTC),
                    hhmm(ms, before),
                    hhmm(ms, after)
                )
            });
            Err(format!(
                "`{s}` never happened in {name}{change}; give a time outside the gap \
                 or an offset"
            ))
        }
    }
}

/// The local wall-clock `HH:MM` of `ms` at `offset`.
fn hhmm(ms: i64, offset: Offset) -> String {
    rfc3339(ms, offset)[11..16].to_owned()
}

/// `now`, or a time relative to `now_ms`: `-1h`, `+30m`, `2d ago`, `1h 30m ago`; `None` when
/// `s` is not written so.
fn relative_time(s: &str, now_ms: i64) -> Option<Result<i64, String>> {
    if s.eq_ignore_ascii_case("now") {
        return Some(Ok(now_ms));
    }
    let (sign, body) = if let Some(b) = s.strip_suffix("ago") {
        (-1, b.trim_end())
    } else if let Some(b) = s.strip_prefix('-') {
        (-1, b)
    } else if let Some(b) = s.strip_prefix('+') {
        (1, b)
    } else {
        return None;
    };
    let span = parse_span(body)?;
    Some(
        span.checked_mul(sign)
            .and_then(|d| now_ms.checked_add(d))
            .ok_or_else(|| format!("`{s}` is out of range")),
    )
}

/// A span written `2d`, `1h 30m`, `1.5s`, `250ms` (units w, d, h, m, s, ms; a day is 24 h)
/// in milliseconds.
fn parse_span(s: &str) -> Option<i64> {
    let mut rest = s.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total: i64 = 0;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..n].parse().ok()?;
        rest = rest[n..].trim_start();
        let u = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let unit: i64 = match &rest[..u] {
            "w" | "week" | "weeks" => 604_800_000,
            "d" | "day" | "days" => 86_400_000,
            "h" | "hour" | "hours" => 3_600_000,
            "m" | "min" | "mins" | "minute" | "minutes" => 60_000,
            "s" | "sec" | "secs" | "second" | "seconds" => 1000,
            "ms" => 1,
            _ => return None,
        };
        rest = rest[u..].trim_start();
        let ms = number * unit as f64;
        if !ms.is_finite() || ms.abs() > i64::MAX as f64 / 2.0 {
            return None;
        }
        total = total.checked_add(ms.round() as i64)?;
    }
    Some(total)
}

/// How a command prints an epoch-millisecond time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimeFormat {
    /// Epoch milliseconds, as Kafka stores and kafka-dump-log prints them.
    Ms,
    /// RFC 3339 in UTC (`2026-01-01T00:00:00.009Z`), or in the local zone with `--local`.
    Rfc3339,
    /// RFC 3339 in the local zone (`--tz`, else this machine's), with its offset.
    Local,
}

impl TimeFormat {
    /// `ms` as this format says; -1 (Kafka's "no timestamp") stays `-1` in every format.
    pub fn show(self, ms: i64) -> String {
        if ms == -1 {
            return "-1".to_owned();
        }
        // Beyond jiff's years (±9999) the offset is moot: such a time is shown in UTC.
        let local = || Timestamp::from_millisecond(ms).map_or(Offset::UTC, |t| zone().to_offset(t));
        match self {
            TimeFormat::Ms => ms.to_string(),
            TimeFormat::Rfc3339 if !PRINT_LOCAL.get().copied().unwrap_or(false) => {
                rfc3339(ms, Offset::UTC)
            }
            TimeFormat::Rfc3339 | TimeFormat::Local => rfc3339(ms, local()),
        }
    }

    /// `ms` with its age at `now_ms` (`2026-01-01T00:00:00.009Z (4d 3h ago)`); epoch
    /// milliseconds alone in `ms`, and `-1` alone.
    pub fn with_age(self, ms: i64, now_ms: i64) -> String {
        match self {
            TimeFormat::Ms => self.show(ms),
            _ if ms == -1 => self.show(ms),
            _ => format!("{} ({})", self.show(ms), relative(ms, now_ms)),
        }
    }

    /// A span of `ms` milliseconds: the number in `ms`, else as a [`duration`] (`4d 3h`).
    pub fn span(self, ms: i64) -> String {
        match self {
            TimeFormat::Ms => ms.to_string(),
            _ => duration(ms),
        }
    }

    /// A span of `ms` milliseconds to the millisecond: `<ms> ms` in `ms`, else as an
    /// [`exact_duration`] (`1.341s`).
    pub fn exact_span(self, ms: i64) -> String {
        match self {
            TimeFormat::Ms => format!("{ms} ms"),
            _ => exact_duration(ms),
        }
    }

    /// The heading of a column of spans: `age (ms)` in `ms`, else `age`.
    pub fn span_heading(self, name: &str) -> String {
        match self {
            TimeFormat::Ms => format!("{name} (ms)"),
            _ => name.to_owned(),
        }
    }
}

/// `--time-format`, for the commands whose tables and summaries show times (RFC 3339 UTC
/// with ages by default; JSON keeps epoch milliseconds).
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct TimeArgs {
    /// How the text shows times: RFC 3339 in UTC (the default, with ages; in the local zone
    /// with --local), in the local zone (`local`), or epoch milliseconds (`ms`, as Kafka
    /// stores them). JSON keeps ms.
    #[arg(long, value_enum, default_value_t = TimeFormat::Rfc3339)]
    pub time_format: TimeFormat,
}

/// How long before `now_ms` the time `ms` was (`4d 3h ago`), or how long after (`in 2h`).
pub fn relative(ms: i64, now_ms: i64) -> String {
    if ms <= now_ms {
        format!("{} ago", duration(now_ms - ms))
    } else {
        format!("in {}", duration(ms - now_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_of_hand_computed_instants() {
        let f = TimeFormat::Rfc3339;
        assert_eq!(f.show(0), "1970-01-01T00:00:00.000Z");
        // 2024-10-27T03:33:20Z is 1_730_000_000 s (date -d @1730000000 -u).
        assert_eq!(f.show(1_730_000_000_500), "2024-10-27T03:33:20.500Z");
        // A leap day, and a time before 1970.
        assert_eq!(f.show(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(f.show(-86_400_001), "1969-12-30T23:59:59.999Z");
        assert_eq!(f.show(-1), "-1");
        assert_eq!(TimeFormat::Ms.show(1_767_222_000_009), "1767222000009");
    }

    #[test]
    fn rfc3339_round_trips_through_the_parser() {
        let mut x: i64 = 1;
        for _ in 0..10_000 {
            // A spread of instants from 1970 to about 2500 (xorshift).
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ms = x.rem_euclid(16_725_225_600_000);
            assert_eq!(parse_now(&TimeFormat::Rfc3339.show(ms)), Ok(ms), "{ms}");
        }
    }

    #[test]
    fn relative_ages() {
        assert_eq!(relative(1_000, 61_000), "1m ago");
        assert_eq!(relative(7_200_000, 0), "in 2h");
    }

    #[test]
    fn times_with_ages_and_spans_in_each_format() {
        // 2024-10-27T03:33:20Z, 4 days and 3 hours before the clock.
        let (t, now) = (
            1_730_000_000_000,
            1_730_000_000_000 + 4 * 86_400_000 + 3 * 3_600_000,
        );
        assert_eq!(
            TimeFormat::Rfc3339.with_age(t, now),
            "2024-10-27T03:33:20.000Z (4d 3h ago)"
        );
        assert_eq!(TimeFormat::Ms.with_age(t, now), "1730000000000");
        assert_eq!(TimeFormat::Rfc3339.with_age(-1, now), "-1");
        assert_eq!(TimeFormat::Rfc3339.span(90_000), "1m 30s");
        assert_eq!(TimeFormat::Ms.span(90_000), "90000");
        assert_eq!(TimeFormat::Ms.span_heading("age"), "age (ms)");
        assert_eq!(TimeFormat::Local.span_heading("age"), "age");
    }
}
