import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@_PersistedProperty`, which `@Model` puts on each stored `var`: gives the property its
/// storage (`_name`: an `Attribute`, a `Relationship` or, for `@Transient`, a
/// `_TransientValue`), a flag for Swift's definite initialization (`_$name`) and accessors
/// that go through the object layer. See `Sources/Strata/MacroSupport` for the other side.
public struct PersistedPropertyMacro {}

extension PersistedPropertyMacro: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let property = property(declaration) else { return [] }
        let storage = property.storageName, flag = property.initializedFlagName, name = property.name
        return [
            """
            @storageRestrictions(initializes: \(raw: flag), accesses: \(raw: storage))
            init(initialValue) {
                \(raw: storage)._initialize(initialValue)
                \(raw: flag) = Strata._ModelPropertyInitialized()
            }
            """,
            """
            get {
                Strata._modelGet(self, \\.\(raw: name), \\.\(raw: storage))
            }
            """,
            """
            set {
                Strata._modelSet(self, \\.\(raw: name), \\.\(raw: storage), newValue)
            }
            """,
        ]
    }
}

extension PersistedPropertyMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let property = property(declaration) else { return [] }
        return [
            "private var \(raw: property.storageName) = \(raw: storageExpression(declaration, property))",
            "private var \(raw: property.initializedFlagName): Strata._ModelPropertyInitialized",
        ]
    }

    /// The storage's initial value: the overload of `_modelProperty`, `_modelAttribute`,
    /// `_modelRelationship` or `_modelTransient` that the declaration's type picks.
    static func storageExpression(_ declaration: some DeclSyntaxProtocol, _ property: ModelProperty) -> String {
        let function: String
        var arguments: [String] = []
        switch MemberKind.of(declaration) {
        case .transient:
            function = "_modelTransient"
        case .persisted(_, let marker?):
            function = marker.name == .relationship ? "_modelRelationship" : "_modelAttribute"
            if let list = marker.arguments, !list.isEmpty { arguments.append(list.trimmedDescription) }
        default:
            function = "_modelProperty"
        }
        if let type = property.typeExpression {
            arguments.insert(type, at: 0)
        } else if let initialValue = property.initialValue {
            arguments.insert("inferredFrom: \(initialValue.trimmedDescription)", at: 0)
        }
        return "Strata.\(function)(\(arguments.joined(separator: ", ")))"
    }
}

extension PersistedPropertyMacro {
    static func property(_ declaration: some DeclSyntaxProtocol) -> ModelProperty? {
        switch MemberKind.of(declaration) {
        case .persisted(let property, _), .transient(let property): return property
        case .ignored, .unsupported: return nil
        }
    }
}
