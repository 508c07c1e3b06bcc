//! The iteration order of a Java `HashMap<Long, …>`, which Kafka leaks into files: producer
//! snapshots list producers in it (reference README, `producer_snapshot`), and within one append
//! the broker applies per-producer updates in it, which decides insertion order within a bucket.
//!
//! Java iterates buckets in index order and each bucket's chain in insertion order. The bucket
//! is `(h ^ (h >>> 16)) & (capacity - 1)` with `h = (int)(id ^ (id >>> 32))`; the table starts at
//! 16 slots and doubles when it holds more than 3/4 of its capacity, or when a chain reaches 9
//! entries while the table is smaller than 64 (instead of turning the chain into a tree).
//! Doubling splits each chain preserving order, so re-inserting in iteration order reproduces
//! it. Tree bins (9+ colliding ids in a table of 64 or more) are not modelled.

const INITIAL_CAPACITY: usize = 16;
/// A chain this long before an insert makes Java treeify (or, below 64 slots, resize).
const TREEIFY_THRESHOLD: usize = 8;
const MIN_TREEIFY_CAPACITY: usize = 64;

#[derive(Debug, Clone, Default)]
pub struct JavaHashOrder {
    buckets: Vec<Vec<i64>>,
    len: usize,
}

fn spread(id: i64) -> u32 {
    let id = id as u64;
    let h = (id ^ (id >> 32)) as u32;
    h ^ (h >> 16)
}

impl JavaHashOrder {
    pub fn new() -> Self {
        Self::default()
    }

    fn index(&self, id: i64) -> usize {
        spread(id) as usize & (self.buckets.len() - 1)
    }

    /// Inserts `id` at the end of its chain; an id already present keeps its place.
    pub fn insert(&mut self, id: i64) {
        if self.buckets.is_empty() {
            self.buckets = vec![Vec::new(); INITIAL_CAPACITY];
        }
        let i = self.index(id);
        if self.buckets[i].contains(&id) {
            return;
        }
        let chain_before = self.buckets[i].len();
        self.buckets[i].push(id);
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
        self.buckets = vec![Vec::new(); old.len() * 2];
        for id in old.into_iter().flatten() {
            let i = self.index(id);
            self.buckets[i].push(id);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        self.buckets.iter().flatten().copied()
    }
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
        sorted.sort_by_key(|&id| spread(id) as usize & 31);
        assert_eq!(got, sorted);
    }

    #[test]
    fn high_bits_fold_into_the_bucket() {
        let big = 1i64 << 32;
        // h = (int)(id ^ id >>> 32) = 1, so it lands in bucket 1 after 0.
        assert_eq!(order(&[big, 0]), vec![0, big]);
    }
}
