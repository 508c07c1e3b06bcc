//! File and directory naming of a Kafka log directory (formats.md §1 and §11).
//!
//! This module owns the mapping between names and what they denote: the 20-digit offset prefix of
//! segment files, the suffixes (`.log`, `.index`, `.timeindex`, `.txnindex`, `.snapshot`), the
//! leftover suffixes (`.deleted`, `.cleaned`, `.swap`, `.tmp`), KRaft snapshot names
//! (`<20-digit end offset>-<10-digit epoch>.checkpoint`), the fixed names of checkpoint and
//! marker files, and partition directory names (`<topic>-<partition>` and the suffixed
//! `-delete` / `-future` / `-stray` forms). Pure string handling: nothing here touches the disk.

use std::cmp::Ordering;

use serde::Serialize;

/// Digits of the zero-padded offset that prefixes every segment file name.
pub const OFFSET_PREFIX_DIGITS: usize = 20;
/// Digits of the zero-padded epoch in a KRaft snapshot name.
pub const KRAFT_SNAPSHOT_EPOCH_DIGITS: usize = 10;
/// Longest directory name Kafka creates for the `-delete` and `-stray` forms (characters).
pub const MAX_PARTITION_DIR_NAME_CHARS: usize = 255;

pub const LOG_FILE_SUFFIX: &str = ".log";
pub const INDEX_FILE_SUFFIX: &str = ".index";
pub const TIME_INDEX_FILE_SUFFIX: &str = ".timeindex";
pub const TXN_INDEX_FILE_SUFFIX: &str = ".txnindex";
pub const PRODUCER_SNAPSHOT_FILE_SUFFIX: &str = ".snapshot";
pub const DELETED_FILE_SUFFIX: &str = ".deleted";
pub const CLEANED_FILE_SUFFIX: &str = ".cleaned";
pub const SWAP_FILE_SUFFIX: &str = ".swap";
/// Suffix of the temporary file a checkpoint/metadata writer renames over the real file.
pub const TMP_FILE_SUFFIX: &str = ".tmp";
pub const KRAFT_SNAPSHOT_SUFFIX: &str = ".checkpoint";
pub const KRAFT_SNAPSHOT_PARTIAL_SUFFIX: &str = ".checkpoint.part";

pub const LEADER_EPOCH_CHECKPOINT_FILE_NAME: &str = "leader-epoch-checkpoint";
pub const PARTITION_METADATA_FILE_NAME: &str = "partition.metadata";
pub const RECOVERY_POINT_CHECKPOINT_FILE_NAME: &str = "recovery-point-offset-checkpoint";
pub const REPLICATION_OFFSET_CHECKPOINT_FILE_NAME: &str = "replication-offset-checkpoint";
pub const LOG_START_OFFSET_CHECKPOINT_FILE_NAME: &str = "log-start-offset-checkpoint";
pub const CLEANER_OFFSET_CHECKPOINT_FILE_NAME: &str = "cleaner-offset-checkpoint";
pub const META_PROPERTIES_FILE_NAME: &str = "meta.properties";
pub const CLEAN_SHUTDOWN_FILE_NAME: &str = ".kafka_cleanshutdown";
pub const LOCK_FILE_NAME: &str = ".lock";
pub const QUORUM_STATE_FILE_NAME: &str = "quorum-state";
pub const BOOTSTRAP_CHECKPOINT_FILE_NAME: &str = "bootstrap.checkpoint";

pub const DELETE_DIR_SUFFIX: &str = "-delete";
pub const FUTURE_DIR_SUFFIX: &str = "-future";
pub const STRAY_DIR_SUFFIX: &str = "-stray";

/// Formats an offset as Kafka's file-name prefix: at least 20 digits, zero padded, no grouping
/// (a negative value keeps its sign in front of the 20 digits, as Java's `NumberFormat` does).
pub fn format_offset(offset: i64) -> String {
    pad_digits(offset, OFFSET_PREFIX_DIGITS)
}

/// Formats an epoch as the 10-digit part of a KRaft snapshot name.
pub fn format_kraft_epoch(epoch: i32) -> String {
    pad_digits(i64::from(epoch), KRAFT_SNAPSHOT_EPOCH_DIGITS)
}

fn pad_digits(value: i64, width: usize) -> String {
    if value < 0 {
        format!("-{:0width$}", value.unsigned_abs())
    } else {
        format!("{value:0width$}")
    }
}

/// The offset a file name carries: the characters before the first `.` parsed as a long (Java
/// `Long.parseLong` rules: optional sign, decimal digits). `None` without a `.` or for non-numbers.
pub fn parse_offset_prefix(file_name: &str) -> Option<i64> {
    let dot = file_name.find('.')?;
    parse_java_long(&file_name[..dot])
}

/// `Long.parseLong`: an optional `+`/`-` then ASCII digits, nothing else, within range.
pub(crate) fn parse_java_long(s: &str) -> Option<i64> {
    if !valid_java_integer_text(s) {
        return None;
    }
    s.parse().ok()
}

/// `Integer.parseInt`: an optional `+`/`-` then ASCII digits, nothing else, within range.
pub(crate) fn parse_java_int(s: &str) -> Option<i32> {
    if !valid_java_integer_text(s) {
        return None;
    }
    s.parse().ok()
}

fn valid_java_integer_text(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

pub fn log_file_name(base_offset: i64) -> String {
    format_offset(base_offset) + LOG_FILE_SUFFIX
}

pub fn index_file_name(base_offset: i64) -> String {
    format_offset(base_offset) + INDEX_FILE_SUFFIX
}

pub fn time_index_file_name(base_offset: i64) -> String {
    format_offset(base_offset) + TIME_INDEX_FILE_SUFFIX
}

pub fn txn_index_file_name(base_offset: i64) -> String {
    format_offset(base_offset) + TXN_INDEX_FILE_SUFFIX
}

/// Producer-state snapshot name; `offset` is the exclusive end offset of the captured state.
pub fn snapshot_file_name(offset: i64) -> String {
    format_offset(offset) + PRODUCER_SNAPSHOT_FILE_SUFFIX
}

/// `<20-digit end offset>-<10-digit epoch>.checkpoint`.
pub fn kraft_snapshot_file_name(end_offset: i64, epoch: i32) -> String {
    format!(
        "{}-{}{}",
        format_offset(end_offset),
        format_kraft_epoch(epoch),
        KRAFT_SNAPSHOT_SUFFIX
    )
}

/// A name with a leftover suffix appended (`X.log` → `X.log.deleted`).
pub fn with_leftover_suffix(file_name: &str, suffix: LeftoverSuffix) -> String {
    format!("{file_name}{}", suffix.as_str())
}

/// Reads the end offset and epoch of a KRaft snapshot name the way Kafka does: characters 0–19
/// as a long and 21–30 as an int, whatever lies between or after them.
pub fn parse_kraft_snapshot_id(file_name: &str) -> Option<(i64, i32)> {
    let offset_end = OFFSET_PREFIX_DIGITS;
    let epoch_start = offset_end + 1;
    let epoch_end = epoch_start + KRAFT_SNAPSHOT_EPOCH_DIGITS;
    let end_offset = parse_java_long(file_name.get(..offset_end)?)?;
    let epoch = parse_java_int(file_name.get(epoch_start..epoch_end)?)?;
    Some((end_offset, epoch))
}

/// A suffix appended to a complete file name while a file waits to be deleted, cleaned or swapped
/// in, or while a checkpoint is being rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum LeftoverSuffix {
    Deleted,
    Cleaned,
    Swap,
    Tmp,
}

impl LeftoverSuffix {
    pub const ALL: [LeftoverSuffix; 4] = [
        LeftoverSuffix::Deleted,
        LeftoverSuffix::Cleaned,
        LeftoverSuffix::Swap,
        LeftoverSuffix::Tmp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LeftoverSuffix::Deleted => DELETED_FILE_SUFFIX,
            LeftoverSuffix::Cleaned => CLEANED_FILE_SUFFIX,
            LeftoverSuffix::Swap => SWAP_FILE_SUFFIX,
            LeftoverSuffix::Tmp => TMP_FILE_SUFFIX,
        }
    }
}

/// What a file in a log directory or partition directory is, judged by its name alone.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum FileKind {
    /// `<offset>.log`: segment data.
    Log {
        base_offset: i64,
    },
    /// `<offset>.index`: offset index of the segment.
    OffsetIndex {
        base_offset: i64,
    },
    /// `<offset>.timeindex`: time index of the segment.
    TimeIndex {
        base_offset: i64,
    },
    /// `<offset>.txnindex`: aborted transactions of the segment.
    TxnIndex {
        base_offset: i64,
    },
    /// `<offset>.snapshot`: producer state for offsets below `offset`.
    ProducerSnapshot {
        offset: i64,
    },
    /// `<end offset>-<epoch>.checkpoint`: an immutable KRaft snapshot.
    KraftSnapshot {
        end_offset: i64,
        epoch: i32,
    },
    /// `<end offset>-<epoch>-<random>.checkpoint.part`: a KRaft snapshot being written.
    KraftSnapshotPartial {
        end_offset: i64,
        epoch: i32,
    },
    /// `bootstrap.checkpoint`: the KRaft bootstrap metadata file.
    BootstrapCheckpoint,
    LeaderEpochCheckpoint,
    PartitionMetadata,
    RecoveryPointCheckpoint,
    ReplicationOffsetCheckpoint,
    LogStartOffsetCheckpoint,
    CleanerOffsetCheckpoint,
    MetaProperties,
    /// `.kafka_cleanshutdown`.
    CleanShutdown,
    /// `.lock`.
    Lock,
    /// `quorum-state` (KRaft metadata partition).
    QuorumState,
    /// `X.deleted`, `X.cleaned`, `X.swap`, `X.tmp` where `inner` is what `X` is.
    Leftover {
        suffix: LeftoverSuffix,
        inner: Box<FileKind>,
    },
    Unknown,
}

impl FileKind {
    /// The offset in the name: base offset of segment files, snapshot offset, KRaft end offset
    /// (looking through a leftover suffix).
    pub fn offset(&self) -> Option<i64> {
        match self {
            FileKind::Log { base_offset }
            | FileKind::OffsetIndex { base_offset }
            | FileKind::TimeIndex { base_offset }
            | FileKind::TxnIndex { base_offset } => Some(*base_offset),
            FileKind::ProducerSnapshot { offset } => Some(*offset),
            FileKind::KraftSnapshot { end_offset, .. }
            | FileKind::KraftSnapshotPartial { end_offset, .. } => Some(*end_offset),
            FileKind::Leftover { inner, .. } => inner.offset(),
            _ => None,
        }
    }

    /// One of the four files that make up a segment (`.log` and its three indexes).
    pub fn is_segment_file(&self) -> bool {
        matches!(
            self,
            FileKind::Log { .. }
                | FileKind::OffsetIndex { .. }
                | FileKind::TimeIndex { .. }
                | FileKind::TxnIndex { .. }
        )
    }

    /// Rank of the kind among the files sharing one offset (see [`sort_key`]).
    fn rank(&self) -> u16 {
        match self {
            FileKind::Log { .. } => 0,
            FileKind::OffsetIndex { .. } => 1,
            FileKind::TimeIndex { .. } => 2,
            FileKind::TxnIndex { .. } => 3,
            FileKind::ProducerSnapshot { .. } => 4,
            FileKind::KraftSnapshot { .. } => 5,
            FileKind::KraftSnapshotPartial { .. } => 6,
            FileKind::Leftover { suffix, inner } => 100 * (1 + *suffix as u16) + inner.rank(),
            _ => 99,
        }
    }
}

/// Classifies a file name (no directory part).
///
/// Segment files are recognised as Kafka does: by the suffix, with the offset parsed from the text
/// before the first `.` (so `5.log` is a log with base offset 5 even though Kafka would name it
/// `00000000000000000005.log`); if that text is not a long the file is [`FileKind::Unknown`].
/// A leftover suffix is stripped and the rest classified into `inner`.
pub fn classify(file_name: &str) -> FileKind {
    match file_name {
        LEADER_EPOCH_CHECKPOINT_FILE_NAME => return FileKind::LeaderEpochCheckpoint,
        PARTITION_METADATA_FILE_NAME => return FileKind::PartitionMetadata,
        RECOVERY_POINT_CHECKPOINT_FILE_NAME => return FileKind::RecoveryPointCheckpoint,
        REPLICATION_OFFSET_CHECKPOINT_FILE_NAME => return FileKind::ReplicationOffsetCheckpoint,
        LOG_START_OFFSET_CHECKPOINT_FILE_NAME => return FileKind::LogStartOffsetCheckpoint,
        CLEANER_OFFSET_CHECKPOINT_FILE_NAME => return FileKind::CleanerOffsetCheckpoint,
        META_PROPERTIES_FILE_NAME => return FileKind::MetaProperties,
        CLEAN_SHUTDOWN_FILE_NAME => return FileKind::CleanShutdown,
        LOCK_FILE_NAME => return FileKind::Lock,
        QUORUM_STATE_FILE_NAME => return FileKind::QuorumState,
        BOOTSTRAP_CHECKPOINT_FILE_NAME => return FileKind::BootstrapCheckpoint,
        _ => {}
    }
    if file_name.ends_with(KRAFT_SNAPSHOT_PARTIAL_SUFFIX) {
        return match parse_kraft_snapshot_id(file_name) {
            Some((end_offset, epoch)) => FileKind::KraftSnapshotPartial { end_offset, epoch },
            None => FileKind::Unknown,
        };
    }
    for suffix in LeftoverSuffix::ALL {
        if let Some(inner) = file_name.strip_suffix(suffix.as_str()) {
            if inner.is_empty() {
                return FileKind::Unknown;
            }
            return FileKind::Leftover {
                suffix,
                inner: Box::new(classify(inner)),
            };
        }
    }
    if file_name.ends_with(KRAFT_SNAPSHOT_SUFFIX) {
        return match parse_kraft_snapshot_id(file_name) {
            Some((end_offset, epoch)) => FileKind::KraftSnapshot { end_offset, epoch },
            None => FileKind::Unknown,
        };
    }
    type Make = fn(i64) -> FileKind;
    let offset_kinds: [(&str, Make); 5] = [
        (LOG_FILE_SUFFIX, |base_offset| FileKind::Log { base_offset }),
        (INDEX_FILE_SUFFIX, |base_offset| FileKind::OffsetIndex {
            base_offset,
        }),
        (TIME_INDEX_FILE_SUFFIX, |base_offset| FileKind::TimeIndex {
            base_offset,
        }),
        (TXN_INDEX_FILE_SUFFIX, |base_offset| FileKind::TxnIndex {
            base_offset,
        }),
        (PRODUCER_SNAPSHOT_FILE_SUFFIX, |offset| {
            FileKind::ProducerSnapshot { offset }
        }),
    ];
    for (suffix, make) in offset_kinds {
        if file_name.ends_with(suffix) {
            return match parse_offset_prefix(file_name) {
                Some(offset) => make(offset),
                None => FileKind::Unknown,
            };
        }
    }
    FileKind::Unknown
}

/// Ordering key for the files of a directory: files with an offset in their name come first, by
/// offset, and within one offset in the order `.log`, `.index`, `.timeindex`, `.txnindex`,
/// `.snapshot`, KRaft snapshots, then leftovers (`.deleted`, `.cleaned`, `.swap`, `.tmp`, each in
/// the same inner order); every other file follows, by name. Ties break on the name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SortKey {
    group: u8,
    offset: i64,
    rank: u16,
    name: String,
}

pub fn sort_key(file_name: &str) -> SortKey {
    let kind = classify(file_name);
    match kind.offset() {
        Some(offset) => SortKey {
            group: 0,
            offset,
            rank: kind.rank(),
            name: file_name.to_string(),
        },
        None => SortKey {
            group: 1,
            offset: 0,
            rank: 0,
            name: file_name.to_string(),
        },
    }
}

/// Compares two file names by [`sort_key`].
pub fn compare_file_names(a: &str, b: &str) -> Ordering {
    sort_key(a).cmp(&sort_key(b))
}

/// Which of the partition directory forms a name has.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(
    tag = "state",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum PartitionDirState {
    /// `<topic>-<partition>`.
    Live,
    /// `<topic>-<partition>.<uniqueId>-delete`: scheduled for deletion.
    Delete { unique_id: String },
    /// `<topic>-<partition>.<uniqueId>-future`: the target of a replica move between log dirs.
    Future { unique_id: String },
    /// `<topic>-<partition>.<uniqueId>-stray`: a KRaft stray replica.
    Stray { unique_id: String },
}

/// A parsed partition directory name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionDir {
    pub topic: String,
    pub partition: i32,
    pub state: PartitionDirState,
}

impl PartitionDir {
    /// The directory name Kafka would give this partition in this state. For `-delete` and
    /// `-stray` the topic is cut so the whole name fits 255 characters, as Kafka does.
    pub fn dir_name(&self) -> String {
        match &self.state {
            PartitionDirState::Live => partition_dir_name(&self.topic, self.partition),
            PartitionDirState::Future { unique_id } => format!(
                "{}.{unique_id}{FUTURE_DIR_SUFFIX}",
                partition_dir_name(&self.topic, self.partition)
            ),
            PartitionDirState::Delete { unique_id } => {
                capped_dir_name(&self.topic, self.partition, unique_id, DELETE_DIR_SUFFIX)
            }
            PartitionDirState::Stray { unique_id } => {
                capped_dir_name(&self.topic, self.partition, unique_id, STRAY_DIR_SUFFIX)
            }
        }
    }
}

/// The live directory name `<topic>-<partition>`.
pub fn partition_dir_name(topic: &str, partition: i32) -> String {
    format!("{topic}-{partition}")
}

fn capped_dir_name(topic: &str, partition: i32, unique_id: &str, suffix: &str) -> String {
    let full_suffix = format!("-{partition}.{unique_id}{suffix}");
    let keep = MAX_PARTITION_DIR_NAME_CHARS.saturating_sub(full_suffix.chars().count());
    let prefix: String = topic.chars().take(keep).collect();
    prefix + &full_suffix
}

/// Kafka's message for a directory name that is not a partition directory.
pub fn invalid_partition_dir_message(canonical_path: &str, dir_name: &str) -> String {
    format!(
        "Found directory {canonical_path}, '{dir_name}' is not in the form of topic-partition or \
         topic-partition.uniqueId-delete (if marked for deletion).\n\
         Kafka's log directories (and children) should only contain Kafka topic data."
    )
}

/// Parses a partition directory name as Kafka does: a name ending in `-delete`, `-future` or
/// `-stray` must look like `<topic>-<partition>.<uniqueId><suffix>` with no whitespace and is cut
/// at its last `.`; topic and partition are then split at the last `-`; both must be non-empty
/// and the partition an int. `None` where Kafka raises its "is not in the form of" error.
pub fn parse_partition_dir(name: &str) -> Option<PartitionDir> {
    if name.is_empty() || !name.contains('-') {
        return None;
    }
    let suffixes = [DELETE_DIR_SUFFIX, FUTURE_DIR_SUFFIX, STRAY_DIR_SUFFIX];
    let suffix = suffixes.into_iter().find(|s| name.ends_with(s));
    let (base, state) = match suffix {
        None => (name, PartitionDirState::Live),
        Some(suffix) => {
            let before = &name[..name.len() - suffix.len()];
            if !matches_suffixed_form(before) {
                return None;
            }
            let dot = name.rfind('.')?;
            let unique_id = before.get(dot + 1..).unwrap_or("").to_string();
            let state = match suffix {
                DELETE_DIR_SUFFIX => PartitionDirState::Delete { unique_id },
                FUTURE_DIR_SUFFIX => PartitionDirState::Future { unique_id },
                _ => PartitionDirState::Stray { unique_id },
            };
            (&name[..dot], state)
        }
    };
    let dash = base.rfind('-')?;
    let topic = &base[..dash];
    let partition = &base[dash + 1..];
    if topic.is_empty() || partition.is_empty() {
        return None;
    }
    Some(PartitionDir {
        topic: topic.to_string(),
        partition: parse_java_int(partition)?,
        state,
    })
}

/// Whether `s` (a suffixed directory name without its suffix) matches `(\S+)-(\S+)\.(\S+)`.
fn matches_suffixed_form(s: &str) -> bool {
    if s.chars().any(is_java_whitespace) {
        return false;
    }
    // Earliest usable '-' (not the first character) and the last '.' leave the most room.
    let Some(dash) = s
        .char_indices()
        .skip(1)
        .find(|&(_, c)| c == '-')
        .map(|(i, _)| i)
    else {
        return false;
    };
    match s.rfind('.') {
        Some(dot) => dot >= dash + 2 && dot + 1 < s.len(),
        None => false,
    }
}

/// Java regex `\s`: space, tab, newline, vertical tab, form feed, carriage return.
pub(crate) fn is_java_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_twenty_digits() {
        assert_eq!(format_offset(0), "00000000000000000000");
        assert_eq!(format_offset(1234), "00000000000000001234");
        assert_eq!(format_offset(i64::MAX), "09223372036854775807");
        assert_eq!(format_offset(-1), "-00000000000000000001");
        assert_eq!(format_kraft_epoch(7), "0000000007");
    }

    #[test]
    fn offset_prefix_is_text_before_first_dot() {
        assert_eq!(parse_offset_prefix("00000000000000001234.log"), Some(1234));
        assert_eq!(
            parse_offset_prefix("00000000000000001234.log.deleted"),
            Some(1234)
        );
        assert_eq!(parse_offset_prefix("5.index"), Some(5));
        assert_eq!(parse_offset_prefix("+5.index"), Some(5));
        assert_eq!(parse_offset_prefix("leader-epoch-checkpoint"), None);
        assert_eq!(parse_offset_prefix("abc.log"), None);
        assert_eq!(parse_offset_prefix(".log"), None);
        assert_eq!(parse_offset_prefix("99999999999999999999.log"), None);
    }

    #[test]
    fn builders() {
        assert_eq!(log_file_name(0), "00000000000000000000.log");
        assert_eq!(index_file_name(317), "00000000000000000317.index");
        assert_eq!(time_index_file_name(317), "00000000000000000317.timeindex");
        assert_eq!(txn_index_file_name(317), "00000000000000000317.txnindex");
        assert_eq!(snapshot_file_name(1443), "00000000000000001443.snapshot");
        assert_eq!(
            kraft_snapshot_file_name(10, 3),
            "00000000000000000010-0000000003.checkpoint"
        );
        assert_eq!(
            with_leftover_suffix(&log_file_name(5), LeftoverSuffix::Swap),
            "00000000000000000005.log.swap"
        );
    }

    #[test]
    fn classifies_every_kind() {
        use FileKind::*;
        let cases: Vec<(&str, FileKind)> = vec![
            ("00000000000000000317.log", Log { base_offset: 317 }),
            (
                "00000000000000000317.index",
                OffsetIndex { base_offset: 317 },
            ),
            (
                "00000000000000000317.timeindex",
                TimeIndex { base_offset: 317 },
            ),
            (
                "00000000000000000317.txnindex",
                TxnIndex { base_offset: 317 },
            ),
            (
                "00000000000000001443.snapshot",
                ProducerSnapshot { offset: 1443 },
            ),
            (
                "00000000000000000010-0000000003.checkpoint",
                KraftSnapshot {
                    end_offset: 10,
                    epoch: 3,
                },
            ),
            (
                "00000000000000000010-0000000003-12345.checkpoint.part",
                KraftSnapshotPartial {
                    end_offset: 10,
                    epoch: 3,
                },
            ),
            ("bootstrap.checkpoint", BootstrapCheckpoint),
            ("leader-epoch-checkpoint", LeaderEpochCheckpoint),
            ("partition.metadata", PartitionMetadata),
            ("recovery-point-offset-checkpoint", RecoveryPointCheckpoint),
            ("replication-offset-checkpoint", ReplicationOffsetCheckpoint),
            ("log-start-offset-checkpoint", LogStartOffsetCheckpoint),
            ("cleaner-offset-checkpoint", CleanerOffsetCheckpoint),
            ("meta.properties", MetaProperties),
            (".kafka_cleanshutdown", CleanShutdown),
            (".lock", Lock),
            ("quorum-state", QuorumState),
            (
                "00000000000000000005.log.deleted",
                Leftover {
                    suffix: LeftoverSuffix::Deleted,
                    inner: Box::new(Log { base_offset: 5 }),
                },
            ),
            (
                "00000000000000000005.index.cleaned",
                Leftover {
                    suffix: LeftoverSuffix::Cleaned,
                    inner: Box::new(OffsetIndex { base_offset: 5 }),
                },
            ),
            (
                "00000000000000000005.timeindex.swap",
                Leftover {
                    suffix: LeftoverSuffix::Swap,
                    inner: Box::new(TimeIndex { base_offset: 5 }),
                },
            ),
            (
                "00000000000000000005.snapshot.deleted",
                Leftover {
                    suffix: LeftoverSuffix::Deleted,
                    inner: Box::new(ProducerSnapshot { offset: 5 }),
                },
            ),
            (
                "00000000000000000010-0000000003.checkpoint.deleted",
                Leftover {
                    suffix: LeftoverSuffix::Deleted,
                    inner: Box::new(KraftSnapshot {
                        end_offset: 10,
                        epoch: 3,
                    }),
                },
            ),
            (
                "leader-epoch-checkpoint.tmp",
                Leftover {
                    suffix: LeftoverSuffix::Tmp,
                    inner: Box::new(LeaderEpochCheckpoint),
                },
            ),
            (
                "junk.deleted",
                Leftover {
                    suffix: LeftoverSuffix::Deleted,
                    inner: Box::new(Unknown),
                },
            ),
            ("5.log", Log { base_offset: 5 }),
            ("abc.log", Unknown),
            ("x.checkpoint", Unknown),
            ("README", Unknown),
            (".deleted", Unknown),
            ("", Unknown),
        ];
        for (name, want) in cases {
            assert_eq!(classify(name), want, "{name}");
        }
    }

    #[test]
    fn kind_offsets() {
        assert_eq!(classify("00000000000000000005.log.swap").offset(), Some(5));
        assert_eq!(classify("00000000000000000009.snapshot").offset(), Some(9));
        assert_eq!(classify("meta.properties").offset(), None);
        assert!(classify("00000000000000000005.txnindex").is_segment_file());
        assert!(!classify("00000000000000000005.snapshot").is_segment_file());
    }

    #[test]
    fn sorts_segments_by_offset_then_kind() {
        let mut names = vec![
            "partition.metadata",
            "00000000000000000317.snapshot",
            "00000000000000000317.timeindex",
            "00000000000000000317.log.deleted",
            "00000000000000000317.txnindex",
            "00000000000000000317.index",
            "00000000000000000317.log",
            "leader-epoch-checkpoint",
            "00000000000000000000.timeindex",
            "00000000000000000000.log",
            "00000000000000000000.index",
            "00000000000000001443.snapshot",
        ];
        names.sort_by(|a, b| compare_file_names(a, b));
        assert_eq!(
            names,
            vec![
                "00000000000000000000.log",
                "00000000000000000000.index",
                "00000000000000000000.timeindex",
                "00000000000000000317.log",
                "00000000000000000317.index",
                "00000000000000000317.timeindex",
                "00000000000000000317.txnindex",
                "00000000000000000317.snapshot",
                "00000000000000000317.log.deleted",
                "00000000000000001443.snapshot",
                "leader-epoch-checkpoint",
                "partition.metadata",
            ]
        );
    }

    #[test]
    fn kraft_snapshot_ids_use_fixed_positions() {
        assert_eq!(
            parse_kraft_snapshot_id("00000000000000000010-0000000003.checkpoint"),
            Some((10, 3))
        );
        assert_eq!(parse_kraft_snapshot_id("bootstrap.checkpoint"), None);
        assert_eq!(parse_kraft_snapshot_id("0000000000000000001"), None);
    }

    #[test]
    fn partition_dirs() {
        let live = parse_partition_dir("orders-0").unwrap();
        assert_eq!(live.topic, "orders");
        assert_eq!(live.partition, 0);
        assert_eq!(live.state, PartitionDirState::Live);
        assert_eq!(live.dir_name(), "orders-0");

        let dashed = parse_partition_dir("my-topic-12").unwrap();
        assert_eq!((dashed.topic.as_str(), dashed.partition), ("my-topic", 12));

        let id = "0123456789abcdef0123456789abcdef";
        let del = parse_partition_dir(&format!("my-topic-3.{id}-delete")).unwrap();
        assert_eq!(del.topic, "my-topic");
        assert_eq!(del.partition, 3);
        assert_eq!(
            del.state,
            PartitionDirState::Delete {
                unique_id: id.to_string()
            }
        );
        assert_eq!(del.dir_name(), format!("my-topic-3.{id}-delete"));

        let fut = parse_partition_dir(&format!("t-1.{id}-future")).unwrap();
        assert_eq!(
            fut.state,
            PartitionDirState::Future {
                unique_id: id.to_string()
            }
        );
        assert_eq!(fut.dir_name(), format!("t-1.{id}-future"));
        let stray = parse_partition_dir(&format!("t-1.{id}-stray")).unwrap();
        assert_eq!(
            stray.state,
            PartitionDirState::Stray {
                unique_id: id.to_string()
            }
        );

        for bad in [
            "",
            "orders",
            "orders-",
            "-0",
            "orders-x",
            "orders-0.abc-delete ",
            "orders-0-delete",
            "orders 1-0.abc-delete",
            "orders-0.-delete",
            "a-b.c.d-delete",
        ] {
            assert_eq!(parse_partition_dir(bad), None, "{bad:?}");
        }
        assert_eq!(partition_dir_name("orders", 7), "orders-7");
    }

    #[test]
    fn delete_dir_names_are_capped() {
        let topic = "t".repeat(249);
        let id = "0123456789abcdef0123456789abcdef";
        let dir = PartitionDir {
            topic: topic.clone(),
            partition: 0,
            state: PartitionDirState::Delete {
                unique_id: id.to_string(),
            },
        };
        let name = dir.dir_name();
        assert_eq!(name.len(), 255);
        assert!(name.ends_with(&format!("-0.{id}-delete")));
        let future = PartitionDir {
            state: PartitionDirState::Future {
                unique_id: id.to_string(),
            },
            ..dir
        };
        assert!(future.dir_name().len() > 255);
    }

    #[test]
    fn invalid_dir_message_matches_kafka() {
        assert_eq!(
            invalid_partition_dir_message("/d/x", "x"),
            "Found directory /d/x, 'x' is not in the form of topic-partition or \
             topic-partition.uniqueId-delete (if marked for deletion).\n\
             Kafka's log directories (and children) should only contain Kafka topic data."
        );
    }
}
