//! `kseg checks [ID]`: what each finding id means, how severe it is and what the broker does
//! about it, from [`crate::ops::catalog`].

use std::io::Write;

use clap::Args;
use serde::Serialize;

use super::render::print_json_or_text;
use super::{fail, EXIT_OK};
use crate::ops::catalog::{self, Check};

#[derive(Debug, Args)]
pub struct ChecksArgs {
    /// One check id (`batch.crc`): only its entry. Default: every check.
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    /// Print JSON: one entry per check id.
    #[arg(long)]
    pub json: bool,
}

/// One check id's entry, for JSON.
#[derive(Debug, Serialize)]
struct Entry {
    id: &'static str,
    severity: &'static str,
    what: &'static str,
    broker: &'static str,
}

#[derive(Debug, Serialize)]
struct Listing {
    checks: Vec<Entry>,
}

pub fn run(args: ChecksArgs) -> u8 {
    let rows: Vec<(&Check, Vec<&'static str>)> = match &args.id {
        None => catalog::CHECKS
            .iter()
            .map(|c| (c, c.ids.to_vec()))
            .collect(),
        Some(id) => match catalog::CHECKS.iter().find_map(|c| {
            let found = c.ids.iter().find(|i| *i == id)?;
            Some((c, vec![*found]))
        }) {
            Some(row) => vec![row],
            None => {
                return fail(&format!(
                    "{id}: not a check id (`kseg checks` lists them all)"
                ))
            }
        },
    };
    let listing = Listing {
        checks: rows
            .iter()
            .flat_map(|(c, ids)| {
                ids.iter().map(|id| Entry {
                    id,
                    severity: c.severity,
                    what: c.what,
                    broker: c.broker,
                })
            })
            .collect(),
    };
    let json = args.json.then_some(&listing);
    if let Err(e) = print_json_or_text(json, |out| print_rows(out, &rows)) {
        return fail(&e);
    }
    EXIT_OK
}

/// Each row: its ids and severity, then what it means and what the broker does (with the
/// ids it shares its meaning with, when one id was asked for).
fn print_rows(out: &mut impl Write, rows: &[(&Check, Vec<&str>)]) -> std::io::Result<()> {
    for (i, (c, ids)) in rows.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(out, "{} ({})", ids.join(", "), c.severity)?;
        if ids.len() < c.ids.len() {
            writeln!(out, "  described with: {}", c.ids.join(", "))?;
        }
        writeln!(out, "  what:   {}", c.what)?;
        writeln!(out, "  broker: {}", c.broker)?;
    }
    Ok(())
}
