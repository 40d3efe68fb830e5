#!/usr/bin/env bash
# The long run of the object-level fault tests (Docs/Durability.md, "Power loss" and "Full
# disk and I/O errors"): ObjectPowerLossTests and ObjectIOErrorTests with every fault point
# on twenty workload seeds (STRATA_RELIABILITY_FULL=1), then the engine's CrashTests and
# FaultInjectionTests. Prints how many power cuts, images and failed calls were checked.
#
#   scripts/faults.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-rel
swift build --build-tests --scratch-path "$scratch" >&2
log="$scratch/faults.log"
set +e
STRATA_RELIABILITY_FULL=1 swift test --skip-build --scratch-path "$scratch" \
    --filter 'ObjectPowerLossTests|ObjectIOErrorTests|CrashTests|FaultInjectionTests' >"$log" 2>&1
status=$?
set -e
grep -E "Test run with|✘" "$log" || true
cuts=$(grep -o '[0-9]* power cuts' "$log" | awk '{n+=$1} END{print n+0}')
images=$(grep -o '[0-9]* images checked' "$log" | awk '{n+=$1} END{print n+0}')
failed=$(grep -o '[0-9]* failed calls' "$log" | awk '{n+=$1} END{print n+0}')
echo "object level: $cuts power cuts ($images disk images reopened and checked), $failed failed calls (ENOSPC, EIO); tests exit status $status; log: $log"
exit $status
