import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@_PersistedProperty`, which `@Model` puts on each stored `var`: gives the property its
/// storage (`_name`: a `_ModelStorage`, which holds an attribute or a relationship; an
/// `Attribute` with attribute options, a `_ModelRelationship` with `@Relationship(...)`, a
/// `_TransientValue` with `@Transient`), a flag for Swift's definite initialization (`_$name`)
/// and accessors that go through the object layer. See `Sources/Strata/MacroSupport` for the
/// other side.
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
            "private var \(raw: property.storageName)\(raw: storageDeclaration(declaration, property))",
            "private var \(raw: property.initializedFlagName): Strata._ModelPropertyInitialized",
        ]
    }

    /// The storage's type and initial value, after its name: `: Strata._ModelStorage<String> =
    /// .init()` when the declaration names the type, `= Strata._modelProperty(inferredFrom: 3)`
    /// when only the initial value tells it.
    ///
    /// The storage's type is chosen by syntax alone, and none of the four constrains the value's
    /// type: a `@Transient` property's is `_TransientValue`, a `@Relationship(...)` one's
    /// `_ModelRelationship`, one with attribute options (`@Attribute(.unique)`) an `Attribute`,
    /// and any other `_ModelStorage`, an attribute or a relationship by its type (the accessors'
    /// overloads and schema discovery tell which). So the storage's type never depends on
    /// whether the compiler has yet seen that a type is a model, which another file's `@Model`
    /// says (see Sources/Strata/MacroSupport).
    static func storageDeclaration(_ declaration: some DeclSyntaxProtocol, _ property: ModelProperty) -> String {
        let storage: String, function: String
        var arguments: [String] = []
        switch MemberKind.of(declaration) {
        case .transient:
            (storage, function) = ("_TransientValue", "_modelTransient")
        case .persisted(_, let marker?) where marker.name == .relationship:
            (storage, function) = ("_ModelRelationship", "_modelRelationship")
            if let list = marker.arguments, !list.isEmpty { arguments.append(list.trimmedDescription) }
        case .persisted(_, let marker?):
            let list = marker.arguments ?? []
            // Attribute options make an attribute, of any type (`.transformable(by:)`); a former
            // name alone may be a relationship's.
            let hasOptions = list.contains { $0.label == nil }
            (storage, function) = hasOptions ? ("Attribute", "_modelAttribute") : ("_ModelStorage", "_modelProperty")
            if !list.isEmpty { arguments.append(list.trimmedDescription) }
        default:
            (storage, function) = ("_ModelStorage", "_modelProperty")
        }
        if let type = property.storedType {
            return ": Strata.\(storage)<\(type)> = .init(\(arguments.joined(separator: ", ")))"
        }
        if let initialValue = property.initialValue {
            arguments.insert("inferredFrom: \(initialValue.trimmedDescription)", at: 0)
        }
        return " = Strata.\(function)(\(arguments.joined(separator: ", ")))"
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
