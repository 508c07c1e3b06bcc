//! The iteration orders of the JVM hash maps whose order Kafka leaks into files, for keys
//! hashed with Java's `hashCode` ([`JavaHash`]: producer ids as `Long`, topic-partitions as
//! `TopicPartition`).
//!
//! - `java.util.HashMap` ([`JavaHashOrder`]): producer snapshots list producers in it
//!   (reference README, `producer_snapshot`), and within one append the broker applies
//!   per-producer updates in it, which decides insertion order within a bucket. Java iterates
//!   buckets in index order and each bucket's chain in insertion order. The bucket is
//!   `(h ^ (h >>> 16)) & (capacity - 1)`; the table starts at 16 slots and doubles when it
//!   holds more than 3/4 of its capacity, or when a chain reaches 9 entries while the table is
//!   smaller than 64 (instead of turning the chain into a tree). Doubling splits each chain
//!   preserving order, so re-inserting in iteration order reproduces it. Tree bins (9+
//!   colliding keys in a table of 64 or more) are not modelled.
//! - Scala 2.13's `mutable.HashMap` ([`scala_mutable_order`]), which Kafka 4.0's `LogManager`
//!   builds its recovery-point and log-start checkpoints in (`logsToCheckpoint.map`/`.collect`
//!   on the log dir's `AnyRefMap`, seen as a `collection.Map`, whose `mapFactory` is
//!   `mutable.HashMap`): the same bucket as Java's, but each bucket kept sorted by that
//!   improved hash (`HashMap.put0`), so the order is a function of the keys and the table size.
//! - Scala 2.13's immutable `HashMap` ([`scala_champ_order`], a CHAMP trie over
//!   `Hashing.improve(hashCode)`, 5 bits a level from the low end: a node's own entries first,
//!   in slot order, then its sub-nodes in slot order), which `LogCleanerManager` writes the
//!   cleaner checkpoint from (`toMap`, then `+`) once it holds more than 4 entries.
//! - Scala 2.12's immutable `HashMap` ([`scala_212_trie_order`], a hash trie over the same
//!   improved hash, entries and sub-tries interleaved in slot order), which Kafka builds on
//!   Scala 2.12 (before 4.0) wrote those checkpoints in: `collection.Map.map` there builds an
//!   immutable map.
//!
//! - Scala 2.10/2.11's `mutable.HashMap` ([`scala_211_hash_table_order`], `mutable.HashTable`:
//!   the bucket is the top bits of `rotateRight(byteswap32(hashCode), log2(size))`, buckets are
//!   iterated from the last down, a chain newest first), which Kafka 0.10's `OffsetCheckpoint.read`
//!   builds, and through which its `LogCleanerManager.updateCheckpoints` orders up to 4 entries.
//!
//! Kafka up to 0.10.1 keyed these maps by the Scala case class `TopicAndPartition`, whose
//! `hashCode` is Scala's `MurmurHash3.productHash` ([`topic_and_partition_hash`]), not by the
//! Java `TopicPartition`.
//!
//! Keys whose full hashes are equal keep the order they are given in (the Scala maps put a
//! later one after an earlier one).

use crate::format::partition_for::java_string_hash;

const INITIAL_CAPACITY: usize = 16;
/// A chain this long before an insert makes Java treeify (or, below 64 slots, resize).
const TREEIFY_THRESHOLD: usize = 8;
const MIN_TREEIFY_CAPACITY: usize = 64;

/// A key's Java `hashCode`.
pub trait JavaHash {
    fn java_hash(&self) -> i32;
}

/// `Long.hashCode`: `(int)(value ^ (value >>> 32))`.
impl JavaHash for i64 {
    fn java_hash(&self) -> i32 {
        let v = *self as u64;
        (v ^ (v >> 32)) as u32 as i32
    }
}

/// A topic-partition: `TopicPartition.hashCode` is `31 * (31 + partition) + topic.hashCode()`.
impl JavaHash for (&str, i32) {
    fn java_hash(&self) -> i32 {
        31i32
            .wrapping_mul(31i32.wrapping_add(self.1))
            .wrapping_add(java_string_hash(self.0))
    }
}

/// `TopicAndPartition(topic, partition).hashCode` in Kafka up to 0.10.1 (Scala 2.10/2.11): a case
/// class hashes as `MurmurHash3.productHash` (`ScalaRunTime._hashCode`) — seed `0xcafebabe`,
/// each element's `##` mixed in (`mix`: Murmur3's `k` scramble, `rotl 13`, `* 5 + 0xe6546b64`),
/// then `finalizeHash(h, arity)`: `h ^ arity` through Murmur3's `fmix32`. Before Scala 2.13 the
/// `productPrefix` (the class name) is not mixed in. A `String`'s `##` is its `hashCode`, an
/// `Int`'s the value.
pub fn topic_and_partition_hash(topic: &str, partition: i32) -> i32 {
    fn mix(h: u32, data: u32) -> u32 {
        let k = data
            .wrapping_mul(0xcc9e_2d51)
            .rotate_left(15)
            .wrapping_mul(0x1b87_3593);
        (h ^ k)
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe654_6b64)
    }
    let mut h = mix(0xcafe_babe, java_string_hash(topic) as u32);
    h = mix(h, partition as u32);
    h ^= 2; // the arity
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h as i32
}

/// `h ^ (h >>> 16)`: java.util.HashMap's `hash` and Scala 2.13 `mutable.HashMap`'s
/// `improveHash`.
fn spread(h: i32) -> i32 {
    let h = h as u32;
    (h ^ (h >> 16)) as i32
}

/// `scala.collection.Hashing.improve` (Scala 2.12 and 2.13), the hash the immutable maps use.
fn scala_improve(h: i32) -> u32 {
    let mut h = h.wrapping_add(!(h << 9));
    h ^= ((h as u32) >> 14) as i32;
    h = h.wrapping_add(h << 4);
    (h ^ ((h as u32) >> 10) as i32) as u32
}

#[derive(Debug, Clone)]
pub struct JavaHashOrder<K = i64> {
    buckets: Vec<Vec<K>>,
    len: usize,
}

impl<K> Default for JavaHashOrder<K> {
    fn default() -> Self {
        Self {
            buckets: Vec::new(),
            len: 0,
        }
    }
}

impl<K: JavaHash + PartialEq + Clone> JavaHashOrder<K> {
    pub fn new() -> Self {
        Self::default()
    }

    fn index(&self, key: &K) -> usize {
        spread(key.java_hash()) as u32 as usize & (self.buckets.len() - 1)
    }

    /// Inserts `key` at the end of its chain; a key already present keeps its place.
    pub fn insert(&mut self, key: K) {
        if self.buckets.is_empty() {
            self.buckets = (0..INITIAL_CAPACITY).map(|_| Vec::new()).collect();
        }
        let i = self.index(&key);
        if self.buckets[i].contains(&key) {
            return;
        }
        let chain_before = self.buckets[i].len();
        self.buckets[i].push(key);
        if chain_before >= TREEIFY_THRESHOLD && self.buckets.len() < MIN_TREEIFY_CAPACITY {
            self.resize();
        }
        self.len += 1;
        if self.len > self.buckets.len() / 4 * 3 {
            self.resize();
        }
    }

    fn resize(&mut self) {
        let old = std::mem::take(&mut self.buckets);
        self.buckets = (0..old.len() * 2).map(|_| Vec::new()).collect();
        for key in old.into_iter().flatten() {
            let i = self.index(&key);
            self.buckets[i].push(key);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = K> + '_ {
        self.buckets.iter().flatten().cloned()
    }
}

/// The table size of a Scala 2.13 `mutable.HashMap` built by `HashMap.from` of a collection
/// whose size (`n`) is known: `tableSizeFor(((n + 1) / 0.75).toInt)`, where `tableSizeFor(c)`
/// is `highestOneBit(max(c - 1, 4)) * 2`; an unknown size starts at the default 16.
pub fn scala_mutable_table_for_known_size(n: usize) -> usize {
    let capacity = ((n + 1) as f64 / 0.75) as usize;
    let c = capacity.saturating_sub(1).max(4);
    (1usize << (usize::BITS - 1 - c.leading_zeros())) * 2
}

/// The table size of a Scala 2.13 `mutable.HashMap` after `n` inserts into the default 16
/// slots (a collection of unknown size, e.g. `.collect`'s): it doubles before the insert that
/// brings it to `threshold = (size * 0.75).toInt` (`put0`: `contentSize + 1 >= threshold`).
pub fn scala_mutable_table_after_inserts(n: usize) -> usize {
    let mut table = INITIAL_CAPACITY;
    for count in 1..=n {
        if count >= table * 3 / 4 {
            table *= 2;
        }
    }
    table
}

/// Sorts `keys` into the iteration order of a Scala 2.13 `mutable.HashMap` of `table` slots:
/// by bucket, then by improved hash (signed, as `put0` compares it).
pub fn scala_mutable_order<T>(keys: &mut [T], table: usize, hash: impl Fn(&T) -> i32) {
    keys.sort_by_cached_key(|k| {
        let h = spread(hash(k));
        (h as u32 as usize & (table - 1), h)
    });
}

/// The improved hash's 5-bit groups from the low end: a key that sorts like a walk of a trie
/// indexed 5 bits a level.
fn trie_path(h: u32) -> [u32; 7] {
    std::array::from_fn(|i| (h >> (5 * i)) & 31)
}

/// Sorts `keys` into the iteration order of a Scala 2.10–2.12 immutable `HashMap` of more than
/// 4 entries (a hash trie; up to 4 it is a `Map1`..`Map4`, in insertion order).
pub fn scala_212_trie_order<T>(keys: &mut [T], hash: impl Fn(&T) -> i32) {
    keys.sort_by_cached_key(|k| trie_path(scala_improve(hash(k))));
}

/// `keys`, inserted in the order given into a Scala 2.10/2.11 `mutable.HashMap` of the default
/// 16 slots, in its iteration order (`mutable.HashTable`). The bucket is the top `log2(size)`
/// bits of `rotateRight(byteswap32(hashCode), 4)` (4: `bitCount` of the first table's size
/// less 1, kept through resizes), where `byteswap32(v)` is
/// `reverseBytes(v * 0x9e3775cd) * 0x9e3775cd`; an entry goes to the head of its chain; the
/// table doubles when it holds more than 3/4 of its size, moving each old bucket's chain from
/// the last bucket down, each entry to the head of its new chain; iteration runs from the last
/// populated bucket down to 0, each chain from its head.
pub fn scala_211_hash_table_order<T>(keys: Vec<T>, hash: impl Fn(&T) -> i32) -> Vec<T> {
    fn bucket(h: i32, size: usize) -> usize {
        let swapped = (h as u32)
            .wrapping_mul(0x9e37_75cd)
            .swap_bytes()
            .wrapping_mul(0x9e37_75cd);
        // The seed is fixed when the map is made (`tableSizeSeed` of its first table).
        let seed = (INITIAL_CAPACITY as u32 - 1).count_ones();
        (swapped.rotate_right(seed) >> (size as u32 - 1).leading_zeros()) as usize
    }
    let mut table: Vec<Vec<(i32, T)>> = (0..INITIAL_CAPACITY).map(|_| Vec::new()).collect();
    let mut len = 0;
    for key in keys {
        let h = hash(&key);
        let i = bucket(h, table.len());
        table[i].insert(0, (h, key));
        len += 1;
        if len > table.len() * 3 / 4 {
            let old = std::mem::take(&mut table);
            table = (0..old.len() * 2).map(|_| Vec::new()).collect();
            for (h, key) in old.into_iter().rev().flatten() {
                let i = bucket(h, table.len());
                table[i].insert(0, (h, key));
            }
        }
    }
    table.into_iter().rev().flatten().map(|(_, k)| k).collect()
}

/// `keys` in the iteration order of a Scala 2.13 immutable `HashMap` of more than 4 entries
/// (a CHAMP trie; up to 4 it is a `Map1`..`Map4`, in insertion order).
pub fn scala_champ_order<T>(keys: Vec<T>, hash: impl Fn(&T) -> i32) -> Vec<T> {
    fn order<T>(keys: &mut [(u32, T)], shift: u32) {
        if keys.len() < 2 || shift >= 32 {
            return;
        }
        let slot = |h: u32| ((h >> shift) & 31) as usize;
        let mut count = [0usize; 32];
        keys.iter().for_each(|(h, _)| count[slot(*h)] += 1);
        // A slot of one entry holds it in the node itself (its payload, iterated first); a
        // slot of more holds a sub-node, iterated after the payload, in slot order.
        keys.sort_by_key(|(h, _)| (count[slot(*h)] > 1, slot(*h)));
        let payload = count.iter().filter(|&&c| c == 1).count();
        let mut rest = &mut keys[payload..];
        while let Some(&(h, _)) = rest.first() {
            let (node, tail) = rest.split_at_mut(count[slot(h)]);
            order(node, shift + 5);
            rest = tail;
        }
    }
    let mut hashed: Vec<(u32, T)> = keys
        .into_iter()
        .map(|k| (scala_improve(hash(&k)), k))
        .collect();
    order(&mut hashed, 0);
    hashed.into_iter().map(|(_, k)| k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(ids: &[i64]) -> Vec<i64> {
        let mut m = JavaHashOrder::new();
        for &id in ids {
            m.insert(id);
        }
        m.iter().collect()
    }

    #[test]
    fn matches_the_reference_readme_example() {
        // 16 and 1 share bucket 0/1 ordering: 16 → bucket 0, 1 → 1, 33 → 1, 500 → 4.
        assert_eq!(order(&[1, 16, 33, 500]), vec![16, 1, 33, 500]);
        assert_eq!(order(&[500, 33, 1, 16]), vec![16, 33, 1, 500]);
    }

    #[test]
    fn resizes_past_three_quarters_and_keeps_chain_order() {
        let ids: Vec<i64> = (0..13).map(|i| i * 16).collect();
        // The 9th id in one chain doubles the table to 32; chains keep insertion order.
        let got = order(&ids);
        assert_eq!(got.len(), 13);
        let mut sorted = got.clone();
        sorted.sort_by_key(|id| spread(id.java_hash()) as usize & 31);
        assert_eq!(got, sorted);
    }

    #[test]
    fn high_bits_fold_into_the_bucket() {
        let big = 1i64 << 32;
        // h = (int)(id ^ id >>> 32) = 1, so it lands in bucket 1 after 0.
        assert_eq!(order(&[big, 0]), vec![0, big]);
    }

    #[test]
    fn topic_partition_hash_is_javas() {
        // "t".hashCode() = 116; 31 * (31 + 2) + 116 = 1139.
        assert_eq!(("t", 2).java_hash(), 1139);
        // "__consumer_offsets".hashCode() = -970371369 (wrapped), + 31 * 31 for partition 0.
        assert_eq!(("__consumer_offsets", 0).java_hash(), -970_371_369 + 961);
    }

    #[test]
    fn scala_mutable_table_sizes_follow_tablesizefor_and_put0() {
        // ((n + 1) / 0.75).toInt, then highestOneBit(max(c - 1, 4)) * 2.
        assert_eq!(scala_mutable_table_for_known_size(1), 8);
        assert_eq!(scala_mutable_table_for_known_size(11), 16);
        assert_eq!(scala_mutable_table_for_known_size(12), 32);
        assert_eq!(scala_mutable_table_for_known_size(51), 128);
        // From 16: doubles at the 12th insert (threshold 12), the 24th, the 48th.
        assert_eq!(scala_mutable_table_after_inserts(2), 16);
        assert_eq!(scala_mutable_table_after_inserts(11), 16);
        assert_eq!(scala_mutable_table_after_inserts(12), 32);
        assert_eq!(scala_mutable_table_after_inserts(51), 128);
    }

    #[test]
    fn scala_mutable_buckets_are_sorted_by_improved_hash() {
        // Hashes 16 and 0 share bucket 0 of 16; 0 sorts first whatever the insertion order.
        let mut keys = vec![16i64, 1, 0];
        scala_mutable_order(&mut keys, 16, |k| k.java_hash());
        assert_eq!(keys, vec![0, 16, 1]);
        // A negative hash sorts before a positive one of its bucket (signed comparison):
        // 2^31's hashCode is Integer.MIN_VALUE, improved 0x80008000, bucket 0 like 16's.
        let neg = 1i64 << 31;
        let mut keys = vec![16i64, neg];
        scala_mutable_order(&mut keys, 16, |k| k.java_hash());
        assert_eq!(keys, vec![neg, 16]);
    }

    /// `orders-0`..`orders-8` in each Scala map, as computed by hand from the Scala sources
    /// (2.13.15 `mutable.HashMap.put0`, `immutable.ChampBaseIterator`, 2.12
    /// `HashTrieMap.iterator`) with a separate model, not this one: partitions 0 and 8 share
    /// the root slot of the improved hash (so the CHAMP walk puts them after every lone entry,
    /// the 2.12 trie at the slot's place).
    #[test]
    fn the_scala_orders_of_nine_partitions() {
        let keys: Vec<i32> = (0..9).collect();
        let hash = |p: &i32| ("orders", *p).java_hash();
        let mut mutable = keys.clone();
        scala_mutable_order(&mut mutable, scala_mutable_table_for_known_size(9), hash);
        assert_eq!(mutable, vec![7, 8, 0, 1, 2, 3, 4, 5, 6]);
        let mut trie = keys.clone();
        scala_212_trie_order(&mut trie, hash);
        assert_eq!(trie, vec![8, 0, 3, 1, 5, 6, 2, 7, 4]);
        assert_eq!(
            scala_champ_order(keys, hash),
            vec![3, 1, 5, 6, 2, 7, 4, 8, 0]
        );
    }
    /// Values from a separate model of Scala 2.11's `MurmurHash3.productHash` (seed
    /// 0xcafebabe, `mix` per element, `finalizeHash(h, 2)`, no `productPrefix`), which puts
    /// Kafka 0.10's 53-entry checkpoints (`tests/checkpoint_order.rs`) in the broker's order.
    #[test]
    fn topic_and_partition_hash_is_scala_2_11_product_hash() {
        assert_eq!(
            topic_and_partition_hash("__consumer_offsets", 0),
            -495_529_225
        );
        assert_eq!(topic_and_partition_hash("foo", 0), 1_104_605_615);
        assert_eq!(topic_and_partition_hash("TEST-TOPIC", 0), 1_708_904_647);
    }

    /// Hash codes 0..12 used as keys. By hand (Scala 2.11 `HashTable.index`: the top 4 bits of
    /// `rotateRight(byteswap32(h), 4)` at 16 slots, the top 5 at 32): buckets at 16 slots of
    /// 0, 1, 2, 3 are 0, 6, 12, 2, so the walk from the last bucket gives 2, 1, 3, 0; 1 and 10
    /// share bucket 6, the later first. The 13th entry passes 12 (3/4 of 16): the table
    /// doubles, and moving bucket 6's chain (10, 1) entry by entry to the head of bucket 13
    /// turns it round.
    #[test]
    fn scala_211_hash_table_walks_buckets_down_and_chains_newest_first() {
        let order = |keys: Vec<i32>| scala_211_hash_table_order(keys, |k| *k);
        assert_eq!(order(vec![0, 1, 2, 3]), vec![2, 1, 3, 0]);
        assert_eq!(order(vec![1, 10]), vec![10, 1]);
        assert_eq!(order(vec![10, 1]), vec![1, 10]);
        assert_eq!(
            order((0..12).collect()),
            vec![8, 11, 2, 5, 4, 7, 10, 1, 9, 3, 6, 0]
        );
        assert_eq!(
            order((0..13).collect()),
            vec![8, 11, 2, 5, 4, 7, 1, 10, 9, 3, 12, 6, 0]
        );
    }
}
