// Unique and indexed values of any length (issue 27, item 11). An index holds a key longer
// than 2016 bytes in its long form: the first 2016 bytes, FF, 16 bytes of SHA-256 of the whole
// (Docs/FileFormat.md, "Long index keys"). Through the public API: unique strings of 3,000
// and 100,000 bytes, values that share a 2,500-byte prefix (two objects, no false upsert),
// upserts of an identical long value (in another save and in the same one, with and without
// relationships), a compound unique constraint with a long part, an indexed long attribute
// sorted both ways and filtered by equality, IN, ranges and `hasPrefix`, counts, deletion and
// re-insertion, a reopened store, and the store verified with every index entry checked
// against its record. (Before long forms, every save here failed with `keyTooLarge`.)
import Foundation
import Testing
import Strata
import StrataEngine

final class LongPage: PersistentModel {
    @Attribute(.unique) var url: String = ""
    @Attribute var title: String = ""
    @Attribute var hits: Int = 0
    init() {}
    init(url: String, title: String, hits: Int = 0) {
        self.url = url
        self.title = title
        self.hits = hits
    }
}

/// A non-unique index on a long attribute.
final class LongNote: PersistentModel {
    @Attribute var body: String = ""
    @Attribute var number: Int = 0
    init() {}
    init(body: String, number: Int) {
        self.body = body
        self.number = number
    }
    static var indexes: [[PartialKeyPath<LongNote>]] { [[\.body]] }
}

/// A compound unique constraint whose second part is long.
final class LongRoute: PersistentModel {
    @Attribute var host: String = ""
    @Attribute var path: String = ""
    @Attribute var note: String = ""
    init() {}
    init(host: String, path: String, note: String) {
        self.host = host
        self.path = path
        self.note = note
    }
    static var uniqueConstraints: [[PartialKeyPath<LongRoute>]] { [[\.host, \.path]] }
}

/// A unique long value on a model with relationships: its upserts are decided before the write.
final class LongSite: PersistentModel {
    @Attribute(.unique) var address: String = ""
    @Attribute var name: String = ""
    @Relationship(deleteRule: .cascade, inverse: \LongVisit.site) var visits: [LongVisit] = []
    init() {}
    init(address: String, name: String) {
        self.address = address
        self.name = name
    }
}

final class LongVisit: PersistentModel {
    @Attribute var day: Int = 0
    @Relationship var site: LongSite? = nil
    init() {}
    init(day: Int) { self.day = day }
}

/// A unique `Data` value.
final class LongBlobKey: PersistentModel {
    @Attribute(.unique) var digest: Data = Data()
    @Attribute var size: Int = 0
    init() {}
    init(digest: Data, size: Int) {
        self.digest = digest
        self.size = size
    }
}

@Suite struct LongKeyTests {
    static var models: [any PersistentModel.Type] { [LongPage.self, LongNote.self, LongRoute.self, LongSite.self, LongVisit.self, LongBlobKey.self] }

    /// A URL-like string of exactly `length` bytes: `stem`, then a filler, then `tail`.
    static func url(_ length: Int, stem: String = "https://example.com/search?q=", tail: String = "") -> String {
        let filler = length - stem.utf8.count - tail.utf8.count
        precondition(filler >= 0)
        return stem + String(repeating: "x", count: filler) + tail
    }

    static func container(_ dir: TemporaryDirectory) throws -> ModelContainer {
        try ModelContainer(for: Schema(models), configurations: ModelConfiguration(url: dir.store()))
    }

    /// The engine's whole check of the store, with every row's index keys computed from its
    /// record by the stored schema (as `strata verify` does) and checked against the indexes.
    static func expectVerified(_ container: ModelContainer, empty: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let store = try #require(container.stores.first, sourceLocation: sourceLocation)
        let keys = try store.read { tx in try StoredModelSchema(tx)?.indexKeys(tx) }
        // (`#require` of an optional function value is taken by the macro for a value never nil.)
        #expect(keys != nil, "no stored schema", sourceLocation: sourceLocation)
        guard let keys else { return }
        let report = try store.verify(indexKeys: keys)
        #expect(report.isClean, "\(report)", sourceLocation: sourceLocation)
        #expect((report.indexEntriesChecked == 0) == empty, sourceLocation: sourceLocation)
    }

    static func page(_ context: ModelContext, url: String) throws -> [LongPage] {
        try context.fetch(FetchDescriptor<LongPage>(predicate: #Predicate { $0.url == url }))
    }

    @Test func uniqueStringsOf3000And100000Bytes() throws {
        let dir = TemporaryDirectory()
        let container = try Self.container(dir)
        let context = ModelContext(container)
        let medium = Self.url(3000), huge = Self.url(100_000, tail: "&end")
        context.insert(LongPage(url: medium, title: "medium"))
        context.insert(LongPage(url: huge, title: "huge"))
        context.insert(LongPage(url: "https://example.com/", title: "short"))
        try context.save()

        let check = ModelContext(container)
        #expect(try Self.page(check, url: medium).map(\.title) == ["medium"])
        #expect(try Self.page(check, url: huge).map(\.title) == ["huge"])
        #expect(try Self.page(check, url: huge).first?.url == huge)
        #expect(try Self.page(check, url: Self.url(3000, tail: "y")).isEmpty)
        #expect(try check.fetchCount(FetchDescriptor<LongPage>()) == 3)
        let wanted = [medium, huge]
        #expect(try check.fetchCount(FetchDescriptor<LongPage>(predicate: #Predicate { wanted.contains($0.url) })) == 2)
        let prefix = String(huge.prefix(5000))
        #expect(try check.fetch(FetchDescriptor<LongPage>(predicate: #Predicate { $0.url.starts(with: prefix) })).map(\.title) == ["huge"])
        try Self.expectVerified(container)
    }

    /// Two values that share their first 2,500 bytes (so their index keys share the 2016 an
    /// index keeps) and differ after: two objects, each found by its own value, and an insert
    /// of the second is not an upsert of the first.
    @Test func valuesSharingALongPrefixAreDifferentObjects() throws {
        let dir = TemporaryDirectory()
        let container = try Self.container(dir)
        let stem = Self.url(2500)
        let a = stem + "/alpha", b = stem + "/beta"
        do {
            let context = ModelContext(container)
            context.insert(LongPage(url: a, title: "A"))
            try context.save()
        }
        do {
            let context = ModelContext(container)
            context.insert(LongPage(url: b, title: "B"))
            try context.save()
        }
        do {
            // In one save as well, on a model whose upserts are decided before the write.
            let context = ModelContext(container)
            context.insert(LongSite(address: a, name: "site A"))
            context.insert(LongSite(address: b, name: "site B"))
            try context.save()
        }
        let check = ModelContext(container)
        #expect(try check.fetchCount(FetchDescriptor<LongPage>()) == 2)
        #expect(try Self.page(check, url: a).map(\.title) == ["A"])
        #expect(try Self.page(check, url: b).map(\.title) == ["B"])
        #expect(try Self.page(check, url: stem).isEmpty)
        #expect(try check.fetch(FetchDescriptor<LongSite>(sortBy: [SortDescriptor(\.name)])).map(\.name) == ["site A", "site B"])
        #expect(try check.fetch(FetchDescriptor<LongSite>(predicate: #Predicate { $0.address == b })).map(\.name) == ["site B"])
        try Self.expectVerified(container)
    }

    /// An insert whose long unique value equals a stored one updates that object (SwiftData's
    /// upsert), in another save and within one save; and a stored object changed to another
    /// object's long value is refused, with a message that does not print 3,000 bytes.
    @Test func identicalLongValuesUpsert() throws {
        let dir = TemporaryDirectory()
        let container = try Self.container(dir)
        let url = Self.url(3000, tail: "/same")
        let first = ModelContext(container)
        let original = LongPage(url: url, title: "first", hits: 1)
        first.insert(original)
        try first.save()
        let id = original.persistentModelID

        let second = ModelContext(container)
        second.insert(LongPage(url: url, title: "second", hits: 2))
        try second.save()
        let third = ModelContext(container)
        third.insert(LongPage(url: url, title: "third, once", hits: 3))
        third.insert(LongPage(url: url, title: "third, twice", hits: 4))
        try third.save()

        let check = ModelContext(container)
        let pages = try Self.page(check, url: url)
        #expect(pages.map(\.title) == ["third, twice"])
        #expect(pages.first?.persistentModelID == id)
        #expect(try check.fetchCount(FetchDescriptor<LongPage>()) == 1)

        // Taking another object's long value by a change is a conflict.
        let other = LongPage(url: Self.url(3000, tail: "/other"), title: "other")
        check.insert(other)
        try check.save()
        other.url = url
        #expect {
            try check.save()
        } throws: { error in
            guard let error = error as? StrataError, error.code == .uniqueConstraintViolation else { return false }
            return error.message.count < 1000
        }
        check.rollback()
        try Self.expectVerified(container)
    }

    /// What a SHA-256 collision would look like, made by hand: a row whose record holds value
    /// A while its unique index entry is the long form of value B. An insert of B is then
    /// refused (the record, not the index, says which value a row holds), not taken for an
    /// upsert of A; a fetch of B finds nothing; and verify names the row.
    @Test func aLongKeyIsConfirmedFromTheRecord() throws {
        let dir = TemporaryDirectory()
        dir.expectDamage(at: dir.store().path)   // its index entries are replaced below, on purpose
        let container = try Self.container(dir)
        let a = Self.url(3000, tail: "/a"), b = Self.url(3000, tail: "/b")
        let context = ModelContext(container)
        context.insert(LongPage(url: a, title: "A"))
        context.insert(LongSite(address: a, name: "site A"))
        try context.save()
        let store = try #require(container.stores.first)
        try store.write { tx throws in
            for (model, name) in [("LongPage", "unique:url"), ("LongSite", "unique:address")] {
                let collection = try #require(tx.collection(named: model))
                let index = try #require(tx.index(named: name, in: collection)).id
                var rows = try tx.rows(in: collection)
                let (row, record) = try #require(try rows.next())
                let key = { (value: String) in IndexKey(index, KeyEncoding.storedForm(KeyEncoding.encode(value))) }
                try tx.put(record, row: row, in: collection, indexKeys: [key(b)], previousKeys: [key(a)])
            }
        }
        for model in ["LongPage", "LongSite"] {
            let inserts = ModelContext(container)
            if model == "LongPage" { inserts.insert(LongPage(url: b, title: "B")) } else { inserts.insert(LongSite(address: b, name: "site B")) }
            #expect {
                try inserts.save()
            } throws: { error in
                (error as? StrataError)?.code == .uniqueConstraintViolation && "\(error)".contains("cannot tell them apart")
            }
        }
        let check = ModelContext(container)
        #expect(try Self.page(check, url: b).isEmpty)
        #expect(try check.fetch(FetchDescriptor<LongPage>()).map(\.url) == [a])
        let keys = try store.read { tx in try StoredModelSchema(tx)?.indexKeys(tx) }
        #expect(keys != nil, "no stored schema")
        guard let keys else { return }
        let report = try store.verify(indexKeys: keys)
        #expect(report.problems.count >= 2, "\(report)")
    }

    /// The same with relationships: the stored object's row is kept, its related objects too.
    @Test func identicalLongValuesUpsertWithRelationships() throws {
        let dir = TemporaryDirectory()
        let container = try Self.container(dir)
        let address = Self.url(5000, tail: "/site")
        let context = ModelContext(container)
        let site = LongSite(address: address, name: "before")
        let visit = LongVisit(day: 1)
        context.insert(site)
        context.insert(visit)
        visit.site = site
        try context.save()
        let row = site.persistentModelID

        let later = ModelContext(container)
        let again = LongSite(address: address, name: "after")
        let visit2 = LongVisit(day: 2)
        later.insert(again)
        later.insert(visit2)
        again.visits = [visit2]
        try later.save()

        let check = ModelContext(container)
        let sites = try check.fetch(FetchDescriptor<LongSite>(predicate: #Predicate { $0.address == address }))
        #expect(sites.map(\.name) == ["after"])
        #expect(sites.first?.persistentModelID == row)
        #expect(sites.first?.visits.map(\.day) == [2])
        #expect(try check.fetchCount(FetchDescriptor<LongSite>()) == 1)
        try Self.expectVerified(container)
    }

    @Test func compoundUniqueWithALongPart() throws {
        let dir = TemporaryDirectory()
        let container = try Self.container(dir)
        let path = Self.url(2600, stem: "/a/"), sibling = Self.url(2600, stem: "/a/", tail: "z")
        let context = ModelContext(container)
        context.insert(LongRoute(host: "one.example", path: path, note: "1"))
        context.insert(LongRoute(host: "two.example", path: path, note: "2"))
        context.insert(LongRoute(host: "one.example", path: sibling, note: "3"))
        try context.save()
        let upsert = ModelContext(container)
        upsert.insert(LongRoute(host: "one.example", path: path, note: "1 again"))
        try upsert.save()

        let check = ModelContext(container)
        let all = try check.fetch(FetchDescriptor<LongRoute>(sortBy: [SortDescriptor(\.note)]))
        #expect(all.map(\.note) == ["1 again", "2", "3"])
        let host = "one.example"
        let found = try check.fetch(FetchDescriptor<LongRoute>(predicate: #Predicate { $0.host == host && $0.path == path }))
        #expect(found.map(\.note) == ["1 again"])
        try Self.expectVerified(container)
    }

    /// A non-unique index on a long attribute: values tied over the first 2016 bytes the index
    /// keeps come back in value order both ways, and every filter the index serves answers as
    /// a scan would.
    @Test func indexedLongAttributeSortsAndFilters() throws {
        let dir = TemporaryDirectory()
        let container = try Self.container(dir)
        let stem = Self.url(2500, stem: "note ")
        let bodies = [stem + "c", stem + "a", stem + "b", stem + "a", stem, "short b", "short a", Self.url(2100, stem: "note ", tail: "m"),
                      String(repeating: "z", count: 3000)]
        let context = ModelContext(container)
        for (i, body) in bodies.enumerated() { context.insert(LongNote(body: body, number: i)) }
        try context.save()

        let check = ModelContext(container)
        for order in [SortOrder.forward, .reverse] {
            let sort = [SortDescriptor(\LongNote.body, order: order), SortDescriptor(\LongNote.number)]
            let fetched = try check.fetch(FetchDescriptor<LongNote>(sortBy: sort))
            #expect(fetched.map(\.number) == fetched.sorted(using: sort).map(\.number))
            let expected = bodies.enumerated().map { LongNote(body: $0.element, number: $0.offset) }.sorted(using: sort).map(\.number)
            #expect(fetched.map(\.number) == expected, "\(order)")
            var limited = FetchDescriptor<LongNote>(sortBy: sort)
            limited.fetchLimit = 2
            limited.fetchOffset = 1
            #expect(try check.fetch(limited).map(\.number) == Array(expected[1...2]))
        }
        func numbers(_ predicate: Predicate<LongNote>) throws -> [Int] {
            try check.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.number)])).map(\.number)
        }
        let a = stem + "a", b = stem + "b"
        #expect(try numbers(#Predicate { $0.body == a }) == [1, 3])
        #expect(try numbers(#Predicate { $0.body == stem }) == [4])
        let pair = [a, b]
        #expect(try numbers(#Predicate { pair.contains($0.body) }) == [1, 2, 3])
        // ("short …" sorts after "note …"; the value of 2,100 bytes has "m" where the others have "x".)
        #expect(try numbers(#Predicate { $0.body > a }) == [0, 2, 5, 6, 8])
        #expect(try numbers(#Predicate { $0.body < a && $0.body >= stem }) == [4])
        // hasPrefix with a prefix longer than the 2016 bytes an index keeps, and a shorter one.
        let long = String(stem.prefix(2300))
        #expect(try numbers(#Predicate { $0.body.starts(with: long) }) == [0, 1, 2, 3, 4])
        let mid = String(stem.prefix(2014))
        #expect(try numbers(#Predicate { $0.body.starts(with: mid) }) == [0, 1, 2, 3, 4, 7])
        #expect(try numbers(#Predicate { $0.body.starts(with: "short") }) == [5, 6])
        #expect(try check.fetchCount(FetchDescriptor<LongNote>(predicate: #Predicate { $0.body.starts(with: long) })) == 5)
        #expect(try check.fetchCount(FetchDescriptor<LongNote>(predicate: #Predicate { $0.body == a })) == 2)
        try Self.expectVerified(container)
    }

    @Test func deleteAndReinsert() throws {
        let dir = TemporaryDirectory()
        let container = try Self.container(dir)
        let url = Self.url(4000)
        let context = ModelContext(container)
        let page = LongPage(url: url, title: "first")
        context.insert(page)
        context.insert(LongNote(body: url, number: 1))
        try context.save()
        context.delete(page)
        try context.delete(model: LongNote.self, where: #Predicate { $0.body == url })
        try context.save()
        #expect(try Self.page(context, url: url).isEmpty)
        #expect(try context.fetchCount(FetchDescriptor<LongNote>()) == 0)
        try Self.expectVerified(container, empty: true)

        let again = ModelContext(container)
        again.insert(LongPage(url: url, title: "second"))
        again.insert(LongNote(body: url, number: 2))
        try again.save()
        let check = ModelContext(container)
        #expect(try Self.page(check, url: url).map(\.title) == ["second"])
        #expect(try check.fetch(FetchDescriptor<LongNote>(predicate: #Predicate { $0.body == url })).map(\.number) == [2])
        try Self.expectVerified(container)
    }

    /// Long keys written, the store closed and opened again: found, upserted, distinct, verified.
    @Test func reopenedStoreKeepsLongKeys() throws {
        let dir = TemporaryDirectory()
        let stem = Self.url(2500)
        let data = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        do {
            let container = try Self.container(dir)
            let context = ModelContext(container)
            context.insert(LongPage(url: stem + "1", title: "one"))
            context.insert(LongPage(url: stem + "2", title: "two"))
            context.insert(LongNote(body: stem + "1", number: 1))
            context.insert(LongBlobKey(digest: data, size: 1))
            try context.save()
        }
        let container = try Self.container(dir)
        let context = ModelContext(container)
        #expect(try Self.page(context, url: stem + "1").map(\.title) == ["one"])
        #expect(try Self.page(context, url: stem + "2").map(\.title) == ["two"])
        context.insert(LongPage(url: stem + "2", title: "two, again"))
        context.insert(LongPage(url: stem + "3", title: "three"))
        context.insert(LongBlobKey(digest: data, size: 2))
        var other = data
        other[4999] ^= 1
        context.insert(LongBlobKey(digest: other, size: 3))
        try context.save()
        let check = ModelContext(container)
        #expect(try check.fetch(FetchDescriptor<LongPage>(sortBy: [SortDescriptor(\.url)])).map(\.title) == ["one", "two, again", "three"])
        #expect(try check.fetch(FetchDescriptor<LongBlobKey>(predicate: #Predicate { $0.digest == data })).map(\.size) == [2])
        #expect(try check.fetchCount(FetchDescriptor<LongBlobKey>()) == 2)
        let one = stem + "1"
        #expect(try check.fetch(FetchDescriptor<LongNote>(predicate: #Predicate { $0.body == one })).map(\.number) == [1])
        try Self.expectVerified(container)
    }
}
