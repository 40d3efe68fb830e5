import Foundation
import Observation
import Strata

/// Every transaction of the store, oldest first.
func allHistory(_ context: ModelContext) throws -> [DefaultHistoryTransaction] {
    try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
}

/// A flat view of a transaction's changes, sorted, with objects named by `labels`: "insert
/// one", "update one body,title" (attribute names sorted), "delete two <the tombstone's title or
/// text>".
func describe(_ transaction: DefaultHistoryTransaction, _ labels: [PersistentIdentifier: String]) -> [String] {
    transaction.changes.map { change in
        let id = change.changedPersistentIdentifier
        let name = labels[id] ?? "\(id.entityName)?"
        func attributes<M>(_ update: DefaultHistoryUpdate<M>) -> String { update.updatedAttributes.map(\.name).sorted().joined(separator: ",") }
        switch change {
        case .insert: return "insert \(name)"
        case .update(let update as DefaultHistoryUpdate<ConfNote>): return "update \(name) \(attributes(update))"
        case .update(let update as DefaultHistoryUpdate<ConfLine>): return "update \(name) \(attributes(update))"
        case .update(let update as DefaultHistoryUpdate<ConfTag>): return "update \(name) \(attributes(update))"
        case .delete(let delete as DefaultHistoryDelete<ConfNote>): return "delete \(name) \(delete.tombstone[\.title] as? String ?? "-")"
        case .delete(let delete as DefaultHistoryDelete<ConfLine>): return "delete \(name) \(delete.tombstone[\.text] as? String ?? "-")"
        case .delete(let delete as DefaultHistoryDelete<ConfTag>): return "delete \(name) \(delete.tombstone.values.isEmpty ? "-" : "\(delete.tombstone.values.map(\.name))")"
        case .update, .delete: return "? \(name)"
        }
    }.sorted()
}

/// Labels for objects' identifiers (after they were saved).
func labels(_ pairs: (any PersistentModel, String)...) -> [PersistentIdentifier: String] {
    Dictionary(pairs.map { ($0.0.persistentModelID, $0.1) }, uniquingKeysWith: { a, _ in a })
}

/// A one-time notification of one object, as an event.
final class NotificationLatch: @unchecked Sendable {
    let latch = Latch()
    private let token: any NSObjectProtocol

    init(_ name: Notification.Name, object: AnyObject) {
        let latch = latch
        token = NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) { _ in latch.open() }
    }
    deinit { NotificationCenter.default.removeObserver(token) }
}

/// The few lines an actor writes in place of SwiftData's `@ModelActor` macro (the root tests'
/// `Importer`).
actor ConfImporter: ModelActor {
    nonisolated let modelContainer: ModelContainer
    nonisolated let modelExecutor: any ModelExecutor

    init(modelContainer: ModelContainer) {
        self.modelContainer = modelContainer
        self.modelExecutor = DefaultSerialModelExecutor(modelContext: ModelContext(modelContainer))
    }

    /// A background import with a save every `batch` objects; the number of saves.
    func importItems(_ range: Range<Int>, batch: Int) throws -> Int {
        var saves = 0
        for code in range {
            modelContext.insert(ConfSyncItem(code, "v\(code)"))
            if code % batch == batch - 1 { try modelContext.save(); saves += 1 }
        }
        try modelContext.save()
        return saves + 1
    }

    /// An upsert-style sync: every code inserted again with a new value.
    func sync(_ codes: [Int], value: String) throws {
        for code in codes { modelContext.insert(ConfSyncItem(code, value)) }
        try modelContext.save()
    }

    func count() throws -> Int { try modelContext.fetchCount(FetchDescriptor<ConfSyncItem>()) }
}

extension Conformance {
    static let historyOfSavesScenarios: [ConformanceScenario] = [
        ConformanceScenario("historyRecordsSavesInCommitOrder", from: "HistoryTests.savesFromTwoContextsAreRecordedInCommitOrder, HistoryTests.theStoreIdentifierSurvivesAMove (an identifier's store is its transactions' store)",
                            requires: [.recordsHistory]) { env in
            let s = try env.open(ConfNote.self, ConfLine.self, ConfTag.self)
            let a = ModelContext(s.container), b = ModelContext(s.container)
            a.author = "app"
            b.author = "importer"
            let first = ConfNote(1, "one"), second = ConfNote(2, "two")
            a.insert(first)
            a.insert(second)
            try a.save()

            let fetched = try require(try b.fetch(FetchDescriptor<ConfNote>(predicate: #Predicate { $0.code == 1 })).first)
            fetched.body = "changed"
            try b.save()

            first.title = "ONE"
            first.body = "also"
            let line = ConfLine("a line")
            line.note = second
            a.insert(line)
            try a.save()
            let names = labels((first, "one"), (second, "two"), (line, "line"))

            a.delete(second)       // cascades to its line
            try a.save()

            let history = try allHistory(ModelContext(s.container))
            try checkEqual(history.map(\.author), ["app", "importer", "app", "app"])
            try checkEqual(history.map(\.token), history.map(\.token).sorted(), "tokens in commit order")
            try checkEqual(Set(history.map(\.token)).count, 4, "a token per transaction")
            let store = history[0].token.storeIdentifier
            try check(!store.isEmpty && history.allSatisfy { $0.storeIdentifier == store && $0.token.storeIdentifier == store },
                      "one store identifier: \(history.map(\.storeIdentifier))")
            try checkEqual(first.persistentModelID.storeIdentifier, store, "an object's identifier names its transactions' store")
            try check(history.allSatisfy { $0.processIdentifier == String(ProcessInfo.processInfo.processIdentifier) },
                      "the saving process: \(history.map(\.processIdentifier))")
            try checkEqual(describe(history[0], names), ["insert one", "insert two"])
            try checkEqual(describe(history[1], names), ["update one body"])
            try checkEqual(describe(history[2], names), ["insert line", "update one body,title", "update two lines"])
            try checkEqual(describe(history[3], names), ["delete line a line", "delete two two"], "tombstones keep the .preserveValueOnDeletion values")
            // The identifiers are the objects' own; an update names its attributes by key path.
            try check(history[0].changes.contains { $0.changedPersistentIdentifier == first.persistentModelID })
            guard case .update(let update as DefaultHistoryUpdate<ConfNote>)? = history[1].changes.first else {
                throw ConformanceFailure("not an update of a note: \(history[1].changes)", file: #filePath, line: #line)
            }
            try check(update.updatedAttributes.contains(\.body) && !update.updatedAttributes.contains(\.title), "\(update.updatedAttributes)")
            try check(update.updatedAttributes[0] == \ConfNote.body)
        },

        ConformanceScenario("historyRecordsUpsertsAsUpdatesOfTheFieldsThatDiffer", from: "HistoryTests.upsertsAreUpdatesOfTheFieldsThatDiffer",
                            requires: [.recordsHistory, .resolvesUniqueValues]) { env in
            let s = try env.open(ConfNote.self, ConfLine.self, ConfTag.self)
            let context = ModelContext(s.container)
            let red = ConfTag("red", uses: 1, color: "#f00"), seven = ConfNote(7, "seven")
            context.insert(red)
            context.insert(seven)
            try context.save()
            let names = labels((red, "red"), (seven, "seven"))
            context.insert(ConfTag("red", uses: 2, color: "#f00"))     // upsert: only `uses` differs
            let note = ConfNote(7, "SEVEN")                             // upsert of a model with relationships
            note.body = ""
            context.insert(note)
            try context.save()
            let history = try allHistory(context)
            try checkEqual(history.count, 2)
            try checkEqual(describe(history[1], names), ["update red uses", "update seven title"])
        },

        ConformanceScenario("historyTokensRoundTripAndSelectWhatCameAfter", from: "HistoryTests.tokensRoundTripAndSelectWhatCameAfter",
                            requires: [.recordsHistory]) { env in
            let s = try env.open(ConfNote.self, ConfLine.self)
            let context = ModelContext(s.container)
            for code in 0..<5 {
                context.insert(ConfNote(code, "n\(code)"))
                try context.save()
            }
            let history = try allHistory(context)
            try checkEqual(history.count, 5)
            let saved = try JSONDecoder().decode(DefaultHistoryToken.self, from: try JSONEncoder().encode(history[1].token))
            try checkEqual(saved, history[1].token, "a token round-trips through Codable")
            let after = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > saved }))
            try checkEqual(after.map(\.token), Array(history[2...].map(\.token)))
            var newestFirst = HistoryDescriptor<DefaultHistoryTransaction>(sortBy: [SortDescriptor(\.token, order: .reverse)])
            newestFirst.fetchLimit = 2
            try checkEqual(try context.fetchHistory(newestFirst).map(\.token), [history[4].token, history[3].token])
            try check(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.author == "nobody" })).isEmpty)
        },

        ConformanceScenario("deleteHistoryPrunesAndOlderTokensExpire", from: "HistoryTests.deleteHistoryPrunesAndOlderTokensExpire",
                            requires: [.recordsHistory]) { env in
            let s = try env.open(ConfNote.self, ConfLine.self)
            let context = ModelContext(s.container)
            for code in 0..<6 {
                context.insert(ConfNote(code, "n\(code)"))
                try context.save()
            }
            let history = try allHistory(context)
            try checkEqual(history.count, 6)
            let cut = history[3].token
            try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token < cut }))
            try checkEqual(try allHistory(context).map(\.token), Array(history[3...].map(\.token)))
            let stale = history[1].token
            try checkThrows(.historyTokenExpired, "history after a pruned token") {
                _ = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > stale }))
            }
            // SwiftData's spelling of the catch.
            var caught = false
            do {
                _ = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > stale }))
            } catch StrataError.historyTokenExpired {
                caught = true
            }
            try check(caught, "catch StrataError.historyTokenExpired")
            // The newest pruned token is not expired: nothing after it was lost.
            let edge = history[2].token
            try checkEqual(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > edge })).count, 3)
            // The data is untouched, and another container on the store finds both.
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfNote>()), 6)
            let reopened = ModelContext(try s.reopen())
            try checkEqual(try allHistory(reopened).map(\.token), Array(history[3...].map(\.token)))
            try checkEqual(try reopened.fetchCount(FetchDescriptor<ConfNote>()), 6)
        },

        ConformanceScenario("deletionsWithoutPreservedValuesHaveEmptyTombstones", from: "HistoryTests.aCascadeOfDeletesWithoutPreservedValuesIsOneSmallRecord (what it records; not its size)",
                            requires: [.recordsHistory]) { env in
            let s = try env.open(ConfTag.self)
            let context = ModelContext(s.container)
            for code in 0..<300 { context.insert(ConfTag("t\(code)", uses: code, color: "")) }
            try context.save()
            let ids = Set(try context.fetchIdentifiers(FetchDescriptor<ConfTag>()))
            try context.delete(model: ConfTag.self)
            try context.save()
            let history = try allHistory(context)
            try checkEqual(history.count, 2)
            try checkEqual(history[1].changes.count, 300)
            try check(history[1].changes.allSatisfy { if case .delete(let d as DefaultHistoryDelete<ConfTag>) = $0 { d.tombstone.values.isEmpty } else { false } },
                      "300 deletions of tags, no tombstone values")
            try checkEqual(Set(history[1].changes.map(\.changedPersistentIdentifier)), ids, "the deleted objects' identifiers")
        },

        ConformanceScenario("historyPredicatesMayReadTheChanges", from: "HistoryTests.aPredicateMayReadTheChanges",
                            requires: [.recordsHistory]) { env in
            let s = try env.open(ConfNote.self, ConfLine.self)
            let context = ModelContext(s.container)
            context.insert(ConfNote(1, "one"))
            context.insert(ConfNote(2, "two"))
            try context.save()
            context.insert(ConfNote(3, "three"))
            try context.save()
            let big = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.changes.count > 1 }))
            try checkEqual(big.map { $0.changes.count }, [2])
            let small = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.author == nil && $0.changes.count == 1 }))
            try checkEqual(small.map { $0.changes.count }, [1])
        },

        ConformanceScenario("historyOfAnotherContainerOnTheSameStore", from: "HistoryObserverTests.anObserverFollowsAnotherContainerOnTheSameFile (the history it reads), HistoryTests.savesFromTwoContextsAreRecordedInCommitOrder (from another container)",
                            requires: [.recordsHistory, .stableIdentifiers]) { env in
            let s = try env.open(ConfNote.self, ConfLine.self)
            let context = ModelContext(s.container)
            context.author = "first"
            context.insert(ConfNote(1, "one"))
            try context.save()
            let other = ModelContext(try s.reopen())
            other.author = "second"
            let seven = ConfNote(7, "seven")
            other.insert(seven)
            try other.save()
            let one = try require(try other.fetch(FetchDescriptor<ConfNote>(predicate: #Predicate { $0.code == 1 })).first)
            one.body = "changed"
            try other.save()

            let history = try allHistory(context)
            try checkEqual(history.map(\.author), ["first", "second", "second"])
            try checkEqual(history.map(\.token), history.map(\.token).sorted())
            try checkEqual(Set(history.map(\.storeIdentifier)).count, 1, "one store")
            try checkEqual(history[1].changes.map(\.changedPersistentIdentifier), [seven.persistentModelID])
            // The other container's identifiers name the objects here.
            let found = try require(context.model(for: seven.persistentModelID) as? ConfNote, "model(for:) of the other container's identifier")
            try checkEqual(found.title, "seven")
            let names = labels((try require(try context.fetch(FetchDescriptor<ConfNote>(predicate: #Predicate { $0.code == 1 })).first), "one"), (found, "seven"))
            try checkEqual(describe(history[2], names), ["update one body"])
        },
    ]

    static let followingChangesScenarios: [ConformanceScenario] = [
        ConformanceScenario("resultsObserverFollowsSavesOfOtherContexts", from: "HistoryObserverTests.anObserverFollowsSavesOfOtherContexts",
                            usesGlobalExecutor: true) { env, actor in
            let s = try env.open(ConfNote.self, ConfLine.self)
            let observer = try ResultsObserver(fetchDescriptor: FetchDescriptor<ConfNote>(predicate: #Predicate { $0.code < 100 }, sortBy: [SortDescriptor(\.code)]),
                                               modelContainer: s.container)
            try checkEqual(observer.results.map(\.code), [])
            let told = Latch()
            withObservationTracking { _ = observer.results } onChange: { told.open() }
            let context = ModelContext(s.container)
            for code in [3, 1, 2, 500] { context.insert(ConfNote(code, "n\(code)")) }
            try context.save()
            try await eventually("the observer's results after a save: \(observer.results.map(\.code))") { observer.results.map(\.code) == [1, 2, 3] }
            try check(told.isOpen, "the observer's observers were told")
            // A change that moves an object out of the predicate, and a delete.
            let one = try require(try context.fetch(FetchDescriptor<ConfNote>(predicate: #Predicate { $0.code == 1 })).first)
            one.code = 101
            try context.save()
            try await eventually("the observer's results after a change: \(observer.results.map(\.code))") { observer.results.map(\.code) == [2, 3] }
            try context.delete(model: ConfNote.self, where: #Predicate { $0.code == 2 })
            try context.save()
            try await eventually("the observer's results after a delete: \(observer.results.map(\.code))") { observer.results.map(\.code) == [3] }
        },

        ConformanceScenario("resultsObserverFollowsAnotherContainer", from: "HistoryObserverTests.anObserverFollowsAnotherContainerOnTheSameFile",
                            requires: [.followsOtherWriters], usesGlobalExecutor: true) { env, actor in
            let s = try env.open(ConfNote.self, ConfLine.self)
            let observer = try ResultsObserver(fetchDescriptor: FetchDescriptor<ConfNote>(sortBy: [SortDescriptor(\.code)]), modelContainer: s.container)
            let context = ModelContext(try s.reopen())
            context.insert(ConfNote(7, "seven"))
            try context.save()
            try await eventually("the observer's results after another container's save: \(observer.results.map(\.code))") { observer.results.map(\.code) == [7] }
            try checkEqual(observer.results.first?.title, "seven")
        },

        ConformanceScenario("sectionedResultsFollowSaves", from: "SectionedObserverTests.sectionsGroupTheResultsByTheKeyPathAndFollowSaves",
                            usesGlobalExecutor: true) { env, actor in
            let s = try env.open(ConfShelved.self)
            let context = ModelContext(s.container)
            for (t, g) in [("Dune", "sf"), ("Emma", "classic"), ("Anathem", "sf"), ("Beloved", "classic")] { context.insert(ConfShelved(t, g)) }
            try context.save()
            let observer = try ResultsObserver(fetchDescriptor: FetchDescriptor<ConfShelved>(sortBy: [SortDescriptor(\.title)]), sectionBy: \.genre,
                                               modelContainer: s.container)
            func shape() -> [String] { observer.sections?.map { "\($0.title): " + $0.map(\.title).joined(separator: ", ") } ?? [] }
            // The section key path sorts first, then the given sort.
            try checkEqual(shape(), ["classic: Beloved, Emma", "sf: Anathem, Dune"])
            try checkEqual(observer.sortBy.count, 2)
            try checkEqual(observer.sections?[sectionTitle: "sf"]?.map(\.title), ["Anathem", "Dune"])
            try check(observer.sections?[sectionTitle: "poetry"] == nil)
            context.insert(ConfShelved("Odes", "poetry"))
            try context.save()
            try await eventually("the sections after a save: \(shape())") { shape() == ["classic: Beloved, Emma", "poetry: Odes", "sf: Anathem, Dune"] }
        },

        ConformanceScenario("sectionsByAnOptionalKeyPath", from: "SectionedObserverTests.anOptionalKeyPathMakesANilSectionAndAPlainObserverHasNone") { env in
            let s = try env.open(ConfShelved.self)
            let context = ModelContext(s.container)
            context.insert(ConfShelved("Dune", "sf", series: "Dune"))
            context.insert(ConfShelved("Emma", "classic"))
            context.insert(ConfShelved("Messiah", "sf", series: "Dune"))
            try context.save()
            let observer = try ResultsObserver(sectionBy: \ConfShelved.series, modelContext: context)
            let sections = try require(observer.sections)
            try checkEqual(sections.map(\.title), [nil, "Dune"])
            try checkEqual(sections[sectionTitle: "Dune"]?.count, 2)
            try checkEqual(sections[sectionTitle: nil]?.map(\.title), ["Emma"])
            try checkEqual(sections.map(\.id), sections.map(\.title))
            let plain = try ResultsObserver<ConfShelved, Never>(modelContext: context)
            try check(plain.sections == nil)
            try checkEqual(plain.results.count, 3)
        },

        ConformanceScenario("historyChangesDeliversEachTransactionWhole", from: "HistoryObserverTests.historyChangesDeliversEachTransactionWhole",
                            requires: [.recordsHistory]) { env, actor in
            let s = try env.open(ConfNote.self, ConfLine.self)
            let setup = ModelContext(s.container)
            setup.insert(ConfNote(0, "before"))
            try setup.save()                      // before the stream: not delivered
            let stream = s.container.historyChanges()
            let read = Task(executorPreference: actor.taskExecutor, priority: .high) {
                try await withinBound("three history notices") {
                    var notices: [HistoryNotice] = []
                    for try await notice in stream {
                        notices.append(notice)
                        if notices.count == 3 { break }
                    }
                    return notices
                }
            }
            let context = ModelContext(s.container)
            context.author = "writer"
            for code in 1...3 { context.insert(ConfNote(code, "n\(code)")) }
            try context.save()
            let one = try require(try context.fetch(FetchDescriptor<ConfNote>(predicate: #Predicate { $0.code == 1 })).first)
            one.body = "changed"
            let id = one.persistentModelID
            try context.save()
            context.delete(one)
            try context.save()
            let notices = try await read.value
            try checkEqual(notices.map(\.inserted.count), [3, 0, 0])
            try checkEqual(notices.map(\.updated), [[], [id], []])
            try checkEqual(notices.map(\.deleted), [[], [], [id]])
            try check(notices.allSatisfy { $0.author == "writer" }, "\(notices.map(\.author))")
            try checkEqual(notices.map(\.token), notices.map(\.token).sorted())
            let all = try allHistory(setup)
            try checkEqual(notices.map(\.token), Array(all.dropFirst().map(\.token)), "the notices are the transactions after the stream began")
        },

        ConformanceScenario("cancellingEndsHistoryChanges", from: "HistoryObserverTests.cancellingEndsTheStream (after a first notice, not a fixed time)",
                            requires: [.recordsHistory]) { env, actor in
            let s = try env.open(ConfNote.self, ConfLine.self)
            let stream = s.container.historyChanges()
            let received = Latch(), ended = Latch()
            let reader = Task(executorPreference: actor.taskExecutor, priority: .high) {
                var count = 0
                defer { ended.open() }
                for try await _ in stream {
                    count += 1
                    received.open()
                }
                return count
            }
            let context = ModelContext(s.container)
            context.insert(ConfNote(1, "one"))
            try context.save()
            try check(await received.wait(), "a first notice within \(Conformance.eventBound)")
            reader.cancel()
            try check(await ended.wait(), "the stream ends within \(Conformance.eventBound) of the cancellation")
            try checkEqual(try await reader.value, 1)
        },

        ConformanceScenario("historyObserverCountsTheTransactionsOfItsModels", from: "HistoryObserverTests.aHistoryObserverCountsTheTransactionsOfItsModels",
                            requires: [.recordsHistory], usesGlobalExecutor: true) { env, actor in
            let s = try env.open(ConfNote.self, ConfLine.self, ConfTag.self)
            let context = ModelContext(s.container)
            context.insert(ConfNote(0, "before"))
            try context.save()                                  // before the observer: not counted
            let watcher = try HistoryObserver(observedModels: [ConfNote.self], modelContainer: s.container)
            let byImporter = try HistoryObserver(observedModels: [ConfNote.self], authors: ["importer"], modelContainer: s.container)
            func newest(_ observer: HistoryObserver) -> DefaultHistoryToken? { observer.historyTokens.values.first as? DefaultHistoryToken }
            try checkEqual(newest(watcher), try allHistory(context).last?.token, "an observer begins at the newest token")
            context.insert(ConfTag("red", uses: 1, color: ""))  // not a note: the token moves, the counter does not
            try context.save()
            let tagged = try allHistory(context).last?.token
            try await eventually("the observer's token after a save of a tag: \(String(describing: newest(watcher)))") { newest(watcher) == tagged }
            try checkEqual(watcher.eventCounter, 0)
            context.insert(ConfNote(1, "one"))
            try context.save()
            context.author = "importer"
            context.insert(ConfNote(2, "two"))
            try context.save()
            try await eventually("the observers' counters: \(watcher.eventCounter), \(byImporter.eventCounter)") {
                watcher.eventCounter == 2 && byImporter.eventCounter == 1
            }
            try checkEqual(newest(watcher), try allHistory(context).last?.token)
            try checkEqual(watcher.historyTokens.count, 1, "one store, one token")
        },
    ]

    static let modelActorScenarios: [ConformanceScenario] = [
        ConformanceScenario("modelActorImportsInBatchesWhileAnotherContextReads", from: "ModelActorTests.backgroundImportAndSyncWhileAnotherContextReads (reads until the import ends, not a fixed time), ModelActorTests.mainContextReadsWhatTheActorSaved",
                            requires: [.readsDuringSaves]) { env, actor in
            let s = try env.open(ConfSyncItem.self)
            let container = s.container
            let importer = ConfImporter(modelContainer: container)
            let imported = Latch()
            // A reader on its own context, until the import ended: counts only grow, by whole saves.
            let reader = Task(executorPreference: actor.taskExecutor, priority: .high) {
                let context = ModelContext(container)
                var seen: [Int] = []
                while !imported.isOpen {
                    seen.append(try context.fetchCount(FetchDescriptor<ConfSyncItem>()))
                    await Task.yield()
                }
                seen.append(try context.fetchCount(FetchDescriptor<ConfSyncItem>()))
                return seen
            }
            let saves: Int
            do {
                defer { imported.open() }
                saves = try await importer.importItems(0..<2_000, batch: 250)
            }
            try checkEqual(saves, 9)
            let seen = try await reader.value
            try checkEqual(seen, seen.sorted(), "counts only grow")
            try check(seen.allSatisfy { $0 % 250 == 0 }, "whole saves only: \(Set(seen).sorted())")
            try checkEqual(seen.last, 2_000)
            try checkEqual(try await importer.count(), 2_000)
            let onMain = try await MainActor.run { try container.mainContext.fetchCount(FetchDescriptor<ConfSyncItem>()) }
            try checkEqual(onMain, 2_000, "the main context reads what the actor saved")
        },

        ConformanceScenario("modelActorSyncUpserts", from: "ModelActorTests.backgroundImportAndSyncWhileAnotherContextReads (the sync)",
                            requires: [.resolvesUniqueValues]) { env, actor in
            let s = try env.open(ConfSyncItem.self)
            let importer = ConfImporter(modelContainer: s.container)
            try checkEqual(try await importer.importItems(0..<1_000, batch: 250), 5)
            try await importer.sync(Array(0..<500), value: "synced")
            try checkEqual(try await importer.count(), 1_000)
            let context = ModelContext(s.container)
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfSyncItem>(predicate: #Predicate { $0.value == "synced" })), 500)
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfSyncItem>(predicate: #Predicate { $0.value == "v999" })), 1)
        },

        ConformanceScenario("theMainContextAutosavesOnTheMainActorsNextTurn", from: "AutosaveTests.theMainContextSavesOnTheMainActorsNextTurn (waits for its didSave, not for turns)") { env, actor in
            let s = try env.open(ConfSyncItem.self)
            let container = s.container
            let saved = try await MainActor.run { () throws -> NotificationLatch in
                let main = container.mainContext
                try check(main.autosaveEnabled, "the main context autosaves")
                let saved = NotificationLatch(ModelContext.didSave, object: main)
                main.insert(ConfSyncItem(1, "a"))
                try check(main.hasChanges)
                try checkEqual(try ModelContext(container).fetchCount(FetchDescriptor<ConfSyncItem>()), 0, "not saved in the same turn")
                return saved
            }
            try check(await saved.latch.wait(), "the main context's didSave within \(Conformance.eventBound)")
            try check(!(await MainActor.run { container.mainContext.hasChanges }), "the main context has no changes after its autosave")
            try checkEqual(try ModelContext(container).fetchCount(FetchDescriptor<ConfSyncItem>()), 1)
        },
    ]
}
