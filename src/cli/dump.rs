//! `kseg dump`: kafka-dump-log's text output (same lines, fields and punctuation as Kafka 4.0,
//! quirks included) or JSON Lines, rendered from the events of `ops::inspect::dump`.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;
use serde_json::json;

use super::args::{BatchLimitArgs, DecoderName, PayloadArgs, Schemas, SelectArgs};
use super::progress::{bytes_below, Bar, Counting};
use super::render::{BytesFormat, JsonStream};
use super::time::TimeFormat;
use super::{fail, notice, EXIT_FAILURE, EXIT_FINDINGS, EXIT_OK};
use crate::format::batch::Headers;
use crate::format::internal::Decoder;
use crate::format::payload::{Payload, PayloadDecoder, DECODER_CLASSES};
use crate::ops::inspect::dump::{
    dump_paths, BatchInfo, DumpOptions, Event, LogHeader, Outcome, RecordInfo, Sink,
    DEFAULT_MAX_BYTES, DEFAULT_MAX_MESSAGE_SIZE,
};

#[derive(Debug, Args)]
// One decoder at a time: each reads the records as a different internal topic's.
#[command(group(clap::ArgGroup::new("decoder").multiple(false)))]
pub struct DumpArgs {
    /// Files or partition directories (a directory dumps its files in base-offset order).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Comma-separated files, as kafka-dump-log takes them.
    #[arg(long, value_delimiter = ',', value_name = "FILE1,FILE2,...")]
    pub files: Vec<PathBuf>,
    /// The remote tier of the partitions named (tiered storage): its segments below the local
    /// log are read with it as one log, as the broker serves it.
    #[command(flatten)]
    pub remote: Option<super::args::RemoteArgs>,
    /// One line per record, not only per batch.
    #[arg(long)]
    pub deep_iteration: bool,
    /// Print record keys and payloads (implies --deep-iteration).
    #[arg(long)]
    pub print_data_log: bool,
    /// Leave the per-record metadata out of record lines.
    #[arg(long)]
    pub skip_record_metadata: bool,
    /// Index files: check the entries against the log but print no entry lines.
    #[arg(long)]
    pub verify_index_only: bool,
    /// Index files: only run Kafka's index sanity check.
    #[arg(long)]
    pub index_sanity_check: bool,
    /// Accepted for kafka-dump-log compatibility (its window read at each indexed position);
    /// kseg checks index entries against a walk of the log, where no batch is too large.
    #[arg(long, default_value_t = DEFAULT_MAX_MESSAGE_SIZE, value_name = "BYTES")]
    pub max_message_size: u64,
    /// Log files: read at most this many bytes from the start of each file.
    #[arg(long, default_value_t = DEFAULT_MAX_BYTES, value_name = "BYTES")]
    pub max_bytes: u64,
    #[command(flatten)]
    pub batch_limit: BatchLimitArgs,
    /// Decode `__consumer_offsets` records (implies --print-data-log).
    #[arg(long, group = "decoder")]
    pub offsets_decoder: bool,
    /// Decode `__transaction_state` records (implies --print-data-log).
    #[arg(long, group = "decoder")]
    pub transaction_log_decoder: bool,
    /// Decode KRaft `__cluster_metadata` records and snapshots (implies --print-data-log).
    #[arg(long, group = "decoder")]
    pub cluster_metadata_decoder: bool,
    /// Decode `__share_group_state` records (implies --print-data-log).
    #[arg(long, group = "decoder")]
    pub share_group_state_decoder: bool,
    /// Decode `__remote_log_metadata` records (tiered storage; implies --print-data-log)
    #[arg(long, group = "decoder")]
    pub remote_log_metadata_decoder: bool,
    /// `auto`: decode each internal topic's records with its decoder, chosen from the
    /// partition directory's name (`__consumer_offsets`, `__transaction_state`,
    /// `__cluster_metadata`, `__share_group_state`, `__remote_log_metadata`); implies --print-data-log. Default `none`:
    /// kafka-dump-log's output
    #[arg(long, value_enum, value_name = "WHICH", default_value_t = DecodeMode::None)]
    pub decode: DecodeMode,
    /// kafka-dump-log's key decoder class (implies --print-data-log): `StringDecoder`,
    /// `IntegerDecoder`, `LongDecoder` or `DefaultDecoder` of `org.apache.kafka.tools.api`
    /// (or `kafka.serializer`); DefaultDecoder's bytes print as hex
    #[arg(long, value_name = "CLASS", num_args = 0..=1,
          default_missing_value = STRING_DECODER_CLASS, conflicts_with = "key_decoder")]
    pub key_decoder_class: Option<String>,
    /// kafka-dump-log's value decoder class (implies --print-data-log); as --key-decoder-class
    #[arg(long, value_name = "CLASS", num_args = 0..=1,
          default_missing_value = STRING_DECODER_CLASS, conflicts_with = "value_decoder")]
    pub value_decoder_class: Option<String>,
    #[command(flatten)]
    pub payload: PayloadArgs,
    /// One JSON document: `{"format", "items": [...]}`, an object per batch, record, index
    /// entry, snapshot or checkpoint entry (written as they come)
    #[arg(long, conflicts_with = "jsonl")]
    pub json: bool,
    /// JSON Lines: the same objects, one per line, after a first line `{"format", "type":
    /// "stream"}`
    #[arg(long)]
    pub jsonl: bool,
    /// Encoding of keys with --print-data-log (text: `auto` is kafka-dump-log's lossy UTF-8;
    /// `hex` and `base64` keep every record on one line).
    #[arg(long, value_enum, default_value_t = BytesFormat::Auto)]
    pub key_format: BytesFormat,
    /// Encoding of values (and, in JSON, header values) with --print-data-log, as --key-format.
    #[arg(long, value_enum, default_value_t = BytesFormat::Auto)]
    pub value_format: BytesFormat,
    /// How the text shows record and batch timestamps: epoch milliseconds as kafka-dump-log
    /// prints them (the default), or RFC 3339 (`rfc3339` in UTC, `local`). JSON keeps ms.
    #[arg(long, value_enum, default_value_t = TimeFormat::Ms)]
    pub time_format: TimeFormat,
    /// The offset of a segment file whose name carries none (an index renamed without its
    /// log); a renamed log's is its first batch's.
    #[arg(long, value_name = "OFFSET")]
    pub base_offset: Option<i64>,
    /// No progress bar (one is shown on a terminal's standard error for a long dump whose
    /// output goes elsewhere).
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub select: SelectArgs,
    /// With record filters: print every batch line for context, not only those of batches
    /// with a matching record.
    #[arg(long)]
    pub batches: bool,
}

/// `--decode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DecodeMode {
    None,
    Auto,
}

/// kafka-dump-log's default decoder class.
const STRING_DECODER_CLASS: &str = "org.apache.kafka.tools.api.StringDecoder";

/// The decoder of one side: a kafka-dump-log class name or a kseg decoder name.
fn side_decoder(
    side: &str,
    class: Option<&str>,
    name: Option<DecoderName>,
    schemas: &Schemas,
) -> Result<Option<PayloadDecoder>, String> {
    match (class, name) {
        (Some(c), _) => PayloadDecoder::from_class(c).map(Some).ok_or_else(|| {
            let known: Vec<&str> = DECODER_CLASSES.iter().map(|(n, _)| *n).collect();
            format!(
                "--{side}-decoder-class {c}: kseg loads no Java classes; it knows {}. For other formats use kseg's own --{side}-decoder string|int|long|hex|base64|json|avro|protobuf",
                known.join(", ")
            )
        }),
        (None, n) => n.map(|n| n.decoder(schemas)).transpose(),
    }
}

pub fn run(args: DumpArgs) -> u8 {
    let mut paths = args.paths.clone();
    paths.extend(args.files.iter().cloned());
    if let Err(e) = args.select.check_order() {
        return fail(&e);
    }
    let paths = match super::log_dirs_named(&paths, false) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let paths = match super::args::show_remote(args.remote.as_ref(), &paths) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if paths.is_empty() {
        return fail(
            &"no file given: name files or directories (or use --files a,b,c, or --remote-segment)",
        );
    }
    // At most one is set (the `decoder` group).
    let decoder = [
        (args.offsets_decoder, Decoder::Offsets),
        (args.transaction_log_decoder, Decoder::TransactionLog),
        (args.cluster_metadata_decoder, Decoder::ClusterMetadata),
        (args.remote_log_metadata_decoder, Decoder::RemoteLogMetadata),
        (args.share_group_state_decoder, Decoder::ShareGroupState),
    ]
    .into_iter()
    .find_map(|(on, d)| on.then_some(d));
    let schemas = match args.payload.schemas() {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let (key_decoder, value_decoder) = match (
        side_decoder(
            "key",
            args.key_decoder_class.as_deref(),
            args.payload.key_decoder,
            &schemas,
        ),
        side_decoder(
            "value",
            args.value_decoder_class.as_deref(),
            args.payload.value_decoder,
            &schemas,
        ),
    ) {
        (Ok(k), Ok(v)) => (k, v),
        (Err(e), _) | (_, Err(e)) => return fail(&e),
    };
    let filter = match args.select.filter() {
        Ok(f) => f,
        Err(e) => return fail(&e),
    };
    let auto_decoder = args.decode == DecodeMode::Auto;
    let print_data = args.print_data_log
        || auto_decoder
        || decoder.is_some()
        || key_decoder.is_some()
        || value_decoder.is_some();
    let opts = DumpOptions {
        deep: args.deep_iteration || print_data,
        print_data,
        skip_record_metadata: args.skip_record_metadata,
        max_bytes: args.max_bytes,
        index_sanity_check: args.index_sanity_check,
        verify_index_only: args.verify_index_only,
        decoder,
        auto_decoder,
        key_decoder,
        value_decoder,
        max_batch_bytes: args.batch_limit.max_batch_bytes,
        range: args.select.range(),
        base_offset: args.base_offset,
        filter,
        all_batches: args.batches,
        read_leftovers: true,
        ..DumpOptions::default()
    };
    let stdout = io::stdout();
    // The dump itself goes to a terminal: a bar beside it would break its lines.
    let bar = Bar::new(
        args.quiet || stdout.is_terminal(),
        "dumping",
        // A range reads only part of the files: no total then, the count alone.
        opts.range.is_none().then(|| bytes_below(&paths)),
        Counting::Read,
    );
    let out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let result = if args.json || args.jsonl {
        // The stream starts by saying which vocabulary the objects that follow use.
        // (Buffered: a closed pipe shows when the buffer is flushed, in `finish`.)
        let out = match JsonStream::start(out, args.jsonl) {
            Ok(out) => out,
            Err(e) => return fail(&e),
        };
        let mut sink = JsonSink {
            out,
            opts: &opts,
            key_format: args.key_format,
            value_format: args.value_format,
            file: String::new(),
        };
        let r = bar.run(|| dump_paths(&paths, &opts, &mut sink));
        // The document is closed even after an error, so that what was printed parses.
        match sink
            .out
            .finish(r.as_ref().ok().map(|o| o.files - o.skipped.len()))
        {
            Ok(out) => finish(out, r),
            Err(e) => finish(
                io::sink(),
                r.and(Err(crate::Error::io(Path::new("<stdout>"), e))),
            ),
        }
    } else {
        let mut sink = TextSink {
            out,
            opts: &opts,
            key_format: args.key_format,
            value_format: args.value_format,
            time_format: args.time_format,
            line: String::new(),
            text: Vec::new(),
        };
        let r = bar.run(|| dump_paths(&paths, &opts, &mut sink));
        finish(sink.out, r)
    };
    match result {
        Ok(outcome) => {
            for f in &outcome.fallbacks {
                notice(f);
            }
            if !outcome.without_records.is_empty() {
                let names: Vec<String> = outcome
                    .without_records
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                notice(&format!(
                    "record filters select records: {} file(s) without any left out: {}",
                    names.len(),
                    names.join(", ")
                ));
            }
            print_summary(&outcome);
            let named_skipped = super::skipped(&paths, &outcome.skipped);
            for (dir, offset, end) in &outcome.past_end {
                super::why(&format!(
                    "{}: offset {offset} is past the log end offset {end}",
                    dir.display()
                ));
            }
            if outcome.unreadable > 0 || named_skipped {
                EXIT_FAILURE
            } else if opts.range.is_none()
                && outcome.files == outcome.skipped.len() + outcome.leftovers_unread
            {
                fail(&format!(
                    "no file read: {} leftover(s) the broker deletes at start-up, {} unknown",
                    outcome.leftovers_unread,
                    outcome.skipped.len()
                ))
            } else if outcome.damage > 0 {
                super::why(&format!(
                    "{} damaged place(s) found: {}",
                    outcome.damage,
                    damage_reasons(&outcome)
                ));
                EXIT_FINDINGS
            } else if !outcome.past_end.is_empty() {
                EXIT_FINDINGS
            } else {
                EXIT_OK
            }
        }
        Err(e) => fail(&e),
    }
}

/// What the damage counted in `o` is, by kind: each error finding's check id, then the index
/// files that failed the sanity check and the logs with non-increasing offsets, in
/// kafka-dump-log's words for them (`failed sanity check`, `Non-increasing offsets in`).
fn damage_reasons(o: &Outcome) -> String {
    let mut why = vec![crate::ops::finding::counts_by_check(&o.errors)];
    let sanity = o.summary.sanity_failures;
    if sanity > 0 {
        why.push(format!("{sanity} × index file failed sanity check"));
    }
    let regressions = o.summary.offset_regressions.len();
    if regressions > 0 {
        why.push(format!("{regressions} × log with non-increasing offsets"));
    }
    why.retain(|w| !w.is_empty());
    why.join(", ")
}

fn finish<W: Write>(mut out: W, r: crate::Result<Outcome>) -> crate::Result<Outcome> {
    let flushed = out.flush();
    let outcome = match r {
        Err(crate::Error::Io { source, .. }) if source.kind() == io::ErrorKind::BrokenPipe => {
            std::process::exit(EXIT_OK.into())
        }
        other => other?,
    };
    if let Err(e) = flushed {
        if e.kind() == io::ErrorKind::BrokenPipe {
            std::process::exit(EXIT_OK.into());
        }
        return Err(crate::Error::io(Path::new("<stdout>"), e));
    }
    Ok(outcome)
}

/// End-of-run summaries, on stderr as kafka-dump-log prints them (pairs of the index and
/// offset groups newest first, time-index pairs oldest first, as Kafka does).
fn print_summary(o: &Outcome) {
    let mut err = io::stderr().lock();
    let s = &o.summary;
    for (path, pairs) in &s.index_mismatches {
        let _ = writeln!(err, "Mismatches in :{}", absolute(path).display());
        for (index, log) in pairs.iter().rev() {
            let _ = writeln!(err, "  Index offset: {index}, log offset: {log}");
        }
    }
    for (path, pairs) in &s.time_mismatches {
        let _ = writeln!(
            err,
            "Found timestamp mismatch in :{}",
            absolute(path).display()
        );
        for (index, log) in pairs {
            let _ = writeln!(err, "  Index timestamp: {index}, log timestamp: {log}");
        }
    }
    for (path, pairs) in &s.time_out_of_order {
        let _ = writeln!(
            err,
            "Found out of order timestamp in :{}",
            absolute(path).display()
        );
        for (index, prev) in pairs {
            let _ = writeln!(
                err,
                "  Index timestamp: {index}, Previously indexed timestamp: {prev}"
            );
        }
    }
    if !s.time_offsets_not_found.is_empty() {
        let _ = writeln!(
            err,
            "The following indexed offsets are not found in the log."
        );
        for (offset, found) in &s.time_offsets_not_found {
            let _ = writeln!(err, "Indexed offset: {offset}, found log offset: {found}");
        }
    }
    for (path, pairs) in &s.offset_regressions {
        let _ = writeln!(
            err,
            "Non-increasing offsets in {}",
            absolute(path).display()
        );
        for (last, next) in pairs.iter().rev() {
            let _ = writeln!(err, "  {last} is followed by {next}");
        }
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// kafka-dump-log's text.
struct TextSink<'o, W: Write> {
    out: W,
    opts: &'o DumpOptions,
    key_format: BytesFormat,
    value_format: BytesFormat,
    time_format: TimeFormat,
    line: String,
    /// Where keys and values that are not valid UTF-8 are decoded.
    text: Vec<u8>,
}

impl<W: Write> TextSink<'_, W> {
    fn batch_line(&mut self, b: &BatchInfo) {
        use std::fmt::Write as _;
        let max_timestamp = self.time_format.show(b.max_timestamp);
        let l = &mut self.line;
        l.clear();
        if b.magic >= 2 {
            let horizon = match b.delete_horizon_ms {
                Some(h) => format!("OptionalLong[{h}]"),
                None => "OptionalLong.empty".to_owned(),
            };
            let _ = write!(
                l,
                "baseOffset: {} lastOffset: {} count: {} baseSequence: {} lastSequence: {} producerId: {} producerEpoch: {} partitionLeaderEpoch: {} isTransactional: {} isControl: {} deleteHorizonMs: {} position: {} {}: {} size: {} magic: {} compresscodec: {} crc: {} isvalid: {}",
                b.base_offset.unwrap_or(-1),
                b.last_offset,
                b.count.unwrap_or(0),
                b.base_sequence,
                b.last_sequence,
                b.producer_id,
                b.producer_epoch,
                b.partition_leader_epoch,
                b.is_transactional,
                b.is_control,
                horizon,
                b.position,
                b.timestamp_type,
                max_timestamp,
                b.size_in_bytes,
                b.magic,
                b.compression,
                b.crc,
                b.is_valid
            );
        } else {
            let _ = write!(
                l,
                "offset: {} position: {} {}: {} size: {} magic: {} compresscodec: {} crc: {} isvalid: {}",
                b.last_offset,
                b.position,
                b.timestamp_type,
                max_timestamp,
                b.size_in_bytes,
                b.magic,
                b.compression,
                b.crc,
                b.is_valid
            );
        }
    }

    /// A timestamp as --time-format says: epoch milliseconds formatted without `fmt`.
    fn write_time(&mut self, ms: i64) -> io::Result<()> {
        match self.time_format {
            TimeFormat::Ms => write_int(&mut self.out, ms),
            f => self.out.write_all(f.show(ms).as_bytes()),
        }
    }

    /// A record's line, written straight to the output: numbers through `itoa`, keys and
    /// payloads in pieces from the record's bytes (the hot path of
    /// `--deep-iteration --print-data-log`).
    fn record_line(&mut self, r: &RecordInfo<'_>) -> io::Result<()> {
        let v = &r.view;
        let mut prefix: &[u8] = b"| ";
        if !self.opts.skip_record_metadata {
            self.out.write_all(b"| offset: ")?;
            write_int(&mut self.out, v.offset)?;
            self.out.write_all(b" ")?;
            self.out.write_all(v.timestamp_type.name().as_bytes())?;
            self.out.write_all(b": ")?;
            self.write_time(v.timestamp)?;
            self.out.write_all(b" keySize: ")?;
            write_int(&mut self.out, v.key.map_or(-1, |k| k.len() as i64))?;
            self.out.write_all(b" valueSize: ")?;
            write_int(&mut self.out, v.value.map_or(-1, |x| x.len() as i64))?;
            prefix = b" ";
            let out = &mut self.out;
            match r.legacy() {
                None => {
                    out.write_all(b" sequence: ")?;
                    write_int(out, v.sequence)?;
                    out.write_all(b" headerKeys: [")?;
                    for (i, h) in v.headers.iter().enumerate() {
                        if i > 0 {
                            out.write_all(b",")?;
                        }
                        BytesFormat::Utf8.write_text(out, h.key, &mut self.text)?;
                    }
                    out.write_all(b"]")?;
                }
                Some(legacy) => {
                    // Kafka's legacy record line really ends the CRC with a stray brace.
                    write!(out, " isValid: {} crc: {}}}", legacy.is_valid, legacy.crc)?;
                }
            }
            if let Some((text, _)) = &r.control_text {
                out.write_all(text.as_bytes())?;
            }
        }
        if self.opts.print_data && !r.is_control_batch {
            let out = &mut self.out;
            let text = &mut self.text;
            let mut side = |out: &mut W,
                            b: &[u8],
                            read: &Option<Result<Payload, String>>,
                            f: BytesFormat| match read {
                Some(Ok(p)) => out.write_all(p.text.as_bytes()),
                Some(Err(e)) => write!(out, "[not decoded: {e}] {}", super::render::hex(b)),
                None => f.write_text(out, b, text),
            };
            match &r.decoded {
                Some(d) => {
                    if let Some(k) = &d.key {
                        out.write_all(prefix)?;
                        out.write_all(b"key: ")?;
                        out.write_all(k.as_bytes())?;
                    }
                    if let Some(x) = &d.payload {
                        out.write_all(b" payload: ")?;
                        out.write_all(x.as_bytes())?;
                    }
                }
                None => {
                    if let Some(k) = v.key {
                        out.write_all(prefix)?;
                        out.write_all(b"key: ")?;
                        side(out, k, &r.key_payload, self.key_format)?;
                    }
                    if let Some(x) = v.value {
                        out.write_all(b" payload: ")?;
                        side(out, x, &r.value_payload, self.value_format)?;
                    }
                }
            }
        }
        self.out.write_all(b"\n")
    }
}

/// An integer in decimal, as `Display` prints it, without going through `fmt`.
fn write_int(out: &mut impl Write, n: impl itoa::Integer) -> io::Result<()> {
    out.write_all(itoa::Buffer::new().format(n).as_bytes())
}

impl<W: Write> Sink for TextSink<'_, W> {
    fn event(&mut self, e: &Event<'_>) -> io::Result<()> {
        match e {
            Event::FileStart { path } => writeln!(self.out, "Dumping {}", path.display()),
            Event::Ignored { path, .. } => {
                self.out.flush()?;
                crate::cli::errln!("Ignoring unknown file {}", path.display());
                Ok(())
            }
            Event::LogHeader(h) => match h {
                LogHeader::Segment { base_offset } => writeln!(self.out, "Log starting offset: {base_offset}"),
                LogHeader::KraftSnapshot { end_offset, epoch } => {
                    writeln!(self.out, "Snapshot end offset: {end_offset}, epoch: {epoch}")
                }
                LogHeader::Bootstrap => writeln!(self.out, "KRaft bootstrap snapshot"),
            },
            Event::QuorumState(v) => writeln!(self.out, "{v}"),
            Event::Batch { info: b, .. } => {
                self.batch_line(b);
                writeln!(self.out, "{}", self.line)
            }
            Event::Record(r) => self.record_line(r),
            Event::BatchRecords { .. } => Ok(()),
            Event::Finding(f) => {
                // Damage inside a log is explained where it occurs; problems with other
                // files go to stderr, as kafka-dump-log reports snapshot corruption.
                if ["log.", "batch.", "record.", "segment."].iter().any(|p| f.check.starts_with(p)) {
                    writeln!(self.out, "{}", f.message)
                } else {
                    self.out.flush()?;
                    crate::cli::errln!("{}: {}", f.file.display(), f.message);
                    Ok(())
                }
            }
            Event::TrailingBytes { path, bytes, .. } => {
                writeln!(self.out, "Found {bytes} invalid bytes at the end of {}", file_name(path))
            }
            Event::IndexEmpty { path } => writeln!(self.out, "{} is empty.", path.display()),
            Event::SanityCheck { path, result } => match result {
                Ok(()) => writeln!(self.out, "{} passed sanity check.", path.display()),
                Err(m) => writeln!(self.out, "{} failed sanity check: {m}", path.display()),
            },
            Event::OffsetIndexEntry { entry, .. } => {
                writeln!(self.out, "offset: {} position: {}", entry.offset, entry.position)
            }
            Event::TimeIndexEntry { entry, .. } => {
                writeln!(self.out, "timestamp: {} offset: {}", entry.timestamp, entry.offset)
            }
            Event::ZeroTail { first_slot, slots, bytes, .. } => writeln!(
                self.out,
                "Zero-filled preallocated tail: slots {first_slot}..{} ({bytes} bytes) are unused, not entries",
                first_slot + slots
            ),
            Event::TxnEntry(t) => writeln!(
                self.out,
                "version: {} producerId: {} firstOffset: {} lastOffset: {} lastStableOffset: {}",
                t.version, t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset
            ),
            Event::SnapshotEntry(e) => {
                let txn = match e.current_txn_first_offset() {
                    Some(o) => format!("OptionalLong[{o}]"),
                    None => "OptionalLong.empty".to_owned(),
                };
                // Kafka ends the line with a space when the producer has no batch metadata.
                write!(
                    self.out,
                    "producerId: {} producerEpoch: {} coordinatorEpoch: {} currentTxnFirstOffset: {txn} lastTimestamp: {} ",
                    e.producer_id, e.producer_epoch, e.coordinator_epoch, e.timestamp
                )?;
                if e.has_batch_metadata() {
                    write!(
                        self.out,
                        "firstSequence: {} lastSequence: {} lastOffset: {} offsetDelta: {} timestamp: {}",
                        e.first_sequence(),
                        e.last_sequence,
                        e.last_offset,
                        e.offset_delta,
                        e.timestamp
                    )?;
                }
                writeln!(self.out)
            }
            Event::LeaderEpochEntry(e) => {
                writeln!(self.out, "epoch: {} startOffset: {}", e.epoch, e.start_offset)
            }
            Event::OffsetCheckpointEntry(e) => writeln!(
                self.out,
                "topic: {} partition: {} offset: {}",
                e.topic, e.partition, e.offset
            ),
            Event::PartitionMetadata { version, topic_id } => {
                writeln!(self.out, "version: {version} topicId: {topic_id}")
            }
            Event::Property { key, value } => writeln!(self.out, "{key}={value}"),
            Event::FileEnd { .. } => Ok(()),
        }
    }
}

/// `--json` and `--jsonl`: one object per event that carries data, each with `type` and
/// `file`.
struct JsonSink<'o, W: Write> {
    out: JsonStream<W>,
    opts: &'o DumpOptions,
    key_format: BytesFormat,
    value_format: BytesFormat,
    file: String,
}

#[derive(Serialize)]
struct Line<'a, T: Serialize> {
    #[serde(rename = "type")]
    kind: &'static str,
    /// The file being dumped; left out where the body names its own (a finding), so that no
    /// line carries a key twice.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(flatten)]
    body: T,
}

/// A byte string in the chosen encoding; `None` is JSON null.
#[derive(Serialize)]
struct Encoded {
    data: String,
    encoding: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonHeader {
    key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<Option<Encoded>>,
}

/// A record's headers, each encoded as it is written: a record may carry millions of them.
struct JsonHeaders<'a> {
    headers: Headers<'a>,
    with_data: bool,
    value_format: BytesFormat,
}

impl Serialize for JsonHeaders<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.headers.iter().map(|h| JsonHeader {
            key: crate::format::java_utf8::lossy(h.key).into_owned(),
            value: self.with_data.then(|| encoded(h.value, self.value_format)),
        }))
    }
}

fn encoded(b: Option<&[u8]>, f: BytesFormat) -> Option<Encoded> {
    b.map(|b| {
        let (data, encoding) = f.encode(b);
        Encoded { data, encoding }
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonRecord<'a> {
    offset: i64,
    timestamp: i64,
    timestamp_type: &'static str,
    sequence: i32,
    size_in_bytes: usize,
    key_size: i64,
    value_size: i64,
    /// Present (possibly null) with --print-data-log and for control records.
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<Option<Encoded>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<Option<Encoded>>,
    headers: JsonHeaders<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    legacy: Option<JsonLegacy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    control: Option<crate::ops::inspect::dump::ControlInfo>,
    /// A KRaft control record's value (SnapshotHeader, Voters, ...) as JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    control_value: Option<serde_json::Value>,
    /// With an internal-topic decoder: the decoded key and value, as JSON objects where the
    /// decoder gives one, else as kafka-dump-log's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    decoded_key: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decoded_value: Option<serde_json::Value>,
    /// With --key-decoder / --value-decoder: why a key or value did not decode.
    #[serde(skip_serializing_if = "Option::is_none")]
    key_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value_error: Option<String>,
    /// A value newer than kseg's tables: `decodedValue` holds the fields of the newest known
    /// version, `unreadBytes` what follows them.
    #[serde(skip_serializing_if = "Option::is_none")]
    unknown_version: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    newest_known_version: Option<i16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unread_bytes: Option<Encoded>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonLegacy {
    magic: i8,
    attributes: i8,
    crc: u32,
    is_valid: bool,
}

fn payload_json(read: &Option<Result<Payload, String>>) -> Option<serde_json::Value> {
    read.as_ref()?.as_ref().ok().map(|p| p.json.clone())
}

fn payload_error(read: &Option<Result<Payload, String>>) -> Option<String> {
    read.as_ref()?.as_ref().err().cloned()
}

impl<W: Write> JsonSink<'_, W> {
    fn line<T: Serialize>(&mut self, kind: &'static str, body: T) -> io::Result<()> {
        let file = Some(self.file.as_str());
        self.out.item(&Line { kind, file, body })
    }

    fn record(&mut self, r: &RecordInfo<'_>) -> io::Result<()> {
        let v = &r.view;
        let with_data = self.opts.print_data || r.is_control_batch;
        let unknown = r.decoded.as_ref().and_then(|d| d.unknown_version.as_ref());
        let rec = JsonRecord {
            offset: v.offset,
            timestamp: v.timestamp,
            timestamp_type: v.timestamp_type.name(),
            sequence: v.sequence,
            size_in_bytes: v.size_in_bytes,
            key_size: v.key.map_or(-1, |k| k.len() as i64),
            value_size: v.value.map_or(-1, |x| x.len() as i64),
            key: with_data.then(|| encoded(v.key, self.key_format)),
            value: with_data.then(|| encoded(v.value, self.value_format)),
            headers: JsonHeaders {
                headers: v.headers,
                with_data,
                value_format: self.value_format,
            },
            legacy: v.legacy.map(|l| JsonLegacy {
                magic: l.magic,
                attributes: l.attributes,
                crc: l.crc,
                is_valid: l.is_valid,
            }),
            control: r.control,
            control_value: r.control_text.as_ref().and_then(|(_, j)| j.clone()),
            decoded_key: r
                .decoded
                .as_ref()
                .and_then(|d| as_object(&d.key_json, &d.key))
                .or_else(|| payload_json(&r.key_payload)),
            decoded_value: r
                .decoded
                .as_ref()
                .and_then(|d| as_object(&d.payload_json, &d.payload))
                .or_else(|| payload_json(&r.value_payload)),
            key_error: payload_error(&r.key_payload),
            value_error: payload_error(&r.value_payload),
            unknown_version: unknown.map(|_| true),
            newest_known_version: unknown.map(|u| u.newest_known),
            unread_bytes: unknown.and_then(|u| encoded(Some(&u.unread), self.value_format)),
        };
        self.line("record", rec)
    }
}

/// A decoder's answer as an object: its JSON form, else its text (an error message, a form
/// with no JSON equivalent) as `{"text": …}`.
fn as_object(json: &Option<serde_json::Value>, text: &Option<String>) -> Option<serde_json::Value> {
    json.clone()
        .or_else(|| text.as_ref().map(|t| json!({ "text": t })))
}

impl<W: Write> Sink for JsonSink<'_, W> {
    fn event(&mut self, e: &Event<'_>) -> io::Result<()> {
        match e {
            Event::FileStart { path } => {
                self.file = crate::format::os_path::escaped(path).into_owned();
                Ok(())
            }
            Event::Ignored { skipped: true, .. } => self.line("skipped", json!({})),
            Event::Ignored { .. } => Ok(()),
            Event::FileEnd { .. } => Ok(()),
            Event::LogHeader(h) => match h {
                LogHeader::Segment { base_offset } => {
                    self.line("log", json!({"baseOffset": base_offset}))
                }
                LogHeader::KraftSnapshot { end_offset, epoch } => self.line(
                    "kraft_snapshot",
                    json!({"endOffset": end_offset, "epoch": epoch}),
                ),
                LogHeader::Bootstrap => self.line("kraft_bootstrap", json!({})),
            },
            Event::QuorumState(v) => self.line("quorum_state", json!({"quorumState": v})),
            Event::Batch { info, .. } => self.line("batch", info),
            Event::Record(r) => self.record(r),
            Event::BatchRecords { .. } => Ok(()),
            Event::Finding(f) => self.out.item(&Line {
                kind: "finding",
                file: None,
                body: f,
            }),
            Event::TrailingBytes {
                bytes, position, ..
            } => self.line(
                "trailing_bytes",
                json!({"position": position, "bytes": bytes}),
            ),
            Event::IndexEmpty { .. } => self.line("index_empty", json!({})),
            Event::SanityCheck { result, .. } => self.line(
                "sanity_check",
                json!({"passed": result.is_ok(), "message": result.as_ref().err()}),
            ),
            Event::OffsetIndexEntry { slot, entry } => self.line(
                "offset_index_entry",
                json!({"slot": slot, "offset": entry.offset, "position": entry.position}),
            ),
            Event::TimeIndexEntry { slot, entry } => self.line(
                "time_index_entry",
                json!({"slot": slot, "timestamp": entry.timestamp, "offset": entry.offset}),
            ),
            Event::ZeroTail {
                first_slot,
                slots,
                bytes,
                ..
            } => self.line(
                "zero_tail",
                json!({"firstSlot": first_slot, "slotCount": slots, "bytes": bytes}),
            ),
            Event::TxnEntry(t) => self.line("txn_index_entry", t),
            Event::SnapshotEntry(e) => {
                // The first sequence is derived, not stored; the text prints it, so does JSON.
                let mut entry = serde_json::to_value(e).map_err(io::Error::other)?;
                entry["firstSequence"] = e.first_sequence().into();
                self.line("snapshot_entry", entry)
            }
            Event::LeaderEpochEntry(e) => self.line("leader_epoch_entry", e),
            Event::OffsetCheckpointEntry(e) => self.line("offset_checkpoint_entry", e),
            Event::PartitionMetadata { version, topic_id } => self.line(
                "partition_metadata",
                json!({"version": version, "topicId": topic_id}),
            ),
            Event::Property { key, value } => self.line(
                "property",
                json!({"propertyName": key, "propertyValue": value}),
            ),
        }
    }
}
