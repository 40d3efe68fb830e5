import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import StrataDataMacros
import Testing

/// `@_PersistedProperty` alone: the markers stay as they are written (outside a `@Model`
/// class they would be diagnosed, see `MarkerMacroTests`).
private let propertyMacro: [String: MacroSpec] = ["_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self)]

@Suite struct PersistedPropertyMacroTests {
    @Test func aPlainProperty() {
        assertExpansion(
            """
            final class Trip {
                @_PersistedProperty var name: String
            }
            """,
            expandedSource: """
            final class Trip {
                var name: String {
                    @storageRestrictions(initializes: _$name, accesses: _name)
                    init(initialValue) {
                        _name._initialize(initialValue)
                        _$name = Strata._ModelPropertyInitialized()
                    }
                    get {
                        Strata._modelGet(self, \\.name, \\._name)
                    }
                    set {
                        Strata._modelSet(self, \\.name, \\._name, newValue)
                    }
                }

                private var _name: Strata._ModelStorage<String> = .init()

                private var _$name: Strata._ModelPropertyInitialized
            }
            """,
            macros: propertyMacro)
    }

    @Test func inferredTypesOptionsRelationshipsAndTransients() {
        assertExpansion(
            """
            final class Trip {
                @_PersistedProperty var count = 3
                @_PersistedProperty @Attribute(.unique, originalName: "key") var id: UUID
                @_PersistedProperty @Relationship(deleteRule: .cascade, inverse: \\Stop.trip) var stops: [Stop] = []
                @_PersistedProperty @Transient var isExpanded = false
                @_PersistedProperty @Transient var cache: [String: Int]?
                @_PersistedProperty var legacy: String!
                @_PersistedProperty var `default`: Int = 0
            }
            """,
            expandedSource: """
            final class Trip {
                var count {
                    @storageRestrictions(initializes: _$count, accesses: _count)
                    init(initialValue) {
                        _count._initialize(initialValue)
                        _$count = Strata._ModelPropertyInitialized()
                    }
                    get {
                        Strata._modelGet(self, \\.count, \\._count)
                    }
                    set {
                        Strata._modelSet(self, \\.count, \\._count, newValue)
                    }
                }

                private var _count = Strata._modelProperty(inferredFrom: 3)

                private var _$count: Strata._ModelPropertyInitialized
                @Attribute(.unique, originalName: "key") var id: UUID {
                    @storageRestrictions(initializes: _$id, accesses: _id)
                    init(initialValue) {
                        _id._initialize(initialValue)
                        _$id = Strata._ModelPropertyInitialized()
                    }
                    get {
                        Strata._modelGet(self, \\.id, \\._id)
                    }
                    set {
                        Strata._modelSet(self, \\.id, \\._id, newValue)
                    }
                }

                private var _id: Strata.Attribute<UUID> = .init(.unique, originalName: "key")

                private var _$id: Strata._ModelPropertyInitialized
                @Relationship(deleteRule: .cascade, inverse: \\Stop.trip) var stops: [Stop] {
                    @storageRestrictions(initializes: _$stops, accesses: _stops)
                    init(initialValue) {
                        _stops._initialize(initialValue)
                        _$stops = Strata._ModelPropertyInitialized()
                    }
                    get {
                        Strata._modelGet(self, \\.stops, \\._stops)
                    }
                    set {
                        Strata._modelSet(self, \\.stops, \\._stops, newValue)
                    }
                }

                private var _stops: Strata._ModelRelationship<[Stop]> = .init(deleteRule: .cascade, inverse: \\Stop.trip)

                private var _$stops: Strata._ModelPropertyInitialized
                @Transient var isExpanded {
                    @storageRestrictions(initializes: _$isExpanded, accesses: _isExpanded)
                    init(initialValue) {
                        _isExpanded._initialize(initialValue)
                        _$isExpanded = Strata._ModelPropertyInitialized()
                    }
                    get {
                        Strata._modelGet(self, \\.isExpanded, \\._isExpanded)
                    }
                    set {
                        Strata._modelSet(self, \\.isExpanded, \\._isExpanded, newValue)
                    }
                }

                private var _isExpanded = Strata._modelTransient(inferredFrom: false)

                private var _$isExpanded: Strata._ModelPropertyInitialized
                @Transient var cache: [String: Int]? {
                    @storageRestrictions(initializes: _$cache, accesses: _cache)
                    init(initialValue) {
                        _cache._initialize(initialValue)
                        _$cache = Strata._ModelPropertyInitialized()
                    }
                    get {
                        Strata._modelGet(self, \\.cache, \\._cache)
                    }
                    set {
                        Strata._modelSet(self, \\.cache, \\._cache, newValue)
                    }
                }

                private var _cache: Strata._TransientValue<[String: Int]?> = .init()

                private var _$cache: Strata._ModelPropertyInitialized
                var legacy: String! {
                    @storageRestrictions(initializes: _$legacy, accesses: _legacy)
                    init(initialValue) {
                        _legacy._initialize(initialValue)
                        _$legacy = Strata._ModelPropertyInitialized()
                    }
                    get {
                        Strata._modelGet(self, \\.legacy, \\._legacy)
                    }
                    set {
                        Strata._modelSet(self, \\.legacy, \\._legacy, newValue)
                    }
                }

                private var _legacy: Strata._ModelStorage<String?> = .init()

                private var _$legacy: Strata._ModelPropertyInitialized
                var `default`: Int {
                    @storageRestrictions(initializes: _$default, accesses: _default)
                    init(initialValue) {
                        _default._initialize(initialValue)
                        _$default = Strata._ModelPropertyInitialized()
                    }
                    get {
                        Strata._modelGet(self, \\.`default`, \\._default)
                    }
                    set {
                        Strata._modelSet(self, \\.`default`, \\._default, newValue)
                    }
                }

                private var _default: Strata._ModelStorage<Int> = .init()

                private var _$default: Strata._ModelPropertyInitialized
            }
            """,
            macros: propertyMacro)
    }

    /// The storage's type is written by syntax alone: `_ModelStorage` for a model type too
    /// (`BirdSpecies?`, which the macro cannot tell from a `Codable` one), never the result of
    /// overload resolution, which depended on whether the compiler had yet seen that
    /// `BirdSpecies` is a model (issue 27, item 9). A former name alone keeps the plain storage
    /// (it may be a relationship's); attribute options make an `Attribute`. When only the
    /// initial value tells the type, the call that makes the storage has one overload.
    @Test func theStoragesTypeDoesNotDependOnWhetherTheValueIsAModel() {
        assertExpansion(
            """
            public class Bird {
                @_PersistedProperty public var species: BirdSpecies?
                @_PersistedProperty @Attribute(originalName: "kinds") public var foods: [BirdFood]
                @_PersistedProperty @Attribute(.unique) var code = "b"
                @_PersistedProperty @Attribute(originalName: "n") var number = 0
                @_PersistedProperty @Relationship(deleteRule: .cascade) var eggs = [Egg]()
            }
            """,
            expandedSource: """
            public class Bird {
                public var species: BirdSpecies? {
                    @storageRestrictions(initializes: _$species, accesses: _species)
                    init(initialValue) {
                        _species._initialize(initialValue)
                        _$species = Strata._ModelPropertyInitialized()
                    }
                    get {
                        Strata._modelGet(self, \\.species, \\._species)
                    }
                    set {
                        Strata._modelSet(self, \\.species, \\._species, newValue)
                    }
                }

                private var _species: Strata._ModelStorage<BirdSpecies?> = .init()

                private var _$species: Strata._ModelPropertyInitialized
                @Attribute(originalName: "kinds") public var foods: [BirdFood] {
                    @storageRestrictions(initializes: _$foods, accesses: _foods)
                    init(initialValue) {
                        _foods._initialize(initialValue)
                        _$foods = Strata._ModelPropertyInitialized()
                    }
                    get {
                        Strata._modelGet(self, \\.foods, \\._foods)
                    }
                    set {
                        Strata._modelSet(self, \\.foods, \\._foods, newValue)
                    }
                }

                private var _foods: Strata._ModelStorage<[BirdFood]> = .init(originalName: "kinds")

                private var _$foods: Strata._ModelPropertyInitialized
                @Attribute(.unique) var code {
                    @storageRestrictions(initializes: _$code, accesses: _code)
                    init(initialValue) {
                        _code._initialize(initialValue)
                        _$code = Strata._ModelPropertyInitialized()
                    }
                    get {
                        Strata._modelGet(self, \\.code, \\._code)
                    }
                    set {
                        Strata._modelSet(self, \\.code, \\._code, newValue)
                    }
                }

                private var _code = Strata._modelAttribute(inferredFrom: "b", .unique)

                private var _$code: Strata._ModelPropertyInitialized
                @Attribute(originalName: "n") var number {
                    @storageRestrictions(initializes: _$number, accesses: _number)
                    init(initialValue) {
                        _number._initialize(initialValue)
                        _$number = Strata._ModelPropertyInitialized()
                    }
                    get {
                        Strata._modelGet(self, \\.number, \\._number)
                    }
                    set {
                        Strata._modelSet(self, \\.number, \\._number, newValue)
                    }
                }

                private var _number = Strata._modelProperty(inferredFrom: 0, originalName: "n")

                private var _$number: Strata._ModelPropertyInitialized
                @Relationship(deleteRule: .cascade) var eggs {
                    @storageRestrictions(initializes: _$eggs, accesses: _eggs)
                    init(initialValue) {
                        _eggs._initialize(initialValue)
                        _$eggs = Strata._ModelPropertyInitialized()
                    }
                    get {
                        Strata._modelGet(self, \\.eggs, \\._eggs)
                    }
                    set {
                        Strata._modelSet(self, \\.eggs, \\._eggs, newValue)
                    }
                }

                private var _eggs = Strata._modelRelationship(inferredFrom: [Egg](), deleteRule: .cascade)

                private var _$eggs: Strata._ModelPropertyInitialized
            }
            """,
            macros: propertyMacro)
    }
}
