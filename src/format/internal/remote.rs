//! `--remote-log-metadata-decoder` (dump-log.md §7.5): `__remote_log_metadata` records of
//! tiered storage (KIP-405). The value is the metadata record frame (`RemoteLogMetadataSerde`,
//! a `BytesApiMessageSerde`) holding one of four records; kafka-dump-log prints the `toString()`
//! of the object `RemoteLogMetadataSerde.deserialize` builds from it, and
//! `Error at offset N, skipping. <message>` for any exception on the way, including those of
//! the objects' constructors (`RemoteLogSegmentMetadata.java`, `RemoteLogSegmentMetadataUpdate
//! .java`, `RemotePartitionDeleteMetadata.java`, `RemoteLogSegmentMetadataSnapshot.java`, the
//! `*Transform.java` classes of `storage/.../serialization`). The JSON form is the frame's
//! `{"type", "version", "data"}`, as the cluster-metadata decoder gives it.

use std::collections::BTreeMap;

use super::json::kafka_uuid;
use super::metadata::{read_framed, Framed};
use super::reader::{JavaError, Val, NULL_POINTER};
use super::schema::{Msg, St};
use super::tables::{
    REMOTE_LOG_SEGMENT_METADATA_RECORD, REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD,
    REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD, REMOTE_PARTITION_DELETE_METADATA_RECORD,
};
use super::Decoded;

/// Api key → the storage module's `MetadataRecordType` constant name and schema.
pub(super) fn record_type(api_key: i16) -> Option<(&'static str, &'static Msg)> {
    Some(match api_key {
        0 => (
            "REMOTE_LOG_SEGMENT_METADATA_RECORD",
            &REMOTE_LOG_SEGMENT_METADATA_RECORD,
        ),
        1 => (
            "REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD",
            &REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD,
        ),
        2 => (
            "REMOTE_PARTITION_DELETE_METADATA_RECORD",
            &REMOTE_PARTITION_DELETE_METADATA_RECORD,
        ),
        3 => (
            "REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD",
            &REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD,
        ),
        _ => return None,
    })
}

const SEGMENT_STATES: [&str; 4] = [
    "COPY_SEGMENT_STARTED",
    "COPY_SEGMENT_FINISHED",
    "DELETE_SEGMENT_STARTED",
    "DELETE_SEGMENT_FINISHED",
];
const PARTITION_DELETE_STATES: [&str; 3] = [
    "DELETE_PARTITION_MARKED",
    "DELETE_PARTITION_STARTED",
    "DELETE_PARTITION_FINISHED",
];

pub fn decode(offset: i64, value: Option<&[u8]>) -> Decoded {
    let parsed = value
        // `record.value.remaining` on a null value: the JVM's helpful NullPointerException.
        .ok_or_else(|| JavaError::new(NULL_POINTER, "Cannot invoke \"java.nio.ByteBuffer.remaining()\" because the return value of \"org.apache.kafka.common.record.Record.value()\" is null"))
        .and_then(|v| read_framed(v, record_type)?.strict())
        .and_then(|f| Ok((to_text(&f)?, f.to_json()?)));
    match parsed {
        Ok((text, json)) => {
            let mut d = Decoded::text(None, Some(text));
            d.payload_json = Some(json.to_value());
            d
        }
        Err(e) => Decoded::text(
            None,
            Some(format!(
                "Error at offset {offset}, skipping. {}",
                e.message()
            )),
        ),
    }
}

/// One struct's fields by name.
struct Fields<'v> {
    st: &'static St,
    val: &'v Val,
}

impl<'v> Fields<'v> {
    fn get(&self, name: &str) -> &'v Val {
        self.val.field(self.st, name).unwrap_or(&Val::Null)
    }

    fn int(&self, name: &str) -> i64 {
        self.get(name).as_int().unwrap_or(0)
    }

    fn uuid(&self, name: &str) -> String {
        match self.get(name) {
            Val::Uuid(u) => kafka_uuid(u),
            _ => kafka_uuid(&[0; 16]),
        }
    }

    fn child(&self, name: &str) -> Fields<'v> {
        Fields {
            st: self.st.child(name).unwrap_or(self.st),
            val: self.get(name),
        }
    }

    /// `TopicIdPartition.toString`: `<topicId>:<topic>-<partition>`.
    fn topic_id_partition(&self) -> String {
        let name = match self.get("name") {
            Val::Str(s) => s.clone(),
            _ => String::new(),
        };
        format!("{}:{name}-{}", self.uuid("id"), self.int("partition"))
    }

    /// `RemoteLogSegmentId.toString`.
    fn segment_id(&self) -> String {
        format!(
            "RemoteLogSegmentId{{topicIdPartition={}, id={}}}",
            self.child("topicIdPartition").topic_id_partition(),
            self.uuid("id")
        )
    }

    /// `Optional<CustomMetadata>.toString`.
    fn custom_metadata(&self) -> String {
        match self.get("customMetadata") {
            Val::Bytes(b) => format!("Optional[CustomMetadata{{{} bytes}}]", b.len()),
            _ => "Optional.empty".to_string(),
        }
    }

    /// `RemoteLogSegmentState.forId`, `null` for an unknown id (the constructors' non-null
    /// check then throws).
    fn segment_state(&self) -> Result<&'static str, JavaError> {
        let id = self.int("remoteLogSegmentState");
        usize::try_from(id)
            .ok()
            .and_then(|i| SEGMENT_STATES.get(i).copied())
            .ok_or_else(|| JavaError::new(NULL_POINTER, "state can not be null"))
    }

    /// The leader epochs as the TreeMap of a HashMap built from the entries prints them
    /// (`{0=0, 3=120}`: by epoch, the last entry of an epoch winning); empty is an error.
    fn leader_epochs(&self) -> Result<String, JavaError> {
        let st = self.st.child("segmentLeaderEpochs").unwrap_or(self.st);
        let mut map = BTreeMap::new();
        if let Val::Arr(items) = self.get("segmentLeaderEpochs") {
            for item in items {
                let e = Fields { st, val: item };
                map.insert(e.int("leaderEpoch"), e.int("offset"));
            }
        }
        if map.is_empty() {
            return Err(JavaError::new(
                super::reader::ILLEGAL_ARGUMENT,
                "segmentLeaderEpochs can not be null or empty",
            ));
        }
        let entries: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
        Ok(format!("{{{}}}", entries.join(", ")))
    }
}

fn to_text(f: &Framed) -> Result<String, JavaError> {
    let r = Fields {
        st: f.msg.root,
        val: &f.val,
    };
    let (start, end) = (r.int("startOffset"), r.int("endOffset"));
    Ok(match f.name {
        "REMOTE_LOG_SEGMENT_METADATA_RECORD" => {
            // The constructor's checks in order, then the update's state check.
            if start < 0 {
                return Err(JavaError::new(
                    super::reader::ILLEGAL_ARGUMENT,
                    format!("Unexpected start offset = {start}. StartOffset for a remote segment cannot be negative"),
                ));
            }
            if end < start {
                return Err(JavaError::new(
                    super::reader::ILLEGAL_ARGUMENT,
                    format!("Unexpected end offset = {end}. EndOffset for a remote segment cannot be less than startOffset = {start}"),
                ));
            }
            let epochs = r.leader_epochs()?;
            let state = r.segment_state()?;
            format!(
                "RemoteLogSegmentMetadata{{remoteLogSegmentId={}, startOffset={start}, endOffset={end}, brokerId={}, maxTimestampMs={}, eventTimestampMs={}, segmentLeaderEpochs={epochs}, segmentSizeInBytes={}, customMetadata={}, state={state}}}",
                r.child("remoteLogSegmentId").segment_id(),
                r.int("brokerId"),
                r.int("maxTimestampMs"),
                r.int("eventTimestampMs"),
                r.int("segmentSizeInBytes"),
                r.custom_metadata(),
            )
        }
        "REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD" => format!(
            "RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={}, customMetadata={}, state={}, eventTimestampMs={}, brokerId={}}}",
            r.child("remoteLogSegmentId").segment_id(),
            r.custom_metadata(),
            r.segment_state()?,
            r.int("eventTimestampMs"),
            r.int("brokerId"),
        ),
        "REMOTE_PARTITION_DELETE_METADATA_RECORD" => {
            let id = r.int("remotePartitionDeleteState");
            // `Objects.requireNonNull(state)`: no message.
            let state = usize::try_from(id)
                .ok()
                .and_then(|i| PARTITION_DELETE_STATES.get(i))
                .ok_or_else(JavaError::null_pointer)?;
            format!(
                "RemotePartitionDeleteMetadata{{topicPartition={}, state={state}, eventTimestampMs={}, brokerId={}}}",
                r.child("topicIdPartition").topic_id_partition(),
                r.int("eventTimestampMs"),
                r.int("brokerId"),
            )
        }
        _ => {
            // The snapshot's constructor checks the state before the epochs.
            let state = r.segment_state()?;
            let epochs = r.leader_epochs()?;
            format!(
                "RemoteLogSegmentMetadataSnapshot{{segmentId={}, startOffset={start}, endOffset={end}, maxTimestampMs={}, segmentLeaderEpochs={epochs}, segmentSizeInBytes={}, customMetadata={}, state={state}}}",
                r.uuid("segmentId"),
                r.int("maxTimestampMs"),
                r.int("segmentSizeInBytes"),
                r.custom_metadata(),
            )
        }
    })
}
