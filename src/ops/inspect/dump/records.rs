//! The records of a batch in a deep iteration: their checks (offsets, timestamps), their
//! decoding (`print_data`, control records) and their events.

use super::*;

impl Walker<'_, '_> {
    /// One batch's records; with a filter, the batch line only when a record of it is shown
    /// (or `all_batches`), and only the records it keeps (none without `deep`: then a batch
    /// shown counts against `--count`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn deep_batch(
        &mut self,
        position: u64,
        entry: &Entry<'_>,
        mut info: BatchInfo,
        batch_matches: bool,
        scratch: &mut Vec<u8>,
        last_offset: &mut Option<i64>,
        regressions: &mut Vec<(i64, i64)>,
    ) -> Result<()> {
        let records = match entry.records(scratch, self.opts.max_batch_bytes) {
            Ok(r) => r,
            Err(e) => {
                self.emit(Event::Batch { info: &info, entry })?;
                return self.records_error(position, info.last_offset, &e, "batch");
            }
        };
        let filter = &self.opts.filter;
        // Streamed when nothing needs the whole batch first: the batch line comes before its
        // records whatever they hold (no filter); a v2 batch's base offset is its header's, a
        // legacy wrapper's its first inner offset (read from a clone of the records).
        if filter.is_empty() && self.opts.deep {
            if let (Entry::Legacy(_), Some(Ok(first))) = (entry, records.clone().next()) {
                info.base_offset = Some(first.offset);
            }
            self.emit(Event::Batch { info: &info, entry })?;
            let mut batch = DeepBatch::new(position, entry, &info, self.decoded_records());
            for r in records {
                match r {
                    Ok(view) => {
                        let shown = batch_matches && self.in_bounds(view.offset);
                        self.deep_record(&mut batch, view, shown, last_offset, regressions)?;
                    }
                    Err(e) => {
                        self.batch_records(&batch)?;
                        return self.records_error(position, info.last_offset, &e, "records");
                    }
                }
            }
            return self.batch_records(&batch);
        }
        // Collect first: a legacy wrapper's base offset is its first inner offset, and with a
        // filter the batch line is shown only when a record of it is.
        let mut views = Vec::new();
        let mut error = None;
        for r in records {
            match r {
                Ok(v) => views.push(v),
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        if let (Entry::Legacy(_), Some(first)) = (entry, views.first()) {
            info.base_offset = Some(first.offset);
        }
        let shown: Vec<bool> = views
            .iter()
            .map(|v| batch_matches && filter.matches_record(v) && self.in_bounds(v.offset))
            .collect();
        let any_shown = shown.contains(&true);
        if filter.is_empty() || self.opts.all_batches || any_shown {
            self.emit(Event::Batch { info: &info, entry })?;
        }
        if !self.opts.deep {
            if any_shown && self.bounds.is_some() {
                self.left = self.left.saturating_sub(1);
            }
            return Ok(());
        }
        let mut batch = DeepBatch::new(position, entry, &info, self.decoded_records());
        for (view, shown) in views.into_iter().zip(shown) {
            self.deep_record(&mut batch, view, shown, last_offset, regressions)?;
        }
        self.batch_records(&batch)?;
        if let Some(e) = error {
            self.records_error(position, info.last_offset, &e, "records")?;
        }
        Ok(())
    }

    /// One record of a deep iteration: its checks, its decoding, and its event when `shown`.
    /// Inlined into the loop over a batch's records, for `verify`'s walk: a record nothing
    /// decodes and no event shows is checked and counted there, the rest is out of line.
    #[inline(always)]
    pub(super) fn deep_record(
        &mut self,
        batch: &mut DeepBatch,
        view: RecordView<'_>,
        shown: bool,
        last_offset: &mut Option<i64>,
        regressions: &mut Vec<(i64, i64)>,
    ) -> Result<()> {
        self.check_record(batch, view.offset, view.timestamp, last_offset, regressions)?;
        if let Some(d) = self.topic_decoder.filter(|_| self.opts.loader_rules) {
            if !batch.is_control {
                self.judge_load(d, &view, batch.position)?;
            }
        }
        if batch.checks_only {
            self.count_shown(batch, &view, shown);
            return Ok(());
        }
        self.decode_record(batch, view, shown)
    }

    /// The finding for a record the internal topic's loader rejects or skips.
    #[inline(never)]
    fn judge_load(&mut self, d: Decoder, view: &RecordView<'_>, position: u64) -> Result<()> {
        let f = match loader_verdict(d, view.key, view.value) {
            None => return Ok(()),
            Some(LoaderVerdict::Rejects(m)) => {
                Finding::error("record.loader-rejects", self.current.clone(), m)
            }
            Some(LoaderVerdict::Skips(m)) => {
                Finding::warning("record.loader-skips", self.current.clone(), m)
            }
        };
        self.finding(f.at(position).offset(view.offset))
    }

    /// [`Walker::deep_record`] past the checks: a control record's reading or the decoders'
    /// (with `print_data`), then the record's event.
    #[inline(never)]
    pub(super) fn decode_record(
        &mut self,
        batch: &mut DeepBatch,
        view: RecordView<'_>,
        shown: bool,
    ) -> Result<()> {
        let position = batch.position;
        let (mut control, mut control_text, mut decoded, mut fatal) = (None, None, None, None);
        let (mut key_payload, mut value_payload) = (None, None);
        if batch.is_control {
            match control_info(&view)
                .and_then(|c| Ok((c, control_record_text(view.key, view.value)?)))
            {
                Ok((c, text)) => (control, control_text) = (Some(c), Some(text)),
                Err(e) => fatal = Some(format!("bad control record: {e}")),
            }
        } else if let (Some(d), true) = (self.decoder, self.opts.print_data) {
            let r = decode_record(d, view.offset, view.key, view.value);
            match r.fatal.clone() {
                Some(f) => fatal = Some(format!("kafka-dump-log would stop here: {f}")),
                None => decoded = Some(r),
            }
        } else if self.opts.print_data {
            let read = |d: Option<&PayloadDecoder>, b: Option<&[u8]>| Some(d?.decode(b?));
            key_payload = read(self.opts.key_decoder.as_ref(), view.key);
            value_payload = read(self.opts.value_decoder.as_ref(), view.value);
        }
        if let Some(message) = fatal {
            if self.opts.loader_rules && self.topic_decoder.is_some() && !batch.is_control {
                // The loader's verdict on this record is already a finding (`judge_load`).
                return Ok(());
            }
            // Where kafka-dump-log dies on a record, kseg says why and goes on.
            let f = Finding::error(
                "record.decode",
                self.current.clone(),
                format!("Error decoding the record at offset {} (batch at position {position}): {message}", view.offset),
            );
            return self.finding(f.at(position).offset(view.offset));
        }
        if !self.count_shown(batch, &view, shown) || !self.record_events {
            return Ok(());
        }
        let rec = RecordInfo {
            view,
            batch_magic: batch.magic,
            is_control_batch: batch.is_control,
            control,
            control_text,
            decoded,
            key_payload,
            value_payload,
        };
        self.emit(Event::Record(&rec))
    }

    /// The checks of every record of a deep iteration: its offset within its batch's and
    /// above the previous record's, its timestamp within the batch's max; offsets that do not
    /// increase across batches are kept for the summary. (Per record: the findings' text is
    /// built out of line.)
    #[inline(always)]
    pub(super) fn check_record(
        &mut self,
        batch: &mut DeepBatch,
        offset: i64,
        timestamp: i64,
        last_offset: &mut Option<i64>,
        regressions: &mut Vec<(i64, i64)>,
    ) -> Result<()> {
        let out_of_range = offset < batch.first || offset > batch.last;
        if out_of_range || batch.prev.is_some_and(|p| offset <= p) {
            self.record_offset_finding(batch, offset)?;
        }
        batch.prev = Some(offset);
        if batch.max_timestamp.is_some_and(|max| timestamp > max) {
            self.record_timestamp_finding(batch, offset, timestamp)?;
        }
        if let Some(prev) = *last_offset {
            if offset <= prev {
                regressions.push((prev, offset));
            }
        }
        *last_offset = Some(offset);
        Ok(())
    }

    #[cold]
    #[inline(never)]
    pub(super) fn record_offset_finding(&mut self, batch: &DeepBatch, offset: i64) -> Result<()> {
        let position = batch.position;
        let m = format!(
            "Record offset {offset} in the batch at position {position} is outside {}..={} or not above the previous record's",
            batch.first, batch.last
        );
        let f = Finding::error("record.offset", self.current.clone(), m);
        self.finding(f.at(position).offset(offset))
    }

    #[cold]
    #[inline(never)]
    pub(super) fn record_timestamp_finding(
        &mut self,
        batch: &DeepBatch,
        offset: i64,
        timestamp: i64,
    ) -> Result<()> {
        let m = format!(
            "Record at offset {offset} has timestamp {timestamp}, above its batch's max timestamp {}",
            batch.max_timestamp.unwrap_or_default()
        );
        let f = Finding::error("record.timestamp", self.current.clone(), m);
        self.finding(f.at(batch.position).offset(offset))
    }

    /// Counts the record `view` as shown when it is (`shown`, within a range's count).
    #[inline(always)]
    pub(super) fn count_shown(
        &mut self,
        batch: &mut DeepBatch,
        view: &RecordView<'_>,
        shown: bool,
    ) -> bool {
        if !shown || !self.take_record(view.offset) {
            return false;
        }
        batch.shown += 1;
        batch.max_shown_timestamp = batch.max_shown_timestamp.max(view.timestamp);
        true
    }

    /// Whether a deep iteration does more with a record than check and count it: decode it
    /// (`print_data`) or show it to a sink that wants record events.
    pub(super) fn decoded_records(&self) -> bool {
        self.record_events || self.opts.print_data
    }

    /// What the deep iteration of `batch` showed.
    pub(super) fn batch_records(&mut self, batch: &DeepBatch) -> Result<()> {
        self.emit(Event::BatchRecords {
            shown: batch.shown,
            max_timestamp: batch.max_shown_timestamp,
        })
    }
}

/// What the records of one batch are checked against in a deep iteration.
pub(super) struct DeepBatch {
    position: u64,
    /// The batch's first and last offsets (`first` is `i64::MIN` when unknown).
    first: i64,
    last: i64,
    /// The previous record's offset in this batch.
    prev: Option<i64>,
    /// Record timestamps can be checked against the header only where the header's max is
    /// the max of the record timestamps as written (CreateTime v2).
    max_timestamp: Option<i64>,
    magic: i8,
    is_control: bool,
    /// Whether its records are only checked and counted: nothing decodes them (no control
    /// batch, no `print_data`) and the sink wants no record events. (Known per batch, not
    /// looked up per record.)
    checks_only: bool,
    /// The records shown so far, and the largest of their timestamps (-1 with none).
    shown: u64,
    max_shown_timestamp: i64,
}

impl DeepBatch {
    pub(super) fn new(position: u64, entry: &Entry<'_>, info: &BatchInfo, decoded: bool) -> Self {
        DeepBatch {
            position,
            first: info.base_offset.unwrap_or(i64::MIN),
            last: info.last_offset,
            prev: None,
            max_timestamp: match entry {
                Entry::V2(b) if info.timestamp_type == "CreateTime" => Some(b.header.max_timestamp),
                _ => None,
            },
            magic: info.magic,
            is_control: info.is_control,
            checks_only: !decoded && !info.is_control,
            shown: 0,
            max_shown_timestamp: -1,
        }
    }
}

pub(super) fn control_info(view: &RecordView<'_>) -> std::result::Result<ControlInfo, String> {
    let t = decode_control_key(view.key).map_err(|e| e.message)?;
    let coordinator_epoch = match t {
        ControlRecordType::Abort | ControlRecordType::Commit => Some(
            EndTxnMarker::decode(view.value)
                .map_err(|e| e.message)?
                .coordinator_epoch,
        ),
        _ => None,
    };
    Ok(ControlInfo {
        kind: t.name(),
        control_type: t,
        coordinator_epoch,
    })
}
