//! `--transaction-log-decoder` (dump-log.md §7.3, formats.md §12.3). Kafka's Scala glue has no
//! error handling here: every failure kills kafka-dump-log, so every failure is fatal.
//!
//! The partitions print in the iteration order of the Scala 2.13 `mutable.HashSet` that
//! `TransactionMetadata` keeps them in ([`ScalaHashSet`]).

use super::json::{write_message, Json};
use super::reader::{read_message, Buf, JavaError, Val, ILLEGAL_ARGUMENT, ILLEGAL_STATE};
use super::tables::{TRANSACTION_LOG_KEY, TRANSACTION_LOG_VALUE};
use super::Decoded;
use crate::format::partition_for::java_string_hash;

pub(super) const STATES: [&str; 8] = [
    "Empty",
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "CompleteCommit",
    "CompleteAbort",
    "Dead",
    "PrepareEpochFence",
];

/// Transaction-version feature levels Kafka knows (`TV_0` … `TV_2`).
const MAX_TRANSACTION_VERSION: i64 = 2;

pub fn decode(key: Option<&[u8]>, value: Option<&[u8]>) -> Decoded {
    match parse(key, value) {
        Ok(d) => d,
        Err(e) => Decoded::fatal(e),
    }
}

/// `TransactionStateManager.loadTransactionsMetadata` reads each record with the functions
/// kafka-dump-log's decoder uses: an unknown key version is logged and skipped; a missing key
/// or any exception ends the load there (caught and logged), keeping what was read before.
pub(super) fn loader_verdict(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Option<super::LoaderVerdict> {
    use super::LoaderVerdict::{Rejects, Skips};
    let stops = |why: String| {
        Rejects(format!(
            "the transaction coordinator stops loading the partition here ({why}): the transactions of this and later records are not loaded"
        ))
    };
    if key.is_none() {
        return Some(stops("a record without a key".into()));
    }
    match parse(key, value) {
        Err(e) => Some(stops(e.to_java_string())),
        Ok(_) => match key.and_then(|k| k.get(..2)) {
            Some(v) if v != [0, 0] => Some(Skips(format!(
                "key version {} is unknown to the transaction coordinator: its loader ignores the record",
                i16::from_be_bytes([v[0], v[1]])
            ))),
            _ => None,
        },
    }
}

fn parse(key: Option<&[u8]>, value: Option<&[u8]>) -> Result<Decoded, JavaError> {
    let mut kb = Buf::new(key.ok_or_else(JavaError::null_pointer)?);
    let key_version = kb.i16()?;
    if key_version != 0 {
        return Ok(Decoded::text(
            Some(format!("unknown::version={key_version}")),
            None,
        ));
    }
    let key_val = read_message(&TRANSACTION_LOG_KEY, &mut kb, key_version)?;
    let id = match key_val.field(TRANSACTION_LOG_KEY.root, "transactionalId") {
        Some(Val::Str(s)) => s.clone(),
        _ => "null".to_string(),
    };
    let key_text = format!("transaction_metadata::transactionalId={id}");
    let key_json = Json::obj(vec![
        ("version", Json::Int(key_version.into())),
        (
            "data",
            write_message(&TRANSACTION_LOG_KEY, &key_val, key_version)?,
        ),
    ]);
    let Some(value) = value else {
        let mut d = Decoded::text(Some(key_text), Some("<DELETE>".into()));
        d.key_json = Some(key_json.to_value());
        return Ok(d);
    };
    let mut vb = Buf::new(value);
    let version = vb.i16()?;
    if !(0..=1).contains(&version) {
        return Err(JavaError::new(
            ILLEGAL_STATE,
            format!("Unknown version {version} from the transaction log message value"),
        ));
    }
    let val = read_message(&TRANSACTION_LOG_VALUE, &mut vb, version)?;
    let get = |name: &str| {
        val.field(TRANSACTION_LOG_VALUE.root, name)
            .and_then(Val::as_int)
            .unwrap_or(0)
    };
    let status = get("transactionStatus");
    let state = usize::try_from(status)
        .ok()
        .and_then(|i| STATES.get(i))
        .ok_or_else(|| {
            JavaError::new(
                ILLEGAL_STATE,
                format!(
                    "Unknown transaction state id {status} from the transaction status message"
                ),
            )
        })?;
    let tv = get("clientTransactionVersion");
    if !(0..=MAX_TRANSACTION_VERSION).contains(&tv) {
        return Err(JavaError::new(
            ILLEGAL_ARGUMENT,
            format!("No feature:transaction.version with feature level {tv}"),
        ));
    }
    let mut set = ScalaHashSet::new();
    if *state != "Empty" {
        let Some(Val::Arr(topics)) = val.field(TRANSACTION_LOG_VALUE.root, "transactionPartitions")
        else {
            return Err(JavaError::null_pointer());
        };
        let schema = TRANSACTION_LOG_VALUE
            .root
            .child("transactionPartitions")
            .ok_or_else(JavaError::null_pointer)?;
        for t in topics {
            let (Some(Val::Str(topic)), Some(Val::Arr(ids))) =
                (t.field(schema, "topic"), t.field(schema, "partitionIds"))
            else {
                continue;
            };
            let ids: Vec<i32> = ids
                .iter()
                .filter_map(Val::as_int)
                .map(|n| n as i32)
                .collect();
            set.add_topic_set(topic, &ids);
        }
    }
    let partitions: Vec<String> = set.iter().map(|(t, p)| format!("{t}-{p}")).collect();
    let payload = format!(
        "producerId:{},producerEpoch:{},state={state},partitions=[{}],txnLastUpdateTimestamp={},txnTimeoutMs={}",
        get("producerId"),
        get("producerEpoch"),
        partitions.join(","),
        get("transactionLastUpdateTimestampMs"),
        get("transactionTimeoutMs"),
    );
    let payload_json = Json::obj(vec![
        ("version", Json::Int(version.into())),
        ("state", Json::Str(state.to_string())),
        (
            "data",
            write_message(&TRANSACTION_LOG_VALUE, &val, version)?,
        ),
    ]);
    let mut d = Decoded::text(Some(key_text), Some(payload));
    d.key_json = Some(key_json.to_value());
    d.payload_json = Some(payload_json.to_value());
    Ok(d)
}

/// `TopicPartition.hashCode`.
fn topic_partition_hash(topic: &str, partition: i32) -> i32 {
    31i32
        .wrapping_mul(31i32.wrapping_add(partition))
        .wrapping_add(java_string_hash(topic))
}

/// Scala 2.13's `mutable.HashSet[TopicPartition]`: buckets of nodes kept in ascending
/// (improved) hash order, a table starting at 16 that doubles when an `add` would reach
/// 3/4 of it, and `addAll` that first sizes the table for the incoming set alone.
struct ScalaHashSet {
    table: Vec<Vec<(i32, String, i32)>>,
    threshold: usize,
    size: usize,
}

impl ScalaHashSet {
    fn new() -> Self {
        ScalaHashSet {
            table: vec![Vec::new(); 16],
            threshold: 12,
            size: 0,
        }
    }

    fn improve(h: i32) -> i32 {
        h ^ ((h as u32) >> 16) as i32
    }

    fn grow(&mut self, len: usize) {
        self.threshold = (len as f64 * 0.75) as usize;
        let mut table = vec![Vec::new(); len];
        for node in self.table.drain(..).flatten() {
            table[(node.0 as u32 as usize) & (len - 1)].push(node);
        }
        self.table = table;
    }

    fn size_hint(&mut self, n: usize) {
        let capacity = ((n + 1) as f64 / 0.75) as usize;
        let target = (highest_one_bit(capacity.saturating_sub(1).max(4)) * 2).min(1 << 30);
        if target > self.table.len() {
            self.grow(target);
        }
    }

    fn add_elem(&mut self, topic: &str, partition: i32, hash: i32) {
        let len = self.table.len();
        let bucket = &mut self.table[(hash as u32 as usize) & (len - 1)];
        let mut at = bucket.len();
        for (i, (h, t, p)) in bucket.iter().enumerate() {
            if *h > hash {
                at = i;
                break;
            }
            if *h == hash && t == topic && *p == partition {
                return;
            }
        }
        bucket.insert(at, (hash, topic.to_string(), partition));
        self.size += 1;
    }

    /// `topicPartitions ++= ids.map(new TopicPartition(topic, _)).toSet`.
    fn add_topic_set(&mut self, topic: &str, ids: &[i32]) {
        let mut distinct: Vec<i32> = Vec::new();
        for id in ids {
            if !distinct.contains(id) {
                distinct.push(*id);
            }
        }
        self.size_hint(distinct.len());
        for p in distinct.iter().copied() {
            let hash = Self::improve(topic_partition_hash(topic, p));
            if distinct.len() <= 4 {
                // Set1..Set4 are added one by one, each `add` checking the load factor.
                if self.size + 1 >= self.threshold {
                    let len = self.table.len() * 2;
                    self.grow(len);
                }
            }
            self.add_elem(topic, p, hash);
        }
    }

    fn iter(&self) -> impl Iterator<Item = (&str, i32)> {
        self.table
            .iter()
            .flatten()
            .map(|(_, t, p)| (t.as_str(), *p))
    }
}

/// Java's `Integer.highestOneBit`.
fn highest_one_bit(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        1 << (usize::BITS - 1 - n.leading_zeros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hashes() {
        assert_eq!(
            java_string_hash("payments"),
            "payments"
                .bytes()
                .fold(0i32, |h, b| h.wrapping_mul(31).wrapping_add(b as i32))
        );
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(topic_partition_hash("", 0), 961);
    }

    #[test]
    fn small_sets_collapse_duplicates() {
        let mut s = ScalaHashSet::new();
        s.add_topic_set("t", &[1, 0, 1]);
        s.add_topic_set("t", &[0]);
        assert_eq!(s.iter().count(), 2);
    }
}
