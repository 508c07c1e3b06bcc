//! Durations and sizes as people read them, one formatter each for every report and table:
//! durations in days, hours, minutes and seconds, sizes in binary units (KiB, MiB, GiB),
//! instants in RFC 3339 (milliseconds, at an offset; any i64).

use jiff::tz::Offset;

/// An epoch-millisecond instant in RFC 3339 UTC to the millisecond, for messages (the `--time`
/// options of the CLI decide how report fields are shown).
pub fn instant(ms: i64) -> String {
    rfc3339(ms, Offset::UTC)
}

/// `+HH:MM` (or `Z`) for an offset.
pub fn offset_text(offset: Offset) -> String {
    let s = i64::from(offset.seconds());
    if s == 0 {
        return "Z".to_owned();
    }
    let sign = if s < 0 { '-' } else { '+' };
    let a = s.abs() / 60;
    format!("{sign}{:02}:{:02}", a / 60, a % 60)
}

/// `ms` as RFC 3339 at `offset` (`Z` for UTC), milliseconds shown; any i64 (the civil
/// date is computed here, not by jiff, whose years stop at 9999).
pub fn rfc3339(ms: i64, offset: Offset) -> String {
    let local = ms + i64::from(offset.seconds()) * 1000;
    let days = local.div_euclid(86_400_000);
    let in_day = local.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, mi, s, milli) = (
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000,
    );
    let zone = offset_text(offset);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}{zone}")
}

/// The proleptic Gregorian date of a day count from 1970-01-01 (Howard Hinnant's algorithm).
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

/// A duration as people say it: its two largest units (`4d 3h`, `2m 5s`, `350ms`).
pub fn duration(ms: i64) -> String {
    let (sign, ms, first) = largest_unit(ms);
    let Some(first) = first else {
        return format!("{sign}{ms}ms");
    };
    let (n1, u1) = UNITS[first];
    let mut out = format!("{sign}{}{n1}", ms / u1);
    if let Some(&(n2, u2)) = UNITS.get(first + 1) {
        let rest = ms % u1 / u2;
        if rest > 0 {
            out += &format!(" {rest}{n2}");
        }
    }
    out
}

const UNITS: [(&str, u64); 4] = [
    ("d", 86_400_000),
    ("h", 3_600_000),
    ("m", 60_000),
    ("s", 1000),
];

/// The sign of `ms`, its magnitude, and the index in [`UNITS`] of its largest unit (none
/// below a second).
fn largest_unit(ms: i64) -> (&'static str, u64, Option<usize>) {
    let sign = if ms < 0 { "-" } else { "" };
    let ms = ms.unsigned_abs();
    (sign, ms, UNITS.iter().position(|&(_, u)| ms >= u))
}

/// A duration to the millisecond: every unit from the largest down, the seconds with their
/// milliseconds (`1d 0h 59m 59.826s`, `1.341s`, `1d`, `350ms`), trailing zero units left out.
pub fn exact_duration(ms: i64) -> String {
    let (sign, ms, first) = largest_unit(ms);
    let Some(first) = first else {
        return format!("{sign}{ms}ms");
    };
    // Down to the smallest unit with something below the unit above it.
    let last = (first + 1..UNITS.len())
        .rev()
        .find(|&i| ms % UNITS[i - 1].1 != 0)
        .unwrap_or(first);
    let mut parts = Vec::new();
    for (i, &(name, u)) in UNITS.iter().enumerate().take(last + 1).skip(first) {
        let n = if i == first {
            ms / u
        } else {
            ms % UNITS[i - 1].1 / u
        };
        if name == "s" && ms % 1000 != 0 {
            parts.push(format!("{n}.{:03}s", ms % 1000));
        } else {
            parts.push(format!("{n}{name}"));
        }
    }
    format!("{sign}{}", parts.join(" "))
}

/// Set once by the CLI's `--bytes`: every size in text, tables and messages alike, exact.
static EXACT_BYTES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes [`size`] print exact byte counts for the rest of the run (`--bytes`).
pub fn set_exact_bytes(exact: bool) {
    EXACT_BYTES.store(exact, std::sync::atomic::Ordering::Relaxed);
}

/// `bytes` in binary units: `512 B`, `1.5 KiB`, `23.4 MiB`, `1.0 GiB` (one decimal), or the
/// exact number after [`set_exact_bytes`].
pub fn size(bytes: u64) -> String {
    if EXACT_BYTES.load(std::sync::atomic::Ordering::Relaxed) {
        return bytes.to_string();
    }
    const NAMES: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < NAMES.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", NAMES[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_their_two_largest_units() {
        assert_eq!(duration(350), "350ms");
        assert_eq!(duration(125_000), "2m 5s");
        assert_eq!(duration(4 * 86_400_000 + 3 * 3_600_000 + 59_000), "4d 3h");
        assert_eq!(duration(3_600_000), "1h");
    }

    #[test]
    fn exact_durations_keep_every_millisecond() {
        assert_eq!(exact_duration(89_999_826), "1d 0h 59m 59.826s");
        assert_eq!(exact_duration(86_400_000), "1d");
        assert_eq!(exact_duration(1341), "1.341s");
        assert_eq!(exact_duration(90_000), "1m 30s");
        assert_eq!(exact_duration(3_600_000 + 1), "1h 0m 0.001s");
        assert_eq!(exact_duration(350), "350ms");
        assert_eq!(exact_duration(-2000), "-2s");
    }

    #[test]
    fn sizes_in_binary_units() {
        assert_eq!(size(0), "0 B");
        assert_eq!(size(1023), "1023 B");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(size(10 << 20), "10.0 MiB");
        assert_eq!(size(3 << 30), "3.0 GiB");
        assert_eq!(size(u64::MAX), "16.0 EiB");
    }
}
