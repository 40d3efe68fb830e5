/// The bytes of the nodes a write transaction holds, so that it can write them out when
/// they pass its budget.
///
/// It also keeps the buffers of nodes that went away (written out) for the nodes that follow:
/// a large transaction writes its nodes out and copies as many pages again, and fresh buffers
/// from `malloc` cost a page fault per 4 KiB once freed memory went back to the system. The
/// spare buffers never pass the most the live nodes held, and go when the transaction does,
/// but for a few (`AppendWriter.keptSpares`) the store's writer keeps for its next one.
final class DirtyBudget {
    @exclusivity(unchecked) var bytes = 0
    let limit: Int
    @exclusivity(unchecked) private var spares: [UnsafeMutableRawPointer] = []
    /// `spares`: buffers of `Node.initialCapacity` bytes a previous transaction handed over.
    init(limit: Int, spares: [UnsafeMutableRawPointer] = []) {
        self.limit = limit
        self.spares = spares
    }
    var isExceeded: Bool { bytes > limit }

    deinit { for buffer in spares { buffer.deallocate() } }

    /// A node buffer of `capacity` bytes (a spare one when it has the usual size).
    @inline(__always)
    func allocate(_ capacity: Int) -> UnsafeMutableRawPointer {
        if capacity == Node.initialCapacity, let spare = spares.popLast() { return spare }
        return UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
    }

    /// Takes back a buffer `allocate` gave.
    @inline(__always)
    func release(_ buffer: UnsafeMutableRawPointer, capacity: Int) {
        if capacity == Node.initialCapacity && spares.count < DirtyBudget.maximumSpares(limit) {
            spares.append(buffer)
        } else {
            buffer.deallocate()
        }
    }

    /// Takes the spare buffers, at most `count` of them (the rest are freed): for the store's
    /// next transaction, whose nodes then start without a `malloc` each.
    func takeSpares(keeping count: Int) -> [UnsafeMutableRawPointer] {
        var taken = spares
        spares = []
        while taken.count > count { taken.removeLast().deallocate() }
        return taken
    }

    /// Spare buffers kept at most: the budget's worth, and no more than 32 MiB.
    private static func maximumSpares(_ limit: Int) -> Int { Swift.min(limit, 32 << 20) / Node.initialCapacity }
}
