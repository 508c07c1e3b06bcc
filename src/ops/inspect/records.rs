//! The records of an internal topic's partition replayed in offset order with their decoded
//! keys and values, for the commands that rebuild a coordinator's state from its log (`groups`
//! from `__consumer_offsets`, `metadata` and `ls` from `__cluster_metadata`). Built on `dump`'s walk, so the
//! decoding is kafka-dump-log's own; nothing here parses bytes.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::format::control::ControlRecordType;
use crate::format::internal::Decoder;
use crate::ops::finding::Finding;
use crate::ops::inspect::dump::{dump_paths, DumpOptions, Event, Sink};

/// One record as a replay sees it.
#[derive(Debug)]
pub struct ReplayedRecord<'a> {
    pub offset: i64,
    pub timestamp: i64,
    pub producer_id: i64,
    pub is_transactional: bool,
    /// A control batch's record type (transaction markers: `Abort`, `Commit`).
    pub control: Option<ControlRecordType>,
    /// The decoded key and value, when they decode to objects.
    pub key: Option<&'a serde_json::Value>,
    pub value: Option<&'a serde_json::Value>,
    /// The record has no value: a tombstone.
    pub tombstone: bool,
    /// The value's bytes, as stored.
    pub value_bytes: Option<&'a [u8]>,
}

/// The `.log` segments of a partition directory, oldest first.
pub fn log_files(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(crate::storage::files::segment_logs(dir)?
        .into_iter()
        .map(|(_, p)| p)
        .collect())
}

struct ReplaySink<'f> {
    producer_id: i64,
    is_transactional: bool,
    /// Records below this offset are skipped (those a snapshot already covers).
    from_offset: i64,
    visit: &'f mut dyn FnMut(&ReplayedRecord<'_>),
    findings: Vec<Finding>,
}

impl Sink for ReplaySink<'_> {
    fn event(&mut self, event: &Event<'_>) -> std::io::Result<()> {
        match event {
            Event::Batch { info, .. } => {
                self.producer_id = info.producer_id;
                self.is_transactional = info.is_transactional;
            }
            Event::Record(r) if r.view.offset >= self.from_offset => {
                let decoded = r.decoded.as_ref();
                (self.visit)(&ReplayedRecord {
                    offset: r.view.offset,
                    timestamp: r.view.timestamp,
                    producer_id: self.producer_id,
                    is_transactional: self.is_transactional,
                    control: r.control.map(|c| c.control_type),
                    key: decoded.and_then(|d| d.key_json.as_ref()),
                    value: decoded.and_then(|d| d.payload_json.as_ref()),
                    tombstone: r.view.value.is_none(),
                    value_bytes: r.view.value,
                });
            }
            Event::Finding(f) => self.findings.push((*f).clone()),
            _ => {}
        }
        Ok(())
    }
}

/// Replays the records of `files` (segments or KRaft snapshots, in the order given) from offset
/// `from_offset` on through `visit`; returns what the walk found wrong on the way (damage stops
/// a segment where the broker's reader would stop). With `loader_rules`, a record the topic's
/// loader refuses or skips is a finding by `verify --deep`'s rule (and not by dump's).
pub fn replay(
    files: &[PathBuf],
    decoder: Decoder,
    from_offset: i64,
    loader_rules: bool,
    visit: &mut dyn FnMut(&ReplayedRecord<'_>),
) -> Result<Vec<Finding>> {
    let opts = DumpOptions {
        deep: true,
        print_data: true,
        decoder: Some(decoder),
        loader_rules,
        ..DumpOptions::default()
    };
    let mut sink = ReplaySink {
        producer_id: -1,
        is_transactional: false,
        from_offset,
        visit,
        findings: Vec::new(),
    };
    dump_paths(files, &opts, &mut sink)?;
    Ok(sink.findings)
}
