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
    let open = &json(&x, &txns)["partitions"][0]["open"][0];
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
