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

    /// Zeros written ahead of the next commits are no tail; neither is what lies past the commit
    /// a live writer published.
    @Test func zerosAheadAndALiveWriterHaveNoTail() throws {
        let f = try CrashFixture.make(commits: 3)
        #expect(try Self.readOnly(f.bytes + [UInt8](repeating: 0, count: 70_000)).discardedTail() == nil)
        let fs = f.fs.clone()
        let writer = try CrashWorkload.open(fs)
        _ = try CrashWorkload.commit(writer, after: f.states[f.last])
        // A commit being written past the published one: not a tail while the writer lives.
        fs.setBytes(fs.bytes(of: CrashWorkload.path)!.strippingZeroTail() + [1, 2, 3], of: CrashWorkload.path)
        #expect(try CrashWorkload.open(fs, readOnly: true).discardedTail() == nil)
        writer.close()   // (which cuts the file at its last commit)
        fs.setBytes(fs.bytes(of: CrashWorkload.path)! + [1, 2, 3], of: CrashWorkload.path)
        #expect(try CrashWorkload.open(fs, readOnly: true).discardedTail()?.length == 3)
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
            // The tail ends at its last nonzero byte (zeros written ahead are not a commit; so are
            // the zeros before a page, when a cut falls after them).
            let kept = Array(f.bytes.prefix(cut)).strippingZeroTail().count
            guard kept > start else {
                #expect(try Self.readOnly(Array(f.bytes.prefix(cut))).discardedTail() == nil, "cut at \(cut): zeros only")
                continue
            }
            let tail = try #require(try Self.readOnly(Array(f.bytes.prefix(cut))).discardedTail(), "cut at \(cut)")
            #expect(tail == DiscardedTail(offset: UInt64(start), length: UInt64(kept - start), wholeCommits: []), "cut at \(cut)")
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
