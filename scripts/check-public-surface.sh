#!/usr/bin/env bash
# What `import Strata` brings an app, checked against the modules of the debug build (run
# `swift build` first; .ci/run does). The object API's types must be there; the engine's types
# other than the two the object API names (`Durability`, `StoreError`), and the records layer's
# package types, must not (Docs/PublicAPI.md). Each forbidden name is type-checked on its own,
# so that every one must fail to be found.
set -euo pipefail
cd "$(dirname "$0")/.."
modules=${1:-.build/debug/Modules}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
typecheck() { swiftc -typecheck -swift-version 6 -I "$modules" "$1" 2>&1; }

cat > "$out/present.swift" <<'SWIFT'
import Strata
let _: ModelContainer.Type = ModelContainer.self
let _: ModelContext.Type = ModelContext.self
let _: PersistentIdentifier.Type = PersistentIdentifier.self
let _: StrataError.Type = StrataError.self
let _: MigrationProgress.Type = MigrationProgress.self
let _: StoreError.Type = StoreError.self
let _: Durability.Type = Durability.self
func matches(_ error: any Error) -> Bool {
    if case StrataError.Code.saveConflict = error { return true }
    return false
}
SWIFT
typecheck "$out/present.swift" >&2 || { echo "import Strata lacks a type of the object API (above)" >&2; exit 1; }

failed=0
for name in Store ReadTransaction WriteTransaction KeyEncoding CollectionID IndexID StoreOptions FileSystem AnyFileSystem \
            StoredSchema StoredValue RecordView RecordLayout HistoryRecord JSONValue StorageBackend StorageReader EngineStorage; do
    printf 'import Strata\nlet _: Any.Type = %s.self\n' "$name" > "$out/absent.swift"
    if typecheck "$out/absent.swift" > /dev/null; then
        echo "import Strata brings $name, which is not object API" >&2
        failed=1
    fi
done
[ "$failed" = 0 ] || exit 1
echo "import Strata brings the object API and no engine or records internals" >&2
