import Foundation
import Strata

extension Conformance {
    static let deleteRuleScenarios: [ConformanceScenario] = [
        ConformanceScenario("cascadeDeletesTheRelatedObjects", from: "RelationshipTests.predicatesAndSortsThroughRelationships (cascade), DeleteRulesOnRowsTests.aCascadeOverUnregisteredRowsDeletesThemAndSparesOthers") { env in
            let s = try env.open(ConfVoyage.self, ConfPort.self)
            do {
                let context = ModelContext(s.container)
                let long = ConfVoyage("long"), short = ConfVoyage("short")
                context.insert(long)
                context.insert(short)
                long.ports = (0..<60).map { ConfPort("p\($0)") }
                short.ports = (0..<3).map { ConfPort("s\($0)") }
                try context.save()
            }
            let context = ModelContext(try s.reopen())
            let long = try require(try context.fetch(FetchDescriptor<ConfVoyage>(predicate: #Predicate { $0.name == "long" })).first)
            // One port is held by the application: it leaves its context with the cascade.
            let held = try require(try context.fetch(FetchDescriptor<ConfPort>(predicate: #Predicate { $0.city == "p7" })).first)
            context.delete(long)
            try context.save()
            try check(held.modelContext == nil && !held.isDeleted, "a held object deleted by the cascade leaves its context")
            let fresh = ModelContext(try s.reopen())
            try checkEqual(try fresh.fetchCount(FetchDescriptor<ConfPort>()), 3)
            try checkEqual(try fresh.fetch(FetchDescriptor<ConfVoyage>()).map(\.name), ["short"])
            try checkEqual(try fresh.fetch(FetchDescriptor<ConfVoyage>()).first?.ports.map(\.city), ["s0", "s1", "s2"])
        },

        ConformanceScenario("selfReferentialCascadeThroughManyLevels", from: "RelationshipTests.selfReferentialCascadeDeletesThroughManyLevels") { env in
            let s = try env.open(ConfFolder.self)
            let context = ModelContext(s.container)
            let root = ConfFolder("root")
            context.insert(root)
            context.insert(ConfFolder("other"))
            var level = root
            for depth in 1...5 {
                let child = ConfFolder("d\(depth)")
                level.children.append(child)
                child.children.append(ConfFolder("leaf\(depth)"))
                level = child
            }
            try checkIdentical(root.children.first?.parent, root)
            try context.save()
            try checkEqual(try ModelContext(try s.reopen()).fetchCount(FetchDescriptor<ConfFolder>()), 12)
            let reader = ModelContext(try s.reopen())
            let d3 = try require(try reader.fetch(FetchDescriptor<ConfFolder>(predicate: #Predicate { $0.name == "d3" })).first)
            try checkEqual(d3.parent?.name, "d2")
            try checkEqual(d3.children.map(\.name), ["leaf3", "d4"])
            context.delete(root)
            try context.save()
            try checkEqual(try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfFolder>()).map(\.name), ["other"])
        },

        ConformanceScenario("nullifyRemovesTheDeletedObjectFromTheInverse", from: "RelationshipTests.nullifyRemovesTheDeletedObjectFromTheInverse, DeleteRulesOnRowsTests.nullifyEditsTheStoredRowOfTheOtherSide") { env in
            let s = try env.open(ConfAuthor.self, ConfBook.self)
            do {
                let context = ModelContext(s.container)
                let a = ConfAuthor("A")
                context.insert(a)
                a.books = [ConfBook("One"), ConfBook("Two"), ConfBook("Three")]
                try context.save()
            }
            do {
                // Only the book is fetched: its author is edited without the context holding it.
                let context = ModelContext(try s.reopen())
                let two = try require(try context.fetch(FetchDescriptor<ConfBook>(predicate: #Predicate { $0.title == "Two" })).first)
                context.delete(two)
                try context.save()
                let author = try require(try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfAuthor>()).first)
                try checkEqual(author.books.map(\.title), ["One", "Three"])
            }
            do {
                let context = ModelContext(try s.reopen())
                let author = try require(try context.fetch(FetchDescriptor<ConfAuthor>()).first)
                let books = author.books
                context.delete(author)
                try context.save()
                try check(books.allSatisfy { $0.author == nil }, "nullified in memory")
            }
            let books = try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfBook>(sortBy: [SortDescriptor(\.title)]))
            try checkEqual(books.map(\.title), ["One", "Three"])
            try check(books.allSatisfy { $0.author == nil }, "and in the store")
        },

        ConformanceScenario("aReferenceWithoutAnInverseToADeletedObjectReadsAsNone", from: "GraphDifferentialTests (GOwner.friend, on PostgreSQL)") { env in
            let s = try env.open(ConfFan.self, ConfSong.self)
            let context = ModelContext(s.container)
            let ada = ConfFan("Ada"), bob = ConfFan("Bob"), cy = ConfFan("Cy"), dee = ConfFan("Dee")
            let one = ConfSong("one"), two = ConfSong("two"), three = ConfSong("three")
            for object in [ada, bob, cy, dee] as [any PersistentModel] + [one, two, three] { context.insert(object) }
            ada.mentor = bob
            cy.mentor = bob
            ada.favorites = [one, two, three]
            try context.save()

            // Deleted by one save; the objects that named them are changed and saved after.
            context.delete(bob)
            context.delete(two)
            try context.save()
            func state(_ context: ModelContext) throws -> [String] {
                try context.fetch(FetchDescriptor<ConfFan>(sortBy: [SortDescriptor(\.name)])).map { person in
                    "\(person.name): mentor \(person.mentor?.name ?? "none"), favorites \(person.favorites.map(\.title))"
                }
            }
            let afterDelete = ["Ada: mentor none, favorites [\"one\", \"three\"]", "Cy: mentor none, favorites []", "Dee: mentor none, favorites []"]
            try checkEqual(try state(context), afterDelete, "the deleted mentor and song, as the context reads them")
            ada.name = "Ada L."
            cy.name = "Cy L."
            try context.save()

            // Named and deleted in one save, with the change of the object that names it.
            cy.mentor = dee
            ada.favorites.insert(ConfSong("four"), at: 0)
            context.delete(dee)
            cy.name = "Cy"
            ada.name = "Ada"
            try context.save()
            let expected = ["Ada: mentor none, favorites [\"four\", \"one\", \"three\"]", "Cy: mentor none, favorites []"]
            try checkEqual(try state(context), expected, "this context")
            let other = ModelContext(try s.reopen())
            try checkEqual(try state(other), expected, "another container")
            try checkEqual(try other.fetchCount(FetchDescriptor<ConfFan>(predicate: #Predicate { $0.mentor == nil })), 2, "mentor == nil")
            try checkEqual(try other.fetchCount(FetchDescriptor<ConfSong>()), 3, "the songs left")
        },

        ConformanceScenario("denyRefusesTheSaveAndSavesNothing", from: "RelationshipTests.denyRefusesTheSaveAndSavesNothing, DeleteRulesOnRowsTests.denyCountsUnregisteredRows") { env in
            let s = try env.open(ConfVault.self, ConfVaultKey.self)
            do {
                let context = ModelContext(s.container)
                let vault = ConfVault("v")
                context.insert(vault)
                vault.keys = [ConfVaultKey("k")]
                let empty = ConfVault("empty")
                context.insert(empty)
                try context.save()
                context.delete(vault)
                let error = try checkThrows(.deleteDenied) { try context.save() }
                try check("\(error)".contains("ConfVault.keys"), "the error names the relationship: \(error)")
                try check(context.hasChanges, "the context keeps its changes")
                context.rollback()
            }
            do {
                // A vault whose keys the context does not hold.
                let context = ModelContext(try s.reopen())
                let vault = try require(try context.fetch(FetchDescriptor<ConfVault>(predicate: #Predicate { $0.label == "v" })).first)
                context.delete(vault)
                try checkThrows(.deleteDenied) { try context.save() }
                context.rollback()
                // A vault without keys may go.
                context.delete(try require(try context.fetch(FetchDescriptor<ConfVault>(predicate: #Predicate { $0.label == "empty" })).first))
                try context.save()
            }
            let fresh = ModelContext(try s.reopen())
            try checkEqual(try fresh.fetch(FetchDescriptor<ConfVault>()).map(\.label), ["v"])
            try checkEqual(try fresh.fetchCount(FetchDescriptor<ConfVaultKey>()), 1)
        },

        ConformanceScenario("noActionLeavesTheRelatedObjects", from: "RelationshipEdgeTests.noActionLeavesTheRelatedObjects") { env in
            let s = try env.open(ConfParent.self, ConfChild.self)
            do {
                let context = ModelContext(s.container)
                let p = ConfParent("p")
                context.insert(p)
                p.children = [ConfChild("c1"), ConfChild("c2")]
                try context.save()
                let c1 = p.children[0]
                context.delete(p)
                try context.save()
                try checkEqual(try context.fetchCount(FetchDescriptor<ConfChild>()), 2, "not deleted")
                try check(c1.parent == nil, "the deleted parent reads as nil")
                try checkEqual(try context.fetchCount(FetchDescriptor<ConfParent>()), 0)
            }
            let context = ModelContext(try s.reopen())
            let children = try context.fetch(FetchDescriptor<ConfChild>(sortBy: [SortDescriptor(\.name)]))
            try checkEqual(children.map(\.name), ["c1", "c2"])
            try check(children.allSatisfy { $0.parent == nil })
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfChild>(predicate: #Predicate { $0.parent == nil })), 2)
            // A new parent takes one; nothing of the old one comes back.
            let q = ConfParent("q")
            context.insert(q)
            children[1].parent = q
            try context.save()
            try checkEqual(q.children.map(\.name), ["c2"])
            let again = try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfParent>())
            try checkEqual(again.map { $0.children.map(\.name) }, [["c2"]])
        },

        ConformanceScenario("minimumAndMaximumCounts", from: "RelationshipEdgeTests.minimumAndMaximumCountsRefuseTheSaveAndSaveNothing, DeleteRulesOnRowsTests.aNullifyBelowTheMinimumCountRefusesTheSave") { env in
            let s = try env.open(ConfCrew.self, ConfMember.self)
            func isCountError(_ error: StrataError) -> Bool { "\(error)".contains("ConfCrew.members") }
            do {
                let context = ModelContext(s.container)
                let empty = ConfCrew("empty")
                context.insert(empty)
                let ok = ConfCrew("ok")
                context.insert(ok)
                ok.members = [ConfMember("m1")]
                try check(isCountError(try checkThrows(.relationshipCount, "below the minimum") { try context.save() }))
                try check(context.hasChanges)
                try checkEqual(try ModelContext(context.container).fetchCount(FetchDescriptor<ConfCrew>()), 0, "nothing saved")
                empty.members = (1...4).map { ConfMember("e\($0)") }
                try check(isCountError(try checkThrows(.relationshipCount, "above the maximum") { try context.save() }))
                try checkEqual(try ModelContext(context.container).fetchCount(FetchDescriptor<ConfMember>()), 0, "nothing saved")
                empty.members.removeLast()                                       // e4 stays, without a crew
                try context.save()
            }
            do {
                let context = ModelContext(try s.reopen())
                let ok = try require(try context.fetch(FetchDescriptor<ConfCrew>(predicate: #Predicate { $0.name == "ok" })).first)
                let full = try require(try context.fetch(FetchDescriptor<ConfCrew>(predicate: #Predicate { $0.name == "empty" })).first)
                let m1 = try require(ok.members.first)
                let extra = ConfMember("x")
                extra.crew = full
                try checkEqual(full.members.count, 4)
                try checkThrows(.relationshipCount, "a member moving in through its to-one") { try context.save() }
                full.members.removeLast()
                full.members.removeLast()
                m1.crew = full
                try check(ok.members.isEmpty)
                try checkThrows(.relationshipCount, "the only member moving out") { try context.save() }
                context.rollback()
                // A deletion that leaves a crew below its minimum (the nullify rule) is refused too.
                context.delete(m1)
                try checkThrows(.relationshipCount, "a deleted member") { try context.save() }
                context.rollback()
            }
            let context = ModelContext(try s.reopen())
            let crews = try context.fetch(FetchDescriptor<ConfCrew>(sortBy: [SortDescriptor(\.name)]))
            try checkEqual(crews.map { $0.members.map(\.name) }, [["e1", "e2", "e3"], ["m1"]])
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfMember>()), 5)
        },

        ConformanceScenario("aFailedSaveUndoesTheDeleteRulesItApplied", from: "RelationshipTests.aFailedSaveUndoesTheDeleteRulesItApplied") { env in
            let s = try env.open(ConfVoyage.self, ConfPort.self, ConfCrew.self, ConfMember.self)
            let context = ModelContext(s.container)
            let voyage = ConfVoyage("v")
            context.insert(voyage)
            voyage.ports = [ConfPort("x")]
            let crew = ConfCrew("c")
            context.insert(crew)
            crew.members = [ConfMember("m")]
            try context.save()
            context.delete(voyage)                 // would cascade to the port
            crew.members = []                      // breaks minimumModelCount: the save fails
            try checkThrows(.relationshipCount) { try context.save() }
            context.insert(voyage)                 // keep the voyage after all
            crew.members = [ConfMember("m2")]
            try context.save()
            let fresh = ModelContext(try s.reopen())
            try checkEqual(try fresh.fetchCount(FetchDescriptor<ConfVoyage>()), 1)
            try checkEqual(try fresh.fetch(FetchDescriptor<ConfPort>()).map(\.city), ["x"], "the cascade did not stick")
            try checkEqual(try fresh.fetch(FetchDescriptor<ConfVoyage>()).first?.ports.map(\.city), ["x"])
        },

        ConformanceScenario("didSaveListsTheObjectsACascadeDeleted", from: "DeleteRulesOnRowsTests.didSaveListsTheRowsACascadeDeleted") { env in
            let s = try env.open(ConfVoyage.self, ConfPort.self)
            do {
                let context = ModelContext(s.container)
                let voyage = ConfVoyage("v")
                context.insert(voyage)
                voyage.ports = (0..<4).map { ConfPort("p\($0)") }
                try context.save()
            }
            let context = ModelContext(try s.reopen())
            let voyage = try require(try context.fetch(FetchDescriptor<ConfVoyage>()).first)
            let voyageID = voyage.persistentModelID
            let portIDs = try context.fetchIdentifiers(FetchDescriptor<ConfPort>())
            let log = NotificationLog([ModelContext.didSave], object: context)
            context.delete(voyage)
            try context.save()
            let deleted = log.identifiers(.deletedIdentifiers, at: 0)
            try checkEqual(Set(deleted.filter { $0.entityName == "ConfPort" }), Set(portIDs))
            try checkEqual(deleted.filter { $0.entityName == "ConfVoyage" }, [voyageID])
        },

        ConformanceScenario("aDeletedObjectKeepsItsIdentifier", from: "DeleteRulesOnRowsTests.didSaveListsTheRowsACascadeDeleted (the identifiers of deleted objects), ContextTests.changeTracking") { env in
            let s = try env.open(ConfVoyage.self, ConfPort.self)
            let context = ModelContext(s.container)
            let voyage = ConfVoyage("v")
            context.insert(voyage)
            let port = ConfPort("p")
            voyage.ports = [port]
            try context.save()
            let (voyageID, portID) = (voyage.persistentModelID, port.persistentModelID)
            context.delete(voyage)
            try checkEqual(voyage.persistentModelID, voyageID, "deleted, before the save")
            try context.save()
            try checkEqual(voyage.persistentModelID, voyageID, "deleted and saved")
            try checkEqual(port.persistentModelID, portID, "deleted by the cascade and saved")
            try check(try ModelContext(s.container).existingModel(for: voyageID) == nil, "gone from the store")
        },
    ]
}
