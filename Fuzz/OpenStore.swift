// Fuzz target: a store file made of arbitrary bytes. Opening it read-only and writable,
// reading everything, verify(), info(), a commit and a compaction must each succeed or
// throw a StoreError; never trap. Built twice by scripts/fuzz.sh: with real checksums
// (what a damaged disk gives) and with every checksum 0 (so mutations reach the parsing
// behind the checks: what a checksum collision would give).

import Foundation

func fuzzSeeds() -> [[UInt8]] {
    SampleStore.variants.map { SampleStore.make($0).bytes } + [[], Array("STRATADB".utf8)]
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = fuzzInput(data, size)
    let fs = SimulatedFileSystem()
    fs.setBytes(bytes, of: fuzzPath)
    let small = 64 * 1024
    if let store = expectStoreErrorOrSuccess("read-only open", { try Store(path: fuzzPath, options: StoreOptions(cacheSize: small, readOnly: true), fileSystem: fs) }) {
        _ = expectStoreErrorOrSuccess("read-only dump") { try fuzzDump(store) }
        _ = expectStoreErrorOrSuccess("read-only verify") { try store.verify() }
        _ = expectStoreErrorOrSuccess("read-only info") { try store.info() }
        store.close()
    }
    if fs.bytes(of: fuzzPath) != bytes { fatalFinding("a read-only open changed the file") }
    guard let store = expectStoreErrorOrSuccess("open", { try Store(path: fuzzPath, options: StoreOptions(cacheSize: small), fileSystem: fs) }) else { return 0 }
    let before = expectStoreErrorOrSuccess("dump") { try fuzzDump(store) }
    _ = expectStoreErrorOrSuccess("verify") { try store.verify() }
    // Change what is there: every collection loses its first row and gains one, with keys in each index.
    let wrote = expectStoreErrorOrSuccess("write") { () -> Bool in
        try store.write { tx -> Void in
            for name in tx.collectionNames {
                guard let c = tx.collection(named: name) else { continue }
                var cursor = try tx.rows(in: c)
                // The engine does not know a row's keys: a row stored with some cannot be deleted without them.
                if let first = try cursor.nextRowID() {
                    do { try tx.delete(first, in: c) } catch let error as StoreError where error.code == .indexKeyMismatch {}
                }
                let keys = tx.indexes(of: c).map { IndexKey($0.id, KeyEncoding.encode("fuzz")) }
                try tx.put([1, 2, 3], row: try tx.allocateRowID(in: c), in: c, indexKeys: keys)
            }
            try tx.put([4], row: 1, in: try tx.createCollection(named: "fuzz-\(tx.collectionNames.count)"))
        }
        return true
    } ?? false
    _ = expectStoreErrorOrSuccess("compact") { try store.compact() }
    let after = expectStoreErrorOrSuccess("dump after writing") { try fuzzDump(store) }
    store.close()
    // Whatever was read before and after, a reopened store reads the same.
    if let again = expectStoreErrorOrSuccess("reopen", { try Store(path: fuzzPath, options: StoreOptions(cacheSize: small), fileSystem: fs) }) {
        let reread = expectStoreErrorOrSuccess("dump after reopening") { try fuzzDump(again) }
        if let after, let reread, after != reread { finding("the reopened store reads differently from before it was closed") }
        if !wrote, let before, let reread, before != reread { finding("a failed write changed what the store reads") }
    }
    return 0
}
