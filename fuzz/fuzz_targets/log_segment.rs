//! Arbitrary bytes as a `.log` segment: batch framing, CRCs, every codec, record parsing,
//! legacy message sets, through the dump and verify paths.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let (_tmp, dir) = common::partition(&[("00000000000000000000.log", data)]);
    common::read_everything(&dir);
});
