//! `kseg export PATH... --out FILE|DIR`: the records as a Parquet, Arrow, CSV or JSON Lines
//! table (see [`crate::ops::export`]), with a report of what was written.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::args::{BatchLimitArgs, DecoderName, PayloadArgs, SelectArgs};
use super::progress::{bytes_below, Bar, Counting};
use super::render::{line, print_json_or_text, size};
use super::{fail, why, EXIT_FAILURE, EXIT_FINDINGS, EXIT_OK};
use crate::ops::export::{
    export, Compression, ExportOptions, ExportReport, Format, Layout, DEFAULT_ROW_GROUP_BYTES,
};
use crate::ops::inspect::dump::DumpOptions;
use crate::storage::store::{self, RemoteOptions};

#[derive(Debug, Args)]
#[command(
    after_help = "Columns: topic, partition, offset, timestamp (ms, UTC), timestampType, key, \
value, headers (list of key, value), producerId, producerEpoch, sequence, partitionLeaderEpoch, \
isTransactional, isControl, baseOffset, file, position. Rows are what `dump --deep-iteration` \
shows with the same selection flags; control records only with --control (which selects them). \
With --key-decoder / --value-decoder, decodedKey / decodedValue: the decoded key or value as \
typed columns (Avro and Protobuf types from the writer schema; JSON as text, or typed from the \
first --json-schema-sample records); one that does not decode is null and counted. \
A log dir's -delete, -future and -stray partition directories are skipped (the broker serves \
none of them); name one to export it. \
CSV and JSON Lines write binary columns as base64 and timestamps as numbers (epoch ms). \
Exit status: 0 when every record was exported; 1 when damage left records out (said on stderr); \
2 on bad input."
)]
pub struct ExportArgs {
    /// Partition directories, log dirs or directories of log dirs.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// A file named with the format's extension (`orders.parquet`) takes every row; `-` is
    /// standard output (csv, jsonl); any other path is a directory that gets a Hive-style tree,
    /// `topic=T/partition=P/part-00000.parquet`, a file per partition. Either may be in object
    /// storage: s3://BUCKET/PREFIX, gs://BUCKET/PREFIX, az://CONTAINER/PREFIX (credentials
    /// from the standard AWS_*, GOOGLE_* and AZURE_* environment variables) or file:///DIR.
    #[arg(long, value_name = "FILE|DIR|URL")]
    pub out: PathBuf,
    /// The URL of an S3-compatible server (http:// allowed) --out is on, instead of AWS's; with
    /// gs://, of a GCS-compatible server, reached without OAuth.
    #[arg(long, value_name = "URL")]
    pub out_endpoint: Option<String>,
    /// The table's format.
    #[arg(long, value_enum, default_value_t = FormatArg::Parquet)]
    pub format: FormatArg,
    /// Parquet's page compression.
    #[arg(long, value_enum, default_value_t = CompressionArg::Snappy)]
    pub compression: CompressionArg,
    /// A Parquet row group ends at each segment's end or at this size, whichever comes
    /// first: memory is bounded by it plus a constant.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_ROW_GROUP_BYTES,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub row_group_bytes: u64,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub batch_limit: BatchLimitArgs,
    #[command(flatten)]
    pub payload: PayloadArgs,
    /// The keys' format, decoded into the decodedKey column: the same as --key-decoder (dump's
    /// --key-format is instead how it prints key bytes, which export keeps as they are)
    #[arg(
        long,
        value_enum,
        value_name = "DECODER",
        conflicts_with = "key_decoder"
    )]
    pub key_format: Option<DecoderName>,
    /// The values' format, decoded into the decodedValue column: the same as --value-decoder
    #[arg(
        long,
        value_enum,
        value_name = "DECODER",
        conflicts_with = "value_decoder"
    )]
    pub value_format: Option<DecoderName>,
    /// With the json decoder: infer the decoded column's type (a struct) from the first N
    /// records' documents; without it the column is the JSON text
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub json_schema_sample: usize,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress bar (one is shown on a terminal's standard error for a long export).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Parquet,
    Arrow,
    Csv,
    Jsonl,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompressionArg {
    None,
    Snappy,
    Gzip,
    Lz4,
    Zstd,
}

pub fn run(args: ExportArgs) -> u8 {
    let format = match args.format {
        FormatArg::Parquet => Format::Parquet,
        FormatArg::Arrow => Format::Arrow,
        FormatArg::Csv => Format::Csv,
        FormatArg::Jsonl => Format::Jsonl,
    };
    let compression = match args.compression {
        CompressionArg::None => Compression::None,
        CompressionArg::Snappy => Compression::Snappy,
        CompressionArg::Gzip => Compression::Gzip,
        CompressionArg::Lz4 => Compression::Lz4,
        CompressionArg::Zstd => Compression::Zstd,
    };
    let stdout = args.out.as_os_str() == "-";
    let layout = if stdout {
        if matches!(format, Format::Parquet | Format::Arrow) {
            return fail(&format!(
                "--out -: {} is binary; write it to a file or a directory",
                format.extension()
            ));
        }
        Layout::Stdout
    } else {
        match output(&args.out, format, args.out_endpoint.clone()) {
            Ok(layout) => layout,
            Err(e) => return fail(&e),
        }
    };
    if let Err(e) = args.select.check_order() {
        return fail(&e);
    }
    let filter = match args.select.filter() {
        Ok(f) => f,
        Err(e) => return fail(&e),
    };
    let paths = match super::log_dirs_named(&args.paths, false) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let select = DumpOptions {
        max_batch_bytes: args.batch_limit.max_batch_bytes,
        range: args.select.range(),
        filter,
        ..DumpOptions::default()
    };
    // --key-format and --value-format are the decoders' other names.
    let mut payload = args.payload;
    payload.key_decoder = payload.key_decoder.or(args.key_format);
    payload.value_decoder = payload.value_decoder.or(args.value_format);
    let schemas = match payload.schemas() {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let side = |n: Option<DecoderName>| n.map(|n| n.decoder(&schemas)).transpose();
    let (key_decoder, value_decoder) =
        match (side(payload.key_decoder), side(payload.value_decoder)) {
            (Ok(k), Ok(v)) => (k, v),
            (Err(e), _) | (_, Err(e)) => return fail(&e),
        };
    let opts = ExportOptions {
        format,
        compression,
        row_group_bytes: args.row_group_bytes,
        layout,
        key_decoder,
        value_decoder,
        json_schema_sample: args.json_schema_sample,
    };
    let bar = Bar::new(
        args.quiet,
        "exporting",
        select.range.is_none().then(|| bytes_below(&paths)),
        Counting::Read,
    );
    let (report, outcome) = match bar.run(|| export(&paths, &select, &opts)) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    // With the table on standard output, the report would be mixed into it.
    if !stdout {
        let printed = print_json_or_text(args.json.then_some(&report), |out| {
            use std::io::Write;
            write!(out, "{}", text(&report))
        });
        if let Err(e) = printed {
            return fail(&e);
        }
    }
    if report.skipped_partition_dir_count > 0 {
        super::notice(&format!(
            "{} -delete, -future or -stray partition director(ies) skipped: the broker serves none of them (name one to export it)",
            report.skipped_partition_dir_count
        ));
    }
    for f in report.findings.iter() {
        crate::cli::errln!("{}", line(f));
    }
    for (dir, offset, end) in &outcome.past_end {
        why(&format!(
            "{}: offset {offset} is past the log end offset {end}",
            dir.display()
        ));
    }
    if outcome.unreadable > 0 {
        EXIT_FAILURE
    } else if outcome.damage > 0 {
        why(&format!(
            "{} damaged place(s) found: {}; their records are not in the export",
            outcome.damage,
            crate::ops::finding::counts_by_check(&outcome.errors)
        ));
        EXIT_FINDINGS
    } else if !outcome.past_end.is_empty() {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

/// The layout `--out` names, its store opened (a local directory created). A local path is
/// used as the bytes it is; a URL must be UTF-8.
fn output(out: &Path, format: Format, endpoint: Option<String>) -> crate::Result<Layout> {
    let options = RemoteOptions {
        endpoint,
        ..RemoteOptions::default()
    };
    if out.extension() != Some(format.extension().as_ref()) {
        return Ok(Layout::Hive(store::output(out, &options)?));
    }
    let Some(url) = store::url_of(out)? else {
        return Ok(Layout::File(out.to_path_buf()));
    };
    // The file's store: the URL up to its last `/` past the bucket (a URL without one names a
    // bucket, a tree's root).
    match url.split_once("://") {
        Some((_, rest)) if !rest.trim_end_matches('/').contains('/') => {
            Ok(Layout::Hive(store::output(out, &options)?))
        }
        _ => {
            let (root, key) = url
                .trim_end_matches('/')
                .rsplit_once('/')
                .expect("a URL with a key");
            Ok(Layout::Object {
                store: store::output(Path::new(root), &options)?,
                key: key.to_string(),
            })
        }
    }
}

/// The report as text: a line per file, then the totals.
fn text(r: &ExportReport) -> String {
    let mut s = String::new();
    for f in &r.files {
        s += &format!(
            "{}: {} row(s), {} row group(s), {}\n",
            f.file.display(),
            f.row_count,
            f.row_group_count,
            size(f.size)
        );
    }
    s += &format!(
        "exported {} row(s) in {} row group(s) to {} {} file(s): read {}, wrote {}",
        r.row_count,
        r.row_group_count,
        r.files.len(),
        r.file_format,
        size(r.bytes_read),
        size(r.bytes_written)
    );
    for (side, n) in [
        ("key", r.undecoded_key_count),
        ("value", r.undecoded_value_count),
    ] {
        if let Some(n @ 1..) = n {
            s += &format!("; {n} {side}(s) did not decode (null in the decoded column)");
        }
    }
    if r.control_record_count > 0 {
        s += &format!(
            "; {} control record(s) left out (--control selects them)",
            r.control_record_count
        );
    }
    s + "\n"
}
