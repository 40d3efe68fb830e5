import StrataEngine

// Records of older layouts (written before a lightweight schema change, Migration/
// LightweightMigration.swift) are read as the current properties: each field found by name or
// former name, and properties added since read their stored default.

/// How to read records of older layouts of one entity as the current properties.
@usableFromInline
package final class EntityLayouts: @unchecked Sendable {
    /// The layout new records are written with.
    @usableFromInline package let currentVersion: UInt16
    /// For each older layout: the field of each current property, or -1 for "use the default".
    @usableFromInline package let maps: [UInt16: [Int]]
    /// The encoded default of each property that an older layout lacks (the stored one; from
    /// the model's `init()` in a store written before defaults were kept).
    @usableFromInline package let defaults: [Int: UnsafeRawBufferPointer]

    package static let identity = EntityLayouts(currentVersion: 0, maps: [:], defaults: [:])

    package init(currentVersion: UInt16, maps: [UInt16: [Int]], defaults: [Int: [UInt8]]) {
        self.currentVersion = currentVersion
        self.maps = maps
        // Kept for the life of the process: a few bytes per new property. (None for most
        // tables: `mapValues` of an empty dictionary still makes storage, and the first
        // `Int`-keyed storage costs a fresh process a conformance scan; W8, Docs/Benchmarks.md.)
        self.defaults = defaults.isEmpty ? Dictionary() : defaults.mapValues { bytes in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(bytes.count, 1), alignment: 8)
            buffer.copyBytes(from: bytes)
            return UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<bytes.count])
        }
    }

    @inlinable
    package var isIdentity: Bool { maps.isEmpty }

    /// Where property `i` is in a record of layout `version`: a field, or a default value.
    @inlinable @inline(__always)
    package func locate(_ i: Int, version: UInt16) throws -> (field: Int, fallback: UnsafeRawBufferPointer?) {
        if version == currentVersion { return (i, nil) }
        guard let map = maps[version], i < map.count else {
            throw decodingFailure("a record of layout \(version), which the stored schema does not list")
        }
        let field = map[i]
        if field >= 0 { return (field, nil) }
        guard let fallback = defaults[i] else { throw decodingFailure("no default for a property added after layout \(version)") }
        return (-1, fallback)
    }
}

extension StoredEntity {
    /// Every layout, oldest first (a store written before layouts were recorded has one).
    package var allLayouts: [[String]] {
        guard let layouts, !layouts.isEmpty else { return [properties.map(\.name)] }
        return layouts
    }
}
