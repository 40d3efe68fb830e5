// Fuzz target: a valid object store (ModelContainer), damaged, read through the object layer.
// Built into the Strata module with the simulated file system (scripts/fuzz.sh). The input is
// an edit script as in DamagedStore.swift: `[variant][flags][u24 cut]`, then `[u24 offset][u8
// xor]` per damaged byte. Whatever a ModelContainer opened on the damaged file fetches must be
// exactly the objects the store held after one of its saves (indexes answering as the scan
// does), or the open or fetch must throw; never trap. A save after that must be readable. A
// page of the results (any limit and offset, the edges of Int included) must be that page.

import Foundation
import StrataEngine
import StrataRecords

final class FuzzNote: PersistentModel {
    @Attribute(.unique) var key: Int = 0
    @Attribute var title: String = ""
    @Attribute var tags: [String] = []
    @Attribute var when: Date? = nil
    @Attribute(.externalStorage) var attachment: Data = Data()
    init() {}
    static var indexes: [[PartialKeyPath<FuzzNote>]] { [[\.title]] }
}

/// Attachments are read too: an external value whose blob file is gone (input `AQH///8=`: a
/// cut store that reopens on a save whose blob a later save deleted) is a typed error from the
/// fetch, not a trap in the getter. STRATA_FUZZ_SKIP_EXTERNAL=1 leaves them unread.
let readsExternalValues = ProcessInfo.processInfo.environment["STRATA_FUZZ_SKIP_EXTERNAL"] == nil

struct NoteState: Equatable {
    var notes: [Int: [String]] = [:]   // key: title, tags..., when, attachment as text
}

let storePath = "/notes.store"

func openNotes(_ fs: SimulatedFileSystem) throws -> ModelContainer {
    try ModelContainer(for: Schema([FuzzNote.self]), configurations: [ModelConfiguration(url: URL(fileURLWithPath: storePath))], fileSystem: AnyFileSystem(fs))
}

/// Everything the container holds, fetched; the index is asked for each title and must agree.
func readNotes(_ container: ModelContainer) throws -> NoteState {
    let context = ModelContext(container)
    var state = NoteState()
    for note in try context.fetch(FetchDescriptor<FuzzNote>(sortBy: [SortDescriptor(\.key)])) {
        if state.notes[note.key] != nil { throw FuzzFinding("two notes with the unique key \(note.key)") }
        state.notes[note.key] = [note.title] + note.tags + [note.when.map { "\($0.timeIntervalSinceReferenceDate)" } ?? "nil",
                                                           readsExternalValues ? note.attachment.base64EncodedString() : ""]
    }
    for title in Set(state.notes.values.map { $0[0] }) {
        let n = try context.fetchCount(FetchDescriptor<FuzzNote>(predicate: #Predicate { $0.title == title }))
        if n != state.notes.values.filter({ $0[0] == title }).count { throw FuzzFinding("the title index counts \(n) notes titled \(title)") }
    }
    return state
}

struct NoteSample {
    let fs: SimulatedFileSystem
    let states: [NoteState]
}

nonisolated(unsafe) var noteSamples: [Int: NoteSample] = [:]

/// Variant 0: a few saves; 1: more, with upserts, deletes and attachments; 2: then compacted.
func noteSample(_ variant: Int) -> NoteSample {
    if let s = noteSamples[variant] { return s }
    let fs = SimulatedFileSystem()
    var states: [NoteState] = []
    do {
        let container = try openNotes(fs)
        states.append(try readNotes(container))
        let saves = variant == 0 ? 3 : 8
        for n in 1...saves {
            let context = ModelContext(container)
            for k in 0..<(n % 3 + 1) {
                let note = FuzzNote()
                note.key = (n * 7 + k) % 10
                note.title = "t\(note.key % 3)"
                note.tags = Array(repeating: "tag\(n)", count: k)
                note.when = k == 1 ? Date(timeIntervalSinceReferenceDate: Double(n)) : nil
                note.attachment = variant > 0 && k == 2 ? Data(repeating: UInt8(n), count: 50) : Data()
                context.insert(note)
            }
            if n % 4 == 0, let first = try context.fetch(FetchDescriptor<FuzzNote>()).first { context.delete(first) }
            try context.save()
            states.append(try readNotes(container))
        }
        if variant == 2 { try container.compact() }
    } catch {
        FileHandle.standardError.write(Data("building note sample \(variant) failed: \(error)\n".utf8))
        abort()
    }
    let sample = NoteSample(fs: fs, states: states)
    noteSamples[variant] = sample
    return sample
}

nonisolated(unsafe) var inputsTried = 0
nonisolated(unsafe) var bytesTried = 0

struct FuzzFinding: Error { let text: String; init(_ text: String) { self.text = text } }

func fatalFinding(_ message: String) -> Never {
    FileHandle.standardError.write(Data("FUZZ FINDING: \(message)\n".utf8))
    abort()
}

/// Runs `body`; a StrataError or StoreError is an acceptable outcome, anything else a finding.
func allowingErrors<R>(_ what: String, _ body: () throws -> R) -> R? {
    do { return try body() } catch is StrataError {
        return nil
    } catch is StoreError {
        return nil
    } catch let f as FuzzFinding {
        fatalFinding("\(what): \(f.text)")
    } catch {
        fatalFinding("\(what) threw \(type(of: error)): \(error)")
    }
}

/// Limits and offsets a caller may pass, the edges first.
let pagingEdges: [Int?] = [nil, Int.max, Int.min, -1, 0, 1, 2, 5, Int.max - 1, 9]

/// A page (limit and offset from the input's first two bytes, any `Int` at the edges; a
/// predicate and an order from its flags) must be that page of the whole result, by fetch,
/// fetchCount, fetchIdentifiers and fetch(_:batchSize:), with and without an unsaved insert.
func checkPaging(_ container: ModelContainer, _ input: [UInt8]) throws {
    let limit = pagingEdges[Int(input[0] / 3) % pagingEdges.count]
    let offset = pagingEdges[Int(input[1] >> 1) % pagingEdges.count]
    let context = ModelContext(container)
    if input[1] & 0x80 != 0 {
        let pending = FuzzNote()
        pending.key = 98
        pending.title = "t1"
        context.insert(pending)
    }
    let predicate: Predicate<FuzzNote>? = input[1] & 0x20 != 0 ? #Predicate { $0.title != "t0" } : nil
    let sorts: [[SortDescriptor<FuzzNote>]] = [[], [SortDescriptor(\.key, order: .reverse)], [SortDescriptor(\.title), SortDescriptor(\.key)]]
    var descriptor = FetchDescriptor<FuzzNote>(predicate: predicate, sortBy: sorts[Int(input[1] >> 2) % 3])
    let all = try context.fetch(descriptor).map(\.key)
    descriptor.fetchLimit = limit
    descriptor.fetchOffset = offset
    let start = min(max(0, offset ?? 0), all.count)
    let want = Array(all[start...].prefix((limit ?? 0) > 0 ? limit! : all.count))
    let got = try context.fetch(descriptor).map(\.key)
    if got != want { throw FuzzFinding("limit \(String(describing: limit)) offset \(String(describing: offset)) fetched \(got), not \(want)") }
    if try context.fetchCount(descriptor) != want.count { throw FuzzFinding("fetchCount disagrees with the page \(want)") }
    if try context.fetchIdentifiers(descriptor).count != want.count { throw FuzzFinding("fetchIdentifiers disagrees with the page \(want)") }
    if try context.fetch(descriptor, batchSize: 2).map(\.key) != want { throw FuzzFinding("fetch(_:batchSize:) disagrees with the page \(want)") }
}

func fuzzSeeds() -> [[UInt8]] {
    (0..<3).flatMap { v -> [[UInt8]] in
        [[UInt8(v), 0, 0, 0, 0], [UInt8(v), 1, 0x00, 0x02, 0], [UInt8(v), 0, 0, 0, 0, 0x90, 0, 0, 0x04]]
    }
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    guard let folder = ProcessInfo.processInfo.environment["STRATA_FUZZ_SEEDS"] else {
        atexit { FileHandle.standardError.write(Data("strata-fuzz: \(inputsTried) inputs, \(bytesTried) bytes tried\n".utf8)) }
        return 0
    }
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for (i, seed) in fuzzSeeds().enumerated() {
        _ = FileManager.default.createFile(atPath: "\(folder)/seed-\(i)", contents: Data(seed))
    }
    exit(0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    inputsTried += 1
    guard let data, size >= 5 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let sample = noteSample(Int(input[0]) % 3)
    guard var bytes = sample.fs.bytes(of: storePath), !bytes.isEmpty else { return 0 }
    func u24(_ i: Int) -> Int { Int(input[i]) | Int(input[i + 1]) << 8 | Int(input[i + 2]) << 16 }
    var i = 5
    while i + 4 <= input.count {
        let offset = u24(i) % bytes.count
        bytes[offset] ^= input[i + 3] == 0 ? 0x80 : input[i + 3]
        i += 4
    }
    if input[1] & 1 != 0 { bytes.removeLast(bytes.count - u24(2) % bytes.count) }
    bytesTried += bytes.count
    let fs = sample.fs.clone()
    fs.setBytes(bytes, of: storePath)
    var expected = NoteState()
    do {
        guard let container = allowingErrors("open", { try openNotes(fs) }) else { return 0 }
        guard let state = allowingErrors("read", { try readNotes(container) }) else { return 0 }
        guard sample.states.contains(state) else {
            fatalFinding("the damaged store reads \(state.notes.count) notes that it never held after any save: \(state.notes.sorted { $0.key < $1.key })")
        }
        _ = allowingErrors("page") { try checkPaging(container, input) }
        // Saving goes on from there, and survives a reopen.
        let saved = allowingErrors("save") { () -> Bool in
            let context = ModelContext(container)
            let note = FuzzNote()
            note.key = 99
            note.title = "after"
            context.insert(note)
            try context.save()
            return true
        } ?? false
        guard saved else { return 0 }
        expected = state
        expected.notes[99] = ["after", "nil", ""]
    }
    guard let again = allowingErrors("reopen", { try openNotes(fs) }) else { fatalFinding("a store that took a save does not open again") }
    guard let reread = allowingErrors("read after reopening", { try readNotes(again) }) else {
        fatalFinding("a store that read whole and took a save cannot be read after reopening")
    }
    if reread != expected { fatalFinding("after a save on the recovered store, the reopened store reads differently") }
    return 0
}
