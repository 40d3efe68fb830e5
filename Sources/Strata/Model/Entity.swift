@_spi(Reflection) import Swift
import Foundation
import Synchronization
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// What Strata knows about one model class: its persisted properties, unique constraints and
/// indexes, discovered from the class itself (an `init()` instance and its property wrappers),
/// and where an object keeps its backing.
final class Entity: @unchecked Sendable {
    let name: String
    let type: any PersistentModel.Type
    let properties: [PersistedProperty]
    /// The relationship properties (also in `properties`).
    let relationships: [RelationshipProperty]
    /// The `.externalStorage` attributes.
    let externals: [AttributeProperty]
    /// The properties whose record fields hold their values (all but external attributes),
    /// by index, for the history of a changed record. (Indexes, not index-and-name pairs: each
    /// new element type of an array costs a fresh process's open its metadata, W8.)
    let inlineFields: [Int]
    /// Predicates and sorts that fall back to objects use registered ones (relationships and
    /// external values load through the context).
    let needsRegisteredObjects: Bool
    let propertyIndex: [String: Int]
    /// Unique constraints (single `.unique` attributes and `uniqueConstraints`), as property indexes.
    private(set) var uniqueGroups: [[Int]] = []
    /// Secondary indexes from `static var indexes`, as property indexes.
    private(set) var indexGroups: [[Int]] = []
    /// The `@Transient` storages, which take part in observation (slots after the persisted ones).
    private let transients: [(offset: Int, link: StorageLink)]
    /// What `attach` writes, for each persisted property and then each transient: the offsets
    /// in the object of its storage's link and slot, and the slot's number (three `Int`s a
    /// storage). Then where the first persisted property keeps the backing. (Followed property
    /// by property, the links cost each new object about 12 instructions more, W7; an `[Int]`,
    /// since an array of a new element type costs a fresh process's open its metadata, W8.)
    private let links: [Int]
    private let keeperOffset: Int
    /// How many slots observers register under (see `ModelBacking.observe`): the persisted
    /// properties, then the transient ones.
    var observedSlotCount: Int { properties.count + transients.count }
    /// The largest record of this model encoded so far (a hint for the next encoding's buffer,
    /// so that a record is not copied as it outgrows a guess).
    let largestRecord = Atomic<Int>(0)
    /// The scope of the model's temporary identifiers (of objects not yet saved), shared: they
    /// compare by it, not by their model's name.
    let temporaryScope: IdentifierScope
    private let makeInstance: () -> AnyObject
    /// The properties `schemaMetadata` lists, with their indexes: the key paths the prober cannot
    /// confirm (values it cannot mark) are found among them. Their key paths are made only
    /// then, and only those of the asked key path's value type (see `Schema.PropertyMetadata`).
    /// A list searched with `==`: a dictionary's storage keyed by `AnyKeyPath` made the runtime
    /// scan every conformance record for `AnyKeyPath: Hashable` on a fresh process's first open
    /// (W8, `@Model`). Two lists, side by side: a list of pairs was two more metadata for
    /// the runtime to make in a fresh process (W8).
    private let listedProperties: [Schema.PropertyMetadata]
    private let listedIndexes: [Int]
    private var prober: KeyPathProber!

    /// The entity of model class `T`. (`usingSchemaMetadata` false: by reflection alone, for the
    /// test that holds the two ways equal.)
    init<T: PersistentModel>(_ type: T.Type, usingSchemaMetadata: Bool = true) throws {
        let name = TypeNames.plain(T.self)
        self.name = name
        temporaryScope = IdentifierScope(entityName: name, storeIdentifier: nil)
        self.type = type
        self.makeInstance = { T() }
        let metadata = usingSchemaMetadata ? T.schemaMetadata : []
        let (properties, transients) = try Entity.discoverFields(of: T.self, name: name, metadata: metadata)
        self.properties = properties
        self.transients = transients
        var links: [Int] = []
        links.reserveCapacity(3 * (properties.count + transients.count))
        for property in properties {
            links += [property.offset + property.link.link, property.offset + property.link.slot, property.index]
        }
        for (i, transient) in transients.enumerated() {
            links += [transient.offset + transient.link.link, transient.offset + transient.link.slot, properties.count + i]
        }
        self.links = links
        // (Discovery throws for a model without a persisted property.)
        self.keeperOffset = properties.first.map { $0.offset + ($0.link.keeper ?? 0) } ?? 0
        self.relationships = properties.compactMap { $0 as? RelationshipProperty }
        self.externals = properties.compactMap { $0 as? AttributeProperty }.filter(\.isExternal)
        self.inlineFields = properties.filter { !$0.isExternal }.map(\.index)
        self.needsRegisteredObjects = !relationships.isEmpty || !externals.isEmpty
        // (Filled in a loop: `Dictionary(uniqueKeysWithValues:)` took a list of pairs, one
        // more array type and tuple type for the runtime to make, W8.)
        var propertyIndex = [String: Int](minimumCapacity: properties.count)
        for property in properties { propertyIndex[property.name] = property.index }
        self.propertyIndex = propertyIndex
        var listedProperties: [Schema.PropertyMetadata] = []
        var listedIndexes: [Int] = []
        for property in metadata {
            if let index = propertyIndex[property.name] {
                listedProperties.append(property)
                listedIndexes.append(index)
            }
        }
        self.listedProperties = listedProperties
        self.listedIndexes = listedIndexes
        let prober = KeyPathProber(T.self, entity: self)
        self.prober = prober
        // Each declared group's property indexes, each member found by `index` (nil: not a
        // property; `described` names it in the error). Most models declare none, and none is
        // asked of `count` first. Loops, not `map`: `map` of the list is not specialized here
        // (the model type is generic), and made the metadata of the list types it went through
        // (about 25k instructions a model on a fresh process's open with an empty list, about
        // 50k more with one group).
        func resolve<Member>(_ declared: [[Member]], _ what: String, _ index: (Member) -> Int?,
                             described: (Member) -> String) throws -> [[Int]] {
            guard declared.count > 0 else { return [] }
            var groups: [[Int]] = []
            for group in declared {
                var indexes: [Int] = []
                for member in group {
                    guard let p = index(member) else {
                        throw StrataError.schema("\(name).\(what) names \(described(member)), which is not an @Attribute property of \(name).")
                    }
                    indexes.append(p)
                }
                if !indexes.isEmpty { groups.append(indexes) }
            }
            return groups
        }
        func groups(_ declared: [[PartialKeyPath<T.ConstraintRoot>]], _ what: String) throws -> [[Int]] {
            try resolve(declared, what, { Entity.propertyIndex($0, listedProperties, listedIndexes, properties, prober) }, described: { _ in "a key path" })
        }
        // Groups `#Unique` or `#Index` wrote by name (`_uniqueConstraintNames`, `_indexNames`):
        // their key paths are not made.
        func named(_ declared: [[String]], _ what: String) throws -> [[Int]] {
            try resolve(declared, what, { propertyIndex[$0] }, described: { $0 })
        }
        let uniqueNames = usingSchemaMetadata ? T._uniqueConstraintNames : nil
        let indexNames = usingSchemaMetadata ? T._indexNames : nil
        var unique: [[Int]] = properties.filter(\.isUnique).map { [$0.index] }
        let declaredUnique: [[Int]], declaredIndexes: [[Int]]
        if let uniqueNames { declaredUnique = try named(uniqueNames, "uniqueConstraints") } else { declaredUnique = try groups(T.uniqueConstraints, "uniqueConstraints") }
        if let indexNames { declaredIndexes = try named(indexNames, "indexes") } else { declaredIndexes = try groups(T.indexes, "indexes") }
        for group in declaredUnique where !unique.contains(group) { unique.append(group) }
        var indexes: [[Int]] = []
        for group in declaredIndexes where !indexes.contains(group) && !unique.contains(group) { indexes.append(group) }
        self.uniqueGroups = unique
        self.indexGroups = indexes
        #if DEBUG
        // The list is the compiler's word for what each field is: in debug builds (every test
        // run), it is held to what reflection finds, so the two cannot drift apart unseen.
        try checkSchemaMetadata(metadata, of: T.self, prober: prober)
        // The groups by name are the key paths' groups.
        if uniqueNames != nil, try groups(T.uniqueConstraints, "uniqueConstraints") != declaredUnique {
            throw StrataError.schema("\(name)._uniqueConstraintNames disagrees with its uniqueConstraints (rebuild it)")
        }
        if indexNames != nil, try groups(T.indexes, "indexes") != declaredIndexes {
            throw StrataError.schema("\(name)._indexNames disagrees with its indexes (rebuild it)")
        }
        #endif
    }

    /// Throws a schema error where `@Model`'s `schemaMetadata` and the class's fields disagree:
    /// a listed property that is not a stored field, a storage type that is not the field's, a
    /// key path that does not read the property, or (in a class without a superclass, whose
    /// list is its own) a stored field the list leaves out.
    private func checkSchemaMetadata<T: PersistentModel>(_ metadata: [Schema.PropertyMetadata], of type: T.Type, prober: KeyPathProber) throws {
        guard !metadata.isEmpty else { return }
        var fields: [String: Any.Type] = [:]
        for field in FieldReflection.fields(of: T.self) where field.type != _ModelPropertyInitialized.self {
            guard let type = field.type else { continue }
            fields[field.name.hasPrefix("_") ? String(field.name.dropFirst()) : field.name] = type
        }
        func disagree(_ what: String) -> StrataError { StrataError.schema("\(name).schemaMetadata \(what); the list @Model wrote disagrees with the class (rebuild it)") }
        for listed in metadata {
            guard let fieldType = fields[listed.name] else { throw disagree("lists \(listed.name), which is not a stored property") }
            if let storage = listed.storage, ObjectIdentifier(storage) != ObjectIdentifier(fieldType) {
                throw disagree("gives \(listed.name) the storage \(storage), where the field is a \(fieldType)")
            }
            guard let index = propertyIndex[listed.name] else { continue }  // transient, not persisted
            // (The probe confirms only values it can mark: nil says nothing.)
            let probed = prober.property(for: listed.keypath)
            guard Swift.type(of: listed.keypath).valueType == properties[index].valueType, probed == nil || probed == index else {
                throw disagree("gives \(listed.name) a key path that does not read it")
            }
        }
        if _getSuperclass(T.self) == nil {
            let names = Set(metadata.map(\.name))
            for field in fields.keys.sorted() where !names.contains(field) { throw disagree("leaves out \(field)") }
        }
    }

    /// The persisted properties and the transient storages of a model class, in field order.
    private static func discoverFields<T: PersistentModel>(of type: T.Type, name: String, metadata: [Schema.PropertyMetadata]) throws
        -> ([PersistedProperty], [(offset: Int, link: StorageLink)]) {
        let sample = T()
        var properties: [PersistedProperty] = []
        var transients: [(offset: Int, link: StorageLink)] = []
        // `@Model` lists each field's storage type (as the compiler knows it), and whether it
        // holds a relationship; an `Attribute` or `Transient` field is known from its type's
        // metadata (`knownStorage`); any other field is found by one cast (see `ModelFieldStorage`).
        // The list's entry of a field: the last of its name that gives a storage. (A search,
        // not a dictionary by name: its storage, of a pair, was two more metadata for a fresh
        // process's first open to make, W8; a model has tens of properties at most.)
        // (Its position, not the entry: an optional entry was copied and destroyed through
        // metadata the runtime made for `Schema.PropertyMetadata?` alone, W8.)
        func listedEntry(_ name: String) -> Int? {
            metadata.lastIndex { $0.name == name && $0.storage != nil }
        }
        // Reads `fields` into `properties` and `transients`. Fields without their type
        // (`untypedFields`) must each be a listed property's storage (`_name`, whose type the
        // list gives: the macro's `_storage` function returns the field) or its initialization
        // flag (`_$name`); false where one is not (then the typed fields are read).
        func collect(_ fields: [FieldReflection.Field]) throws -> Bool {
            for field in fields {
                // `@Model`'s initialization flags (`_$name`): neither persisted nor observed.
                // (Empty: each is at offset 0, and only the first is kept.)
                if field.type == nil, field.name.hasPrefix("_$") {
                    guard listedEntry(String(field.name.dropFirst(2))) != nil else { return false }
                    continue
                }
                if field.type == _ModelPropertyInitialized.self { continue }
                let propertyName = field.name.hasPrefix("_") ? String(field.name.dropFirst()) : field.name
                var listedStorage: (any ModelFieldStorage.Type)? = nil
                var listedRoute = ListedStorageRoute.ask
                if let entry = listedEntry(propertyName), let storage = metadata[entry].storage, field.type == nil || field.type == storage {
                    listedStorage = storage
                    listedRoute = metadata[entry].route
                }
                if field.type == nil {
                    guard listedStorage != nil, field.name.hasPrefix("_") else { return false }
                }
                guard let storage = listedStorage ?? field.type.flatMap({ Entity.knownStorage($0) ?? $0 as? any ModelFieldStorage.Type }) else {
                    throw StrataError.schema("\(name).\(propertyName) is a stored property without @Attribute, @Relationship or @Transient. Mark it @Attribute to persist it or @Transient to keep it out of the store; nothing may be silently left unsaved.")
                }
                do {
                    let found: DiscoveredField
                    switch listedRoute {
                    case .ask: found = try storage.discovered(name: propertyName, offset: field.offset, index: properties.count, in: sample)
                    case .attribute(let attribute):
                        found = try attribute.discoveredAttribute(name: propertyName, offset: field.offset, index: properties.count, in: sample)
                    case .relationship(let relationship):
                        found = .persisted(relationship.makeRelationship(name: propertyName, offset: field.offset, index: properties.count, in: sample))
                    }
                    switch found {
                    case .persisted(let property): properties.append(property)
                    case .observed(let link): transients.append((field.offset, link))
                    case .ignored: continue
                    }
                } catch let problem as SchemaProblem {
                    throw StrataError.schema("\(name).\(problem.message)")
                }
            }
            return true
        }
        // A `@Model` class's fields are read without their types when its list is its own (a
        // subclass inherits its superclass's, which leaves out the subclass's fields); the
        // fields' types are made only where that does not account for every field.
        let ownList = !metadata.isEmpty && _getSuperclass(T.self) == nil
        var read = false
        if ownList, let untyped = FieldReflection.untypedFields(of: T.self) { read = try collect(untyped) }
        if !read {
            properties.removeAll()
            transients.removeAll()
            _ = try collect(FieldReflection.fields(of: T.self))
        }
        guard !properties.isEmpty else {
            throw StrataError.schema("\(name) has no @Attribute or @Relationship property; a model needs at least one persisted property.")
        }
        return (properties, transients)
    }

    /// The storage type of an `Attribute` or `Transient` field, found without a cast (one scan
    /// of every conformance loaded per field type, on a fresh process's first open: see
    /// `TypeShape`); nil for other fields, which the cast finds.
    private static func knownStorage(_ type: Any.Type) -> (any ModelFieldStorage.Type)? {
        func attribute<Value>(_: Value.Type) -> any ModelFieldStorage.Type { Attribute<Value>.self }
        func transient<Value>(_: Value.Type) -> any ModelFieldStorage.Type { Transient<Value>.self }
        if let value = TypeShape.attributeValue(type) { return attribute(value) }
        if let value = TypeShape.transientValue(type) { return transient(value) }
        return nil
    }

    /// A new, empty instance (the model's `init()`).
    func newInstance() -> AnyObject { makeInstance() }

    // MARK: Backings

    /// Links every property storage of `object` to `backing`; its first persisted property
    /// keeps `backing` alive.
    func attach(_ backing: ModelBacking, to object: AnyObject) {
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        writeLinks(.passUnretained(backing), base)
        keeperSlot(base).pointee = backing
    }

    /// `attach` for a backing made for the object, whose one reference (`owned`, retained) the
    /// object's keeper takes over: no retain for the keeper and no release of the maker's
    /// reference (two atomic operations per object a fetch makes, W7).
    func attach(owned backing: Unmanaged<ModelBacking>, to object: AnyObject) {
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        writeLinks(backing, base)
        let keeper = keeperSlot(base)
        // (A new object's keeper is nil; were it not, the assignment releases what it held.)
        if keeper.pointee == nil { keeper.initialize(to: backing.takeRetainedValue()) } else { keeper.pointee = backing.takeRetainedValue() }
    }

    @inline(__always)
    private func writeLinks(_ link: Unmanaged<ModelBacking>, _ base: UnsafeMutableRawPointer) {
        links.withUnsafeBufferPointer { links in
            var i = 0
            while i + 2 < links.count {
                base.advanced(by: links[i]).assumingMemoryBound(to: Unmanaged<ModelBacking>?.self).pointee = link
                base.advanced(by: links[i + 1]).assumingMemoryBound(to: Int32.self).pointee = Int32(truncatingIfNeeded: links[i + 2])
                i += 3
            }
        }
    }

    /// The backing of an object of this model, if it has one.
    @inline(__always)
    func backing(of object: AnyObject) -> ModelBacking? {
        keeperSlot(UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())).pointee
    }

    /// Where an object (at `base`) keeps its backing: in its first persisted property.
    @inline(__always)
    private func keeperSlot(_ base: UnsafeMutableRawPointer) -> UnsafeMutablePointer<ModelBacking?> {
        base.advanced(by: keeperOffset).assumingMemoryBound(to: ModelBacking?.self)
    }

    /// The relationship at property index `index`.
    func relationship(at index: Int) -> RelationshipProperty {
        unsafeDowncast(properties[index], to: RelationshipProperty.self)
    }

    // MARK: Key paths and keys

    /// The property a key path of this model reads, if it is one property's own key path.
    func property(for keyPath: AnyKeyPath) -> PersistedProperty? {
        Entity.propertyIndex(keyPath, listedProperties, listedIndexes, properties, prober).map { properties[$0] }
    }

    /// The index of the property `keyPath` reads: by `@Model`'s list first, then by the probe,
    /// then by a list written by hand. (`@Model`'s key paths are the properties' own, and only
    /// those of the key path's value type are made to compare, whose metadata the key path asked
    /// about has made already; probing, which writes marker values into an object and reads them
    /// back through the key path, cost a fresh process's first open and fetch more: W8 `@Model`,
    /// Docs/Benchmarks.md, "Costs". A list written by hand, with
    /// `Schema.PropertyMetadata(name:keypath:)`, may pair a name with a key path of another
    /// property; the probe, which reads the property itself, answers before it.)
    private static func propertyIndex(_ keyPath: AnyKeyPath, _ listed: [Schema.PropertyMetadata], _ indexes: [Int],
                                      _ properties: [PersistedProperty], _ prober: KeyPathProber) -> Int? {
        listedIndex(keyPath, in: listed, indexes, properties, madeByMacro: true)
            ?? prober.property(for: keyPath)
            ?? listedIndex(keyPath, in: listed, indexes, properties, madeByMacro: false)
    }

    /// The property index `listed` gives `keyPath`, if it lists it, among the entries `@Model`
    /// made (`madeByMacro`) or those written by hand. Makes the key paths of the listed
    /// properties of `keyPath`'s value type only (a key path of another value type cannot be
    /// equal).
    private static func listedIndex(_ keyPath: AnyKeyPath, in listed: [Schema.PropertyMetadata], _ indexes: [Int],
                                    _ properties: [PersistedProperty], madeByMacro: Bool) -> Int? {
        let valueType = ObjectIdentifier(Swift.type(of: keyPath).valueType)
        for (i, index) in indexes.enumerated()
        where (listed[i].storage != nil) == madeByMacro && ObjectIdentifier(properties[index].valueType) == valueType
            && listed[i].keypath == keyPath {
            return index
        }
        return nil
    }

    /// The engine's name for a unique constraint's index.
    func uniqueIndexName(_ group: [Int]) -> String { groupName("unique:", group) }
    func indexName(_ group: [Int]) -> String { groupName("index:", group) }

    /// `prefix` and the group's property names, joined by commas. Not `joined(separator:)`: its
    /// first call in a process, unspecialized, looked up its collection's conformances (a scan
    /// of every conformance loaded; W8, Docs/Benchmarks.md).
    private func groupName(_ prefix: String, _ group: [Int]) -> String {
        var name = prefix
        for (i, p) in group.enumerated() {
            if i > 0 { name += "," }
            name += properties[p].name
        }
        return name
    }

    /// The index key of a group of properties for an object, as the index holds it: the
    /// encoded values, or their long form when longer than 2016 bytes
    /// (`KeyEncoding.storedForm`, Docs/FileFormat.md, "Long index keys").
    func key(of group: [Int], object: AnyObject) -> [UInt8] {
        var key: [UInt8] = []
        self.key(of: group, object: object, into: &key)
        return key
    }

    /// `key(of:object:)` into `key`, which keeps its memory.
    func key(of group: [Int], object: AnyObject, into key: inout [UInt8]) {
        exactKey(of: group, object: object, into: &key)
        KeyEncoding.makeStoredForm(&key)
    }

    /// The encoded values of a group of properties for an object, however long: what a long
    /// key's form stands for, compared where two objects or rows must hold the same values.
    func exactKey(of group: [Int], object: AnyObject) -> [UInt8] {
        var key: [UInt8] = []
        exactKey(of: group, object: object, into: &key)
        return key
    }

    /// `exactKey(of:object:)` into `key`, which keeps its memory.
    func exactKey(of group: [Int], object: AnyObject, into key: inout [UInt8]) {
        key.removeAll(keepingCapacity: true)
        // Room for a UUID's or a number's key at once: a key grown from empty by appends was
        // allocated twice (a save computes two keys per object and index).
        if key.capacity < Entity.keyCapacity { key.reserveCapacity(Entity.keyCapacity) }
        // (The properties lent: the entity holds them.)
        properties.withUnsafeBufferPointer { properties in
            for p in group { Unmanaged.passUnretained(properties[p])._withUnsafeGuaranteedRef { $0.appendKey(of: object, to: &key) } }
        }
    }

    /// The index key of a group of properties for a stored record (as the index holds it).
    func key(of group: [Int], view: RecordView) throws -> [UInt8] {
        var key: [UInt8] = []
        try self.key(of: group, view: view, into: &key)
        return key
    }

    /// `key(of:view:)` into `key`, which keeps its memory.
    func key(of group: [Int], view: RecordView, into key: inout [UInt8]) throws {
        try exactKey(of: group, view: view, into: &key)
        KeyEncoding.makeStoredForm(&key)
    }

    /// The encoded values of a group of properties for a stored record, however long.
    func exactKey(of group: [Int], view: RecordView, into key: inout [UInt8]) throws {
        key.removeAll(keepingCapacity: true)
        if key.capacity < Entity.keyCapacity { key.reserveCapacity(Entity.keyCapacity) }
        for p in group { try properties[p].appendKey(ofField: try view.field(p), to: &key) }
    }

    static let keyCapacity = 32
}

/// The fields of a class and its model superclasses, as the runtime reports them.
enum FieldReflection {
    struct Field {
        let name: String
        let offset: Int
        /// The field's type; nil from `untypedFields`, which does not make it.
        let type: Any.Type?
    }

    /// Fields of `type` and of its superclasses, base class first.
    static func fields(of type: AnyClass) -> [Field] {
        var fields: [Field] = []
        // Some runtimes list inherited fields with a subclass, some do not: walk the chain from
        // the base and keep each offset once. (A search of the few fields so far, not a
        // `Set<Int>`: the first set of a key type costs a fresh process a conformance scan.)
        for cls in chain(of: type).reversed() {
            _ = _forEachField(of: cls, options: _EachFieldOptions(rawValue: 1)) { name, offset, fieldType, _ in
                if !fields.contains(where: { $0.offset == offset }) {
                    fields.append(Field(name: String(cString: name), offset: offset, type: fieldType))
                }
                return true
            }
        }
        return fields.sorted { $0.offset < $1.offset }
    }

    /// `fields(of:)` without the fields' types, read from the field descriptors the compiler
    /// emits and the field offsets in the classes' metadata; nil where a class's layout is not
    /// the one read here (then `fields(of:)` answers).
    ///
    /// `_forEachField` makes each field's type from its mangled name, about 5k instructions a
    /// field on a fresh process's first open (a tenth of discovery's, W8 `@Model`). A `@Model`
    /// class's `schemaMetadata` already gives the types of the fields it lists, so discovery
    /// needs only their names and offsets. The layout read is the Swift ABI's for a class
    /// without Objective-C interoperation on a 64-bit platform (Docs/ARCHITECTURE.md, "A model,
    /// and its one backing"): the metadata's nominal type descriptor at offset 40; in the
    /// descriptor, its flags, the field descriptor (a relative pointer at 16), the field count
    /// (36) and where the field offsets start in the metadata, in words (40); in the field
    /// descriptor, its kind, record size and count, then a record (flags, type name, name) per
    /// field. Generic
    /// classes and classes with a resilient superclass, whose offsets are placed otherwise, get
    /// nil, as does anything the checks on the way do not find as expected.
    /// `FieldReflectionTests` holds the answer to `fields(of:)`'s for classes of every shape.
    static func untypedFields(of type: AnyClass) -> [Field]? {
        #if canImport(ObjectiveC)
        return nil
        #else
        guard MemoryLayout<Int>.size == 8 else { return nil }
        var fields: [Field] = []
        guard appendDescribedFields(of: type, to: &fields) else { return nil }
        return fields.sorted { $0.offset < $1.offset }
        #endif
    }

    /// `type`, its superclass, and so on.
    private static func chain(of type: AnyClass) -> [AnyClass] {
        var chain: [AnyClass] = [type]
        while let superclass = _getSuperclass(chain[chain.count - 1]) { chain.append(superclass) }
        return chain
    }

    /// Appends the fields of `cls`'s superclasses, then those it declares, that `fields` has
    /// no field at the offset of; false where a layout is not the one `untypedFields` reads.
    /// (Recursive, not over a list of the classes: an `[AnyClass]` is one more array type for
    /// a fresh process to make.)
    private static func appendDescribedFields(of cls: AnyClass, to fields: inout [Field]) -> Bool {
        if let superclass = _getSuperclass(cls), !appendDescribedFields(of: superclass, to: &fields) { return false }
        let metadata = unsafeBitCast(cls, to: UnsafeRawPointer.self)
        guard let descriptor = metadata.loadUnaligned(fromByteOffset: 40, as: UnsafeRawPointer?.self) else { return false }
        let flags = descriptor.loadUnaligned(as: UInt32.self)
        // A class (kind 16), not generic (0x80); of its own flags (the top half), immediate
        // members at positive offsets (not 0x1000) and no resilient superclass (not 0x2000).
        guard flags & 0x1F == 16, flags & 0x80 == 0, flags & 0x3000_0000 == 0,
              let described = relative(descriptor + 16) else { return false }
        let count = Int(descriptor.loadUnaligned(fromByteOffset: 36, as: UInt32.self))
        let vector = Int(descriptor.loadUnaligned(fromByteOffset: 40, as: UInt32.self))
        // A class's field descriptor (kind 1), with 12-byte records, one per field.
        guard described.loadUnaligned(fromByteOffset: 8, as: UInt16.self) == 1,
              described.loadUnaligned(fromByteOffset: 10, as: UInt16.self) == 12,
              Int(described.loadUnaligned(fromByteOffset: 12, as: UInt32.self)) == count else { return false }
        for i in 0..<count {
            guard let name = relative(described + 16 + 12 * i + 8) else { return false }
            let offset = metadata.loadUnaligned(fromByteOffset: (vector + i) * 8, as: Int.self)
            if !fields.contains(where: { $0.offset == offset }) {
                fields.append(Field(name: String(cString: name.assumingMemoryBound(to: CChar.self)), offset: offset, type: nil))
            }
        }
        return true
    }

    /// The target of the 32-bit relative pointer at `pointer`; nil for an empty one.
    private static func relative(_ pointer: UnsafeRawPointer) -> UnsafeRawPointer? {
        let distance = pointer.loadUnaligned(as: Int32.self)
        return distance == 0 ? nil : pointer + Int(distance)
    }

    /// Reads something from the storage of type `S` at `offset` in `object`.
    static func read<S, R>(_ type: S.Type, in object: AnyObject, at offset: Int, _ body: (S) -> R) -> R {
        body(UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()).advanced(by: offset).assumingMemoryBound(to: S.self).pointee)
    }
}
