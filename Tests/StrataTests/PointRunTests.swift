// A point fetch's run is kept by its context and bound again for the next point fetch of the
// same part (`ModelContext.pointRun`), only when nothing else holds it: a run still held keeps
// its own key, and each fetch answers for its own.
import Foundation
import Testing
@testable import Strata
import StrataConformance

@Suite struct PointRunTests {
    private func store() throws -> ModelContext {
        let container = try ModelContainer(for: DiffItem.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        for i in 0..<10 {
            let item = DiffItem()
            item.uid = DiffPools.uid(i)
            item.serial = i
            context.insert(item)
        }
        try context.save()
        return context
    }

    private func key(_ run: QueryRun) -> [UInt8]? {
        if case .lookup(_, let key) = run.source { key } else { nil }
    }

    @Test func aRunStillHeldKeepsItsKey() throws {
        let context = try store()
        let a = DiffPools.uid(2), b = DiffPools.uid(7)
        let held = try context.runs(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == a }))
        let heldKey = try #require(key(held[0]))
        #expect(try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == b })).map(\.serial) == [7])
        #expect(key(held[0]) == heldKey, "a fetch bound the run another holder still reads")
        #expect(try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == a })).map(\.serial) == [2])
        #expect(key(held[0]) == heldKey)
    }

    @Test func aRunNothingHoldsIsBoundAgain() throws {
        let context = try store()
        let uids = (0..<10).map(DiffPools.uid)
        let first = uids[0]
        _ = try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == first }))
        let kept = try #require(context.pointRun.map(ObjectIdentifier.init))
        for i in [4, 9, 1, 4] {
            let uid = uids[i]
            #expect(try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == uid })).map(\.serial) == [i])
            #expect(context.pointRun.map(ObjectIdentifier.init) == kept, "the next point fetch made a run of its own")
        }
    }

    /// The row a unique key names, read without the row visitor: its page, and the context's
    /// unsaved deletions, still apply.
    @Test func aPointFetchKeepsItsPageAndTheContextsDeletions() throws {
        let context = try store()
        let uid = DiffPools.uid(3), other = DiffPools.uid(4)
        var descriptor = FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == uid })
        #expect(try context.fetch(descriptor).map(\.serial) == [3])
        descriptor.fetchOffset = 1
        #expect(try context.fetch(descriptor).isEmpty, "an offset of 1 skips the one row")
        descriptor.fetchOffset = 0
        descriptor.fetchLimit = 1
        #expect(try context.fetch(descriptor).map(\.serial) == [3])
        let item = try #require(try context.fetch(descriptor).first)
        context.delete(item)
        #expect(try context.fetch(descriptor).isEmpty, "an unsaved deletion")
        try context.delete(model: DiffItem.self, where: #Predicate { $0.uid == other })
        #expect(try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == other })).isEmpty, "an unsaved batch deletion")
        descriptor.includePendingChanges = false
        #expect(try context.fetch(descriptor).map(\.serial) == [3], "without pending changes, the stored row")
        context.rollback()
        #expect(try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == other })).map(\.serial) == [4])
    }

    /// A point fetch compiles no record test (the index's row is the answer). A fetch of the
    /// same predicate that cannot take the row untested, one with a sort, tests the row the
    /// index gives on its object, and answers the same, with the context's changes.
    @Test func aPointFetchWithASortTestsTheIndexsRow() throws {
        let context = try store()
        let uid = DiffPools.uid(5), missing = DiffPools.uid(99)
        let plain = FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == uid })
        var sorted = FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == uid }, sortBy: [SortDescriptor(\.serial)])
        #expect(try context.fetch(plain).map(\.serial) == [5])
        #expect(try context.fetch(sorted).map(\.serial) == [5])
        #expect(try context.fetchCount(sorted) == 1)
        #expect(try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.uid == missing }, sortBy: [SortDescriptor(\.serial)])).isEmpty)
        // An unsaved change to the row, seen with pending changes, not without.
        let item = try #require(try context.fetch(plain).first)
        item.serial = 50
        #expect(try context.fetch(sorted).map(\.serial) == [50])
        sorted.includePendingChanges = false
        #expect(try context.fetch(sorted).map { $0.uid } == [uid])
        // Another object changed to the key, unsaved: both hold it until the save (a unique
        // conflict then), and the sort orders them.
        let other = try #require(try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.serial == 8 })).first)
        other.uid = uid
        sorted.includePendingChanges = true
        #expect(try context.fetch(sorted).map(\.serial) == [8, 50])
        context.rollback()
        #expect(try context.fetch(sorted).map(\.serial) == [5])
        try context.delete(model: DiffItem.self, where: #Predicate { $0.uid == uid })
        #expect(try context.fetch(sorted).isEmpty)
        #expect(try context.fetch(plain).isEmpty)
    }

    /// A predicate on `persistentModelID` reads the rows its identifiers name (no scan); one on
    /// another property does not, whatever its type.
    @Test func identifierPredicatesReadTheirRows() throws {
        let context = try store()
        let items = try context.fetch(FetchDescriptor<DiffItem>(sortBy: [SortDescriptor(\.serial)]))
        let id = items[3].persistentModelID, ids = [items[1].persistentModelID, items[6].persistentModelID]
        func rows(_ run: QueryRun) -> Int? { if case .rows(let rows) = run.source { rows.count } else { nil } }
        let one = try context.runs(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.persistentModelID == id }))
        #expect(rows(one[0]) == 1)
        #expect(try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.persistentModelID == id })).map(\.serial) == [3])
        let flipped = try context.runs(FetchDescriptor(predicate: #Predicate<DiffItem> { id == $0.persistentModelID }))
        #expect(rows(flipped[0]) == 1)
        let some = try context.runs(FetchDescriptor(predicate: #Predicate<DiffItem> { ids.contains($0.persistentModelID) }))
        #expect(rows(some[0]) == 2)
        #expect(try context.fetch(FetchDescriptor(predicate: #Predicate<DiffItem> { ids.contains($0.persistentModelID) }, sortBy: [SortDescriptor(\.serial)])).map(\.serial) == [1, 6])
        let serial = 4
        let other = try context.runs(FetchDescriptor(predicate: #Predicate<DiffItem> { $0.serial == serial }))
        #expect(rows(other[0]) == nil)
    }
}
