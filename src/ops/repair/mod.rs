//! Repairs planned on a scratch copy, as the broker's recovery would make them (`rebuild_index`,
//! `recover`; [`many`] for whole log dirs), [`salvage`] of the valid batches a recovery would
//! drop, and [`apply`], the one crash-safe executor every `--apply` goes through (repairs and
//! simulations alike).

pub mod apply;
pub mod dropped;
pub mod log_dir;
pub mod many;
pub mod rebuild_index;
pub mod recover;
pub mod salvage;
