import Foundation
import Strata
import StrataEngine
import StrataRecords

/// The bench workloads on StrataEngine directly: one collection of hand-encoded course
/// records, a unique index on id and an index on createdAt.
struct EngineBench {
    let store: Store
    let courses: CollectionID
    let byID: IndexID
    let byCreatedAt: IndexID

    static func run(path: String, data: BenchData, plan: BenchPlan, emit: (JSONValue) -> Void) throws {
        let store = try Store(path: path)
        defer { store.close() }
        let (courses, byID, byCreatedAt) = try store.write { tx in
            let c = try tx.createCollection(named: "Course")
            return (c, try tx.createIndex(named: "id", on: c, unique: true), try tx.createIndex(named: "createdAt", on: c, unique: false))
        }
        let bench = EngineBench(store: store, courses: courses, byID: byID, byCreatedAt: byCreatedAt)
        func measure(_ workload: String, _ id: String) -> BenchMeasurement {
            BenchMeasurement(workload: workload, id: id, system: "StrataEngine", n: plan.n)
        }
        emit(try measure("bulk_insert", "W1").run(ops: plan.n, store: store) {
            try bench.insert(data.courses)
            return [("file_bytes", .integer(Int64(try store.info().fileSize)))]
        })
        emit(try measure("point_fetch", "W3").run(ops: data.probes.count, store: store) {
            [("found", .integer(Int64(try bench.fetch(data.probes))))]
        })
        emit(try measure("count_where", "W4").run(ops: plan.countRepetitions, store: store) {
            var matches = 0
            for _ in 0..<plan.countRepetitions { matches = try bench.count(durationAbove: plan.durationThreshold) }
            return [("matches", .integer(Int64(matches)))]
        })
        emit(try measure("sorted_page", "W5").run(ops: plan.pageRepetitions, store: store) {
            var read = 0
            for _ in 0..<plan.pageRepetitions { read = try bench.newestPage(offset: plan.pageOffset, limit: plan.pageSize) }
            return [("page_size", .integer(Int64(read))), ("offset", .integer(Int64(plan.pageOffset)))]
        })
        emit(try measure("enumerate", "W7").run(ops: plan.n, store: store) {
            [("visited", .integer(Int64(try bench.enumerate())))]
        })
    }

    func insert(_ values: [BenchData.Values]) throws {
        try store.write { tx in
            var buffer: [UInt8] = []
            for course in values {
                EngineRecord.encode(course, into: &buffer)
                let row = try tx.allocateRowID(in: courses)
                try tx.put(buffer, row: row, in: courses, indexKeys: [IndexKey(byID, KeyEncoding.encode(course.id)),
                                                                      IndexKey(byCreatedAt, KeyEncoding.encode(course.createdAt))])
            }
        }
    }

    /// Looks each id up in the unique index and reads the course's title; returns how many were found.
    func fetch(_ ids: [UUID]) throws -> Int {
        try store.read { tx in
            var found = 0
            for id in ids {
                guard let row = try tx.lookup(KeyEncoding.encode(id), in: byID) else { continue }
                if try tx.withRecord(row, in: courses, { EngineRecord.title($0) }) != nil { found += 1 }
            }
            return found
        }
    }

    /// Counts `duration > threshold && isPublished` by reading two fields in place.
    func count(durationAbove threshold: Double) throws -> Int {
        try store.read { tx in
            var matches = 0
            try tx.forEachRecord(in: courses) { _, raw in
                if EngineRecord.isPublished(raw) && EngineRecord.duration(raw) > threshold { matches += 1 }
                return true
            }
            return matches
        }
    }

    /// Reads a page of courses, newest first, from the createdAt index; returns its size.
    func newestPage(offset: Int, limit: Int) throws -> Int {
        try store.read { tx in
            var cursor = try tx.entries(in: byCreatedAt, reverse: true)
            for _ in 0..<offset {
                guard try cursor.advance() else { return 0 }
            }
            var read = 0
            while read < limit, let (_, row) = try cursor.next() {
                _ = try tx.withRecord(row, in: courses) { EngineRecord.title($0) }
                read += 1
            }
            return read
        }
    }

    /// Visits every course, decoding every field; returns how many.
    func enumerate() throws -> Int {
        try store.read { tx in
            var visited = 0
            try tx.forEachRecord(in: courses) { _, raw in
                if EngineRecord.decode(raw) != nil { visited += 1 }
                return true
            }
            return visited
        }
    }
}

/// A course as the engine workloads store it, encoded by hand (what an object layer would
/// write, without its offset table):
///
///     id (16) | createdAt (f64) | duration (f64) | flags (1: published, has author) | authorID (i64)
///     | title, summary (varint length + UTF-8 each) | tag count (varint) | tags (same as title)
enum EngineRecord {
    static func encode(_ c: BenchData.Values, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        withUnsafeBytes(of: c.id.uuid) { buffer.append(contentsOf: $0) }
        withUnsafeBytes(of: c.createdAt.timeIntervalSinceReferenceDate.bitPattern.littleEndian) { buffer.append(contentsOf: $0) }
        withUnsafeBytes(of: c.duration.bitPattern.littleEndian) { buffer.append(contentsOf: $0) }
        buffer.append((c.isPublished ? 1 : 0) | (c.authorID != nil ? 2 : 0))
        withUnsafeBytes(of: Int64(c.authorID ?? 0).littleEndian) { buffer.append(contentsOf: $0) }
        appendString(c.title, to: &buffer)
        appendString(c.summary, to: &buffer)
        appendLength(c.tags.count, to: &buffer)
        for tag in c.tags { appendString(tag, to: &buffer) }
    }

    static func duration(_ raw: UnsafeRawBufferPointer) -> Double {
        Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
    }

    static func isPublished(_ raw: UnsafeRawBufferPointer) -> Bool { raw[32] & 1 != 0 }

    static func title(_ raw: UnsafeRawBufferPointer) -> String? {
        var i = 41
        return readString(raw, &i)
    }

    static func decode(_ raw: UnsafeRawBufferPointer) -> BenchData.Values? {
        guard raw.count >= 41 else { return nil }
        var i = 41
        guard let title = readString(raw, &i), let summary = readString(raw, &i), let count = readLength(raw, &i) else { return nil }
        var tags: [String] = []
        for _ in 0..<count {
            guard let tag = readString(raw, &i) else { return nil }
            tags.append(tag)
        }
        let flags = raw[32]
        return BenchData.Values(
            id: UUID(uuid: raw.loadUnaligned(as: uuid_t.self)), title: title, summary: summary, duration: duration(raw),
            createdAt: Date(timeIntervalSinceReferenceDate: Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))),
            isPublished: flags & 1 != 0, tags: tags,
            authorID: flags & 2 != 0 ? Int(Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 33, as: Int64.self))) : nil)
    }

    private static func appendLength(_ n: Int, to buffer: inout [UInt8]) {
        var v = n
        while v >= 0x80 {
            buffer.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        buffer.append(UInt8(v))
    }

    private static func appendString(_ s: String, to buffer: inout [UInt8]) {
        appendLength(s.utf8.count, to: &buffer)
        buffer.append(contentsOf: s.utf8)
    }

    private static func readLength(_ raw: UnsafeRawBufferPointer, _ i: inout Int) -> Int? {
        var n = 0, shift = 0
        while i < raw.count, shift < 35 {
            let byte = raw[i]
            i += 1
            n |= Int(byte & 0x7F) << shift
            if byte < 0x80 { return n }
            shift += 7
        }
        return nil
    }

    private static func readString(_ raw: UnsafeRawBufferPointer, _ i: inout Int) -> String? {
        guard let n = readLength(raw, &i), n <= raw.count - i else { return nil }
        defer { i += n }
        return String(decoding: UnsafeRawBufferPointer(rebasing: raw[i..<(i + n)]), as: UTF8.self)
    }
}
