//! File paths in kseg's JSON. A Unix file name is bytes, not always UTF-8 (a partition directory
//! named by another tool, a copied file system), while a JSON string is Unicode, and serde's own
//! `PathBuf` serializer fails on such a name. Every report writes its paths through
//! [`serialize`] (`#[serde(serialize_with = "crate::format::os_path::serialize")]`) or
//! [`escaped`] (in `json!`), so the bytes survive one documented way (docs/json.md, "Paths"):
//! a path that is valid UTF-8 is written as it is; in any other path each byte that is not part
//! of valid UTF-8 is written `\xNN` (two lowercase hex digits) and each backslash `\\`, so the
//! name's bytes can be recovered exactly.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde::ser::{SerializeSeq, Serializer};

/// `p` as a JSON string, escaped as the module says.
pub fn escaped(p: &Path) -> Cow<'_, str> {
    escaped_os(p.as_os_str())
}

fn escaped_os(p: &OsStr) -> Cow<'_, str> {
    if let Some(s) = p.to_str() {
        return Cow::Borrowed(s);
    }
    let mut out = String::new();
    for chunk in p.as_encoded_bytes().utf8_chunks() {
        out.push_str(&chunk.valid().replace('\\', "\\\\"));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    Cow::Owned(out)
}

/// The shapes of path fields kseg's reports hold.
pub trait JsonPaths {
    fn serialize_paths<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error>;
}

impl JsonPaths for Path {
    fn serialize_paths<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&escaped(self))
    }
}

impl JsonPaths for PathBuf {
    fn serialize_paths<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_path().serialize_paths(s)
    }
}

impl<T: JsonPaths> JsonPaths for Option<T> {
    fn serialize_paths<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Some(p) => p.serialize_paths(s),
            None => s.serialize_none(),
        }
    }
}

impl<T: JsonPaths> JsonPaths for Vec<T> {
    fn serialize_paths<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for p in self {
            seq.serialize_element(&Escaped(p))?;
        }
        seq.end()
    }
}

/// One element of a list, through [`JsonPaths`].
struct Escaped<'a, T>(&'a T);

impl<T: JsonPaths> serde::Serialize for Escaped<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_paths(s)
    }
}

/// The one serializer of path fields (`serialize_with`).
pub fn serialize<T: JsonPaths + ?Sized, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    v.serialize_paths(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    fn path(b: &[u8]) -> PathBuf {
        PathBuf::from(OsStr::from_bytes(b))
    }

    #[test]
    fn utf8_paths_are_written_as_they_are() {
        assert_eq!(escaped(&path(b"/k/\\t\xc3\xa9-0")), "/k/\\t\u{e9}-0");
    }

    #[test]
    fn undecodable_bytes_and_backslashes_are_escaped() {
        assert_eq!(
            escaped(&path(b"/k/a\\b\xff\xc3-0")),
            "/k/a\\\\b\\xff\\xc3-0"
        );
    }

    #[test]
    fn every_shape_serializes() {
        #[derive(serde::Serialize)]
        struct R {
            #[serde(serialize_with = "serialize")]
            one: PathBuf,
            #[serde(serialize_with = "serialize")]
            none: Option<PathBuf>,
            #[serde(serialize_with = "serialize")]
            many: Vec<PathBuf>,
        }
        let r = R {
            one: path(b"a\xfe"),
            none: None,
            many: vec![path(b"b"), path(b"\x80")],
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"one":"a\\xfe","none":null,"many":["b","\\x80"]}"#
        );
    }
}
