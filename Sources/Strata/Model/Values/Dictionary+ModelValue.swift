import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension Dictionary: ModelValue where Key: ModelValue, Value: ModelValue {

    static var placeholder: [Key: Value] { [:] }
    /// One entry of the key's and the value's markers, for the key-path probe (see `Set`'s).
    static func marker(_ variant: Int) -> [Key: Value]? {
        guard let key = Key.marker(variant), let value = Value.marker(variant) else { return nil }
        return [key: value]
    }
    static var markerCount: Int { Swift.min(Key.markerCount, Value.markerCount) }
    static var accesses: AttributeAccesses { AttributeAccesses([Key: Value].self) }
}
