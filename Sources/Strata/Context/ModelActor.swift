import Dispatch
import Foundation
@_spi(StorageBackend) import StrataRecords

/// Runs the jobs of a model actor and owns its context. Same as SwiftData's `ModelExecutor`.
public protocol ModelExecutor: AnyObject, Sendable {
    /// The context the actor works with; use it only on the actor.
    var modelContext: ModelContext { get }
}

/// A model executor that is also a serial executor, so an actor can run on it.
/// Same as SwiftData's `SerialModelExecutor`.
public protocol SerialModelExecutor: ModelExecutor, SerialExecutor {}

/// Runs an actor's jobs one at a time on a private dispatch queue, with its own `ModelContext`.
/// Same as SwiftData's `DefaultSerialModelExecutor`.
public final class DefaultSerialModelExecutor: SerialModelExecutor, @unchecked Sendable {
    // @unchecked: the context is used only by jobs of this executor, which run one at a time.
    public let modelContext: ModelContext
    private let queue: DispatchQueue

    public init(modelContext: ModelContext) {
        self.modelContext = modelContext
        self.queue = DispatchQueue(label: "strata.model-actor")
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}

/// An actor that works with models on its own context, off the main actor.
/// Same as SwiftData's `ModelActor`; without SwiftData's `@ModelActor` macro, an actor
/// declares the two properties and the initializer itself:
///
/// ```swift
/// actor Importer: ModelActor {
///     nonisolated let modelContainer: ModelContainer
///     nonisolated let modelExecutor: any ModelExecutor
///     init(modelContainer: ModelContainer) {
///         self.modelContainer = modelContainer
///         self.modelExecutor = DefaultSerialModelExecutor(modelContext: ModelContext(modelContainer))
///     }
///
///     func importTrips(_ names: [String]) throws {
///         for name in names { modelContext.insert(Trip(name: name, startDate: .now)) }
///         try modelContext.save()
///     }
/// }
/// ```
public protocol ModelActor: Actor {
    /// The container the actor's context belongs to.
    nonisolated var modelContainer: ModelContainer { get }
    /// The executor that runs the actor and owns its context (a `DefaultSerialModelExecutor`).
    nonisolated var modelExecutor: any ModelExecutor { get }
}

extension ModelActor {
    /// The actor's own context.
    public var modelContext: ModelContext { modelExecutor.modelContext }

    /// The actor runs on its model executor, so its context is only used there.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        if let serial = modelExecutor as? any SerialModelExecutor {
            return serial.asUnownedSerialExecutor()
        }
        preconditionFailure("\(Self.self).modelExecutor must be a SerialModelExecutor, such as DefaultSerialModelExecutor.")
    }

    /// The object with this identifier in the actor's context, or nil if the store has no
    /// such object of type `T`: `self[id, as: Trip.self]`. Same as SwiftData's subscript.
    public subscript<T: PersistentModel>(id: PersistentIdentifier, as type: T.Type) -> T? {
        (try? modelContext.existingModel(for: id)) as? T
    }
}
