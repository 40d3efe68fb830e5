// The macro spelling of Tests/StrataTests/InheritanceTests.swift: the same test, word for word,
// on models written as SwiftData writes them — a subclass's initializer sets its own properties
// before `super.init`, which the dependency-free spelling cannot do. Keep the two files in step.

import Foundation
import Testing
import StrataData

@Model class Vehicle {
    var name: String
    var wheels: Int
    init(name: String, wheels: Int) { self.name = name; self.wheels = wheels }
}

@Model final class Car: Vehicle {
    var seats: Int
    init(name: String, seats: Int) {
        self.seats = seats          // a subclass sets its own properties before super.init, as SwiftData code does
        super.init(name: name, wheels: 4)
    }
}

@Model final class Bike: Vehicle {
    var isElectric: Bool = false
    @Transient var isParked = true
    init(name: String, isElectric: Bool) {
        self.isElectric = isElectric  // one with a default value, set again before super.init
        self.isParked = false
        super.init(name: name, wheels: 2)
    }
}

@Suite struct InheritanceTests {
    @Test func aBaseFetchReturnsEverySubclassTypedAsItsSubclass() throws {
        let dir = TemporaryDirectory()
        let schema = Schema([Vehicle.self, Car.self, Bike.self])
        do {
            let context = ModelContext(try ModelContainer(for: schema, configurations: [ModelConfiguration(url: dir.store())]))
            context.insert(Vehicle(name: "cart", wheels: 3))
            context.insert(Car(name: "sedan", seats: 5))
            let bike: Vehicle = Bike(name: "ebike", isElectric: true)
            context.insert(bike)                 // inserted through its base type
            try context.save()
        }
        let context = ModelContext(try ModelContainer(for: schema, configurations: [ModelConfiguration(url: dir.store())]))
        let all = try context.fetch(FetchDescriptor<Vehicle>(sortBy: [SortDescriptor(\.name)]))
        #expect(all.map(\.name) == ["cart", "ebike", "sedan"])
        #expect(all[1] is Bike && all[2] is Car && !(all[0] is Car) && !(all[0] is Bike))
        #expect((all[2] as? Car)?.seats == 5)
        #expect((all[1] as? Bike)?.isElectric == true)
        #expect(try context.fetch(FetchDescriptor<Car>()).map(\.name) == ["sedan"])
        // Predicates on base-class properties work for both kinds of fetch.
        let twoWheels = try context.fetch(FetchDescriptor<Vehicle>(predicate: #Predicate { $0.wheels < 4 }, sortBy: [SortDescriptor(\.wheels)]))
        #expect(twoWheels.map(\.name) == ["ebike", "cart"])
        #expect(try context.fetchCount(FetchDescriptor<Vehicle>(predicate: #Predicate { $0.wheels == 4 })) == 1)
        #expect(try context.fetch(FetchDescriptor<Car>(predicate: #Predicate { $0.seats > 2 && $0.wheels == 4 })).count == 1)
        // delete(model:) of the base class takes the subclasses too, unless told otherwise.
        try context.delete(model: Vehicle.self, where: #Predicate { $0.wheels == 3 }, includeSubclasses: false)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Vehicle>()) == 2)
        try context.delete(model: Vehicle.self)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Vehicle>()) == 0)
    }

    @Test func aSubclassSetsItsPropertiesBeforeAndAfterSuperInit() throws {
        let context = ModelContext(try ModelContainer(for: Schema([Vehicle.self, Car.self, Bike.self]),
                                                      configurations: [ModelConfiguration(isStoredInMemoryOnly: true)]))
        let bike = Bike(name: "ebike", isElectric: true)
        #expect(bike.isElectric && !bike.isParked && bike.wheels == 2)
        context.insert(bike)
        bike.isElectric = false     // after init: the setter, which marks the object changed
        bike.isParked = true
        try context.save()
        let fresh = ModelContext(context.container)
        let loaded = try #require(try fresh.fetch(FetchDescriptor<Bike>()).first)
        #expect(loaded.name == "ebike" && !loaded.isElectric && loaded.wheels == 2)
        #expect(loaded.isParked, "a loaded object's transient property holds its default")
    }
}
