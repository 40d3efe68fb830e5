import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// How a query tests a stored row.
enum RowFilter {
    /// Every row passes.
    case all
    /// A test on the record's bytes.
    case record(RowTest)
    /// Comparisons of fields with constants that must all pass: the common predicate, tested
    /// in the scan's loop rather than through closures.
    case checks([FieldCheck])
    /// Foundation's evaluation of the predicate on an object made from the record.
    case object((RowID, RecordView) throws -> Bool)

    var isAll: Bool { if case .all = self { true } else { false } }

    /// Tests a row read from the store.
    @inline(__always)
    func passes(_ row: RowID, _ view: RecordView) throws -> Bool {
        switch self {
        case .all: return true
        case .record(let test): return try test(view)
        case .checks(let checks): return try checks.allPass(view)
        case .object(let test): return try test(row, view)
        }
    }
}

/// The order a fetch's descriptors give, as functions of objects (nil: row order).
struct ResultSort {
    /// Foundation's comparison of two objects by the sort descriptors.
    let compare: (AnyObject, AnyObject) -> ComparisonResult
    /// The properties the descriptors read, when each reads one property directly (a sort key
    /// object needs only those); nil when one goes further.
    let properties: [Int]?
    /// The index the (single) descriptor can be read from, and its direction.
    let indexOrder: (index: IndexID, reverse: Bool)?
    /// Without pending changes, in a context with unsaved ones: the context that makes the
    /// objects the sort reads, as stored (nil: sort keys come from the fetch's own context).
    var asStored: ModelContext? = nil
}

/// One model's part of a fetch, bound to the fetch's constants: its table, filter, rows to
/// read, order and page. Nothing of it is generic, so running it looks up no type metadata (a
/// class: copying and dropping it is a retain and a release, where a struct this size goes
/// through value witnesses).
final class QueryRun {
    let handle: StoreHandle
    let table: Table
    let filter: RowFilter
    /// (Unchecked, and the three below: set again only by `rebind`, on a run nothing else holds.)
    @exclusivity(unchecked) private(set) var source: RowSource
    let sort: ResultSort?
    @exclusivity(unchecked) private(set) var paging: Paging
    @exclusivity(unchecked) private(set) var includePendingChanges: Bool
    /// The predicate on an unsaved object (nil: no predicate, or the context had no unsaved
    /// inserts or changes when the run was made; a run is used at once).
    @exclusivity(unchecked) private(set) var pendingTest: ((AnyObject) throws -> Bool)?
    /// The properties objects made by the run load (`propertiesToFetch`; nil: all of them).
    let loading: [Int]?
    /// The terms offered to a backend that evaluates queries (nil: none, or an engine that
    /// does not).
    let storageQuery: StorageQuery?
    /// True for a run `QueryPart.run` made for a point lookup (filter `.all`, no sort, no
    /// storage query): its context keeps it and binds it again for the next one (`rebind`).
    let isPointLookup: Bool

    init(handle: StoreHandle, table: Table, filter: RowFilter, source: RowSource, sort: ResultSort?, paging: Paging,
         includePendingChanges: Bool, pendingTest: ((AnyObject) throws -> Bool)?, loading: [Int]? = nil, storageQuery: StorageQuery? = nil,
         isPointLookup: Bool = false) {
        self.handle = handle
        self.table = table
        self.filter = filter
        self.source = source
        self.sort = sort
        self.paging = paging
        self.includePendingChanges = includePendingChanges
        self.pendingTest = pendingTest
        self.loading = loading
        self.storageQuery = storageQuery
        self.isPointLookup = isPointLookup
    }

    /// A point lookup's key, taken out of the run (whose source is then a scan until `rebind`):
    /// the array is then the caller's alone, to be written over.
    func takeKey() -> [UInt8] {
        guard case .lookup(_, let key) = source else { return [] }
        source = .scan
        return key
    }

    /// The run bound to another point lookup's key and the fetch's paging. Only for a run with
    /// `isPointLookup` that nothing but its context holds.
    func rebind(_ source: RowSource, paging: Paging, includePendingChanges: Bool, pendingTest: ((AnyObject) throws -> Bool)?) {
        self.source = source
        self.paging = paging
        self.includePendingChanges = includePendingChanges
        self.pendingTest = pendingTest
    }

    var entity: Entity { table.entity }

    /// Tests a row read from the store.
    @inline(__always)
    func passes(_ row: RowID, _ view: RecordView) throws -> Bool { try filter.passes(row, view) }

    /// The same run without offset and limit (a fetch across models pages the merge).
    var unpaged: QueryRun {
        QueryRun(handle: handle, table: table, filter: filter, source: source, sort: sort, paging: Paging(offset: nil, limit: nil),
                 includePendingChanges: includePendingChanges, pendingTest: pendingTest, loading: loading, storageQuery: storageQuery)
    }
}

/// A fetch's runs, one per model it reads: nearly always one, kept without an array.
struct QueryRuns: RandomAccessCollection {
    private let first: QueryRun
    private let rest: [QueryRun]

    /// The runs `make` makes for `0..<count` (`count` at least 1: a fetch reads its model).
    init(count: Int, _ make: (Int) -> QueryRun) {
        first = make(0)
        rest = count > 1 ? (1..<count).map(make) : []
    }

    var startIndex: Int { 0 }
    var endIndex: Int { 1 + rest.count }
    subscript(i: Int) -> QueryRun { i == 0 ? first : rest[i - 1] }
}

extension RowSource {
    var isScan: Bool { if case .scan = self { true } else { false } }
    var isRows: Bool { if case .rows = self { true } else { false } }
}
