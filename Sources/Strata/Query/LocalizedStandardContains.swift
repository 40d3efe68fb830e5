import Foundation
@_spi(StorageBackend) import StrataRecords

extension PredicateExpressions {
    /// `a.localizedStandardContains(b)` in a `#Predicate`: case- and diacritic-insensitive
    /// containment, as Foundation on Apple platforms does it. Foundation on Linux lacks this
    /// expression; Strata provides it so that the same predicate compiles and works.
    public struct StringLocalizedStandardContains<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        public typealias Output = Bool
        public let root: Root
        public let other: Other

        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        public func evaluate(_ bindings: PredicateBindings) throws -> Bool {
            LocalizedStandard.contains(try root.evaluate(bindings), try other.evaluate(bindings))
        }
    }

    /// What `#Predicate` calls for `localizedStandardContains`.
    public static func build_localizedStandardContains<Root, Other>(_ root: Root, _ other: Other) -> StringLocalizedStandardContains<Root, Other> {
        StringLocalizedStandardContains(root: root, other: other)
    }
}

extension PredicateExpressions.StringLocalizedStandardContains: StandardPredicateExpression where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}
extension PredicateExpressions.StringLocalizedStandardContains: Sendable where Root: Sendable, Other: Sendable {}
extension PredicateExpressions.StringLocalizedStandardContains: Codable where Root: Codable, Other: Codable {}

enum LocalizedStandard {
    static func contains<A: StringProtocol, B: StringProtocol>(_ text: A, _ search: B) -> Bool {
        if search.isEmpty { return false }
        return String(text).range(of: String(search), options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive]) != nil
    }
}
