import SwiftSyntax
import SwiftSyntaxMacros

/// `@Attribute(...)`, `@Relationship(...)` and `@Transient`: markers that `@Model` reads, as in
/// SwiftData. Alone they write nothing.
public struct MarkerMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}
