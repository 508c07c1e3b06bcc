//! Inspecting what a partition holds, file by file: `dump`.

pub mod dump;
