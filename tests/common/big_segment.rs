//! Large partitions for memory and speed measurements, and the peak RSS of a child process.
//! Shared by the tests (`tests/common`) and the benchmarks (`benches/repair.rs` includes it).
#![allow(dead_code)] // each user takes a subset

use std::io::Write;
use std::path::{Path, PathBuf};

use kseg::format::batch::{build_batch, BatchSpec, RecordSpec};

/// Records per generated batch, and the bytes of each value.
const RECORDS: i64 = 100;
const VALUE_BYTES: usize = 150;

/// One uncompressed v2 batch of `RECORDS` records at offset 0.
fn template_batch() -> Vec<u8> {
    let records: Vec<RecordSpec> = (0..RECORDS)
        .map(|o| RecordSpec {
            offset: o,
            timestamp: 1_700_000_000_000 + o,
            key: Some(format!("key-{o}").into_bytes()),
            value: Some(vec![b'a' + (o % 26) as u8; VALUE_BYTES]),
            headers: vec![],
        })
        .collect();
    build_batch(&BatchSpec::default(), &records).unwrap()
}

/// Writes, in the new directory `<log_dir>/bench-0`, one segment `0.log` of about `bytes`
/// bytes of whole batches of `RECORDS` records each, then the first half of one more batch (a
/// torn tail), and no index files (the recovery rebuilds them). The batches are one batch
/// repeated with its base offset moved on: the base offset lies before the CRC's coverage, so
/// every copy is valid. Returns the partition directory and the bytes of whole batches.
pub fn torn_segment(log_dir: &Path, bytes: u64) -> (PathBuf, u64) {
    let dir = log_dir.join("bench-0");
    std::fs::create_dir_all(&dir).unwrap();
    let mut batch = template_batch();
    let log = std::fs::File::create(dir.join("00000000000000000000.log")).unwrap();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, log);
    let (mut offset, mut written) = (0i64, 0u64);
    while written + batch.len() as u64 <= bytes {
        batch[..8].copy_from_slice(&offset.to_be_bytes());
        out.write_all(&batch).unwrap();
        written += batch.len() as u64;
        offset += RECORDS;
    }
    batch[..8].copy_from_slice(&offset.to_be_bytes());
    out.write_all(&batch[..batch.len() / 2]).unwrap();
    out.flush().unwrap();
    (dir, written)
}

/// Writes through the engine the partition `<log_dir>/<name>` of `segments` segments of
/// `segment_bytes` each (the last one partly filled), closed cleanly. Returns the base offset
/// of the last segment.
pub fn closed_partition(log_dir: &Path, name: &str, segments: usize, segment_bytes: u64) -> i64 {
    use kseg::storage::{CloseMode, Log, LogConfig};
    let config = LogConfig {
        segment_bytes,
        ..LogConfig::default()
    };
    let mut log = Log::create(
        &log_dir.join(name),
        config,
        0,
        *b"kseg-bench-topic",
        1_700_000_000_000,
    )
    .unwrap();
    let mut batch = template_batch();
    let mut offset = 0i64;
    while log.segments().count() < segments {
        batch[..8].copy_from_slice(&offset.to_be_bytes());
        log.append_as_follower(&batch).unwrap();
        offset += RECORDS;
    }
    let last = log.segments().last().unwrap().base_offset();
    log.close(CloseMode::Clean).unwrap();
    last
}

/// Writes, in the new directory `<log_dir>/bench-0`, `count` empty segments (bases 0, 1, …),
/// each with empty index files when `with_indexes`.
pub fn empty_segments(log_dir: &Path, count: u64, with_indexes: bool) -> PathBuf {
    let dir = log_dir.join("bench-0");
    std::fs::create_dir_all(&dir).unwrap();
    for base in 0..count as i64 {
        std::fs::File::create(dir.join(kseg::format::names::log_file_name(base))).unwrap();
        if with_indexes {
            std::fs::File::create(dir.join(kseg::format::names::index_file_name(base))).unwrap();
            std::fs::File::create(dir.join(kseg::format::names::time_index_file_name(base)))
                .unwrap();
        }
    }
    dir
}

/// Runs `program` with `args` to its end; returns its exit code and its own peak resident set
/// size in bytes.
pub fn run_measured(program: &Path, args: &[&std::ffi::OsStr]) -> (i32, u64) {
    let (code, rss, _) = run_measured_within(program, args, None);
    (code, rss)
}

/// [`run_measured`], killing the child after `limit` (then the code is -1), with the wall
/// time it took in seconds.
///
/// The peak is the child's `VmHWM`, read while the child is stopped at its exit (ptrace's
/// exit event), before its memory is released. `wait4`'s `ru_maxrss` is no measure of the
/// child alone: Linux starts it from the address space the child had before its exec, which
/// is this process's (its peak, after a vfork; its size, after a fork). A test process that
/// once built a large input would raise every later child's figure.
pub fn run_measured_within(
    program: &Path,
    args: &[&std::ffi::OsStr],
    limit: Option<std::time::Duration>,
) -> (i32, u64, f64) {
    use std::os::unix::process::CommandExt;
    let started = std::time::Instant::now();
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: the closure runs in the forked child before its exec and makes one system call.
    unsafe {
        command.pre_exec(|| {
            let none = std::ptr::null_mut::<libc::c_void>();
            if libc::ptrace(libc::PTRACE_TRACEME, 0, none, none) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command.spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    if let Some(limit) = limit {
        let done = done.clone();
        std::thread::spawn(move || {
            let step = std::time::Duration::from_millis(50);
            let mut waited = std::time::Duration::ZERO;
            while waited < limit {
                if done.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(step);
                waited += step;
            }
            if !done.load(std::sync::atomic::Ordering::SeqCst) {
                // SAFETY: signals our own child, which is not reaped before `done` is set.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        });
    }
    let none = std::ptr::null_mut::<libc::c_void>();
    let mut peak = None;
    let mut exec_seen = false;
    loop {
        // Looks at the next event without consuming an exit (the pid stays ours for the
        // watchdog until `done` is set).
        // SAFETY: a zeroed siginfo is a valid value for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waits for our own child.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        assert_eq!(rc, 0, "waitid: {}", std::io::Error::last_os_error());
        if info.si_code != libc::CLD_TRAPPED {
            break;
        }
        let mut status = 0;
        // SAFETY: consumes the stop just seen, of our own child.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(rc, pid, "waitpid: {}", std::io::Error::last_os_error());
        let signal = libc::WSTOPSIG(status);
        let deliver = if status >> 16 == libc::PTRACE_EVENT_EXIT {
            peak = Some(peak_rss(pid));
            0
        } else if !exec_seen && signal == libc::SIGTRAP {
            // The stop after its exec: from now on, stop it at its exit too.
            exec_seen = true;
            let options = libc::PTRACE_O_TRACEEXIT as usize as *mut libc::c_void;
            // SAFETY: our own stopped tracee.
            let rc = unsafe { libc::ptrace(libc::PTRACE_SETOPTIONS, pid, none, options) };
            assert_eq!(rc, 0, "ptrace: {}", std::io::Error::last_os_error());
            0
        } else {
            signal
        };
        // SAFETY: resumes our own stopped tracee, passing on the signal it stopped for.
        let rc = unsafe {
            libc::ptrace(
                libc::PTRACE_CONT,
                pid,
                none,
                deliver as usize as *mut libc::c_void,
            )
        };
        // ESRCH: the watchdog's SIGKILL ended the stop first; the next wait sees the end.
        let error = std::io::Error::last_os_error();
        assert!(
            rc == 0 || error.raw_os_error() == Some(libc::ESRCH),
            "ptrace: {error}"
        );
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: reaps our own child, filling the two values given.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(rc, pid, "wait4: {}", std::io::Error::last_os_error());
    let secs = started.elapsed().as_secs_f64();
    // The child is reaped: dropping `child` does not wait again.
    drop(child);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    // A child killed before its exit stop has only rusage's figure (in KiB), an upper bound.
    let rss = peak.unwrap_or(usage.ru_maxrss as u64 * 1024);
    (code, rss, secs)
}

/// The peak resident set size of the live process `pid`, in bytes.
fn peak_rss(pid: libc::pid_t) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .unwrap_or_else(|| panic!("no VmHWM in /proc/{pid}/status"));
    let kib: u64 = line.trim().trim_end_matches("kB").trim().parse().unwrap();
    kib * 1024
}

/// The `.log` files of the partition `dir`, oldest first.
pub fn segment_logs_of(dir: &Path) -> Vec<PathBuf> {
    kseg::storage::files::segment_logs(dir)
        .unwrap()
        .into_iter()
        .map(|(_, p)| p)
        .collect()
}
