// Store.discardedTail(): the bytes past the last valid commit of a store opened read-only, and
// whether they hold a whole commit (a lost commit) or a commit cut short (a torn tail). The
// tool's tests (StrataToolTests/DiscardedTailTests) do the same through `strata verify` on
// real files.
import Testing
import StrataTestSupport
@testable import StrataEngine

@Suite struct DiscardedTailTests {
    static func readOnly(_ bytes: [UInt8]) throws -> Store {
        try CrashWorkload.open(CrashFixture.fileSystem(holding: bytes), readOnly: true)
    }

    @Test func noTailAndWritableStores() throws {
        let f = try CrashFixture.make(commits: 3)
        #expect(try Self.readOnly(f.bytes).discardedTail() == nil)
        // A writable open cuts the tail off, so it has none to report.
        let torn = Array(f.bytes.dropLast(10))
        #expect(try CrashWorkload.open(CrashFixture.fileSystem(holding: torn)).discardedTail() == nil)
    }

    /// Every cut inside the last commit is a torn tail of the right length, with no whole commit.
    @Test func everyCutOfTheLastCommitIsTorn() throws {
        let f = try CrashFixture.make(commits: 3)
        let start = f.ends[f.last - 1]
        for cut in (start + 1)..<f.ends[f.last] {
            let tail = try #require(try Self.readOnly(Array(f.bytes.prefix(cut))).discardedTail(), "cut at \(cut)")
            #expect(tail == DiscardedTail(offset: UInt64(start), length: UInt64(cut - start), wholeCommits: []), "cut at \(cut)")
        }
    }

    /// A whole last commit that fails a check: its body, or its record.
    @Test func aDamagedWholeCommitIsFound() throws {
        let f = try CrashFixture.make(commits: 3)
        let start = f.ends[f.last - 1], end = f.ends[f.last]
        for (offset, reason) in [(start + 5, "its body"), (end - 30, "its commit record fails its checksum")] {
            var bytes = f.bytes
            bytes[offset] ^= 0x10
            let tail = try #require(try Self.readOnly(bytes).discardedTail())
            #expect(tail.offset == UInt64(start) && tail.length == UInt64(end - start))
            let whole = try #require(tail.wholeCommits.first)
            #expect(tail.wholeCommits.count == 1)
            #expect(whole.end == UInt64(end))
            #expect(whole.reason.hasPrefix(reason), "\(whole)")
            #expect(whole.sequence == (reason == "its body" ? UInt64(f.last) : nil))
        }
    }
}
