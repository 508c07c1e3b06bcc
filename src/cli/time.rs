//! Times as people read them: `--time-format ms|rfc3339|local`, and ages as durations.

use clap::ValueEnum;

/// How a command prints an epoch-millisecond time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimeFormat {
    /// Epoch milliseconds, as Kafka stores and kafka-dump-log prints them.
    Ms,
    /// RFC 3339 in UTC (`2026-01-01T00:00:00.009Z`).
    Rfc3339,
    /// RFC 3339 in this machine's time zone, with its offset.
    Local,
}

impl TimeFormat {
    /// `ms` as this format says; -1 (Kafka's "no timestamp") stays `-1` in every format.
    pub fn show(self, ms: i64) -> String {
        if ms == -1 {
            return "-1".to_owned();
        }
        match self {
            TimeFormat::Ms => ms.to_string(),
            TimeFormat::Rfc3339 => rfc3339(ms, 0),
            TimeFormat::Local => rfc3339(ms, local_offset_seconds(ms)),
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
    /// How the text shows times: RFC 3339 in UTC (the default, with ages), in this machine's
    /// zone (`local`), or epoch milliseconds (`ms`, as Kafka stores them). JSON keeps ms.
    #[arg(long, value_enum, default_value_t = TimeFormat::Rfc3339)]
    pub time_format: TimeFormat,
}

/// `ms` as RFC 3339 at `offset_s` seconds east of UTC (`Z` for 0), milliseconds shown.
fn rfc3339(ms: i64, offset_s: i64) -> String {
    let local = ms + offset_s * 1000;
    let days = local.div_euclid(86_400_000);
    let in_day = local.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, mi, s, milli) = (
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000,
    );
    let zone = if offset_s == 0 {
        "Z".to_owned()
    } else {
        let sign = if offset_s < 0 { '-' } else { '+' };
        let a = offset_s.abs() / 60;
        format!("{sign}{:02}:{:02}", a / 60, a % 60)
    };
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}{zone}")
}

/// The proleptic Gregorian date of a day count from 1970-01-01 (Howard Hinnant's algorithm,
/// the inverse of the one `parse_now` uses).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// This machine's UTC offset at `ms`, from the C library's time zone rules (`TZ`).
fn local_offset_seconds(ms: i64) -> i64 {
    let t = ms.div_euclid(1000) as libc::time_t;
    // SAFETY: localtime_r writes only into `tm`, which is a plain C struct we own.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return 0;
        }
        tm.tm_gmtoff
    }
}

/// A duration as people say it: its two largest units (`4d 3h`, `2m 5s`, `350ms`).
pub fn duration(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    let ms = ms.unsigned_abs();
    if ms < 1000 {
        return format!("{sign}{ms}ms");
    }
    let units = [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1000),
    ];
    let first = units
        .iter()
        .position(|&(_, u)| ms >= u)
        .expect("ms >= 1000");
    let (n1, u1) = units[first];
    let mut out = format!("{sign}{}{n1}", ms / u1);
    if let Some(&(n2, u2)) = units.get(first + 1) {
        let rest = ms % u1 / u2;
        if rest > 0 {
            out += &format!(" {rest}{n2}");
        }
    }
    out
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
    use crate::cli::args::parse_now;

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
    fn durations_in_their_two_largest_units() {
        assert_eq!(duration(350), "350ms");
        assert_eq!(duration(125_000), "2m 5s");
        assert_eq!(duration(4 * 86_400_000 + 3 * 3_600_000 + 59_000), "4d 3h");
        assert_eq!(duration(3_600_000), "1h");
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
