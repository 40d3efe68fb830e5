# Sourced by run.sh, profile.sh and first-types.sh (not run): builds what they run, each
# function printing the path of what it built (the builds' own output goes to stderr), and
# failing, with nothing printed, when its build fails (so that no caller runs an old binary).

# This package in release (`StrataBenchmarks`). SwiftPM does not notice a file added to or
# removed from a path dependency (the root package) and would build on the old file list, so
# the build plan is made anew (seconds).
release_benchmarks() {
    local here
    here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    rm -f "$here/.build/release.yaml"
    swift build -c release --package-path "$here" >&2 || return 1
    echo "$(swift build -c release --package-path "$here" --show-bin-path)/StrataBenchmarks"
}

# StrataData's `StrataModelReopen` in release: W8 with `@Model` classes (the macros need
# swift-syntax, which this package does not build).
model_reopen_child() {
    local strata_data
    strata_data="$(cd "$(dirname "${BASH_SOURCE[0]}")/../StrataData" && pwd)"
    rm -f "$strata_data/.build/release.yaml"
    swift build -c release --package-path "$strata_data" --product StrataModelReopen >&2 || return 1
    echo "$(swift build -c release --package-path "$strata_data" --show-bin-path)/StrataModelReopen"
}
