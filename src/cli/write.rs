//! `kseg write SPEC.json OUTDIR`: builds a partition directory from a spec, as the broker
//! would have written it.

use std::path::{Path, PathBuf};

use clap::Args;

use super::progress::{Bar, Counting};
use super::{fail, EXIT_OK};
use crate::format::names::partition_dir_name;
use crate::ops::remote::tier::{tier_as, TierLayout};
use crate::ops::write::jsonl::write_jsonl;
use crate::ops::write::log_dir::write_log_dir;
use crate::ops::write::spec::{
    write_spec, AnySpec, Spec, SpecBatch, SpecClose, SpecConfig, WriteSummary,
};

#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The spec: the format of the reference corpus' SPEC.json, or the log-dir form (see
    /// docs/write.md, "kseg write: the spec format"). Omitted with --jsonl.
    #[arg(value_name = "SPEC.json")]
    pub spec: Option<PathBuf>,
    /// The partition directory to create (`<topic>-<partition>`), or a directory to create it
    /// in; for a log-dir spec (one with `partitions`), the log dir.
    #[arg(value_name = "OUTDIR")]
    pub out_dir: Option<PathBuf>,
    /// Print the summary (segments, rolls, aborted transactions, damage) as JSON.
    #[arg(long)]
    pub json: bool,
    /// Read records from standard input, one JSON object per line (key, value, headers,
    /// timestamp; `_hex`/`_base64` variants), instead of a spec: `kseg write --jsonl OUTDIR`.
    #[arg(long)]
    pub jsonl: bool,
    /// No progress bar (one counts the bytes written, on a terminal's standard error).
    #[arg(long, short)]
    pub quiet: bool,
    /// Then tier the partition as the broker's remote log manager does: its closed segments
    /// below the last stable offset copied to this storage root (s3://BUCKET[/PREFIX],
    /// gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX], file:///DIR or a directory) in Kafka's
    /// LocalTieredStorage layout (or --remote-layout aiven), and their records written to
    /// __remote_log_metadata-N beside OUTDIR, N as the broker's partitioner picks it of 50
    /// (settings from AWS_* with AWS_ENDPOINT, GOOGLE_*, AZURE_*).
    #[arg(long, value_name = "URL", conflicts_with_all = ["json", "jsonl"])]
    pub tier_to: Option<String>,
    #[command(flatten)]
    pub tier: TierArgs,
    #[command(flatten)]
    pub stream: Box<JsonlArgs>,
}

/// How `--tier-to` lays the segments out (Aiven's plugin's settings).
#[derive(Debug, Args)]
#[command(next_help_heading = "Options for --tier-to")]
pub struct TierArgs {
    /// The tiered-storage plugin whose layout the objects take.
    #[arg(long, requires = "tier_to", value_name = "LAYOUT", default_value = "local-tiered",
          value_parser = clap::builder::PossibleValuesParser::new(crate::storage::tiered::LAYOUTS))]
    pub remote_layout: String,
    /// aiven: the key prefix (the plugin's key.prefix), glued on as it is.
    #[arg(long, requires = "tier_to", value_name = "PREFIX", default_value = "")]
    pub key_prefix: String,
    /// aiven: the original bytes per chunk of the .log object (the plugin's chunk.size).
    /// [default: 4194304]
    #[arg(long, requires = "tier_to", value_name = "BYTES")]
    pub chunk_size: Option<u32>,
    /// aiven: each chunk a zstd frame (the plugin's compression.enabled).
    #[arg(long, requires = "tier_to")]
    pub chunk_compression: bool,
    /// aiven: encrypt with a data key per segment wrapped by this RSA public key (PEM); ID=
    /// names the key pair (the plugin's encryption.key.pair.id; default: the file's stem).
    #[arg(long, requires = "tier_to", value_name = "[ID=]FILE.pem",
          value_parser = super::args::key_file)]
    pub encrypt_key: Option<(Option<String>, PathBuf)>,
}

impl TierArgs {
    /// The layout to write, its public key read.
    fn layout(&self) -> Result<TierLayout, String> {
        if self.remote_layout != "aiven" {
            if self.key_prefix.is_empty()
                && self.chunk_size.is_none()
                && !self.chunk_compression
                && self.encrypt_key.is_none()
            {
                return Ok(TierLayout::LocalTiered);
            }
            return Err(
                "--key-prefix, --chunk-size, --chunk-compression and --encrypt-key \
                        apply to --remote-layout aiven"
                    .into(),
            );
        }
        let encryption = match &self.encrypt_key {
            None => None,
            Some((id, path)) => {
                let id = id.clone().unwrap_or_else(|| {
                    path.file_stem()
                        .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
                });
                let key = crate::storage::tiered::Aiven::load_public_key(path)
                    .map_err(|e| e.to_string())?;
                Some((id, key))
            }
        };
        Ok(TierLayout::Aiven {
            prefix: self.key_prefix.clone(),
            options: crate::format::aiven::WriteOptions {
                chunk_size: self
                    .chunk_size
                    .unwrap_or(crate::format::aiven::segment::DEFAULT_CHUNK_SIZE),
                compression: self.chunk_compression,
                encryption,
            },
        })
    }
}

/// How `--jsonl` records are batched and the partition configured.
#[derive(Debug, Args)]
#[command(next_help_heading = "Options for --jsonl")]
pub struct JsonlArgs {
    #[arg(long, requires = "jsonl", default_value = "records")]
    pub topic: String,
    #[arg(long, requires = "jsonl", default_value_t = 0)]
    pub partition: i32,
    /// Records per batch (one batch per append).
    #[arg(long, requires = "jsonl", default_value_t = 100, value_name = "N")]
    pub batch_size: usize,
    #[arg(long, requires = "jsonl", default_value = "none",
          value_parser = ["none", "gzip", "snappy", "lz4", "zstd"])]
    pub compression: String,
    #[arg(long, requires = "jsonl", allow_negative_numbers = true)]
    pub compression_level: Option<i32>,
    /// Message format: 0 and 1 are the legacy message sets.
    #[arg(long, requires = "jsonl", default_value_t = 2,
          value_parser = clap::value_parser!(i8).range(0..=2))]
    pub magic: i8,
    #[arg(long, requires = "jsonl", value_parser = ["CreateTime", "LogAppendTime"])]
    pub timestamp_type: Option<String>,
    /// Write as an idempotent producer with this id (sequences continue batch to batch).
    #[arg(long, requires = "jsonl")]
    pub producer_id: Option<i64>,
    #[arg(long, requires = "jsonl")]
    pub producer_epoch: Option<i16>,
    #[arg(long, requires = "jsonl")]
    pub leader_epoch: Option<i32>,
    #[arg(long, requires = "jsonl", value_name = "BYTES")]
    pub segment_bytes: Option<u64>,
    #[arg(long, requires = "jsonl", value_name = "MS")]
    pub segment_ms: Option<i64>,
    #[arg(long, requires = "jsonl", value_name = "BYTES")]
    pub index_interval_bytes: Option<u64>,
    #[arg(long, requires = "jsonl", value_name = "BYTES")]
    pub segment_index_bytes: Option<u64>,
    /// The first offset (the log start offset).
    #[arg(long, requires = "jsonl")]
    pub start_offset: Option<i64>,
    /// The broker clock in ms (default: the reference corpus' 1730000000000).
    #[arg(long, requires = "jsonl", value_name = "MS")]
    pub now_ms: Option<i64>,
    /// The timestamp of the first record that gives none (default: now − 1 h; +1 per record).
    #[arg(long, requires = "jsonl", value_name = "MS")]
    pub start_ts: Option<i64>,
    /// The topic id (base64) for partition.metadata.
    #[arg(long, requires = "jsonl")]
    pub topic_id: Option<String>,
    /// Leave the files as a killed broker would (preallocated indexes, no snapshot).
    #[arg(long, requires = "jsonl")]
    pub crash: bool,
}

impl JsonlArgs {
    /// The spec frame (everything but the records) and the template batch.
    fn frame(&self) -> (Spec, SpecBatch) {
        let frame = Spec {
            topic: self.topic.clone(),
            partition: self.partition,
            topic_id: self.topic_id.clone(),
            now_ms: self.now_ms,
            start_ts: self.start_ts,
            start_offset: self.start_offset,
            producer_id_expiration_ms: None,
            config: SpecConfig {
                segment_bytes: self.segment_bytes,
                segment_ms: self.segment_ms,
                index_interval_bytes: self.index_interval_bytes,
                segment_index_bytes: self.segment_index_bytes,
                magic: Some(self.magic),
                cleanup_policy: None,
                compression: Some(self.compression.clone()),
                compression_level: self.compression_level,
            },
            close: Some(if self.crash {
                SpecClose::Crash
            } else {
                SpecClose::Clean
            }),
            tail_garbage: None,
            ops: Vec::new(),
            damage: Vec::new(),
            source: PathBuf::from("<stdin>"),
        };
        let template = SpecBatch {
            timestamp_type: self.timestamp_type.clone(),
            producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            leader_epoch: self.leader_epoch,
            ..SpecBatch::default()
        };
        (frame, template)
    }
}

/// OUTDIR itself when it carries the partition's name, else `OUTDIR/<topic>-<partition>`.
fn partition_dir(out_dir: &Path, spec: &Spec) -> PathBuf {
    let name = partition_dir_name(&spec.topic, spec.partition);
    if out_dir.file_name().is_some_and(|n| n == name.as_str()) {
        out_dir.to_path_buf()
    } else {
        out_dir.join(name)
    }
}

pub fn run(args: WriteArgs) -> u8 {
    let bar = || Bar::new(args.quiet, "writing", None, Counting::Written);
    let (spec_path, out_dir) = match (args.jsonl, &args.spec, &args.out_dir) {
        (true, Some(out), None) => {
            let (frame, template) = args.stream.frame();
            let dir = partition_dir(out, &frame);
            let mut stdin = std::io::stdin().lock();
            let written = bar()
                .run(|| write_jsonl(&frame, &template, args.stream.batch_size, &mut stdin, &dir));
            return report(written.map(|summary| print_summary(&dir, &summary, args.json)));
        }
        (false, Some(spec), Some(out)) => (spec, out),
        (true, _, _) => {
            return fail(&"with --jsonl, give only OUTDIR (records come from standard input)")
        }
        (false, _, _) => return fail(&"expected SPEC.json and OUTDIR (or --jsonl OUTDIR)"),
    };
    let text = match std::fs::read_to_string(spec_path) {
        Ok(t) => t,
        Err(e) => return fail(&format!("{}: {e}", spec_path.display())),
    };
    let result = match AnySpec::from_json_at(&text, spec_path) {
        Ok(AnySpec::Partition(spec)) => {
            // The tier's options are checked (and its key read) before anything is written.
            let layout = match args
                .tier_to
                .as_ref()
                .map(|_| args.tier.layout())
                .transpose()
            {
                Ok(l) => l,
                Err(e) => return fail(&e),
            };
            let dir = partition_dir(out_dir, &spec);
            let written = bar().run(|| write_spec(&spec, &dir));
            written
                .map(|summary| print_summary(&dir, &summary, args.json))
                .and_then(|()| match (&args.tier_to, &layout) {
                    (Some(url), Some(layout)) => tier_to(&dir, url, &spec, layout),
                    _ => Ok(()),
                })
        }
        Ok(AnySpec::LogDir(spec)) => bar().run(|| write_log_dir(&spec, out_dir)).map(|summary| {
            if args.json {
                crate::cli::render::print_document(&summary.report(out_dir));
            } else {
                for p in &summary.partitions {
                    print_summary(&out_dir.join(&p.topic_partition), p, false);
                }
                crate::cli::render::outln!(
                    "wrote {}: {}",
                    out_dir.display(),
                    summary.files.join(", ")
                );
            }
        }),
        Err(e) => Err(e),
    };
    report(result)
}

/// `--tier-to`: the partition just written, tiered.
fn tier_to(dir: &Path, url: &str, spec: &Spec, layout: &TierLayout) -> crate::Result<()> {
    let topic_id = spec
        .topic_id
        .as_deref()
        .unwrap_or(crate::ops::write::spec::DEFAULT_TOPIC_ID);
    let options = crate::storage::store::RemoteOptions::default();
    let t = tier_as(dir, url, &options, topic_id, layout)?;
    let starts: Vec<i64> = t.segments.iter().map(|s| s.start_offset).collect();
    crate::cli::render::outln!(
        "tiered {} segment(s) below the last stable offset {} to {} ({} layout): start offsets \
         {starts:?}; their records in __remote_log_metadata-{}",
        t.segments.len(),
        t.last_stable_offset,
        t.remote,
        match layout {
            TierLayout::LocalTiered => "local-tiered",
            TierLayout::Aiven { .. } => "aiven",
        },
        t.metadata_partition
    );
    Ok(())
}

fn report(result: crate::Result<()>) -> u8 {
    match result {
        Ok(()) => EXIT_OK,
        Err(e) => fail(&e),
    }
}

fn print_summary(dir: &Path, summary: &WriteSummary, json: bool) {
    if json {
        crate::cli::render::print_document(&summary.report(dir));
        return;
    }
    crate::cli::render::outln!(
        "wrote {}: log end offset {}, {} segment(s) at base offsets {:?}, {} event(s){}",
        dir.display(),
        summary.log_end_offset,
        summary.segments.len(),
        summary.segments,
        summary.events.len(),
        match summary.damage.len() {
            0 => String::new(),
            n => format!(", {n} damage(s)"),
        }
    );
}
