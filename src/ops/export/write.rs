//! Writers of the export's record batches: Parquet and Arrow IPC files through their crates,
//! CSV and JSON Lines written here from the batches' columns (arrow-csv and arrow-json would
//! bring arrow-cast and its formatting machinery for two plain formats).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType, UInt32Type,
    UInt64Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, SchemaRef, TimeUnit};
use base64::Engine;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory,
};
use parquet::arrow::ArrowWriter;
use parquet::errors::{ParquetError, Result as ParquetResult};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::storage::store::Upload;

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Parquet,
    Arrow,
    Csv,
    Jsonl,
}

impl Format {
    /// The extension of its files (and of an `--out` that names one file).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Parquet => "parquet",
            Format::Arrow => "arrow",
            Format::Csv => "csv",
            Format::Jsonl => "jsonl",
        }
    }
}

/// Parquet's page compression (`--compression`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Snappy,
    Gzip,
    Lz4,
    Zstd,
}

impl Compression {
    fn parquet(self) -> parquet::basic::Compression {
        use parquet::basic::Compression as C;
        match self {
            Compression::None => C::UNCOMPRESSED,
            Compression::Snappy => C::SNAPPY,
            Compression::Gzip => C::GZIP(Default::default()),
            // LZ4_RAW: the codec the Parquet format specifies (its older LZ4 is deprecated).
            Compression::Lz4 => C::LZ4_RAW,
            Compression::Zstd => C::ZSTD(Default::default()),
        }
    }
}

/// Where a writer's bytes go: an object of a store (a file when the store is a directory),
/// named `name` in messages, or standard output.
pub enum Target {
    Object {
        upload: Box<dyn Upload>,
        name: PathBuf,
    },
    Stdout,
}

/// The bytes under the writers' buffer.
enum Sink {
    Object(Box<dyn Upload>),
    Stdout(std::io::Stdout),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Object(u) => u.write(buf),
            Sink::Stdout(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Object(u) => u.flush(),
            Sink::Stdout(s) => s.flush(),
        }
    }
}

type Out = BufWriter<Sink>;

/// A Parquet file written a row group at a time, its columns encoded in parallel: the value
/// column alone is about half of the work (its compression most of it), so one thread for all
/// of them was what an export waited on.
struct ParquetWriter {
    /// The threads that encode the columns: the writer's own, so that it never waits on a
    /// shared pool whose threads may be waiting on it (a library caller exporting from inside
    /// rayon's global pool, its walk blocked on handing rows to this writer).
    pool: rayon::ThreadPool,
    file: SerializedFileWriter<Out>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// The row group being encoded: a writer per leaf column, and its rows.
    columns: Option<Vec<ArrowColumnWriter>>,
    rows: usize,
    max_bytes: usize,
    groups: u64,
}

impl ParquetWriter {
    fn new(out: Out, schema: &SchemaRef, props: WriterProperties) -> ParquetResult<Self> {
        let max_bytes = props.max_row_group_bytes().unwrap_or(usize::MAX);
        // The Arrow writer puts the Arrow schema in the file's metadata (a timestamp's time
        // zone lives there); its lower half then writes the row groups.
        let (file, factory) =
            ArrowWriter::try_new(out, schema.clone(), Some(props))?.into_serialized_writer()?;
        let pool = rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("kseg-parquet-{i}"))
            .build()
            .map_err(|e| ParquetError::General(format!("no threads to encode with: {e}")))?;
        Ok(ParquetWriter {
            pool,
            file,
            factory,
            schema: schema.clone(),
            columns: None,
            rows: 0,
            max_bytes,
            groups: 0,
        })
    }

    /// What the row group's encoded columns would take.
    fn encoded_bytes(&self) -> usize {
        self.columns
            .iter()
            .flatten()
            .map(ArrowColumnWriter::get_estimated_total_bytes)
            .sum()
    }

    /// Writes `batch`, ending the row group first if it is full, and splitting the batch
    /// where, at the row group's bytes per row so far, it would overflow.
    fn write(&mut self, batch: &RecordBatch) -> ParquetResult<()> {
        let mut batch = batch.clone();
        while batch.num_rows() > 0 {
            let bytes = self.encoded_bytes();
            let take = match bytes.checked_div(self.rows) {
                None => batch.num_rows(),
                Some(per_row) => self.max_bytes.saturating_sub(bytes) / per_row.max(1),
            };
            if take == 0 {
                self.end_group()?;
                continue;
            }
            let take = take.min(batch.num_rows());
            self.encode(&batch.slice(0, take))?;
            batch = batch.slice(take, batch.num_rows() - take);
        }
        Ok(())
    }

    fn encode(&mut self, batch: &RecordBatch) -> ParquetResult<()> {
        let mut leaves = Vec::new();
        for (field, column) in self.schema.fields().iter().zip(batch.columns()) {
            leaves.extend(compute_leaves(field, column)?);
        }
        let columns = match &mut self.columns {
            Some(c) => c,
            empty => empty.insert(
                self.factory
                    .create_column_writers(self.file.flushed_row_groups().len())?,
            ),
        };
        self.pool.install(|| {
            columns
                .par_iter_mut()
                .zip(leaves.par_iter())
                .try_for_each(|(w, leaf)| w.write(leaf))
        })?;
        self.rows += batch.num_rows();
        Ok(())
    }

    /// Writes the row group out, if it has rows.
    fn end_group(&mut self) -> ParquetResult<()> {
        let Some(columns) = self.columns.take() else {
            return Ok(());
        };
        let chunks: Vec<ArrowColumnChunk> = self.pool.install(|| {
            columns
                .into_par_iter()
                .map(ArrowColumnWriter::close)
                .collect::<ParquetResult<_>>()
        })?;
        let mut group = self.file.next_row_group()?;
        for chunk in chunks {
            chunk.append_to_row_group(&mut group)?;
        }
        group.close()?;
        self.rows = 0;
        self.groups += 1;
        // The row group's buffers were allocated and freed on the pool's threads, in their malloc
        // arenas, which keep freed memory: without handing it back, a 4 GiB export peaked at
        // 1.5 times a 256 MiB one's memory, not flat.
        #[cfg(target_env = "gnu")]
        // SAFETY: malloc_trim only releases memory malloc holds free.
        unsafe {
            libc::malloc_trim(0);
        }
        Ok(())
    }

    /// The file's footer written: its bytes' destination.
    fn into_inner(mut self) -> ParquetResult<Out> {
        self.end_group()?;
        self.file.into_inner()
    }
}

enum Inner {
    Parquet(Encoder),
    Arrow(Box<arrow_ipc::writer::FileWriter<Out>>),
    Text { out: Out, csv: bool, header: bool },
}

/// One output file (or standard output) of record batches.
pub struct Writer {
    inner: Inner,
    /// What messages call the output.
    name: PathBuf,
    /// Row groups (Parquet) or record batches (Arrow) written so far; none in CSV and JSON
    /// Lines.
    groups: u64,
}

fn export_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::io(path, std::io::Error::other(e.to_string()))
}

/// What the Parquet encoder is asked to do.
enum Job {
    Write(RecordBatch),
    EndGroup,
}

/// A Parquet writer on a thread of its own: the walk reads and builds the next rows while the
/// last ones are encoded and compressed (their columns on the writer's own threads). One
/// batch at most waits between them, so memory stays the row group plus a few chunks.
struct Encoder {
    jobs: Option<SyncSender<Job>>,
    worker: Option<JoinHandle<Result<ParquetWriter>>>,
    at: PathBuf,
}

impl Encoder {
    fn start(mut w: ParquetWriter, at: PathBuf) -> Encoder {
        let (jobs, rx) = sync_channel::<Job>(1);
        let name = at.clone();
        let worker = std::thread::spawn(move || {
            for job in rx {
                match job {
                    Job::Write(batch) => w.write(&batch),
                    Job::EndGroup => w.end_group(),
                }
                .map_err(|e| export_err(&name, e))?;
            }
            Ok(w)
        });
        Encoder {
            jobs: Some(jobs),
            worker: Some(worker),
            at,
        }
    }

    /// Hands `job` to the encoder; when it has stopped, its error.
    fn send(&mut self, job: Job) -> Result<()> {
        let sent = self.jobs.as_ref().map(|j| j.send(job));
        match sent {
            Some(Ok(())) => Ok(()),
            _ => self.finish().map(drop),
        }
    }

    /// The writer with every job done; or the first error.
    fn finish(&mut self) -> Result<ParquetWriter> {
        self.jobs = None;
        let Some(worker) = self.worker.take() else {
            // Its error was returned already.
            return Err(export_err(&self.at, "the Parquet encoder stopped"));
        };
        match worker.join() {
            Ok(done) => done,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

impl Drop for Encoder {
    /// Waits for the encoder, so that an unfinished upload it holds is dropped (a local
    /// file's temporary removed) before the process can exit.
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

impl Writer {
    pub fn create(
        target: Target,
        schema: &SchemaRef,
        format: Format,
        compression: Compression,
        row_group_bytes: u64,
    ) -> Result<Writer> {
        let (sink, name) = match target {
            Target::Object { upload, name } => (Sink::Object(upload), name),
            Target::Stdout => (Sink::Stdout(std::io::stdout()), PathBuf::from("<stdout>")),
        };
        let out = BufWriter::with_capacity(1 << 16, sink);
        let at = name.as_path();
        let inner = match format {
            Format::Parquet => {
                let props = WriterProperties::builder()
                    .set_compression(compression.parquet())
                    // Row groups end at segment ends and at this size, not at a row count.
                    .set_max_row_group_row_count(None)
                    .set_max_row_group_bytes(Some(row_group_bytes.max(1) as usize))
                    .set_created_by(format!("kseg {}", env!("CARGO_PKG_VERSION")))
                    .build();
                let w = ParquetWriter::new(out, schema, props).map_err(|e| export_err(at, e))?;
                Inner::Parquet(Encoder::start(w, name.clone()))
            }
            Format::Arrow => {
                let w = arrow_ipc::writer::FileWriter::try_new(out, schema)
                    .map_err(|e| export_err(at, e))?;
                Inner::Arrow(Box::new(w))
            }
            Format::Csv | Format::Jsonl => Inner::Text {
                out,
                csv: format == Format::Csv,
                header: false,
            },
        };
        Ok(Writer {
            inner,
            name,
            groups: 0,
        })
    }

    fn at(&self) -> &Path {
        &self.name
    }

    /// Writes `batch`'s rows into the current row group.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let at = self.at().to_path_buf();
        match &mut self.inner {
            Inner::Parquet(e) => e.send(Job::Write(batch.clone())),
            Inner::Arrow(w) => {
                w.write(batch).map_err(|e| export_err(&at, e))?;
                self.groups += 1;
                Ok(())
            }
            Inner::Text { out, csv, header } => {
                let r = if *csv {
                    if !*header {
                        *header = true;
                        let schema = batch.schema();
                        let names: Vec<&str> =
                            schema.fields().iter().map(|f| f.name().as_str()).collect();
                        writeln!(out, "{}", names.join(",")).and_then(|()| write_csv(out, batch))
                    } else {
                        write_csv(out, batch)
                    }
                } else {
                    write_jsonl(out, batch)
                };
                r.map_err(|e| Error::io(&at, e))
            }
        }
    }

    /// Ends the current row group (a segment's end): Parquet flushes it; the Arrow file's
    /// record batches are one per write, and CSV and JSON Lines have none.
    pub fn end_group(&mut self) -> Result<()> {
        match &mut self.inner {
            Inner::Parquet(e) => e.send(Job::EndGroup),
            Inner::Arrow(_) | Inner::Text { .. } => Ok(()),
        }
    }

    /// Completes the file (its footer, then the object under its key: a local file synced and
    /// renamed into place); returns its row groups and size in bytes (0 on standard output).
    pub fn close(mut self) -> Result<(u64, u64)> {
        self.end_group()?;
        let at = self.at().to_path_buf();
        let out = match self.inner {
            Inner::Parquet(mut e) => {
                let w = e.finish()?;
                self.groups = w.groups;
                w.into_inner().map_err(|e| export_err(&at, e))?
            }
            Inner::Arrow(mut w) => {
                w.finish().map_err(|e| export_err(&at, e))?;
                w.into_inner().map_err(|e| export_err(&at, e))?
            }
            Inner::Text { out, .. } => out,
        };
        match out
            .into_inner()
            .map_err(|e| Error::io(&at, e.into_error()))?
        {
            Sink::Object(upload) => Ok((self.groups, upload.finish()?)),
            Sink::Stdout(mut s) => {
                s.flush().map_err(|e| Error::io(&at, e))?;
                Ok((self.groups, 0))
            }
        }
    }
}

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// One cell as JSON: binary as base64, timestamps as numbers in their unit (epoch
/// milliseconds for `timestamp`, as `dump --json`), structs as objects (a header is
/// `{"key", "value"}`), lists as arrays, maps as objects.
fn cell(col: &dyn Array, row: usize) -> serde_json::Value {
    use serde_json::Value;
    if col.is_null(row) {
        return Value::Null;
    }
    match col.data_type() {
        DataType::Utf8 => Value::from(col.as_string::<i32>().value(row)),
        DataType::Binary => Value::from(b64(col.as_binary::<i32>().value(row))),
        DataType::Int16 => Value::from(col.as_primitive::<Int16Type>().value(row)),
        DataType::Int32 => Value::from(col.as_primitive::<Int32Type>().value(row)),
        DataType::Int64 => Value::from(col.as_primitive::<Int64Type>().value(row)),
        DataType::UInt32 => Value::from(col.as_primitive::<UInt32Type>().value(row)),
        DataType::UInt64 => Value::from(col.as_primitive::<UInt64Type>().value(row)),
        DataType::Float32 => Value::from(col.as_primitive::<Float32Type>().value(row)),
        DataType::Float64 => Value::from(col.as_primitive::<Float64Type>().value(row)),
        DataType::Date32 => Value::from(col.as_primitive::<Date32Type>().value(row)),
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            Value::from(col.as_primitive::<TimestampMillisecondType>().value(row))
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            Value::from(col.as_primitive::<TimestampMicrosecondType>().value(row))
        }
        DataType::Timestamp(..) => {
            Value::from(col.as_primitive::<TimestampNanosecondType>().value(row))
        }
        DataType::Boolean => Value::from(col.as_boolean().value(row)),
        DataType::List(_) => {
            let items = col.as_list::<i32>().value(row);
            Value::Array((0..items.len()).map(|i| cell(&items, i)).collect())
        }
        DataType::Struct(fields) => {
            let s = col.as_struct();
            Value::Object(
                fields
                    .iter()
                    .zip(s.columns())
                    .map(|(f, c)| (f.name().clone(), cell(c, row)))
                    .collect(),
            )
        }
        DataType::Map(..) => {
            let entries = col.as_map().value(row);
            let (keys, values) = (entries.column(0).as_string::<i32>(), entries.column(1));
            Value::Object(
                (0..entries.len())
                    .map(|i| (keys.value(i).to_owned(), cell(values, i)))
                    .collect(),
            )
        }
        other => unreachable!("no {other} column in the export's schemas"),
    }
}

fn write_jsonl(out: &mut impl Write, batch: &RecordBatch) -> std::io::Result<()> {
    let schema = batch.schema();
    let names: Vec<&String> = schema.fields().iter().map(|f| f.name()).collect();
    for row in 0..batch.num_rows() {
        let mut obj = serde_json::Map::with_capacity(names.len());
        for (name, col) in names.iter().zip(batch.columns()) {
            obj.insert((*name).clone(), cell(col.as_ref(), row));
        }
        serde_json::to_writer(&mut *out, &serde_json::Value::Object(obj))?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled; null is
/// an empty field; headers are their JSON list.
fn write_csv(out: &mut impl Write, batch: &RecordBatch) -> std::io::Result<()> {
    let mut line = String::new();
    for row in 0..batch.num_rows() {
        line.clear();
        for (i, col) in batch.columns().iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            let text = match cell(col.as_ref(), row) {
                serde_json::Value::Null => continue,
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            if text.contains([',', '"', '\n', '\r']) {
                line.push('"');
                line.push_str(&text.replace('"', "\"\""));
                line.push('"');
            } else {
                line.push_str(&text);
            }
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}
