// What must hold of a node after every change, and the check of it (after swift-collections'
// `_BTree+Invariants.swift`).
//
// `invariantViolations()` lists what is wrong with a node, in every build: the tests call it on
// nodes they break on purpose. It also runs after every change a node's operations make
// (`checkAfterEdit`), and stops at the first broken node, naming it and what broke, so that a
// bug shows where it happens rather than as a damaged page three commits later, when:
// - the build was made with STRATA_INTERNAL_CHECKS set (Package.swift says how): always;
// - or in a debug build, when the process runs with STRATA_INTERNAL_CHECKS set (to anything
//   but "" or "0"), as CI runs the engine's tests a second time on the build the tests made.
// A release build without the flag compiles that call to nothing.

#if DEBUG && !STRATA_INTERNAL_CHECKS
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// STRATA_INTERNAL_CHECKS in the environment of a debug build's process (read once).
private let nodeChecksRequested: Bool = {
    guard let value = getenv("STRATA_INTERNAL_CHECKS") else { return false }
    let text = String(cString: value)
    return !text.isEmpty && text != "0"
}()
#endif

extension Node {
    /// One broken invariant of a node: which one, and what was found.
    struct InvariantViolation: Equatable, CustomStringConvertible {
        enum Invariant: String {
            /// The header in the buffer says what the node holds: kind, prefix length, count,
            /// and a checksum of 0 (a dirty page).
            case header
            /// Header, prefix and slots lie before the cells, the cells inside the buffer.
            case layout
            /// Every slot points at a whole cell inside the cell area.
            case slotInRange
            /// Keys ascend strictly (a branch's key 0 is not compared: it means "lowest").
            case keysAscending
            /// `encodedSize` is the size the node's header, prefix, slots and cells add up to.
            case encodedSize
            /// `garbage` is the bytes of the cell area that no slot refers to.
            case garbage
            /// A branch has one entry of `children` per cell; a leaf has none.
            case children
            /// A packed node is a well-formed packed leaf where it lies (`PageLayout.checkStructure`).
            case packedPage
        }

        let invariant: Invariant
        let detail: String

        var description: String { "\(invariant.rawValue): \(detail)" }
    }

    /// Every invariant this node breaks (none for a sound node). Reads only inside its buffer,
    /// however broken the node is.
    func invariantViolations() -> [InvariantViolation] {
        var found: [InvariantViolation] = []
        func broken(_ invariant: InvariantViolation.Invariant, _ detail: String) {
            found.append(InvariantViolation(invariant: invariant, detail: detail))
        }
        if isLeaf ? !children.isEmpty : children.count != count {
            broken(.children, "\(children.count) children for \(count) cells of a \(isLeaf ? "leaf" : "branch")")
        }
        if isPacked {
            checkPacked(broken)
        } else {
            checkCells(broken)
        }
        return found
    }

    /// True when every node is checked after every edit: a build with STRATA_INTERNAL_CHECKS,
    /// or a debug build run with it in its environment.
    static var checksAfterEveryEdit: Bool {
        #if STRATA_INTERNAL_CHECKS
        return true
        #elseif DEBUG
        return nodeChecksRequested
        #else
        return false
        #endif
    }

    /// A description of the node for a message: its kind, mode and size, and the page it was
    /// copied from when it was.
    var invariantCheckName: String {
        var name = "\(isPacked ? "packed leaf" : isLeaf ? "leaf" : "branch") node of \(count) cells, "
            + "prefix \(prefixLength) bytes, encodedSize \(encodedSize)"
        #if STRATA_INTERNAL_CHECKS || DEBUG
        if let copiedFrom { name += ", copied from the page at byte \(copiedFrom)" } else { name += ", not copied from a page" }
        #endif
        return name
    }

    /// Runs `invariantViolations()` after a change when `checksAfterEveryEdit`, and stops if any
    /// invariant is broken; nothing in a release build without STRATA_INTERNAL_CHECKS.
    @inline(__always)
    func checkAfterEdit(_ operation: StaticString) {
        #if STRATA_INTERNAL_CHECKS || DEBUG
        guard Node.checksAfterEveryEdit else { return }
        let violations = invariantViolations()
        if !violations.isEmpty {
            let list = violations.map(\.description).joined(separator: "; ")
            preconditionFailure("Node invariant broken after \(operation) (\(invariantCheckName)): \(list)")
        }
        #endif
    }

    /// The invariants of a node laid out with its cells' lengths (not packed).
    private func checkCells(_ broken: (InvariantViolation.Invariant, String) -> Void) {
        let kind = buffer.load(fromByteOffset: PageLayout.kindOffset, as: UInt8.self)
        let storedPrefix = Int(buffer.load(fromByteOffset: PageLayout.prefixLengthOffset, as: UInt8.self))
        let storedCount = Int(UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: PageLayout.countOffset, as: UInt16.self)))
        let checksum = buffer.loadUnaligned(fromByteOffset: PageLayout.checksumOffset, as: UInt32.self)
        if kind != (isLeaf ? PageLayout.kindLeaf : PageLayout.kindBranch) || storedPrefix != prefixLength
            || storedCount != count || checksum != 0 || origin != 0 {
            broken(.header, "kind \(kind), prefix length \(storedPrefix), count \(storedCount), checksum \(checksum), "
                   + "origin \(origin) in the buffer, for a \(isLeaf ? "leaf" : "branch") of prefix \(prefixLength) and \(count) cells")
            return
        }
        guard slotsEnd <= cellsStart, cellsStart <= capacity, capacity <= Node.largestCapacity else {
            broken(.layout, "slots end at \(slotsEnd), cells start at \(cellsStart), capacity \(capacity)")
            return
        }
        // Each cell inside the cell area. (Not checked apart: that no two cells overlap. A slot
        // at another slot's cell repeats its key, which the key order catches; other overlaps
        // count bytes twice, so the garbage below does not add up unless sizes cancel out.)
        var cellBytes = 0
        for i in 0..<count {
            let start = slot(i)
            guard start >= cellsStart, start < capacity, let size = checkedCellSize(at: start) else {
                broken(.slotInRange, "slot \(i) points at \(start), outside the cells \(cellsStart)..<\(capacity) or at a cell that runs past them")
                return
            }
            cellBytes += size
        }
        let computed = slotsEnd + cellBytes
        if encodedSize != computed {
            broken(.encodedSize, "encodedSize is \(encodedSize), the header, prefix, slots and cells add up to \(computed)")
        }
        let unreferenced = capacity - cellsStart - cellBytes
        if garbage != unreferenced {
            broken(.garbage, "garbage is \(garbage), the cell area holds \(unreferenced) bytes no slot refers to")
        }
        checkKeyOrder(broken)
    }

    /// The invariants of a packed node: a well-formed packed leaf of `encodedSize` bytes at
    /// `origin`, whose header agrees with the node.
    private func checkPacked(_ broken: (InvariantViolation.Invariant, String) -> Void) {
        guard isLeaf, origin >= 0, origin + encodedSize <= capacity, encodedSize >= PageLayout.headerSize, garbage == 0 else {
            broken(.layout, "a packed \(isLeaf ? "leaf" : "branch") of \(encodedSize) bytes at \(origin) in \(capacity), garbage \(garbage)")
            return
        }
        let base = buffer + origin
        let kind = base.load(fromByteOffset: PageLayout.kindOffset, as: UInt8.self)
        let storedPrefix = Int(base.load(fromByteOffset: PageLayout.prefixLengthOffset, as: UInt8.self))
        let storedCount = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: PageLayout.countOffset, as: UInt16.self)))
        let storedLength = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: PageLayout.lengthOffset, as: UInt16.self)))
        if kind != PageLayout.kindPackedLeaf || storedPrefix != prefixLength || storedCount != count {
            broken(.header, "kind \(kind), prefix length \(storedPrefix), count \(storedCount) at the page's start, "
                   + "for a packed leaf of prefix \(prefixLength) and \(count) cells")
            return
        }
        if storedLength != encodedSize {
            broken(.encodedSize, "encodedSize is \(encodedSize), the packed page's length \(storedLength)")
            return
        }
        // (A packed node may lose every cell, which no written page does: then it is its header,
        // prefix, shape and width.)
        let wellFormed = count == 0
            ? encodedSize == PageLayout.headerSize + prefixLength + PageLayout.packedExtraHeader
            : PageLayout.checkStructure(UnsafeRawPointer(base), length: encodedSize, offset: .max)
        guard wellFormed else {
            broken(.packedPage, "its \(encodedSize) bytes are not a well-formed packed leaf of \(count) cells")
            return
        }
        checkKeyOrder(broken)
    }

    /// Keys ascend strictly. Every key of a node starts with its prefix, so the suffixes
    /// compare as the keys do.
    private func checkKeyOrder(_ broken: (InvariantViolation.Invariant, String) -> Void) {
        let page = view
        let first = isLeaf ? 1 : 2
        guard count >= first else { return }
        for i in first..<count where compareBytes(page.suffix(i - 1), page.suffix(i)) >= 0 {
            broken(.keysAscending, "key \(i - 1) is not below key \(i)")
            return
        }
    }

    /// The size of the cell at `position` of an unpacked node, its lengths read without
    /// trusting them; nil when they do not fit the buffer.
    private func checkedCellSize(at position: Int) -> Int? {
        var p = position
        guard let k = Varint.readChecked(buffer, &p, end: capacity) else { return nil }
        var size = p - position + k
        if isLeaf {
            guard let info = Varint.readChecked(buffer, &p, end: capacity) else { return nil }
            size = p - position + k + (info >> 2)
        } else {
            size += PageLayout.childReferenceSize
        }
        return position + size <= capacity ? size : nil
    }
}
