import Testing
@testable import StrataEngine
import StrataTestSupport

/// Pages and value frames are checked the first time a process reads them, and remembered by
/// where they start (one bit per 16 bytes; Docs/FileFormat.md, "Page"): a pointer into the
/// middle of a checked page, or a page pointer to a checked frame, must not pass for checked.
@Suite struct CheckedOnceTests {
    /// A file of a header, a leaf page at 64 and a value frame at 128.
    static func mappedFile() throws -> (MappedFile, page: UInt64, frame: UInt64) {
        let leaf = Node(isLeaf: true, budget: DirtyBudget(limit: .max))
        withUnsafeBytes(of: RowID(1).bigEndian) { k in [UInt8]("Ada".utf8).withUnsafeBytes { leaf.appendLeafCell(key: k, value: $0, flags: 0) } }
        var page: [UInt8] = []
        leaf.encode(into: &page)
        let frame = [UInt8](repeating: 7, count: 40).withUnsafeBytes { ValueFrame.encode($0) }
        var bytes = [UInt8](repeating: 0, count: 64) + page
        bytes += [UInt8](repeating: 0, count: 128 - bytes.count) + frame
        bytes += [UInt8](repeating: 0, count: 64)
        let fs = SimulatedFileSystem()
        fs.setBytes(bytes, of: "/f")
        let io = try fs.openFile("/f", readOnly: true, create: false)
        return (try MappedFile(mapping: try io.map(length: bytes.count, roomToGrow: false), counters: Counters(), path: "/f"), 64, 128)
    }

    @Test func aPageIsCheckedOnceAndOnlyWhereItStarts() throws {
        let (file, page, frame) = try Self.mappedFile()
        let limit = UInt64(file.count)
        #expect(try file.page(at: page, limit: limit).count == 1)
        #expect(file.counters.pagesRead.load(ordering: .relaxed) == 1)
        _ = try file.page(at: page, limit: limit)
        #expect(file.counters.pagesRead.load(ordering: .relaxed) == 1, "checked once")
        for inside in [page + 1, page + 8, page + 15] {
            #expect(throws: StoreError.self, "a pointer into a checked page (\(inside))") { try file.page(at: inside, limit: limit) }
        }
        // The frame, read as a page: checked as a page (and refused), although the frame was checked.
        _ = try file.frame(at: frame, length: 48, limit: limit)
        #expect(throws: StoreError.self, "a frame read as a page") { try file.page(at: frame, limit: limit) }
        // The page, read as a frame: checked as a frame (and refused), although the page was checked.
        #expect(throws: StoreError.self, "a page read as a frame") { try file.frame(at: page, length: 24, limit: limit) }
        #expect(throws: StoreError.self, "a frame pointer that is not a multiple of 16") { try file.frame(at: frame + 4, length: 40, limit: limit) }
    }
}
