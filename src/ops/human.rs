//! Durations and sizes as people read them, one formatter each for every report and table:
//! durations in days, hours, minutes and seconds, sizes in binary units (KiB, MiB, GiB),
//! instants in RFC 3339 UTC inside findings' messages.

/// An epoch-millisecond instant in RFC 3339 UTC to the millisecond, for messages (the `--time`
/// options of the CLI decide how report fields are shown); beyond jiff's years, the number.
pub fn instant(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).map_or_else(
        |_| format!("{ms} ms since the epoch"),
        |t| t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
    )
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
