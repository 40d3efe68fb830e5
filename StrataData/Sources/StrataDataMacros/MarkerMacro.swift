import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Attribute(...)`, `@Relationship(...)` and `@Transient`: markers that `@Model` reads, as in
/// SwiftData. They write nothing. In a class without `@Model` they would persist nothing, and
/// there the name most likely meant Strata's property wrapper (a hand-written model in a file
/// that imports StrataData): that is an error, with `@Strata.Attribute` as the fix.
public struct MarkerMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        if let enclosing = context.lexicalContext.first?.as(ClassDeclSyntax.self), !hasModelMacro(enclosing) {
            let name = node.attributeName.trimmedDescription
            let qualified: TokenSyntax = .identifier("Strata.\(name)", leadingTrivia: node.attributeName.leadingTrivia,
                                                     trailingTrivia: node.attributeName.trailingTrivia)
            let wrapper = node.with(\.attributeName, TypeSyntax(IdentifierTypeSyntax(name: qualified)))
            context.diagnose(Diagnostic(
                node: node,
                message: MacroMessage(message: "@\(name) here is StrataData's marker for a @Model class, and this class has no @Model: mark the class @Model, or write @Strata.\(name) for Strata's property wrapper", id: "markerOutsideModel"),
                fixIts: [FixIt(message: MacroMessage(message: "use Strata's property wrapper @Strata.\(name)", id: "markerOutsideModel", severity: .note),
                               changes: [.replace(oldNode: Syntax(node), newNode: Syntax(wrapper))])]))
        }
        return []
    }

    static func hasModelMacro(_ model: ClassDeclSyntax) -> Bool {
        model.attributes.contains { element in
            guard case .attribute(let attribute) = element else { return false }
            let name = attribute.attributeName.trimmedDescription
            return name == "Model" || name.hasSuffix(".Model")
        }
    }
}
