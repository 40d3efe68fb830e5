import SwiftSyntaxMacrosGenericTestSupport
import Testing

@Suite struct ConstraintMacroTests {
    @Test func uniqueAndIndexBecomeTheStaticProperties() {
        assertExpansion(
            """
            final class Trip {
                #Unique<Trip>([\\.name, \\.start], [\\.code])
                #Index<Trip>([\\.start])
            }
            """,
            expandedSource: """
            final class Trip {
                static var uniqueConstraints: [[PartialKeyPath<Trip>]] {
                    [[\\.name, \\.start], [\\.code]]
                }
                static var _uniqueConstraintNames: [[String]]? {
                    [["name", "start"], ["code"]]
                }
                static var indexes: [[PartialKeyPath<Trip>]] {
                    [[\\.start]]
                }
                static var _indexNames: [[String]]? {
                    [["start"]]
                }
            }
            """)
    }

    /// The groups by name only where every key path names a property of the model directly.
    @Test func keyPathsThatAreNotAPropertyOfTheModelGetNoNames() {
        assertExpansion(
            """
            final class Trip {
                #Index<Trip>([\\Trip.name], [\\.`class`])
                #Unique<Trip>([\\.address.city])
            }
            """,
            expandedSource: """
            final class Trip {
                static var indexes: [[PartialKeyPath<Trip>]] {
                    [[\\Trip.name], [\\.`class`]]
                }
                static var _indexNames: [[String]]? {
                    [["name"], ["class"]]
                }
                static var uniqueConstraints: [[PartialKeyPath<Trip>]] {
                    [[\\.address.city]]
                }
            }
            """)
        assertExpansion(
            """
            final class Trip {
                #Index<Trip>([\\Other.name])
                #Index<Trip>([\\.name?.count], [\\.tags[0]])
            }
            """,
            expandedSource: """
            final class Trip {
                static var indexes: [[PartialKeyPath<Trip>]] {
                    [[\\Other.name]]
                }
                static var indexes: [[PartialKeyPath<Trip>]] {
                    [[\\.name?.count], [\\.tags[0]]]
                }
            }
            """)
    }

    @Test func aPublicModelsConstraintsArePublic() {
        assertExpansion(
            """
            public final class Trip {
                #Index<Trip>([\\.name])
            }
            """,
            expandedSource: """
            public final class Trip {
                public static var indexes: [[PartialKeyPath<Trip>]] {
                    [[\\.name]]
                }
                public static var _indexNames: [[String]]? {
                    [["name"]]
                }
            }
            """)
    }

    @Test func theModelTypeMustBeNamed() {
        assertExpansion(
            """
            final class Trip {
                #Unique([\\Trip.name])
            }
            """,
            expandedSource: """
            final class Trip {
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "name the model: #Unique<Trip>([\\.name], [\\.start, \\.end])", line: 2, column: 6),
            ])
    }

    @Test func outsideAClassThereIsNothingToConstrain() {
        assertExpansion(
            """
            struct Settings {
                #Index<Settings>([\\.name])
            }
            """,
            expandedSource: """
            struct Settings {
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "#Index belongs in the body of a @Model class", line: 2, column: 6),
            ])
    }
}

@Suite struct ModelActorMacroTests {
    @Test func theContainerTheExecutorAndTheInitializer() {
        assertExpansion(
            """
            @ModelActor actor Importer {
                func run() {}
            }
            """,
            expandedSource: """
            actor Importer {
                func run() {}

                nonisolated let modelExecutor: any Strata.ModelExecutor

                nonisolated let modelContainer: Strata.ModelContainer

                init(modelContainer: Strata.ModelContainer) {
                    let modelContext = Strata.ModelContext(modelContainer)
                    self.modelExecutor = Strata.DefaultSerialModelExecutor(modelContext: modelContext)
                    self.modelContainer = modelContainer
                }
            }

            extension Importer: Strata.ModelActor {
            }
            """)
    }

    @Test func aPublicActorsMembersArePublic() {
        assertExpansion(
            """
            @ModelActor public actor Importer {
            }
            """,
            expandedSource: """
            public actor Importer {

                public nonisolated let modelExecutor: any Strata.ModelExecutor

                public nonisolated let modelContainer: Strata.ModelContainer

                public init(modelContainer: Strata.ModelContainer) {
                    let modelContext = Strata.ModelContext(modelContainer)
                    self.modelExecutor = Strata.DefaultSerialModelExecutor(modelContext: modelContext)
                    self.modelContainer = modelContainer
                }
            }

            extension Importer: Strata.ModelActor {
            }
            """)
    }

    @Test func aClassBecomesAnActor() {
        assertExpansion(
            """
            @ModelActor final class Importer {
            }
            """,
            expandedSource: """
            final class Importer {
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "@ModelActor applies to an actor: its methods run one at a time on the actor's own ModelContext",
                               line: 1, column: 19, fixIts: [FixItSpec(message: "make it an 'actor'")]),
            ],
            applyFixIts: ["make it an 'actor'"],
            fixedSource: """
            @ModelActor actor Importer {
            }
            """)
    }
}
