import Testing
import Foundation
@testable import StrataEngine

@Suite struct SmokeTests {
    @Test func putGetReopen() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-smoke-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("s.store").path
        do {
            let store = try Store(path: path)
            try store.write { tx in
                let c = try tx.createCollection(named: "c")
                try tx.put([1, 2, 3], row: 1, in: c)
            }
        }
        let store = try Store(path: path)
        let bytes = try store.read { tx in try tx.record(1, in: tx.collection(named: "c")!) }
        #expect(bytes == [1, 2, 3])
    }
}
