import Foundation
import StrataEngine

/// A StrataEngine store holding courses: one collection, a unique index on `id` and a
/// non-unique index on `createdAt`.
struct EngineCourses {
    let store: Store
    let courses: CollectionID
    let byID: IndexID
    let byCreatedAt: IndexID

    /// Opens (creating if needed) the store. Opening an existing store does not write.
    static func open(path: String, options: StoreOptions = StoreOptions()) throws -> EngineCourses {
        let store = try Store(path: path, options: options)
        let found = try store.read { tx -> (CollectionID, IndexID, IndexID)? in
            guard let c = tx.collection(named: "Course"),
                  let id = tx.index(named: "id", in: c), let date = tx.index(named: "createdAt", in: c) else { return nil }
            return (c, id.id, date.id)
        }
        if let (c, id, date) = found {
            return EngineCourses(store: store, courses: c, byID: id, byCreatedAt: date)
        }
        let (c, id, date) = try store.write { tx in
            let c = try tx.createCollection(named: "Course")
            return (c, try tx.createIndex(named: "id", on: c, unique: true),
                    try tx.createIndex(named: "createdAt", on: c, unique: false))
        }
        return EngineCourses(store: store, courses: c, byID: id, byCreatedAt: date)
    }

    /// Puts a course as a new row with its two index entries. `buffer` is reused scratch space.
    @inline(__always)
    func insert(_ course: Course, in tx: WriteTransaction, buffer: inout [UInt8]) throws {
        CourseCodec.encode(course, into: &buffer)
        let row = try tx.allocateRowID(in: courses)
        try tx.put(buffer, row: row, in: courses,
                   indexKeys: [IndexKey(byID, KeyEncoding.encode(course.id)),
                               IndexKey(byCreatedAt, KeyEncoding.encode(course.createdAt))])
    }

    /// The course with this id (unique-index lookup, then the record), or nil.
    @inline(__always)
    func fetch(id: UUID, in tx: ReadTransaction) throws -> Course? {
        guard let row = try tx.lookup(KeyEncoding.encode(id), in: byID) else { return nil }
        return try tx.withRecord(row, in: courses) { CourseCodec.decode($0) } ?? nil
    }
}
