// Inheritance on models written as SwiftData writes them: a subclass's initializer sets its own
// properties before `super.init`, which the dependency-free spelling cannot do. A base fetch
// of subclasses runs as a conformance scenario on @Model models (ConformanceTests.swift).

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
