//! Checking files, partitions and log dirs for damage: `verify`.

pub mod diff;
pub mod stream;
pub mod verify;
