import Foundation
import Strata

func shelf(_ context: ModelContext, _ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> ConfShelf {
    try require(try context.fetch(FetchDescriptor<ConfShelf>(predicate: #Predicate { $0.name == name })).first, "no shelf \(name)", file: file, line: line)
}

func yard(_ context: ModelContext, _ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> ConfYard {
    try require(try context.fetch(FetchDescriptor<ConfYard>(predicate: #Predicate { $0.name == name })).first, "no yard \(name)", file: file, line: line)
}

extension Conformance {
    static let relationshipScenarios: [ConformanceScenario] = [
        ConformanceScenario("settingOneSideUpdatesTheOther", from: "RelationshipTests.settingOneSideUpdatesTheOtherAndBothSurviveAReopen, JSONCustomStoreTests.toOneAndToManyRelationships") { env in
            let s = try env.open(ConfAuthor.self, ConfBook.self)
            do {
                let context = ModelContext(s.container)
                let ada = ConfAuthor("Ada")
                context.insert(ada)
                let notes = ConfBook("Notes")
                notes.author = ada                       // the to-one side
                try checkEqual(ada.books.map(\.title), ["Notes"])
                let letters = ConfBook("Letters")
                ada.books.append(letters)                // the to-many side
                try checkIdentical(letters.author, ada)
                try checkEqual(context.insertedModelsArray.count, 3, "related new objects are inserted with it")
                try context.save()
                try check(!notes.persistentModelID.isTemporary && !letters.persistentModelID.isTemporary)
                try checkIdentical(ada.books.first, notes, "the same objects after the save")
            }
            let context = ModelContext(try s.reopen())
            let authors = try context.fetch(FetchDescriptor<ConfAuthor>())
            try checkEqual(authors.count, 1)
            let ada = try require(authors.first)
            try checkEqual(ada.books.map(\.title), ["Notes", "Letters"], "order kept")
            try check(ada.books.allSatisfy { $0.author === ada }, "both sides are the same objects")
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfBook>()), 2)
            let books = try context.fetch(FetchDescriptor<ConfBook>(sortBy: [SortDescriptor(\.title)]))
            try check(books.allSatisfy { $0.author === ada }, "fetched from the other side")
        },

        ConformanceScenario("movingAToOneTakesTheObjectFromItsPreviousOwner", from: "RelationshipTests.movingAToOneTakesTheObjectFromItsPreviousOwner") { env in
            let s = try env.open(ConfAuthor.self, ConfBook.self)
            do {
                let context = ModelContext(s.container)
                let a = ConfAuthor("A"), b = ConfAuthor("B")
                context.insert(a)
                context.insert(b)
                let book = ConfBook("T")
                a.books = [book]
                try context.save()
                book.author = b
                try check(a.books.isEmpty)
                try checkEqual(b.books.map(\.title), ["T"])
                try context.save()
            }
            let authors = try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfAuthor>(sortBy: [SortDescriptor(\.name)]))
            try checkEqual(authors.map { $0.books.count }, [0, 1])
            try checkEqual(authors[1].books.first?.author?.name, "B")
        },

        ConformanceScenario("manyToManyWithAnExplicitInverse", from: "RelationshipTests.manyToManyWithAnExplicitInverse") { env in
            let s = try env.open(ConfStudent.self, ConfLesson.self)
            do {
                let context = ModelContext(s.container)
                let s1 = ConfStudent("s1"), s2 = ConfStudent("s2")
                let math = ConfLesson("math"), art = ConfLesson("art")
                context.insert(s1)
                context.insert(s2)
                s1.lessons = [math, art]
                s2.lessons.append(math)
                try checkEqual(math.students.map(\.name), ["s1", "s2"])
                try checkEqual(art.students.map(\.name), ["s1"])
                try context.save()
                s2.lessons.append(art)
                s1.lessons.removeAll { $0 === math }
                try checkEqual(math.students.map(\.name), ["s2"])
                try context.save()
            }
            let context = ModelContext(try s.reopen())
            let lessons = try context.fetch(FetchDescriptor<ConfLesson>(sortBy: [SortDescriptor(\.topic)]))
            try checkEqual(lessons.map { $0.students.map(\.name).sorted() }, [["s1", "s2"], ["s2"]])
            let students = try context.fetch(FetchDescriptor<ConfStudent>(sortBy: [SortDescriptor(\.name)]))
            try checkEqual(students.map { $0.lessons.map(\.topic) }, [["art"], ["math", "art"]], "each side keeps its order")
        },

        ConformanceScenario("toManyOrderIsKeptAcrossSavesAndReopens", from: "RelationshipEdgeTests.toManyOrderIsKeptAcrossSavesReordersRemovalsAndReopens") { env in
            let s = try env.open(ConfShelf.self, ConfItem.self, ConfLabel.self)
            do {
                let context = ModelContext(s.container)
                let a = ConfShelf("a"), b = ConfShelf("b")
                context.insert(a)
                context.insert(b)
                a.items = ["5", "3", "9", "1"].map { ConfItem($0) }
                let extra = ConfItem("7")
                extra.shelf = a                                    // the inverse side appends
                a.items.insert(ConfItem("0"), at: 0)               // a new object in the middle of the order
                try checkEqual(a.items.map(\.name), ["0", "5", "3", "9", "1", "7"])
                let red = ConfLabel("red"), blue = ConfLabel("blue")
                a.items[2].labels = [red, blue]
                a.items[1].labels = [blue]
                red.items.append(a.items[4])
                try checkEqual(blue.items.map(\.name), ["3", "5"])
                try checkEqual(red.items.map(\.name), ["3", "1"])
                try context.save()
            }
            do {
                let context = ModelContext(try s.reopen())
                let a = try shelf(context, "a"), b = try shelf(context, "b")
                try checkEqual(a.items.map(\.name), ["0", "5", "3", "9", "1", "7"])
                a.items.reverse()
                try context.save()
                try checkEqual(a.items.map(\.name), ["7", "1", "9", "3", "5", "0"])
                a.items.removeAll { $0.name == "9" }                // leaves a, stays in the store without a shelf
                try require(a.items.first { $0.name == "1" }).shelf = b   // moves to b
                a.items.swapAt(0, 1)
                b.items.append(ConfItem("8"))
                b.items.insert(try require(a.items.last), at: 0)    // "0" moves from a to the front of b
                try checkEqual(a.items.map(\.name), ["3", "7", "5"])
                try checkEqual(b.items.map(\.name), ["0", "1", "8"])
                let blue = try require(try context.fetch(FetchDescriptor<ConfLabel>(predicate: #Predicate { $0.text == "blue" })).first)
                blue.items.reverse()
                try context.save()
            }
            let context = ModelContext(try s.reopen())
            try checkEqual(try shelf(context, "a").items.map(\.name), ["3", "7", "5"])
            try checkEqual(try shelf(context, "b").items.map(\.name), ["0", "1", "8"])
            let labels = try context.fetch(FetchDescriptor<ConfLabel>(sortBy: [SortDescriptor(\.text)]))
            try checkEqual(labels.map { $0.items.map(\.name) }, [["5", "3"], ["3", "1"]])
            let loose = try context.fetch(FetchDescriptor<ConfItem>(predicate: #Predicate { $0.shelf == nil }))
            try checkEqual(loose.map(\.name), ["9"])
        },

        ConformanceScenario("rollbackRestoresRelationshipEdits", from: "RelationshipEdgeTests.rollbackRestoresBothSidesOfRelationshipEdits, RelationshipEdgeTests.rollbackAfterADeleteRestoresTheGraph") { env in
            let s = try env.open(ConfShelf.self, ConfItem.self, ConfLabel.self)
            let context = ModelContext(s.container)
            let a = ConfShelf("a"), b = ConfShelf("b")
            context.insert(a)
            context.insert(b)
            let (x, y, z) = (ConfItem("x"), ConfItem("y"), ConfItem("z"))
            a.items = [x, y]
            b.items = [z]
            let red = ConfLabel("red")
            x.labels = [red]
            try context.save()

            x.shelf = b
            a.items.append(z)
            b.items.reverse()
            red.items.append(y)
            x.labels = []
            let fresh = ConfItem("new")
            a.items.append(fresh)
            fresh.labels = [ConfLabel("blue")]
            try checkEqual(a.items.map(\.name), ["y", "z", "new"])
            context.rollback()
            try check(!context.hasChanges)
            try checkEqual(a.items.map(\.name), ["x", "y"])
            try checkEqual(b.items.map(\.name), ["z"])
            try check(x.shelf === a && y.shelf === a && z.shelf === b)
            try checkEqual(x.labels.map(\.text), ["red"])
            try check(y.labels.isEmpty)
            try checkEqual(red.items.map(\.name), ["x"])
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfItem>()), 3)
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfLabel>()), 1)

            // Deletions rolled back restore the graph too.
            context.delete(a)
            context.delete(red)
            context.rollback()
            try check(!a.isDeleted && !red.isDeleted)
            try checkEqual(a.items.map(\.name), ["x", "y"])
            try checkEqual(red.items.map(\.name), ["x"])

            a.name = "a2"
            try context.save()
            let other = ModelContext(try s.reopen())
            try checkEqual(try shelf(other, "a2").items.map(\.name), ["x", "y"])
            try checkEqual(try shelf(other, "b").items.map(\.name), ["z"])
            try checkEqual(try other.fetchCount(FetchDescriptor<ConfItem>()), 3)
        },

        ConformanceScenario("aToManyHoldsAnObjectOnce", from: "ToManyMembershipTests.anObjectSetThroughItsToOneAndAppendedIsHeldOnce, ToManyMembershipTests.anObjectAppendedTwiceToAStoredListIsHeldOnce") { env in
            let s = try env.open(ConfYard.self, ConfShrub.self, ConfVisit.self)
            do {
                let context = ModelContext(s.container)
                let back = ConfYard("back")
                context.insert(back)
                let visit = ConfVisit(1)
                visit.yard = back                        // puts the visit in back.visits
                back.visits.append(visit)                // and Backyard Birds appends it too
                try checkEqual(back.visits.count, 1)
                let second = ConfVisit(2)
                back.visits = [visit, second, visit]     // each object once, where it was first put
                try checkEqual(back.visits.map(\.number), [1, 2])
                try context.save()
            }
            do {
                let context = ModelContext(try s.reopen())
                let back = try yard(context, "back")
                try checkEqual(back.visits.map(\.number), [1, 2])
                let visit = try require(back.visits.first)
                let third = ConfVisit(3)
                third.yard = back
                back.visits.append(third)
                back.visits.append(visit)
                try checkEqual(back.visits.map(\.number), [1, 2, 3])
                try context.save()
            }
            try checkEqual(try yard(ModelContext(try s.reopen()), "back").visits.map(\.number), [1, 2, 3])
        },

        ConformanceScenario("twoListsNamingOneInverse", from: "ToManyMembershipTests.twoListsNamingOneInverseEachKeepTheirObjects, ToManyMembershipTests.theToOneOfAnObjectInTheSecondListMovesItOut, ToManyMembershipTests.deletingAnObjectOfTheSecondListTakesItOutOfThatList") { env in
            let s = try env.open(ConfYard.self, ConfShrub.self, ConfVisit.self)
            do {
                let context = ModelContext(s.container)
                let back = ConfYard("back"), front = ConfYard("front")
                context.insert(back)
                context.insert(front)
                let (rose, fern, ivy, oak) = (ConfShrub("rose"), ConfShrub("fern"), ConfShrub("ivy"), ConfShrub("oak"))
                back.leadingShrubs = [rose, fern]
                back.trailingShrubs = [ivy, oak]
                try check([rose, fern, ivy].allSatisfy { $0.yard === back })
                // Setting the to-one alone: it leaves every list of the old yard, and joins the
                // new yard's first declared list.
                oak.yard = front
                try checkEqual(back.trailingShrubs.map(\.name), ["ivy"])
                try checkEqual(front.leadingShrubs.map(\.name), ["oak"])
                front.leadingShrubs = []
                try check(oak.yard == nil)
                front.trailingShrubs = [oak]
                try checkIdentical(oak.yard, front)
                try context.save()
            }
            do {
                let context = ModelContext(try s.reopen())
                let back = try yard(context, "back"), front = try yard(context, "front")
                try checkEqual(back.leadingShrubs.map(\.name), ["rose", "fern"])
                try checkEqual(back.trailingShrubs.map(\.name), ["ivy"])
                try checkEqual(front.leadingShrubs.map(\.name), [])
                try checkEqual(front.trailingShrubs.map(\.name), ["oak"])
                let shrubs = try context.fetch(FetchDescriptor<ConfShrub>(sortBy: [SortDescriptor(\.name)]))
                try checkEqual(shrubs.map { $0.yard?.name ?? "-" }, ["back", "back", "front", "back"])
                // Deleting an object of the second list takes it out of that list.
                context.delete(try require(back.trailingShrubs.first))
                try context.save()
                try check(back.trailingShrubs.isEmpty)
            }
            let back = try yard(ModelContext(try s.reopen()), "back")
            try checkEqual(back.trailingShrubs.map(\.name), [])
            try checkEqual(back.leadingShrubs.map(\.name), ["rose", "fern"])
        },
    ]
}
