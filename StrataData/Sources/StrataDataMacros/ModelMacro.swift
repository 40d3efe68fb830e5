import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Model`: makes a class a persisted model, as SwiftData's `@Model` does.
///
/// - member: an `init()` with no property set, which Strata uses to make the objects it loads
///   (unless the class has one), and `schemaMetadata`, the list of the stored properties;
/// - member attributes: `@_PersistedProperty` on each stored `var`, which gives it storage and
///   accessors; diagnostics for the stored properties it cannot persist;
/// - extension: the `PersistentModel` conformance (a subclass inherits it).
public struct ModelMacro {}

extension ModelMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let model = declaration.as(ClassDeclSyntax.self) else {
            ModelDiagnostic.notAClass(declaration, macro: "Model").diagnose(in: context)
            return []
        }
        // Swift expands member attributes once per variable of a declaration, so a problem with
        // the declaration as a whole (`var x, y: Double`) is reported here, once.
        for member in model.memberBlock.members {
            if case .unsupported(let problem) = MemberKind.of(member.decl), problem.isAboutTheWholeDeclaration {
                problem.diagnose(in: context)
            }
        }
        let subclass = isSubclass(model, protocols: protocols)
        // A subclass inherits its superclass's list (a `class var` the subclass cannot know
        // exists when the superclass is not a `@Model`); discovery finds its own fields by reflection.
        let metadata = subclass ? [] : [schemaMetadata(of: model)]
        if let existing = initializerWithoutArguments(of: model) {
            if !model.modifiers.contains(where: { $0.name.text == "final" })
                && !existing.modifiers.contains(where: { $0.name.text == "required" }) {
                ModelDiagnostic.initNotRequired(existing).diagnose(in: context)
            }
            return metadata
        }
        return [emptyInitializer(of: model, isSubclass: subclass)] + metadata
    }

    /// `schemaMetadata`, SwiftData's list of the stored properties: for each, its name, key path
    /// and initial value, and (Strata's) a function that names its storage, from which the
    /// compiler gives discovery the storage's type. (`static` in a final class; a `class var`
    /// in another, which a subclass may override.)
    static func schemaMetadata(of model: ClassDeclSyntax) -> DeclSyntax {
        let className = model.name.trimmedDescription
        let entries = model.memberBlock.members.compactMap { member -> String? in
            switch MemberKind.of(member.decl) {
            case .persisted(let property, _), .transient(let property):
                var defaultValue = "nil"
                if let initial = property.initialValue {
                    defaultValue = property.storedType.map { "(\(initial.trimmedDescription) as \($0))" } ?? initial.trimmedDescription
                }
                return "Strata.Schema.PropertyMetadata(name: \"\(property.plainName)\", keypath: \\\(className).\(property.name), "
                    + "defaultValue: \(defaultValue), _storage: { (model: \(className)) in model.\(property.storageName) })"
            case .ignored, .unsupported:
                return nil
            }
        }
        let isFinal = model.modifiers.contains { $0.name.text == "final" }
        let list = entries.isEmpty ? "[]" : "[\n" + entries.map { "        " + $0 + ",\n" }.joined() + "    ]"
        return """
            /// Made by @Model: the stored properties (SwiftData's `schemaMetadata`).
            \(raw: accessModifier(of: model.modifiers))\(raw: isFinal ? "static" : "class") var schemaMetadata: [Strata.Schema.PropertyMetadata] {
                \(raw: list)
            }
            """
    }

    /// The class's own `init()`, which Strata then uses.
    static func initializerWithoutArguments(of model: ClassDeclSyntax) -> InitializerDeclSyntax? {
        model.memberBlock.members.lazy.compactMap { $0.decl.as(InitializerDeclSyntax.self) }
            .first { $0.signature.parameterClause.parameters.isEmpty && $0.optionalMark == nil }
    }

    /// `init()` that sets no property (those with a default value get it): it marks each one's
    /// `_$name` flag, so that Swift counts it as initialized, and calls `super.init()` in a
    /// subclass.
    static func emptyInitializer(of model: ClassDeclSyntax, isSubclass: Bool) -> DeclSyntax {
        var body = model.memberBlock.members.compactMap { member -> String? in
            switch MemberKind.of(member.decl) {
            case .persisted(let property, _), .transient(let property):
                return "self.\(property.initializedFlagName) = Strata._ModelPropertyInitialized()"
            case .ignored, .unsupported:
                return nil
            }
        }
        if isSubclass { body.append("super.init()") }
        let lines = body.map { "\n    " + $0 }.joined()
        return """
            /// Made by @Model: Strata makes the objects it loads with this initializer, then sets
            /// their persisted properties. (Disfavored: `Model()` calls an initializer of the
            /// class whose arguments all have defaults, if there is one.)
            @_disfavoredOverload
            \(raw: accessModifier(of: model.modifiers))required init() {\(raw: lines)
            }
            """
    }

    /// A class inherits the conformance from a model superclass: the compiler asks for it only
    /// when the class does not have it yet (and it is not written in the class's own clause).
    static func isSubclass(_ model: ClassDeclSyntax, protocols: [TypeSyntax]) -> Bool {
        if protocols.contains(where: isPersistentModel) { return false }
        let written = model.inheritanceClause?.inheritedTypes.map(\.type) ?? []
        return !written.contains(where: isPersistentModel)
    }

    static func isPersistentModel(_ type: TypeSyntax) -> Bool {
        let name = type.trimmedDescription
        return name == "PersistentModel" || name.hasSuffix(".PersistentModel")
    }
}

extension ModelMacro: MemberAttributeMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard declaration.is(ClassDeclSyntax.self) else { return [] }
        switch MemberKind.of(member) {
        case .persisted, .transient:
            return ["@StrataData._PersistedProperty"]
        case .unsupported(let problem):
            if !problem.isAboutTheWholeDeclaration { problem.diagnose(in: context) }
            return []
        case .ignored:
            return []
        }
    }
}

extension ModelMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ClassDeclSyntax.self), protocols.contains(where: isPersistentModel) else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): Strata.PersistentModel {}")]
    }
}

/// The access modifier a member needs to be as visible as its type (`public ` or `package `),
/// or none.
func accessModifier(of modifiers: DeclModifierListSyntax) -> String {
    for modifier in modifiers {
        switch modifier.name.text {
        case "public", "open": return "public "
        case "package": return "package "
        default: continue
        }
    }
    return ""
}
