//! Small text files of a log directory (formats.md §9 and §10): the generic checkpoint format
//! (version line, count line, one entry per line) with its two users, offset checkpoints and
//! `leader-epoch-checkpoint`; `partition.metadata`; `meta.properties` (a Java properties file);
//! `.kafka_cleanshutdown` (JSON); and Kafka's base64 form of a UUID.
//!
//! Readers follow Kafka's (Java `BufferedReader.readLine` line splitting, `\s+` token splitting,
//! `Integer.parseInt`/`Long.parseLong` number rules) and report Kafka's exception texts. The
//! `location` parameters are the path Kafka would put in those texts. Nothing here does I/O.

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine as _;
use serde::{Deserialize, Serialize, Serializer};

use super::error::{DecodeError, ErrorKind, Result};
use super::names::{is_java_whitespace, parse_java_int, parse_java_long};

/// Version of offset checkpoints (`recovery-point-offset-checkpoint`, …).
pub const OFFSET_CHECKPOINT_VERSION: i32 = 0;
/// Version of `leader-epoch-checkpoint`.
pub const LEADER_EPOCH_CHECKPOINT_VERSION: i32 = 0;
/// Version of `partition.metadata`.
pub const PARTITION_METADATA_VERSION: i32 = 0;
/// Version of `.kafka_cleanshutdown`.
pub const CLEAN_SHUTDOWN_VERSION: i32 = 0;
/// Bytes in a UUID.
pub const UUID_BYTES: usize = 16;
/// Characters of a UUID in Kafka's unpadded URL-safe base64.
pub const UUID_BASE64_CHARS: usize = 22;
/// Longest text Kafka's `Uuid.fromString` tries to decode.
pub const UUID_MAX_INPUT_CHARS: usize = 24;
/// Line separator the writers here use (Kafka uses the platform's; `\n` on Linux).
pub const LINE_SEPARATOR: &str = "\n";

// ---------------------------------------------------------------------------------------------
// Line and token splitting with Java's rules

/// A line and the byte position where it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    pub text: &'a str,
    pub pos: usize,
}

/// Splits text into lines like Java's `BufferedReader.readLine`: terminators `\n`, `\r\n` and
/// `\r`; a final terminator does not start another line; an empty text has no lines.
pub fn java_lines(text: &str) -> Vec<Line<'_>> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push(Line {
                    text: &text[start..i],
                    pos: start,
                });
                i += 1;
                start = i;
            }
            b'\r' => {
                lines.push(Line {
                    text: &text[start..i],
                    pos: start,
                });
                i += if bytes.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                start = i;
            }
            _ => i += 1,
        }
    }
    if start < bytes.len() {
        lines.push(Line {
            text: &text[start..],
            pos: start,
        });
    }
    lines
}

/// Java's `String.split(regex)` with the separator finder `next_sep(text, from)` returning the
/// next match as a byte range: no match gives `[text]`; otherwise the pieces between matches (a
/// match at the very start gives a leading `""`) with trailing empty pieces removed.
fn java_split(text: &str, next_sep: impl Fn(&str, usize) -> Option<(usize, usize)>) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut from = 0;
    let mut matched = false;
    while let Some((s, e)) = next_sep(text, from) {
        matched = true;
        pieces.push(&text[start..s]);
        start = e;
        from = e;
    }
    if !matched {
        return vec![text];
    }
    pieces.push(&text[start..]);
    while pieces.last() == Some(&"") {
        pieces.pop();
    }
    pieces
}

/// Java's `Pattern.compile("\\s+").split(line)`: split at runs of whitespace; a leading run gives
/// an empty first token; trailing empty tokens are dropped (a line of only blanks gives none, an
/// empty line gives `[""]`).
pub fn java_split_whitespace(line: &str) -> Vec<&str> {
    java_split(line, |text, from| {
        let s = from + text[from..].find(is_java_whitespace)?;
        let e = text[s..]
            .find(|c| !is_java_whitespace(c))
            .map_or(text.len(), |n| s + n);
        Some((s, e))
    })
}

/// Java's `Pattern.compile(":\\s+").split(line)`: split at a colon followed by whitespace.
fn split_colon_whitespace(line: &str) -> Vec<&str> {
    java_split(line, |text, from| {
        let mut at = from;
        loop {
            let s = at + text[at..].find(':')?;
            let ws = text[s + 1..]
                .find(|c| !is_java_whitespace(c))
                .unwrap_or(text.len() - s - 1);
            if ws > 0 {
                return Some((s, s + 1 + ws));
            }
            at = s + 1;
        }
    })
}

fn utf8(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|e| {
        DecodeError::new(
            ErrorKind::Malformed,
            e.valid_up_to(),
            format!(
                "Input length = {} (not valid UTF-8)",
                e.error_len().unwrap_or(1)
            ),
        )
    })
}

/// Java's `NumberFormatException` text.
fn number_format_message(s: &str) -> String {
    format!("For input string: \"{s}\"")
}

// ---------------------------------------------------------------------------------------------
// Generic checkpoint file

/// How an entry line parsed: `Ok(Some)` an entry, `Ok(None)` a wrong token count (Kafka's
/// "Malformed line"), `Err` a number that did not parse (Kafka's `NumberFormatException` text).
pub type EntryParse<T> = std::result::Result<Option<T>, String>;

fn malformed_line(location: &str, line: &str) -> String {
    format!("Malformed line in checkpoint file [{location}]: {line}")
}

/// Reads a checkpoint file as Kafka's `CheckpointReadBuffer` does: no line → no entries; the
/// version must equal `expected_version`; no second line → no entries; then every remaining line
/// is an entry and their number must equal the count line.
pub fn decode_checkpoint<T>(
    bytes: &[u8],
    expected_version: i32,
    location: &str,
    parse_entry: impl Fn(&str) -> EntryParse<T>,
) -> Result<Vec<T>> {
    let text = utf8(bytes)?;
    let lines = java_lines(text);
    let mut it = lines.iter();
    let to_int = |line: &Line<'_>| {
        parse_java_int(line.text).ok_or_else(|| {
            DecodeError::new(
                ErrorKind::Malformed,
                line.pos,
                malformed_line(location, line.text),
            )
        })
    };
    let Some(version_line) = it.next() else {
        return Ok(Vec::new());
    };
    let version = to_int(version_line)?;
    if version != expected_version {
        return Err(DecodeError::new(
            ErrorKind::BadValue,
            version_line.pos,
            format!(
                "Unrecognised version:{version}, expected version: {expected_version} in checkpoint file at: \
                 {location}"
            ),
        ));
    }
    let Some(count_line) = it.next() else {
        return Ok(Vec::new());
    };
    let expected = to_int(count_line)?;
    if expected < 0 {
        return Err(DecodeError::new(
            ErrorKind::BadLength,
            count_line.pos,
            format!("Illegal Capacity: {expected}"),
        ));
    }
    let mut entries = Vec::new();
    for line in it {
        match parse_entry(line.text) {
            Ok(Some(entry)) => entries.push(entry),
            Ok(None) => {
                return Err(DecodeError::new(
                    ErrorKind::Malformed,
                    line.pos,
                    malformed_line(location, line.text),
                ))
            }
            Err(message) => return Err(DecodeError::new(ErrorKind::Malformed, line.pos, message)),
        }
    }
    if entries.len() != expected as usize {
        return Err(DecodeError::new(
            ErrorKind::BadLength,
            text.len(),
            format!(
                "Expected [{expected}] entries in checkpoint file [{location}], but found only [{}]",
                entries.len()
            ),
        ));
    }
    Ok(entries)
}

/// Writes a checkpoint file: version line, count line, one line per entry, each ended by `\n`.
pub fn encode_checkpoint<I>(version: i32, entries: I) -> String
where
    I: IntoIterator<Item = String>,
    I::IntoIter: ExactSizeIterator,
{
    let entries = entries.into_iter();
    let mut out = format!("{version}{LINE_SEPARATOR}{}{LINE_SEPARATOR}", entries.len());
    for e in entries {
        out.push_str(&e);
        out.push_str(LINE_SEPARATOR);
    }
    out
}

fn parse_long_token(s: &str) -> std::result::Result<i64, String> {
    parse_java_long(s).ok_or_else(|| number_format_message(s))
}

fn parse_int_token(s: &str) -> std::result::Result<i32, String> {
    parse_java_int(s).ok_or_else(|| number_format_message(s))
}

/// One line of an offset checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OffsetCheckpointEntry {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

/// `recovery-point-offset-checkpoint`, `replication-offset-checkpoint`,
/// `log-start-offset-checkpoint`, `cleaner-offset-checkpoint`; entries in file order.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OffsetCheckpoint {
    pub entries: Vec<OffsetCheckpointEntry>,
}

impl OffsetCheckpoint {
    pub fn decode(bytes: &[u8], location: &str) -> Result<Self> {
        let entries = decode_checkpoint(bytes, OFFSET_CHECKPOINT_VERSION, location, |line| {
            let t = java_split_whitespace(line);
            if t.len() != 3 {
                return Ok(None);
            }
            Ok(Some(OffsetCheckpointEntry {
                topic: t[0].to_string(),
                partition: parse_int_token(t[1])?,
                offset: parse_long_token(t[2])?,
            }))
        })?;
        Ok(OffsetCheckpoint { entries })
    }

    /// `0\n<count>\n<topic> <partition> <offset>\n…`.
    pub fn encode(&self) -> String {
        encode_checkpoint(
            OFFSET_CHECKPOINT_VERSION,
            self.entries
                .iter()
                .map(|e| format!("{} {} {}", e.topic, e.partition, e.offset)),
        )
    }
}

/// One line of `leader-epoch-checkpoint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EpochEntry {
    pub epoch: i32,
    pub start_offset: i64,
}

/// `leader-epoch-checkpoint`; entries in file order.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaderEpochCheckpoint {
    pub entries: Vec<EpochEntry>,
}

impl LeaderEpochCheckpoint {
    pub fn decode(bytes: &[u8], location: &str) -> Result<Self> {
        let entries =
            decode_checkpoint(bytes, LEADER_EPOCH_CHECKPOINT_VERSION, location, |line| {
                let t = java_split_whitespace(line);
                if t.len() != 2 {
                    return Ok(None);
                }
                Ok(Some(EpochEntry {
                    epoch: parse_int_token(t[0])?,
                    start_offset: parse_long_token(t[1])?,
                }))
            })?;
        Ok(LeaderEpochCheckpoint { entries })
    }

    /// `0\n<count>\n<epoch> <start offset>\n…`.
    pub fn encode(&self) -> String {
        encode_checkpoint(
            LEADER_EPOCH_CHECKPOINT_VERSION,
            self.entries
                .iter()
                .map(|e| format!("{} {}", e.epoch, e.start_offset)),
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Kafka UUIDs

/// Java's URL-safe base64 decoder is lenient about padding and unused trailing bits.
const JAVA_URL_DECODER: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Kafka's `Uuid.toString`: URL-safe base64 of the 16 bytes without padding (22 characters).
pub fn uuid_to_base64(uuid: &[u8; UUID_BYTES]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(uuid)
}

/// Kafka's `Uuid.fromString`, with its error texts (the base64 decoder's own texts are close
/// renderings of Java's).
pub fn uuid_from_base64(s: &str) -> std::result::Result<[u8; UUID_BYTES], String> {
    if s.encode_utf16().count() > UUID_MAX_INPUT_CHARS {
        let prefix: String = s.chars().take(UUID_MAX_INPUT_CHARS).collect();
        return Err(format!(
            "Input string with prefix `{prefix}` is too long to be decoded as a base64 UUID"
        ));
    }
    let decoded = JAVA_URL_DECODER.decode(s).map_err(|e| match e {
        base64::DecodeError::InvalidByte(_, b) => format!("Illegal base64 character {b:x}"),
        base64::DecodeError::InvalidLength(_) => {
            "Last unit does not have enough valid bits".to_string()
        }
        base64::DecodeError::InvalidLastSymbol(_, b) => format!("Illegal base64 character {b:x}"),
        base64::DecodeError::InvalidPadding => {
            "Input byte array has wrong 4-byte ending unit".to_string()
        }
    })?;
    <[u8; UUID_BYTES]>::try_from(decoded.as_slice()).map_err(|_| {
        format!(
            "Input string `{s}` decoded as {} bytes, which is not equal to the expected 16 bytes of a \
             base64-encoded UUID",
            decoded.len()
        )
    })
}

fn serialize_uuid<S: Serializer>(
    uuid: &[u8; UUID_BYTES],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&uuid_to_base64(uuid))
}

fn serialize_opt_uuid<S: Serializer>(
    uuid: &Option<[u8; UUID_BYTES]>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match uuid {
        Some(u) => s.serialize_some(&uuid_to_base64(u)),
        None => s.serialize_none(),
    }
}

// ---------------------------------------------------------------------------------------------
// partition.metadata

/// `partition.metadata`: `version: 0\ntopic_id: <base64 uuid>` (no trailing newline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionMetadata {
    pub version: i32,
    #[serde(serialize_with = "serialize_uuid")]
    pub topic_id: [u8; UUID_BYTES],
}

impl PartitionMetadata {
    /// Reads the file as Kafka's `PartitionMetadataReadBuffer` does: only the first two lines
    /// are looked at, each split at `:` + whitespace into exactly two parts (labels are not
    /// checked); version ≥ 0; the topic id must decode and must not be the all-zero UUID.
    pub fn decode(bytes: &[u8], location: &str) -> Result<Self> {
        let text = utf8(bytes)?;
        let lines = java_lines(text);
        let malformed = |line: Option<&Line<'_>>| {
            DecodeError::new(
                ErrorKind::Malformed,
                line.map_or(text.len(), |l| l.pos),
                malformed_line(location, line.map_or("null", |l| l.text)),
            )
        };
        let first = lines.first();
        let version_parts = first
            .map(|l| split_colon_whitespace(l.text))
            .unwrap_or_default();
        if version_parts.len() != 2 {
            return Err(malformed(first));
        }
        let version = parse_java_int(version_parts[1]).ok_or_else(|| malformed(first))?;
        if version < PARTITION_METADATA_VERSION {
            return Err(DecodeError::new(
                ErrorKind::BadValue,
                0,
                format!(
                    "Unrecognized version of partition metadata file + ({location}): {version}"
                ),
            ));
        }
        let second = lines.get(1);
        let id_parts = second
            .map(|l| split_colon_whitespace(l.text))
            .unwrap_or_default();
        if id_parts.len() != 2 {
            return Err(malformed(second));
        }
        let pos = second.map_or(0, |l| l.pos);
        let topic_id = uuid_from_base64(id_parts[1])
            .map_err(|m| DecodeError::new(ErrorKind::BadValue, pos, m))?;
        if topic_id == [0u8; UUID_BYTES] {
            return Err(DecodeError::new(
                ErrorKind::BadValue,
                pos,
                format!("Invalid topic ID in partition metadata file ({location})"),
            ));
        }
        Ok(PartitionMetadata { version, topic_id })
    }

    /// Exactly what Kafka writes: `version: <v>\ntopic_id: <id>`, no trailing newline.
    pub fn encode(&self) -> String {
        format!(
            "version: {}\ntopic_id: {}",
            self.version,
            uuid_to_base64(&self.topic_id)
        )
    }
}

// ---------------------------------------------------------------------------------------------
// meta.properties

pub const META_PROPERTIES_VERSION_KEY: &str = "version";
pub const META_PROPERTIES_CLUSTER_ID_KEY: &str = "cluster.id";
pub const META_PROPERTIES_NODE_ID_KEY: &str = "node.id";
pub const META_PROPERTIES_BROKER_ID_KEY: &str = "broker.id";
pub const META_PROPERTIES_DIRECTORY_ID_KEY: &str = "directory.id";

/// Parses a Java properties file as `Properties.load(InputStream)` does: bytes are ISO-8859-1;
/// lines end at `\n`, `\r` or `\r\n`; leading blanks (space, tab, form feed) are skipped; lines
/// starting with `#` or `!` are comments; a line ending in an odd number of backslashes continues
/// on the next; the key ends at the first unescaped `=`, `:` or blank; escapes `\t \n \r \f \uXXXX`
/// are decoded and any other escaped character stands for itself. Pairs are returned in file
/// order (for duplicate keys the last one wins; see [`property`]).
pub fn parse_java_properties(bytes: &[u8]) -> Result<Vec<(String, String)>> {
    let text: String = bytes.iter().map(|&b| char::from(b)).collect();
    let natural = java_lines(&text);
    let mut out = Vec::new();
    let mut i = 0;
    let is_blank = |c: char| matches!(c, ' ' | '\t' | '\u{0C}');
    while i < natural.len() {
        let first = natural[i].text.trim_start_matches(is_blank);
        i += 1;
        if first.is_empty() || first.starts_with('#') || first.starts_with('!') {
            continue;
        }
        let mut logical = first.to_string();
        while ends_with_odd_backslashes(&logical) {
            logical.pop();
            match natural.get(i) {
                Some(next) => {
                    logical.push_str(next.text.trim_start_matches(is_blank));
                    i += 1;
                }
                None => break,
            }
        }
        let (key, value) = split_property_line(&logical);
        let pos = natural[i - 1].pos;
        let key =
            unescape_property(key).map_err(|m| DecodeError::new(ErrorKind::Malformed, pos, m))?;
        let value =
            unescape_property(value).map_err(|m| DecodeError::new(ErrorKind::Malformed, pos, m))?;
        out.push((key, value));
    }
    Ok(out)
}

fn ends_with_odd_backslashes(s: &str) -> bool {
    s.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

fn split_property_line(line: &str) -> (&str, &str) {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let is_blank = |c: char| matches!(c, ' ' | '\t' | '\u{0C}');
    let mut key_end = line.len();
    let mut value_start = line.len();
    let mut has_sep = false;
    let mut escaped = false;
    let mut k = 0;
    while k < chars.len() {
        let (at, c) = chars[k];
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' {
            key_end = at;
            value_start = at + 1;
            has_sep = true;
            break;
        } else if is_blank(c) {
            key_end = at;
            value_start = at + 1;
            break;
        }
        k += 1;
    }
    let rest = &line[value_start..];
    let mut skip = 0;
    for c in rest.chars() {
        if is_blank(c) {
            skip += c.len_utf8();
        } else if !has_sep && (c == '=' || c == ':') {
            has_sep = true;
            skip += 1;
        } else {
            break;
        }
    }
    (&line[..key_end], &rest[skip..])
}

fn unescape_property(s: &str) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = (hex.len() == 4)
                    .then(|| u32::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .filter(|_| hex.chars().all(|h| h.is_ascii_hexdigit()))
                    .ok_or_else(|| "Malformed \\uxxxx encoding.".to_string())?;
                // A lone surrogate cannot be a Rust char; Java would keep it as a UTF-16 unit.
                out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{0C}'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

/// The value of `key` in parsed properties (the last occurrence, as `Properties` keeps it).
pub fn property<'a>(props: &'a [(String, String)], key: &str) -> Option<&'a str> {
    props
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Escapes a key or value the way `Properties.store(Writer, …)` writes it (no `\uXXXX` escapes
/// for a `Writer`).
pub fn escape_property(s: &str, is_key: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{0C}' => out.push_str("\\f"),
            '=' | ':' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            ' ' if i == 0 || is_key => out.push_str("\\ "),
            _ => out.push(c),
        }
    }
    out
}

/// `meta.properties`. For version 0 the node id is the `broker.id` key; for version 1 it is
/// `node.id`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MetaProperties {
    pub version: i32,
    pub cluster_id: Option<String>,
    pub node_id: Option<i32>,
    #[serde(serialize_with = "serialize_opt_uuid")]
    pub directory_id: Option<[u8; UUID_BYTES]>,
}

impl MetaProperties {
    /// Parses and validates a `meta.properties` file.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let props = parse_java_properties(bytes)?;
        Self::from_properties(&props).map_err(|m| DecodeError::new(ErrorKind::BadValue, 0, m))
    }

    /// Kafka's `MetaProperties.Builder(Properties).build()`, with its error texts: version 0 or 1
    /// (default 0); v0 takes an optional `broker.id`; v1 needs `node.id` and `cluster.id`;
    /// `directory.id` must be a UUID if present.
    pub fn from_properties(props: &[(String, String)]) -> std::result::Result<Self, String> {
        let version_text = property(props, META_PROPERTIES_VERSION_KEY).unwrap_or("0");
        let version = parse_java_int(version_text.trim_matches(|c: char| c <= ' '))
            .ok_or_else(|| format!("Invalid meta.properties version string '{version_text}'"))?;
        if version != 0 && version != 1 {
            return Err(format!("Unknown meta.properties version number {version}"));
        }
        let required_int = |key: &str| -> std::result::Result<i32, String> {
            let value = property(props, key).ok_or_else(|| format!("Failed to find {key}"))?;
            parse_java_int(value)
                .ok_or_else(|| format!("Unable to read {key} as a base-10 number."))
        };
        let node_id = if version == 0 {
            match property(props, META_PROPERTIES_BROKER_ID_KEY) {
                Some(_) => Some(required_int(META_PROPERTIES_BROKER_ID_KEY)?),
                None => None,
            }
        } else {
            Some(required_int(META_PROPERTIES_NODE_ID_KEY)?)
        };
        let cluster_id = property(props, META_PROPERTIES_CLUSTER_ID_KEY).map(str::to_string);
        let directory_id = match property(props, META_PROPERTIES_DIRECTORY_ID_KEY) {
            Some(text) => Some(uuid_from_base64(text).map_err(|m| {
                format!("Unable to read {META_PROPERTIES_DIRECTORY_ID_KEY} as a Uuid: {m}")
            })?),
            None => None,
        };
        if version != 0 {
            if cluster_id.is_none() {
                return Err("cluster.id was not found.".to_string());
            }
            if node_id.is_none() {
                return Err("node.id was not found.".to_string());
            }
        }
        Ok(MetaProperties {
            version,
            cluster_id,
            node_id,
            directory_id,
        })
    }

    /// The `broker.id` of a version 0 file.
    pub fn broker_id(&self) -> Option<i32> {
        if self.version == 0 {
            self.node_id
        } else {
            None
        }
    }

    /// The key/value pairs Kafka's `toProperties` produces, sorted by key (the order in which
    /// `Properties.store` writes them on JDK 18 and later).
    pub fn to_properties(&self) -> Vec<(String, String)> {
        let mut props = vec![(
            META_PROPERTIES_VERSION_KEY.to_string(),
            self.version.to_string(),
        )];
        if let Some(c) = &self.cluster_id {
            props.push((META_PROPERTIES_CLUSTER_ID_KEY.to_string(), c.clone()));
        }
        if let Some(n) = self.node_id {
            let key = if self.version == 0 {
                META_PROPERTIES_BROKER_ID_KEY
            } else {
                META_PROPERTIES_NODE_ID_KEY
            };
            props.push((key.to_string(), n.to_string()));
        }
        if let Some(d) = &self.directory_id {
            props.push((
                META_PROPERTIES_DIRECTORY_ID_KEY.to_string(),
                uuid_to_base64(d),
            ));
        }
        props.sort();
        props
    }

    /// The file as `Properties.store(writer, "")` writes it: an empty `#` comment line, a `#`
    /// line with `date_comment` (Java's `Date.toString()`, see [`java_date_string_utc`]), then
    /// `key=value` lines.
    pub fn encode(&self, date_comment: &str) -> String {
        let mut out = format!("#{LINE_SEPARATOR}#{date_comment}{LINE_SEPARATOR}");
        for (k, v) in self.to_properties() {
            out.push_str(&escape_property(&k, true));
            out.push('=');
            out.push_str(&escape_property(&v, false));
            out.push_str(LINE_SEPARATOR);
        }
        out
    }
}

/// Java's `Date.toString()` in UTC, e.g. `Thu Oct 24 19:33:01 UTC 2024`.
pub fn java_date_string_utc(epoch_ms: i64) -> String {
    const DAY_SECONDS: i64 = 86_400;
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = epoch_ms.div_euclid(1000);
    let days = secs.div_euclid(DAY_SECONDS);
    let sod = secs.rem_euclid(DAY_SECONDS);
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} UTC {}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        sod / 3600,
        sod % 3600 / 60,
        sod % 60,
        year
    )
}

// ---------------------------------------------------------------------------------------------
// .kafka_cleanshutdown

/// `.kafka_cleanshutdown`: `{"version":0,"brokerEpoch":N}`. What matters to the broker is the
/// file's presence; a file it cannot read just means "no broker epoch".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanShutdown {
    #[serde(default)]
    pub version: i32,
    pub broker_epoch: i64,
}

impl CleanShutdown {
    /// Reads the JSON; unknown fields are ignored, a missing or null `brokerEpoch` is an error
    /// (Kafka then reports no broker epoch).
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        serde_json::from_slice(bytes).map_err(|e| {
            DecodeError::new(
                ErrorKind::Malformed,
                0,
                format!("unreadable clean shutdown file: {e}"),
            )
        })
    }

    /// Exactly what Kafka writes (no trailing newline).
    pub fn encode(&self) -> String {
        format!(
            "{{\"version\":{},\"brokerEpoch\":{}}}",
            self.version, self.broker_epoch
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::test_util::reference_dir;

    const LOC: &str = "/data/orders-0/leader-epoch-checkpoint";

    #[test]
    fn java_line_splitting() {
        fn texts(s: &str) -> Vec<&str> {
            java_lines(s).into_iter().map(|l| l.text).collect()
        }
        assert_eq!(texts(""), Vec::<&str>::new());
        assert_eq!(texts("a"), vec!["a"]);
        assert_eq!(texts("a\n"), vec!["a"]);
        assert_eq!(texts("a\n\n"), vec!["a", ""]);
        assert_eq!(texts("\n"), vec![""]);
        assert_eq!(texts("a\r\nb\rc\nd"), vec!["a", "b", "c", "d"]);
        assert_eq!(texts("a\r\r\nb"), vec!["a", "", "b"]);
        assert_eq!(java_lines("ab\r\ncd")[1].pos, 4);
    }

    #[test]
    fn java_token_splitting() {
        assert_eq!(java_split_whitespace("a 0 1"), vec!["a", "0", "1"]);
        assert_eq!(java_split_whitespace("a \t 0\x0b1  "), vec!["a", "0", "1"]);
        assert_eq!(java_split_whitespace(" a 0 1"), vec!["", "a", "0", "1"]);
        assert_eq!(java_split_whitespace(""), vec![""]);
        assert_eq!(java_split_whitespace("   "), Vec::<&str>::new());
    }

    #[test]
    fn leader_epoch_checkpoint_round_trip() {
        let text = "0\n2\n0 0\n3 1500\n";
        let cp = LeaderEpochCheckpoint::decode(text.as_bytes(), LOC).unwrap();
        assert_eq!(
            cp.entries,
            vec![
                EpochEntry {
                    epoch: 0,
                    start_offset: 0
                },
                EpochEntry {
                    epoch: 3,
                    start_offset: 1500
                }
            ]
        );
        assert_eq!(cp.encode(), text);
        // Other line endings and extra blanks are accepted.
        let crlf = LeaderEpochCheckpoint::decode(b"0\r\n2\r\n0\t 0  \r3 1500", LOC).unwrap();
        assert_eq!(crlf, cp);
    }

    #[test]
    fn empty_and_header_only_files_have_no_entries() {
        assert_eq!(
            LeaderEpochCheckpoint::decode(b"", LOC).unwrap().entries,
            vec![]
        );
        assert_eq!(
            LeaderEpochCheckpoint::decode(b"0\n", LOC).unwrap().entries,
            vec![]
        );
        assert_eq!(
            LeaderEpochCheckpoint::decode(b"0\n0\n", LOC)
                .unwrap()
                .entries,
            vec![]
        );
        assert_eq!(LeaderEpochCheckpoint::default().encode(), "0\n0\n");
    }

    #[test]
    fn checkpoint_errors() {
        let e = LeaderEpochCheckpoint::decode(b"1\n0\n", LOC).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadValue);
        assert_eq!(
            e.message,
            format!("Unrecognised version:1, expected version: 0 in checkpoint file at: {LOC}")
        );
        let e = LeaderEpochCheckpoint::decode(b"x\n0\n", LOC).unwrap_err();
        assert_eq!(
            e.message,
            format!("Malformed line in checkpoint file [{LOC}]: x")
        );
        let e = LeaderEpochCheckpoint::decode(b"0\n1 \n", LOC).unwrap_err();
        assert_eq!(
            e.message,
            format!("Malformed line in checkpoint file [{LOC}]: 1 ")
        );
        assert_eq!(e.pos, 2);
        let e = LeaderEpochCheckpoint::decode(b"0\n1\n0 0 0\n", LOC).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Malformed);
        assert_eq!(e.pos, 4);
        assert_eq!(
            e.message,
            format!("Malformed line in checkpoint file [{LOC}]: 0 0 0")
        );
        let e = LeaderEpochCheckpoint::decode(b"0\n1\n0 x\n", LOC).unwrap_err();
        assert_eq!(e.message, "For input string: \"x\"");
        let e = LeaderEpochCheckpoint::decode(b"0\n1\n0 0\n\n", LOC).unwrap_err();
        assert_eq!(
            e.message,
            format!("Malformed line in checkpoint file [{LOC}]: ")
        );
        let e = LeaderEpochCheckpoint::decode(b"0\n3\n0 0\n1 5\n", LOC).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadLength);
        assert_eq!(
            e.message,
            format!("Expected [3] entries in checkpoint file [{LOC}], but found only [2]")
        );
        let e = LeaderEpochCheckpoint::decode(b"0\n1\n0 0\n1 5\n", LOC).unwrap_err();
        assert_eq!(
            e.message,
            format!("Expected [1] entries in checkpoint file [{LOC}], but found only [2]")
        );
        let e = LeaderEpochCheckpoint::decode(b"0\n-1\n", LOC).unwrap_err();
        assert_eq!(e.message, "Illegal Capacity: -1");
        let e = LeaderEpochCheckpoint::decode(b"0\n1\n0 \xff\n", LOC).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Malformed);
        assert_eq!(e.pos, 6);
    }

    #[test]
    fn offset_checkpoint_round_trip() {
        let text = "0\n2\nmy-topic 0 1234\n__consumer_offsets 17 88\n";
        let cp = OffsetCheckpoint::decode(text.as_bytes(), "f").unwrap();
        assert_eq!(
            cp.entries,
            vec![
                OffsetCheckpointEntry {
                    topic: "my-topic".into(),
                    partition: 0,
                    offset: 1234
                },
                OffsetCheckpointEntry {
                    topic: "__consumer_offsets".into(),
                    partition: 17,
                    offset: 88
                },
            ]
        );
        assert_eq!(cp.encode(), text);
        let e = OffsetCheckpoint::decode(b"0\n1\nt 0\n", "f").unwrap_err();
        assert_eq!(e.message, "Malformed line in checkpoint file [f]: t 0");
        let e = OffsetCheckpoint::decode(b"0\n1\n t 0 1\n", "f").unwrap_err();
        assert_eq!(e.message, "Malformed line in checkpoint file [f]:  t 0 1");
        let e = OffsetCheckpoint::decode(b"0\n1\nt 0 99999999999999999999\n", "f").unwrap_err();
        assert_eq!(e.message, "For input string: \"99999999999999999999\"");
        let e = OffsetCheckpoint::decode(b"0\n1\nt 1.5 3\n", "f").unwrap_err();
        assert_eq!(e.message, "For input string: \"1.5\"");
    }

    #[test]
    fn uuid_base64() {
        let id: [u8; 16] = [
            0x4f, 0x52, 0x41, 0x43, 0x4c, 0x45, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
        ];
        assert_eq!(uuid_to_base64(&id), "T1JBQ0xFAAAAAAAAAAAAAQ");
        assert_eq!(uuid_from_base64("T1JBQ0xFAAAAAAAAAAAAAQ"), Ok(id));
        // Java's decoder also takes padding and ignores unused trailing bits.
        assert_eq!(uuid_from_base64("T1JBQ0xFAAAAAAAAAAAAAQ=="), Ok(id));
        assert_eq!(uuid_from_base64("T1JBQ0xFAAAAAAAAAAAAAR"), Ok(id));
        assert_eq!(uuid_to_base64(&[0xff; 16]), "_____________________w");
        assert_eq!(
            uuid_from_base64("AAAAAAAAAAAAAAAAAAAAAAAAA"),
            Err("Input string with prefix `AAAAAAAAAAAAAAAAAAAAAAAA` is too long to be decoded as a base64 UUID"
                .to_string())
        );
        assert_eq!(
            uuid_from_base64("AAAA"),
            Err("Input string `AAAA` decoded as 3 bytes, which is not equal to the expected 16 bytes of a \
                 base64-encoded UUID"
                .to_string())
        );
        assert_eq!(
            uuid_from_base64("T1JBQ0xFAAAAAAAAAAAAA+"),
            Err("Illegal base64 character 2b".to_string())
        );
    }

    #[test]
    fn partition_metadata() {
        let text = "version: 0\ntopic_id: T1JBQ0xFAAAAAAAAAAAAAQ";
        let pm = PartitionMetadata::decode(text.as_bytes(), "f").unwrap();
        assert_eq!(pm.version, 0);
        assert_eq!(uuid_to_base64(&pm.topic_id), "T1JBQ0xFAAAAAAAAAAAAAQ");
        assert_eq!(pm.encode(), text);
        assert_eq!(pm.encode().len(), 43);
        // Labels are not checked, more whitespace is fine, later lines are ignored, newer versions pass.
        let loose =
            PartitionMetadata::decode(b"v:\t 3\r\nx:  T1JBQ0xFAAAAAAAAAAAAAQ\nextra", "f").unwrap();
        assert_eq!(loose.version, 3);
        assert_eq!(loose.topic_id, pm.topic_id);
    }

    #[test]
    fn partition_metadata_errors() {
        let msg = |b: &[u8]| {
            PartitionMetadata::decode(b, "/d/partition.metadata")
                .unwrap_err()
                .message
        };
        assert_eq!(
            msg(b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA"),
            "Invalid topic ID in partition metadata file (/d/partition.metadata)"
        );
        assert_eq!(
            msg(b"version: -1\ntopic_id: T1JBQ0xFAAAAAAAAAAAAAQ"),
            "Unrecognized version of partition metadata file + (/d/partition.metadata): -1"
        );
        assert_eq!(
            msg(b"version:0\ntopic_id: T1JBQ0xFAAAAAAAAAAAAAQ"),
            "Malformed line in checkpoint file [/d/partition.metadata]: version:0"
        );
        assert_eq!(
            msg(b"version: x\ntopic_id: T1JBQ0xFAAAAAAAAAAAAAQ"),
            "Malformed line in checkpoint file [/d/partition.metadata]: version: x"
        );
        assert_eq!(
            msg(b"version: 0\ntopic_id T1JBQ0xFAAAAAAAAAAAAAQ"),
            "Malformed line in checkpoint file [/d/partition.metadata]: topic_id T1JBQ0xFAAAAAAAAAAAAAQ"
        );
        assert_eq!(
            msg(b"version: 0"),
            "Malformed line in checkpoint file [/d/partition.metadata]: null"
        );
        assert_eq!(
            msg(b""),
            "Malformed line in checkpoint file [/d/partition.metadata]: null"
        );
        assert!(msg(b"version: 0\ntopic_id: T1JBQ0xF").contains("decoded as 6 bytes"));
    }

    #[test]
    fn colon_split_follows_java() {
        assert_eq!(split_colon_whitespace("version: 0"), vec!["version", "0"]);
        assert_eq!(split_colon_whitespace(": 0"), vec!["", "0"]);
        assert_eq!(split_colon_whitespace("version: 0: "), vec!["version", "0"]);
        assert_eq!(split_colon_whitespace("a:b: c"), vec!["a:b", "c"]);
        assert_eq!(split_colon_whitespace(""), vec![""]);
    }

    #[test]
    fn java_properties_parsing() {
        let text = b"#\n#Thu Oct 24 19:33:01 UTC 2024\n  ! bang comment\n\nnode.id=1\n\
                     cluster.id = abc\\:def\\=x\\\\y\ndirectory.id:   T1JBQ0xFAAAAAAAAAAAAAQ\n\
                     version 1\nlong=a\\\n    b\nesc\\ key=\\u0041\\t\nempty\nnode.id=2\n";
        let props = parse_java_properties(text).unwrap();
        assert_eq!(property(&props, "cluster.id"), Some("abc:def=x\\y"));
        assert_eq!(
            property(&props, "directory.id"),
            Some("T1JBQ0xFAAAAAAAAAAAAAQ")
        );
        assert_eq!(property(&props, "version"), Some("1"));
        assert_eq!(property(&props, "long"), Some("ab"));
        assert_eq!(property(&props, "esc key"), Some("A\t"));
        assert_eq!(property(&props, "empty"), Some(""));
        assert_eq!(property(&props, "node.id"), Some("2"));
        assert_eq!(property(&props, "missing"), None);
        // ISO-8859-1 input.
        assert_eq!(
            property(&parse_java_properties(b"k=\xe9").unwrap(), "k"),
            Some("\u{e9}")
        );
        let e = parse_java_properties(b"k=\\u00zz").unwrap_err();
        assert_eq!(e.message, "Malformed \\uxxxx encoding.");
    }

    #[test]
    fn property_escaping() {
        assert_eq!(escape_property("a:b=c\\d#!", false), "a\\:b\\=c\\\\d\\#\\!");
        assert_eq!(escape_property(" a b", false), "\\ a b");
        assert_eq!(escape_property("a b", true), "a\\ b");
        assert_eq!(escape_property("t\tn\n", false), "t\\tn\\n");
        for s in ["a:b=c\\d#!", " lead", "x y"] {
            let line = format!("k={}", escape_property(s, false));
            assert_eq!(
                property(&parse_java_properties(line.as_bytes()).unwrap(), "k"),
                Some(s)
            );
        }
    }

    #[test]
    fn meta_properties_v1() {
        let text = "#\n#Thu Oct 24 19:33:01 UTC 2024\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\n\
                    directory.id=T1JBQ0xFAAAAAAAAAAAAAQ\nnode.id=1\nversion=1\n";
        let mp = MetaProperties::decode(text.as_bytes()).unwrap();
        assert_eq!(mp.version, 1);
        assert_eq!(mp.cluster_id.as_deref(), Some("MkU3OEVBNTcwNTJENDM2Qk"));
        assert_eq!(mp.node_id, Some(1));
        assert_eq!(mp.broker_id(), None);
        assert_eq!(
            mp.directory_id.map(|d| uuid_to_base64(&d)).as_deref(),
            Some("T1JBQ0xFAAAAAAAAAAAAAQ")
        );
        assert_eq!(mp.encode("Thu Oct 24 19:33:01 UTC 2024"), text);
    }

    #[test]
    fn meta_properties_v0() {
        let mp = MetaProperties::decode(b"broker.id=7\ncluster.id=c\n").unwrap();
        assert_eq!(mp.version, 0);
        assert_eq!(mp.node_id, Some(7));
        assert_eq!(mp.broker_id(), Some(7));
        assert_eq!(
            mp.encode("D"),
            "#\n#D\nbroker.id=7\ncluster.id=c\nversion=0\n"
        );
        let bare = MetaProperties::decode(b"version= 0 \n").unwrap();
        assert_eq!(bare.node_id, None);
        assert_eq!(bare.cluster_id, None);
        assert_eq!(bare.encode("D"), "#\n#D\nversion=0\n");
        // node.id is not read in version 0.
        assert_eq!(
            MetaProperties::decode(b"node.id=3\n").unwrap().node_id,
            None
        );
    }

    #[test]
    fn meta_properties_errors() {
        let msg = |b: &[u8]| MetaProperties::decode(b).unwrap_err().message;
        assert_eq!(
            msg(b"version=2\n"),
            "Unknown meta.properties version number 2"
        );
        assert_eq!(
            msg(b"version=x\n"),
            "Invalid meta.properties version string 'x'"
        );
        assert_eq!(msg(b"version=1\ncluster.id=c\n"), "Failed to find node.id");
        assert_eq!(
            msg(b"version=1\nnode.id=x\ncluster.id=c\n"),
            "Unable to read node.id as a base-10 number."
        );
        assert_eq!(msg(b"version=1\nnode.id=1\n"), "cluster.id was not found.");
        assert_eq!(
            msg(b"broker.id=\n"),
            "Unable to read broker.id as a base-10 number."
        );
        assert_eq!(
            msg(b"directory.id=AAAA\n"),
            "Unable to read directory.id as a Uuid: Input string `AAAA` decoded as 3 bytes, which is not \
             equal to the expected 16 bytes of a base64-encoded UUID"
        );
    }

    #[test]
    fn java_dates() {
        assert_eq!(java_date_string_utc(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(
            java_date_string_utc(1_729_798_381_000),
            "Thu Oct 24 19:33:01 UTC 2024"
        );
        assert_eq!(
            java_date_string_utc(951_782_400_000),
            "Tue Feb 29 00:00:00 UTC 2000"
        );
        assert_eq!(java_date_string_utc(-1000), "Wed Dec 31 23:59:59 UTC 1969");
    }

    #[test]
    fn clean_shutdown() {
        let cs = CleanShutdown::decode(br#"{"version":0,"brokerEpoch":42}"#).unwrap();
        assert_eq!(
            cs,
            CleanShutdown {
                version: 0,
                broker_epoch: 42
            }
        );
        assert_eq!(cs.encode(), r#"{"version":0,"brokerEpoch":42}"#);
        assert_eq!(
            CleanShutdown::decode(br#"{"brokerEpoch":-1,"other":true}"#).unwrap(),
            CleanShutdown {
                version: 0,
                broker_epoch: -1
            }
        );
        for bad in [
            &b""[..],
            b"{}",
            br#"{"version":0,"brokerEpoch":null}"#,
            b"not json",
        ] {
            assert_eq!(
                CleanShutdown::decode(bad).unwrap_err().kind,
                ErrorKind::Malformed
            );
        }
    }

    #[test]
    fn reference_small_files() {
        let Some(dir) = reference_dir("a-plain-v2") else {
            return;
        };
        let bytes = std::fs::read(dir.join("leader-epoch-checkpoint")).unwrap();
        let cp = LeaderEpochCheckpoint::decode(&bytes, "f").unwrap();
        assert_eq!(cp.entries.len(), 3);
        assert_eq!(cp.encode().as_bytes(), bytes.as_slice());
        let bytes = std::fs::read(dir.join("partition.metadata")).unwrap();
        let pm = PartitionMetadata::decode(&bytes, "f").unwrap();
        assert_eq!(pm.encode().as_bytes(), bytes.as_slice());

        let Some(dir) = reference_dir("c-transactions") else {
            return;
        };
        let bytes = std::fs::read(dir.join("leader-epoch-checkpoint")).unwrap();
        let cp = LeaderEpochCheckpoint::decode(&bytes, "f").unwrap();
        assert_eq!(
            cp.entries,
            vec![EpochEntry {
                epoch: 0,
                start_offset: 0
            }]
        );
        let pm =
            PartitionMetadata::decode(&std::fs::read(dir.join("partition.metadata")).unwrap(), "f")
                .unwrap();
        assert_eq!(
            (pm.version, uuid_to_base64(&pm.topic_id).as_str()),
            (0, "T1JBQ0xFAAAAAAAAAAAAAQ")
        );
    }
}
