// Shared by the engine's fuzz targets (scripts/fuzz.sh builds each target from the engine's
// sources, the simulated file system and this file, as one module): reading a whole store,
// small valid stores to start from, and the seed corpus.
//
// A target must never trap on any input: every failure must be a thrown `StoreError`.

import Foundation

let fuzzPath = "/fuzz.strata"

/// With real checksums, damage must be detected: what reads without an error must be right
/// (backwards as forwards, the same after a reopen). With every checksum 0 (a forged or
/// colliding checksum) nothing can tell damage from data, so only a trap is a finding.
#if STRATA_FUZZ_NO_CHECKSUMS
let checksOutcomes = false
#else
let checksOutcomes = true
#endif

/// Everything a store holds, through the public API, in a form that compares with `==`.
struct FuzzDump: Equatable {
    var collections: [String: [RowID: [UInt8]]] = [:]
    var counts: [String: Int] = [:]
    /// Per "collection/index": every entry (key, then the row's 8 bytes) in key order.
    var indexes: [String: [[UInt8]]] = [:]
    var blobs: [UInt64: [UInt8]] = [:]
    var metadata: [String: [UInt8]] = [:]
}

let fuzzMetadataNames = ["schema", "note"]

/// Reads every record, index entry, blob and known metadata value. Throws what a read throws.
func fuzzDump(_ store: Store) throws -> FuzzDump {
    try store.read { tx in
        var dump = FuzzDump()
        for name in tx.collectionNames {
            guard let c = tx.collection(named: name) else { continue }
            var rows: [RowID: [UInt8]] = [:]
            var cursor = try tx.rows(in: c)
            while let (row, record) = try cursor.next() { rows[row] = record }
            dump.collections[name] = rows
            dump.counts[name] = try tx.count(in: c)
            for index in tx.indexes(of: c) {
                var entries: [(key: [UInt8], row: RowID)] = []
                var ic = try tx.entries(in: index.id)
                while let entry = try ic.next() { entries.append(entry) }
                // Backwards gives the same entries: keys in reverse order, equal keys in row order.
                var reverse = try tx.entries(in: index.id, reverse: true)
                var back: [(key: [UInt8], row: RowID)] = []
                while let entry = try reverse.next() { back.append(entry) }
                var runs: [[(key: [UInt8], row: RowID)]] = []
                for e in entries { if runs.last?.last?.key == e.key { runs[runs.count - 1].append(e) } else { runs.append([e]) } }
                let expected = runs.reversed().flatMap { $0 }
                if checksOutcomes && (back.map(\.key) != expected.map(\.key) || back.map(\.row) != expected.map(\.row)) {
                    throw FuzzFinding("index \(index.name) reads differently backwards")
                }
                dump.indexes["\(name)/\(index.name)"] = entries.map { $0.key + KeyEncoding.encode($0.row) }
            }
        }
        for id in try tx.blobIDs() { dump.blobs[id.rawValue] = try tx.blob(id) }
        for name in fuzzMetadataNames { if let value = try tx.metadata(name) { dump.metadata[name] = value } }
        return dump
    }
}

/// A property a target checks that does not hold: reported as a crash.
struct FuzzFinding: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Stops the run on a finding (libFuzzer saves the input as a crash); see `checksOutcomes`.
func finding(_ message: String) {
    guard checksOutcomes else { return }
    fatalFinding(message)
}

func fatalFinding(_ message: String) -> Never {
    FileHandle.standardError.write(Data("FUZZ FINDING: \(message)\n".utf8))
    abort()
}

/// Runs `body`; any error other than a `StoreError` is a finding.
func expectStoreErrorOrSuccess<R>(_ what: String, _ body: () throws -> R) -> R? {
    do { return try body() } catch is StoreError {
        return nil
    } catch let f as FuzzFinding {
        finding("\(what): \(f)")
        return nil
    } catch {
        fatalFinding("\(what) threw something other than a StoreError: \(error)")
    }
}

// MARK: Small valid stores

/// A store built by a fixed series of commits, and what it held after each.
struct SampleStore {
    let fileSystem: SimulatedFileSystem
    /// The state after each commit, the empty store first.
    let states: [FuzzDump]
    var bytes: [UInt8] { fileSystem.bytes(of: fuzzPath) ?? [] }

    /// `variant` picks the shape: 0 tiny, 1 indexes and a blob, 2 a multi-level tree, 3 deferred
    /// durability with deletes and updates, 4 compacted, 5 a damaged tail.
    static func make(_ variant: Int) -> SampleStore {
        let fs = SimulatedFileSystem()
        let durability: Durability = variant == 3 ? .deferred : .full
        var states: [FuzzDump] = []
        do {
            let store = try Store(path: fuzzPath, options: StoreOptions(durability: durability), fileSystem: fs)
            states.append(try fuzzDump(store))
            func commit(_ body: (WriteTransaction) throws -> Void) throws {
                try store.write(body)
                states.append(try fuzzDump(store))
            }
            try commit { tx in
                let c = try tx.createCollection(named: "people")
                try tx.put(Array("Ada".utf8), row: 1, in: c)
                if variant != 0 { try tx.setMetadata("schema", Array("{\"v\":1}".utf8)) }
            }
            if variant == 0 { return SampleStore(fileSystem: fs, states: states) }
            try commit { tx in
                let c = try tx.createCollection(named: "people")
                let email = try tx.createIndex(named: "email", on: c, unique: true)
                let age = try tx.createIndex(named: "age", on: c, unique: false)
                for row in RowID(1)...RowID(variant == 2 ? 400 : 12) {
                    try tx.put(Array("person \(row) ".utf8) + [UInt8](repeating: UInt8(row & 0xFF), count: Int(row % 40)), row: row, in: c,
                               indexKeys: [IndexKey(email, KeyEncoding.encode("p\(row)@example.com")),
                                           IndexKey(age, KeyEncoding.encode(Int64(row % 7), row % 3 == 0 ? 1.5 : -2.0))])
                }
            }
            try commit { tx in
                let c = try tx.createCollection(named: "files")
                let blob = try tx.putBlob([UInt8](repeating: 7, count: 100))
                try tx.put(withUnsafeBytes(of: blob.rawValue.littleEndian, Array.init), row: 1, in: c)
                try tx.setMetadata("note", Array("hello".utf8))
            }
            if variant >= 3 {
                try commit { tx in
                    let c = tx.collection(named: "people")!
                    let email = tx.index(named: "email", in: c)!.id
                    let age = tx.index(named: "age", in: c)!.id
                    func keys(_ row: RowID) -> [IndexKey] {
                        [IndexKey(email, KeyEncoding.encode("p\(row)@example.com")), IndexKey(age, KeyEncoding.encode(Int64(row % 7), row % 3 == 0 ? 1.5 : -2.0))]
                    }
                    try tx.delete(2, in: c, indexKeys: keys(2))
                    try tx.put(Array("changed".utf8), row: 3, in: c, indexKeys: [IndexKey(email, KeyEncoding.encode("new@example.com"))], previousKeys: keys(3))
                    try tx.setMetadata("schema", nil)
                }
            }
            if variant == 4 {
                _ = try store.compact()
                try commit { tx in try tx.put([1, 2, 3], row: 99, in: tx.createCollection(named: "late")) }
            }
            store.close()
            if variant == 5 { fs.appendBytes(Array("a torn commit record".utf8), to: fuzzPath) }
        } catch {
            fatalFinding("building sample store \(variant) failed: \(error)")
        }
        return SampleStore(fileSystem: fs, states: states)
    }

    static let variants = 0..<6
}

// MARK: Seed corpus

/// When STRATA_FUZZ_SEEDS names a folder, writes the target's seed inputs there and exits
/// (scripts/fuzz.sh makes each target's seed corpus this way, so the seeds match the build's
/// checksum setting).
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    guard let folder = ProcessInfo.processInfo.environment["STRATA_FUZZ_SEEDS"] else {
        atexit { reportBytesTried() }
        return 0
    }
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for (i, seed) in fuzzSeeds().enumerated() {
        _ = FileManager.default.createFile(atPath: "\(folder)/seed-\(i)", contents: Data(seed))
    }
    exit(0)
}

nonisolated(unsafe) var inputsTried = 0
nonisolated(unsafe) var bytesTried = 0

/// Printed when libFuzzer exits; scripts/fuzz.sh collects it for Docs/Durability.md.
func reportBytesTried() {
    FileHandle.standardError.write(Data("strata-fuzz: \(inputsTried) inputs, \(bytesTried) bytes tried\n".utf8))
}

/// libFuzzer's input as an array (and counted).
func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    inputsTried += 1
    bytesTried += size
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}
