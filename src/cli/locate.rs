//! `kseg locate OFFSET PATH`: the segment file, byte position and batch holding an offset.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::args::offset;
use super::render::print_json_or_text;
use super::{fail, notice, EXIT_FINDINGS, EXIT_OK};
use crate::ops::inspect::seek::{locate, Location};

#[derive(Debug, Args)]
pub struct LocateArgs {
    /// The offset to find.
    #[arg(value_name = "OFFSET", value_parser = offset)]
    pub offset: i64,
    /// The partition directory.
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
    /// The remote tier of the partitions named (tiered storage): its segments below the local
    /// log are read with it as one log, as the broker serves it.
    #[command(flatten)]
    pub remote: Option<super::args::RemoteArgs>,
    /// Print JSON instead of one line.
    #[arg(long)]
    pub json: bool,
}

/// Exit status 1 when no batch holds the offset (below the first segment, or at or after the
/// log end).
pub fn run(args: LocateArgs) -> u8 {
    if let Err(code) =
        super::args::show_remote(args.remote.as_ref(), std::slice::from_ref(&args.path))
    {
        return code;
    }
    let loc = match locate(&args.path, args.offset) {
        Ok(l) => l,
        Err(e) => return fail(&e),
    };
    for f in &loc.fallbacks {
        notice(f);
    }
    let json = args.json.then_some(&loc);
    if let Err(e) = print_json_or_text(json, |out| print_location(out, &loc)) {
        return fail(&e);
    }
    if loc.batch.is_some() {
        EXIT_OK
    } else {
        super::why(&format!(
            "offset {}: no batch holds it (below the first segment, or at or after the log end)",
            args.offset
        ));
        EXIT_FINDINGS
    }
}

fn print_location(out: &mut impl Write, l: &Location) -> std::io::Result<()> {
    let Some(b) = &l.batch else {
        return writeln!(
            out,
            "offset {}: no batch holds it (below the first segment, or at or after the log end)",
            l.offset
        );
    };
    let file = b.log.file_name().map_or_else(
        || b.log.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let via = match b.index_entry {
        Some(e) => format!("index entry (offset {}, position {})", e.offset, e.position),
        None => "a scan of the segment (no usable index)".to_owned(),
    };
    let gap = if b.first_offset > l.offset && b.last_offset >= l.offset {
        " (the next batch: the offset is in a gap)"
    } else {
        ""
    };
    writeln!(
        out,
        "offset {}: {file} position {} size {} batch {}..{}{gap} via {via}, {} of log read",
        l.offset,
        b.position,
        b.size,
        b.first_offset,
        b.last_offset,
        super::render::size(l.log_bytes_read)
    )
}
