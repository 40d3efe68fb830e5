import Foundation
import Strata

// The differential test of PlannerDifferentialTests, extended to object graphs: owners with
// pets (one-to-many, cascade), pets with tags (many-to-many), owners with a friend
// (self-referential to-one without an inverse). A seeded random graph is saved to an on-disk
// store and reopened; random predicates through relationships (to-one key paths, to-many
// subqueries, `persistentModelID`), random sorts (including by a to-one key path) and pages
// are answered by Strata and by Foundation (`filter { try predicate.evaluate($0) }`,
// `sorted(using:)`, offset, limit) over the same objects. Between rounds, random mutations
// (either side of a relationship, cascades, batch deletes) are mirrored in a plain shadow
// graph, and after every save and every reopen the objects must match the shadow: both sides
// of every relationship agree, to-many orders are kept, nothing dangles.
//
// The root's GraphDifferentialTests runs it on the engine; the conformance scenario
// `randomGraphPredicatesSortsAndMutationsMatchFoundation` on every kind of store (each sort ending
// with a unique key there, as SwiftData promises no order beyond the sort).
// Replay a failure with the printed seed: `STRATA_SEED=<seed> swift test --filter GraphDifferential`;
// STRATA_GRAPH_SCALE=<n> runs n times the cases, STRATA_GRAPH_TIMING=1 prints the time of each phase.

public enum GKind: String, Codable, CaseIterable, Sendable { case cat, dog, fish, bird }

public final class GOwner: PersistentModel {
    @Attribute public var serial: Int = 0
    @Attribute public var name: String = ""
    @Attribute public var age: Int = 0
    @Relationship(deleteRule: .cascade, inverse: \GPet.owner) public var pets: [GPet] = []
    @Relationship public var friend: GOwner? = nil
    public init() {}
    public static var indexes: [[PartialKeyPath<GOwner>]] { [[\.age]] }
}

public final class GPet: PersistentModel {
    @Attribute public var serial: Int = 0
    @Attribute public var name: String = ""
    @Attribute public var kind: GKind = .cat
    @Attribute public var weight: Double = 0
    @Relationship public var owner: GOwner? = nil
    @Relationship public var tags: [GTag] = []
    public init() {}
    public static var indexes: [[PartialKeyPath<GPet>]] { [[\.weight]] }
}

public final class GTag: PersistentModel {
    @Attribute public var serial: Int = 0
    @Attribute public var label: String = ""
    @Relationship(inverse: \GPet.tags) public var pets: [GPet] = []
    public init() {}
}

enum GPools {
    static let names = ["Ada", "ada", "Bo", "Cy", "Di", "Émile", "Emile", "Flo", "", "Zoë"]
    static let petNames = ["Rex", "Tom", "Kit", "Bubbles", "rex", "Mia", ""]
    static let labels = ["red", "green", "blue", "vip", "old", "new"]
    static let weights: [Double] = [0.5, 1, 2.5, 3, 10, 10.5, 25, 40, 49.5, -0.0]
    static func weight(_ r: inout SeededGenerator) -> Double { r.chance(0.6) ? r.pick(weights) : Double(r.int(0...100)) / 2 }
}

struct GCase<T: PersistentModel> {
    let text: String
    let predicate: Predicate<T>
}

/// Identifiers a predicate may name: those of live objects and a few of deleted ones.
struct GIDs {
    var owners: [PersistentIdentifier] = []
    var pets: [PersistentIdentifier] = []
    var tags: [PersistentIdentifier] = []
}

enum GTemplates {
    typealias PetT = @Sendable (inout SeededGenerator, GIDs) -> GCase<GPet>
    typealias OwnerT = @Sendable (inout SeededGenerator, GIDs) -> GCase<GOwner>
    typealias TagT = @Sendable (inout SeededGenerator, GIDs) -> GCase<GTag>

    static let pet: [PetT] = [
        { r, _ in let x = r.pick(GPools.names); return GCase(text: "owner?.name == \(x.diffShown)", predicate: #Predicate<GPet> { $0.owner?.name == x }) },
        { r, _ in let n = r.int(-1...100); return GCase(text: "(owner?.age ?? 0) > \(n)", predicate: #Predicate<GPet> { ($0.owner?.age ?? 0) > n }) },
        { _, _ in GCase(text: "owner == nil", predicate: #Predicate<GPet> { $0.owner == nil }) },
        { _, _ in GCase(text: "owner != nil", predicate: #Predicate<GPet> { $0.owner != nil }) },
        { r, _ in let x = r.pick(GPools.names); return GCase(text: "owner?.friend?.name == \(x.diffShown)", predicate: #Predicate<GPet> { $0.owner?.friend?.name == x }) },
        { r, ids in
            let id: PersistentIdentifier? = ids.owners.isEmpty ? nil : r.pick(ids.owners)
            return GCase(text: "owner?.persistentModelID == \(id.map { "\($0.rowID)" } ?? "nil")", predicate: #Predicate<GPet> { $0.owner?.persistentModelID == id })
        },
        { r, ids in
            let id = r.pick(ids.pets)
            return GCase(text: "persistentModelID == \(id.rowID)", predicate: #Predicate<GPet> { $0.persistentModelID == id })
        },
        { r, ids in
            let id = r.pick(ids.pets)
            return GCase(text: "persistentModelID < \(id.rowID)", predicate: #Predicate<GPet> { $0.persistentModelID < id })
        },
        { r, _ in let l = r.pick(GPools.labels); return GCase(text: "tags.contains { label == \(l) }", predicate: #Predicate<GPet> { $0.tags.contains { $0.label == l } }) },
        { _, _ in GCase(text: "tags.isEmpty", predicate: #Predicate<GPet> { $0.tags.isEmpty }) },
        { r, _ in let n = r.int(0...3); return GCase(text: "tags.count >= \(n)", predicate: #Predicate<GPet> { $0.tags.count >= n }) },
        { r, _ in
            let k = r.pick(GKind.allCases), w = GPools.weight(&r)
            return GCase(text: "kind == .\(k) && weight > \(w)", predicate: #Predicate<GPet> { $0.kind == k && $0.weight > w })
        },
        { r, _ in
            let w = GPools.weight(&r), n = r.int(0...100)
            return GCase(text: "weight > \(w) || (owner?.age ?? 0) < \(n)", predicate: #Predicate<GPet> { $0.weight > w || ($0.owner?.age ?? 0) < n })
        },
        { r, _ in let x = r.pick(GPools.names); return GCase(text: "!(owner?.name == \(x.diffShown))", predicate: #Predicate<GPet> { !($0.owner?.name == x) }) },
        { r, _ in
            let n = r.int(0...6)
            return GCase(text: "(owner?.pets.count ?? 0) > \(n)", predicate: #Predicate<GPet> { ($0.owner?.pets.count ?? 0) > n })
        },
        { r, _ in
            let a = GPools.weight(&r), b = GPools.weight(&r)
            return GCase(text: "weight >= \(a) && weight < \(b)", predicate: #Predicate<GPet> { $0.weight >= a && $0.weight < b })
        },
        { r, _ in
            let w = GPools.weight(&r), l = r.pick(GPools.labels)
            return GCase(text: "weight <= \(w) && tags.contains { label == \(l) }", predicate: #Predicate<GPet> { $0.weight <= w && $0.tags.contains { $0.label == l } })
        },
        { r, _ in
            let k = r.pick(GKind.allCases)
            return GCase(text: "owner?.pets.contains { kind == .\(k) } == true", predicate: #Predicate<GPet> { $0.owner?.pets.contains { $0.kind == k } == true })
        },
        { r, _ in
            let l = r.pick(GPools.labels)
            return GCase(text: "tags.first?.label == \(l)", predicate: #Predicate<GPet> { $0.tags.first?.label == l })
        },
    ]

    static let owner: [OwnerT] = [
        { r, _ in let w = GPools.weight(&r); return GCase(text: "pets.filter { weight > \(w) }.count > 0", predicate: #Predicate<GOwner> { $0.pets.filter { $0.weight > w }.count > 0 }) },
        { r, _ in let k = r.pick(GKind.allCases); return GCase(text: "pets.contains { kind == .\(k) }", predicate: #Predicate<GOwner> { $0.pets.contains { $0.kind == k } }) },
        { _, _ in GCase(text: "pets.isEmpty", predicate: #Predicate<GOwner> { $0.pets.isEmpty }) },
        { _, _ in GCase(text: "!pets.isEmpty", predicate: #Predicate<GOwner> { !$0.pets.isEmpty }) },
        { r, _ in let n = r.int(0...6); return GCase(text: "pets.count > \(n)", predicate: #Predicate<GOwner> { $0.pets.count > n }) },
        { r, _ in let x = r.pick(GPools.names); return GCase(text: "friend?.name == \(x.diffShown)", predicate: #Predicate<GOwner> { $0.friend?.name == x }) },
        { _, _ in GCase(text: "friend == nil", predicate: #Predicate<GOwner> { $0.friend == nil }) },
        { r, _ in let n = r.int(-1...100); return GCase(text: "(friend?.age ?? -1) >= \(n)", predicate: #Predicate<GOwner> { ($0.friend?.age ?? -1) >= n }) },
        { r, _ in
            let l = r.pick(GPools.labels)
            return GCase(text: "pets.contains { tags.contains { label == \(l) } }", predicate: #Predicate<GOwner> { $0.pets.contains { $0.tags.contains { $0.label == l } } })
        },
        { r, _ in
            let n = r.int(0...100), k = r.pick(GKind.allCases)
            return GCase(text: "age > \(n) && pets.contains { kind == .\(k) }", predicate: #Predicate<GOwner> { $0.age > n && $0.pets.contains { $0.kind == k } })
        },
        { r, _ in
            let n = r.int(0...100), w = GPools.weight(&r)
            return GCase(text: "age <= \(n) || pets.allSatisfy { weight < \(w) }", predicate: #Predicate<GOwner> { $0.age <= n || $0.pets.allSatisfy { $0.weight < w } })
        },
        { r, ids in
            let id = r.pick(ids.owners)
            return GCase(text: "persistentModelID == \(id.rowID)", predicate: #Predicate<GOwner> { $0.persistentModelID == id })
        },
        { r, ids in
            let id = r.pick(ids.owners)
            return GCase(text: "persistentModelID >= \(id.rowID)", predicate: #Predicate<GOwner> { $0.persistentModelID >= id })
        },
        { _, _ in
            GCase(text: "friend is self", predicate: #Predicate<GOwner> { o in o.friend.flatMap { f in f.persistentModelID == o.persistentModelID } ?? false })
        },
        { r, ids in
            let id = r.pick(ids.pets)
            return GCase(text: "pets.contains { persistentModelID == \(id.rowID) }", predicate: #Predicate<GOwner> { $0.pets.contains { $0.persistentModelID == id } })
        },
        { r, _ in
            let k = r.pick(GKind.allCases)
            return GCase(text: "pets.first?.kind == .\(k)", predicate: #Predicate<GOwner> { $0.pets.first?.kind == k })
        },
        { r, _ in
            let k = r.pick(GKind.allCases)
            return GCase(text: "pets.last?.kind == .\(k)", predicate: #Predicate<GOwner> { $0.pets.last?.kind == k })
        },
        { r, _ in let a = r.int(0...100), b = r.int(0...100); return GCase(text: "age >= \(a) && age < \(b)", predicate: #Predicate<GOwner> { $0.age >= a && $0.age < b }) },
        { r, _ in
            let x = r.pick(GPools.names), n = r.int(0...100)
            return GCase(text: "name == \(x.diffShown) || (friend?.age ?? 0) > \(n)", predicate: #Predicate<GOwner> { $0.name == x || ($0.friend?.age ?? 0) > n })
        },
    ]

    static let tag: [TagT] = [
        { r, _ in let k = r.pick(GKind.allCases); return GCase(text: "pets.contains { kind == .\(k) }", predicate: #Predicate<GTag> { $0.pets.contains { $0.kind == k } }) },
        { r, _ in let n = r.int(0...12); return GCase(text: "pets.count > \(n)", predicate: #Predicate<GTag> { $0.pets.count > n }) },
        { r, _ in
            let x = r.pick(GPools.names)
            return GCase(text: "pets.contains { owner?.name == \(x.diffShown) }", predicate: #Predicate<GTag> { $0.pets.contains { $0.owner?.name == x } })
        },
        { r, _ in let l = r.pick(GPools.labels); return GCase(text: "label == \(l)", predicate: #Predicate<GTag> { $0.label == l }) },
        { _, _ in GCase(text: "pets.isEmpty", predicate: #Predicate<GTag> { $0.pets.isEmpty }) },
    ]

    /// A template (55%), or a random tree of atoms joined with `&&`, `||`, `!`.
    static func random<T: PersistentModel>(_ templates: [@Sendable (inout SeededGenerator, GIDs) -> GCase<T>],
                                           _ atoms: [(inout SeededGenerator, GIDs) -> (String, (PredicateExpressions.Variable<T>) -> DiffAtoms.Expr)],
                                           _ r: inout SeededGenerator, _ ids: GIDs) -> GCase<T> {
        if r.chance(0.55) { return r.pick(templates)(&r, ids) }
        let (text, build) = tree(atoms, &r, ids, depth: 0)
        return GCase(text: text, predicate: Predicate<T>({ v in build(v) }))
    }

    static func tree<T>(_ atoms: [(inout SeededGenerator, GIDs) -> (String, (PredicateExpressions.Variable<T>) -> DiffAtoms.Expr)],
                        _ r: inout SeededGenerator, _ ids: GIDs, depth: Int) -> (String, (PredicateExpressions.Variable<T>) -> DiffAtoms.Expr) {
        let roll = r.int(0...9)
        if depth >= 3 || (depth > 0 && roll < 4) { return r.pick(atoms)(&r, ids) }
        if roll < 6 || depth == 0 && roll < 7 {
            let (a, fa) = tree(atoms, &r, ids, depth: depth + 1), (b, fb) = tree(atoms, &r, ids, depth: depth + 1)
            return ("(\(a) && \(b))", { v in DiffAtoms.and(fa(v), fb(v)) })
        }
        if roll < 9 {
            let (a, fa) = tree(atoms, &r, ids, depth: depth + 1), (b, fb) = tree(atoms, &r, ids, depth: depth + 1)
            return ("(\(a) || \(b))", { v in DiffAtoms.or(fa(v), fb(v)) })
        }
        let (a, fa) = tree(atoms, &r, ids, depth: depth + 1)
        return ("!\(a)", { v in DiffAtoms.not(fa(v)) })
    }
}

/// Atoms built by hand (the macro's expansion), so that they combine into random trees.
enum GAtoms {
    typealias E = PredicateExpressions
    typealias Expr = DiffAtoms.Expr

    nonisolated(unsafe) static let pet: [(inout SeededGenerator, GIDs) -> (String, (E.Variable<GPet>) -> Expr)] = [
        { r, _ in
            let x: String? = r.pick(GPools.names)
            return ("owner?.name == \(x!.diffShown)", { v in
                E.build_Equal(lhs: E.build_flatMap(E.build_KeyPath(root: v, keyPath: \GPet.owner), { E.build_KeyPath(root: $0, keyPath: \GOwner.name) }), rhs: E.build_Arg(x))
            })
        },
        { r, _ in
            let n = r.int(-1...100)
            return ("(owner?.age ?? 0) > \(n)", { v in
                E.build_Comparison(lhs: E.build_NilCoalesce(lhs: E.build_flatMap(E.build_KeyPath(root: v, keyPath: \GPet.owner), { E.build_KeyPath(root: $0, keyPath: \GOwner.age) }), rhs: E.build_Arg(0)),
                                   rhs: E.build_Arg(n), op: .greaterThan)
            })
        },
        { r, _ in
            let l = r.pick(GPools.labels)
            return ("tags.contains { label == \(l) }", { v in
                E.build_contains(E.build_KeyPath(root: v, keyPath: \GPet.tags), where: { E.build_Equal(lhs: E.build_KeyPath(root: $0, keyPath: \GTag.label), rhs: E.build_Arg(l)) })
            })
        },
        { r, _ in
            let w = GPools.weight(&r)
            return ("weight > \(w)", { v in E.build_Comparison(lhs: E.build_KeyPath(root: v, keyPath: \GPet.weight), rhs: E.build_Arg(w), op: .greaterThan) })
        },
        { r, _ in
            let w = GPools.weight(&r)
            return ("weight <= \(w)", { v in E.build_Comparison(lhs: E.build_KeyPath(root: v, keyPath: \GPet.weight), rhs: E.build_Arg(w), op: .lessThanOrEqual) })
        },
        { r, _ in
            let k = r.pick(GKind.allCases)
            return ("kind == .\(k)", { v in E.build_Equal(lhs: E.build_KeyPath(root: v, keyPath: \GPet.kind), rhs: E.build_Arg(k)) })
        },
        { _, _ in ("owner == nil", { v in E.build_Equal(lhs: E.build_KeyPath(root: v, keyPath: \GPet.owner), rhs: E.build_NilLiteral()) }) },
        { r, ids in
            let id = r.pick(ids.pets)
            return ("persistentModelID < \(id.rowID)", { v in E.build_Comparison(lhs: E.build_KeyPath(root: v, keyPath: \GPet.persistentModelID), rhs: E.build_Arg(id), op: .lessThan) })
        },
        { _, _ in ("tags.isEmpty", { v in E.build_KeyPath(root: E.build_KeyPath(root: v, keyPath: \GPet.tags), keyPath: \[GTag].isEmpty) }) },
    ]

    nonisolated(unsafe) static let owner: [(inout SeededGenerator, GIDs) -> (String, (E.Variable<GOwner>) -> Expr)] = [
        { r, _ in
            let w = GPools.weight(&r)
            return ("pets.filter { weight > \(w) }.count > 0", { v in
                E.build_Comparison(lhs: E.build_KeyPath(root: E.build_filter(E.build_KeyPath(root: v, keyPath: \GOwner.pets), {
                    E.build_Comparison(lhs: E.build_KeyPath(root: $0, keyPath: \GPet.weight), rhs: E.build_Arg(w), op: .greaterThan)
                }), keyPath: \[GPet].count), rhs: E.build_Arg(0), op: .greaterThan)
            })
        },
        { r, _ in
            let k = r.pick(GKind.allCases)
            return ("pets.contains { kind == .\(k) }", { v in
                E.build_contains(E.build_KeyPath(root: v, keyPath: \GOwner.pets), where: { E.build_Equal(lhs: E.build_KeyPath(root: $0, keyPath: \GPet.kind), rhs: E.build_Arg(k)) })
            })
        },
        { _, _ in ("pets.isEmpty", { v in E.build_KeyPath(root: E.build_KeyPath(root: v, keyPath: \GOwner.pets), keyPath: \[GPet].isEmpty) }) },
        { r, _ in
            let n = r.int(0...100)
            return ("age > \(n)", { v in E.build_Comparison(lhs: E.build_KeyPath(root: v, keyPath: \GOwner.age), rhs: E.build_Arg(n), op: .greaterThan) })
        },
        { r, _ in
            let n = r.int(0...100)
            return ("age <= \(n)", { v in E.build_Comparison(lhs: E.build_KeyPath(root: v, keyPath: \GOwner.age), rhs: E.build_Arg(n), op: .lessThanOrEqual) })
        },
        { r, _ in
            let x: String? = r.pick(GPools.names)
            return ("friend?.name == \(x!.diffShown)", { v in
                E.build_Equal(lhs: E.build_flatMap(E.build_KeyPath(root: v, keyPath: \GOwner.friend), { E.build_KeyPath(root: $0, keyPath: \GOwner.name) }), rhs: E.build_Arg(x))
            })
        },
        { r, _ in
            let x = r.pick(GPools.names)
            return ("name == \(x.diffShown)", { v in E.build_Equal(lhs: E.build_KeyPath(root: v, keyPath: \GOwner.name), rhs: E.build_Arg(x)) })
        },
        { r, ids in
            let id = r.pick(ids.owners)
            return ("persistentModelID == \(id.rowID)", { v in E.build_Equal(lhs: E.build_KeyPath(root: v, keyPath: \GOwner.persistentModelID), rhs: E.build_Arg(id)) })
        },
    ]

    nonisolated(unsafe) static let tag: [(inout SeededGenerator, GIDs) -> (String, (E.Variable<GTag>) -> Expr)] = [
        { r, _ in
            let l = r.pick(GPools.labels)
            return ("label == \(l)", { v in E.build_Equal(lhs: E.build_KeyPath(root: v, keyPath: \GTag.label), rhs: E.build_Arg(l)) })
        },
        { r, _ in
            let k = r.pick(GKind.allCases)
            return ("pets.contains { kind == .\(k) }", { v in
                E.build_contains(E.build_KeyPath(root: v, keyPath: \GTag.pets), where: { E.build_Equal(lhs: E.build_KeyPath(root: $0, keyPath: \GPet.kind), rhs: E.build_Arg(k)) })
            })
        },
    ]
}

/// The graph as plain values, by serial: what the store must hold.
struct GShadow {
    struct Owner { var name: String; var age: Int; var pets: [Int] = []; var friend: Int? = nil }
    struct Pet { var name: String; var kind: GKind; var weight: Double; var owner: Int? = nil; var tags: [Int] = [] }
    struct Tag { var label: String; var pets: [Int] = [] }
    var owners: [Int: Owner] = [:]
    var pets: [Int: Pet] = [:]
    var tags: [Int: Tag] = [:]
    /// Deleted in the context, not saved yet (delete rules apply on save).
    var deletedOwners: Set<Int> = []
    var deletedPets: Set<Int> = []
    var deletedTags: Set<Int> = []

    var liveOwners: [Int] { owners.keys.filter { !deletedOwners.contains($0) }.sorted() }
    var livePets: [Int] { pets.keys.filter { !deletedPets.contains($0) }.sorted() }
    var liveTags: [Int] { tags.keys.filter { !deletedTags.contains($0) }.sorted() }

    /// `pet.owner = owner` or `owner.pets.append(pet)`: the pet leaves its previous owner.
    mutating func move(_ pet: Int, to owner: Int?) {
        let old = pets[pet]!.owner
        guard old != owner else { return }
        if let old { owners[old]!.pets.removeAll { $0 == pet } }
        if let owner { owners[owner]!.pets.append(pet) }
        pets[pet]!.owner = owner
    }

    mutating func tag(_ pet: Int, _ tag: Int) {
        if !pets[pet]!.tags.contains(tag) { pets[pet]!.tags.append(tag) }
        if !tags[tag]!.pets.contains(pet) { tags[tag]!.pets.append(pet) }
    }

    mutating func untag(_ pet: Int, _ tag: Int) {
        pets[pet]!.tags.removeAll { $0 == tag }
        tags[tag]!.pets.removeAll { $0 == pet }
    }

    /// What a save does: cascade (owner → pets), nullify the rest; a friend that was deleted
    /// reads as nil afterwards.
    mutating func save() {
        for o in deletedOwners { for p in owners[o]!.pets { deletedPets.insert(p) } }
        for p in deletedPets {
            let pet = pets[p]!
            if let o = pet.owner, !deletedOwners.contains(o) { owners[o]!.pets.removeAll { $0 == p } }
            for t in pet.tags where !deletedTags.contains(t) { tags[t]!.pets.removeAll { $0 == p } }
        }
        for t in deletedTags {
            for p in tags[t]!.pets where !deletedPets.contains(p) { pets[p]!.tags.removeAll { $0 == t } }
        }
        for o in deletedOwners { owners.removeValue(forKey: o) }
        for p in deletedPets { pets.removeValue(forKey: p) }
        for t in deletedTags { tags.removeValue(forKey: t) }
        for (o, owner) in owners where owner.friend.map({ owners[$0] == nil }) ?? false { owners[o]!.friend = nil }
        deletedOwners = []
        deletedPets = []
        deletedTags = []
    }
}

/// One context's objects, by serial.
struct GObjects {
    var owners: [Int: GOwner] = [:]
    var pets: [Int: GPet] = [:]
    var tags: [Int: GTag] = [:]
}

/// The graph differential harness: one store, its sessions, rounds and cases.
public final class GraphHarness {
    var rng: SeededGenerator
    /// The seed of this run (`STRATA_SEED` in the environment, or random): failures name it.
    public let seed: UInt64
    public private(set) var failures: [String] = []
    public private(set) var cases = 0
    /// Cases whose expected answer is not empty (a check that the predicates select something).
    public private(set) var nonEmpty = 0
    var shadow = GShadow()
    var nextSerial = 0
    /// False for a store that promises no order beyond what a fetch sorts by (SwiftData promises
    /// none; the engine keeps row order): every fetch then sorts by `serial` last.
    let keepsRowOrder: Bool

    public init(keepsRowOrder: Bool = true) {
        self.keepsRowOrder = keepsRowOrder
        seed = SeededGenerator.seedOfThisRun()
        rng = SeededGenerator(seed: seed)
    }

    /// The whole run on one store: a seeded graph saved through a container from `open`, then
    /// `sessions` reopened containers, each with `rounds` rounds of mutations, pending checks,
    /// a save and checks after it; then one more reopen. `scale` multiplies the cases (each phase
    /// runs at least one).
    public func runSessions(open: () throws -> ModelContainer, scale: Double = 1, sessions: Int = 3, rounds: Int = 2) throws {
        func cases(_ count: Int) -> Int { scaledCases(count, scale) }
        var deletedIDs = GIDs()
        do {
            let container = try open()
            try seed(ModelContext(container), owners: 40, pets: 150, tags: 15)
        }
        for session in 0..<sessions {
            // A reopened store.
            let container = try open()
            do {
                // A fresh context that holds nothing answers first (related objects are faulted in and let go).
                let fresh = ModelContext(container)
                let context = ModelContext(container)
                var objects = try load(context, "session \(session) reopened")
                check(objects, "session \(session) reopened")
                try run(fresh, objects, count: cases(30), phase: "session \(session) stored (fresh context)", extraIDs: deletedIDs)
                try run(context, objects, count: cases(30), phase: "session \(session) stored", extraIDs: deletedIDs)

                for round in 0..<rounds {
                    let phase = "session \(session) round \(round)"
                    try mutate(context, &objects, steps: 40)
                    // Unsaved: fetches include the pending changes (Foundation evaluates the live objects).
                    let pending = try load(context, "\(phase) pending")
                    try run(context, pending, count: cases(40), phase: "\(phase) pending", extraIDs: deletedIDs)
                    for (s, o) in objects.owners where shadow.deletedOwners.contains(s) { deletedIDs.owners.append(o.persistentModelID) }
                    try context.save()
                    shadow.save()
                    objects.owners = objects.owners.filter { shadow.owners[$0.key] != nil }
                    objects.pets = objects.pets.filter { shadow.pets[$0.key] != nil }
                    objects.tags = objects.tags.filter { shadow.tags[$0.key] != nil }
                    if context.hasChanges { fail("\(phase) saved: the context still has changes") }
                    let saved = try load(context, "\(phase) saved")
                    check(saved, "\(phase) saved")
                    for (name, count, want) in [("owners", try context.fetchCount(FetchDescriptor<GOwner>()), shadow.owners.count),
                                                ("pets", try context.fetchCount(FetchDescriptor<GPet>()), shadow.pets.count),
                                                ("tags", try context.fetchCount(FetchDescriptor<GTag>()), shadow.tags.count)] where count != want {
                        fail("\(phase) saved: fetchCount of \(name) \(count), expected \(want)")
                    }
                    try run(context, saved, count: cases(20), phase: "\(phase) saved", extraIDs: deletedIDs)
                    try run(ModelContext(container), saved, count: cases(20), phase: "\(phase) saved (other context)", extraIDs: deletedIDs)
                }
            }
        }
        // The last state, reopened once more.
        do {
            let container = try open()
            let context = ModelContext(container)
            let objects = try load(context, "final reopen")
            check(objects, "final reopen")
            try run(ModelContext(container), objects, count: cases(30), phase: "final (fresh context)", extraIDs: deletedIDs)
        }
    }

    /// What the run ended with, for its log line.
    public var summary: String {
        "\(cases) cases (\(nonEmpty) with a non-empty answer), \(shadow.owners.count) owners, \(shadow.pets.count) pets, \(shadow.tags.count) tags at the end"
    }

    func fail(_ message: String) {
        if failures.count < 12 { failures.append("seed \(seed): \(message)") }
    }

    func serial() -> Int { nextSerial += 1; return nextSerial }

    func newOwner() -> (GOwner, Int) {
        let o = GOwner()
        let s = serial()
        o.serial = s; o.name = rng.pick(GPools.names); o.age = rng.int(0...99)
        shadow.owners[s] = GShadow.Owner(name: o.name, age: o.age)
        return (o, s)
    }

    func newPet() -> (GPet, Int) {
        let p = GPet()
        let s = serial()
        p.serial = s; p.name = rng.pick(GPools.petNames); p.kind = rng.pick(GKind.allCases); p.weight = GPools.weight(&rng)
        shadow.pets[s] = GShadow.Pet(name: p.name, kind: p.kind, weight: p.weight)
        return (p, s)
    }

    func newTag() -> (GTag, Int) {
        let t = GTag()
        let s = serial()
        t.serial = s; t.label = rng.pick(GPools.labels)
        shadow.tags[s] = GShadow.Tag(label: t.label)
        return (t, s)
    }

    /// The initial graph, built with a mix of both sides of each relationship.
    func seed(_ context: ModelContext, owners: Int, pets: Int, tags: Int) throws {
        var os: [(GOwner, Int)] = [], ps: [(GPet, Int)] = [], ts: [(GTag, Int)] = []
        for _ in 0..<tags { let t = newTag(); context.insert(t.0); ts.append(t) }
        for _ in 0..<owners { let o = newOwner(); context.insert(o.0); os.append(o) }
        for _ in 0..<pets {
            let p = newPet()
            ps.append(p)
            if rng.chance(0.85) {
                let (o, os_) = rng.pick(os)
                if rng.chance(0.5) { p.0.owner = o } else { o.pets.append(p.0) }
                shadow.move(p.1, to: os_)
            } else {
                context.insert(p.0)
            }
            for _ in 0..<rng.int(0...3) {
                let (t, ts_) = rng.pick(ts)
                if shadow.pets[p.1]!.tags.contains(ts_) { continue }
                if rng.chance(0.5) { p.0.tags.append(t) } else { t.pets.append(p.0) }
                shadow.tag(p.1, ts_)
            }
        }
        for (o, s) in os where rng.chance(0.5) {
            let (f, fs) = rng.pick(os)
            o.friend = f
            shadow.owners[s]!.friend = fs
        }
        try context.save()
    }

    /// Every object of each model, in row order, keyed by serial; checks the sets against the shadow.
    func load(_ context: ModelContext, _ phase: String) throws -> GObjects {
        var objects = GObjects()
        for o in try context.fetch(FetchDescriptor<GOwner>()) { objects.owners[o.serial] = o }
        for p in try context.fetch(FetchDescriptor<GPet>()) { objects.pets[p.serial] = p }
        for t in try context.fetch(FetchDescriptor<GTag>()) { objects.tags[t.serial] = t }
        if objects.owners.keys.sorted() != shadow.liveOwners { fail("\(phase): owners \(objects.owners.keys.sorted()) expected \(shadow.liveOwners)") }
        if objects.pets.keys.sorted() != shadow.livePets { fail("\(phase): pets \(objects.pets.keys.sorted()) expected \(shadow.livePets)") }
        if objects.tags.keys.sorted() != shadow.liveTags { fail("\(phase): tags \(objects.tags.keys.sorted()) expected \(shadow.liveTags)") }
        return objects
    }

    /// The objects against the shadow (values, relationship contents and order), and both
    /// sides of every relationship against each other.
    func check(_ objects: GObjects, _ phase: String) {
        for (s, o) in objects.owners {
            guard let want = shadow.owners[s] else { continue }
            if o.name != want.name || o.age != want.age { fail("\(phase): owner \(s) values (\(o.name), \(o.age)) expected (\(want.name), \(want.age))") }
            let pets = o.pets
            if pets.map(\.serial) != want.pets { fail("\(phase): owner \(s).pets \(pets.map(\.serial)) expected \(want.pets)") }
            if o.friend?.serial != want.friend { fail("\(phase): owner \(s).friend \(o.friend?.serial as Any) expected \(want.friend as Any)") }
            for p in pets {
                if p.owner !== o { fail("\(phase): owner \(s) has pet \(p.serial) whose owner is \(p.owner?.serial as Any)") }
                if objects.pets[p.serial] !== p { fail("\(phase): owner \(s) has pet \(p.serial) that is not the fetched object (dangling or duplicate)") }
            }
            if let f = o.friend, objects.owners[f.serial] !== f { fail("\(phase): owner \(s).friend \(f.serial) is not the fetched object") }
        }
        for (s, p) in objects.pets {
            guard let want = shadow.pets[s] else { continue }
            if p.name != want.name || p.kind != want.kind || p.weight != want.weight { fail("\(phase): pet \(s) values differ") }
            if p.owner?.serial != want.owner { fail("\(phase): pet \(s).owner \(p.owner?.serial as Any) expected \(want.owner as Any)") }
            if let owner = p.owner {
                if !owner.pets.contains(where: { $0 === p }) { fail("\(phase): pet \(s).owner \(owner.serial) does not list it") }
                if objects.owners[owner.serial] !== owner { fail("\(phase): pet \(s).owner is not the fetched object") }
            }
            let tags = p.tags
            if tags.map(\.serial) != want.tags { fail("\(phase): pet \(s).tags \(tags.map(\.serial)) expected \(want.tags)") }
            for t in tags {
                if !t.pets.contains(where: { $0 === p }) { fail("\(phase): pet \(s) has tag \(t.serial) that does not list it") }
                if objects.tags[t.serial] !== t { fail("\(phase): pet \(s) has tag \(t.serial) that is not the fetched object") }
            }
        }
        for (s, t) in objects.tags {
            guard let want = shadow.tags[s] else { continue }
            if t.label != want.label { fail("\(phase): tag \(s) label differs") }
            let pets = t.pets
            if pets.map(\.serial) != want.pets { fail("\(phase): tag \(s).pets \(pets.map(\.serial)) expected \(want.pets)") }
            for p in pets where !p.tags.contains(where: { $0 === t }) { fail("\(phase): tag \(s) has pet \(p.serial) that does not list it") }
        }
    }

    func ids(_ objects: GObjects, extra: GIDs) -> GIDs {
        var ids = extra
        ids.owners += objects.owners.values.map(\.persistentModelID)
        ids.pets += objects.pets.values.map(\.persistentModelID)
        ids.tags += objects.tags.values.map(\.persistentModelID)
        ids.owners.sort(); ids.pets.sort(); ids.tags.sort()
        if ids.owners.isEmpty { ids.owners = [objects.pets.values.first?.persistentModelID].compactMap { $0 } }
        return ids
    }

    func petSort() -> ([SortDescriptor<GPet>], String) {
        let options: [(SortOrder) -> (SortDescriptor<GPet>, String)] = [
            { (SortDescriptor(\GPet.weight, order: $0), "weight") },
            { (SortDescriptor(\GPet.name, order: $0), "name") },
            { (SortDescriptor(\GPet.owner?.name, order: $0), "owner?.name") },
            { (SortDescriptor(\GPet.owner?.age, order: $0), "owner?.age") },
            { (SortDescriptor(\GPet.serial, order: $0), "serial") },
            { (SortDescriptor(\GPet.persistentModelID, order: $0), "persistentModelID") },
        ]
        return sorts(options)
    }

    func ownerSort() -> ([SortDescriptor<GOwner>], String) {
        let options: [(SortOrder) -> (SortDescriptor<GOwner>, String)] = [
            { (SortDescriptor(\GOwner.age, order: $0), "age") },
            { (SortDescriptor(\GOwner.name, order: $0), "name") },
            { (SortDescriptor(\GOwner.friend?.name, order: $0), "friend?.name") },
            { (SortDescriptor(\GOwner.friend?.age, order: $0), "friend?.age") },
        ]
        return sorts(options)
    }

    func tagSort() -> ([SortDescriptor<GTag>], String) {
        sorts([{ (SortDescriptor(\GTag.label, order: $0), "label") }])
    }

    func sorts<T>(_ options: [(SortOrder) -> (SortDescriptor<T>, String)]) -> ([SortDescriptor<T>], String) {
        var sort: [SortDescriptor<T>] = [], text: [String] = []
        for _ in 0..<rng.pick([0, 1, 1, 2, 2]) {
            let order: SortOrder = rng.chance(0.5) ? .forward : .reverse
            let (d, name) = rng.pick(options)(order)
            sort.append(d)
            text.append(name + (order == .reverse ? " desc" : ""))
        }
        return (sort, text.joined(separator: ", "))
    }

    /// One random case: Strata's fetch in `context` against Foundation over `reference`
    /// (every object of the model, in row order).
    func runCase<T: PersistentModel>(_ context: ModelContext, _ reference: [T], _ c: GCase<T>, _ sortPair: ([SortDescriptor<T>], String),
                                     serial: (T) -> Int, tiebreak: KeyPath<T, Int> & Sendable, phase: String) throws {
        var (sort, sortText) = sortPair
        if !keepsRowOrder {
            sort.append(SortDescriptor(tiebreak))
            sortText += sortText.isEmpty ? "serial" : ", serial"
        }
        var descriptor = FetchDescriptor<T>(predicate: c.predicate, sortBy: sort)
        if rng.chance(0.35) { descriptor.fetchLimit = rng.int(1...25) }
        if rng.chance(0.3) { descriptor.fetchOffset = rng.int(0...30) }
        cases += 1
        let describe = "\(phase) \(T.self) predicate { \(c.text) } sort [\(sortText)] limit \(descriptor.fetchLimit.map(String.init) ?? "-") offset \(descriptor.fetchOffset.map(String.init) ?? "-")"
        var expected = try reference.filter { try c.predicate.evaluate($0) }
        expected = expected.sorted(using: sort)
        let start = min(descriptor.fetchOffset ?? 0, expected.count)
        let end = descriptor.fetchLimit.map { min(expected.count, start + $0) } ?? expected.count
        let want = expected[start..<end].map(serial)
        if !want.isEmpty { nonEmpty += 1 }
        let got: [Int]
        let count: Int
        do {
            got = try context.fetch(descriptor).map(serial)
            count = try context.fetchCount(descriptor)
        } catch {
            fail("\(describe)\n  threw \(error)")
            return
        }
        if got != want {
            fail("\(describe)\n  expected serials \(want)\n  got serials      \(got)")
        } else if count != want.count {
            fail("\(describe)\n  fetchCount \(count), expected \(want.count)")
        } else if cases % 4 == 0 {
            let identifiers = try context.fetchIdentifiers(descriptor)
            let byID = Dictionary(reference.map { ($0.persistentModelID, serial($0)) }, uniquingKeysWith: { a, _ in a })
            if identifiers.map({ byID[$0] ?? -1 }) != want { fail("\(describe)\n  fetchIdentifiers give serials \(identifiers.map { byID[$0] ?? -1 }), expected \(want)") }
        }
    }

    /// `count` random cases over the three models. `fetching` is where Strata answers (a
    /// fresh context, or the one that holds `objects`); Foundation evaluates `objects`.
    func run(_ fetching: ModelContext, _ objects: GObjects, count: Int, phase: String, extraIDs: GIDs = GIDs()) throws {
        let t0 = ContinuousClock.now
        defer { if ProcessInfo.processInfo.environment["STRATA_GRAPH_TIMING"] != nil { print("TIMING", phase, ContinuousClock.now - t0) } }
        let ids = ids(objects, extra: extraIDs)
        // Row order (the order of a fetch without sort descriptors, which ties keep).
        let owners = objects.owners.values.sorted { $0.persistentModelID.rowID < $1.persistentModelID.rowID }
        let pets = objects.pets.values.sorted { $0.persistentModelID.rowID < $1.persistentModelID.rowID }
        let tags = objects.tags.values.sorted { $0.persistentModelID.rowID < $1.persistentModelID.rowID }
        for i in 0..<count {
            guard failures.count < 12 else { return }
            let which = rng.int(0...9)
            if which < 5, !ids.pets.isEmpty {
                try runCase(fetching, pets, GTemplates.random(GTemplates.pet, GAtoms.pet, &rng, ids), petSort(), serial: \.serial, tiebreak: \.serial, phase: "\(phase) #\(i)")
            } else if which < 9, !ids.owners.isEmpty, !ids.pets.isEmpty {
                try runCase(fetching, owners, GTemplates.random(GTemplates.owner, GAtoms.owner, &rng, ids), ownerSort(), serial: \.serial, tiebreak: \.serial, phase: "\(phase) #\(i)")
            } else {
                try runCase(fetching, tags, GTemplates.random(GTemplates.tag, GAtoms.tag, &rng, ids), tagSort(), serial: \.serial, tiebreak: \.serial, phase: "\(phase) #\(i)")
            }
        }
    }

    /// Random mutations in `context`, mirrored in the shadow (nothing saved).
    func mutate(_ context: ModelContext, _ objects: inout GObjects, steps: Int) throws {
        // A batch delete first, while nothing is pending (it selects on stored values).
        if rng.chance(0.4) {
            let a = rng.int(80...99), n = rng.int(0...2)
            try context.delete(model: GOwner.self, where: #Predicate { $0.age >= a && $0.pets.count <= n })
            for s in shadow.liveOwners where shadow.owners[s]!.age >= a && shadow.owners[s]!.pets.count <= n { shadow.deletedOwners.insert(s) }
        }
        for _ in 0..<steps {
            let owners = shadow.liveOwners, pets = shadow.livePets, tags = shadow.liveTags
            guard !owners.isEmpty, !pets.isEmpty, !tags.isEmpty else { break }
            switch rng.int(0...17) {
            case 0, 1:   // move a pet, pet side
                let p = rng.pick(pets), o: Int? = rng.chance(0.1) ? nil : rng.pick(owners)
                objects.pets[p]!.owner = o.map { objects.owners[$0]! }
                shadow.move(p, to: o)
            case 2, 3:   // move a pet, owner side
                let p = rng.pick(pets), o = rng.pick(owners)
                guard shadow.pets[p]!.owner != o else { continue }
                objects.owners[o]!.pets.append(objects.pets[p]!)
                shadow.move(p, to: o)
            case 4:      // remove a pet from its owner, owner side
                let o = rng.pick(owners)
                guard let p = shadow.owners[o]!.pets.randomElement(using: &rng) else { continue }
                let pet = objects.pets[p]!
                objects.owners[o]!.pets.removeAll { $0 === pet }
                shadow.move(p, to: nil)
            case 5:      // reorder an owner's pets
                let o = rng.pick(owners)
                let order = rng.chance(0.5) ? shadow.owners[o]!.pets.shuffled(using: &rng) : shadow.owners[o]!.pets.reversed()
                objects.owners[o]!.pets = order.map { objects.pets[$0]! }
                shadow.owners[o]!.pets = order
            case 6:      // tag, either side
                let p = rng.pick(pets), t = rng.pick(tags)
                guard !shadow.pets[p]!.tags.contains(t) else { continue }
                if rng.chance(0.5) { objects.pets[p]!.tags.append(objects.tags[t]!) } else { objects.tags[t]!.pets.append(objects.pets[p]!) }
                shadow.tag(p, t)
            case 7:      // untag, either side
                let p = rng.pick(pets)
                guard let t = shadow.pets[p]!.tags.randomElement(using: &rng) else { continue }
                let pet = objects.pets[p]!, tag = objects.tags[t]!
                if rng.chance(0.5) { pet.tags.removeAll { $0 === tag } } else { tag.pets.removeAll { $0 === pet } }
                shadow.untag(p, t)
            case 8:      // delete an owner: cascade on save
                guard rng.chance(0.5) else { continue }
                let o = rng.pick(owners)
                context.delete(objects.owners[o]!)
                shadow.deletedOwners.insert(o)
            case 9:      // delete a pet: nullify on save
                let p = rng.pick(pets)
                context.delete(objects.pets[p]!)
                shadow.deletedPets.insert(p)
            case 10:     // delete a tag
                guard rng.chance(0.3), tags.count > 3 else { continue }
                let t = rng.pick(tags)
                context.delete(objects.tags[t]!)
                shadow.deletedTags.insert(t)
            case 11:     // a new owner with new pets, set before the insert
                let (o, s) = newOwner()
                let news = (0..<rng.int(0...3)).map { _ in newPet() }
                o.pets = news.map(\.0)
                if rng.chance(0.3) { let f = rng.pick(owners); o.friend = objects.owners[f]!; shadow.owners[s]!.friend = f }
                context.insert(o)
                objects.owners[s] = o
                for (p, ps) in news { objects.pets[ps] = p; shadow.move(ps, to: s) }
            case 12:     // a new pet given an owner (inserted through it), maybe a tag
                let (p, s) = newPet()
                let o = rng.pick(owners)
                p.owner = objects.owners[o]!
                objects.pets[s] = p
                shadow.move(s, to: o)
                if rng.chance(0.5) { let t = rng.pick(tags); p.tags.append(objects.tags[t]!); shadow.tag(s, t) }
            case 13:     // a new tag, inserted through a pet
                let (t, s) = newTag()
                let p = rng.pick(pets)
                objects.pets[p]!.tags.append(t)
                objects.tags[s] = t
                shadow.tag(p, s)
            case 14:     // attribute edits
                let o = rng.pick(owners), p = rng.pick(pets)
                let age = rng.int(0...99), w = GPools.weight(&rng), name = rng.pick(GPools.names)
                objects.owners[o]!.age = age; shadow.owners[o]!.age = age
                objects.owners[o]!.name = name; shadow.owners[o]!.name = name
                objects.pets[p]!.weight = w; shadow.pets[p]!.weight = w
            case 15:     // friend: another, itself, or none
                let o = rng.pick(owners)
                let f: Int? = rng.chance(0.2) ? nil : rng.chance(0.1) ? o : rng.pick(owners)
                objects.owners[o]!.friend = f.map { objects.owners[$0]! }
                shadow.owners[o]!.friend = f
            case 16:     // replace a pet's tags wholesale
                let p = rng.pick(pets)
                let newTags = Array(Set(rng.some(tags, max: 3))).sorted().shuffled(using: &rng)
                for t in shadow.pets[p]!.tags where !newTags.contains(t) { shadow.untag(p, t) }
                objects.pets[p]!.tags = newTags.map { objects.tags[$0]! }
                shadow.pets[p]!.tags = newTags
                for t in newTags where !shadow.tags[t]!.pets.contains(p) { shadow.tags[t]!.pets.append(p) }
            default:     // release every pet of an owner
                guard rng.chance(0.3) else { continue }
                let o = rng.pick(owners)
                for p in shadow.owners[o]!.pets { shadow.pets[p]!.owner = nil }
                shadow.owners[o]!.pets = []
                objects.owners[o]!.pets = []
            }
        }
    }
}

