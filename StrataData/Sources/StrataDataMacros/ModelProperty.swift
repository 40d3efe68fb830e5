import SwiftSyntax

/// What `@Model` makes of one member of the class, read from its syntax alone.
enum MemberKind {
    /// Persisted: an attribute or a relationship, decided by its type when the expansion is
    /// compiled. `marker` is its `@Attribute(...)` or `@Relationship(...)`, if any.
    case persisted(ModelProperty, marker: Marker?)
    /// `@Transient`: kept in memory, never persisted.
    case transient(ModelProperty)
    /// A computed property, a static one, a method, a type...: left as it is.
    case ignored
    /// A stored property `@Model` cannot persist; `problem` says why.
    case unsupported(ModelDiagnostic)
}

/// A marker macro on a property: `@Attribute(...)`, `@Relationship(...)` or `@Transient`.
struct Marker {
    enum Name: String { case attribute = "Attribute", relationship = "Relationship", transient = "Transient" }
    let name: Name
    let attribute: AttributeSyntax

    /// The marker's arguments, as written (none for `@Attribute` alone).
    var arguments: LabeledExprListSyntax? {
        if case .argumentList(let list) = attribute.arguments { return list }
        return nil
    }

    /// Finds the marker macros among a declaration's attributes (also spelled
    /// `StrataData.Attribute` or `SwiftData.Attribute`).
    static func all(in attributes: AttributeListSyntax) -> [Marker] {
        attributes.compactMap { element in
            guard case .attribute(let attribute) = element else { return nil }
            var typeName = attribute.attributeName.trimmedDescription
            for module in ["StrataData.", "SwiftData."] where typeName.hasPrefix(module) {
                typeName.removeFirst(module.count)
            }
            return Name(rawValue: typeName).map { Marker(name: $0, attribute: attribute) }
        }
    }
}

/// A stored `var` of a model class, one binding.
struct ModelProperty {
    let declaration: VariableDeclSyntax
    /// The name as written (backticks kept), for key paths: `\.title`.
    let name: String
    /// The name without backticks, for the names of its storage: `_title`.
    let plainName: String
    /// The declared type; nil when only the initial value tells it (`var count = 3`).
    let type: TypeSyntax?
    /// The initial value, if any.
    let initialValue: ExprSyntax?

    var storageName: String { "_" + plainName }
    var initializedFlagName: String { "_$" + plainName }

    /// True when the declared type is spelled `T?` or `T!`: Swift gives such a property nil
    /// when an initializer does not set it (not when it is spelled `Optional<T>`).
    var isSpelledOptional: Bool {
        guard let type else { return false }
        return type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self)
    }

    /// The type the property stores, as a generic argument: the declared type (`T!` becomes
    /// `T?`, the type Swift stores).
    var storedType: String? {
        guard var type else { return nil }
        if let iuo = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            type = TypeSyntax(OptionalTypeSyntax(wrappedType: iuo.wrappedType.trimmed))
        }
        return type.trimmedDescription
    }
}

extension MemberKind {
    /// Classifies one member of a `@Model` class.
    static func of(_ member: some DeclSyntaxProtocol) -> MemberKind {
        guard let variable = member.as(VariableDeclSyntax.self) else { return .ignored }
        let modifiers = Set(variable.modifiers.map(\.name.text))
        if modifiers.contains("static") || modifiers.contains("class") { return .ignored }
        let markers = Marker.all(in: variable.attributes)
        let isTransient = markers.contains { $0.name == .transient }

        // Computed properties are not persisted; an @Attribute or @Relationship there is a mistake.
        if variable.bindings.count == 1, let binding = variable.bindings.first, let accessors = binding.accessorBlock {
            if Self.isComputed(accessors) {
                if let marker = markers.first(where: { $0.name != .transient }) {
                    return .unsupported(.markerOnComputedProperty(marker, variable))
                }
                return .ignored
            }
            return .unsupported(.propertyObservers(variable, binding))
        }
        if variable.bindings.count != 1 {
            return .unsupported(.severalBindings(variable))
        }
        if variable.bindingSpecifier.tokenKind == .keyword(.let) {
            return .unsupported(.letProperty(variable))
        }
        for word in ["lazy", "weak", "unowned"] where modifiers.contains(word) {
            return .unsupported(.modifier(word, variable, transient: isTransient))
        }
        guard let binding = variable.bindings.first,
              let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else {
            return .unsupported(.tuplePattern(variable))
        }
        let nonTransient = markers.filter { $0.name != .transient }
        if isTransient, let other = nonTransient.first {
            return .unsupported(.transientAndPersisted(other, variable))
        }
        if nonTransient.count > 1 {
            return .unsupported(.attributeAndRelationship(nonTransient[1], variable))
        }
        let name = identifier.identifier.text
        let plainName = name.hasPrefix("`") && name.hasSuffix("`") && name.count > 2 ? String(name.dropFirst().dropLast()) : name
        let property = ModelProperty(declaration: variable, name: name, plainName: plainName,
                                     type: binding.typeAnnotation?.type.trimmed,
                                     initialValue: binding.initializer?.value.trimmed)
        if isTransient {
            if property.initialValue == nil && !property.isSpelledOptional {
                return .unsupported(.transientWithoutDefault(variable))
            }
            return .transient(property)
        }
        return .persisted(property, marker: nonTransient.first)
    }

    /// True for `{ get ... }`, `{ get set }` and a bare getter body; false for `willSet`/`didSet`.
    static func isComputed(_ block: AccessorBlockSyntax) -> Bool {
        switch block.accessors {
        case .getter: return true
        case .accessors(let list):
            return list.contains { ["get", "_read", "read", "unsafeAddress"].contains($0.accessorSpecifier.text) }
        }
    }
}
