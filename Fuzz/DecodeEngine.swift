// Fuzz target: the engine's decoders on arbitrary bytes. The first byte picks one: a page
// (Node.decode, then every key and value and a search), a commit record, a catalog, the file
// header, a record frame, a record location, an index key (KeyComponent.decode). Each must
// return nil (or a failure) or a value that survives encoding and decoding again; never trap.
// Built with every checksum 0 (scripts/fuzz.sh) so that inputs get past the checksums.

import Foundation

func fuzzSeeds() -> [[UInt8]] {
    var seeds: [[UInt8]] = []
    let leaf = Node(isLeaf: true)
    for (k, v) in [("a", "1"), ("b", "22"), ("c", "")] {
        Array(k.utf8).withUnsafeBytes { kb in Array(v.utf8).withUnsafeBytes { vb in leaf.insertEntry(at: leaf.count, key: kb, value: vb) } }
    }
    seeds.append([0] + leaf.encodePage(childRefs: []))
    let branch = Node(isLeaf: false)
    for k in ["", "m"] { Array(k.utf8).withUnsafeBytes { branch.insertEntry(at: branch.count, key: $0, value: nil) } }
    seeds.append([0] + branch.encodePage(childRefs: [PageRef(offset: 64, length: 40), PageRef(offset: 104, length: 40)]))
    var catalog = Catalog()
    catalog.collections = [CollectionInfo(id: 1, name: "people", count: 3, nextRowID: 4, liveBytes: 99)]
    catalog.indexes = [IndexInfoRecord(id: 1, collection: 1, name: "email", unique: true)]
    let record = CommitRecord(sequence: 3, offset: 1000, previousOffset: 500, bodyStart: 600, bodyChecksum: 0, flags: 1,
                              root: PageRef(offset: 700, length: 100), timeMilliseconds: 1, salt: 42, catalog: catalog)
    seeds.append([1] + record.encode())
    var catalogBytes: [UInt8] = []
    catalog.encode(into: &catalogBytes)
    seeds.append([2] + catalogBytes)
    seeds.append([3] + FileHeader(salt: 42, createdMilliseconds: 1).encode())
    let frame = [UInt8]([1, 2, 3]).withUnsafeBytes {
        RecordFrame.encode(kind: RecordFrame.kindRecord, indexKeys: [IndexKey(IndexID(rawValue: 1), KeyEncoding.encode("k"))], payload: $0)
    }
    seeds.append([4] + frame)
    seeds.append([5] + RecordLocation(offset: 100, length: 20).encode())
    seeds.append([6] + KeyEncoding.encode("text", Int64(-5), 2.5, true, UUID(uuid: (1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16))))
    seeds.append([6] + KeyEncoding.encode(Data([0, 0xFF, 0]), Date(timeIntervalSinceReferenceDate: 3), UInt64.max) + [KeyTag.null])
    return seeds
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = fuzzInput(data, size)
    guard let selector = input.first else { return 0 }
    let bytes = Array(input.dropFirst())
    switch selector % 7 {
    case 0:
        let ref = PageRef(offset: 1 << 40, length: UInt32(bytes.count))
        guard let node = Node.decode(page: bytes, at: ref) else { return 0 }
        var keys: [[UInt8]] = []
        for i in 0..<node.count {
            keys.append(node.key(i))
            if node.isLeaf { _ = node.value(i) }
        }
        for key in keys + [[], [0xFF, 0xFF]] {
            _ = key.withUnsafeBytes { node.search($0) }
            if !node.isLeaf { _ = key.withUnsafeBytes { node.childIndex(for: $0) } }
        }
        let refs = node.children.map { child -> PageRef in if case .page(let r) = child { return r }; return PageRef(offset: 0, length: 0) }
        let page = node.copy().encodePage(childRefs: refs)
        guard let again = Node.decode(page: page, at: PageRef(offset: ref.offset, length: UInt32(page.count))) else {
            fatalFinding("a decoded page, encoded again, does not decode")
        }
        if again.isLeaf != node.isLeaf || again.data != node.data || again.starts != node.starts || again.children.count != node.children.count {
            fatalFinding("a decoded page, encoded again, decodes to another page")
        }
    case 1:
        guard bytes.count >= 88 else { return 0 }
        let offset = bytes.loadLE64(24), salt = bytes.loadLE64(80)
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
            guard let payload = RecordFrame.check(raw) else { return }
            let keys = RecordFrame.indexKeys(raw)
            let payloadBytes = Array(raw[payload...])
            let again = payloadBytes.withUnsafeBytes { RecordFrame.encode(kind: raw[8], indexKeys: keys, payload: $0) }
            let reread = again.withUnsafeBytes { r in RecordFrame.check(r).map { (RecordFrame.indexKeys(r), Array(r[$0...])) } }
            if reread?.0 != keys || reread?.1 != payloadBytes { fatalFinding("a checked record frame does not survive encoding") }
        }
    case 5:
        bytes.withUnsafeBytes { raw in
            guard let location = RecordLocation.decode(raw) else { return }
            _ = location.encode()
        }
    default:
        guard let parts = KeyComponent.decode(bytes) else { return 0 }
        _ = parts.map(\.description)
    }
    return 0
}
