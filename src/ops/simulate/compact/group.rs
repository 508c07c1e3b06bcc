//! Which source segments are cleaned into one (`groupSegmentsBySize`).

use crate::ops::partition::SegmentView;

/// `groupSegmentsBySize` over the segments below `end_offset`.
pub(super) fn group_segments<'v>(
    segments: &[&'v SegmentView],
    max_size: u64,
    max_index_size: u64,
    first_uncleanable: i64,
) -> Vec<Vec<&'v SegmentView>> {
    let mut groups = Vec::new();
    let mut i = 0;
    while i < segments.len() {
        let first = segments[i];
        let mut group = vec![first];
        let (mut log, mut index, mut time) =
            (first.size, first.offset_index_bytes, first.time_index_bytes);
        i += 1;
        while let Some(n) = segments.get(i) {
            let last_offset = segments
                .get(i + 1)
                .map_or(first_uncleanable - 1, |s| s.base_offset - 1);
            let fits = log + n.size <= max_size
                && index + n.offset_index_bytes <= max_index_size
                && time + n.time_index_bytes <= max_index_size
                && (n.size == 0 || last_offset - first.base_offset <= i64::from(i32::MAX));
            if !fits {
                break;
            }
            log += n.size;
            index += n.offset_index_bytes;
            time += n.time_index_bytes;
            group.push(n);
            i += 1;
        }
        groups.push(group);
    }
    groups
}
