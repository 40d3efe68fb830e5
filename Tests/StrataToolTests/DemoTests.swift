// `strata demo` as a new user runs it: each run on a fresh store (unless --keep), never over a
// store that is not a demo's, the store's folder as the library decides, and a last line whose
// commands work from where the user is.
import Foundation
import Strata
import StrataEngine
import Testing

@Suite struct DemoTests {
    /// "the store holds N courses" from a demo's output.
    static func held(_ run: ToolRun) -> Int? {
        run.lines.first { $0.hasPrefix("  the store holds ") }.flatMap { Int($0.split(separator: " ")[3]) }
    }

    /// Each run starts on a fresh store; --keep adds to the last one.
    @Test func eachRunStartsFreshUnlessKept() throws {
        let folder = try TestFolder()
        let path = folder.path("demo.store")
        for _ in 0..<2 {
            let run = try Tool.run("demo", "--path", path, "--count", "30")
            #expect(run.status == 0, "\(run)")
            #expect(Self.held(run) == 0, "\(run)")
            #expect(run.stdout.contains("→ 30 courses survived the reopen"), "\(run)")
        }
        let kept = try Tool.run("demo", "--path", path, "--count", "30", "--keep")
        #expect(kept.status == 0, "\(kept)")
        #expect(Self.held(kept) == 30, "\(kept)")
        #expect(kept.stdout.contains("→ 60 courses survived the reopen"), "\(kept)")
    }

    /// A store that holds anything but the demo's courses is left alone: exit 1, unchanged.
    @Test func anotherStoreIsLeftAlone() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.lessons(at: path, count: 5)
        let bytes = try Fixture.bytes(of: path)
        let run = try Tool.run("demo", "--path", path, "--count", "10")
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("is not a demo store (it holds Lesson)"), "\(run)")
        #expect(try Fixture.bytes(of: path) == bytes)
    }

    /// The folder of --path must exist (the library's rule): nothing is created. The default
    /// location's folder is made on first use.
    @Test func theStoresFolder() throws {
        let folder = try TestFolder()
        let missing = folder.url.appendingPathComponent("no-such-folder")
        let run = try Tool.run("demo", "--path", missing.appendingPathComponent("demo.store").path, "--count", "10")
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("The folder \(missing.path) does not exist"), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: missing.path))

        let data = folder.url.appendingPathComponent("data")
        let fresh = try Tool.run(["demo", "--count", "10"], environment: ["XDG_DATA_HOME": data.path])
        #expect(fresh.status == 0, "\(fresh)")
        #expect(fresh.lines.first == "Strata demo on \(data.path)/strata/demo.store", "\(fresh)")
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("strata/demo.store").path))
    }

    /// Outside the package, the last line names the tool by its path, and its commands run as
    /// printed (here with a path that needs quoting).
    @Test func theLastLineWorksFromElsewhere() throws {
        let folder = try TestFolder()
        let path = folder.path("my demo's.store")
        let run = try Tool.run(["demo", "--path", path, "--count", "20"], in: folder.url)
        #expect(run.status == 0, "\(run)")
        let last = try #require(run.lines.last)
        #expect(last.hasPrefix("Look inside with `"), "\(run)")
        let commands = last.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
        #expect(commands.count == 3, "\(last)")
        for command in commands {
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/bin/sh")
            shell.arguments = ["-c", command + " > /dev/null"]
            shell.currentDirectoryURL = folder.url
            try shell.run()
            shell.waitUntilExit()
            #expect(shell.terminationStatus == 0, "`\(command)` failed")
        }
    }

    /// In the package that built it, the last line says `swift run strata`, and how to install
    /// it. (A tool built in another scratch folder is named by its path, as anywhere else.)
    @Test func theLastLineInThePackage() throws {
        let folder = try TestFolder()
        let path = folder.path("demo.store")
        let package = try Tool.packageFolder()
        let run = try Tool.run(["demo", "--path", path, "--count", "20"], in: package ?? folder.url)
        #expect(run.status == 0, "\(run)")
        if package != nil {
            #expect(run.stdout.contains("Look inside with `swift run strata info \(path)`"), "\(run)")
            #expect(run.lines.last?.contains("swift build -c release") == true, "\(run)")
        } else {
            #expect(run.stdout.contains("Look inside with `\(try Tool.url().resolvingSymlinksInPath().path) info \(path)`"), "\(run)")
        }
    }
}
