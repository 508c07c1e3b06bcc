//! `kseg version` and `kseg --version`: what this binary is, for a bug report or an
//! operator checking what runs on a broker host.

use std::io::Write;

use clap::Args;
use serde::Serialize;

use super::render::print_json_or_text;
use super::time::TimeFormat;
use super::{fail, EXIT_OK};

/// The Apache Kafka release whose on-disk formats and broker behaviour (loading, recovery,
/// retention, cleaning) kseg follows.
pub const KAFKA_RELEASE: &str = "4.0";

#[derive(Debug, Args)]
pub struct VersionArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The build's facts, from build.rs.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Version {
    #[serde(rename = "ksegVersion")]
    pub version: &'static str,
    /// The git commit built (null when not built from a clone).
    pub commit: Option<&'static str>,
    pub build_time_ms: i64,
    #[serde(rename = "kafkaVersion")]
    pub kafka: &'static str,
    pub features: Vec<&'static str>,
}

pub fn facts() -> Version {
    let commit = env!("KSEG_GIT_COMMIT");
    Version {
        version: env!("CARGO_PKG_VERSION"),
        commit: (commit != "unknown").then_some(commit),
        build_time_ms: env!("KSEG_BUILD_EPOCH").parse::<i64>().unwrap_or(0) * 1000,
        kafka: KAFKA_RELEASE,
        features: env!("KSEG_FEATURES")
            .split(',')
            .filter(|f| !f.is_empty())
            .collect(),
    }
}

/// What `--version` prints after `kseg `: the version, then a line for each other fact.
pub fn text() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let v = facts();
        let features = match v.features.is_empty() {
            true => "none".to_owned(),
            false => v.features.join(", "),
        };
        format!(
            "{}\ncommit:   {}\nbuilt:    {}\nkafka:    {} (the on-disk formats and broker behaviour kseg follows)\nfeatures: {features}",
            v.version,
            v.commit.unwrap_or("unknown (not built from a git clone)"),
            TimeFormat::Rfc3339.show(v.build_time_ms),
            v.kafka,
        )
    })
}

pub fn run(args: VersionArgs) -> u8 {
    let v = facts();
    let json = args.json.then_some(&v);
    if let Err(e) = print_json_or_text(json, |out| writeln!(out, "kseg {}", text())) {
        return fail(&e);
    }
    EXIT_OK
}
