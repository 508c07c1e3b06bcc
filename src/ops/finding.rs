//! Findings: what is wrong in a file, where, and how bad — shared by `dump` (which explains
//! damage inline) and `verify` (which reports nothing else).

use std::path::PathBuf;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

/// One problem, in one sentence an operator understands, with a stable check id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// Stable id, e.g. `batch.crc`, `log.torn-tail`, `index.order` ([`super::catalog`] lists them).
    pub check: &'static str,
    pub severity: Severity,
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub file: PathBuf,
    /// Byte position in `file` where it applies (null: the file as a whole).
    pub position: Option<u64>,
    /// Kafka offset where it applies (null: none in particular).
    pub offset: Option<i64>,
    pub message: String,
}

impl Finding {
    pub fn error(
        check: &'static str,
        file: impl Into<PathBuf>,
        message: impl Into<String>,
    ) -> Self {
        let file = file.into();
        // A remote segment read with the local log (`--remote`) is named by its object's URL.
        let file = crate::storage::tiered::shown_as(&file).map_or(file, |s| PathBuf::from(s.url()));
        Finding {
            check,
            severity: Severity::Error,
            file,
            position: None,
            offset: None,
            message: message.into(),
        }
    }

    pub fn warning(
        check: &'static str,
        file: impl Into<PathBuf>,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            severity: Severity::Warning,
            ..Finding::error(check, file, message)
        }
    }

    /// An error where `serious` (what it is about is served, say), else a warning.
    pub fn error_if(
        serious: bool,
        check: &'static str,
        file: impl Into<PathBuf>,
        message: impl Into<String>,
    ) -> Self {
        if serious {
            Finding::error(check, file, message)
        } else {
            Finding::warning(check, file, message)
        }
    }

    pub fn at(mut self, position: u64) -> Self {
        self.position = Some(position);
        self
    }

    pub fn offset(mut self, offset: i64) -> Self {
        self.offset = Some(offset);
        self
    }
}

/// Check ids counted, most frequent first: `2 × record.decode, 1 × batch.crc`.
pub fn count_by_check(checks: impl IntoIterator<Item = &'static str>) -> String {
    let mut counts = std::collections::BTreeMap::<&'static str, usize>::new();
    for c in checks {
        *counts.entry(c).or_default() += 1;
    }
    counts_by_check(&counts)
}

/// [`count_by_check`] of counts already made: the most frequent check first.
pub fn counts_by_check(counts: &std::collections::BTreeMap<&'static str, usize>) -> String {
    let mut counts: Vec<(&str, usize)> = counts.iter().map(|(c, n)| (*c, *n)).collect();
    counts.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    counts
        .iter()
        .map(|(c, n)| format!("{n} × {c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The entries named like Kafka files that were not regular files (a FIFO, a socket, a device,
/// a directory, a link to one) met since the last call, as `file.not-regular` findings: an
/// error where the broker opens the name and fails or never returns (a state file it reads by
/// name; an index of a segment whose `.log` is a file, opened by `AbstractIndex` /
/// `TransactionIndex`), a warning where its load skips the entry (`File.isFile` in
/// `LogLoader`, `Files.isRegularFile` for producer snapshots).
pub fn not_regular_findings() -> Vec<Finding> {
    use crate::format::names::{classify, FileKind};
    crate::storage::files::take_not_regular()
        .into_iter()
        .map(|(file, what)| {
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            let kind = classify(&name);
            let log_is_file = |base: i64| {
                // Unknown (an I/O error): judged as the milder case, the finding still says it.
                crate::storage::files::is_file(
                    &file.with_file_name(crate::format::names::log_file_name(base)),
                )
                .unwrap_or(false)
            };
            let (error, broker) = match kind {
                // A link to nowhere (a file on an unmounted disk): the segment's data is
                // somewhere, and its indexes go.
                FileKind::Log { .. } if !crate::storage::files::exists(&file).unwrap_or(true) => (
                    true,
                    "the broker's load skips it (not a file) and deletes its segment's indexes \
                     as orphans: the segment's data is lost to the log",
                ),
                FileKind::Log { .. } => (
                    false,
                    "the broker's load skips it (not a file): the segment it names is not loaded",
                ),
                FileKind::OffsetIndex { base_offset }
                | FileKind::TimeIndex { base_offset }
                | FileKind::TxnIndex { base_offset }
                    if log_is_file(base_offset) =>
                {
                    (
                        true,
                        "the broker opens it as the index of its segment and fails on it, or \
                         blocks: the log does not load",
                    )
                }
                FileKind::OffsetIndex { .. }
                | FileKind::TimeIndex { .. }
                | FileKind::TxnIndex { .. }
                | FileKind::ProducerSnapshot { .. }
                | FileKind::Leftover { .. }
                | FileKind::KraftSnapshotPartial { .. } => (
                    false,
                    "the broker's load skips it (not a file) and reads nothing from it",
                ),
                _ => (
                    true,
                    "the broker reads this file by its name and fails on it, or blocks (a FIFO) \
                     or never ends (a device)",
                ),
            };
            let message = format!(
                "{what}, not a regular file; {broker}. kseg read nothing from it; move it out \
                 or restore the file it stands for"
            );
            if error {
                Finding::error("file.not-regular", file, message)
            } else {
                Finding::warning("file.not-regular", file, message)
            }
        })
        .collect()
}
