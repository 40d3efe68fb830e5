import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension Set: ModelValue where Element: ModelValue {

    static var placeholder: Set<Element> { [] }
    /// A set of the element's marker: so the key-path probe can confirm a key path to a set
    /// attribute (without one, a predicate on it was evaluated on objects, and a server store
    /// never got it).
    static func marker(_ variant: Int) -> Set<Element>? { Element.marker(variant).map { [$0] } }
    static var markerCount: Int { Element.markerCount }
    static var accesses: AttributeAccesses { AttributeAccesses(Set<Element>.self) }
}
