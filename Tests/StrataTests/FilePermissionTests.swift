// Files Strata writes keep the permissions of the store they belong to: a compacted copy, a
// migrated copy, a format upgrade, blob files and their folder, a lock file made for an existing
// store. A private store never comes back world-readable.
import Foundation
import Testing
import Strata
import StrataEngine
import StrataTestSupport

final class PrivatePhoto: PersistentModel {
    @Attribute var name: String = ""
    @Attribute(.externalStorage) var bytes: Data = Data()
    init() {}
    init(_ name: String, size: Int) {
        self.name = name
        bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    }
}

private func mode(_ path: String) throws -> Int {
    try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
}

private func owner(_ path: String) throws -> (Int, Int) {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (try #require(attributes[.ownerAccountID] as? Int), try #require(attributes[.groupOwnerAccountID] as? Int))
}

private func setMode(_ mode: Int, _ path: String) throws {
    try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
}

@Suite struct FilePermissionTests {
    let dir = TemporaryDirectory()

    @Test(arguments: [0o600, 0o640]) func compactionKeepsTheStoresMode(_ wanted: Int) throws {
        let url = dir.store("photos")
        do {
            let container = try ModelContainer(for: PrivatePhoto.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            for i in 0..<4 { context.insert(PrivatePhoto("photo \(i)", size: 5_000)) }
            try context.save()
        }
        try setMode(wanted, url.path)
        try? FileManager.default.removeItem(atPath: url.path + ".lock")
        let container = try ModelContainer(for: PrivatePhoto.self, configurations: ModelConfiguration(url: url))
        #expect(try mode(url.path + ".lock") == wanted, "a lock file made for the store takes its mode")
        let context = ModelContext(container)
        context.insert(PrivatePhoto("new", size: 7_000))
        try context.delete(model: PrivatePhoto.self, where: #Predicate { $0.name == "photo 0" })
        try context.save()
        try container.compact()
        #expect(try mode(url.path) == wanted)
        let blobs = url.path + ".blobs"
        // Blob files are named by id, in the order they were made: the last is the new photo's.
        let files = try FileManager.default.contentsOfDirectory(atPath: blobs).filter { $0.hasSuffix(".blob") }.sorted()
        #expect(files.count == 4)
        #expect(try files.last.map { try mode(blobs + "/" + $0) } == wanted, "a new blob file takes the store's mode")
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<PrivatePhoto>()) == 4)
    }

    @Test func aNewBlobFolderIsSearchableByWhoeverMayReadTheStore() throws {
        let url = dir.store("photos")
        do { _ = try ModelContainer(for: PrivatePhoto.self, configurations: ModelConfiguration(url: url)) }
        try setMode(0o640, url.path)
        let container = try ModelContainer(for: PrivatePhoto.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        context.insert(PrivatePhoto("first", size: 4_000))
        try context.save()
        #expect(try mode(url.path + ".blobs") == 0o750)
    }

    /// As root (as CI runs), a store given to another owner keeps that owner through compaction.
    @Test func compactionKeepsTheStoresOwnerWhereItMay() throws {
        guard geteuid() == 0 else { return }
        let url = dir.store("owned")
        do {
            let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            context.insert(Trip(name: "a", startDate: .now))
            try context.save()
        }
        try FileManager.default.setAttributes([.ownerAccountID: 4242, .groupOwnerAccountID: 4343, .posixPermissions: 0o600], ofItemAtPath: url.path)
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
        try container.compact()
        #expect(try owner(url.path) == (4242, 4343))
        #expect(try mode(url.path) == 0o600)
    }

    @Test func aMigratedCopyKeepsTheStoresMode() throws {
        let url = dir.store("animals")
        do {
            let container = try ModelContainer(for: HeldV1.Animal.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            context.insert(HeldV1.Animal(name: "cat"))
            try context.save()
        }
        try setMode(0o600, url.path)
        let v2 = try ModelContainer(for: HeldV2.Animal.self, migrationPlan: HeldPlan.self, configurations: ModelConfiguration(url: url))
        #expect(try ModelContext(v2).fetch(FetchDescriptor<HeldV2.Animal>()).map(\.legs) == [4])
        #expect(try mode(url.path) == 0o600)
    }

    @Test func aFormatUpgradeKeepsTheStoresMode() throws {
        let path = dir.store("old").path
        try FormatVersion1Fixture.install(at: path)
        try setMode(0o640, path)
        _ = try Store.upgrade(path: path)
        #expect(try mode(path) == 0o640)
    }
}
