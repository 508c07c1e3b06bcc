//! Layer 3: operations built on the engine, one folder per kind of work the user is doing.
//! Each walks the engine and reports what it finds; none parses bytes itself.
//!
//! - [`inspect`]: reading what is there (`dump`, `offsets`, `locate`, `ls`, `groups`,
//!   `coordinator`).
//! - [`check`]: judging it (`verify`).
//! - [`repair`]: changing a partition as the broker's recovery would (`rebuild-index`,
//!   `recover`, for a partition or whole log dirs) and the one crash-safe executor every
//!   `--apply` goes through.
//! - [`simulate`]: what the broker's background work would do (`retention`, `compact`).
//! - [`write`](mod@write): building partition directories (specs, JSON Lines, damage on purpose).
//! - [`export`]: the records as a table for SQL engines (Parquet, Arrow, CSV, JSON Lines).
//!
//! [`finding`] (with [`catalog`], every check id explained), [`input`] (what a path named on
//! the command line holds) and [`partition`] are shared by all of them.

pub mod catalog;
pub mod check;
pub mod export;
pub mod finding;
pub mod human;
pub mod input;
pub mod inspect;
pub mod partition;
pub mod remote;
pub mod repair;
pub mod simulate;
pub mod write;

pub use finding::{Finding, Severity};

/// The version of kseg's JSON vocabulary. Every JSON document kseg prints or writes (a
/// salvage's report; the first line of a JSON Lines stream) starts with `"format":
/// JSON_FORMAT`; renaming or retyping a field means a new version.
pub const JSON_FORMAT: &str = "kseg/3";

/// Serializes Kafka's `-1` for "none" as `null`: in kseg's JSON, absent is `null`, never `-1`
/// (`#[serde(serialize_with = "crate::ops::minus_one_as_null")]`).
pub fn minus_one_as_null<T, S>(v: &T, s: S) -> Result<S::Ok, S::Error>
where
    T: Copy + Into<i64> + serde::Serialize,
    S: serde::Serializer,
{
    if (*v).into() == -1 {
        s.serialize_none()
    } else {
        v.serialize(s)
    }
}
