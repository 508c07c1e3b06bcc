//! Repairs planned on a scratch copy, as the broker's recovery would make them (`rebuild_index`,
//! `recover`; [`many`] for whole log dirs), [`salvage`] of the valid batches a recovery would
//! drop, and [`apply`], the one crash-safe executor every `--apply` goes through (repairs and
//! simulations alike).

pub mod apply;
pub mod dropped;
pub mod housekeeping;
pub mod log_dir;
pub mod many;
pub mod rebuild_index;
pub mod recover;
pub mod salvage;

use std::path::{Path, PathBuf};

/// The partition directory as the user named it, read as a prefix of the paths in a plan's
/// words: `orders-0/` and `./` without their trailing `/`, so a staged path `<work>/x` reads
/// `orders-0/x` and `./x`.
fn as_prefix(dir: &Path) -> PathBuf {
    dir.components().collect()
}

/// `text` with every path under the staged directory `work` read as under `dir`.
pub(crate) fn rebase_text(text: &str, work: &Path, dir: &Path) -> String {
    let (from, to) = (
        work.display().to_string(),
        as_prefix(dir).display().to_string(),
    );
    text.replace(&from, &to)
}

/// [`rebase_text`] on JSON text, where the paths appear as JSON strings.
pub(crate) fn rebase_json(text: &str, work: &Path, dir: &Path) -> String {
    // Escaped as every path in kseg's JSON is (format::os_path).
    let quoted = |p: &Path| {
        serde_json::to_string(&crate::format::os_path::escaped(p))
            .unwrap_or_else(|_| p.display().to_string())
    };
    let (from, to) = (quoted(work), quoted(&as_prefix(dir)));
    text.replace(from.trim_matches('"'), to.trim_matches('"'))
}
