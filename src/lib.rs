//! kseg: offline reading, verification, repair and writing of Apache Kafka partition directories.
//!
//! Layers, each using only those below it: [`format`] (bytes ⇄ values), `storage` (the engine),
//! `ops` (dump, verify, repair, …) and `cli`.

pub mod format;
