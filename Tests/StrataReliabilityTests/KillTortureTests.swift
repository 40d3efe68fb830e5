// Process-kill torture, short: a child saves in a loop (engine and object level) and is
// SIGKILLed at random moments; after each kill both stores must hold every acknowledged save,
// no half of any save, indexes that agree with the records, and pass verify(). The long run
// (thousands of kills) is scripts/torture.sh; Docs/Durability.md has its figures.
import Foundation
import Testing
import Strata
import StrataEngine
import StrataTestSupport

@Suite struct KillTortureTests {
    @Test(arguments: [UInt64(1), 2]) func killedWhileSavingLosesNothing(seed: UInt64) throws {
        let dir = try ReliabilityDirectory()
        let driver = try TortureDriver(helper: try helperURL(), directory: dir.path, seed: seed)
        for _ in 0..<3 {
            // Each kill comes after the helper acknowledged a save, however slow the machine.
            let problems = try driver.round(maximumDelay: 0.5, afterASave: true)
            #expect(problems.isEmpty, "\(problems)")
            if !problems.isEmpty { break }
        }
        #expect(driver.figures.kills + driver.figures.unexpectedExits == 3)
        #expect(driver.figures.acknowledgedSaves.values.reduce(0, +) > 0, "\(driver.figures)")
    }

    /// While the helper saves, this process cannot open either store for writing: it gets a
    /// clear `.locked` error (the object layer wraps it) and changes nothing.
    @Test func secondWriterIsLockedOut() throws {
        let dir = try ReliabilityDirectory()
        let driver = try TortureDriver(helper: try helperURL(), directory: dir.path, seed: 3)
        var engineError: StoreError?
        var objectError: (any Error)?
        let problems = try driver.round(maximumDelay: 0) {
            // The helper is running: wait until it has opened both stores and saved (bounded
            // generously: a busy machine may take long to start it).
            let log = dir.path + "/helper.log"
            let deadline = Date().addingTimeInterval(300)
            while Date() < deadline, !((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("O ") {
                Thread.sleep(forTimeInterval: 0.01)
            }
            do { _ = try Store(path: TortureLevel.engine.path(in: dir.path)) } catch { engineError = error as? StoreError }
            do { _ = try ModelContainer(for: Schema(tortureModels),
                                        configurations: ModelConfiguration(url: URL(fileURLWithPath: TortureLevel.objects.path(in: dir.path)))) }
            catch { objectError = error }
        }
        #expect(problems.isEmpty, "\(problems)")
        #expect(engineError?.code == .locked, "\(String(describing: engineError))")
        #expect(engineError?.message.contains("Another process") == true)
        let strata = objectError as? StrataError
        #expect(strata?.code == .storeFailure, "\(String(describing: objectError))")
        #expect((strata?.underlying as? StoreError)?.code == .locked)
    }
}

/// A fresh directory for one test: each store left in it is verified when it goes, and a
/// problem is an issue of the test (`TestStore`).
final class ReliabilityDirectory {
    let folder: TestStore
    /// The directory's path.
    var path: String { folder.url.path }
    init(_ name: String = #function) throws { folder = TestStore(name, report: { Issue.record(Comment(rawValue: $0)) }) }
}

/// The `StrataTestHelper` executable, built beside the test bundle.
func helperURL() throws -> URL {
    var folders: [URL] = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
    if let executable = Bundle.main.executableURL { folders.append(executable.deletingLastPathComponent()) }
    folders.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
    folders.append(Bundle.main.bundleURL.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent())
    for folder in folders {
        let candidate = folder.appendingPathComponent("StrataTestHelper")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    struct HelperMissing: Error, CustomStringConvertible {
        let looked: [String]
        var description: String { "StrataTestHelper was not found (build it with `swift build --build-tests`); looked in \(looked)" }
    }
    throw HelperMissing(looked: folders.map(\.path))
}
