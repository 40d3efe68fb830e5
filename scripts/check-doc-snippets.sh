#!/usr/bin/env bash
# Compiles, then runs, every ```swift code block of README.md and Docs/*.md against this
# repository's Strata, so the documentation cannot drift from the code.
#
# Each block is a program of its own: the main.swift of an executable target in a generated
# package (.build-snippets/package) that depends on the repository by path (and, for blocks
# that `import StrataData`, on StrataData/, whose macros bring swift-syntax). Compiler errors
# point at the Markdown file and line. Blocks fenced ```swift-fragment (pieces of a program,
# SwiftData code) are not compiled. Blocks run in a temporary folder with HOME and
# XDG_DATA_HOME pointing into it, so they touch nothing outside.
#
# A block whose first line is `// swift-tools-version...` is a Package.swift. It is checked
# as a reader would use it: in a folder of its own, with a folder for each of its targets,
# beside a clone of this repository (a symbolic link) named as the document's `git clone`
# line names it (its last word; `strata` if there is none). SwiftPM then loads the package
# graph, which fails on a path that is not the clone's, a package identity that is not the
# clone's folder name, or a product the repository lacks. Nothing is compiled for it (the
# programs above compile the code).
#
# SNIPPETS_SCRATCH: the build folder (default .build-snippets/build). CI points it at the
# root's .build, where StrataData's tests were built just before: the package's dependencies
# (the root package, StrataData, swift-syntax) are then compiled already, and only the blocks
# are (seconds, where a folder of its own took 3 to 3.5 minutes, most of it swift-syntax). The
# blocks' targets are named after their files (Docs_History_L12), so they meet none of
# StrataData's.
#
# usage: scripts/check-doc-snippets.sh [--no-run]
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
work=${SNIPPETS_DIR:-$repo/.build-snippets}
package=$work/package
run=1
case "${1:-}" in
    --no-run) run=0 ;;
    "") ;;
    *) echo "usage: $0 [--no-run]" >&2; exit 2 ;;
esac

mkdir -p "$package/Sources"
staging=$(mktemp -d)
manifests=$(mktemp -d)
trap 'rm -rf "$staging" "$manifests"' EXIT

# Extract the blocks: staging/<Target>/main.swift, with a #sourceLocation so that errors name
# the Markdown file and line; fences may be indented (inside lists).
fragments=0
for doc in "$repo/README.md" "$repo"/Docs/*.md; do
    [ -f "$doc" ] || continue
    relative=${doc#"$repo"/}
    stem=$(printf '%s' "${relative%.md}" | tr -c 'A-Za-z0-9\n' '_')
    skipped=$(awk -v doc="$doc" -v stem="$stem" -v staging="$staging" -v manifests="$manifests" '
        function start(kind) { inside = kind; indent = match($0, /[^ \t]/) - 1 }
        !inside && /^[ \t]*```swift[ \t]*$/ { start("swift"); first = 1; next }
        !inside && /^[ \t]*```swift-fragment[ \t]*$/ { start("fragment"); fragments++; next }
        inside && /^[ \t]*```[ \t]*$/ { if (inside != "fragment" && !first) close(out); inside = ""; next }
        inside == "swift" || inside == "manifest" {
            line = $0
            if (indent > 0 && substr(line, 1, indent) ~ /^[ \t]*$/) line = substr(line, indent + 1)
            if (first) {
                # The first line decides: a Package.swift, or a program.
                first = 0
                target = stem "_L" (NR - 1)
                if (line ~ /^\/\/ swift-tools-version/) {
                    inside = "manifest"
                    dir = manifests "/" target
                    system("mkdir -p \"" dir "\"")
                    out = dir "/Package.swift"
                    print doc ":" (NR - 1) > (dir "/.origin")
                    close(dir "/.origin")
                } else {
                    dir = staging "/" target
                    system("mkdir -p \"" dir "\"")
                    out = dir "/main.swift"
                    printf "#sourceLocation(file: \"%s\", line: %d)\n", doc, NR > out
                }
            }
            print line > out
        }
        END { print fragments + 0 }
    ' "$doc")
    fragments=$((fragments + skipped))
done

# Package.swift blocks: each in a folder of its own beside a clone of the repository.
manifest_count=0
for dir in "$manifests"/*/; do
    [ -f "$dir/Package.swift" ] || continue
    origin=$(cat "$dir/.origin")
    root="$dir/layout"
    mkdir -p "$root/package"
    mv "$dir/Package.swift" "$root/package/Package.swift"
    # The clone's folder: the last word of the document's `git clone` line (default: strata).
    doc=${origin%:*}
    clone=$(grep -m1 -E '^[[:space:]]*git clone ' "$doc" | sed 's/#.*//' | awk '{print $NF}' || true)
    ln -s "$repo" "$root/${clone:-strata}"
    for target in $(grep -oE '\.(target|executableTarget)\(name: *"[^"]*"' "$root/package/Package.swift" | sed 's/.*"\(.*\)"/\1/'); do
        mkdir -p "$root/package/Sources/$target"
        echo 'import Strata' > "$root/package/Sources/$target/main.swift"
    done
    if ! output=$(swift package --package-path "$root/package" --scratch-path "$work/manifest-build" show-dependencies 2>&1); then
        echo "check-doc-snippets: the Package.swift block at $origin does not load beside a clone of Strata:" >&2
        printf '%s\n' "$output" >&2
        exit 1
    fi
    manifest_count=$((manifest_count + 1))
done
[ "$manifest_count" = 0 ] || echo "check-doc-snippets: $manifest_count Package.swift block(s) load beside a clone of Strata"

targets=$(cd "$staging" && ls | sort)
if [ -z "$targets" ]; then
    echo "check-doc-snippets: no \`\`\`swift blocks found in README.md or Docs/*.md" >&2
    exit 1
fi

# The package: one executable target per block. Files are replaced only when they change, so
# a second run rebuilds only what changed. A block that imports StrataData (SwiftData's macros)
# uses that package, which brings swift-syntax; the others use Strata alone.
identity=$(basename "$repo")
macro_targets=$(cd "$staging" && grep -lE '^import StrataData([[:space:]]|$)' */main.swift 2>/dev/null | xargs -r -n1 dirname || true)
{
    echo '// swift-tools-version:6.0'
    echo '// Generated by scripts/check-doc-snippets.sh: every ```swift block of the docs, one target each.'
    echo 'import PackageDescription'
    echo 'let package = Package('
    echo '    name: "DocSnippets",'
    echo '    platforms: [.macOS(.v15)],'
    if [ -n "$macro_targets" ]; then
        echo "    dependencies: [.package(path: \"$repo\"), .package(path: \"$repo/StrataData\")],"
    else
        echo "    dependencies: [.package(path: \"$repo\")],"
    fi
    echo '    targets: ['
    for target in $targets; do
        if printf '%s\n' $macro_targets | grep -qx "$target"; then
            echo "        .executableTarget(name: \"$target\", dependencies: [.product(name: \"StrataData\", package: \"StrataData\")]),"
        else
            echo "        .executableTarget(name: \"$target\", dependencies: [.product(name: \"Strata\", package: \"$identity\")]),"
        fi
    done
    echo '    ],'
    echo '    swiftLanguageModes: [.v6]'
    echo ')'
} > "$staging/Package.swift"

replace_if_changed() { cmp -s "$1" "$2" || { mkdir -p "$(dirname "$2")"; cp "$1" "$2"; }; }
replace_if_changed "$staging/Package.swift" "$package/Package.swift"
for target in $targets; do replace_if_changed "$staging/$target/main.swift" "$package/Sources/$target/main.swift"; done
for existing in "$package"/Sources/*; do
    [ -d "$staging/$(basename "$existing")" ] || rm -rf "$existing"
done

count=$(printf '%s\n' $targets | wc -l)
echo "check-doc-snippets: compiling $count Swift blocks of README.md and Docs/*.md ($fragments swift-fragment blocks skipped)"
# SwiftPM misses files added to or moved in a path dependency (the repository): plan anew.
scratch=${SNIPPETS_SCRATCH:-$work/build}
rm -f "$scratch/debug.yaml"
# (With the flags the build it shares was made with: CI's STRATA_SWIFT_FLAGS.)
# shellcheck disable=SC2086
swift build --package-path "$package" --scratch-path "$scratch" ${STRATA_SWIFT_FLAGS:-}

if [ "$run" = 1 ]; then
    bin=$(swift build --package-path "$package" --scratch-path "$scratch" ${STRATA_SWIFT_FLAGS:-} --show-bin-path)
    for target in $targets; do
        folder=$(mktemp -d)
        if ! (cd "$folder" && HOME="$folder" XDG_DATA_HOME="$folder/data" TMPDIR="$folder" "$bin/$target" > "$folder/.output" 2>&1); then
            echo "check-doc-snippets: the block $target failed when run:" >&2
            cat "$folder/.output" >&2
            rm -rf "$folder"
            exit 1
        fi
        rm -rf "$folder"
    done
    echo "check-doc-snippets: $count blocks compiled and ran"
else
    echo "check-doc-snippets: $count blocks compiled"
fi
