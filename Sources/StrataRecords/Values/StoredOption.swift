/// A property option as a stored schema records it: one bit of `StoredProperty.options`, and
/// its name (the object layer's `AttributeOption` is made of these).
package struct StoredOption: Sendable {
    package let bit: UInt16
    package let name: String

    package static let unique = StoredOption(bit: 1 << 0, name: "unique")
    package static let externalStorage = StoredOption(bit: 1 << 1, name: "externalStorage")
    package static let ephemeral = StoredOption(bit: 1 << 2, name: "ephemeral")
    package static let spotlight = StoredOption(bit: 1 << 3, name: "spotlight")
    package static let allowsCloudEncryption = StoredOption(bit: 1 << 4, name: "allowsCloudEncryption")
    package static let preserveValueOnDeletion = StoredOption(bit: 1 << 5, name: "preserveValueOnDeletion")

    /// Every option a stored schema may name, for readers without the model classes.
    package static let all: [StoredOption] = [unique, externalStorage, ephemeral, spotlight, allowsCloudEncryption, preserveValueOnDeletion]
}
