import Foundation
import StrataData

// W8 with `@Model` classes, for Benchmarks/run.sh (its W8-model-reopen-fetch workloads): a
// fresh process opens a store and fetches one `Course` by id, timed from before the container
// to after the fetch. A separate executable because the macros need swift-syntax, which the
// benchmarks package does not build. Prints one JSON line as the benchmarks' children do.
//
//   StrataModelReopen open <store> <uuid> <workload>       # the W8 store, made by Benchmarks
//   StrataModelReopen open-twenty <store> <uuid> <workload> # a store of the 20 models
//   StrataModelReopen make-twenty <store> <n>               # makes that store; prints a key
func measure(_ workload: String, _ models: [any PersistentModel.Type], path: String, key: UUID) throws {
    // The peak resident set from here (Linux keeps the spawning process's across exec).
    if let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
        handle.write(Data("5".utf8))
        try? handle.close()
    }
    // Page faults of the timed part (the first touch of each page of code, heap or mapped file).
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let faults = usage.ru_minflt
    let start = ContinuousClock.now
    let (opened, predicateMade, found) = try openAndFetch(models, path: path, key: key)
    let end = ContinuousClock.now
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let faulted = usage.ru_minflt - faults
    guard found == key else { throw Failure("\(workload): \(key) not found in \(path)") }
    func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let peakKB = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        .flatMap { Int($0.dropFirst("VmHWM:".count).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") } ?? 0
    let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    print(#"{"workload": "\#(workload)", "system": "strata", "n": 1, "seconds": \#(seconds(start.duration(to: end))), "#
          + #""peak_rss_kb": \#(peakKB), "bytes": \#(bytes), "open_seconds": \#(seconds(start.duration(to: opened))), "#
          + #""fetch_seconds": \#(seconds(opened.duration(to: end))), "predicate_seconds": \#(seconds(opened.duration(to: predicateMade))), "#
          + #""minor_faults": \#(faulted), "models": \#(models.count)}"#)
}

/// The timed work: the container, a context, and the fetch of one `Course` by id; when the
/// container and context were made, and when the fetch's `#Predicate` was (Foundation's work in
/// the caller: its first use in a process makes its expression types' metadata). (A function
/// of its own, which `Benchmarks/profile.sh W8-model` counts alone, without the report
/// `measure` prints.)
@inline(never)
func openAndFetch(_ models: [any PersistentModel.Type], path: String, key: UUID) throws
    -> (opened: ContinuousClock.Instant, predicateMade: ContinuousClock.Instant, found: UUID?) {
    let container = try ModelContainer(for: Schema(models), configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
    let context = ModelContext(container)
    let opened = ContinuousClock.now
    let predicate = #Predicate<Course> { $0.id == key }
    let predicateMade = ContinuousClock.now
    let found = try context.fetch(FetchDescriptor<Course>(predicate: predicate)).first?.id
    return (opened, predicateMade, found)
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

let arguments = Array(CommandLine.arguments.dropFirst())
// The arguments by name, as the benchmarks' own children read theirs (`ChildArguments`, a
// `[String: String]`) before their timed part: with it the runtime's first `String: Hashable`
// lookup, a scan of every conformance loaded (about 0.4M instructions), which grdb-tuned's W8
// child and the macro-free one have then paid outside the time they report. So this child
// starts its timed part with the runtime in the same state as theirs.
let named = ["store": arguments.count > 1 ? arguments[1] : "", "key": arguments.count > 2 ? arguments[2] : "",
             "workload": arguments.count > 3 ? arguments[3] : ""]
do {
    switch arguments.first {
    case "open" where arguments.count == 4, "open-twenty" where arguments.count == 4:
        guard let store = named["store"], let workload = named["workload"], let key = named["key"].flatMap(UUID.init(uuidString:)) else {
            throw Failure("bad key \(arguments[2])")
        }
        try measure(workload, arguments[0] == "open" ? [Course.self] : twentyModels, path: store, key: key)
    case "make-twenty" where arguments.count == 3:
        guard let n = Int(arguments[2]), n > 0 else { throw Failure("bad count \(arguments[2])") }
        let container = try ModelContainer(for: Schema(twentyModels), configurations: ModelConfiguration(url: URL(fileURLWithPath: arguments[1])))
        let context = ModelContext(container)
        var keys: [UUID] = []
        for i in 0..<n {
            let course = Course(id: UUID(), title: "course \(i)", createdAt: Date(timeIntervalSince1970: Double(i)))
            keys.append(course.id)
            context.insert(course)
            if i % 10 == 0 { context.insert(Tag(name: "tag \(i)")); context.insert(Review(stars: i % 5)) }
        }
        try context.save()
        print(keys[n / 2].uuidString)
    default:
        throw Failure("usage: StrataModelReopen open|open-twenty <store> <uuid> <workload> | make-twenty <store> <n>")
    }
} catch {
    FileHandle.standardError.write(Data("StrataModelReopen: \(error)\n".utf8))
    exit(1)
}
