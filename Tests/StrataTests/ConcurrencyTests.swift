import Foundation
import Testing
import Strata

// One ModelContainer shared by several threads, each with its own ModelContext, inserting,
// upserting and fetching at the same time. Afterwards every count and every unique value is
// right, in the container and in the reopened store.

/// Collects what the worker threads find wrong.
final class ConcurrencyProblems: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ text: String) { lock.withLock { list.append(text) } }
    var all: [String] { lock.withLock { list } }
}

@Suite struct ConcurrencyTests {
    @Test func threadsWithTheirOwnContextsShareOneContainer() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        let workers = 4, rounds = 8, ownPerRound = 6, sharedCount = 12
        // Ids every worker upserts, and each worker's own ids, fixed up front.
        let shared = (0..<sharedCount).map { _ in UUID() }
        let own = (0..<workers).map { _ in (0..<rounds * ownPerRound).map { _ in UUID() } }
        let problems = ConcurrencyProblems()
        do {
            let container = try ModelContainer(for: Trip.self, Person.self, configurations: config)
            DispatchQueue.concurrentPerform(iterations: workers + 1) { worker in
                let context = ModelContext(container)
                do {
                    if worker == workers {
                        // A reader: every snapshot has unique ids, and the count never goes down.
                        var last = 0
                        for _ in 0..<40 {
                            let all = try context.fetch(FetchDescriptor<Trip>())
                            if Set(all.map(\.id)).count != all.count { problems.add("reader saw a duplicate id") }
                            let count = try context.fetchCount(FetchDescriptor<Trip>())
                            if count < last { problems.add("reader's count went down from \(last) to \(count)") }
                            last = count
                        }
                        return
                    }
                    for round in 0..<rounds {
                        for i in 0..<ownPerRound {
                            let t = Trip(name: "w\(worker)-r\(round)-\(i)", startDate: Date(timeIntervalSinceReferenceDate: Double(round)))
                            t.id = own[worker][round * ownPerRound + i]
                            t.rating = worker
                            context.insert(t)
                        }
                        for s in 0..<3 {
                            let t = Trip(name: "shared by w\(worker)", startDate: .distantPast)
                            t.id = shared[(round * 3 + s + worker) % sharedCount]
                            t.rating = -1
                            context.insert(t)
                        }
                        context.insert(Person(first: "P\(round)", last: "shared", email: "w\(worker)"))
                        try context.save()
                        // This worker's own rows so far, through an index and through a scan.
                        let w = worker
                        let mine = try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.rating == w }))
                        if mine != (round + 1) * ownPerRound { problems.add("worker \(worker) round \(round) counts \(mine) of its own rows") }
                        let prefix = "w\(worker)-"
                        let scanned = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name.starts(with: prefix) }))
                        if scanned.count != (round + 1) * ownPerRound { problems.add("worker \(worker) round \(round) finds \(scanned.count) rows by name") }
                        let someID = own[worker][round * ownPerRound]
                        let one = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.id == someID }))
                        if one.count != 1 || one.first?.name != "w\(worker)-r\(round)-0" { problems.add("worker \(worker) cannot find its row by id") }
                    }
                } catch {
                    problems.add("worker \(worker): \(error)")
                }
            }
            #expect(problems.all.isEmpty, "\(problems.all)")
            try check(container)
        }
        // The same in the reopened store.
        let reopened = try ModelContainer(for: Trip.self, Person.self, configurations: config)
        try check(reopened)

        func check(_ container: ModelContainer) throws {
            let context = ModelContext(container)
            let trips = try context.fetch(FetchDescriptor<Trip>())
            #expect(trips.count == workers * rounds * ownPerRound + sharedCount)
            #expect(Set(trips.map(\.id)).count == trips.count, "every id once")
            #expect(Set(trips.map(\.id)) == Set(shared + own.flatMap { $0 }))
            #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.rating == -1 })) == sharedCount)
            for w in 0..<workers {
                #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.rating == w })) == rounds * ownPerRound)
            }
            let people = try context.fetch(FetchDescriptor<Person>())
            #expect(people.count == rounds, "one person per (first, last): the upserts merged")
            #expect(Set(people.map(\.first)).count == rounds)
        }
    }

    @Test func concurrentUpsertsOfOneValueLeaveOneRow() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let id = UUID()
        let problems = ConcurrencyProblems()
        DispatchQueue.concurrentPerform(iterations: 6) { worker in
            let context = ModelContext(container)
            for round in 0..<10 {
                let t = Trip(name: "w\(worker) r\(round)", startDate: .now)
                t.id = id
                context.insert(t)
                do { try context.save() } catch { problems.add("\(error)") }
            }
        }
        #expect(problems.all.isEmpty, "\(problems.all)")
        let all = try ModelContext(container).fetch(FetchDescriptor<Trip>())
        #expect(all.count == 1)
        #expect(all.first?.id == id)
        #expect(all.first?.name.hasSuffix("r9") == true, "the last save of some worker")
    }
}
