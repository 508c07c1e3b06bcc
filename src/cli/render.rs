//! Shared rendering helpers: byte strings in the encodings users ask for, and a report
//! printed as JSON or as text.

use std::io::{self, Write};

use base64::Engine as _;
use clap::ValueEnum;
use serde::Serialize;

use crate::format::java_utf8;

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
            BytesFormat::Utf8 => (java_utf8::lossy(b).into_owned(), "utf8"),
            BytesFormat::Hex => (hex(b), "hex"),
            BytesFormat::Base64 => (
                base64::engine::general_purpose::STANDARD.encode(b),
                "base64",
            ),
        }
    }
}

impl BytesFormat {
    /// Writes the text `dump` prints: kafka-dump-log's lossy UTF-8 for `auto` and `utf8` (so
    /// the default output stays its; valid UTF-8 goes straight from `b` to `out`, other bytes
    /// are decoded in `scratch`, reused from call to call), the encoding itself for `hex` and
    /// `base64`.
    pub fn write_text(
        self,
        out: &mut impl Write,
        b: &[u8],
        scratch: &mut Vec<u8>,
    ) -> io::Result<()> {
        match self {
            BytesFormat::Auto | BytesFormat::Utf8 => match std::str::from_utf8(b) {
                Ok(_) => out.write_all(b),
                Err(_) => {
                    let room = java_utf8::max_replaced_len(b.len());
                    if scratch.len() < room {
                        scratch.resize(room, 0);
                    }
                    let n = java_utf8::replace_into_slice(b, scratch);
                    out.write_all(&scratch[..n])
                }
            },
            BytesFormat::Hex | BytesFormat::Base64 => out.write_all(self.encode(b).0.as_bytes()),
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

/// A table in kseg's style, fitted to the terminal: the width of stdout when it is a terminal
/// (long cells wrap), `$COLUMNS` when set (so a pipe or a test can ask for 80), unlimited on a
/// pipe otherwise.
pub fn table<const N: usize>(header: [&str; N]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    if let Some(width) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse::<u16>().ok())
    {
        t.set_width(width);
    }
    t.set_header(header);
    t
}

/// Hides columns of `t`, from the first of `droppable` (the least needed first) on, until its
/// widest content fits the width the table is fitted to (nothing is hidden without one: a pipe
/// without `$COLUMNS`). Returns the headers of the hidden columns, to say what was left out.
pub fn hide_to_fit(t: &mut comfy_table::Table, droppable: &[usize]) -> Vec<String> {
    let Some(width) = t.width() else {
        return Vec::new();
    };
    let widths = t.column_max_content_widths();
    // One padding space each side and a border per column, and the closing border.
    let needed = |hidden: &[usize]| -> usize {
        widths
            .iter()
            .enumerate()
            .filter(|(i, _)| !hidden.contains(i))
            .map(|(_, w)| usize::from(*w) + 3)
            .sum::<usize>()
            + 1
    };
    let mut hidden = Vec::new();
    for &i in droppable {
        if needed(&hidden) <= usize::from(width) {
            break;
        }
        hidden.push(i);
    }
    let headers: Vec<String> = t
        .header()
        .map(|h| h.cell_iter().map(|c| c.content()).collect())
        .unwrap_or_default();
    hidden
        .iter()
        .filter_map(|&i| {
            t.column_mut(i)?
                .set_constraint(comfy_table::ColumnConstraint::Hidden);
            headers.get(i).cloned()
        })
        .collect()
}

/// Columns of `t` that never wrap (names, numbers): the others give up the width.
pub fn keep_whole(t: &mut comfy_table::Table, columns: &[usize]) {
    for &i in columns {
        if let Some(c) = t.column_mut(i) {
            c.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
        }
    }
}

/// `v` (a report that serializes to an object) as a JSON document: `"format"` first, then
/// the report's fields.
pub fn document<T: Serialize>(v: &T) -> serde_json::Value {
    let mut doc = serde_json::Map::new();
    doc.insert("format".to_owned(), crate::ops::JSON_FORMAT.into());
    match serde_json::to_value(v).expect("kseg's reports serialize") {
        serde_json::Value::Object(fields) => doc.extend(fields),
        other => unreachable!("a report is a JSON object, not {other}"),
    }
    serde_json::Value::Object(doc)
}

/// Writes `v` as a pretty JSON [`document`] and a newline, keeping an I/O error's kind (so
/// a closed pipe is recognised as one).
pub fn write_document<T: Serialize>(out: &mut impl Write, v: &T) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &document(v)).map_err(|e| match e.io_error_kind() {
        Some(kind) => io::Error::new(kind, e),
        None => io::Error::other(e),
    })?;
    writeln!(out)
}

/// Prints to standard output `json` as a pretty JSON [`document`] when given, else what
/// `text` writes. A closed pipe (`kseg … | head`) ends the output quietly; other write
/// errors are returned.
pub fn print_json_or_text<T: Serialize>(
    json: Option<&T>,
    text: impl FnOnce(&mut io::StdoutLock<'static>) -> io::Result<()>,
) -> io::Result<()> {
    let mut out = io::stdout().lock();
    let written = match json {
        Some(v) => write_document(&mut out, v),
        None => text(&mut out),
    };
    quiet_broken_pipe(written)
}

/// Writes to standard output as `print!` does, except that a closed pipe (`kseg … | head`)
/// ends the output quietly instead of panicking, and another write error is said on stderr
/// and exits with 2. Used through [`out!`] and [`outln!`].
pub fn print_fmt(args: std::fmt::Arguments<'_>) {
    if let Err(e) = quiet_broken_pipe(io::stdout().lock().write_fmt(args)) {
        crate::cli::errln!("error: writing standard output: {e}");
        std::process::exit(2);
    }
}

/// `print!` through [`print_fmt`].
macro_rules! out {
    ($($t:tt)*) => {
        $crate::cli::render::print_fmt(format_args!($($t)*))
    };
}

/// `println!` through [`print_fmt`].
macro_rules! outln {
    () => {
        $crate::cli::render::print_fmt(format_args!("\n"))
    };
    ($($t:tt)*) => {
        $crate::cli::render::print_fmt(format_args!("{}\n", format_args!($($t)*)))
    };
}
pub(crate) use {out, outln};

/// `written`, with a closed pipe counted as success: the reader has all it wanted.
pub fn quiet_broken_pipe(written: io::Result<()>) -> io::Result<()> {
    match written {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// A right-aligned cell (numbers).
pub fn right(v: impl ToString) -> comfy_table::Cell {
    comfy_table::Cell::new(v.to_string()).set_alignment(comfy_table::CellAlignment::Right)
}

/// The value, or `-` for none.
pub fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
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
