// An `AttributeOption` is its bit and, for `.transformable`, a boxed transformer: its name and
// the stored schema's option are found from the bit. These hold the bits to the stored schema's
// options (which stores write and read by bit and name), and the declarations a wrapper makes
// from options to the ones made the long way.
import Foundation
import Testing
@testable import Strata
@_spi(StorageBackend) import StrataRecords

@Suite struct AttributeOptionTests {
    final class Upper: ValueTransformer {}

    @Test func everyOptionHasTheStoredSchemasBitAndName() {
        let options: [(AttributeOption, String)] = [
            (.unique, "unique"), (.externalStorage, "externalStorage"), (.ephemeral, "ephemeral"), (.spotlight, "spotlight"),
            (.allowsCloudEncryption, "allowsCloudEncryption"), (.preserveValueOnDeletion, "preserveValueOnDeletion"),
        ]
        #expect(options.count == StoredOption.all.count)
        for (option, name) in options {
            let stored = StoredOption.all.first { $0.name == name }
            #expect(stored?.bit == option.bit, "\(name)")
            #expect(option.name == name)
            #expect(option.description == name)
            #expect(option.transformer == nil)
        }
        #expect(AttributeOption.all.map(\.bit) == StoredOption.all.map(\.bit))
        #expect(Set(options.map(\.0.bit)).count == options.count)
        #expect(!StoredOption.all.contains { $0.bit == AttributeOption.transformableBit })
    }

    @Test func transformableOptionsCompareByTheirTransformer() {
        let byType = AttributeOption.transformable(by: Upper.self)
        let byName = AttributeOption.transformable(by: "Upper")
        #expect(byType == AttributeOption.transformable(by: Upper.self))
        #expect(byType.hashValue == AttributeOption.transformable(by: Upper.self).hashValue)
        #expect(byType != byName)
        #expect(byName == AttributeOption.transformable(by: "Upper"))
        #expect(byType != .unique)
        #expect(byName.description == "transformable(by: Upper)")
        #expect(byType.name == "transformable")
        #expect(Set([byType, byName, .unique, .unique]).count == 3)
    }

    @Test func aWrappersDeclarationIsTheOneItsOptionsSay() {
        let cases: [([AttributeOption], String?)] = [
            ([], nil), ([.unique], nil), ([.unique, .spotlight], nil), ([.externalStorage, .preserveValueOnDeletion], nil),
            ([.unique], "formerName"), ([], "other"), ([.transformable(by: Upper.self)], nil),
            ([.unique, .transformable(by: "Upper")], "renamed"),
        ]
        for (options, originalName) in cases {
            let long = AttributeDeclaration(options, originalName: originalName)
            let declared = DeclaredAttribute(options, originalName: originalName)
            #expect(declared.declaration == long, "\(options) \(originalName ?? "-")")
            #expect(declared.declaration == DeclaredAttribute(long).declaration)
            // Options alone keep nothing beside their bits.
            #expect((declared.extra == 0) == (originalName == nil && !options.contains { $0.transformer != nil }))
        }
    }
}
