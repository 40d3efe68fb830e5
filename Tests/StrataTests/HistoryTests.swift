import Foundation
import Testing
import Strata

// History through the public API: what each save records (inserts, updates with the changed
// attributes, deletes with tombstones, upserts as updates), from two contexts with their
// authors, in commit order; tokens that compare and round-trip; deleteHistory; retention and
// the expired token.

final class HNote: PersistentModel {
    @Attribute(.unique) var key: Int = 0
    @Attribute(.preserveValueOnDeletion) var title: String = ""
    @Attribute var body: String = ""
    @Relationship(deleteRule: .cascade, inverse: \HLine.note) var lines: [HLine] = []
    init() {}
    init(_ key: Int, _ title: String) {
        self.key = key
        self.title = title
    }
}

final class HLine: PersistentModel {
    @Attribute(.preserveValueOnDeletion) var text: String = ""
    @Relationship var note: HNote? = nil
    init() {}
    init(_ text: String) { self.text = text }
}

/// A model without relationships (its upserts resolve in the store's own unique check).
final class HTag: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var uses: Int = 0
    @Attribute var color: String = ""
    init() {}
    init(_ name: String, uses: Int, color: String) {
        self.name = name
        self.uses = uses
        self.color = color
    }
}

/// A flat view of a transaction's changes: "insert HNote/1", "update HNote/1 body", ...
func describe(_ transaction: DefaultHistoryTransaction) -> [String] {
    transaction.changes.map { change in
        let id = change.changedPersistentIdentifier
        let name = "\(id.entityName)/\(id.rowID)"
        switch change {
        case .insert: return "insert \(name)"
        case .update(let update as DefaultHistoryUpdate<HNote>): return "update \(name) \(update.updatedAttributes.map(\.name).joined(separator: ","))"
        case .update(let update as DefaultHistoryUpdate<HLine>): return "update \(name) \(update.updatedAttributes.map(\.name).joined(separator: ","))"
        case .update(let update as DefaultHistoryUpdate<HTag>): return "update \(name) \(update.updatedAttributes.map(\.name).joined(separator: ","))"
        case .delete(let delete as DefaultHistoryDelete<HNote>): return "delete \(name) \(delete.tombstone[\.title] as? String ?? "-")"
        case .delete(let delete as DefaultHistoryDelete<HLine>): return "delete \(name) \(delete.tombstone[\.text] as? String ?? "-")"
        case .update, .delete: return "? \(name)"
        }
    }
}

@Suite struct HistoryTests {
    let dir = TemporaryDirectory()

    func container(_ retention: HistoryRetention = .default, allowsSave: Bool = true) throws -> ModelContainer {
        var configuration = ModelConfiguration(url: dir.store("history"), allowsSave: allowsSave)
        configuration.historyRetention = retention
        return try ModelContainer(for: HNote.self, HLine.self, HTag.self, configurations: configuration)
    }

    func all(_ context: ModelContext) throws -> [DefaultHistoryTransaction] {
        try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
    }

    @Test func savesFromTwoContextsAreRecordedInCommitOrder() throws {
        let container = try container()
        let a = ModelContext(container), b = ModelContext(container)
        a.author = "app"
        b.author = "importer"
        let first = HNote(1, "one"), second = HNote(2, "two")
        a.insert(first)
        a.insert(second)
        try a.save()

        let fetched = try #require(try b.fetch(FetchDescriptor<HNote>(predicate: #Predicate { $0.key == 1 })).first)
        fetched.body = "changed"
        try b.save()

        first.title = "ONE"
        first.body = "also"
        let line = HLine("a line")
        line.note = second
        a.insert(line)
        try a.save()

        a.delete(second)       // cascades to its line
        try a.save()

        let history = try all(ModelContext(container))
        #expect(history.map(\.author) == ["app", "importer", "app", "app"])
        #expect(history.map(\.token) == history.map(\.token).sorted())
        #expect(Set(history.map(\.token)).count == 4)
        #expect(history.allSatisfy { $0.storeIdentifier == history[0].token.storeIdentifier && !$0.storeIdentifier.isEmpty })
        #expect(history.allSatisfy { $0.processIdentifier == String(ProcessInfo.processInfo.processIdentifier) })
        #expect(describe(history[0]) == ["insert HNote/1", "insert HNote/2"])
        #expect(describe(history[1]) == ["update HNote/1 body"])
        #expect(describe(history[2]).sorted() == ["insert HLine/1", "update HNote/1 title,body", "update HNote/2 lines"])
        #expect(describe(history[3]).sorted() == ["delete HLine/1 a line", "delete HNote/2 two"])
        // The identifiers are the objects' own.
        #expect(history[0].changes[0].changedPersistentIdentifier == first.persistentModelID)
        if case .update(let update as DefaultHistoryUpdate<HNote>) = history[1].changes[0] {
            #expect(update.updatedAttributes.contains(\.body))
            #expect(!update.updatedAttributes.contains(\.title))
            #expect(update.updatedAttributes[0] == \HNote.body)
        } else {
            Issue.record("not an update of a note")
        }
    }

    @Test func upsertsAreUpdatesOfTheFieldsThatDiffer() throws {
        let container = try container()
        let context = ModelContext(container)
        context.insert(HTag("red", uses: 1, color: "#f00"))
        context.insert(HNote(7, "seven"))
        try context.save()
        context.insert(HTag("red", uses: 2, color: "#f00"))     // upsert: only `uses` differs
        let note = HNote(7, "SEVEN")                             // upsert of a model with relationships
        note.body = ""
        context.insert(note)
        try context.save()
        let history = try all(context)
        #expect(history.count == 2)
        #expect(describe(history[1]).sorted() == ["update HNote/1 title", "update HTag/1 uses"])
    }

    @Test func tokensRoundTripAndSelectWhatCameAfter() throws {
        let container = try container()
        let context = ModelContext(container)
        for key in 0..<5 {
            context.insert(HNote(key, "n\(key)"))
            try context.save()
        }
        let history = try all(context)
        let saved = try JSONDecoder().decode(DefaultHistoryToken.self, from: try JSONEncoder().encode(history[1].token))
        #expect(saved == history[1].token)
        let after = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > saved }))
        #expect(after.map(\.token) == Array(history[2...].map(\.token)))
        var newestFirst = HistoryDescriptor<DefaultHistoryTransaction>(sortBy: [SortDescriptor(\.token, order: .reverse)])
        newestFirst.fetchLimit = 2
        #expect(try context.fetchHistory(newestFirst).map(\.token) == [history[4].token, history[3].token])
        #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.author == "nobody" })).isEmpty)
    }

    @Test func deleteHistoryPrunesAndOlderTokensExpire() throws {
        let container = try container()
        let context = ModelContext(container)
        for key in 0..<6 {
            context.insert(HNote(key, "n\(key)"))
            try context.save()
        }
        let history = try all(context)
        let cut = history[3].token
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token < cut }))
        #expect(try all(context).map(\.token) == Array(history[3...].map(\.token)))
        let stale = history[1].token
        #expect(throws: StrataError.self) {
            try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > stale }))
        }
        do {
            _ = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > stale }))
        } catch StrataError.historyTokenExpired {
            // SwiftData's spelling of the catch.
        }
        // The newest pruned token is not expired: nothing after it was lost.
        let edge = history[2].token
        #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > edge })).count == 3)
        // The data is untouched, and a reopened store keeps both.
        #expect(try context.fetchCount(FetchDescriptor<HNote>()) == 6)
        let reopened = ModelContext(try self.container())
        #expect(try all(reopened).count == 3)
    }

    @Test func retentionKeepsTheLastTransactions() throws {
        let container = try container(.transactions(16))
        let context = ModelContext(container)
        for key in 0..<40 {
            context.insert(HNote(key, "n\(key)"))
            try context.save()
        }
        let history = try all(context)
        #expect(history.count >= 16 && history.count <= 17)
        #expect(history.last?.token.tokenValue == 40)
        let first = DefaultHistoryToken(tokenValue: 1, storeIdentifier: history[0].storeIdentifier)
        #expect(throws: StrataError.self) {
            try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > first }))
        }
    }

    @Test func historyOffRecordsNothing() throws {
        let container = try container(.off)
        let context = ModelContext(container)
        context.insert(HNote(1, "one"))
        try context.save()
        #expect(try all(context).isEmpty)
    }

    @Test func aCascadeOfDeletesWithoutPreservedValuesIsOneSmallRecord() throws {
        let container = try container()
        let context = ModelContext(container)
        for key in 0..<300 { context.insert(HTag("t\(key)", uses: key, color: "")) }
        try context.save()
        try context.delete(model: HTag.self)
        try context.save()
        let history = try all(context)
        #expect(history.count == 2)
        #expect(history[1].changes.count == 300)
        #expect(history[1].changes.allSatisfy { if case .delete(let d as DefaultHistoryDelete<HTag>) = $0 { d.tombstone.values.isEmpty } else { false } })
    }

    @Test func theStoreIdentifierSurvivesAMove() throws {
        let token: DefaultHistoryToken
        let encoded: Data
        do {
            let context = ModelContext(try container())
            let note = HNote(1, "one")
            context.insert(note)
            try context.save()
            token = try #require(try all(context).last?.token)
            #expect(note.persistentModelID.storeIdentifier == token.storeIdentifier)
            encoded = try JSONEncoder().encode(note.persistentModelID)
        }
        let moved = dir.store("moved")
        try FileManager.default.moveItem(at: dir.store("history"), to: moved)
        let container = try ModelContainer(for: HNote.self, HLine.self, HTag.self, configurations: ModelConfiguration(url: moved))
        let context = ModelContext(container)
        #expect(try all(context).last?.token == token)
        // An identifier kept from before the move still names the object.
        let id = try JSONDecoder().decode(PersistentIdentifier.self, from: encoded)
        #expect((context.model(for: id) as? HNote)?.title == "one")
        #expect(try context.fetchIdentifiers(FetchDescriptor<HNote>()) == [id])
    }
}

@Suite struct HistoryRecordTests {
    static let record = HistoryRecord(
        timestamp: Date(timeIntervalSince1970: 1_800_000_000.25), author: "ä author", bundleIdentifier: "app", processIdentifier: "42",
        runs: [
            .init(kind: .delete, entity: "Note", firstRow: 7, count: 2, attributes: [], tombstones: [[("title", [3, 0x61, 0x62, 0x63])], [("title", [])]]),
            .init(kind: .update, entity: "Note", firstRow: 1, count: 3, attributes: ["title", "body"], tombstones: []),
            .init(kind: .insert, entity: "Line", firstRow: 300, count: 100_000, attributes: [], tombstones: []),
        ])

    @Test func roundTrips() throws {
        let bytes = Self.record.encode()
        #expect(try bytes.withUnsafeBytes { try HistoryRecord(decoding: $0) } == Self.record)
        #expect(Self.record.changeCount == 100_005)
        var anonymous = Self.record
        anonymous.author = nil
        #expect(try anonymous.encode().withUnsafeBytes { try HistoryRecord(decoding: $0) }.author == nil)
    }

    /// Names are found by comparing while few, and through a dictionary past
    /// `HistoryRecord.listedNames`: a record naming more, and naming the first ones again after,
    /// decodes to itself.
    @Test func recordsOfManyNamesRoundTrip() throws {
        var runs: [HistoryRecord.Run] = []
        for round in 0..<3 {
            for e in 0..<6 {
                let attributes = (0..<(3 + e)).map { "p\(($0 * 5 + e + round) % 13)" }
                runs.append(.init(kind: .update, entity: "E\(e)", firstRow: UInt64(100 * round + e + 1), count: 1, attributes: attributes, tombstones: []))
                runs.append(.init(kind: .delete, entity: "E\((e + round) % 6)", firstRow: UInt64(1000 + 100 * round + e), count: 1, attributes: [],
                                  tombstones: [[("p\(e)", [UInt8(e)]), ("p\(12 - e)", [])]]))
            }
        }
        let record = HistoryRecord(timestamp: Date(timeIntervalSince1970: 1_800_000_000), author: nil, bundleIdentifier: "app", processIdentifier: "1", runs: runs)
        #expect(try record.encode().withUnsafeBytes { try HistoryRecord(decoding: $0) } == record)
    }

    /// A cut or damaged record is refused with an error, never a crash or a huge allocation.
    @Test func damagedRecordsAreRefused() throws {
        let bytes = Self.record.encode()
        for length in 0..<bytes.count {
            #expect(throws: (any Error).self) { try Array(bytes[..<length]).withUnsafeBytes { try HistoryRecord(decoding: $0) } }
        }
        for position in 0..<bytes.count {
            var damaged = bytes
            damaged[position] ^= 0xFF
            _ = try? damaged.withUnsafeBytes { try HistoryRecord(decoding: $0) }
        }
    }
}

extension HistoryTests {
    @Test func aPredicateMayReadTheChanges() throws {
        let container = try container()
        let context = ModelContext(container)
        context.insert(HNote(1, "one"))
        context.insert(HNote(2, "two"))
        try context.save()
        context.insert(HNote(3, "three"))
        try context.save()
        let big = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.changes.count > 1 }))
        #expect(big.map { $0.changes.count } == [2])
        let small = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.author == nil && $0.changes.count == 1 }))
        #expect(small.map { $0.changes.count } == [1])
    }
}
