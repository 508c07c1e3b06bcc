//! A log dir's offset checkpoints rewritten by kseg list their entries in the order the
//! broker writes them (`OffsetCheckpointFile.write` iterates the map it is given): checked
//! against the checkpoints real brokers wrote (`../shared/realworld/`: Kafka 2.1 and 3.x
//! builds on Scala 2.12, whose `LogManager` and `ReplicaManager` wrote immutable hash-trie
//! maps; a Kafka 0.10 build on Scala 2.10/2.11, whose tries were keyed by the case class
//! `TopicAndPartition`), and against Kafka 4.0's Scala 2.13 orders computed by hand.

mod common;

use std::path::{Path, PathBuf};

use kseg::ops::repair::apply::Change;
use kseg::ops::repair::log_dir::{checkpoint_writes, CheckpointUpdate};

/// Extracts only the log dirs' offset checkpoints of every real-world archive.
fn realworld_checkpoints(root: &Path, into: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(root).unwrap() {
        let archive = e.unwrap().path();
        if !archive.to_string_lossy().ends_with(".tar.gz") {
            continue;
        }
        let status = std::process::Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(into)
            .arg("--wildcards")
            .arg("*offset-checkpoint")
            .stderr(std::process::Stdio::null())
            .status()
            .expect("run tar");
        // An archive without checkpoints makes tar fail "not found in archive": fine.
        let _ = status;
    }
    out.extend(common::files_under(into));
    out.sort();
    out
}

/// (topic, partition, offset) lines of a checkpoint file.
fn entries(text: &str) -> Vec<(String, i32, i64)> {
    text.lines()
        .skip(2)
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (
                f[0].to_owned(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect()
}

fn write_text(header: &str, entries: &[(String, i32, i64)]) -> String {
    let mut s = format!("{header}\n{}\n", entries.len());
    for (t, p, o) in entries {
        s += &format!("{t} {p} {o}\n");
    }
    s
}

/// What kseg writes to `file` when the partition's entry becomes `after`.
fn rewrite(file: &Path, topic: &str, partition: i32, after: Option<i64>) -> Vec<u8> {
    let scratch = tempfile::tempdir().unwrap();
    let update = CheckpointUpdate {
        file: file.to_path_buf(),
        before: None,
        after,
        created: false,
    };
    let changes =
        checkpoint_writes(&[update], &(topic.to_owned(), partition), scratch.path()).unwrap();
    let [Change::Write { source, .. }] = &changes[..] else {
        panic!("{changes:?}")
    };
    std::fs::read(source).unwrap()
}

/// Rewriting a broker's checkpoint with its own values gives its bytes back; removing an
/// entry and letting kseg add it again (as retention or recovery adds a partition's entry)
/// gives them back too: the order is the broker's hash order, not "new entries last".
#[test]
fn broker_written_checkpoints_come_back_byte_for_byte() {
    let Some(root) = common::realworld_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let files = realworld_checkpoints(&root, tmp.path());
    let mut checked = 0;
    for file in &files {
        let original = std::fs::read_to_string(file).unwrap();
        let all = entries(&original);
        // Since Kafka 2.6 `ReplicaManager.checkpointHighWatermarks` fills an `AnyRefMap` (open
        // addressing) in the order it meets the partitions, which a log dir does not tell: not
        // modelled (the 3.x brokers' high watermarks).
        let name = file.to_string_lossy();
        let three_x = name.contains("aibulb") || name.contains("bheem6005");
        if all.len() < 5 || (three_x && name.ends_with("replication-offset-checkpoint")) {
            continue;
        }
        for &at in &[0, all.len() / 2, all.len() - 1] {
            let (topic, partition, offset) = all[at].clone();
            assert_eq!(
                rewrite(file, &topic, partition, Some(offset)),
                original.as_bytes(),
                "{} rewritten as it is",
                file.display()
            );
            let mut without = all.clone();
            without.remove(at);
            let header = original.lines().next().unwrap();
            let cut = tmp.path().join("cut").join(file.file_name().unwrap());
            std::fs::create_dir_all(cut.parent().unwrap()).unwrap();
            std::fs::write(&cut, write_text(header, &without)).unwrap();
            let added = rewrite(&cut, &topic, partition, Some(offset));
            assert_eq!(
                String::from_utf8(added).unwrap(),
                original,
                "{} with {topic}-{partition} added back",
                file.display()
            );
            // And removing it from the whole file gives the file without it, in order.
            let removed = rewrite(file, &topic, partition, None);
            assert_eq!(
                String::from_utf8(removed).unwrap(),
                write_text(header, &without)
            );
            checked += 1;
        }
    }
    // The recovery points of aibulb, bheem6005-kafka and spooldir; spooldir's high watermarks;
    // xpxwo100's (Kafka 0.10, `TopicAndPartition` keys) recovery points and high watermarks.
    assert_eq!(checked, 6 * 3, "{files:?}");
}

/// Kafka 4.0 (Scala 2.13 only): `checkpointRecoveryOffsetsInDir` maps the log dir's logs into
/// a `mutable.HashMap` sized for them (`HashMap.from`, knownSize 9: `tableSizeFor(13)` = 16
/// slots), iterated bucket by bucket. By hand for orders-0..orders-8:
/// `TopicPartition.hashCode = 31 * (31 + p) + "orders".hashCode()` (-1008770331), improved
/// `h ^ (h >>> 16)` ends in 0x...579, 51a, 53b, 4dc, 4fd, 49e, 4bf, 4a0, 441 for p = 0..8: buckets
/// (low 4 bits) 9..15 for partitions 0..6, 0 for 7 and 1 for 8, hence 7, 8, 0, 1, ..., 6.
#[test]
fn kafka_4_orders_a_new_recovery_point_entry_by_scala_2_13_hash_map() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("recovery-point-offset-checkpoint");
    let e = |p: i32| ("orders".to_owned(), p, 10 * i64::from(p));
    let before: Vec<_> = [7, 0, 1, 2, 3, 4, 5, 6].into_iter().map(e).collect();
    std::fs::write(&file, write_text("0", &before)).unwrap();
    let got = rewrite(&file, "orders", 8, Some(80));
    let expected: Vec<_> = [7, 8, 0, 1, 2, 3, 4, 5, 6].into_iter().map(e).collect();
    assert_eq!(String::from_utf8(got).unwrap(), write_text("0", &expected));
}

/// `replication-offset-checkpoint` (since Kafka 2.6 `ReplicaManager.checkpointHighWatermarks`
/// fills an `AnyRefMap` in the order `allPartitions`, a `ConcurrentHashMap`, yields them, which
/// depends on that table's history, not only on the partitions): kseg never adds or removes an
/// entry there, it only clamps a high watermark into the log (`UnifiedLog.updateLogStartOffset`
/// raises it to the log start; the loader's `updateHighWatermark` bounds it by the log end).
/// With the same partitions the broker's next write has the same order, so an entry whose value
/// changes keeps its place: checked on the 3.x brokers' 51-entry files, every other byte equal.
#[test]
fn a_clamped_high_watermark_keeps_the_brokers_order() {
    let Some(root) = common::realworld_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let files = realworld_checkpoints(&root, tmp.path());
    let mut checked = 0;
    for file in files
        .iter()
        .filter(|f| f.ends_with("replication-offset-checkpoint"))
    {
        let original = std::fs::read_to_string(file).unwrap();
        let all = entries(&original);
        if all.len() < 5 {
            continue;
        }
        let header = original.lines().next().unwrap();
        for at in [0, all.len() / 2, all.len() - 1] {
            let (topic, partition, offset) = all[at].clone();
            let mut want = all.clone();
            want[at].2 = offset + 1;
            assert_eq!(
                String::from_utf8(rewrite(file, &topic, partition, Some(offset + 1))).unwrap(),
                write_text(header, &want),
                "{}",
                file.display()
            );
        }
        checked += 1;
    }
    // aibulb and bheem6005-kafka (3.x, 51 entries), spooldir (2.1, 104), xpxwo100 (0.10, 53).
    assert_eq!(checked, 4, "{files:?}");
}

/// A log dir whose `recovery-point-offset-checkpoint` lists orders-0..8 in `recovery_order`
/// (telling which broker build wrote the dir) and whose `cleaner-offset-checkpoint` lists
/// `cleaner` (partitions of `orders`, offset 10 × p); what kseg writes to the cleaner file
/// when `partition`'s entry becomes `after`, as partitions.
fn cleaner_rewrite(
    recovery_order: &[i32],
    cleaner: &[i32],
    partition: i32,
    after: Option<i64>,
) -> Vec<(i32, i64)> {
    let tmp = tempfile::tempdir().unwrap();
    let e = |p: i32| ("orders".to_owned(), p, 10 * i64::from(p));
    let recovery: Vec<_> = recovery_order.iter().map(|&p| e(p)).collect();
    std::fs::write(
        tmp.path().join("recovery-point-offset-checkpoint"),
        write_text("0", &recovery),
    )
    .unwrap();
    let file = tmp.path().join("cleaner-offset-checkpoint");
    let before: Vec<_> = cleaner.iter().map(|&p| e(p)).collect();
    std::fs::write(&file, write_text("0", &before)).unwrap();
    let text = String::from_utf8(rewrite(&file, "orders", partition, after)).unwrap();
    entries(&text).into_iter().map(|(_, p, o)| (p, o)).collect()
}

/// One update of a cleaner file: its partitions before, the partition, its new offset (None:
/// removed), the partitions after in the expected order.
type CleanerCase<'a> = (&'a [i32], i32, Option<i64>, &'a [i32]);

/// Each case's rewrite in a log dir told by `recovery_order` gives its expected order, the
/// updated partition at its new offset and the others at 10 × p.
fn check_cleaner_cases(recovery_order: &[i32], cases: &[CleanerCase]) {
    for &(cleaner, partition, after, want) in cases {
        let want: Vec<(i32, i64)> = want
            .iter()
            .map(|&p| match after {
                Some(offset) if p == partition => (p, offset),
                _ => (p, 10 * i64::from(p)),
            })
            .collect();
        assert_eq!(
            cleaner_rewrite(recovery_order, cleaner, partition, after),
            want,
            "{cleaner:?} with orders-{partition} at {after:?}, dir {recovery_order:?}"
        );
    }
}

/// Kafka 4.0's `LogCleanerManager.updateCheckpoints` (core/src/main/scala/kafka/log/
/// LogCleanerManager.scala): `checkpoint.read().asScala.filter {..}.toMap`, then `- tp` and
/// `+ (tp -> offset)`, written in the map's order. `OffsetCheckpointFile.read` (storage/.../
/// checkpoint/OffsetCheckpointFile.java) fills a `java.util.HashMap`; the `filter` of its
/// Scala wrapper builds a Scala 2.13 `mutable.HashMap` of 16 slots (`mutable.Map`'s factory,
/// no size hint), and `toMap` a `Map1`..`Map4` in that order; `+` puts a new key last, a
/// fifth key makes a CHAMP trie. By hand, for `orders-p`: the improved hashes' low 4 bits
/// (the 16-slot bucket) are 9..15 for p = 0..6, 0 for 7, 1 for 8 (see
/// `kafka_4_orders_a_new_recovery_point_entry_by_scala_2_13_hash_map`), so 1 reads before 3
/// whatever the file's order; CHAMP puts the lone root entries first in slot order (3, 1, 5,
/// 6, 2, 7, 4 for orders-0..8, `the_scala_orders_of_nine_partitions`) and 8, 0 (which share a
/// root slot) after them. The dir is told as 4.0's by its recovery points, in 4.0's order.
#[test]
fn kafka_4_cleaner_checkpoint_of_up_to_4_entries() {
    let kafka4 = [7, 8, 0, 1, 2, 3, 4, 5, 6];
    check_cleaner_cases(
        &kafka4,
        &[
            // A changed value: read back in bucket order, so the file is reordered.
            (&[3, 1], 3, Some(33), &[1, 3]),
            // A new entry last, after the ones read back.
            (&[3, 1], 7, Some(70), &[1, 3, 7]),
            (&[3, 1], 1, None, &[3]),
            // A fifth entry: the CHAMP order.
            (&[5, 3, 1, 0], 8, Some(80), &[3, 1, 5, 8, 0]),
            // A trie of 5 stays a trie when one goes (`HashMap.removed` makes no `Map4`).
            (&[3, 1, 5, 8, 0], 5, None, &[3, 1, 8, 0]),
        ],
    );
    // A dir that tells no writer gets 4.0's rule.
    check_cleaner_cases(&[], &[(&[3, 1], 7, Some(70), &[1, 3, 7])]);
}

/// Kafka 2.7 to 3.4 on Scala 2.12 (`git show 3.4:core/src/main/scala/kafka/log/
/// LogCleanerManager.scala`, `updateCheckpoints`; `OffsetCheckpointFile.read` is
/// `checkpoint.read().toMap` of the file's lines): up to 4 entries stay in file order, a
/// changed value in place, a new one last; past 4 the 2.12 hash trie, where 8 and 0 (one root
/// slot) come at that slot's place, first (`the_scala_orders_of_nine_partitions`: 8, 0, 3, 1,
/// 5, 6, 2, 7, 4). Kafka 2.1's `filterKeys(logs.keys) ++ update` gives the same. The dir is
/// told as a Scala 2.12 build's by its recovery points, in the trie's order.
#[test]
fn scala_2_12_cleaner_checkpoint_of_up_to_4_entries() {
    check_cleaner_cases(
        &[8, 0, 3, 1, 5, 6, 2, 7, 4],
        &[
            (&[3, 1], 3, Some(33), &[3, 1]),
            (&[3, 1], 7, Some(70), &[3, 1, 7]),
            (&[5, 3, 1, 0], 8, Some(80), &[8, 0, 3, 1, 5]),
            (&[8, 0, 3, 1, 5], 3, None, &[8, 0, 1, 5]),
        ],
    );
}

/// Kafka 0.10.1 (`git show 0.10.1.0:core/src/main/scala/kafka/log/LogCleanerManager.scala`,
/// `updateCheckpoints`: `checkpoint.read().filterKeys(logs.keys) ++ update`;
/// `kafka/server/OffsetCheckpoint.scala`'s `read` fills a `mutable.Map` in file order): up to
/// 4 entries come back in Scala 2.11 `mutable.HashMap` order, `++` builds a `Map1`..`Map4`
/// in it with a new key last. Keys are `TopicAndPartition`s; by hand (a separate model of
/// `MurmurHash3.productHash` and `HashTable.index`), orders-0..3 fall in buckets 4, 12, 12,
/// 14 of 16: walked from the last bucket, bucket 12's chain newest first, they read 3, 2, 1,
/// 0. Past 4 the hash trie over those hashes: orders-0..4 as 3, 4, 0, 2, 1; orders-0..8 as
/// 3, 4, 8, 0, 5, 2, 1, 6, 7 (the recovery points that tell the dir as 0.10's).
#[test]
fn kafka_0_10_cleaner_checkpoint_of_up_to_4_entries() {
    check_cleaner_cases(
        &[3, 4, 8, 0, 5, 2, 1, 6, 7],
        &[
            (&[0, 1, 2, 3], 0, Some(5), &[3, 2, 1, 0]),
            (&[0, 1, 2], 5, Some(50), &[2, 1, 0, 5]),
            (&[0, 1, 2, 3], 4, Some(40), &[3, 4, 0, 2, 1]),
        ],
    );
}
