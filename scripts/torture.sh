#!/usr/bin/env bash
# The long process-kill torture run (Docs/Durability.md, "Process kill"): a child process saves
# in a loop at the engine and object level and is SIGKILLed at random moments, thousands of
# times; after each kill both stores are reopened and compared with a model of every save.
#
#   scripts/torture.sh [--minutes M] [--seed S] [--kills-per-seed K]
#
# Prints the figures (kills survived, saves acknowledged, ...). Exit status 1 when a store
# lost an acknowledged save, held half of one, or failed verify(); its directory is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=10
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --minutes) minutes="$2"; shift 2 ;;
        --seed|--kills-per-seed) args+=("$1" "$2"); shift 2 ;;
        *) echo "usage: $0 [--minutes M] [--seed S] [--kills-per-seed K]" >&2; exit 2 ;;
    esac
done
scratch=.build-rel
swift build -c release --scratch-path "$scratch" --product StrataTestHelper >&2
"$scratch/release/StrataTestHelper" torture-run --minutes "$minutes" ${args[@]+"${args[@]}"}
