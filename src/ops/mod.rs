//! Layer 3: operations built on the engine. Each walks the engine and reports what it finds;
//! none parses bytes itself.

pub mod apply;
pub mod dump;
pub mod finding;
pub mod rebuild_index;
pub mod recover;
pub mod verify;
pub mod write;

pub use finding::{Finding, Severity};
