// A custom store's snapshot values turned into a record and back (SnapshotRecords), and the
// error for a snapshot that names a property its model lacks.
import Foundation
import Testing
@testable import Strata

final class SnapshotRecordsNote: PersistentModel {
    @Attribute var title: String = ""
    @Attribute var count: Int = 0
    @Attribute var note: String? = nil
    @Attribute var tags: [String] = []
    init() {}
}

@Suite struct SnapshotRecordsTests {
    private func entity() throws -> Entity {
        try #require(try Schema([SnapshotRecordsNote.self]).entities(includingRelated: false).first)
    }

    @Test func valuesMakeARecordThatReadsBackAsTheSameValues() throws {
        let records = SnapshotRecords(entity: try entity())
        let values: [String: SnapshotValue] = ["title": .string("Lisbon"), "count": .int(3), "note": .null, "tags": try SnapshotValue(["a", "b"])]
        let record = try records.record(of: values, row: { _, _ in 0 })
        let back = try record.withUnsafeBytes { try records.values(of: $0, identifier: { entity, row in PersistentIdentifier(entityName: entity.name, storeIdentifier: nil, rowID: Int64(row)) }, blob: { _ in [] }) }
        #expect(back == values)
        // A value the snapshot leaves out is the attribute's nil.
        let partial = try records.record(of: ["title": .string("Oslo"), "count": .int(1), "tags": try SnapshotValue([String]())], row: { _, _ in 0 })
        let read = try partial.withUnsafeBytes { try records.values(of: $0, identifier: { entity, row in PersistentIdentifier(entityName: entity.name, storeIdentifier: nil, rowID: Int64(row)) }, blob: { _ in [] }) }
        #expect(read["note"] == .null && read["title"] == .string("Oslo"))
    }

    @Test func aValueUnderANameTheModelLacksIsAnErrorNamingIt() throws {
        let records = SnapshotRecords(entity: try entity())
        let values: [String: SnapshotValue] = ["title": .string("Lisbon"), "count": .int(3), "colour": .string("red"), "tags": try SnapshotValue([String]())]
        do {
            _ = try records.record(of: values, row: { _, _ in 0 })
            Issue.record("a snapshot naming colour was taken")
        } catch let error as StrataError {
            #expect(error.code == .corruptRecord)
            #expect("\(error)".contains("colour"), "\(error)")
        }
    }
}
