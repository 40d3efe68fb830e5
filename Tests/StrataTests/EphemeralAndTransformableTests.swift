import Foundation
import Observation
import Testing
import Strata

// `@Attribute(.ephemeral)` and `@Attribute(.transformable(by:))` (issue 17, item 3).

enum DraftsV1 {
    final class Draft: PersistentModel {
        @Attribute var title: String = ""
        @Attribute var cursor: Int = 0
        init() {}
    }
}

enum DraftsV2 {
    final class Draft: PersistentModel {
        @Attribute var title: String = ""
        @Attribute(.ephemeral) var cursor: Int = 0
        @Attribute(.ephemeral) var selection: String
        init() { selection = "none" }
        init(title: String) { self.title = title; selection = "new" }
    }
}

/// A type that is not Codable, stored through a transformer.
final class Color: Equatable {
    let rgb: [UInt8]
    init(_ rgb: [UInt8]) { self.rgb = rgb }
    static func == (a: Color, b: Color) -> Bool { a.rgb == b.rgb }
}

final class ColorTransformer: ValueTransformer {
    override class func allowsReverseTransformation() -> Bool { true }
    override func transformedValue(_ value: Any?) -> Any? { (value as? Color).map { Data($0.rgb) } }
    override func reverseTransformedValue(_ value: Any?) -> Any? { (value as? Data).map { Color([UInt8]($0)) } }
}

final class Swatch: PersistentModel {
    @Attribute var name: String = ""
    @Attribute(.transformable(by: ColorTransformer.self)) var color: Color = Color([0, 0, 0])
    @Attribute(.transformable(by: ColorTransformer.self)) var accent: Color? = nil
    @Attribute(.transformable(by: "UppercaseTransformer")) var label: String = ""
    init() {}
    init(name: String, color: Color, accent: Color?, label: String) {
        self.name = name; self.color = color; self.accent = accent; self.label = label
    }
}

/// Registered by name: stores a String uppercased, reads it back lowercased.
final class UppercaseTransformer: ValueTransformer {
    override class func allowsReverseTransformation() -> Bool { true }
    override func transformedValue(_ value: Any?) -> Any? { (value as? String).map { Data($0.uppercased().utf8) } }
    override func reverseTransformedValue(_ value: Any?) -> Any? { (value as? Data).map { String(decoding: $0, as: UTF8.self).lowercased() } }
}

final class NotCodable {}
final class Unstorable: PersistentModel {
    @Attribute var name: String = ""
    @Attribute(.unique) var thing: NotCodable = NotCodable()
    init() {}
}

@Suite struct EphemeralAndTransformableTests {
    @Test func anEphemeralAttributeIsObservedButNeverWritten() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        let draft = DraftsV2.Draft(title: "a")
        do {
            let context = ModelContext(try ModelContainer(for: DraftsV2.Draft.self, configurations: config))
            context.insert(draft)
            draft.cursor = 42
            try context.save()
            // In memory it holds what was set, and setting it is observed.
            #expect(draft.cursor == 42)
            let told = Told()
            withObservationTracking { _ = draft.cursor } onChange: { told.set() }
            draft.cursor = 43
            #expect(told.value)
        }
        let loaded = try ModelContext(try ModelContainer(for: DraftsV2.Draft.self, configurations: config)).fetch(FetchDescriptor<DraftsV2.Draft>())
        #expect(loaded.map(\.title) == ["a"])
        #expect(loaded.map(\.cursor) == [0], "a fetched object's ephemeral property holds its declaration's default")
        #expect(loaded.map(\.selection) == ["none"], "one set in init() holds what init() gives it")
    }

    @Test func valuesAnOlderVersionPersistedAreDroppedNotTrappedOn() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        do {
            let context = ModelContext(try ModelContainer(for: DraftsV1.Draft.self, configurations: config))
            let draft = DraftsV1.Draft()
            draft.title = "old"
            draft.cursor = 7
            context.insert(draft)
            try context.save()
        }
        do {
            let context = ModelContext(try ModelContainer(for: DraftsV2.Draft.self, configurations: config))
            let draft = try #require(try context.fetch(FetchDescriptor<DraftsV2.Draft>()).first)
            #expect(draft.cursor == 0)
            draft.title = "edited"
            draft.cursor = 9
            try context.save()
        }
        let draft = try #require(try ModelContext(try ModelContainer(for: DraftsV2.Draft.self, configurations: config))
            .fetch(FetchDescriptor<DraftsV2.Draft>()).first)
        #expect(draft.title == "edited")
        #expect(draft.cursor == 0)
    }

    @Test func aTransformableAttributeRoundTripsThroughItsTransformer() throws {
        ValueTransformer.setValueTransformer(UppercaseTransformer(), forName: NSValueTransformerName("UppercaseTransformer"))
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        do {
            let context = ModelContext(try ModelContainer(for: Swatch.self, configurations: config))
            context.insert(Swatch(name: "sea", color: Color([0, 80, 200]), accent: Color([255, 255, 255]), label: "Deep"))
            context.insert(Swatch(name: "ink", color: Color([1, 2, 3]), accent: nil, label: "x"))
            try context.save()
        }
        let context = ModelContext(try ModelContainer(for: Swatch.self, configurations: config))
        let swatches = try context.fetch(FetchDescriptor<Swatch>(sortBy: [SortDescriptor(\.name)]))
        #expect(swatches.map(\.name) == ["ink", "sea"])
        #expect(swatches.map(\.color) == [Color([1, 2, 3]), Color([0, 80, 200])])
        #expect(swatches.map(\.accent) == [nil, Color([255, 255, 255])])
        // Stored uppercased by the named transformer, read back through it.
        #expect(swatches.map(\.label) == ["x", "deep"])
    }

    /// A schema lists `.transformable(by:)` among an attribute's options, as SwiftData's does, so
    /// a custom store (StrataPostgres keeps it as bytea) knows the value is the transformer's Data.
    @Test func aSchemaListsTheTransformableOption() throws {
        ValueTransformer.setValueTransformer(UppercaseTransformer(), forName: NSValueTransformerName("UppercaseTransformer"))
        let entity = try #require(Schema([Swatch.self]).entities.first { $0.name == "Swatch" })
        let options = Dictionary(uniqueKeysWithValues: entity.attributes.map { ($0.name, $0.options) })
        #expect(options["color"] == [.transformable(by: ColorTransformer.self)])
        #expect(options["label"] == [.transformable(by: "UppercaseTransformer")])
        #expect(options["name"] == [])
    }

    @Test func aTypeThatIsNotCodableWithoutATransformerIsASchemaError() {
        #expect {
            _ = try ModelContainer(for: Unstorable.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        } throws: { error in
            (error as? StrataError)?.code == .invalidSchema && "\(error)".contains("Unstorable.thing") && "\(error)".contains("transformable")
        }
    }

    @Test func anUnregisteredTransformerNameIsASchemaError() {
        final class Labelled: PersistentModel {
            @Attribute(.transformable(by: "NoSuchTransformer")) var label: String = ""
            init() {}
        }
        #expect {
            _ = try ModelContainer(for: Labelled.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        } throws: { error in
            "\(error)".contains("NoSuchTransformer")
        }
    }
}

private final class Told: @unchecked Sendable {
    private let lock = NSLock()
    private var told = false
    func set() { lock.withLock { told = true } }
    var value: Bool { lock.withLock { told } }
}
