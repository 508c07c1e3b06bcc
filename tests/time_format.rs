//! `--time-format` (issue 17, item 3) on offsets, stats, txns and groups: the text shows the
//! times of the JSON (epoch ms) in RFC 3339 UTC by default, as GNU `date -u` writes them, epoch
//! milliseconds with `--time-format ms`, and ages and spans as durations.

mod common;

use std::path::Path;

use serde_json::Value;

/// `ms` as RFC 3339 UTC with milliseconds, by GNU date (an independent formatter).
fn date(ms: i64) -> String {
    let out = std::process::Command::new("date")
        .args(["-u", "-d", &format!("@{}", ms.div_euclid(1000))])
        .arg("+%Y-%m-%dT%H:%M:%S")
        .output()
        .unwrap();
    format!(
        "{}.{:03}Z",
        String::from_utf8(out.stdout).unwrap().trim(),
        ms.rem_euclid(1000)
    )
}

fn text(args: &[&str], path: &Path) -> String {
    let out = common::kseg(&[args, &[path.to_str().unwrap()]].concat());
    String::from_utf8(out.stdout).unwrap()
}

fn json(args: &[&str], path: &Path) -> Value {
    let out = common::kseg(&[args, &["--json", path.to_str().unwrap()]].concat());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn offsets_stats_and_txns_show_json_times_in_each_format() {
    let Some(root) = common::reference_dir() else {
        return;
    };
    let plain = root.join("a-plain-v2/input/orders-0");
    // offsets: the record with the largest timestamp.
    let q = ["offsets", "--time", "max-timestamp"];
    let ts = json(&q, &plain)["partitions"][0]["timestamp"]
        .as_i64()
        .unwrap();
    assert!(text(&q, &plain).contains(&format!("timestamp={} ", date(ts))));
    let ms = [&q[..], &["--time-format", "ms"]].concat();
    assert!(text(&ms, &plain).contains(&format!("timestamp={ts} ")));
    // stats: min and max with their ages at --now (3 h after the corpus' last write).
    let now = 1_730_000_000_000i64;
    let s = ["stats", "--now", "1730000000000"];
    let t = &json(&s, &plain)["total"]["time"];
    let (min, max) = (
        t["minTimestamp"].as_i64().unwrap(),
        t["maxTimestamp"].as_i64().unwrap(),
    );
    let age = |ms: i64| {
        let m = (now - ms) / 60_000;
        format!("{}h {}m ago", m / 60, m % 60)
    };
    let shown = text(&s, &plain);
    let want = format!(
        "min {} ({}) max {} ({})",
        date(min),
        age(min),
        date(max),
        age(max)
    );
    assert!(shown.contains(&want), "{want} not in {shown}");
    let shown_ms = text(&[&s[..], &["--time-format", "ms"]].concat(), &plain);
    assert!(
        shown_ms.contains(&format!("min {min} max {max};")),
        "{shown_ms}"
    );
    // txns: an open transaction's last timestamp, and its age as a duration (ms with ms).
    let txns = root.join("c-transactions/input/orders-0");
    let x = ["txns", "--now", "1730000000000"];
    let open = &json(&x, &txns)["partitions"][0]["openTransactions"][0];
    let (last, age_ms) = (
        open["lastTimestamp"].as_i64().unwrap(),
        open["ageMs"].as_i64().unwrap(),
    );
    let shown = text(&x, &txns);
    let row = shown
        .lines()
        .find(|l| l.contains("HANGING"))
        .expect("the open transaction's row");
    let (m, s) = (age_ms / 60_000, age_ms / 1000 % 60);
    assert!(
        row.contains(&date(last)) && row.contains(&format!("{m}m {s}s")),
        "{row}"
    );
    assert!(shown.contains(" age ") && !shown.contains("age (ms)"));
    let shown_ms = text(&[&x[..], &["--time-format", "ms"]].concat(), &txns);
    let row = shown_ms.lines().find(|l| l.contains("HANGING")).unwrap();
    assert!(row.contains(&format!(" {last} ")) && row.contains(&format!(" {age_ms} ")));
    assert!(shown_ms.contains("age (ms)"));
}

#[test]
fn groups_show_commit_times_in_each_format() {
    let Some(root) = common::reference_internal_dir() else {
        return;
    };
    let dir = root.join("offsets-classic/input/__consumer_offsets-0");
    let report = json(&["groups"], &dir);
    let commits: Vec<i64> = report["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["offsets"].as_array().unwrap())
        .map(|o| o["commitTimestamp"].as_i64().unwrap())
        .collect();
    assert!(!commits.is_empty());
    let shown = text(&["groups"], &dir);
    let shown_ms = text(&["groups", "--time-format", "ms"], &dir);
    for c in commits {
        assert!(shown.contains(&date(c)), "{}", date(c));
        assert!(shown_ms.contains(&format!(" {c} ")), "{c}");
    }
}

/// Time flags (issue 37): inputs → epoch ms, in zones, with DST gaps and folds refused
/// naming the gap or both readings. `now` is 2024-10-27T03:33:20Z for relative times.
#[test]
fn time_flags_read_the_forms_people_write() {
    use kseg::cli::time::parse_time_in;
    let zone = |name: &str| jiff::tz::TimeZone::get(name).unwrap();
    let (utc, tokyo, paris, ny) = (
        zone("UTC"),
        zone("Asia/Tokyo"),
        zone("Europe/Paris"),
        zone("America/New_York"),
    );
    let now = 1_730_000_000_000;
    let ok = [
        ("1730000000000", &utc, 1_730_000_000_000),
        ("-5", &utc, -5),
        ("2024-10-27T03:33:20Z", &tokyo, 1_730_000_000_000),
        ("2024-10-27T05:33:20.5+02:00", &utc, 1_730_000_000_500),
        ("2024-10-27 03:33:20", &utc, 1_730_000_000_000),
        ("2024-10-27 03:33:20.123", &utc, 1_730_000_000_123),
        ("2024-10-27 03:33", &utc, 1_729_999_980_000),
        ("2024-10-27T03:33", &utc, 1_729_999_980_000),
        ("2024-10-27", &utc, 1_729_987_200_000),
        // date -u -d '2016-11-18 08:05 +0900' +%s
        ("2016-11-18 08:05", &tokyo, 1_479_423_900_000),
        // Paris is back on +01:00 after 03:00 that morning.
        ("2024-10-27 03:33:20", &paris, 1_729_996_400_000),
        ("now", &utc, now),
        ("-1h", &utc, now - 3_600_000),
        ("+30m", &utc, now + 1_800_000),
        ("2d ago", &utc, now - 172_800_000),
        ("1h 30m ago", &utc, now - 5_400_000),
        ("1.5s ago", &utc, now - 1_500),
    ];
    for (input, tz, want) in ok {
        assert_eq!(parse_time_in(input, tz, now), Ok(want), "{input}");
    }
    let refused = [
        // The hour New York skipped, and the one it saw twice, and Paris' fold.
        (
            "2024-03-10 02:30",
            &ny,
            vec![
                "never happened",
                "02:00 to 03:00",
                "2024-03-10T07:00:00.000Z",
            ],
        ),
        (
            "2024-11-03 01:30",
            &ny,
            vec![
                "happened twice",
                "2024-11-03T01:30:00.000-04:00",
                "2024-11-03T01:30:00.000-05:00",
            ],
        ),
        (
            "2024-10-27 02:30",
            &paris,
            vec!["happened twice", "+02:00", "+01:00"],
        ),
        ("yesterday", &utc, vec!["is not a time", "RFC 3339"]),
        ("2024-13-01", &utc, vec!["is not a time"]),
        ("-1x", &utc, vec!["is not a time"]),
    ];
    for (input, tz, words) in refused {
        let e = parse_time_in(input, tz, now).expect_err(input);
        for w in words {
            assert!(e.contains(w), "{input}: {w:?} not in {e}");
        }
    }
}

/// Through the command line: `--tz` is honoured wherever it stands, an impossible local time
/// is bad input (exit 2, the reason on stderr), and `--local` prints in the zone.
#[test]
fn time_flags_on_the_command_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/orders/orders-0");
    let d = dir.to_str().unwrap();
    let out = common::kseg(&[
        "txns",
        "--now",
        "2024-03-10 02:30",
        "--tz",
        "America/New_York",
        d,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("never happened in America/New_York"));
    let out = common::kseg(&[
        "stats",
        "--tz",
        "Asia/Tokyo",
        "--local",
        "--now",
        "2026-01-02",
        d,
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("+09:00 ("), "{text}");
    let out = common::kseg(&["stats", "--tz", "Nowhere/Atlantis", d]);
    assert_eq!(out.status.code(), Some(2));
}
