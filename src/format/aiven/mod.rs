//! Aiven's tiered-storage-for-apache-kafka (the RemoteStorageManager plugin most used with
//! KIP-405): its object keys, the custom metadata it leaves in `__remote_log_metadata`, its
//! segment manifest, and its chunked, optionally zstd-compressed and AES-GCM-encrypted `.log`
//! and `.indexes` objects, both directions. Learned from the plugin's source
//! (`core/src/main/java/io/aiven/kafka/tieredstorage/`); `docs/tiered.md` names the files.

pub mod chunk_index;
pub mod crypto;
pub mod custom;
pub mod key;
pub mod manifest;
pub mod segment;

pub use chunk_index::{Chunk, ChunkIndex};
pub use crypto::{DataKey, KeyRing, WrappedKey};
pub use custom::CustomMetadata;
pub use key::{SegmentKey, Suffix};
pub use manifest::{IndexKind, Manifest, SegmentMetadata};
pub use segment::{SegmentFiles, SegmentObjects, SegmentReader, WriteOptions};
