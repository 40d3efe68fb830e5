import Foundation
import Observation
@_spi(StorageBackend) import StrataRecords

/// A history token of any kind, as `HistoryObserver` keeps them by store. Same as SwiftData's
/// `HistoryToken`.
public protocol HistoryToken: Codable, Comparable, Hashable, Identifiable, Sendable {}

extension DefaultHistoryToken: HistoryToken {}

/// Counts the history transactions the container's stores commit from now on (or after
/// `historyTokens`): `eventCounter` grows by one for each transaction that changes one of
/// `observedModels` (any model when empty) by one of `authors` (any author when empty), from
/// any context, container or process, and `historyTokens` follows the newest token of each
/// store. Observe `eventCounter`, then fetch the history after the tokens you kept. Same as
/// SwiftData's `HistoryObserver` (iOS 27); make it on the actor that reads it.
///
/// Differs from SwiftData: the meaning of `authors` is a guess (transactions by those
/// authors count, others do not); related models of `observedModels` are not added.
public final class HistoryObserver: Observable {
    private let registrar = ObservationRegistrar()
    /// The container whose stores are observed. Same as SwiftData.
    public let modelContainer: ModelContainer
    private let observedNames: Set<String>
    private let authors: Set<String>
    private var counter = 0
    private var tokens: [String: any HistoryToken]
    /// Where the transactions are read from, and the hub's identifier of the follower that
    /// reads them after each commit (nil once the history it had yet to read was pruned).
    private var changes: HistoryChanges.Iterator
    private var follower: UInt64?

    /// Grows by one for each relevant transaction. Same as SwiftData.
    public var eventCounter: Int {
        registrar.access(self, keyPath: \.eventCounter)
        return counter
    }

    /// The newest token seen of each store, by store identifier. Same as SwiftData.
    public var historyTokens: [String: any HistoryToken] {
        registrar.access(self, keyPath: \.historyTokens)
        return tokens
    }

    /// Same as SwiftData's `init(historyTokens:observedModels:authors:modelContainer:isolation:)`.
    /// - Throws: what reading the stores' newest tokens throws.
    public init(historyTokens: [String: any HistoryToken]? = nil, observedModels: [any PersistentModel.Type] = [], authors: Set<String> = [],
                modelContainer: ModelContainer, isolation: isolated (any Actor)? = #isolation) throws {
        self.modelContainer = modelContainer
        self.observedNames = Set(observedModels.map { String(describing: $0) })
        self.authors = authors
        let start = try historyTokens?.compactMapValues { $0 as? DefaultHistoryToken }
            ?? HistoryChanges.newest(modelContainer).reduce(into: [:]) { $0[$1.key] = DefaultHistoryToken(tokenValue: $1.value, storeIdentifier: $1.key) }
        self.tokens = start
        changes = modelContainer.historyChanges(after: Array(start.values)).makeAsyncIterator()
        let hub = modelContainer.changeHub
        let generation = hub.generation
        let weak = WeakHistoryObserver(self)
        follower = hub.follow(CommitFollower(isolation: isolation) { weak.observer?.catchUp() }, since: generation)
    }

    deinit { if let follower { modelContainer.changeHub.unfollow(follower) } }

    /// Hands each transaction committed since the last read to `receive`, on the observer's
    /// actor (after each commit). Stops following when the history it has yet to read was
    /// pruned (the counter then stays where it was, as it did when this read a `HistoryChanges`).
    fileprivate func catchUp() {
        do {
            for notice in try changes.available() { receive(notice) }
        } catch {
            if let follower { modelContainer.changeHub.unfollow(follower) }
            follower = nil
        }
    }

    fileprivate func receive(_ notice: HistoryNotice) {
        registrar.withMutation(of: self, keyPath: \.historyTokens) { tokens[notice.token.storeIdentifier] = notice.token }
        guard authors.isEmpty || notice.author.map(authors.contains) == true else { return }
        if !observedNames.isEmpty {
            let touched = (notice.inserted + notice.updated + notice.deleted).contains { observedNames.contains($0.entityName) }
            guard touched else { return }
        }
        registrar.withMutation(of: self, keyPath: \.eventCounter) { counter += 1 }
    }
}

private final class WeakHistoryObserver: @unchecked Sendable {
    weak var observer: HistoryObserver?
    init(_ observer: HistoryObserver) { self.observer = observer }
}
