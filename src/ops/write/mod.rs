//! Building partition directories through the engine: from a spec ([`spec`]), a stream of
//! JSON Lines records ([`jsonl`]) or a log-dir spec ([`log_dir`]), with damage applied on
//! purpose afterwards ([`damage`]).

pub mod damage;
pub mod jsonl;
pub mod log_dir;
pub mod spec;
