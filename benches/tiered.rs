//! Reading a tiered partition through a local S3 server (run: `cargo bench --bench tiered`;
//! needs `python3 -m moto.server`, from `pip install 'moto[server]'`).
//!
//! Writes a partition of `KSEG_BENCH_TIERED_MIB` MiB (default 257: two closed 128 MiB segments
//! and the active one) and tiers the segments the broker would copy into a local directory,
//! into moto's S3 server and, when the `s3s-fs` crate's server is installed (`cargo install
//! s3s-fs --version 0.14.1 --features binary`; `KSEG_BENCH_S3S_FS` names another binary), into
//! that one, which serves requests in parallel where moto, one Python process, serves them one
//! at a time; and, when nginx is installed, reads that cost a server next to no CPU: nginx
//! serving the objects' files with `sendfile`, moto its listings. The baseline of the ratios
//! is `kseg verify --deep` of the whole partition on local disk. Against it, in the same run:
//! `kseg tiered --deep` (every remote segment read: framing, CRCs, offset index) through each
//! store, with the default read-ahead and, through S3, with none (`--remote-requests 0`: one
//! ranged GET at a time); then, once the tiered segments are deleted locally as the broker's
//! retention deletes them, `kseg verify --deep --remote` of the partition, its tiered part read
//! from each store (the measure).
//! Each is a `kseg` process, run `KSEG_BENCH_REPEATS` times (default 3): the median time and
//! the largest peak RSS are printed (goal: under 64 MiB plus chunk size × requests in flight).

use std::path::Path;
use std::process::{Command, Stdio};

use kseg::format::Compression;

mod common;
#[path = "../tests/common/moto.rs"]
mod moto;

/// Where the partition is tiered in each S3 server.
const REMOTE: &str = "s3://bench/cluster";

/// Times a command and reads its peak RSS and CPU time from its parent's `RUSAGE_CHILDREN`: a
/// small python3 process runs it, since a child spawned from this process (which holds the
/// partition it wrote) is charged this process's resident memory at the exec.
const MEASURE: &str = "import resource, subprocess, sys, time
t = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(time.perf_counter() - t, r.ru_maxrss, r.ru_utime + r.ru_stime, code)";

/// One run of a command: wall seconds, peak RSS in KiB, and the CPU seconds of kseg and of the
/// server it read from (the two share the machine's cores).
#[derive(Clone, Copy)]
struct Run {
    secs: f64,
    rss: i64,
    cpu: f64,
    server_cpu: f64,
}

/// The first child process of `pid` (waiting up to a second for it to start), or `pid`.
fn child_of(pid: u32) -> u32 {
    for _ in 0..50 {
        let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"));
        if let Some(child) = children
            .ok()
            .and_then(|c| c.split_whitespace().next()?.parse().ok())
        {
            return child;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    pid
}

/// CPU seconds the process `pid` has used (`/proc/PID/stat`'s utime and stime).
fn cpu_of(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    // SAFETY: sysconf reads a constant of the system.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// Runs `kseg ARGS` to completion, reading from the server whose pid is `server`, if any.
fn run(args: &[&str], env: &[(&str, &str)], server: Option<u32>) -> Run {
    let before = server.map_or(0.0, cpu_of);
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
        out.status.success() && fields.len() == 4 && fields[3] == "0",
        "kseg {args:?}: {text}"
    );
    Run {
        secs: fields[0].parse().unwrap(),
        rss: fields[1].parse().unwrap(),
        cpu: fields[2].parse().unwrap(),
        server_cpu: server.map_or(0.0, cpu_of) - before,
    }
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
    let env = [
        ("AWS_ACCESS_KEY_ID", "bench"),
        ("AWS_SECRET_ACCESS_KEY", "bench"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ALLOW_HTTP", "true"),
    ];
    for (k, v) in env {
        std::env::set_var(k, v);
    }
    let moto = moto::start(&[]).expect("moto's S3 server starts (pip install 'moto[server]')");
    moto::create_bucket(&moto.endpoint, "bench");
    let s3s_root = tmp.path().join("s3s");
    std::fs::create_dir_all(s3s_root.join("bench")).unwrap();
    let s3s_program = std::env::var_os("KSEG_BENCH_S3S_FS").unwrap_or_else(|| "s3s-fs".into());
    let s3s = moto::start_s3s_fs(Path::new(&s3s_program), &s3s_root, "bench");
    if s3s.is_none() {
        println!("s3s-fs not installed: S3 through moto only");
    }
    let mut servers = vec![("moto", moto.endpoint.clone(), moto.pid())];
    if let Some(s) = &s3s {
        servers.push(("s3s-fs", s.endpoint.clone(), s.pid()));
    }
    let local_tier = tmp.path().join("tier");
    let local = local_tier.display().to_string();
    let metadata_dir = |t: &kseg::ops::remote::tier::TierSummary| {
        log_dir.join(format!("__remote_log_metadata-{}", t.metadata_partition))
    };
    let t = kseg::ops::remote::tier::tier(&dir, &local, &Default::default(), &topic_id).unwrap();
    for (_, endpoint, _) in &servers {
        // Segment ids follow from the topic id and offsets, so the metadata is the same for
        // every copy; a tiering skips segments the metadata already has.
        std::fs::remove_dir_all(metadata_dir(&t)).unwrap();
        let options = kseg::storage::store::RemoteOptions {
            endpoint: Some(endpoint.clone()),
            ..Default::default()
        };
        kseg::ops::remote::tier::tier(&dir, REMOTE, &options, &topic_id).unwrap();
    }
    // nginx serving the local tier's files as the bucket's objects (the same bytes under the
    // same keys), moto answering its listings.
    let nginx_root = tmp.path().join("nginx");
    std::fs::create_dir_all(nginx_root.join("bench")).unwrap();
    std::os::unix::fs::symlink(&local_tier, nginx_root.join("bench/cluster")).unwrap();
    let nginx = moto::start_nginx(&nginx_root, tmp.path(), &moto.endpoint);
    match &nginx {
        // Its worker serves the requests; the process started is its master.
        Some(n) => servers.push(("nginx", n.endpoint.clone(), child_of(n.pid()))),
        None => println!("nginx not installed (apt-get install nginx-light): no server at no CPU"),
    }
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
    // The medians of `repeats` runs, but for the peak RSS: the largest.
    let measure = |args: &[String], server: Option<u32>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let runs: Vec<Run> = (0..repeats).map(|_| run(&args, &env, server)).collect();
        let median = |f: fn(&Run) -> f64| common::median(runs.iter().map(f).collect());
        Run {
            secs: median(|r| r.secs),
            rss: runs.iter().map(|r| r.rss).max().unwrap_or(0),
            cpu: median(|r| r.cpu),
            server_cpu: median(|r| r.server_cpu),
        }
    };
    // `command` of the partition, with `--remote` naming the store at `endpoint` (none: the
    // local directory) when `remote`.
    let args = |command: &[&str], remote: bool, endpoint: Option<&str>, extra: &[&str]| {
        let mut args: Vec<String> = command.iter().map(|a| a.to_string()).collect();
        match (remote, endpoint) {
            (false, _) => {}
            (true, None) => args.extend(["--remote".into(), local.clone()]),
            (true, Some(e)) => args.extend([
                "--remote".into(),
                REMOTE.into(),
                "--remote-endpoint".into(),
                e.into(),
            ]),
        }
        args.extend(extra.iter().map(|a| a.to_string()));
        args.push(d.clone());
        args
    };
    let base = measure(&args(&["verify", "--deep", "-q"], false, None, &[]), None);
    println!(
        "{:<46} {:7.2} s  peak RSS {:4} MiB  (baseline)  kseg CPU {:.2} s",
        "verify --deep, local partition:",
        base.secs,
        base.rss >> 10,
        base.cpu
    );
    let line = |label: &str, r: Run, bytes: u64| {
        println!(
            "{label:<46} {:7.2} s  peak RSS {:4} MiB  {:5.2}x  {:6.1} MiB/s  kseg CPU {:.2} s, server CPU {:.2} s",
            r.secs,
            r.rss >> 10,
            r.secs / base.secs,
            (bytes >> 20) as f64 / r.secs,
            r.cpu,
            r.server_cpu
        )
    };
    let deep = ["tiered", "--deep"];
    line(
        "tiered --deep, tier on local disk:",
        measure(&args(&deep, true, None, &[]), None),
        tiered,
    );
    for (name, endpoint, pid) in &servers {
        let e = Some(endpoint.as_str());
        line(
            &format!("tiered --deep, tier in S3 ({name}):"),
            measure(&args(&deep, true, e, &[]), Some(*pid)),
            tiered,
        );
        line(
            "  same, --remote-requests 0 (no read-ahead):",
            measure(
                &args(&deep, true, e, &["--remote-requests", "0"]),
                Some(*pid),
            ),
            tiered,
        );
    }
    // What the broker's retention leaves once the segments are in the remote tier.
    for s in &t.segments {
        let stem = kseg::format::names::format_offset(s.start_offset);
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.file_stem().and_then(|s| s.to_str()) == Some(stem.as_str()) {
                std::fs::remove_file(f).unwrap();
            }
        }
    }
    let verify = ["verify", "--deep", "-q"];
    let whole = mib << 20;
    line(
        "verify --deep --remote, tier on local disk:",
        measure(&args(&verify, true, None, &[]), None),
        whole,
    );
    for (name, endpoint, pid) in &servers {
        line(
            &format!("verify --deep --remote, tier in S3 ({name}):"),
            measure(&args(&verify, true, Some(endpoint), &[]), Some(*pid)),
            whole,
        );
    }
    drop(nginx);
    drop(s3s);
    drop(moto);
}
