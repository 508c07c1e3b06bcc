//! `kseg write SPEC.json OUTDIR`: builds a partition directory from a spec, as the broker
//! would have written it.

use std::path::{Path, PathBuf};

use clap::Args;

use super::{fail, EXIT_OK};
use crate::format::names::partition_dir_name;
use crate::ops::write::{write_log_dir, write_spec, AnySpec, Spec, WriteSummary};

#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The spec: the format of the reference corpus' SPEC.json (see README.md).
    #[arg(value_name = "SPEC.json")]
    pub spec: PathBuf,
    /// The partition directory to create (`<topic>-<partition>`), or a directory to create it
    /// in; for a log-dir spec (one with `partitions`), the log dir.
    #[arg(value_name = "OUTDIR")]
    pub out_dir: PathBuf,
    /// Print the summary (segments, rolls, aborted transactions) as JSON.
    #[arg(long)]
    pub json: bool,
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
    let text = match std::fs::read_to_string(&args.spec) {
        Ok(t) => t,
        Err(e) => return fail(&format!("{}: {e}", args.spec.display())),
    };
    let result = match AnySpec::from_json_at(&text, &args.spec) {
        Ok(AnySpec::Partition(spec)) => {
            let dir = partition_dir(&args.out_dir, &spec);
            write_spec(&spec, &dir).map(|summary| {
                if args.json {
                    println!("{}", summary.to_json());
                } else {
                    print_summary(&dir, &summary);
                }
            })
        }
        Ok(AnySpec::LogDir(spec)) => write_log_dir(&spec, &args.out_dir).map(|summary| {
            if args.json {
                println!("{}", summary.to_json());
            } else {
                for p in &summary.partitions {
                    print_summary(&args.out_dir.join(&p.topic_partition), p);
                }
                println!(
                    "wrote {}: {}",
                    args.out_dir.display(),
                    summary.files.join(", ")
                );
            }
        }),
        Err(e) => Err(e),
    };
    match result {
        Ok(()) => EXIT_OK,
        Err(e) => fail(&e),
    }
}

fn print_summary(dir: &Path, summary: &WriteSummary) {
    println!(
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
