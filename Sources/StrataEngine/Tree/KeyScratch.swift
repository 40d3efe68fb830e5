/// Two reusable key buffers for a cursor that walks keys: the key of the cell just read
/// (`current`) and the key it handed out last (`kept`). Filling one is a copy of memory and
/// keeping one is a swap of pointers, so walking a tree allocates nothing per entry.
///
/// A cursor is a value: it calls `unique()` before it writes, so a copy of the cursor gets
/// buffers of its own (copy on write, by hand).
final class KeyScratch {
    private var currentBytes: UnsafeMutableRawPointer
    private var currentCapacity: Int
    private var keptBytes: UnsafeMutableRawPointer
    private var keptCapacity: Int
    private(set) var currentCount = 0
    private(set) var keptCount = 0

    init(capacity: Int = 64) {
        currentCapacity = capacity
        keptCapacity = capacity
        currentBytes = .allocate(byteCount: capacity, alignment: 8)
        keptBytes = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit {
        currentBytes.deallocate()
        keptBytes.deallocate()
    }

    /// A copy with the same contents.
    private func copy() -> KeyScratch {
        let c = KeyScratch(capacity: Swift.max(currentCapacity, keptCapacity))
        c.currentBytes.copyMemory(from: currentBytes, byteCount: currentCount)
        c.keptBytes.copyMemory(from: keptBytes, byteCount: keptCount)
        c.currentCount = currentCount
        c.keptCount = keptCount
        return c
    }

    /// `scratch` itself when nothing else holds it, a copy otherwise.
    @inline(__always)
    static func unique(_ scratch: inout KeyScratch) {
        if !isKnownUniquelyReferenced(&scratch) { scratch = scratch.copy() }
    }

    /// The key last read.
    @inline(__always) var current: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: currentBytes, count: currentCount) }

    /// The first `count` bytes of the key kept.
    @inline(__always) var kept: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: keptBytes, count: keptCount) }

    /// Makes `current` the concatenation of `a` and `b` (a page's prefix and a cell's suffix).
    @inline(__always)
    func setCurrent(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) {
        let n = a.count + b.count
        if n > currentCapacity {
            currentBytes.deallocate()
            currentCapacity = Swift.max(n, currentCapacity * 2)
            currentBytes = .allocate(byteCount: currentCapacity, alignment: 8)
        }
        if let p = a.baseAddress, a.count > 0 { currentBytes.copyMemory(from: p, byteCount: a.count) }
        if let p = b.baseAddress, b.count > 0 { (currentBytes + a.count).copyMemory(from: p, byteCount: b.count) }
        currentCount = n
    }

    /// Keeps the first `length` bytes of `current` (by swapping the buffers); `current` is
    /// scratch again afterwards.
    @inline(__always)
    func keepCurrent(length: Int) {
        swap(&currentBytes, &keptBytes)
        swap(&currentCapacity, &keptCapacity)
        keptCount = length
        currentCount = 0
    }
}
