//! Shared rendering helpers: byte strings in the encodings users ask for, and a report
//! printed as JSON or as text.

use std::io::{self, Write};

use base64::Engine as _;
use clap::ValueEnum;
use serde::Serialize;

/// How keys, values and header values appear in JSON output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BytesFormat {
    /// UTF-8 text when the bytes are valid UTF-8, else base64.
    Auto,
    /// UTF-8 text, invalid sequences replaced (like kafka-dump-log's StringDecoder).
    Utf8,
    Hex,
    Base64,
}

impl BytesFormat {
    /// The encoded text and the name of the encoding used.
    pub fn encode(self, b: &[u8]) -> (String, &'static str) {
        match self {
            BytesFormat::Auto => match std::str::from_utf8(b) {
                Ok(s) => (s.to_owned(), "utf8"),
                Err(_) => (
                    base64::engine::general_purpose::STANDARD.encode(b),
                    "base64",
                ),
            },
            BytesFormat::Utf8 => (String::from_utf8_lossy(b).into_owned(), "utf8"),
            BytesFormat::Hex => (hex(b), "hex"),
            BytesFormat::Base64 => (
                base64::engine::general_purpose::STANDARD.encode(b),
                "base64",
            ),
        }
    }
}

impl BytesFormat {
    /// The text `dump` prints: kafka-dump-log's lossy UTF-8 for `auto` and `utf8` (so the
    /// default output stays its), the encoding itself for `hex` and `base64`.
    pub fn text(self, b: &[u8]) -> String {
        match self {
            BytesFormat::Auto | BytesFormat::Utf8 => String::from_utf8_lossy(b).into_owned(),
            BytesFormat::Hex | BytesFormat::Base64 => self.encode(b).0,
        }
    }
}

pub fn hex(b: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for &x in b {
        s.push(DIGITS[(x >> 4) as usize] as char);
        s.push(DIGITS[(x & 15) as usize] as char);
    }
    s
}

/// Prints to standard output `json` as pretty JSON when given, else what `text` writes. A
/// closed pipe (`kseg … | head`) ends the output quietly; other write errors are returned.
pub fn print_json_or_text<T: Serialize>(
    json: Option<&T>,
    text: impl FnOnce(&mut io::StdoutLock<'static>) -> io::Result<()>,
) -> io::Result<()> {
    let mut out = io::stdout().lock();
    let written = match json {
        Some(v) => serde_json::to_writer_pretty(&mut out, v)
            .map_err(io::Error::other)
            .and_then(|_| writeln!(out)),
        None => text(&mut out),
    };
    match written {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// The JSON format marker every document's first key carries.
pub const JSON_FORMAT: &str = "kseg/1";

/// `v` (serialised to an object) with `"format": "kseg/1"` as its first key.
pub fn kseg_document<T: Serialize>(v: &T) -> serde_json::Value {
    let mut doc = serde_json::Map::new();
    doc.insert("format".to_owned(), JSON_FORMAT.into());
    match serde_json::to_value(v) {
        Ok(serde_json::Value::Object(fields)) => doc.extend(fields),
        Ok(other) => {
            doc.insert("value".to_owned(), other);
        }
        Err(e) => {
            doc.insert("error".to_owned(), e.to_string().into());
        }
    }
    serde_json::Value::Object(doc)
}

/// Adds `row` to `t`, its first `left` cells aligned left (names), the rest right (numbers).
pub fn add_row_aligned<const N: usize>(t: &mut comfy_table::Table, row: [String; N], left: usize) {
    use comfy_table::{Cell, CellAlignment};
    t.add_row(row.into_iter().enumerate().map(|(i, v)| {
        let c = Cell::new(v);
        if i < left {
            c
        } else {
            c.set_alignment(CellAlignment::Right)
        }
    }));
}
