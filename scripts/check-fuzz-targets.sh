#!/usr/bin/env bash
# Type-checks every fuzz target of scripts/fuzz.sh against the current sources, without
# building or running them (run by .ci/run), so that a change of the engine or the object
# layer cannot leave the fuzz targets behind unnoticed. Running them: scripts/fuzz.sh.
#
# usage: scripts/check-fuzz-targets.sh [BUILD]
# BUILD: a build folder of the root package whose debug build is current (CI passes .build,
# just built by `swift test`): the object layer's targets are then checked against the Strata
# module it made (imported @testable, with its package name), instead of against the object
# layer's sources with engine and records modules emitted here first. Without it, everything
# is compiled from the sources. (With it: 52 s of CPU, 27 s on 2 idle cores; it was 115 s.)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
build=${1:-}
package=strata
if [[ -n $build ]]; then
    # The package name the build gave the root's modules (`package` declarations are visible
    # only to a module of the same package), read from the records layer's compile command: the
    # build folder may be shared with packages that depend on the root (CI's is).
    package=$(grep '"-module-name","StrataRecords"' "$build/debug.yaml" | grep -o '"-package-name","[^"]*"' | head -1 | cut -d'"' -f4)
    [[ -n $package && -f $build/debug/Modules/StrataRecords.swiftmodule ]] || {
        echo "check-fuzz-targets: $build has no debug build of the root package (run swift build first)" >&2; exit 2; }
fi
flags=(-parse-as-library -package-name "$package" -swift-version 6 -suppress-warnings)
# The engine's files, in its folders.
engine=()
while IFS= read -r file; do engine+=("$file"); done < <(find Sources/StrataEngine -name '*.swift' | sort)
sed '/^import StrataEngine$/d' Sources/StrataTestSupport/SimulatedFileSystem.swift > "$out/SimulatedFileSystem.swift"
engine_fuzz=("${engine[@]}" "$out/SimulatedFileSystem.swift" Sources/StrataConformance/SeededGenerator.swift Fuzz/FuzzSupport.swift)
# The checks are independent and each swiftc is one thread: they run at once (CI has two
# cores); any failure fails the script, after all have finished.
pids=()
check() { swiftc -typecheck "${flags[@]}" "$@" & pids+=($!); }
# (OpenStore is also built with checksums, `scripts/fuzz.sh open-store`: that differs only in
# the branches of `#if STRATA_FUZZ_NO_CHECKSUMS`, whose other side every build compiles, and in
# one constant of FuzzSupport.swift; its check took a sixth of the script's CPU.)
for entry in OpenStore DamagedStore DecodeEngine; do
    check -D STRATA_FUZZ_NO_CHECKSUMS -module-name StrataEngine "${engine_fuzz[@]}" "Fuzz/$entry.swift"
done
if [[ -n $build ]]; then
    # The object layer's targets against the Strata module the build made (a debug build is
    # made with -enable-testing): each target a module of its own that imports it @testable,
    # where type-checking the object layer's sources once for each took 50 of the script's
    # 115 CPU seconds. Errors still name the target's file and line (#sourceLocation).
    modules=$build/debug/Modules
    for entry in DecodeObjectRecord DamagedObjectStore; do
        { echo '@_spi(FaultInjection) @testable import Strata'; echo "#sourceLocation(file: \"Fuzz/$entry.swift\", line: 1)"; cat "Fuzz/$entry.swift"; } > "$out/$entry.swift"
    done
    check -module-name FuzzDecodeObjectRecord -I "$modules" "$out/DecodeObjectRecord.swift"
    check -module-name FuzzDamagedObjectStore -I "$modules" Sources/StrataTestSupport/SimulatedFileSystem.swift Sources/StrataConformance/SeededGenerator.swift "$out/DamagedObjectStore.swift"
else
    modules=$out/modules
    mkdir -p "$modules"
    swiftc -emit-module -emit-module-path "$modules/StrataEngine.swiftmodule" "${flags[@]}" -module-name StrataEngine "${engine[@]}"
    records=()
    while IFS= read -r file; do records+=("$file"); done < <(find Sources/StrataRecords -name '*.swift' | sort)
    swiftc -emit-module -emit-module-path "$modules/StrataRecords.swiftmodule" "${flags[@]}" -module-name StrataRecords -I "$modules" "${records[@]}"
    objects=()
    while IFS= read -r file; do objects+=("$file"); done < <(find Sources/Strata -name '*.swift' | sort)
    check -module-name Strata -I "$modules" "${objects[@]}" Fuzz/DecodeObjectRecord.swift
    check -module-name Strata -I "$modules" "${objects[@]}" Sources/StrataTestSupport/SimulatedFileSystem.swift Sources/StrataConformance/SeededGenerator.swift Fuzz/DamagedObjectStore.swift
fi
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || { echo "a fuzz target does not type-check (above)" >&2; exit 1; }
echo "fuzz targets type-check" >&2
