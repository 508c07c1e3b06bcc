# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kseg_global_optspecs
    string join \n width= wide tsv bytes color= tz= local h/help V/version
end

function __fish_kseg_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kseg_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kseg_using_subcommand
    set -l cmd (__fish_kseg_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kseg -n "__fish_kseg_needs_command" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_needs_command" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_needs_command" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_needs_command" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_needs_command" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_needs_command" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_needs_command" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_needs_command" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "dump" -d 'Print the contents of segment, index, snapshot and checkpoint files (a drop-in for kafka-dump-log.sh --files, with JSON output and damage reports)'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "verify" -d 'Check segments, partitions and log dirs for damage (exit status 1 when errors are found)'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "write" -d 'Build a partition directory from a spec, byte for byte as the broker writes it'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "rebuild-index" -d 'Rebuild segment indexes from the .log as the broker\'s recovery does (dry run unless --apply)'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "recover" -d 'Repair a partition directory offline exactly as the broker\'s unclean-restart recovery plus a clean shutdown would (dry run unless --apply)'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "retention" -d 'Which segments the broker\'s retention would delete and why, and when the rest goes'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "compact" -d 'One round of the broker\'s log cleaner, written to a new log dir (--out) or carried out in place (--apply; dry run otherwise), with a report'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "offsets" -d 'The offset, timestamp and leader epoch ListOffsets would answer (earliest, latest, max-timestamp or a time), found through the indexes as the broker finds it'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "locate" -d 'Which segment file, byte position and batch hold an offset, and the index entry that led there'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "stats" -d 'What segments, partitions and log dirs hold: batches, records and bytes by codec, format and kind, size histograms, timestamps, producers, keys (--deep)'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "txns" -d 'Transactions per partition: last stable offset, open and hanging transactions, committed and aborted ones, each producer\'s state'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "salvage" -d 'Save the valid batches a recovery would drop (those after the first damage) into a partition directory of their own, with a report; the source is only read'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "diff" -d 'Where two replicas of one partition diverge (by the broker\'s leader-epoch truncation and by their batches), and what only one of them has'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "digest" -d 'A SHA-256 of a partition\'s record stream (not its segment boundaries), to compare replicas by exchanging one line'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "tiered" -d 'A partition\'s remote tier (tiered storage) reconciled with __remote_log_metadata and the local log: unfinished copies and deletes, orphans, missing objects, gaps, overlaps'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "coordinator" -d 'Which __consumer_offsets or __transaction_state partition holds a group or a transactional id (Kafka\'s abs(hashCode) % partitions)'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "ls" -d 'One line per partition directory of a log dir from metadata alone: sizes, offsets, checkpoints, topic ids, directory states and the problems they show'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "groups" -d 'Consumer groups from __consumer_offsets on disk: committed offsets (replayed as the group coordinator does), state, members and lag'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "metadata" -d 'The KRaft metadata image (features, brokers, topics and partitions, configs, quotas, ACLs, …) at the log end, an offset or a time, rebuilt from __cluster_metadata as the controller does; what changed between two points (--diff)'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "checks" -d 'Every finding id (`batch.crc`, `index.untrimmed`, …): its severity, what it means and what the broker does about it'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "version" -d 'The version, git commit, build date, the Kafka release kseg follows, and features'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "export" -d 'The records of partitions as a Parquet, Arrow, CSV or JSON Lines table for SQL engines (DuckDB, Spark, Trino): one file, or a Hive-style tree with a file per partition'
complete -c kseg -n "__fish_kseg_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l files -d 'Comma-separated files, as kafka-dump-log takes them' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l remote -d 'The remote storage root holding the topic-partition directories or prefixes: s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX], file:///DIR or a local directory (for Kafka\'s LocalTieredStorage its kafka-tiered-storage directory, or its parent). Credentials come from the standard AWS_*, GOOGLE_* and AZURE_* environment variables' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l remote-segment -d 'One remote segment, read alone with no local partition directory (PATH not needed): the URL (or local path) of its .log object, in Kafka\'s LocalTieredStorage layout (…/TOPIC-PARTITION-TOPICID/START-SEGMENTID.log) or Aiven\'s (…/TOPIC-TOPICID/PARTITION/START-SEGMENTID.log); its other objects (indexes, manifest) are those of the same START-SEGMENTID beside it. It is read as the .log of its start offset in a partition directory named TOPIC-PARTITION. Repeat for more segments' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l remote-endpoint -d 'The URL of an S3-compatible server (http:// allowed), instead of AWS\'s; with gs://, of a GCS-compatible server, reached without OAuth' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l remote-layout -d 'How the objects are laid out (default: detected from the objects\' names)' -r -f -a "local-tiered\t''
aiven\t''"
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l remote-key -d 'A private key (PEM, PKCS#8 or PKCS#1) that unwraps encrypted Aiven segments\' data keys; repeat for a key ring. ID= names the key pair id it answers to (the plugin\'s encryption.key.pairs.ID); without it the key is tried for any id' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l remote-chunk-bytes -d 'Bytes per ranged read of a remote object [default: 16777216]. Memory per object read: at most this times (--remote-requests + 1)' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l remote-requests -d 'Ranged reads started ahead of the one being worked on, reading an object forward [default: 2]; 0 reads one range at a time' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l max-message-size -d 'Accepted for kafka-dump-log compatibility (its window read at each indexed position); kseg checks index entries against a walk of the log, where no batch is too large' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l max-bytes -d 'Log files: read at most this many bytes from the start of each file' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l max-batch-bytes -d 'The most bytes one batch may decompress to; a larger one is reported unchecked (`batch.unchecked`, a warning) and memory use is bounded by this plus a constant' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l decode -d '`auto`: decode each internal topic\'s records with its decoder, chosen from the partition directory\'s name (`__consumer_offsets`, `__transaction_state`, `__cluster_metadata`, `__share_group_state`, `__remote_log_metadata`); implies --print-data-log. Default `none`: kafka-dump-log\'s output' -r -f -a "none\t''
auto\t''"
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l key-decoder-class -d 'kafka-dump-log\'s key decoder class (implies --print-data-log): `StringDecoder`, `IntegerDecoder`, `LongDecoder` or `DefaultDecoder` of `org.apache.kafka.tools.api` (or `kafka.serializer`); DefaultDecoder\'s bytes print as hex' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l value-decoder-class -d 'kafka-dump-log\'s value decoder class (implies --print-data-log); as --key-decoder-class' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l key-decoder -d 'Decode keys: dump prints them decoded (implies --print-data-log; a key that does not decode prints as hex with the reason), export adds the decodedKey column' -r -f -a "string\t'UTF-8 text, malformed sequences replaced (kafka-dump-log\'s StringDecoder)'
int\t'Big-endian int32 of the first 4 bytes (IntegerDecoder)'
long\t'Big-endian int64 of the first 8 bytes (LongDecoder)'
hex\t''
base64\t''
json\t'A JSON document, printed compactly (nested as JSON in --json output)'
avro\t'Avro in the Confluent wire format (magic byte 0, 4-byte schema id) against the `<id>.avsc` files of --schema-dir, or plain Avro with --avro-schema'
protobuf\t'Protobuf in the Confluent wire format (magic byte 0, 4-byte schema id, message indexes) against the `<id>.desc` / `<id>.proto` files of --schema-dir, or plain Protobuf with --proto-descriptor and --proto-message; printed as protobuf\'s canonical JSON'"
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l value-decoder -d 'Decode values (dump: implies --print-data-log; export: the decodedValue column); as --key-decoder' -r -f -a "string\t'UTF-8 text, malformed sequences replaced (kafka-dump-log\'s StringDecoder)'
int\t'Big-endian int32 of the first 4 bytes (IntegerDecoder)'
long\t'Big-endian int64 of the first 8 bytes (LongDecoder)'
hex\t''
base64\t''
json\t'A JSON document, printed compactly (nested as JSON in --json output)'
avro\t'Avro in the Confluent wire format (magic byte 0, 4-byte schema id) against the `<id>.avsc` files of --schema-dir, or plain Avro with --avro-schema'
protobuf\t'Protobuf in the Confluent wire format (magic byte 0, 4-byte schema id, message indexes) against the `<id>.desc` / `<id>.proto` files of --schema-dir, or plain Protobuf with --proto-descriptor and --proto-message; printed as protobuf\'s canonical JSON'"
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l schema-dir -d 'For the avro and protobuf decoders: a directory of the writer schemas of the Confluent wire format\'s schema ids, `<id>.avsc` (Avro), `<id>.desc` (a Protobuf descriptor set, `protoc --include_imports --descriptor_set_out`) or `<id>.proto` (imports resolved in the directory); other files are ignored' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l avro-schema -d 'For the avro decoder: one writer schema (`.avsc`) for plain Avro, without the prefix' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l proto-descriptor -d 'For the protobuf decoder: the schema of plain Protobuf values, without the prefix (a descriptor set or a `.proto` file), with --proto-message' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l proto-message -d 'For the protobuf decoder: the message type of plain values (`package.Message`)' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l key-format -d 'Encoding of keys with --print-data-log (text: `auto` is kafka-dump-log\'s lossy UTF-8; `hex` and `base64` keep every record on one line)' -r -f -a "auto\t'UTF-8 text when the bytes are valid UTF-8, else base64'
utf8\t'UTF-8 text, invalid sequences replaced (like kafka-dump-log\'s StringDecoder)'
hex\t''
base64\t''"
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l value-format -d 'Encoding of values (and, in JSON, header values) with --print-data-log, as --key-format' -r -f -a "auto\t'UTF-8 text when the bytes are valid UTF-8, else base64'
utf8\t'UTF-8 text, invalid sequences replaced (like kafka-dump-log\'s StringDecoder)'
hex\t''
base64\t''"
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l time-format -d 'How the text shows record and batch timestamps: epoch milliseconds as kafka-dump-log prints them (the default), or RFC 3339 (`rfc3339` in UTC, `local`). JSON keeps ms' -r -f -a "ms\t'Epoch milliseconds, as Kafka stores and kafka-dump-log prints them'
rfc3339\t'RFC 3339 in UTC (`2026-01-01T00:00:00.009Z`), or in the local zone with `--local`'
local\t'RFC 3339 in the local zone (`--tz`, else this machine\'s), with its offset'"
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l base-offset -d 'The offset of a segment file whose name carries none (an index renamed without its log); a renamed log\'s is its first batch\'s' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l offset -d 'Partition directories or log dirs: only the batch holding offset N (the next batch after a gap, as a fetch), found through the indexes; with --deep-iteration, its record N' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l from-offset -d 'Partition directories or log dirs: start at the batch holding offset A, found through the indexes (records below A are not shown)' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l to-offset -d 'Partition directories or log dirs: stop after offset B' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l count -d 'Partition directories or log dirs: show at most N records (with --deep-iteration) or batches' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l from-time -d 'Partition directories or log dirs: start at the offset ListOffsets returns for time T (epoch ms, RFC 3339, local `2016-11-18 08:05`, `-1h`): the first record stamped at or after T, as the broker searches' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l to-time -d 'Partition directories or log dirs: stop before the first record stamped after T2 (as the broker\'s search for T2 + 1 finds it); later records with earlier stamps are not shown' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l isolation -d '`read_committed`: partition directories or log dirs, only what such a consumer gets (below the last stable offset; aborted transactions, from the `.txnindex` files, and control batches left out). `read_uncommitted` (the default): everything' -r -f -a "read_uncommitted\t''
read_committed\t''"
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l key -d 'Only records with this key (UTF-8 text; hex with --key-hex)' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l key-regex -d 'Only records whose key matches this regular expression (on the key\'s bytes; anchor it with ^…$ to match the whole key)' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l header -d 'Only records with this header (and this value); repeat for several (all must be there)' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l producer-id -d 'Only records of batches from this producer id' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l producer-epoch -d 'Only records of batches with this producer epoch' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l leader-epoch -d 'Only records of batches with this partition leader epoch' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l deep-iteration -d 'One line per record, not only per batch'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l print-data-log -d 'Print record keys and payloads (implies --deep-iteration)'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l skip-record-metadata -d 'Leave the per-record metadata out of record lines'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l verify-index-only -d 'Index files: check the entries against the log but print no entry lines'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l index-sanity-check -d 'Index files: only run Kafka\'s index sanity check'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l offsets-decoder -d 'Decode `__consumer_offsets` records (implies --print-data-log)'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l transaction-log-decoder -d 'Decode `__transaction_state` records (implies --print-data-log)'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l cluster-metadata-decoder -d 'Decode KRaft `__cluster_metadata` records and snapshots (implies --print-data-log)'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l share-group-state-decoder -d 'Decode `__share_group_state` records (implies --print-data-log)'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l remote-log-metadata-decoder -d 'Decode `__remote_log_metadata` records (tiered storage; implies --print-data-log)'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l json -d 'One JSON document: `{"format", "items": [...]}`, an object per batch, record, index entry, snapshot or checkpoint entry (written as they come)'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l jsonl -d 'JSON Lines: the same objects, one per line, after a first line `{"format", "type": "stream"}`'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -s q -l quiet -d 'No progress bar (one is shown on a terminal\'s standard error for a long dump whose output goes elsewhere)'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l key-hex -d '--key is hex (`00ff…`), for binary keys'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l transactional -d 'Only records of transactional batches'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l control -d 'Only control records (transaction markers)'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l tombstones -d 'Only tombstones (records without a value)'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l batches -d 'With record filters: print every batch line for context, not only those of batches with a matching record'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand dump" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l remote -d 'The remote storage root holding the topic-partition directories or prefixes: s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX], file:///DIR or a local directory (for Kafka\'s LocalTieredStorage its kafka-tiered-storage directory, or its parent). Credentials come from the standard AWS_*, GOOGLE_* and AZURE_* environment variables' -r
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l remote-segment -d 'One remote segment, read alone with no local partition directory (PATH not needed): the URL (or local path) of its .log object, in Kafka\'s LocalTieredStorage layout (…/TOPIC-PARTITION-TOPICID/START-SEGMENTID.log) or Aiven\'s (…/TOPIC-TOPICID/PARTITION/START-SEGMENTID.log); its other objects (indexes, manifest) are those of the same START-SEGMENTID beside it. It is read as the .log of its start offset in a partition directory named TOPIC-PARTITION. Repeat for more segments' -r
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l remote-endpoint -d 'The URL of an S3-compatible server (http:// allowed), instead of AWS\'s; with gs://, of a GCS-compatible server, reached without OAuth' -r
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l remote-layout -d 'How the objects are laid out (default: detected from the objects\' names)' -r -f -a "local-tiered\t''
aiven\t''"
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l remote-key -d 'A private key (PEM, PKCS#8 or PKCS#1) that unwraps encrypted Aiven segments\' data keys; repeat for a key ring. ID= names the key pair id it answers to (the plugin\'s encryption.key.pairs.ID); without it the key is tried for any id' -r
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l remote-chunk-bytes -d 'Bytes per ranged read of a remote object [default: 16777216]. Memory per object read: at most this times (--remote-requests + 1)' -r
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l remote-requests -d 'Ranged reads started ahead of the one being worked on, reading an object forward [default: 2]; 0 reads one range at a time' -r
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l format -r -f -a "table\t'A summary table per partition, then each finding'
tsv\t'The same with the table as tab-separated values and a header line (what `--tsv` gives)'
json\t'The full report as one JSON document (schema in schemas/, keys in docs/json.md)'
github\t'GitHub Actions workflow commands (`::error file=…::…`), one per finding'"
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l base-offset -d 'The offset of a segment file whose name carries none (an index renamed without its log); a renamed log\'s is its first batch\'s' -r
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l max-batch-bytes -d 'The most bytes one batch may decompress to; a larger one is reported unchecked (`batch.unchecked`, a warning) and memory use is bounded by this plus a constant' -r
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l deep -d 'Decode every record (decompressing), not only batch headers'
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l json -d 'Short for --format json'
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l strict -d 'Warnings make the exit status 1 too'
complete -c kseg -n "__fish_kseg_using_subcommand verify" -s q -l quiet -d 'No progress bar'
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand verify" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand verify" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand write" -l tier-to -d 'Then tier the partition as the broker\'s remote log manager does: its closed segments below the last stable offset copied to this storage root (s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX], file:///DIR or a directory) in Kafka\'s LocalTieredStorage layout (or --remote-layout aiven), and their records written to __remote_log_metadata-N beside OUTDIR, N as the broker\'s partitioner picks it of 50 (settings from AWS_* with AWS_ENDPOINT, GOOGLE_*, AZURE_*)' -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l remote-layout -d 'The tiered-storage plugin whose layout the objects take' -r -f -a "local-tiered\t''
aiven\t''"
complete -c kseg -n "__fish_kseg_using_subcommand write" -l key-prefix -d 'aiven: the key prefix (the plugin\'s key.prefix), glued on as it is' -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l chunk-size -d 'aiven: the original bytes per chunk of the .log object (the plugin\'s chunk.size). [default: 4194304]' -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l encrypt-key -d 'aiven: encrypt with a data key per segment wrapped by this RSA public key (PEM); ID= names the key pair (the plugin\'s encryption.key.pair.id; default: the file\'s stem)' -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l topic -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l partition -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l batch-size -d 'Records per batch (one batch per append)' -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l compression -r -f -a "none\t''
gzip\t''
snappy\t''
lz4\t''
zstd\t''"
complete -c kseg -n "__fish_kseg_using_subcommand write" -l compression-level -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l magic -d 'Message format: 0 and 1 are the legacy message sets' -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l timestamp-type -r -f -a "CreateTime\t''
LogAppendTime\t''"
complete -c kseg -n "__fish_kseg_using_subcommand write" -l producer-id -d 'Write as an idempotent producer with this id (sequences continue batch to batch)' -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l producer-epoch -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l leader-epoch -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l segment-bytes -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l segment-ms -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l index-interval-bytes -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l segment-index-bytes -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l start-offset -d 'The first offset (the log start offset)' -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l now-ms -d 'The broker clock in ms (default: the reference corpus\' 1730000000000)' -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l start-ts -d 'The timestamp of the first record that gives none (default: now − 1 h; +1 per record)' -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l topic-id -d 'The topic id (base64) for partition.metadata' -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand write" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand write" -l json -d 'Print the summary (segments, rolls, aborted transactions, damage) as JSON'
complete -c kseg -n "__fish_kseg_using_subcommand write" -l jsonl -d 'Read records from standard input, one JSON object per line (key, value, headers, timestamp; `_hex`/`_base64` variants), instead of a spec: `kseg write --jsonl OUTDIR`'
complete -c kseg -n "__fish_kseg_using_subcommand write" -s q -l quiet -d 'No progress bar (one counts the bytes written, on a terminal\'s standard error)'
complete -c kseg -n "__fish_kseg_using_subcommand write" -l chunk-compression -d 'aiven: each chunk a zstd frame (the plugin\'s compression.enabled)'
complete -c kseg -n "__fish_kseg_using_subcommand write" -l crash -d 'Leave the files as a killed broker would (preallocated indexes, no snapshot)'
complete -c kseg -n "__fish_kseg_using_subcommand write" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand write" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand write" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand write" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand write" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand write" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l jobs -d 'Partitions of log dirs planned at once (default: the number of CPUs)' -r
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l backup-dir -d 'Backup directory (default: `<log dir>.kseg-backup/<partition>-<time>`, beside the log dir; one inside the log dir is refused: the broker would take it for a partition)' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l now -d 'The broker clock (default: now). Every command: producers idle longer than producer.id.expiration.ms at this time are dropped from the producer state it rebuilds. retention: also what retention.ms counts from; compact: also the cleaner\'s lags and delete horizon. Epoch ms, RFC 3339, a local date-time (`2016-11-18 08:05`, in --tz or the local zone) or relative (`-1h`, `2d ago`)' -r
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l index-interval-bytes -d 'The topic\'s index.interval.bytes' -r
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l segment-index-bytes -d 'The topic\'s segment.index.bytes (the most index entries a segment can have)' -r
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l producer-id-expiration-ms -d 'The broker\'s producer.id.expiration.ms' -r
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l all -d 'Rebuild every index, even those that look sound (missing, partial, out-of-order, untrimmed or out-of-range indexes are always rebuilt)'
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l apply -d 'Carry out the plan (default: only print it; nothing is written)'
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l no-backup -d 'Do not copy the affected files and the plan to a backup directory first'
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l wait -d 'With --apply: wait for the partition\'s lock (a broker\'s or another kseg\'s) instead of refusing'
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l json -d 'Print the plan or report as JSON'
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -s v -l verbose -d 'List every file change of a plan (by default a long plan lists 20 and counts the rest)'
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -s q -l quiet -d 'No progress bar'
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand rebuild-index" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l recovery-point -d 'Recover from the segment holding this offset (default: the log dir\'s recovery-point-offset-checkpoint entry, else the start of the log)' -r
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l salvage -d 'Before anything is dropped, save every valid batch recovery would drop (found past the damage, as `dump` finds them) to DIR, as `kseg salvage --out DIR` does; written in a dry run too, and before `--apply` changes anything' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l jobs -d 'Partitions planned at once (default: the number of CPUs)' -r
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l backup-dir -d 'Backup directory (default: `<log dir>.kseg-backup/<partition>-<time>`, beside the log dir; one inside the log dir is refused: the broker would take it for a partition)' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l now -d 'The broker clock (default: now). Every command: producers idle longer than producer.id.expiration.ms at this time are dropped from the producer state it rebuilds. retention: also what retention.ms counts from; compact: also the cleaner\'s lags and delete horizon. Epoch ms, RFC 3339, a local date-time (`2016-11-18 08:05`, in --tz or the local zone) or relative (`-1h`, `2d ago`)' -r
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l index-interval-bytes -d 'The topic\'s index.interval.bytes' -r
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l segment-index-bytes -d 'The topic\'s segment.index.bytes (the most index entries a segment can have)' -r
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l producer-id-expiration-ms -d 'The broker\'s producer.id.expiration.ms' -r
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l remains -d 'Also say what `verify --deep` will still report once the plan is carried out (damage the broker\'s recovery keeps): a deep read of each whole partition, where the plan itself reads only what lies past the recovery point'
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l apply -d 'Carry out the plan (default: only print it; nothing is written)'
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l no-backup -d 'Do not copy the affected files and the plan to a backup directory first'
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l wait -d 'With --apply: wait for the partition\'s lock (a broker\'s or another kseg\'s) instead of refusing'
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l json -d 'Print the plan or report as JSON'
complete -c kseg -n "__fish_kseg_using_subcommand recover" -s v -l verbose -d 'List every file change of a plan (by default a long plan lists 20 and counts the rest)'
complete -c kseg -n "__fish_kseg_using_subcommand recover" -s q -l quiet -d 'No progress bar'
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand recover" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand recover" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand recover" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l retention-ms -d '`retention.ms`; -1 = unlimited' -r
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l retention-bytes -d '`retention.bytes`; -1 = unlimited' -r
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l log-start-offset -d 'Default: the log dir\'s `log-start-offset-checkpoint`, else the first segment\'s base' -r
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l high-watermark -d 'Default: the log dir\'s `replication-offset-checkpoint`, else the log end offset' -r
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l time-format -d 'How the table shows times (ages are durations either way)' -r -f -a "ms\t'Epoch milliseconds, as Kafka stores and kafka-dump-log prints them'
rfc3339\t'RFC 3339 in UTC (`2026-01-01T00:00:00.009Z`), or in the local zone with `--local`'
local\t'RFC 3339 in the local zone (`--tz`, else this machine\'s), with its offset'"
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l backup-dir -d 'Backup directory (default: `<log dir>.kseg-backup/<partition>-<time>`, beside the log dir; one inside the log dir is refused: the broker would take it for a partition)' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l now -d 'The broker clock (default: now). Every command: producers idle longer than producer.id.expiration.ms at this time are dropped from the producer state it rebuilds. retention: also what retention.ms counts from; compact: also the cleaner\'s lags and delete horizon. Epoch ms, RFC 3339, a local date-time (`2016-11-18 08:05`, in --tz or the local zone) or relative (`-1h`, `2d ago`)' -r
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l index-interval-bytes -d 'The topic\'s index.interval.bytes' -r
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l segment-index-bytes -d 'The topic\'s segment.index.bytes (the most index entries a segment can have)' -r
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l producer-id-expiration-ms -d 'The broker\'s producer.id.expiration.ms' -r
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l apply -d 'Carry out the plan (default: only print it; nothing is written)'
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l no-backup -d 'Do not copy the affected files and the plan to a backup directory first'
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l wait -d 'With --apply: wait for the partition\'s lock (a broker\'s or another kseg\'s) instead of refusing'
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l json -d 'Print the plan or report as JSON'
complete -c kseg -n "__fish_kseg_using_subcommand retention" -s v -l verbose -d 'List every file change of a plan (by default a long plan lists 20 and counts the rest)'
complete -c kseg -n "__fish_kseg_using_subcommand retention" -s q -l quiet -d 'No progress bar'
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand retention" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand retention" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand retention" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l out -d 'A new log dir to write the cleaned partition into (with its cleaner-offset-checkpoint)' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l delete-retention-ms -d '`delete.retention.ms`: how long tombstones and removable markers stay after stamping' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l min-compaction-lag-ms -d '`min.compaction.lag.ms`' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l max-compaction-lag-ms -d '`max.compaction.lag.ms`' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l min-cleanable-dirty-ratio -d '`min.cleanable.dirty.ratio`: the log is cleaned only above it (or when the max lag forces it)' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l segment-bytes -d '`segment.bytes`: the most log bytes one cleaned segment gathers' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l dedupe-buffer-bytes -d '`log.cleaner.dedupe.buffer.size` (24 bytes per key; the map holds 90% of the slots)' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l first-dirty-offset -d 'Default: the log dir\'s cleaner-offset-checkpoint, else the log start offset' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l log-start-offset -d 'Default: the log dir\'s `log-start-offset-checkpoint`, else the first segment\'s base' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l high-watermark -d 'Default: the log dir\'s `replication-offset-checkpoint`, else the log end offset' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l backup-dir -d 'Backup directory (default: `<log dir>.kseg-backup/<partition>-<time>`, beside the log dir; one inside the log dir is refused: the broker would take it for a partition)' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l now -d 'The broker clock (default: now). Every command: producers idle longer than producer.id.expiration.ms at this time are dropped from the producer state it rebuilds. retention: also what retention.ms counts from; compact: also the cleaner\'s lags and delete horizon. Epoch ms, RFC 3339, a local date-time (`2016-11-18 08:05`, in --tz or the local zone) or relative (`-1h`, `2d ago`)' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l index-interval-bytes -d 'The topic\'s index.interval.bytes' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l segment-index-bytes -d 'The topic\'s segment.index.bytes (the most index entries a segment can have)' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l producer-id-expiration-ms -d 'The broker\'s producer.id.expiration.ms' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l apply -d 'Carry out the plan (default: only print it; nothing is written)'
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l no-backup -d 'Do not copy the affected files and the plan to a backup directory first'
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l wait -d 'With --apply: wait for the partition\'s lock (a broker\'s or another kseg\'s) instead of refusing'
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l json -d 'Print the plan or report as JSON'
complete -c kseg -n "__fish_kseg_using_subcommand compact" -s v -l verbose -d 'List every file change of a plan (by default a long plan lists 20 and counts the rest)'
complete -c kseg -n "__fish_kseg_using_subcommand compact" -s q -l quiet -d 'No progress bar'
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand compact" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand compact" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand compact" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l remote -d 'The remote storage root holding the topic-partition directories or prefixes: s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX], file:///DIR or a local directory (for Kafka\'s LocalTieredStorage its kafka-tiered-storage directory, or its parent). Credentials come from the standard AWS_*, GOOGLE_* and AZURE_* environment variables' -r
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l remote-segment -d 'One remote segment, read alone with no local partition directory (PATH not needed): the URL (or local path) of its .log object, in Kafka\'s LocalTieredStorage layout (…/TOPIC-PARTITION-TOPICID/START-SEGMENTID.log) or Aiven\'s (…/TOPIC-TOPICID/PARTITION/START-SEGMENTID.log); its other objects (indexes, manifest) are those of the same START-SEGMENTID beside it. It is read as the .log of its start offset in a partition directory named TOPIC-PARTITION. Repeat for more segments' -r
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l remote-endpoint -d 'The URL of an S3-compatible server (http:// allowed), instead of AWS\'s; with gs://, of a GCS-compatible server, reached without OAuth' -r
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l remote-layout -d 'How the objects are laid out (default: detected from the objects\' names)' -r -f -a "local-tiered\t''
aiven\t''"
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l remote-key -d 'A private key (PEM, PKCS#8 or PKCS#1) that unwraps encrypted Aiven segments\' data keys; repeat for a key ring. ID= names the key pair id it answers to (the plugin\'s encryption.key.pairs.ID); without it the key is tried for any id' -r
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l remote-chunk-bytes -d 'Bytes per ranged read of a remote object [default: 16777216]. Memory per object read: at most this times (--remote-requests + 1)' -r
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l remote-requests -d 'Ranged reads started ahead of the one being worked on, reading an object forward [default: 2]; 0 reads one range at a time' -r
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l time -d '`earliest` (the log start offset), `latest` (the log end offset), `max-timestamp` (the record with the largest timestamp; -1, -2, -3 as kafka-get-offsets.sh), or a time (the first offset whose timestamp is at or after it, as the broker searches): epoch ms, RFC 3339, a local date-time (`2016-11-18 08:05`, `2016-11-18`) or relative (`-1h`)' -r
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l time-format -d 'How the text shows times: RFC 3339 in UTC (the default, with ages; in the local zone with --local), in the local zone (`local`), or epoch milliseconds (`ms`, as Kafka stores them). JSON keeps ms' -r -f -a "ms\t'Epoch milliseconds, as Kafka stores and kafka-dump-log prints them'
rfc3339\t'RFC 3339 in UTC (`2026-01-01T00:00:00.009Z`), or in the local zone with `--local`'
local\t'RFC 3339 in the local zone (`--tz`, else this machine\'s), with its offset'"
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l json -d 'Print JSON (one document; `partitions`: one object each) instead of one line each'
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand offsets" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l remote -d 'The remote storage root holding the topic-partition directories or prefixes: s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX], file:///DIR or a local directory (for Kafka\'s LocalTieredStorage its kafka-tiered-storage directory, or its parent). Credentials come from the standard AWS_*, GOOGLE_* and AZURE_* environment variables' -r
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l remote-segment -d 'One remote segment, read alone with no local partition directory (PATH not needed): the URL (or local path) of its .log object, in Kafka\'s LocalTieredStorage layout (…/TOPIC-PARTITION-TOPICID/START-SEGMENTID.log) or Aiven\'s (…/TOPIC-TOPICID/PARTITION/START-SEGMENTID.log); its other objects (indexes, manifest) are those of the same START-SEGMENTID beside it. It is read as the .log of its start offset in a partition directory named TOPIC-PARTITION. Repeat for more segments' -r
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l remote-endpoint -d 'The URL of an S3-compatible server (http:// allowed), instead of AWS\'s; with gs://, of a GCS-compatible server, reached without OAuth' -r
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l remote-layout -d 'How the objects are laid out (default: detected from the objects\' names)' -r -f -a "local-tiered\t''
aiven\t''"
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l remote-key -d 'A private key (PEM, PKCS#8 or PKCS#1) that unwraps encrypted Aiven segments\' data keys; repeat for a key ring. ID= names the key pair id it answers to (the plugin\'s encryption.key.pairs.ID); without it the key is tried for any id' -r
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l remote-chunk-bytes -d 'Bytes per ranged read of a remote object [default: 16777216]. Memory per object read: at most this times (--remote-requests + 1)' -r
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l remote-requests -d 'Ranged reads started ahead of the one being worked on, reading an object forward [default: 2]; 0 reads one range at a time' -r
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l json -d 'Print JSON instead of one line'
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand locate" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand locate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand locate" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l remote -d 'The remote storage root holding the topic-partition directories or prefixes: s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX], file:///DIR or a local directory (for Kafka\'s LocalTieredStorage its kafka-tiered-storage directory, or its parent). Credentials come from the standard AWS_*, GOOGLE_* and AZURE_* environment variables' -r
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l remote-segment -d 'One remote segment, read alone with no local partition directory (PATH not needed): the URL (or local path) of its .log object, in Kafka\'s LocalTieredStorage layout (…/TOPIC-PARTITION-TOPICID/START-SEGMENTID.log) or Aiven\'s (…/TOPIC-TOPICID/PARTITION/START-SEGMENTID.log); its other objects (indexes, manifest) are those of the same START-SEGMENTID beside it. It is read as the .log of its start offset in a partition directory named TOPIC-PARTITION. Repeat for more segments' -r
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l remote-endpoint -d 'The URL of an S3-compatible server (http:// allowed), instead of AWS\'s; with gs://, of a GCS-compatible server, reached without OAuth' -r
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l remote-layout -d 'How the objects are laid out (default: detected from the objects\' names)' -r -f -a "local-tiered\t''
aiven\t''"
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l remote-key -d 'A private key (PEM, PKCS#8 or PKCS#1) that unwraps encrypted Aiven segments\' data keys; repeat for a key ring. ID= names the key pair id it answers to (the plugin\'s encryption.key.pairs.ID); without it the key is tried for any id' -r
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l remote-chunk-bytes -d 'Bytes per ranged read of a remote object [default: 16777216]. Memory per object read: at most this times (--remote-requests + 1)' -r
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l remote-requests -d 'Ranged reads started ahead of the one being worked on, reading an object forward [default: 2]; 0 reads one range at a time' -r
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l by -d 'What to count separately (a table each); a total follows when there is more than one' -r -f -a "segment\t''
partition\t''
topic\t''
producer\t''"
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l now -d 'Timestamps after this count as in the future; default: now. Any time form (epoch ms, RFC 3339, `2016-11-18 08:05` local, `-1h`)' -r
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l top -d 'How many producers the top lists name' -r
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l max-batch-bytes -d 'The most bytes one batch may decompress to; a larger one is reported unchecked (`batch.unchecked`, a warning) and memory use is bounded by this plus a constant' -r
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l time-format -d 'How the text shows times: RFC 3339 in UTC (the default, with ages; in the local zone with --local), in the local zone (`local`), or epoch milliseconds (`ms`, as Kafka stores them). JSON keeps ms' -r -f -a "ms\t'Epoch milliseconds, as Kafka stores and kafka-dump-log prints them'
rfc3339\t'RFC 3339 in UTC (`2026-01-01T00:00:00.009Z`), or in the local zone with `--local`'
local\t'RFC 3339 in the local zone (`--tz`, else this machine\'s), with its offset'"
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l deep -d 'Decode every record: record, key, value and header sizes, uncompressed bytes per codec, record timestamps, and keys (distinct keys estimated, null keys, tombstones)'
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l json -d 'Print the report as one JSON document'
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand stats" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand stats" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand stats" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l remote -d 'The remote storage root holding the topic-partition directories or prefixes: s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX], file:///DIR or a local directory (for Kafka\'s LocalTieredStorage its kafka-tiered-storage directory, or its parent). Credentials come from the standard AWS_*, GOOGLE_* and AZURE_* environment variables' -r
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l remote-segment -d 'One remote segment, read alone with no local partition directory (PATH not needed): the URL (or local path) of its .log object, in Kafka\'s LocalTieredStorage layout (…/TOPIC-PARTITION-TOPICID/START-SEGMENTID.log) or Aiven\'s (…/TOPIC-TOPICID/PARTITION/START-SEGMENTID.log); its other objects (indexes, manifest) are those of the same START-SEGMENTID beside it. It is read as the .log of its start offset in a partition directory named TOPIC-PARTITION. Repeat for more segments' -r
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l remote-endpoint -d 'The URL of an S3-compatible server (http:// allowed), instead of AWS\'s; with gs://, of a GCS-compatible server, reached without OAuth' -r
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l remote-layout -d 'How the objects are laid out (default: detected from the objects\' names)' -r -f -a "local-tiered\t''
aiven\t''"
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l remote-key -d 'A private key (PEM, PKCS#8 or PKCS#1) that unwraps encrypted Aiven segments\' data keys; repeat for a key ring. ID= names the key pair id it answers to (the plugin\'s encryption.key.pairs.ID); without it the key is tried for any id' -r
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l remote-chunk-bytes -d 'Bytes per ranged read of a remote object [default: 16777216]. Memory per object read: at most this times (--remote-requests + 1)' -r
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l remote-requests -d 'Ranged reads started ahead of the one being worked on, reading an object forward [default: 2]; 0 reads one range at a time' -r
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l now -d 'The time open transactions are aged at; default: now. Any time form (epoch ms, RFC 3339, `2016-11-18 08:05` local, `-1h`)' -r
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l transaction-max-timeout-ms -d '`transaction.max.timeout.ms`: an open transaction whose producer wrote nothing for longer hangs (as `kafka-transactions.sh find-hanging` judges)' -r
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l txn-log -d 'A `__transaction_state` partition directory: each producer\'s transactional id and the coordinator\'s state of it, and where the two sides disagree (exit status 1)' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l time-format -d 'How the text shows times: RFC 3339 in UTC (the default, with ages; in the local zone with --local), in the local zone (`local`), or epoch milliseconds (`ms`, as Kafka stores them). JSON keeps ms' -r -f -a "ms\t'Epoch milliseconds, as Kafka stores and kafka-dump-log prints them'
rfc3339\t'RFC 3339 in UTC (`2026-01-01T00:00:00.009Z`), or in the local zone with `--local`'
local\t'RFC 3339 in the local zone (`--tz`, else this machine\'s), with its offset'"
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l json -d 'Print the report as one JSON document'
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand txns" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand txns" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand txns" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand salvage" -l out -d 'Where to write (absent or empty, outside the log dir): `DIR/<partition>/`, the salvaged partition directory, and `DIR/salvage.json`, the report' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand salvage" -l recovery-point -d 'Recovery from the segment holding this offset (default: the log dir\'s recovery-point-offset-checkpoint entry, else the start of the log)' -r
complete -c kseg -n "__fish_kseg_using_subcommand salvage" -l now -d 'The broker clock (epoch milliseconds or RFC 3339). Default: now' -r
complete -c kseg -n "__fish_kseg_using_subcommand salvage" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand salvage" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand salvage" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand salvage" -l json -d 'Print the report as JSON'
complete -c kseg -n "__fish_kseg_using_subcommand salvage" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand salvage" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand salvage" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand salvage" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand salvage" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand salvage" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l remote -d 'The remote storage root holding the topic-partition directories or prefixes: s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX], file:///DIR or a local directory (for Kafka\'s LocalTieredStorage its kafka-tiered-storage directory, or its parent). Credentials come from the standard AWS_*, GOOGLE_* and AZURE_* environment variables' -r
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l remote-segment -d 'One remote segment, read alone with no local partition directory (PATH not needed): the URL (or local path) of its .log object, in Kafka\'s LocalTieredStorage layout (…/TOPIC-PARTITION-TOPICID/START-SEGMENTID.log) or Aiven\'s (…/TOPIC-TOPICID/PARTITION/START-SEGMENTID.log); its other objects (indexes, manifest) are those of the same START-SEGMENTID beside it. It is read as the .log of its start offset in a partition directory named TOPIC-PARTITION. Repeat for more segments' -r
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l remote-endpoint -d 'The URL of an S3-compatible server (http:// allowed), instead of AWS\'s; with gs://, of a GCS-compatible server, reached without OAuth' -r
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l remote-layout -d 'How the objects are laid out (default: detected from the objects\' names)' -r -f -a "local-tiered\t''
aiven\t''"
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l remote-key -d 'A private key (PEM, PKCS#8 or PKCS#1) that unwraps encrypted Aiven segments\' data keys; repeat for a key ring. ID= names the key pair id it answers to (the plugin\'s encryption.key.pairs.ID); without it the key is tried for any id' -r
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l remote-chunk-bytes -d 'Bytes per ranged read of a remote object [default: 16777216]. Memory per object read: at most this times (--remote-requests + 1)' -r
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l remote-requests -d 'Ranged reads started ahead of the one being worked on, reading an object forward [default: 2]; 0 reads one range at a time' -r
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l json -d 'Print the comparison as JSON'
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand diff" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand diff" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l remote -d 'The remote storage root holding the topic-partition directories or prefixes: s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX], file:///DIR or a local directory (for Kafka\'s LocalTieredStorage its kafka-tiered-storage directory, or its parent). Credentials come from the standard AWS_*, GOOGLE_* and AZURE_* environment variables' -r
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l remote-segment -d 'One remote segment, read alone with no local partition directory (PATH not needed): the URL (or local path) of its .log object, in Kafka\'s LocalTieredStorage layout (…/TOPIC-PARTITION-TOPICID/START-SEGMENTID.log) or Aiven\'s (…/TOPIC-TOPICID/PARTITION/START-SEGMENTID.log); its other objects (indexes, manifest) are those of the same START-SEGMENTID beside it. It is read as the .log of its start offset in a partition directory named TOPIC-PARTITION. Repeat for more segments' -r
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l remote-endpoint -d 'The URL of an S3-compatible server (http:// allowed), instead of AWS\'s; with gs://, of a GCS-compatible server, reached without OAuth' -r
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l remote-layout -d 'How the objects are laid out (default: detected from the objects\' names)' -r -f -a "local-tiered\t''
aiven\t''"
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l remote-key -d 'A private key (PEM, PKCS#8 or PKCS#1) that unwraps encrypted Aiven segments\' data keys; repeat for a key ring. ID= names the key pair id it answers to (the plugin\'s encryption.key.pairs.ID); without it the key is tried for any id' -r
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l remote-chunk-bytes -d 'Bytes per ranged read of a remote object [default: 16777216]. Memory per object read: at most this times (--remote-requests + 1)' -r
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l remote-requests -d 'Ranged reads started ahead of the one being worked on, reading an object forward [default: 2]; 0 reads one range at a time' -r
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l from-offset -d 'First offset to hash (inclusive)' -r
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l to-offset -d 'Last offset to hash (inclusive)' -r
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l with-epochs -d 'Hash each batch\'s partition leader epoch too'
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l segments -d 'Print a digest per segment as well'
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l json -d 'Print JSON'
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand digest" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand digest" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand digest" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l remote-endpoint -d 'The URL of an S3-compatible server (http:// allowed), instead of AWS\'s; with gs://, of a GCS-compatible server, reached without OAuth' -r
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l remote-layout -d 'How the objects are laid out (default: detected from the objects\' names)' -r -f -a "local-tiered\t''
aiven\t''"
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l remote-key -d 'A private key (PEM, PKCS#8 or PKCS#1) that unwraps encrypted Aiven segments\' data keys; repeat for a key ring. ID= names the key pair id it answers to (the plugin\'s encryption.key.pairs.ID); without it the key is tried for any id' -r
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l remote-chunk-bytes -d 'Bytes per ranged read of a remote object [default: 16777216]. Memory per object read: at most this times (--remote-requests + 1)' -r
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l remote-requests -d 'Ranged reads started ahead of the one being worked on, reading an object forward [default: 2]; 0 reads one range at a time' -r
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l remote -d 'The remote storage root holding the topic-partition directories or prefixes: s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX], file:///DIR or a local directory (for Kafka\'s LocalTieredStorage its kafka-tiered-storage directory, or its parent). Credentials come from the standard AWS_*, GOOGLE_* and AZURE_* environment variables' -r
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l remote-segment -d 'One remote segment, read alone with no local partition directory (PATH not needed): the URL (or local path) of its .log object, in Kafka\'s LocalTieredStorage layout (…/TOPIC-PARTITION-TOPICID/START-SEGMENTID.log) or Aiven\'s (…/TOPIC-TOPICID/PARTITION/START-SEGMENTID.log); its other objects (indexes, manifest) are those of the same START-SEGMENTID beside it. It is read as the .log of its start offset in a partition directory named TOPIC-PARTITION. Repeat for more segments' -r
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l deep -d 'Also read every remote segment: batch CRCs and framing, offsets against the metadata, and the offset index\'s entries'
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l json -d 'Print JSON'
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand tiered" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand coordinator" -l group -d 'A consumer group id: which `__consumer_offsets` partition holds its offsets' -r
complete -c kseg -n "__fish_kseg_using_subcommand coordinator" -l transactional-id -d 'A transactional id: which `__transaction_state` partition holds its state' -r
complete -c kseg -n "__fish_kseg_using_subcommand coordinator" -l partitions -d 'The topic\'s partition count (`offsets.topic.num.partitions` or `transaction.state.log.num.partitions` when the topic was created; both default to 50)' -r
complete -c kseg -n "__fish_kseg_using_subcommand coordinator" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand coordinator" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand coordinator" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand coordinator" -l json -d 'Print JSON instead of one line'
complete -c kseg -n "__fish_kseg_using_subcommand coordinator" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand coordinator" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand coordinator" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand coordinator" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand coordinator" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand coordinator" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand ls" -l metadata -d 'A `__cluster_metadata-0` directory, or a log dir holding one, to check topic ids and replica assignments against (default: the log dir\'s own, when it has one)' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand ls" -l sort -d 'Order of the partitions' -r -f -a "name\t'Directory name'
size\t'Largest first'
segments\t'Most segments first'
start-offset\t'Lowest log start offset first'
end-offset\t'Highest log end offset first'
modified\t'Most recently modified first'"
complete -c kseg -n "__fish_kseg_using_subcommand ls" -l time-format -d 'How the table shows times (JSON keeps epoch milliseconds)' -r -f -a "ms\t'Epoch milliseconds, as Kafka stores and kafka-dump-log prints them'
rfc3339\t'RFC 3339 in UTC (`2026-01-01T00:00:00.009Z`), or in the local zone with `--local`'
local\t'RFC 3339 in the local zone (`--tz`, else this machine\'s), with its offset'"
complete -c kseg -n "__fish_kseg_using_subcommand ls" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand ls" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand ls" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand ls" -l json -d 'Print JSON (one document, with every log dir) instead of tables'
complete -c kseg -n "__fish_kseg_using_subcommand ls" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand ls" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand ls" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand ls" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand ls" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand ls" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand groups" -l group -d 'Only this group' -r
complete -c kseg -n "__fish_kseg_using_subcommand groups" -l time-format -d 'How the text shows times: RFC 3339 in UTC (the default, with ages; in the local zone with --local), in the local zone (`local`), or epoch milliseconds (`ms`, as Kafka stores them). JSON keeps ms' -r -f -a "ms\t'Epoch milliseconds, as Kafka stores and kafka-dump-log prints them'
rfc3339\t'RFC 3339 in UTC (`2026-01-01T00:00:00.009Z`), or in the local zone with `--local`'
local\t'RFC 3339 in the local zone (`--tz`, else this machine\'s), with its offset'"
complete -c kseg -n "__fish_kseg_using_subcommand groups" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand groups" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand groups" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand groups" -l json -d 'Print JSON instead of tables'
complete -c kseg -n "__fish_kseg_using_subcommand groups" -l csv -d 'Print the committed offsets as the CSV `kafka-consumer-groups.sh --reset-offsets --from-file` reads, no header: `topic,partition,offset` with --group, else `group,topic,partition,offset` (for --all-groups or several --group)'
complete -c kseg -n "__fish_kseg_using_subcommand groups" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand groups" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand groups" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand groups" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand groups" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand groups" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -l at -d 'The image after the records with offsets below OFFSET (default: the log end)' -r
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -l time -d 'The image after the records written at or before T: epoch ms, RFC 3339, a local date-time or relative (`-1h`)' -r
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -l diff -d 'What changed between two points, each an offset, `end`, or a time (RFC 3339, a local date-time, relative; a bare number is an offset)' -r
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -l time-format -d 'How the text shows times: RFC 3339 in UTC (the default, with ages; in the local zone with --local), in the local zone (`local`), or epoch milliseconds (`ms`, as Kafka stores them). JSON keeps ms' -r -f -a "ms\t'Epoch milliseconds, as Kafka stores and kafka-dump-log prints them'
rfc3339\t'RFC 3339 in UTC (`2026-01-01T00:00:00.009Z`), or in the local zone with `--local`'
local\t'RFC 3339 in the local zone (`--tz`, else this machine\'s), with its offset'"
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -l check -d 'Report the records the controller refuses on replay (unknown topic ids, unregistered brokers, mismatched broker epochs) and references to brokers never registered; exit status 1 on the refused ones'
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -l json -d 'Print JSON instead of the tree (with every finding, whether --check is given or not)'
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand metadata" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand checks" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand checks" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand checks" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand checks" -l json -d 'Print JSON: one entry per check id'
complete -c kseg -n "__fish_kseg_using_subcommand checks" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand checks" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand checks" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand checks" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand checks" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand checks" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand version" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand version" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand version" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand version" -l json -d 'Print JSON'
complete -c kseg -n "__fish_kseg_using_subcommand version" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand version" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand version" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand version" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand version" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand version" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand export" -l out -d 'A file named with the format\'s extension (`orders.parquet`) takes every row; `-` is standard output (csv, jsonl); any other path is a directory that gets a Hive-style tree, `topic=T/partition=P/part-00000.parquet`, a file per partition. Either may be in object storage: s3://BUCKET/PREFIX, gs://BUCKET/PREFIX, az://CONTAINER/PREFIX (credentials from the standard AWS_*, GOOGLE_* and AZURE_* environment variables) or file:///DIR' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand export" -l out-endpoint -d 'The URL of an S3-compatible server (http:// allowed) --out is on, instead of AWS\'s; with gs://, of a GCS-compatible server, reached without OAuth' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l format -d 'The table\'s format' -r -f -a "parquet\t''
arrow\t''
csv\t''
jsonl\t''"
complete -c kseg -n "__fish_kseg_using_subcommand export" -l compression -d 'Parquet\'s page compression' -r -f -a "none\t''
snappy\t''
gzip\t''
lz4\t''
zstd\t''"
complete -c kseg -n "__fish_kseg_using_subcommand export" -l row-group-bytes -d 'A Parquet row group ends at each segment\'s end or at this size, whichever comes first: memory is bounded by it plus a constant' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l offset -d 'Partition directories or log dirs: only the batch holding offset N (the next batch after a gap, as a fetch), found through the indexes; with --deep-iteration, its record N' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l from-offset -d 'Partition directories or log dirs: start at the batch holding offset A, found through the indexes (records below A are not shown)' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l to-offset -d 'Partition directories or log dirs: stop after offset B' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l count -d 'Partition directories or log dirs: show at most N records (with --deep-iteration) or batches' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l from-time -d 'Partition directories or log dirs: start at the offset ListOffsets returns for time T (epoch ms, RFC 3339, local `2016-11-18 08:05`, `-1h`): the first record stamped at or after T, as the broker searches' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l to-time -d 'Partition directories or log dirs: stop before the first record stamped after T2 (as the broker\'s search for T2 + 1 finds it); later records with earlier stamps are not shown' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l isolation -d '`read_committed`: partition directories or log dirs, only what such a consumer gets (below the last stable offset; aborted transactions, from the `.txnindex` files, and control batches left out). `read_uncommitted` (the default): everything' -r -f -a "read_uncommitted\t''
read_committed\t''"
complete -c kseg -n "__fish_kseg_using_subcommand export" -l key -d 'Only records with this key (UTF-8 text; hex with --key-hex)' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l key-regex -d 'Only records whose key matches this regular expression (on the key\'s bytes; anchor it with ^…$ to match the whole key)' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l header -d 'Only records with this header (and this value); repeat for several (all must be there)' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l producer-id -d 'Only records of batches from this producer id' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l producer-epoch -d 'Only records of batches with this producer epoch' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l leader-epoch -d 'Only records of batches with this partition leader epoch' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l max-batch-bytes -d 'The most bytes one batch may decompress to; a larger one is reported unchecked (`batch.unchecked`, a warning) and memory use is bounded by this plus a constant' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l key-decoder -d 'Decode keys: dump prints them decoded (implies --print-data-log; a key that does not decode prints as hex with the reason), export adds the decodedKey column' -r -f -a "string\t'UTF-8 text, malformed sequences replaced (kafka-dump-log\'s StringDecoder)'
int\t'Big-endian int32 of the first 4 bytes (IntegerDecoder)'
long\t'Big-endian int64 of the first 8 bytes (LongDecoder)'
hex\t''
base64\t''
json\t'A JSON document, printed compactly (nested as JSON in --json output)'
avro\t'Avro in the Confluent wire format (magic byte 0, 4-byte schema id) against the `<id>.avsc` files of --schema-dir, or plain Avro with --avro-schema'
protobuf\t'Protobuf in the Confluent wire format (magic byte 0, 4-byte schema id, message indexes) against the `<id>.desc` / `<id>.proto` files of --schema-dir, or plain Protobuf with --proto-descriptor and --proto-message; printed as protobuf\'s canonical JSON'"
complete -c kseg -n "__fish_kseg_using_subcommand export" -l value-decoder -d 'Decode values (dump: implies --print-data-log; export: the decodedValue column); as --key-decoder' -r -f -a "string\t'UTF-8 text, malformed sequences replaced (kafka-dump-log\'s StringDecoder)'
int\t'Big-endian int32 of the first 4 bytes (IntegerDecoder)'
long\t'Big-endian int64 of the first 8 bytes (LongDecoder)'
hex\t''
base64\t''
json\t'A JSON document, printed compactly (nested as JSON in --json output)'
avro\t'Avro in the Confluent wire format (magic byte 0, 4-byte schema id) against the `<id>.avsc` files of --schema-dir, or plain Avro with --avro-schema'
protobuf\t'Protobuf in the Confluent wire format (magic byte 0, 4-byte schema id, message indexes) against the `<id>.desc` / `<id>.proto` files of --schema-dir, or plain Protobuf with --proto-descriptor and --proto-message; printed as protobuf\'s canonical JSON'"
complete -c kseg -n "__fish_kseg_using_subcommand export" -l schema-dir -d 'For the avro and protobuf decoders: a directory of the writer schemas of the Confluent wire format\'s schema ids, `<id>.avsc` (Avro), `<id>.desc` (a Protobuf descriptor set, `protoc --include_imports --descriptor_set_out`) or `<id>.proto` (imports resolved in the directory); other files are ignored' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand export" -l avro-schema -d 'For the avro decoder: one writer schema (`.avsc`) for plain Avro, without the prefix' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand export" -l proto-descriptor -d 'For the protobuf decoder: the schema of plain Protobuf values, without the prefix (a descriptor set or a `.proto` file), with --proto-message' -r -F
complete -c kseg -n "__fish_kseg_using_subcommand export" -l proto-message -d 'For the protobuf decoder: the message type of plain values (`package.Message`)' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l key-format -d 'The keys\' format, decoded into the decodedKey column: the same as --key-decoder (dump\'s --key-format is instead how it prints key bytes, which export keeps as they are)' -r -f -a "string\t'UTF-8 text, malformed sequences replaced (kafka-dump-log\'s StringDecoder)'
int\t'Big-endian int32 of the first 4 bytes (IntegerDecoder)'
long\t'Big-endian int64 of the first 8 bytes (LongDecoder)'
hex\t''
base64\t''
json\t'A JSON document, printed compactly (nested as JSON in --json output)'
avro\t'Avro in the Confluent wire format (magic byte 0, 4-byte schema id) against the `<id>.avsc` files of --schema-dir, or plain Avro with --avro-schema'
protobuf\t'Protobuf in the Confluent wire format (magic byte 0, 4-byte schema id, message indexes) against the `<id>.desc` / `<id>.proto` files of --schema-dir, or plain Protobuf with --proto-descriptor and --proto-message; printed as protobuf\'s canonical JSON'"
complete -c kseg -n "__fish_kseg_using_subcommand export" -l value-format -d 'The values\' format, decoded into the decodedValue column: the same as --value-decoder' -r -f -a "string\t'UTF-8 text, malformed sequences replaced (kafka-dump-log\'s StringDecoder)'
int\t'Big-endian int32 of the first 4 bytes (IntegerDecoder)'
long\t'Big-endian int64 of the first 8 bytes (LongDecoder)'
hex\t''
base64\t''
json\t'A JSON document, printed compactly (nested as JSON in --json output)'
avro\t'Avro in the Confluent wire format (magic byte 0, 4-byte schema id) against the `<id>.avsc` files of --schema-dir, or plain Avro with --avro-schema'
protobuf\t'Protobuf in the Confluent wire format (magic byte 0, 4-byte schema id, message indexes) against the `<id>.desc` / `<id>.proto` files of --schema-dir, or plain Protobuf with --proto-descriptor and --proto-message; printed as protobuf\'s canonical JSON'"
complete -c kseg -n "__fish_kseg_using_subcommand export" -l json-schema-sample -d 'With the json decoder: infer the decoded column\'s type (a struct) from the first N records\' documents; without it the column is the JSON text' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l width -d 'Fit tables to N columns (default: `$COLUMNS`, else the terminal\'s width; a pipe gets the whole table)' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l color -d 'Colour errors red and warnings yellow: on a terminal (`auto`, unless `NO_COLOR` is set), `always` or `never`' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kseg -n "__fish_kseg_using_subcommand export" -l tz -d 'The time zone local date-times in time flags are read in, and `--local` prints in (an IANA name such as `Europe/Paris`; default: `TZ`, else the system\'s)' -r
complete -c kseg -n "__fish_kseg_using_subcommand export" -l key-hex -d '--key is hex (`00ff…`), for binary keys'
complete -c kseg -n "__fish_kseg_using_subcommand export" -l transactional -d 'Only records of transactional batches'
complete -c kseg -n "__fish_kseg_using_subcommand export" -l control -d 'Only control records (transaction markers)'
complete -c kseg -n "__fish_kseg_using_subcommand export" -l tombstones -d 'Only tombstones (records without a value)'
complete -c kseg -n "__fish_kseg_using_subcommand export" -l json -d 'Print the report as JSON'
complete -c kseg -n "__fish_kseg_using_subcommand export" -s q -l quiet -d 'No progress bar (one is shown on a terminal\'s standard error for a long export)'
complete -c kseg -n "__fish_kseg_using_subcommand export" -l wide -d 'Keep every column of a table, however wide (long names are still shortened)'
complete -c kseg -n "__fish_kseg_using_subcommand export" -l tsv -d 'Tables as tab-separated values with a header line (for scripts), never fitted; the short form of `--format tsv` where a command has `--format`'
complete -c kseg -n "__fish_kseg_using_subcommand export" -l bytes -d 'Sizes in tables and messages as exact bytes instead of KiB, MiB, GiB'
complete -c kseg -n "__fish_kseg_using_subcommand export" -l local -d 'Print RFC 3339 times in the local zone (or --tz) instead of UTC'
complete -c kseg -n "__fish_kseg_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kseg -n "__fish_kseg_using_subcommand export" -s V -l version -d 'Print version'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "dump" -d 'Print the contents of segment, index, snapshot and checkpoint files (a drop-in for kafka-dump-log.sh --files, with JSON output and damage reports)'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "verify" -d 'Check segments, partitions and log dirs for damage (exit status 1 when errors are found)'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "write" -d 'Build a partition directory from a spec, byte for byte as the broker writes it'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "rebuild-index" -d 'Rebuild segment indexes from the .log as the broker\'s recovery does (dry run unless --apply)'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "recover" -d 'Repair a partition directory offline exactly as the broker\'s unclean-restart recovery plus a clean shutdown would (dry run unless --apply)'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "retention" -d 'Which segments the broker\'s retention would delete and why, and when the rest goes'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "compact" -d 'One round of the broker\'s log cleaner, written to a new log dir (--out) or carried out in place (--apply; dry run otherwise), with a report'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "offsets" -d 'The offset, timestamp and leader epoch ListOffsets would answer (earliest, latest, max-timestamp or a time), found through the indexes as the broker finds it'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "locate" -d 'Which segment file, byte position and batch hold an offset, and the index entry that led there'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "stats" -d 'What segments, partitions and log dirs hold: batches, records and bytes by codec, format and kind, size histograms, timestamps, producers, keys (--deep)'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "txns" -d 'Transactions per partition: last stable offset, open and hanging transactions, committed and aborted ones, each producer\'s state'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "salvage" -d 'Save the valid batches a recovery would drop (those after the first damage) into a partition directory of their own, with a report; the source is only read'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "diff" -d 'Where two replicas of one partition diverge (by the broker\'s leader-epoch truncation and by their batches), and what only one of them has'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "digest" -d 'A SHA-256 of a partition\'s record stream (not its segment boundaries), to compare replicas by exchanging one line'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "tiered" -d 'A partition\'s remote tier (tiered storage) reconciled with __remote_log_metadata and the local log: unfinished copies and deletes, orphans, missing objects, gaps, overlaps'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "coordinator" -d 'Which __consumer_offsets or __transaction_state partition holds a group or a transactional id (Kafka\'s abs(hashCode) % partitions)'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "ls" -d 'One line per partition directory of a log dir from metadata alone: sizes, offsets, checkpoints, topic ids, directory states and the problems they show'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "groups" -d 'Consumer groups from __consumer_offsets on disk: committed offsets (replayed as the group coordinator does), state, members and lag'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "metadata" -d 'The KRaft metadata image (features, brokers, topics and partitions, configs, quotas, ACLs, …) at the log end, an offset or a time, rebuilt from __cluster_metadata as the controller does; what changed between two points (--diff)'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "checks" -d 'Every finding id (`batch.crc`, `index.untrimmed`, …): its severity, what it means and what the broker does about it'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "version" -d 'The version, git commit, build date, the Kafka release kseg follows, and features'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "export" -d 'The records of partitions as a Parquet, Arrow, CSV or JSON Lines table for SQL engines (DuckDB, Spark, Trino): one file, or a Hive-style tree with a file per partition'
complete -c kseg -n "__fish_kseg_using_subcommand help; and not __fish_seen_subcommand_from dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
