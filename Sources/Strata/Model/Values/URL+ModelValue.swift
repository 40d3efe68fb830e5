import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension URL: ModelValue {

    static var placeholder: URL { URL(string: "about:blank") ?? URL(fileURLWithPath: "/") }
    static func marker(_ variant: Int) -> URL? { URL(string: "strata-marker:\(variant)") }
    static func snapshot(_ value: URL) -> SnapshotValue { .url(value) }
    static var accesses: AttributeAccesses { AttributeAccesses(URL.self) }
}
