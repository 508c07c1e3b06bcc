//! One JSON vocabulary: every key that any command prints (run over the bundled testdata and
//! the corpora by `common::json_runs`) is in the table of `docs/json.md` with the JSON type it
//! has there, the same type in every command; every key of the table is printed somewhere; and
//! the naming rules hold (a count is `…Count`, an integer is not named by a plural, a list is
//! named by one, a time is an integer, `-1` only where the table says Kafka's `-1` is kept).

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::json_runs::{self, JsonRun};
use serde_json::Value;

/// Keys whose values are not kseg's vocabulary, so are not walked into: payloads and what
/// Kafka's own JSON says (decoders' output, KRaft control records, the quorum-state file),
/// record headers (kafka-dump-log's), and maps keyed by data (a magic, a timestamp type).
const OPAQUE: [&str; 9] = [
    "decodedKey",
    "decodedValue",
    "controlValue",
    "quorumState",
    "headers",
    "formats",
    "timestampTypes",
    "configValues",
    "quotas",
];

/// The words of a camelCase key, lowercased.
fn camel_words(key: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for c in key.chars() {
        match words.last_mut() {
            Some(w) if !c.is_ascii_uppercase() => w.push(c),
            _ => words.push(c.to_ascii_lowercase().to_string()),
        }
    }
    words
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Where each key was seen: key → JSON type → the runs (their command) it was seen in, and
/// the keys seen holding `-1`.
#[derive(Default)]
struct Seen {
    types: BTreeMap<String, BTreeMap<&'static str, BTreeSet<String>>>,
    minus_one: BTreeMap<String, BTreeSet<String>>,
    commands: BTreeSet<String>,
}

impl Seen {
    fn walk(&mut self, command: &str, v: &Value) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let at = self.types.entry(k.clone()).or_default();
                    at.entry(json_type(x))
                        .or_default()
                        .insert(command.to_owned());
                    if x.as_i64() == Some(-1) {
                        self.minus_one
                            .entry(k.clone())
                            .or_default()
                            .insert(command.to_owned());
                    }
                    if !OPAQUE.contains(&k.as_str()) {
                        self.walk(command, x);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| self.walk(command, x)),
            _ => {}
        }
    }

    fn run_all(&mut self, runs: &[JsonRun]) {
        for run in runs {
            let command = run.command();
            for doc in run.documents() {
                self.walk(&command, &doc);
            }
            self.commands.insert(command);
        }
    }
}

/// A row of docs/json.md's key table: the JSON types it may hold, and its meaning.
struct Row {
    types: BTreeSet<String>,
    meaning: String,
}

/// The key table of docs/json.md: rows `` | `key` | type[ or null] | meaning | `` under
/// "## Every key".
fn documented() -> BTreeMap<String, Row> {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json.md")).unwrap();
    let section = text
        .split("\n## Every key\n")
        .nth(1)
        .expect("docs/json.md has a section \"## Every key\"");
    let section = section.split("\n## ").next().unwrap();
    let mut rows = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(cells.len(), 3, "docs/json.md: {line}");
        let key = cells[0].trim_matches('`').to_owned();
        let types: BTreeSet<String> = cells[1].split(" or ").map(str::to_owned).collect();
        for t in &types {
            let known = [
                "null", "boolean", "integer", "number", "string", "array", "object",
            ];
            assert!(
                known.contains(&t.as_str()),
                "docs/json.md, `{key}`: type {t}"
            );
        }
        let row = Row {
            types,
            meaning: cells[2].to_owned(),
        };
        assert!(
            rows.insert(key.clone(), row).is_none(),
            "docs/json.md: `{key}` twice"
        );
    }
    assert!(rows.len() > 100, "docs/json.md: only {} keys", rows.len());
    rows
}

/// The subcommands whose help offers `--json`.
fn commands_with_json() -> BTreeSet<String> {
    let help = String::from_utf8(common::kseg(&["--help"]).stdout).unwrap();
    let list = help
        .split("Commands:\n")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    list.lines()
        .filter_map(|l| l.strip_prefix("  ")?.split_whitespace().next())
        .filter(|c| !c.is_empty() && *c != "help")
        .filter(|c| {
            let h = String::from_utf8(common::kseg(&[c, "--help"]).stdout).unwrap();
            h.contains("--json")
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_key_is_documented_with_one_type_in_every_command() {
    let mut seen = Seen::default();
    let tmp = tempfile::tempdir().unwrap();
    seen.run_all(&json_runs::bundled(tmp.path()));
    let corpora = [
        common::reference_dir(),
        common::reference_internal_dir(),
        common::realworld_dir(),
    ];
    if let Some(root) = &corpora[0] {
        seen.run_all(&json_runs::reference(root, tmp.path()));
    }
    if let Some(root) = &corpora[1] {
        seen.run_all(&json_runs::reference_internal(root));
    }
    let unpacked = corpora[2]
        .as_ref()
        .map(|root| common::unpack_realworld(root).0);
    if let Some(dir) = &unpacked {
        seen.run_all(&json_runs::realworld(&common::broker_log_dirs(dir.path())));
    }

    let docs = documented();
    let mut problems = Vec::new();
    for (key, types) in &seen.types {
        let Some(row) = docs.get(key) else {
            problems.push(format!("`{key}` ({types:?}) is not in docs/json.md"));
            continue;
        };
        for (t, commands) in types {
            // An integer is a JSON number too (a ratio that happens to be whole).
            let ok = row.types.contains(*t) || (*t == "integer" && row.types.contains("number"));
            if !ok {
                problems.push(format!(
                    "`{key}` is {t} in {commands:?}; docs/json.md says {:?}",
                    row.types
                ));
            }
        }
    }
    for (key, row) in &docs {
        let kinds = row.types.iter().filter(|t| *t != "null").count();
        if kinds != 1 {
            problems.push(format!(
                "`{key}`: one type and maybe null, not {:?}",
                row.types
            ));
        }
        let integer = row.types.contains("integer");
        if key.ends_with("Count") && !integer {
            problems.push(format!("`{key}`: a count is an integer"));
        }
        // An integer is not named by a plural, at its end or inside (`tombstonesRemoved` is
        // `removedTombstoneCount`): sizes and durations end in an `s` of their unit, and
        // kafka-dump-log's `attributes` is its name for a bit field.
        let plural = camel_words(key)
            .iter()
            .any(|w| w.len() > 2 && w.ends_with('s') && !["bytes", "ms"].contains(&w.as_str()))
            && !row.meaning.contains("(kafka-dump-log's)");
        if plural && integer && !key.ends_with("Count") {
            problems.push(format!(
                "`{key}`: a plural names a list; a count is `…Count`"
            ));
        }
        // A list is named by a plural noun (a qualifier may follow it: `rangesOnlyA`), unless
        // the table gives the name as Kafka's or the reference corpus'.
        let noun = ["OnlyA", "OnlyB"]
            .iter()
            .find_map(|q| key.strip_suffix(q))
            .unwrap_or(key);
        let kept_name = row.meaning.contains("(Kafka's name)")
            || row.meaning.contains("(the reference corpus' name");
        if row.types.contains("array") && !noun.ends_with('s') && !kept_name {
            problems.push(format!(
                "`{key}`: a list is named by a plural noun, not a participle or an adjective"
            ));
        }
        let time = ["Ms", "Timestamp", "timestamp"]
            .iter()
            .any(|s| key.ends_with(s));
        if time && !integer {
            problems.push(format!("`{key}`: a time is an integer of milliseconds"));
        }
    }
    for (key, commands) in &seen.minus_one {
        let kept = docs.get(key).is_some_and(|r| r.meaning.contains("-1"));
        if !kept {
            problems.push(format!(
                "`{key}` is -1 in {commands:?}: absent is null, unless docs/json.md says Kafka's -1 is kept"
            ));
        }
    }
    // Stale rows, and commands never run, only show with every corpus read.
    if corpora.iter().all(Option::is_some) {
        for key in docs.keys().filter(|k| !seen.types.contains_key(*k)) {
            problems.push(format!(
                "`{key}` is in docs/json.md but no command printed it"
            ));
        }
        for c in commands_with_json().difference(&seen.commands) {
            problems.push(format!(
                "kseg {c} prints JSON but tests/common/json_runs.rs does not run it"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
