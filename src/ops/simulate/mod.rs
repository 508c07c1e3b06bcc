//! What the broker's background work would do to a partition, planned from a read-only view of
//! it: `retention` (segment deletion) and `compact` (one round of the log cleaner).

pub mod compact;
pub mod retention;
