// Damage in the middle of a store: single flipped bits at many places of earlier commits
// (pages, records, commit records), zeroed sectors, a damaged header, damaged blob files.
// Opening either gives the last intact commit or throws `.corrupt`; every read either gives
// the right answer or throws `.corrupt`; `verify()` names the damaged place. Never a crash,
// never a wrong answer.

import Testing
import StrataTestSupport
@testable import StrataEngine

@Suite struct CorruptionTests {
    /// The commit that opening must find when the bytes in `damage` are damaged: the last
    /// one whose bytes (body and commit record) are all intact.
    static func survivor(of damage: Range<Int>, in f: CrashFixture) -> Int {
        (0...f.last).last { k in
            let region = (k == 0 ? FileHeader.size : f.ends[k - 1])..<f.ends[k]
            return !region.overlaps(damage)
        } ?? 0
    }

    /// Opens `fs` after damage to the bytes in `damage` and checks everything the suite promises.
    static func expectDetected(_ fs: SimulatedFileSystem, damage: Range<Int>, _ f: CrashFixture, _ what: String,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        let store: Store
        do {
            store = try CrashWorkload.open(fs)
        } catch let error as StoreError {
            // Only a damaged header stops opening: damage after it is either a torn tail
            // (cut off) or in the middle (found when read).
            #expect(damage.lowerBound < FileHeader.size, "\(what): opening failed: \(error)", sourceLocation: sourceLocation)
            #expect(error.code == .corrupt || (damage.lowerBound < 8 && error.code == .notAStore), "\(what): \(error)", sourceLocation: sourceLocation)
            return
        } catch {
            Issue.record("\(what): \(error)", sourceLocation: sourceLocation)
            return
        }
        // Damage in the last commits makes them torn: opening falls back to the last intact
        // one and cuts the rest off. Damage before it stays, and must be found.
        let survivor = survivor(of: damage, in: f)
        let sequence = Int(store.currentSnapshot().sequence)
        #expect(sequence == survivor, "\(what): opened commit \(sequence), expected \(survivor)", sourceLocation: sourceLocation)
        let expected = f.states[min(sequence, f.last)]
        let remaining = damage.clamped(to: 0..<f.ends[survivor])

        // Every read gives the right answer or `.corrupt`.
        var corruptReads = 0
        do {
            let found = try CrashWorkload.read(store)
            #expect(found == expected, "\(what): a scan gave a wrong answer: \(found)", sourceLocation: sourceLocation)
        } catch let error as StoreError where error.code == .corrupt {
            corruptReads += 1
        } catch {
            Issue.record("\(what): scan: \(error)", sourceLocation: sourceLocation)
        }
        do {
            let wrong = try CrashWorkload.pointReadMismatches(store, expected)
            #expect(wrong.isEmpty, "\(what): point reads gave wrong answers: \(wrong)", sourceLocation: sourceLocation)
        } catch let error as StoreError where error.code == .corrupt {
            corruptReads += 1
        } catch {
            Issue.record("\(what): point reads: \(error)", sourceLocation: sourceLocation)
        }

        // verify() names the damage while it is in the file.
        do {
            let report = try store.verify()
            if remaining.isEmpty {
                #expect(report.isClean, "\(what): the damaged commits were cut off: \(report)", sourceLocation: sourceLocation)
                #expect(fs.bytes(of: f.path)!.count == f.ends[survivor], "\(what): the damaged tail is cut off", sourceLocation: sourceLocation)
            } else {
                #expect(!report.isClean, "\(what): verify found nothing", sourceLocation: sourceLocation)
                // A problem names a place in the damaged commit, at or before the damage.
                let k = f.ends.firstIndex { remaining.lowerBound < $0 }!
                let region = (k == 0 ? 0 : f.ends[k - 1])..<remaining.upperBound
                let named = report.problems.contains { p in p.offset.map { region.contains(Int($0)) } ?? false }
                #expect(named, "\(what): verify does not name the damaged commit (bytes \(region)): \(report)", sourceLocation: sourceLocation)
            }
            #expect(corruptReads == 0 || !report.isClean, "\(what): reads failed but verify is clean", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(what): verify threw \(error)", sourceLocation: sourceLocation)
        }
    }

    /// One flipped bit at many places of the file (every few bytes, rotating the bit).
    @Test(arguments: 0..<2)
    func flippedBitsAreDetected(slice: Int) throws {
        let f = try CrashFixture.make(commits: 5, initialRows: 12, archiveRows: 150)
        let bytes = f.bytes
        var checked = 0
        for offset in stride(from: FileHeader.size + slice * 29, to: bytes.count, by: 58) {
            let fs = CrashFixture.fileSystem(holding: bytes)
            fs.flipBit(of: f.path, at: offset, bit: offset % 8)
            Self.expectDetected(fs, damage: offset..<(offset + 1), f, "bit \(offset % 8) of byte \(offset) flipped")
            checked += 1
        }
        #expect(checked > 100)
    }

    /// Every byte of an earlier commit record.
    @Test func everyByteOfAnEarlierCommitRecord() throws {
        let f = try CrashFixture.make(commits: 5, initialRows: 12, archiveRows: 150)
        let bytes = f.bytes
        let k = 3
        let recordLength = try lastCommitRecordLength(Array(bytes[..<f.ends[k]]))
        let recordStart = f.ends[k] - recordLength
        for offset in (recordStart..<f.ends[k]) {
            let fs = CrashFixture.fileSystem(holding: bytes)
            fs.flipBit(of: f.path, at: offset, bit: offset % 8)
            Self.expectDetected(fs, damage: offset..<(offset + 1), f, "commit record \(k): bit \(offset % 8) of byte \(offset) flipped")
        }
    }

    /// A zeroed 512-byte sector in the middle of the file (a lost write).
    @Test func zeroedSectorsAreDetected() throws {
        let f = try CrashFixture.make(commits: 5, initialRows: 12, archiveRows: 150)
        let bytes = f.bytes
        for start in stride(from: 512, to: f.ends[f.last - 1], by: 512) {
            var damaged = bytes
            let end = min(start + 512, damaged.count)
            guard damaged[start..<end].contains(where: { $0 != 0 }) else { continue }
            damaged.replaceSubrange(start..<end, with: repeatElement(0, count: end - start))
            // The damage is from the first byte that changed to the last.
            let first = (start..<end).first { bytes[$0] != 0 }!
            let last = (start..<end).last { bytes[$0] != 0 }!
            Self.expectDetected(CrashFixture.fileSystem(holding: damaged), damage: first..<(last + 1), f, "sector at \(start) zeroed")
        }
    }

    /// Damage to the header makes opening fail with a typed error, never a guess.
    @Test func damagedHeaderIsRefused() throws {
        let f = try CrashFixture.make(commits: 2)
        let bytes = f.bytes
        for offset in 0..<FileHeader.size {
            let fs = CrashFixture.fileSystem(holding: bytes)
            fs.flipBit(of: f.path, at: offset, bit: offset % 8)
            crashExpectError(.corrupt, .notAStore, from: "header byte \(offset)") { try CrashWorkload.open(fs) }
            if offset >= 8 {
                crashExpectError(.corrupt, from: "header byte \(offset)") { try CrashWorkload.open(fs) }
            }
            crashExpectError(.corrupt, .notAStore, from: "header byte \(offset), read-only") { try CrashWorkload.open(fs, readOnly: true) }
            #expect(fs.bytes(of: f.path)! != bytes, "the damaged file is left as it is")
        }
        // Not a store at all, and a store with no intact commit record at all.
        crashExpectError(.notAStore) { try CrashWorkload.open(CrashFixture.fileSystem(holding: Array("hello, world".utf8))) }
        var noCommit = Array(bytes[..<FileHeader.size])
        var random = SeededGenerator(seed: 42)
        noCommit += (0..<8000).map { _ in UInt8.random(in: 0...255, using: &random) }
        crashExpectError(.corrupt) { try CrashWorkload.open(CrashFixture.fileSystem(holding: noCommit)) }
        // Zeros in a file larger than a new store are not taken for an interrupted creation.
        let zeros = CrashFixture.fileSystem(holding: [UInt8](repeating: 0, count: f.ends[0] + 1))
        crashExpectError(.notAStore) { try CrashWorkload.open(zeros) }
        #expect(zeros.bytes(of: f.path)! == [UInt8](repeating: 0, count: f.ends[0] + 1), "the file is left as it is")
        #expect(Store.newStoreSize == UInt64(f.ends[0]))
    }

    /// A damaged, cut or missing blob file: reading the blob throws `.corrupt`, the rest of
    /// the store reads fine, and verify names the blob.
    @Test(arguments: ["flip", "cut", "remove"])
    func damagedBlobFileIsDetected(damage: String) throws {
        let f = try CrashFixture.make(commits: 4, blobs: true)
        let state = f.states[f.last]
        let id = try #require(state.blobs.keys.max())
        let blobPath = f.path + ".blobs/" + String(repeating: "0", count: 15) + String(id, radix: 16) + ".blob"
        let blob = try #require(f.fs.bytes(of: blobPath))
        let fs = f.fs.clone()
        switch damage {
        case "flip": fs.flipBit(of: blobPath, at: blob.count / 2, bit: 5)
        case "cut": fs.truncateFile(blobPath, to: blob.count - 1)
        default: try fs.removeFile(blobPath)
        }
        let store = try CrashWorkload.open(fs)
        crashExpectError(.corrupt, from: "blob \(id), \(damage)") { try store.read { try $0.blob(BlobID(rawValue: id)) } }
        var rest = state
        rest.blobs[id] = nil
        for (other, bytes) in rest.blobs {
            #expect(try store.read { try $0.blob(BlobID(rawValue: other)) } == bytes)
        }
        #expect(try CrashWorkload.pointReadMismatches(store, rest).isEmpty)
        let report = try store.verify()
        #expect(!report.isClean)
        #expect(report.problems.contains { $0.message.contains("blob \(id)") }, "\(report)")
    }
}
