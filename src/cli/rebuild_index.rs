//! `kseg rebuild-index PATH...`: rebuilds segment indexes from their `.log` as the broker's
//! recovery does; a dry run unless `--apply`.

use std::path::PathBuf;

use clap::Args;

use super::args::{finish, RepairArgs};
use super::render::document;
use super::{fail, EXIT_OK};
use crate::ops::repair::apply::files_changed;
use crate::ops::repair::rebuild_index::{plan, RebuildOptions};

#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when no index needs rebuilding or --apply succeeded; \
1 when a dry run found indexes to rebuild (the plan is printed); 2 on errors, including a log \
directory locked by a running broker."
)]
pub struct RebuildIndexArgs {
    /// Segment files (`.log` or one of its indexes) or partition directories.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Rebuild every index, even those that look sound (missing, partial, out-of-order,
    /// untrimmed or out-of-range indexes are always rebuilt).
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub repair: RepairArgs,
}

pub fn run(args: RebuildIndexArgs) -> u8 {
    let opts = RebuildOptions {
        config: args.repair.config(),
        all: args.all,
        now_ms: args.repair.now_ms(),
        producer_id_expiration_ms: args.repair.producer_id_expiration_ms,
    };
    let plans = match plan(&args.paths, &opts) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let mut code = EXIT_OK;
    for p in &plans {
        if args.repair.json {
            println!("{}", document(&p.to_json()));
        } else {
            print!("{}", p.render_text());
        }
        code = code.max(finish(
            files_changed(&p.changes),
            &args.repair,
            &p.dir,
            |o| p.apply(o),
        ));
    }
    code
}
