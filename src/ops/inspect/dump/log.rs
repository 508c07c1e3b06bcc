//! Walking a `.log`: batch by batch through the engine's reader, the header checks of each
//! batch, damage reported and resynchronised past, and every header field of a batch
//! ([`batch_info`]).

use super::*;

impl Walker<'_, '_> {
    /// Walks a `.log` from its start. Returns whether it stopped at the end of a range.
    pub(super) fn log(&mut self, p: &Path, base_offset: i64, start: u64) -> Result<bool> {
        self.log_from(p, base_offset, start, None)
    }

    /// Walks a `.log` from `start` (0, or where a range's seek found its first batch), with the
    /// seek's reader when it has one there (its buffer holds the batch, read once). Returns
    /// whether it stopped at the end of a range.
    pub(super) fn log_from(
        &mut self,
        p: &Path,
        base_offset: i64,
        start: u64,
        seek: Option<LogReader>,
    ) -> Result<bool> {
        let mut reader = match seek {
            // The seek read the whole file's length; `--max-bytes` may ask for less.
            Some(r) if r.end() <= self.opts.max_bytes => r
                .with_max_entry_bytes(DEFAULT_MAX_ENTRY_BYTES)
                .with_growing_read_chunk(SEEK_READ_CHUNK_BYTES),
            _ if self.bounds.is_some() => LogReader::open(p, Some(self.opts.max_bytes))?
                .with_growing_read_chunk(SEEK_READ_CHUNK_BYTES),
            _ => LogReader::open(p, Some(self.opts.max_bytes))?,
        };
        // Bytes the seek read are counted already.
        let counted = reader.bytes_read();
        reader.seek(start);
        let mut done = false;
        let mut scratch = Vec::new();
        let mut last_offset: Option<i64> = None;
        let mut prev_batch_last: Option<i64> = None;
        let mut regressions = Vec::new();
        loop {
            // A range done by the last batch (offsets ascend) ends here, without reading the
            // next batch only to find it past the end.
            let to = self.bounds.and_then(|(_, to)| to);
            if self.bounds.is_some()
                && (self.left == 0 || prev_batch_last.zip(to).is_some_and(|(l, to)| l >= to))
            {
                done = true;
                break;
            }
            let step = reader.next_step()?;
            let (position, entry) = match step {
                Step::Entry { position, entry } => (position, entry),
                Step::End {
                    position,
                    trailing,
                    truncated_len,
                } => {
                    if trailing > 0 && self.opts.max_bytes == DEFAULT_MAX_BYTES {
                        self.emit(Event::TrailingBytes {
                            path: p,
                            bytes: trailing,
                            position,
                        })?;
                    }
                    // A torn write: an entry announced more bytes than the file holds, or too
                    // few bytes are left to hold an entry's header at all. Recovery cuts them.
                    if trailing > 0 && !reader.is_limited() {
                        let m = format!(
                            "Torn write at position {position}: {}; valid data ends at position {position}",
                            torn_tail(trailing, truncated_len)
                        );
                        self.finding(Finding::error("log.torn-tail", p, m).at(position))?;
                    }
                    break;
                }
                Step::SizeTooSmall { position, size } => {
                    let msg = format!(
                        "Found record size {size} smaller than minimum record overhead (14)"
                    );
                    self.damage(&mut reader, position, "log.size-too-small", msg)?;
                    continue;
                }
                Step::TooLarge { position, len } => {
                    let msg = format!("entry of {len} bytes is larger than the reader accepts");
                    self.damage(&mut reader, position, "log.entry-too-large", msg)?;
                    continue;
                }
                Step::BadEntry {
                    position, error, ..
                } => {
                    let msg = format!("{} (at byte {})", error.message, error.pos);
                    self.damage(&mut reader, position, "log.bad-entry", msg)?;
                    continue;
                }
            };
            let info = batch_info(position, &entry, None);
            if self.bounds.is_some() {
                let first = first_offset(&entry, &mut scratch).unwrap_or(info.last_offset);
                if self.past_range(first) {
                    done = true;
                    break;
                }
                self.range_started = true;
            }
            self.check_batch(p, &entry, &info, base_offset, prev_batch_last)?;
            prev_batch_last = Some(info.last_offset);
            let traits = BatchTraits::of(&entry);
            if !self.isolation.keeps(&entry, &mut scratch) {
                continue;
            }
            let filter = &self.opts.filter;
            let batch_matches = filter.matches_batch(&traits);
            if !self.opts.deep && !filter.needs_records() {
                if !batch_matches && !self.opts.all_batches {
                    continue;
                }
                if self.bounds.is_some() && batch_matches {
                    self.left -= 1;
                }
                self.emit(Event::Batch {
                    info: &info,
                    entry: &entry,
                })?;
                continue;
            }
            self.deep_batch(
                position,
                &entry,
                info,
                batch_matches,
                &mut scratch,
                &mut last_offset,
                &mut regressions,
            )?;
        }
        if !regressions.is_empty() {
            self.outcome.damage += 1;
            self.outcome
                .summary
                .offset_regressions
                .push((p.to_path_buf(), regressions));
        }
        self.outcome.log_bytes_read += reader.bytes_read() - counted;
        Ok(done)
    }
}

impl Walker<'_, '_> {
    /// Header-level checks of one batch: CRC, magic, count, offsets against the previous
    /// batch and the segment's base offset.
    pub(super) fn check_batch(
        &mut self,
        p: &Path,
        entry: &Entry<'_>,
        info: &BatchInfo,
        segment_base: i64,
        prev_last: Option<i64>,
    ) -> Result<()> {
        let at = info.position;
        let first = info.base_offset.unwrap_or(info.last_offset);
        let problem = |check, m: String| Finding::error(check, p, m).at(at).offset(first);
        if !info.is_valid {
            let m = format!(
                "Batch at position {at}: stored CRC {} does not match the computed {}",
                info.crc,
                entry.compute_crc()
            );
            self.finding(problem("batch.crc", m))?;
        }
        if info.magic > 2 {
            let m = format!("Batch at position {at}: unknown magic {}", info.magic);
            self.finding(problem("batch.magic", m))?;
        }
        if let (Entry::V2(b), Some(count)) = (entry, info.count) {
            if count < 0 || i64::from(count) > i64::from(b.header.last_offset_delta) + 1 {
                let m = format!(
                    "Batch at position {at}: {count} records cannot fit offsets {}..{}",
                    b.header.base_offset, info.last_offset
                );
                self.finding(problem("batch.count", m))?;
            }
        }
        if entry.compression().is_err() {
            let m = format!("Batch at position {at}: unknown compression codec id");
            self.finding(problem("batch.codec", m))?;
        }
        match prev_last {
            Some(prev) if first <= prev => {
                let m =
                    format!("Batch at position {at}: offsets go backwards, {first} follows {prev}");
                self.finding(problem("log.offset-order", m))?;
            }
            None if first < segment_base => {
                let m = format!(
                    "Batch at position {at}: offset {first} is below the segment's base offset {segment_base}"
                );
                self.finding(problem("segment.base-offset", m))?;
            }
            _ => {}
        }
        Ok(())
    }

    /// A batch whose records do not decode; `within` says what `e.pos` counts in. One that
    /// decompresses past the limit is not damaged, only unchecked beyond it: the broker itself
    /// never decompresses on load, and a consumer with the memory reads it.
    pub(super) fn records_error(
        &mut self,
        position: u64,
        offset: i64,
        e: &crate::format::DecodeError,
        within: &str,
    ) -> Result<()> {
        let file = self.current.clone();
        let f = if e.kind == crate::format::ErrorKind::TooLarge {
            Finding::warning(
                "batch.unchecked",
                file,
                format!(
                    "The records of the batch at position {position} were not checked: it decompresses to more than {} bytes (--max-batch-bytes raises the limit)",
                    self.opts.max_batch_bytes
                ),
            )
        } else {
            Finding::error(
                "batch.records",
                file,
                format!(
                    "Error reading the records of the batch at position {position}: {} (at byte {} of the {within})",
                    e.message, e.pos
                ),
            )
        };
        self.finding(f.at(position).offset(offset))
    }

    /// Reports damage at `position` and moves the reader to the next valid batch.
    pub(super) fn damage(
        &mut self,
        reader: &mut LogReader,
        position: u64,
        check: &'static str,
        what: String,
    ) -> Result<()> {
        let resumed_at = reader.resync(position + 1)?;
        let skipped = resumed_at.unwrap_or(reader.end()) - position;
        let message = match resumed_at {
            Some(at) => format!(
                "Corrupt data at position {position}: {what}; skipped {skipped} bytes to the next valid batch at position {at}"
            ),
            None => format!(
                "Corrupt data at position {position}: {what}; no valid batch in the remaining {skipped} bytes"
            ),
        };
        self.finding(Finding::error(check, reader.path(), message).at(position))
    }
}

/// Every header field of an entry, as kafka-dump-log and Kafka's readers see them.
pub fn batch_info(position: u64, entry: &Entry<'_>, base_offset: Option<i64>) -> BatchInfo {
    let compression = entry.compression().map(|c| c.name()).unwrap_or("unknown");
    match entry {
        Entry::V2(b) => {
            let h = &b.header;
            BatchInfo {
                position,
                size_in_bytes: entry.size_in_bytes() as u64,
                magic: h.magic,
                crc: h.crc,
                is_valid: b.crc_is_valid(),
                base_offset: Some(h.base_offset),
                last_offset: h.last_offset(),
                count: Some(h.record_count),
                compression,
                timestamp_type: h.timestamp_type().name(),
                max_timestamp: h.max_timestamp,
                base_timestamp: Some(h.base_timestamp),
                producer_id: h.producer_id,
                producer_epoch: h.producer_epoch,
                base_sequence: h.base_sequence,
                last_sequence: h.last_sequence(),
                partition_leader_epoch: h.partition_leader_epoch,
                is_transactional: h.is_transactional(),
                is_control: h.is_control(),
                delete_horizon_ms: h.delete_horizon_ms(),
            }
        }
        Entry::Legacy(m) => BatchInfo {
            position,
            size_in_bytes: entry.size_in_bytes() as u64,
            magic: m.magic,
            crc: m.crc,
            is_valid: m.crc_is_valid(),
            base_offset: base_offset.or((!m.is_compressed()).then_some(m.offset)),
            last_offset: m.offset,
            count: None,
            compression,
            timestamp_type: m.timestamp_type().name(),
            max_timestamp: m.timestamp,
            base_timestamp: None,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            last_sequence: -1,
            partition_leader_epoch: -1,
            is_transactional: false,
            is_control: false,
            delete_horizon_ms: None,
        },
    }
}
