import Foundation
import StrataEngine
import StrataRecords

extension Set: ModelValue where Element: ModelValue {

    static var placeholder: Set<Element> { [] }
    static var accesses: AttributeAccesses { AttributeAccesses(Set<Element>.self) }
}
