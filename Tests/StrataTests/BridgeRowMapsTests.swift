import Testing
@testable import Strata
import StrataTestSupport
import StrataEngine

/// The custom-store bridge's maps (`RowsByIdentifier`, `ValuesByRow`: arrays for dense
/// integer keys, a dictionary beyond) against the dictionaries they stand for.
@Suite struct BridgeRowMapsTests {
    /// Identifiers of two stores' keyed-by-row scopes, far keys, text keys, and negative and
    /// zero integers (kept by their text), set, replaced and removed in a random order.
    @Test(arguments: [1, 2, 3])
    func rowsByIdentifierMatchADictionary(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var map = RowsByIdentifier()
        var reference: [PersistentIdentifier: RowID] = [:]
        for step in 0..<20_000 {
            let r = generator.next()
            let id: PersistentIdentifier = switch r % 12 {
            case 0: try .identifier(for: "T", entityName: "Trip", primaryKey: Int64(r >> 8 % 500 + 1))   // another store
            case 1: try .identifier(for: "S", entityName: "Trip", primaryKey: "x\(r >> 8 % 300)")        // text keys
            case 2: try .identifier(for: "S", entityName: "Trip", primaryKey: Int64(1 << 40) + Int64(r >> 8 % 50))   // far out
            case 3: try .identifier(for: "S", entityName: "Trip", primaryKey: -Int64(r >> 8 % 20))       // zero, negative
            default: try .identifier(for: "S", entityName: "Trip", primaryKey: Int64(r >> 8 % (UInt64(step) / 2 + 100) + 1))
            }
            let row: RowID? = r % 7 == 0 ? nil : RowID(step + 1)
            map[id] = row
            reference[id] = row
            if step % 997 == 0 { expectSame(map.count, { map[$0] }, reference, after: step) }
        }
        expectSame(map.count, { map[$0] }, reference, after: 20_000)
    }

    /// The map holds what the dictionary holds: as many entries, each with its value.
    private func expectSame<Key: Hashable, Value: Equatable>(_ count: Int, _ lookup: (Key) -> Value?, _ reference: [Key: Value], after steps: Int) {
        #expect(count == reference.count, "after \(steps) steps")
        for (key, value) in reference { #expect(lookup(key) == value, "after \(steps) steps") }
    }

    /// A key the dictionary took (beyond the array) and that the array reached later is found,
    /// replaced and removed once, not twice.
    @Test func aFarKeyThatTheArrayReachesLaterIsOneEntry() throws {
        var map = RowsByIdentifier()
        let far = try PersistentIdentifier.identifier(for: "S", entityName: "Trip", primaryKey: Int64(70_000))
        map[try .identifier(for: "S", entityName: "Trip", primaryKey: Int64(1))] = 1
        map[far] = 2
        for key in 2..<40_000 { map[try .identifier(for: "S", entityName: "Trip", primaryKey: Int64(key))] = RowID(key + 10) }
        #expect(map[far] == 2)
        map[far] = 3
        #expect(map[far] == 3)
        #expect(map.count == 40_000)
        map[far] = nil
        #expect(map[far] == nil)
        #expect(map.count == 39_999)
    }

    @Test(arguments: [1, 2, 3])
    func identifiersByRowMatchADictionary(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var map = ValuesByRow<PersistentIdentifier>()
        var reference: [RowID: PersistentIdentifier] = [:]
        let ids = try (1...50).map { try PersistentIdentifier.identifier(for: "S", entityName: "Trip", primaryKey: Int64($0)) }
        for step in 0..<20_000 {
            let r = generator.next()
            let row: RowID = switch r % 10 {
            case 0: RowID(1 << 40) + r >> 8 % 50        // far out
            case 1: 0
            case 2, 3: BridgeRows.firstAllocated + r >> 8 % (UInt64(step) / 2 + 100)   // the bridge's own rows
            case 4: BridgeRows.firstAllocated + RowID(1 << 40) + r >> 8 % 50          // far out among them
            default: r >> 8 % (UInt64(step) + 100)
            }
            let id: PersistentIdentifier? = r % 9 == 0 ? nil : ids[Int(r >> 20 % 50)]
            if step == 5_000 { map.reserveCapacity(30_000) }
            map[row] = id
            reference[row] = id
            if step % 997 == 0 { expectSame(map.count, { map[$0] }, reference, after: step) }
        }
        expectSame(map.count, { map[$0] }, reference, after: 20_000)
        // A row set far out, then reached by the array as rows fill up to it.
        var grown = ValuesByRow<PersistentIdentifier>()
        grown[70_000] = ids[0]
        for row in 1..<40_000 { grown[RowID(row)] = ids[1] }
        #expect(grown[70_000] == ids[0])
        grown[70_000] = nil
        #expect(grown[70_000] == nil && grown.count == 39_999)
    }
}
