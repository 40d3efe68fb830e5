import Foundation
import Testing
import Strata

final class Photo: PersistentModel {
    @Attribute var title: String = ""
    @Attribute(.externalStorage) var image: Data? = nil
    init() {}
    init(title: String, image: Data?) { self.title = title; self.image = image }
}

@Suite struct ExternalStorageTests {
    func blobFiles(_ dir: TemporaryDirectory) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: dir.store().path + ".blobs")) ?? []
    }

    @Test func largeValuesGoToBlobFilesAndRoundTripAfterAReopen() throws {
        let dir = TemporaryDirectory()
        let big = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        do {
            let context = ModelContext(try ModelContainer(for: Photo.self, configurations: ModelConfiguration(url: dir.store())))
            context.insert(Photo(title: "big", image: big))
            context.insert(Photo(title: "none", image: nil))
            try context.save()
        }
        #expect(blobFiles(dir).count == 1)
        // The record holds a reference: the store file stays small.
        let size = try FileManager.default.attributesOfItem(atPath: dir.store().path)[.size] as? Int ?? 0
        #expect(size < 100_000)
        let context = ModelContext(try ModelContainer(for: Photo.self, configurations: ModelConfiguration(url: dir.store())))
        let photos = try context.fetch(FetchDescriptor<Photo>(sortBy: [SortDescriptor(\.title)]))
        #expect(photos.map(\.title) == ["big", "none"])
        #expect(photos[0].image == big)
        #expect(photos[1].image == nil)
    }

    @Test func replacingOrDeletingRemovesTheOldBlob() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Photo.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        let photo = Photo(title: "p", image: Data(repeating: 1, count: 100_000))
        context.insert(photo)
        try context.save()
        let first = blobFiles(dir)
        #expect(first.count == 1)
        photo.image = Data(repeating: 2, count: 200_000)
        try context.save()
        let second = blobFiles(dir)
        #expect(second.count == 1 && second != first)
        #expect(try ModelContext(container).fetch(FetchDescriptor<Photo>()).first?.image == Data(repeating: 2, count: 200_000))
        context.delete(photo)
        try context.save()
        #expect(blobFiles(dir).isEmpty)
    }

    @Test func predicatesOnAModelWithExternalStorageStillWork() throws {
        let container = try ModelContainer(for: Photo.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.insert(Photo(title: "a", image: Data(repeating: 7, count: 50_000)))
        context.insert(Photo(title: "b", image: nil))
        try context.save()
        let fresh = ModelContext(container)
        let withImage = try fresh.fetch(FetchDescriptor<Photo>(predicate: #Predicate { $0.image != nil }))
        #expect(withImage.map(\.title) == ["a"])
    }
}

extension ExternalStorageTests {
    /// A missing blob file is a typed error when the object is fetched, never a trap on read.
    @Test func aMissingBlobFileIsATypedErrorWhenFetching() throws {
        let dir = TemporaryDirectory()
        dir.expectDamage(at: dir.store().path)   // a blob file is removed, on purpose
        do {
            let context = ModelContext(try ModelContainer(for: Photo.self, configurations: ModelConfiguration(url: dir.store())))
            context.insert(Photo(title: "p", image: Data(repeating: 3, count: 50_000)))
            try context.save()
        }
        for name in blobFiles(dir) { try FileManager.default.removeItem(atPath: dir.store().path + ".blobs/" + name) }
        let context = ModelContext(try ModelContainer(for: Photo.self, configurations: ModelConfiguration(url: dir.store())))
        #expect { _ = try context.fetch(FetchDescriptor<Photo>()) } throws: { error in
            (error as? StrataError)?.code == .corruptRecord && "\(error)".contains("missing")
        }
    }
}

final class NamedPhoto: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute(.externalStorage) var image: Data? = nil
    init() {}
    init(name: String, image: Data?) { self.name = name; self.image = image }
}

extension ExternalStorageTests {
    /// An upsert reads the stored row where it replaces it: the blob of the value it replaces
    /// goes with it, and a deletion of rows without objects (`delete(model:where:)`) removes
    /// their blobs too.
    @Test func anUpsertOrABatchDeletionRemovesTheStoredRowsBlobs() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: NamedPhoto.self, configurations: ModelConfiguration(url: dir.store()))
        do {
            let context = ModelContext(container)
            context.insert(NamedPhoto(name: "a", image: Data(repeating: 1, count: 100_000)))
            context.insert(NamedPhoto(name: "b", image: Data(repeating: 2, count: 100_000)))
            try context.save()
        }
        #expect(blobFiles(dir).count == 2)
        do {
            let context = ModelContext(container)
            context.insert(NamedPhoto(name: "a", image: Data(repeating: 3, count: 150_000)))
            context.insert(NamedPhoto(name: "b", image: nil))
            try context.save()
        }
        #expect(blobFiles(dir).count == 1)
        let photos = try ModelContext(container).fetch(FetchDescriptor<NamedPhoto>(sortBy: [SortDescriptor(\.name)]))
        #expect(photos.map(\.name) == ["a", "b"])
        #expect(photos.map(\.image) == [Data(repeating: 3, count: 150_000), nil])
        let context = ModelContext(container)
        try context.delete(model: NamedPhoto.self, where: #Predicate { $0.name == "a" })
        try context.save()
        #expect(blobFiles(dir).isEmpty)
        #expect(try ModelContext(container).fetch(FetchDescriptor<NamedPhoto>()).map(\.name) == ["b"])
    }
}
