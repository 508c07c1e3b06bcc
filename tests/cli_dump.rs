//! `kseg dump` text output against the worked examples of kafka-dump-log's documentation
//! (dump-log.md §8): the same lines, fields and punctuation, quirks included.

mod common;

use std::path::Path;

use common::unhex as hex;
use std::process::Command;

/// Batch A then batch B of formats.md §3.6.
fn batches_a_b() -> Vec<u8> {
    let a = hex(
        "00 00 00 00 00 00 00 00  00 00 00 49  00 00 00 00  02  cb f4 13 99  00 00  00 00 00 01
         00 00 01 8b cf e5 68 00  00 00 01 8b cf e5 68 05  ff ff ff ff ff ff ff ff  ff ff
         ff ff ff ff  00 00 00 02
         1c 00 00 00 04 6b 30 04 76 30 02 02 68 02 78
         10 00 0a 02 01 04 76 31 00",
    );
    let spec = kseg::format::batch::BatchSpec {
        base_offset: 2,
        producer_id: 7,
        producer_epoch: 0,
        is_transactional: true,
        is_control: true,
        ..Default::default()
    };
    let marker = kseg::format::batch::RecordSpec {
        offset: 2,
        timestamp: 1700000000010,
        key: Some(
            kseg::format::control::encode_control_key(
                kseg::format::control::ControlRecordType::Commit,
            )
            .to_vec(),
        ),
        value: Some(kseg::format::control::EndTxnMarker::encode(5).to_vec()),
        headers: vec![],
    };
    let b = kseg::format::batch::build_batch(&spec, &[marker]).unwrap();
    assert_eq!(b.len(), 78);
    [a, b].concat()
}

fn kseg(args: &[&str], file: &Path) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_kseg"))
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code().unwrap(),
    )
}

#[test]
fn worked_example_v2_print_data_log() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("00000000000000000000.log");
    let mut bytes = batches_a_b();
    bytes.extend_from_slice(&[1, 2, 3, 4, 5]);
    std::fs::write(&f, &bytes).unwrap();
    let (out, _, code) = kseg(&["dump", "--print-data-log"], &f);
    let expected = format!(
        "Dumping {}
Log starting offset: 0
baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000005 size: 85 magic: 2 compresscodec: none crc: 3421770649 isvalid: true
| offset: 0 CreateTime: 1700000000000 keySize: 2 valueSize: 2 sequence: -1 headerKeys: [h] key: k0 payload: v0
| offset: 1 CreateTime: 1700000000005 keySize: -1 valueSize: 2 sequence: -1 headerKeys: [] payload: v1
baseOffset: 2 lastOffset: 2 count: 1 baseSequence: -1 lastSequence: -1 producerId: 7 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty position: 85 CreateTime: 1700000000010 size: 78 magic: 2 compresscodec: none crc: 2163299568 isvalid: true
| offset: 2 CreateTime: 1700000000010 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 5
Found 5 invalid bytes at the end of 00000000000000000000.log
Torn write at position 163: 5 trailing byte(s), too few for an entry header; valid data ends at position 163
",
        f.display()
    );
    assert_eq!(out, expected);
    // Five stray bytes are fewer than an entry header, which Kafka's reader skips silently, but
    // recovery cuts them: a torn write all the same.
    assert_eq!(code, 1);

    // No options: batch lines, and the two on the stray bytes.
    let (out, _, _) = kseg(&["dump"], &f);
    assert_eq!(out.lines().count(), 6);
    assert!(out.lines().all(|l| !l.starts_with('|')));

    // --max-bytes 85: batch A only, no "invalid bytes" line.
    let (out, _, _) = kseg(&["dump", "--max-bytes", "85", "--deep-iteration"], &f);
    assert_eq!(out.lines().count(), 5, "{out}");
    assert!(!out.contains("invalid bytes"));

    // --skip-record-metadata: a record without key starts with " payload:", control records
    // give empty lines.
    let (out, _, _) = kseg(&["dump", "--print-data-log", "--skip-record-metadata"], &f);
    let records: Vec<&str> = out
        .lines()
        .filter(|l| {
            !l.starts_with("baseOffset")
                && !l.starts_with("Dumping")
                && !l.starts_with("Log ")
                && !l.starts_with("Found")
                && !l.starts_with("Torn write")
        })
        .collect();
    assert_eq!(records, vec!["| key: k0 payload: v0", " payload: v1", ""]);
}

#[test]
fn worked_example_legacy_deep() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("00000000000000000005.log");
    let v1 = hex("00 00 00 00 00 00 00 05  00 00 00 18  1d 52 30 6d  01  00  00 00 01 8b cf e5 68 00 ff ff ff ff  00 00 00 02  76 30");
    let v0 =
        hex("00 00 00 00 00 00 00 05 00 00 00 10 3b 98 6b 54 00 00 ff ff ff ff 00 00 00 02 76 30");
    std::fs::write(&f, [v1, v0].concat()).unwrap();
    let (out, err, code) = kseg(&["dump", "--deep-iteration", "--print-data-log"], &f);
    let expected = format!(
        "Dumping {}
Log starting offset: 5
offset: 5 position: 0 CreateTime: 1700000000000 size: 36 magic: 1 compresscodec: none crc: 491925613 isvalid: true
| offset: 5 CreateTime: 1700000000000 keySize: -1 valueSize: 2 isValid: true crc: 491925613}} payload: v0
offset: 5 position: 36 NoTimestampType: -1 size: 28 magic: 0 compresscodec: none crc: 999844692 isvalid: true
| offset: 5 NoTimestampType: -1 keySize: -1 valueSize: 2 isValid: true crc: 999844692}} payload: v0
",
        f.display()
    );
    // kseg adds one line of its own where the offsets go backwards; the rest is Kafka's.
    let (added, kafka): (Vec<&str>, Vec<&str>) = out
        .lines()
        .partition(|l| l.starts_with("Batch at position"));
    assert_eq!(kafka.join("\n") + "\n", expected);
    assert_eq!(
        added,
        vec!["Batch at position 36: offsets go backwards, 5 follows 5"]
    );
    // The same offset twice never happens in a log Kafka wrote: reported, exit status 1.
    assert!(err.contains("5 is followed by 5"), "{err}");
    // The one-line reason names the regression apart from any index check (issue 12, item 7).
    assert!(
        err.contains(
            "2 damaged place(s) found: 1 × log.offset-order, 1 × log with non-increasing offsets\n"
        ),
        "{err}"
    );
    assert_eq!(code, 1);
}

#[test]
fn damage_is_explained_and_the_dump_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("00000000000000000000.log");
    let ab = batches_a_b();
    // A, 40 bytes of zeros (a zero-filled hole), B, then half of A again (a torn write).
    let bytes = [&ab[..85], &[0u8; 40][..], &ab[85..], &ab[..40]].concat();
    std::fs::write(&f, &bytes).unwrap();
    let (out, _, code) = kseg(&["dump"], &f);
    assert_eq!(code, 1);
    assert!(out.contains("Corrupt data at position 85: Found record size 0 smaller than minimum record overhead (14); skipped 40 bytes to the next valid batch at position 125"), "{out}");
    assert!(out.contains("baseOffset: 2 lastOffset: 2"), "{out}");
    assert!(
        out.contains("Found 40 invalid bytes at the end of 00000000000000000000.log"),
        "{out}"
    );
    assert!(
        out.contains(
            "Torn write at position 203: the entry there announces 85 bytes but only 40 remain"
        ),
        "{out}"
    );

    // A flipped byte in the records of A: reported on the batch line, still decoded.
    let mut flipped = ab.clone();
    flipped[70] ^= 0x01;
    std::fs::write(&f, &flipped).unwrap();
    let (out, _, code) = kseg(&["dump"], &f);
    assert!(out.contains("position: 0 CreateTime: 1700000000005 size: 85 magic: 2 compresscodec: none crc: 3421770649 isvalid: false"), "{out}");
    assert_eq!(code, 1);
}

#[test]
fn unreadable_file_exits_2() {
    let (_, err, code) = kseg(
        &["dump"],
        Path::new("/nonexistent/00000000000000000000.log"),
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("/nonexistent/00000000000000000000.log"),
        "{err}"
    );
}

/// Keys, values and header keys that are not valid UTF-8 print as kafka-dump-log prints them:
/// `new String(bytes, UTF_8)` (StringDecoder, Utils.utf8), whose replacements were worked out
/// by hand from the JDK's `String.decodeUTF8_UTF16` rules (see `format::java_utf8`): a
/// surrogate's three bytes are one U+FFFD, an overlong or out-of-range lead is one on its own,
/// a truncated sequence at the end is one.
#[test]
fn invalid_utf8_is_replaced_as_java_does() {
    let record = kseg::format::batch::RecordSpec {
        offset: 0,
        timestamp: 1700000000000,
        key: Some(b"k\xed\xa0\x80".to_vec()),
        value: Some(b"a\xe0\x80\xafb\xf4\x90\x80\x80c\xe2\x82d\xf0\x9f\x98".to_vec()),
        headers: vec![(b"h\xc0\xaf".to_vec(), Some(b"x".to_vec()))],
    };
    let batch =
        kseg::format::batch::build_batch(&Default::default(), std::slice::from_ref(&record))
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("00000000000000000000.log");
    std::fs::write(&f, &batch).unwrap();
    let (out, _, code) = kseg(&["dump", "--print-data-log"], &f);
    assert_eq!(code, 0);
    let r = "\u{fffd}";
    let line = out.lines().find(|l| l.starts_with('|')).unwrap();
    assert_eq!(
        line,
        format!(
            "| offset: 0 CreateTime: 1700000000000 keySize: 4 valueSize: 16 sequence: -1 headerKeys: [h{r}{r}] key: k{r} payload: a{r}{r}{r}b{r}{r}{r}{r}c{r}d{r}"
        )
    );
    // JSON with --value-format utf8 replaces the same way.
    let (out, _, _) = kseg(
        &[
            "dump",
            "--jsonl",
            "--print-data-log",
            "--value-format",
            "utf8",
        ],
        &f,
    );
    let rec: serde_json::Value = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["type"] == "record")
        .unwrap();
    assert_eq!(
        rec["value"]["data"],
        format!("a{r}{r}{r}b{r}{r}{r}{r}c{r}d{r}")
    );
}
