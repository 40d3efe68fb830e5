import Foundation

/// The engine-level record format of a course: what an object layer would write, by hand.
///
///     id (16) | createdAt (f64) | duration (f64) | flags (1: published, has author)
///     | authorID (i64, if any) | title (varint length + UTF-8) | summary (same)
///     | tag count (1) | tags (varint length + UTF-8 each)
///
/// All little-endian; no field names. A course takes about 200 bytes.
enum CourseCodec {
    /// Replaces `buffer`'s contents with the encoding of `course`.
    static func encode(_ course: Course, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        withUnsafeBytes(of: course.id.uuid) { buffer.append(contentsOf: $0) }
        appendLE(course.createdAt.timeIntervalSinceReferenceDate.bitPattern, to: &buffer)
        appendLE(course.duration.bitPattern, to: &buffer)
        buffer.append((course.isPublished ? 1 : 0) | (course.authorID != nil ? 2 : 0))
        if let author = course.authorID { appendLE(UInt64(bitPattern: Int64(author)), to: &buffer) }
        appendString(course.title, to: &buffer)
        appendString(course.summary, to: &buffer)
        buffer.append(UInt8(course.tags.count))
        for tag in course.tags { appendString(tag, to: &buffer) }
    }

    @inline(__always)
    private static func appendLE(_ value: UInt64, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) }
    }

    @inline(__always)
    private static func appendString(_ string: String, to buffer: inout [UInt8]) {
        var s = string
        s.withUTF8 { utf8 in
            var n = utf8.count
            while n >= 0x80 {
                buffer.append(UInt8(n & 0x7F) | 0x80)
                n >>= 7
            }
            buffer.append(UInt8(n))
            buffer.append(contentsOf: utf8)
        }
    }

    /// Decodes a course; nil if the bytes are malformed.
    ///
    /// Reads through a `Reader` value rather than nested functions capturing a position: a
    /// captured `var` is boxed and every access to it is checked for exclusivity at run time
    /// (swift_beginAccess), which took about a tenth of a full scan's time.
    static func decode(_ raw: UnsafeRawBufferPointer) -> Course? {
        var r = Reader(raw: raw)
        guard let idAt = r.take(16) else { return nil }
        let id = UUID(uuid: raw.loadUnaligned(fromByteOffset: idAt, as: uuid_t.self))
        guard let created = r.u64(), let duration = r.u64(), let flags = r.byte() else { return nil }
        var author: Int?
        if flags & 2 != 0 {
            guard let a = r.u64() else { return nil }
            author = Int(Int64(bitPattern: a))
        }
        guard let title = r.string(), let summary = r.string(), let count = r.byte() else { return nil }
        var tags: [String] = []
        tags.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let tag = r.string() else { return nil }
            tags.append(tag)
        }
        return Course(id: id, title: title, summary: summary, duration: Double(bitPattern: duration),
                      createdAt: Date(timeIntervalSinceReferenceDate: Double(bitPattern: created)),
                      isPublished: flags & 1 != 0, tags: tags, authorID: author)
    }

    /// A position in a record's bytes; every read is bounds-checked and answers nil past the end.
    private struct Reader {
        let raw: UnsafeRawBufferPointer
        var i = 0

        @inline(__always)
        mutating func take(_ n: Int) -> Int? {
            guard n <= raw.count - i else { return nil }
            defer { i += n }
            return i
        }

        @inline(__always)
        mutating func byte() -> UInt8? {
            guard let at = take(1) else { return nil }
            return raw[at]
        }

        @inline(__always)
        mutating func u64() -> UInt64? {
            guard let at = take(8) else { return nil }
            return UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        }

        mutating func string() -> String? {
            var length = 0, shift = 0
            while true {
                guard shift < 35, let byte = byte() else { return nil }
                length |= Int(byte & 0x7F) << shift
                if byte < 0x80 { break }
                shift += 7
            }
            guard let at = take(length) else { return nil }
            return String(decoding: UnsafeRawBufferPointer(rebasing: raw[at..<(at + length)]), as: UTF8.self)
        }
    }
}
