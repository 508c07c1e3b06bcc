//! Inspecting what a partition holds: file by file (`dump`), straight at an offset or a
//! time (`offsets`, `locate`), counted (`stats`), or its transactions (`txns`); what a log dir
//! holds from its metadata (`ls`); consumer groups rebuilt from `__consumer_offsets` (`groups`,
//! over [`records`]); where a group or a transactional id lives (`coordinator`).

pub mod coordinator;
pub mod dump;
pub mod groups;
pub mod ls;
pub mod metadata;
pub mod records;
pub mod seek;
pub mod stats;
pub mod txns;
