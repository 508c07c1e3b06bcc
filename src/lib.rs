//! kseg: offline reading, verification, repair and writing of Apache Kafka partition directories.
//!
//! Layers, each using only those below it: [`format`] (bytes ⇄ values, no I/O), [`storage`]
//! (the engine: segments, indexes, producer state, leader epochs), `ops` (inspect, check, repair,
//! simulate, write) and `cli`.

pub mod cli;
pub mod error;
pub mod format;
pub mod ops;
pub mod storage;

pub use error::{Error, Result};
