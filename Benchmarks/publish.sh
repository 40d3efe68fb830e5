#!/usr/bin/env bash
# Writes Docs/Benchmarks.md (and Docs/benchmarks.svg) from the results of the last
# `Benchmarks/run.sh` (Benchmarks/results/ unless a folder is given). Arguments after the
# folder are the exact run.sh command line, quoted in the page.
#   Benchmarks/run.sh 2>&1 | tee Benchmarks/results/run-output.txt
#   Benchmarks/publish.sh Benchmarks/results "Benchmarks/run.sh"
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
results="${1:-$here/results}"
command="${2:-Benchmarks/run.sh}"
duration="${3:-}"
docs="$here/../Docs"
mkdir -p "$docs"
cp "$results/ratios.svg" "$docs/benchmarks.svg"
{
    echo "# Benchmarks: Strata beside GRDB (SQLite)"
    echo
    echo "Produced by \`$command\` on $(date -u +%Y-%m-%d) on this machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), Linux $(uname -r)${duration:+; the whole command took $duration}."
    echo "The workloads and targets are those of BENCH.md; \`Benchmarks/README.md\` says how each is measured."
    echo "Raw JSON lines: \`Benchmarks/results/results.jsonl\` after a run (not in git)."
    echo
    echo "![Strata ÷ peer, per workload](benchmarks.svg)"
    echo
    # The summary as the run wrote it, one heading level down.
    sed -e 's/^# /## /' -e 's/^## Resources/### Resources/' "$results/summary.md"
} > "$docs/Benchmarks.md"
echo "wrote $docs/Benchmarks.md and $docs/benchmarks.svg" >&2
