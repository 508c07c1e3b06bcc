//! `az://` through a real Azure Blob server (Azurite, started here on 127.0.0.1): a partition
//! tiered into a container by `write --tier-to` reads back through `kseg tiered --deep` exactly
//! as the same partition tiered into a directory, and a missing container is an error naming it.

#[path = "common/azurite.rs"]
mod azurite;
mod common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn run(az: &azurite::Azurite, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kseg"));
    az.env(&mut cmd);
    common::outcome(cmd.args(args))
}

/// `tiered --json --deep` of a partition written from the orders spec and tiered to `to`.
fn tier_and_check(az: &azurite::Azurite, root: &Path, to: &str) -> Value {
    let dir = root.join("logs/orders-0");
    let dir = dir.to_str().unwrap();
    let (code, _, err) = run(
        az,
        &["write", "testdata/orders/SPEC.json", dir, "--tier-to", to],
    );
    assert_eq!(code, 0, "write --tier-to {to}: {err}");
    let (code, out, err) = run(az, &["tiered", "--json", "--deep", "--remote", to, dir]);
    assert_eq!(code, 0, "tiered --remote {to}: {err}");
    let mut v: Value = serde_json::from_str(&out).unwrap();
    // What differs by store: the URL and the objects' names under it.
    v["remote"] = Value::Null;
    for s in v["partitions"][0]["segments"].as_array_mut().unwrap() {
        s["logObject"] = Value::Null;
    }
    v
}

#[test]
fn a_tier_in_azure_blob_reads_as_the_same_tier_in_a_directory() {
    let Some(az) = azurite::start_or_skip() else {
        return;
    };
    az.create_container("ktier");
    let tmp = tempfile::tempdir().unwrap();
    let blob = tier_and_check(&az, &tmp.path().join("az"), "az://ktier/cluster1");
    let tier = tmp.path().join("file/tier");
    std::fs::create_dir_all(&tier).unwrap();
    let file = tier_and_check(&az, &tmp.path().join("file"), tier.to_str().unwrap());
    assert_eq!(blob, file);
    let segments = blob["partitions"][0]["segments"].as_array().unwrap();
    assert_eq!(segments.len(), 1, "{blob}");
    assert!(blob["partitions"][0]["findings"]
        .as_array()
        .unwrap()
        .is_empty());
    // A container that does not exist: an error naming it, exit 2.
    let dir = tmp.path().join("az/logs/orders-0");
    let (code, _, err) = run(
        &az,
        &[
            "tiered",
            "--remote",
            "az://nothere/cluster1",
            dir.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("az://nothere/cluster1") && err.contains("ContainerNotFound"),
        "{err}"
    );
}
