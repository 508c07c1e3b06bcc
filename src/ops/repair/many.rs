//! Repairs over whole log dirs: the partitions a path names (itself, or every partition
//! directory of a log dir the broker would do that work in), planned in parallel on a pool of
//! `jobs` threads, each plan as it is for one partition; and the start-up estimate of
//! `recover`: the bytes the broker's unclean-shutdown recovery reads (every segment from the
//! one holding the recovery point on, `LogLoader.recoverLog`) and the time at the speed the
//! plans' recovery walks ran at here.

use crate::ops::human::{duration, size};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::error::{Result, Work};
use crate::format::names::CLEAN_SHUTDOWN_FILE_NAME;
use crate::ops::input::repair_target;
use crate::ops::inspect::seek::partition_dirs;
use crate::storage::files::segment_logs;

/// The partition directories (and files) `paths` name for `work`, and those of a log dir left out, with
/// why (a `-delete` directory, one without a segment, ...). A partition directory named
/// directly is always taken: its plan reports what is wrong with it.
pub fn partitions_for(paths: &[PathBuf], work: Work) -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for p in paths {
        // A segment file named alone is its command's to judge.
        if p.is_file() {
            out.push(p.clone());
            continue;
        }
        // What is neither a partition nor a log dir of partitions is the command's to judge too,
        // with its own error.
        let dirs = match partition_dirs(p) {
            Ok(d) if !(d.len() == 1 && d[0] == *p) => d,
            _ => {
                out.push(p.clone());
                continue;
            }
        };
        for d in dirs {
            match repair_target(&d, work) {
                Ok(_) => out.push(d),
                Err(e) => skipped.push((d, e.to_string())),
            }
        }
    }
    (out, skipped)
}

/// Runs `f` on every item on a pool of `jobs` threads (at least 1), results in item order.
pub fn in_parallel<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> R + Sync + Send,
) -> Vec<R> {
    use rayon::prelude::*;
    match rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
    {
        Ok(pool) => pool.install(|| items.par_iter().map(&f).collect()),
        Err(_) => items.iter().map(f).collect(),
    }
}

/// The `.log` bytes an unclean start-up recovers in `dir` from `recovery_point`: every segment
/// from the one holding it (the first, when it lies below them all) to the end.
pub fn bytes_to_recover(dir: &Path, recovery_point: i64) -> Result<u64> {
    let logs = segment_logs(dir)?;
    let from = logs
        .iter()
        .rposition(|(base, _)| *base <= recovery_point)
        .unwrap_or(0);
    logs[from..]
        .iter()
        .map(|(_, p)| crate::storage::files::file_len(p))
        .sum()
}

/// One partition's share of the estimate.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionEstimate {
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub dir: PathBuf,
    pub recovery_point: i64,
    /// Where the recovery point came from (the checkpoint file, `--recovery-point`, or the
    /// start of the log).
    pub recovery_point_source: &'static str,
    pub bytes_to_recover: u64,
}

/// What the broker's start-up after an unclean shutdown would have to recover.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Estimate {
    pub partitions: Vec<PartitionEstimate>,
    /// Log dirs holding `.kafka_cleanshutdown`: the broker's next start-up trusts them and
    /// recovers nothing there (`LogManager.loadLogs`), unless it is removed.
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub clean_shutdown_log_dirs: Vec<PathBuf>,
    pub bytes_to_recover: u64,
    /// Bytes recovered per second by one thread here: the plans' bytes over the summed time of
    /// their recovery walks.
    pub bytes_per_second: f64,
    /// At that speed with one recovery thread per log dir (`num.recovery.threads.per.data.dir`
    /// defaults to 1), log dirs in parallel: the slowest log dir's time (`recoveryMs` in JSON,
    /// whole milliseconds, as every duration there).
    #[serde(rename = "recoveryMs", serialize_with = "whole_ms")]
    pub seconds: f64,
}

fn whole_ms<S: serde::Serializer>(seconds: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64((seconds * 1000.0).round() as u64)
}

impl Estimate {
    /// `partitions` with how long each one's recovery walk took.
    pub fn new(partitions: Vec<(PartitionEstimate, Duration)>) -> Estimate {
        let bytes: u64 = partitions.iter().map(|(p, _)| p.bytes_to_recover).sum();
        let busy: f64 = partitions.iter().map(|(_, d)| d.as_secs_f64()).sum();
        let bytes_per_second = if busy > 0.0 { bytes as f64 / busy } else { 0.0 };
        let mut per_log_dir: std::collections::BTreeMap<Option<&Path>, u64> = Default::default();
        for (p, _) in &partitions {
            *per_log_dir.entry(p.dir.parent()).or_default() += p.bytes_to_recover;
        }
        let slowest = per_log_dir.values().copied().max().unwrap_or(0);
        let clean_shutdown_log_dirs = per_log_dir
            .keys()
            .flatten()
            .filter(|d| d.join(CLEAN_SHUTDOWN_FILE_NAME).is_file())
            .map(|d| d.to_path_buf())
            .collect();
        let seconds = if bytes_per_second > 0.0 {
            slowest as f64 / bytes_per_second
        } else {
            0.0
        };
        Estimate {
            partitions: partitions.into_iter().map(|(p, _)| p).collect(),
            clean_shutdown_log_dirs,
            bytes_to_recover: bytes,
            bytes_per_second,
            seconds,
        }
    }

    /// Each partition's bytes from its recovery point, then the total and `~3m 5s at 1.2
    /// GiB/s`-style words, in [`crate::ops::human`]'s units, saying whose speed that is.
    pub fn render_text(&self) -> String {
        let mut out = String::from(
            "estimate: after an unclean shutdown, the broker's start-up recovers every segment from the one holding each partition's recovery point (LogLoader.recoverLog):\n",
        );
        for p in &self.partitions {
            out += &format!(
                "  {}: {} from recovery point {} ({})\n",
                p.dir.display(),
                size(p.bytes_to_recover),
                p.recovery_point,
                p.recovery_point_source
            );
        }
        out += &format!(
            "  total {} in {} partition(s): ~{} at {}/s, the speed of kseg's own recovery walks in this dry run on this machine (the broker's may differ), one recovery thread per log dir (num.recovery.threads.per.data.dir=1, its default)\n",
            size(self.bytes_to_recover),
            self.partitions.len(),
            duration((self.seconds * 1000.0) as i64),
            size(self.bytes_per_second as u64)
        );
        for d in &self.clean_shutdown_log_dirs {
            out += &format!(
                "  note: {} holds {CLEAN_SHUTDOWN_FILE_NAME}: as it is, the broker's next start-up recovers nothing there\n",
                d.display()
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slowest_log_dir_sets_the_time() {
        let p = |dir: &str, bytes| {
            (
                PartitionEstimate {
                    dir: PathBuf::from(dir),
                    recovery_point: 0,
                    recovery_point_source: "the start of the log",
                    bytes_to_recover: bytes,
                },
                Duration::from_secs(1),
            )
        };
        // 600 bytes in 3 s of plans: 200 B/s; log dir a has 500 bytes: 2.5 s.
        let e = Estimate::new(vec![p("a/t-0", 300), p("a/t-1", 200), p("b/t-0", 100)]);
        assert_eq!(e.bytes_to_recover, 600);
        assert!((e.bytes_per_second - 200.0).abs() < 1e-9);
        assert!((e.seconds - 2.5).abs() < 1e-9);
        assert!(e.clean_shutdown_log_dirs.is_empty());
        let text = e.render_text();
        assert!(text.contains("  a/t-1: 200 B from recovery point 0 (the start of the log)\n"));
        assert!(text.contains("  total 600 B in 3 partition(s): ~"));
        assert!(text.contains(" at 200 B/s, the speed of kseg's own recovery walks"));
    }

    #[test]
    fn a_clean_shutdown_marker_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(CLEAN_SHUTDOWN_FILE_NAME), "").unwrap();
        let share = PartitionEstimate {
            dir: tmp.path().join("t-0"),
            recovery_point: 5,
            recovery_point_source: "recovery-point-offset-checkpoint",
            bytes_to_recover: 10,
        };
        let e = Estimate::new(vec![(share, Duration::from_secs(1))]);
        assert_eq!(e.clean_shutdown_log_dirs, [tmp.path().to_path_buf()]);
        assert!(e
            .render_text()
            .contains("the broker's next start-up recovers nothing there"));
    }
}
