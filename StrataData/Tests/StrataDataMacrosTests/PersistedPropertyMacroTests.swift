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

                private var _name = Strata._modelProperty(String.self)

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

                private var _id = Strata._modelAttribute(UUID.self, .unique, originalName: "key")

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

                private var _stops = Strata._modelRelationship([Stop].self, deleteRule: .cascade, inverse: \\Stop.trip)

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

                private var _cache = Strata._modelTransient([String: Int]?.self)

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

                private var _legacy = Strata._modelProperty(String?.self)

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

                private var _default = Strata._modelProperty(Int.self)

                private var _$default: Strata._ModelPropertyInitialized
            }
            """,
            macros: propertyMacro)
    }
}
