//! The catalog of check ids: every id a [`Finding`](super::Finding) can carry, with its
//! severity, what it means and what the broker does about it. `kseg checks` prints it and
//! docs/checks.md's check table is rendered from it (tests/readme_checks.rs keeps both in step and
//! checks that every id the code emits is here and every id here is emitted).

use serde::Serialize;

/// One row: ids that share a meaning (`batch.crc`, `batch.magic`, …), described once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub ids: &'static [&'static str],
    /// `error` or `warning`, with the condition under which it is the other when it can be.
    pub severity: &'static str,
    /// What the finding means (Markdown: code in backquotes).
    pub what: &'static str,
    /// What the broker does about it, and the Kafka sources that say so.
    pub broker: &'static str,
}

/// Every check, in the order docs/checks.md shows them (by file kind, log first).
pub const CHECKS: &[Check] = &[
    Check {
        ids: &["log.size-too-small", "log.bad-entry", "log.entry-too-large"],
        severity: "error",
        what: "framing breaks at a byte position",
        broker: "recovery truncates the segment there and deletes every later segment; a closed segment below the recovery point is served as it is and fails the consumer (`LogSegment.recover`, `LogLoader.recoverLog`, `FileLogInputStream`)",
    },
    Check {
        ids: &["log.torn-tail"],
        severity: "error",
        what: "bytes after the last whole entry (a partial entry, or fewer bytes than an entry header): where valid data ends and how many bytes follow",
        broker: "recovery truncates it (`LogSegment.recover`)",
    },
    Check {
        ids: &["log.offset-order"],
        severity: "error",
        what: "a batch's offsets do not follow the previous batch's",
        broker: "the broker never writes it (`LogValidator`); lookups go wrong",
    },
    Check {
        ids: &["batch.crc", "batch.magic", "batch.count", "batch.codec"],
        severity: "error",
        what: "stored checksum wrong; unknown magic; more records than offsets; unknown codec",
        broker: "recovery truncates at the batch (`RecordBatch.ensureValid` in `LogSegment.recover`)",
    },
    Check {
        ids: &["batch.records"],
        severity: "error",
        what: "(`--deep`) records do not decode: varints, lengths, decompression, control records",
        broker: "consumers fail on the batch (`DefaultRecordBatch`, `AbstractLegacyRecordBatch`)",
    },
    Check {
        ids: &["batch.unchecked"],
        severity: "warning",
        what: "(`--deep`) a batch that decompresses to more than the limit (256 MiB; `--max-batch-bytes` of `dump`, `verify`, `stats`) was not checked beyond its header",
        broker: "the broker never decompresses on load; consumers read it",
    },
    Check {
        ids: &["record.offset", "record.timestamp"],
        severity: "error",
        what: "(`--deep`) a record outside its batch's offsets, or above its CreateTime max timestamp",
        broker: "the broker rewrites the max timestamp on append (`LogValidator`); on disk, time lookups and retention use the wrong one",
    },
    Check {
        ids: &["record.decode"],
        severity: "error",
        what: "(`--deep`) a control record that is not well formed, or (dump with an internal-topic decoder) a record kafka-dump-log would die on",
        broker: "`ControlRecordType.parse`, the internal topics' loaders fail",
    },
    Check {
        ids: &["segment.base-offset", "segment.overlap"],
        severity: "error",
        what: "first batch below the file's base offset; segments overlapping",
        broker: "index appends overflow or lookups land in the wrong segment (`LogSegment`, `LogSegments.floorSegment`)",
    },
    Check {
        ids: &["segment.name"],
        severity: "warning",
        what: "not the 20-digit name; or no offset in the name at all (read with the offset of its first batch, its log's or `--base-offset`)",
        broker: "the loader takes the offset from a numeric name all the same (`LogFileUtils.offsetFromFile`); a name without one it does not load",
    },
    Check {
        ids: &["index.missing"],
        severity: "warning",
        what: "no `.index`",
        broker: "the loader recovers the segment, rebuilding its indexes (`LogLoader.loadSegmentFiles`, `LogSegment.sanityCheck`)",
    },
    Check {
        ids: &["timeindex.missing"],
        severity: "warning",
        what: "no `.timeindex`",
        broker: "created empty at load and filled if the segment is recovered; until then time lookups scan the segment and time retention uses the file's mtime (`LogSegment.sanityCheck`, `largestTimestamp`)",
    },
    Check {
        ids: &["index.orphan"],
        severity: "warning",
        what: "an index without its `.log`",
        broker: "the loader deletes it (`LogLoader.loadSegmentFiles`)",
    },
    Check {
        ids: &["index.partial-entry"],
        severity: "warning",
        what: "length not a multiple of the entry size",
        broker: "whole slots are read, the rest ignored; brokers before 3.0 rebuild the index at load (`AbstractIndex`)",
    },
    Check {
        ids: &["index.untrimmed"],
        severity: "warning; error on a closed segment's `.timeindex`",
        what: "a preallocated zero-filled tail (a zero slot 0 of an untrimmed file is part of it: position 0 is never indexed)",
        broker: "trimmed when the active segment is closed or recovered; in a closed segment's offset index zero slots only make lookups scan from the segment start, in its time index they make timestamp 0 the segment's largest, so time retention deletes it early (`LogSegment.largestTimestamp`)",
    },
    Check {
        ids: &["index.order", "index.position", "index.offset-hidden"],
        severity: "error",
        what: "entries not increasing; an entry not at a batch start; an entry whose lookup would skip its offset",
        broker: "served as they are on a segment that is not recovered: fetches start at the wrong place (`OffsetIndex.lookup`, `LogSegment.translateOffset`)",
    },
    Check {
        ids: &["index.log-missing"],
        severity: "error",
        what: "the index's `.log` cannot be read",
        broker: "—",
    },
    Check {
        ids: &["timeindex.offset", "timeindex.timestamp", "timeindex.order"],
        severity: "error",
        what: "an offset past every batch; a timestamp that is not the largest of the batch the entry's offset lands in; timestamps not increasing. The offset may name any record of its batch: Kafka 4.0 writes the batch's last offset, brokers up to 3.7 the record with the largest timestamp (KAFKA-16310), and a lookup lands on the batch through either",
        broker: "served as they are: `offsetsForTimes` answers wrong (`TimeIndex.lookup`, `LogSegment.findOffsetByTimestamp`)",
    },
    Check {
        ids: &["index.unchecked", "timeindex.unchecked"],
        severity: "warning",
        what: "more than 65,536 entries out of order (each an `index.order` finding already): the rest were not checked against the log, so that a hostile index costs bounded memory",
        broker: "as for `index.order`",
    },
    Check {
        ids: &["txnindex.missing", "txnindex.marker", "txnindex.entry", "txnindex.order"],
        severity: "error",
        what: "against the engine's replay of producer state over the segment: an ABORT marker of a non-empty transaction without its entry; an entry naming no such marker; an entry whose first offset or last stable offset is not the log's; entries out of marker order",
        broker: "READ_COMMITTED fetches return aborted data or hide committed data (`TransactionIndex.collectAbortedTxns`)",
    },
    Check {
        ids: &["txnindex.beyond-log"],
        severity: "error",
        what: "more entries than the segment's `.log` has room for ABORT markers (one batch of at least 61 bytes each): Kafka appends one entry per aborted transaction and never preallocates the file, so the rest (a sparse or padded file) is not read",
        broker: "reads every entry at start-up (`TransactionIndex.sanityCheck`), and a READ_COMMITTED fetch collects those it matches (`TransactionIndex.collectAbortedTxns`)",
    },
    Check {
        ids: &["txnindex.partial-entry", "txnindex.decode"],
        severity: "error",
        what: "bad entries",
        broker: "the loader's sanity check fails (`TransactionIndex.sanityCheck`)",
    },
    Check {
        ids: &["snapshot.decode"],
        severity: "warning",
        what: "bad version or CRC",
        broker: "the loader deletes the snapshot and rebuilds producer state from an older one or the log (`ProducerStateManager.loadFromSnapshot`)",
    },
    Check {
        ids: &["snapshot.range"],
        severity: "warning",
        what: "a snapshot outside the log",
        broker: "deleted at load (`ProducerStateManager.truncateAndReload`)",
    },
    Check {
        ids: &["snapshot.content"],
        severity: "error",
        what: "a producer snapshot differs from the replayed producer state at its offset (epoch, sequence, last offset, delta, timestamp, coordinator epoch, open transaction), names a batch that is not that producer's, or lacks a producer with an open transaction",
        broker: "loaded as it is: idempotence and the last stable offset go wrong (`ProducerStateManager`)",
    },
    Check {
        ids: &["producer.state"],
        severity: "error",
        what: "a batch the broker's producer state refuses (a non-transactional batch inside an open transaction, a control batch that is no marker)",
        broker: "`ProducerAppendInfo` raises during load",
    },
    Check {
        ids: &["leader-epoch.decode", "leader-epoch.order", "leader-epoch.range", "leader-epoch.coverage"],
        severity: "error",
        what: "the checkpoint unreadable, or against the partition leader epochs of the batches",
        broker: "follower truncation (`OffsetsForLeaderEpoch`) answers wrong (`LeaderEpochFileCache`)",
    },
    Check {
        ids: &["leader-epoch.missing"],
        severity: "warning",
        what: "no `leader-epoch-checkpoint` although batches carry epochs",
        broker: "the broker starts with an empty cache; followers truncate by the high watermark (`LeaderEpochFileCache`)",
    },
    Check {
        ids: &["partition-metadata.decode", "meta-properties.decode", "checkpoint.decode", "quorum-state.decode"],
        severity: "error",
        what: "unreadable state files",
        broker: "the broker refuses to start or to load the partition (`PartitionMetadataFile`, `MetaProperties`, `CheckpointFile`, `raft/.../FileQuorumStateStore`)",
    },
    Check {
        ids: &["checkpoint.recovery-point", "checkpoint.high-watermark", "checkpoint.log-start", "checkpoint.cleaner-offset"],
        severity: "warning; error for a log start past the log end",
        what: "a log-dir checkpoint entry outside its partition's log",
        broker: "bounded by the log: the recovery point by its end (`LogLoader.recoverLog`), the high watermark by its start and end (`UnifiedLog.updateHighWatermark`), the cleaner offset by its start and active segment (`LogCleanerManager`; one below the log start, which retention leaves behind, is not reported), a log start by the first segment; a log start past the end is taken as it is",
    },
    Check {
        ids: &["checkpoint.missing-entry", "checkpoint.unknown-partition"],
        severity: "warning",
        what: "a partition without an entry (never for `__cluster_metadata-0`, which is the raft layer's), or an entry without a partition",
        broker: "no recovery point: recovery from offset 0; no high watermark: learnt from the leader; unknown entries are dropped at the next checkpoint (`LogManager`)",
    },
    Check {
        ids: &["leftover.file"],
        severity: "warning",
        what: "`.swap`, `.cleaned`, `.deleted` files, and the files a `.log.swap` replaces; `verify` and `dump` of a directory read each `.swap` the broker renames as the file it becomes, and none of the files it deletes",
        broker: "resolved at start-up (`LogLoader.removeTempFilesAndCollectSwapFiles`): `.deleted` and `.cleaned` files and `.swap`s of an unfinished split deleted, every file of the offsets a `.log.swap` covers deleted, the `.swap`s renamed into place",
    },
    Check {
        ids: &["ls.dir-name"],
        severity: "error",
        what: "(`ls`) a directory of the log dir whose name is not a partition directory's",
        broker: "the broker fails the whole log dir at start-up (`UnifiedLog.parseTopicPartitionName` in `LogManager.loadLogs`)",
    },
    Check {
        ids: &["ls.partition-metadata-missing"],
        severity: "error with KRaft metadata; warning when other partitions of the log dir have theirs",
        what: "(`ls`) no `partition.metadata`",
        broker: "a KRaft broker takes a log without a topic id for a stray replica and renames it `-stray` (`LogManager.isStrayKraftReplica`); otherwise it writes the file when it next becomes leader or follower",
    },
    Check {
        ids: &["ls.topic-id", "ls.not-hosted"],
        severity: "error",
        what: "(`ls`) a topic id the KRaft metadata does not know (or gives another name); a partition the metadata does not have, or whose replicas do not include this broker (`meta.properties`' `node.id`)",
        broker: "taken for a stray replica at start-up and renamed `-stray` (`LogManager.isStrayKraftReplica`)",
    },
    Check {
        ids: &["ls.duplicate"],
        severity: "error",
        what: "(`ls`) the same partition live (or future) in two of the log dirs given",
        broker: "the broker refuses to start: duplicate log directories (`LogManager.loadLog`)",
    },
    Check {
        ids: &["ls.index-tail"],
        severity: "warning",
        what: "(`ls`) the active segment's last offset-index entry does not name the batch at its position",
        broker: "ls reads that segment from its start instead; the broker's start-up rebuilds the index after an unclean shutdown",
    },
    Check {
        ids: &["ls.unreadable"],
        severity: "error",
        what: "(`ls`) a partition directory whose files cannot be read",
        broker: "—",
    },
    Check {
        ids: &["record.loader-rejects"],
        severity: "error",
        what: "(`--deep`) a record of `__consumer_offsets`, `__share_group_state`, `__transaction_state` or `__cluster_metadata` that the topic's loader throws on: no key, a key or value that does not deserialize",
        broker: "the group or share coordinator fails to load the partition (`CoordinatorLoaderImpl`); the transaction coordinator stops loading it there (`TransactionStateManager.loadTransactionsMetadata`); the controller stops replaying the log (`MetadataRecordSerde`)",
    },
    Check {
        ids: &["record.loader-skips"],
        severity: "warning",
        what: "(`--deep`) a record of an internal topic whose type (coordinator record type, transaction-log key version) the loader does not know",
        broker: "logged as a possible leftover of an aborted upgrade and ignored (`CoordinatorLoaderImpl`, `TransactionStateManager`)",
    },
    Check {
        ids: &["metadata.unknown-topic", "metadata.broker-epoch", "metadata.unknown-acl", "metadata.bad-value"],
        severity: "error",
        what: "(`metadata --check`) a metadata record for a topic id or partition that does not exist at that point, a broker change at another epoch than the broker's registration, the removal of an ACL id that does not exist, a registration change with a value outside its codes",
        broker: "the controller's replay throws and its fault handler stops the process (`ReplicationControlManager.replay`, `ClusterControlManager.replay`, `AclControlManager.replay`); the brokers' loader reports a metadata loading fault (`TopicsDelta`, `ClusterDelta`)",
    },
    Check {
        ids: &["metadata.unknown-broker"],
        severity: "error for a fence, unfence or registration change of a broker not registered; warning for replicas, ISR, ELR or a leader naming one",
        what: "(`metadata --check`) a broker id that is not registered at that point",
        broker: "the controller throws on a change of an unregistered broker (`ClusterControlManager.replay`); a partition naming one is kept, the broker hosts nothing until it registers",
    },
    Check {
        ids: &["metadata.undecodable", "metadata.transaction"],
        severity: "error",
        what: "(`metadata --check`) a `__cluster_metadata` record without a value or that does not decode as a metadata record; a BEGIN inside a metadata transaction, an END or ABORT outside one",
        broker: "the raft client's serde throws (`MetadataRecordSerde`), and the loader throws on a misplaced transaction record (`MetadataBatchLoader`): the controller stops, brokers report a metadata loading fault",
    },
    Check {
        ids: &["metadata.gap", "metadata.open-transaction"],
        severity: "warning",
        what: "(`metadata`) records between the snapshot and the point that no snapshot and no log segment here holds (the image is that of the last offset before them); a metadata transaction not ended at the point (its records are not in the image)",
        broker: "a replica fetches missing records or a snapshot from the leader; the loader applies a transaction's records at its END_TRANSACTION_RECORD (`MetadataBatchLoader`)",
    },
    Check {
        ids: &["metadata.time-approximate"],
        severity: "warning",
        what: "(`metadata --time`) the records written around the time asked for are gone from the log: the image is that of the newest snapshot whose last record was written at or before it, and the message gives the offsets and times the exact point lies between",
        broker: "nothing: the controller keeps snapshots and deletes the log below them (`metadata.log.max.snapshot.interval.ms`, `metadata.max.retention.ms`); only the times in snapshot headers remain",
    },
    Check {
        ids: &["leftover.kseg-tmp"],
        severity: "warning",
        what: "a `.kseg-tmp` file of an interrupted `kseg … --apply`",
        broker: "ignored (an unknown name); a rerun of the command resolves it",
    },
    Check {
        ids: &["leftover.kseg-backup"],
        severity: "warning; error inside a log dir",
        what: "a kseg backup (the root `<log dir>.kseg-backup`, or a directory holding a repair's `plan.json`) moved into a partition directory or a log dir",
        broker: "inside a partition directory ignored: the loader reads files only (`LogLoader`, `File.isFile`); inside a log dir the broker fails the whole log dir at start-up on a name that is no partition's (`UnifiedLog.parseTopicPartitionName` in `LogManager.loadLogs`)",
    },
    Check {
        ids: &["file.not-regular"],
        severity: "error when the broker opens the name (a state file it reads by name, an index of a segment whose `.log` is a file) or when a `.log` leads nowhere (its indexes are deleted as orphans); warning when its load skips the entry (any other `.log`, an index without its `.log`, a producer snapshot, a leftover)",
        what: "an entry named like a Kafka file is a FIFO, a socket, a device, a directory or a link to one: kseg reads nothing from it and goes on without it",
        broker: "segment files and leftovers that are not files are skipped by the load (`File.isFile` in `LogLoader`), producer snapshots too (`Files.isRegularFile` in `ProducerStateManager`); an index of a loaded segment is opened by `AbstractIndex`/`TransactionIndex` and a state file by name (`CheckpointFile`, `PartitionMetadataFile`, `MetaPropertiesEnsemble`), which fail on a directory or socket, block on a FIFO and never end on a device",
    },
    Check {
        ids: &["tiered.object-missing"],
        severity: "error when the segment's copy finished (the broker serves it); warning otherwise",
        what: "(`tiered`, `verify --remote`) an object of a remote segment that `__remote_log_metadata` names (or that the segment's other objects imply) is not in the store (or what stands at its key is no object, said in the message: a folder, that is objects whose keys go on past its own; in a filesystem a FIFO, a socket, a device, a link to nothing)",
        broker: "a fetch of the segment's offsets fails (`RemoteLogManager.read` through the `RemoteStorageManager`)",
    },
    Check {
        ids: &["tiered.orphan"],
        severity: "warning",
        what: "(`tiered`, `verify --remote`) a remote segment's objects that no `__remote_log_metadata` record names, or whose deletion finished, or objects under a partition's prefix that belong to no segment; with their bytes",
        broker: "never read nor deleted: retention only deletes segments the metadata knows (`RemoteLogManager.cleanupExpiredRemoteLogSegments`)",
    },
    Check {
        ids: &["tiered.not-an-object"],
        severity: "error where it stands for an object of a segment the broker serves (but a link to nothing as its optional transaction index); warning otherwise",
        what: "(`tiered`, `verify --remote`; a tier in a filesystem) an entry that is no object (a FIFO, a socket, a device, a link to nothing or to itself, a link to a directory, which is not followed) under a partition's prefix: kseg reads nothing from it. One at the key of a segment's required object is reported as that object's `tiered.object-missing`, saying what stands there",
        broker: "`LocalTieredStorage` opens a segment's files by name: a fetch that reaches one fails, or blocks on a FIFO; an optional file it first asks `File.exists` about, which a link to nothing is not, and the index cache takes a missing transaction index as empty; retention deletes only the files it names",
    },
    Check {
        ids: &["tiered.metadata-elsewhere"],
        severity: "warning",
        what: "(`tiered`) the log dir holds `__remote_log_metadata` partitions, but not the one a partition's records go to (of the default 50; or its topic id is unknown and no record names it): its remote segments are those the store lists, each taken as served, and no orphan, unfinished copy or deletion of it can be told",
        broker: "each broker hosts a few metadata partitions, and learns of the others' remote segments by consuming them (`TopicBasedRemoteLogMetadataManager`, `RemoteLogMetadataTopicPartitioner`): a log dir copied from one broker lacks the rest",
    },
    Check {
        ids: &["tiered.copy-unfinished", "tiered.delete-unfinished"],
        severity: "warning",
        what: "(`tiered`, `verify --remote`) a segment whose last metadata state is `COPY_SEGMENT_STARTED` or `DELETE_SEGMENT_STARTED`",
        broker: "a copy that never finished is never served, and what it copied stays until retention breaches the segment; a delete is retried at the next cleanup pass (`RemoteLogManager.cleanupExpiredRemoteLogSegments`)",
    },
    Check {
        ids: &["tiered.gap"],
        severity: "error",
        what: "(`tiered`, `verify --remote`) offsets held by no served remote segment, between two of them or between the remote tier's end and the local log start",
        broker: "fetches of those offsets fail with an out-of-range error; consumers reset or skip them",
    },
    Check {
        ids: &["tiered.overlap"],
        severity: "warning",
        what: "(`tiered`, `verify --remote`) two served remote segments hold the same offsets",
        broker: "the segment its leader-epoch lookup finds is served (`RemoteLogMetadataCache.remoteLogSegmentMetadata`); the other is deleted by retention",
    },
    Check {
        ids: &["tiered.epoch-chain"],
        severity: "warning",
        what: "(`tiered`, `verify --remote`) a remote segment starts in a leader epoch below the one its predecessor ends in",
        broker: "segments outside the current leader's epoch lineage are deleted as unreferenced (`RemoteLogManager.isRemoteSegmentWithinLeaderEpochs`)",
    },
    Check {
        ids: &["tiered.log-damaged", "tiered.index", "tiered.offsets-mismatch"],
        severity: "error",
        what: "(`tiered --deep`) a remote segment's batches do not frame or check out (or, in Aiven's layout, its chunks or manifest do not decode), its offset index points elsewhere than the batch holding the offset (or an index or leader-epoch checkpoint is longer than any of the segment's can be, or a producer snapshot longer than the entries its header counts, and is not read), or its offsets are not the metadata's",
        broker: "remote fetches fail or return wrong data: the broker reads remote segments as they are, with no recovery",
    },
    Check {
        ids: &["tiered.size-mismatch"],
        severity: "error when the segment's copy finished (the broker serves it); warning otherwise",
        what: "(`tiered`, `verify --remote`; in Aiven's layout the manifest tells the size: `tiered` with `--deep`, `verify --remote` of a segment served below the local log) a remote segment's size is not the `segmentSizeInBytes` that `__remote_log_metadata` gives the segment copied: it was cut short (whole batches lost, every offset left still within the metadata's) or replaced",
        broker: "the remote log manager copies a closed segment whole and records its size (`RemoteLogManager.copyLogSegment`); it reads the object as it is, with no recovery: fetches of the offsets that are gone return nothing, or other bytes",
    },
];

/// The row that describes `id`, if any.
pub fn find(id: &str) -> Option<&'static Check> {
    CHECKS.iter().find(|c| c.ids.contains(&id))
}

/// Every check id, in catalog order.
pub fn ids() -> impl Iterator<Item = &'static str> {
    CHECKS.iter().flat_map(|c| c.ids.iter().copied())
}

/// docs/checks.md's check table: its heading, its rule and one Markdown row per [`Check`].
pub fn markdown_table() -> String {
    let mut t = String::from(
        "| check id | severity | what | what the broker does (source) |\n|---|---|---|---|\n",
    );
    for c in CHECKS {
        let ids: Vec<String> = c.ids.iter().map(|id| format!("`{id}`")).collect();
        t += &format!(
            "| {} | {} | {} | {} |\n",
            ids.join(", "),
            c.severity,
            c.what,
            c.broker
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for id in ids() {
            assert!(seen.insert(id), "{id} is in the catalog twice");
            let (area, what) = id.split_once('.').expect("area.what");
            for part in [area, what] {
                assert!(
                    !part.is_empty() && part.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                    "{id}: lowercase words and dashes"
                );
            }
        }
        assert_eq!(find("batch.crc").unwrap().severity, "error");
        assert!(find("batch.nonesuch").is_none());
    }

    #[test]
    fn every_row_says_what_and_what_the_broker_does() {
        for c in CHECKS {
            assert!(!c.ids.is_empty());
            assert!(
                c.severity.starts_with("error") || c.severity.starts_with("warning"),
                "{:?}: {}",
                c.ids,
                c.severity
            );
            assert!(!c.what.is_empty() && !c.broker.is_empty(), "{:?}", c.ids);
            // A `|` would break the Markdown table.
            assert!(
                !c.what.contains('|') && !c.broker.contains('|'),
                "{:?}",
                c.ids
            );
        }
    }
}
