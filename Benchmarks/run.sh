#!/usr/bin/env bash
# Builds the benchmarks in release and runs them; arguments go to the benchmark binary.
#   Benchmarks/run.sh                 # everything at the default size (1M records)
#   Benchmarks/run.sh --quick         # a smoke run
#   Benchmarks/run.sh --n 200k --only E1,E2 --out /tmp/results
#   Benchmarks/run.sh --n 100k --only W8 --out /tmp/w8   # W8 both ways: macro-free and @Model
# STRATA_BENCH_BUILD=debug builds in debug instead, for a smoke run whose times mean nothing:
# CI's (a release build took 6 to 8 of its 25 minutes; a debug one, 1.5 to 3).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# GRDB links the system SQLite: it needs Debian's libsqlite3-dev.
if [ ! -f /usr/include/sqlite3.h ]; then
    echo "run.sh: installing libsqlite3-dev (GRDB needs sqlite3.h)" >&2
    sudo_cmd=""
    if [ "$(id -u)" != "0" ]; then sudo_cmd="sudo"; fi
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq libsqlite3-dev
fi

# SwiftPM does not notice a file added to or removed from a path dependency (the root package)
# and would build the benchmarks on the old file list: the build plan is made anew (seconds).
build="${STRATA_BENCH_BUILD:-release}"
case "$build" in release|debug) ;; *) echo "run.sh: STRATA_BENCH_BUILD must be release or debug, not $build" >&2; exit 2 ;; esac
# STRATA_BENCH_SCRATCH: the build folder (default Benchmarks/.build). CI points it at the root
# package's, where the root's sources were compiled already with the same flags, so that only
# GRDB and the benchmarks compile.
scratch="${STRATA_BENCH_SCRATCH:-$here/.build}"
rm -f "$scratch/$build.yaml"
# (STRATA_SWIFT_FLAGS: extra build flags, as CI gives its debug smoke run.)
# shellcheck disable=SC2086
swift build -c "$build" --package-path "$here" --scratch-path "$scratch" ${STRATA_SWIFT_FLAGS:-} >&2

# W8 with @Model classes runs StrataData's StrataModelReopen (the macros need swift-syntax,
# which this package does not build): built in release here, except for a --quick smoke run
# (CI's StrataData step compiles it; its release build of swift-syntax takes minutes).
case " $* " in
    *" --quick "*) ;;
    *)
        # shellcheck source=children.sh
        source "$here/children.sh"
        STRATA_BENCH_MODEL_REOPEN="$(model_reopen_child)"
        export STRATA_BENCH_MODEL_REOPEN
        ;;
esac
# shellcheck disable=SC2086
exec "$(swift build -c "$build" --package-path "$here" --scratch-path "$scratch" ${STRATA_SWIFT_FLAGS:-} --show-bin-path)/StrataBenchmarks" "$@"
