_kseg() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="kseg"
                ;;
            kseg,checks)
                cmd="kseg__subcmd__checks"
                ;;
            kseg,compact)
                cmd="kseg__subcmd__compact"
                ;;
            kseg,coordinator)
                cmd="kseg__subcmd__coordinator"
                ;;
            kseg,diff)
                cmd="kseg__subcmd__diff"
                ;;
            kseg,digest)
                cmd="kseg__subcmd__digest"
                ;;
            kseg,dump)
                cmd="kseg__subcmd__dump"
                ;;
            kseg,export)
                cmd="kseg__subcmd__export"
                ;;
            kseg,groups)
                cmd="kseg__subcmd__groups"
                ;;
            kseg,help)
                cmd="kseg__subcmd__help"
                ;;
            kseg,locate)
                cmd="kseg__subcmd__locate"
                ;;
            kseg,ls)
                cmd="kseg__subcmd__ls"
                ;;
            kseg,metadata)
                cmd="kseg__subcmd__metadata"
                ;;
            kseg,offsets)
                cmd="kseg__subcmd__offsets"
                ;;
            kseg,rebuild-index)
                cmd="kseg__subcmd__rebuild__subcmd__index"
                ;;
            kseg,recover)
                cmd="kseg__subcmd__recover"
                ;;
            kseg,retention)
                cmd="kseg__subcmd__retention"
                ;;
            kseg,salvage)
                cmd="kseg__subcmd__salvage"
                ;;
            kseg,stats)
                cmd="kseg__subcmd__stats"
                ;;
            kseg,tiered)
                cmd="kseg__subcmd__tiered"
                ;;
            kseg,txns)
                cmd="kseg__subcmd__txns"
                ;;
            kseg,verify)
                cmd="kseg__subcmd__verify"
                ;;
            kseg,version)
                cmd="kseg__subcmd__version"
                ;;
            kseg,write)
                cmd="kseg__subcmd__write"
                ;;
            kseg__subcmd__help,checks)
                cmd="kseg__subcmd__help__subcmd__checks"
                ;;
            kseg__subcmd__help,compact)
                cmd="kseg__subcmd__help__subcmd__compact"
                ;;
            kseg__subcmd__help,coordinator)
                cmd="kseg__subcmd__help__subcmd__coordinator"
                ;;
            kseg__subcmd__help,diff)
                cmd="kseg__subcmd__help__subcmd__diff"
                ;;
            kseg__subcmd__help,digest)
                cmd="kseg__subcmd__help__subcmd__digest"
                ;;
            kseg__subcmd__help,dump)
                cmd="kseg__subcmd__help__subcmd__dump"
                ;;
            kseg__subcmd__help,export)
                cmd="kseg__subcmd__help__subcmd__export"
                ;;
            kseg__subcmd__help,groups)
                cmd="kseg__subcmd__help__subcmd__groups"
                ;;
            kseg__subcmd__help,help)
                cmd="kseg__subcmd__help__subcmd__help"
                ;;
            kseg__subcmd__help,locate)
                cmd="kseg__subcmd__help__subcmd__locate"
                ;;
            kseg__subcmd__help,ls)
                cmd="kseg__subcmd__help__subcmd__ls"
                ;;
            kseg__subcmd__help,metadata)
                cmd="kseg__subcmd__help__subcmd__metadata"
                ;;
            kseg__subcmd__help,offsets)
                cmd="kseg__subcmd__help__subcmd__offsets"
                ;;
            kseg__subcmd__help,rebuild-index)
                cmd="kseg__subcmd__help__subcmd__rebuild__subcmd__index"
                ;;
            kseg__subcmd__help,recover)
                cmd="kseg__subcmd__help__subcmd__recover"
                ;;
            kseg__subcmd__help,retention)
                cmd="kseg__subcmd__help__subcmd__retention"
                ;;
            kseg__subcmd__help,salvage)
                cmd="kseg__subcmd__help__subcmd__salvage"
                ;;
            kseg__subcmd__help,stats)
                cmd="kseg__subcmd__help__subcmd__stats"
                ;;
            kseg__subcmd__help,tiered)
                cmd="kseg__subcmd__help__subcmd__tiered"
                ;;
            kseg__subcmd__help,txns)
                cmd="kseg__subcmd__help__subcmd__txns"
                ;;
            kseg__subcmd__help,verify)
                cmd="kseg__subcmd__help__subcmd__verify"
                ;;
            kseg__subcmd__help,version)
                cmd="kseg__subcmd__help__subcmd__version"
                ;;
            kseg__subcmd__help,write)
                cmd="kseg__subcmd__help__subcmd__write"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        kseg)
            opts="-h -V --width --wide --tsv --bytes --color --tz --local --help --version dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__checks)
            opts="-h -V --json --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__compact)
            opts="-v -q -h -V --out --delete-retention-ms --min-compaction-lag-ms --max-compaction-lag-ms --min-cleanable-dirty-ratio --segment-bytes --dedupe-buffer-bytes --first-dirty-offset --log-start-offset --high-watermark --apply --no-backup --backup-dir --wait --json --verbose --quiet --now --index-interval-bytes --segment-index-bytes --producer-id-expiration-ms --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --delete-retention-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-compaction-lag-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-compaction-lag-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-cleanable-dirty-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --segment-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dedupe-buffer-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --first-dirty-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-start-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --high-watermark)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --backup-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --index-interval-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --segment-index-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer-id-expiration-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__coordinator)
            opts="-h -V --group --transactional-id --partitions --json --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --group)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --transactional-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --partitions)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__diff)
            opts="-h -V --remote --remote-segment --remote-endpoint --remote-layout --remote-key --remote-chunk-bytes --remote-requests --json --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --remote)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-segment)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-layout)
                    COMPREPLY=($(compgen -W "local-tiered aiven" -- "${cur}"))
                    return 0
                    ;;
                --remote-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-chunk-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__digest)
            opts="-h -V --remote --remote-segment --remote-endpoint --remote-layout --remote-key --remote-chunk-bytes --remote-requests --from-offset --to-offset --with-epochs --segments --json --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --remote)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-segment)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-layout)
                    COMPREPLY=($(compgen -W "local-tiered aiven" -- "${cur}"))
                    return 0
                    ;;
                --remote-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-chunk-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__dump)
            opts="-q -h -V --files --remote --remote-segment --remote-endpoint --remote-layout --remote-key --remote-chunk-bytes --remote-requests --deep-iteration --print-data-log --skip-record-metadata --verify-index-only --index-sanity-check --max-message-size --max-bytes --max-batch-bytes --offsets-decoder --transaction-log-decoder --cluster-metadata-decoder --share-group-state-decoder --remote-log-metadata-decoder --decode --key-decoder-class --value-decoder-class --key-decoder --value-decoder --schema-dir --avro-schema --proto-descriptor --proto-message --json --jsonl --key-format --value-format --time-format --base-offset --quiet --offset --from-offset --to-offset --count --from-time --to-time --isolation --key --key-hex --key-regex --header --producer-id --producer-epoch --leader-epoch --transactional --control --tombstones --batches --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --files)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-segment)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-layout)
                    COMPREPLY=($(compgen -W "local-tiered aiven" -- "${cur}"))
                    return 0
                    ;;
                --remote-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-chunk-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-message-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-batch-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --decode)
                    COMPREPLY=($(compgen -W "none auto" -- "${cur}"))
                    return 0
                    ;;
                --key-decoder-class)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --value-decoder-class)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-decoder)
                    COMPREPLY=($(compgen -W "string int long hex base64 json avro protobuf" -- "${cur}"))
                    return 0
                    ;;
                --value-decoder)
                    COMPREPLY=($(compgen -W "string int long hex base64 json avro protobuf" -- "${cur}"))
                    return 0
                    ;;
                --schema-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --avro-schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --proto-descriptor)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --proto-message)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-format)
                    COMPREPLY=($(compgen -W "auto utf8 hex base64" -- "${cur}"))
                    return 0
                    ;;
                --value-format)
                    COMPREPLY=($(compgen -W "auto utf8 hex base64" -- "${cur}"))
                    return 0
                    ;;
                --time-format)
                    COMPREPLY=($(compgen -W "ms rfc3339 local" -- "${cur}"))
                    return 0
                    ;;
                --base-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --count)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --isolation)
                    COMPREPLY=($(compgen -W "read_uncommitted read_committed" -- "${cur}"))
                    return 0
                    ;;
                --key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-regex)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --header)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer-epoch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --leader-epoch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__export)
            opts="-q -h -V --out --out-endpoint --format --compression --row-group-bytes --offset --from-offset --to-offset --count --from-time --to-time --isolation --key --key-hex --key-regex --header --producer-id --producer-epoch --leader-epoch --transactional --control --tombstones --max-batch-bytes --key-decoder --value-decoder --schema-dir --avro-schema --proto-descriptor --proto-message --key-format --value-format --json-schema-sample --json --quiet --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "parquet arrow csv jsonl" -- "${cur}"))
                    return 0
                    ;;
                --compression)
                    COMPREPLY=($(compgen -W "none snappy gzip lz4 zstd" -- "${cur}"))
                    return 0
                    ;;
                --row-group-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --count)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --isolation)
                    COMPREPLY=($(compgen -W "read_uncommitted read_committed" -- "${cur}"))
                    return 0
                    ;;
                --key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-regex)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --header)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer-epoch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --leader-epoch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-batch-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-decoder)
                    COMPREPLY=($(compgen -W "string int long hex base64 json avro protobuf" -- "${cur}"))
                    return 0
                    ;;
                --value-decoder)
                    COMPREPLY=($(compgen -W "string int long hex base64 json avro protobuf" -- "${cur}"))
                    return 0
                    ;;
                --schema-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --avro-schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --proto-descriptor)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --proto-message)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-format)
                    COMPREPLY=($(compgen -W "string int long hex base64 json avro protobuf" -- "${cur}"))
                    return 0
                    ;;
                --value-format)
                    COMPREPLY=($(compgen -W "string int long hex base64 json avro protobuf" -- "${cur}"))
                    return 0
                    ;;
                --json-schema-sample)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__groups)
            opts="-h -V --group --json --csv --time-format --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --group)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --time-format)
                    COMPREPLY=($(compgen -W "ms rfc3339 local" -- "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help)
            opts="dump verify write rebuild-index recover retention compact offsets locate stats txns salvage diff digest tiered coordinator ls groups metadata checks version export help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__checks)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__compact)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__coordinator)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__diff)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__digest)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__dump)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__export)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__groups)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__locate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__ls)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__metadata)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__offsets)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__rebuild__subcmd__index)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__recover)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__retention)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__salvage)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__stats)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__tiered)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__txns)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__verify)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__version)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__help__subcmd__write)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__locate)
            opts="-h -V --remote --remote-segment --remote-endpoint --remote-layout --remote-key --remote-chunk-bytes --remote-requests --json --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --remote)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-segment)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-layout)
                    COMPREPLY=($(compgen -W "local-tiered aiven" -- "${cur}"))
                    return 0
                    ;;
                --remote-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-chunk-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__ls)
            opts="-h -V --metadata --sort --json --time-format --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --metadata)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sort)
                    COMPREPLY=($(compgen -W "name size segments start-offset end-offset modified" -- "${cur}"))
                    return 0
                    ;;
                --time-format)
                    COMPREPLY=($(compgen -W "ms rfc3339 local" -- "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__metadata)
            opts="-h -V --at --time --diff --check --json --time-format --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --at)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --diff)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --time-format)
                    COMPREPLY=($(compgen -W "ms rfc3339 local" -- "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__offsets)
            opts="-h -V --remote --remote-segment --remote-endpoint --remote-layout --remote-key --remote-chunk-bytes --remote-requests --time --json --time-format --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --remote)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-segment)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-layout)
                    COMPREPLY=($(compgen -W "local-tiered aiven" -- "${cur}"))
                    return 0
                    ;;
                --remote-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-chunk-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --time-format)
                    COMPREPLY=($(compgen -W "ms rfc3339 local" -- "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__rebuild__subcmd__index)
            opts="-v -q -h -V --jobs --all --apply --no-backup --backup-dir --wait --json --verbose --quiet --now --index-interval-bytes --segment-index-bytes --producer-id-expiration-ms --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --backup-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --index-interval-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --segment-index-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer-id-expiration-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__recover)
            opts="-v -q -h -V --recovery-point --salvage --jobs --remains --apply --no-backup --backup-dir --wait --json --verbose --quiet --now --index-interval-bytes --segment-index-bytes --producer-id-expiration-ms --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --recovery-point)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --salvage)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --backup-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --index-interval-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --segment-index-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer-id-expiration-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__retention)
            opts="-v -q -h -V --retention-ms --retention-bytes --log-start-offset --high-watermark --time-format --apply --no-backup --backup-dir --wait --json --verbose --quiet --now --index-interval-bytes --segment-index-bytes --producer-id-expiration-ms --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --retention-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retention-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-start-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --high-watermark)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --time-format)
                    COMPREPLY=($(compgen -W "ms rfc3339 local" -- "${cur}"))
                    return 0
                    ;;
                --backup-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --index-interval-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --segment-index-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer-id-expiration-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__salvage)
            opts="-h -V --out --recovery-point --now --json --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --recovery-point)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__stats)
            opts="-h -V --remote --remote-segment --remote-endpoint --remote-layout --remote-key --remote-chunk-bytes --remote-requests --deep --by --now --top --json --max-batch-bytes --time-format --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --remote)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-segment)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-layout)
                    COMPREPLY=($(compgen -W "local-tiered aiven" -- "${cur}"))
                    return 0
                    ;;
                --remote-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-chunk-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --by)
                    COMPREPLY=($(compgen -W "segment partition topic producer" -- "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --top)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-batch-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --time-format)
                    COMPREPLY=($(compgen -W "ms rfc3339 local" -- "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__tiered)
            opts="-h -V --remote-endpoint --remote-layout --remote-key --remote-chunk-bytes --remote-requests --deep --json --remote --remote-segment --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --remote-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-layout)
                    COMPREPLY=($(compgen -W "local-tiered aiven" -- "${cur}"))
                    return 0
                    ;;
                --remote-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-chunk-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-segment)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__txns)
            opts="-h -V --remote --remote-segment --remote-endpoint --remote-layout --remote-key --remote-chunk-bytes --remote-requests --now --transaction-max-timeout-ms --txn-log --json --time-format --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --remote)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-segment)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-layout)
                    COMPREPLY=($(compgen -W "local-tiered aiven" -- "${cur}"))
                    return 0
                    ;;
                --remote-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-chunk-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --transaction-max-timeout-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --txn-log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --time-format)
                    COMPREPLY=($(compgen -W "ms rfc3339 local" -- "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__verify)
            opts="-q -h -V --remote --remote-segment --remote-endpoint --remote-layout --remote-key --remote-chunk-bytes --remote-requests --deep --json --format --strict --base-offset --max-batch-bytes --quiet --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --remote)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-segment)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-layout)
                    COMPREPLY=($(compgen -W "local-tiered aiven" -- "${cur}"))
                    return 0
                    ;;
                --remote-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-chunk-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table tsv json github" -- "${cur}"))
                    return 0
                    ;;
                --base-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-batch-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__version)
            opts="-h -V --json --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kseg__subcmd__write)
            opts="-q -h -V --json --jsonl --quiet --tier-to --remote-layout --key-prefix --chunk-size --chunk-compression --encrypt-key --topic --partition --batch-size --compression --compression-level --magic --timestamp-type --producer-id --producer-epoch --leader-epoch --segment-bytes --segment-ms --index-interval-bytes --segment-index-bytes --start-offset --now-ms --start-ts --topic-id --crash --width --wide --tsv --bytes --color --tz --local --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --tier-to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-layout)
                    COMPREPLY=($(compgen -W "local-tiered aiven" -- "${cur}"))
                    return 0
                    ;;
                --key-prefix)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --encrypt-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --partition)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --batch-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --compression)
                    COMPREPLY=($(compgen -W "none gzip snappy lz4 zstd" -- "${cur}"))
                    return 0
                    ;;
                --compression-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --magic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timestamp-type)
                    COMPREPLY=($(compgen -W "CreateTime LogAppendTime" -- "${cur}"))
                    return 0
                    ;;
                --producer-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer-epoch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --leader-epoch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --segment-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --segment-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --index-interval-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --segment-index-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --start-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --start-ts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topic-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --tz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _kseg -o nosort -o bashdefault -o default kseg
else
    complete -F _kseg -o bashdefault -o default kseg
fi
