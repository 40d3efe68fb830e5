import Foundation
import Observation
import Strata

/// Is told once when what it tracks changes (`withObservationTracking`'s onChange).
final class Told: Sendable {
    private let latch = Latch()
    init(_ read: () -> Void) { withObservationTracking(read) { [latch] in latch.open() } }
    var value: Bool { latch.isOpen }
}

extension Conformance {
    static let modelScenarios: [ConformanceScenario] = [
        ConformanceScenario("inheritanceFetchesSubclassesAsThemselves", from: "InheritanceTests.aBaseFetchReturnsEverySubclassTypedAsItsSubclass") { env in
            let s = try env.open(ConfVehicle.self, ConfCar.self, ConfBike.self)
            do {
                let context = ModelContext(s.container)
                context.insert(ConfVehicle(name: "cart", wheels: 3))
                context.insert(ConfCar(name: "sedan", seats: 5))
                let bike: ConfVehicle = ConfBike(name: "ebike", isElectric: true)
                context.insert(bike)                 // inserted through its base type
                try context.save()
            }
            let context = ModelContext(try s.reopen())
            let all = try context.fetch(FetchDescriptor<ConfVehicle>(sortBy: [SortDescriptor(\.name)]))
            try checkEqual(all.map(\.name), ["cart", "ebike", "sedan"])
            try check(all[1] is ConfBike && all[2] is ConfCar && !(all[0] is ConfCar) && !(all[0] is ConfBike),
                      "each object typed as its class: \(all.map { type(of: $0) })")
            try checkEqual((all[2] as? ConfCar)?.seats, 5)
            try checkEqual((all[1] as? ConfBike)?.isElectric, true)
            try checkEqual(try context.fetch(FetchDescriptor<ConfCar>()).map(\.name), ["sedan"])
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfBike>()), 1)
            // Predicates on base-class properties work for both kinds of fetch.
            let twoWheels = try context.fetch(FetchDescriptor<ConfVehicle>(predicate: #Predicate { $0.wheels < 4 }, sortBy: [SortDescriptor(\.wheels)]))
            try checkEqual(twoWheels.map(\.name), ["ebike", "cart"])
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfVehicle>(predicate: #Predicate { $0.wheels == 4 })), 1)
            try checkEqual(try context.fetch(FetchDescriptor<ConfCar>(predicate: #Predicate { $0.seats > 2 && $0.wheels == 4 })).count, 1)
            // delete(model:) of the base class takes the subclasses too, unless told otherwise.
            try context.delete(model: ConfVehicle.self, where: #Predicate { $0.wheels < 4 }, includeSubclasses: false)
            try context.save()
            try checkEqual(try context.fetch(FetchDescriptor<ConfVehicle>(sortBy: [SortDescriptor(\.name)])).map(\.name), ["ebike", "sedan"],
                           "includeSubclasses: false deletes only the base class's own objects")
            try context.delete(model: ConfVehicle.self)
            try context.save()
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfVehicle>()), 0)
            try checkEqual(try ModelContext(try s.reopen()).fetchCount(FetchDescriptor<ConfVehicle>()), 0)
        },

        ConformanceScenario("anEphemeralAttributeIsObservedButNeverWritten", from: "EphemeralAndTransformableTests.anEphemeralAttributeIsObservedButNeverWritten") { env in
            let s = try env.open(ConfDraft.self)
            let draft = ConfDraft(title: "a")
            let context = ModelContext(s.container)
            context.insert(draft)
            draft.cursor = 42
            try context.save()
            // In memory it holds what was set, and setting it is observed.
            try checkEqual(draft.cursor, 42)
            let told = Told { _ = draft.cursor }
            draft.cursor = 43
            try check(told.value, "setting an ephemeral attribute is observed")
            draft.title = "b"
            try context.save()
            try checkEqual(draft.cursor, 43, "a save keeps the ephemeral value in memory")
            let loaded = try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfDraft>())
            try checkEqual(loaded.map(\.title), ["b"])
            try checkEqual(loaded.map(\.cursor), [0], "a fetched object's ephemeral property holds its declaration's default")
            try checkEqual(loaded.map(\.selection), ["none"], "one set in init() holds what init() gives it")
        },

        ConformanceScenario("aTransformableAttributeRoundTripsThroughItsTransformer", from: "EphemeralAndTransformableTests.aTransformableAttributeRoundTripsThroughItsTransformer") { env in
            ValueTransformer.setValueTransformer(ConfUppercaseTransformer(), forName: ConfUppercaseTransformer.name)
            let s = try env.open(ConfSwatch.self)
            let context = ModelContext(s.container)
            context.insert(ConfSwatch(name: "sea", color: ConfColor([0, 80, 200]), accent: ConfColor([255, 255, 255]), label: "Deep"))
            context.insert(ConfSwatch(name: "ink", color: ConfColor([1, 2, 3]), accent: nil, label: "x"))
            try context.save()
            let swatches = try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfSwatch>(sortBy: [SortDescriptor(\.name)]))
            try checkEqual(swatches.map(\.name), ["ink", "sea"])
            try checkEqual(swatches.map(\.color), [ConfColor([1, 2, 3]), ConfColor([0, 80, 200])])
            try checkEqual(swatches.map(\.accent), [nil, ConfColor([255, 255, 255])])
            // Stored uppercased by the named transformer, read back through it.
            try checkEqual(swatches.map(\.label), ["x", "deep"])
        },

        ConformanceScenario("aTypeThatIsNotCodableWithoutATransformerIsASchemaError", from: "EphemeralAndTransformableTests.aTypeThatIsNotCodableWithoutATransformerIsASchemaError") { env in
            let error = try checkThrows(.invalidSchema) { _ = try env.open(ConfUnstorable.self) }
            try check("\(error)".contains("ConfUnstorable.thing") && "\(error)".contains("transformable"), "the error names the property and the way out: \(error)")
        },

        ConformanceScenario("anUnregisteredTransformerNameIsASchemaError", from: "EphemeralAndTransformableTests.anUnregisteredTransformerNameIsASchemaError") { env in
            try checkThrows("a container for a model whose transformer is not registered",
                            matching: { "\($0)".contains("ConfNoSuchTransformer") }) { _ = try env.open(ConfLabelled.self) }
        },
    ]
}
