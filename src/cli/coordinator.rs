//! `kseg coordinator --group G | --transactional-id T`: the coordinator partition holding it.

use std::io::Write;

use clap::Args;

use super::render::print_json_or_text;
use super::{fail, EXIT_OK};
use crate::format::partition_for::OFFSETS_TOPIC_PARTITIONS_DEFAULT;
use crate::ops::inspect::coordinator::{lookup, CoordinatorAnswer, CoordinatorKey};

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("key").required(true).multiple(false))]
pub struct CoordinatorArgs {
    /// A consumer group id: which `__consumer_offsets` partition holds its offsets.
    #[arg(long, value_name = "G", group = "key")]
    pub group: Option<String>,
    /// A transactional id: which `__transaction_state` partition holds its state.
    #[arg(long, value_name = "T", group = "key")]
    pub transactional_id: Option<String>,
    /// The topic's partition count (`offsets.topic.num.partitions` or
    /// `transaction.state.log.num.partitions` when the topic was created; both default to 50).
    #[arg(long, value_name = "N", default_value_t = OFFSETS_TOPIC_PARTITIONS_DEFAULT,
          value_parser = clap::value_parser!(i32).range(1..))]
    pub partitions: i32,
    /// Print JSON instead of one line.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: CoordinatorArgs) -> u8 {
    let key = match (args.group, args.transactional_id) {
        (Some(g), _) => CoordinatorKey::Group(g),
        (None, Some(t)) => CoordinatorKey::TransactionalId(t),
        (None, None) => return fail(&"one of --group or --transactional-id is required"),
    };
    let answer = lookup(&key, args.partitions);
    let json = args.json.then_some(&answer);
    if let Err(e) = print_json_or_text(json.as_ref(), |out| print_answer(out, &answer)) {
        return fail(&e);
    }
    EXIT_OK
}

fn print_answer(out: &mut impl Write, a: &CoordinatorAnswer) -> std::io::Result<()> {
    writeln!(
        out,
        "{} (partition {} of {}; {} {:?} hashCode {})",
        a.dir, a.partition, a.partitions, a.key_type, a.key, a.hash_code
    )
}
