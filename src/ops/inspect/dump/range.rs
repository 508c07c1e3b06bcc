//! Dumping an offset range (`--from`, `--to`, `--count`, times, isolation): where its fetch
//! starts, found through the indexes, and which batches and records lie inside it.

use super::*;

impl Walker<'_, '_> {
    /// The `.log` files of the partition directory of `seeker` from the batch a fetch of the
    /// range's start begins with (found through the indexes) until the range is done.
    pub(super) fn range(&mut self, mut seeker: Seeker, range: OffsetRange) -> Result<()> {
        let dir = seeker.dir().to_path_buf();
        let found = self.range_start(&dir, &mut seeker, range);
        self.outcome.fallbacks.extend_from_slice(seeker.fallbacks());
        self.outcome.log_bytes_read += seeker.log_bytes_read();
        self.outcome.index_pages_read += seeker.index_pages_read();
        let Some((start, from, to, isolation)) = found? else {
            return Ok(());
        };
        self.bounds = Some((from, to));
        self.left = range.count.unwrap_or(u64::MAX);
        self.range_started = false;
        let logs = seeker.segments_from(start.segment_base);
        let bases: Vec<i64> = logs.iter().map(|(b, _)| *b).collect();
        self.isolation = IsolationView::new(&dir, isolation, &bases)?;
        for (i, (base, p)) in logs.iter().enumerate() {
            let base = *base;
            if self.left == 0 {
                break;
            }
            self.outcome.files += 1;
            self.set_current(p);
            self.emit(Event::FileStart { path: p })?;
            self.emit(Event::LogHeader(LogHeader::Segment { base_offset: base }))?;
            let first = base == start.segment_base;
            // Each segment is read as one fetch: from the range's start, then from its base
            // (the first too when the range starts below the log: the consumer's fetch is reset
            // to the log start offset).
            self.isolation
                .start_fetch(from.max(base), bases.get(i + 1).copied())?;
            let done = if first {
                self.log_from(p, base, start.position, seeker.take_reader(p))?
            } else {
                self.log(p, base, 0)?
            };
            self.emit(Event::FileEnd { path: p })?;
            if done {
                break;
            }
        }
        self.isolation = IsolationView::default();
        Ok(())
    }

    /// Where a range starts in `dir` (the fetch's first batch), its first and last offset
    /// there, from its offsets, times and isolation, and the isolation level (with the last
    /// stable offset); None when it holds nothing.
    #[allow(clippy::type_complexity)]
    pub(super) fn range_start(
        &mut self,
        dir: &Path,
        seeker: &mut Seeker,
        range: OffsetRange,
    ) -> Result<Option<(BatchHit, i64, Option<i64>, Isolation)>> {
        let (mut from, mut to) = (range.from, range.to);
        let log_start = crate::ops::inspect::seek::log_start_offset(dir, seeker)?;
        if let Some(t) = range.from_time {
            match seeker.offset_for_time(t, log_start)? {
                Some(hit) => from = from.max(hit.offset),
                None => return Ok(None),
            }
        }
        if let Some(t) = range.to_time {
            if let Some(hit) = seeker.offset_for_time(t.saturating_add(1), log_start)? {
                to = Some(to.map_or(hit.offset - 1, |to| to.min(hit.offset - 1)));
            }
        }
        let mut isolation = Isolation::ReadUncommitted;
        if range.read_committed {
            let lso = crate::ops::inspect::seek::stable_offsets(dir, seeker)?.last_stable_offset;
            to = Some(to.map_or(lso - 1, |to| to.min(lso - 1)));
            isolation = Isolation::ReadCommitted {
                last_stable_offset: lso,
            };
        }
        if to.is_some_and(|to| to < from) {
            return Ok(None);
        }
        let start = seeker.batch_for_offset(from.max(seeker.first_segment_base()))?;
        if start.is_none() && range.from_time.is_none() {
            let end = seeker.log_end_offset()?;
            if from >= end {
                self.outcome.past_end.push((dir.to_path_buf(), from, end));
            }
        }
        Ok(start.map(|s| (s, from, to, isolation)))
    }
}

impl Walker<'_, '_> {
    /// Whether the record at `offset` is shown; counts it against `--count`.
    pub(super) fn take_record(&mut self, offset: i64) -> bool {
        if !self.in_bounds(offset) {
            return false;
        }
        if self.bounds.is_none() {
            return true;
        }
        if self.left > 0 {
            self.left -= 1;
            return true;
        }
        false
    }

    /// With a range: whether the batch starting at `first` lies past its end (the fetch's
    /// first batch never does), or the count is used up.
    pub(super) fn past_range(&self, first: i64) -> bool {
        match self.bounds {
            None => false,
            Some(_) if self.left == 0 => true,
            Some((_, to)) => self.range_started && to.is_some_and(|to| first > to),
        }
    }

    /// Whether a record at `offset` lies inside the range (always, without one).
    pub(super) fn in_bounds(&self, offset: i64) -> bool {
        self.bounds
            .is_none_or(|(from, to)| offset >= from && to.is_none_or(|to| offset <= to))
    }
}
