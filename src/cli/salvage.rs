//! `kseg salvage PATH --out DIR`: saves the valid batches a recovery of PATH would drop into a
//! partition directory of their own, with a report; PATH is only read. `recover --salvage DIR`
//! does the same before it applies.

use std::path::PathBuf;

use clap::Args;

use super::args::{offset, parse_now, save_salvage};
use super::{fail, EXIT_FINDINGS, EXIT_OK};
use crate::ops::repair::recover::{plan, RecoverOptions};
use crate::storage::producer_state::DEFAULT_PRODUCER_ID_EXPIRATION_MS;
use crate::storage::LogConfig;

#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when recovery drops nothing; 1 when it drops bytes (the \
valid batches among them are saved, the rest listed in the report); 2 on errors."
)]
pub struct SalvageArgs {
    /// The partition directory (`<topic>-<partition>`), only read.
    #[arg(value_name = "PATH")]
    pub dir: PathBuf,
    /// Where to write (absent or empty, outside the log dir): `DIR/<partition>/`, the
    /// salvaged partition directory, and `DIR/salvage.json`, the report.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Recovery from the segment holding this offset (default: the log dir's
    /// recovery-point-offset-checkpoint entry, else the start of the log).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = offset)]
    pub recovery_point: Option<i64>,
    /// The broker clock (epoch milliseconds or RFC 3339). Default: now.
    #[arg(long, value_name = "MS|RFC3339", value_parser = parse_now)]
    pub now: Option<i64>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: SalvageArgs) -> u8 {
    let opts = RecoverOptions {
        config: LogConfig::default(),
        now_ms: args.now.unwrap_or_else(super::args::wall_clock_ms),
        recovery_point: args.recovery_point,
        producer_id_expiration_ms: DEFAULT_PRODUCER_ID_EXPIRATION_MS,
    };
    let plan = match plan(&args.dir, &opts) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    match save_salvage(&plan, &opts, &args.out) {
        Ok(report) => {
            if args.json {
                crate::cli::render::outln!("{}", report.to_json());
            } else {
                crate::cli::render::out!("{}", report.render_text());
            }
            if report.dropped_bytes == 0 {
                EXIT_OK
            } else {
                EXIT_FINDINGS
            }
        }
        Err(code) => code,
    }
}
