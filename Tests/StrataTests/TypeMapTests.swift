import Testing
@testable import Strata

/// `TypeMap` answers as a dictionary would, as a list up to its limit and past it.
@Suite struct TypeMapTests {
    final class Key {}

    @Test func answersAsADictionaryAcrossItsLimit() {
        let keys = (0..<(TypeMap<Int>.listLimit * 2 + 3)).map { _ in Key() }
        var map = TypeMap<Int>()
        var reference: [ObjectIdentifier: Int] = [:]
        for (i, key) in keys.enumerated() {
            map[ObjectIdentifier(key)] = i
            reference[ObjectIdentifier(key)] = i
            if i % 3 == 0 {
                map[ObjectIdentifier(keys[i / 2])] = nil
                reference[ObjectIdentifier(keys[i / 2])] = nil
            }
            if i % 5 == 0 {
                map[ObjectIdentifier(keys[i / 3])] = -i
                reference[ObjectIdentifier(keys[i / 3])] = -i
            }
            for k in keys { #expect(map[ObjectIdentifier(k)] == reference[ObjectIdentifier(k)]) }
            #expect(map.values.sorted() == reference.values.sorted())
        }
        withExtendedLifetime(keys) {}
    }
}
