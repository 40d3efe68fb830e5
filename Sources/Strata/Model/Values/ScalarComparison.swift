import Foundation
@_spi(StorageBackend) import StrataRecords

// The comparison fast path's closures (the record tests themselves, `RowTest` and
// `ScalarField`, are StrataRecords'). Here, in the module of the value types' `scalarTest`s,
// so that each is specialized for its field type: made in StrataRecords, the generic closures
// were not specialized across the module boundary (W4 counted 27% more instructions).

enum ScalarComparison {
    /// One closure per operator, so that the operator is not chosen again for each record.
    static func compare<F: ScalarField>(_ c: F.Value, _ op: ComparisonOperator, field i: Int, _: F.Type) -> RowTest {
        switch op {
        case .equal: { try F.read($0.field(i)) == c }
        case .notEqual: { try F.read($0.field(i)) != c }
        case .less: { try F.read($0.field(i)) < c }
        case .lessOrEqual: { try F.read($0.field(i)) <= c }
        case .greater: { try F.read($0.field(i)) > c }
        case .greaterOrEqual: { try F.read($0.field(i)) >= c }
        }
    }
}
