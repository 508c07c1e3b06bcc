//! `kseg_fuzz::aiven::aiven` under libFuzzer (the body is shared with the stable regression test).
#![no_main]

#[global_allocator]
static ALLOC: kseg_fuzz::alloc::Counting = kseg_fuzz::alloc::Counting;

libfuzzer_sys::fuzz_target!(|data: &[u8]| kseg_fuzz::aiven::aiven(data));
