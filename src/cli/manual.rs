//! What `--help` and the man pages teach beyond the flags: examples of real tasks for each
//! command, the exit statuses, the environment. One table each; [`command`] puts the examples
//! into every subcommand's `--help`, tests/generated_files.rs renders all of it into man/, and
//! tests/help_examples.rs runs every runnable example on a copy of testdata/.

use clap::CommandFactory;

use super::{Cli, EXIT_FAILURE, EXIT_FINDINGS, EXIT_OK};

/// One example: the task in the user's words, the command line (words split on spaces, no
/// shell), and the exit status it has when run from the repository root on testdata/ (None:
/// it names a broker's paths, so it is shown but not run).
#[derive(Debug, Clone, Copy)]
pub struct Example {
    pub task: &'static str,
    pub line: &'static str,
    pub status: Option<u8>,
}

/// A page: a subcommand (`""` for kseg itself), its examples and the pages to see also.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub name: &'static str,
    pub examples: &'static [Example],
    pub see_also: &'static [&'static str],
}

const fn ex(task: &'static str, line: &'static str, status: Option<u8>) -> Example {
    Example { task, line, status }
}

const OK: Option<u8> = Some(EXIT_OK);
const FINDINGS: Option<u8> = Some(EXIT_FINDINGS);
/// Shown, not run: the paths are a broker's.
const ON_A_BROKER: Option<u8> = None;

pub const PAGES: &[Page] = &[
    Page {
        name: "",
        examples: &[
            ex("Check partitions for damage (exit status 0: nothing wrong)",
               "kseg verify testdata/orders testdata/payments testdata/legacy", OK),
            ex("What a finding id means and what the broker does about it",
               "kseg checks index.untrimmed", OK),
            ex("What a dead broker's log dir holds, one line per partition",
               "kseg ls /var/lib/kafka/data", ON_A_BROKER),
        ],
        see_also: &["kseg-verify", "kseg-dump", "kseg-recover", "kseg-checks"],
    },
    Page {
        name: "dump",
        examples: &[
            ex("Print a segment's batches and records as kafka-dump-log.sh --files does",
               "kseg dump --deep-iteration --print-data-log testdata/orders/orders-0/00000000000000000000.log", OK),
            ex("Every batch of a partition as JSON Lines, for a program reading as they come",
               "kseg dump --jsonl testdata/payments/payments-0", OK),
            ex("Only the batch holding offset 100, found through the indexes",
               "kseg dump --offset 100 testdata/orders/orders-0", OK),
            ex("Committed consumer offsets, decoded",
               "kseg dump --offsets-decoder /var/lib/kafka/data/__consumer_offsets-7", ON_A_BROKER),
        ],
        see_also: &["kseg-verify", "kseg-locate", "kseg-stats"],
    },
    Page {
        name: "verify",
        examples: &[
            ex("Check the bundled fixtures (exit status 0: nothing wrong)",
               "kseg verify testdata/orders testdata/payments testdata/legacy", OK),
            ex("A crashed broker's partition: the torn tail and untrimmed indexes (exit status 1)",
               "kseg verify testdata/crashed", FINDINGS),
            ex("Decode every record too, and report as JSON for a script",
               "kseg verify --deep --json testdata/payments", OK),
            ex("A whole log dir, before starting the broker on it",
               "kseg verify /var/lib/kafka/data", ON_A_BROKER),
        ],
        see_also: &["kseg-checks", "kseg-recover", "kseg-dump"],
    },
    Page {
        name: "write",
        examples: &[
            ex("Write a fixture from a spec, byte for byte as the broker would",
               "kseg write testdata/orders/SPEC.json fixtures/orders", OK),
            ex("The same, with the summary as JSON",
               "kseg write --json testdata/payments/SPEC.json fixtures/payments", OK),
            ex("Then tier its closed segments into a directory in Aiven's layout",
               "kseg write testdata/orders/SPEC.json o --tier-to t --remote-layout aiven", OK),
        ],
        see_also: &["kseg-verify", "kseg-dump"],
    },
    Page {
        name: "rebuild-index",
        examples: &[
            ex("Which indexes the broker's recovery would rebuild (dry run; exit status 1: some)",
               "kseg rebuild-index testdata/crashed/crashed-0", FINDINGS),
            ex("Plan rebuilding every index, even sound ones",
               "kseg rebuild-index --all testdata/orders/orders-0", FINDINGS),
            ex("Rebuild them, with a backup of the old files (broker stopped)",
               "kseg rebuild-index --apply /var/lib/kafka/data/orders-0", ON_A_BROKER),
        ],
        see_also: &["kseg-recover", "kseg-verify"],
    },
    Page {
        name: "recover",
        examples: &[
            ex("What the broker's unclean-shutdown recovery would change (dry run; exit status 1: changes)",
               "kseg recover testdata/crashed/crashed-0", FINDINGS),
            ex("Keep the batches recovery would drop in a directory of their own, planning only",
               "kseg recover --salvage saved testdata/crashed/crashed-0", FINDINGS),
            ex("Recover a whole log dir in place (broker stopped), with backups",
               "kseg recover --apply /var/lib/kafka/data", ON_A_BROKER),
        ],
        see_also: &["kseg-rebuild-index", "kseg-salvage", "kseg-verify"],
    },
    Page {
        name: "retention",
        examples: &[
            ex("Which segments retention would delete at a given time, and why",
               "kseg retention --retention-ms 86400000 --now 2030-01-01T00:00:00Z testdata/orders/orders-0", FINDINGS),
            ex("What retention.ms's default (7 days) deletes now (exit status 1: it would delete)",
               "kseg retention testdata/orders/orders-0", FINDINGS),
        ],
        see_also: &["kseg-compact", "kseg-stats"],
    },
    Page {
        name: "compact",
        examples: &[
            ex("What one round of the log cleaner would remove (dry run; exit status 1: changes)",
               "kseg compact testdata/orders/orders-0", FINDINGS),
            ex("Write the cleaned partition to a new log dir, leaving the source as it is",
               "kseg compact --out cleaned testdata/orders/orders-0", OK),
        ],
        see_also: &["kseg-retention", "kseg-diff"],
    },
    Page {
        name: "offsets",
        examples: &[
            ex("The earliest, latest and max-timestamp offsets ListOffsets would answer",
               "kseg offsets testdata/orders/orders-0", OK),
            ex("The first offset at or after a time (offsetsForTimes)",
               "kseg offsets --time 2024-01-01T00:00:00Z testdata/orders/orders-0", OK),
            ex("The earliest offset of a tiered partition, its remote tier in S3 included",
               "kseg offsets --time earliest --remote s3://kafka-tier/cluster1 /var/lib/kafka/data/orders-0", ON_A_BROKER),
        ],
        see_also: &["kseg-locate", "kseg-dump"],
    },
    Page {
        name: "locate",
        examples: &[
            ex("Which segment, byte position and batch hold offset 100",
               "kseg locate 100 testdata/orders/orders-0", OK),
            ex("The same as JSON",
               "kseg locate --json 200 testdata/orders/orders-0", OK),
            ex("Offset 100 in every partition of a log dir, one line each",
               "kseg locate 100 testdata/orders", OK),
            ex("Where an offset below the local log lies in the remote tier",
               "kseg locate 1000 --remote file:///var/lib/kafka/tiered /var/lib/kafka/data/orders-0", ON_A_BROKER),
        ],
        see_also: &["kseg-offsets", "kseg-dump"],
    },
    Page {
        name: "stats",
        examples: &[
            ex("Batches, records and bytes by codec and format",
               "kseg stats testdata/orders testdata/legacy", OK),
            ex("Keys and producers too, decoding every record",
               "kseg stats --deep testdata/payments", OK),
            ex("What a tiered partition holds in both tiers, through an S3-compatible server",
               "kseg stats --remote s3://tier --remote-endpoint http://minio:9000 /var/lib/kafka/data/orders-0", ON_A_BROKER),
            ex("One remote segment in S3 (Kafka's layout) alone, with no partition directory",
               "kseg stats --remote-segment s3://t/orders-0-T1JBQ0xFAAAAAAAAAAAAAQ/0-nKSOrakVZeSHCrXlm28GAg.log", ON_A_BROKER),
        ],
        see_also: &["kseg-txns", "kseg-ls"],
    },
    Page {
        name: "txns",
        examples: &[
            ex("Last stable offset, open and aborted transactions (exit status 1: one hangs)",
               "kseg txns testdata/payments/payments-0", FINDINGS),
            ex("The same as JSON",
               "kseg txns --json testdata/payments/payments-0", FINDINGS),
        ],
        see_also: &["kseg-stats", "kseg-verify"],
    },
    Page {
        name: "salvage",
        examples: &[
            ex("Save the valid batches recovery would drop (exit status 1: it drops some)",
               "kseg salvage testdata/crashed/crashed-0 --out saved", FINDINGS),
            ex("The same, with the report as JSON",
               "kseg salvage --json testdata/crashed/crashed-0 --out saved", FINDINGS),
        ],
        see_also: &["kseg-recover"],
    },
    Page {
        name: "diff",
        examples: &[
            ex("Where two replicas of a partition diverge",
               "kseg diff testdata/orders/orders-0 testdata/crashed/crashed-0", FINDINGS),
            ex("Two copies of the same data (exit status 0: identical)",
               "kseg diff testdata/orders/orders-0 testdata/orders/orders-0", OK),
            ex("Two brokers' log dirs, partition by partition (identical, only on one, diverging)",
               "kseg diff testdata/orders testdata/crashed", FINDINGS),
        ],
        see_also: &["kseg-digest"],
    },
    Page {
        name: "digest",
        examples: &[
            ex("One line to compare replicas by: a hash of the record stream",
               "kseg digest testdata/orders/orders-0", OK),
            ex("Per segment, from offset 100",
               "kseg digest --segments --from-offset 100 testdata/orders/orders-0", OK),
            ex("Each partition of a log dir, and one digest over them all",
               "kseg digest testdata/orders", OK),
            ex("A tiered partition's whole log, remote and local, to compare with a replica",
               "kseg digest --remote s3://kafka-tier/cluster1 /var/lib/kafka/data/orders-0", ON_A_BROKER),
        ],
        see_also: &["kseg-diff"],
    },
    Page {
        name: "tiered",
        examples: &[
            ex("A partition's remote tier in S3 against __remote_log_metadata",
               "kseg tiered --remote s3://kafka-tier/cluster1 /var/lib/kafka/data/orders-0", ON_A_BROKER),
            ex("Every tiered partition of a log dir, through an S3-compatible server, reading every remote segment",
               "kseg tiered --deep --remote s3://tier --remote-endpoint http://minio:9000 /var/lib/kafka/data", ON_A_BROKER),
            ex("Kafka's LocalTieredStorage on a filesystem (its kafka-tiered-storage directory or its parent)",
               "kseg tiered --remote file:///var/lib/kafka/tiered /var/lib/kafka/data/orders-0", ON_A_BROKER),
            ex("Encrypted Aiven segments, read with the key pair's private key",
               "kseg tiered --deep --remote s3://t --remote-key k1=/etc/k1.pem /data/orders-0", ON_A_BROKER),
        ],
        see_also: &["kseg-verify", "kseg-write"],
    },
    Page {
        name: "coordinator",
        examples: &[
            ex("Which __consumer_offsets partition holds a group's offsets",
               "kseg coordinator --group billing", OK),
            ex("Which __transaction_state partition holds a transactional id",
               "kseg coordinator --transactional-id payments-writer-1", OK),
        ],
        see_also: &["kseg-groups"],
    },
    Page {
        name: "ls",
        examples: &[
            ex("One line per partition of a log dir, from metadata alone",
               "kseg ls testdata/orders", OK),
            ex("A broker's log dir, largest partitions first",
               "kseg ls --sort size /var/lib/kafka/data", ON_A_BROKER),
        ],
        see_also: &["kseg-verify", "kseg-stats"],
    },
    Page {
        name: "groups",
        examples: &[
            ex("Every consumer group's committed offsets and state",
               "kseg groups /var/lib/kafka/data", ON_A_BROKER),
            ex("One group, as JSON",
               "kseg groups --group billing --json /var/lib/kafka/data", ON_A_BROKER),
        ],
        see_also: &["kseg-coordinator"],
    },
    Page {
        name: "metadata",
        examples: &[
            ex("The cluster's metadata image at the log end, as a tree",
               "kseg metadata /var/lib/kafka/data", ON_A_BROKER),
            ex("What the metadata was an hour ago, as JSON",
               "kseg metadata --time -1h --json /var/lib/kafka/data/__cluster_metadata-0", ON_A_BROKER),
            ex("What changed between offset 5000 and the log end",
               "kseg metadata --diff 5000 end /var/lib/kafka/data", ON_A_BROKER),
            ex("Records the controller would refuse on replay",
               "kseg metadata --check /var/lib/kafka/data", ON_A_BROKER),
        ],
        see_also: &["kseg-ls", "kseg-dump"],
    },
    Page {
        name: "checks",
        examples: &[
            ex("Every finding id, its severity and what the broker does",
               "kseg checks", OK),
            ex("One of them", "kseg checks batch.crc", OK),
            ex("All of them as JSON", "kseg checks --json", OK),
        ],
        see_also: &["kseg-verify"],
    },
    Page {
        name: "version",
        examples: &[
            ex("Version, commit, build date and the Kafka release kseg follows",
               "kseg version", OK),
            ex("The same as JSON", "kseg version --json", OK),
        ],
        see_also: &["kseg"],
    },
    Page {
        name: "export",
        examples: &[
            ex("A partition as one Parquet file, to query with DuckDB",
               "kseg export --out orders.parquet testdata/orders/orders-0", OK),
            ex("Every partition of a log dir as a Hive-style tree (topic=…/partition=…/)",
               "kseg export --compression zstd --out table testdata/orders", OK),
            ex("What a read_committed consumer would get, as CSV on standard output",
               "kseg export --isolation read_committed --format csv --out - testdata/payments/payments-0", OK),
            ex("A log dir as a Hive-style tree in a bucket of an S3-compatible server",
               "kseg export --out s3://lake/kafka --out-endpoint http://minio:9000 /var/lib/kafka/data", ON_A_BROKER),
        ],
        see_also: &["kseg-dump"],
    },
];

/// Exit statuses, the same for every command.
pub const EXIT_STATUSES: &[(u8, &str)] = &[
    (EXIT_OK, "Everything examined, nothing wrong (or --apply carried out the plan)."),
    (EXIT_FINDINGS, "Damage or findings reported, or a dry run that would change files; the reason is on standard error."),
    (EXIT_FAILURE, "Bad input: a file that cannot be read, a wrong command line, or nothing to examine (a missing path, an empty directory)."),
];

/// The environment variables kseg reads.
pub const ENVIRONMENT: &[(&str, &str)] = &[
    ("NO_COLOR", "Honoured: kseg prints no colours, so its output is the same with or without it."),
    ("COLUMNS", "The width tables are fitted to when standard output is not a terminal."),
    ("RAYON_NUM_THREADS", "The threads verify and stats read with (default: one per CPU); recover and rebuild-index over log dirs take --jobs instead."),
    ("KSEG_PROGRESS", "always: show progress bars whatever standard error is; never: never show them."),
];

/// The page of `name` (`""` for kseg itself).
pub fn page(name: &str) -> Option<&'static Page> {
    PAGES.iter().find(|p| p.name == name)
}

/// `--help`'s closing text: the command's own notes (its `after_help`), then its examples.
fn long_help_end(notes: Option<String>, examples: &[Example]) -> String {
    let mut t = notes.map(|n| n + "\n\n").unwrap_or_default();
    t += "Examples:";
    for e in examples {
        t += &format!("\n  # {}\n  {}", e.task, e.line);
    }
    t
}

/// The whole command line: the derived definition, with every subcommand's examples at the
/// end of its `--help`, and negative numbers taken as values, so that `--offset -1` is
/// refused by the value's own check rather than taken for a flag.
pub fn command() -> clap::Command {
    let negative_values = |a: clap::Arg| {
        if a.get_action().takes_values() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    };
    let mut cmd = Cli::command()
        .mut_subcommands(move |c| c.mut_args(negative_values))
        // `RemoteArgs` leaves --remote optional for the commands that flatten it as an
        // `Option`; `tiered` needs it, and reconciles a partition's whole remote tier, never a
        // segment named alone (`tiered::run` refuses --remote-segment).
        .mut_subcommand("tiered", |c| {
            c.mut_arg("remote", |a| a.required(true))
                .mut_arg("remote_segment", |a| a.hide(true))
        });
    for p in PAGES {
        let end = |c: clap::Command| {
            let notes = c.get_after_help().map(|h| h.to_string());
            let mut text = long_help_end(notes, p.examples);
            if p.name.is_empty() {
                text += "\n\nExit status:";
                for (code, meaning) in EXIT_STATUSES {
                    text += &format!("\n  {code}  {meaning}");
                }
            }
            c.after_long_help(text)
        };
        cmd = match p.name {
            "" => end(cmd),
            name => cmd.mut_subcommand(name, end),
        };
    }
    cmd
}
