import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `#Unique<Trip>([\.name], [\.start, \.end])`: the model's compound unique constraints, as the
/// `uniqueConstraints` a model without macros declares.
public struct UniqueMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        constraintProperty("uniqueConstraints", macro: "Unique", node, context)
    }
}

/// `#Index<Trip>([\.name], [\.start, \.end])`: the model's secondary indexes, as the `indexes` a
/// model without macros declares.
public struct IndexMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        constraintProperty("indexes", macro: "Index", node, context)
    }
}

/// `static var <name>: [[PartialKeyPath<Model>]] { [<groups>] }`, as visible as the class.
private func constraintProperty(_ name: String, macro: String, _ node: some FreestandingMacroExpansionSyntax,
                                _ context: some MacroExpansionContext) -> [DeclSyntax] {
    guard let model = node.genericArgumentClause?.arguments.first?.argument.trimmedDescription else {
        ModelDiagnostic.constraintWithoutModelType(node, macro: macro).diagnose(in: context)
        return []
    }
    let enclosing = context.lexicalContext.first
    guard let enclosingClass = enclosing?.as(ClassDeclSyntax.self) else {
        if enclosing != nil { ModelDiagnostic.constraintOutsideModel(node, macro: macro).diagnose(in: context) }
        return []
    }
    let groups = node.arguments.map { $0.expression.trimmedDescription }.joined(separator: ", ")
    return ["""
        \(raw: accessModifier(of: enclosingClass.modifiers))static var \(raw: name): [[PartialKeyPath<\(raw: model)>]] {
            [\(raw: groups)]
        }
        """]
}
