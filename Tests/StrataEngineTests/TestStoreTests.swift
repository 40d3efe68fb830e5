// The test folder that verifies its stores at teardown (StrataTestSupport's TestStore): it
// finds a store broken behind the engine's back, names it, and is quiet about a clean one
// and about one a test damages on purpose.
import Foundation
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct TestStoreTests {
    @Test func itFindsAnIndexEntryRemovedBehindTheEnginesBackAndStaysQuietOtherwise() throws {
        let folder = TestStore(report: { Issue.record("unexpected teardown report: \($0)") })
        let path = folder.path("people.strata")
        let store = try Store(path: path, options: StoreOptions())
        let key = KeyEncoding.encode("ada@example.com")
        let index = try store.write { tx throws in
            let c = try tx.createCollection(named: "people")
            let index = try tx.createIndex(named: "email", on: c, unique: true)
            try tx.put(Array("Ada".utf8), row: 1, in: c, indexKeys: [IndexKey(index, key)])
            return index
        }
        #expect(folder.problems().isEmpty, "a clean store")
        try store.write { tx throws in _ = try key.withUnsafeBytes { try tx.tree(.index(index.rawValue)).remove($0) } }
        store.close()
        let problems = folder.problems()
        #expect(problems.contains { $0.hasPrefix("people.strata: ") && $0.contains("email") }, "\(problems)")
        // A file that is not a store is left alone; a store damaged on purpose is not verified.
        try Data("notes".utf8).write(to: URL(fileURLWithPath: folder.path("notes.txt")))
        folder.expectDamage(at: path)
        #expect(folder.problems().isEmpty)
    }
}
