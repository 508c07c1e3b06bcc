//! `kseg recover PATH`: offline what the broker does on an unclean restart, then a clean
//! close; a dry run unless `--apply`.

use std::path::PathBuf;

use clap::Args;

use super::args::{finish, offset, RepairArgs};
use super::fail;
use super::render::document;
use crate::ops::repair::apply::files_changed;
use crate::ops::repair::recover::{plan, RecoverOptions};

#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when nothing needs to change or --apply succeeded; \
1 when a dry run found changes to make (the plan is printed); 2 on errors, including a log \
directory locked by a running broker."
)]
pub struct RecoverArgs {
    /// The partition directory (`<topic>-<partition>`).
    #[arg(value_name = "PATH")]
    pub dir: PathBuf,
    /// Recover from the segment holding this offset (default: the log dir's
    /// recovery-point-offset-checkpoint entry, else the start of the log).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = offset)]
    pub recovery_point: Option<i64>,
    /// Before anything is dropped, save every valid batch recovery would drop (found past the
    /// damage, as `dump` finds them) to DIR, as `kseg salvage --out DIR` does; written in a
    /// dry run too, and before `--apply` changes anything.
    #[arg(long, value_name = "DIR")]
    pub salvage: Option<PathBuf>,
    #[command(flatten)]
    pub repair: RepairArgs,
}

pub fn run(args: RecoverArgs) -> u8 {
    let opts = RecoverOptions {
        config: args.repair.config(),
        now_ms: args.repair.now_ms(),
        recovery_point: args.recovery_point,
        producer_id_expiration_ms: args.repair.producer_id_expiration_ms,
    };
    let plan = match plan(&args.dir, &opts) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    if let Some(out) = &args.salvage {
        if let Err(code) = super::salvage::save(&plan, &opts, out) {
            return code;
        }
    }
    if args.repair.json {
        println!("{}", document(&plan.to_json()));
    } else {
        print!("{}", plan.render_text());
    }
    if let Some(log_end) = plan.clamped_recovery_point() {
        eprintln!(
            "note: the recovery point {} ({}) is past the log end offset {log_end}; as the broker \
             does with a checkpointed recovery point past the log end, the log end is taken",
            plan.recovery_point, plan.recovery_point_source
        );
    }
    finish(files_changed(&plan.changes), &args.repair, &args.dir, |o| {
        plan.apply(o)
    })
}
