//! `kseg coordinator`: the partition Kafka's coordinators put a group or a transactional id in,
//! `Utils.abs(key.hashCode()) % partitions` (GroupCoordinatorService.partitionFor,
//! TransactionStateManager.partitionFor; Utils.abs maps Integer.MIN_VALUE to 0), checked on
//! hand-computed values and against a model of String.hashCode written here as the
//! polynomial it is defined as (s[0]*31^(n-1) + … + s[n-1] over UTF-16 code units, mod 2^32).

use std::process::Command;

fn coordinator(args: &[&str]) -> (i32, serde_json::Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .arg("coordinator")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (code, json)
}

/// String.hashCode by its definition: the sum of code unit × 31^(n-1-i), reduced mod 2^32 and
/// read as a signed 32-bit number.
fn model_hash(s: &str) -> i32 {
    let units: Vec<u16> = s.encode_utf16().collect();
    let n = units.len();
    let mut sum: u64 = 0;
    for (i, &c) in units.iter().enumerate() {
        let mut pow: u64 = 1;
        for _ in 0..(n - 1 - i) {
            pow = pow * 31 % (1 << 32);
        }
        sum = (sum + u64::from(c) * pow) % (1 << 32);
    }
    sum as u32 as i32
}

#[test]
fn hand_computed_groups() {
    // (group, hashCode, partition of 50) worked by hand:
    // "a" = 97; "ab" = 97*31 + 98 = 3105; "é" is U+00E9 = 233, one code unit;
    // "😀" is U+1F600 = the surrogates D83D DE00: 55357*31 + 56832 = 1772899 (by code point it
    // would be 128512, partition 12: the code units are what counts).
    for (group, hash, partition) in [
        ("a", 97, 47),
        ("ab", 3105, 5),
        ("é", 233, 33),
        ("😀", 1_772_899, 49),
    ] {
        let (code, j) = coordinator(&["--group", group]);
        assert_eq!(code, 0);
        assert_eq!(j["format"], "kseg/3");
        assert_eq!(j["hashCode"], hash, "{group}");
        assert_eq!(j["partitionCount"], 50);
        assert_eq!(j["topic"], "__consumer_offsets");
        assert_eq!(j["partition"], partition, "{group}");
        assert_eq!(j["dir"], format!("__consumer_offsets-{partition}"));
    }
}

#[test]
fn min_value_hash_goes_to_partition_zero() {
    // Three strings whose String.hashCode is Integer.MIN_VALUE. Math.abs would leave it negative
    // and -2147483648 % 50 = -48, % 7 = -2; Utils.abs makes it 0, so partition 0 for any count.
    for s in ["polygenelubricants", "GydZG_", "DESIGNING WORKHOUSES"] {
        assert_eq!(model_hash(s), i32::MIN, "{s}");
        for n in ["50", "7", "1"] {
            let (code, j) = coordinator(&["--group", s, "--partitions", n]);
            assert_eq!(code, 0);
            assert_eq!(j["hashCode"], i32::MIN);
            assert_eq!(j["partition"], 0, "{s} of {n}");
        }
    }
}

#[test]
fn transactional_ids_and_partition_counts_against_the_model() {
    for id in [
        "txn-1",
        "my-transactional-id",
        "producer-ünïcödé-€",
        "日本語のトランザクション",
        "𝄞 clef",
        "",
    ] {
        for n in [1, 3, 50, 64, 2_147_483_647] {
            let (code, j) =
                coordinator(&["--transactional-id", id, "--partitions", &n.to_string()]);
            assert_eq!(code, 0);
            let h = model_hash(id);
            let abs = if h == i32::MIN { 0 } else { h.abs() };
            assert_eq!(j["hashCode"], h, "{id}");
            assert_eq!(j["topic"], "__transaction_state");
            assert_eq!(j["keyType"], "transactionalId");
            assert_eq!(j["partition"], abs % n, "{id} of {n}");
        }
    }
}

#[test]
fn bad_usage_exits_2() {
    for args in [
        &[][..],
        &["--group", "g", "--transactional-id", "t"][..],
        &["--group", "g", "--partitions", "0"][..],
        &["--group", "g", "--partitions", "-3"][..],
    ] {
        let (code, _) = coordinator(args);
        assert_eq!(code, 2, "{args:?}");
    }
}

#[test]
fn text_names_the_directory() {
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["coordinator", "--group", "ab"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("__consumer_offsets-5 "), "{text}");
}
