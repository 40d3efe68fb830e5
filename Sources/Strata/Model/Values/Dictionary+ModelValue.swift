import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension Dictionary: ModelValue where Key: ModelValue, Value: ModelValue {

    static var placeholder: [Key: Value] { [:] }
    static var accesses: AttributeAccesses { AttributeAccesses([Key: Value].self) }
}
