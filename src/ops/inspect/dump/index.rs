//! Dumping `.index` and `.timeindex` files, checking every entry against the `.log` in one
//! forward pass (kafka-dump-log rescans the log for each time-index entry; kseg does not).

use std::path::{Path, PathBuf};

use super::batches::{Discard, Tap, WalkedBatches, WrongTime};
use super::{DumpOptions, Event, Walker, DEFAULT_MAX_BYTES};
use crate::error::Result;
use crate::format::index::{
    dump_tool_shown_slots, offset_index_entries, offset_index_entry_count,
    offset_index_sanity_check, offset_index_zero_tail_start, time_index_entries,
    time_index_entry_count, time_index_sanity_check, time_index_zero_tail_start,
    OFFSET_INDEX_ENTRY_BYTES, TIME_INDEX_ENTRY_BYTES,
};
use crate::format::names::{INDEX_FILE_SUFFIX, LOG_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX};
use crate::ops::finding::Finding;
use crate::ops::input::sibling;
use crate::storage::files::{read_index, IndexBytes};
use crate::storage::read::RecordFilter;

/// Byte position of an offset-index slot.
fn slot_position(slot: usize) -> u64 {
    (slot * OFFSET_INDEX_ENTRY_BYTES) as u64
}

impl Walker<'_, '_> {
    /// The batches of the log an index describes, for checking its entries: recorded by the
    /// walk of that log that ran last if there was one, else by a walk made now (which records
    /// what both of the segment's indexes need, so a directory's log is walked once for both).
    /// None, reported, when there is no log to check against. The log's own damage is not
    /// reported here: dumping the log does that.
    fn walked_for(&mut self, p: &Path) -> Result<Option<(PathBuf, WalkedBatches)>> {
        let log = sibling(p, LOG_FILE_SUFFIX);
        if let Some(cached) = self.walked.take().filter(|(l, _)| *l == log) {
            return Ok(Some(cached));
        }
        if let Err(e) = crate::storage::files::open_regular(&log) {
            let m = format!("entries cannot be checked against the log: {e}");
            self.finding(Finding::error("index.log-missing", p, m))?;
            return Ok(None);
        }
        // Every batch, whatever the records shown: the checks need the whole log.
        let opts = DumpOptions {
            deep: false,
            max_bytes: DEFAULT_MAX_BYTES,
            filter: RecordFilter::default(),
            all_batches: false,
            ..self.opts.clone()
        };
        let indexes = [
            sibling(p, INDEX_FILE_SUFFIX),
            sibling(p, TIME_INDEX_FILE_SUFFIX),
        ];
        let mut discard = Discard;
        let mut tap = Tap::new(&mut discard, &indexes, &opts);
        Walker::new(&opts, &mut tap).path(&log)?;
        let walked = tap.finish(&log, &opts)?;
        Ok(Some((log, walked)))
    }

    /// Reports an index whose length is not a whole number of entries (Kafka's readers
    /// ignore the partial entry; its sanity check rejects the file).
    fn partial_entry(&mut self, p: &Path, len: usize, entry_bytes: usize) -> Result<()> {
        let partial = len % entry_bytes;
        if partial == 0 {
            return Ok(());
        }
        let at = (len - partial) as u64;
        // Kafka 4.0 reads whole entries only; older brokers' sanity check made the loader
        // rebuild such an index. Either way it is tolerated or repaired.
        let m = format!(
            "{len} bytes is not a multiple of the {entry_bytes}-byte entry size: the last {partial} byte(s) at position {at} are a partial entry, which the broker ignores (brokers before 3.0 rebuild the index at start-up)"
        );
        self.finding(Finding::warning("index.partial-entry", p, m).at(at))
    }

    /// Reports the `n` entries out of order that the check set aside no room for.
    fn unchecked(&mut self, p: &Path, check: &'static str, n: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let m = format!(
            "{n} entries out of order past the first {} were not checked against the log",
            super::batches::MAX_LATE_ENTRIES
        );
        self.finding(Finding::warning(check, p, m))
    }

    /// Reports a preallocated zero-filled tail of `count - first_slot` slots, if there is one.
    fn zero_tail(
        &mut self,
        p: &Path,
        first_slot: Option<usize>,
        count: usize,
        entry_bytes: usize,
    ) -> Result<()> {
        let Some(first_slot) = first_slot else {
            return Ok(());
        };
        let slots = count - first_slot;
        let bytes = (slots * entry_bytes) as u64;
        self.emit(Event::ZeroTail {
            path: p,
            first_slot,
            slots,
            bytes,
        })
    }

    pub(super) fn offset_index(&mut self, p: &Path, base_offset: i64) -> Result<()> {
        let IndexBytes { data: bytes, len } = read_index(p)?;
        let len = len as usize;
        let count = offset_index_entry_count(len);
        if self.opts.index_sanity_check {
            let file = p.display().to_string();
            let result = offset_index_sanity_check(&bytes, len, base_offset, &file);
            if result.is_err() {
                self.outcome.damage += 1;
                self.outcome.summary.sanity_failures += 1;
            }
            return self.emit(Event::SanityCheck { path: p, result });
        }
        self.partial_entry(p, len, OFFSET_INDEX_ENTRY_BYTES)?;
        if count == 0 {
            return self.emit(Event::IndexEmpty { path: p });
        }
        let zero_tail = bytes.find_slot(OFFSET_INDEX_ENTRY_BYTES, |b| {
            offset_index_zero_tail_start(b, base_offset)
        });
        let entries = zero_tail.unwrap_or(count);
        let log = self.walked_for(p)?;
        let walked = log.as_ref().map(|(_, w)| w);
        let mut mismatches = Vec::new();
        let mut prev = None;
        for (slot, entry) in offset_index_entries(&bytes, base_offset)
            .take(dump_tool_shown_slots(zero_tail, count))
            .enumerate()
        {
            bytes.passed(slot * OFFSET_INDEX_ENTRY_BYTES);
            // A zero slot 0 is printed as kafka-dump-log prints it, but it is no entry.
            if slot >= entries {
                if !self.opts.verify_index_only {
                    self.emit(Event::OffsetIndexEntry { slot, entry })?;
                }
                continue;
            }
            // Only the entries the log contradicts as `verify` judges them (a finding below)
            // go into the end-of-run `Mismatches in` list. (Entries out of order are findings
            // of their own; kafka-dump-log does not list them either.)
            if let Some((o, pos)) = prev {
                if entry.offset <= o || i64::from(entry.position) < pos {
                    let m = format!(
                        "entry {slot} (offset {}, position {}) does not follow entry {} (offset {o}, position {pos}): entries must increase",
                        entry.offset, entry.position, slot - 1
                    );
                    let f = Finding::error("index.order", p, m).at(slot_position(slot));
                    self.finding(f.offset(entry.offset))?;
                }
            }
            prev = Some((entry.offset, i64::from(entry.position)));
            if let Some(found) = walked.and_then(|w| w.wrong_position(slot)) {
                match found {
                    // The broker scans forward from the indexed position: a batch that
                    // starts after the indexed offset would hide it.
                    Some((first, _)) => {
                        let m = format!(
                            "entry {slot} maps offset {} to position {}, where the batch starts at offset {}: a lookup would skip it",
                            entry.offset,
                            entry.position,
                            first.unwrap_or_default()
                        );
                        let f = Finding::error("index.offset-hidden", p, m).at(slot_position(slot));
                        self.finding(f.offset(entry.offset))?;
                    }
                    None => {
                        let m = format!(
                            "entry {slot} (offset {}) points at position {}, where no valid batch starts",
                            entry.offset, entry.position
                        );
                        let f = Finding::error("index.position", p, m).at(slot_position(slot));
                        self.finding(f.offset(entry.offset))?
                    }
                }
                // kafka-dump-log lists every entry whose offset is not the last offset of the
                // batch at its position, which is true of every entry made for a multi-batch
                // append too (`LogSegment.append` indexes the append's largest offset at its
                // first batch's position): only the entries found wrong above are listed.
                mismatches.push((entry.offset, found.map_or(-1, |(_, last)| last)));
            }
            if !self.opts.verify_index_only {
                self.emit(Event::OffsetIndexEntry { slot, entry })?;
            }
        }
        self.unchecked(p, "index.unchecked", walked.map_or(0, |w| w.unchecked.0))?;
        self.walked = log;
        self.zero_tail(p, zero_tail, count, OFFSET_INDEX_ENTRY_BYTES)?;
        if !mismatches.is_empty() {
            self.outcome
                .summary
                .index_mismatches
                .push((p.to_path_buf(), mismatches));
        }
        Ok(())
    }

    pub(super) fn time_index(&mut self, p: &Path, base_offset: i64) -> Result<()> {
        let IndexBytes { data: bytes, len } = read_index(p)?;
        let len = len as usize;
        if self.opts.index_sanity_check {
            let file = p.display().to_string();
            let result = time_index_sanity_check(&bytes, len, base_offset, &file);
            if result.is_err() {
                self.outcome.damage += 1;
                self.outcome.summary.sanity_failures += 1;
            }
            return self.emit(Event::SanityCheck { path: p, result });
        }
        let count = time_index_entry_count(len);
        self.partial_entry(p, len, TIME_INDEX_ENTRY_BYTES)?;
        let zero_tail = bytes.find_slot(TIME_INDEX_ENTRY_BYTES, |b| {
            time_index_zero_tail_start(b, base_offset)
        });
        let entries = zero_tail.unwrap_or(count);
        let log = self.walked_for(p)?;
        let walked = log.as_ref().map(|(_, w)| w);
        let (mut mismatches, mut out_of_order) = (Vec::new(), Vec::new());
        let mut prev_timestamp = -1i64;
        for (slot, entry) in time_index_entries(&bytes, base_offset)
            .take(dump_tool_shown_slots(zero_tail, count))
            .enumerate()
        {
            bytes.passed(slot * TIME_INDEX_ENTRY_BYTES);
            if let Some(walked) = walked.filter(|_| slot < entries) {
                // Kafka 4.0 names the batch's last offset; brokers up to 3.7 named the record
                // with the largest timestamp, anywhere in the batch (changed by KAFKA-16310).
                // A lookup lands on the right batch through either, so only an offset past
                // every batch is wrong.
                match walked.wrong_time(slot) {
                    Some(WrongTime::PastEnd(found)) => {
                        self.outcome
                            .summary
                            .time_offsets_not_found
                            .push((entry.offset, found));
                        let m = format!(
                            "entry {slot} (timestamp {}, offset {}) names an offset past every batch of the log (the last batch ends at offset {found}): a time lookup through it finds nothing",
                            entry.timestamp, entry.offset
                        );
                        let at = (slot * TIME_INDEX_ENTRY_BYTES) as u64;
                        let f = Finding::error("timeindex.offset", p, m).at(at);
                        self.finding(f.offset(entry.offset))?;
                    }
                    wrong => {
                        // kafka-dump-log takes the largest record timestamp (a deep read); a
                        // shallow verify trusts the header, whose max --deep checks. A batch
                        // the cleaner emptied keeps the header's max timestamp the broker
                        // indexed: not wrong.
                        if let Some(WrongTime::Timestamp(max)) = wrong {
                            mismatches.push((entry.timestamp, max));
                            let m = format!(
                                "entry {slot} (timestamp {}, offset {}): the largest record timestamp of its batch is {max}",
                                entry.timestamp, entry.offset
                            );
                            let at = (slot * TIME_INDEX_ENTRY_BYTES) as u64;
                            let f = Finding::error("timeindex.timestamp", p, m).at(at);
                            self.finding(f.offset(entry.offset))?;
                        }
                        if prev_timestamp >= entry.timestamp {
                            out_of_order.push((entry.timestamp, prev_timestamp));
                        }
                    }
                }
            }
            if !self.opts.verify_index_only {
                self.emit(Event::TimeIndexEntry { slot, entry })?;
            }
            prev_timestamp = entry.timestamp;
        }
        self.unchecked(
            p,
            "timeindex.unchecked",
            walked.map_or(0, |w| w.unchecked.1),
        )?;
        self.walked = log;
        self.zero_tail(p, zero_tail, count, TIME_INDEX_ENTRY_BYTES)?;
        for &(timestamp, prev) in &out_of_order {
            let m = format!(
                "entry with timestamp {timestamp} does not follow the previous entry's {prev}"
            );
            self.finding(Finding::error("timeindex.order", p, m))?;
        }
        if !mismatches.is_empty() {
            self.outcome
                .summary
                .time_mismatches
                .push((p.to_path_buf(), mismatches));
        }
        if !out_of_order.is_empty() {
            self.outcome
                .summary
                .time_out_of_order
                .push((p.to_path_buf(), out_of_order));
        }
        Ok(())
    }
}
