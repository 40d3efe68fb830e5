import Synchronization

/// An error from the storage engine: a code to match on, a message a person can act on,
/// and the underlying cause when there is one.
///
/// ```swift
/// do { try store.write { try $0.put(bytes, row: 1, in: users, indexKeys: keys) } }
/// catch let error as StoreError where error.code == .uniqueConstraintViolation { ... }
/// ```
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added; match the ones you handle.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, Sendable {
            case notAStore, newerFormat, olderFormat, corrupt, locked, readOnly, closed
            case writesRefused, ioFailure, diskFull, uniqueConstraintViolation
            case keyTooLarge, valueTooLarge, notFound, invalidArgument, indexKeyMismatch
        }
        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// The file exists but is not a Strata store.
        public static let notAStore = Code(.notAStore)
        /// The store was written by a newer version of Strata.
        public static let newerFormat = Code(.newerFormat)
        /// The store uses an older file format; convert it with `strata upgrade PATH`
        /// (`Store.upgrade(path:)`).
        public static let olderFormat = Code(.olderFormat)
        /// The file's bytes fail a checksum or do not make sense.
        public static let corrupt = Code(.corrupt)
        /// Another process has the store open for writing.
        public static let locked = Code(.locked)
        /// The store was opened read-only.
        public static let readOnly = Code(.readOnly)
        /// The store (or transaction) has been closed.
        public static let closed = Code(.closed)
        /// An earlier write or sync failed; the store refuses writes until it is reopened.
        public static let writesRefused = Code(.writesRefused)
        /// A read, write or sync failed.
        public static let ioFailure = Code(.ioFailure)
        /// The disk (or quota) is full.
        public static let diskFull = Code(.diskFull)
        /// A unique index already holds the key for another row.
        public static let uniqueConstraintViolation = Code(.uniqueConstraintViolation)
        /// An index key is longer than the engine accepts.
        public static let keyTooLarge = Code(.keyTooLarge)
        /// A record is longer than the engine accepts.
        public static let valueTooLarge = Code(.valueTooLarge)
        /// A named collection, index or blob does not exist.
        public static let notFound = Code(.notFound)
        /// An argument makes no sense (for example an index of another collection).
        public static let invalidArgument = Code(.invalidArgument)
        /// The previous index keys given for a row (to update or delete it) are not the keys
        /// it was stored with; nothing was changed.
        public static let indexKeyMismatch = Code(.indexKeyMismatch)

        public var description: String { kind.rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What happened, where, and what to do about it.
    public let message: String
    /// The store file concerned.
    public let path: String
    /// The byte offset in the file where damage was found, for `.corrupt`.
    public let offset: UInt64?
    /// The underlying cause, such as a `SystemError`.
    public let underlying: (any Error & Sendable)?
    /// For `.uniqueConstraintViolation`: the index and the row that already holds the key.
    public let conflict: UniqueConflict?

    public init(_ code: Code, _ message: String, path: String, offset: UInt64? = nil,
                underlying: (any Error & Sendable)? = nil, conflict: UniqueConflict? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.offset = offset
        self.underlying = underlying
        self.conflict = conflict
    }

    public var description: String {
        var text = "\(message) [\(code)]"
        if !path.isEmpty { text += " store: \(path)" }
        if let offset { text += " at byte \(offset)" }
        if let underlying { text += " (\(underlying))" }
        return text
    }

    static func corrupt(_ what: String, path: String, offset: UInt64?) -> StoreError {
        StoreError(.corrupt,
                   "The store is damaged: \(what). Restore it from a backup, or run `strata verify` to see the extent of the damage.",
                   path: path, offset: offset)
    }

    /// Wraps a failed I/O call, telling a full disk from other failures.
    static func io(_ error: any Error, doing what: String, path: String) -> StoreError {
        if let store = error as? StoreError { return store }
        if let system = error as? SystemError, system.isDiskFull {
            return StoreError(.diskFull, "The disk is full while \(what); nothing of this transaction was saved. Free some space and try again.",
                              path: path, underlying: system)
        }
        let sendable: any Error = error
        return StoreError(.ioFailure, "An I/O operation failed while \(what); nothing of this transaction was saved.",
                          path: path, underlying: sendable)
    }
}

/// The existing holder of a unique key.
public struct UniqueConflict: Sendable, Hashable {
    public let index: IndexID
    public let key: [UInt8]
    public let existingRow: RowID
}

/// A flag that can be set once, from any thread.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    init() {}
    /// Sets the flag; returns true for the caller that set it first.
    func setOnce() -> Bool { !value.exchange(true, ordering: .acquiringAndReleasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
