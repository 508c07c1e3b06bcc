//! Every run of kseg whose JSON the JSON tests read: each command that prints JSON over the
//! bundled `testdata/` and the corpora, with the schema definition its documents follow.
//! `tests/json_schema.rs` validates them, `tests/json_vocabulary.rs` collects their keys.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// One run: the schema definition (under `$defs`) of its documents (`dumpLine` for each line
/// of `dump --jsonl`, `dump` for `dump --json`), and kseg's arguments, the subcommand first.
pub struct JsonRun {
    pub def: &'static str,
    pub args: Vec<OsString>,
}

impl JsonRun {
    fn new<A: Into<OsString>>(def: &'static str, args: impl IntoIterator<Item = A>) -> Self {
        JsonRun {
            def,
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    /// The subcommand.
    pub fn command(&self) -> String {
        self.args[0].to_string_lossy().into_owned()
    }

    /// `kseg ARGS` as a person would type it, for messages.
    pub fn shown(&self) -> String {
        let args: Vec<_> = self.args.iter().map(|a| a.to_string_lossy()).collect();
        format!("kseg {}", args.join(" "))
    }

    /// Runs it: the documents of its standard output (one JSON document, or JSON Lines),
    /// checked for duplicate keys; fails when it printed none.
    pub fn documents(&self) -> Vec<Value> {
        let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
            .args(&self.args)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        super::assert_json_without_duplicate_keys(&text);
        let docs: Vec<Value> = serde_json::Deserializer::from_str(&text)
            .into_iter::<Value>()
            .map(Result::unwrap)
            .collect();
        assert!(
            !docs.is_empty(),
            "{}: no JSON on stdout ({})",
            self.shown(),
            String::from_utf8_lossy(&out.stderr)
        );
        docs
    }
}

fn os(p: &Path) -> OsString {
    p.as_os_str().to_owned()
}

/// What every partition directory is asked: the commands that read one partition.
fn partition_runs(dir: &Path, out: &mut Vec<JsonRun>) {
    let d = os(dir);
    out.extend([
        JsonRun::new(
            "verify",
            ["verify".into(), "--json".into(), "--deep".into(), d.clone()],
        ),
        JsonRun::new("recover", ["recover".into(), "--json".into(), d.clone()]),
        JsonRun::new(
            "rebuildIndex",
            [
                "rebuild-index".into(),
                "--json".into(),
                "--all".into(),
                d.clone(),
            ],
        ),
        JsonRun::new(
            "retention",
            ["retention".into(), "--json".into(), d.clone()],
        ),
        JsonRun::new("compact", ["compact".into(), "--json".into(), d.clone()]),
        JsonRun::new(
            "offsets",
            [
                "offsets".into(),
                "--json".into(),
                "--time".into(),
                "0".into(),
                d.clone(),
            ],
        ),
        JsonRun::new("offsets", ["offsets".into(), "--json".into(), d.clone()]),
        JsonRun::new(
            "locate",
            ["locate".into(), "--json".into(), "100".into(), d.clone()],
        ),
        JsonRun::new(
            "stats",
            ["stats".into(), "--json".into(), "--deep".into(), d.clone()],
        ),
        JsonRun::new("txns", ["txns".into(), "--json".into(), d.clone()]),
        JsonRun::new(
            "digest",
            [
                "digest".into(),
                "--json".into(),
                "--segments".into(),
                d.clone(),
            ],
        ),
        JsonRun::new(
            "dumpLine",
            [
                "dump".into(),
                "--jsonl".into(),
                "--deep-iteration".into(),
                "--print-data-log".into(),
                d,
            ],
        ),
    ]);
}

/// The writes, salvages and copies a scenario `name` (`SPEC.json` beside `dir`) makes into
/// `tmp`, and the reconciling of a tier `write --tier-to` made of it.
fn writing_runs(spec: &Path, dir: &Path, tmp: &Path, name: &str, out: &mut Vec<JsonRun>) {
    let d = os(dir);
    // `--tier-to` prints no JSON of its own: written here, the tier then asked as a run.
    let tiered = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(["write".as_ref(), "-q".as_ref(), spec.as_os_str()])
        .arg(tmp.join(format!("tw-{name}")))
        .arg("--tier-to")
        .arg(tmp.join(format!("tier-{name}")))
        .status()
        .unwrap();
    assert!(tiered.success(), "write --tier-to of {name}");
    out.extend([
        JsonRun::new(
            "compact",
            [
                "compact".into(),
                "--json".into(),
                "--out".into(),
                os(&tmp.join(format!("c-{name}"))),
                d.clone(),
            ],
        ),
        JsonRun::new(
            "salvage",
            [
                "salvage".into(),
                "--json".into(),
                d.clone(),
                "--out".into(),
                os(&tmp.join(format!("s-{name}"))),
            ],
        ),
        JsonRun::new(
            "write",
            [
                "write".into(),
                "--json".into(),
                os(spec),
                os(&tmp.join(format!("w-{name}"))),
            ],
        ),
        JsonRun::new(
            "export",
            [
                "export".into(),
                "--json".into(),
                "--out".into(),
                os(&tmp.join(format!("e-{name}.parquet"))),
                d,
            ],
        ),
    ]);
    // A spec whose partition has no closed segment below its last stable offset tiers nothing.
    if tmp
        .join(format!("tier-{name}"))
        .join("kafka-tiered-storage")
        .is_dir()
    {
        out.push(JsonRun::new(
            "tiered",
            [
                "tiered".into(),
                "--json".into(),
                "--deep".into(),
                "--remote".into(),
                os(&tmp.join(format!("tier-{name}"))),
                os(&tmp.join(format!("tw-{name}"))),
            ],
        ));
    }
}

/// The reference corpus: every scenario's partition through every partition command, each
/// file dumped on its own, a diff against the plain scenario, its log dir listed and verified
/// whole, and the writes (into `tmp`).
pub fn reference(root: &Path, tmp: &Path) -> Vec<JsonRun> {
    let mut out = Vec::new();
    let plain = root.join("a-plain-v2/input/orders-0");
    for s in super::scenarios(root) {
        let name = s.file_name().unwrap().to_string_lossy().into_owned();
        let dir = s.join("input/orders-0");
        let mut files = vec![OsString::from("dump"), "--json".into()];
        files.extend(super::listing(&dir).iter().map(|f| os(f)));
        out.push(JsonRun::new("dump", files));
        partition_runs(&dir, &mut out);
        out.push(JsonRun::new(
            "diff",
            ["diff".into(), "--json".into(), os(&plain), os(&dir)],
        ));
        out.push(JsonRun::new(
            "ls",
            ["ls".into(), "--json".into(), os(&s.join("input"))],
        ));
        writing_runs(&s.join("SPEC.json"), &dir, tmp, &name, &mut out);
    }
    // The coordinator's side of a transactional partition (`coordinatorViews`), from the
    // internal-topic corpus' transaction log.
    if let Some(internal) = super::reference_internal_dir() {
        let txn_log = internal.join("transactions/input/__transaction_state-0");
        out.push(JsonRun::new(
            "txns",
            [
                "txns".into(),
                "--json".into(),
                "--txn-log".into(),
                os(&txn_log),
                os(&root.join("c-transactions/input/orders-0")),
            ],
        ));
    }
    // Log dirs partition by partition: the plain scenario's against the codecs one's.
    let (a, b) = (root.join("a-plain-v2/input"), root.join("b-codecs/input"));
    out.push(JsonRun::new(
        "diffLogDirs",
        ["diff".into(), "--json".into(), os(&a), os(&b)],
    ));
    out.push(JsonRun::new(
        "digestLogDirs",
        ["digest".into(), "--json".into(), os(&b)],
    ));
    out
}

/// The internal-topic corpus: groups replayed, the coordinator asked, every partition dumped
/// through its topic's decoder.
pub fn reference_internal(root: &Path) -> Vec<JsonRun> {
    let mut out = Vec::new();
    for scenario in ["offsets-classic", "offsets-edge", "offsets-modern"] {
        let dir = root.join(scenario).join("input/__consumer_offsets-0");
        out.push(JsonRun::new(
            "groups",
            ["groups".into(), "--json".into(), os(&dir)],
        ));
    }
    let metadata = root.join("cluster-metadata").join("input");
    for at in ["0", "60", "114", "200"] {
        out.push(JsonRun::new(
            "metadata",
            [
                "metadata".into(),
                "--json".into(),
                "--at".into(),
                at.into(),
                os(&metadata),
            ],
        ));
    }
    out.push(JsonRun::new(
        "metadata",
        [
            "metadata".into(),
            "--json".into(),
            "--check".into(),
            os(&metadata),
        ],
    ));
    out.push(JsonRun::new(
        "metadataDiff",
        [
            "metadata".into(),
            "--json".into(),
            "--diff".into(),
            "0".into(),
            "end".into(),
            os(&metadata),
        ],
    ));
    for key in ["--group", "--transactional-id"] {
        out.push(JsonRun::new(
            "coordinator",
            ["coordinator", "--json", key, "é-ü-𝄞"],
        ));
    }
    let decoders = [
        ("offsets-classic", "--offsets-decoder"),
        ("offsets-edge", "--offsets-decoder"),
        ("offsets-modern", "--offsets-decoder"),
        ("transactions", "--transaction-log-decoder"),
        ("share-state", "--share-group-state-decoder"),
        ("cluster-metadata", "--cluster-metadata-decoder"),
    ];
    for (scenario, decoder) in decoders {
        for p in super::listing(&root.join(scenario).join("input")) {
            let args = [
                "dump",
                "--jsonl",
                "--deep-iteration",
                "--print-data-log",
                decoder,
            ];
            let mut args: Vec<OsString> = args.iter().map(OsString::from).collect();
            args.push(os(&p));
            out.push(JsonRun::new("dumpLine", args));
        }
    }
    out
}

/// Real brokers' log dirs (unpacked): each verified, listed, recovered and dumped whole, and
/// each partition with segments asked for its offsets, transactions, statistics and retention
/// (whose checkpoints these log dirs have); groups where a log dir holds `__consumer_offsets`.
pub fn realworld(log_dirs: &[PathBuf]) -> Vec<JsonRun> {
    let mut out = Vec::new();
    for dir in log_dirs {
        let d = os(dir);
        out.push(JsonRun::new(
            "verify",
            ["verify".into(), "--json".into(), "--deep".into(), d.clone()],
        ));
        out.push(JsonRun::new("ls", ["ls".into(), "--json".into(), d]));
        let partitions: Vec<_> = super::listing(dir)
            .into_iter()
            .filter(|p| p.is_dir())
            .collect();
        // A KRaft log dir may hold only snapshots: the partition commands need a segment.
        let with_log: Vec<_> = partitions
            .iter()
            .filter(|p| !super::logs(p).is_empty())
            .collect();
        for p in &with_log {
            let asked = [
                ("offsets", "offsets"),
                ("txns", "txns"),
                ("stats", "stats"),
                ("retention", "retention"),
            ];
            for (def, cmd) in asked {
                out.push(JsonRun::new(def, [cmd.into(), "--json".into(), os(p)]));
            }
            if p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("__consumer_offsets-")
            {
                out.push(JsonRun::new(
                    "groups",
                    ["groups".into(), "--json".into(), os(p)],
                ));
            }
        }
        if !with_log.is_empty() {
            out.push(JsonRun::new(
                "recover",
                ["recover".into(), "--json".into(), os(dir)],
            ));
        }
        let mut dump = vec![
            OsString::from("dump"),
            "--jsonl".into(),
            "--deep-iteration".into(),
        ];
        dump.extend(partitions.iter().map(|p| os(p)));
        out.push(JsonRun::new("dumpLine", dump));
    }
    out
}

/// The bundled `testdata/` (always present): every partition through every partition
/// command and the writes (into `tmp`), each log dir listed, a diff, an index's sanity check;
/// then `version` and `checks`.
pub fn bundled(tmp: &Path) -> Vec<JsonRun> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut out = Vec::new();
    for name in ["crashed", "legacy", "orders", "payments"] {
        let dir = root.join(name).join(format!("{name}-0"));
        partition_runs(&dir, &mut out);
        writing_runs(
            &root.join(name).join("SPEC.json"),
            &dir,
            tmp,
            name,
            &mut out,
        );
        out.push(JsonRun::new(
            "ls",
            ["ls".into(), "--json".into(), os(&root.join(name))],
        ));
    }
    out.push(JsonRun::new(
        "diff",
        [
            "diff".into(),
            "--json".into(),
            os(&root.join("orders/orders-0")),
            os(&root.join("crashed/crashed-0")),
        ],
    ));
    let crashed = root.join("crashed/crashed-0/00000000000000000054.index");
    out.push(JsonRun::new(
        "dump",
        [
            "dump".into(),
            "--json".into(),
            "--index-sanity-check".into(),
            os(&crashed),
        ],
    ));
    out.push(streams_groups_run(tmp));
    out.push(JsonRun::new("version", ["version", "--json"]));
    out.push(JsonRun::new("checks", ["checks", "--json"]));
    out.push(JsonRun::new(
        "checks",
        ["checks", "--json", "index.untrimmed"],
    ));
    out
}

/// `groups --json` on a `__consumer_offsets` partition written into `tmp` holding a consumer
/// group's regular expression and a streams group with its topology and a member's tasks (the
/// record types Kafka added after October 2024), so their keys are printed.
fn streams_groups_run(tmp: &Path) -> JsonRun {
    let rec = |t: i16, key: Value, value: Value| serde_json::json!({"group": {"key": {"type": t, "data": key}, "value": {"version": 0, "data": value}}});
    let tasks = serde_json::json!([{"subtopologyId": "0", "partitions": [0]}]);
    let topic = serde_json::json!({"name": "app-changelog", "partitions": 0, "replicationFactor": 0, "topicConfigs": []});
    let records = [
        rec(
            3,
            serde_json::json!({"groupId": "cg"}),
            serde_json::json!({"epoch": 1}),
        ),
        rec(
            16,
            serde_json::json!({"groupId": "cg", "regularExpression": "o.*"}),
            serde_json::json!({"topics": ["orders"], "version": 1, "timestamp": 1_750_000_000_000i64}),
        ),
        rec(
            17,
            serde_json::json!({"groupId": "sg"}),
            serde_json::json!({"epoch": 1}),
        ),
        rec(
            23,
            serde_json::json!({"groupId": "sg"}),
            serde_json::json!({"epoch": 1, "subtopologies": [{
            "subtopologyId": "0", "sourceTopics": ["orders"], "sourceTopicRegex": [],
            "stateChangelogTopics": [topic], "repartitionSinkTopics": [],
            "repartitionSourceTopics": [], "copartitionGroups": []}]}),
        ),
        rec(
            19,
            serde_json::json!({"groupId": "sg", "memberId": "m"}),
            serde_json::json!({
            "instanceId": null, "rackId": null, "clientId": "c", "clientHost": "h",
            "rebalanceTimeoutMs": 1000, "topologyEpoch": 1, "processId": "p",
            "userEndpoint": null, "clientTags": []}),
        ),
        rec(
            22,
            serde_json::json!({"groupId": "sg", "memberId": "m"}),
            serde_json::json!({
            "memberEpoch": 1, "previousMemberEpoch": 0, "state": 1, "activeTasks": tasks,
            "standbyTasks": [], "warmupTasks": [], "activeTasksPendingRevocation": [],
            "standbyTasksPendingRevocation": [], "warmupTasksPendingRevocation": []}),
        ),
    ];
    let spec = serde_json::json!({"topic": "__consumer_offsets", "partition": 0,
        "ops": [{"op": "append", "batches": [{"records": records}]}]});
    let dir = tmp.join("streams-groups").join("__consumer_offsets-0");
    super::kseg_write(&spec.to_string(), &dir);
    JsonRun::new("groups", ["groups".into(), "--json".into(), os(&dir)])
}
