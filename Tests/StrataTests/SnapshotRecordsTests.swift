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

    // MARK: snapshots of a layout (values by position)

    private func layoutSnapshot() throws -> (named: DefaultSnapshot, positional: DefaultSnapshot) {
        let id = PersistentIdentifier(entityName: "SnapshotRecordsNote", storeIdentifier: nil, rowID: 7)
        let values: [String: SnapshotValue] = ["title": .string("Lisbon"), "count": .int(3), "note": .null, "tags": try SnapshotValue(["a", "b"])]
        // Not the model's order.
        let layout = DefaultSnapshot.Layout(["tags", "note", "count", "title"])
        return (DefaultSnapshot(persistentIdentifier: id, values: values),
                DefaultSnapshot(persistentIdentifier: id, layout: layout, values: layout.names.map { values[$0] ?? .null }))
    }

    @Test func aSnapshotOfALayoutIsTheSnapshotOfItsNamedValues() throws {
        let (named, positional) = try layoutSnapshot()
        #expect(positional == named)
        #expect(positional.hashValue == named.hashValue)
        #expect(positional.values == named.values)
        #expect(try positional.value("title", as: String.self) == "Lisbon")
        #expect(try positional.value("count", as: Int.self) == 3)
        #expect(try positional.value("colour", as: String.self) == nil)
        #expect(positional["count"] == .int(3) && named["count"] == .int(3) && positional["colour"] == nil)
        #expect(positional.layout?.position(of: "count") == 2 && positional.value(at: 2) == .int(3))
        #expect(named.layout == nil && named.value(at: 0) == nil && positional.value(at: 4) == nil)
        // The same record, whichever form the values came in.
        let records = SnapshotRecords(entity: try entity())
        #expect(try records.record(of: positional, row: { _, _ in 0 }) == (try records.record(of: named, row: { _, _ in 0 })))
        // Coded as the named snapshot is (sorted names), and read back equal.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(try encoder.encode(positional) == (try encoder.encode(named)))
        #expect(try JSONDecoder().decode(DefaultSnapshot.self, from: try encoder.encode(positional)) == named)
        // A copy under another identifier keeps the values.
        let moved = PersistentIdentifier(entityName: "SnapshotRecordsNote", storeIdentifier: nil, rowID: 8)
        #expect(positional.copy(persistentIdentifier: moved).values == named.values)
    }

    @Test func aLayoutSnapshotOfTheWrongLengthOrWithAnUnknownNameIsAnErrorNotARecord() throws {
        let records = SnapshotRecords(entity: try entity())
        let id = PersistentIdentifier(entityName: "SnapshotRecordsNote", storeIdentifier: nil, rowID: 7)
        let layout = DefaultSnapshot.Layout(["title", "count", "tags"])
        let short = DefaultSnapshot(persistentIdentifier: id, layout: layout, values: [.string("Oslo"), .int(1)])
        do {
            _ = try records.record(of: short, row: { _, _ in 0 })
            Issue.record("a snapshot with fewer values than its layout's names was taken")
        } catch let error as StrataError {
            #expect(error.code == .corruptRecord && "\(error)".contains("2 values"), "\(error)")
        }
        let unknown = DefaultSnapshot(persistentIdentifier: id, layout: DefaultSnapshot.Layout(["title", "colour"]), values: [.string("Oslo"), .string("red")])
        do {
            _ = try records.record(of: unknown, row: { _, _ in 0 })
            Issue.record("a snapshot naming colour was taken")
        } catch let error as StrataError {
            #expect(error.code == .corruptRecord && "\(error)".contains("colour"), "\(error)")
        }
    }

    @Test func aStoreAnsweringInLayoutsGivesTheSameObjects() throws {
        let configuration = CountingStoreConfiguration(schema: Schema([Journey.self, Leg.self, Labelled.self]), answersInLayouts: true)
        let container = try ModelContainer(for: Journey.self, Leg.self, Labelled.self, configurations: configuration)
        do {
            let context = ModelContext(container)
            for (i, name) in ["Lisbon", "Oslo", "Kyoto"].enumerated() {
                let trip = Journey(name, day: i, budget: i == 1 ? nil : Double(i) * 10)
                trip.tags = [name.lowercased(), "trip"]
                context.insert(trip)
                trip.legs = [Leg(name + " 1"), Leg(name + " 2")]
            }
            // A model without relationships: its snapshots are kept a run at a time.
            for i in 0..<5 { context.insert(Labelled((0..<i).map { "label \($0)" })) }
            try context.save()
        }
        // A save's snapshots come in one layout per model, and read as by name.
        let saved = configuration.objects.withLock { Array($0.values) }
        #expect(saved.count == 14 && saved.allSatisfy { $0.layout != nil })
        #expect(Set(saved.compactMap { $0["name"] }) == [.string("Lisbon"), .string("Oslo"), .string("Kyoto")])
        #expect(Set(saved.compactMap { $0.layout }.map(ObjectIdentifier.init)).count == 3)
        let context = ModelContext(container)
        #expect(try context.fetch(FetchDescriptor<Labelled>()).map(\.labels.count).sorted() == [0, 1, 2, 3, 4])
        var counts: [Int] = []
        try ModelContext(container).enumerate(FetchDescriptor<Labelled>(), batchSize: 2) { counts.append($0.labels.count) }
        #expect(counts.sorted() == [0, 1, 2, 3, 4])
        let trips = try context.fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name)]))
        #expect(trips.map(\.name) == ["Kyoto", "Lisbon", "Oslo"])
        #expect(trips.map(\.budget) == [20, 0, nil])
        #expect(trips.map(\.tags) == [["kyoto", "trip"], ["lisbon", "trip"], ["oslo", "trip"]])
        #expect(trips.map { $0.legs.map(\.place) } == [["Kyoto 1", "Kyoto 2"], ["Lisbon 1", "Lisbon 2"], ["Oslo 1", "Oslo 2"]])
        var enumerated: [String] = []
        try ModelContext(container).enumerate(FetchDescriptor<Leg>(), batchSize: 2) { enumerated.append($0.place + "/" + ($0.journey?.name ?? "-")) }
        #expect(enumerated.sorted() == ["Kyoto 1/Kyoto", "Kyoto 2/Kyoto", "Lisbon 1/Lisbon", "Lisbon 2/Lisbon", "Oslo 1/Oslo", "Oslo 2/Oslo"])
        #expect(try context.fetchCount(FetchDescriptor<Journey>(predicate: #Predicate { $0.budget == nil })) == 1)
    }
}
