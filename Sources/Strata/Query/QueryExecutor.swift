import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// The stored rows of a run that pass its filter, in row order, visited whole or in pieces
/// (`enumerate` stops after each batch and goes on later). Each row's record is read once,
/// and the visitor gets it: the record a row was filtered on is the one its object is made from.
struct StoredRows {
    let run: QueryRun
    /// Rows the context's unsaved changes replace (or that it deletes).
    let excluded: RowSet
    /// The backend left out the rows before the run's offset (`StoreCandidates`): `paging`
    /// starts at the first row.
    private(set) var skippedOffset: Bool
    /// The page of these rows: the run's, from the first row when the backend skipped the offset.
    var paging: Paging { skippedOffset ? Paging(offset: nil, limit: run.paging.limit) : run.paging }
    /// The candidate rows: every row of the collection, those indexes or identifiers gave, or
    /// the one (or none) a unique key gave, without a list (an allocation per point fetch).
    private enum Candidates {
        case all
        case listed([RowID])
        case one(RowID?)
    }
    private let candidates: Candidates
    /// Where the next visit starts: a row id for a scan, a position in the list otherwise.
    private var next = 0
    private(set) var isDone = false

    init(_ run: QueryRun, excluded: RowSet, reader: any StorageReader) throws {
        // (The candidates found before any field is set: with a throwing call after them, the
        // initializer built the value aside and copied it, a retain and a release of each of
        // its references per fetch, W3.)
        let (candidates, skippedOffset) = try StoredRows.candidates(run, reader: reader)
        self.run = run
        self.excluded = excluded
        self.candidates = candidates
        self.skippedOffset = skippedOffset
        isDone = run.table.collection == nil
    }

    private static func candidates(_ run: QueryRun, reader: any StorageReader) throws -> (Candidates, skippedOffset: Bool) {
        if let query = run.storageQuery, query.storeFetch != nil || !run.source.isRows, let selected = try reader.candidates(query) {
            // A backend that evaluates the query's indexed terms itself selected the rows (it
            // applies every term at once, where the planner's source uses one index).
            return (.listed(selected.rows), selected.skippedOffset)
        }
        switch run.source {
        case .scan:
            return (.all, false)
        case .rows(let rows):
            return (.listed(rows), false)
        case .lookup(let index, let key):
            return (.one(try reader.lookup(key, in: index)), false)
        case .lookups(let index, let keys):
            var rows = Set<RowID>()
            for key in keys { if let row = try reader.lookup(key, in: index) { rows.insert(row) } }
            return (.listed(rows.sorted()), false)
        case .ranges(let index, let ranges):
            var rows = Set<RowID>()
            for range in ranges { try reader.forEachEntry(in: index, range: range, reverse: false) { rows.insert($0); return true } }
            return (.listed(rows.sorted()), false)
        }
    }

    /// Calls `body` with each passing row from where the last visit stopped, until `body`
    /// returns false (the visit stops after that row) or the rows run out.
    mutating func visit(_ reader: any StorageReader, _ body: (RowID, RecordView) throws -> Bool) throws {
        guard !isDone, let collection = run.table.collection else { return }
        // Layouts that map nothing are left out once here rather than in each row's view.
        let run = self.run, excluded = self.excluded
        let layouts = run.table.layouts.isIdentity ? nil : Unmanaged.passUnretained(run.table.layouts)
        var stopped = false
        func visitRow(_ row: RowID) throws {
            if excluded.contains(row) { return }
            _ = try reader.visitRecord(row, in: collection) { raw in
                let view = try RecordView(raw, lent: layouts)
                if try run.passes(row, view) { stopped = try !body(row, view) }
            }
        }
        switch candidates {
        case .one(let row):
            if let row { try visitRow(row) }
            isDone = true
            return
        case .listed(let list):
            while next < list.count && !stopped {
                next += 1
                try visitRow(list[next - 1])
            }
            if next >= list.count { isDone = true }
            return
        case .all:
            break
        }
        var last: RowID? = nil
        // The scan's per-row work, with what does not change per row read once here.
        let excludes = !excluded.isEmpty, filter = run.filter
        // A batch at a time (a call per row cost about 40 instructions); a visit that stops
        // mid-batch goes on after the row it stopped on.
        try reader.forEachRecordBatch(in: collection, from: next == 0 ? nil : RowID(next)) { batch in
            for record in batch {
                let row = record.row
                last = row
                if excludes && excluded.contains(row) { continue }
                let view = try RecordView(record.bytes, lent: layouts)
                if try filter.passes(row, view), try !body(row, view) {
                    stopped = true
                    return false
                }
            }
            return true
        }
        if stopped, let last, last < RowID(Int.max) { next = Int(last + 1) } else { isDone = true }
    }

    /// How many of the rows from where the last visit stopped pass the filter. A scan counts in
    /// its own loop: through `visit`, each row also went through the visitor's closure and the
    /// bookkeeping that lets a visit stop and go on.
    mutating func count(_ reader: any StorageReader) throws -> Int {
        guard case .all = candidates, !isDone, let collection = run.table.collection else {
            var n = 0
            try visit(reader) { _, _ in n += 1; return true }
            return n
        }
        // The layouts lent to each row's view, not retained per row; kept alive by `run`.
        let table = run.table
        let layouts = table.layouts.isIdentity ? nil : Unmanaged.passUnretained(table.layouts)
        let excluded = self.excluded, excludes = !excluded.isEmpty, filter = run.filter
        var n = 0
        let start = next == 0 ? nil : RowID(next)
        try withExtendedLifetime(table) {
            // The records come a batch at a time (a call per row cost about 40 instructions).
            if case .checks(let checks) = filter {
                // The checks' buffer taken once for the walk.
                try checks.withUnsafeBufferPointer { checks in
                    try reader.forEachRecordBatch(in: collection, from: start) { batch in
                        for record in batch where !(excludes && excluded.contains(record.row)) {
                            if try FieldCheck.allPass(checks, record.bytes, lent: layouts) { n &+= 1 }
                        }
                        return true
                    }
                }
            } else if case .record(let test) = filter {
                // The test taken out of the filter once: bound inside the loop, its closure was
                // retained and released for each row (Docs/Benchmarks.md, "Costs").
                try reader.forEachRecordBatch(in: collection, from: start) { batch in
                    for record in batch where !(excludes && excluded.contains(record.row)) {
                        if try test(RecordView(record.bytes, lent: layouts)) { n &+= 1 }
                    }
                    return true
                }
            } else {
                try reader.forEachRecordBatch(in: collection, from: start) { batch in
                    for record in batch where !(excludes && excluded.contains(record.row)) {
                        if try filter.passes(record.row, RecordView(record.bytes, lent: layouts)) { n &+= 1 }
                    }
                    return true
                }
            }
        }
        isDone = true
        return n
    }
}
