//! Inspecting what a partition holds: file by file (`dump`), straight at an offset or a
//! time (`offsets`, `locate`), counted (`stats`), or its transactions (`txns`).

pub mod dump;
pub mod seek;
pub mod stats;
pub mod txns;
