import Foundation
import Strata

/// What the predicate translator asks of the store's tables.
extension PostgresStore: SQLModelResolver {
    private func table(of modelType: Any.Type) -> PostgresTable? {
        tablesByType[ObjectIdentifier(modelType)] ?? tables[String(describing: modelType)]
    }

    func column(for keyPath: AnyKeyPath, of modelType: Any.Type, alias: String) -> ColumnInfo? {
        guard let table = table(of: modelType), let name = table.entity.propertyName(for: keyPath), let column = table.column(named: name) else { return nil }
        return ColumnInfo(sql: column.reference(alias), kind: column.kind, isOptional: column.isOptional)
    }

    func toOne(for keyPath: AnyKeyPath, of modelType: Any.Type, alias: String) -> (foreignKey: String, target: any PersistentModel.Type, table: String)? {
        guard let table = table(of: modelType), let name = table.entity.propertyName(for: keyPath),
              let toOne = table.toOnes.first(where: { $0.relationship.name == name }),
              let target = table.entity.destinationType(of: toOne.relationship), let targetTable = tables[toOne.target] else { return nil }
        return ("\(alias).\(toOne.column)", target, targetTable.qualified)
    }

    func identifierColumn(for keyPath: AnyKeyPath, of modelType: Any.Type, alias: String) -> String? {
        guard let model = modelType as? any PersistentModel.Type else { return nil }
        func identifierPath<M: PersistentModel>(_: M.Type) -> AnyKeyPath { \M.persistentModelID }
        return identifierPath(model) == keyPath ? "\(alias).\"_id\"" : nil
    }

    func primaryKey(of id: PersistentIdentifier) -> Int64? { primaryKey(id) }
}
