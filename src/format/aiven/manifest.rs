//! The segment manifest (`*.rsm-manifest`, `manifest/SegmentManifestV1.java` and its Jackson
//! serde): JSON with `version` "1", `chunkIndex`, `segmentIndexes` (position and size of each
//! index inside the `.indexes` object; `transaction` null when the segment has none),
//! `compression`, `encryption` (absent without: `dataKey` wrapped, `aad` base64) and
//! `remoteLogSegmentMetadata` (written for people; the plugin does not read it back).

use base64::Engine;

use super::chunk_index::{int_field, missing, str_field, ChunkIndex};
use super::crypto::WrappedKey;
use super::key::SegmentKey;
use crate::format::checkpoint::{uuid_from_base64, uuid_to_base64};
use crate::format::error::{DecodeError, ErrorKind, Result};

/// Manifests are small (a variable index of a 1 GiB segment in 4 KiB chunks is ~400 KiB);
/// anything far larger is not one.
pub const MAX_MANIFEST_BYTES: usize = 64 * 1024 * 1024;

/// The five indexes, in the order the plugin writes them into `.indexes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexKind {
    Offset,
    Timestamp,
    ProducerSnapshot,
    LeaderEpoch,
    Transaction,
}

impl IndexKind {
    pub const ALL: [IndexKind; 5] = [
        IndexKind::Offset,
        IndexKind::Timestamp,
        IndexKind::ProducerSnapshot,
        IndexKind::LeaderEpoch,
        IndexKind::Transaction,
    ];

    pub fn json_name(self) -> &'static str {
        match self {
            IndexKind::Offset => "offset",
            IndexKind::Timestamp => "timestamp",
            IndexKind::ProducerSnapshot => "producerSnapshot",
            IndexKind::LeaderEpoch => "leaderEpoch",
            IndexKind::Transaction => "transaction",
        }
    }
}

/// Where one index lies in the `.indexes` object (its transformed bytes; 0 bytes: empty index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexRange {
    pub position: u32,
    pub size: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentIndexes {
    /// Offset, timestamp, producer snapshot, leader epoch: always there; transaction: optional.
    pub ranges: [Option<IndexRange>; 5],
}

impl SegmentIndexes {
    pub fn get(&self, kind: IndexKind) -> Option<IndexRange> {
        self.ranges[kind as usize]
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encryption {
    pub data_key: WrappedKey,
    pub aad: Vec<u8>,
}

/// `remoteLogSegmentMetadata` as the plugin writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentMetadata {
    pub key: SegmentKey,
    pub end_offset: i64,
    pub max_timestamp_ms: i64,
    pub broker_id: i32,
    pub event_timestamp_ms: i64,
    /// Epoch → start offset, ascending by epoch.
    pub segment_leader_epochs: Vec<(i32, i64)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub chunk_index: ChunkIndex,
    pub segment_indexes: SegmentIndexes,
    pub compression: bool,
    pub encryption: Option<Encryption>,
    pub segment: Option<SegmentMetadata>,
}

fn bad(m: String) -> DecodeError {
    DecodeError::new(ErrorKind::BadValue, 0, m)
}

impl Manifest {
    /// Compact JSON, fields in the plugin's order.
    pub fn to_json_text(&self) -> String {
        let mut m = serde_json::Map::new();
        m.insert("version".into(), "1".into());
        m.insert("chunkIndex".into(), self.chunk_index.to_json());
        let mut idx = serde_json::Map::new();
        for kind in IndexKind::ALL {
            let v = match self.segment_indexes.get(kind) {
                Some(r) => serde_json::json!({"position": r.position, "size": r.size}),
                None => serde_json::Value::Null,
            };
            idx.insert(kind.json_name().into(), v);
        }
        m.insert("segmentIndexes".into(), idx.into());
        m.insert("compression".into(), self.compression.into());
        if let Some(e) = &self.encryption {
            let mut enc = serde_json::Map::new();
            enc.insert("dataKey".into(), e.data_key.to_text().into());
            enc.insert(
                "aad".into(),
                base64::engine::general_purpose::STANDARD
                    .encode(&e.aad)
                    .into(),
            );
            m.insert("encryption".into(), enc.into());
        }
        let seg = match &self.segment {
            None => serde_json::Value::Null,
            Some(s) => {
                let epochs: serde_json::Map<String, serde_json::Value> = s
                    .segment_leader_epochs
                    .iter()
                    .map(|(e, o)| (e.to_string(), (*o).into()))
                    .collect();
                serde_json::json!({
                    "remoteLogSegmentId": {
                        "topicIdPartition": {
                            "topicId": uuid_to_base64(&s.key.topic_id),
                            "topicPartition": {"topic": s.key.topic, "partition": s.key.partition},
                        },
                        "id": uuid_to_base64(&s.key.segment_id),
                    },
                    "startOffset": s.key.start_offset,
                    "endOffset": s.end_offset,
                    "maxTimestampMs": s.max_timestamp_ms,
                    "brokerId": s.broker_id,
                    "eventTimestampMs": s.event_timestamp_ms,
                    "segmentLeaderEpochs": epochs,
                })
            }
        };
        m.insert("remoteLogSegmentMetadata".into(), seg);
        serde_json::to_string(&serde_json::Value::Object(m)).expect("a JSON value serializes")
    }

    /// Whether `len` bytes can be a manifest at all: a reader asks before it reads them.
    pub fn check_len(len: u64) -> Result<()> {
        if len > MAX_MANIFEST_BYTES as u64 {
            return Err(DecodeError::new(
                ErrorKind::TooLarge,
                MAX_MANIFEST_BYTES,
                format!("{len} bytes is no manifest (at most {MAX_MANIFEST_BYTES})"),
            ));
        }
        Ok(())
    }

    /// Parses a manifest; errors say which field. The wrapped data key is kept wrapped.
    pub fn parse(bytes: &[u8]) -> Result<Manifest> {
        Manifest::check_len(bytes.len() as u64)?;
        let v: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
            let pos = line_column_to_offset(bytes, e.line(), e.column());
            DecodeError::new(
                ErrorKind::Malformed,
                pos,
                format!("manifest is not JSON: {e}"),
            )
        })?;
        match v.get("version") {
            Some(serde_json::Value::String(s)) if s == "1" => {}
            other => {
                return Err(bad(format!(
                    "manifest version {}: only version \"1\" exists",
                    other.map_or("missing".to_string(), |o| o.to_string())
                )))
            }
        }
        let chunk_index = ChunkIndex::from_json(
            v.get("chunkIndex")
                .ok_or_else(|| missing("chunkIndex", "manifest", "an object"))?,
        )?;
        let si = v
            .get("segmentIndexes")
            .filter(|x| x.is_object())
            .ok_or_else(|| missing("segmentIndexes", "manifest", "an object"))?;
        let mut ranges = [None; 5];
        for kind in IndexKind::ALL {
            let within = format!("segmentIndexes.{}", kind.json_name());
            match si.get(kind.json_name()) {
                None | Some(serde_json::Value::Null) if kind == IndexKind::Transaction => {}
                Some(r) if r.is_object() => {
                    ranges[kind as usize] = Some(IndexRange {
                        position: int_field(r, "position", &within)?,
                        size: int_field(r, "size", &within)?,
                    })
                }
                _ => return Err(missing(kind.json_name(), "segmentIndexes", "an object")),
            }
        }
        let compression = v
            .get("compression")
            .and_then(|c| c.as_bool())
            .ok_or_else(|| missing("compression", "manifest", "true or false"))?;
        let encryption = match v.get("encryption") {
            None | Some(serde_json::Value::Null) => None,
            Some(e) => {
                let data_key = WrappedKey::parse(str_field(e, "dataKey", "encryption")?)?;
                let aad = base64::engine::general_purpose::STANDARD
                    .decode(str_field(e, "aad", "encryption")?)
                    .map_err(|_| missing("aad", "encryption", "base64"))?;
                Some(Encryption { data_key, aad })
            }
        };
        let segment = match v.get("remoteLogSegmentMetadata") {
            None | Some(serde_json::Value::Null) => None,
            Some(s) => Some(segment_from_json(s)?),
        };
        Ok(Manifest {
            chunk_index,
            segment_indexes: SegmentIndexes { ranges },
            compression,
            encryption,
            segment,
        })
    }
}

fn segment_from_json(s: &serde_json::Value) -> Result<SegmentMetadata> {
    let w = "remoteLogSegmentMetadata";
    let i64_of = |v: &serde_json::Value, name: &str, within: &str| {
        v.get(name)
            .and_then(|x| x.as_i64())
            .ok_or_else(|| missing(name, within, "a number"))
    };
    let i32_of = |v: &serde_json::Value, name: &str, within: &str| {
        i64_of(v, name, within)?
            .try_into()
            .map_err(|_| missing(name, within, "an int"))
    };
    let obj = |v: &serde_json::Value, name: &str, within: &str| -> Result<serde_json::Value> {
        v.get(name)
            .filter(|x| x.is_object())
            .cloned()
            .ok_or_else(|| missing(name, within, "an object"))
    };
    let uuid_of = |v: &serde_json::Value, name: &str, within: &str| {
        uuid_from_base64(str_field(v, name, within)?)
            .map_err(|e| bad(format!("{within}.{name}: {e}")))
    };
    let id = obj(s, "remoteLogSegmentId", w)?;
    let tip = obj(&id, "topicIdPartition", "remoteLogSegmentId")?;
    let tp = obj(&tip, "topicPartition", "topicIdPartition")?;
    let epochs = s
        .get("segmentLeaderEpochs")
        .and_then(|e| e.as_object())
        .ok_or_else(|| missing("segmentLeaderEpochs", w, "an object"))?;
    let mut segment_leader_epochs = Vec::with_capacity(epochs.len());
    for (k, o) in epochs {
        let epoch: i32 = k.parse().map_err(|_| {
            bad(format!(
                "{w}.segmentLeaderEpochs: key {k:?} is not an epoch"
            ))
        })?;
        let offset = o
            .as_i64()
            .ok_or_else(|| bad(format!("{w}.segmentLeaderEpochs.{k}: expected an offset")))?;
        segment_leader_epochs.push((epoch, offset));
    }
    segment_leader_epochs.sort_unstable();
    Ok(SegmentMetadata {
        key: SegmentKey {
            topic: str_field(&tp, "topic", "topicPartition")?.to_string(),
            topic_id: uuid_of(&tip, "topicId", "topicIdPartition")?,
            partition: i32_of(&tp, "partition", "topicPartition")?,
            start_offset: i64_of(s, "startOffset", w)?,
            segment_id: uuid_of(&id, "id", "remoteLogSegmentId")?,
        },
        end_offset: i64_of(s, "endOffset", w)?,
        max_timestamp_ms: i64_of(s, "maxTimestampMs", w)?,
        broker_id: i32_of(s, "brokerId", w)?,
        event_timestamp_ms: i64_of(s, "eventTimestampMs", w)?,
        segment_leader_epochs,
    })
}

/// serde_json reports line and column (1-based); errors here name byte positions.
fn line_column_to_offset(bytes: &[u8], line: usize, column: usize) -> usize {
    let mut at = 0;
    for _ in 1..line {
        match bytes[at..].iter().position(|b| *b == b'\n') {
            Some(p) => at += p + 1,
            None => return bytes.len(),
        }
    }
    (at + column.saturating_sub(1)).min(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    // SegmentManifestV1SerdeTest's manifest without encryption, as the plugin writes it.
    const PLUGIN_MANIFEST: &str = concat!(
        r#"{"version":"1","chunkIndex":{"type":"fixed","originalChunkSize":100,"originalFileSize":1000,"transformedChunkSize":110,"finalTransformedChunkSize":110},"#,
        r#""segmentIndexes":{"offset":{"position":0,"size":1},"timestamp":{"position":1,"size":1},"producerSnapshot":{"position":2,"size":1},"leaderEpoch":{"position":3,"size":1},"transaction":null},"#,
        r#""compression":false,"remoteLogSegmentMetadata":{"remoteLogSegmentId":{"topicIdPartition":{"topicId":"lZ6vvmajTWKDBUTV6SQAtQ","topicPartition":{"topic":"topic1","partition":42}},"id":"adh9f8BMS4anaUnD8KWfWg"},"#,
        r#""startOffset":0,"endOffset":1000,"maxTimestampMs":1000000000,"brokerId":2,"eventTimestampMs":2000000000,"segmentLeaderEpochs":{"0":100,"1":200,"2":300}}}"#
    );

    #[test]
    fn plugin_manifest_parses_and_writes_back_identically() {
        let m = Manifest::parse(PLUGIN_MANIFEST.as_bytes()).unwrap();
        assert!(!m.compression && m.encryption.is_none());
        assert_eq!(
            m.segment_indexes.get(IndexKind::LeaderEpoch),
            Some(IndexRange {
                position: 3,
                size: 1
            })
        );
        assert_eq!(m.segment_indexes.get(IndexKind::Transaction), None);
        let seg = m.segment.as_ref().unwrap();
        assert_eq!(
            (seg.key.topic.as_str(), seg.key.partition, seg.broker_id),
            ("topic1", 42, 2)
        );
        assert_eq!(m.to_json_text(), PLUGIN_MANIFEST);
    }

    #[test]
    fn encryption_fields() {
        let text = PLUGIN_MANIFEST.replace(
            r#""compression":false,"#,
            r#""compression":false,"encryption":{"dataKey":"k1:AAEC","aad":"CgsMDQ=="},"#,
        );
        let m = Manifest::parse(text.as_bytes()).unwrap();
        let e = m.encryption.as_ref().unwrap();
        assert_eq!(
            (e.data_key.key_id.as_str(), e.aad.as_slice()),
            ("k1", &[10u8, 11, 12, 13][..])
        );
        assert_eq!(m.to_json_text(), text);
    }

    #[test]
    fn every_truncation_and_byte_flip_is_an_error_or_a_manifest_never_a_panic() {
        let variable = PLUGIN_MANIFEST.replace(
            r#""type":"fixed","originalChunkSize":100,"originalFileSize":1000,"transformedChunkSize":110,"finalTransformedChunkSize":110"#,
            r#""type":"variable","originalChunkSize":100,"originalFileSize":250,"transformedChunks":"KLUv/SAPeQAAAAAAAwAAAAoBAAoAAAAe""#,
        );
        for text in [PLUGIN_MANIFEST, &variable] {
            let b = text.as_bytes();
            for cut in 0..b.len() {
                assert!(Manifest::parse(&b[..cut]).is_err(), "cut at {cut}");
                let mut flipped = b.to_vec();
                flipped[cut] ^= 0x04;
                if let Ok(m) = Manifest::parse(&flipped) {
                    let i = &m.chunk_index;
                    for c in 0..i.chunk_count() {
                        i.chunk(c);
                    }
                }
            }
        }
    }

    #[test]
    fn bad_manifests_say_what_is_wrong() {
        let e = Manifest::parse(b"{\"version\":\"1\",\n  \"chunkIndex\": x}").unwrap_err();
        assert_eq!((e.kind, e.pos), (ErrorKind::Malformed, 32));
        let e = Manifest::parse(
            PLUGIN_MANIFEST
                .replace("\"version\":\"1\"", "\"version\":\"2\"")
                .as_bytes(),
        )
        .unwrap_err();
        assert!(e.message.contains("version \"2\""), "{e}");
        let e = Manifest::parse(
            PLUGIN_MANIFEST
                .replace("\"offset\":{\"position\":0,\"size\":1},", "")
                .as_bytes(),
        )
        .unwrap_err();
        assert!(e.message.contains("segmentIndexes.offset"), "{e}");
        let e = Manifest::parse(
            PLUGIN_MANIFEST
                .replace("\"compression\":false", "\"compression\":0")
                .as_bytes(),
        )
        .unwrap_err();
        assert!(e.message.contains("compression"), "{e}");
    }
}
