//! `kseg rebuild-index PATH...`: rebuilds segment indexes from their `.log` as the broker's
//! recovery does; a dry run unless `--apply`.

use std::path::{Path, PathBuf};

use clap::Args;

use super::args::{finish, finish_many, jobs, RepairArgs};
use super::{fail, notice, EXIT_OK};
use crate::error::Work;
use crate::ops::repair::apply::files_changed;
use crate::ops::repair::many::{in_parallel, partitions_for};
use crate::ops::repair::rebuild_index::{plan, RebuildOptions};

#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when no index needs rebuilding or --apply succeeded; \
1 when a dry run found indexes to rebuild (the plan is printed); 2 on errors, including a log \
directory locked by a running broker."
)]
pub struct RebuildIndexArgs {
    /// Segment files (`.log` or one of its indexes), partition directories, or log dirs
    /// (every partition directory in them the broker loads).
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Partitions of log dirs planned at once (default: the number of CPUs).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Rebuild every index, even those that look sound (missing, partial, out-of-order,
    /// untrimmed or out-of-range indexes are always rebuilt).
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub repair: RepairArgs,
}

pub fn run(mut args: RebuildIndexArgs) -> u8 {
    args.paths = match super::log_dirs_named(&args.paths, args.repair.apply) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let opts = RebuildOptions {
        config: args.repair.config(),
        all: args.all,
        now_ms: args.repair.now_ms(),
        producer_id_expiration_ms: args.repair.producer_id_expiration_ms,
    };
    let (targets, skipped) = partitions_for(&args.paths, Work::Recovery);
    for (d, why) in &skipped {
        notice(&format!("{}: left out: {why}", d.display()));
    }
    // Before anything the plan depends on is read; held until the command ends.
    let _locks = match args.repair.lock(&targets) {
        Ok(l) => l,
        Err(e) => return fail(&e),
    };
    // Paths of one partition stay together (segment files of one directory are one plan).
    let expanded = targets != args.paths;
    let groups: Vec<Vec<PathBuf>> = if expanded {
        targets.into_iter().map(|t| vec![t]).collect()
    } else {
        vec![targets]
    };
    let mut code = EXIT_OK;
    let mut plans = Vec::new();
    let results = args
        .repair
        .progress("reading")
        .run(|| in_parallel(&groups, jobs(args.jobs), |g| plan(g, &opts)));
    for result in results {
        match result {
            Ok(p) => plans.extend(p),
            Err(e) => code = code.max(fail(&e)),
        }
    }
    let files: usize = plans.iter().map(|p| files_changed(&p.changes)).sum();
    for p in &plans {
        if args.repair.json {
            crate::cli::render::print_document(&p.to_json());
        } else {
            crate::cli::render::out!("{}", p.render_text(args.repair.verbose));
        }
        if !expanded {
            super::args::note_space(&args.repair, &[(&p.dir, &p.changes)]);
            code = code.max(finish(
                files_changed(&p.changes),
                &args.repair,
                &p.dir,
                |o| p.apply(o),
            ));
        }
    }
    if !expanded {
        return code;
    }
    let applies: Vec<_> = plans
        .iter()
        .map(|p| (p.dir.as_path(), p.changes.as_slice()))
        .collect();
    super::args::note_space(&args.repair, &applies);
    let changing: Vec<&Path> = plans
        .iter()
        .filter(|p| !p.changes.is_empty())
        .map(|p| p.dir.as_path())
        .collect();
    finish_many(
        code,
        (plans.len(), &changing, files),
        &args.repair,
        |dir, o| match plans.iter().find(|p| p.dir == dir) {
            Some(p) => p.apply(o),
            None => Ok(None),
        },
    )
}
