//! Layer 2: the engine. Files of a partition directory, read and written the way the broker
//! reads and writes them.

pub mod files;
pub mod log_reader;
