//! Damage on purpose: changes applied in order to a written partition directory, so that
//! fixtures can hold the broken files recovery and verification must handle. Each damage names
//! its file directly (`file`) or through a segment (`segment` base offset or `segment_index`,
//! negative from the end) and `ext`; the rest of the object says what to do (`kind`). The
//! shapes of the reference corpus' `DAMAGE.json` are accepted as they are.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Deserializer};
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::format::batch::RECORD_BATCH_OVERHEAD_BYTES;
use crate::format::codec::Compression;
use crate::format::entry::Entry;
use crate::format::index::{OFFSET_INDEX_ENTRY_BYTES, TIME_INDEX_ENTRY_BYTES};
use crate::format::names::{
    format_offset, parse_offset_prefix, with_leftover_suffix, LeftoverSuffix, INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX,
};
use crate::storage::log_reader::{LogReader, Step};

/// One change to the written directory.
#[derive(Debug, Clone)]
pub struct Damage {
    target: Target,
    action: Action,
}

/// Which file(s) a damage changes.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Target {
    /// A file name in the partition directory.
    file: Option<String>,
    /// A segment by base offset…
    segment: Option<i64>,
    /// …or by position among the segments (0 = first, -1 = last).
    segment_index: Option<i64>,
    /// The segment's file: `log` (default for `flip_byte`), `index`, `timeindex`, `txnindex`.
    ext: Option<SegmentFile>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum SegmentFile {
    Log,
    Index,
    Timeindex,
    Txnindex,
}

impl SegmentFile {
    const ALL: [SegmentFile; 4] = [
        SegmentFile::Log,
        SegmentFile::Index,
        SegmentFile::Timeindex,
        SegmentFile::Txnindex,
    ];

    fn suffix(self) -> &'static str {
        match self {
            SegmentFile::Log => LOG_FILE_SUFFIX,
            SegmentFile::Index => INDEX_FILE_SUFFIX,
            SegmentFile::Timeindex => TIME_INDEX_FILE_SUFFIX,
            SegmentFile::Txnindex => TXN_INDEX_FILE_SUFFIX,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Leftover {
    Swap,
    Cleaned,
    Deleted,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum Action {
    /// One byte changed: at `position` in the file, or at byte `at` of entry `batch` of a
    /// `.log` (of record `record` of an uncompressed v2 batch), by default its last byte.
    /// The new value is `new`, else the old one with every bit flipped. `old`,
    /// `batchPosition` and `batchBaseOffset` are checked when given.
    FlipByte {
        position: Option<u64>,
        #[serde(alias = "batchIndex")]
        batch: Option<i64>,
        record: Option<usize>,
        at: Option<u64>,
        new: Option<u8>,
        old: Option<u8>,
        #[serde(rename = "batchPosition")]
        batch_position: Option<u64>,
        #[serde(rename = "batchBaseOffset")]
        batch_base_offset: Option<i64>,
    },
    Delete,
    /// Cut to `to` bytes (`from`, the size before, is checked when given).
    Truncate {
        to: u64,
        from: Option<u64>,
    },
    /// Entries `i` and `j` of an `.index` or `.timeindex` exchanged. The corpus'
    /// `before_relativeOffset_position` (two `[relative offset, position]` pairs of an `.index`)
    /// is checked when given.
    SwapEntries {
        entries: [u64; 2],
        #[serde(rename = "before_relativeOffset_position")]
        before: Option<[[i64; 2]; 2]>,
    },
    /// A trimmed `.index`/`.timeindex` grown back with zeros to `bytes` (default
    /// `segment.index.bytes`), rounded down to whole entries, as a crashed broker leaves it.
    Preallocate {
        bytes: Option<u64>,
    },
    /// A copy of the file(s) (every file of the segment unless `ext` or `file` is given) with
    /// `.swap`, `.cleaned` or `.deleted` appended; `rename` moves them instead.
    Leftover {
        suffix: Leftover,
        #[serde(default)]
        rename: bool,
    },
}

impl<'de> Deserialize<'de> for Damage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let mut rest = Map::<String, Value>::deserialize(d)?;
        let mut target = Map::new();
        for key in ["file", "segment", "segment_index", "ext"] {
            if let Some(v) = rest.remove(key) {
                target.insert(key.to_string(), v);
            }
        }
        Ok(Damage {
            target: serde_json::from_value(Value::Object(target)).map_err(D::Error::custom)?,
            action: serde_json::from_value(Value::Object(rest)).map_err(D::Error::custom)?,
        })
    }
}

/// The spec's `damage`: one damage object or a list of them (DAMAGE.json has both shapes).
pub fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<Damage>, D::Error> {
    use serde::de::Error as _;
    match Value::deserialize(d)? {
        Value::Array(list) => list
            .into_iter()
            .map(|v| serde_json::from_value(v).map_err(D::Error::custom))
            .collect(),
        one => Ok(vec![serde_json::from_value(one).map_err(D::Error::custom)?]),
    }
}

/// Applies `damage` in order to the partition directory `dir`; `segment_index_bytes` is the
/// preallocation size. Returns what each did, in the corpus' DAMAGE.json shape.
pub fn apply_all(dir: &Path, damage: &[Damage], segment_index_bytes: u64) -> Result<Vec<Value>> {
    damage
        .iter()
        .enumerate()
        .map(|(i, d)| {
            d.apply(dir, segment_index_bytes).map_err(|e| match e {
                Error::Invalid { path, message } => {
                    Error::invalid(&path, format!("damage[{i}]: {message}"))
                }
                other => other,
            })
        })
        .collect()
}

impl Damage {
    fn apply(&self, dir: &Path, segment_index_bytes: u64) -> Result<Value> {
        let default_ext = match self.action {
            Action::FlipByte { .. } => Some(SegmentFile::Log),
            Action::Leftover { .. } => None,
            _ if self.target.file.is_none() && self.target.ext.is_none() => {
                return Err(Error::invalid(
                    dir,
                    "a segment's file needs `ext` (log, index, timeindex or txnindex)",
                ))
            }
            _ => None,
        };
        let files = self.target.files(dir, default_ext)?;
        match (&self.action, files.as_slice()) {
            (_, [name]) => self.apply_to_file(dir, name, segment_index_bytes),
            (Action::Leftover { suffix, rename }, many) => leftover(dir, many, *suffix, *rename),
            _ => Err(Error::invalid(dir, "expected one file to damage")),
        }
    }

    fn apply_to_file(&self, dir: &Path, name: &str, segment_index_bytes: u64) -> Result<Value> {
        let path = dir.join(name);
        let bad = |m: String| Error::invalid(&path, m);
        let size = std::fs::metadata(&path)
            .map_err(|e| Error::io(&path, e))?
            .len();
        match &self.action {
            Action::FlipByte {
                position,
                batch,
                record,
                at,
                new,
                old,
                batch_position,
                batch_base_offset,
            } => {
                let mut report = json!({"kind": "flip_byte", "file": name});
                let position = match batch {
                    None => {
                        if record.is_some() || at.is_some() {
                            return Err(bad("`record` and `at` need `batch`".into()));
                        }
                        position
                            .ok_or_else(|| bad("flip_byte needs `position` or `batch`".into()))?
                    }
                    Some(i) => {
                        let b = locate_batch(&path, *i)?;
                        if batch_position.is_some_and(|p| p != b.position) {
                            return Err(bad(format!(
                                "batch {i} is at byte {}, not at batchPosition {}",
                                b.position,
                                batch_position.unwrap_or_default()
                            )));
                        }
                        if batch_base_offset.is_some_and(|o| o != b.base_offset) {
                            return Err(bad(format!(
                                "batch {i} has base offset {}, not batchBaseOffset {}",
                                b.base_offset,
                                batch_base_offset.unwrap_or_default()
                            )));
                        }
                        let (start, len) = match record {
                            None => (b.position, b.len),
                            Some(r) => record_span(&path, &b, *r)?,
                        };
                        let p = match (position, at) {
                            (Some(_), Some(_)) => {
                                return Err(bad("give `position` or `at`, not both".into()))
                            }
                            (Some(p), None) => *p,
                            (None, Some(a)) if *a < len => start + a,
                            (None, Some(a)) => {
                                return Err(bad(format!(
                                    "at {a} is outside the {len} bytes of the batch or record"
                                )))
                            }
                            (None, None) => start + len - 1,
                        };
                        if !(b.position..b.position + b.len).contains(&p) {
                            return Err(bad(format!(
                                "byte {p} is not inside batch {i} (bytes {}..{})",
                                b.position,
                                b.position + b.len
                            )));
                        }
                        report["batchIndex"] = json!(b.index);
                        report["batchPosition"] = json!(b.position);
                        report["batchBaseOffset"] = json!(b.base_offset);
                        p
                    }
                };
                if position >= size {
                    return Err(bad(format!(
                        "byte {position} is past the end of the {size}-byte file"
                    )));
                }
                let mut f = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&path)
                    .map_err(|e| Error::io(&path, e))?;
                let mut byte = [0u8];
                f.seek(SeekFrom::Start(position))
                    .and_then(|_| f.read_exact(&mut byte))
                    .map_err(|e| Error::io(&path, e))?;
                let was = byte[0];
                if old.is_some_and(|o| o != was) {
                    return Err(bad(format!(
                        "byte {position} is {was}, not the expected old value {}",
                        old.unwrap_or_default()
                    )));
                }
                let now = new.unwrap_or(!was);
                if now == was {
                    return Err(bad(format!(
                        "byte {position} already is {was}: nothing to flip"
                    )));
                }
                f.seek(SeekFrom::Start(position))
                    .and_then(|_| f.write_all(&[now]))
                    .map_err(|e| Error::io(&path, e))?;
                report["position"] = json!(position);
                report["old"] = json!(was);
                report["new"] = json!(now);
                Ok(report)
            }
            Action::Delete => {
                std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
                Ok(json!({"kind": "delete", "file": name}))
            }
            Action::Truncate { to, from } => {
                if from.is_some_and(|f| f != size) {
                    return Err(bad(format!(
                        "the file has {size} bytes, not `from` {}",
                        from.unwrap_or_default()
                    )));
                }
                if *to > size {
                    return Err(bad(format!(
                        "cannot truncate {size} bytes to {to}: expected at most {size} (grow an index with `preallocate`)"
                    )));
                }
                set_len(&path, *to)?;
                Ok(json!({"kind": "truncate", "file": name, "from": size, "to": to}))
            }
            Action::SwapEntries { entries, before } => {
                let width = index_entry_bytes(name)
                    .ok_or_else(|| bad("swap_entries needs an .index or .timeindex file".into()))?;
                let mut bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
                let slots = bytes.len() as u64 / width as u64;
                let [i, j] = *entries;
                if i == j || i >= slots || j >= slots {
                    return Err(bad(format!(
                        "entries {i} and {j}: expected two different entries below {slots}"
                    )));
                }
                let (i, j) = (i as usize * width, j as usize * width);
                let pair = |at: usize| {
                    let field = |k: usize| {
                        i64::from(i32::from_be_bytes(
                            bytes[at + k..at + k + 4].try_into().expect("4 bytes"),
                        ))
                    };
                    [field(0), field(4)]
                };
                let found = [pair(i), pair(j)];
                if let Some(want) = before {
                    if width != OFFSET_INDEX_ENTRY_BYTES || *want != found {
                        return Err(bad(format!(
                            "before_relativeOffset_position {want:?} does not match the .index entries {found:?}"
                        )));
                    }
                }
                let (lo, hi) = bytes.split_at_mut(j.max(i));
                lo[i.min(j)..i.min(j) + width].swap_with_slice(&mut hi[..width]);
                std::fs::write(&path, &bytes).map_err(|e| Error::io(&path, e))?;
                Ok(json!({"kind": "swap_entries", "file": name, "entries": entries}))
            }
            Action::Preallocate { bytes } => {
                let width = index_entry_bytes(name)
                    .ok_or_else(|| bad("preallocate needs an .index or .timeindex file".into()))?
                    as u64;
                let want = bytes.unwrap_or(segment_index_bytes) / width * width;
                if want < size {
                    return Err(bad(format!(
                        "the file has {size} bytes, more than the {want} to preallocate"
                    )));
                }
                set_len(&path, want)?;
                Ok(json!({"kind": "preallocate", "file": name, "from": size, "to": want}))
            }
            Action::Leftover { suffix, rename } => {
                leftover(dir, &[name.to_string()], *suffix, *rename)
            }
        }
    }
}

impl Target {
    /// The file names the damage applies to (all existing files of a segment for a leftover
    /// without `ext`).
    fn files(&self, dir: &Path, default_ext: Option<SegmentFile>) -> Result<Vec<String>> {
        let bad = |m: String| Error::invalid(dir, m);
        let base = match (&self.file, self.segment, self.segment_index) {
            (Some(name), None, None) => {
                if self.ext.is_some() {
                    return Err(bad("`ext` goes with `segment`, not `file`".into()));
                }
                if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
                    return Err(bad(format!(
                        "file {name:?}: expected a file name in the partition directory"
                    )));
                }
                return Ok(vec![name.clone()]);
            }
            (None, Some(base), None) => base,
            (None, None, Some(i)) => {
                let bases = segment_bases(dir)?;
                let n = bases.len() as i64;
                let at = if i < 0 { n + i } else { i };
                usize::try_from(at)
                    .ok()
                    .and_then(|at| bases.get(at).copied())
                    .ok_or_else(|| {
                        bad(format!(
                            "segment_index {i}: the directory has {n} segment(s)"
                        ))
                    })?
            }
            _ => {
                return Err(bad(
                    "expected exactly one of `file`, `segment` and `segment_index`".into(),
                ))
            }
        };
        let prefix = format_offset(base);
        let exts: Vec<SegmentFile> = match self.ext.or(default_ext) {
            Some(e) => vec![e],
            None => SegmentFile::ALL
                .into_iter()
                .filter(|e| dir.join(format!("{prefix}{}", e.suffix())).exists())
                .collect(),
        };
        if exts.is_empty() {
            return Err(bad(format!("no segment with base offset {base}")));
        }
        Ok(exts
            .into_iter()
            .map(|e| format!("{prefix}{}", e.suffix()))
            .collect())
    }
}

/// Base offsets of the `.log` files of `dir`, ascending.
fn segment_bases(dir: &Path) -> Result<Vec<i64>> {
    let mut bases = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let name = e.map_err(|e| Error::io(dir, e))?.file_name();
        let name = name.to_string_lossy();
        if let Some(base) = name
            .strip_suffix(LOG_FILE_SUFFIX)
            .and_then(|_| parse_offset_prefix(&name))
        {
            bases.push(base);
        }
    }
    bases.sort_unstable();
    Ok(bases)
}

fn index_entry_bytes(name: &str) -> Option<usize> {
    if name.ends_with(INDEX_FILE_SUFFIX) {
        Some(OFFSET_INDEX_ENTRY_BYTES)
    } else if name.ends_with(TIME_INDEX_FILE_SUFFIX) {
        Some(TIME_INDEX_ENTRY_BYTES)
    } else {
        None
    }
}

fn set_len(path: &Path, len: u64) -> Result<()> {
    OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.set_len(len))
        .map_err(|e| Error::io(path, e))
}

/// An entry of a `.log`: its index, position, length and base offset (v2), or offset (v0/v1).
struct BatchAt {
    index: usize,
    position: u64,
    len: u64,
    base_offset: i64,
}

/// Entry `i` (negative from the end) of the `.log` at `path`, reading the file's whole entries.
fn locate_batch(path: &Path, i: i64) -> Result<BatchAt> {
    let mut reader = LogReader::open(path, None)?;
    let mut found = Vec::new();
    while let Step::Entry { position, entry } = reader.next_step()? {
        let base_offset = match entry {
            Entry::V2(b) => b.header.base_offset,
            Entry::Legacy(m) => m.offset,
        };
        found.push(BatchAt {
            index: found.len(),
            position,
            len: entry.size_in_bytes() as u64,
            base_offset,
        });
        if i >= 0 && found.len() as i64 > i {
            break;
        }
    }
    let n = found.len() as i64;
    let at = if i < 0 { n + i } else { i };
    usize::try_from(at)
        .ok()
        .filter(|at| *at < found.len())
        .map(|at| found.swap_remove(at))
        .ok_or_else(|| {
            Error::invalid(
                path,
                format!("batch {i}: the file has {n} whole batch(es) before it ends"),
            )
        })
}

/// Start and length of record `r` of the uncompressed v2 batch `b`.
fn record_span(path: &Path, b: &BatchAt, r: usize) -> Result<(u64, u64)> {
    let bad = |m: String| Error::invalid(path, m);
    let mut bytes = vec![0u8; b.len as usize];
    File::open(path)
        .and_then(|mut f| {
            f.seek(SeekFrom::Start(b.position))?;
            f.read_exact(&mut bytes)
        })
        .map_err(|e| Error::io(path, e))?;
    let entry = Entry::decode(&bytes).map_err(|e| Error::decode(path, b.position, e))?;
    let Entry::V2(batch) = entry else {
        return Err(bad(format!(
            "batch {}: `record` needs a v2 batch (a v0/v1 entry is one record: address it as a batch)",
            b.index
        )));
    };
    if batch.header.compression().ok() != Some(Compression::None) {
        return Err(bad(format!(
            "batch {}: `record` needs an uncompressed batch; use `at` instead",
            b.index
        )));
    }
    let mut scratch = Vec::new();
    let mut start = b.position + RECORD_BATCH_OVERHEAD_BYTES as u64;
    for (k, rec) in entry
        .records(&mut scratch, usize::MAX)
        .map_err(|e| Error::decode(path, b.position, e))?
        .enumerate()
    {
        let rec = rec.map_err(|e| Error::decode(path, b.position, e))?;
        if k == r {
            return Ok((start, rec.size_in_bytes as u64));
        }
        start += rec.size_in_bytes as u64;
    }
    Err(bad(format!(
        "batch {}: no record {r} (it has {} record(s))",
        b.index, batch.header.record_count
    )))
}

/// Copies (or renames) each of `files` to its name with the leftover suffix.
fn leftover(dir: &Path, files: &[String], suffix: Leftover, rename: bool) -> Result<Value> {
    let suffix = match suffix {
        Leftover::Swap => LeftoverSuffix::Swap,
        Leftover::Cleaned => LeftoverSuffix::Cleaned,
        Leftover::Deleted => LeftoverSuffix::Deleted,
    };
    let mut made = Vec::new();
    for name in files {
        let from = dir.join(name);
        let to_name = with_leftover_suffix(name, suffix);
        let to = dir.join(&to_name);
        if rename {
            std::fs::rename(&from, &to).map_err(|e| Error::io(&from, e))?;
        } else {
            std::fs::copy(&from, &to).map_err(|e| Error::io(&from, e))?;
        }
        made.push(to_name);
    }
    Ok(json!({"kind": "leftover", "files": made, "rename": rename}))
}
