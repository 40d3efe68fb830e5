import Testing
@testable import Strata
import StrataTestSupport
import StrataEngine

/// `IdentityMap` (an open-addressing table whose consecutive rows share cache lines, removals
/// shifting their cluster back) against a dictionary: rows dense, in strides that land in one
/// group of slots, and far apart; objects registered, replaced, moved and removed, with
/// removals of a backing that no longer holds its row refused.
@Suite struct IdentityMapTests {
    /// A map emptied keeps a small table (a context fetching one object at a time reuses it)
    /// and drops a large one; either way it registers and finds rows again, and none of the
    /// rows it held before.
    @Test func anEmptiedMapWorksAgainWhateverItKept() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let trips = (0..<300).map { Trip(name: "\($0)", startDate: .now) }
        let entity = try #require(EntityRegistry.shared.entity(forClassOf: trips[0]))
        let backings = trips.map { ModelBacking(object: $0, entity: entity) }
        let map = IdentityMap()
        for (round, size) in [1, 3, 20, 300, 2, 150, 1].enumerated() {
            let used = backings.prefix(size)
            for (i, b) in used.enumerated() {
                b.rowID = RowID(round * 1000 + i + 1)
                map.insert(b)
            }
            #expect(map.count == size)
            for b in used { #expect(map.backing(b.rowID) === b, "round \(round)") }
            for earlier in 0..<round { #expect(map.backing(RowID(earlier * 1000 + 1)) == nil, "round \(round)") }
            for b in used.reversed() { map.remove(b) }
            #expect(map.isEmpty)
            for b in used { #expect(map.backing(b.rowID) == nil, "round \(round)") }
        }
        _ = container
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomRegistrationsMatchADictionary(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        // (A container makes the model known.)
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let trips = (0..<400).map { Trip(name: "\($0)", startDate: .now) }
        let entity = try #require(EntityRegistry.shared.entity(forClassOf: trips[0]))
        let backings = trips.map { ModelBacking(object: $0, entity: entity) }
        let map = IdentityMap()
        var reference: [RowID: ObjectIdentifier] = [:]
        var registered: [ObjectIdentifier: RowID] = [:]
        for step in 0..<30_000 {
            let backing = backings[Int(generator.next() % UInt64(backings.count))]
            let id = ObjectIdentifier(backing)
            if let row = registered[id], generator.next() % 2 == 0 {
                map.remove(backing)
                reference[row] = nil
                registered[id] = nil
            } else if registered[id] == nil {
                let row: RowID = switch generator.next() % 4 {
                case 0: RowID(step % 512) + 1
                case 1: (generator.next() % 64) * 4 + 1
                case 2: (generator.next() % 64) * 1024
                default: generator.next() % (1 << 40)
                }
                backing.rowID = row
                // Taking a row another backing holds replaces it there.
                if let other = reference[row] { registered[other] = nil }
                map.insert(backing)
                reference[row] = id
                registered[id] = row
            } else {
                // A backing that lost its row to another is not removed from it.
                let row = registered[id]!
                let holder = backings.first { ObjectIdentifier($0) != id && registered[ObjectIdentifier($0)] == nil }!
                holder.rowID = row
                map.insert(holder)
                reference[row] = ObjectIdentifier(holder)
                registered[ObjectIdentifier(holder)] = row
                registered[id] = nil
                map.remove(backing)
            }
            if step % 97 == 0 {
                #expect(map.count == reference.count)
                for (row, holder) in reference { #expect(map.backing(row).map(ObjectIdentifier.init) == holder, "seed \(seed) step \(step)") }
                for _ in 0..<20 {
                    let probe = generator.next() % 70_000
                    #expect(map.backing(probe).map(ObjectIdentifier.init) == reference[probe])
                }
            }
        }
        #expect(Set(map.backings.map(ObjectIdentifier.init)) == Set(reference.values))
        for backing in backings where registered[ObjectIdentifier(backing)] != nil { map.remove(backing) }
        #expect(map.isEmpty && map.backings.isEmpty)
        withExtendedLifetime((trips, container)) {}
    }
}
