//! Inspecting what a partition holds: file by file (`dump`), or straight at an offset or a
//! time (`offsets`, `locate`).

pub mod coordinator;
pub mod dump;
pub mod groups;
pub mod ls;
pub mod records;
pub mod seek;
