//! Local schemas for `--key-decoder avro` / `--value-decoder avro`: a directory of
//! `<schema id>.avsc` files (the Confluent schema ids of the wire format; other files are
//! ignored, as a schema registry export may hold more), or one `.avsc` for plain Avro values.

use std::path::Path;

use crate::error::{Error, Result};
use crate::format::payload::AvroSchemas;

/// Reads the schemas of `dir` (`<id>.avsc`) or the one schema `plain`.
pub fn load_avro_schemas(dir: Option<&Path>, plain: Option<&Path>) -> Result<AvroSchemas> {
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| Error::io(p, e));
    let mut by_id = Vec::new();
    if let Some(dir) = dir {
        let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        for e in entries {
            let path = e.map_err(|e| Error::io(dir, e))?.path();
            let id = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".avsc"))
                .and_then(|id| id.parse::<u32>().ok());
            if let Some(id) = id {
                by_id.push((id, read(&path)?));
            }
        }
        if by_id.is_empty() {
            return Err(Error::invalid(
                dir,
                "no <schema id>.avsc file in the schema directory",
            ));
        }
    }
    let plain_text = plain.map(read).transpose()?;
    let source = plain.or(dir).unwrap_or(Path::new("."));
    AvroSchemas::parse(&by_id, plain_text.as_deref()).map_err(|m| Error::invalid(source, m))
}
