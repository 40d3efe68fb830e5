import Foundation
import Testing
@testable import Strata

/// `FieldReflection.untypedFields` reads the compiler's field descriptors and the metadata's
/// field offsets itself: its names and offsets must be the runtime's (`_forEachField`) for
/// classes of every shape, and it must decline the classes whose layout it does not read.
@Suite struct FieldReflectionTests {
    private class Base {
        var a = 1
        var name = ""
        init() {}
    }

    private final class Derived: Base {
        var c = 0.0
        private var _d: [Int] = []
        weak var parent: Base?
        unowned var other: Base
        let keeper = Base()
        var closure: (Int) -> Int = { $0 }
        var pair = (1, "two")
        var optional: String? = nil
        override init() {
            other = keeper
            super.init()
        }
    }

    private class Middle: Base {}
    private final class Leaf: Middle {
        var last: UInt8 = 0
        var big = (0, 0, 0, 0)
    }

    private final class Empty {}
    private final class Generic<T> {
        var value: T? = nil
    }

    private static func pairs(_ fields: [FieldReflection.Field]) -> [String] { fields.map { "\($0.name)@\($0.offset)" } }

    @Test func namesAndOffsetsAreTheRuntimes() throws {
        let classes: [AnyClass] = [
            Base.self, Derived.self, Middle.self, Leaf.self, Empty.self, Trip.self, Everything.self, Person.self,
            Unmarked.self, Vehicle.self, Car.self, Bike.self, TemporaryDirectory.self,
        ]
        for cls in classes {
            let untyped = try #require(FieldReflection.untypedFields(of: cls), "\(cls)")
            #expect(Self.pairs(untyped) == Self.pairs(FieldReflection.fields(of: cls)), "\(cls)")
            #expect(untyped.allSatisfy { $0.type == nil }, "\(cls)")
        }
        // Inherited fields come first, each once.
        #expect(Self.pairs(try #require(FieldReflection.untypedFields(of: Leaf.self))).map { $0.prefix { $0 != "@" } }
            == ["a", "name", "last", "big"])
    }

    @Test func genericClassesAreLeftToTheRuntime() {
        #expect(FieldReflection.untypedFields(of: Generic<Int>.self) == nil)
        #expect(FieldReflection.fields(of: Generic<Int>.self).map(\.name) == ["value"])
    }
}

/// `#Unique` and `#Index` write their groups by property name too (`_uniqueConstraintNames`,
/// `_indexNames`); discovery reads those, and in debug builds holds them to the key paths.
@Suite struct ConstraintNameTests {
    final class Named: PersistentModel {
        @Attribute var a: String = ""
        @Attribute var b: Int = 0
        init() {}
        static var uniqueConstraints: [[PartialKeyPath<Named>]] { [[\.a, \.b]] }
        static var _uniqueConstraintNames: [[String]]? { [["a", "b"]] }
        static var indexes: [[PartialKeyPath<Named>]] { [[\.b]] }
        static var _indexNames: [[String]]? { [["b"]] }
    }

    final class Misnamed: PersistentModel {
        @Attribute var a: String = ""
        @Attribute var b: Int = 0
        init() {}
        static var indexes: [[PartialKeyPath<Misnamed>]] { [[\.b]] }
        static var _indexNames: [[String]]? { [["a"]] }
    }

    final class Unknown: PersistentModel {
        @Attribute var a: String = ""
        init() {}
        static var _uniqueConstraintNames: [[String]]? { [["missing"]] }
    }

    @Test func groupsByNameAreTheKeyPathsGroups() throws {
        let entity = try Strata.Entity(Named.self)
        #expect(entity.uniqueGroups == [[0, 1]])
        #expect(entity.indexGroups == [[1]])
        let byKeyPaths = try Strata.Entity(Named.self, usingSchemaMetadata: false)
        #expect(byKeyPaths.uniqueGroups == entity.uniqueGroups && byKeyPaths.indexGroups == entity.indexGroups)
    }

    @Test func aNameThatIsNotAPropertyIsASchemaError() {
        #expect(throws: StrataError.self) { try Strata.Entity(Unknown.self) }
    }

    #if DEBUG
    @Test func namesThatDisagreeWithTheKeyPathsAreCaught() {
        #expect(throws: StrataError.self) { try Strata.Entity(Misnamed.self) }
    }
    #endif
}
