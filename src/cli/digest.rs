//! `kseg digest PATH`: a SHA-256 of a partition's record stream (see
//! [`crate::ops::check::digest`] for the canonical encoding), per segment with `--segments`.

use std::path::PathBuf;

use clap::Args;

use super::args::offset;
use super::{fail, notice, why, EXIT_FINDINGS, EXIT_OK};
use crate::ops::check::digest::{digest_path, DigestOptions, Digests};

#[derive(Debug, Args)]
#[command(
    after_help = "The digest covers each record's offset, timestamp and timestamp type, \
producer id, epoch and sequence, transactional and control flags, key, value and headers, in \
offset order (the encoding is in docs/compare.md); not segment or batch boundaries, compression or \
CRCs, nor the partition leader epoch unless --with-epochs. Exit status: 0 when every batch \
could be read; 1 when reading stopped at damage (the digest covers the records before it); \
2 on errors. A log dir (or a directory of log dirs) gets a digest per partition and a combined \
one over them (its encoding is in docs/compare.md)."
)]
pub struct DigestArgs {
    /// The partition directory, or a log dir (every partition in it).
    #[arg(value_name = "PATH", required_unless_present = "remote_segment")]
    pub dir: Option<PathBuf>,
    /// The remote tier of the partitions named (tiered storage): its segments below the local
    /// log are read with it as one log, as the broker serves it.
    #[command(flatten)]
    pub remote: Option<super::args::RemoteArgs>,
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
    let dir = match super::args::one_path(args.remote.as_ref(), args.dir.as_deref()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let opts = DigestOptions {
        from_offset: args.from_offset,
        to_offset: args.to_offset,
        with_epochs: args.with_epochs,
        segments: args.segments,
    };
    let report = match digest_path(&dir, &opts) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    match (&report, args.json) {
        (Digests::Partition(r), true) => crate::cli::render::print_document(&r.to_json()),
        (Digests::Partition(r), false) => crate::cli::render::out!("{}", r.render_text()),
        (Digests::LogDirs(l), true) => crate::cli::render::print_document(&l.to_json(&opts)),
        (Digests::LogDirs(l), false) => crate::cli::render::out!("{}", l.render_text()),
    }
    let stopped = report.stopped();
    for st in &stopped {
        notice(&format!(
            "{}: reading stopped at damage at position {}: {}",
            st.file.display(),
            st.position,
            st.message
        ));
    }
    if stopped.is_empty() {
        return EXIT_OK;
    }
    why("the digest covers only the records before the damage");
    EXIT_FINDINGS
}
