import Foundation
import Synchronization

/// An error from the storage engine: a code to match on, a message a person can act on,
/// and the underlying cause when there is one.
///
/// ```swift
/// do { try store.write { try $0.put(bytes, row: 1, in: users, indexKeys: keys) } }
/// catch let error as StoreError where error.code == .uniqueConstraintViolation { ... }
/// ```
///
/// `description` (and so `localizedDescription`) says each thing once: the message, the code,
/// the store, the byte offset and the cause.
public struct StoreError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// What kind of failure this is. New codes may be added; match the ones you handle.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, Sendable {
            case notAStore, newerFormat, olderFormat, corrupt, locked, readOnly, closed
            case writesRefused, ioFailure, diskFull, uniqueConstraintViolation
            case keyTooLarge, valueTooLarge, notFound, invalidArgument, indexKeyMismatch, replaced
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
        /// The store was opened read-only, or its file may not be written (permissions, a
        /// read-only mount).
        public static let readOnly = Code(.readOnly)
        /// The store (or transaction) has been closed.
        public static let closed = Code(.closed)
        /// An earlier write or sync failed and the store cannot go on with its file (it was
        /// replaced meanwhile): close it and open it again. (After an ordinary failed write or
        /// sync, the next write reopens the file by itself; see `Store.write`.)
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
        /// There is no store at the path (or no folder to create it in), or a named collection,
        /// index or blob does not exist.
        public static let notFound = Code(.notFound)
        /// An argument makes no sense (for example an index of another collection).
        public static let invalidArgument = Code(.invalidArgument)
        /// The previous index keys given for a row (to update or delete it) are not the keys
        /// it was stored with; nothing was changed.
        public static let indexKeyMismatch = Code(.indexKeyMismatch)
        /// Another file was put at the store's path (renamed over it), or the file was removed,
        /// while this store had it open: nothing more is written to the file this store has
        /// open. Open the store again to use the file at the path now.
        public static let replaced = Code(.replaced)

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
        if let underlying { text += " (\(StoreError.cause(underlying, of: path)))" }
        return text
    }

    /// The underlying error in words, without repeating the store's path.
    package static func cause(_ underlying: any Error, of path: String) -> String {
        (underlying as? SystemError)?.description(omitting: path) ?? "\(underlying)"
    }

    /// The same as `description`, for `localizedDescription`.
    public var errorDescription: String? { description }

    static func corrupt(_ what: String, path: String, offset: UInt64?) -> StoreError {
        StoreError(.corrupt,
                   "The store is damaged: \(what). Restore it from a backup, or run `strata verify` to see the extent of the damage.",
                   path: path, offset: offset)
    }

    /// What a failed commit means, and what to do: the message of every failed write of a
    /// transaction.
    static let transactionLost = "Nothing of this transaction was saved."
    static let nextWriteReopens = "The next write reopens the store file and goes on from the last commit."

    /// Wraps a failed I/O call, telling a full disk from other failures. The message says
    /// what failed (`what`), what it means for the data (`consequence`), and what happens next
    /// (`next`); a full disk adds that space must be freed.
    static func io(_ error: any Error, doing what: String, path: String, consequence: String = "", next: String = "") -> StoreError {
        if let store = error as? StoreError { return store }
        let consequence = consequence.isEmpty ? "" : " " + consequence
        if let system = error as? SystemError, system.isDiskFull {
            let then = next.isEmpty ? "." : ": " + next.prefix(1).lowercased() + next.dropFirst()
            return StoreError(.diskFull, "The disk is full while \(what).\(consequence) Free some space, then try again\(then)",
                              path: path, underlying: system)
        }
        let sendable: any Error = error
        return StoreError(.ioFailure, "An I/O operation failed while \(what).\(consequence)\(next.isEmpty ? "" : " " + next)",
                          path: path, underlying: sendable)
    }

    /// Why the store file could not be opened, in words that say what to do.
    static func opening(_ error: any Error, path: String, readOnly: Bool, creating: Bool) -> StoreError {
        guard let system = error as? SystemError else { return io(error, doing: "opening the store file", path: path) }
        if system.pathIsAFolder {
            return StoreError(.notAStore, "This path is a folder, not a store file. Give the path of the store's file (such as app.store), not of the folder that holds it.",
                              path: path, underlying: system)
        }
        if creating && system.pathIsMissing {
            return StoreError(.notFound, "The folder \(path.parentDirectory) does not exist, so the store cannot be created in it. Create the folder first, or check the path.",
                              path: path, underlying: system)
        }
        if system.isWriteDenied && creating {
            return StoreError(.ioFailure, "The store file cannot be created in \(path.parentDirectory) (\(system.reason)). Choose a folder this user may write to.",
                              path: path, underlying: system)
        }
        if system.isWriteDenied && !readOnly {
            return StoreError(.readOnly, "The store file cannot be opened for writing (\(system.reason)). Open it read-only (StoreOptions(readOnly: true)) to read it, or change its permissions or mount to write to it.",
                              path: path, underlying: system)
        }
        if system.isDiskFull { return io(error, doing: "creating the store", path: path) }
        return StoreError(.ioFailure, "The store file cannot be opened (\(system.reason)).", path: path, underlying: system)
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
