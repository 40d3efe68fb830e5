import Foundation
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
        constraintProperty("uniqueConstraints", names: "_uniqueConstraintNames", macro: "Unique", node, context)
    }
}

/// `#Index<Trip>([\.name], [\.start, \.end])`: the model's secondary indexes, as the `indexes` a
/// model without macros declares.
public struct IndexMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        constraintProperty("indexes", names: "_indexNames", macro: "Index", node, context)
    }
}

/// `static var <name>: [[PartialKeyPath<Model>]] { [<groups>] }`, as visible as the class; and,
/// when every key path names a property of the model directly (`\.name`, `\Trip.name`), the
/// same groups by name (`static var <names>: [[String]]? { [["name"]] }`), which discovery
/// reads without making the key paths (each key path class's metadata, on a fresh process's
/// first open).
private func constraintProperty(_ name: String, names: String, macro: String, _ node: some FreestandingMacroExpansionSyntax,
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
    let access = accessModifier(of: enclosingClass.modifiers)
    let groups = node.arguments.map { $0.expression.trimmedDescription }.joined(separator: ", ")
    var declarations: [DeclSyntax] = ["""
        \(raw: access)static var \(raw: name): [[PartialKeyPath<\(raw: model)>]] {
            [\(raw: groups)]
        }
        """]
    if let named = propertyNames(node.arguments, model: model) {
        let list = named.map { "[" + $0.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }.joined(separator: ", ")
        declarations.append("""
            \(raw: access)static var \(raw: names): [[String]]? {
                [\(raw: list)]
            }
            """)
    }
    return declarations
}

/// The property names of groups of key paths (`[\.name, \.start]`), if each is an array
/// literal of key paths of one property of `model` each; nil otherwise.
private func propertyNames(_ arguments: LabeledExprListSyntax, model: String) -> [[String]]? {
    var groups: [[String]] = []
    for argument in arguments {
        guard argument.label == nil, let array = argument.expression.as(ArrayExprSyntax.self) else { return nil }
        var group: [String] = []
        for element in array.elements {
            guard let keyPath = element.expression.as(KeyPathExprSyntax.self),
                  keyPath.root == nil || keyPath.root?.trimmedDescription == model,
                  keyPath.components.count == 1, let component = keyPath.components.first,
                  component.period != nil, let property = component.component.as(KeyPathPropertyComponentSyntax.self),
                  property.declName.argumentNames == nil, property.genericArgumentClause == nil
            else { return nil }
            group.append(property.declName.baseName.text.trimmingCharacters(in: ["`"]))
        }
        groups.append(group)
    }
    return groups
}
