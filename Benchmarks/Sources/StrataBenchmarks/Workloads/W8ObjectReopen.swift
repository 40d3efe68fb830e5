import Foundation
import GRDB
import Strata

/// W8: a fresh process opens the store of n objects and fetches one by id. Strata:
/// `ModelContainer` + `ModelContext` + `fetch` with `#Predicate { $0.id == x }`. The child
/// times open + first fetch; the parent also reports the whole process's wall time.
enum W8ObjectReopen: Workload {
    static let id = "W8-object-reopen-fetch"
    static let title = "fresh process: open store + fetch one by id · target ≤ GRDB's time, flat in n"

    static func run(_ bench: Bench) throws {
        try ObjectStores.ensure(bench)
        ObjectStores.closeAll()
        let n = bench.options.objectCount
        let key = bench.data.id(n / 2)
        // The systems' children in turn, round after round (`interleavedMedians`).
        let children: [() throws -> ChildProcess.Result] = bench.selected(ObjectStores.systems).map { system in
            let arguments = [id] + ChildArguments.make(["system": system.rawValue, "path": ObjectStores.path(bench, system), "key": key.uuidString])
            return { try ChildProcess.run(arguments) }
        }
        for m in try ChildProcess.interleavedMedians(id, bench.options.freshProcessRepetitions, of: n, children) { bench.report(m, title: title) }
    }

    static func child(_ arguments: ChildArguments) throws {
        let system = try arguments.system()
        let path = try arguments.string("path")
        guard let key = UUID(uuidString: try arguments.string("key")) else { throw BenchError("bad key") }
        let section = Section.begin(samplingAnon: false)
        let faults = ProcessStats.minorFaults()
        let start = ContinuousClock.now
        let opened: ContinuousClock.Instant
        // When Strata's fetch had its `#Predicate` (Foundation's work in the caller; GRDB's
        // fetches have none).
        var predicateMade: ContinuousClock.Instant? = nil
        let foundID: UUID?
        switch system {
        case .strata:
            let container = try ObjectStores.openContainer(path: path)
            let context = ModelContext(container)
            opened = .now
            let predicate = #Predicate<StrataModel.Course> { $0.id == key }
            predicateMade = .now
            foundID = try context.fetch(FetchDescriptor<StrataModel.Course>(predicate: predicate)).first?.id
        case .grdb:
            let queue = try GRDBCourses.open(path: path, synchronous: "NORMAL", style: .idiomatic, create: false)
            opened = .now
            foundID = try queue.read { try Course.fetchOne($0, id: key) }?.id
        case .grdbTuned:
            let queue = try GRDBCourses.open(path: path, synchronous: "NORMAL", style: .tuned, create: false)
            opened = .now
            foundID = try queue.read { db in
                try Row.fetchOne(db.cachedStatement(sql: GRDBCourses.byIDSQL), arguments: [key]).map(GRDBCourses.course)
            }?.id
        default:
            throw BenchError("\(id): no \(system.rawValue) variant")
        }
        let end = ContinuousClock.now
        let faulted = ProcessStats.minorFaults() - faults
        let result = section.end()
        guard foundID == key else { throw BenchError("\(id): \(key) not found") }
        var m = Measurement(workload: id, system: system.rawValue, n: 1, seconds: start.duration(to: end).seconds,
                            peakRSSKB: result.peakKB, bytes: ObjectStores.size(system, path: path),
                            extras: [("open_seconds", .double(start.duration(to: opened).seconds)),
                                     ("fetch_seconds", .double(opened.duration(to: end).seconds)),
                                     ("minor_faults", .int(faulted))])
        if let predicateMade { m.extras.append(("predicate_seconds", .double(opened.duration(to: predicateMade).seconds))) }
        m.extras += result.memoryExtras
        print(m.jsonLine)
    }
}
