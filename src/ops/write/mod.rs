//! Building partition directories through the engine: from a spec ([`spec`]), a stream of
//! JSON Lines records ([`jsonl`]) or a log-dir spec ([`log_dir`]), with damage applied on
//! purpose afterwards ([`damage`]). Every write is all or nothing ([`all_or_nothing`]).

pub mod damage;
pub mod jsonl;
mod kraft;
pub mod log_dir;
pub mod spec;

use std::path::Path;

use crate::error::Result;

pub(crate) use crate::storage::files::Outside;

/// Builds the directory `out_dir` (absent or empty) for `command` all or nothing, in a
/// staging directory beside it ([`crate::storage::files::build_dir`]).
pub(crate) fn all_or_nothing<T>(
    command: &str,
    out_dir: &Path,
    build: impl FnOnce(&Path) -> Result<T>,
) -> Result<T> {
    crate::storage::files::build_dir(command, out_dir, |tmp, _| build(tmp))
}
