//! Histograms with power-of-two buckets: bucket 0 holds the value 0, bucket `i ≥ 1` the values
//! in `[2^(i-1), 2^i)`. Sixty-five counters, whatever the data.

use serde::Serialize;

const BUCKETS: usize = 65;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Log2Histogram {
    counts: [u64; BUCKETS],
    total: u64,
    sum: u128,
    max: u64,
}

impl Default for Log2Histogram {
    fn default() -> Self {
        Log2Histogram {
            counts: [0; BUCKETS],
            total: 0,
            sum: 0,
            max: 0,
        }
    }
}

/// One bucket of a histogram as reported: values in `[low, high]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bucket {
    pub low: u64,
    pub high: u64,
    pub count: u64,
}

/// A histogram as reported: its non-empty range of buckets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Histogram {
    pub count: u64,
    pub sum: u128,
    pub max: u64,
    pub buckets: Vec<Bucket>,
}

fn bucket_of(v: u64) -> usize {
    (64 - v.leading_zeros()) as usize
}

fn bucket_range(i: usize) -> (u64, u64) {
    match i {
        0 => (0, 0),
        64 => (1 << 63, u64::MAX),
        i => (1 << (i - 1), (1 << i) - 1),
    }
}

impl Log2Histogram {
    pub fn add(&mut self, v: u64) {
        self.counts[bucket_of(v)] += 1;
        self.total += 1;
        self.sum += u128::from(v);
        self.max = self.max.max(v);
    }

    pub fn merge(&mut self, other: &Log2Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.total += other.total;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }

    /// The buckets from the first to the last non-empty one (empty ones between included, so
    /// the shape shows); None when nothing was added.
    pub fn report(&self) -> Option<Histogram> {
        let first = self.counts.iter().position(|&c| c > 0)?;
        let last = self.counts.iter().rposition(|&c| c > 0)?;
        Some(Histogram {
            count: self.total,
            sum: self.sum,
            max: self.max,
            buckets: (first..=last)
                .map(|i| {
                    let (low, high) = bucket_range(i);
                    Bucket {
                        low,
                        high,
                        count: self.counts[i],
                    }
                })
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_powers_of_two() {
        let mut h = Log2Histogram::default();
        for v in [0, 1, 2, 3, 4, 7, 8, 1023, 1024, u64::MAX] {
            h.add(v);
        }
        let r = h.report().unwrap();
        let at = |low: u64| r.buckets.iter().find(|b| b.low == low).unwrap().count;
        assert_eq!((at(0), at(1), at(2), at(4), at(8)), (1, 1, 2, 2, 1));
        assert_eq!((at(512), at(1024), at(1 << 63)), (1, 1, 1));
        assert_eq!(r.buckets.iter().map(|b| b.count).sum::<u64>(), 10);
        assert_eq!(r.buckets.len(), 65, "every bucket from 0 to the top one");
        assert!(Log2Histogram::default().report().is_none());
    }
}
