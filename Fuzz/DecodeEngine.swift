// Fuzz target: the engine's decoders on arbitrary bytes. The first byte picks one: a page
// (PageLayout.check, then every key and value, searches, and a copy into a node encoded
// again), a commit record, a catalog, the file header, a value frame, a row's value and the
// varints, an index key (KeyComponent.decode). Each must return nil (or a failure) or a value
// that survives encoding and decoding again; never trap. Built with every checksum 0
// (scripts/fuzz.sh) so that inputs get past the checksums.

import Foundation

func fuzzSeeds() -> [[UInt8]] {
    var seeds: [[UInt8]] = []
    let budget = DirtyBudget(limit: .max)
    let leaf = Node(isLeaf: true, budget: budget)
    for (k, v) in [("ka", "1"), ("kb", "22"), ("kc", "")] {
        Array(k.utf8).withUnsafeBytes { kb in Array(v.utf8).withUnsafeBytes { vb in leaf.appendLeafCell(key: kb, value: vb, flags: 0) } }
    }
    var page: [UInt8] = []
    leaf.encode(into: &page)
    seeds.append([0] + page)
    // Packed leaves of shapes 0 and 2 (the one above is shape 1), and a kind-1 leaf
    // (Docs/FileFormat.md, "Page": rows 1 and 2 holding "Ada" and "Grace").
    for cells in [[("a", "123", UInt8(2)), ("bcd", "9", 1)], [("x1", "", UInt8(0)), ("x234", "", 0)]] {
        let packed = Node(isLeaf: true, budget: budget)
        for (k, v, flags) in cells {
            Array(k.utf8).withUnsafeBytes { kb in Array(v.utf8).withUnsafeBytes { vb in packed.appendLeafCell(key: kb, value: vb, flags: flags) } }
        }
        packed.encode(into: &page)
        seeds.append([0] + page)
    }
    seeds.append([0, 0xB5, 0xB5, 0x6A, 0x5A, 0x23, 0x00, 0x01, 0x07, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                  0x00, 0x15, 0x00, 0x1B, 0x00, 0x01, 0x0C, 0x01, 0x41, 0x64, 0x61, 0x01, 0x14, 0x02, 0x47, 0x72, 0x61, 0x63, 0x65])
    let branch = Node(isLeaf: false, budget: budget)
    branch.insertBranchCell(at: 0, key: UnsafeRawBufferPointer(start: nil, count: 0), child: 64)
    Array("mm".utf8).withUnsafeBytes { branch.insertBranchCell(at: 1, key: $0, child: 128) }
    branch.encode(into: &page)
    seeds.append([0] + page)
    var catalog = Catalog()
    catalog.collections = [CollectionInfo(id: 1, name: "people", count: 3, nextRowID: 4, liveBytes: 99, root: 700)]
    catalog.indexes = [IndexInfoRecord(id: 1, collection: 1, name: "email", unique: true, root: 650, entries: 3, liveBytes: 40)]
    let record = CommitRecord(sequence: 3, offset: 1000, previousOffset: 500, bodyStart: 600, bodyChecksum: 0, flags: 1,
                              timeMilliseconds: 1, salt: 42, catalog: catalog)
    seeds.append([1] + record.encode())
    var catalogBytes: [UInt8] = []
    catalog.encode(into: &catalogBytes)
    seeds.append([2] + catalogBytes)
    seeds.append([3] + FileHeader(salt: 42, createdMilliseconds: 1).encode())
    seeds.append([4] + [UInt8]([1, 2, 3]).withUnsafeBytes { ValueFrame.encode($0) })
    seeds.append([5, ValueFlags.keysDigest, 1, 2, 3, 4, 5, 6])
    seeds.append([6] + KeyEncoding.encode("text", Int64(-5), 2.5, true, UUID(uuid: (1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16))))
    seeds.append([6] + KeyEncoding.encode(Data([0, 0xFF, 0]), Date(timeIntervalSinceReferenceDate: 3), UInt64.max) + [KeyTag.null])
    return seeds
}

/// Reads a page every way a reader does, and checks that a node copied from it encodes to a
/// page holding the same keys and values.
func fuzzPage(_ bytes: [UInt8]) {
    let offset: UInt64 = 1 << 40
    bytes.withUnsafeBytes { raw in
        guard let base = raw.baseAddress, raw.count >= PageLayout.minimumSize,
              PageLayout.check(base, length: raw.count, offset: offset) else { return }
        let view = PageView(base)
        var keys: [[UInt8]] = []
        var values: [[UInt8]] = []
        for i in 0..<view.count {
            keys.append(view.key(i))
            if view.isLeaf { values.append(Array(view.leafCell(i).value)) } else { _ = view.child(i) }
        }
        for key in keys + [[], [0xFF, 0xFF]] {
            key.withUnsafeBytes { k in
                if view.isLeaf { _ = view.search(k) } else { _ = view.childIndex(for: k) }
            }
        }
        guard let node = Node(copying: view, budget: DirtyBudget(limit: .max)) else { return }
        var again: [UInt8] = []
        node.encode(into: &again)
        again.withUnsafeBytes { copy in
            guard PageLayout.check(copy.baseAddress!, length: copy.count, offset: offset) else {
                fatalFinding("a checked page, copied and encoded again, does not check")
            }
            let reread = PageView(copy.baseAddress!)
            let sameKeys = (0..<reread.count).map { reread.key($0) }
            // A branch's first key is not compared and is written empty.
            if view.isLeaf ? sameKeys != keys : Array(sameKeys.dropFirst()) != Array(keys.dropFirst()) {
                fatalFinding("a checked page, copied and encoded again, holds other keys")
            }
            if view.isLeaf && (0..<reread.count).map({ Array(reread.leafCell($0).value) }) != values {
                fatalFinding("a checked page, copied and encoded again, holds other values")
            }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = fuzzInput(data, size)
    guard let selector = input.first else { return 0 }
    let bytes = Array(input.dropFirst())
    switch selector % 7 {
    case 0:
        fuzzPage(bytes)
    case 1:
        guard bytes.count >= 80 else { return 0 }
        let offset = bytes.loadLE64(32), salt = bytes.loadLE64(72)
        guard let record = CommitRecord.decode(bytes, at: offset, salt: salt) else { return 0 }
        if CommitRecord.decode(record.encode(), at: offset, salt: salt) != record { fatalFinding("a decoded commit record does not survive encoding") }
    case 2:
        guard let catalog = Catalog.decode(bytes, from: 0, to: bytes.count) else { return 0 }
        var again: [UInt8] = []
        catalog.encode(into: &again)
        // Names are decoded leniently (invalid UTF-8 is replaced), so the bytes may differ; the catalog may not.
        if Catalog.decode(again, from: 0, to: again.count) != catalog { fatalFinding("a decoded catalog does not survive encoding") }
    case 3:
        if case .success(let header) = FileHeader.decode(bytes), header.version == FileHeader.currentVersion {
            guard case .success(let again) = FileHeader.decode(header.encode()), again == header else {
                fatalFinding("a decoded header does not survive encoding")
            }
        }
    case 4:
        bytes.withUnsafeBytes { raw in
            guard ValueFrame.check(raw) else { return }
            let payload = Array(raw[ValueFrame.headerSize...])
            if payload.withUnsafeBytes({ ValueFrame.encode($0) }) != bytes { fatalFinding("a checked value frame does not survive encoding") }
        }
    case 5:
        guard let flags = bytes.first else { return 0 }
        bytes.withUnsafeBytes { raw in
            let rest = UnsafeRawBufferPointer(rebasing: raw[1...])
            _ = RowValue.decode(rest, flags: flags & 3)
            _ = Varint.decode(rest)
            _ = PublishedCommit.decode(Array(rest))
            // A non-unique entry's row suffix: what splits must be the shortest form of its row.
            if let (length, row) = TreeKey.splitEntry(rest) {
                if TreeKey.entry(Array(rest[..<length]), row: row) != Array(rest) { fatalFinding("a split index entry does not survive encoding") }
            }
        }
    default:
        guard let parts = KeyComponent.decode(bytes) else { return 0 }
        _ = parts.map(\.description)
    }
    return 0
}
