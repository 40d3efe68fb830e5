import Foundation

/// The record of BENCH.md: about 200 bytes, a unique UUID and an indexed date.
struct Course: Codable, Identifiable, Hashable, Sendable {
    var id: UUID
    var title: String          // ~24 characters
    var summary: String        // ~120 characters
    var duration: Double
    var createdAt: Date        // indexed, not unique
    var isPublished: Bool
    var tags: [String]         // 2 to 4 short strings
    var authorID: Int?

    /// An order-independent digest of the fields, to check that every system read the same.
    var checksum: Int {
        var sum = title.utf8.count &+ summary.utf8.count &* 3 &+ Int(duration * 10) &+ Int(createdAt.timeIntervalSince1970)
        sum &+= (isPublished ? 7 : 0) &+ tags.count &* 11 &+ (authorID ?? -1) &+ Int(id.uuid.0) &+ Int(id.uuid.15) << 8
        return sum
    }
}

/// A small fast random number generator with a seed, so every run makes the same data.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The data every system stores: course `i` is the same wherever it is made.
///
/// Texts come from pools made once (4,096 titles, 4,096 summaries, 1,024 tag lists), so making
/// a course costs a few retains rather than building strings, and the generator stays out of
/// the times and the memory peaks. Ids and dates are random per course.
struct Dataset: Sendable {
    let seed: UInt64
    let titles: [String]
    let summaries: [String]
    let tagLists: [[String]]

    /// The first possible `createdAt`; dates fall in the year after it, on whole seconds.
    static let epoch = Date(timeIntervalSince1970: 1_704_067_200)  // 2024-01-01
    static let span = 365 * 86_400

    init(seed: UInt64 = 42) {
        self.seed = seed
        var rng = SplitMix64(seed: seed ^ 0xC0FFEE)
        let words = ["swift", "linux", "storage", "engine", "query", "index", "record", "durable", "crash", "page",
                     "cache", "log", "append", "commit", "snapshot", "reader", "writer", "tree", "branch", "leaf",
                     "key", "value", "range", "scan", "fetch", "model", "context", "schema", "migration", "blob",
                     "file", "disk", "memory", "thread", "actor", "task", "async", "await", "struct", "class",
                     "protocol", "generic", "closure", "error", "result", "option", "string", "array"]
        func text(_ length: Int) -> String {
            var s = ""
            while s.count < length {
                if !s.isEmpty { s += " " }
                s += words[Int(rng.next() % UInt64(words.count))]
            }
            if s.count > length { s = String(s.prefix(length)) }
            return s.prefix(1).uppercased() + s.dropFirst()
        }
        titles = (0..<4096).map { _ in text(20 + Int(rng.next() % 9)) }
        summaries = (0..<4096).map { _ in text(110 + Int(rng.next() % 21)) + "." }
        tagLists = (0..<1024).map { _ in (0..<(2 + Int(rng.next() % 3))).map { _ in words[Int(rng.next() % UInt64(words.count))] } }
    }

    @inline(__always)
    private func generator(_ i: Int) -> SplitMix64 {
        SplitMix64(seed: seed &* 0x2545_F491_4F6C_DD1D &+ UInt64(i) &* 0x9E37_79B9_7F4A_7C15)
    }

    /// The id of course `i`.
    func id(_ i: Int) -> UUID {
        var rng = generator(i)
        return Dataset.uuid(rng.next(), rng.next())
    }

    /// Course `i`.
    func course(_ i: Int) -> Course {
        var rng = generator(i)
        let id = Dataset.uuid(rng.next(), rng.next())
        let c = rng.next(), d = rng.next()
        return Course(
            id: id,
            title: titles[Int(c >> 32) & 4095],
            summary: summaries[Int(d >> 48) & 4095],
            duration: Double(d % 36_000) / 10,
            createdAt: Dataset.epoch + TimeInterval(c % UInt64(Dataset.span)),
            isPublished: (d >> 20) % 4 != 0,
            tags: tagLists[Int(c >> 44) & 1023],
            authorID: (d >> 30) % 5 == 0 ? nil : Int((d >> 34) % 10_000))
    }

    private static func uuid(_ a: UInt64, _ b: UInt64) -> UUID {
        let hi = (a & ~0xF000) | 0x4000                          // version 4
        let lo = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000  // RFC 4122 variant
        var bytes = (UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0),
                     UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0))
        withUnsafeMutableBytes(of: &bytes) { raw in
            raw.storeBytes(of: hi.bigEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: lo.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: bytes)
    }

    /// `count` distinct-enough random indexes below `n`, the same for every system.
    func randomIndexes(_ count: Int, below n: Int, salt: UInt64) -> [Int] {
        var rng = SplitMix64(seed: seed ^ salt)
        return (0..<count).map { _ in Int(rng.next() % UInt64(n)) }
    }
}

/// W6's i-th upserted course (of n): the stored course i with its duration changed, for the
/// first half; new courses after it.
func upsertedCourse(_ i: Int, n: Int, data: Dataset) -> Course {
    if i < n / 2 {
        var c = data.course(i)
        c.duration += 1
        return c
    }
    return data.course(n + i)
}
