//! The table `export` writes: one row per record, its columns as Arrow arrays, built a row at a
//! time from the walk's batch and record events.

use std::sync::{Arc, LazyLock};

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Int16Builder, Int32Builder, Int64Builder, ListBuilder,
    StringBuilder, StructBuilder, TimestampMillisecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};

use super::decoded::DecodedSide;
use crate::format::entry::RecordView;

/// The columns every export has, in order (the names are those of `dump --json` where it has
/// the field); the decoded ones follow.
pub static SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        Field::new("topic", DataType::Utf8, true),
        Field::new("partition", DataType::Int32, true),
        Field::new("offset", DataType::Int64, false),
        Field::new("timestamp", timestamp_type(), true),
        Field::new("timestampType", DataType::Utf8, false),
        Field::new("key", DataType::Binary, true),
        Field::new("value", DataType::Binary, true),
        Field::new("headers", DataType::List(header_item()), false),
        Field::new("producerId", DataType::Int64, false),
        Field::new("producerEpoch", DataType::Int16, false),
        Field::new("sequence", DataType::Int32, false),
        Field::new("partitionLeaderEpoch", DataType::Int32, false),
        Field::new("isTransactional", DataType::Boolean, false),
        Field::new("isControl", DataType::Boolean, false),
        Field::new("baseOffset", DataType::Int64, false),
        Field::new("file", DataType::Utf8, false),
        Field::new("position", DataType::Int64, false),
    ]))
});

fn timestamp_type() -> DataType {
    DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
}

fn header_fields() -> Fields {
    Fields::from(vec![
        Field::new("key", DataType::Utf8, false),
        Field::new("value", DataType::Binary, true),
    ])
}

fn header_item() -> Arc<Field> {
    Arc::new(Field::new("item", DataType::Struct(header_fields()), false))
}

/// The batch a record belongs to: the columns every record of it shares.
#[derive(Debug, Clone, Default)]
pub struct BatchColumns {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub partition_leader_epoch: i32,
    pub is_transactional: bool,
    pub is_control: bool,
    pub base_offset: i64,
    pub position: u64,
}

/// Rows being built; [`Rows::finish`] turns them into a record batch and starts afresh.
pub struct Rows {
    topic: StringBuilder,
    partition: Int32Builder,
    offset: Int64Builder,
    timestamp: TimestampMillisecondBuilder,
    timestamp_type: StringBuilder,
    key: BinaryBuilder,
    value: BinaryBuilder,
    headers: ListBuilder<StructBuilder>,
    producer_id: Int64Builder,
    producer_epoch: Int16Builder,
    sequence: Int32Builder,
    partition_leader_epoch: Int32Builder,
    is_transactional: BooleanBuilder,
    is_control: BooleanBuilder,
    base_offset: Int64Builder,
    file: StringBuilder,
    position: Int64Builder,
    /// `decodedKey` and `decodedValue`, for the sides with a decoder.
    key_decoded: Option<DecodedSide>,
    value_decoded: Option<DecodedSide>,
    schema: SchemaRef,
    len: usize,
    /// Roughly what the rows hold (their keys, values and headers plus fixed columns): when
    /// to hand them to the writer.
    bytes: usize,
}

impl Rows {
    /// Rows of [`SCHEMA`] and the decoded sides' columns.
    pub fn new(key_decoded: Option<DecodedSide>, value_decoded: Option<DecodedSide>) -> Self {
        let mut fields: Vec<Field> = SCHEMA.fields().iter().map(|f| f.as_ref().clone()).collect();
        for (name, side) in [
            ("decodedKey", &key_decoded),
            ("decodedValue", &value_decoded),
        ] {
            if let Some(d) = side {
                fields.push(Field::new(name, d.data_type.clone(), true));
            }
        }
        let header = StructBuilder::new(
            header_fields(),
            vec![
                Box::new(StringBuilder::new()),
                Box::new(BinaryBuilder::new()),
            ],
        );
        Rows {
            topic: StringBuilder::new(),
            partition: Int32Builder::new(),
            offset: Int64Builder::new(),
            timestamp: TimestampMillisecondBuilder::new().with_timezone("UTC"),
            timestamp_type: StringBuilder::new(),
            key: BinaryBuilder::new(),
            value: BinaryBuilder::new(),
            headers: ListBuilder::new(header).with_field(header_item()),
            producer_id: Int64Builder::new(),
            producer_epoch: Int16Builder::new(),
            sequence: Int32Builder::new(),
            partition_leader_epoch: Int32Builder::new(),
            is_transactional: BooleanBuilder::new(),
            is_control: BooleanBuilder::new(),
            base_offset: Int64Builder::new(),
            file: StringBuilder::new(),
            position: Int64Builder::new(),
            key_decoded,
            value_decoded,
            schema: Arc::new(Schema::new(fields)),
            len: 0,
            bytes: 0,
        }
    }
}

/// What a row costs besides its keys, values and headers (its fixed-width columns and the
/// offsets of its variable ones).
const ROW_OVERHEAD: usize = 64;

/// A decoded key's or value's JSON, held until its column is built, against its bytes: a
/// rough upper bound (maps and small numbers cost more per byte than text).
const DECODED_PER_BYTE: usize = 4;

impl Rows {
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Keys and values that did not decode (or whose JSON did not fit the column's type),
    /// for the sides with a decoder.
    pub fn undecoded(&self) -> (Option<u64>, Option<u64>) {
        (
            self.key_decoded.as_ref().map(|d| d.undecoded),
            self.value_decoded.as_ref().map(|d| d.undecoded),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Appends the record `r` of the batch `b`, read from `file` of `partition`.
    pub fn push(
        &mut self,
        partition: Option<(&str, i32)>,
        file: &str,
        b: &BatchColumns,
        r: &RecordView<'_>,
    ) {
        self.topic.append_option(partition.map(|(t, _)| t));
        self.partition.append_option(partition.map(|(_, p)| p));
        self.offset.append_value(r.offset);
        // Records of magic 0 have no timestamp (-1 on the wire): null, not 1969.
        let ts = (r.timestamp_type != crate::format::batch::TimestampType::NoTimestampType)
            .then_some(r.timestamp);
        self.timestamp.append_option(ts);
        self.timestamp_type.append_value(r.timestamp_type.name());
        self.key.append_option(r.key);
        self.value.append_option(r.value);
        let mut header_bytes = 0;
        for h in r.headers.iter() {
            let item = self.headers.values();
            item.field_builder::<StringBuilder>(0)
                .expect("header key column")
                .append_value(crate::format::java_utf8::lossy(h.key));
            item.field_builder::<BinaryBuilder>(1)
                .expect("header value column")
                .append_option(h.value);
            item.append(true);
            header_bytes += h.key.len() + h.value.map_or(0, <[u8]>::len);
        }
        self.headers.append(true);
        self.producer_id.append_value(b.producer_id);
        self.producer_epoch.append_value(b.producer_epoch);
        self.sequence.append_value(r.sequence);
        self.partition_leader_epoch
            .append_value(b.partition_leader_epoch);
        self.is_transactional.append_value(b.is_transactional);
        self.is_control.append_value(b.is_control);
        self.base_offset.append_value(b.base_offset);
        self.file.append_value(file);
        self.position.append_value(b.position as i64);
        let mut decoded = 0;
        for (side, bytes) in [
            (&mut self.key_decoded, r.key),
            (&mut self.value_decoded, r.value),
        ] {
            if let Some(d) = side {
                d.push(bytes);
                decoded += DECODED_PER_BYTE * bytes.map_or(0, <[u8]>::len);
            }
        }
        self.len += 1;
        self.bytes += decoded
            + ROW_OVERHEAD
            + file.len()
            + r.key.map_or(0, <[u8]>::len)
            + r.value.map_or(0, <[u8]>::len)
            + header_bytes;
    }

    /// The rows so far as a record batch of [`Rows::schema`]; the builders start empty again.
    pub fn finish(&mut self) -> RecordBatch {
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.topic.finish()),
            Arc::new(self.partition.finish()),
            Arc::new(self.offset.finish()),
            Arc::new(self.timestamp.finish()),
            Arc::new(self.timestamp_type.finish()),
            Arc::new(self.key.finish()),
            Arc::new(self.value.finish()),
            Arc::new(self.headers.finish()),
            Arc::new(self.producer_id.finish()),
            Arc::new(self.producer_epoch.finish()),
            Arc::new(self.sequence.finish()),
            Arc::new(self.partition_leader_epoch.finish()),
            Arc::new(self.is_transactional.finish()),
            Arc::new(self.is_control.finish()),
            Arc::new(self.base_offset.finish()),
            Arc::new(self.file.finish()),
            Arc::new(self.position.finish()),
        ];
        for d in [&mut self.key_decoded, &mut self.value_decoded]
            .into_iter()
            .flatten()
        {
            columns.push(d.finish());
        }
        self.len = 0;
        self.bytes = 0;
        RecordBatch::try_new(self.schema.clone(), columns).expect("the builders follow the schema")
    }
}
