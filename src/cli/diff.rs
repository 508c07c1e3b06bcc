//! `kseg diff A B`: where two replicas of one partition diverge, by the broker's follower
//! truncation and by their batches, and what only one of them has.

use std::path::PathBuf;

use clap::Args;

use super::{fail, notice, why, EXIT_FINDINGS, EXIT_OK};
use crate::ops::check::diff::diff;

#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when the two are logically identical (the same batches above \
the same log start offset, the same producer state and aborted transactions; segment \
boundaries do not matter); 1 when they diverge; 2 on errors."
)]
pub struct DiffArgs {
    /// One replica's partition directory.
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The other replica's partition directory (the same topic-partition).
    #[arg(value_name = "B")]
    pub b: PathBuf,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: DiffArgs) -> u8 {
    let report = match diff(&args.a, &args.b) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    for s in [&report.a, &report.b] {
        if let Some(st) = &s.stopped {
            notice(&format!(
                "{}: compared up to damage at position {}: {}",
                st.file.display(),
                st.position,
                st.message
            ));
        }
    }
    if args.json {
        crate::cli::render::print_document(&report.to_json());
    } else {
        crate::cli::render::out!("{}", report.render_text());
    }
    if report.identical() {
        EXIT_OK
    } else {
        match &report.first_difference {
            Some(d) => why(&format!(
                "the replicas diverge: batches first differ at offset {} ({})",
                d.offset, d.kind
            )),
            None => why("the replicas differ"),
        }
        EXIT_FINDINGS
    }
}
