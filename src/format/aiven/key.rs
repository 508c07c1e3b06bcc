//! Object keys: `{prefix}{topic}-{topicId}/{partition}/{startOffset, 20 digits}-{segmentId}.{suffix}`
//! (the plugin's `ObjectKeyFactory`). Both ids are Kafka `Uuid`s in their text form (URL-safe
//! base64, 22 characters). The prefix is glued on as it is: `a/` gives `a/topic-…`, `a-` gives
//! `a-topic-…`.

use super::custom::CustomMetadata;
use crate::format::checkpoint::{uuid_from_base64, uuid_to_base64, UUID_BYTES};
use crate::format::error::{DecodeError, ErrorKind, Result};

/// The three objects of one remote segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Suffix {
    /// The segment's bytes, chunked and transformed.
    Log,
    /// The five indexes, one after the other (positions in the manifest).
    Indexes,
    /// The JSON manifest.
    Manifest,
}

impl Suffix {
    pub const ALL: [Suffix; 3] = [Suffix::Log, Suffix::Indexes, Suffix::Manifest];

    pub fn as_str(self) -> &'static str {
        match self {
            Suffix::Log => "log",
            Suffix::Indexes => "indexes",
            Suffix::Manifest => "rsm-manifest",
        }
    }
}

/// What names a remote segment's objects.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SegmentKey {
    pub topic: String,
    pub topic_id: [u8; UUID_BYTES],
    pub partition: i32,
    pub start_offset: i64,
    pub segment_id: [u8; UUID_BYTES],
}

/// Digits of the start offset in a key, as in a local segment's file name.
const OFFSET_DIGITS: usize = 20;

impl SegmentKey {
    /// `{topic}-{topicId}/{partition}/{startOffset:020}-{segmentId}`: the key without prefix and
    /// suffix (the plugin's "main path", also the custom metadata's `object_key`).
    pub fn main_path(&self) -> String {
        format!(
            "{}-{}/{}/{:0width$}-{}",
            self.topic,
            uuid_to_base64(&self.topic_id),
            self.partition,
            self.start_offset,
            uuid_to_base64(&self.segment_id),
            width = OFFSET_DIGITS
        )
    }

    /// The full key of one of the segment's objects.
    pub fn object_key(&self, prefix: &str, suffix: Suffix) -> String {
        format!("{prefix}{}.{}", self.main_path(), suffix.as_str())
    }

    /// The key as the plugin resolves it for a segment it tiered: the prefix and main path
    /// stored in the segment's custom metadata (`__remote_log_metadata`) win over the configured
    /// prefix and the main path made from the segment's metadata.
    pub fn resolve(&self, custom: Option<&CustomMetadata>, prefix: &str, suffix: Suffix) -> String {
        let prefix = custom
            .and_then(|c| c.object_prefix.as_deref())
            .unwrap_or(prefix);
        match custom.and_then(|c| c.object_key.as_deref()) {
            Some(main) => format!("{prefix}{main}.{}", suffix.as_str()),
            None => self.object_key(prefix, suffix),
        }
    }

    /// [`SegmentKey::parse`] for a key whose prefix is not known: the prefix is taken to end
    /// at the `/` before `{topic}-{topicId}/` (a prefix that does not end in `/` reads as part
    /// of the topic). Returns the prefix too, as listings find it.
    pub fn split(key: &str) -> Result<(&str, SegmentKey, Suffix)> {
        let cut = key.rmatch_indices('/').nth(2).map_or(0, |(i, _)| i + 1);
        let prefix = &key[..cut];
        let (k, s) = SegmentKey::parse(prefix, key)?;
        Ok((prefix, k, s))
    }

    /// The segment and suffix a key names, given the prefix the keys were written under.
    /// Errors name the byte position in `key`.
    pub fn parse(prefix: &str, key: &str) -> Result<(SegmentKey, Suffix)> {
        let bad = |pos: usize, what: String| DecodeError::new(ErrorKind::Malformed, pos, what);
        let Some(rest) = key.strip_prefix(prefix) else {
            return Err(bad(
                0,
                format!("key {key:?} does not start with the prefix {prefix:?}"),
            ));
        };
        let base = prefix.len();
        let (main, suffix) = Suffix::ALL
            .iter()
            .find_map(|s| {
                rest.strip_suffix(s.as_str())
                    .and_then(|m| m.strip_suffix('.'))
                    .map(|m| (m, *s))
            })
            .ok_or_else(|| {
                bad(
                    key.len(),
                    format!("key {key:?} ends in none of .log, .indexes, .rsm-manifest"),
                )
            })?;
        let parts: Vec<&str> = main.split('/').collect();
        let [topic_dir, partition, file] = parts[..] else {
            return Err(bad(
                base,
                format!("expected {{topic}}-{{topicId}}/{{partition}}/{{offset}}-{{segmentId}} after the prefix, got {main:?}"),
            ));
        };
        let uuid_at = |text: &str, pos: usize, what: &str| {
            uuid_from_base64(text).map_err(|e| bad(pos, format!("{what} {text:?}: {e}")))
        };
        let id_len = 22;
        let split_id = |s: &str, pos: usize, what: &str| -> Result<(usize, [u8; UUID_BYTES])> {
            let cut = s
                .len()
                .checked_sub(id_len + 1)
                .filter(|&c| s.is_char_boundary(c) && s.as_bytes()[c] == b'-')
                .ok_or_else(|| bad(pos, format!("expected {s:?} to end in -{{{what}}}")))?;
            Ok((cut, uuid_at(&s[cut + 1..], pos + cut + 1, what)?))
        };
        let (cut, topic_id) = split_id(topic_dir, base, "topicId")?;
        let topic = topic_dir[..cut].to_string();
        let partition_pos = base + topic_dir.len() + 1;
        let partition: i32 = partition
            .parse()
            .ok()
            .filter(|p: &i32| *p >= 0 && !partition.starts_with('+'))
            .ok_or_else(|| {
                bad(
                    partition_pos,
                    format!("partition {partition:?} is not a number"),
                )
            })?;
        let file_pos = partition_pos + parts[1].len() + 1;
        let (cut, segment_id) = split_id(file, file_pos, "segmentId")?;
        let offset_text = &file[..cut];
        let start_offset: i64 = offset_text
            .parse()
            .ok()
            .filter(|o: &i64| {
                *o >= 0
                    && offset_text.len() >= OFFSET_DIGITS
                    && offset_text.bytes().all(|b| b.is_ascii_digit())
            })
            .ok_or_else(|| {
                bad(
                    file_pos,
                    format!("start offset {offset_text:?} is not 20 or more digits"),
                )
            })?;
        Ok((
            SegmentKey {
                topic,
                topic_id,
                partition,
                start_offset,
                segment_id,
            },
            suffix,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The example in the plugin's ObjectKeyFactory documentation.
    const EXAMPLE: &str =
        "someprefix/topic-MWJ6FHTfRYy67jzwZdeqSQ/7/00000000000000001234-tqimKeZwStOEOwRzT3L5oQ.log";

    #[test]
    fn key_of_the_plugin_documentation_round_trips() {
        let (k, s) = SegmentKey::parse("someprefix/", EXAMPLE).unwrap();
        assert_eq!(s, Suffix::Log);
        assert_eq!(
            (k.topic.as_str(), k.partition, k.start_offset),
            ("topic", 7, 1234)
        );
        assert_eq!(k.object_key("someprefix/", Suffix::Log), EXAMPLE);
        assert_eq!(
            k.object_key("", Suffix::Manifest),
            "topic-MWJ6FHTfRYy67jzwZdeqSQ/7/00000000000000001234-tqimKeZwStOEOwRzT3L5oQ.rsm-manifest"
        );
    }

    #[test]
    fn custom_metadata_prefix_and_key_win() {
        let (k, _) = SegmentKey::parse("someprefix/", EXAMPLE).unwrap();
        assert_eq!(k.resolve(None, "someprefix/", Suffix::Log), EXAMPLE);
        let moved = CustomMetadata {
            remote_size: Some(1),
            object_prefix: Some("old/".into()),
            object_key: None,
        };
        assert_eq!(
            k.resolve(Some(&moved), "someprefix/", Suffix::Indexes),
            format!("old/{}.indexes", k.main_path())
        );
        let renamed = CustomMetadata {
            object_key: Some("t-x/0/1-y".into()),
            ..moved
        };
        assert_eq!(
            k.resolve(Some(&renamed), "p/", Suffix::Manifest),
            "old/t-x/0/1-y.rsm-manifest"
        );
    }

    #[test]
    fn prefixes_are_found_in_listings() {
        let (prefix, k, _) = SegmentKey::split(EXAMPLE).unwrap();
        assert_eq!((prefix, k.start_offset), ("someprefix/", 1234));
        let deep = format!("a/b/{EXAMPLE}");
        assert_eq!(SegmentKey::split(&deep).unwrap().0, "a/b/someprefix/");
        let bare = EXAMPLE.trim_start_matches("someprefix/");
        assert_eq!(SegmentKey::split(bare).unwrap().0, "");
        assert!(SegmentKey::split("x/y.log").is_err());
    }

    #[test]
    fn topics_with_dashes_and_prefixes_without_slash() {
        let key = EXAMPLE.replace("someprefix/topic-", "p-my-topic-");
        let (k, _) = SegmentKey::parse("p-", &key).unwrap();
        assert_eq!(k.topic, "my-topic");
        assert_eq!(k.object_key("p-", Suffix::Log), key);
    }

    #[test]
    fn bad_keys_name_the_position() {
        let e = SegmentKey::parse("someprefix/", &EXAMPLE.replace("/7/", "/x/")).unwrap_err();
        assert_eq!(e.pos, "someprefix/topic-MWJ6FHTfRYy67jzwZdeqSQ/".len());
        let e = SegmentKey::parse("someprefix/", &EXAMPLE.replace(".log", ".idx")).unwrap_err();
        assert!(e.message.contains("ends in none"), "{e}");
        let e = SegmentKey::parse("other/", EXAMPLE).unwrap_err();
        assert_eq!(e.pos, 0);
        let e = SegmentKey::parse(
            "someprefix/",
            &EXAMPLE.replace("00000000000000001234", "1234"),
        )
        .unwrap_err();
        assert!(e.message.contains("20 or more digits"), "{e}");
    }
}
