//! Arbitrary keys and values through every internal-topic decoder (`__consumer_offsets`,
//! `__transaction_state`, `__cluster_metadata`, `__share_group_state`) and the control-record
//! decoders: what kafka-dump-log would print, never a panic.
#![no_main]

use kseg::format::internal::{control_record_text, decode_record, Decoder};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // First byte: how much of the rest is the key; 0xff: a null key.
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let (key, value) = if split == 0xff {
        (None, Some(rest))
    } else {
        let (k, v) = rest.split_at(usize::from(split).min(rest.len()));
        (Some(k), Some(v))
    };
    for decoder in [
        Decoder::Offsets,
        Decoder::TransactionLog,
        Decoder::ClusterMetadata,
        Decoder::ShareGroupState,
    ] {
        let _ = decode_record(decoder, 7, key, value);
        let _ = decode_record(decoder, 7, key, None);
    }
    let _ = control_record_text(key, value);
});
