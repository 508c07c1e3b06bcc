//! Local schemas for the avro and protobuf decoders (`--key-decoder` / `--value-decoder`): a
//! directory of `<schema id>.<ext>` files, named by the Confluent schema ids of the wire
//! format (`.avsc` for Avro; `.desc` descriptor sets or `.proto` sources for Protobuf; other
//! files are ignored, as a schema registry export may hold more), or one schema for values
//! without the prefix.

use std::path::{Path, PathBuf};

use prost_reflect::FileDescriptor;

use crate::error::{Error, Result};
use crate::format::payload::protobuf::{descriptor_set_file, message_named};
use crate::format::payload::{AvroSchemas, ProtoSchemas};

/// Reads the schemas of `dir` (`<id>.avsc`) or the one schema `plain`.
pub fn load_avro_schemas(dir: Option<&Path>, plain: Option<&Path>) -> Result<AvroSchemas> {
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| Error::io(p, e));
    let mut by_id = Vec::new();
    if let Some(dir) = dir {
        for (id, path) in schema_files(dir, &["avsc"])? {
            by_id.push((id, read(&path)?));
        }
    }
    let plain_text = plain.map(read).transpose()?;
    let source = plain.or(dir).unwrap_or(Path::new("."));
    AvroSchemas::parse(&by_id, plain_text.as_deref()).map_err(|m| Error::invalid(source, m))
}

/// Reads the Protobuf schemas of `dir` (`<id>.desc` or `<id>.proto`), or the message type
/// `message` of the schema file `descriptor` (a descriptor set or a `.proto` source) for
/// plain values.
pub fn load_proto_schemas(
    dir: Option<&Path>,
    descriptor: Option<&Path>,
    message: Option<&str>,
) -> Result<ProtoSchemas> {
    let mut by_id: Vec<(u32, FileDescriptor)> = Vec::new();
    if let Some(dir) = dir {
        for (id, path) in schema_files(dir, &["desc", "proto"])? {
            if by_id.iter().any(|(i, _)| *i == id) {
                return Err(Error::invalid(
                    &path,
                    format!("schema id {id} has both a .desc and a .proto file"),
                ));
            }
            by_id.push((id, proto_file(&path)?));
        }
    }
    let plain = match (descriptor, message) {
        (Some(path), Some(name)) => {
            Some(message_named(&proto_file(path)?, name).map_err(|m| Error::invalid(path, m))?)
        }
        (Some(path), None) => {
            return Err(Error::invalid(
                path,
                "--proto-descriptor needs --proto-message, the message type of the values",
            ))
        }
        (None, _) => None,
    };
    Ok(ProtoSchemas::new(by_id, plain))
}

/// The `<schema id>.<ext>` files of `dir` with one of `exts`, in id order; none is an error.
fn schema_files(dir: &Path, exts: &[&str]) -> Result<Vec<(u32, PathBuf)>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let path = e.map_err(|e| Error::io(dir, e))?.path();
        let ext_ok = path
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| exts.contains(&x));
        let id = path
            .file_stem()
            .and_then(|n| n.to_str())
            .and_then(|id| id.parse::<u32>().ok());
        if let (true, Some(id)) = (ext_ok, id) {
            out.push((id, path));
        }
    }
    if out.is_empty() {
        let names: Vec<String> = exts.iter().map(|x| format!("<schema id>.{x}")).collect();
        return Err(Error::invalid(
            dir,
            format!("no {} file in the schema directory", names.join(" or ")),
        ));
    }
    out.sort();
    Ok(out)
}

/// The schema's own file of a descriptor set, or of a `.proto` source compiled with its
/// directory as the import path (Protobuf's well-known types built in).
fn proto_file(path: &Path) -> Result<FileDescriptor> {
    if path.extension().is_some_and(|x| x == "proto") {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let bad = |e: protox::Error| Error::invalid(path, format!("invalid .proto file: {e}"));
        let mut compiler = protox::Compiler::new([dir]).map_err(bad)?;
        compiler.open_file(name).map_err(bad)?;
        return compiler
            .descriptor_pool()
            .get_file_by_name(name)
            .ok_or_else(|| Error::invalid(path, "the compiled .proto file is missing"));
    }
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    descriptor_set_file(&bytes).map_err(|m| Error::invalid(path, m))
}
