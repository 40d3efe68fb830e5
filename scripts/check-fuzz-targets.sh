#!/usr/bin/env bash
# Type-checks every fuzz target of scripts/fuzz.sh against the current sources, without
# building or running them (run by .ci/run), so that a change of the engine or the object
# layer cannot leave the fuzz targets behind unnoticed. Running them: scripts/fuzz.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-parse-as-library -package-name strata -swift-version 6 -suppress-warnings)
# The engine's files, in its folders.
engine=()
while IFS= read -r file; do engine+=("$file"); done < <(find Sources/StrataEngine -name '*.swift' | sort)
sed '/^import StrataEngine$/d' Sources/StrataTestSupport/SimulatedFileSystem.swift > "$out/SimulatedFileSystem.swift"
engine_fuzz=("${engine[@]}" "$out/SimulatedFileSystem.swift" Sources/StrataConformance/SeededGenerator.swift Fuzz/FuzzSupport.swift)
# The checks are independent and each swiftc is one thread: they run at once (CI has two
# cores); any failure fails the script, after all have finished.
pids=()
check() { swiftc -typecheck "${flags[@]}" "$@" & pids+=($!); }
for entry in OpenStore DamagedStore DecodeEngine; do
    check -D STRATA_FUZZ_NO_CHECKSUMS -module-name StrataEngine "${engine_fuzz[@]}" "Fuzz/$entry.swift"
done
check -module-name StrataEngine "${engine_fuzz[@]}" Fuzz/OpenStore.swift
mkdir -p "$out/modules"
swiftc -emit-module -emit-module-path "$out/modules/StrataEngine.swiftmodule" "${flags[@]}" -module-name StrataEngine "${engine[@]}"
records=()
while IFS= read -r file; do records+=("$file"); done < <(find Sources/StrataRecords -name '*.swift' | sort)
swiftc -emit-module -emit-module-path "$out/modules/StrataRecords.swiftmodule" "${flags[@]}" -module-name StrataRecords -I "$out/modules" "${records[@]}"
objects=()
while IFS= read -r file; do objects+=("$file"); done < <(find Sources/Strata -name '*.swift' | sort)
check -module-name Strata -I "$out/modules" "${objects[@]}" Fuzz/DecodeObjectRecord.swift
check -module-name Strata -I "$out/modules" "${objects[@]}" Sources/StrataTestSupport/SimulatedFileSystem.swift Sources/StrataConformance/SeededGenerator.swift Fuzz/DamagedObjectStore.swift
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || { echo "a fuzz target does not type-check (above)" >&2; exit 1; }
echo "fuzz targets type-check" >&2
