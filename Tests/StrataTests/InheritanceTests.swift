import Foundation
import Testing
import Strata

class Vehicle: PersistentModel {
    @Attribute var name: String = ""
    @Attribute var wheels: Int = 0
    required init() {}
    init(name: String, wheels: Int) { self.name = name; self.wheels = wheels }
}

final class Car: Vehicle {
    @Attribute var seats: Int = 0
    required init() { super.init() }
    init(name: String, seats: Int) {
        super.init(name: name, wheels: 4)
        self.seats = seats          // a subclass sets its own properties after super.init
    }
}

final class Bike: Vehicle {
    @Attribute var isElectric: Bool = false
    required init() { super.init() }
    init(name: String, isElectric: Bool) {
        super.init(name: name, wheels: 2)
        self.isElectric = isElectric
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
}
