//! `LocalLog.splitOverflowedSegment` (behavior.md §2.6): a legacy segment holding an offset
//! too far from its base for a 32-bit relative offset is rewritten as several segments, each
//! named by the first offset of its first batch and taking whole batches while their last
//! offset fits, appended chunk by chunk as `LogSegment.appendFromFile` does; then swapped in
//! with the broker's replace ([`super::replace`]: `.cleaned` -> `.swap` -> final, the original
//! -> `.deleted`).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::files::{open_data, segment_files, set_mtime};
use super::log_reader::{LogReader, Step};
use super::replace::{replace_now, staged_segment};
use super::segment::{Segment, SegmentConfig};
use crate::error::{Error, Result};
use crate::format::entry::Entry;
use crate::format::names::log_file_name;

/// `appendChunkFromFile`'s read buffer: a chunk stays below it unless one batch is larger,
/// and then the buffer grows to that batch for the rest of the new segment.
const CHUNK_BUFFER_BYTES: u64 = 1024 * 1024;

struct Batch {
    position: u64,
    size: u64,
    last_offset: i64,
    max_timestamp: i64,
}

/// The `size` bytes at `position` of the segment, read as `appendChunkFromFile` reads them
/// (chunk by chunk, never the whole segment at once); a file that shrank under us is an
/// error, not a panic.
fn read_chunk(log: &Path, file: &File, position: u64, size: u64) -> Result<Vec<u8>> {
    let changed = || {
        Error::invalid(
            log,
            format!("at byte {position}: the file changed while being split"),
        )
    };
    let mut buf = vec![0u8; usize::try_from(size).map_err(|_| changed())?];
    file.read_exact_at(&mut buf, position)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => changed(),
            _ => Error::io(log, e),
        })?;
    super::progress::read(size);
    Ok(buf)
}

/// The offset of a batch's first record (`batch.baseOffset()`): a legacy compressed wrapper
/// holds only its last offset, so its first inner message is read.
fn first_offset(log: &Path, file: &File, b: &Batch) -> Result<i64> {
    let bytes = read_chunk(log, file, b.position, b.size)?;
    let entry = Entry::decode(&bytes).map_err(|e| Error::decode(log, b.position, e))?;
    if let Entry::V2(v2) = &entry {
        return Ok(v2.header.base_offset);
    }
    let mut scratch = Vec::new();
    let mut records = entry
        .records(
            &mut scratch,
            crate::format::codec::DEFAULT_MAX_DECOMPRESSED_BYTES,
        )
        .map_err(|e| Error::decode(log, b.position, e))?;
    match records.next() {
        Some(r) => Ok(r.map_err(|e| Error::decode(log, b.position, e))?.offset),
        None => Err(Error::invalid(
            log,
            format!(
                "at byte {}: a compressed message without inner messages has no first offset to name a split segment by",
                b.position
            ),
        )),
    }
}

/// Splits the segment `base` of `dir` and returns the new segments' bases. With
/// `delete_original` the original's files are renamed `.deleted` and removed, as
/// `replaceSegments` does for a segment already loaded; a segment met while loading is not
/// yet loaded, so Kafka leaves its files to be overwritten by the renames instead.
pub fn split_overflowed_segment(
    dir: &Path,
    base: i64,
    config: SegmentConfig,
    now_ms: i64,
    delete_original: bool,
) -> Result<Vec<i64>> {
    let log = dir.join(log_file_name(base));
    let (file, log_len) = open_data(&log)?;
    // The file's own mtime (a placeholder's while planning), as a copy would have it.
    let mtime = super::files::metadata(&log)?
        .modified()
        .map_err(|e| Error::io(&log, e))?;
    let mut batches = Vec::new();
    let mut reader = LogReader::open(&log, None)?.with_max_entry_bytes(u64::MAX);
    while let Step::Entry { position, entry } = reader.next_step()? {
        batches.push(Batch {
            position,
            size: entry.size_in_bytes() as u64,
            last_offset: entry.last_offset(),
            max_timestamp: entry.max_timestamp(),
        });
    }
    // `hasOverflow`, which Kafka requires before splitting: the last offset is out of range.
    let fits = |b: i64, o: i64| {
        o.checked_sub(b)
            .is_some_and(|d| (0..=i64::from(i32::MAX)).contains(&d))
    };
    match batches.last() {
        Some(last) if last.last_offset >= base && !fits(base, last.last_offset) => {}
        _ => {
            return Err(Error::invalid(
                &log,
                "an offset overflows the segment's relative range but its last batch does not; the broker refuses to split such a segment",
            ))
        }
    }
    let staging = tempfile::Builder::new()
        .prefix(".kseg-split")
        .tempdir_in(dir)
        .map_err(|e| Error::io(dir, e))?;
    let mut new_bases = Vec::new();
    let mut next = 0;
    let mut total = 0u64;
    while next < batches.len() {
        let new_base = first_offset(&log, &file, &batches[next])?;
        let mut segment = Segment::create(staging.path(), new_base, config, now_ms)?;
        let mut capacity = CHUNK_BUFFER_BYTES;
        loop {
            let start = next;
            let (mut size, mut max_offset) = (0u64, i64::MIN);
            let (mut max_timestamp, mut shallow) = (i64::MIN, i64::MIN);
            while let Some(b) = batches.get(next) {
                if !segment.can_convert_to_relative_offset(b.last_offset)
                    || (size > 0 && size + b.size >= capacity)
                {
                    break;
                }
                if b.max_timestamp > max_timestamp {
                    (max_timestamp, shallow) = (b.max_timestamp, b.last_offset);
                }
                max_offset = b.last_offset;
                size += b.size;
                next += 1;
            }
            if size == 0 {
                break;
            }
            capacity = capacity.max(size);
            let chunk = read_chunk(&log, &file, batches[start].position, size)?;
            segment.append(max_offset, max_timestamp, shallow, &chunk)?;
        }
        if segment.size() == 0 {
            return Err(Error::invalid(
                &log,
                format!(
                    "at byte {}: the message's offsets span more than a segment can hold; it cannot be split",
                    batches[next].position
                ),
            ));
        }
        segment.on_become_inactive()?;
        total += segment.size();
        let new_log = segment.log_path().to_path_buf();
        drop(segment);
        set_mtime(&new_log, mtime)?;
        new_bases.push(new_base);
    }
    if total != log_len {
        return Err(Error::invalid(
            &log,
            format!(
                "at byte {total}: not a whole batch, so the split segments would not hold the segment's {} bytes (the broker's split fails too)",
                log_len
            ),
        ));
    }
    // The replace protocol: a crash at any point leaves files the loader resolves (§2.3).
    let new: Vec<_> = new_bases
        .iter()
        .map(|&b| staged_segment(staging.path(), b, dir))
        .collect::<Result<_>>()?;
    let old = if delete_original {
        segment_files(dir, base)?
    } else {
        Vec::new()
    };
    replace_now(&new, &old)?;
    Ok(new_bases)
}
