import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension Optional: ModelValue where Wrapped: ModelValue {

    static var placeholder: Wrapped? { nil }
    static func marker(_ variant: Int) -> Wrapped?? { Wrapped.marker(variant).map { .some($0) } }
    static var markerCount: Int { Wrapped.markerCount }
    static func snapshot(_ value: Wrapped?) throws -> SnapshotValue { try value.map(Wrapped.snapshot) ?? .null }
    static var accesses: AttributeAccesses { AttributeAccesses(Optional<Wrapped>.self) }
}

extension Optional: SpecializedContainer {
    static var specializedAccess: AttributeAccess? { (Wrapped.self as? any ModelValue.Type)?.accesses.optional }
}
