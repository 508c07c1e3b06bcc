//! Which partition of an internal topic holds a key: the group coordinator puts a group's
//! offsets and metadata in `__consumer_offsets-N` and the transaction coordinator a
//! transactional id's state in `__transaction_state-N`, with `N = Utils.abs(key.hashCode()) %
//! partitions` (`GroupCoordinatorService.partitionFor`, `TransactionStateManager.partitionFor`).
//! Pure arithmetic on Java's semantics; nothing here knows where the directories are.

/// `offsets.topic.num.partitions`' default (`GroupCoordinatorConfig`).
pub const OFFSETS_TOPIC_PARTITIONS_DEFAULT: i32 = 50;
/// `transaction.state.log.num.partitions`' default (`TransactionLogConfig`).
pub const TRANSACTIONS_TOPIC_PARTITIONS_DEFAULT: i32 = 50;

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
}
