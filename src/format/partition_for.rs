//! Which partition of an internal topic holds a key: the group coordinator puts a group's
//! offsets and metadata in `__consumer_offsets-N` and the transaction coordinator a
//! transactional id's state in `__transaction_state-N`, with `N = Utils.abs(key.hashCode()) %
//! partitions` (`GroupCoordinatorService.partitionFor`, `TransactionStateManager.partitionFor`).
//! Tiered storage's `TopicBasedRemoteLogMetadataManager` puts a partition's remote segment
//! metadata in `__remote_log_metadata-N` with `N = toPositive(murmur2(bytes)) % partitions`, the
//! bytes being the big-endian `Objects.hash(topicId lsb, topicId msb, partition)`
//! (`RemoteLogMetadataTopicPartitioner`).
//! Pure arithmetic on Java's semantics; nothing here knows where the directories are.

/// `offsets.topic.num.partitions`' default (`GroupCoordinatorConfig`).
pub const OFFSETS_TOPIC_PARTITIONS_DEFAULT: i32 = 50;
/// `transaction.state.log.num.partitions`' default (`TransactionLogConfig`).
pub const TRANSACTIONS_TOPIC_PARTITIONS_DEFAULT: i32 = 50;

/// `remote.log.metadata.topic.num.partitions`' default (`TopicBasedRemoteLogMetadataManagerConfig`).
pub const REMOTE_LOG_METADATA_TOPIC_PARTITIONS_DEFAULT: i32 = 50;

/// Java's `String.hashCode`: `s[0]*31^(n-1) + … + s[n-1]` in wrapping 32-bit arithmetic over the
/// string's UTF-16 code units (a character outside the BMP counts as its two surrogates).
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// Kafka's `Utils.abs`: the absolute value, except that `Integer.MIN_VALUE` (whose absolute
/// value does not fit) maps to 0, where `Math.abs` would return it unchanged and negative.
pub fn kafka_abs(n: i32) -> i32 {
    if n == i32::MIN {
        0
    } else {
        n.abs()
    }
}

/// The partition of a topic of `partitions` partitions (at least 1) that holds `key`, a
/// group id or a transactional id.
pub fn partition_for(key: &str, partitions: i32) -> i32 {
    kafka_abs(java_string_hash(key)) % partitions
}

/// Kafka's `Utils.murmur2` (the producer's default partitioner's hash), in wrapping 32-bit
/// arithmetic, the tail's bytes mixed in as Java's fall-through switch does.
pub fn murmur2(data: &[u8]) -> i32 {
    const M: u32 = 0x5bd1_e995;
    let mut h: u32 = 0x9747_b28c ^ data.len() as u32;
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        let mut k = u32::from_le_bytes([w[0], w[1], w[2], w[3]]).wrapping_mul(M);
        k ^= k >> 24;
        h = h.wrapping_mul(M) ^ k.wrapping_mul(M);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        for (i, b) in tail.iter().enumerate().rev() {
            h ^= u32::from(*b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// The `__remote_log_metadata` partition (of `partitions`, at least 1) that holds the remote
/// segment metadata of partition `partition` of the topic with id `topic_id` (its 16 bytes).
pub fn remote_log_metadata_partition(topic_id: &[u8; 16], partition: i32, partitions: i32) -> i32 {
    let bits = |b: &[u8]| i64::from_be_bytes(b.try_into().expect("8 bytes"));
    // `Long.hashCode`: the two halves xored.
    let long_hash = |v: i64| ((v as u64 >> 32) as i32) ^ (v as i32);
    let (msb, lsb) = (bits(&topic_id[..8]), bits(&topic_id[8..]));
    // `Objects.hash(a, b, c)`: `Arrays.hashCode`, 1 then `31 * h + each`.
    let hash = [long_hash(lsb), long_hash(msb), partition]
        .into_iter()
        .fold(1i32, |h, x| h.wrapping_mul(31).wrapping_add(x));
    (murmur2(&hash.to_be_bytes()) & 0x7fff_ffff) % partitions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_over_utf16_code_units() {
        assert_eq!(java_string_hash(""), 0);
        // 'a' = 97; "ab" = 97*31 + 98.
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("ab"), 97 * 31 + 98);
        // "é" is one code unit, U+00E9 = 233.
        assert_eq!(java_string_hash("é"), 233);
        // U+1F600 is the surrogate pair D83D DE00: 0xD83D*31 + 0xDE00.
        assert_eq!(java_string_hash("😀"), 0xD83D * 31 + 0xDE00);
    }

    #[test]
    fn abs_maps_min_value_to_zero() {
        assert_eq!(kafka_abs(i32::MIN), 0);
        assert_eq!(kafka_abs(-5), 5);
        assert_eq!(kafka_abs(i32::MAX), i32::MAX);
        assert_eq!(kafka_abs(-i32::MAX), i32::MAX);
    }

    #[test]
    fn murmur2_matches_kafkas_test_vectors() {
        // Kafka's UtilsTest.testMurmur2 cases.
        for (data, want) in [
            (&b"21"[..], -973_932_308),
            (b"foobar", -790_332_482),
            (b"a-little-bit-long-string", -985_981_536),
            (b"a-little-bit-longer-string", -1_486_304_829),
            (
                b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58_897_971,
            ),
            (b"abc", 479_470_107),
        ] {
            assert_eq!(murmur2(data), want, "{:?}", String::from_utf8_lossy(data));
        }
    }

    #[test]
    fn remote_log_metadata_partitions_as_computed_from_the_partitioner_rule() {
        // Expected values from a separate Python model of RemoteLogMetadataTopicPartitioner
        // (Objects.hash of the id's halves and the partition, big-endian, murmur2, toPositive).
        let id = |b64: &str| crate::format::checkpoint::uuid_from_base64(b64).unwrap();
        for (topic_id, partition, partitions, want) in [
            ("MWJ6FHTfRYy67jzwZdeqSQ", 0, 50, 42),
            ("MWJ6FHTfRYy67jzwZdeqSQ", 7, 50, 26),
            ("AAAAAAAAAAAAAAAAAAAAAQ", 0, 50, 35),
            ("tqimKeZwStOEOwRzT3L5oQ", 3, 7, 6),
            ("______________________", i32::MAX, 50, 10),
        ] {
            assert_eq!(
                remote_log_metadata_partition(&id(topic_id), partition, partitions),
                want,
                "{topic_id} {partition} of {partitions}"
            );
        }
    }
}
