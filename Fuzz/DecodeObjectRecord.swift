// Fuzz target: the object layer's record decoders on arbitrary bytes (built into the Strata
// module by scripts/fuzz.sh, beside a StrataEngine module). The first byte picks:
//   0: a record of `FuzzEverything` read as a fetch reads it (RecordView, then every
//      property's codec: integers, floats, strings, dates, UUID, URL, Decimal, optionals,
//      arrays, sets, dictionaries, enums, Codable structs as JSON, external storage);
//   1: the same record read as `strata dump` reads it, from the schema stored in the store
//      (StoredModelSchema, no model classes);
//   2: a stored type name (`Swift.Dictionary<Swift.String, ...>`, as the stored schema says)
//      then, after a NUL, a field decoded as that type.
// Each must throw or return a value; never trap.

import Foundation
import StrataEngine
import StrataRecords

enum FuzzStatus: String, Codable { case planned, active, done }
struct FuzzAddress: Codable, Hashable { var street: String; var city: String }

final class FuzzEverything: PersistentModel {
    @Attribute var bool: Bool = false
    @Attribute var int: Int = 0
    @Attribute var int8: Int8 = 0
    @Attribute var int16: Int16 = 0
    @Attribute var uint32: UInt32 = 0
    @Attribute var uint64: UInt64 = 0
    @Attribute var float: Float = 0
    @Attribute var double: Double = 0
    @Attribute var decimal: Decimal = 0
    @Attribute var string: String = ""
    @Attribute var date: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var data: Data = Data()
    @Attribute var uuid: UUID = UUID(uuid: (0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0))
    @Attribute var url: URL = URL(string: "https://example.com")!
    @Attribute var optionalString: String? = nil
    @Attribute var optionalDate: Date? = nil
    @Attribute var strings: [String] = []
    @Attribute var intSet: Set<Int> = []
    @Attribute var dictionary: [String: Double] = [:]
    @Attribute var nested: [[Int]: [String?]] = [:]
    @Attribute var status: FuzzStatus = .planned
    @Attribute var address: FuzzAddress = FuzzAddress(street: "", city: "")
    @Attribute(.externalStorage) var photo: Data = Data()
    init() {}
}

nonisolated(unsafe) let fuzzEntity: Entity = {
    do { return try Schema([FuzzEverything.self]).entities()[0] } catch { fatalError("\(error)") }
}()

nonisolated(unsafe) let storedEntity: StoredModelSchema.Entity = {
    do {
        let json = try JSONEncoder().encode(StoredSchema(entities: [StoredEntity(fuzzEntity)]))
        return try StoredModelSchema(json: Array(json)).entities[0]
    } catch { fatalError("\(error)") }
}()

func sampleRecord(_ fill: (FuzzEverything) -> Void) -> [UInt8] {
    let object = FuzzEverything()
    fill(object)
    do { return try RecordLayout.encode(object, entity: fuzzEntity) } catch { fatalError("\(error)") }
}

func fuzzSeeds() -> [[UInt8]] {
    let plain = sampleRecord { _ in }
    let full = sampleRecord { o in
        o.bool = true; o.int = -42; o.int8 = -8; o.int16 = 300; o.uint32 = 7; o.uint64 = .max
        o.float = 1.5; o.double = -0.25; o.decimal = Decimal(string: "9.99")!; o.string = "héllo"
        o.date = Date(timeIntervalSinceReferenceDate: 12345.5); o.data = Data([0, 1, 2])
        o.uuid = UUID(uuid: (1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)); o.url = URL(string: "file:///tmp/x")!
        o.optionalString = "x"; o.optionalDate = Date(timeIntervalSinceReferenceDate: 1)
        o.strings = ["a", "bc"]; o.intSet = [1, 2, 3]; o.dictionary = ["k": 1.5]; o.nested = [[1, 2]: ["a", nil]]
        o.status = .active; o.address = FuzzAddress(street: "Main", city: "Oslo"); o.photo = Data([9, 9])
    }
    var seeds = [[0] + plain, [0] + full, [1] + plain, [1] + full]
    for (name, field) in [("Swift.Dictionary<Swift.String, Swift.Optional<Swift.Array<Foundation.Date>>>", [UInt8]([1, 1, 0x6B, 1, 0])),
                          ("Swift.Optional<Foundation.Decimal>", Array("\u{1}1.5".utf8)),
                          ("Swift.Set<Swift.Int>", [1, 8, 1, 0, 0, 0, 0, 0, 0, 0]),
                          ("relationship(Trip,many)", [2, 1, 2]), ("Foundation.Date", [0, 0, 0, 0, 0, 0, 0xF8, 0x7F]),
                          ("Some.Codable<Swift.Int>", Array("{\"a\":1}".utf8))] {
        seeds.append([2] + Array(name.utf8) + [0] + field)
    }
    return seeds
}

nonisolated(unsafe) var inputsTried = 0
nonisolated(unsafe) var bytesTried = 0

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    guard let folder = ProcessInfo.processInfo.environment["STRATA_FUZZ_SEEDS"] else {
        atexit { FileHandle.standardError.write(Data("strata-fuzz: \(inputsTried) inputs, \(bytesTried) bytes tried\n".utf8)) }
        return 0
    }
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for (i, seed) in fuzzSeeds().enumerated() {
        _ = FileManager.default.createFile(atPath: "\(folder)/seed-\(i)", contents: Data(seed))
    }
    exit(0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    inputsTried += 1
    bytesTried += size
    guard let data, size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let bytes = Array(input.dropFirst())
    switch input[0] % 3 {
    case 0:
        let object = FuzzEverything()
        bytes.withUnsafeBytes { raw in
            guard let view = try? RecordView(raw) else { return }
            for p in fuzzEntity.properties {
                guard let field = try? view.field(p.index) else { continue }
                try? p.decode(field, into: object)
                var key: [UInt8] = []
                try? p.appendKey(ofField: field, to: &key)
            }
        }
    case 1:
        _ = bytes.withUnsafeBytes { raw in try? storedEntity.decode(raw) }
    default:
        let cut = bytes.firstIndex(of: 0) ?? bytes.count
        let name = String(decoding: bytes[..<cut], as: UTF8.self)
        let type = StoredType.parse(name)
        _ = type.display
        _ = TypeNameParser.unqualified(name)
        let field = Array(bytes[Swift.min(cut + 1, bytes.count)...])
        _ = field.withUnsafeBytes { raw in try? type.decode(raw) }
    }
    return 0
}
