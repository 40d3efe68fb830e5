import Foundation
import StrataEngine

/// An error from Strata's object layer: a code to match on, a message a person can act on,
/// and the underlying cause (often a `StoreError` from the engine).
///
/// `description` and `localizedDescription` give the message, the code (and the engine's),
/// the store and the system's cause, each once.
///
/// Differs from SwiftData, which reports most of these as crashes or untyped Core Data errors.
public struct StrataError: Error, Sendable, CustomStringConvertible, LocalizedError {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// A model class cannot be persisted as declared.
        public static let invalidSchema = Code("invalidSchema")
        /// The store was written with a different schema and no migration covers the difference.
        public static let schemaMismatch = Code("schemaMismatch")
        /// Another container of this process migrated the store to a new schema while this
        /// container (of the old models) had it open: it may fetch and save no more. Objects
        /// it fetched keep their values; open a container with the new models.
        public static let schemaChanged = Code("schemaChanged")
        /// A save would give two stored objects the same value for a unique attribute.
        public static let uniqueConstraintViolation = Code("uniqueConstraintViolation")
        /// The configuration does not allow saving (`allowsSave: false`), or the store file
        /// may not be written (its permissions, a read-only mount).
        public static let readOnly = Code("readOnly")
        /// A persisted property of an object being saved was never set.
        public static let unsetProperty = Code("unsetProperty")
        /// A stored record does not decode as the model says (damage, or a wrong schema).
        public static let corruptRecord = Code("corruptRecord")
        /// The model is not part of the container's schema.
        public static let unknownModel = Code("unknownModel")
        /// A save would delete an object whose `.deny` relationship still refers to objects.
        public static let deleteDenied = Code("deleteDenied")
        /// A to-many relationship holds fewer or more objects than its declared counts allow.
        public static let relationshipCount = Code("relationshipCount")
        /// A save changes or deletes objects whose stored rows another context or process
        /// deleted after this context read them (`objects` names them). Nothing was saved, and
        /// the context keeps its changes: roll back or refetch, then save again. Core Data's
        /// default merge policy fails such a save the same way (`NSManagedObjectMergeError`).
        public static let saveConflict = Code("saveConflict")
        /// The storage engine failed (see `underlying`): I/O, a full disk, a locked store...
        public static let storeFailure = Code("storeFailure")
        /// A history fetch names a token older than what the store's history still holds (it
        /// was pruned, by retention or `deleteHistory`). Same as SwiftData's
        /// `SwiftDataError.historyTokenExpired`.
        public static let historyTokenExpired = Code("historyTokenExpired")
        public var description: String { name }

        /// Matches a `StrataError` of this code in a `catch` pattern.
        public static func ~= (code: Code, error: any Error) -> Bool { (error as? StrataError)?.code == code }
    }

    /// `catch StrataError.historyTokenExpired`, as SwiftData's `catch SwiftDataError.historyTokenExpired`.
    public static let historyTokenExpired = Code.historyTokenExpired

    public let code: Code
    public let message: String
    public let underlying: (any Error)?
    /// The objects the error is about, where it names some (`saveConflict`).
    public let objects: [PersistentIdentifier]

    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil, objects: [PersistentIdentifier] = []) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.objects = objects
    }

    public var description: String {
        var text = "\(message) [\(code)]"
        if let store = underlying as? StoreError {
            // The message already carries the engine's message: add only what it lacks.
            if store.code.description != code.description { text += " [\(store.code)]" }
            if !store.path.isEmpty && !message.contains(store.path) { text += " store: \(store.path)" }
            if let offset = store.offset, !message.contains("byte \(offset)") { text += " at byte \(offset)" }
            if let cause = store.underlying { text += " (\(StoreError.cause(cause, of: store.path)))" }
        } else if let underlying {
            text += " (\(underlying))"
        }
        return text
    }

    /// The same as `description`, for `localizedDescription`.
    public var errorDescription: String? { description }

    package static func schema(_ message: String) -> StrataError { StrataError(.invalidSchema, message) }

    package static func unsetProperty(entity: String, property: String) -> StrataError {
        StrataError(.unsetProperty, "\(entity).\(property) has no value, so the object cannot be saved. Set it in the initializer or give it a default value.")
    }

    /// Wraps an engine error with what the object layer was doing.
    package static func store(_ error: any Error, while what: String) -> any Error {
        if error is StrataError { return error }
        if let store = error as? StoreError {
            return StrataError(.storeFailure, "Strata could not \(what): \(store.message)", underlying: store)
        }
        if let failure = error as? ValueDecodingFailure {
            return StrataError(.corruptRecord, "Strata could not \(what): a stored record has \(failure.message). The store is damaged or was written with another schema.")
        }
        return error
    }
}
