#!/usr/bin/env bash
# Counts the instructions of one workload with callgrind (exact, and unaffected by other work
# on the machine), on a release build of Benchmarks/Profile:
#   Benchmarks/Profile/profile.sh MODE [K] [OUT]
# MODE and K as in Sources/StrataProfile/main.swift (W1 20000, W3 2000, W4 2, W5 50, W6 20000,
# W7 1, W9 1, E3 3 are the sizes the notes quote). Writes OUT (default
# /tmp/callgrind.MODE.out) and prints the instructions of the workload and per operation.
# Read it with `callgrind_annotate --inclusive=yes OUT | swift demangle --simplified`.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mode="${1:?usage: profile.sh MODE [K] [OUT]}"
k="${2:-100}"
out="${3:-/tmp/callgrind.$mode.out}"
command -v valgrind >/dev/null || { echo "profile.sh: valgrind is not installed" >&2; exit 1; }
swift build -c release --package-path "$here" >&2
bin="$(swift build -c release --package-path "$here" --show-bin-path)/StrataProfile"
valgrind --tool=callgrind --toggle-collect='$s13StrataProfile3runyyKF' --callgrind-out-file="$out" \
    "$bin" "$mode" "$k" >/dev/null 2>"$out.log"
total=$(grep -E '^(summary|totals):' "$out" | head -1 | awk '{print $2}')
echo "$mode k=$k: $total instructions, $((total / k)) per operation (W1/W6: per object; W9: the whole delete)"
