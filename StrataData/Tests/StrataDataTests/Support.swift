import Foundation

/// A fresh folder for one test's stores, removed when dropped.
final class TemporaryDirectory {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("stratadata-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func store(_ name: String = "test") -> URL { url.appendingPathComponent("\(name).store") }
}
