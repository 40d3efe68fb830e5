import Foundation
import Testing
@testable import Strata

/// `TypeShape` reads the runtime's metadata where a cast would ask the runtime: its answers
/// must be the type system's, for every stored value type and for types that only look alike.
@Suite struct TypeShapeTests {
    @Test func optionalsAndArraysOfEveryStoredValueTypeAreRecognized() {
        func check<T: ModelValue>(_: T.Type) {
            #expect(TypeShape.optionalWrapped(T?.self).map(ObjectIdentifier.init) == ObjectIdentifier(T.self), "\(T.self)?")
            #expect(TypeShape.arrayElement([T].self).map(ObjectIdentifier.init) == ObjectIdentifier(T.self), "[\(T.self)]")
            #expect(TypeShape.optionalWrapped(T.self) == nil, "\(T.self)")
            #expect(TypeShape.arrayElement(T.self) == nil, "\(T.self)")
            #expect(TypeShape.arrayElement(T?.self) == nil, "\(T.self)?")
            #expect(TypeShape.optionalWrapped([T].self) == nil, "[\(T.self)]")
            #expect(TypeShape.arrayElement([T]?.self) == nil, "[\(T.self)]?")
            #expect(TypeShape.optionalWrapped([T]?.self).map(ObjectIdentifier.init) == ObjectIdentifier([T].self), "[\(T.self)]?")
        }
        for type in ModelValues.all { check(type) }
    }

    @Test func otherTypesAreNeitherOptionalsNorArrays() {
        final class Reference {}
        enum Choice { case one(Int), two(String) }
        let others: [Any.Type] = [
            Reference.self, Choice.self, (any Codable).self, (any Codable.Type).self, Any.self, AnyObject.self,
            ((Int) -> Int).self, (Int, String).self, Void.self, [String: Int].self, Set<Int>.self,
            ContiguousArray<Int>.self, ArraySlice<Int>.self, Result<Int, any Error>.self, Trip.self, Int.Type.self,
        ]
        for type in others {
            #expect(TypeShape.optionalWrapped(type) == nil, "\(type)")
            #expect(TypeShape.arrayElement(type) == nil, "\(type)")
        }
        #expect(TypeShape.optionalWrapped(Reference?.self).map(ObjectIdentifier.init) == ObjectIdentifier(Reference.self))
        #expect(TypeShape.arrayElement([Trip].self).map(ObjectIdentifier.init) == ObjectIdentifier(Trip.self))
        #expect(TypeShape.optionalWrapped((any Codable)?.self).map(ObjectIdentifier.init) == ObjectIdentifier((any Codable).self))
        #expect(TypeShape.arrayElement([[Int]].self).map(ObjectIdentifier.init) == ObjectIdentifier([Int].self))
        #expect(TypeShape.optionalWrapped(Int??.self).map(ObjectIdentifier.init) == ObjectIdentifier(Int?.self))
    }

    @Test func attributeAndTransientStoragesAreRecognizedWhateverTheirValue() {
        struct Custom: Codable {}
        func check<T>(_: T.Type) {
            #expect(TypeShape.attributeValue(Attribute<T>.self).map(ObjectIdentifier.init) == ObjectIdentifier(T.self), "Attribute<\(T.self)>")
            #expect(TypeShape.transientValue(Transient<T>.self).map(ObjectIdentifier.init) == ObjectIdentifier(T.self), "Transient<\(T.self)>")
            #expect(TypeShape.attributeValue(Transient<T>.self) == nil)
            #expect(TypeShape.transientValue(Attribute<T>.self) == nil)
            for other: Any.Type in [T.self, Attribute<T>?.self, [Attribute<T>].self, _ModelStorage<T>.self, _TransientValue<T>.self] {
                #expect(TypeShape.attributeValue(other) == nil, "\(other)")
                #expect(TypeShape.transientValue(other) == nil, "\(other)")
            }
        }
        check(Int.self); check(String?.self); check([UUID].self); check(Custom.self); check([String: Double].self); check(Trip.self)
        #expect(TypeShape.attributeValue(Relationship<Trip?>.self) == nil)
    }
}
