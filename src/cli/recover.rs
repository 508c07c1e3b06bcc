//! `kseg recover PATH...`: offline what the broker does on an unclean restart, then a clean
//! close, for partition directories or whole log dirs; a dry run unless `--apply`.

use std::path::{Path, PathBuf};

use clap::Args;

use super::args::{finish, finish_many, jobs, offset, save_salvage, RepairArgs};
use super::render::line;
use super::{fail, notice, EXIT_OK};
use crate::error::Work;
use crate::ops::finding::{count_by_check, Severity};
use crate::ops::repair::apply::files_changed;
use crate::ops::repair::housekeeping::ChangeClass;
use crate::ops::repair::many::{
    bytes_to_recover, in_parallel, partitions_for, Estimate, PartitionEstimate,
};
use crate::ops::repair::recover::{plan, RecoverOptions, RecoverPlan};

#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when nothing is damaged (housekeeping every start-up of the broker does is \
listed, and made by --apply) or --apply succeeded; 1 when a dry run found damage to repair (the \
plans are printed); 2 on errors, including a log \
directory locked by a running broker. For log dirs, an estimate of what the broker's own \
start-up after an unclean shutdown would recover comes first."
)]
pub struct RecoverArgs {
    /// Partition directories (`<topic>-<partition>`) or log dirs (every partition directory in
    /// them the broker recovers; `-delete` directories are left out).
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Recover from the segment holding this offset (default: the log dir's
    /// recovery-point-offset-checkpoint entry, else the start of the log).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = offset)]
    pub recovery_point: Option<i64>,
    /// Before anything is dropped, save every valid batch recovery would drop (found past the
    /// damage, as `dump` finds them) to DIR, as `kseg salvage --out DIR` does; written in a
    /// dry run too, and before `--apply` changes anything.
    #[arg(long, value_name = "DIR")]
    pub salvage: Option<PathBuf>,
    /// Partitions planned at once (default: the number of CPUs).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Also say what `verify --deep` will still report once the plan is carried out (damage
    /// the broker's recovery keeps): a deep read of each whole partition, where the plan
    /// itself reads only what lies past the recovery point.
    #[arg(long)]
    pub remains: bool,
    #[command(flatten)]
    pub repair: RepairArgs,
}

/// What the plan's reader should know beside it, on stderr: a recovery point past the log end,
/// a log start nothing records.
fn notes(plan: &RecoverPlan) {
    if let Some(note) = plan.unrecorded_log_start() {
        notice(&note);
    }
    if let Some(log_end) = plan.clamped_recovery_point() {
        crate::cli::errln!(
            "note: {}: the recovery point {} ({}) is past the log end offset {log_end}; as the broker \
             does with a checkpointed recovery point past the log end, the log end is taken",
            plan.dir.display(),
            plan.recovery_point,
            plan.recovery_point_source
        );
    }
}

/// What `verify --deep` still reports once the plan is carried out: damage the broker's
/// recovery keeps, for `salvage`, a re-produce or a decision by hand.
fn remains_text(plan: &RecoverPlan) -> String {
    match &plan.remains {
        None => String::new(),
        Some(Ok(found)) if found.is_empty() => {
            "remains after recovery: nothing verify --deep reports\n".to_string()
        }
        Some(Ok(found)) => {
            let errors = found
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .count();
            let mut out = format!(
                "remains after recovery: verify --deep will still report {errors} error(s), {} warning(s) that the broker's recovery keeps too (`kseg salvage`, a re-produce or a decision by hand): {}\n",
                found.len() - errors,
                count_by_check(found.iter().map(|f| f.check))
            );
            for f in found {
                out.push_str(&format!("  {}\n", line(f)));
            }
            out
        }
        Some(Err(e)) => format!("remains after recovery: could not be checked: {e}\n"),
    }
}

/// A dry run whose plans hold housekeeping only: nothing is damaged, exit status 0; what
/// `--apply` would still do is said on stderr.
fn housekeeping_only(files: usize) -> u8 {
    if files > 0 {
        notice(&format!(
            "nothing damaged; {files} file(s) would change as every start-up of the broker changes them (--apply makes these changes)"
        ));
    }
    EXIT_OK
}

pub fn run(mut args: RecoverArgs) -> u8 {
    args.paths = match super::log_dirs_named(&args.paths, args.repair.apply) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let opts = RecoverOptions {
        config: args.repair.config(),
        now_ms: args.repair.now_ms(),
        recovery_point: args.recovery_point,
        producer_id_expiration_ms: args.repair.producer_id_expiration_ms,
    };
    let (dirs, skipped) = partitions_for(&args.paths, Work::Recovery);
    for (d, why) in &skipped {
        notice(&format!("{}: left out: {why}", d.display()));
    }
    // Before anything the plan depends on is read; held until the command ends.
    let _locks = match args.repair.lock(&dirs) {
        Ok(l) => l,
        Err(e) => return fail(&e),
    };
    // One partition named: the plan alone, as it always was.
    if let [dir] = dirs.as_slice() {
        if args.paths.len() == 1 && args.paths[0] == *dir {
            let planned = args.repair.progress("recovering").run(|| {
                let mut plan = plan(dir, &opts).map_err(|e| fail(&e))?;
                if args.remains {
                    plan.check_remains();
                }
                if let Some(out) = &args.salvage {
                    save_salvage(&plan, &opts, out)?;
                }
                Ok(plan)
            });
            let plan = match planned {
                Ok(p) => p,
                Err(code) => return code,
            };
            if args.repair.json {
                crate::cli::render::print_document(&plan.to_json());
            } else {
                crate::cli::render::out!(
                    "{}{}",
                    plan.render_text(args.repair.verbose),
                    remains_text(&plan)
                );
            }
            notes(&plan);
            super::args::note_space(&args.repair, &[(dir, &plan.changes)]);
            if !args.repair.apply && plan.count(ChangeClass::Damage) == 0 {
                return housekeeping_only(files_changed(&plan.changes));
            }
            return finish(files_changed(&plan.changes), &args.repair, dir, |o| {
                plan.apply(o)
            });
        }
    }
    if dirs.is_empty() {
        return fail(&"no partition directory to recover in the paths given");
    }
    if args.salvage.is_some() {
        return fail(
            &"--salvage takes one partition directory: a salvage is a partition of its own",
        );
    }
    let results = args.repair.progress("recovering").run(|| {
        in_parallel(&dirs, jobs(args.jobs), |d| {
            plan(d, &opts).map(|mut p| {
                if args.remains {
                    p.check_remains();
                }
                p
            })
        })
    });
    let mut code = EXIT_OK;
    let mut plans = Vec::new();
    let mut shares = Vec::new();
    for (dir, result) in dirs.iter().zip(results) {
        let plan = match result {
            Ok(p) => p,
            Err(e) => {
                code = code.max(fail(&e));
                continue;
            }
        };
        let recovery_point = plan.report.recovery_point;
        match bytes_to_recover(dir, recovery_point) {
            Ok(bytes) => shares.push((
                PartitionEstimate {
                    dir: dir.clone(),
                    recovery_point,
                    recovery_point_source: plan.recovery_point_source,
                    bytes_to_recover: bytes,
                },
                plan.load_time,
            )),
            Err(e) => code = code.max(fail(&e)),
        }
        notes(&plan);
        plans.push(plan);
    }
    if plans.is_empty() {
        return code;
    }
    let estimate = Estimate::new(shares);
    let files: usize = plans.iter().map(|p| files_changed(&p.changes)).sum();
    if args.repair.json {
        let doc = serde_json::json!({
            "estimate": estimate,
            "plans": plans.iter().map(RecoverPlan::to_json).collect::<Vec<_>>(),
            "partitionCount": plans.len(),
            "changingPartitionCount": plans.iter().filter(|p| !p.is_empty()).count(),
            "changingFileCount": files,
        });
        crate::cli::render::print_document(&doc);
    } else {
        crate::cli::render::out!("{}", estimate.render_text());
        for p in &plans {
            crate::cli::render::out!("{}{}", p.render_text(args.repair.verbose), remains_text(p));
        }
    }
    // Partition by partition, each through the crash-safe executor with its own backup. The
    // log dir's checkpoint files are rewritten whole by each partition's plan, so each is
    // planned again just before it is applied, over what the previous ones left.
    let applies: Vec<_> = plans
        .iter()
        .map(|p| (p.dir.as_path(), p.changes.as_slice()))
        .collect();
    super::args::note_space(&args.repair, &applies);
    let changing_dirs: Vec<&Path> = plans
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| p.dir.as_path())
        .collect();
    if !args.repair.apply && plans.iter().all(|p| p.count(ChangeClass::Damage) == 0) {
        if !args.repair.json {
            crate::cli::render::outln!(
                "total: {} partition(s), {} with changes, {files} file(s) change",
                plans.len(),
                changing_dirs.len()
            );
        }
        return code.max(housekeeping_only(files));
    }
    finish_many(
        code,
        (plans.len(), &changing_dirs, files),
        &args.repair,
        |dir, o| {
            let plan = args.repair.progress("recovering").run(|| plan(dir, &opts));
            plan.and_then(|p| p.apply(o))
        },
    )
}
