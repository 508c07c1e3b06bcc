//! `kseg locate OFFSET PATH`: the segment file, byte position and batch holding an offset.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::args::offset;
use super::render::print_json_or_text;
use super::{fail, notice, EXIT_FINDINGS, EXIT_OK};
use crate::ops::inspect::seek::{locate_all, Location};

#[derive(Debug, Args)]
pub struct LocateArgs {
    /// The offset to find.
    #[arg(value_name = "OFFSET", value_parser = offset)]
    pub offset: i64,
    /// A partition directory, a log dir (every partition in it), or a directory of log dirs
    /// (each of them).
    #[arg(value_name = "PATH", required_unless_present = "remote_segment")]
    pub path: Option<PathBuf>,
    /// The remote tier of the partitions named (tiered storage): its segments below the local
    /// log are read with it as one log, as the broker serves it.
    #[command(flatten)]
    pub remote: Option<super::args::RemoteArgs>,
    /// Print JSON instead of one line.
    #[arg(long)]
    pub json: bool,
}

/// One line (or JSON document) per partition: a log dir gives each of its partitions, a
/// directory of log dirs each log dir's. Exit status 1 when no batch holds the offset in any
/// of them (below the first segment, or at or after the log end).
pub fn run(args: LocateArgs) -> u8 {
    let found = match super::per_partition(args.path.as_deref(), args.remote.as_ref(), |p| {
        locate_all(p, args.offset)
    }) {
        Ok(f) => f,
        Err(code) => return code,
    };
    // A partition named itself: its line as it always was; several: each named.
    let named = found.len() > 1
        || found
            .first()
            .is_some_and(|l| Some(&l.dir) != args.path.as_ref());
    for l in &found {
        for f in &l.location.fallbacks {
            notice(f);
        }
        let json = args.json.then_some(l);
        if let Err(e) = print_json_or_text(json, |out| {
            if named {
                write!(out, "{}: ", l.dir.display())?;
            }
            print_location(out, &l.location)
        }) {
            return fail(&e);
        }
    }
    if found.iter().any(|l| l.location.batch.is_some()) {
        EXIT_OK
    } else {
        super::why(&format!(
            "offset {}: no batch holds it in {} partition(s) (below the first segment, or at or after the log end)",
            args.offset,
            found.len()
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
