#!/usr/bin/env bash
# Builds StrataPostgres's benchmarks in release, starts a throwaway PostgreSQL server
# (scripts/postgres-server.sh, in a new folder under /tmp), runs W1, W3-W7 and W9 against it
# three ways (Strata, hand-written postgres-nio, Fluent), and stops the server on exit.
# Arguments go to the benchmark binary:
#   StrataPostgres/Benchmarks/run.sh                          # n = 100k
#   StrataPostgres/Benchmarks/run.sh --quick                  # a smoke run (n = 2000)
#   StrataPostgres/Benchmarks/run.sh --n 20k --only W3,W4 --out /tmp/pgbench-results.txt
# With STRATA_POSTGRES_URL set, that server is used and none is started.
# Not part of CI: the first release build (postgres-nio, Fluent) takes several minutes.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

# SwiftPM does not notice a file added to or removed from a path dependency (the root package)
# and would build the benchmarks on the old file list: the build plan is made anew (seconds).
rm -f "$here/.build/release.yaml"
swift build -c release --package-path "$here" >&2
bin="$(swift build -c release --package-path "$here" --show-bin-path)/StrataPostgresBenchmarks"

if [ -n "${STRATA_POSTGRES_URL:-}" ]; then
    exec "$bin" --url "$STRATA_POSTGRES_URL" "$@"
fi

dir=$(mktemp -d)   # directly under /tmp: the postgres user (the server's, when run as root) reaches it
cleanup() {
    "$root/scripts/postgres-server.sh" stop "$dir" >&2 || true
    rm -rf "$dir"
}
trap cleanup EXIT
url=$("$root/scripts/postgres-server.sh" start "$dir" --stop-when-gone $$)
echo "run.sh: server $url (folder $dir)" >&2
"$bin" --url "$url" "$@"
