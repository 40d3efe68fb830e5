/// CRC-32C (Castagnoli), the checksum of every structure of format version 1 (read only to
/// convert such stores; format 2 uses `Checksum`).
///
/// Table-driven, eight bytes at a time ("slicing by 8"). Polynomial 0x82F63B78 (reflected),
/// initial value and final XOR 0xFFFFFFFF, so `crc32c("123456789") == 0xE3069283`.
package enum CRC32C {
    private static let tables: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var crc = UInt32(i)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            table[i] = crc
        }
        for i in 0..<256 {
            var crc = table[i]
            for slice in 1..<8 {
                crc = table[Int(crc & 0xFF)] ^ (crc >> 8)
                table[slice * 256 + i] = crc
            }
        }
        return table
    }()

    /// Continues a checksum over `bytes`. Start with `0`; the result can be fed back in.
    package static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        #if STRATA_FUZZ_NO_CHECKSUMS
        // Fuzzing builds only (scripts/fuzz.sh): every checksum is 0, so that mutated inputs get
        // past the checks to the parsing behind them, as a checksum collision would.
        return 0
        #else
        var c = ~crc
        guard let base = bytes.baseAddress else { return crc }
        var p = base
        var n = bytes.count
        tables.withUnsafeBufferPointer { t in
            while n >= 8 {
                let word = UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)) ^ UInt64(c)
                c = t[7 * 256 + Int(word & 0xFF)] ^ t[6 * 256 + Int((word >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((word >> 16) & 0xFF)] ^ t[4 * 256 + Int((word >> 24) & 0xFF)]
                    ^ t[3 * 256 + Int((word >> 32) & 0xFF)] ^ t[2 * 256 + Int((word >> 40) & 0xFF)]
                    ^ t[1 * 256 + Int((word >> 48) & 0xFF)] ^ t[Int(word >> 56)]
                p += 8
                n -= 8
            }
            while n > 0 {
                c = t[Int((c ^ UInt32(p.load(as: UInt8.self))) & 0xFF)] ^ (c >> 8)
                p += 1
                n -= 1
            }
        }
        return ~c
        #endif
    }

    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 { update(0, bytes) }

    package static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { update(0, $0) }
    }

    package static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { update(0, $0) }
    }
}
