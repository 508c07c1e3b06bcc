//! `kseg offsets PATH`: the offline ListOffsets answer, per partition.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::args::parse_now;
use super::render::print_json_or_text;
use super::time::{TimeArgs, TimeFormat};
use super::{fail, notice, EXIT_OK};
use crate::ops::inspect::seek::{partition_offsets, OffsetQuery, OffsetsAnswer};

#[derive(Debug, Args)]
pub struct OffsetsArgs {
    /// A partition directory, a log dir (every partition in it), or a directory of log dirs
    /// (each of them).
    #[arg(value_name = "PATH", required_unless_present = "remote_segment")]
    pub path: Option<PathBuf>,
    /// The remote tier of the partitions named (tiered storage): its segments below the local
    /// log are read with it as one log, as the broker serves it.
    #[command(flatten)]
    pub remote: Option<super::args::RemoteArgs>,
    /// `earliest` (the log start offset), `latest` (the log end offset), `max-timestamp` (the
    /// record with the largest timestamp; -1, -2, -3 as kafka-get-offsets.sh), or a time (the
    /// first offset whose timestamp is at or after it, as the broker searches): epoch ms,
    /// RFC 3339, a local date-time (`2016-11-18 08:05`, `2016-11-18`) or relative (`-1h`).
    #[arg(long, value_name = "earliest|latest|max-timestamp|T", default_value = "latest",
          value_parser = parse_query, allow_hyphen_values = true)]
    pub time: OffsetQuery,
    /// Print JSON (one document; `partitions`: one object each) instead of one line each.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub time_format: TimeArgs,
}

fn parse_query(s: &str) -> Result<OffsetQuery, String> {
    Ok(match s {
        // Kafka's ListOffsets sentinels, as kafka-get-offsets.sh --time takes them.
        "earliest" | "-2" => OffsetQuery::Earliest,
        "latest" | "-1" => OffsetQuery::Latest,
        "max-timestamp" | "-3" => OffsetQuery::MaxTimestamp,
        t => OffsetQuery::Timestamp(parse_now(t)?),
    })
}

pub fn run(args: OffsetsArgs) -> u8 {
    // A directory of log dirs: each of them, said on stderr.
    let answers = match super::per_partition(args.path.as_deref(), args.remote.as_ref(), |p| {
        partition_offsets(p, args.time)
    }) {
        Ok(a) => a,
        Err(code) => return code,
    };
    for a in &answers {
        for f in &a.fallbacks {
            notice(f);
        }
    }
    let json = args
        .json
        .then(|| serde_json::json!({ "partitions": answers }));
    if let Err(e) = print_json_or_text(json.as_ref(), |out| {
        answers
            .iter()
            .try_for_each(|a| print_answer(out, a, args.time_format.time_format))
    }) {
        return fail(&e);
    }
    EXIT_OK
}

fn print_answer(out: &mut impl Write, a: &OffsetsAnswer, tf: TimeFormat) -> std::io::Result<()> {
    let name = a.dir.file_name().map_or_else(
        || a.dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let offset = a.offset.map_or("none".to_owned(), |o| o.to_string());
    let epoch = a.leader_epoch.map_or("none".to_owned(), |e| e.to_string());
    writeln!(
        out,
        "{name} offset={offset} timestamp={} leaderEpoch={epoch}",
        tf.show(a.timestamp)
    )
}
