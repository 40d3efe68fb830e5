import Foundation
import Strata

extension PredicateSQL {
    /// ORDER BY sqlTerms for the sort descriptors (without "ORDER BY"), or nil if one does not translate.
    /// An empty `sortBy` gives "" (no sqlTerms).
    ///
    /// Each descriptor must name an attribute of the root model ("t0") whose PostgreSQL order is
    /// Foundation's `<` on the values: integers (not UInt/UInt64 in a bigint column), Double and
    /// Float, dates (their double column), Decimal (numeric; Swift puts NaN first, so a key
    /// `(col <> 'NaN')` comes first), UUIDs (PostgreSQL and Foundation both compare the 16
    /// bytes in order) and Bool (false < true). A nil optional is first in forward order and
    /// last in reverse, as Foundation sorts: NULLS FIRST / NULLS LAST.
    ///
    /// A Double, Float or Date that is NaN has no place in Foundation's order (it compares
    /// neither less nor greater than anything, so where it ends up depends on the sort's
    /// input); PostgreSQL sorts it after every number.
    ///
    /// Strings give nil: Foundation orders them by their NFC scalars (`<`), or by a localized
    /// comparator; PostgreSQL's `COLLATE "C"` orders bytes, which differs for strings that are
    /// not in NFC ("e\u{301}x" sorts after "éa" in Swift, before it in bytes), and NFC on the
    /// server is exact only for the characters its Unicode version knows. A descriptor made
    /// with a comparator (no key path) gives nil too.
    ///
    /// Rows that tie keep no particular order: append the primary key to page deterministically.
    static func order<T: PersistentModel>(_ sortBy: [SortDescriptor<T>], resolver: some SQLModelResolver) -> String? {
        var sqlTerms: [String] = []
        for descriptor in sortBy {
            guard descriptor.stringComparator == nil, let keyPath = descriptor.keyPath,
                  let column = resolver.column(for: keyPath, of: T.self, alias: "t0") else { return nil }
            let valueType = SQLTranslator.unwrappedType(type(of: keyPath).valueType)
            guard SQLTranslator.isOrdered(column.kind, valueType), isSortedByLessThan(valueType) else { return nil }
            let forward = descriptor.order == .forward
            let direction = (forward ? " ASC" : " DESC") + (column.isOptional ? (forward ? " NULLS FIRST" : " NULLS LAST") : "")
            if valueType == Decimal.self {
                // Decimal orders NaN below every number, PostgreSQL above: NaN first (false < true).
                sqlTerms.append("(\(column.sql) <> 'NaN'::numeric)" + direction)
            }
            sqlTerms.append(column.sql + direction)
        }
        return sqlTerms.joined(separator: ", ")
    }

    /// The Swift types whose order (`<`) the columns give.
    private static func isSortedByLessThan(_ type: Any.Type) -> Bool {
        let types: [Any.Type] = [Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt8.self, UInt16.self, UInt32.self,
                                 UInt.self, UInt64.self, Double.self, Float.self, Date.self, Decimal.self, UUID.self, Bool.self]
        return types.contains { $0 == type }
    }
}
