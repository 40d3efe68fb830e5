#!/usr/bin/env bash
# Lists the generic types a fresh process makes from their mangled names during W8 (a fresh
# process's open and first fetch), each with the functions that asked for it:
#   Benchmarks/first-types.sh [W8 | W8-model] [OUT]
# Each such type is made the first time its call site runs, about 5 µs of a first open
# (Docs/Benchmarks.md, "W8 `@Model` by the clock"). A shim preloaded into the W8 child
# (`LD_PRELOAD`) logs every call of the runtime's `swift_getTypeByMangledNameInContext2`
# with the type it made and the return addresses above it; this script names those addresses
# from the child's symbol table. The list starts with the harness's own types (its arguments),
# before the first ones whose callers are Strata's open. Writes OUT (default
# /tmp/first-types.MODE.txt) and prints it. Needs cc (gcc or clang) and python3.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mode="${1:-W8}"
out="${2:-/tmp/first-types.$mode.txt}"
[ "$mode" = W8 ] || [ "$mode" = W8-model ] || { echo "usage: first-types.sh [W8 | W8-model] [OUT]" >&2; exit 1; }
cc=$(command -v cc || command -v gcc || command -v clang) || { echo "first-types.sh: no C compiler (cc, gcc or clang)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "first-types.sh: python3 is needed to name the call sites" >&2; exit 1; }
[ -f /usr/include/sqlite3.h ] || { echo "first-types.sh: build the benchmarks once with Benchmarks/run.sh --quick (it installs libsqlite3-dev)" >&2; exit 1; }

# shellcheck source=children.sh
source "$here/children.sh"
bin="$(release_benchmarks)"
read -r store key < <("$bin" profile W8-store | tail -1)
if [ "$mode" = W8-model ]; then
    child="$(model_reopen_child)"
    run=("$child" open "$store" "$key" W8-model-reopen-fetch)
else
    child="$bin"
    run=("$bin" child W8-object-reopen-fetch system=strata "path=$store" "key=$key")
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/shim.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
typedef const void *(*lookup_t)(const char *, size_t, const void *, const void *const *);
typedef struct { const char *data; uintptr_t length; } TypeName;
typedef TypeName (*name_t)(const void *, bool);
static lookup_t real;
static name_t type_name;
static unsigned long count;
/* Interposes the runtime's entry point; every call still goes to the real one. */
const void *swift_getTypeByMangledNameInContext2(const char *name, size_t length, const void *context,
                                                 const void *const *arguments) {
    if (!real) {
        real = (lookup_t)dlsym(RTLD_NEXT, "swift_getTypeByMangledNameInContext2");
        type_name = (name_t)dlsym(RTLD_NEXT, "swift_getTypeName");
    }
    const void *type = real(name, length, context, arguments);
    if (!type || !type_name) return type;
    TypeName t = type_name(type, true);
    fprintf(stderr, "TYPE %lu %.*s\n", ++count, (int)t.length, t.data);
    void *frames[7];
    int n = backtrace(frames, 7);
    for (int i = 2; i < n; i++) {
        Dl_info info;
        if (dladdr(frames[i], &info) && info.dli_fbase)
            fprintf(stderr, "AT %lx %s\n", (unsigned long)((char *)frames[i] - (char *)info.dli_fbase), info.dli_fname);
    }
    return type;
}
C
"$cc" -shared -fPIC -O2 -o "$work/shim.so" "$work/shim.c" -ldl
LD_PRELOAD="$work/shim.so" "${run[@]}" >/dev/null 2>"$work/log"
nm -n "$child" | awk '$2 ~ /^[tT]$/ { print $1, $3 }' > "$work/symbols"
python3 - "$work/log" "$work/symbols" "$(basename "$child")" > "$work/named" <<'PY'
import bisect, sys
log, symbols, binary = sys.argv[1], sys.argv[2], sys.argv[3]
addresses, names = [], []
for line in open(symbols):
    address, name = line.split()
    addresses.append(int(address, 16)); names.append(name)
for line in open(log):
    if line.startswith("TYPE "):
        print(line.rstrip()[5:])
    elif line.startswith("AT "):
        _, offset, image = line.split(maxsplit=2)
        image = image.strip()
        if image.endswith("/" + binary):
            i = bisect.bisect_right(addresses, int(offset, 16)) - 1
            print("    " + (names[i] if i >= 0 else offset))
        else:
            print("    (" + image.rsplit("/", 1)[-1] + ")")
PY
swift demangle --simplified < "$work/named" > "$out"
echo "first-types.sh: $(grep -c '^[0-9]' "$out") types made from mangled names in the $mode child; the list is in $out" >&2
cat "$out"
