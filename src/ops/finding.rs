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
        Finding {
            check,
            severity: Severity::Error,
            file: file.into(),
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
