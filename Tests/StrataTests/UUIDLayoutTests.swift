import Foundation
import Testing
@_spi(StorageBackend) import StrataRecords

/// `UUID.decode` loads a field's 16 bytes as a `UUID` directly, which is right only while
/// Foundation's `UUID` is its `uuid` bytes and nothing else: held here, so that a Foundation
/// that changes the layout fails this test rather than reading identifiers wrongly.
@Suite struct UUIDLayoutTests {
    @Test func aUUIDIsItsSixteenBytes() throws {
        #expect(MemoryLayout<UUID>.size == MemoryLayout<uuid_t>.size)
        for id in [UUID(), UUID(), UUID(uuidString: "00000000-0000-0000-0000-000000000000"), UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")].compactMap({ $0 }) {
            var bytes: [UInt8] = []
            UUID.encode(id, into: &bytes)
            #expect(bytes == withUnsafeBytes(of: id.uuid) { Array($0) })
            let decoded = try bytes.withUnsafeBytes { try UUID.decode($0) }
            #expect(decoded == id)
            #expect(decoded.uuidString == id.uuidString)
            #expect(decoded == UUID(uuid: id.uuid))
        }
    }

    @Test func aFieldOfAnotherLengthIsAnError() {
        #expect(throws: (any Error).self) { try [UInt8](repeating: 1, count: 15).withUnsafeBytes { try UUID.decode($0) } }
    }
}
