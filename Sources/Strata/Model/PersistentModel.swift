import Foundation
import Observation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// A class whose instances Strata persists. Same role as SwiftData's `PersistentModel`, which
/// SwiftData's `@Model` macro adds; without the macro (StrataData), a model declares it:
///
/// ```swift
/// final class Trip: PersistentModel {
///     @Attribute(.unique) var id: UUID
///     @Attribute var name: String
///     @Attribute var budget: Double? = nil
///     @Transient var isExpanded = false
///
///     init() {}   // Strata makes loaded objects with this: keep it cheap (no UUID(), no Date())
///     init(name: String) { id = UUID(); self.name = name }
///
///     static var uniqueConstraints: [[PartialKeyPath<Trip>]] { [[\.name, \.budget]] }   // #Unique
///     static var indexes: [[PartialKeyPath<Trip>]] { [[\.name]] }                        // #Index
/// }
/// ```
/// Every persisted stored property carries `@Attribute` (or `@Relationship`); `@Transient`
/// marks one that is never persisted. Any other stored property is a schema error.
///
/// Models are `Observable`, as in SwiftData: `withObservationTracking { _ = trip.name }` is told
/// when `name` is set, when `rollback()` restores it, and when a relationship changes on
/// either side.
public protocol PersistentModel: AnyObject, Identifiable, Hashable, Observable, OptionalRelationshipWrapped {
    /// The class whose key paths `uniqueConstraints` and `indexes` use: the model itself
    /// (inferred). An associated type rather than `Self`, so that a non-final model class can
    /// be subclassed by other models.
    associatedtype ConstraintRoot = Self
    /// Makes an empty instance; Strata calls it once per object it loads.
    init()
    /// Compound unique constraints (SwiftData's `#Unique`), as `[[PartialKeyPath<Model>]]`. Default: none.
    static var uniqueConstraints: [[PartialKeyPath<ConstraintRoot>]] { get }
    /// Secondary indexes (SwiftData's `#Index`), as `[[PartialKeyPath<Model>]]`. Default: none.
    static var indexes: [[PartialKeyPath<ConstraintRoot>]] { get }
    /// `#Unique`'s groups by property name, which StrataData's macro writes beside
    /// `uniqueConstraints` when each key path names a property directly (`\.name`). Discovery
    /// reads them instead of the key paths, whose classes a fresh process would make for that
    /// alone; in debug builds it holds the two to the same groups. Default: nil (the key paths
    /// are read). Macro support; SwiftData has no such member.
    static var _uniqueConstraintNames: [[String]]? { get }
    /// `#Index`'s groups by property name, as `_uniqueConstraintNames` is `#Unique`'s.
    /// Macro support; SwiftData has no such member.
    static var _indexNames: [[String]]? { get }
    /// The stored properties, as StrataData's `@Model` writes them out; none for a model
    /// without the macro, whose properties Strata finds by reflection. Same as SwiftData's
    /// `schemaMetadata`.
    static var schemaMetadata: [Schema.PropertyMetadata] { get }
}

extension PersistentModel {
    public static var uniqueConstraints: [[PartialKeyPath<ConstraintRoot>]] { [] }
    public static var indexes: [[PartialKeyPath<ConstraintRoot>]] { [] }
    public static var _uniqueConstraintNames: [[String]]? { nil }
    public static var _indexNames: [[String]]? { nil }
    public static var schemaMetadata: [Schema.PropertyMetadata] { [] }

    /// Identity: two references are equal when they are the same object. Same as SwiftData.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The model's identifier; for models that declare no `id` of their own. Same as SwiftData.
    public var id: PersistentIdentifier { persistentModelID }

    /// The object's backing, if it has one.
    var backing: ModelBacking? { EntityRegistry.shared.entity(forClassOf: self)?.backing(of: self) }

    /// The object's identifier in its store. Before the object is inserted into a context, a
    /// temporary identifier. Same as SwiftData's `persistentModelID`.
    public var persistentModelID: PersistentIdentifier {
        if let backing, backing.rowID != 0, backing.status != .detached || backing.storeIdentifier != nil {
            return backing.storedIdentifier ?? PersistentIdentifier(scope: backing.entity.temporaryScope, rowID: Int64(bitPattern: backing.rowID))
        }
        return PersistentIdentifier(entityName: TypeNames.plain(Self.self), storeIdentifier: nil,
                                    rowID: -Int64(UInt(bitPattern: ObjectIdentifier(self).hashValue) & 0x7FFF_FFFF_FFFF))
    }

    /// The context the object is registered in, if any. Same as SwiftData's `modelContext`.
    public var modelContext: ModelContext? {
        guard let backing, backing.status != .detached else { return nil }
        return backing.context
    }

    /// True from `ModelContext.delete(_:)` until the deletion is saved (or rolled back).
    /// Same as SwiftData's `isDeleted`.
    public var isDeleted: Bool { backing?.status == .deleted }

    /// True when the object is inserted, changed or deleted and not yet saved. Same as SwiftData.
    public var hasChanges: Bool {
        guard let backing else { return false }
        return backing.status == .inserted || backing.status == .deleted || backing.isChanged
    }
}
