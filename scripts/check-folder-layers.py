#!/usr/bin/env python3
"""The folders of Sources/Strata and the arrows between them (Docs/ARCHITECTURE.md, "Sources/
Strata, by folder"), checked by CI.

A folder uses another when one of its files names a type (or a top-level function) declared in
the other. The lower folders, Model and Storage, may use no folder above them; the folders above
may use each other only in the pairs listed in ALLOWED, each named with why in ARCHITECTURE.md.
A new pair, or an arrow up from Model or Storage, fails the check: move the shared type down to
the lowest folder (or target) that uses it, or name the pair and why in both places.

Run from the package's root: scripts/check-folder-layers.py [--print]
"""
import collections, glob, os, re, sys

ROOT = 'Sources/Strata'
# Bottom to top. A folder may use the folders before it.
ORDER = ['Model', 'Storage', 'Context', 'Query', 'History', 'Save', 'Migration', 'CustomStores']
# Pairs that use each other, and why (ARCHITECTURE.md says the same).
ALLOWED = {
    ('Context', 'Model'): 'an object names its context (SwiftData\'s modelContext), the context holds objects',
    ('Context', 'Query'): 'ModelContext.fetch lives in Query; the container keeps the query cache',
    ('Context', 'Save'): 'ModelContext.save lives in Save; the context keeps pending batch deletes',
    ('Context', 'History'): 'ModelContext.fetchHistory lives in History; the container keeps its change hub',
    ('Context', 'Migration'): 'migration plans open containers; the container runs lightweight migration on open',
    ('Context', 'CustomStores'): 'custom stores open containers; the container opens a custom store\'s storage',
    ('CustomStores', 'Query'): 'a fetch asks a custom store first; the store is handed FetchDescriptors',
    ('CustomStores', 'Save'): 'a save writes through a custom store\'s bridge; the bridge runs batch deletes',
}

declaration = re.compile(r'^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|final|indirect|nonisolated)\s+)*'
                         r'(?:class|struct|enum|protocol|typealias|actor|func)\s+([A-Za-z_]\w*)')

def folder(path):
    rel = os.path.relpath(path, ROOT)
    return rel.split(os.sep)[0] if os.sep in rel else '.'

def code(text):
    text = re.sub(r'//.*', '', text)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)

files = sorted(glob.glob(ROOT + '/**/*.swift', recursive=True))
owners = collections.defaultdict(set)
for f in files:
    for line in open(f):
        m = declaration.match(line)
        if m:
            owners[m.group(1)].add(folder(f))
edges = collections.defaultdict(lambda: collections.defaultdict(set))
for f in files:
    source = folder(f)
    for word in set(re.findall(r'\b[A-Za-z_]\w*\b', code(open(f).read()))):
        homes = owners.get(word, ())
        if len(homes) == 1:
            (target,) = homes
            if target != source and target != '.' and source != '.':
                edges[source][target].add('%s (%s)' % (word, os.path.basename(f)))

if '--print' in sys.argv:
    for source in sorted(edges):
        print(source, '->', ', '.join(sorted(edges[source])))

problems = []
for source in edges:
    for target in edges[source]:
        if source not in ORDER or target not in ORDER:
            problems.append('%s -> %s: a folder this check does not know (add it to ORDER)' % (source, target))
            continue
        if ORDER.index(target) < ORDER.index(source):
            continue
        pair = tuple(sorted((source, target)))
        upward = ORDER.index(source) < ORDER.index(target)
        if source in ('Model', 'Storage') and (source, target) != ('Model', 'Context'):
            problems.append('%s -> %s, up from a lower folder: %s' % (source, target, ', '.join(sorted(edges[source][target]))))
        elif upward and pair not in ALLOWED:
            problems.append('%s -> %s, up, and not a pair ARCHITECTURE.md names: %s'
                            % (source, target, ', '.join(sorted(edges[source][target]))))
for pair in ALLOWED:
    a, b = pair
    if not (edges.get(a, {}).get(b) and edges.get(b, {}).get(a)):
        problems.append('%s <-> %s no longer use each other: take the pair out of ALLOWED and ARCHITECTURE.md' % pair)
if problems:
    print('\n'.join(problems), file=sys.stderr)
    sys.exit(1)
print('Sources/Strata: every arrow points down, but the %d pairs ARCHITECTURE.md names' % len(ALLOWED), file=sys.stderr)
