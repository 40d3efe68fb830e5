import Foundation
@_spi(StorageBackend) import StrataRecords

// Foundation has `ValueTransformer` and `NSValueTransformerName` on Apple platforms; Strata's
// stand-ins exist only where it does not (swift-corelibs-foundation), so that they never
// shadow Foundation's. (CI runs on Linux: the Apple branch is not compiled there.)
#if !canImport(Darwin)
/// The name a `ValueTransformer` is registered under. Same as Foundation's
/// `NSValueTransformerName` on Apple platforms.
public struct NSValueTransformerName: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
}

/// Turns a value into another and, if it allows, back: what `@Attribute(.transformable(by:))`
/// stores a value that is not `Codable` with. A subclass overrides `transformedValue(_:)` (the
/// value to `Data`) and `reverseTransformedValue(_:)` (the `Data` back to the value).
///
/// ```swift
/// final class ColorTransformer: ValueTransformer {
///     override class func allowsReverseTransformation() -> Bool { true }
///     override func transformedValue(_ value: Any?) -> Any? { (value as? Color).map { Data($0.rgba) } }
///     override func reverseTransformedValue(_ value: Any?) -> Any? { (value as? Data).map { Color(rgba: [UInt8]($0)) } }
/// }
/// ```
///
/// Same as Foundation's `ValueTransformer` on Apple platforms, which swift-corelibs-foundation
/// on Linux does not have; differs from it: the named registry is read with
/// `ValueTransformer.registered(forName:)` (a Swift class initializer cannot hand back the
/// registered instance as `ValueTransformer(forName:)` does), and there are no predefined
/// transformers (`NSSecureUnarchiveFromDataTransformer`, `isNil`, ...).
open class ValueTransformer: NSObject {
    public required override init() { super.init() }

    /// Registers `transformer` under `name` (nil removes the registration), for
    /// `.transformable(by: "name")`. Same as Foundation's.
    open class func setValueTransformer(_ transformer: ValueTransformer?, forName name: NSValueTransformerName) {
        TransformerRegistry.shared.set(transformer, name.rawValue)
    }

    /// The transformer registered under `name`, if any. Stands for Foundation's
    /// `ValueTransformer(forName:)`.
    public static func registered(forName name: NSValueTransformerName) -> ValueTransformer? {
        TransformerRegistry.shared.get(name.rawValue)
    }

    /// The names transformers are registered under. Same as Foundation's.
    open class func valueTransformerNames() -> [NSValueTransformerName] {
        TransformerRegistry.shared.names().map(NSValueTransformerName.init(rawValue:))
    }

    /// The class of the values `transformedValue(_:)` returns. Same as Foundation's (`NSObject` by default).
    open class func transformedValueClass() -> AnyClass { NSObject.self }

    /// Whether `reverseTransformedValue(_:)` turns a transformed value back. Same as Foundation's
    /// (false by default; a transformable attribute needs true to be read back).
    open class func allowsReverseTransformation() -> Bool { false }

    /// The transformed value (by default the value itself). Same as Foundation's.
    open func transformedValue(_ value: Any?) -> Any? { value }

    /// The value a transformed value came from (by default: itself when reverse
    /// transformation is allowed, nil otherwise). Same as Foundation's, which raises instead.
    open func reverseTransformedValue(_ value: Any?) -> Any? {
        Swift.type(of: self).allowsReverseTransformation() ? value : nil
    }
}

/// The transformers registered by name.
final class TransformerRegistry: @unchecked Sendable {
    static let shared = TransformerRegistry()
    private let lock = NSLock()
    private var byName: [String: ValueTransformer] = [:]

    func set(_ transformer: ValueTransformer?, _ name: String) { lock.withLock { byName[name] = transformer } }
    func get(_ name: String) -> ValueTransformer? { lock.withLock { byName[name] } }
    func names() -> [String] { lock.withLock { byName.keys.sorted() } }
}
#else
extension ValueTransformer {
    /// The transformer registered under `name`: Strata's spelling of Foundation's
    /// `ValueTransformer(forName:)`, so that code written for Linux builds here too.
    public static func registered(forName name: NSValueTransformerName) -> ValueTransformer? { ValueTransformer(forName: name) }
}
#endif
