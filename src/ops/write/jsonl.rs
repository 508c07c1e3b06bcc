//! `kseg write --jsonl`: records from a stream, one JSON object per line (a spec RECORD:
//! `key`/`key_hex`/`key_base64`, the same for `value`, `headers`, `timestamp`, `offset`),
//! appended `batch_size` at a time, one batch per append call, shaped like a template batch
//! (codec, magic, producer, leader epoch). Only one batch is held at a time. The output of
//! `kseg dump --json --print-data-log` is taken too: its `record` lines are records (control
//! records left out), its other lines are skipped, so a dump replays into a new directory.

use std::io::BufRead;
use std::path::Path;

use serde_json::{Map, Value};

use super::spec::{
    run_ops, write_driven, Op, PlannedBatch, Spec, SpecBatch, SpecHeader, SpecRecord, WriteSummary,
};
use crate::error::{Error, Result};

/// Why `line` is not a record, naming the field at fault when one alone is (serde names an
/// unknown field but not one of the wrong type).
fn record_error(line: &str, e: serde_json::Error) -> String {
    let fields = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(line);
    let bad = fields.ok().and_then(|m| {
        m.into_iter().find_map(|(k, v)| {
            let alone = serde_json::Value::Object([(k.clone(), v)].into_iter().collect());
            serde_json::from_value::<SpecRecord>(alone)
                .is_err()
                .then_some(k)
        })
    });
    match bad {
        Some(field) => format!("field `{field}`: expected a record object ({e})"),
        None => format!("expected a record object ({e})"),
    }
}

/// The bytes of a dump's `key`, `value` or header `value` (null or `{data, encoding}`) as a
/// spec's text, hex or base64 field: (text, hex, base64).
type SpecBytes = (Option<String>, Option<String>, Option<String>);

fn dump_bytes(v: Option<&Value>, what: &str) -> std::result::Result<SpecBytes, String> {
    let Some(v) = v else {
        return Err(format!(
            "a `kseg dump --json` record without `{what}`: dump with --print-data-log to replay"
        ));
    };
    if v.is_null() {
        return Ok((None, None, None));
    }
    let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let data = field("data");
    match field("encoding").as_deref() {
        Some("utf8") => Ok((data, None, None)),
        Some("hex") => Ok((None, data, None)),
        Some("base64") => Ok((None, None, data)),
        _ => Err(format!("`{what}`: expected null or {{data, encoding}}")),
    }
}

/// A line of `kseg dump --json`: the record of a `record` line, None for other lines and
/// control records.
fn dump_record(m: &Map<String, Value>) -> std::result::Result<Option<SpecRecord>, String> {
    if m.get("type").and_then(Value::as_str) != Some("record")
        || m.get("control").is_some_and(|c| !c.is_null())
    {
        return Ok(None);
    }
    let (key, key_hex, key_base64) = dump_bytes(m.get("key"), "key")?;
    let (value, value_hex, value_base64) = dump_bytes(m.get("value"), "value")?;
    let mut headers = Vec::new();
    for h in m
        .get("headers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let (value, value_hex, value_base64) = dump_bytes(h.get("value"), "a header's value")?;
        headers.push(SpecHeader {
            key: h
                .get("key")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            value,
            value_hex,
            value_base64,
        });
    }
    Ok(Some(SpecRecord {
        offset: m.get("offset").and_then(Value::as_i64),
        timestamp: m.get("timestamp").and_then(Value::as_i64),
        key,
        key_hex,
        key_base64,
        value,
        value_hex,
        value_base64,
        headers,
        ..SpecRecord::default()
    }))
}

/// The record of one input line, None for a dump line that holds none.
fn parse_line(line: &str) -> std::result::Result<Option<SpecRecord>, String> {
    // Every line of `kseg dump --json` has a `type` (the first one is the stream's header);
    // a spec record has none.
    let m: Map<String, Value> = serde_json::from_str(line).map_err(|e| record_error(line, e))?;
    if m.contains_key("type") {
        return dump_record(&m);
    }
    serde_json::from_value(Value::Object(m))
        .map(Some)
        .map_err(|e| record_error(line, e))
}

/// The longest `--jsonl` line: a record of up to about 48 MiB in base64, far past Kafka's
/// default `message.max.bytes` (1 MiB); a line is held whole with its decoded record, so its
/// length is what a line costs.
pub const MAX_LINE_BYTES: u64 = 64 << 20;

/// Writes the partition directory `out_dir` from `frame` (topic, partition, config, clock,
/// close, damage; its `ops` run first) and then the records of `input`, `batch_size` per
/// batch, each batch a copy of `template` with the records filled in. Errors name
/// `frame.source` and the line.
pub fn write_jsonl(
    frame: &Spec,
    template: &SpecBatch,
    batch_size: usize,
    input: &mut dyn BufRead,
    out_dir: &Path,
) -> Result<WriteSummary> {
    let src = frame.source.as_path();
    if batch_size == 0 {
        return Err(Error::invalid(src, "batch size 0: expected at least 1"));
    }
    if template.records.is_some() || template.gen.is_some() || template.control.is_some() {
        return Err(Error::invalid(
            src,
            "the template batch must not hold records, gen or control",
        ));
    }
    write_driven(frame, out_dir, &mut |log, planner, mut appended| {
        let mut build = |b: &PlannedBatch| b.build(src);
        run_ops(
            &frame.ops,
            log,
            planner,
            &mut build,
            appended.as_deref_mut(),
        )?;
        let mut line = String::new();
        let mut line_no = 0u64;
        let mut first_line = 1;
        let mut records = Vec::with_capacity(batch_size);
        loop {
            line.clear();
            let n = std::io::Read::take(&mut *input, MAX_LINE_BYTES + 1)
                .read_line(&mut line)
                .map_err(|e| Error::invalid(src, format!("line {}: {e}", line_no + 1)))?;
            if n as u64 > MAX_LINE_BYTES && !line.ends_with('\n') {
                return Err(Error::invalid(
                    src,
                    format!(
                        "line {}: longer than {} (the most one --jsonl line may hold): a record \
                         that large belongs in a spec, with a generated value",
                        line_no + 1,
                        crate::ops::human::size(MAX_LINE_BYTES)
                    ),
                ));
            }
            if n > 0 {
                line_no += 1;
                let record = match line.trim().is_empty() {
                    true => None,
                    false => parse_line(&line)
                        .map_err(|m| Error::invalid(src, format!("line {line_no}: {m}")))?,
                };
                if let Some(record) = record {
                    if records.is_empty() {
                        first_line = line_no;
                    }
                    records.push(record);
                }
            }
            if records.len() == batch_size || (n == 0 && !records.is_empty()) {
                let append = Op::Append {
                    batches: vec![SpecBatch {
                        records: Some(std::mem::take(&mut records)),
                        ..template.clone()
                    }],
                };
                run_ops(
                    std::slice::from_ref(&append),
                    log,
                    planner,
                    &mut build,
                    appended.as_deref_mut(),
                )
                .map_err(|e| match e {
                    Error::Invalid { path, message } => {
                        Error::invalid(&path, format!("lines {first_line}-{line_no}: {message}"))
                    }
                    other => other,
                })?;
            }
            if n == 0 {
                return Ok(());
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_lines_replay_as_records() {
        let rec = r#"{"type":"record","file":"f","offset":7,"timestamp":5,"key":null,"value":{"data":"AP8=","encoding":"base64"},"headers":[{"key":"h","value":{"data":"0a","encoding":"hex"}},{"key":"n","value":null}]}"#;
        let r = parse_line(rec).unwrap().unwrap();
        assert_eq!((r.offset, r.timestamp), (Some(7), Some(5)));
        assert_eq!((r.key, r.value_base64), (None, Some("AP8=".into())));
        assert_eq!(r.headers[0].value_hex.as_deref(), Some("0a"));
        assert_eq!(r.headers[1].key, "n");
        assert!(r.headers[1].value.is_none() && r.headers[1].value_hex.is_none());
        assert!(parse_line(r#"{"type":"batch","file":"f"}"#)
            .unwrap()
            .is_none());
        let control =
            r#"{"type":"record","offset":1,"key":null,"value":null,"control":{"type":"COMMIT"}}"#;
        assert!(parse_line(control).unwrap().is_none());
        let shallow = r#"{"type":"record","offset":1,"keySize":3,"valueSize":1}"#;
        assert!(parse_line(shallow)
            .unwrap_err()
            .contains("--print-data-log"));
    }
}
