#!/usr/bin/env bash
# libFuzzer targets for what Strata reads from a file (Docs/Durability.md, "Fuzzing").
#
#   scripts/fuzz.sh [--seconds N | --runs N] [--debug] [target ...]
#
# Builds each target (swiftc -sanitize=fuzzer,address, the engine's sources compiled with a
# fuzz entry point from Fuzz/), writes its seed corpus (small valid stores, pages, records,
# keys, made by the target itself so they match its checksum setting), and runs it for N
# seconds (default 60), or with --runs for N executions however long they take, on
# .build-fuzz/corpus/<target>. Optimized (-O: integer overflow, array
# bounds and unwrapping still trap; ASan catches what unsafe pointers read out of bounds);
# --debug builds with -Onone, slower but with every debug precondition. Targets:
#   open-store            a store file of arbitrary bytes: open, read all, verify, write, compact
#   open-store-nocrc      the same with every checksum 0, so mutations reach the parsing behind
#   damaged-store         valid stores with damaged bytes and cut tails: what opens must read as
#                         one of the states the store held after a commit, or throw
#   decode-engine-nocrc   page, commit record, catalog, header, record frame, key decoders
#   decode-object-record  the object layer's record and value decoders, and stored type names
#   damaged-object-store  a ModelContainer on a damaged object store: what it fetches must be
#                         the objects of one of the saves, or the open or fetch must throw
# A crash leaves .build-fuzz/crashes/<target>/crash-*; replay it with
#   .build-fuzz/<target> <file>
# and make it a regression test (Tests/StrataReliabilityTests/FuzzRegressionTests.swift).
# Prints, per target: executions, inputs in the corpus, bytes of input tried, crashes.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
runs=
optimize=-O
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        --debug) optimize=-Onone; shift ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) targets+=("$1"); shift ;;
    esac
done
[ ${#targets[@]} -eq 0 ] && targets=(open-store open-store-nocrc damaged-store decode-engine-nocrc decode-object-record damaged-object-store)

out=${STRATA_FUZZ_OUT:-.build-fuzz}
mkdir -p "$out/modules"
flags=(-sanitize=fuzzer,address -parse-as-library "$optimize" -g -package-name strata -swift-version 6 -suppress-warnings)
# The engine's files, in its folders.
engine=()
while IFS= read -r file; do engine+=("$file"); done < <(find Sources/StrataEngine -name '*.swift' | sort)
# The simulated file system is compiled into the engine's module here: drop its import of it.
sed '/^import StrataEngine$/d' Sources/StrataTestSupport/SimulatedFileSystem.swift > "$out/SimulatedFileSystem.swift"
engine_fuzz=("${engine[@]}" "$out/SimulatedFileSystem.swift" Sources/StrataConformance/SeededGenerator.swift Fuzz/FuzzSupport.swift)

build() {
    local target="$1"
    echo "building $target" >&2
    case "$target" in
        open-store)           swiftc "${flags[@]}" -module-name StrataEngine "${engine_fuzz[@]}" Fuzz/OpenStore.swift -o "$out/$target" ;;
        open-store-nocrc)     swiftc "${flags[@]}" -D STRATA_FUZZ_NO_CHECKSUMS -module-name StrataEngine "${engine_fuzz[@]}" Fuzz/OpenStore.swift -o "$out/$target" ;;
        damaged-store)        swiftc "${flags[@]}" -module-name StrataEngine "${engine_fuzz[@]}" Fuzz/DamagedStore.swift -o "$out/$target" ;;
        decode-engine-nocrc)  swiftc "${flags[@]}" -D STRATA_FUZZ_NO_CHECKSUMS -module-name StrataEngine "${engine_fuzz[@]}" Fuzz/DecodeEngine.swift -o "$out/$target" ;;
        decode-object-record|damaged-object-store)
            # The object layer as a module of its own over StrataRecords and StrataEngine modules, as in
            # the package.
            local entry=Fuzz/DecodeObjectRecord.swift extra=()
            [ "$target" = damaged-object-store ] && entry=Fuzz/DamagedObjectStore.swift && extra=(Sources/StrataTestSupport/SimulatedFileSystem.swift Sources/StrataConformance/SeededGenerator.swift)
            swiftc "${flags[@]}" -module-name StrataEngine -emit-module -emit-module-path "$out/modules/StrataEngine.swiftmodule" \
                -emit-library -static "${engine[@]}" -o "$out/libStrataEngine.a"
            local records=() objects=()
            while IFS= read -r file; do records+=("$file"); done < <(find Sources/StrataRecords -name '*.swift' | sort)
            swiftc "${flags[@]}" -module-name StrataRecords -I "$out/modules" -emit-module -emit-module-path "$out/modules/StrataRecords.swiftmodule" \
                -emit-library -static "${records[@]}" -o "$out/libStrataRecords.a"
            while IFS= read -r file; do objects+=("$file"); done < <(find Sources/Strata -name '*.swift' | sort)
            swiftc "${flags[@]}" -module-name Strata -I "$out/modules" "${objects[@]}" ${extra[@]+"${extra[@]}"} "$entry" \
                "$out/libStrataRecords.a" "$out/libStrataEngine.a" -o "$out/$target" ;;
        *) echo "unknown target $target" >&2; exit 2 ;;
    esac 2> >(grep -v "ld.gold: warning: Cannot export local symbol" >&2)
}

export SWIFT_BACKTRACE=enable=no     # let ASan and libFuzzer report crashes
export ASAN_OPTIONS=detect_leaks=0   # globals built once (sample stores, entities) are not leaks
summary=()
for target in "${targets[@]}"; do
    build "$target"
    rm -rf "$out/seeds/$target"
    STRATA_FUZZ_SEEDS="$out/seeds/$target" "$out/$target" >/dev/null 2>&1
    mkdir -p "$out/corpus/$target" "$out/crashes/$target"
    log="$out/$target.log"
    if [ -n "$runs" ]; then limit=(-runs="$runs"); echo "running $target for $runs executions (log: $log)" >&2
    else limit=(-max_total_time="$seconds"); echo "running $target for $seconds s (log: $log)" >&2; fi
    started=$(date +%s)
    set +e
    "$out/$target" "${limit[@]}" -max_len=65536 -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 \
        -artifact_prefix="$out/crashes/$target/" "$out/corpus/$target" "$out/seeds/$target" >"$log" 2>&1
    status=$?
    set -e
    elapsed=$(( $(date +%s) - started ))
    executed=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
    tried=$(grep -o 'strata-fuzz: .*' "$log" | tail -1 | sed 's/strata-fuzz: //' || true)
    corpus=$(ls "$out/corpus/$target" | wc -l)
    crashes=$(ls "$out/crashes/$target" | grep -c -E '^(crash|timeout|oom)-' || true)
    line="$target: $executed executions in $elapsed s ($tried), corpus $corpus inputs, exit $status, crash files: $crashes"
    echo "$line" >&2
    summary+=("$line")
    if [ "$status" -ne 0 ]; then grep -m1 -E "FUZZ FINDING|ERROR: AddressSanitizer|Fatal error|deadly signal" "$log" >&2 || true; fi
done
echo
printf '%s\n' "${summary[@]}"
