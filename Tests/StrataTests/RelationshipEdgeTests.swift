import Foundation
import Testing
import Strata

// Edges of relationships, through the public API: to-many order across saves and reopens,
// rollback of relationship edits, `.noAction`, minimum / maximum counts,
// `delete(model:where:)` with delete rules, and relationships between two stores.

final class EShelf: PersistentModel {
    @Attribute var name: String = ""
    @Relationship(deleteRule: .cascade, inverse: \EItem.shelf) var items: [EItem] = []
    init() {}
    init(_ name: String) { self.name = name }
}

final class EItem: PersistentModel {
    @Attribute var name: String = ""
    @Relationship var shelf: EShelf? = nil
    @Relationship var labels: [ELabel] = []
    init() {}
    init(_ name: String) { self.name = name }
}

final class ELabel: PersistentModel {
    @Attribute var text: String = ""
    @Relationship(inverse: \EItem.labels) var items: [EItem] = []
    init() {}
    init(_ text: String) { self.text = text }
}

final class EParent: PersistentModel {
    @Attribute var name: String = ""
    @Relationship(deleteRule: .noAction, inverse: \EChild.parent) var children: [EChild] = []
    init() {}
    init(_ name: String) { self.name = name }
}

final class EChild: PersistentModel {
    @Attribute var name: String = ""
    @Relationship var parent: EParent? = nil
    init() {}
    init(_ name: String) { self.name = name }
}

final class ECrew: PersistentModel {
    @Attribute var name: String = ""
    @Relationship(minimumModelCount: 1, maximumModelCount: 3, inverse: \EMember.crew) var members: [EMember] = []
    init() {}
    init(_ name: String) { self.name = name }
}

final class EMember: PersistentModel {
    @Attribute var name: String = ""
    @Relationship var crew: ECrew? = nil
    init() {}
    init(_ name: String) { self.name = name }
}

@Suite struct RelationshipEdgeTests {
    func container(_ url: URL, _ types: any PersistentModel.Type...) throws -> ModelContainer {
        try ModelContainer(for: Schema(types), configurations: [ModelConfiguration(url: url)])
    }

    func shelf(_ context: ModelContext, _ name: String) throws -> EShelf {
        try #require(try context.fetch(FetchDescriptor<EShelf>(predicate: #Predicate { $0.name == name })).first)
    }

    @Test func toManyOrderIsKeptAcrossSavesReordersRemovalsAndReopens() throws {
        let dir = TemporaryDirectory()
        let url = dir.store()
        do {
            let context = ModelContext(try container(url, EShelf.self))
            let a = EShelf("a"), b = EShelf("b")
            context.insert(a)
            context.insert(b)
            a.items = ["5", "3", "9", "1"].map { EItem($0) }
            let extra = EItem("7")
            extra.shelf = a                                   // the inverse side appends
            a.items.insert(EItem("0"), at: 0)                 // a new object in the middle of the order
            #expect(a.items.map(\.name) == ["0", "5", "3", "9", "1", "7"])
            let red = ELabel("red"), blue = ELabel("blue")
            a.items[2].labels = [red, blue]
            a.items[1].labels = [blue]
            red.items.append(a.items[4])
            #expect(blue.items.map(\.name) == ["3", "5"])
            #expect(red.items.map(\.name) == ["3", "1"])
            try context.save()
        }
        do {
            let context = ModelContext(try container(url, EShelf.self))
            let a = try shelf(context, "a"), b = try shelf(context, "b")
            #expect(a.items.map(\.name) == ["0", "5", "3", "9", "1", "7"])
            a.items.reverse()
            try context.save()
            #expect(a.items.map(\.name) == ["7", "1", "9", "3", "5", "0"])
            a.items.removeAll { $0.name == "9" }              // leaves a, stays in the store without a shelf
            a.items.first { $0.name == "1" }!.shelf = b       // moves to b
            a.items.swapAt(0, 1)
            b.items.append(EItem("8"))
            b.items.insert(a.items.last!, at: 0)              // "0" moves from a to the front of b
            #expect(a.items.map(\.name) == ["3", "7", "5"])
            #expect(b.items.map(\.name) == ["0", "1", "8"])
            let blue = try #require(try context.fetch(FetchDescriptor<ELabel>(predicate: #Predicate { $0.text == "blue" })).first)
            blue.items.reverse()
            try context.save()
        }
        let context = ModelContext(try container(url, EShelf.self))
        #expect(try shelf(context, "a").items.map(\.name) == ["3", "7", "5"])
        #expect(try shelf(context, "b").items.map(\.name) == ["0", "1", "8"])
        let labels = try context.fetch(FetchDescriptor<ELabel>(sortBy: [SortDescriptor(\.text)]))
        #expect(labels.map { $0.items.map(\.name) } == [["5", "3"], ["3", "1"]])
        let loose = try context.fetch(FetchDescriptor<EItem>(predicate: #Predicate { $0.shelf == nil }))
        #expect(loose.map(\.name) == ["9"])
    }

    @Test func rollbackRestoresBothSidesOfRelationshipEdits() throws {
        let dir = TemporaryDirectory()
        let store = try container(dir.store(), EShelf.self)
        let context = ModelContext(store)
        let a = EShelf("a"), b = EShelf("b")
        context.insert(a)
        context.insert(b)
        let (x, y, z) = (EItem("x"), EItem("y"), EItem("z"))
        a.items = [x, y]
        b.items = [z]
        let red = ELabel("red")
        x.labels = [red]
        try context.save()

        // Move x through its to-one, z through the to-many, reorder, relabel, add new objects.
        x.shelf = b
        a.items.append(z)
        b.items.reverse()
        red.items.append(y)
        x.labels = []
        let fresh = EItem("new")
        a.items.append(fresh)
        fresh.labels = [ELabel("blue")]
        #expect(a.items.map(\.name) == ["y", "z", "new"])
        #expect(context.hasChanges)

        context.rollback()
        #expect(!context.hasChanges)
        #expect(a.items.map(\.name) == ["x", "y"])
        #expect(b.items.map(\.name) == ["z"])
        #expect(x.shelf === a && y.shelf === a && z.shelf === b)
        #expect(x.labels.map(\.text) == ["red"])
        #expect(y.labels.isEmpty)
        #expect(red.items.map(\.name) == ["x"])
        #expect(try context.fetchCount(FetchDescriptor<EItem>()) == 3)
        #expect(try context.fetchCount(FetchDescriptor<ELabel>()) == 1)

        // A save after the rollback writes nothing of the rolled-back edits.
        a.name = "a2"
        try context.save()
        let other = ModelContext(store)
        #expect(try shelf(other, "a2").items.map(\.name) == ["x", "y"])
        #expect(try shelf(other, "b").items.map(\.name) == ["z"])
    }

    @Test func rollbackAfterADeleteRestoresTheGraph() throws {
        let dir = TemporaryDirectory()
        let store = try container(dir.store(), EShelf.self)
        let context = ModelContext(store)
        let a = EShelf("a")
        context.insert(a)
        let red = ELabel("red")
        a.items = [EItem("x"), EItem("y")]
        a.items[0].labels = [red]
        try context.save()
        context.delete(a)
        context.delete(red)
        context.rollback()
        #expect(!a.isDeleted && !red.isDeleted)
        #expect(a.items.map(\.name) == ["x", "y"])
        #expect(red.items.map(\.name) == ["x"])
        try context.save()
        #expect(try ModelContext(store).fetchCount(FetchDescriptor<EItem>()) == 2)
    }

    @Test func noActionLeavesTheRelatedObjects() throws {
        let dir = TemporaryDirectory()
        let url = dir.store()
        do {
            let context = ModelContext(try container(url, EParent.self))
            let p = EParent("p")
            context.insert(p)
            p.children = [EChild("c1"), EChild("c2")]
            try context.save()
            let c1 = p.children[0]
            context.delete(p)
            try context.save()
            // Not deleted, not nullified in memory: the deleted parent's row is gone, so it reads as nil.
            #expect(try context.fetchCount(FetchDescriptor<EChild>()) == 2)
            #expect(c1.parent == nil)
            #expect(try context.fetchCount(FetchDescriptor<EParent>()) == 0)
        }
        let context = ModelContext(try container(url, EParent.self))
        let children = try context.fetch(FetchDescriptor<EChild>(sortBy: [SortDescriptor(\.name)]))
        #expect(children.map(\.name) == ["c1", "c2"])
        #expect(children.allSatisfy { $0.parent == nil })
        #expect(try context.fetchCount(FetchDescriptor<EChild>(predicate: #Predicate { $0.parent == nil })) == 2)
        // A new parent takes them; nothing of the old one comes back.
        let q = EParent("q")
        context.insert(q)
        children[1].parent = q
        try context.save()
        #expect(q.children.map(\.name) == ["c2"])
    }

    @Test func minimumAndMaximumCountsRefuseTheSaveAndSaveNothing() throws {
        let dir = TemporaryDirectory()
        let url = dir.store()
        func isCountError(_ error: any Error) -> Bool {
            (error as? StrataError)?.code == .relationshipCount && "\(error)".contains("ECrew.members")
        }
        do {
            let context = ModelContext(try container(url, ECrew.self))
            let empty = ECrew("empty")
            context.insert(empty)
            let other = ECrew("ok")
            context.insert(other)
            other.members = [EMember("m1")]
            #expect { try context.save() } throws: { isCountError($0) }           // below the minimum
            #expect(context.hasChanges)
            #expect(try ModelContext(context.container).fetchCount(FetchDescriptor<ECrew>()) == 0)
            empty.members = (1...4).map { EMember("e\($0)") }
            #expect { try context.save() } throws: { isCountError($0) }           // above the maximum
            #expect(try ModelContext(context.container).fetchCount(FetchDescriptor<EMember>()) == 0)
            empty.members.removeLast()                                           // e4 stays, without a crew
            try context.save()                                                   // 3 and 1: fine
        }
        do {
            let context = ModelContext(try container(url, ECrew.self))
            let ok = try #require(try context.fetch(FetchDescriptor<ECrew>(predicate: #Predicate { $0.name == "ok" })).first)
            let full = try #require(try context.fetch(FetchDescriptor<ECrew>(predicate: #Predicate { $0.name == "empty" })).first)
            // Through the other side: a member moving in makes `full` hold 4.
            let m1 = ok.members[0]
            let extra = EMember("x")
            extra.crew = full
            #expect(full.members.count == 4)
            #expect { try context.save() } throws: { isCountError($0) }
            // Moving the only member out of `ok` leaves it below its minimum.
            full.members.removeLast()
            full.members.removeLast()
            m1.crew = full
            #expect(ok.members.isEmpty)
            #expect { try context.save() } throws: { isCountError($0) }
            context.rollback()
        }
        let context = ModelContext(try container(url, ECrew.self))
        let crews = try context.fetch(FetchDescriptor<ECrew>(sortBy: [SortDescriptor(\.name)]))
        #expect(crews.map { $0.members.map(\.name) } == [["e1", "e2", "e3"], ["m1"]])
        #expect(try context.fetchCount(FetchDescriptor<EMember>()) == 5)
    }

    @Test func deleteModelWhereAppliesTheDeleteRules() throws {
        let dir = TemporaryDirectory()
        let url = dir.store()
        do {
            let context = ModelContext(try container(url, EShelf.self))
            for name in ["a", "b", "c"] {
                let s = EShelf(name)
                context.insert(s)
                s.items = (1...3).map { EItem("\(name)\($0)") }
            }
            let red = ELabel("red")
            context.insert(red)
            red.items = try context.fetch(FetchDescriptor<EItem>(sortBy: [SortDescriptor(\.name)]))
            try context.save()
        }
        do {
            // A fresh context that holds none of the objects: cascade to items, nullify on labels.
            let context = ModelContext(try container(url, EShelf.self))
            try context.delete(model: EShelf.self, where: #Predicate { $0.name != "b" })
            try context.save()
            #expect(try context.fetch(FetchDescriptor<EShelf>()).map(\.name) == ["b"])
            #expect(try context.fetch(FetchDescriptor<EItem>(sortBy: [SortDescriptor(\.name)])).map(\.name) == ["b1", "b2", "b3"])
        }
        do {
            let context = ModelContext(try container(url, EShelf.self))
            let red = try #require(try context.fetch(FetchDescriptor<ELabel>()).first)
            #expect(red.items.map(\.name) == ["b1", "b2", "b3"])
            // Deleting items by a predicate through their relationship nullifies the shelf's side.
            try context.delete(model: EItem.self, where: #Predicate { $0.shelf?.name == "b" && $0.name != "b2" })
            try context.save()
            #expect(red.items.map(\.name) == ["b2"])
            #expect(try shelf(context, "b").items.map(\.name) == ["b2"])
            // Everything, without a predicate.
            try context.delete(model: EShelf.self)
            try context.save()
            #expect(try context.fetchCount(FetchDescriptor<EItem>()) == 0)
        }
        let context = ModelContext(try container(url, EShelf.self))
        #expect(try context.fetchCount(FetchDescriptor<EShelf>()) == 0)
        #expect(try context.fetchCount(FetchDescriptor<EItem>()) == 0)
        #expect(try context.fetch(FetchDescriptor<ELabel>()).first?.items.isEmpty == true)
    }

    @Test func relationshipsBetweenTwoStoresOfOneContainer() throws {
        let dir = TemporaryDirectory()
        let shelves = ModelConfiguration("shelves", schema: Schema([EShelf.self]), url: dir.store("shelves"))
        let items = ModelConfiguration("items", schema: Schema([EItem.self, ELabel.self]), url: dir.store("items"))
        let full = Schema([EShelf.self, EItem.self, ELabel.self])
        do {
            let context = ModelContext(try ModelContainer(for: full, configurations: shelves, items))
            let a = EShelf("a"), b = EShelf("b")
            context.insert(a)
            context.insert(b)
            a.items = [EItem("a1"), EItem("a2")]
            let b1 = EItem("b1")
            b1.shelf = b
            b1.labels = [ELabel("red")]
            a.items[1].labels = b1.labels
            try context.save()
        }
        do {
            let container = try ModelContainer(for: full, configurations: shelves, items)
            let context = ModelContext(container)
            // Predicates and sorts through the relationship to the other store.
            let inA = try context.fetch(FetchDescriptor<EItem>(predicate: #Predicate { $0.shelf?.name == "a" }, sortBy: [SortDescriptor(\.name, order: .reverse)]))
            #expect(inA.map(\.name) == ["a2", "a1"])
            let withRed = try context.fetch(FetchDescriptor<EShelf>(predicate: #Predicate { $0.items.contains { $0.labels.contains { $0.text == "red" } } },
                                                                    sortBy: [SortDescriptor(\.name)]))
            #expect(withRed.map(\.name) == ["a", "b"])
            let byShelf = try context.fetch(FetchDescriptor<EItem>(sortBy: [SortDescriptor(\EItem.shelf?.name, order: .reverse), SortDescriptor(\.name)]))
            #expect(byShelf.map(\.name) == ["b1", "a1", "a2"])
            // Move across, then cascade across.
            let a = try shelf(context, "a"), b = try shelf(context, "b")
            b.items.append(a.items[0])
            try context.save()
            context.delete(b)
            try context.save()
        }
        let context = ModelContext(try ModelContainer(for: full, configurations: shelves, items))
        #expect(try context.fetch(FetchDescriptor<EShelf>()).map(\.name) == ["a"])
        #expect(try context.fetch(FetchDescriptor<EItem>()).map(\.name) == ["a2"])
        let red = try #require(try context.fetch(FetchDescriptor<ELabel>()).first)
        #expect(red.items.map(\.name) == ["a2"])
        #expect(red.items.first?.shelf?.name == "a")
    }
}
