//! Reading a tiered partition through a local S3 server (run: `cargo bench --bench tiered`;
//! needs `python3 -m moto.server`, from `pip install 'moto[server]'`).
//!
//! Writes a partition of `KSEG_BENCH_TIERED_MIB` MiB (default 257: two closed 128 MiB segments
//! and the active one), tiers its closed segments into a local directory and into moto's S3
//! server, then times, in one run, `kseg tiered --deep` (every remote segment read: framing,
//! CRCs, offset index) through S3 and through the directory, and `kseg verify --deep` of the
//! untiered partition on local disk, the baseline of the ratios. Through S3 it runs with the
//! default read-ahead and with none (`--remote-requests 0`: one ranged GET at a time). Each is
//! a `kseg` process, run `KSEG_BENCH_REPEATS` times (default 3): the median time and the
//! largest peak RSS are printed (goal: under 64 MiB plus chunk size × requests in flight).

use std::process::{Command, Stdio};

use kseg::format::Compression;

mod common;
#[path = "../tests/common/moto.rs"]
mod moto;

/// Times a command and reads its peak RSS from its parent's `RUSAGE_CHILDREN`: a small
/// python3 process runs it, since a child spawned from this process (which holds the partition
/// it wrote) is charged this process's resident memory at the exec.
const MEASURE: &str = "import resource, subprocess, sys, time
t = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)";

/// Runs `kseg ARGS` to completion: seconds and peak RSS in KiB.
fn run(args: &[&str], env: &[(&str, &str)]) -> (f64, i64) {
    let out = Command::new("python3")
        .args(["-c", MEASURE, env!("CARGO_BIN_EXE_kseg")])
        .args(args)
        .envs(env.iter().copied())
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let fields: Vec<&str> = text.split_whitespace().collect();
    assert!(
        out.status.success() && fields.len() == 3 && fields[2] == "0",
        "kseg {args:?}: {text}"
    );
    (fields[0].parse().unwrap(), fields[1].parse().unwrap())
}

fn main() {
    let mib = common::env_u64("KSEG_BENCH_TIERED_MIB", 257);
    let tmp = tempfile::Builder::new()
        .prefix("tiered-bench")
        .tempdir()
        .unwrap();
    let log_dir = tmp.path().join("logs");
    let dir = log_dir.join("bench-0");
    common::write_partition(&dir, Compression::None, mib << 20);
    let topic_id = kseg::format::checkpoint::uuid_to_base64(b"kseg-bench-topic");
    let moto = moto::start(&[]).expect("moto's S3 server starts (pip install 'moto[server]')");
    let endpoint = moto.endpoint.clone();
    let created = Command::new("python3")
        .args(["-c", &format!("import urllib.request as u; u.urlopen(u.Request('{endpoint}/bench', method='PUT'))")])
        .status()
        .unwrap();
    assert!(created.success());
    let env = [
        ("AWS_ACCESS_KEY_ID", "bench"),
        ("AWS_SECRET_ACCESS_KEY", "bench"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT", endpoint.as_str()),
        ("AWS_ALLOW_HTTP", "true"),
    ];
    for (k, v) in env {
        std::env::set_var(k, v);
    }
    let options = kseg::storage::store::RemoteOptions {
        endpoint: Some(endpoint.clone()),
        ..Default::default()
    };
    let local_tier = tmp.path().join("tier");
    let local = local_tier.display().to_string();
    let t = kseg::ops::remote::tier::tier(&dir, &local, &options, &topic_id).unwrap();
    // The metadata is the same for both copies: written once, the second tiering skips it.
    std::fs::remove_dir_all(
        log_dir.join(format!("__remote_log_metadata-{}", t.metadata_partition)),
    )
    .unwrap();
    kseg::ops::remote::tier::tier(&dir, "s3://bench/cluster", &options, &topic_id).unwrap();
    let tiered: u64 = common::files(&local_tier)
        .iter()
        .map(|f| f.metadata().unwrap().len())
        .sum();
    println!(
        "partition of {mib} MiB; {} closed segment(s) tiered, {} MiB of objects; load {}",
        t.segments.len(),
        tiered >> 20,
        common::load_average()
    );
    let d = dir.display().to_string();
    let repeats = common::env_u64("KSEG_BENCH_REPEATS", 3) as usize;
    // The median time and the largest peak RSS of `repeats` runs.
    let measure = |args: &[&str]| {
        let runs: Vec<(f64, i64)> = (0..repeats).map(|_| run(args, &env)).collect();
        let rss = runs.iter().map(|r| r.1).max().unwrap_or(0);
        (common::median(runs.into_iter().map(|r| r.0).collect()), rss)
    };
    let s3_args = |extra: &[&'static str]| {
        let mut args = vec![
            "tiered",
            "--deep",
            "--remote",
            "s3://bench/cluster",
            "--remote-endpoint",
            endpoint.as_str(),
        ];
        args.extend_from_slice(extra);
        args.push(d.as_str());
        args
    };
    let (base, base_rss) = measure(&["verify", "--deep", "-q", &d]);
    let (disk, disk_rss) = measure(&["tiered", "--deep", "--remote", &local, &d]);
    let (s3, s3_rss) = measure(&s3_args(&[]));
    let (s3_one, s3_one_rss) = measure(&s3_args(&["--remote-requests", "0"]));
    drop(moto);
    let rate = |s: f64| (tiered >> 20) as f64 / s;
    println!(
        "verify --deep, local partition:         {base:7.2} s  peak RSS {:4} MiB  (baseline)",
        base_rss >> 10
    );
    println!(
        "tiered --deep, tier on local disk:      {disk:7.2} s  peak RSS {:4} MiB  {:5.2}x  {:6.1} MiB/s",
        disk_rss >> 10,
        disk / base,
        rate(disk)
    );
    println!(
        "tiered --deep, tier in S3 (moto):       {s3:7.2} s  peak RSS {:4} MiB  {:5.2}x  {:6.1} MiB/s",
        s3_rss >> 10,
        s3 / base,
        rate(s3)
    );
    println!(
        "  same, --remote-requests 0 (no read-ahead): {s3_one:7.2} s  peak RSS {:4} MiB  {:5.2}x  {:6.1} MiB/s",
        s3_one_rss >> 10,
        s3_one / base,
        rate(s3_one)
    );
}
