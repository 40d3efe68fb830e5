import Foundation
import StrataEngine

/// How a query tests a stored row.
enum RowFilter {
    /// Every row passes.
    case all
    /// A test on the record's bytes.
    case record(RowTest)
    /// Foundation's evaluation of the predicate on an object made from the record.
    case object((RowID, RecordView) throws -> Bool)
}

/// One model's part of a fetch, bound to the fetch's constants: its table, filter, rows to read
/// and order.
struct QueryRun<T: PersistentModel> {
    let handle: StoreHandle
    let table: Table
    let descriptor: FetchDescriptor<T>
    let filter: RowFilter
    let source: RowSource
    let indexOrder: (index: IndexID, reverse: Bool)?

    var entity: Entity { table.entity }

    /// Tests a row read from the store.
    @inline(__always)
    func passes(_ row: RowID, _ view: RecordView) throws -> Bool {
        switch filter {
        case .all: return true
        case .record(let test): return try test(view)
        case .object(let test): return try test(row, view)
        }
    }

    /// The slow path: Foundation's `Predicate.evaluate` on an object made from the record. A
    /// model with relationships or external values is evaluated on its registered object, so
    /// that key paths through relationships can load the related objects.
    static func objectFilter(_ predicate: Predicate<T>, table: Table, handle: StoreHandle, context: ModelContext) -> (RowID, RecordView) throws -> Bool {
        if table.entity.needsRegisteredObjects {
            return { [unowned context] row, view in
                guard let model = try context.object(row, view: view, table: table, handle: handle) as? T else { return false }
                return try predicate.evaluate(model)
            }
        }
        return { row, view in
            guard let model = try ModelContext.scratchObject(row, view: view, entity: table.entity, handle: handle) as? T else { return false }
            return try predicate.evaluate(model)
        }
    }
}
