import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension Data: ModelValue {
    static var placeholder: Data { Data() }
    static func marker(_ variant: Int) -> Data? { Data([0x5E, 0xED, UInt8(variant)]) }
    static func snapshot(_ value: Data) -> SnapshotValue { .data(value) }
    static var accesses: AttributeAccesses { AttributeAccesses(Data.self) }
}
