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
/// When the history it had yet to read was pruned (it fell more than the store's retention
/// behind, or `deleteHistory` removed it), `eventCounter` grows by one, `historyError` is
/// `historyTokenExpired`, and it follows on from the newest transactions: a fetch of the history
/// after the tokens you kept then throws `historyTokenExpired` too, which says to fetch the
/// objects again. No transaction is skipped silently.
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
    /// reads them after each commit.
    private var changes: HistoryChanges.Iterator
    private var follower: UInt64?
    private var lastError: (any Error)?

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

    /// Why the last read of the history after a commit failed, nil when it succeeded:
    /// `historyTokenExpired` when the history this had yet to read was pruned (then
    /// `eventCounter` grew by one, and this follows on from the newest transactions), or what
    /// the read threw (then the next commit reads again from where this was). Observable.
    /// Strata extra.
    public var historyError: (any Error)? {
        registrar.access(self, keyPath: \.historyError)
        return lastError
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
    /// actor (after each commit). When the history it had yet to read was pruned, counts one
    /// event (the transactions it missed may have been relevant; the reader's fetch after its
    /// tokens then says they are gone) and follows on from the newest transactions.
    fileprivate func catchUp() {
        let notices: [HistoryNotice]
        do {
            notices = try changes.available()
        } catch let error as StrataError where error.code == .historyTokenExpired {
            changes = modelContainer.historyChanges().makeAsyncIterator()
            registrar.withMutation(of: self, keyPath: \.historyError) { lastError = error }
            registrar.withMutation(of: self, keyPath: \.eventCounter) { counter += 1 }
            return
        } catch {
            registrar.withMutation(of: self, keyPath: \.historyError) { lastError = error }
            return
        }
        if lastError != nil { registrar.withMutation(of: self, keyPath: \.historyError) { lastError = nil } }
        for notice in notices { receive(notice) }
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
