// `SwiftData.Schema([...])`, `SwiftData.ModelContainer`: SwiftData code that qualifies a name
// with its module compiles with `import StrataData` too. Where SwiftData exists, `import
// StrataData` is `import SwiftData` (StrataData.swift), so the qualified names are SwiftData's own
// and this namespace is not there.
#if !canImport(SwiftData)
import Foundation
import Strata

/// SwiftData's types under the module's name, for code that spells them qualified
/// (`SwiftData.Schema([Bird.self])`, `SwiftData.ModelContainer(for:)`, `any
/// SwiftData.PersistentModel`): each is Strata's type of the same name.
///
/// Differs from SwiftData: here `SwiftData` is an enum of type aliases in StrataData, not a
/// module. Macros cannot be declared in a type, so `@SwiftData.Model`, `@SwiftData.Attribute`
/// and `#SwiftData.Predicate` do not compile: write `@Model`, `@Attribute`, `#Predicate`.
/// `SortDescriptor` and `Predicate`, which SwiftData code takes from Foundation (SwiftData
/// re-exports it), are Foundation's.
public enum SwiftData {
    // MARK: Container, context, configuration

    /// Same as SwiftData's `Schema`.
    public typealias Schema = Strata.Schema
    /// Same as SwiftData's `ModelContainer`.
    public typealias ModelContainer = Strata.ModelContainer
    /// Same as SwiftData's `ModelContext`.
    public typealias ModelContext = Strata.ModelContext
    /// Same as SwiftData's `ModelConfiguration`.
    public typealias ModelConfiguration = Strata.ModelConfiguration
    /// Same as SwiftData's `SchemaProperty`.
    public typealias SchemaProperty = Strata.SchemaProperty

    // MARK: Models

    /// Same as SwiftData's `PersistentModel`.
    public typealias PersistentModel = Strata.PersistentModel
    /// Same as SwiftData's `PersistentIdentifier`.
    public typealias PersistentIdentifier = Strata.PersistentIdentifier

    // MARK: Fetching

    /// Same as SwiftData's `FetchDescriptor`.
    public typealias FetchDescriptor<T: Strata.PersistentModel> = Strata.FetchDescriptor<T>
    /// Same as SwiftData's `FetchResultsCollection`.
    public typealias FetchResultsCollection<T: Strata.PersistentModel> = Strata.FetchResultsCollection<T>
    /// Foundation's `SortDescriptor`, as `SwiftData.SortDescriptor` is where SwiftData re-exports
    /// Foundation.
    public typealias SortDescriptor<Compared> = Foundation.SortDescriptor<Compared>
    /// Foundation's `Predicate`, as `SwiftData.Predicate` is where SwiftData re-exports Foundation.
    public typealias Predicate<each Input> = Foundation.Predicate<repeat each Input>

    // MARK: Migrations

    /// Same as SwiftData's `VersionedSchema`.
    public typealias VersionedSchema = Strata.VersionedSchema
    /// Same as SwiftData's `SchemaMigrationPlan`.
    public typealias SchemaMigrationPlan = Strata.SchemaMigrationPlan
    /// Same as SwiftData's `MigrationStage`.
    public typealias MigrationStage = Strata.MigrationStage

    // MARK: Actors

    /// Same as SwiftData's `ModelActor`.
    public typealias ModelActor = Strata.ModelActor
    /// Same as SwiftData's `ModelExecutor`.
    public typealias ModelExecutor = Strata.ModelExecutor
    /// Same as SwiftData's `SerialModelExecutor`.
    public typealias SerialModelExecutor = Strata.SerialModelExecutor
    /// Same as SwiftData's `DefaultSerialModelExecutor`.
    public typealias DefaultSerialModelExecutor = Strata.DefaultSerialModelExecutor

    // MARK: History

    /// Same as SwiftData's `HistoryDescriptor`.
    public typealias HistoryDescriptor<TransactionType: Strata.HistoryTransaction> = Strata.HistoryDescriptor<TransactionType>
    /// Same as SwiftData's `HistoryToken`.
    public typealias HistoryToken = Strata.HistoryToken
    /// Same as SwiftData's `DefaultHistoryToken`.
    public typealias DefaultHistoryToken = Strata.DefaultHistoryToken
    /// Same as SwiftData's `HistoryTransaction`.
    public typealias HistoryTransaction = Strata.HistoryTransaction
    /// Same as SwiftData's `DefaultHistoryTransaction`.
    public typealias DefaultHistoryTransaction = Strata.DefaultHistoryTransaction
    /// Same as SwiftData's `HistoryChange`.
    public typealias HistoryChange = Strata.HistoryChange
    /// Same as SwiftData's `HistoryInsert`.
    public typealias HistoryInsert = Strata.HistoryInsert
    /// Same as SwiftData's `HistoryUpdate`.
    public typealias HistoryUpdate = Strata.HistoryUpdate
    /// Same as SwiftData's `HistoryDelete`.
    public typealias HistoryDelete = Strata.HistoryDelete
    /// Same as SwiftData's `DefaultHistoryInsert`.
    public typealias DefaultHistoryInsert<Model: Strata.PersistentModel> = Strata.DefaultHistoryInsert<Model>
    /// Same as SwiftData's `DefaultHistoryUpdate`.
    public typealias DefaultHistoryUpdate<Model: Strata.PersistentModel> = Strata.DefaultHistoryUpdate<Model>
    /// Same as SwiftData's `DefaultHistoryDelete`.
    public typealias DefaultHistoryDelete<Model: Strata.PersistentModel> = Strata.DefaultHistoryDelete<Model>
    /// Same as SwiftData's `HistoryTombstone`.
    public typealias HistoryTombstone<Model: Strata.PersistentModel> = Strata.HistoryTombstone<Model>

    // MARK: Custom stores

    /// Same as SwiftData's `DataStore`.
    public typealias DataStore = Strata.DataStore
    /// Same as SwiftData's `DataStoreConfiguration`.
    public typealias DataStoreConfiguration = Strata.DataStoreConfiguration
    /// Same as SwiftData's `DataStoreSnapshot`.
    public typealias DataStoreSnapshot = Strata.DataStoreSnapshot
    /// Same as SwiftData's `DataStoreSnapshotCodingKey`.
    public typealias DataStoreSnapshotCodingKey = Strata.DataStoreSnapshotCodingKey
    /// Same as SwiftData's `DataStoreSnapshotValue`.
    public typealias DataStoreSnapshotValue = Strata.DataStoreSnapshotValue
    /// Same as SwiftData's `DefaultSnapshot`.
    public typealias DefaultSnapshot = Strata.DefaultSnapshot
    /// Same as SwiftData's `DefaultStore` (in role).
    public typealias DefaultStore = Strata.DefaultStore
    /// Same as SwiftData's `BackingData` (in role).
    public typealias BackingData = Strata.BackingData
    /// Same as SwiftData's `DataStoreFetchRequest`.
    public typealias DataStoreFetchRequest<T: Strata.PersistentModel> = Strata.DataStoreFetchRequest<T>
    /// Same as SwiftData's `DataStoreFetchResult`.
    public typealias DataStoreFetchResult<ModelType: Strata.PersistentModel, SnapshotType: Strata.DataStoreSnapshot>
        = Strata.DataStoreFetchResult<ModelType, SnapshotType>
    /// Same as SwiftData's `DataStoreSaveChangesRequest`.
    public typealias DataStoreSaveChangesRequest<SnapshotType: Strata.DataStoreSnapshot> = Strata.DataStoreSaveChangesRequest<SnapshotType>
    /// Same as SwiftData's `DataStoreSaveChangesResult`.
    public typealias DataStoreSaveChangesResult<T: Strata.DataStoreSnapshot> = Strata.DataStoreSaveChangesResult<T>
    /// Same as SwiftData's `DataStoreBatchDeleteRequest`.
    public typealias DataStoreBatchDeleteRequest<T: Strata.PersistentModel> = Strata.DataStoreBatchDeleteRequest<T>
    /// Same as SwiftData's `DataStoreBatching`.
    public typealias DataStoreBatching = Strata.DataStoreBatching
    /// Same as SwiftData's `HistoryProviding`.
    public typealias HistoryProviding = Strata.HistoryProviding
    /// Same as SwiftData's `EditingState`.
    public typealias EditingState = Strata.EditingState
    /// Same as SwiftData's `DataStoreError`.
    public typealias DataStoreError = Strata.DataStoreError
}
#endif
