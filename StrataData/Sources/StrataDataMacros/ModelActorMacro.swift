import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@ModelActor`: what `Strata.ModelActor`'s documentation says an actor declares by hand — the
/// container, an executor with the actor's own context, `init(modelContainer:)` — and the
/// conformance. Same as SwiftData's `@ModelActor`.
public struct ModelActorMacro {}

extension ModelActorMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let actor = declaration.as(ActorDeclSyntax.self) else {
            ModelDiagnostic.notAnActor(declaration).diagnose(in: context)
            return []
        }
        let access = accessModifier(of: actor.modifiers)
        return [
            "\(raw: access)nonisolated let modelExecutor: any Strata.ModelExecutor",
            "\(raw: access)nonisolated let modelContainer: Strata.ModelContainer",
            """
            \(raw: access)init(modelContainer: Strata.ModelContainer) {
                let modelContext = Strata.ModelContext(modelContainer)
                self.modelExecutor = Strata.DefaultSerialModelExecutor(modelContext: modelContext)
                self.modelContainer = modelContainer
            }
            """,
        ]
    }
}

extension ModelActorMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self), !protocols.isEmpty else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): Strata.ModelActor {}")]
    }
}
