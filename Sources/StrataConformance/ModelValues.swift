// The value types and transformers of the conformance scenarios' models (Models.swift), which
// both spellings of the models share: StrataData's StrataDataConformance links to this file.
import Foundation
import Strata

public enum ConfStatus: String, Codable, CaseIterable, Sendable { case planned, active, done }

public struct ConfAddress: Codable, Hashable, Sendable {
    public var street: String
    public var city: String
    public init(street: String, city: String) { self.street = street; self.city = city }
}

public enum ConfShape: Codable, Hashable, Sendable { case circle(radius: Double), rect(width: Int, height: Int), none }
public enum ConfPriority: Int, Codable, Hashable, Sendable { case low = 1, high = 9 }

public struct ConfNested: Codable, Hashable, Sendable {
    public var name: String
    public var values: [Int]
    public var when: Date?
    public var address: ConfAddress?
}

/// A day (whole seconds: every store keeps those exactly, see `exactDates`).
func confDay(_ n: Int) -> Date { Date(timeIntervalSince1970: 1_600_000_000 + Double(n) * 86_400) }

/// A type that is not Codable, stored through a transformer.
public final class ConfColor: Equatable, CustomStringConvertible {
    public let rgb: [UInt8]
    public init(_ rgb: [UInt8]) { self.rgb = rgb }
    public static func == (a: ConfColor, b: ConfColor) -> Bool { a.rgb == b.rgb }
    public var description: String { "ConfColor(\(rgb))" }
}

public final class ConfColorTransformer: ValueTransformer {
    public override class func allowsReverseTransformation() -> Bool { true }
    public override func transformedValue(_ value: Any?) -> Any? { (value as? ConfColor).map { Data($0.rgb) } }
    public override func reverseTransformedValue(_ value: Any?) -> Any? { (value as? Data).map { ConfColor([UInt8]($0)) } }
}

/// Registered by name (`ConfUppercaseTransformer.name`): stores a String uppercased, reads it
/// back lowercased.
public final class ConfUppercaseTransformer: ValueTransformer {
    public static let name = NSValueTransformerName("ConfUppercaseTransformer")
    public override class func allowsReverseTransformation() -> Bool { true }
    public override func transformedValue(_ value: Any?) -> Any? { (value as? String).map { Data($0.uppercased().utf8) } }
    public override func reverseTransformedValue(_ value: Any?) -> Any? { (value as? Data).map { String(decoding: $0, as: UTF8.self).lowercased() } }
}

/// Not Codable, and no transformer: a model with it is not a valid schema.
public final class ConfNotCodable {}
