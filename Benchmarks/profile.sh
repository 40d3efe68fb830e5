#!/usr/bin/env bash
# Counts the instructions of one workload with callgrind (exact, and unaffected by other work
# on the machine), on the release build of the benchmarks:
#   Benchmarks/profile.sh MODE [K] [OUT]
# MODE and K as in Sources/StrataBenchmarks/Harness/Profile.swift (W1 20000, W2 200, W3 2000, W4 2,
# W5 50, W6 20000, W7 1, W9 1, E3 3 are sizes that run in seconds). MODE W8 (no K): a fresh
# process's open and first fetch, W8's child, counted where the child times it. Writes OUT (default
# /tmp/callgrind.MODE.out) and prints the instructions of the workload and per operation.
# MODE W8-model: the same with a `@Model` class (StrataData's StrataModelReopen child).
# Read it with `callgrind_annotate --inclusive=yes OUT | swift demangle --simplified`. Its call
# counts include the warm-up pass (W3, W4, W5, W7, E3), which is not in its instructions.
set -euo pipefail
# Swift's hashing is seeded per process: a workload that hashes (a save's sets of identifiers)
# then counts a percent or two differently from run to run. Seeded the same, counts repeat.
export SWIFT_DETERMINISTIC_HASHING=1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mode="${1:?usage: profile.sh MODE [K] [OUT]}"
k="${2:-100}"
out="${3:-/tmp/callgrind.$mode.out}"
command -v valgrind >/dev/null || { echo "profile.sh: valgrind is not installed" >&2; exit 1; }
[ -f /usr/include/sqlite3.h ] || { echo "profile.sh: build the benchmarks once with Benchmarks/run.sh --quick (it installs libsqlite3-dev)" >&2; exit 1; }
# shellcheck source=children.sh
source "$here/children.sh"
bin="$(release_benchmarks)"
if [ "$mode" = W8-model ]; then
    # W8 with a `@Model` class: StrataData's StrataModelReopen child on the profile store.
    read -r store key < <("$bin" profile W8-store | tail -1)
    child="$(model_reopen_child)"
    # Counted: what the child times (`openAndFetch`: the container, the context and the fetch),
    # as W8's count below; not the report it prints after.
    symbols=$(nm "$child" | awk '$2 == "t" || $2 == "T" { print $3 }' | grep -E '^\$s17StrataModelReopen12openAndFetch' || true)
    toggles=()
    for s in $symbols; do toggles+=("--toggle-collect=$s"); done
    [ ${#toggles[@]} -ge 1 ] || { echo "profile.sh: W8-model's openAndFetch() not found in $child" >&2; exit 1; }
    valgrind --tool=callgrind "${toggles[@]}" --callgrind-out-file="$out" \
        "$child" open "$store" "$key" W8-model-reopen-fetch >/dev/null 2>"$out.log"
    total=$(grep -E '^(summary|totals):' "$out" | head -1 | awk '{print $2}')
    echo "W8-model: $total instructions in the child's timed part (openAndFetch: open, context, first fetch)"
    exit 0
fi
if [ "$mode" = W8 ]; then
    # W8: a fresh process opens the store and fetches one object by id (W8's child). Counted:
    # what the child times (opening the container, making the descriptor, the fetch), each
    # function entered once; the process's start and the harness are left out.
    read -r store key < <("$bin" profile W8-store | tail -1)
    symbols=$(nm "$bin" | awk '$2 == "t" || $2 == "T" { print $3 }' | grep -E \
        '^\$s16StrataBenchmarks12ObjectStoresO13openContainer4path0A005ModelF0CSS_tKFZ(Tf4nd_n)?$|^\$s6Strata12ModelContextC5fetchySayxGAA15FetchDescriptorVyxGKAA010PersistentB0RzlF$|^\$s6Strata15FetchDescriptorV9predicate6sortBy.*6CourseC_Tt1g5$')
    toggles=()
    for s in $symbols; do toggles+=("--toggle-collect=$s"); done
    [ ${#toggles[@]} -ge 2 ] || { echo "profile.sh: W8's timed functions not found in $bin" >&2; exit 1; }
    valgrind --tool=callgrind "${toggles[@]}" --callgrind-out-file="$out" \
        "$bin" child W8-object-reopen-fetch system=strata "path=$store" "key=$key" >/dev/null 2>"$out.log"
    total=$(grep -E '^(summary|totals):' "$out" | head -1 | awk '{print $2}')
    echo "W8: $total instructions in the child's timed part (open, descriptor, first fetch)"
    exit 0
fi
symbol=$(nm "$bin" | awk '/profiledWorkload/ && ($2 == "T" || $2 == "t") { s = $3 } END { print s }')
[ -n "$symbol" ] || { echo "profile.sh: no profiledWorkload symbol in $bin" >&2; exit 1; }
valgrind --tool=callgrind --toggle-collect="$symbol" --callgrind-out-file="$out" \
    "$bin" profile "$mode" "$k" >/dev/null 2>"$out.log"
total=$(grep -E '^(summary|totals):' "$out" | head -1 | awk '{print $2}')
echo "$mode k=$k: $total instructions, $((total / k)) per operation (W1, W6: per object; W9: the whole delete)"
# W7's operation is a pass over the profile store's 20,000 objects (Profile.objectCount).
[ "$mode" = W7 ] && echo "W7: $((total / k / 20000)) per object"
# (The file's call counts also count the warm-up pass, which its instructions leave out: divide
# instructions by the profiled pass's operations, not by the calls the file shows.)
true
