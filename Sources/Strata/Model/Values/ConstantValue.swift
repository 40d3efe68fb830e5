import Foundation
@_spi(StorageBackend) import StrataRecords

/// Where a predicate's constant of a known type sits in the predicate's expression tree, as the
/// query layer's `TreeLayout` records it (`TreeLayout.Constant`).
struct ConstantSlot {
    let offset: Int
    let type: Any.Type
    /// False for an `Optional`: its cast from `Any` is not the same as reading it (a nil
    /// inside an `Any` does not cast to an `Optional`), so it is read through `Any` as it
    /// always was, and the plans of optional constants stay as they were.
    let readsInPlace: Bool

    /// The constant in the tree at `tree`, as `Any`.
    func read(_ tree: UnsafeRawPointer) -> Any? {
        func read<T>(_: T.Type) -> Any? { (tree + offset).assumingMemoryBound(to: T.self).pointee }
        return _openExistential(type, do: read)
    }
}

/// A predicate's constant as a plan reads it when it is bound: in place in the expression tree
/// (so only while the tree is lent, like `Bindings`), or a value given as `Any`. A plan that
/// wants a `V` reads it directly when the constant is one, with no dynamic cast.
struct ConstantValue {
    private enum Storage {
        case inTree(UnsafeRawPointer, ConstantSlot)
        case any(Any)
    }
    private let storage: Storage

    init(_ value: Any) { storage = .any(value) }
    init(_ pointer: UnsafeRawPointer, _ constant: ConstantSlot) { storage = .inTree(pointer, constant) }

    /// The value as `Any` (nil only for a constant that reads as none).
    var any: Any? {
        switch storage {
        case .any(let value): value
        case .inTree(let pointer, let constant): constant.read(pointer - constant.offset)
        }
    }

    /// The value as a `V`, or nil if it is not one (as `any as? V` answers).
    @inline(__always)
    func value<V>(as _: V.Type) -> V? {
        if case .inTree(let pointer, let constant) = storage, constant.readsInPlace, constant.type == V.self {
            return pointer.assumingMemoryBound(to: V.self).pointee
        }
        return any.flatMap { $0 as? V }
    }
}
