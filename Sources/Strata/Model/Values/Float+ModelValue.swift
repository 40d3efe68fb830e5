import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension Float: ModelValue {
    static var placeholder: Float { 0 }
    static func marker(_ variant: Int) -> Float? { Float(1234.5 + Double(variant)) }
    static func snapshot(_ value: Float) -> SnapshotValue { .double(Double(value)) }
    static var accesses: AttributeAccesses { AttributeAccesses(Float.self) }
}
