// Discovery finds where an attribute storage keeps its link to the backing once, on one value
// type (`attributeLinks`), instead of making key paths into each `Attribute<Value>` (a tenth of
// a fresh process's first open). That holds only while the link, slot and keeper come before
// the value: this checks it for value types of every size and alignment.
import Foundation
import Testing
@testable import Strata

@Suite struct AttributeLayoutTests {
    struct Odd: Codable { var a: UInt8; var b: UInt64; var c: UInt8 }
    struct Wide: Codable { var a: [Double]; var b: (UUID?, Decimal, String)? = nil
        enum CodingKeys: CodingKey { case a }
    }
    final class Reference: Codable {}

    @Test func linksAreWhereKeyPathsSayForEveryValueType() {
        func check<V>(_: V.Type) {
            let byKeyPaths = StorageLink(Attribute<V>.self, link: \.link, slot: \.slot, keeper: \.keeper)
            #expect(byKeyPaths == attributeLinks, "\(V.self)")
            #expect(StorageLink(Attribute<V>.self, link: \.link, slot: \.slot, keeper: nil) == Attribute<V>.storageLink, "\(V.self)")
            let inModelStorage = StorageLink(_ModelStorage<V>.self, link: \.attribute.link, slot: \.attribute.slot, keeper: \.attribute.keeper)
            #expect(inModelStorage == attributeLinks.moved(by: _ModelStorage<V>.attributeOffset), "\(V.self)")
            #expect(MemoryLayout<_ModelStorage<V>>.offset(of: \_ModelStorage<V>.attribute) == _ModelStorage<V>.attributeOffset, "\(V.self)")
        }
        check(UInt8.self); check(Bool.self); check(Int8?.self); check(Int.self); check(Double?.self); check(String.self)
        check(UUID.self); check(UUID?.self); check(Decimal.self); check(Date.self); check(Data.self); check([String].self)
        check(Odd.self); check(Odd?.self); check(Wide.self); check(Reference.self); check([String: [Int]].self)
        check((UInt8, UInt16, UInt8).self); check(Void.self)
    }
}
