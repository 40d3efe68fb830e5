import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// A message of StrataData's macros.
struct MacroMessage: DiagnosticMessage, FixItMessage {
    let message: String
    let id: String
    var severity: DiagnosticSeverity = .error

    var diagnosticID: MessageID { MessageID(domain: "StrataData", id: id) }
    var fixItID: MessageID { diagnosticID }
}

/// A declaration a macro cannot expand: where, what to say, and how to fix it when there is a way.
struct ModelDiagnostic {
    let node: Syntax
    let message: MacroMessage
    var fixIts: [FixIt] = []

    /// True for a declaration of several variables (`var x, y: Double`, `var (a, b) = ...`).
    var isAboutTheWholeDeclaration: Bool { message.id == "bindings" || message.id == "tuple" }

    func diagnose(in context: some MacroExpansionContext) {
        context.diagnose(Diagnostic(node: node, message: message, fixIts: fixIts))
    }

    private static func fixIt(_ text: String, _ id: String, _ changes: [FixIt.Change]) -> FixIt {
        FixIt(message: MacroMessage(message: text, id: id, severity: .note), changes: changes)
    }

    /// The declaration without one of its attributes.
    private static func removing(_ marker: Marker, from variable: VariableDeclSyntax, id: String) -> FixIt {
        let attributes = Array(variable.attributes).filter { element in
            if case .attribute(let a) = element { return a.id != marker.attribute.id }
            return true
        }
        let fixed = variable.with(\.attributes, AttributeListSyntax(attributes)).with(\.leadingTrivia, variable.leadingTrivia)
        return fixIt("remove '@\(marker.name.rawValue)'", id, [.replace(oldNode: Syntax(variable), newNode: Syntax(fixed))])
    }

    /// The declaration without one of its modifiers.
    private static func removing(_ modifier: DeclModifierSyntax, from variable: VariableDeclSyntax, id: String) -> FixIt {
        let fixed = variable.with(\.modifiers, DeclModifierListSyntax(Array(variable.modifiers).filter { $0.id != modifier.id }))
            .with(\.leadingTrivia, variable.leadingTrivia)
        return fixIt("remove '\(modifier.name.text)'", id, [.replace(oldNode: Syntax(variable), newNode: Syntax(fixed))])
    }

    // MARK: Properties

    static func letProperty(_ variable: VariableDeclSyntax) -> ModelDiagnostic {
        let keyword = variable.bindingSpecifier
        return ModelDiagnostic(
            node: Syntax(keyword),
            message: MacroMessage(message: "a 'let' property cannot be in a @Model class: Strata sets each property of an object it loads; declare it with 'var'", id: "let"),
            fixIts: [fixIt("replace 'let' with 'var'", "let", [.replace(oldNode: Syntax(keyword), newNode: Syntax(keyword.with(\.tokenKind, .keyword(.var))))])])
    }

    static func markerOnComputedProperty(_ marker: Marker, _ variable: VariableDeclSyntax) -> ModelDiagnostic {
        ModelDiagnostic(
            node: Syntax(marker.attribute),
            message: MacroMessage(message: "@\(marker.name.rawValue) applies to a stored property; a computed property is not persisted", id: "computed"),
            fixIts: [removing(marker, from: variable, id: "computed")])
    }

    static func propertyObservers(_ variable: VariableDeclSyntax, _ binding: PatternBindingSyntax) -> ModelDiagnostic {
        ModelDiagnostic(
            node: Syntax(binding.accessorBlock ?? AccessorBlockSyntax(accessors: .accessors([]))),
            message: MacroMessage(message: "a property of a @Model class cannot have 'willSet' or 'didSet': @Model gives it accessors of its own; do the work in a method that sets the property", id: "observers"))
    }

    static func severalBindings(_ variable: VariableDeclSyntax) -> ModelDiagnostic {
        // The fix: one declaration per binding, each with the attributes and modifiers.
        let split = variable.bindings.map { binding -> String in
            var single = variable.with(\.bindings, PatternBindingListSyntax([binding.with(\.trailingComma, nil)]))
            single.leadingTrivia = []
            single.trailingTrivia = []
            if binding.typeAnnotation == nil, binding.initializer == nil,
               let type = variable.bindings.last?.typeAnnotation {
                // `var a, b: Int` gives `a` the type written after `b`.
                single = single.with(\.bindings, PatternBindingListSyntax([binding.with(\.trailingComma, nil).with(\.typeAnnotation, type)]))
            }
            return single.trimmedDescription
        }
        let indentation = variable.leadingTrivia.indentation
        let replacement: DeclSyntax = "\(raw: split.joined(separator: "\n" + indentation))"
        return ModelDiagnostic(
            node: Syntax(variable.bindings),
            message: MacroMessage(message: "declare each property of a @Model class with a 'var' of its own", id: "bindings"),
            fixIts: [fixIt("declare each property on a line of its own", "bindings", [.replace(oldNode: Syntax(variable), newNode: Syntax(replacement.with(\.leadingTrivia, variable.leadingTrivia).with(\.trailingTrivia, variable.trailingTrivia)))])])
    }

    static func tuplePattern(_ variable: VariableDeclSyntax) -> ModelDiagnostic {
        ModelDiagnostic(
            node: Syntax(variable.bindings),
            message: MacroMessage(message: "declare each property of a @Model class with a 'var' of its own, not a tuple pattern", id: "tuple"))
    }

    static func modifier(_ word: String, _ variable: VariableDeclSyntax, transient: Bool) -> ModelDiagnostic {
        let modifier = variable.modifiers.first { $0.name.text == word }!
        let remove = removing(modifier, from: variable, id: word)
        switch word {
        case "lazy":
            return ModelDiagnostic(
                node: Syntax(modifier),
                message: MacroMessage(message: "a 'lazy' property cannot be in a @Model class: make it a computed property, or a @Transient property with a default value", id: "lazy"))
        default:
            let message = transient
                ? "a '\(word)' property cannot be in a @Model class; keep the object elsewhere, or make the property a plain 'var'"
                : "a '\(word)' property cannot be persisted: a relationship to another model is a plain 'var' of an optional model (`var owner: Person?`)"
            return ModelDiagnostic(node: Syntax(modifier), message: MacroMessage(message: message, id: word), fixIts: [remove])
        }
    }

    static func transientAndPersisted(_ marker: Marker, _ variable: VariableDeclSyntax) -> ModelDiagnostic {
        ModelDiagnostic(
            node: Syntax(marker.attribute),
            message: MacroMessage(message: "a @Transient property is not persisted, so @\(marker.name.rawValue) does not apply to it", id: "transientAndPersisted"),
            fixIts: [removing(marker, from: variable, id: "transientAndPersisted")])
    }

    static func attributeAndRelationship(_ marker: Marker, _ variable: VariableDeclSyntax) -> ModelDiagnostic {
        ModelDiagnostic(
            node: Syntax(marker.attribute),
            message: MacroMessage(message: "a property is an @Attribute or a @Relationship, not both: a relationship's type is a model, an optional model or an array of models", id: "both"),
            fixIts: [removing(marker, from: variable, id: "both")])
    }

    static func transientWithoutDefault(_ variable: VariableDeclSyntax) -> ModelDiagnostic {
        ModelDiagnostic(
            node: Syntax(variable.bindings),
            message: MacroMessage(message: "a @Transient property needs a default value unless it is optional: Strata makes the objects it loads without running your initializers", id: "transientDefault"))
    }

    // MARK: Declarations

    static func notAClass(_ declaration: some DeclGroupSyntax, macro: String) -> ModelDiagnostic {
        let (keyword, what): (TokenSyntax, String) = {
            if let s = declaration.as(StructDeclSyntax.self) { return (s.structKeyword, "a struct") }
            if let e = declaration.as(EnumDeclSyntax.self) { return (e.enumKeyword, "an enum") }
            if let a = declaration.as(ActorDeclSyntax.self) { return (a.actorKeyword, "an actor") }
            if let p = declaration.as(ProtocolDeclSyntax.self) { return (p.protocolKeyword, "a protocol") }
            if let e = declaration.as(ExtensionDeclSyntax.self) { return (e.extensionKeyword, "an extension") }
            return (declaration.firstToken(viewMode: .sourceAccurate) ?? .keyword(.class), "this declaration")
        }()
        var fixIts: [FixIt] = []
        if declaration.is(StructDeclSyntax.self) {
            let replacement: TokenSyntax = .identifier("final class", leadingTrivia: keyword.leadingTrivia, trailingTrivia: keyword.trailingTrivia)
            fixIts.append(fixIt("make it a 'final class'", "notAClass", [.replace(oldNode: Syntax(keyword), newNode: Syntax(replacement))]))
        }
        return ModelDiagnostic(
            node: Syntax(keyword),
            message: MacroMessage(message: "@\(macro) applies to a class, not \(what): a model is a reference type whose objects a context tracks", id: "notAClass"),
            fixIts: fixIts)
    }

    static func initNotRequired(_ initializer: InitializerDeclSyntax) -> ModelDiagnostic {
        let required = DeclModifierSyntax(name: .keyword(.required, trailingTrivia: .space))
        // The line's indentation moves from the first token to the new first one.
        let bare = initializer.with(\.leadingTrivia, [])
        let fixed = bare.with(\.modifiers, bare.modifiers + [required]).with(\.leadingTrivia, initializer.leadingTrivia)
        return ModelDiagnostic(
            node: Syntax(initializer.initKeyword),
            message: MacroMessage(message: "'init()' of a non-final @Model class must be 'required': Strata makes the objects it loads with it, subclasses included", id: "required"),
            fixIts: [fixIt("add 'required'", "required", [.replace(oldNode: Syntax(initializer), newNode: Syntax(fixed))])])
    }

    static func notAnActor(_ declaration: some DeclGroupSyntax) -> ModelDiagnostic {
        var fixIts: [FixIt] = []
        var node = Syntax(declaration)
        if let c = declaration.as(ClassDeclSyntax.self) {
            node = Syntax(c.classKeyword)
            let actor: TokenSyntax = .keyword(.actor, leadingTrivia: c.classKeyword.leadingTrivia, trailingTrivia: c.classKeyword.trailingTrivia)
            var changes: [FixIt.Change] = [.replace(oldNode: Syntax(c.classKeyword), newNode: Syntax(actor))]
            // An actor is final already.
            let kept = Array(c.modifiers).filter { $0.name.text != "final" && $0.name.text != "open" }
            if kept.count != c.modifiers.count {
                changes.append(.replace(oldNode: Syntax(c.modifiers), newNode: Syntax(DeclModifierListSyntax(kept))))
            }
            fixIts.append(fixIt("make it an 'actor'", "notAnActor", changes))
        } else if let s = declaration.as(StructDeclSyntax.self) {
            node = Syntax(s.structKeyword)
        }
        return ModelDiagnostic(
            node: node,
            message: MacroMessage(message: "@ModelActor applies to an actor: its methods run one at a time on the actor's own ModelContext", id: "notAnActor"),
            fixIts: fixIts)
    }

    static func constraintWithoutModelType(_ node: some FreestandingMacroExpansionSyntax, macro: String) -> ModelDiagnostic {
        ModelDiagnostic(
            node: Syntax(node.macroName),
            message: MacroMessage(message: "name the model: #\(macro)<Trip>([\\.name], [\\.start, \\.end])", id: "constraintType"))
    }

    static func constraintOutsideModel(_ node: some FreestandingMacroExpansionSyntax, macro: String) -> ModelDiagnostic {
        ModelDiagnostic(
            node: Syntax(node.macroName),
            message: MacroMessage(message: "#\(macro) belongs in the body of a @Model class", id: "constraintPlace"))
    }
}

extension Trivia {
    /// The spaces and tabs after the last newline: the indentation of the line that follows.
    var indentation: String {
        var result = ""
        for piece in pieces {
            switch piece {
            case .newlines, .carriageReturns, .carriageReturnLineFeeds: result = ""
            case .spaces(let n): result += String(repeating: " ", count: n)
            case .tabs(let n): result += String(repeating: "\t", count: n)
            default: break
            }
        }
        return result
    }
}
