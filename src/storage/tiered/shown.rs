//! One log across tiers: remote segments shown in their partition directory, so that every
//! command that walks a partition reads the remote tier below the local log as the broker serves
//! it (`UnifiedLog` sends fetches below the local log start offset to the remote tier).
//!
//! A shown segment appears in listings ([`crate::storage::files::list_dir`], `segment_logs`,
//! `regular_files`) as the `.log` its start offset names, and [`LogReader::open`] reads it from
//! its object through its [`Layout`], so what reads it names the object's URL. Only the `.log`
//! is shown: the broker keeps no local index for a remote segment (the plugin's indexes are
//! `kseg tiered --deep`'s to judge). But a read of the `.txnindex` beside a shown `.log` reads
//! the plugin's ([`ShownLog::txn_index`], through [`crate::storage::files::open_txn_index`]):
//! the broker's remote fetches collect their aborted transactions from the remote segments'
//! transaction indexes (`RemoteLogManager.read`). What is shown lives as long as the process: a
//! read-only command shows its remote segments once, before it starts.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::{Layout, RemoteSegment, SegmentFile};
use crate::error::{Error, Result};
use crate::format::names::{classify, log_file_name, FileKind};
use crate::storage::log_reader::LogReader;
use crate::storage::store::Store;

/// A remote segment's `.log`, as its partition directory shows it.
pub struct ShownLog {
    store: Arc<dyn Store>,
    layout: Arc<dyn Layout>,
    segment: RemoteSegment,
    /// The segment's size (an Aiven object's decoded size, not its stored one).
    len: u64,
    /// The segment's size as the broker copied it; None when its log does not decode (then
    /// `len` is the stored size).
    size: Option<u64>,
    /// Its transaction index once fetched, and the name of what it was read from; `None`
    /// inside: it has none.
    txn_index: OnceLock<Option<(File, PathBuf)>>,
}

impl ShownLog {
    /// A reader of the segment's bytes, at most `max_bytes` of them.
    pub fn open(&self, max_bytes: Option<u64>) -> Result<LogReader> {
        Ok(self
            .layout
            .open_log(Arc::clone(&self.store), &self.segment)?
            .limited(max_bytes))
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The segment's size as the broker copied it; None when its log does not decode.
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// The object's URL.
    pub fn url(&self) -> String {
        self.store
            .name(self.segment.log().map_or("", |o| o.key.as_str()))
    }

    /// The segment's transaction index, opened for reading, and the name of the object it was
    /// read from; `None` when it has none (the broker takes a missing one as empty). Fetched
    /// through the layout when first asked and kept in an unnamed temporary file, as the
    /// broker's `RemoteIndexCache` keeps the indexes it fetches on disk: each fetch of the
    /// segment reads it again, in windows, without going back to the store. One stored in more
    /// bytes than the entries the segment's log has room for (a hostile object) is an error,
    /// not read ([`super::refuse_oversized`]).
    pub fn txn_index(&self) -> Result<Option<(File, PathBuf)>> {
        if self.txn_index.get().is_none() {
            let fetched = self.fetch_txn_index()?;
            // Another thread's fetch meanwhile read the same bytes.
            let _ = self.txn_index.set(fetched);
        }
        let Some((file, name)) = self.txn_index.get().and_then(Option::as_ref) else {
            return Ok(None);
        };
        let file = file.try_clone().map_err(|e| Error::io(name, e))?;
        Ok(Some((file, name.clone())))
    }

    fn fetch_txn_index(&self) -> Result<Option<(File, PathBuf)>> {
        let file = SegmentFile::TxnIndex;
        let Some((name, bytes)) =
            self.layout
                .read_file(self.store.as_ref(), &self.segment, file)?
        else {
            return Ok(None);
        };
        let tmp = std::env::temp_dir();
        let mut f = tempfile::tempfile().map_err(|e| Error::io(&tmp, e))?;
        f.write_all(&bytes).map_err(|e| Error::io(&tmp, e))?;
        Ok(Some((f, name)))
    }
}

static SHOWN: Mutex<BTreeMap<PathBuf, Arc<ShownLog>>> = Mutex::new(BTreeMap::new());

fn shown() -> MutexGuard<'static, BTreeMap<PathBuf, Arc<ShownLog>>> {
    SHOWN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Shows `segment` in the partition directory `dir` as the `.log` of its start offset (opened
/// once here: a missing or unreadable object is an error before any command starts); returns
/// that path.
pub fn show(
    dir: &Path,
    store: Arc<dyn Store>,
    layout: Arc<dyn Layout>,
    segment: RemoteSegment,
) -> Result<PathBuf> {
    let log = layout.open_log(Arc::clone(&store), &segment)?;
    let (len, size) = (log.end(), log.decoded_size());
    let path = dir.join(log_file_name(segment.start_offset));
    shown().insert(
        path.clone(),
        Arc::new(ShownLog {
            store,
            layout,
            segment,
            len,
            size,
            txn_index: OnceLock::new(),
        }),
    );
    Ok(path)
}

/// The remote segment shown as `p`, if one is.
pub fn shown_as(p: &Path) -> Option<Arc<ShownLog>> {
    let shown = shown();
    if shown.is_empty() {
        return None;
    }
    shown.get(p).cloned()
}

/// The remote segment whose `.txnindex` `p` is: the one shown as the `.log` of its base offset
/// beside it.
pub fn shown_txn_index(p: &Path) -> Option<Arc<ShownLog>> {
    let FileKind::TxnIndex { base_offset } = classify(&p.file_name()?.to_string_lossy()) else {
        return None;
    };
    shown_as(&p.with_file_name(log_file_name(base_offset)))
}

/// The paths of the remote segments shown in `dir`.
pub fn shown_in(dir: &Path) -> Vec<PathBuf> {
    // Paths order by component, so those under `dir` follow it together: a lookup, not a
    // scan of every segment shown, for each file a listing asks about.
    shown()
        .range(dir.to_path_buf()..)
        .map(|(p, _)| p)
        .take_while(|p| p.starts_with(dir))
        .filter(|p| p.parent() == Some(dir))
        .cloned()
        .collect()
}
