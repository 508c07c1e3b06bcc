//! Layer 3: operations on partition directories, each walking the engine.

pub mod write;
