//! Checking files, partitions and log dirs for damage (`verify`), and comparing replicas
//! (`diff`, `digest`) over one stream of a partition's batches ([`stream`]).

pub mod diff;
pub mod digest;
pub mod stream;
pub mod verify;
