// StrataConformance: the object layer's public behaviour, written once as scenarios and run on
// every kind of store: Strata's engine (`ModelConfiguration`), custom stores
// (`DataStoreConfiguration`) and PostgreSQL (`PostgresConfiguration`, package StrataPostgres).
// Issue 29: every test of the object layer's public behaviour that is not about files also
// passes on PostgreSQL; these scenarios are those tests, ported from Tests/StrataTests to the
// public API only (no `Testing`: a failed check throws a `ConformanceFailure`).
//
// A store-specific test file makes a `ConformanceStore` (a name, the capabilities the store
// lacks with the reason for each, and `fresh`, which gives a container on a new empty store and
// a way to open another container on that same store) and runs each scenario by name, from an
// async test:
//
//     @Test(arguments: Conformance.scenarios.map(\.name))
//     func postgres(_ name: String) async throws {
//         if case .skipped(let reason) = try await Conformance.run(name, on: store) { print(reason) }
//     }
//
// Tests/StrataTests/ConformanceTests.swift runs them on the engine and on the two custom stores of
// the root tests. A scenario that needs a `ConformanceCapability` the store lacks is skipped, with
// the store's reason; everything else is required of every store. Models: Models.swift (`Conf…`).
//
// Some scenarios wait for events (observers, history streams, model actors: Events.swift), each
// for at most `Conformance.eventBound`, never for a fixed time. Awaited (`run(_:) async`), they
// hold no thread while they wait. The blocking `run(_:)` runs them too, except those whose events
// come through tasks of Swift's global executor (`ResultsObserver`, `HistoryObserver`): blocking
// a thread of that executor (one per core) for them starves them once every thread waits so,
// and they fail at once asking to be awaited (marked [awaited] below).
//
// The 114 scenarios, and the root tests they come from (<-):
//
// Context: identity, change tracking, rollback, identifiers, notifications, observation (Scenarios+Context.swift):
//   insertSaveFetchReopen <- ModelBasicsTests.insertSaveFetchReopen
//   fetchingTwiceGivesTheSameInstance <- ContextTests.fetchingTwiceGivesTheSameInstance
//   changeTracking <- ContextTests.changeTracking, ContextTests.deletingAnUnsavedInsertForgetsIt
//   rollbackDropsInsertsAndDeletesAndRestoresValues <-
//         ContextTests.rollbackDropsInsertsAndDeletesAndRestoresValues
//   deleteIsAppliedAtSave <- ContextTests.deleteIsAppliedAtSave
//   insertingADeletedObjectUndoesTheDeletion <- ContextTests.insertingADeletedObjectUndoesTheDeletion
//   transactionAndAutosave <- ContextTests.transactionSavesAndAThrowingBlockSavesNothing,
//         ContextTests.autosaveOnProcessPendingChanges
//   modelForIdentifier <- ContextTests.modelForIdentifier,
//         JSONCustomStoreTests.savedObjectsTakeTheirPermanentIdentifiers,
//         FetchEdgeTests.modelForAnIdentifierOfAnotherSchemaIsNoModelOfThisOne
//   identifiersSurviveReopen <- IdentifierPredicateTests.fetchAndCountByIdentifier (in another
//         container), JSONCustomStoreTests.savedObjectsTakeTheirPermanentIdentifiers [needs
//         stableIdentifiers]
//   willSaveAndDidSaveNotifications <- ContextTests.willSaveAndDidSaveNotifications
//   observationOfPersistedProperties <- ObservationTests.settingAPersistedPropertyOfAFetchedObjectFires,
//         ObservationTests.rollbackRestoringAValueFires
//   observationOfRelationships <- ObservationTests.aRelationshipChangeFiresOnBothSides,
//         ObservationTests.aRelationshipSetOnTheToManySideFiresOnTheToOneSide
//   aSecondContainerOnTheSameStore <- ContextTests.aSecondContainerOnTheSameURLSharesTheOpenStore
//
// Values: every value type, read back from another container (Scenarios+Values.swift):
//   integersAndBoolsAtTheirEdges <- ValueRoundTripTests.everythingAtItsEdges
//   finiteFloatingPointKeepsItsBits <- ValueRoundTripTests.everythingAtItsEdges
//   nonFiniteNumbers <- ValueRoundTripTests.everythingAtItsEdges,
//         ValueRoundTripTests.decimalNaNRoundTrips [needs nonFiniteNumbers]
//   decimalsKeepTheirDigits <- ValueRoundTripTests.everythingAtItsEdges
//   stringsKeepTheirScalars <- ValueRoundTripTests.everythingAtItsEdges
//   stringsWithNUL <- ValueRoundTripTests.everythingAtItsEdges [needs nulInStrings]
//   datesRoundTripExactly <- ValueRoundTripTests.everythingAtItsEdges,
//         ValueRoundTripTests.optionalsNestedCodablesAndCollections [needs exactDates]
//   dataUUIDsAndURLs <- ValueRoundTripTests.everythingAtItsEdges
//   optionalsNilAndSet <- ValueRoundTripTests.optionalsNestedCodablesAndCollections
//   collectionsRoundTrip <- ValueRoundTripTests.everythingAtItsEdges,
//         ValueRoundTripTests.optionalsNestedCodablesAndCollections
//   codableEnumsAndStructs <- ValueRoundTripTests.optionalsNestedCodablesAndCollections,
//         ValueRoundTripTests.everythingAtItsEdges
//   changesToNilAndEmptyRoundTrip <- ValueRoundTripTests.changesToNilAndEmptyRoundTrip
//   externalStorageValuesReadBackEqual <-
//         ExternalStorageTests.largeValuesGoToBlobFilesAndRoundTripAfterAReopen,
//         ExternalStorageTests.replacingOrDeletingRemovesTheOldBlob,
//         ExternalStorageTests.predicatesOnAModelWithExternalStorageStillWork
//
// Predicates, each answer checked against Foundation's own Predicate.evaluate (Scenarios+Predicates.swift):
//   predicateComparisons <- UsagePatternTests.countingWithPredicates, PlannerDifferentialTests
//         (Foundation as the oracle)
//   predicateLogicAndArithmetic <- ContextTests.enumerateVisitsEverything (%), PlannerDifferentialTests
//         (Foundation as the oracle)
//   predicateOptionals <- UsagePatternTests.countingWithPredicates,
//         ContextTests.aThrowingPredicateFailsTheFetchForStoredAndPendingObjects
//   predicateStrings <- UsagePatternTests.searchingNonLatinText,
//         ContextTests.fetchCountAndIdentifiersAgreeWithFetch (starts(with:))
//   localizedStandardContainsNonLatin <- UsagePatternTests.searchingNonLatinText
//   predicateInLists <- IdentifierPredicateTests.fetchAndCountByIdentifier (lists),
//         PlannerDifferentialTests (IN lists, Foundation as the oracle)
//   predicateByIdentifier <- IdentifierPredicateTests.fetchAndCountByIdentifier,
//         IdentifierPredicateTests.anIdentifierOfAnotherModelOrStoreFindsNothing
//   predicateThroughToOne <- RelationshipTests.predicatesAndSortsThroughRelationships,
//         RelationshipEdgeTests.relationshipsBetweenTwoStoresOfOneContainer (sort through a to-one)
//   predicateToManySubqueries <- RelationshipTests.predicatesAndSortsThroughRelationships,
//         RelationshipEdgeTests.relationshipsBetweenTwoStoresOfOneContainer (nested contains)
//   aThrowingPredicateFailsTheFetchForPendingObjects <-
//         ContextTests.aThrowingPredicateFailsTheFetchForStoredAndPendingObjects
//   predicatesAndSortsThroughRelationshipsSeeUnsavedChanges <- GraphDifferentialTests (pending phases, on
//         PostgreSQL)
//   randomGraphPredicatesSortsAndMutationsMatchFoundation <-
//         GraphDifferentialTests.randomGraphPredicatesSortsAndMutationsMatchFoundation (the same harness,
//         GraphDifferential.swift, with fewer sessions; every fetch sorts by a unique key last)
//   randomPredicatesSortsAndPagesMatchFoundation <- PlannerDifferentialTests.randomPredicatesSortsAndPagesMatchFoundation
//         (the same harness, Differential.swift, with fewer cases; every fetch sorts by a unique key
//         last) [needs exactDates, nonFiniteNumbers]
//
// Sorting, paging, counts, identifiers, batches, enumerate, pending changes, partial fetches (Scenarios+Fetching.swift):
//   sortsOnEveryKindAndSeveralKeys <- ContextTests.fetchCountAndIdentifiersAgreeWithFetch,
//         UsagePatternTests.pagingThroughAList, PlannerDifferentialTests (sorted(using:) as the oracle)
//   sortsStrings <- UsagePatternTests.searchingNonLatinText (sort),
//         ContextTests.fetchCountAndIdentifiersAgreeWithFetch (sort by name)
//   sortByIdentifier <- IdentifierPredicateTests.sortingByIdentifierUsesTheRowsIdentity
//   pagingWithLimitAndOffset <- ContextTests.pagingWithLimitAndOffset,
//         ModelBasicsTests.fetchLimitZeroMeansNoLimit, JSONCustomStoreTests.limitAndOffset
//   pagingWithoutASort <- ContextTests.pagingWithLimitAndOffset (no sort) [needs stableUnsortedOrder]
//   limitsAndOffsetsAtTheEdges <- FetchEdgeTests.anyLimitAndOffsetPagesWithoutTrapping
//   limitsAndOffsetsAtTheEdgesWithoutASort <- FetchEdgeTests.anyLimitAndOffsetPagesWithoutTrapping (no
//         sort) [needs stableUnsortedOrder]
//   pagingFilteredSortedOnTwoKeys <- UsagePatternTests.pagingThroughAList
//   fetchCountAndIdentifiersAgreeWithFetch <- ContextTests.fetchCountAndIdentifiersAgreeWithFetch,
//         JSONCustomStoreTests.countAndIdentifiers
//   countingWithPredicates <- UsagePatternTests.countingWithPredicates
//   batchedFetchCollection <- ContextTests.batchedFetchCollection
//   batchedResultsKeepWhatTheFetchFound <- FetchEdgeTests.batchesReadTheSnapshotTheirFetchCameFrom
//   batchedResultsWithoutASortKeepWhatTheFetchFound <-
//         FetchEdgeTests.batchesReadTheSnapshotTheirFetchCameFrom (no sort) [needs stableUnsortedOrder]
//   enumerateVisitsEverything <- ContextTests.enumerateVisitsEverything,
//         ContextTests.enumerateRethrowsTheBlocksError
//   enumerateWhoseBlockSaves <- ContextTests.enumerateWhoseBlockSavesSeesItsSnapshot
//   includePendingChanges <- ContextTests.includePendingChanges,
//         JSONCustomStoreTests.unsavedChangesAreInTheFetch
//   propertiesToFetch <- PartialFetchTests.propertiesToFetchLoadsThoseAndTheRestOnAccess,
//         PartialFetchTests.aChangedPartialObjectSavesWhatItDidNotLoad
//   prefetchingRelationships <- PartialFetchTests.prefetchingReadsTheRelatedRowsWithTheFetch
//
// Relationships (Scenarios+Relationships.swift):
//   settingOneSideUpdatesTheOther <-
//         RelationshipTests.settingOneSideUpdatesTheOtherAndBothSurviveAReopen,
//         JSONCustomStoreTests.toOneAndToManyRelationships
//   movingAToOneTakesTheObjectFromItsPreviousOwner <-
//         RelationshipTests.movingAToOneTakesTheObjectFromItsPreviousOwner
//   manyToManyWithAnExplicitInverse <- RelationshipTests.manyToManyWithAnExplicitInverse
//   toManyOrderIsKeptAcrossSavesAndReopens <-
//         RelationshipEdgeTests.toManyOrderIsKeptAcrossSavesReordersRemovalsAndReopens
//   rollbackRestoresRelationshipEdits <-
//         RelationshipEdgeTests.rollbackRestoresBothSidesOfRelationshipEdits,
//         RelationshipEdgeTests.rollbackAfterADeleteRestoresTheGraph
//   aToManyHoldsAnObjectOnce <- ToManyMembershipTests.anObjectSetThroughItsToOneAndAppendedIsHeldOnce,
//         ToManyMembershipTests.anObjectAppendedTwiceToAStoredListIsHeldOnce
//   twoListsNamingOneInverse <- ToManyMembershipTests.twoListsNamingOneInverseEachKeepTheirObjects,
//         ToManyMembershipTests.theToOneOfAnObjectInTheSecondListMovesItOut,
//         ToManyMembershipTests.deletingAnObjectOfTheSecondListTakesItOutOfThatList
//
// Delete rules (Scenarios+DeleteRules.swift):
//   cascadeDeletesTheRelatedObjects <- RelationshipTests.predicatesAndSortsThroughRelationships
//         (cascade), DeleteRulesOnRowsTests.aCascadeOverUnregisteredRowsDeletesThemAndSparesOthers
//   selfReferentialCascadeThroughManyLevels <-
//         RelationshipTests.selfReferentialCascadeDeletesThroughManyLevels
//   nullifyRemovesTheDeletedObjectFromTheInverse <-
//         RelationshipTests.nullifyRemovesTheDeletedObjectFromTheInverse,
//         DeleteRulesOnRowsTests.nullifyEditsTheStoredRowOfTheOtherSide
//   aReferenceWithoutAnInverseToADeletedObjectReadsAsNone <- GraphDifferentialTests (GOwner.friend, on PostgreSQL)
//   denyRefusesTheSaveAndSavesNothing <- RelationshipTests.denyRefusesTheSaveAndSavesNothing,
//         DeleteRulesOnRowsTests.denyCountsUnregisteredRows
//   noActionLeavesTheRelatedObjects <- RelationshipEdgeTests.noActionLeavesTheRelatedObjects
//   minimumAndMaximumCounts <- RelationshipEdgeTests.minimumAndMaximumCountsRefuseTheSaveAndSaveNothing,
//         DeleteRulesOnRowsTests.aNullifyBelowTheMinimumCountRefusesTheSave
//   aFailedSaveUndoesTheDeleteRulesItApplied <-
//         RelationshipTests.aFailedSaveUndoesTheDeleteRulesItApplied
//   didSaveListsTheObjectsACascadeDeleted <- DeleteRulesOnRowsTests.didSaveListsTheRowsACascadeDeleted
//   aDeletedObjectKeepsItsIdentifier <- DeleteRulesOnRowsTests.didSaveListsTheRowsACascadeDeleted (the
//         identifiers of deleted objects), ContextTests.changeTracking
//
// delete(model:where:) (Scenarios+Saving.swift):
//   deleteModelWhereOnUnregisteredObjects <- ContextTests.deleteModelWhereOnUnregisteredRows,
//         IdentifierPredicateTests.deleteByIdentifier (fresh context) [needs acceptsBatchDeletes]
//   deleteModelWhereOnRegisteredAndInsertedObjects <-
//         ContextTests.deleteModelWhereOnRegisteredAndInsertedObjects,
//         IdentifierPredicateTests.deleteByIdentifier (seeding context)
//   rollbackUndoesDeleteModelWhere <- ContextTests.rollbackUndoesDeleteModelWhere
//   deleteModelWhereAppliesTheDeleteRules <-
//         RelationshipEdgeTests.deleteModelWhereAppliesTheDeleteRules,
//         DeleteRulesOnRowsTests.deleteModelWhereAppliesRulesToRows,
//         ToManyMembershipTests.deletingAnObjectOfTheSecondListTakesItOutOfThatList
//   didSaveListsObjectsDeletedByDeleteModelWhere <-
//         ContextTests.didSaveListsRowsDeletedByDeleteModelWhere
//   replacingTheWholeContents <- UsagePatternTests.replacingTheWholeContents [needs acceptsBatchDeletes, resolvesUniqueValuesAfterTheSavesUpdates]
//
// Unique constraints and upserts (Scenarios+Saving.swift):
//   uniqueLaterWinsWithinOneSave <-
//         ContextTests.twoNewObjectsWithTheSameUniqueValueInOneSaveTheLaterWins (one save),
//         OneChangePerObjectTests.twoNewObjectsWithOneUniqueValueAreOneInsert
//   uniqueUpsertAcrossSaves <- ModelBasicsTests.uniqueUpsert,
//         ContextTests.twoNewObjectsWithTheSameUniqueValueInOneSaveTheLaterWins,
//         CountingCustomStoreTests.theStoreResolvesAUniqueValueAndTheInsertTakesThatObject [needs
//         resolvesUniqueValues]
//   uniqueUpsertFromAnotherContainer <- UsagePatternTests.repositoryUpdatesOrInserts (upserting rather
//         than duplicating), UpsertIndexTests.upsertsKeepOrMoveTheirIndexEntries [needs
//         resolvesUniqueValues]
//   repositoryUpdatesOrInserts <- UsagePatternTests.repositoryUpdatesOrInserts
//   compoundUniqueUpserts <- ContextTests.compoundUniqueConstraintUpserts [needs
//         resolvesCompoundUniqueValues]
//   compoundUniqueLaterWinsWithinOneSave <- ContextTests.compoundUniqueConstraintUpserts (one save)
//   upsertOverAChangedObjectTheInsertWins <- ContextTests.upsertOverAChangedObjectTheInsertWins [needs
//         resolvesUniqueValues, resolvesUniqueValuesAfterTheSavesUpdates]
//   aUniqueValueGivenUpByAChangeIsFreeForAnInsert <-
//         ContextTests.aUniqueValueGivenUpByAChangeIsFreeForAnInsert [needs resolvesUniqueValues,
//         resolvesUniqueValuesAfterTheSavesUpdates]
//   anUpsertReplacesTheStoredObjectsRelationships <-
//         RelationshipTests.anUpsertReplacesTheStoredObjectsRelationships [needs resolvesUniqueValues]
//   changedObjectTakingAnotherUniqueValueFails <-
//         ContextTests.changedObjectTakingAnotherUniqueValueFailsAndLeavesTheStore [needs
//         rejectsUniqueViolations]
//
// Save conflicts (Scenarios+Saving.swift):
//   changingAnObjectAnotherContextDeletedIsAConflict <-
//         SaveConflictTests.changingAnObjectAnotherContextDeletedIsAConflict,
//         SaveConflictTests.theSameSaveGoesThroughOnceTheConflictIsResolved
//   changingAnObjectAnotherContainerDeletedIsAConflict <-
//         SaveConflictTests.changingAnObjectAnotherContextDeletedIsAConflict (another container, as
//         another process) [needs detectsSaveConflicts]
//   deletingAnObjectAnotherContextDeletedIsAConflict <-
//         SaveConflictTests.deletingAnObjectAnotherContextDeletedIsAConflict
//   deletingAnObjectAnotherContainerDeletedIsAConflict <-
//         SaveConflictTests.deletingAnObjectAnotherContextDeletedIsAConflict (another container, as
//         another process) [needs detectsSaveConflicts]
//   aDeletionOfAnUnchangedHeldObjectIsNoConflict <-
//         SaveConflictTests.aDeletionByAnotherContextOfAnObjectThatWasNotChangedIsNoConflict
//
// History (Scenarios+Saving.swift):
//   historyRecordsOneChangePerObject <-
//         OneChangePerObjectTests.anObjectUpsertedTwiceInOneSaveIsOneUpdate,
//         OneChangePerObjectTests.twoNewObjectsWithOneUniqueValueAreOneInsert [needs recordsHistory,
//         resolvesUniqueValues]
//
// History: what saves record, tombstones, tokens, descriptors, deleteHistory, another container (Scenarios+History.swift):
//   historyRecordsSavesInCommitOrder <- HistoryTests.savesFromTwoContextsAreRecordedInCommitOrder,
//         HistoryTests.theStoreIdentifierSurvivesAMove (an identifier names its transactions' store)
//         [needs recordsHistory]
//   historyRecordsUpsertsAsUpdatesOfTheFieldsThatDiffer <- HistoryTests.upsertsAreUpdatesOfTheFieldsThatDiffer
//         [needs recordsHistory, resolvesUniqueValues]
//   historyTokensRoundTripAndSelectWhatCameAfter <- HistoryTests.tokensRoundTripAndSelectWhatCameAfter [needs
//         recordsHistory]
//   deleteHistoryPrunesAndOlderTokensExpire <- HistoryTests.deleteHistoryPrunesAndOlderTokensExpire [needs
//         recordsHistory]
//   deletionsWithoutPreservedValuesHaveEmptyTombstones <-
//         HistoryTests.aCascadeOfDeletesWithoutPreservedValuesIsOneSmallRecord (what it records, not its size)
//         [needs recordsHistory]
//   historyPredicatesMayReadTheChanges <- HistoryTests.aPredicateMayReadTheChanges [needs recordsHistory]
//   historyOfAnotherContainerOnTheSameStore <- HistoryObserverTests.anObserverFollowsAnotherContainerOnTheSameFile
//         (the history it reads), HistoryTests.savesFromTwoContextsAreRecordedInCommitOrder (from another
//         container) [needs recordsHistory, stableIdentifiers]
//
// Following changes: ResultsObserver, sections, historyChanges(), HistoryObserver; waiting for events (Scenarios+History.swift):
//   resultsObserverFollowsSavesOfOtherContexts <- HistoryObserverTests.anObserverFollowsSavesOfOtherContexts
//         [awaited]
//   resultsObserverFollowsAnotherContainer <- HistoryObserverTests.anObserverFollowsAnotherContainerOnTheSameFile
//         [needs followsOtherWriters; awaited]
//   sectionedResultsFollowSaves <- SectionedObserverTests.sectionsGroupTheResultsByTheKeyPathAndFollowSaves
//         [awaited]
//   sectionsByAnOptionalKeyPath <-
//         SectionedObserverTests.anOptionalKeyPathMakesANilSectionAndAPlainObserverHasNone (no wait)
//   historyChangesDeliversEachTransactionWhole <- HistoryObserverTests.historyChangesDeliversEachTransactionWhole
//         [needs recordsHistory]
//   cancellingEndsHistoryChanges <- HistoryObserverTests.cancellingEndsTheStream (cancelled after a first
//         notice, not after a fixed time) [needs recordsHistory]
//   historyObserverCountsTheTransactionsOfItsModels <-
//         HistoryObserverTests.aHistoryObserverCountsTheTransactionsOfItsModels [needs recordsHistory; awaited]
//
// Model actors and the main context's autosave; waiting for events (Scenarios+History.swift):
//   modelActorImportsInBatchesWhileAnotherContextReads <-
//         ModelActorTests.backgroundImportAndSyncWhileAnotherContextReads (the reader reads until the import
//         ends, not for a fixed time), ModelActorTests.mainContextReadsWhatTheActorSaved [needs readsDuringSaves]
//   modelActorSyncUpserts <- ModelActorTests.backgroundImportAndSyncWhileAnotherContextReads (the sync) [needs
//         resolvesUniqueValues]
//   theMainContextAutosavesOnTheMainActorsNextTurn <- AutosaveTests.theMainContextSavesOnTheMainActorsNextTurn
//         (waits for its didSave, not for a number of turns)
//
// Models: inheritance, ephemeral and transformable attributes (Scenarios+Models.swift):
//   inheritanceFetchesSubclassesAsThemselves <- InheritanceTests.aBaseFetchReturnsEverySubclassTypedAsItsSubclass
//   anEphemeralAttributeIsObservedButNeverWritten <-
//         EphemeralAndTransformableTests.anEphemeralAttributeIsObservedButNeverWritten
//   aTransformableAttributeRoundTripsThroughItsTransformer <-
//         EphemeralAndTransformableTests.aTransformableAttributeRoundTripsThroughItsTransformer
//   aTypeThatIsNotCodableWithoutATransformerIsASchemaError <-
//         EphemeralAndTransformableTests.aTypeThatIsNotCodableWithoutATransformerIsASchemaError
//   anUnregisteredTransformerNameIsASchemaError <- EphemeralAndTransformableTests.anUnregisteredTransformerNameIsASchemaError
//
// Not ported: HistoryTests.retentionKeepsTheLastTransactions and .historyOffRecordsNothing
// (`ModelConfiguration.historyRetention`, which a custom store's configuration has not: a
// `HistoryRecordingDataStore` keeps everything until deleteHistory), the rest of
// .theStoreIdentifierSurvivesAMove (moving the file), HistoryRecordTests (the engine's record
// bytes), EphemeralAndTransformableTests.valuesAnOlderVersionPersistedAreDroppedNotTrappedOn (a
// second version of a model on one store: a session reopens with its own schema),
// MultipleStoresTests.oneContextAcrossTwoStores (two configurations in one container, and their
// files: a session is one store), AutosaveTests.anotherContextAutosavesAtTheThresholdAndOnProcessPendingChanges
// (as transactionAndAutosave).

import Foundation
import Strata

/// The conformance scenarios, and running one on a store.
public enum Conformance {
    /// Every scenario, in the order above.
    public static let scenarios: [ConformanceScenario] = contextScenarios + valueScenarios + predicateScenarios + fetchingScenarios
        + relationshipScenarios + deleteRuleScenarios + deleteWhereScenarios + uniqueScenarios + conflictScenarios + historyScenarios
        + historyOfSavesScenarios + followingChangesScenarios + modelActorScenarios + modelScenarios

    /// The scenario named `name`.
    public static func scenario(named name: String) -> ConformanceScenario? { scenarios.first { $0.name == name } }

    /// Runs the scenario named `name` on `store`, or skips it (with the reason) when the store
    /// lacks a capability it needs. Throws `ConformanceFailure` for a check that does not hold,
    /// and any error the store or Strata threw.
    public static func run(_ name: String, on store: ConformanceStore) throws -> ConformanceOutcome {
        guard let scenario = scenario(named: name) else {
            throw ConformanceFailure("no conformance scenario is named \(name)", file: #filePath, line: #line)
        }
        if let reason = store.skipReason(for: scenario.requires) { return .skipped(reason: reason) }
        try scenario.run(store)
        return .passed
    }

    /// The same, awaiting a scenario that waits for events (`ConformanceScenario.run(_:) async`).
    public static func run(_ name: String, on store: ConformanceStore) async throws -> ConformanceOutcome {
        guard let scenario = scenario(named: name) else {
            throw ConformanceFailure("no conformance scenario is named \(name)", file: #filePath, line: #line)
        }
        if let reason = store.skipReason(for: scenario.requires) { return .skipped(reason: reason) }
        try await scenario.run(store)
        return .passed
    }
}
