//! `kseg write SPEC.json OUTDIR`: builds a partition directory from a spec, as the broker
//! would have written it.

use std::path::{Path, PathBuf};

use clap::Args;

use super::{fail, EXIT_OK};
use crate::format::names::partition_dir_name;
use crate::ops::write::{write_spec, Spec};

#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The spec: the format of the reference corpus' SPEC.json (see README.md).
    #[arg(value_name = "SPEC.json")]
    pub spec: PathBuf,
    /// The partition directory to create (`<topic>-<partition>`), or a directory to create it in.
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
    let spec = match Spec::from_json_at(&text, &args.spec) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let dir = partition_dir(&args.out_dir, &spec);
    match write_spec(&spec, &dir) {
        Ok(summary) => {
            if args.json {
                println!("{}", summary.to_json());
            } else {
                println!(
                    "wrote {}: log end offset {}, {} segment(s) at base offsets {:?}, {} event(s)",
                    dir.display(),
                    summary.log_end_offset,
                    summary.segments.len(),
                    summary.segments,
                    summary.events.len()
                );
            }
            EXIT_OK
        }
        Err(e) => fail(&e),
    }
}
