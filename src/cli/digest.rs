//! `kseg digest PATH`: a SHA-256 of a partition's record stream (see
//! [`crate::ops::check::digest`] for the canonical encoding), per segment with `--segments`.

use std::path::PathBuf;

use clap::Args;

use super::args::offset;
use super::{fail, notice, why, EXIT_FINDINGS, EXIT_OK};
use crate::ops::check::digest::{digest, DigestOptions};

#[derive(Debug, Args)]
#[command(
    after_help = "The digest covers each record's offset, timestamp and timestamp type, \
producer id, epoch and sequence, transactional and control flags, key, value and headers, in \
offset order (the encoding is in docs/compare.md); not segment or batch boundaries, compression or \
CRCs, nor the partition leader epoch unless --with-epochs. Exit status: 0 when every batch \
could be read; 1 when reading stopped at damage (the digest covers the records before it); \
2 on errors."
)]
pub struct DigestArgs {
    /// The partition directory.
    #[arg(value_name = "PATH")]
    pub dir: PathBuf,
    /// First offset to hash (inclusive).
    #[arg(long, value_name = "N", value_parser = offset)]
    pub from_offset: Option<i64>,
    /// Last offset to hash (inclusive).
    #[arg(long, value_name = "N", value_parser = offset)]
    pub to_offset: Option<i64>,
    /// Hash each batch's partition leader epoch too.
    #[arg(long)]
    pub with_epochs: bool,
    /// Print a digest per segment as well.
    #[arg(long)]
    pub segments: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: DigestArgs) -> u8 {
    let opts = DigestOptions {
        from_offset: args.from_offset,
        to_offset: args.to_offset,
        with_epochs: args.with_epochs,
        segments: args.segments,
    };
    let report = match digest(&args.dir, &opts) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    if args.json {
        crate::cli::render::print_document(&report.to_json());
    } else {
        crate::cli::render::out!("{}", report.render_text());
    }
    match &report.stopped {
        Some(st) => {
            notice(&format!(
                "{}: reading stopped at damage at position {}: {}",
                st.file.display(),
                st.position,
                st.message
            ));
            why("the digest covers only the records before the damage");
            EXIT_FINDINGS
        }
        None => EXIT_OK,
    }
}
