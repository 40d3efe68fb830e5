/// XXH64 (Yann Collet's xxHash, 64-bit), the checksum of every page, value frame, commit
/// record, commit body and blob of format version 2 (Docs/FileFormat.md, "Checksums").
///
/// Pure Swift, four lanes of 8 bytes: about 15 GB/s here, six times the table-driven CRC-32C
/// of format 1, which matters because a page is checked the first time a process reads it,
/// and a full scan reads every page. Seed 0. `XXH64("") == 0xEF46DB3751D8E999`,
/// `XXH64("abc") == 0x44BC2CF5AD770999`. Pages and value frames keep its low 32 bits.
package enum Checksum {
    static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// The XXH64 of `bytes`.
    package static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        #if STRATA_FUZZ_NO_CHECKSUMS
        // Fuzzing builds only (scripts/fuzz.sh): every checksum is 0, so that mutated inputs get
        // past the checks to the parsing behind them, as a checksum collision would.
        return 0
        #else
        var lanes = Lanes()
        var tail = bytes
        if bytes.count >= 32, let base = bytes.baseAddress {
            let whole = bytes.count & ~31
            lanes.consume(base, count: whole)
            tail = UnsafeRawBufferPointer(rebasing: bytes[whole...])
        }
        return finish(lanes, started: bytes.count >= 32, total: UInt64(bytes.count), tail: tail)
        #endif
    }

    package static func hash(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { hash($0) } }

    /// The low 32 bits of the XXH64 of `bytes`: the checksum of a page or value frame.
    @inline(__always)
    package static func short(_ bytes: UnsafeRawBufferPointer) -> UInt32 { UInt32(truncatingIfNeeded: hash(bytes)) }

    @inline(__always) static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        let a = acc &+ input &* p2
        return ((a << 31) | (a >> 33)) &* p1
    }

    @inline(__always) static func merge(_ acc: UInt64, _ lane: UInt64) -> UInt64 {
        (acc ^ round(0, lane)) &* p1 &+ p4
    }

    /// The four accumulators over whole 32-byte stripes.
    struct Lanes {
        var v1: UInt64 = p1 &+ p2
        var v2: UInt64 = p2
        var v3: UInt64 = 0
        var v4: UInt64 = 0 &- p1

        /// Consumes `count` bytes, a multiple of 32.
        @inline(__always)
        mutating func consume(_ base: UnsafeRawPointer, count: Int) {
            var p = base
            let end = base + count
            var a = v1, b = v2, c = v3, d = v4
            while p < end {
                a = round(a, UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)))
                b = round(b, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
                c = round(c, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
                d = round(d, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
                p += 32
            }
            v1 = a; v2 = b; v3 = c; v4 = d
        }

        var converged: UInt64 {
            var h = ((v1 << 1) | (v1 >> 63)) &+ ((v2 << 7) | (v2 >> 57)) &+ ((v3 << 12) | (v3 >> 52)) &+ ((v4 << 18) | (v4 >> 46))
            h = merge(h, v1); h = merge(h, v2); h = merge(h, v3); h = merge(h, v4)
            return h
        }
    }

    /// The hash from the lanes (if 32 bytes or more were consumed) and the last `tail` bytes (< 32).
    static func finish(_ lanes: Lanes, started: Bool, total: UInt64, tail: UnsafeRawBufferPointer) -> UInt64 {
        var h = (started ? lanes.converged : p5) &+ total
        guard var p = tail.baseAddress else { return avalanche(h) }
        var n = tail.count
        while n >= 8 {
            h ^= round(0, UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)))
            h = ((h << 27) | (h >> 37)) &* p1 &+ p4
            p += 8; n -= 8
        }
        if n >= 4 {
            h ^= UInt64(UInt32(littleEndian: p.loadUnaligned(as: UInt32.self))) &* p1
            h = ((h << 23) | (h >> 41)) &* p2 &+ p3
            p += 4; n -= 4
        }
        while n > 0 {
            h ^= UInt64(p.load(as: UInt8.self)) &* p5
            h = ((h << 11) | (h >> 53)) &* p1
            p += 1; n -= 1
        }
        return avalanche(h)
    }

    @inline(__always) static func avalanche(_ x: UInt64) -> UInt64 {
        var h = x
        h ^= h >> 33; h = h &* p2; h ^= h >> 29; h = h &* p3; h ^= h >> 32
        return h
    }
}

/// XXH64 over bytes that arrive in pieces (a commit's body, a blob as it is written): the
/// same value as `Checksum.hash` of all of them at once.
package struct StreamingChecksum {
    private var lanes = Checksum.Lanes()
    private var total: UInt64 = 0
    /// Bytes of an unfinished 32-byte stripe.
    private var pending = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
    private var pendingCount = 0

    package init() {}

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var p = bytes.baseAddress, bytes.count > 0 else { return }
        var n = bytes.count
        total &+= UInt64(n)
        if pendingCount > 0 {
            let take = Swift.min(32 - pendingCount, n)
            withUnsafeMutableBytes(of: &pending) { $0.baseAddress!.advanced(by: pendingCount).copyMemory(from: p, byteCount: take) }
            pendingCount += take
            p += take
            n -= take
            guard pendingCount == 32 else { return }
            withUnsafeBytes(of: pending) { lanes.consume($0.baseAddress!, count: 32) }
            pendingCount = 0
        }
        let whole = n & ~31
        if whole > 0 {
            lanes.consume(p, count: whole)
            p += whole
            n -= whole
        }
        if n > 0 {
            withUnsafeMutableBytes(of: &pending) { $0.baseAddress!.copyMemory(from: p, byteCount: n) }
            pendingCount = n
        }
    }

    package var value: UInt64 {
        #if STRATA_FUZZ_NO_CHECKSUMS
        return 0
        #else
        withUnsafeBytes(of: pending) { raw in
            Checksum.finish(lanes, started: total >= 32, total: total, tail: UnsafeRawBufferPointer(rebasing: raw[0..<pendingCount]))
        }
        #endif
    }
}
