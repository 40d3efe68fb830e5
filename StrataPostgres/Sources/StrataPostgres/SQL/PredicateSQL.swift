import Foundation
import Strata

// Foundation `Predicate` / `SortDescriptor` to PostgreSQL.
//
// The one rule: the SQL gives exactly the answer `Predicate.evaluate` gives on every row, or
// there is no SQL (nil: the store throws `DataStoreError.preferInMemoryFilter` and the context
// filters in memory). Three things make that hard, and each is handled where it arises:
//
// - NULL. SQL's logic has three values, Swift's two. Every Bool the translator produces is
//   never NULL (a nullable operand is tested with IS NULL / IS NOT NULL first), so NOT, AND and
//   OR of them are exactly Swift's `!`, `&&`, `||`.
// - NaN. PostgreSQL orders NaN above every number and says NaN = NaN. Swift: Double and Float
//   compare NaN false with everything; Date's `<=` and `>=` are Comparable's defaults
//   (`!(b < a)`, `!(a < b)`), true for NaN; Decimal orders NaN below every number. Each
//   comparison gets the guard (`<> 'NaN'`, `OR = 'NaN'`) that makes PostgreSQL's answer
//   Swift's, and a NaN constant folds to Swift's constant answer.
// - Strings. Swift compares `String`s by canonical equivalence ("é" == "e\u{301}") and searches
//   them by `Character` (grapheme cluster: "ab\u{301}".contains("ab") is false); PostgreSQL
//   compares bytes and code points. `PredicateSQL+Expressions.swift` (`TextSQL`) has the
//   argument for each string operation that is translated; the others return nil.
//
// The translator walks the expression tree by its types: each `PredicateExpressions` node that
// has SQL conforms to `SQLTranslatable` (PredicateSQL+Expressions.swift), and a node without a
// conformance makes the whole predicate untranslatable. Constants (captured values, literals)
// are bound as parameters, never written into the text.

/// A value bound to a SQL parameter ($1, $2, ...). The generated text casts the parameters whose
/// Swift form is not their SQL type (numeric, jsonb, arrays); every other case must be bound
/// with its natural type (what postgres-nio does for the Swift values named here).
enum SQLValue: Sendable, Hashable {
    case null
    /// `boolean`.
    case bool(Bool)
    /// `bigint` (int8).
    case int(Int64)
    /// `double precision` (float8); also a `Date` as its `timeIntervalSinceReferenceDate`.
    case double(Double)
    /// `text`.
    case text(String)
    /// `bytea`.
    case bytes([UInt8])
    /// `uuid`.
    case uuid(UUID)
    /// A `Decimal` (or an integer too large for bigint) as its description; written `$n::numeric`.
    case numeric(String)
    /// JSON text; written `$n::jsonb`.
    case jsonb(String)
    /// `text[]`, for `= ANY(...)` lists of strings; written `$n::text[]`. Also lists of UUIDs
    /// (`uuidString`) and of doubles and dates (the shortest text that reads back as the same
    /// double, `Infinity`, `-Infinity`), written `$n::text[]::uuid[]` and `$n::text[]::float8[]`.
    case textArray([String])
    /// `bigint[]`, for `= ANY(...)` lists of integers and primary keys; written `$n::int8[]`.
    case intArray([Int64])

    /// The cast written after the parameter (`$n::numeric`), if any.
    var parameterCast: String {
        switch self {
        case .numeric: "::numeric"
        case .jsonb: "::jsonb"
        case .textArray: "::text[]"
        case .intArray: "::int8[]"
        case .null, .bool, .int, .double, .text, .bytes, .uuid: ""
        }
    }
}

/// How a column stores its values (what the translator needs to compare and bind).
enum ColumnKind: Sendable, Hashable {
    case text, bigint, double, boolean, uuid, bytea, numeric
    /// A `Date`: stored exactly as `double precision` seconds since 2001-01-01
    /// (`timeIntervalSinceReferenceDate`); compared and sorted on this column.
    case date
    /// Arrays, sets, dictionaries, Codable structs and enums: JSON text (`JSONEncoder`,
    /// `.sortedKeys`, default strategies). A nil optional is SQL NULL, not JSON `null`.
    case jsonb
    /// A `URL` as text (its `absoluteString`).
    case url
}

/// One attribute's column.
struct ColumnInfo: Sendable, Hashable {
    /// A SQL expression naming the column, already quoted and qualified, e.g. `t0."name"`.
    var sql: String
    var kind: ColumnKind
    /// The attribute is optional: nil is SQL NULL. A column of a non-optional attribute is
    /// assumed NOT NULL.
    var isOptional: Bool
}

/// What the translator can ask about a model's tables. `alias` is the table alias the
/// generated SQL uses for that model's table (the root model is "t0").
protocol SQLModelResolver {
    /// The column of an attribute the key path reads on `modelType` (nil: not an attribute).
    func column(for keyPath: AnyKeyPath, of modelType: Any.Type, alias: String) -> ColumnInfo?
    /// A to-one relationship the key path reads: the foreign-key column (in `alias`'s table),
    /// the related model's type and its table name (quoted), e.g. ("t0.\"trip_id\"", Trip.self, "\"trips\".\"Trip\"").
    func toOne(for keyPath: AnyKeyPath, of modelType: Any.Type, alias: String) -> (foreignKey: String, target: any PersistentModel.Type, table: String)?
    /// The key path is the model's `persistentModelID`: the primary-key column expression (bigint).
    func identifierColumn(for keyPath: AnyKeyPath, of modelType: Any.Type, alias: String) -> String?
    /// The bigint primary key of a PersistentIdentifier of this store, if it names one (nil: not ours).
    func primaryKey(of id: PersistentIdentifier) -> Int64?
}

struct SQLFragment: Sendable, Hashable {
    var text: String
    var binds: [SQLValue]
}

enum PredicateSQL {
    /// The WHERE condition for `predicate` on the root model's table aliased "t0", with
    /// parameters numbered from `firstParameter` ($n); nil when some part does not translate
    /// (the caller then throws DataStoreError.preferInMemoryFilter and the context filters in memory).
    ///
    /// The condition is never NULL, so it may be negated or combined by the caller. It assumes
    /// a UTF-8 database, deterministic collations on text columns, referential integrity of
    /// foreign keys, and PostgreSQL 13 or later when it compares a column with a non-ASCII
    /// string (`normalize`).
    static func condition<T: PersistentModel>(_ predicate: Predicate<T>, resolver: some SQLModelResolver, firstParameter: Int = 1) -> SQLFragment? {
        let translator = SQLTranslator(resolver: resolver)
        translator.bind(predicate.variable.key, to: .model(SQLModelScope(type: T.self, alias: "t0")))
        guard let node = translator.translate(predicate.expression), let condition = translator.condition(node) else { return nil }
        return condition.rendered(firstParameter: firstParameter)
    }

    /// A condition that holds on every row the predicate accepts (and maybe on others): the
    /// predicate's top-level `&&` terms that translate, ANDed. `isExact` when every term
    /// translates (the fragment is then `condition`'s); nil when none does.
    ///
    /// For a store that, when `condition` is nil, still wants to send fewer rows: the context
    /// checks the predicate on every object a store answers with, so a fetch may answer with
    /// the rows of an inexact prefilter. With `isExact` false the store must not apply the
    /// fetch's limit or offset in SQL (the rows the predicate rejects would take places), nor
    /// answer `fetchCount` with it.
    static func prefilter<T: PersistentModel>(_ predicate: Predicate<T>, resolver: some SQLModelResolver,
                                              firstParameter: Int = 1) -> (fragment: SQLFragment, isExact: Bool)? {
        let translator = SQLTranslator(resolver: resolver)
        translator.bind(predicate.variable.key, to: .model(SQLModelScope(type: T.self, alias: "t0")))
        var result: SQLText? = nil
        var isExact = true
        for term in SQLTranslator.conjuncts(of: predicate.expression) {
            guard let node = translator.translate(term), let condition = translator.condition(node) else {
                isExact = false
                continue
            }
            result = result.map { .and($0, condition) } ?? condition
        }
        return result.map { ($0.rendered(firstParameter: firstParameter), isExact) }
    }
}

// MARK: - SQL text with binds

/// SQL text whose constants are kept as values until it is rendered, so that parameters are
/// numbered once, in the order they appear, and a part that is built and then dropped binds
/// nothing.
struct SQLText: Sendable, Hashable, ExpressibleByStringInterpolation {
    enum Part: Sendable, Hashable {
        case text(String)
        case bind(SQLValue)
    }

    private(set) var parts: [Part] = []

    init(_ raw: String) { if !raw.isEmpty { parts = [.text(raw)] } }

    init(stringLiteral value: String) { self.init(value) }

    init(stringInterpolation: Interpolation) { parts = stringInterpolation.parts }

    static func bind(_ value: SQLValue) -> SQLText {
        var t = SQLText("")
        t.parts = [.bind(value)]
        return t
    }

    static let `true` = SQLText("TRUE")
    static let `false` = SQLText("FALSE")

    var isTrue: Bool { self == .true }
    var isFalse: Bool { self == .false }

    struct Interpolation: StringInterpolationProtocol {
        var parts: [Part] = []
        init(literalCapacity: Int, interpolationCount: Int) {}
        mutating func appendLiteral(_ literal: String) { append(.text(literal)) }
        mutating func appendInterpolation(_ text: SQLText) { for p in text.parts { append(p) } }
        mutating func appendInterpolation(raw: String) { append(.text(raw)) }
        mutating func appendInterpolation(bind value: SQLValue) { parts.append(.bind(value)) }
        private mutating func append(_ part: Part) {
            if case .text(let s) = part, case .text(let last)? = parts.last {
                parts[parts.count - 1] = .text(last + s)
            } else if case .text(let s) = part, s.isEmpty {
                return
            } else {
                parts.append(part)
            }
        }
    }

    /// The text with `$n` for each bind, numbered from `firstParameter`, and the binds in order.
    func rendered(firstParameter: Int) -> SQLFragment {
        var text = ""
        var binds: [SQLValue] = []
        for part in parts {
            switch part {
            case .text(let s): text += s
            case .bind(let v):
                text += "$\(firstParameter + binds.count)\(v.parameterCast)"
                binds.append(v)
            }
        }
        return SQLFragment(text: text, binds: binds)
    }

    // Never-NULL conditions, with the constants folded.

    static func and(_ a: SQLText, _ b: SQLText) -> SQLText {
        if a.isFalse || b.isFalse { return .false }
        if a.isTrue { return b }
        if b.isTrue { return a }
        return "(\(a) AND \(b))"
    }

    static func or(_ a: SQLText, _ b: SQLText) -> SQLText {
        if a.isTrue || b.isTrue { return .true }
        if a.isFalse { return b }
        if b.isFalse { return a }
        return "(\(a) OR \(b))"
    }

    static func not(_ a: SQLText) -> SQLText {
        if a.isTrue { return .false }
        if a.isFalse { return .true }
        return "NOT \(a.parenthesized)"
    }

    /// Wrapped in parentheses unless it already is one term.
    var parenthesized: SQLText {
        if case .text(let s)? = parts.first, s.hasPrefix("("), balancedOuterParentheses(dropping: 0) { return self }
        if case .text(let s)? = parts.first, s.hasPrefix("EXISTS ("), balancedOuterParentheses(dropping: 7) { return self }
        if parts.count == 1, case .text(let s) = parts[0], !s.contains(" ") { return self }
        return "(\(self))"
    }

    /// True when the text, without its first `dropping` characters, is one parenthesized
    /// group: "(a) AND (b)" is not.
    private func balancedOuterParentheses(dropping: Int) -> Bool {
        var depth = 0
        var quote: Character? = nil   // inside a '...' literal or a "..." identifier
        let all = String(parts.map { if case .text(let s) = $0 { s } else { "$" } }.joined().dropFirst(dropping))
        for (i, ch) in all.enumerated() {
            if let q = quote {
                if ch == q { quote = nil }
                continue
            }
            if ch == "'" || ch == "\"" { quote = ch; continue }
            if ch == "(" { depth += 1 }
            if ch == ")" {
                depth -= 1
                if depth == 0 && i != all.count - 1 { return false }
            }
        }
        return depth == 0
    }
}

// MARK: - The translator

/// A model's row in the query: the root model ("t0") or a related one in a subquery ("t1"...).
struct SQLModelScope {
    var type: any PersistentModel.Type
    var alias: String
}

/// A value a SQL expression computes; NULL is Swift's nil.
struct SQLScalar {
    var sql: SQLText
    var kind: ColumnKind
    /// May be NULL (an optional attribute, a COALESCE of one, a value through a to-one).
    var nullable: Bool
    /// The Swift type of the value (unwrapped from Optional): how constants compared with it
    /// are bound.
    var valueType: Any.Type
    /// The value is a `persistentModelID` of this entity, stored as the bigint primary key.
    var identifierOf: String? = nil
    /// The value is `base ?? fallback` with a constant fallback (the SQL is a COALESCE):
    /// compared with a constant, Swift's answer for the fallback is known here, so the
    /// comparison is done on `base` alone (which an index can answer).
    var coalesced: SQLCoalesced? = nil
}

/// `base ?? fallback`, for `SQLScalar.coalesced`.
final class SQLCoalesced {
    let base: SQLScalar
    let fallback: Any
    /// `base` is the value of `related.inner` on the related row (a scalar subquery): a
    /// comparison goes into an EXISTS instead.
    let related: SQLRelated?
    init(base: SQLScalar, fallback: Any, related: SQLRelated? = nil) {
        self.base = base
        self.fallback = fallback
        self.related = related
    }
}

/// Swift's answer for two constants, through `Any` (nil if they are not of one Equatable or
/// Comparable type).
enum SQLSwiftComparison {
    static func evaluate(_ a: Any, _ op: SQLComparison, _ b: Any) -> Bool? {
        if op == .equal || op == .notEqual {
            guard let x = a as? any Equatable, let same = equal(x, b) else { return nil }
            return op == .equal ? same : !same
        }
        guard let x = a as? any Comparable else { return nil }
        return ordered(x, op, b)
    }

    private static func equal<T: Equatable>(_ x: T, _ b: Any) -> Bool? {
        guard let y = b as? T else { return nil }
        return x == y
    }

    private static func ordered<T: Comparable>(_ x: T, _ op: SQLComparison, _ b: Any) -> Bool? {
        guard let y = b as? T else { return nil }
        switch op {
        case .less: return x < y
        case .lessOrEqual: return x <= y
        case .greater: return x > y
        case .greaterOrEqual: return x >= y
        case .equal: return x == y
        case .notEqual: return x != y
        }
    }
}

/// A to-one relationship of a row (`$0.trip`): nil when the foreign key is NULL.
struct SQLToOne {
    var foreignKey: String
    var target: any PersistentModel.Type
    var table: String
}

/// An expression evaluated on the related row of a to-one relationship (`$0.trip?.name`,
/// `$0.trip.flatMap { ... }`): nil when the relationship is nil, else `inner`, which is written
/// in the related row's alias.
struct SQLRelated {
    var toOne: SQLToOne
    var alias: String
    /// The related table's primary-key column, in `alias`.
    var primaryKey: String
    var inner: SQLNode

    /// EXISTS of the related row on which `condition` holds (false when the key is NULL).
    func exists(_ condition: SQLText) -> SQLText {
        if condition.isFalse { return .false }
        let filter: SQLText = condition.isTrue ? "\(raw: primaryKey) = \(raw: toOne.foreignKey)"
            : "\(raw: primaryKey) = \(raw: toOne.foreignKey) AND \(condition)"
        return "EXISTS (SELECT 1 FROM \(raw: toOne.table) \(raw: alias) WHERE \(filter))"
    }

    /// The relationship is nil.
    var isNil: SQLText { "\(raw: toOne.foreignKey) IS NULL" }
}

/// An `Optional<Bool>` as three conditions, exactly one of which holds on every row.
struct SQLOptionalBool {
    var isNil: SQLText
    var isTrue: SQLText
    var isFalse: SQLText
}

/// A constant: a captured value or a literal, with its static type (`Optional<X>` for an
/// optional, whose value may be nil).
struct SQLConstant {
    var value: Any
    var type: Any.Type

    /// The value is `Optional.none`.
    var isNil: Bool { (value as? any SQLOptionalValue)?.sqlIsNone ?? false }
    /// The value without one level of Optional (nil for `Optional.none`).
    var unwrapped: Any? {
        if let optional = value as? any SQLOptionalValue { return optional.sqlWrappedValue }
        return value
    }
}

/// What a predicate expression is in SQL.
indirect enum SQLNode {
    case constant(SQLConstant)
    case scalar(SQLScalar)
    /// A Bool that is never NULL.
    case condition(SQLText)
    case optionalBool(SQLOptionalBool)
    /// A model's row (the input, or a flatMap's variable over a to-one).
    case model(SQLModelScope)
    case toOne(SQLToOne)
    case related(SQLRelated)
    /// A range literal `lower...upper` or `lower..<upper` of constants.
    case range(lower: SQLConstant, upper: SQLConstant, closed: Bool)

    var constant: SQLConstant? { if case .constant(let c) = self { c } else { nil } }
}

/// `Optional`, seen through `Any`.
protocol SQLOptionalValue {
    var sqlIsNone: Bool { get }
    var sqlWrappedValue: Any? { get }
    static var sqlWrappedType: Any.Type { get }
}

extension Optional: SQLOptionalValue {
    var sqlIsNone: Bool { self == nil }
    var sqlWrappedValue: Any? { self.map { $0 as Any } }
    static var sqlWrappedType: Any.Type { Wrapped.self }
}


/// Comparison operators, as Swift's and SQL's.
enum SQLComparison {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual

    var sql: String {
        switch self {
        case .equal: "="
        case .notEqual: "<>"
        case .less: "<"
        case .lessOrEqual: "<="
        case .greater: ">"
        case .greaterOrEqual: ">="
        }
    }

    /// The operator with its operands swapped (`c < x` is `x > c`).
    var swapped: SQLComparison {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        }
    }

    var isOrdering: Bool { self != .equal && self != .notEqual }

    init(_ op: PredicateExpressions.ComparisonOperator) {
        switch op {
        case .lessThan: self = .less
        case .lessThanOrEqual: self = .lessOrEqual
        case .greaterThan: self = .greater
        case .greaterThanOrEqual: self = .greaterOrEqual
        }
    }
}

/// Turns one predicate's expression tree into SQL. A class: the nodes' conformances pass it
/// down the tree and it keeps the variables in scope and the aliases used.
final class SQLTranslator {
    let resolver: any SQLModelResolver
    private var variables: [PredicateExpressions.VariableID: SQLNode] = [:]
    private var aliases = 0

    init(resolver: any SQLModelResolver) {
        self.resolver = resolver
    }

    /// `type` without one level of Optional.
    static func unwrappedType(_ type: Any.Type) -> Any.Type {
        (type as? any SQLOptionalValue.Type)?.sqlWrappedType ?? type
    }

    /// The entity name Strata gives a model type (its class name).
    static func entityName(of type: Any.Type) -> String { String(describing: type) }

    /// `\M.persistentModelID`.
    static func identifierKeyPath<M: PersistentModel>(_: M.Type) -> AnyKeyPath { \M.persistentModelID }

    func bind(_ variable: PredicateExpressions.VariableID, to node: SQLNode) { variables[variable] = node }
    func unbind(_ variable: PredicateExpressions.VariableID) { variables[variable] = nil }
    func lookup(_ variable: PredicateExpressions.VariableID) -> SQLNode? { variables[variable] }

    /// A new table alias for a subquery.
    func newAlias() -> String {
        aliases += 1
        return "t\(aliases)"
    }

    /// The node of an expression; nil if it (or a part of it) has no SQL.
    func translate<E: PredicateExpression>(_ expression: E) -> SQLNode? {
        guard let translatable = expression as? any SQLTranslatable else { return nil }
        return translatable.sqlNode(self)
    }

    /// The never-NULL condition of a Bool node.
    func condition(_ node: SQLNode) -> SQLText? {
        switch node {
        case .condition(let c): return c
        case .constant(let c):
            guard let b = c.value as? Bool else { return nil }
            return b ? .true : .false
        case .scalar(let s):
            guard s.kind == .boolean, !s.nullable, s.valueType == Bool.self else { return nil }
            return s.sql
        default: return nil
        }
    }

    // MARK: Equality and comparison

    /// Swift's `a == b` (`op` .equal) or `a != b` (.notEqual) as a never-NULL condition.
    /// (Two constants are folded by the caller, which knows their type.)
    func equality(_ a: SQLNode, _ b: SQLNode, _ op: SQLComparison) -> SQLText? {
        precondition(op == .equal || op == .notEqual)
        if case .constant = a, b.constant == nil { return equality(b, a, op) }
        let eq = op == .equal
        switch (a, b) {
        case (.scalar(let s), .constant(let c)):
            guard let value = c.unwrapped else { return s.nullable ? "\(s.sql) IS \(raw: eq ? "" : "NOT ")NULL" : (eq ? .false : .true) }
            return compare(s, op, value)
        case (.scalar(let x), .scalar(let y)):
            return compareColumns(x, op, y)
        case (.scalar(let x), .related(let r)), (.related(let r), .scalar(let x)):
            guard let y = relatedValue(r) else { return nil }
            return compareColumns(x, op, y)
        case (.condition(let cond), .constant(let c)):
            guard let v = c.value as? Bool else { return nil }
            return v == eq ? cond : SQLText.not(cond)
        case (.condition, .condition), (.condition, .scalar), (.scalar, .condition):
            guard let x = condition(a), let y = condition(b) else { return nil }
            return "(\(x.parenthesized) \(raw: eq ? "=" : "<>") \(y.parenthesized))"
        case (.optionalBool(let o), .constant(let c)):
            let cond: SQLText
            if c.isNil { cond = o.isNil } else if let v = c.unwrapped as? Bool { cond = v ? o.isTrue : o.isFalse } else { return nil }
            return eq ? cond : SQLText.not(cond)
        case (.toOne(let t), .constant(let c)):
            guard c.isNil else { return nil }   // a model object as a constant: identity, not a key
            return "\(raw: t.foreignKey) IS \(raw: eq ? "" : "NOT ")NULL"
        case (.related(let r), .constant(let c)):
            guard let cond = relatedEquals(r, c) else { return nil }
            return eq ? cond : SQLText.not(cond)
        case (.related, _), (.optionalBool, _):
            // Compare as Optional<Bool> when both are Bool-like.
            guard let x = optionalBool(a), let y = optionalBool(b) else { return nil }
            let same = SQLText.or(.or(.and(x.isNil, y.isNil), .and(x.isTrue, y.isTrue)), .and(x.isFalse, y.isFalse))
            return eq ? same : SQLText.not(same)
        default:
            return nil
        }
    }

    /// The value of a to-one's related row as a scalar subquery (NULL when the relationship is
    /// nil), when the value on the row is a scalar.
    func relatedValue(_ r: SQLRelated) -> SQLScalar? {
        guard case .scalar(var value) = r.inner, value.identifierOf == nil else { return nil }
        value.sql = "(SELECT \(value.sql) FROM \(raw: r.toOne.table) \(raw: r.alias) WHERE \(raw: r.primaryKey) = \(raw: r.toOne.foreignKey))"
        value.nullable = true
        value.coalesced = nil
        return value
    }

    /// `r == c` where `r` is nil when the relationship is nil: the comparison goes into the
    /// related row's subquery.
    private func relatedEquals(_ r: SQLRelated, _ c: SQLConstant) -> SQLText? {
        guard let inner = equality(r.inner, .constant(c), .equal) else { return nil }
        if c.isNil {
            // nil when the relationship is nil, or when the value on the related row is nil.
            return .or(r.isNil, r.exists(inner))
        }
        return r.exists(inner)
    }

    /// Swift's `a op b` for two Comparable operands (neither is Optional).
    func comparison(_ a: SQLNode, _ b: SQLNode, _ op: SQLComparison) -> SQLText? {
        switch (a, b) {
        case (.scalar(let s), .constant(let c)):
            guard let v = c.unwrapped else { return nil }
            return compare(s, op, v)
        case (.constant(let c), .scalar(let s)):
            guard let v = c.unwrapped else { return nil }
            return compare(s, op.swapped, v)
        case (.scalar(let x), .scalar(let y)):
            return compareColumns(x, op, y)
        case (.related(let r), .constant(let c)):
            // Not produced by `#Predicate` (an Optional is not Comparable), but exact: the
            // comparison of a value that exists.
            guard let inner = comparison(r.inner, .constant(c), op) else { return nil }
            return r.exists(inner)
        default:
            return nil
        }
    }

    /// `s op value`, for a constant that is not nil.
    func compare(_ s: SQLScalar, _ op: SQLComparison, _ value: Any) -> SQLText? {
        if let c = s.coalesced, let fallbackAnswer = SQLSwiftComparison.evaluate(c.fallback, op, value) {
            // `(base ?? fallback) op value`: Swift's answer for the fallback where base is nil.
            if let r = c.related, case .scalar(let inner) = r.inner {
                var value1 = inner
                value1.nullable = false
                guard let test = compare(value1, op, value) else { return nil }
                let onRow: SQLText = !inner.nullable ? test
                    : fallbackAnswer ? .or("\(inner.sql) IS NULL", test) : .and("\(inner.sql) IS NOT NULL", test)
                return fallbackAnswer ? .or(r.isNil, r.exists(onRow)) : r.exists(onRow)
            }
            var base = c.base
            base.nullable = false
            guard let test = compare(base, op, value) else { return nil }
            return fallbackAnswer ? .or("\(base.sql) IS NULL", test) : .and("\(base.sql) IS NOT NULL", test)
        }
        let test: SQLText
        if let entity = s.identifierOf {
            guard !op.isOrdering, let id = value as? PersistentIdentifier, id.entityName == entity else { return nil }
            guard let key = resolver.primaryKey(of: id) else {
                // Not an object of this store: equal to no row (and a nil relationship is
                // different from it too).
                return op == .equal ? .false : .true
            }
            test = "\(s.sql) \(raw: op.sql) \(bind: .int(key))"
            return nullSafe(s, op, test)
        }
        switch s.kind {
        case .text:
            guard !op.isOrdering, let string = value as? String, s.valueType == String.self,
                  let t = TextSQL.equals(s.sql, string, negated: op == .notEqual) else { return nil }
            test = t
        case .jsonb:
            guard !op.isOrdering, let t = JSONSQL.equals(s.sql, value, negated: op == .notEqual) else { return nil }
            test = t
        case .double, .date:
            // PostgreSQL orders NaN above every number and says NaN = NaN. Swift: Double and
            // Float compare NaN false with `<`, `<=`, `>`, `>=` and `==`; Date has its own `<`
            // and `==` (false for NaN) but Comparable's `<=` and `>=` (`!(b < a)`,
            // `!(a < b)`): true for NaN.
            guard let d = doubleValue(value, s) else { return nil }
            let isDate = s.valueType == Date.self
            if d.isNaN {
                switch op {
                case .equal, .less, .greater: return .false
                case .notEqual: return .true
                case .lessOrEqual, .greaterOrEqual: return isDate ? .true : .false
                }
            }
            test = "\(s.sql) \(raw: op.sql) \(bind: .double(d))"
            switch op {
            case .greater:
                return nullSafe(s, op, "(\(test) AND \(s.sql) <> 'NaN'::float8)")
            case .greaterOrEqual where !isDate:
                return nullSafe(s, op, "(\(test) AND \(s.sql) <> 'NaN'::float8)")
            case .lessOrEqual where isDate:
                return nullSafe(s, op, "(\(test) OR \(s.sql) = 'NaN'::float8)")
            default:
                break
            }
        case .numeric where s.valueType == Decimal.self:
            // Decimal orders NaN below every number (NaN == NaN); PostgreSQL above.
            guard let bound = SQLTranslator.sqlValue(value, kind: s.kind, valueType: s.valueType) else { return nil }
            test = "\(s.sql) \(raw: op.sql) \(bind: bound)"
            switch op {
            case .less, .lessOrEqual: return nullSafe(s, op, "(\(test) OR \(s.sql) = 'NaN'::numeric)")
            case .greater, .greaterOrEqual: return nullSafe(s, op, "(\(test) AND \(s.sql) <> 'NaN'::numeric)")
            case .equal, .notEqual: break
            }
        default:
            guard let bound = SQLTranslator.sqlValue(value, kind: s.kind, valueType: s.valueType) else { return nil }
            if op.isOrdering && !SQLTranslator.isOrdered(s.kind, s.valueType) { return nil }
            test = "\(s.sql) \(raw: op.sql) \(bind: bound)"
        }
        return nullSafe(s, op, test)
    }

    /// `test` (which holds for a non-NULL `s`) made never NULL: a nil value is equal to no
    /// constant, different from every one, and ordered with none.
    func nullSafe(_ s: SQLScalar, _ op: SQLComparison, _ test: SQLText) -> SQLText {
        guard s.nullable else { return test }
        return op == .notEqual ? "(\(s.sql) IS NULL OR \(test))" : "(\(s.sql) IS NOT NULL AND \(test))"
    }

    /// Two columns (or column expressions) of one kind.
    func compareColumns(_ x: SQLScalar, _ op: SQLComparison, _ y: SQLScalar) -> SQLText? {
        guard x.kind == y.kind, x.valueType == y.valueType, x.identifierOf == nil, y.identifierOf == nil else { return nil }
        switch x.kind {
        case .text, .url, .jsonb:
            return nil   // canonical equivalence (text), Equatable of Codable values (jsonb)
        case .bytea, .boolean:
            if op.isOrdering { return nil }
        case .bigint, .numeric, .uuid, .double, .date:
            if op.isOrdering && !SQLTranslator.isOrdered(x.kind, x.valueType) { return nil }
        }
        let isDouble = x.kind == .double || x.kind == .date
        if op.isOrdering {
            guard !x.nullable, !y.nullable else { return nil }
            if x.valueType == Decimal.self { return nil }   // NaN: below every number in Swift, above in PostgreSQL
            guard isDouble else { return "\(x.sql) \(raw: op.sql) \(y.sql)" }
            // Swift's `<` on two doubles (false with NaN on either side).
            func less(_ a: SQLText, _ b: SQLText) -> SQLText { "(\(a) < \(b) AND \(a) <> 'NaN'::float8 AND \(b) <> 'NaN'::float8)" }
            if x.valueType == Date.self {
                // Date: `>` is `b < a`, `<=` is `!(b < a)`, `>=` is `!(a < b)`.
                switch op {
                case .less: return less(x.sql, y.sql)
                case .greater: return less(y.sql, x.sql)
                case .lessOrEqual: return .not(less(y.sql, x.sql))
                case .greaterOrEqual: return .not(less(x.sql, y.sql))
                case .equal, .notEqual: break
                }
            }
            return "(\(x.sql) \(raw: op.sql) \(y.sql) AND \(x.sql) <> 'NaN'::float8 AND \(y.sql) <> 'NaN'::float8)"
        }
        var same: SQLText
        if x.nullable || y.nullable {
            same = "\(x.sql) IS NOT DISTINCT FROM \(y.sql)"
            if isDouble { same = "(\(same) AND (\(x.sql) IS NULL OR \(x.sql) <> 'NaN'::float8))" }
        } else {
            same = "\(x.sql) = \(y.sql)"
            if isDouble { same = "(\(same) AND \(x.sql) <> 'NaN'::float8)" }
        }
        return op == .equal ? same : SQLText.not(same)
    }

    /// A Double value of a double or date column's Swift type.
    private func doubleValue(_ value: Any, _ s: SQLScalar) -> Double? {
        if s.kind == .date {
            guard let date = value as? Date else { return nil }
            return date.timeIntervalSinceReferenceDate
        }
        if let d = value as? Double { return d }
        if let f = value as? Float { return Double(f) }
        return nil
    }

    // MARK: Optional Bool

    /// A Bool-valued node as an `Optional<Bool>` (three conditions).
    func optionalBool(_ node: SQLNode) -> SQLOptionalBool? {
        switch node {
        case .optionalBool(let o): return o
        case .constant(let c):
            if c.isNil { return SQLOptionalBool(isNil: .true, isTrue: .false, isFalse: .false) }
            guard let b = c.unwrapped as? Bool else { return nil }
            return SQLOptionalBool(isNil: .false, isTrue: b ? .true : .false, isFalse: b ? .false : .true)
        case .scalar(let s) where s.kind == .boolean && s.valueType == Bool.self:
            if !s.nullable { return SQLOptionalBool(isNil: .false, isTrue: s.sql, isFalse: .not(s.sql)) }
            return SQLOptionalBool(isNil: "\(s.sql) IS NULL", isTrue: "(\(s.sql) IS NOT NULL AND \(s.sql))",
                                isFalse: "(\(s.sql) IS NOT NULL AND NOT \(s.sql))")
        case .condition(let c):
            return SQLOptionalBool(isNil: .false, isTrue: c, isFalse: .not(c))
        case .related(let r):
            guard let inner = optionalBool(r.inner) else { return nil }
            return SQLOptionalBool(isNil: .or(r.isNil, r.exists(inner.isNil)), isTrue: r.exists(inner.isTrue), isFalse: r.exists(inner.isFalse))
        default:
            return nil
        }
    }

    // MARK: Membership

    /// `values.contains(node)` for constant values (each possibly nil).
    func membership(_ node: SQLNode, _ values: [Any], elementType: Any.Type) -> SQLText? {
        let hasNil = values.contains { ($0 as? any SQLOptionalValue)?.sqlIsNone ?? false }
        let present: [Any] = values.compactMap { v in
            if let o = v as? any SQLOptionalValue { return o.sqlWrappedValue }
            return v
        }
        switch node {
        case .scalar(let s):
            guard let inList = scalarMembership(s, present) else { return nil }
            if !s.nullable { return inList }
            let nonNil = inList.isFalse ? SQLText.false : "(\(s.sql) IS NOT NULL AND \(inList))"
            return hasNil ? .or("\(s.sql) IS NULL", nonNil) : nonNil
        case .condition, .optionalBool:
            guard let o = optionalBool(node) else { return nil }
            let bools = present.compactMap { $0 as? Bool }
            guard bools.count == present.count else { return nil }
            var result = SQLText.false
            if bools.contains(true) { result = .or(result, o.isTrue) }
            if bools.contains(false) { result = .or(result, o.isFalse) }
            if hasNil { result = .or(result, o.isNil) }
            return result
        case .related(let r):
            var result = SQLText.false
            if !present.isEmpty {
                guard let inner = membership(r.inner, present, elementType: elementType) else { return nil }
                result = r.exists(inner)
            }
            if hasNil {
                guard let innerNil = equality(r.inner, .constant(SQLConstant(value: Optional<Int>.none as Any, type: Optional<Int>.self)), .equal) else { return nil }
                result = .or(result, .or(r.isNil, r.exists(innerNil)))
            }
            return result
        case .toOne(let t):
            // Only nil can be in a list of model objects that are constants.
            guard present.isEmpty else { return nil }
            return hasNil ? "\(raw: t.foreignKey) IS NULL" : .false
        default:
            return nil
        }
    }

    /// `values.contains(s)` for a non-NULL `s` and values that are not nil.
    private func scalarMembership(_ s: SQLScalar, _ values: [Any]) -> SQLText? {
        if values.isEmpty { return .false }
        if let entity = s.identifierOf {
            var keys: [Int64] = []
            for v in values {
                guard let id = v as? PersistentIdentifier, id.entityName == entity else { return nil }
                if let key = resolver.primaryKey(of: id), !keys.contains(key) { keys.append(key) }
            }
            if keys.isEmpty { return .false }
            if keys.count == 1 { return "\(s.sql) = \(bind: .int(keys[0]))" }
            return "\(s.sql) = ANY(\(bind: .intArray(keys)))"
        }
        switch s.kind {
        case .text:
            guard s.valueType == String.self else { return nil }
            let strings = values.compactMap { $0 as? String }
            guard strings.count == values.count else { return nil }
            var unique: [String] = []
            for v in strings where !unique.contains(v) { unique.append(v) }
            if unique.count == 1 { return TextSQL.equals(s.sql, unique[0], negated: false) }
            if unique.allSatisfy(TextSQL.bytesEqualIsSwiftEqual) {
                return "\(s.sql) = ANY(\(bind: .textArray(unique)))"
            }
            guard unique.count <= 64 else { return nil }
            var result = SQLText.false
            for v in unique {
                guard let eq = TextSQL.equals(s.sql, v, negated: false) else { return nil }
                result = .or(result, eq)
            }
            return result
        case .double, .date:
            var doubles: [Double] = []
            for v in values {
                guard let d = doubleValue(v, s) else { return nil }
                // NaN equals nothing in Swift (PostgreSQL: NaN = NaN).
                if !d.isNaN, !doubles.contains(d) { doubles.append(d) }
            }
            if doubles.isEmpty { return .false }
            if doubles.count == 1 { return "\(s.sql) = \(bind: .double(doubles[0]))" }
            let texts = doubles.map { $0.isInfinite ? ($0 < 0 ? "-Infinity" : "Infinity") : "\($0)" }
            return "\(s.sql) = ANY(\(bind: .textArray(texts))::float8[])"
        case .jsonb:
            guard values.count <= 256 else { return nil }
            var result = SQLText.false
            for v in values {
                guard let eq = JSONSQL.equals(s.sql, v, negated: false) else { return nil }
                result = .or(result, eq)
            }
            return result
        default:
            var bound: [SQLValue] = []
            for v in values {
                guard let b = SQLTranslator.sqlValue(v, kind: s.kind, valueType: s.valueType) else { return nil }
                if !bound.contains(b) { bound.append(b) }
            }
            if bound.count == 1 { return "\(s.sql) = \(bind: bound[0])" }
            if case .int = bound[0] {
                return "\(s.sql) = ANY(\(bind: .intArray(bound.compactMap { if case .int(let i) = $0 { i } else { nil } })))"
            }
            if case .uuid = bound[0] {
                let texts = bound.compactMap { if case .uuid(let u) = $0 { u.uuidString } else { nil } }
                return "\(s.sql) = ANY(\(bind: .textArray(texts))::uuid[])"
            }
            if case .text = bound[0] {   // URLs: ASCII
                return "\(s.sql) = ANY(\(bind: .textArray(bound.compactMap { if case .text(let t) = $0 { t } else { nil } })))"
            }
            guard bound.count <= 256 else { return nil }
            var list = SQLText("")
            for (i, b) in bound.enumerated() { list = i == 0 ? "\(bind: b)" : "\(list), \(bind: b)" }
            return "\(s.sql) IN (\(list))"
        }
    }

    // MARK: Values

    /// The parameter value of a Swift constant for a column of `kind` whose Swift type is
    /// `valueType` (text and jsonb are compared by `TextSQL` and `JSONSQL`, not bound here).
    static func sqlValue(_ value: Any, kind: ColumnKind, valueType: Any.Type) -> SQLValue? {
        switch kind {
        case .bigint:
            guard let i = value as? any BinaryInteger, let v = Int64(exactly: i) else { return nil }
            return .int(v)
        case .boolean:
            return (value as? Bool).map { .bool($0) }
        case .uuid:
            return (value as? UUID).map { .uuid($0) }
        case .bytea:
            if let d = value as? Data { return .bytes([UInt8](d)) }
            return (value as? [UInt8]).map { .bytes($0) }
        case .numeric:
            if let d = value as? Decimal { return d.isNaN ? nil : .numeric(d.description) }
            if let i = value as? any BinaryInteger { return .numeric(String(describing: i)) }
            return nil
        case .url:
            // Swift compares URLs by their string and base; stored URLs have no base.
            guard let url = value as? URL, url.baseURL == nil else { return nil }
            let string = url.absoluteString
            guard string.unicodeScalars.allSatisfy({ $0.isASCII && $0 != "\0" }) else { return nil }
            return .text(string)
        case .double:
            if let d = value as? Double { return .double(d) }
            return (value as? Float).map { .double(Double($0)) }
        case .date:
            return (value as? Date).map { .double($0.timeIntervalSinceReferenceDate) }
        case .text, .jsonb:
            return nil
        }
    }

    /// PostgreSQL's order of the column is Swift's `<` on the values. (Not for UInt and UInt64
    /// in a bigint column, whose large values do not fit; text, URL, data and JSON are not
    /// ordered alike.)
    static func isOrdered(_ kind: ColumnKind, _ valueType: Any.Type) -> Bool {
        switch kind {
        case .bigint: valueType != UInt.self && valueType != UInt64.self && valueType != Bool.self
        case .double, .date, .numeric, .uuid: true
        case .boolean: valueType == Bool.self
        case .text, .bytea, .jsonb, .url: false
        }
    }
}

/// A predicate expression node with SQL.
protocol SQLTranslatable {
    func sqlNode(_ t: SQLTranslator) -> SQLNode?
}

/// `a && b`, taken apart into its terms (for `PredicateSQL.prefilter`).
protocol SQLConjunctionTerms {
    var sqlTerms: [any PredicateExpression] { get }
}

extension PredicateExpressions.Conjunction: SQLConjunctionTerms {
    var sqlTerms: [any PredicateExpression] { SQLTranslator.conjuncts(of: lhs) + SQLTranslator.conjuncts(of: rhs) }
}

extension SQLTranslator {
    /// The terms of a top-level `&&` (the expression itself when it is not one).
    static func conjuncts(of expression: any PredicateExpression) -> [any PredicateExpression] {
        (expression as? any SQLConjunctionTerms)?.sqlTerms ?? [expression]
    }
}
