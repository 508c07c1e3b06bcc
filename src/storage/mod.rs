//! Layer 2: the engine. Files of a partition directory, read and written the way the broker
//! reads and writes them: one type per on-disk concern, each owning its files.

pub mod files;
pub mod index;
pub(crate) mod java_hash_order;
pub mod leader_epoch;
pub mod live;
pub mod loader;
pub mod log;
pub mod log_reader;
pub mod producer_state;
pub mod progress;
pub mod read;
pub mod replace;
pub mod seek;
pub mod segment;
mod split;
pub mod store;
pub mod tiered;
pub mod txn_index;

pub use index::{OffsetIndex, TimeIndex};
pub use leader_epoch::LeaderEpochCache;
pub use loader::{recover_segments, LoadEvent, LoadParams, LoadReport, RecoveryCause};
pub use log::{CloseMode, Log, LogAppendInfo, LogConfig, LogEvent, RollReason};
pub use producer_state::{ProducerStateEntry, ProducerStateManager};
pub use segment::Segment;
pub use txn_index::TxnIndex;
