//! Shared rendering helpers: byte strings in the encodings users ask for, a report printed
//! as JSON or as text, and a finding's one-line form (`verify`, `ls`, `groups`, `recover`).

use std::io::{self, IsTerminal, Write};
use std::sync::OnceLock;

use base64::Engine as _;
use clap::ValueEnum;
use serde::Serialize;

use crate::format::java_utf8;
use crate::ops::finding::{Finding, Severity};

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

/// The flags every command shares for its text output, set once at start ([`set_output`]).
#[derive(Debug, Clone, clap::Args)]
pub struct OutputArgs {
    /// Fit tables to N columns (default: `$COLUMNS`, else the terminal's width; a pipe gets
    /// the whole table).
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(20..))]
    pub width: Option<u16>,
    /// Keep every column of a table, however wide (long names are still shortened).
    #[arg(long, global = true)]
    pub wide: bool,
    /// Tables as tab-separated values with a header line (for scripts), never fitted; the
    /// short form of `--format tsv` where a command has `--format`.
    #[arg(long, global = true)]
    pub tsv: bool,
    /// Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB.
    #[arg(long, global = true)]
    pub bytes: bool,
    /// Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is
    /// set), `always` or `never`.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// The time zone local date-times in time flags are read in, and `--local` prints in
    /// (an IANA name such as `Europe/Paris`; default: `TZ`, else the system's).
    #[arg(long, global = true, value_name = "ZONE", value_parser = super::time::parse_zone)]
    pub tz: Option<jiff::tz::TimeZone>,
    /// Print RFC 3339 times in the local zone (or --tz) instead of UTC.
    #[arg(long, global = true)]
    pub local: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// What [`OutputArgs`] decided, resolved against the environment once.
#[derive(Debug)]
struct Output {
    width: Option<usize>,
    wide: bool,
    tsv: bool,
    color: ColorChoice,
}

static OUTPUT: OnceLock<Output> = OnceLock::new();

/// Takes the shared output flags for the rest of the run.
pub fn set_output(a: &OutputArgs) {
    super::time::set_print_local(a.local);
    let width = a.width.map(usize::from).or_else(|| {
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse::<usize>().ok())
            .filter(|&w| w > 0)
            .or_else(|| {
                let term = console::Term::stdout();
                term.is_term()
                    .then(|| term.size_checked().map(|(_, w)| usize::from(w)))
                    .flatten()
            })
    });
    crate::ops::human::set_exact_bytes(a.bytes);
    let _ = OUTPUT.set(Output {
        width,
        wide: a.wide,
        tsv: a.tsv,
        color: a.color,
    });
}

fn output() -> &'static Output {
    OUTPUT.get_or_init(|| Output {
        width: None,
        wide: false,
        tsv: false,
        color: ColorChoice::Never,
    })
}

/// Sizes as tables and messages show them (binary units, exact with `--bytes`).
pub use crate::ops::human::size;

/// Which stream a coloured text goes to: colour only where that stream is a terminal.
#[derive(Debug, Clone, Copy)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// `text` in red (`error`) or yellow (`warning`) when colour is on for `stream`: `--color
/// always`, or `auto` on a terminal without `NO_COLOR`.
pub fn paint(text: &str, severity: crate::ops::Severity, stream: Stream) -> String {
    let on = match output().color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && match stream {
                    Stream::Stdout => io::stdout().is_terminal(),
                    Stream::Stderr => io::stderr().is_terminal(),
                }
        }
    };
    let code = match severity {
        crate::ops::Severity::Error => "31",
        crate::ops::Severity::Warning => "33",
    };
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// How a column may give up width when the table does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Numbers, offset ranges, timestamps, states: never broken nor shortened.
    Whole,
    /// Names (partitions, topics, paths): shortened in the middle (`very-long-top…tion-12`).
    Name,
    /// Prose: wrapped between words, keeping `a -> b` and `(…)` groups on one line.
    Text,
}

/// One cell: its text and whether it is aligned right (numbers).
#[derive(Debug, Clone)]
pub struct Cell {
    text: String,
    right: bool,
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell { text, right: false }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::from(text.to_owned())
    }
}

/// A table in kseg's style, fitted to the width ([`set_output`]) when printed: the least
/// important columns are left out first (and said so on stderr), names shortened in the
/// middle and prose wrapped; numbers, ranges, timestamps and headers are never broken. When
/// nothing else fits, each row is printed as a block of `header: value` lines.
#[derive(Debug, Clone)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<Cell>>,
    fit: Vec<Fit>,
    /// Columns that may be left out, the least important first.
    droppable: Vec<usize>,
}

/// A table with these column headers; every column [`Fit::Text`] until told otherwise.
pub fn table<const N: usize>(header: [&str; N]) -> Table {
    Table {
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows: Vec::new(),
        fit: vec![Fit::Text; N],
        droppable: Vec::new(),
    }
}

/// The table as fitted to a width: its lines, and the headers of the columns left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub lines: Vec<String>,
    pub dropped: Vec<String>,
}

impl Table {
    pub fn add_row<C: Into<Cell>>(&mut self, row: impl IntoIterator<Item = C>) {
        let mut cells: Vec<Cell> = row.into_iter().map(Into::into).collect();
        cells.resize(self.header.len(), Cell::from(String::new()));
        self.rows.push(cells);
    }

    /// Marks `columns` as fitting the way `fit` says.
    pub fn fit(&mut self, fit: Fit, columns: &[usize]) -> &mut Table {
        for &i in columns {
            if let Some(f) = self.fit.get_mut(i) {
                *f = fit;
            }
        }
        self
    }

    /// The columns that may be left out to fit, the least important first (`--wide` keeps
    /// them).
    pub fn droppable(&mut self, columns: &[usize]) -> &mut Table {
        self.droppable = columns.to_vec();
        self
    }

    /// Writes the table fitted to the width [`set_output`] took (the whole table on a pipe,
    /// tab-separated with `--tsv`), and says on stderr which columns were left out.
    pub fn print(&self, out: &mut impl Write) -> io::Result<()> {
        let o = output();
        let layout = if o.tsv {
            self.tsv()
        } else {
            self.lay_out(o.width, o.wide)
        };
        for l in &layout.lines {
            writeln!(out, "{l}")?;
        }
        if !layout.dropped.is_empty() {
            super::notice(&format!(
                "left out to fit {} columns: {} (--wide, --tsv or --json show them)",
                o.width.unwrap_or_default(),
                layout.dropped.join(", ")
            ));
        }
        Ok(())
    }

    /// Tab-separated values: the header line, then a line per row (tabs and line breaks in
    /// a cell become spaces).
    pub fn tsv(&self) -> Layout {
        let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
        let lines = std::iter::once(self.header.iter().map(|h| clean(h)).collect::<Vec<_>>())
            .chain(
                self.rows
                    .iter()
                    .map(|r| r.iter().map(|c| clean(&c.text)).collect()),
            )
            .map(|cells| cells.join("\t"))
            .collect();
        Layout {
            lines,
            dropped: Vec::new(),
        }
    }

    /// The table fitted to `width` (whole without one): droppable columns left out first
    /// (unless `wide`), then names shortened and prose wrapped down to their least widths,
    /// then one block per row.
    pub fn lay_out(&self, width: Option<usize>, wide: bool) -> Layout {
        let n = self.header.len();
        let natural: Vec<usize> = (0..n)
            .map(|i| {
                self.rows
                    .iter()
                    .map(|r| chars(&r[i].text))
                    .chain([chars(&self.header[i])])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let Some(width) = width else {
            return self.boxed(&(0..n).collect::<Vec<_>>(), &natural, Vec::new());
        };
        // One padding space each side and a border per column, and the closing border.
        let needed =
            |cols: &[usize], w: &[usize]| cols.iter().map(|&i| w[i] + 3).sum::<usize>() + 1;
        let mut shown: Vec<usize> = (0..n).collect();
        let mut dropped = Vec::new();
        if !wide {
            for &d in &self.droppable {
                if needed(&shown, &natural) <= width {
                    break;
                }
                shown.retain(|&i| i != d);
                dropped.push(self.header[d].clone());
            }
        }
        let least: Vec<usize> = (0..n)
            .map(|i| {
                let flex = natural[i].min(chars(&self.header[i]).max(MIN_FLEX));
                match self.fit[i] {
                    Fit::Whole => natural[i],
                    Fit::Name => flex,
                    // Prose wraps between words, but no number or timestamp in it breaks.
                    Fit::Text => self
                        .rows
                        .iter()
                        .flat_map(|r| r[i].text.split(' '))
                        .filter(|w| is_value(w))
                        .map(chars)
                        .fold(flex, usize::max),
                }
            })
            .collect();
        if needed(&shown, &least) > width {
            return self.blocks(width);
        }
        let mut w = natural.clone();
        let mut over = needed(&shown, &w).saturating_sub(width);
        while over > 0 {
            // The flexible column with the most to give gives one.
            let Some(&i) = shown
                .iter()
                .filter(|&&i| w[i] > least[i])
                .max_by_key(|&&i| w[i] - least[i])
            else {
                break;
            };
            w[i] -= 1;
            over -= 1;
        }
        self.boxed(&shown, &w, dropped)
    }

    /// The box drawn around `shown` columns at widths `w`.
    fn boxed(&self, shown: &[usize], w: &[usize], dropped: Vec<String>) -> Layout {
        let rule = |l: &str, fill: &str, mid: &str, r: &str| {
            let parts: Vec<String> = shown.iter().map(|&i| fill.repeat(w[i] + 2)).collect();
            format!("{l}{}{r}", parts.join(mid))
        };
        let mut lines = vec![rule("┌", "─", "┬", "┐")];
        let header: Vec<Cell> = self.header.iter().map(|h| Cell::from(h.as_str())).collect();
        self.boxed_row(&header, shown, w, &mut lines, true);
        lines.push(rule("╞", "═", "╪", "╡"));
        for r in &self.rows {
            self.boxed_row(r, shown, w, &mut lines, false);
        }
        lines.push(rule("└", "─", "┴", "┘"));
        Layout { lines, dropped }
    }

    fn boxed_row(
        &self,
        r: &[Cell],
        shown: &[usize],
        w: &[usize],
        lines: &mut Vec<String>,
        header: bool,
    ) {
        let cells: Vec<Vec<String>> = shown
            .iter()
            .map(|&i| {
                let fit = if header { Fit::Whole } else { self.fit[i] };
                fitted(&r[i].text, fit, w[i])
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let parts: Vec<String> = shown
                .iter()
                .zip(&cells)
                .map(|(&i, c)| {
                    let t = c.get(k).map_or("", String::as_str);
                    if r[i].right && !header {
                        format!(" {t:>0$} ", w[i])
                    } else {
                        format!(" {t:<0$} ", w[i])
                    }
                })
                .collect();
            lines.push(format!("│{}│", parts.join("┆")));
        }
    }

    /// One block per row: `header: value` lines (values fitted after the widest header),
    /// a blank line between rows.
    fn blocks(&self, width: usize) -> Layout {
        let label = self.header.iter().map(|h| chars(h)).max().unwrap_or(0);
        let room = width.saturating_sub(label + 2).max(MIN_FLEX);
        let mut lines = Vec::new();
        for (k, r) in self.rows.iter().enumerate() {
            if k > 0 {
                lines.push(String::new());
            }
            for (i, c) in r.iter().enumerate() {
                for (j, part) in fitted(&c.text, self.fit[i], room).into_iter().enumerate() {
                    let h = if j == 0 {
                        format!("{}:", self.header[i])
                    } else {
                        String::new()
                    };
                    lines.push(format!("{h:<0$} {part}", label + 1).trim_end().to_owned());
                }
            }
        }
        Layout {
            lines,
            dropped: Vec::new(),
        }
    }
}

/// The least width a name or prose column is shortened to (its header's when wider).
const MIN_FLEX: usize = 12;

/// A word that must not be broken: a number, timestamp or offset (a digit, not a path).
fn is_value(word: &str) -> bool {
    word.contains(|c: char| c.is_ascii_digit()) && !word.contains('/')
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// `text` as the lines a cell of `width` shows under `fit`.
fn fitted(text: &str, fit: Fit, width: usize) -> Vec<String> {
    match fit {
        _ if chars(text) <= width => vec![text.to_owned()],
        Fit::Whole => vec![text.to_owned()],
        Fit::Name => vec![shorten_middle(text, width)],
        Fit::Text => wrap(text, width),
    }
}

/// `s` in `width` characters, its middle replaced by `…` (`very-long-top…tion-12`).
pub fn shorten_middle(s: &str, width: usize) -> String {
    let c: Vec<char> = s.chars().collect();
    if c.len() <= width || width == 0 {
        return s.to_owned();
    }
    let keep = width - 1;
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let mut out: String = c[..head].iter().collect();
    out.push('…');
    out.extend(&c[c.len() - tail..]);
    out
}

/// `text` wrapped at spaces into lines of at most `width`, keeping `a -> b` and
/// parenthesised groups whole where they fit; a word longer than a line is shortened in the
/// middle.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut open = false;
    let mut join_next = false;
    for t in text.split(' ').filter(|t| !t.is_empty()) {
        let glue = open || join_next || t == "->";
        match words.last_mut() {
            Some(last) if glue && chars(last) + 1 + chars(t) <= width => {
                last.push(' ');
                last.push_str(t);
            }
            _ => words.push(t.to_owned()),
        }
        join_next = t == "->";
        if t.starts_with('(') {
            open = true;
        }
        if t.ends_with(')') {
            open = false;
        }
    }
    let mut lines: Vec<String> = Vec::new();
    for w in words {
        let w = shorten_middle(&w, width);
        match lines.last_mut() {
            Some(l) if chars(l) + 1 + chars(&w) <= width => {
                l.push(' ');
                l.push_str(&w);
            }
            _ => lines.push(w),
        }
    }
    lines
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

/// Writes `v` as a JSON [`document`] and a newline: indented when standard output is a
/// terminal (a person reads it), compact otherwise (a program does; one line). Keeps an I/O
/// error's kind, so a closed pipe is recognised as one.
pub fn write_document<T: Serialize>(out: &mut impl Write, v: &T) -> io::Result<()> {
    let doc = document(v);
    let written = if io::stdout().is_terminal() {
        serde_json::to_writer_pretty(&mut *out, &doc)
    } else {
        serde_json::to_writer(&mut *out, &doc)
    };
    written.map_err(|e| match e.io_error_kind() {
        Some(kind) => io::Error::new(kind, e),
        None => io::Error::other(e),
    })?;
    writeln!(out)
}

/// Prints `v` as a JSON [`document`] on standard output, as [`print_fmt`] prints text.
pub fn print_document<T: Serialize>(v: &T) {
    if let Err(e) = quiet_broken_pipe(write_document(&mut io::stdout().lock(), v)) {
        crate::cli::errln!("error: writing standard output: {e}");
        std::process::exit(2);
    }
}

/// What a command that streams (`dump`) prints, object by object as they come, so memory
/// stays bounded: with `--jsonl` JSON Lines, the first line `{"format": …, "type":
/// "stream"}`; with `--json` one document, `{"format": …, "items": [ … ], "fileCount": …}`, an
/// item a line.
pub struct JsonStream<W: Write> {
    out: W,
    lines: bool,
    items: u64,
}

impl<W: Write> JsonStream<W> {
    /// Starts the stream (`lines`: JSON Lines) on `out`.
    pub fn start(mut out: W, lines: bool) -> io::Result<Self> {
        if lines {
            serde_json::to_writer(&mut out, &document(&serde_json::json!({"type": "stream"})))?;
            out.write_all(b"\n")?;
        } else {
            let format = serde_json::Value::from(crate::ops::JSON_FORMAT);
            write!(out, "{{\"format\":{format},\"items\":[")?;
        }
        Ok(JsonStream {
            out,
            lines,
            items: 0,
        })
    }

    /// Writes one object.
    pub fn item<T: Serialize>(&mut self, v: &T) -> io::Result<()> {
        if !self.lines {
            self.out
                .write_all(if self.items == 0 { b"\n" } else { b",\n" })?;
        }
        serde_json::to_writer(&mut self.out, v)?;
        if self.lines {
            self.out.write_all(b"\n")?;
        }
        self.items += 1;
        Ok(())
    }

    /// Ends the document (nothing to end in JSON Lines) with `files`, the number of Kafka
    /// files read (null when the run stopped at an error); the writer back, unflushed.
    pub fn finish(mut self, files: Option<usize>) -> io::Result<W> {
        if !self.lines {
            let files = serde_json::Value::from(files);
            write!(self.out, "\n],\"fileCount\":{files}}}\n")?;
        }
        Ok(self.out)
    }
}

/// Prints to standard output `json` as a JSON [`document`] when given, else what
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
pub fn right(v: impl ToString) -> Cell {
    Cell {
        text: v.to_string(),
        right: true,
    }
}

/// The value, or `-` for none.
pub fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// Adds `row` to `t`, its first `left` cells aligned left (names), the rest right (numbers).
pub fn add_row_aligned<const N: usize>(t: &mut Table, row: [String; N], left: usize) {
    t.add_row(row.into_iter().enumerate().map(|(i, v)| Cell {
        text: v,
        right: i >= left,
    }));
}

/// The severity of `f` as its findings show it (`error`, `warning`).
pub(crate) fn severity(f: &Finding) -> &'static str {
    match f.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// `error[batch.crc] path @ byte 1234 (offset 56): message`
pub(crate) fn line(f: &Finding) -> String {
    let label = format!("{}[{}]", severity(f), f.check);
    let mut s = format!(
        "{} {}",
        paint(&label, f.severity, Stream::Stdout),
        f.file.display()
    );
    if let Some(p) = f.position {
        s += &format!(" @ byte {p}");
    }
    if let Some(o) = f.offset {
        s += &format!(" (offset {o})");
    }
    s + ": " + &f.message
}
