#!/usr/bin/env bash
# Counts the instructions of one workload with callgrind (exact, and unaffected by other work
# on the machine), on the release build of the benchmarks:
#   Benchmarks/profile.sh MODE [K] [OUT]
# MODE and K as in Sources/StrataBenchmarks/Harness/Profile.swift (W1 20000, W3 2000, W4 2,
# W5 50, W6 20000, W7 1, W9 1, E3 3 are sizes that run in seconds). Writes OUT (default
# /tmp/callgrind.MODE.out) and prints the instructions of the workload and per operation.
# Read it with `callgrind_annotate --inclusive=yes OUT | swift demangle --simplified`.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mode="${1:?usage: profile.sh MODE [K] [OUT]}"
k="${2:-100}"
out="${3:-/tmp/callgrind.$mode.out}"
command -v valgrind >/dev/null || { echo "profile.sh: valgrind is not installed" >&2; exit 1; }
[ -f /usr/include/sqlite3.h ] || { echo "profile.sh: build the benchmarks once with Benchmarks/run.sh --quick (it installs libsqlite3-dev)" >&2; exit 1; }
# SwiftPM does not notice a file added to or removed from a path dependency (the root package)
# and would build the benchmarks on the old file list: the build plan is made anew (seconds).
rm -f "$here/.build/release.yaml"
swift build -c release --package-path "$here" >&2
bin="$(swift build -c release --package-path "$here" --show-bin-path)/StrataBenchmarks"
symbol=$(nm "$bin" | awk '/profiledWorkload/ && ($2 == "T" || $2 == "t") { s = $3 } END { print s }')
[ -n "$symbol" ] || { echo "profile.sh: no profiledWorkload symbol in $bin" >&2; exit 1; }
valgrind --tool=callgrind --toggle-collect="$symbol" --callgrind-out-file="$out" \
    "$bin" profile "$mode" "$k" >/dev/null 2>"$out.log"
total=$(grep -E '^(summary|totals):' "$out" | head -1 | awk '{print $2}')
echo "$mode k=$k: $total instructions, $((total / k)) per operation (W1, W6: per object; W9: the whole delete)"
