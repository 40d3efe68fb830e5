import Foundation
import StrataEngine

/// The bookkeeping of one registered object: its context, row and state. Every `@Attribute`
/// storage of the object points to it; it goes away with the object, and then unregisters it.
final class ModelBacking {
    enum Status { case inserted, persisted, deleted, detached }

    let entity: Entity?
    var rowID: RowID
    weak var context: ModelContext?
    var status: Status
    /// A persisted object whose properties were set since it was loaded or saved.
    var isChanged = false
    /// Some properties were not loaded (`propertiesToFetch`): reading one loads the rest.
    var isFault = false
    /// A deleted object that was inserted in the same unsaved session.
    var wasInserted = false
    let storeIdentifier: String?
    /// For the key-path probe only: which property this storage is, and where to record reads.
    let probeIndex: Int
    private let session: ProbeSession?

    init(entity: Entity, rowID: RowID, context: ModelContext, status: Status, storeIdentifier: String?) {
        self.entity = entity
        self.rowID = rowID
        self.context = context
        self.status = status
        self.storeIdentifier = storeIdentifier
        self.probeIndex = -1
        self.session = nil
    }

    init(probeIndex: Int, session: ProbeSession) {
        self.entity = nil
        self.rowID = 0
        self.status = .detached
        self.storeIdentifier = nil
        self.probeIndex = probeIndex
        self.session = session
    }

    deinit {
        if probeIndex < 0, let context {
            context.objectWentAway(self)
        }
    }

    func recordProbe(_ keyPath: AnyKeyPath) {
        session?.hits.append((probeIndex, keyPath))
    }

    /// Called by a setter before it changes a value.
    @inline(__always)
    func willChange(_ object: AnyObject) {
        guard status == .persisted, !isChanged else { return }
        isChanged = true
        context?.objectDidChange(object, self)
    }

    /// Loads the properties that were not fetched. Returns false if that is impossible.
    func fulfill(_ object: AnyObject) -> Bool {
        guard let context else { return false }
        return context.fulfillFault(object, self)
    }

    /// The message for reading a property that was never set.
    static func unsetMessage(_ object: AnyObject) -> String {
        let name = String(describing: type(of: object))
        var unset: [String] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        while let m = mirror {
            for child in m.children {
                if let storage = child.value as? AttributeStorage, !storage.hasValue, let label = child.label {
                    unset.append(label.hasPrefix("_") ? String(label.dropFirst()) : label)
                }
            }
            mirror = m.superclassMirror
        }
        let list = unset.isEmpty ? "" : " (unset: \(unset.joined(separator: ", ")))"
        return "\(name): a persisted property was read before it was set\(list). Set every persisted property in an initializer or give it a default value."
    }
}
