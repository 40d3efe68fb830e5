// Keys of any length in an index: the long form of a key over 2016 bytes, and the forms an
// index holds for a key, a range and a prefix (Docs/FileFormat.md, "Long index keys").

/// Keys of any length in an index (Docs/FileFormat.md, "Long index keys").
///
/// An index holds a key of at most 2016 bytes as it is. A longer one is held in its **long
/// form**, always 2033 bytes: its first 2016 bytes, the marker `FF`, and the first 16 bytes of
/// the SHA-256 of the whole key. Equal keys have equal forms, and different keys different
/// forms (a SHA-256 collision aside), so a unique index stays unique and an equality lookup
/// finds the one form; the key's order is kept up to its first 2016 bytes: keys that differ
/// there sort as they would in full, and long keys sharing them sort by digest. Whoever reads
/// a long form and needs more (the order of two such keys, or the value) reads the record.
extension KeyEncoding {
    /// The longest key an index holds as it is (as `put` required of every key before long
    /// keys had a form, so that older stores hold their keys in the same bytes). (Inlinable
    /// constants: the check on every key a save computes is one comparison with a literal.)
    @inlinable public static var maximumExactLength: Int { 2016 }
    /// The byte between a long form's prefix and its digest: above the first byte of every
    /// row suffix (01...08), so that in a non-unique index an exact key equal to the prefix
    /// still sorts before the long keys that extend it.
    @inlinable public static var longFormMarker: UInt8 { 0xFF }
    /// How many bytes of the key's SHA-256 a long form keeps.
    @inlinable public static var longFormDigestLength: Int { 16 }
    /// The length of every long form: 2016 + 1 + 16 = 2033 bytes.
    @inlinable public static var longFormLength: Int { maximumExactLength + 1 + longFormDigestLength }

    /// The key an index holds for `key`: `key` itself when it has at most 2016 bytes, its long
    /// form otherwise.
    @inlinable
    public static func storedForm(_ key: [UInt8]) -> [UInt8] {
        key.count > maximumExactLength ? longForm(key) : key
    }

    /// Turns `key` into the key an index holds for it (`storedForm`): nothing to do, and
    /// nothing allocated, for a key of at most 2016 bytes.
    @inlinable
    public static func makeStoredForm(_ key: inout [UInt8]) {
        if key.count > maximumExactLength { key = longForm(key) }
    }

    /// True for a key an index holds in the long form (its value has more bytes than the key).
    @inlinable
    public static func isLongForm(_ key: [UInt8]) -> Bool { key.count > maximumExactLength }

    /// The long form of a key longer than 2016 bytes: prefix, marker, digest.
    public static func longForm(_ key: [UInt8]) -> [UInt8] {
        var form: [UInt8] = []
        form.reserveCapacity(longFormLength)
        form.append(contentsOf: key.prefix(maximumExactLength))
        form.append(longFormMarker)
        form.append(contentsOf: SHA256.digest(key).prefix(longFormDigestLength))
        return form
    }

    /// The range of stored keys that holds every key of `range`, for an index whose keys may
    /// be long: a bound of at most 2016 bytes compares with a long form as with the key in
    /// full; a longer one is widened to the stored keys that share its first 2016 bytes. The
    /// range then holds more keys than asked for only when a bound is long, and the caller
    /// checks each row's value (a query checks its whole predicate on every row anyway).
    public static func storedRange(_ range: KeyRange) -> KeyRange {
        var stored = range
        if let lower = range.lower, lower.count > maximumExactLength {
            // Every key ≥ (or >) the bound has at least the bound's first 2016 bytes.
            stored.lower = Array(lower.prefix(maximumExactLength))
            stored.lowerInclusive = true
        }
        if let upper = range.upper, upper.count > maximumExactLength {
            // Every key ≤ (or <) the bound is at most the highest long form with its prefix.
            stored.upper = Array(upper.prefix(maximumExactLength)) + [UInt8](repeating: 0xFF, count: 1 + longFormDigestLength)
            stored.upperInclusive = true
        }
        return stored
    }

    /// The stored keys that start as every key starting with `prefix` does: `prefix` itself
    /// up to 2016 bytes (exactly those keys), its first 2016 bytes when longer (more keys,
    /// which the caller checks).
    @inlinable
    public static func storedPrefix(_ prefix: [UInt8]) -> [UInt8] {
        prefix.count > maximumExactLength ? Array(prefix.prefix(maximumExactLength)) : prefix
    }
}
