//! Layer 3: operations built on the engine. Each walks the engine and reports what it finds;
//! none parses bytes itself.

pub mod dump;
pub mod finding;
pub mod verify;
pub mod write;

pub use finding::{Finding, Severity};
