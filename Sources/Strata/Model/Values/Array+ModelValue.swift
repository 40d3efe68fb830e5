import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension Array: ModelValue where Element: ModelValue {

    static var placeholder: [Element] { [] }
    static func marker(_ variant: Int) -> [Element]? { Element.marker(variant).map { [$0] } }
    static var markerCount: Int { Element.markerCount }
    static func snapshot(_ value: [Element]) throws -> SnapshotValue {
        if let strings = value as? [String] { return .json(SnapshotValue.json(strings)) }
        return try SnapshotValue(value)
    }
    static var accesses: AttributeAccesses { AttributeAccesses([Element].self) }
}

extension Array: SpecializedContainer {
    static var specializedAccess: AttributeAccess? { (Element.self as? any ModelValue.Type)?.accesses.array }
}
