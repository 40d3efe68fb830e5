// Little-endian integer packing for the file format. Keys use big-endian (see KeyEncoding).

extension Array where Element == UInt8 {
    @inline(__always) mutating func appendLE(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value)); append(UInt8(truncatingIfNeeded: value >> 8))
    }
    @inline(__always) mutating func appendLE(_ value: UInt32) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }
    @inline(__always) mutating func appendLE(_ value: UInt64) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }
    @inline(__always) mutating func appendBE(_ value: UInt32) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }
    @inline(__always) mutating func appendBE(_ value: UInt64) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }
    /// Writes `value` little-endian at `index`, which must already exist.
    @inline(__always) mutating func storeLE16(_ value: UInt16, at index: Int) {
        withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: index, as: UInt16.self) }
    }
    /// Writes `value` little-endian at `index`, which must already exist.
    @inline(__always) mutating func storeLE(_ value: UInt32, at index: Int) {
        withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: index, as: UInt32.self) }
    }
}

extension UnsafeRawBufferPointer {
    @inline(__always) func loadLE16(_ offset: Int) -> UInt16 {
        UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    @inline(__always) func loadLE32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    @inline(__always) func loadLE64(_ offset: Int) -> UInt64 {
        UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
    @inline(__always) func loadBE64(_ offset: Int) -> UInt64 {
        UInt64(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
    @inline(__always) func loadBE32(_ offset: Int) -> UInt32 {
        UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}

extension Array where Element == UInt8 {
    @inline(__always) func loadLE16(_ offset: Int) -> UInt16 { withUnsafeBytes { $0.loadLE16(offset) } }
    @inline(__always) func loadLE32(_ offset: Int) -> UInt32 { withUnsafeBytes { $0.loadLE32(offset) } }
    @inline(__always) func loadLE64(_ offset: Int) -> UInt64 { withUnsafeBytes { $0.loadLE64(offset) } }
    @inline(__always) func loadBE64(_ offset: Int) -> UInt64 { withUnsafeBytes { $0.loadBE64(offset) } }
}

/// Compares two byte strings the way keys are ordered: unsigned bytes, shorter prefix first.
@inline(__always)
package func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let n = Swift.min(a.count, b.count)
    if n > 0, let pa = a.baseAddress, let pb = b.baseAddress {
        let r = memcmpBytes(pa, pb, n)
        if r != 0 { return r }
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

@inline(__always)
private func memcmpBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Int {
    var i = 0
    while i + 8 <= n {
        let x = UInt64(bigEndian: a.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        let y = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        if x != y { return x < y ? -1 : 1 }
        i += 8
    }
    while i < n {
        let x = a.load(fromByteOffset: i, as: UInt8.self)
        let y = b.load(fromByteOffset: i, as: UInt8.self)
        if x != y { return x < y ? -1 : 1 }
        i += 1
    }
    return 0
}

/// The `count` (1 to 7) bytes at `p` as a big-endian integer, left-aligned in the word (as
/// the first bytes of a longer key would be).
@inline(__always)
func tailWord(_ p: UnsafeRawPointer, _ count: Int) -> UInt64 {
    var x: UInt64 = 0, shift = 64, o = 0
    if count & 4 != 0 {
        shift &-= 32
        x |= UInt64(UInt32(bigEndian: p.loadUnaligned(fromByteOffset: o, as: UInt32.self))) &<< UInt64(shift)
        o &+= 4
    }
    if count & 2 != 0 {
        shift &-= 16
        x |= UInt64(UInt16(bigEndian: p.loadUnaligned(fromByteOffset: o, as: UInt16.self))) &<< UInt64(shift)
        o &+= 2
    }
    if count & 1 != 0 {
        shift &-= 8
        x |= UInt64(p.load(fromByteOffset: o, as: UInt8.self)) &<< UInt64(shift)
    }
    return x
}

package func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in compareBytes(pa, pb) } }
}

extension Array {
    /// `count` copies of `value`, as `Array(repeating:count:)` makes, allocated through this
    /// module's specialized path: `Array(repeating:count:)` and `Array(unsafeUninitializedCapacity:)`
    /// allocate through the runtime's unspecialized one, a type metadata lookup each time (about
    /// 800 instructions for each branch a commit copies, W2, Docs/Benchmarks.md, "Costs").
    @inline(__always)
    static func filled(with value: Element, count: Int) -> [Element] {
        var array: [Element] = []
        array.reserveCapacity(count)
        array.append(contentsOf: repeatElement(value, count: count))
        return array
    }
}
