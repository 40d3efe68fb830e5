import Foundation
import Strata

/// A typical repository: fetch by the unique code, update if found, insert otherwise.
struct TripRepository {
    let context: ModelContext

    func trip(code: UUID) throws -> ConfTrip? {
        var descriptor = FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.code == code })
        descriptor.fetchLimit = 1
        return try context.fetch(descriptor).first
    }

    @discardableResult
    func save(code: UUID, name: String, rating: Int) throws -> ConfTrip {
        if let existing = try trip(code: code) {
            existing.name = name
            existing.rating = rating
            try context.save()
            return existing
        }
        let trip = ConfTrip(name: name, startDate: confDay(0), rating: rating)
        trip.code = code
        context.insert(trip)
        try context.save()
        return trip
    }
}

func storedNames(_ container: ModelContainer) throws -> [String] {
    try ModelContext(container).fetch(FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.name)])).map(\.name)
}

extension Conformance {
    static let deleteWhereScenarios: [ConformanceScenario] = [
        ConformanceScenario("deleteModelWhereOnUnregisteredObjects", from: "ContextTests.deleteModelWhereOnUnregisteredRows, IdentifierPredicateTests.deleteByIdentifier (fresh context)",
                            requires: [.acceptsBatchDeletes]) { env in
            let s = try env.open(ConfTrip.self)
            try seedTrips(ModelContext(s.container), 10)
            let context = ModelContext(s.container)       // holds nothing
            try context.delete(model: ConfTrip.self, where: #Predicate { $0.rating < 3 })
            try check(context.hasChanges)
            try checkEqual(try ModelContext(s.container).fetchCount(FetchDescriptor<ConfTrip>()), 10, "not applied before the save")
            try checkEqual(try context.fetch(byRating).map(\.rating), Array(3...9), "but this context's fetches leave them out")
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfTrip>()), 7)
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.rating <= 4 })), 2)
            try checkEqual(try context.fetchIdentifiers(FetchDescriptor<ConfTrip>()).count, 7)
            var paged = byRating
            paged.fetchLimit = 2
            try checkEqual(try context.fetch(paged).map(\.rating), [3, 4])
            try context.save()
            try check(!context.hasChanges)
            try checkEqual(try ModelContext(try s.reopen()).fetch(byRating).map(\.rating), Array(3...9))
            // By identifier.
            let id = try require(try ModelContext(s.container).fetchIdentifiers(byRating).first)
            let other = ModelContext(s.container)
            try other.delete(model: ConfTrip.self, where: #Predicate { $0.persistentModelID == id })
            try other.save()
            try checkEqual(try ModelContext(try s.reopen()).fetch(byRating).map(\.rating), Array(4...9))
            // Everything.
            try other.delete(model: ConfTrip.self)
            try other.save()
            try checkEqual(try ModelContext(try s.reopen()).fetchCount(FetchDescriptor<ConfTrip>()), 0)
        },

        ConformanceScenario("deleteModelWhereOnRegisteredAndInsertedObjects", from: "ContextTests.deleteModelWhereOnRegisteredAndInsertedObjects, IdentifierPredicateTests.deleteByIdentifier (seeding context)") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            let trips = try seedTrips(context, 6)
            let extra = ConfTrip(name: "unsaved", startDate: confDay(20), rating: 1)
            context.insert(extra)
            let kept = ConfTrip(name: "unsaved kept", startDate: confDay(21), rating: 50)
            context.insert(kept)
            try context.delete(model: ConfTrip.self, where: #Predicate { $0.rating < 2 })
            try check(trips[0].isDeleted && trips[1].isDeleted && !trips[2].isDeleted)
            try check(extra.isDeleted && !kept.isDeleted)
            try check(Set(identities(context.deletedModelsArray)).isSuperset(of: [ObjectIdentifier(trips[0]), ObjectIdentifier(trips[1])]))
            try checkEqual(try context.fetch(byRating).map(\.rating), [2, 3, 4, 5, 50])
            try context.save()
            try checkEqual(try ModelContext(try s.reopen()).fetch(byRating).map(\.rating), [2, 3, 4, 5, 50])
            let id = trips[3].persistentModelID
            try context.delete(model: ConfTrip.self, where: #Predicate { $0.persistentModelID == id })
            try check(trips[3].isDeleted)
            try context.save()
            try checkEqual(try ModelContext(try s.reopen()).fetch(byRating).map(\.rating), [2, 4, 5, 50])
            try context.delete(model: ConfTrip.self)
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfTrip>()), 0)
            try checkEqual(try ModelContext(s.container).fetchCount(FetchDescriptor<ConfTrip>()), 4)
            try context.save()
            try checkEqual(try ModelContext(try s.reopen()).fetchCount(FetchDescriptor<ConfTrip>()), 0)
        },

        ConformanceScenario("rollbackUndoesDeleteModelWhere", from: "ContextTests.rollbackUndoesDeleteModelWhere") { env in
            let s = try env.open(ConfTrip.self)
            try seedTrips(ModelContext(s.container), 5)
            let context = ModelContext(s.container)
            try context.delete(model: ConfTrip.self, where: #Predicate { $0.rating >= 1 })
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfTrip>()), 1)
            context.rollback()
            try check(!context.hasChanges)
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfTrip>()), 5)
            try context.save()
            try checkEqual(try ModelContext(try s.reopen()).fetchCount(FetchDescriptor<ConfTrip>()), 5)
        },

        ConformanceScenario("deleteModelWhereAppliesTheDeleteRules", from: "RelationshipEdgeTests.deleteModelWhereAppliesTheDeleteRules, DeleteRulesOnRowsTests.deleteModelWhereAppliesRulesToRows, ToManyMembershipTests.deletingAnObjectOfTheSecondListTakesItOutOfThatList") { env in
            let s = try env.open(ConfShelf.self, ConfItem.self, ConfLabel.self)
            do {
                let context = ModelContext(s.container)
                for name in ["a", "b", "c"] {
                    let shelf = ConfShelf(name)
                    context.insert(shelf)
                    shelf.items = (1...3).map { ConfItem("\(name)\($0)") }
                }
                let red = ConfLabel("red")
                context.insert(red)
                red.items = try context.fetch(FetchDescriptor<ConfItem>(sortBy: [SortDescriptor(\.name)]))
                try context.save()
            }
            do {
                // A context that holds none of the objects: cascade to items, nullify on labels.
                let context = ModelContext(try s.reopen())
                try context.delete(model: ConfShelf.self, where: #Predicate { $0.name != "b" })
                try context.save()
                try checkEqual(try context.fetch(FetchDescriptor<ConfShelf>()).map(\.name), ["b"])
                try checkEqual(try context.fetch(FetchDescriptor<ConfItem>(sortBy: [SortDescriptor(\.name)])).map(\.name), ["b1", "b2", "b3"])
            }
            do {
                let context = ModelContext(try s.reopen())
                let red = try require(try context.fetch(FetchDescriptor<ConfLabel>()).first)
                try checkEqual(red.items.map(\.name), ["b1", "b2", "b3"])
                try context.delete(model: ConfItem.self, where: #Predicate { $0.shelf?.name == "b" && $0.name != "b2" })
                try context.save()
                try checkEqual(red.items.map(\.name), ["b2"])
                try checkEqual(try shelf(context, "b").items.map(\.name), ["b2"])
                try context.delete(model: ConfShelf.self)
                try context.save()
                try checkEqual(try context.fetchCount(FetchDescriptor<ConfItem>()), 0)
            }
            let context = ModelContext(try s.reopen())
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfShelf>()), 0)
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfItem>()), 0)
            try check(try context.fetch(FetchDescriptor<ConfLabel>()).first?.items.isEmpty == true)
        },

        ConformanceScenario("didSaveListsObjectsDeletedByDeleteModelWhere", from: "ContextTests.didSaveListsRowsDeletedByDeleteModelWhere") { env in
            let s = try env.open(ConfVoyage.self, ConfPort.self)
            do {
                let context = ModelContext(s.container)
                for i in 0..<4 { let v = ConfVoyage("v\(i)"); context.insert(v); v.ports = [ConfPort("p\(i)")] }
                try context.save()
            }
            let context = ModelContext(try s.reopen())
            let expected = try context.fetchIdentifiers(FetchDescriptor<ConfVoyage>(predicate: #Predicate { $0.name >= "v2" }))
            try checkEqual(expected.count, 2)
            let log = NotificationLog([ModelContext.didSave], object: context)
            try context.delete(model: ConfVoyage.self, where: #Predicate { $0.name >= "v2" })
            try context.save()
            let deleted = log.identifiers(.deletedIdentifiers, at: 0)
            try checkEqual(Set(deleted.filter { $0.entityName == "ConfVoyage" }), Set(expected))
            try checkEqual(deleted.filter { $0.entityName == "ConfPort" }.count, 2, "and the ports the cascade took")
        },

        ConformanceScenario("replacingTheWholeContents", from: "UsagePatternTests.replacingTheWholeContents",
                            requires: [.acceptsBatchDeletes, .resolvesUniqueValuesAfterTheSavesUpdates]) { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            func refresh(_ names: [String], codes: [UUID]? = nil) throws {
                try context.delete(model: ConfTrip.self)
                for (i, name) in names.enumerated() {
                    let t = ConfTrip(name: name, startDate: confDay(i))
                    if let codes { t.code = codes[i] }
                    context.insert(t)
                }
                try checkEqual(try context.fetch(FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.startDate)])).map(\.name), names,
                               "before the save, the context sees only the new contents")
                try context.save()
            }
            let codes = (0..<3).map { _ in UUID() }
            try refresh(["a", "b", "c"], codes: codes)
            let held = try context.fetch(FetchDescriptor<ConfTrip>())
            try checkEqual(held.count, 3)
            try refresh(["d", "e"])
            try check(held.allSatisfy { $0.modelContext == nil && !$0.isDeleted }, "deleted by the refresh, and saved")
            try checkEqual(try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.startDate)])).map(\.name), ["d", "e"])
            // The unique codes of an earlier refresh again: no conflict.
            try refresh(["a2", "b2", "c2"], codes: codes)
            try refresh(["a3", "b3", "c3"], codes: codes)
            let stored = try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.startDate)]))
            try checkEqual(stored.map(\.name), ["a3", "b3", "c3"])
            try checkEqual(stored.map(\.code), codes)
            try refresh([])
            try checkEqual(try ModelContext(try s.reopen()).fetchCount(FetchDescriptor<ConfTrip>()), 0)
        },
    ]

    static let uniqueScenarios: [ConformanceScenario] = [
        ConformanceScenario("uniqueLaterWinsWithinOneSave", from: "ContextTests.twoNewObjectsWithTheSameUniqueValueInOneSaveTheLaterWins (one save), OneChangePerObjectTests.twoNewObjectsWithOneUniqueValueAreOneInsert") { env in
            let s = try env.open(ConfTrip.self, ConfAlbum.self, ConfTrack.self)
            let context = ModelContext(s.container)
            let first = ConfTrip(name: "first", startDate: confDay(0))
            let second = ConfTrip(name: "second", startDate: confDay(1))
            let third = ConfTrip(name: "third", startDate: confDay(2))
            second.code = first.code
            third.code = first.code
            for trip in [first, second, third] { context.insert(trip) }
            context.insert(ConfTrip(name: "other", startDate: confDay(3)))
            context.insert(ConfAlbum("A1", title: "one"))
            context.insert(ConfAlbum("A1", title: "two"))
            try context.save()
            try checkEqual(try context.fetch(FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.name)])).map(\.name), ["other", "third"])
            let reader = ModelContext(try s.reopen())
            let stored = try reader.fetch(FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.name)]))
            try checkEqual(stored.map(\.name), ["other", "third"], "never two objects for one unique value")
            try checkEqual(stored.last?.startDate, confDay(2))
            try checkEqual(try reader.fetch(FetchDescriptor<ConfAlbum>()).map(\.title), ["two"])
        },

        ConformanceScenario("uniqueUpsertAcrossSaves", from: "ModelBasicsTests.uniqueUpsert, ContextTests.twoNewObjectsWithTheSameUniqueValueInOneSaveTheLaterWins, CountingCustomStoreTests.theStoreResolvesAUniqueValueAndTheInsertTakesThatObject",
                            requires: [.resolvesUniqueValues]) { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            let a = ConfTrip(name: "A", startDate: confDay(0))
            context.insert(a)
            try context.save()
            let b = ConfTrip(name: "B", startDate: confDay(1))
            b.code = a.code
            context.insert(b)
            try context.save()
            try checkEqual(try context.fetch(FetchDescriptor<ConfTrip>()).map(\.name), ["B"])
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfTrip>()), 1)
            try checkEqual(b.persistentModelID, a.persistentModelID, "the insert took the stored object's identity")
            try checkIdentical(context.model(for: b.persistentModelID) as? ConfTrip, b, "the insert took the stored object's place")
            // From another context holding the stored object.
            let other = ModelContext(s.container)
            _ = try other.fetch(FetchDescriptor<ConfTrip>())
            let c = ConfTrip(name: "C", startDate: confDay(2))
            c.code = a.code
            other.insert(c)
            try other.save()
            try checkEqual(try ModelContext(s.container).fetch(FetchDescriptor<ConfTrip>()).map(\.name), ["C"])
            let stored = try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfTrip>())
            try checkEqual(stored.map(\.name), ["C"])
            try checkEqual(stored.first?.startDate, confDay(2))
        },

        ConformanceScenario("aNilUniqueValueIsAValueLikeAnyOther", from: "PostgresStoreTests (an optional unique attribute: NULL matched NULL in one save and not across saves)",
                            requires: [.resolvesUniqueValues]) { env in
            // Strata's unique constraints treat nil as one value, as a file store's index keys do:
            // a later insert with nil upserts the object stored with nil, within a save and across
            // saves, and a server's constraint must agree (PostgreSQL: NULLS NOT DISTINCT).
            let s = try env.open(ConfBadge.self)
            do {
                let context = ModelContext(s.container)
                context.insert(ConfBadge(nil, "first nil"))
                context.insert(ConfBadge("A", "A"))
                context.insert(ConfBadge(nil, "second nil"))
                try context.save()
            }
            let context = ModelContext(s.container)
            let again = ConfBadge("A", "A again")
            let third = ConfBadge(nil, "third nil")
            context.insert(again)
            context.insert(third)
            try context.save()
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfBadge>()), 2)
            third.holder = "third nil, changed"
            again.holder = "A, changed"
            try context.save()
            let stored = try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfBadge>(sortBy: [SortDescriptor(\.holder)]))
            try checkEqual(stored.map(\.holder), ["A, changed", "third nil, changed"])
            try checkEqual(stored.map(\.code), ["A", nil])
        },

        ConformanceScenario("uniqueUpsertFromAnotherContainer", from: "UsagePatternTests.repositoryUpdatesOrInserts (upserting rather than duplicating), UpsertIndexTests.upsertsKeepOrMoveTheirIndexEntries",
                            requires: [.resolvesUniqueValues]) { env in
            let s = try env.open(ConfTrip.self)
            var codes: [UUID] = []
            do {
                let context = ModelContext(s.container)
                for i in 0..<12 {
                    let trip = ConfTrip(name: "trip \(i)", startDate: confDay(i), rating: i % 5)
                    codes.append(trip.code)
                    context.insert(trip)
                }
                try context.save()
            }
            var expected: [UUID: (name: String, start: Date, rating: Int)] = [:]
            for (i, code) in codes.enumerated() { expected[code] = ("trip \(i)", confDay(i), i % 5) }
            for round in 0..<2 {
                let upserts = ModelContext(try s.reopen())
                for (i, code) in codes.enumerated() where (i + round) % 3 != 0 {
                    let old = expected[code]!
                    // i % 4: 0 keeps both indexed values, 1 moves the date, 2 the rating, 3 both.
                    let start = i % 4 == 1 || i % 4 == 3 ? confDay(100 * (round + 1) + i) : old.start
                    let rating = i % 4 >= 2 ? (old.rating + 1) % 7 : old.rating
                    let trip = ConfTrip(name: "trip \(i) round \(round)", startDate: start, rating: rating)
                    trip.code = code
                    upserts.insert(trip)
                    expected[code] = (trip.name, start, rating)
                }
                try upserts.save()
                let reader = ModelContext(try s.reopen())
                try checkEqual(try reader.fetchCount(FetchDescriptor<ConfTrip>()), codes.count, "round \(round)")
                for (code, value) in expected {
                    let start = value.start
                    let byDate = try reader.fetch(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.startDate == start }))
                    try checkEqual(byDate.map(\.code), [code], "round \(round)")
                    try checkEqual(byDate.first?.name, value.name)
                }
                for rating in 0..<7 {
                    let byRating = try reader.fetch(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.rating == rating }))
                    try checkEqual(Set(byRating.map(\.code)), Set(expected.filter { $0.value.rating == rating }.keys), "round \(round)")
                }
            }
        },

        ConformanceScenario("repositoryUpdatesOrInserts", from: "UsagePatternTests.repositoryUpdatesOrInserts") { env in
            let s = try env.open(ConfTrip.self)
            let codes = (0..<5).map { _ in UUID() }
            do {
                let repository = TripRepository(context: ModelContext(s.container))
                let first = try repository.save(code: codes[0], name: "first", rating: 1)
                for (i, code) in codes.enumerated() { try repository.save(code: code, name: "v1 \(i)", rating: i) }
                let again = try repository.save(code: codes[0], name: "v2 0", rating: 10)
                try checkIdentical(again, first, "the update changed the registered object")
                try checkEqual(try repository.trip(code: codes[0])?.name, "v2 0")
                try check(try repository.trip(code: UUID()) == nil)
                try checkEqual(try repository.context.fetchCount(FetchDescriptor<ConfTrip>()), 5)
            }
            let repository = TripRepository(context: ModelContext(try s.reopen()))
            try checkEqual(try repository.trip(code: codes[0])?.rating, 10)
            try repository.save(code: codes[3], name: "v3 3", rating: 33)
            let all = try repository.context.fetch(byRating)
            try checkEqual(all.map(\.name), ["v1 1", "v1 2", "v1 4", "v2 0", "v3 3"])
            try checkEqual(Set(all.map(\.code)), Set(codes))
        },

        ConformanceScenario("compoundUniqueUpserts", from: "ContextTests.compoundUniqueConstraintUpserts", requires: [.resolvesCompoundUniqueValues]) { env in
            let s = try env.open(ConfPerson.self)
            let context = ModelContext(s.container)
            context.insert(ConfPerson("Ada", "Lovelace", "old@example.com"))
            context.insert(ConfPerson("Ada", "Byron", "byron@example.com"))
            try context.save()
            context.insert(ConfPerson("Ada", "Lovelace", "new@example.com"))
            context.insert(ConfPerson("Alan", "Turing", "a@example.com"))
            context.insert(ConfPerson("Alan", "Turing", "b@example.com"))
            try context.save()
            let other = ModelContext(try s.reopen())
            other.insert(ConfPerson("Ada", "Byron", "newer@example.com"))
            try other.save()
            let people = try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfPerson>(sortBy: [SortDescriptor(\.first), SortDescriptor(\.last)]))
            try checkEqual(people.map { "\($0.first) \($0.last) \($0.email)" }, [
                "Ada Byron newer@example.com", "Ada Lovelace new@example.com", "Alan Turing b@example.com",
            ])
        },

        ConformanceScenario("compoundUniqueLaterWinsWithinOneSave", from: "ContextTests.compoundUniqueConstraintUpserts (one save)") { env in
            let s = try env.open(ConfPerson.self)
            let context = ModelContext(s.container)
            context.insert(ConfPerson("Alan", "Turing", "a@example.com"))
            context.insert(ConfPerson("Alan", "Turing", "b@example.com"))
            context.insert(ConfPerson("Alan", "Kay", "c@example.com"))
            try context.save()
            let people = try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfPerson>(sortBy: [SortDescriptor(\.last)]))
            try checkEqual(people.map(\.email), ["c@example.com", "b@example.com"])
        },

        ConformanceScenario("upsertOverAChangedObjectTheInsertWins", from: "ContextTests.upsertOverAChangedObjectTheInsertWins",
                            requires: [.resolvesUniqueValues, .resolvesUniqueValuesAfterTheSavesUpdates]) { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            let old = ConfTrip(name: "old", startDate: confDay(0))
            context.insert(old)
            try context.save()
            old.name = "old changed"
            let replacement = ConfTrip(name: "replacement", startDate: confDay(1))
            replacement.code = old.code
            context.insert(replacement)
            try context.save()
            try checkEqual(try context.fetch(FetchDescriptor<ConfTrip>()).map(\.name), ["replacement"])
            let inStore = try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfTrip>())
            try checkEqual(inStore.map(\.name), ["replacement"], "the store agrees with the context")
            try checkEqual(inStore.first?.startDate, confDay(1))
        },

        ConformanceScenario("aUniqueValueGivenUpByAChangeIsFreeForAnInsert", from: "ContextTests.aUniqueValueGivenUpByAChangeIsFreeForAnInsert",
                            requires: [.resolvesUniqueValues, .resolvesUniqueValuesAfterTheSavesUpdates]) { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            let first = ConfTrip(name: "first", startDate: confDay(0))
            context.insert(first)
            try context.save()
            let freed = first.code
            first.code = UUID()
            let newcomer = ConfTrip(name: "newcomer", startDate: confDay(1))
            newcomer.code = freed
            context.insert(newcomer)
            try context.save()
            let stored = try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.name)]))
            try checkEqual(stored.map(\.name), ["first", "newcomer"])
            try checkEqual(stored.map(\.code), [first.code, freed])
            let mine = try context.fetch(FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.name)]))
            try check(mine.count == 2 && mine[0] === first && mine[1] === newcomer)
        },

        ConformanceScenario("anUpsertReplacesTheStoredObjectsRelationships", from: "RelationshipTests.anUpsertReplacesTheStoredObjectsRelationships", requires: [.resolvesUniqueValues]) { env in
            let s = try env.open(ConfAlbum.self, ConfTrack.self)
            do {
                let context = ModelContext(s.container)
                let first = ConfAlbum("A1")
                context.insert(first)
                first.tracks = [ConfTrack("one"), ConfTrack("two")]
                try context.save()
            }
            do {
                let context = ModelContext(s.container)
                let again = ConfAlbum("A1")
                context.insert(again)
                again.tracks = [ConfTrack("three")]
                try context.save()
            }
            let context = ModelContext(try s.reopen())
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfAlbum>()), 1)
            let tracks = try context.fetch(FetchDescriptor<ConfTrack>(sortBy: [SortDescriptor(\.title)]))
            try checkEqual(tracks.map(\.title), ["one", "three", "two"])
            try checkEqual(tracks.map { $0.album?.code }, [nil, "A1", nil])
            try checkEqual(try context.fetch(FetchDescriptor<ConfAlbum>()).first?.tracks.map(\.title), ["three"])
        },

        ConformanceScenario("changedObjectTakingAnotherUniqueValueFails", from: "ContextTests.changedObjectTakingAnotherUniqueValueFailsAndLeavesTheStore", requires: [.rejectsUniqueViolations]) { env in
            let s = try env.open(ConfTrip.self, ConfPerson.self)
            let context = ModelContext(s.container)
            let trips = try seedTrips(context, 3)
            let ada = ConfPerson("Ada", "Lovelace", "a"), alan = ConfPerson("Alan", "Lovelace", "b")
            context.insert(ada)
            context.insert(alan)
            try context.save()
            let codes = trips.map(\.code)
            trips[2].code = trips[0].code
            trips[1].name = "also changed"
            context.insert(ConfTrip(name: "new", startDate: confDay(7)))
            try checkThrows(.uniqueConstraintViolation) { try context.save() }
            try check(context.hasChanges, "the context keeps its unsaved changes")
            let stored = try ModelContext(try s.reopen()).fetch(byRating)
            try checkEqual(stored.map(\.code), codes, "nothing saved")
            try checkEqual(names(stored), ["t0", "t1", "t2"])
            // A compound constraint the same way.
            context.rollback()
            alan.first = "Ada"
            try checkThrows(.uniqueConstraintViolation) { try context.save() }
            let people = try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfPerson>(sortBy: [SortDescriptor(\.email)]))
            try checkEqual(people.map(\.first), ["Ada", "Alan"])
            alan.first = "Alan"
            try context.save()
        },
    ]

    static let conflictScenarios: [ConformanceScenario] = [
        ConformanceScenario("changingAnObjectAnotherContextDeletedIsAConflict", from: "SaveConflictTests.changingAnObjectAnotherContextDeletedIsAConflict, SaveConflictTests.theSameSaveGoesThroughOnceTheConflictIsResolved") { env in
            try changingADeletedObjectIsAConflict(env, deletedByAnotherContainer: false)
        },

        ConformanceScenario("changingAnObjectAnotherContainerDeletedIsAConflict", from: "SaveConflictTests.changingAnObjectAnotherContextDeletedIsAConflict (another container, as another process)",
                            requires: [.detectsSaveConflicts]) { env in
            try changingADeletedObjectIsAConflict(env, deletedByAnotherContainer: true)
        },

        ConformanceScenario("deletingAnObjectAnotherContextDeletedIsAConflict", from: "SaveConflictTests.deletingAnObjectAnotherContextDeletedIsAConflict") { env in
            try deletingADeletedObjectIsAConflict(env, deletedByAnotherContainer: false)
        },

        ConformanceScenario("deletingAnObjectAnotherContainerDeletedIsAConflict", from: "SaveConflictTests.deletingAnObjectAnotherContextDeletedIsAConflict (another container, as another process)",
                            requires: [.detectsSaveConflicts]) { env in
            try deletingADeletedObjectIsAConflict(env, deletedByAnotherContainer: true)
        },

        ConformanceScenario("aDeletionOfAnUnchangedHeldObjectIsNoConflict", from: "SaveConflictTests.aDeletionByAnotherContextOfAnObjectThatWasNotChangedIsNoConflict") { env in
            for anotherContainer in [false, true] {
                let s = try env.open(ConfTrip.self)
                let a = ModelContext(s.container)
                let trips = (0..<3).map { ConfTrip(name: "trip \($0)", startDate: confDay($0)) }
                for trip in trips { a.insert(trip) }
                try a.save()
                let b = ModelContext(anotherContainer ? try s.reopen() : s.container)
                b.delete(try require(try b.fetch(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.name == "trip 0" })).first))
                try b.save()
                trips[1].name = "renamed"        // trip 0, deleted by b, is held but unchanged
                try a.save()
                try checkEqual(try storedNames(try s.reopen()), ["renamed", "trip 2"], anotherContainer ? "another container" : "one container")
            }
        },
    ]

    /// Three trips saved by a context `a`; another context (of the same container or another
    /// one) deletes the first, fetched by name; `a` then changes it.
    static func changingADeletedObjectIsAConflict(_ env: ScenarioEnvironment, deletedByAnotherContainer: Bool) throws {
        let s = try env.open(ConfTrip.self)
        let a = ModelContext(s.container)
        let trips = (0..<3).map { ConfTrip(name: "trip \($0)", startDate: confDay($0)) }
        for trip in trips { a.insert(trip) }
        try a.save()
        let id = trips[0].persistentModelID
        let b = ModelContext(deletedByAnotherContainer ? try s.reopen() : s.container)
        b.delete(try require(try b.fetch(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.name == "trip 0" })).first))
        try b.save()
        trips[0].name = "changed after the delete"
        trips[1].name = "changed too"
        let error = try checkThrows(.saveConflict) { try a.save() }
        try checkEqual(error.objects, [id], "the conflict names the object")
        try check(error.message.contains("ConfTrip"), "the message names the model: \(error.message)")
        try checkEqual(try storedNames(try s.reopen()), ["trip 1", "trip 2"], "nothing was written; the deleted object is not back")
        try check(a.hasChanges)
        try checkEqual(trips[0].name, "changed after the delete")
        try checkEqual(trips[1].name, "changed too")
        // Deleting it is a conflict too; rolled back, the rest saves.
        a.delete(trips[0])
        try checkThrows(.saveConflict) { try a.save() }
        a.rollback()
        trips[1].name = "kept"
        try a.save()
        try checkEqual(try storedNames(try s.reopen()), ["kept", "trip 2"])
    }

    /// The same, `a` deleting the object instead.
    static func deletingADeletedObjectIsAConflict(_ env: ScenarioEnvironment, deletedByAnotherContainer: Bool) throws {
        let s = try env.open(ConfTrip.self)
        let a = ModelContext(s.container)
        let trips = (0..<3).map { ConfTrip(name: "trip \($0)", startDate: confDay($0)) }
        for trip in trips { a.insert(trip) }
        try a.save()
        let b = ModelContext(deletedByAnotherContainer ? try s.reopen() : s.container)
        b.delete(try require(try b.fetch(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.name == "trip 2" })).first))
        try b.save()
        a.delete(trips[2])
        trips[0].name = "renamed"
        let error = try checkThrows(.saveConflict) { try a.save() }
        try checkEqual(error.objects, [trips[2].persistentModelID])
        try checkEqual(try storedNames(try s.reopen()), ["trip 0", "trip 1"])
        try check(a.hasChanges)
    }

    static let historyScenarios: [ConformanceScenario] = [
        ConformanceScenario("historyRecordsOneChangePerObject", from: "OneChangePerObjectTests.anObjectUpsertedTwiceInOneSaveIsOneUpdate, OneChangePerObjectTests.twoNewObjectsWithOneUniqueValueAreOneInsert",
                            requires: [.recordsHistory, .resolvesUniqueValues]) { env in
            let s = try env.open(ConfTrip.self)
            func lastTransaction() throws -> [HistoryChange] {
                let transactions = try ModelContext(s.container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
                guard let last = transactions.last else { throw ConformanceFailure("no history transaction", file: #filePath, line: #line) }
                return last.changes
            }
            let context = ModelContext(s.container)
            let code = UUID()
            for name in ["first", "second", "third"] {
                let trip = ConfTrip(name: name, startDate: confDay(0))
                trip.code = code
                context.insert(trip)
            }
            context.insert(ConfTrip(name: "other", startDate: confDay(0)))
            try context.save()
            var changes = try lastTransaction()
            try checkEqual(changes.count, 2, "\(changes)")
            try check(changes.allSatisfy { if case .insert = $0 { true } else { false } }, "two inserts: \(changes)")

            let writer = ModelContext(s.container)
            let a = ConfTrip(name: "upsert a", startDate: confDay(0), budget: 10)
            a.code = code
            let b = ConfTrip(name: "upsert b", startDate: confDay(0), rating: 5)
            b.code = code
            writer.insert(a)
            writer.insert(b)
            try writer.save()
            changes = try lastTransaction()
            try checkEqual(changes.count, 1, "\(changes)")
            guard case .update(let update as DefaultHistoryUpdate<ConfTrip>)? = changes.first else {
                throw ConformanceFailure("expected one update, got \(changes)", file: #filePath, line: #line)
            }
            // `budget` was set by the first upsert and put back by the second: a store that sees
            // only the save's net change (the context merged the two) need not name it.
            try check(Set(update.updatedAttributes.map(\.name)).isSuperset(of: ["name", "rating"]), "\(update.updatedAttributes.map(\.name))")
            try checkEqual(try storedNames(try s.reopen()), ["other", "upsert b"])
        },
    ]
}
