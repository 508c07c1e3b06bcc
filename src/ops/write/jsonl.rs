//! `kseg write --jsonl`: records from a stream, one JSON object per line (a spec RECORD:
//! `key`/`key_hex`/`key_base64`, the same for `value`, `headers`, `timestamp`, `offset`),
//! appended `batch_size` at a time, one batch per append call, shaped like a template batch
//! (codec, magic, producer, leader epoch). Only one batch is held at a time.

use std::io::BufRead;
use std::path::Path;

use super::spec::{
    run_ops, write_driven, Op, PlannedBatch, Spec, SpecBatch, SpecRecord, WriteSummary,
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
            let n = input
                .read_line(&mut line)
                .map_err(|e| Error::invalid(src, format!("line {}: {e}", line_no + 1)))?;
            if n > 0 {
                line_no += 1;
                if !line.trim().is_empty() {
                    if records.is_empty() {
                        first_line = line_no;
                    }
                    let record: SpecRecord = serde_json::from_str(&line).map_err(|e| {
                        Error::invalid(src, format!("line {line_no}: {}", record_error(&line, e)))
                    })?;
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
