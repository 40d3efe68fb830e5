import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension Decimal: ModelValue {

    static var placeholder: Decimal { 0 }
    static func marker(_ variant: Int) -> Decimal? { Decimal(1234 + variant) }
    static func snapshot(_ value: Decimal) -> SnapshotValue { .decimal(value) }
    static var accesses: AttributeAccesses { AttributeAccesses(Decimal.self) }
}
