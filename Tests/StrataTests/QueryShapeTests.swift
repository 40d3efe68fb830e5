import Foundation
import Testing
import Strata
import StrataConformance

// A query is compiled once per shape and reused for later fetches of that shape with other
// values. These fetches share one container (one cache) and alternate between predicates whose
// expression trees have the same type but differ in what the shape holds besides constants:
// the key path, the operator, the sort. Each answer must be Foundation's for that predicate, so
// a plan cached for one shape never answers for another.
@Suite struct QueryShapeTests {
    private func store() throws -> (ModelContext, [DiffItem]) {
        let container = try ModelContainer(for: DiffItem.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        var items: [DiffItem] = []
        for i in 0..<60 {
            let item = DiffItem()
            item.uid = DiffPools.uid(i)
            item.serial = i
            item.rank = i % 7
            item.level = (i * 3) % 5
            item.score = Double(i % 11)
            item.name = "n\(i % 9)"
            item.title = "t\(i % 4)"
            item.flag = i % 2 == 0
            context.insert(item)
            items.append(item)
        }
        try context.save()
        return (context, items)
    }

    private func check(_ context: ModelContext, _ items: [DiffItem], _ predicate: Predicate<DiffItem>, sort: [SortDescriptor<DiffItem>] = [],
                       _ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let want = try items.filter { try predicate.evaluate($0) }.sorted(using: sort).map(\.serial)
        let got = try context.fetch(FetchDescriptor(predicate: predicate, sortBy: sort)).map(\.serial)
        #expect(got == want, "\(what)", sourceLocation: sourceLocation)
        #expect(try context.fetchCount(FetchDescriptor(predicate: predicate)) == want.count, "\(what): count", sourceLocation: sourceLocation)
    }

    /// A fetch by a unique value binds the run its context kept from the last one, writing its
    /// key over the last key (`ModelContext.pointRun`): fetches one after another, a fetch
    /// inside an enumeration of another point fetch, and a count between them each find their
    /// own row.
    @Test func pointFetchesOneAfterAnotherAndNestedFindTheirOwnRows() throws {
        let (context, items) = try store()
        for i in [3, 17, 3, 59, 0, 0] {
            let uid = items[i].uid
            #expect(try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == uid })).map(\.serial) == [i])
            #expect(try context.fetchCount(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == uid })) == 1)
        }
        let missing = DiffPools.uid(1_000)
        #expect(try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == missing })).isEmpty)
        let outer = items[5].uid, inner = items[40].uid
        var seen: [[Int]] = []
        try context.enumerate(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == outer })) { item in
            let found = try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == inner })).map(\.serial)
            let again = try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == outer })).map(\.serial)
            seen.append([item.serial] + found + again)
        }
        #expect(seen == [[5, 40, 5]])
        let last = items[7].uid
        #expect(try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == last })).map(\.serial) == [7])
    }

    @Test func anotherKeyPathOfTheSameTypeIsAnotherShape() throws {
        let (context, items) = try store()
        for round in 0..<3 {
            let x = round + 1
            try check(context, items, #Predicate { $0.rank == x }, "rank == \(x)")        // indexed
            try check(context, items, #Predicate { $0.level == x }, "level == \(x)")      // not indexed, same tree type
            try check(context, items, #Predicate { $0.serial == x }, "serial == \(x)")
        }
    }

    @Test func anotherOperatorIsAnotherShape() throws {
        let (context, items) = try store()
        for x in [2, 4] {
            try check(context, items, #Predicate { $0.rank < x }, "rank < \(x)")
            try check(context, items, #Predicate { $0.rank > x }, "rank > \(x)")
            try check(context, items, #Predicate { $0.rank <= x }, "rank <= \(x)")
            try check(context, items, #Predicate { $0.rank >= x }, "rank >= \(x)")
            try check(context, items, #Predicate { $0.level + 1 > x }, "level + 1 > \(x)")
            try check(context, items, #Predicate { $0.level - 1 > x }, "level - 1 > \(x)")
            try check(context, items, #Predicate { $0.level * 2 > x }, "level * 2 > \(x)")
        }
    }

    @Test func theSameShapeWithOtherValuesGivesTheirAnswers() throws {
        let (context, items) = try store()
        for name in ["n1", "n3", "missing", "n1"] {
            try check(context, items, #Predicate { $0.name == name && $0.flag }, "name == \(name) && flag")
        }
        for (a, b) in [(1.0, 5.0), (3.0, 4.0), (9.0, 2.0)] {
            try check(context, items, #Predicate { $0.score >= a && $0.score < b }, "\(a) <= score < \(b)")
        }
        let some = Array(items.prefix(5).map(\.uid)), others = Array(items.suffix(3).map(\.uid))
        try check(context, items, #Predicate { some.contains($0.uid) }, "uid in first five")
        try check(context, items, #Predicate { others.contains($0.uid) }, "uid in last three")
    }

    @Test func anotherSortIsAnotherShape() throws {
        let (context, items) = try store()
        let x = 3
        let predicate = #Predicate<DiffItem> { $0.rank != x }
        try check(context, items, predicate, sort: [SortDescriptor(\.score)], "by score")
        try check(context, items, predicate, sort: [SortDescriptor(\.score, order: .reverse)], "by score desc")
        try check(context, items, predicate, sort: [SortDescriptor(\.level), SortDescriptor(\.serial, order: .reverse)], "by level, serial desc")
        try check(context, items, predicate, sort: [SortDescriptor(\.name)], "by name")
        try check(context, items, predicate, "unsorted")
    }

    @Test func aPredicateOnTheOtherSideOfTheOperatorIsAnotherShape() throws {
        let (context, items) = try store()
        let x = 3
        try check(context, items, #Predicate { $0.rank < x }, "rank < 3")
        try check(context, items, #Predicate { x < $0.rank }, "3 < rank")
        try check(context, items, #Predicate { $0.level < $0.rank }, "level < rank")
        try check(context, items, #Predicate { $0.rank < $0.level }, "rank < level")
    }

    /// A descriptor keeps what the query layer reads beside its public properties (the
    /// predicate's parts, the number of sort descriptors, the key paths): changing a property
    /// after the descriptor is made, in place or whole, must change what a fetch does.
    @Test func aDescriptorChangedAfterItIsMadeFetchesWhatItNowSays() throws {
        let (context, items) = try store()
        let x = 3
        var descriptor = FetchDescriptor<DiffItem>()
        #expect(try context.fetch(descriptor).map(\.serial) == items.map(\.serial))
        descriptor.predicate = #Predicate { $0.rank == x }
        #expect(descriptor.predicate != nil)
        #expect(try context.fetch(descriptor).map(\.serial) == items.filter { $0.rank == x }.map(\.serial))
        descriptor.sortBy.append(SortDescriptor(\.serial, order: .reverse))
        #expect(descriptor.sortBy.count == 1)
        #expect(try context.fetch(descriptor).map(\.serial) == items.filter { $0.rank == x }.map(\.serial).reversed())
        descriptor.sortBy.removeAll()
        #expect(try context.fetch(descriptor).map(\.serial) == items.filter { $0.rank == x }.map(\.serial))
        descriptor.sortBy = [SortDescriptor(\.score), SortDescriptor(\.serial)]
        let byScore = items.filter { $0.rank == x }.sorted(using: descriptor.sortBy).map(\.serial)
        #expect(try context.fetch(descriptor).map(\.serial) == byScore)
        descriptor.predicate = nil
        #expect(descriptor.predicate == nil)
        #expect(try context.fetchCount(descriptor) == items.count)
        descriptor.propertiesToFetch = [\.serial, \.name]
        descriptor.relationshipKeyPathsForPrefetching = [\.name]
        #expect(descriptor.propertiesToFetch == [\DiffItem.serial, \DiffItem.name])
        #expect(descriptor.relationshipKeyPathsForPrefetching == [\DiffItem.name])
        #expect(try context.fetch(descriptor).map(\.serial) == items.sorted(using: descriptor.sortBy).map(\.serial))
    }

    /// Constants are read in place from the predicate when their type is the one a plan
    /// wants; an optional constant is read through `Any` as Foundation does, so that a captured
    /// nil on an indexed optional property finds the objects that hold nil, and a captured
    /// value the ones that hold it.
    @Test func capturedOptionalConstantsOnAnIndexedOptionalGiveFoundationsAnswers() throws {
        let (context, items) = try store()
        for (i, item) in items.enumerated() where i % 3 != 0 { item.nickname = "k\(i % 5)" }
        try context.save()
        for wanted in [nil, "k2", "k9"] as [String?] {
            try check(context, items, #Predicate { $0.nickname == wanted }, "nickname == \(wanted ?? "nil")")
            try check(context, items, #Predicate { $0.nickname != wanted }, "nickname != \(wanted ?? "nil")")
            try check(context, items, #Predicate { wanted == $0.nickname && $0.rank > 2 }, "\(wanted ?? "nil") == nickname && rank > 2")
        }
        for low in ["k1", "k3"] {
            try check(context, items, #Predicate { $0.name > low }, "name > \(low)")
        }
    }
}
