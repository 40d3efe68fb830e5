// Fuzz target: a valid store, damaged. The input is an edit script for one of the sample
// stores: `[variant][flags][u24 cut]` then `[u24 offset][u8 xor]` per damaged byte (offsets
// wrap around the file's size). With real checksums, whatever the reopened store reads in
// full must be exactly what it held after one of its commits (a valid prefix of its history),
// or the read must throw a StoreError. A commit after such an open must then be readable too.

import Foundation

nonisolated(unsafe) var samples: [Int: SampleStore] = [:]

func sample(_ variant: Int) -> SampleStore {
    if let s = samples[variant] { return s }
    let s = SampleStore.make(variant)
    samples[variant] = s
    return s
}

func fuzzSeeds() -> [[UInt8]] {
    var seeds: [[UInt8]] = []
    for v in SampleStore.variants {
        seeds.append([UInt8(v), 0, 0, 0, 0])                         // untouched
        seeds.append([UInt8(v), 1, 0x40, 0, 0])                      // cut at 64 (the header)
        seeds.append([UInt8(v), 0, 0, 0, 0, 0x80, 0, 0, 0x01])      // one bit at 128
    }
    return seeds
}

func u24(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = fuzzInput(data, size)
    guard input.count >= 5 else { return 0 }
    let base = sample(Int(input[0]) % SampleStore.variants.count)
    var bytes = base.bytes
    guard !bytes.isEmpty else { return 0 }
    var i = 5
    while i + 4 <= input.count {
        let offset = u24(input, i) % bytes.count
        bytes[offset] ^= input[i + 3] == 0 ? 0x80 : input[i + 3]
        i += 4
    }
    if input[1] & 1 != 0 { bytes.removeLast(bytes.count - u24(input, 2) % bytes.count) }
    if input[1] & 2 != 0 { bytes += input[5...] }  // garbage after the end
    let fs = base.fileSystem.clone()
    fs.setBytes(bytes, of: fuzzPath)

    func checkPrefix(_ dump: FuzzDump, _ what: String) {
        guard base.states.contains(dump) else {
            fatalFinding("\(what) reads a state the store never held after any commit: \(dump.collections.mapValues(\.count)) rows, \(dump.indexes.mapValues(\.count)) index entries, \(dump.blobs.count) blobs, metadata \(dump.metadata.keys.sorted())")
        }
    }
    if let store = expectStoreErrorOrSuccess("read-only open", { try Store(path: fuzzPath, options: StoreOptions(readOnly: true), fileSystem: fs) }) {
        if let dump = expectStoreErrorOrSuccess("read-only dump", { try fuzzDump(store) }) { checkPrefix(dump, "a read-only open") }
        store.close()
    }
    guard let store = expectStoreErrorOrSuccess("open", { try Store(path: fuzzPath, options: StoreOptions(), fileSystem: fs) }) else { return 0 }
    guard var dump = expectStoreErrorOrSuccess("dump", { try fuzzDump(store) }) else { return 0 }
    checkPrefix(dump, "a writable open")
    if let report = expectStoreErrorOrSuccess("verify", { try store.verify() }), !report.isClean {
        // Damage in superseded bytes is allowed (verify reports it); the live state read above was whole.
        _ = report
    }
    // Saving goes on from the recovered state, and what it saved survives a reopen.
    guard expectStoreErrorOrSuccess("write", { try store.write { tx in try tx.put([9, 9], row: 7, in: try tx.createCollection(named: "after")) } }) != nil else { return 0 }
    store.close()
    dump.collections["after", default: [:]][7] = [9, 9]
    dump.counts["after"] = dump.collections["after"]!.count
    guard let again = expectStoreErrorOrSuccess("reopen", { try Store(path: fuzzPath, options: StoreOptions(), fileSystem: fs) }) else {
        fatalFinding("a store that opened and took a commit does not open again")
    }
    guard let reread = expectStoreErrorOrSuccess("dump after reopening", { try fuzzDump(again) }) else {
        fatalFinding("a store that read whole and took a commit cannot be read after reopening")
    }
    if reread != dump { finding("after a commit on the recovered store, the reopened store reads differently") }
    return 0
}
