import Foundation
import Strata

// One conformance per `PredicateExpressions` node that has SQL. A node whose children are all
// constants is folded to its Swift value (with the types it has, as Foundation would compute
// it), so that captured expressions (`limit - 1`, `range`, `-5`, `someObject.name`) bind as
// values. A node type without a conformance here has no SQL: the predicate is done in memory.

// MARK: - Leaves

extension PredicateExpressions.Value: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        .constant(SQLConstant(value: value, type: Output.self))
    }
}

extension PredicateExpressions.NilLiteral: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        .constant(SQLConstant(value: Output.none as Any, type: Output.self))
    }
}

extension PredicateExpressions.Variable: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? { t.lookup(key) }
}

extension PredicateExpressions.KeyPath: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let root = t.translate(self.root) else { return nil }
        switch root {
        case .model(let m):
            if Output.self == PersistentIdentifier.self, let key = t.resolver.identifierColumn(for: keyPath, of: m.type, alias: m.alias) {
                return .scalar(SQLScalar(sql: SQLText(key), kind: .bigint, nullable: false, valueType: PersistentIdentifier.self,
                                         identifierOf: SQLTranslator.entityName(of: m.type)))
            }
            if let column = t.resolver.column(for: keyPath, of: m.type, alias: m.alias) {
                return .scalar(SQLScalar(sql: SQLText(column.sql), kind: column.kind, nullable: column.isOptional,
                                         valueType: SQLTranslator.unwrappedType(Output.self)))
            }
            if let r = t.resolver.toOne(for: keyPath, of: m.type, alias: m.alias) {
                return .toOne(SQLToOne(foreignKey: r.foreignKey, target: r.target, table: r.table))
            }
            return nil
        case .constant(let c):
            guard let value = c.value as? Root.Output else { return nil }
            return .constant(SQLConstant(value: value[keyPath: keyPath], type: Output.self))
        case .scalar(let s):
            return t.member(s, keyPath)
        default:
            return nil
        }
    }
}

extension SQLTranslator {
    /// A property of a column's value: `isEmpty` of a string, `count` and `isEmpty` of data and
    /// of arrays and sets (JSON arrays). A string's `count` counts Characters, which
    /// PostgreSQL does not: nil.
    func member(_ s: SQLScalar, _ keyPath: AnyKeyPath) -> SQLNode? {
        guard !s.nullable, s.identifierOf == nil else { return nil }
        switch s.kind {
        case .text where s.valueType == String.self:
            if keyPath == \String.isEmpty as AnyKeyPath { return .condition("\(s.sql) = ''") }
        case .bytea where s.valueType == Data.self:
            if keyPath == \Data.isEmpty as AnyKeyPath { return .condition("octet_length(\(s.sql)) = 0") }
            if keyPath == \Data.count as AnyKeyPath {
                return .scalar(SQLScalar(sql: "octet_length(\(s.sql))", kind: .bigint, nullable: false, valueType: Int.self))
            }
        case .jsonb:
            guard let collection = s.valueType as? any SQLJSONCollection.Type else { return nil }
            if keyPath == collection.sqlIsEmptyKeyPath { return .condition("jsonb_array_length(\(s.sql)) = 0") }
            if keyPath == collection.sqlCountKeyPath {
                return .scalar(SQLScalar(sql: "jsonb_array_length(\(s.sql))", kind: .bigint, nullable: false, valueType: Int.self))
            }
        default:
            break
        }
        return nil
    }
}

// MARK: - Comparisons

extension PredicateExpressions.Equal: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let l = t.translate(lhs), let r = t.translate(rhs) else { return nil }
        if let a = l.constant, let b = r.constant {
            guard let x = a.value as? LHS.Output, let y = b.value as? RHS.Output else { return nil }
            return .constant(SQLConstant(value: x == y, type: Bool.self))
        }
        return t.equality(l, r, .equal).map { .condition($0) }
    }
}

extension PredicateExpressions.NotEqual: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let l = t.translate(lhs), let r = t.translate(rhs) else { return nil }
        if let a = l.constant, let b = r.constant {
            guard let x = a.value as? LHS.Output, let y = b.value as? RHS.Output else { return nil }
            return .constant(SQLConstant(value: x != y, type: Bool.self))
        }
        return t.equality(l, r, .notEqual).map { .condition($0) }
    }
}

extension PredicateExpressions.Comparison: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let l = t.translate(lhs), let r = t.translate(rhs) else { return nil }
        let op = SQLComparison(self.op)
        if let a = l.constant, let b = r.constant {
            guard let x = a.value as? LHS.Output, let y = b.value as? RHS.Output else { return nil }
            let result = switch op {
            case .less: x < y
            case .lessOrEqual: x <= y
            case .greater: x > y
            case .greaterOrEqual: x >= y
            case .equal, .notEqual: false
            }
            return .constant(SQLConstant(value: result, type: Bool.self))
        }
        return t.comparison(l, r, op).map { .condition($0) }
    }
}

// MARK: - Logic

extension PredicateExpressions.Conjunction: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let l = t.translate(lhs), let a = t.condition(l), let r = t.translate(rhs), let b = t.condition(r) else { return nil }
        return .condition(.and(a, b))
    }
}

extension PredicateExpressions.Disjunction: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let l = t.translate(lhs), let a = t.condition(l), let r = t.translate(rhs), let b = t.condition(r) else { return nil }
        return .condition(.or(a, b))
    }
}

extension PredicateExpressions.Negation: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let w = t.translate(wrapped), let a = t.condition(w) else { return nil }
        return .condition(.not(a))
    }
}

extension PredicateExpressions.Conditional: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let test = t.translate(self.test) else { return nil }
        if let c = test.constant, let b = c.value as? Bool {
            return b ? t.translate(trueBranch) : t.translate(falseBranch)   // Swift evaluates one branch
        }
        guard Output.self == Bool.self, let condition = t.condition(test),
              let a = t.translate(trueBranch), let x = t.condition(a),
              let b = t.translate(falseBranch), let y = t.condition(b) else { return nil }
        return .condition(.or(.and(condition, x), .and(.not(condition), y)))
    }
}

// MARK: - Optionals

extension PredicateExpressions.NilCoalesce: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let l = t.translate(lhs) else { return nil }
        if let c = l.constant {
            if let v = c.unwrapped { return .constant(SQLConstant(value: v, type: Output.self)) }
            return t.translate(rhs)
        }
        guard let r = t.translate(rhs) else { return nil }
        return t.coalesce(l, r)
    }
}

extension PredicateExpressions.OptionalFlatMap: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let w = t.translate(wrapped) else { return nil }
        return t.flatMap(w, variable: variable.key, wrappedType: Wrapped.self, resultType: Result.self) { t.translate(transform) }
    }
}

extension PredicateExpressions.ForcedUnwrap: SQLTranslatable {
    /// Only of a constant: Foundation throws for a nil value, which SQL cannot do.
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let i = t.translate(inner), let c = i.constant, let v = c.unwrapped else { return nil }
        return .constant(SQLConstant(value: v, type: Output.self))
    }
}

extension SQLTranslator {
    /// `l ?? r` for an `l` that is not a constant.
    func coalesce(_ l: SQLNode, _ r: SQLNode) -> SQLNode? {
        switch l {
        case .scalar(let s):
            guard s.identifierOf == nil else { return nil }
            if !s.nullable { return l }
            switch r {
            case .constant(let c):
                guard let v = c.unwrapped else { return l }
                if s.kind == .boolean, s.valueType == Bool.self, let b = v as? Bool {
                    // `flag ?? true`
                    return .condition(b ? "(\(s.sql) IS NULL OR \(s.sql))" : "(\(s.sql) IS NOT NULL AND \(s.sql))")
                }
                let fallback: SQLValue?
                switch s.kind {
                case .text: fallback = (v as? String).flatMap { $0.unicodeScalars.contains("\0") ? nil : .text($0) }
                case .jsonb: fallback = JSONSQL.json(of: v).map { .jsonb($0) }
                default: fallback = SQLTranslator.sqlValue(v, kind: s.kind, valueType: s.valueType)
                }
                guard let fallback else { return nil }
                var result = s
                result.sql = "COALESCE(\(s.sql), \(bind: fallback))"
                result.nullable = false
                result.coalesced = s.coalesced == nil ? SQLCoalesced(base: s, fallback: v) : nil
                return .scalar(result)
            case .scalar(let other):
                guard other.kind == s.kind, other.valueType == s.valueType, other.identifierOf == nil else { return nil }
                var result = s
                result.sql = "COALESCE(\(s.sql), \(other.sql))"
                result.nullable = other.nullable
                result.coalesced = nil
                return .scalar(result)
            default:
                // `optionalBool ?? condition` below covers a Bool column.
                break
            }
        case .related(let rel):
            if let value = relatedValue(rel) {
                guard case .scalar(var result)? = coalesce(.scalar(value), r) else { return nil }
                if let c = result.coalesced { result.coalesced = SQLCoalesced(base: c.base, fallback: c.fallback, related: rel) }
                return .scalar(result)
            }
        default:
            break
        }
        // Optional<Bool> ?? Bool
        guard let o = optionalBool(l) else { return nil }
        if let c = r.constant, let b = c.value as? Bool {
            return .condition(b ? .not(o.isFalse) : o.isTrue)
        }
        guard let d = condition(r) else { return nil }
        return .condition(.or(o.isTrue, .and(o.isNil, d)))
    }

    /// `w.flatMap { variable in body }`.
    func flatMap(_ w: SQLNode, variable: PredicateExpressions.VariableID, wrappedType: Any.Type, resultType: Any.Type,
                 body: () -> SQLNode?) -> SQLNode? {
        defer { unbind(variable) }
        switch w {
        case .constant(let c):
            guard let v = c.unwrapped else { return .constant(SQLConstant(value: Optional<Int>.none as Any, type: Optional<Int>.self)) }
            bind(variable, to: .constant(SQLConstant(value: v, type: wrappedType)))
            guard let node = body() else { return nil }
            if case .condition(let cond) = node { return .optionalBool(SQLOptionalBool(isNil: .false, isTrue: cond, isFalse: .not(cond))) }
            if let k = node.constant {
                // The body's value, as the Optional the flatMap gives.
                return .constant(SQLConstant(value: k.value, type: k.type is any SQLOptionalValue.Type ? k.type : resultType))
            }
            return node
        case .scalar(let s):
            guard s.identifierOf == nil else { return nil }
            var unwrapped = s
            unwrapped.nullable = false
            bind(variable, to: .scalar(unwrapped))
            guard let node = body() else { return nil }
            let present: SQLText = s.nullable ? "\(s.sql) IS NOT NULL" : .true
            let absent: SQLText = s.nullable ? "\(s.sql) IS NULL" : .false
            switch node {
            case .condition(let cond):
                return .optionalBool(SQLOptionalBool(isNil: absent, isTrue: .and(present, cond), isFalse: .and(present, .not(cond))))
            case .optionalBool(let o):
                return .optionalBool(SQLOptionalBool(isNil: .or(absent, o.isNil), isTrue: .and(present, o.isTrue), isFalse: .and(present, o.isFalse)))
            case .scalar(var v):
                if v.sql == unwrapped.sql && v.kind == s.kind { return .scalar(s) }   // `{ $0 }`
                if s.nullable {
                    v.sql = "CASE WHEN \(s.sql) IS NOT NULL THEN \(v.sql) END"
                    v.nullable = true
                    v.coalesced = nil
                }
                return .scalar(v)
            default:
                return nil
            }
        case .toOne(let r):
            let alias = newAlias()
            guard let key = resolver.identifierColumn(for: SQLTranslator.identifierKeyPath(r.target), of: r.target, alias: alias) else { return nil }
            bind(variable, to: .model(SQLModelScope(type: r.target, alias: alias)))
            guard let node = body() else { return nil }
            if case .scalar(let v) = node, v.identifierOf != nil, v.sql == SQLText(key) {
                // `$0.trip?.persistentModelID`: the foreign key itself.
                return .scalar(SQLScalar(sql: SQLText(r.foreignKey), kind: .bigint, nullable: true, valueType: PersistentIdentifier.self,
                                         identifierOf: v.identifierOf))
            }
            return .related(SQLRelated(toOne: r, alias: alias, primaryKey: key, inner: node))
        case .related(var rel):
            // `$0.trip?.owner?.name`: the flatMap is done on the related row.
            unbind(variable)
            guard let inner = flatMap(rel.inner, variable: variable, wrappedType: wrappedType, resultType: resultType, body: body) else { return nil }
            rel.inner = inner
            return .related(rel)
        default:
            return nil
        }
    }
}

// MARK: - Sequences, strings and ranges

extension PredicateExpressions.SequenceContains: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let s = t.translate(sequence), let e = t.translate(element) else { return nil }
        switch (s, e) {
        case (.constant(let sc), .constant(let ec)):
            guard let values = sc.value as? LHS.Output, let v = ec.value as? RHS.Output else { return nil }
            return .constant(SQLConstant(value: values.contains(v), type: Bool.self))
        case (.constant(let sc), _):
            guard let values = sc.value as? LHS.Output else { return nil }
            var list: [Any] = []
            for v in values {
                list.append(v)
                if list.count > 1_000_000 { return nil }
            }
            return t.membership(e, list, elementType: RHS.Output.self).map { .condition($0) }
        case (.scalar(let column), .constant(let ec)):
            // An array or set attribute (JSON array) containing a constant.
            guard column.kind == .jsonb, column.identifierOf == nil, column.valueType is any SQLJSONCollection.Type,
                  let test = JSONSQL.contains(column.sql, ec.value) else { return nil }
            return .condition(t.nullSafe(column, .equal, test))
        default:
            return nil
        }
    }
}

extension PredicateExpressions.CollectionContainsCollection: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let b = t.translate(base), let o = t.translate(other) else { return nil }
        switch (b, o) {
        case (.constant(let bc), .constant(let oc)):
            guard let x = bc.value as? Base.Output, let y = oc.value as? Other.Output else { return nil }
            return .constant(SQLConstant(value: x.contains(y), type: Bool.self))
        case (.scalar(let s), .constant(let c)):
            guard s.kind == .text, s.valueType == String.self, s.identifierOf == nil, let string = c.value as? String,
                  let test = TextSQL.contains(s.sql, string) else { return nil }
            return .condition(t.nullSafe(s, .equal, test))
        default:
            return nil
        }
    }
}

extension PredicateExpressions.SequenceStartsWith: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let b = t.translate(base), let p = t.translate(prefix) else { return nil }
        switch (b, p) {
        case (.constant(let bc), .constant(let pc)):
            guard let x = bc.value as? Base.Output, let y = pc.value as? Prefix.Output else { return nil }
            return .constant(SQLConstant(value: x.starts(with: y), type: Bool.self))
        case (.scalar(let s), .constant(let c)):
            guard s.kind == .text, s.valueType == String.self, s.identifierOf == nil, let string = c.value as? String,
                  let test = TextSQL.startsWith(s.sql, string) else { return nil }
            return .condition(t.nullSafe(s, .equal, test))
        default:
            return nil
        }
    }
}

extension PredicateExpressions.ClosedRange: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let l = t.translate(lower)?.constant, let u = t.translate(upper)?.constant,
              let a = l.value as? LHS.Output, let b = u.value as? RHS.Output, a <= b else { return nil }   // Swift traps for a > b
        return .constant(SQLConstant(value: a...b, type: Output.self))
    }
}

extension PredicateExpressions.Range: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let l = t.translate(lower)?.constant, let u = t.translate(upper)?.constant,
              let a = l.value as? LHS.Output, let b = u.value as? RHS.Output, a <= b else { return nil }
        return .constant(SQLConstant(value: a..<b, type: Output.self))
    }
}

extension PredicateExpressions.RangeExpressionContains: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let r = t.translate(range)?.constant, let e = t.translate(element),
              let rangeValue = r.value as? RangeExpression.Output else { return nil }
        if let c = e.constant {
            guard let v = c.value as? Element.Output else { return nil }
            return .constant(SQLConstant(value: rangeValue.contains(v), type: Bool.self))
        }
        guard let bounds = rangeValue as? any SQLRangeBounds else { return nil }
        var result = SQLText.true
        if let lower = bounds.sqlLowerBound {
            guard let test = t.comparison(e, .constant(SQLConstant(value: lower, type: Element.Output.self)), .greaterOrEqual) else { return nil }
            result = .and(result, test)
        }
        if let upper = bounds.sqlUpperBound {
            let op: SQLComparison = bounds.sqlIncludesUpperBound ? .lessOrEqual : .less
            guard let test = t.comparison(e, .constant(SQLConstant(value: upper, type: Element.Output.self)), op) else { return nil }
            result = .and(result, test)
        }
        return .condition(result)
    }
}

/// The bounds of the standard ranges, through `Any`.
protocol SQLRangeBounds {
    var sqlLowerBound: Any? { get }
    var sqlUpperBound: Any? { get }
    var sqlIncludesUpperBound: Bool { get }
}

extension ClosedRange: SQLRangeBounds {
    var sqlLowerBound: Any? { lowerBound }
    var sqlUpperBound: Any? { upperBound }
    var sqlIncludesUpperBound: Bool { true }
}

extension Range: SQLRangeBounds {
    var sqlLowerBound: Any? { lowerBound }
    var sqlUpperBound: Any? { upperBound }
    var sqlIncludesUpperBound: Bool { false }
}

extension PartialRangeFrom: SQLRangeBounds {
    var sqlLowerBound: Any? { lowerBound }
    var sqlUpperBound: Any? { nil }
    var sqlIncludesUpperBound: Bool { false }
}

extension PartialRangeThrough: SQLRangeBounds {
    var sqlLowerBound: Any? { nil }
    var sqlUpperBound: Any? { upperBound }
    var sqlIncludesUpperBound: Bool { true }
}

extension PartialRangeUpTo: SQLRangeBounds {
    var sqlLowerBound: Any? { nil }
    var sqlUpperBound: Any? { upperBound }
    var sqlIncludesUpperBound: Bool { false }
}

// MARK: - Arithmetic on constants

extension PredicateExpressions.UnaryMinus: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let c = t.translate(wrapped)?.constant, let v = c.value as? Output, let result = SQLConstantArithmetic.negate(v) else { return nil }
        return .constant(SQLConstant(value: result, type: Output.self))
    }
}

extension PredicateExpressions.Arithmetic: SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode? {
        guard let l = t.translate(lhs)?.constant, let r = t.translate(rhs)?.constant,
              let x = l.value as? Output, let y = r.value as? Output,
              let result = SQLConstantArithmetic.apply(op, x, y) else { return nil }
        return .constant(SQLConstant(value: result, type: Output.self))
    }
}

/// Arithmetic on constants, without the traps of Swift's operators (an overflow would trap in
/// Foundation too, but only if it evaluated the expression): nil when it overflows.
enum SQLConstantArithmetic {
    static func negate<N>(_ v: N) -> N? {
        if let i = v as? any FixedWidthInteger { return negateInteger(i) as? N }
        if let d = v as? Double { return -d as? N }
        if let f = v as? Float { return -f as? N }
        if let d = v as? Decimal { return -d as? N }
        return nil
    }

    private static func negateInteger<I: FixedWidthInteger>(_ i: I) -> I? {
        let (r, overflow) = I.zero.subtractingReportingOverflow(i)
        return overflow ? nil : r
    }

    static func apply<N>(_ op: PredicateExpressions.ArithmeticOperator, _ x: N, _ y: N) -> N? {
        if let a = x as? any FixedWidthInteger { return integer(op, a, y) as? N }
        if let a = x as? Double, let b = y as? Double { return floating(op, a, b) as? N }
        if let a = x as? Float, let b = y as? Float { return floating(op, a, b) as? N }
        if let a = x as? Decimal, let b = y as? Decimal {
            let r: Decimal? = switch op {
            case .add: a + b
            case .subtract: a - b
            case .multiply: a * b
            @unknown default: nil
            }
            return r as? N
        }
        return nil
    }

    private static func integer<I: FixedWidthInteger>(_ op: PredicateExpressions.ArithmeticOperator, _ a: I, _ other: Any) -> I? {
        guard let b = other as? I else { return nil }
        let (r, overflow): (I, Bool)
        switch op {
        case .add: (r, overflow) = a.addingReportingOverflow(b)
        case .subtract: (r, overflow) = a.subtractingReportingOverflow(b)
        case .multiply: (r, overflow) = a.multipliedReportingOverflow(by: b)
        @unknown default: return nil
        }
        return overflow ? nil : r
    }

    private static func floating<F: BinaryFloatingPoint>(_ op: PredicateExpressions.ArithmeticOperator, _ a: F, _ b: F) -> F? {
        switch op {
        case .add: a + b
        case .subtract: a - b
        case .multiply: a * b
        @unknown default: nil
        }
    }
}

// MARK: - Text

/// Swift's `String` semantics, where PostgreSQL can give them exactly.
///
/// Swift compares strings by canonical equivalence (their NFC forms: "é" == "e\u{301}") and
/// `contains`/`starts(with:)` in a predicate compare `Character`s (grapheme clusters:
/// "ab\u{301}".contains("ab") is false, "#\u{FE0F}\u{20E3}".contains("#") is false,
/// "\u{212A}" (KELVIN SIGN) == "K" is true). PostgreSQL compares bytes and searches code
/// points. What is translated, and why it is exact (columns are valid UTF-8 without NUL, as
/// PostgreSQL text is; collations deterministic):
///
/// - `==` / `!=` with an ASCII constant `c`. A string canonically equivalent to an ASCII string
///   is made of ASCII and the three scalars whose canonical decomposition is one ASCII
///   character: U+212A KELVIN SIGN (K), U+037E GREEK QUESTION MARK (;), U+1FEF GREEK VARIA (`)
///   (checked over all scalars by the tests). So `col = c` is exact when `c` has none of K ; `,
///   and `translate(col, <those three>, 'K;`') = c` is exact otherwise.
/// - `==` / `!=` with a non-ASCII constant: `normalize(col, NFC) = normalize(c, NFC)`
///   (PostgreSQL 13+). Normalization is stable for assigned characters (Unicode's stability
///   policy), so the server's NFC and Swift's agree on every string whose characters the
///   server's Unicode version knows; a string with a character it does not know has one in its
///   NFC under both, and equals no constant whose characters both know. So the constant's
///   characters must be assigned in Unicode 12.1 (PostgreSQL 13's tables); otherwise nil.
/// - `contains(c)` and `starts(with: c)` with a constant of printable ASCII (U+0020...U+007E).
///   Each of `c`'s characters is one Character; a column's Character equals it only if it is
///   that one scalar (or its singleton above). A match in the column's scalars is a match of
///   Characters exactly when the match begins and ends on grapheme boundaries: no Prepend
///   scalar just before it (GB9b), no Extend, ZWJ or SpacingMark scalar just after it (GB9,
///   GB9a); every other rule needs a non-ASCII scalar inside the match. So the SQL is a LIKE
///   (exact for a column that is all ASCII) and, for a column that is not, a regular expression
///   that checks those two neighbours, with the scalar sets taken from Swift's own grapheme
///   breaking at run time (`SQLGraphemes`). The empty string is contained in every string and
///   begins every string (Foundation's answer on Linux).
/// - Everything else (`<` on strings, `localizedStandardContains`, `count`, non-ASCII
///   `contains`): nil. Ordering would need NFC on both sides, which the server computes by
///   its own Unicode version: exact only for characters it knows.
enum TextSQL {
    /// The scalars canonically equivalent to one ASCII character, and those characters.
    static let singletons = "\u{212A}\u{037E}\u{1FEF}"
    static let singletonTargets = "K;`"

    /// Swift's `==` between this constant and any string is byte equality.
    static func bytesEqualIsSwiftEqual(_ c: String) -> Bool {
        c.unicodeScalars.allSatisfy { $0.isASCII && $0 != "\0" && !singletonTargets.unicodeScalars.contains($0) }
    }

    /// `column == c` (or `!=`), for a column that is not NULL.
    static func equals(_ column: SQLText, _ c: String, negated: Bool) -> SQLText? {
        let op = negated ? "<>" : "="
        guard !c.unicodeScalars.contains("\0") else { return nil }
        if bytesEqualIsSwiftEqual(c) { return "\(column) \(raw: op) \(bind: .text(c))" }
        if c.unicodeScalars.allSatisfy(\.isASCII) { return "\(folded(column)) \(raw: op) \(bind: .text(c))" }
        guard c.unicodeScalars.allSatisfy(isKnownToServer) else { return nil }
        return "normalize(\(column), NFC) \(raw: op) normalize(\(bind: .text(c)), NFC)"
    }

    /// `column.contains(c)` in a predicate, for a column that is not NULL.
    static func contains(_ column: SQLText, _ c: String) -> SQLText? {
        if c.isEmpty { return .true }
        guard isPrintableASCII(c) else { return nil }
        let text = needsFolding(c) ? folded(column) : column
        let like = "%" + escapeLike(c) + "%"
        let pattern = SQLGraphemes.notAfterPrepend + escapeRegex(c) + SQLGraphemes.notBeforeExtend
        return "(\(text) LIKE \(bind: .text(like)) AND (octet_length(\(text)) = char_length(\(text)) OR \(text) ~ \(bind: .text(pattern))))"
    }

    /// `column.starts(with: c)` in a predicate, for a column that is not NULL.
    static func startsWith(_ column: SQLText, _ c: String) -> SQLText? {
        if c.isEmpty { return .true }
        guard isPrintableASCII(c) else { return nil }
        let text = needsFolding(c) ? folded(column) : column
        let like = escapeLike(c) + "%"
        let pattern = "^" + escapeRegex(c) + SQLGraphemes.notBeforeExtend
        return "(\(text) LIKE \(bind: .text(like)) AND (octet_length(\(text)) = char_length(\(text)) OR \(text) ~ \(bind: .text(pattern))))"
    }

    static func isPrintableASCII(_ c: String) -> Bool {
        c.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value <= 0x7E }
    }

    private static func needsFolding(_ c: String) -> Bool {
        c.unicodeScalars.contains { singletonTargets.unicodeScalars.contains($0) }
    }

    /// The column with the three singletons replaced by their ASCII equivalents (it has the
    /// same grapheme boundaries: all are of grapheme break property Other).
    private static func folded(_ column: SQLText) -> SQLText {
        "translate(\(column), '\(raw: singletons)', '\(raw: singletonTargets)')"
    }

    /// Assigned in Unicode 12.1 or earlier (the Unicode version of PostgreSQL 13's tables).
    static func isKnownToServer(_ scalar: Unicode.Scalar) -> Bool {
        guard let age = scalar.properties.age else { return false }
        return age.major < 12 || (age.major == 12 && age.minor <= 1)
    }

    /// A LIKE pattern matching `c` literally (the default escape character is `\`).
    static func escapeLike(_ c: String) -> String {
        var out = ""
        for ch in c.unicodeScalars {
            if ch == "\\" || ch == "%" || ch == "_" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(ch)
        }
        return out
    }

    /// A regular expression (PostgreSQL ARE) matching printable ASCII `c` literally: `\`
    /// before every character that is not a letter or digit.
    static func escapeRegex(_ c: String) -> String {
        var out = ""
        for ch in c.unicodeScalars {
            let alphanumeric = ("a"..."z").contains(ch) || ("A"..."Z").contains(ch) || ("0"..."9").contains(ch)
            if !alphanumeric { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(ch)
        }
        return out
    }
}

/// The scalars that change where a printable ASCII character's grapheme cluster ends or
/// begins, as Swift's runtime breaks graphemes (computed once, from Swift itself, so that they
/// are the Unicode version of the Swift that evaluates the predicate in memory).
enum SQLGraphemes {
    /// Scalars that join a preceding printable ASCII character into one Character (Extend,
    /// ZWJ, SpacingMark), and scalars that join the following one (Prepend), as sorted ranges.
    static let sets: (glue: [ClosedRange<UInt32>], prepend: [ClosedRange<UInt32>]) = compute()

    /// The end of a match: the end of the string or a scalar that does not join it.
    static let notBeforeExtend: String = "(?:$|[^" + bracket(sets.glue) + "])"
    /// The start of a match: the start of the string or a scalar that does not join it.
    static let notAfterPrepend: String = sets.prepend.isEmpty ? "" : "(?:^|[^" + bracket(sets.prepend) + "])"

    /// One pass over a string of `\u{1} a s` for every non-ASCII scalar `s` (controls break on
    /// both sides, so each unit is broken alone): `s` joins the `a` before it when `a s` is one
    /// Character. And of `\u{1} s a`: `s` joins the `a` after it when `s a` is one. Unassigned
    /// code points are skipped unless `all` (Extend, SpacingMark, ZWJ and Prepend are
    /// properties of assigned characters; the tests check it on every code point).
    static func compute(all: Bool = false) -> (glue: [ClosedRange<UInt32>], prepend: [ClosedRange<UInt32>]) {
        var after = String.UnicodeScalarView(), before = String.UnicodeScalarView()
        for v in UInt32(0x80)...0x10FFFF {
            guard let s = Unicode.Scalar(v), all || s.properties.generalCategory != .unassigned else { continue }
            after.append("\u{1}"); after.append("a"); after.append(s)
            before.append("\u{1}"); before.append(s); before.append("a")
        }
        var glue: [UInt32] = [], prepend: [UInt32] = []
        for ch in String(after) {
            let scalars = Array(ch.unicodeScalars)
            if scalars.count == 2, scalars[0] == "a" { glue.append(scalars[1].value) }
        }
        for ch in String(before) {
            let scalars = Array(ch.unicodeScalars)
            if scalars.count == 2, scalars[1] == "a" { prepend.append(scalars[0].value) }
        }
        return (ranges(glue), ranges(prepend))
    }

    /// Sorted values as ranges.
    static func ranges(_ values: [UInt32]) -> [ClosedRange<UInt32>] {
        var result: [ClosedRange<UInt32>] = []
        for v in values.sorted() {
            if let last = result.last, last.upperBound + 1 == v {
                result[result.count - 1] = last.lowerBound...v
            } else if result.last?.contains(v) != true {
                result.append(v...v)
            }
        }
        return result
    }

    /// The ranges as the inside of a bracket expression (all non-ASCII, so none is special).
    static func bracket(_ ranges: [ClosedRange<UInt32>]) -> String {
        var out = String.UnicodeScalarView()
        for r in ranges {
            guard let lo = Unicode.Scalar(r.lowerBound), let hi = Unicode.Scalar(r.upperBound) else { continue }
            out.append(lo)
            if r.upperBound > r.lowerBound {
                out.append("-")
                out.append(hi)
            }
        }
        return String(out)
    }
}

// MARK: - JSON

/// Arrays and sets are stored as JSON arrays (jsonb).
protocol SQLJSONCollection {
    var sqlElements: [Any] { get }
    static var sqlIsSet: Bool { get }
    static var sqlCountKeyPath: AnyKeyPath { get }
    static var sqlIsEmptyKeyPath: AnyKeyPath { get }
}

extension Array: SQLJSONCollection {
    var sqlElements: [Any] { map { $0 as Any } }
    static var sqlIsSet: Bool { false }
    static var sqlCountKeyPath: AnyKeyPath { \Array<Element>.count }
    static var sqlIsEmptyKeyPath: AnyKeyPath { \Array<Element>.isEmpty }
}

extension Set: SQLJSONCollection {
    var sqlElements: [Any] { map { $0 as Any } }
    static var sqlIsSet: Bool { true }
    static var sqlCountKeyPath: AnyKeyPath { \Set<Element>.count }
    static var sqlIsEmptyKeyPath: AnyKeyPath { \Set<Element>.isEmpty }
}

/// Equality and containment of values stored as JSON (jsonb), where jsonb's equality is
/// Swift's: enums (raw values: one per case), and arrays and sets of simple values
/// (integers, Bool, finite floating point and dates, UUIDs, strings whose equality is byte
/// equality, such enums). jsonb compares numbers by value and strings by bytes; the store
/// writes values with `JSONEncoder` as this does, so equal values have equal JSON.
enum JSONSQL {
    /// `column == value` (or `!=`) for a column that is not NULL.
    static func equals(_ column: SQLText, _ value: Any, negated: Bool) -> SQLText? {
        if let collection = value as? any SQLJSONCollection {
            guard let json = arrayJSON(collection.sqlElements) else { return nil }
            if type(of: collection).sqlIsSet {
                // Sets: no order, no duplicates: each contains the other.
                let same: SQLText = "(\(column) @> \(bind: .jsonb(json)) AND \(column) <@ \(bind: .jsonb(json)))"
                return negated ? .not(same) : same
            }
            return "\(column) \(raw: negated ? "<>" : "=") \(bind: .jsonb(json))"
        }
        guard value is any RawRepresentable, let json = simpleJSON(value) else { return nil }
        return "\(column) \(raw: negated ? "<>" : "=") \(bind: .jsonb(json))"
    }

    /// The JSON array `column` contains `element`, for a column that is not NULL.
    static func contains(_ column: SQLText, _ element: Any) -> SQLText? {
        guard let json = arrayJSON([element]) else { return nil }
        return "\(column) @> \(bind: .jsonb(json))"
    }

    /// The JSON of a value that is not nil, for a COALESCE (compared later by `equals`).
    static func json(of value: Any) -> String? {
        if let collection = value as? any SQLJSONCollection { return arrayJSON(collection.sqlElements) }
        return simpleJSON(value)
    }

    private static func arrayJSON(_ elements: [Any]) -> String? {
        var parts: [String] = []
        for e in elements {
            guard let json = simpleJSON(e) else { return nil }
            parts.append(json)
        }
        return "[" + parts.joined(separator: ",") + "]"
    }

    /// The JSON of a simple value whose equality is jsonb's equality of that JSON.
    static func simpleJSON(_ value: Any) -> String? {
        if value is any SQLOptionalValue { return nil }
        if let s = value as? String { return TextSQL.bytesEqualIsSwiftEqual(s) ? encode(s) : nil }
        if value is Bool || value is any BinaryInteger || value is UUID { return encode(value) }
        if let d = value as? Double { return d.isFinite ? encode(d) : nil }
        if let f = value as? Float { return f.isFinite ? encode(f) : nil }
        if let d = value as? Date { return d.timeIntervalSinceReferenceDate.isFinite ? encode(d) : nil }
        if let d = value as? Decimal { return d.isNaN ? nil : encode(d) }
        if value is any RawRepresentable {
            // An enum: one raw value per case. Its JSON must be a number or a string.
            guard let json = encode(value), let first = json.first, first != "{", first != "[", first != "n",
                  !json.contains("\\u0000") else { return nil }
            return json
        }
        return nil
    }

    private static func encode(_ value: Any) -> String? {
        guard let encodable = value as? any Encodable else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(encodable) else { return nil }
        return String(data: data, encoding: .utf8)
    }
}
