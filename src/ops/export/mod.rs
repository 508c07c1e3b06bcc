//! `export`: the records of partitions as a table for SQL engines (Parquet, Arrow IPC, CSV,
//! JSON Lines), one row per record. The records come from `dump`'s walk with its selection
//! (ranges, filters, isolation), so an export holds exactly what `dump --deep-iteration`
//! shows; a sink turns them into Arrow record batches for the writers.
//!
//! Memory: rows are handed to the writer every [`CHUNK_BYTES`]; a Parquet row group is held
//! encoded until it ends, at a segment's end or at `row_group_bytes`; its bytes then go to the
//! store's upload (object storage: a few 8 MiB parts, `storage::store::remote`).

mod columns;
mod decoded;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::error::{Error, Expected, Result};
use crate::format::names::{classify, parse_partition_dir, FileKind, PartitionDirState};
use crate::format::payload::PayloadDecoder;
use crate::ops::finding::Finding;
use crate::ops::input::{Input, Shape};
use crate::ops::inspect::dump::{dump_paths, DumpOptions, Event, Outcome, Sink};
use crate::storage::store::Store;
pub use columns::SCHEMA;
use columns::{BatchColumns, Rows};
use decoded::DecodedSide;
use write::Writer;
pub use write::{Compression, Format, Target};

/// Rows are handed to the writer (and their builders emptied) once they hold this much.
pub const CHUNK_BYTES: usize = 8 << 20;
/// The default `--row-group-bytes`: a row group ends at a segment's end or at this size.
pub const DEFAULT_ROW_GROUP_BYTES: u64 = 128 << 20;

/// Where the rows go: files are objects of a store (a local directory, a bucket), each written
/// as it goes and visible under its name only once complete.
#[derive(Clone)]
pub enum Layout {
    /// Every row in one local file, its path any bytes.
    File(PathBuf),
    /// Every row in one object, `key`, of a store (object storage).
    Object { store: Arc<dyn Store>, key: String },
    /// Every row on standard output (CSV, JSON Lines).
    Stdout,
    /// A Hive-style tree at the store's root: `topic=T/partition=P/part-00000.<ext>`, a file
    /// per partition, which engines read as one table with `topic` and `partition` columns.
    Hive(Arc<dyn Store>),
}

#[derive(Clone)]
pub struct ExportOptions {
    pub format: Format,
    pub compression: Compression,
    pub row_group_bytes: u64,
    pub layout: Layout,
    /// The decoders of the `decodedKey` and `decodedValue` columns.
    pub key_decoder: Option<PayloadDecoder>,
    pub value_decoder: Option<PayloadDecoder>,
    /// JSON sides: the type is inferred from the first this many records' documents (0: the
    /// JSON text, a string column).
    pub json_schema_sample: usize,
}

/// One file written.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportedFile {
    /// Its path, or its URL in object storage.
    #[serde(serialize_with = "crate::format::os_path::serialize")]
    pub file: PathBuf,
    pub topic: Option<String>,
    pub partition: Option<i32>,
    pub row_count: u64,
    pub row_group_count: u64,
    pub size: u64,
}

/// What an export did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportReport {
    /// `parquet`, `arrow`, `csv` or `jsonl` (`format` is the JSON vocabulary's version).
    pub file_format: &'static str,
    pub row_count: u64,
    pub row_group_count: u64,
    /// `.log` bytes read.
    pub bytes_read: u64,
    /// Bytes of the files written.
    pub bytes_written: u64,
    /// Control records left out (kept with `--control`, which selects them).
    pub control_record_count: u64,
    /// Keys / values that did not decode (or did not fit the column's type), null in
    /// `decodedKey` / `decodedValue`; null without a decoder.
    pub undecoded_key_count: Option<u64>,
    pub undecoded_value_count: Option<u64>,
    /// `-delete`, `-future` and `-stray` partition directories of the log dirs named, left
    /// out: the broker serves none of them.
    pub skipped_partition_dir_count: u64,
    pub files: Vec<ExportedFile>,
    /// Damage the walk found (its records could not be exported), in order.
    pub findings: Vec<Finding>,
}

/// The partition a file lies in, from its directory's name.
fn partition_of(file: &Path) -> Option<(String, i32)> {
    let dir = std::path::absolute(file)
        .ok()?
        .parent()?
        .file_name()?
        // Shown lossily, as every command shows a topic from a directory name.
        .to_string_lossy()
        .into_owned();
    let p = parse_partition_dir(&dir)?;
    Some((p.topic, p.partition))
}

struct Open {
    key: Option<(String, i32)>,
    writer: Writer,
    file: ExportedFile,
}

struct ExportSink<'o> {
    opts: &'o ExportOptions,
    control: bool,
    rows: Rows,
    batch: BatchColumns,
    file: String,
    partition: Option<(String, i32)>,
    open: Option<Open>,
    /// Files written per partition so far (a partition named twice gets a second part).
    parts: BTreeMap<Option<(String, i32)>, u32>,
    report: ExportReport,
    /// The first error of a writer, which stops the walk (as a closed pipe stops a dump).
    failed: Option<crate::Error>,
}

impl ExportSink<'_> {
    fn target(&mut self) -> Result<(Target, PathBuf)> {
        let ext = self.opts.format.extension();
        let (store, key) = match &self.opts.layout {
            Layout::File(path) => {
                let upload = crate::storage::store::upload_file(path)?;
                let name = path.clone();
                return Ok((Target::Object { upload, name }, path.clone()));
            }
            Layout::Object { store, key } => (store, key.clone()),
            Layout::Stdout => return Ok((Target::Stdout, PathBuf::from("-"))),
            Layout::Hive(store) => {
                let part = self.parts.entry(self.partition.clone()).or_default();
                let name = format!("part-{part:05}.{ext}");
                *part += 1;
                let key = match &self.partition {
                    Some((t, n)) => format!("topic={t}/partition={n}/{name}"),
                    // A loose segment: Hive's name for a missing partition value.
                    None => format!(
                        "topic=__HIVE_DEFAULT_PARTITION__/partition=__HIVE_DEFAULT_PARTITION__/{name}"
                    ),
                };
                (store, key)
            }
        };
        let name = store.path_of(&key);
        let upload = store.upload(&key)?;
        Ok((
            Target::Object {
                upload,
                name: name.clone(),
            },
            name,
        ))
    }

    /// The writer rows of the current partition go to, opened on its first row.
    fn writer(&mut self) -> Result<&mut Open> {
        let switch = match (&self.open, &self.opts.layout) {
            (None, _) => true,
            (Some(o), Layout::Hive(_)) => o.key != self.partition,
            (Some(_), _) => false,
        };
        if switch {
            self.close()?;
            let (target, path) = self.target()?;
            let o = &self.opts;
            let schema = self.rows.schema().clone();
            let writer =
                Writer::create(target, &schema, o.format, o.compression, o.row_group_bytes)?;
            let key = self.partition.clone();
            self.open = Some(Open {
                file: ExportedFile {
                    file: path,
                    topic: key.as_ref().map(|(t, _)| t.clone()),
                    partition: key.as_ref().map(|(_, p)| *p),
                    row_count: 0,
                    row_group_count: 0,
                    size: 0,
                },
                key,
                writer,
            });
        }
        Ok(self.open.as_mut().expect("opened above"))
    }

    /// Hands the rows built so far to the open writer.
    fn drain(&mut self) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let batch = self.rows.finish();
        let open = self.open.as_mut().expect("rows go to an open writer");
        open.file.row_count += batch.num_rows() as u64;
        open.writer.write(&batch)
    }

    fn close(&mut self) -> Result<()> {
        self.drain()?;
        if let Some(mut o) = self.open.take() {
            let (groups, bytes) = o.writer.close()?;
            o.file.row_group_count = groups;
            o.file.size = bytes;
            self.report.row_count += o.file.row_count;
            self.report.row_group_count += groups;
            self.report.bytes_written += bytes;
            self.report.files.push(o.file);
        }
        Ok(())
    }

    fn handle(&mut self, e: &Event<'_>) -> Result<()> {
        match e {
            Event::FileStart { path } => {
                self.file = path.display().to_string();
                self.partition = partition_of(path);
            }
            Event::Batch { info, .. } => {
                self.batch = BatchColumns {
                    producer_id: info.producer_id,
                    producer_epoch: info.producer_epoch,
                    partition_leader_epoch: info.partition_leader_epoch,
                    is_transactional: info.is_transactional,
                    is_control: info.is_control,
                    base_offset: info.base_offset.unwrap_or(info.last_offset),
                    position: info.position,
                };
            }
            Event::Record(r) => {
                if r.is_control_batch && !self.control {
                    self.report.control_record_count += 1;
                    return Ok(());
                }
                // In a Hive tree, the partition's own file.
                self.writer()?;
                let partition = self.partition.as_ref().map(|(t, p)| (t.as_str(), *p));
                self.rows.push(partition, &self.file, &self.batch, &r.view);
                if self.rows.bytes() >= CHUNK_BYTES {
                    self.drain()?;
                }
            }
            // A row group per segment.
            Event::FileEnd { path } if is_log(path) && self.open.is_some() => {
                self.drain()?;
                self.open.as_mut().expect("open").writer.end_group()?;
            }
            Event::Finding(f) => self.report.findings.push((*f).clone()),
            _ => {}
        }
        Ok(())
    }
}

fn is_log(p: &Path) -> bool {
    p.file_name()
        .is_some_and(|n| matches!(classify(&n.to_string_lossy()), FileKind::Log { .. }))
}

impl Sink for ExportSink<'_> {
    fn event(&mut self, e: &Event<'_>) -> std::io::Result<()> {
        match self.handle(e) {
            Ok(()) => Ok(()),
            Err(err) => {
                let io = std::io::Error::other(err.to_string());
                self.failed = Some(err);
                Err(io)
            }
        }
    }
}

/// The first `n` records' decoded JSON documents of the sides with a JSON decoder, whose
/// column types are inferred from them.
struct Sampler<'o> {
    sides: [Option<&'o PayloadDecoder>; 2],
    left: usize,
    documents: [Vec<serde_json::Value>; 2],
}

impl Sink for Sampler<'_> {
    fn event(&mut self, e: &Event<'_>) -> std::io::Result<()> {
        let Event::Record(r) = e else { return Ok(()) };
        if r.is_control_batch {
            return Ok(());
        }
        for (i, bytes) in [r.view.key, r.view.value].into_iter().enumerate() {
            if let (Some(d), Some(b)) = (self.sides[i], bytes) {
                self.documents[i].extend(d.decode(b).ok().map(|p| p.json));
            }
        }
        self.left -= 1;
        if self.left == 0 {
            // Enough: the walk stops here.
            return Err(std::io::Error::other("sampled"));
        }
        Ok(())
    }
}

/// The decoded sides of `opts`, JSON ones typed by a first walk over `paths` when asked.
fn decoded_sides<'o>(
    paths: &[PathBuf],
    dump: &DumpOptions,
    opts: &'o ExportOptions,
) -> [Option<DecodedSide>; 2] {
    let sampled = opts.json_schema_sample > 0;
    let json =
        |d: Option<&'o PayloadDecoder>| d.filter(|d| sampled && matches!(d, PayloadDecoder::Json));
    let mut sampler = Sampler {
        sides: [
            json(opts.key_decoder.as_ref()),
            json(opts.value_decoder.as_ref()),
        ],
        left: opts.json_schema_sample,
        documents: [Vec::new(), Vec::new()],
    };
    if sampler.sides.iter().any(Option::is_some) {
        // Its errors are the export's, reported by the walk that follows.
        let _ = dump_paths(paths, dump, &mut sampler);
    }
    let [k, v] = sampler.documents;
    [
        opts.key_decoder.clone().map(|d| DecodedSide::new(d, &k)),
        opts.value_decoder.clone().map(|d| DecodedSide::new(d, &v)),
    ]
}

/// The partition directories of `paths` to read: each named one, and the partitions a log
/// dir's broker serves; the `-delete`, `-future` and `-stray` ones of a log dir are counted,
/// not read (their records are the served ones' or none the broker serves).
fn served(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, u64)> {
    let (mut out, mut skipped) = (Vec::new(), 0);
    for p in paths {
        match crate::ops::input::examine(p, Expected::PartitionOrLogDir)? {
            Input::Dir {
                dirs,
                shape: Shape::LogDir,
                ..
            } => {
                skipped += dirs
                    .iter()
                    .filter_map(|d| parse_partition_dir(&d.file_name()?.to_string_lossy()))
                    .filter(|d| !matches!(d.state, PartitionDirState::Live))
                    .count() as u64;
                out.extend(crate::ops::input::live_partitions(p, &Shape::LogDir)?.into_values());
            }
            _ => out.push(p.clone()),
        }
    }
    Ok((one_copy_each(out)?, skipped))
}

/// `dirs` with each directory once; refused when one partition comes from two directories
/// (replicas from two brokers' log dirs, or two copies): one table would hold each of its
/// offsets twice, as if the partition had both copies' records.
fn one_copy_each(dirs: Vec<PathBuf>) -> Result<Vec<PathBuf>> {
    let mut seen: BTreeMap<(String, i32), PathBuf> = BTreeMap::new();
    let mut real_seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for d in dirs {
        let real = std::fs::canonicalize(&d).unwrap_or_else(|_| d.clone());
        if !real_seen.insert(real) {
            continue;
        }
        let key = d
            .file_name()
            .and_then(|n| parse_partition_dir(&n.to_string_lossy()))
            .map(|p| (p.topic, p.partition));
        if let Some(key) = key {
            if let Some(first) = seen.get(&key) {
                return Err(Error::invalid(
                    &d,
                    format!(
                        "partition {}-{} is also in {}: one table would hold each of its offsets twice; export each copy on its own (its own --out); nothing was written",
                        key.0,
                        key.1,
                        first.display()
                    ),
                ));
            }
            seen.insert(key, d.clone());
        }
        out.push(d);
    }
    Ok(out)
}

/// Exports the records of `paths` (partition directories or log dirs) that `select` selects:
/// `select.filter.control` keeps control records, which are otherwise left out. Every path
/// is examined before anything is written.
pub fn export(
    paths: &[PathBuf],
    select: &DumpOptions,
    opts: &ExportOptions,
) -> Result<(ExportReport, Outcome)> {
    let (paths, skipped) = served(paths)?;
    let paths = &paths[..];
    let dump = DumpOptions {
        deep: true,
        records_only: true,
        ..select.clone()
    };
    let [key, value] = decoded_sides(paths, &dump, opts);
    let mut sink = ExportSink {
        opts,
        control: select.filter.control,
        rows: Rows::new(key, value),
        batch: BatchColumns::default(),
        file: String::new(),
        partition: None,
        open: None,
        parts: BTreeMap::new(),
        report: ExportReport {
            file_format: opts.format.extension(),
            skipped_partition_dir_count: skipped,
            ..ExportReport::default()
        },
        failed: None,
    };
    let walked = dump_paths(paths, &dump, &mut sink);
    if let Some(e) = sink.failed.take() {
        return Err(e);
    }
    let outcome = walked?;
    sink.close()?;
    // An export that selected nothing still leaves its file: an empty table, not no table.
    if sink.report.files.is_empty() && !matches!(opts.layout, Layout::Hive(..)) {
        sink.writer()?;
        sink.close()?;
    }
    sink.report.bytes_read = outcome.log_bytes_read;
    (
        sink.report.undecoded_key_count,
        sink.report.undecoded_value_count,
    ) = sink.rows.undecoded();
    Ok((sink.report, outcome))
}
