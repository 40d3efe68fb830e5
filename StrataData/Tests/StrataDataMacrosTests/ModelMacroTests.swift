import SwiftSyntaxMacrosGenericTestSupport
import Testing

@Suite struct ModelMacroTests {
    @Test func everyStoredVarIsPersistedUnlessTransient() {
        assertExpansion(
            """
            @Model final class Trip {
                @Attribute(.unique) var id: UUID
                var name: String
                var count = 3
                var budget: Double?
                @Relationship(deleteRule: .cascade, inverse: \\Stop.trip) var stops: [Stop] = []
                @Transient var isExpanded = false
                var summary: String { name }
                @Transient var title: String { name.uppercased() }
                static var shared = 0
                func rename(_ to: String) { name = to }
                init(name: String) { id = UUID(); self.name = name }
            }
            """,
            expandedSource: """
            final class Trip {
                @StrataData._PersistedProperty var id: UUID
                @StrataData._PersistedProperty
                var name: String
                @StrataData._PersistedProperty
                var count = 3
                @StrataData._PersistedProperty
                var budget: Double?
                @StrataData._PersistedProperty var stops: [Stop] = []
                @StrataData._PersistedProperty var isExpanded = false
                var summary: String { name }
                var title: String { name.uppercased() }
                static var shared = 0
                func rename(_ to: String) { name = to }
                init(name: String) { id = UUID(); self.name = name }

                /// Made by @Model: Strata makes the objects it loads with this initializer, then sets
                /// their persisted properties. (Disfavored: `Model()` calls an initializer of the
                /// class whose arguments all have defaults, if there is one.)
                @_disfavoredOverload
                required init() {
                    self._$id = Strata._ModelPropertyInitialized()
                    self._$name = Strata._ModelPropertyInitialized()
                    self._$count = Strata._ModelPropertyInitialized()
                    self._$budget = Strata._ModelPropertyInitialized()
                    self._$stops = Strata._ModelPropertyInitialized()
                    self._$isExpanded = Strata._ModelPropertyInitialized()
                }

                /// Made by @Model: the stored properties (SwiftData's `schemaMetadata`).
                static var schemaMetadata: [Strata.Schema.PropertyMetadata] {
                    [
                        Strata.Schema.PropertyMetadata(name: "id", keypath: \\Trip.id, defaultValue: nil, _storage: { (model: Trip) in
                                model._id
                            }),
                        Strata.Schema.PropertyMetadata(name: "name", keypath: \\Trip.name, defaultValue: nil, _storage: { (model: Trip) in
                                model._name
                            }),
                        Strata.Schema.PropertyMetadata(name: "count", keypath: \\Trip.count, defaultValue: 3, _storage: { (model: Trip) in
                                model._count
                            }),
                        Strata.Schema.PropertyMetadata(name: "budget", keypath: \\Trip.budget, defaultValue: nil, _storage: { (model: Trip) in
                                model._budget
                            }),
                        Strata.Schema.PropertyMetadata(name: "stops", keypath: \\Trip.stops, defaultValue: ([] as [Stop]), _storage: { (model: Trip) in
                                model._stops
                            }),
                        Strata.Schema.PropertyMetadata(name: "isExpanded", keypath: \\Trip.isExpanded, defaultValue: false, _storage: { (model: Trip) in
                                model._isExpanded
                            }),
                    ]
                }
            }

            extension Trip: Strata.PersistentModel {
            }
            """)
    }

    @Test func aSubclassCallsSuperInitAndInheritsTheConformance() {
        assertExpansion(
            """
            @Model final class Car: Vehicle {
                var seats: Int
                init(name: String, seats: Int) {
                    self.seats = seats
                    super.init(name: name, wheels: 4)
                }
            }
            """,
            expandedSource: """
            final class Car: Vehicle {
                @StrataData._PersistedProperty
                var seats: Int
                init(name: String, seats: Int) {
                    self.seats = seats
                    super.init(name: name, wheels: 4)
                }

                /// Made by @Model: Strata makes the objects it loads with this initializer, then sets
                /// their persisted properties. (Disfavored: `Model()` calls an initializer of the
                /// class whose arguments all have defaults, if there is one.)
                @_disfavoredOverload
                required init() {
                    self._$seats = Strata._ModelPropertyInitialized()
                    super.init()
                }
            }
            """,
            macros: subclassMacros)
    }

    @Test func aClassThatAlreadyConformsIsNotTakenForASubclass() {
        assertExpansion(
            """
            @Model final class Note: PersistentModel {
                var title: String = ""
            }
            """,
            expandedSource: """
            final class Note: PersistentModel {
                @StrataData._PersistedProperty
                var title: String = ""

                /// Made by @Model: Strata makes the objects it loads with this initializer, then sets
                /// their persisted properties. (Disfavored: `Model()` calls an initializer of the
                /// class whose arguments all have defaults, if there is one.)
                @_disfavoredOverload
                required init() {
                    self._$title = Strata._ModelPropertyInitialized()
                }

                /// Made by @Model: the stored properties (SwiftData's `schemaMetadata`).
                static var schemaMetadata: [Strata.Schema.PropertyMetadata] {
                    [
                        Strata.Schema.PropertyMetadata(name: "title", keypath: \\Note.title, defaultValue: ("" as String), _storage: { (model: Note) in
                                model._title
                            }),
                    ]
                }
            }
            """,
            macros: subclassMacros)
    }

    @Test func anInitWithoutArgumentsOfTheClassIsKept() {
        assertExpansion(
            """
            @Model final class Note {
                var title: String
                init() { title = "untitled" }
            }
            """,
            expandedSource: """
            final class Note {
                @StrataData._PersistedProperty
                var title: String
                init() { title = "untitled" }

                /// Made by @Model: the stored properties (SwiftData's `schemaMetadata`).
                static var schemaMetadata: [Strata.Schema.PropertyMetadata] {
                    [
                        Strata.Schema.PropertyMetadata(name: "title", keypath: \\Note.title, defaultValue: nil, _storage: { (model: Note) in
                                model._title
                            }),
                    ]
                }
            }

            extension Note: Strata.PersistentModel {
            }
            """)
    }

    @Test func aPublicModelGetsAPublicInit() {
        assertExpansion(
            """
            @Model public final class Note {
                public var title: String = ""
            }
            """,
            expandedSource: """
            public final class Note {
                @StrataData._PersistedProperty
                public var title: String = ""

                /// Made by @Model: Strata makes the objects it loads with this initializer, then sets
                /// their persisted properties. (Disfavored: `Model()` calls an initializer of the
                /// class whose arguments all have defaults, if there is one.)
                @_disfavoredOverload
                public required init() {
                    self._$title = Strata._ModelPropertyInitialized()
                }

                /// Made by @Model: the stored properties (SwiftData's `schemaMetadata`).
                public static var schemaMetadata: [Strata.Schema.PropertyMetadata] {
                    [
                        Strata.Schema.PropertyMetadata(name: "title", keypath: \\Note.title, defaultValue: ("" as String), _storage: { (model: Note) in
                                model._title
                            }),
                    ]
                }
            }

            extension Note: Strata.PersistentModel {
            }
            """)
    }
}

@Suite struct ModelDiagnosticTests {
    @Test func aStructIsNotAModelAndBecomesAFinalClass() {
        assertExpansion(
            """
            @Model struct Note {
                var title: String
            }
            """,
            expandedSource: """
            struct Note {
                var title: String
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "@Model applies to a class, not a struct: a model is a reference type whose objects a context tracks",
                               line: 1, column: 8, fixIts: [FixItSpec(message: "make it a 'final class'")]),
            ],
            applyFixIts: ["make it a 'final class'"],
            fixedSource: """
            @Model final class Note {
                var title: String
            }
            """)
    }

    @Test func anEnumIsNotAModel() {
        assertExpansion(
            """
            @Model enum Kind {
                case a
            }
            """,
            expandedSource: """
            enum Kind {
                case a
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "@Model applies to a class, not an enum: a model is a reference type whose objects a context tracks", line: 1, column: 8),
            ])
    }

    @Test func aLetBecomesAVar() {
        assertExpansion(
            """
            @Model final class Note {
                let id: UUID
                var title: String
            }
            """,
            expandedSource: """
            final class Note {
                let id: UUID
                @StrataData._PersistedProperty
                var title: String

                /// Made by @Model: Strata makes the objects it loads with this initializer, then sets
                /// their persisted properties. (Disfavored: `Model()` calls an initializer of the
                /// class whose arguments all have defaults, if there is one.)
                @_disfavoredOverload
                required init() {
                    self._$title = Strata._ModelPropertyInitialized()
                }

                /// Made by @Model: the stored properties (SwiftData's `schemaMetadata`).
                static var schemaMetadata: [Strata.Schema.PropertyMetadata] {
                    [
                        Strata.Schema.PropertyMetadata(name: "title", keypath: \\Note.title, defaultValue: nil, _storage: { (model: Note) in
                                model._title
                            }),
                    ]
                }
            }

            extension Note: Strata.PersistentModel {
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "a 'let' property cannot be in a @Model class: Strata sets each property of an object it loads; declare it with 'var'",
                               line: 2, column: 5, fixIts: [FixItSpec(message: "replace 'let' with 'var'")]),
            ],
            applyFixIts: ["replace 'let' with 'var'"],
            fixedSource: """
            @Model final class Note {
                var id: UUID
                var title: String
            }
            """)
    }

    @Test func anAttributeOnAComputedPropertyIsRemoved() {
        assertExpansion(
            """
            @Model final class Note {
                var title: String = ""
                @Attribute(.unique) var slug: String { title.lowercased() }
            }
            """,
            expandedSource: """
            final class Note {
                @StrataData._PersistedProperty
                var title: String = ""
                var slug: String { title.lowercased() }

                /// Made by @Model: Strata makes the objects it loads with this initializer, then sets
                /// their persisted properties. (Disfavored: `Model()` calls an initializer of the
                /// class whose arguments all have defaults, if there is one.)
                @_disfavoredOverload
                required init() {
                    self._$title = Strata._ModelPropertyInitialized()
                }

                /// Made by @Model: the stored properties (SwiftData's `schemaMetadata`).
                static var schemaMetadata: [Strata.Schema.PropertyMetadata] {
                    [
                        Strata.Schema.PropertyMetadata(name: "title", keypath: \\Note.title, defaultValue: ("" as String), _storage: { (model: Note) in
                                model._title
                            }),
                    ]
                }
            }

            extension Note: Strata.PersistentModel {
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "@Attribute applies to a stored property; a computed property is not persisted",
                               line: 3, column: 5, fixIts: [FixItSpec(message: "remove '@Attribute'")]),
            ],
            applyFixIts: ["remove '@Attribute'"],
            fixedSource: """
            @Model final class Note {
                var title: String = ""
                var slug: String { title.lowercased() }
            }
            """)
    }

    @Test func propertyObserversCannotBeKept() {
        assertExpansion(
            """
            @Model final class Note {
                var title: String = "" {
                    didSet { print(title) }
                }
            }
            """,
            expandedSource: """
            final class Note {
                var title: String = "" {
                    didSet { print(title) }
                }

                /// Made by @Model: Strata makes the objects it loads with this initializer, then sets
                /// their persisted properties. (Disfavored: `Model()` calls an initializer of the
                /// class whose arguments all have defaults, if there is one.)
                @_disfavoredOverload
                required init() {
                }

                /// Made by @Model: the stored properties (SwiftData's `schemaMetadata`).
                static var schemaMetadata: [Strata.Schema.PropertyMetadata] {
                    []
                }
            }

            extension Note: Strata.PersistentModel {
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "a property of a @Model class cannot have 'willSet' or 'didSet': @Model gives it accessors of its own; do the work in a method that sets the property",
                               line: 2, column: 28),
            ])
    }

    @Test func severalPropertiesInOneVarAreSplit() {
        assertExpansion(
            """
            @Model final class Point {
                var x, y: Double
            }
            """,
            expandedSource: """
            final class Point {
                var x, y: Double

                /// Made by @Model: Strata makes the objects it loads with this initializer, then sets
                /// their persisted properties. (Disfavored: `Model()` calls an initializer of the
                /// class whose arguments all have defaults, if there is one.)
                @_disfavoredOverload
                required init() {
                }

                /// Made by @Model: the stored properties (SwiftData's `schemaMetadata`).
                static var schemaMetadata: [Strata.Schema.PropertyMetadata] {
                    []
                }
            }

            extension Point: Strata.PersistentModel {
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "declare each property of a @Model class with a 'var' of its own",
                               line: 2, column: 9, fixIts: [FixItSpec(message: "declare each property on a line of its own")]),
            ],
            applyFixIts: ["declare each property on a line of its own"],
            fixedSource: """
            @Model final class Point {
                var x: Double
                var y: Double
            }
            """)
    }

    @Test func lazyAndWeakPropertiesCannotBePersisted() {
        assertExpansion(
            """
            @Model final class Note {
                lazy var words: [String] = []
                weak var owner: Person?
            }
            """,
            expandedSource: """
            final class Note {
                lazy var words: [String] = []
                weak var owner: Person?

                /// Made by @Model: Strata makes the objects it loads with this initializer, then sets
                /// their persisted properties. (Disfavored: `Model()` calls an initializer of the
                /// class whose arguments all have defaults, if there is one.)
                @_disfavoredOverload
                required init() {
                }

                /// Made by @Model: the stored properties (SwiftData's `schemaMetadata`).
                static var schemaMetadata: [Strata.Schema.PropertyMetadata] {
                    []
                }
            }

            extension Note: Strata.PersistentModel {
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "a 'lazy' property cannot be in a @Model class: make it a computed property, or a @Transient property with a default value",
                               line: 2, column: 5),
                DiagnosticSpec(message: "a 'weak' property cannot be persisted: a relationship to another model is a plain 'var' of an optional model (`var owner: Person?`)",
                               line: 3, column: 5, fixIts: [FixItSpec(message: "remove 'weak'")]),
            ],
            applyFixIts: ["remove 'weak'"],
            fixedSource: """
            @Model final class Note {
                lazy var words: [String] = []
                var owner: Person?
            }
            """)
    }

    @Test func contradictoryMarkers() {
        assertExpansion(
            """
            @Model final class Note {
                @Transient @Attribute(.unique) var draft: String = ""
                @Attribute @Relationship var folder: Folder?
            }
            """,
            expandedSource: """
            final class Note {
                var draft: String = ""
                var folder: Folder?

                /// Made by @Model: Strata makes the objects it loads with this initializer, then sets
                /// their persisted properties. (Disfavored: `Model()` calls an initializer of the
                /// class whose arguments all have defaults, if there is one.)
                @_disfavoredOverload
                required init() {
                }

                /// Made by @Model: the stored properties (SwiftData's `schemaMetadata`).
                static var schemaMetadata: [Strata.Schema.PropertyMetadata] {
                    []
                }
            }

            extension Note: Strata.PersistentModel {
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "a @Transient property is not persisted, so @Attribute does not apply to it",
                               line: 2, column: 16, fixIts: [FixItSpec(message: "remove '@Attribute'")]),
                DiagnosticSpec(message: "a property is an @Attribute or a @Relationship, not both: a relationship's type is a model, an optional model or an array of models",
                               line: 3, column: 16, fixIts: [FixItSpec(message: "remove '@Relationship'")]),
            ])
    }

    @Test func aTransientNeedsADefaultUnlessOptional() {
        assertExpansion(
            """
            @Model final class Note {
                @Transient var cursor: Int
                @Transient var selection: Range<Int>?
            }
            """,
            expandedSource: """
            final class Note {
                var cursor: Int
                @StrataData._PersistedProperty var selection: Range<Int>?

                /// Made by @Model: Strata makes the objects it loads with this initializer, then sets
                /// their persisted properties. (Disfavored: `Model()` calls an initializer of the
                /// class whose arguments all have defaults, if there is one.)
                @_disfavoredOverload
                required init() {
                    self._$selection = Strata._ModelPropertyInitialized()
                }

                /// Made by @Model: the stored properties (SwiftData's `schemaMetadata`).
                static var schemaMetadata: [Strata.Schema.PropertyMetadata] {
                    [
                        Strata.Schema.PropertyMetadata(name: "selection", keypath: \\Note.selection, defaultValue: nil, _storage: { (model: Note) in
                                model._selection
                            }),
                    ]
                }
            }

            extension Note: Strata.PersistentModel {
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "a @Transient property needs a default value unless it is optional: Strata makes the objects it loads without running your initializers",
                               line: 2, column: 20),
            ])
    }

    @Test func aTuplePatternIsNotAProperty() {
        assertExpansion(
            """
            @Model final class Note {
                var (a, b) = (1, 2)
            }
            """,
            expandedSource: """
            final class Note {
                var (a, b) = (1, 2)

                /// Made by @Model: Strata makes the objects it loads with this initializer, then sets
                /// their persisted properties. (Disfavored: `Model()` calls an initializer of the
                /// class whose arguments all have defaults, if there is one.)
                @_disfavoredOverload
                required init() {
                }

                /// Made by @Model: the stored properties (SwiftData's `schemaMetadata`).
                static var schemaMetadata: [Strata.Schema.PropertyMetadata] {
                    []
                }
            }

            extension Note: Strata.PersistentModel {
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "declare each property of a @Model class with a 'var' of its own, not a tuple pattern", line: 2, column: 9),
            ])
    }

    @Test func theInitOfANonFinalModelMustBeRequired() {
        assertExpansion(
            """
            @Model class Vehicle {
                var name: String
                init() { name = "" }
            }
            """,
            expandedSource: """
            class Vehicle {
                @StrataData._PersistedProperty
                var name: String
                init() { name = "" }

                /// Made by @Model: the stored properties (SwiftData's `schemaMetadata`).
                class var schemaMetadata: [Strata.Schema.PropertyMetadata] {
                    [
                        Strata.Schema.PropertyMetadata(name: "name", keypath: \\Vehicle.name, defaultValue: nil, _storage: { (model: Vehicle) in
                                model._name
                            }),
                    ]
                }
            }

            extension Vehicle: Strata.PersistentModel {
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "'init()' of a non-final @Model class must be 'required': Strata makes the objects it loads with it, subclasses included",
                               line: 3, column: 5, fixIts: [FixItSpec(message: "add 'required'")]),
            ],
            applyFixIts: ["add 'required'"],
            fixedSource: """
            @Model class Vehicle {
                var name: String
                required init() { name = "" }
            }
            """)
    }
}

@Suite struct MarkerMacroTests {
    @Test func aMarkerInAClassWithoutModelIsTakenForStratasPropertyWrapper() {
        assertExpansion(
            """
            final class Trip: PersistentModel {
                @Attribute(.unique) var id: UUID
                @Transient var isExpanded = false
                init() {}
            }
            """,
            expandedSource: """
            final class Trip: PersistentModel {
                var id: UUID
                var isExpanded = false
                init() {}
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "@Attribute here is StrataData's marker for a @Model class, and this class has no @Model: mark the class @Model, or write @Strata.Attribute for Strata's property wrapper",
                               line: 2, column: 5, fixIts: [FixItSpec(message: "use Strata's property wrapper @Strata.Attribute")]),
                DiagnosticSpec(message: "@Transient here is StrataData's marker for a @Model class, and this class has no @Model: mark the class @Model, or write @Strata.Transient for Strata's property wrapper",
                               line: 3, column: 5, fixIts: [FixItSpec(message: "use Strata's property wrapper @Strata.Transient")]),
            ],
            applyFixIts: ["use Strata's property wrapper @Strata.Attribute", "use Strata's property wrapper @Strata.Transient"],
            fixedSource: """
            final class Trip: PersistentModel {
                @Strata.Attribute(.unique) var id: UUID
                @Strata.Transient var isExpanded = false
                init() {}
            }
            """)
    }
}
