import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension Set: ModelValue where Element: ModelValue {

    static var placeholder: Set<Element> { [] }
    static var accesses: AttributeAccesses { AttributeAccesses(Set<Element>.self) }
}
